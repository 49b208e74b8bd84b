"""Outside audit (aud45a) of the stop-45 relabels: cls45 (TensorRT-LLM v0.9.0's Mixtral rows EXPLAINED by
weightless benchmark engines [TRTBENCH] and a 16-bit MoE GEMM [MOEGEMM]) and vit45 (AITemplate's eager ViT-B rows
EXPLAINED by the class-token-free 196-token attention). No product code is changed here: these cases test the
explanations on rows of the same published tables that no test used, where the explanation predicts the answer.

Sources (opened for this audit; figures quoted where used):
  [TRT9]  NVIDIA/TensorRT-LLM docs/source/performance.md at v0.9.0 (stored copy id 5995251461, "All data was
          generated using version 0.9.0"). Peak Throughput, out tok/s/GPU (Batch | TP | In | Out):
            A100 FP16: GPT-J 6B 32|1|2048|2048 815; LLaMA 7B 16|1|2048|2048 603, 32|1|128|2048 1,484;
                       Mistral 7B 120|1|128|2048 3,776, 56|1|2048|2048 1,576; LLaMA 70B 64|4|2048|2048 289;
                       Mixtral 8x7B 32|2|2048|2048 801.
            L40S FP8:  GPT-J 32|1|2048|2048 768; LLaMA 7B 16|1|2048|2048 537; Mistral 7B 56|1|2048|2048 1,721;
                       LLaMA 70B 64|4|2048|2048 185; Mixtral 32|4|2048|2048 412.
            H100 FP8:  GPT-J 64|1|2048|2048 3,212; LLaMA 7B 56|1|2048|2048 2,826; Mistral 7B 56|1|2048|2048 3,731;
                       LLaMA 70B 64|2|2048|2048 1,011; Mixtral 32|2|2048|2048 1,317.
          Low Latency, batch 1, 128 tokens, ms: A100 FP16 GPT-J 14.8, LLaMA 7B 16.2, LLaMA 70B (TP 4) 45.6, Falcon
          180B (TP 8) 76.5, Mixtral (TP 2) 23.8; H100 FP8 Mixtral (TP 2) 13.4.
          The same page's 'Reproducing Benchmarked Results': engines built with `trtllm-build --model_config
          /tmp/engines/<model>/ckpt_config.json` (a config json, no --checkpoint_dir) and timed with
          gptSessionBenchmark; "we have enabled GQA [XQA] where our tests displayed performance benefits", XQA
          "experimental and not enabled by default" (stale for the code: tensorrt_llm/plugin/plugin.py PluginConfig
          `enable_xqa: bool = True`, stored id 4882224494; fixg45); Mixtral's own recipe is not listed.
  [AIT-VIT] facebookincubator/AITemplate examples/04_vit/README.md @44026ba7, A100-40GB / CUDA 11.6.2, 'PT =
          PyTorch 1.12 Eager' QPS: vit_base_patch16_224 batch 128 2,138.35; vit_large_patch16_384 batch 16 210.54,
          64 219.93, 256 212.60. examples/04_vit/benchmark_pt.py @44026ba7: both models built with
          class_token=False, global_pool="avg" (ViT-B 196 tokens, ViT-L/16 at 384 px 576 tokens).
Tolerance: LLM speed 15%, image speed 25%.
"""

from __future__ import annotations

import pytest

from tests.procurement.outside.test_outside_serve44 import per_gpu
from tests.procurement.outside.test_outside_vit_datacenter_stop43 import _size, _vit

LLM_SPEED, IMAGE_SPEED = 0.15, 0.25
A100, L40S, H100 = "a100-sxm4-80gb", "l40s", "h100-sxm5-80gb"
BANDWIDTH = {A100: 2039e9, L40S: 864e9, H100: 3350e9}  # NVIDIA datasheets, as the stop-45 bound uses them


