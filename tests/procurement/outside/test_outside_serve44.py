"""serve44: the rest of TensorRT-LLM v0.9.0's peak-throughput table on the L40S (rows no test had), and the MoE
rows' implied compute rate, pinned as evidence for the two serving classes issue 26 still carries (PCIe
tensor parallelism on the L40S; Mixtral on Hopper FP8). Tolerance: LLM speed 15% (the issue's).

Sources:
  [TRT9] NVIDIA/TensorRT-LLM docs/source/performance.md at v0.9.0 (stored copy, read_file id 5995251461: "All data
         was generated using version 0.9.0"), "Peak Throughput", "L40S GPUs (FP8)" (Model | Batch Size | TP | Input
         Length | Output Length | out tok/s/GPU): GPT-J 6B 512|1|128|128 7,859; 64|1|128|2048 1,904;
         32|1|2048|128 684; 32|1|2048|2048 768. Mistral 7B 896|1|128|128 9,562; 120|1|128|2048 4,387;
         84|1|2048|128 971; 56|1|2048|2048 1,721. LLaMA 7B 256|1|128|128 5,885; 64|1|128|2048 1,654;
         32|1|2048|128 574; 16|1|2048|2048 537. LLaMA 70B 256|2|128|128 562; 16|2|2048|128 49. Falcon 180B
         512|8|128|128 152; 256|8|128|2048 200; 32|8|2048|128 15; 32|8|2048|2048 52. The same page's Mixtral 8x7B
         rows: H200 FP8 1024|2|128|128 5,444 and 64|2|2048|128 605; H100 FP8 512|2|128|128 5,255 and
         64|2|2048|128 588; A100 FP16 512|2|128|128 2,842 and 64|2|2048|128 319.
         Same page, Falcon 180B (not yet in any test): H200 FP8 1024|4|128|128 1,118; 1024|4|128|2048 990;
         64|4|2048|128 118; 64|4|2048|2048 265. H100 FP8 1024|4|128|128 1,100; 1024|8|128|2048 837; 64|4|2048|128
         112; 64|4|2048|2048 246. A100 FP16 1024|8|128|128 254; 512|8|128|2048 266; 64|8|2048|128 29;
         64|8|2048|2048 93.
  [XQA]  NVIDIA/TensorRT-LLM cpp/tensorrt_llm/kernels/decoderMaskedMultiheadAttention/decoderXQARunner.h,
         DecoderXQARunner::shouldUse (stored copies read with find_string, "xqaParams.head_size != 128"): the
         2024 copies return false ("head_size") unless head_size is 128 (later 128 or 256); only a later
         decoderXQAImplPrecompiled.cpp accepts 64. The v0.9.0 tag's copy itself was not read: the stored copies
         are untagged and date from around 0.8-0.9 and later (fixg45, after aud45g).
  [REL]  NVIDIA/TensorRT-LLM docs/source/release-notes.md (stored copy, find_string id 683127886), "TensorRT-LLM
         Release 0.10.0": "Added FP8 quantization support for Mixtral."
"""

from __future__ import annotations

import pytest

from procurement.sizing import load_bundled_gpus, parse_workload_spec, size_workload
from procurement.sizing.validation import trtllm_spec
from tests.procurement.outside.test_outside_audit_stop43s import MODELS

GPUS = {gpu.slug: gpu for gpu in load_bundled_gpus()}
SPEED = 0.15
MIXTRAL_ACTIVE = 12.75e9  # matmul weights a Mixtral 8x7B token multiplies (the audit's figure, stop43m)


def per_gpu(model, precision, gpu, tp, batch, prompt, output, decode_attention="shared_kv"):
    raw = trtllm_spec(model if model not in MODELS else "llama-2-7b", precision, tp, batch, prompt, output)
    if model in MODELS:
        raw["model"] = MODELS[model]
    raw["inference"]["decode_attention"] = (
        decode_attention  # mmha: the run's decode attention kernel, as stated
    )
    spec = parse_workload_spec({"name": "s", **raw})
    report = size_workload(spec, [GPUS[gpu]])
    row = next(c for c in report["candidates"] if c["gpus"] == tp)["throughput"]
    return row["decode_tokens_per_second_total"] / tp


