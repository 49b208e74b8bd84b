"""Issue 26, stop 42 (pack42): the packed-sequence credit (`packed_sample_tokens`) against the publisher's own
packed-versus-pretraining pairs. Two pairs exist, and they disagree:

  [NEMO07]  NeMo 24.07 (NeMo 1.x), NVIDIA/NeMo @a2aa70a2281a9c9eda7493c4278117c18d936be2^ docs/source/performance/
            performance_summary.md, DGX-H100 FP8, Llama 2 7B at 4,096 on 8 GPUs: pretraining "LLAMA2-7B | 8 | 128 |
            1 | 4096 | 1 | 1 | 1 | 1 | 16934 | 780", SFT on SQuAD packed to 4,096 "LLAMA2-7B | SFT | 8 | 32 | 1 |
            4096 | 1 | 1 | 16891 | 673", LoRA "24824 | 663". The file's three revisions for the same container
            (@4c73f77670 "24.07 perf", @3a8081fef6 "24.07 vboost numbers", @8e3d65dcfe): pretraining 16,847 / 16,634
            / 16,934 and SFT 17,120 / 17,617 / 16,891 tokens/s/GPU, Model TFLOP/s 776 / 767 / 780 and 682 / 702 / 673.
  [DGX2412] NeMo 24.12 (NeMo 2.0), one container for both rows: NVIDIA/dgxc-benchmarking
            @8f5cbb3799ea8cc031ed2c2cee1cbdbc15b240ad (v25.02) llama3.1/README_8b.md lines 52-62 (setup line 89:
            nvcr.io/nvidia/nemo:24.12): Llama 3.1 8B pretraining at 8,192, TP 1, PP 1, CP 2, MBS 1, GA 32, 8 x H100,
            GBS 128: BF16 82,028 and FP8 111,054 tokens/s (10,253.5 / 13,881.75 a GPU); @741c886025a7665a1d690c05ff12
            ac29c1be7252 ft_llama3/README_8b.md (setup.sh: nemo:24.12, NeMo 25ec4e98, SQuAD packed to 4,096 by the
            recipe's performance_mode): SFT on 8 x H100, GBS 32, BF16 1.32 s and FP8 0.95 s a step (12,412 / 17,246 a
            GPU). Its MFU note: "Model flops for llama 8B finetuning 1.84E+14" a 4,096-token sequence, which is the
            README's own formula (llama3.1/README_8b.md "Notes": 12 L h^2 (1 + g/a + s/h) + 18 L h f + 6 h V a token)
            with the attention's s/h term left out: NVIDIA counts no attention for packed SQuAD.

The product's ratio of the SFT row to the same release's pretraining row cancels the engine's error common to both
(the ceiling, the card, the stack): on [DGX2412] the packed credit reproduces NVIDIA's ratio (FP8 within 0.1% at
SQuAD-length samples, 5.2% at the recipe comment's 2,048 bound) where the uncredited spec misses it by 10.5%. On
[NEMO07] the credit overshoots the NeMo 1.x ratio by 8-15% whatever the sample length; that part stays unexplained
(test_outside_audit_stop41.py's strict xfails) with the bounds below.
"""

from __future__ import annotations

import pytest

from tests.procurement.outside.test_outside_recommendations_x26b import (
    candidate,
    megatron_spec,
    tokens_per_gpu,
)
from tests.procurement.outside.test_outside_recommendations_x26g import nemo_ft

H100 = "h100-sxm5-80gb"
PRETRAIN_2412 = {"bf16": 82028 / 8, "fp8": 111054 / 8}
SFT_2412 = {"bf16": 4096 * 32 / 1.32 / 8, "fp8": 4096 * 32 / 0.95 / 8}


def llama2_7b_flops_per_token(attention_tokens: float) -> float:
    """NeMo's Llama 2 count a token, l h^2 (12 + 12 g/a + 18 f/h + 12 s/h + 6 V / (l h)) (Megatron's unmasked
    12 s l h attention term): Llama 2 7B, l 32, h 4,096, g = a, f 11,008, V 32,000."""
    layers, hidden, ffn, vocab = 32, 4096, 11008, 32000
    return (
        layers
        * hidden**2
        * (24 + 18 * ffn / hidden + 12 * attention_tokens / hidden + 6 * vocab / (layers * hidden))
    )


def pretraining_2412(precision: str) -> dict:
    spec = megatron_spec("llama-3-8b", 8, 8192, 1, 1, cp=2, global_batch=128, precision=precision)
    return spec | {"training_stack": "megatron"}


def sft_2412(precision: str, packed: int | None) -> dict:
    spec = nemo_ft("llama-3-8b", 8, 1, 1, 32, precision=precision, packed=packed or 4096)
    return spec if packed else {k: v for k, v in spec.items() if k != "packed_sample_tokens"}