# --- Case 1: the stop-45 bound applied to the dense rows of the same tables. ---------------------------------------
# cls45's proof is "the batch-32 2,048/2,048 Mixtral step, prefill counted as zero, cannot move all 8 16-bit experts
# at the datasheet bandwidth". If that arithmetic were biased (a per-GPU figure that is really a total, a wrong
# datasheet, a prefill that is not amortized), the dense long-output rows of the same tables, where routing cannot
# matter, would come out infeasible too. They do not: they need 0.34-0.79 of the datasheet bandwidth (weights once a
# step plus the KV cache at the mean context, KV heads from the models' configs), where Mixtral needs 1.20-1.46 with
# 16-bit experts. With FP8 experts the L40S and H100 Mixtral rows would need only 0.79 / 0.65 (inside the dense
# range): their proof rests on [MOEGEMM] alone; the A100 FP16 row's 1.30 needs no precision argument.
DENSE = {
    # name: (params, layers, kv heads, head dim, gpu, tp, batch, published tok/s/GPU, bytes an element)
    "gpt-j-a100": (6.05e9, 28, 16, 256, A100, 1, 32, 815, 2),
    "llama-7b-a100": (6.74e9, 32, 32, 128, A100, 1, 16, 603, 2),
    "mistral-7b-a100": (7.24e9, 32, 8, 128, A100, 1, 56, 1576, 2),
    "llama-70b-a100": (69e9, 80, 8, 128, A100, 4, 64, 289, 2),
    "gpt-j-l40s": (6.05e9, 28, 16, 256, L40S, 1, 32, 768, 1),
    "llama-7b-l40s": (6.74e9, 32, 32, 128, L40S, 1, 16, 537, 1),
    "mistral-7b-l40s": (7.24e9, 32, 8, 128, L40S, 1, 56, 1721, 1),
    "llama-70b-l40s": (69e9, 80, 8, 128, L40S, 4, 64, 185, 1),
    "gpt-j-h100": (6.05e9, 28, 16, 256, H100, 1, 64, 3212, 1),
    "llama-7b-h100": (6.74e9, 32, 32, 128, H100, 1, 56, 2826, 1),
    "mistral-7b-h100": (7.24e9, 32, 8, 128, H100, 1, 56, 3731, 1),
    "llama-70b-h100": (69e9, 80, 8, 128, H100, 2, 64, 1011, 1),
}
MIXTRAL_EXPERT_BYTES_16 = 3 * 4096 * 14336 * 32 * 2
MIXTRAL_ATTENTION_PARAMS = 32 * (4096 * 6144 + 4096 * 4096)
MIXTRAL = {
    A100: (2, 801, 2),
    L40S: (4, 412, 1),
    H100: (2, 1317, 1),
}  # tp, published, bytes a KV / attention element


def _bandwidth_share(step_bytes: float, gpu: str, step_s: float) -> float:
    return step_bytes / BANDWIDTH[gpu] / step_s


def test_the_same_tables_dense_long_output_rows_fit_the_bandwidth_the_mixtral_rows_exceed():
    dense = {}
    for name, (params, layers, kv_heads, head, gpu, tp, batch, published, eb) in DENSE.items():
        step = batch / (published * tp)
        kv = batch * (2048 + 2047 / 2) * layers * 2 * kv_heads * head * eb / tp
        dense[name] = _bandwidth_share(params * eb / tp + kv, gpu, step)
    assert 0.33 < min(dense.values()) and max(dense.values()) < 0.80
    for gpu, (tp, published, eb) in MIXTRAL.items():
        step = 32 / (published * tp)
        fixed = 32 * (2048 + 2047 / 2) * 32 * 2 * 8 * 128 * eb / tp + MIXTRAL_ATTENTION_PARAMS * eb / tp
        experts_16 = _bandwidth_share(fixed + 8 * MIXTRAL_EXPERT_BYTES_16 / tp, gpu, step)
        experts_8 = _bandwidth_share(fixed + 4 * MIXTRAL_EXPERT_BYTES_16 / tp, gpu, step)
        assert experts_16 > 1.19  # A100 1.30, H100 1.20, L40S 1.46: no engine reads all 8 16-bit experts
        if gpu != A100:
            assert (
                experts_8 < 0.80
            )  # H100 0.65, L40S 0.79: FP8 experts would fit, so [MOEGEMM] carries the proof
    # The first tokens at 128 tokens (batch 1): the same A100 FP16 table's dense rows read their weights at 0.29-0.41
    # of 2,039 GB/s (GPT-J 12.1 GB in 14.8 ms, LLaMA 7B 13.5 GB in 16.2, LLaMA 70B 34.5 GB a GPU in 45.6, Falcon
    # 180B 44.9 GB a GPU in 76.5); Mixtral's 23.8 ms would need 0.96 for all 8 16-bit experts with no launch or
    # all-reduce time at all: not a proof by itself (cls45's "6.5 of 8" leans on the engine's fitted 3.52 ms of
    # layers), but 2.3x the share of every dense first token of the table. H100: Mixtral's 13.4 ms would need 1.04.
    mixtral_total_16 = 8 * MIXTRAL_EXPERT_BYTES_16 + 2 * MIXTRAL_ATTENTION_PARAMS + 2 * 32000 * 4096 * 2
    a100_first = _bandwidth_share(mixtral_total_16 / 2, A100, 23.8e-3)
    h100_first = _bandwidth_share(mixtral_total_16 / 2, H100, 13.4e-3)
    dense_first = [
        _bandwidth_share(6.05e9 * 2, A100, 14.8e-3),
        _bandwidth_share(6.74e9 * 2, A100, 16.2e-3),
        _bandwidth_share(69e9 * 2 / 4, A100, 45.6e-3),
        _bandwidth_share(179.5e9 * 2 / 8, A100, 76.5e-3),
    ]
    assert a100_first == pytest.approx(0.96, abs=0.01) and max(dense_first) < 0.42
    assert h100_first == pytest.approx(1.04, abs=0.01)