PCIE_TP2 = (
    "UNEXPLAINED: [TRT9] L40S FP8 Llama 2 70B TP 2, batch 256, 128/128: published 562; ours 747.1 (+32.9%). The class of "
    "test_outside_audit_stop42a.py's PCIE_TP_REASON: the TP 2 and TP 4 rows want the PCIe ring at about 0.45-0.5 of "
    "the x16 link (here +7.4% at 0.45), the TP 8 Falcon 180B rows below at 0.80 or more (at 0.45: -43.3%, -25.6%, "
    "-38.7%, -18.1%), so no single PCIe share fits the table; not a link figure a spec states today. cls45d: "
    "this row's 4.2 MB decode all-reduce (256 x 8,192 x 2 B) runs v0.9.0's custom ONESHOT kernel (TP 2, under "
    "the 16 MB workspace: allreducePlugin.cpp @b57221b7), as the Falcon TP 8 first token and its batch 256 / 32 "
    "rows run TWOSHOT (batch 512's 15.2 MB: NCCL); priced as that kernel at 0.45 of the link "
    "it reads +19.8%, and the split between the TP 2 / 4 and the Falcon TP 8 rows stays (PCIE_TP_REASON)"
)
L40S_ROWS = [
    # (model, tp, batch, prompt, output, published out tok/s/GPU) [TRT9]; ours at serve44 in the comment
    ("gpt-j-6b", 1, 512, 128, 128, 7859),  # -10.6%
    ("gpt-j-6b", 1, 64, 128, 2048, 1904),  # -11.0%
    ("gpt-j-6b", 1, 32, 2048, 128, 684),  # -13.0%
    ("gpt-j-6b", 1, 32, 2048, 2048, 768),  # -13.4%
    ("mistral-7b", 1, 896, 128, 128, 9562),  # -0.6%
    ("mistral-7b", 1, 120, 128, 2048, 4387),  # +1.1%
    ("mistral-7b", 1, 84, 2048, 128, 971),  # -3.7%
    ("mistral-7b", 1, 56, 2048, 2048, 1721),  # -0.9%
    ("llama-2-7b", 1, 256, 128, 128, 5885),  # +2.9%
    ("llama-2-7b", 1, 64, 128, 2048, 1654),  # -10.1%
    ("llama-2-7b", 1, 32, 2048, 128, 574),  # -8.8%
    ("llama-2-7b", 1, 16, 2048, 2048, 537),  # -9.4%
    pytest.param("llama-2-70b", 2, 256, 128, 128, 562, marks=pytest.mark.xfail(strict=True, reason=PCIE_TP2)),
    ("llama-2-70b", 2, 16, 2048, 128, 49),  # +12.1%
    ("falcon-180b", 8, 512, 128, 128, 152),  # -13.0%
    ("falcon-180b", 8, 256, 128, 2048, 200),  # +9.2%
    ("falcon-180b", 8, 32, 2048, 128, 15),  # -10.4%
    ("falcon-180b", 8, 32, 2048, 2048, 52),  # -1.1%
]


@pytest.mark.parametrize(("model", "tp", "batch", "prompt", "output", "published"), L40S_ROWS)
def test_trt9_l40s_peak_throughput_rows_within_15_percent(model, tp, batch, prompt, output, published):
    # One GPU: no collective, so these check the L40S's reads and FP8 rate alone (all inside). TP 8: Falcon 180B's
    # 160 all-reduces a step over PCIe at the engine's 0.80 of the link; a PCIe share fitted on the TP 4 rows (0.45)
    # would put all four outside, which is why serve44 did not land one.
    assert per_gpu(model, "fp8", "l40s", tp, batch, prompt, output) == pytest.approx(published, rel=SPEED)


def implied_tflops_per_gpu(published, tp, batch, prompt, output):
    """Active-weight TFLOPS a GPU that a published Mixtral row implies: a step decodes ``batch`` tokens and, with
    static batching, carries batch x prompt / output prompt tokens of prefill; the step's time is
    batch / (published x tp)."""
    step_s = batch / (published * tp)
    tokens = batch + batch * prompt / output
    return tokens * 2 * MIXTRAL_ACTIVE / tp / step_s / 1e12