@pytest.mark.django_db
def test_the_packed_credit_reproduces_nemo_2412s_sft_over_pretraining_ratio(bundled_catalog):
    """[DGX2412] FP8: published SFT / pretraining 17,246 / 13,881.75 = 1.2423. Product (int42: moe42's FLOP count,
    no input embedding FLOPs, mfu_fp8_linears_hopper refitted with it to 0.42): pretraining 13,611.1 (-1.9%); SFT
    uncredited 15,216.4 (ratio 1.1179, -10.0%), packed at 2,048 16,169.9 (1.1880, -4.4%), at 256 17,108.0 (1.2569,
    +1.2%). BF16 (training_stack megatron): published
    12,412 / 10,253.5 = 1.2105; product pretraining 9,575.4 (-6.6%); SFT uncredited 10,214.7 (1.0668, -11.9%), 2,048
    10,567.4 (1.1036, -8.8%), 256 10,896.6 (1.1380, -6.0%). (pack42, before the count: pretraining 13,097.1 /
    9,368.7; ratios 1.1115 / 1.1771 / 1.2413 and 1.0627 / 1.0970 / 1.1290.)"""
    published = {p: SFT_2412[p] / PRETRAIN_2412[p] for p in ("fp8", "bf16")}
    assert published["fp8"] == pytest.approx(1.2423, abs=0.0005)
    assert published["bf16"] == pytest.approx(1.2105, abs=0.0005)
    expected = {
        ("fp8", None): 1.1179,
        ("fp8", 2048): 1.1880,
        ("fp8", 256): 1.2569,
        ("bf16", None): 1.0668,
        ("bf16", 2048): 1.1036,
        ("bf16", 256): 1.1380,
    }
    for precision in ("fp8", "bf16"):
        pretraining = tokens_per_gpu(candidate(pretraining_2412(precision), H100))
        errors = {}
        for packed in (None, 2048, 256):
            ratio = tokens_per_gpu(candidate(sft_2412(precision, packed), H100)) / pretraining
            assert ratio == pytest.approx(expected[(precision, packed)], abs=0.001), (precision, packed)
            errors[packed] = abs(ratio / published[precision] - 1)
        # the credit moves the ratio toward the release's own, at the bound and at SQuAD-length samples
        assert errors[256] < errors[2048] < errors[None]


def test_nemo07_counts_the_packed_sfts_attention_over_samples_of_about_128_tokens():
    """[NEMO07] Model TFLOP/s / tokens/s: pretraining 780e12 / 16,934 = 46.06e9 a token, NeMo's count at s 4,096
    46.08e9 (-0.05%); SFT 673e12 / 16,891 = 39.84e9, which leaves the attention term at an equivalent 128 tokens
    (109-147 within the column's rounding; 123 and 131 in the two earlier revisions). The same column puts the
    packed SFT at 673 / 780 = 0.863 of the pretraining run's model-FLOP rate (0.879, 0.915 earlier): NVIDIA's own
    count credits the attention saving and the run did not get it."""
    assert llama2_7b_flops_per_token(4096) == pytest.approx(780e12 / 16934, rel=0.001)
    weights_only = llama2_7b_flops_per_token(0)
    per_attention_token = llama2_7b_flops_per_token(1) - weights_only
    for tflops, tokens, length in ((673, 16891, 128), (682, 17120, 123), (702, 17617, 131)):
        assert (tflops * 1e12 / tokens - weights_only) / per_attention_token == pytest.approx(length, abs=1)
    lo = ((672.5e12 / 16891) - weights_only) / per_attention_token
    hi = ((673.5e12 / 16891) - weights_only) / per_attention_token
    assert (round(lo), round(hi)) == (109, 147)
    assert [round(sft / pre, 3) for sft, pre in ((673, 780), (682, 776), (702, 767))] == [0.863, 0.879, 0.915]
    # the tokens/s pairs: SFT over pretraining 0.997, 1.016, 1.059; the product's credit gives 1.145 (256) to 1.151
    assert [round(s / p, 3) for s, p in ((16891, 16934), (17120, 16847), (17617, 16634))] == [
        0.997,
        1.016,
        1.059,
    ]


def test_nemo07s_missing_credit_is_not_the_varlen_kernels_rate():
    """[NEMO07] 7B SFT: the product's packed estimate (256-token samples, 20,208.6) is 1e6 / 16,891 - 1e6 /
    20,208.6 = 9.72 us a token faster than the run; LoRA (30,058.5 vs 24,824) 7.02 us. A 256-token causal sample's
    attention is 4 x 128 x 4,096 x 32 = 67.1 MFLOPs forward a token; at the slowest published point of any H100
    kernel (FlashAttention-2 at 512 tokens: 191 TFLOPS forward, 214 backward, Shah et al. 2024 FlashAttention-3
    arXiv:2407.08608 Figs. 5-6; a backward is 2.5 forwards) it takes 1.14 us a token; cuDNN's 512-token point
    (315 / 305), 0.76 us. The whole-sequence attention the credit removes is 7.45 us (cuDNN at 4,096). So at most
    1.14 of the 9.72 us is the kernel's rate at short samples; 8.6 us a token (35 ms a 4,096-token micro-batch,
    1.1 ms a layer) is spent elsewhere, not located."""
    forward = 4 * 128 * 4096 * 32
    fa2_512 = forward * (1 / 191e12 + 2.5 / 214e12) * 1e6
    cudnn_512 = forward * (1 / 315e12 + 2.5 / 305e12) * 1e6
    whole = 4 * 2048 * 4096 * 32 * (1 / 518e12 + 2.5 / 499e12) * 1e6
    sft_gap = 1e6 / 16891 - 1e6 / 20208.6
    lora_gap = 1e6 / 24824 - 1e6 / 30058.5
    assert (round(fa2_512, 2), round(cudnn_512, 2), round(whole, 2)) == (1.14, 0.76, 7.45)
    assert (round(sft_gap, 2), round(lora_gap, 2)) == (9.72, 7.02)
    assert (sft_gap - fa2_512) * 4096 / 1e3 == pytest.approx(35.2, abs=0.1)
    assert (sft_gap - fa2_512) * 4096 / 1e3 / 32 == pytest.approx(1.10, abs=0.01)