# --- Case 2: dense A100 FP16 rows of [TRT9] through the product (routing cannot matter). --------------------------
# Held out (no test had them). If the A100 FP16 table ran slower engines across the board, these would miss as the
# Mixtral rows do; they land, so the Mixtral rows' miss is Mixtral's.
DENSE_A100 = [
    # GPT-J 6B (gpt-j-6b shape of test_outside_audit_stop43s), 815: product 768.8 (-5.7%)
    pytest.param("gpt-j-6b", 32, 2048, 2048, 815, id="gptj-b32-2048-2048"),
    # Llama 2 7B, 603: product 564.4 (-6.4%)
    pytest.param("llama-2-7b", 16, 2048, 2048, 603, id="llama7b-b16-2048-2048"),
    # Llama 2 7B, 1,484: product 1,395.9 (-5.9%)
    pytest.param("llama-2-7b", 32, 128, 2048, 1484, id="llama7b-b32-128-2048"),
]


@pytest.mark.parametrize(("model", "batch", "prompt", "output", "published"), DENSE_A100)
def test_trt9_a100_fp16_dense_rows_land_without_any_routing_term(model, batch, prompt, output, published):
    assert per_gpu(model, "fp16", A100, 1, batch, prompt, output) == pytest.approx(published, rel=LLM_SPEED)


# --- Case 3: the A100 FP16 table's Mistral 7B (dense, 8 KV heads like Mixtral) long-output rows. -------------------
MISTRAL_A100 = (
    "EXPLAINED (fixa45; aud45a left it UNEXPLAINED with the XQA lead): [TRT9] A100 FP16 Mistral 7B, {row}: "
    "published {published:,}; ours {ours:,.1f} ({err:+.1%}). (a) Not 'XQA not enabled by default' (the page's "
    "TRTLLM_ENABLE_XQA warning; the code has XQA on by default: tensorrt_llm/plugin/plugin.py PluginConfig "
    "enable_xqa True, trtllm-build flag default 'enable', stored id 4882224494): the v0.9.0-era XQA kernel takes 8 "
    "(or 1) query heads a KV head only (decoderXQARunner.h shouldUse, three stored copies, none tagged v0.9.0, from "
    "around 0.8-0.9 and later, test_outside_xqa_stop45.py [XQA]) and Mistral has 32 / 8 = 4, so its decode "
    "ran the masked MHA kernel, a thread block a query head (gpt_attention.md), which reads each KV head's cache "
    "once for each of its 4 query heads; the product reads it once a group. (b) Sized: the rows need about 1.0 / "
    "0.5 more KV reads (aud45a): the KV reads x1.5 land both (+7.7% / -5.4%) and keep the same card's 128/128 and "
    "2,048/128 rows inside (-0.4% / -8.1%), x4 from DRAM over-corrects (-48.1% / -53.9%); the time these rows "
    "leave for attention over the 4 per-query-head reads is 3.40 / 4.16 TB/s (the masked MHA kernel's throughput "
    "over those bytes, its on-chip work, 1.8x the A100's HBM bandwidth; not an L2-served read rate), the "
    "same as the held-out H100 (3.37 / 4.07) and H200 (3.24 / 3.94) FP8 Mistral long rows, whose published H200 "
    "over H100 gain (1.04x, where the same table's MHA models gain 1.16-1.25x) proves their decode is not bound by "
    "one DRAM read (test_outside_xqa_stop45.py). One throughput for the per-query-head bytes, 3.7 TB/s (the same "
    "on the H100 and the H200), fitted on these two rows (+5.7% / -7.1% with it: their own fit, not a check; restated by audx48a with the held-out check the bar needs: the rate fitted instead on the four H100 / H200 FP8 Mistral long-output rows alone, 3.66 TB/s, the mean of their implied 3.37 / 4.07 / 3.24 / 3.94, puts these two A100 rows at 3,960.6 (+4.9%) / 1,453.1 (-7.8%), and that set's own range, 3.24-4.07 TB/s, at -3.2% to +12.5% / -14.7% to -1.3%: inside 15% without fitting on them; test_outside_explained_audit_stop48x.py), "
    "lands the 12 held-out Mistral rows of the A100, H100, H200 and L40S tables inside 15% and Falcon 180B's six "
    "long-output rows at -19.7% to +4.3% (two outside 15%, a strict xfail of their own), while four prefill-heavy "
    "Falcon 180B Hopper rows that pass today would fall to -15.1 / -16.2 / -16.5 / -17.5%; the held-out "
    "long-output rows imply 3.2-5.6 TB/s (the prefill-heavy 2,048/128 rows 4.6-6.75, the A100 one 6.75: audx48a): a fit good to about +-20% (test_outside_xqa_stop45.py cases 3-4, "
    "aud45g). (c) No field states the engine release or a decode attention "
    "that does not share a KV head across its group, nor the per-query-head read rate (the rows' own, no source). "
    "Bearing on cls45: Mixtral has the same 4 query heads a KV head; more attention time on the A100 only tightens "
    "its 5.85-expert bound"
)