def test_the_prefill_heavy_mixtral_rows_run_at_one_compute_rate_on_both_hopper_cards():
    # [TRT9] H200 (4.8 TB/s) and H100 (3.35 TB/s) FP8: 278, 262, 268, 255 TFLOPS a GPU, the same on both memory
    # systems (a compute ceiling, not reads): 0.26-0.28 of the 989 TFLOPS dense BF16 peak, 0.13-0.14 of FP8's 1,979.
    hopper = [
        implied_tflops_per_gpu(5444, 2, 1024, 128, 128),
        implied_tflops_per_gpu(605, 2, 64, 2048, 128),
        implied_tflops_per_gpu(5255, 2, 512, 128, 128),
        implied_tflops_per_gpu(588, 2, 64, 2048, 128),
    ]
    assert [round(x) for x in hopper] == [278, 262, 268, 255]
    assert max(hopper) / 989 < 0.29
    # [TRT9] A100 FP16, the same two shapes: 145 and 138 (0.44-0.46 of 312). Hopper over A100 1.88x, near the SM
    # count x boost clock ratio 132 x 1.98 / (108 x 1.41) = 1.72, not Hopper's 3.2x FP8 (or 1.6x BF16) datasheet
    # ratio; with [REL] (FP8 for Mixtral only from v0.10.0) the v0.9.0 experts ran 16-bit kernels on every card.
    a100 = [implied_tflops_per_gpu(2842, 2, 512, 128, 128), implied_tflops_per_gpu(319, 2, 64, 2048, 128)]
    assert [round(x) for x in a100] == [145, 138]
    assert sum(hopper) / len(hopper) / (sum(a100) / len(a100)) == pytest.approx(1.88, abs=0.02)