def test_nemo_2412_bf16_sft_gap_is_two_in_tolerance_errors():
    """[DGX2412] BF16 SFT at the 2,048 bound: 10,567.4 against 12,412 (-14.9%) = the same release's pretraining
    row (9,575.4 vs 10,253.5, -6.6%: the Megatron ceiling fitted on NeMo 24.09's rows) x the SFT / pretraining
    ratio (1.1036 vs 1.2105, -8.8%); at 256-token samples -6.6% x -6.0% = -12.2%. Each factor inside 15%. (pack42,
    before moe42's FLOP count: 10,277.9, -17.2% = -8.6% x -9.4%; at 256 -14.8%.)"""
    pretraining = 9575.4 / PRETRAIN_2412["bf16"]
    at_bound = 1.1036 / (SFT_2412["bf16"] / PRETRAIN_2412["bf16"])
    at_256 = 1.1380 / (SFT_2412["bf16"] / PRETRAIN_2412["bf16"])
    assert (round(pretraining - 1, 3), round(at_bound - 1, 3), round(at_256 - 1, 3)) == (
        -0.066,
        -0.088,
        -0.060,
    )
    assert pretraining * at_bound == pytest.approx(10567.4 / 12412, abs=0.002)
    assert pretraining * at_256 == pytest.approx(10896.6 / 12412, abs=0.002)


@pytest.mark.django_db
def test_nemo07_7b_rows_differ_from_the_product_by_one_step_sized_cost(bundled_catalog):
    """[NEMO07] A lead, not an explanation. The 7B rows differ in global batch (pretraining 128, SFT and LoRA 32 on
    the same 8 GPUs: 16 and 4 micro-batches a GPU a step), so the 0.997 pair also compares steps of 16 and 4
    micro-batches. Published step = GBS x 4,096 / 8 / tokens/s: pretraining 3.870 s, SFT 0.970 s, LoRA 0.660 s;
    the product's (SFT and LoRA credited at 256-token samples) 3.696, 0.805, 0.541 s: the run is slower by
    0.174, 0.165 and 0.119 s a step (int42, moe42's FLOP count; pack42 before it: 3.714, 0.811, 0.545 s and 0.156, 0.159,
    0.115 s), of one size at 16 and at 4 micro-batches within 0.009 s (pretraining over SFT). A fixed cost a step of the SFT's
    size would put the pretraining row at +0.2% and leave the packing credit intact; nothing in the product or
    the cited configs sizes it (NeMo-Framework-Launcher @7cf7f188 overlaps the distributed optimizer's gradient and
    parameter syncs in both), so the SFT / LoRA rows stay unexplained."""
    published = {
        "pretrain": 128 * 4096 / 8 / 16934,
        "sft": 32 * 4096 / 8 / 16891,
        "lora": 32 * 4096 / 8 / 24824,
    }
    specs = {
        "pretrain": megatron_spec("llama-2-7b", 8, 4096, 1, 1, global_batch=128, precision="fp8"),
        "sft": megatron_spec("llama-2-7b", 8, 4096, 1, 1, global_batch=32, precision="fp8")
        | {"task": "full_finetune", "packed_sample_tokens": 256},
        "lora": megatron_spec(
            "llama-2-7b", 8, 4096, 1, 1, global_batch=32, precision="fp8", checkpointing="none"
        )
        | {
            "task": "lora",
            "lora": {"rank": 16, "targets": ["q_proj", "k_proj", "v_proj", "o_proj"]},
            "packed_sample_tokens": 256,
        },
    }
    specs["lora"]["parallelism"]["zero_stage"] = 0
    gaps = {
        name: published[name] - candidate(spec, H100)["throughput"]["step_seconds"]
        for name, spec in specs.items()
    }
    assert {name: round(gap, 3) for name, gap in gaps.items()} == {
        "pretrain": 0.174,
        "sft": 0.165,
        "lora": 0.119,
    }
    with_the_cost = 128 * 4096 / 8 / (published["pretrain"] - gaps["pretrain"] + gaps["sft"])
    assert with_the_cost / 16934 - 1 == pytest.approx(0.002, abs=0.001)