@pytest.mark.parametrize(
    ("batch", "prompt", "output", "published"),
    [
        pytest.param(
            120,
            128,
            2048,
            3776,
            id="b120-128-2048",
            marks=pytest.mark.xfail(
                strict=True,
                reason=MISTRAL_A100.format(
                    row="batch 120, 128/2,048", published=3776, ours=5180.8, err=0.372
                ),
            ),
        ),
        pytest.param(
            56,
            2048,
            2048,
            1576,
            id="b56-2048-2048",
            marks=pytest.mark.xfail(
                strict=True,
                reason=MISTRAL_A100.format(
                    row="batch 56, 2,048/2,048", published=1576, ours=1888.2, err=0.198
                ),
            ),
        ),
    ],
)
def test_trt9_a100_fp16_mistral_7b_long_output_rows(batch, prompt, output, published):
    assert per_gpu("mistral-7b", "fp16", A100, 1, batch, prompt, output) == pytest.approx(
        published, rel=LLM_SPEED
    )


# --- Case 4: AITemplate's eager ViT-L/16 at 384 px: 576 tokens without the class token, aligned. -------------------
# vit45's mechanism says aligned token counts run at the aligned rate, so these rows must land; held out (the
# batch 32 and 128 rows were tested). They do, but all at +16.7% to +21.4%: the aligned eager rows carry a common
# excess of about +19% that the mechanism does not cover, so the 196-token share of ViT-B's +30..+40% is nearer
# +10..+17 points than the whole.
AIT_EAGER_VIT_L = [
    pytest.param(16, 210.54, id="vit-l-384-16"),  # product 251.4 (+19.4%)
    pytest.param(64, 219.93, id="vit-l-384-64"),  # product 256.8 (+16.7%)
    pytest.param(256, 212.60, id="vit-l-384-256"),  # product 258.1 (+21.4%)
]


@pytest.mark.django_db
@pytest.mark.parametrize(("batch", "published"), AIT_EAGER_VIT_L)
def test_ait_eager_vit_l_384_at_an_aligned_token_count_lands(bundled_catalog, tmp_path, batch, published):
    row = _size(tmp_path, _vit("vit-l-16", 384, batch, fused=False), "a100-sxm4-40gb")
    assert row["throughput"]["images_per_second_per_gpu"] == pytest.approx(published, rel=IMAGE_SPEED)


# --- Case 5: AITemplate's eager ViT-B at batch 128 (196 tokens): the mechanism predicts the same miss. -------------
# Was a strict xfail: "UNEXPLAINED (EXPLAINED in part; fixa45 after aud45a, was EXPLAINED by vit45's mechanism):
# [AIT-VIT] PyTorch 1.12 eager ViT-B/16 batch 128 on the A100-40GB: published 2,138.35 images/s; product 2,889.3
# (+35.1%) ... the term is bracketed between 0 and +0.168..+0.201 ms an image (at the top: 1,945 .. 1,828, -9.0% ..
# -14.5%) ...". Now 1,831.7 (-14.3%) because (vit45c) the engine prices the eager score and context batched GEMMs
# and softmax of a 16-bit ViT at an unaligned token count on the A100 at xformers' measured 1.727 us a head (PR #530
# 'A100 fw', 197 tokens, B = 1,024: 1,768.7 us; image_model.EAGER_ATTENTION_MEASURED_SECONDS_PER_HEAD) instead of
# the counted 0.34 us. The run had 196 tokens (class_token=False); the product counts 197 and takes 197's rate (no
# class-token field). Its neighbours moved alike (test_outside_vit_datacenter_stop43.py). The aligned ViT-L rows'
# ~+19% (case 4) is untouched and still undiagnosed; with the term the ViT-B rows sit on the slow side.
@pytest.mark.django_db
def test_ait_eager_vit_b_batch_128_misses_like_its_neighbours(bundled_catalog, tmp_path):
    row = _size(tmp_path, _vit("vit-b-16", 224, 128, fused=False), "a100-sxm4-40gb")
    assert row["throughput"]["images_per_second_per_gpu"] == pytest.approx(2138.35, rel=IMAGE_SPEED)