FALCON_DECODE = (
    "EXPLAINED (fixa45; was left by serve44 with the head-size reason unsized): [TRT9] Falcon 180B {gpu} TP {tp}, "
    "batch {batch}, {prompt}/{output}: published {published:,}; ours {ours:,.1f} ({err:+.1%}). (a) v0.9.0-era XQA "
    "rejects Falcon 180B twice: head size 64 (128 only, later 128 or 256) and 29 query heads a KV head (8 or 1 "
    "only, later also 16) (decoderXQARunner.h shouldUse, three stored copies, none tagged v0.9.0, from around "
    "0.8-0.9 and later, test_outside_xqa_stop45.py [XQA]; XQA itself on by default, PluginConfig enable_xqa True, "
    "stored id 4882224494), so "
    "its decode ran the masked MHA kernel, a thread block a query head, reading each KV head's cache 29 times "
    "where the product reads it once. (b) Sized on rows no fit used: the per-query-head bytes at the masked MHA "
    "kernel's one throughput fitted on two A100 FP16 Mistral 7B rows (3.7 TB/s, its on-chip work: 1.8x the A100's "
    "HBM bandwidth, the same on the H100 and the H200, not an L2-served read rate; Mistral has 4 query heads a KV "
    "head and no XQA either) put the six long-output rows at -19.7% / +4.3% (H200), -15.8% / +2.2% (H100), "
    "-0.8% / -1.3% (A100; +1.9% / -1.8% before serve48b priced the A100 TP 8 all-reduces as nccl-tests "
    "measured them) (test_outside_xqa_stop45.py case 3; the two past 15% a strict xfail of their own); the "
    "same term would move four passing prefill-heavy Hopper rows to -15.1 / -16.2 / -16.5 / -17.5% (aud45g), and "
    "the held-out long-output rows imply 3.2-5.6 TB/s: a size good to about +-20%. (c) No field states the engine release or a decode attention that does not share a KV head across "
    "its group; the on-chip rate is the rows' own. History (serve44): The long-output rows of every NVLink card are +46% to +119% while the same model's prefill-heavy "
    "rows pass (-1.9% to -7.4%) and the same cards' Llama 2 70B long-output rows (head 128, groups of 8) read "
    "+3.2% to +18.9%: the difference is decode attention. Falcon 180B's heads are 64 wide (14,848 / 232) in groups of 29 query heads a KV head; [XQA] "
    "TensorRT-LLM's GQA decode kernel of that time takes head size 128 (or 256) only, so the decode step ran the "
    "per-head masked MHA kernel, which reads a KV head's cache once per query head where the engine prices one "
    "read per group. Sized: every re-read from memory (29x the KV reads) gives -1.2% to -37.8% on these rows "
    "(over-corrected: the L2 serves part of the re-reads), and on the L40S (96 MB of L2) the same model's "
    "long-output rows pass without it (+9.2%, -1.1%), as L2 reuse would have it. Not fitted: the share served "
    "from L2 would be a per-card fit. A spec could state the decode attention kernel (shared across a KV group "
    "or per query head); no field does"
)
# audx48a (stop 48): the two long-output rows whose size misses 15% lose the EXPLAINED label (reason text only).
AUDX48A_WITHDRAWN = {
    ("h200-sxm-141gb", 4, 1024, 128, 2048): (
        "UNEXPLAINED (withdrawn by audx48a: (b) fails: the size this reason gives for this row, the per-query-head bytes at 3.7 TB/s, reads 794.5 (-19.7%) against the published 990, outside 15% (the row implies 5.57 TB/s where the same card's 2,048/2,048 row implies 3.43; test_outside_xqa_stop45.py pins it as its own strict xfail); (a) and (c) stand, but a mechanism without a size inside the target is not EXPLAINED): "
    ),
    ("h100-sxm5-80gb", 8, 1024, 128, 2048): (
        "UNEXPLAINED (withdrawn by audx48a: (b) fails: the size this reason gives for this row, the per-query-head bytes at 3.7 TB/s, reads 704.4 (-15.8%) against the published 837, outside 15% (the row implies 5.32 TB/s where the same card's 2,048/2,048 row implies 3.55; test_outside_xqa_stop45.py pins it as its own strict xfail); (a) and (c) stand, but a mechanism without a size inside the target is not EXPLAINED): "
    ),
}
FALCON_ROWS = [
    # (gpu, precision, tp, batch, prompt, output, published, ours at serve44)
    ("h200-sxm-141gb", "fp8", 4, 1024, 128, 128, 1118, None),  # -7.4%
    ("h200-sxm-141gb", "fp8", 4, 1024, 128, 2048, 990, 1828.2),
    ("h200-sxm-141gb", "fp8", 4, 64, 2048, 128, 118, None),  # -4.2%
    ("h200-sxm-141gb", "fp8", 4, 64, 2048, 2048, 265, 580.7),
    ("h100-sxm5-80gb", "fp8", 4, 1024, 128, 128, 1100, None),  # -6.1%
    ("h100-sxm5-80gb", "fp8", 8, 1024, 128, 2048, 837, 1388.6),
    ("h100-sxm5-80gb", "fp8", 4, 64, 2048, 128, 112, None),  # -3.3%
    ("h100-sxm5-80gb", "fp8", 4, 64, 2048, 2048, 246, 473.1),
    ("a100-sxm4-80gb", "fp16", 8, 1024, 128, 128, 254, None),  # -4.2% (-1.9% before serve48b)
    ("a100-sxm4-80gb", "fp16", 8, 512, 128, 2048, 266, 409.5),  # 427.2 before serve48b
    ("a100-sxm4-80gb", "fp16", 8, 64, 2048, 128, 29, None),  # -6.7% (-6.8% before serve48b)
    ("a100-sxm4-80gb", "fp16", 8, 64, 2048, 2048, 93, 136.9),  # 135.9 before serve48b
]


def _falcon_param(row):
    gpu, precision, tp, batch, prompt, output, published, ours = row
    marks = ()
    if ours is not None:
        reason = FALCON_DECODE.format(
            gpu=gpu,
            tp=tp,
            batch=batch,
            prompt=prompt,
            output=output,
            published=published,
            ours=ours,
            err=ours / published - 1,
        )
        reason = AUDX48A_WITHDRAWN.get((gpu, tp, batch, prompt, output), "") + reason
        marks = (pytest.mark.xfail(strict=True, reason=reason),)
    return pytest.param(gpu, precision, tp, batch, prompt, output, published, marks=marks)


@pytest.mark.parametrize(
    ("gpu", "precision", "tp", "batch", "prompt", "output", "published"),
    [_falcon_param(r) for r in FALCON_ROWS],
)
def test_trt9_falcon180b_peak_throughput_within_15_percent(
    gpu, precision, tp, batch, prompt, output, published
):
    assert per_gpu("falcon-180b", precision, gpu, tp, batch, prompt, output) == pytest.approx(
        published, rel=SPEED
    )
