"""fixa45 (stop 45, after aud45a's case 3): TensorRT-LLM v0.9.0's decode attention for models with 4 query heads a
KV head (Mistral 7B, Mixtral 8x7B). aud45a found the A100 FP16 Mistral 7B long-output rows too fast in the product
(+37.2% / +19.8%) with the lead "XQA not enabled by default". The source says more: v0.9.0-era XQA could not run
these models at all, so their decode ran the masked MHA kernel, one thread block a query head, which reads each KV
head's cache once for each of its 4 query heads where the product reads it once a group. Held out here: the same
table's H100 and H200 FP8 Mistral rows (no test had them), and the same cards' dense MHA rows for contrast.

Sources (opened for this module; figures quoted where used):
  [TRT9]  NVIDIA/TensorRT-LLM docs/source/performance.md at v0.9.0 (stored copy id 5995251461, "All data was
          generated using version 0.9.0"), Peak Throughput, out tok/s/GPU (Batch | TP | In | Out):
            H200 FP8: Mistral 7B 896|1|128|128 20,460; 120|1|128|2048 8,950; 64|1|2048|128 2,423;
                      56|1|2048|2048 3,867. GPT-J 6B 120|1|128|2048 8,530; 64|1|2048|2048 3,753.
                      LLaMA 7B 120|1|128|2048 8,348; 56|1|2048|2048 3,522.
            H100 FP8: Mistral 7B 896|1|128|128 20,404; 120|1|128|2048 8,623; 84|1|2048|128 2,405;
                      56|1|2048|2048 3,731. GPT-J 6B 120|1|128|2048 7,350; 64|1|2048|2048 3,212.
                      LLaMA 7B 120|1|128|2048 6,944; 56|1|2048|2048 2,826.
          Its 'Benchmarking per Model' warning says the GQA (XQA) kernels are "experimental and not enabled by
          default" (`export TRTLLM_ENABLE_XQA=1`); the Llama2-70b and Falcon-180B recipes export it. fixg45 (after
          aud45g): the code does not read that variable; [PLUGIN] below has XQA on by default.
  [PLUGIN] tensorrt_llm/plugin/plugin.py PluginConfig, stored copy read_file id 4882224494 ("2022-2024", the
          trtllm-build era): `enable_xqa: bool = True`, and add_plugin_argument gives the trtllm-build flag the
          default "enable"; gptAttentionCommon.cpp (id 441861056) builds the DecoderXQARunner when XQA is enabled
          and, in the generation phase, "Try XQA optimization first" when shouldUse accepts the shape, else runs the
          masked MHA kernel. So an eligible model ran XQA without the variable, and an ineligible one (below) never.
  [XQA]   cpp/tensorrt_llm/kernels/decoderMaskedMultiheadAttention/decoderXQARunner.h, DecoderXQARunner::shouldUse,
          three stored copies (read_file ids). None of them is tagged v0.9.0 (the tag's own copy is not in the
          index); they date from around 0.8-0.9 (the first two) and later (the third):
            id 619534789 ("2020-2023"; BF16 and paged-KV support, which the 0.8.0 release notes list as "Add
              bfloat16 and paged kv cache support for optimized generation MQA/GQA kernels", and no GPT-J beam-4
              kernel yet): for standard generation "if (nbQHeadsPerKV != 8 || (nbKVHeads != 1 && nbKVHeads != 2
              && nbKVHeads != 4 && nbKVHeads != 8)) SUPPORT_RETURN_FALSE("nbHeads")"; "if (xqaParams.head_size !=
              128) SUPPORT_RETURN_FALSE("head_size")";
            id 5566994761 (with the GPT-J beam-4 kernel 0.8.0 integrated and a DecoderXQAImpl): "if (nbQHeadsPerKV
              != 8 && nbQHeadsPerKV != 1) SUPPORT_RETURN_FALSE("nbHeads")", head size 128 or 256;
            id 2834867687 (later, DecoderXQAImplPrecompiled::shouldUse with a sliding-window check):
              "nbQHeadsPerKV != 16 && nbQHeadsPerKV != 8 && nbQHeadsPerKV != 1" -> false.
          None of them takes 4 query heads a KV head, so, enabled or not, XQA ran neither Mistral (32 / 8) nor
          Mixtral (32 / 8); Llama 2 70B (64 / 8; 16 / 2 a GPU at TP 4) is the model it was written for; Falcon 180B
          (232 / 8 = 29, head 64) fails both the group and the head-size test.
  [MMHA]  docs/source/gpt_attention.md (stored copy id 49065559): the generation phase's masked MHA kernel is "the
          'vanilla' implementation that uses a single CUDA thread-block per head" (per query head, which is
          what makes each of a group's query heads read the shared KV head; not checked in the kernel), and "XQA Optimization ... for MQA/GQA in
          generation phase ... Detailed supported configuration can be found function `shouldUse` of class
          `DecoderXQARunner`".
Tolerance: LLM speed 15%.
"""

from __future__ import annotations

import pytest

from procurement.sizing import parse_workload_spec
from procurement.sizing.assumptions import ACHIEVED_BANDWIDTH_FRACTION
from procurement.sizing.throughput import decode_read_bytes
from procurement.sizing.validation import trtllm_spec
from tests.procurement.outside.test_outside_audit_stop43s import MODELS
from tests.procurement.outside.test_outside_serve44 import GPUS, per_gpu

SPEED = 0.15
H100, H200 = "h100-sxm5-80gb", "h200-sxm-141gb"
NAMES = {H100: "H100 SXM5", H200: "H200 SXM"}


# --- Case 1: the published rows alone: Mistral's long-output rows do not follow the card's memory bandwidth. ------
# On the same table and shapes, the dense MHA models (one query head a KV head: masked MHA reads each KV head once)
# gain 1.16-1.25x from the H200's 4.8 TB/s over the H100's 3.35 (1.43x); Mistral 7B (4 query heads a KV head,
# masked MHA [XQA]) gains 1.04x on both long-output shapes. A decode step bound by reading the weights and the KV
# cache once from memory, as the product counts it, would gain about as much as the MHA models (the product:
# Mistral H200 over H100 1.42x / 1.37x). So these rows' decode attention is bound by something the H200 does not
# speed up: [MMHA]'s per-query-head work, which runs at one rate on both cards (same SM count and clocks).
MHA_AND_MISTRAL = {
    # model: ((H200, H100) 128/2,048, (H200, H100) 2,048/2,048), [TRT9]
    "gpt-j-6b": ((8530, 7350), (3753, 3212)),
    "llama-7b": ((8348, 6944), (3522, 2826)),
    "mistral-7b": ((8950, 8623), (3867, 3731)),
}


def test_mistral_long_output_rows_gain_nothing_from_the_h200s_bandwidth():
    gains = {model: [h200 / h100 for h200, h100 in shapes] for model, shapes in MHA_AND_MISTRAL.items()}
    assert all(1.15 < g < 1.26 for model in ("gpt-j-6b", "llama-7b") for g in gains[model])
    assert all(1.03 < g < 1.05 for g in gains["mistral-7b"])
    assert 4800 / 3350 == pytest.approx(1.43, abs=0.01)


# --- Case 2: the H100 / H200 FP8 Mistral 7B rows of [TRT9] through the product (held out: no test had them). -------
# By hand (scratch script, not committed: the product's own step with the KV reads scaled), the step time the rows
# leave for decode attention, over the per-query-head reads (4 x the KV cache at the mean context, FP8), implies a
# read rate of 3.37 / 4.07 TB/s (H100, 128/2,048 and 2,048/2,048), 3.24 / 3.94 (H200), and 3.40 / 4.16 on the
# A100 FP16 rows of aud45a's case 3: about one rate on three cards whose DRAM bandwidths span 2.4x. fixg45 (after
# aud45g): read it as the masked MHA kernel's throughput over the per-query-head bytes (its on-chip work, one thread
# block a query head), not as an L2-served read rate; no source states it. Counted as re-reads from DRAM (x4 the product's KV
# reads) the long rows would read H100 -25.2% / -35.2%, H200 +3.0% / -11.9%, A100 -48.1% / -53.9%: the bracket
# [1x, 4x] holds every row's need (A100 ~1.5x, H100 ~2x, H200 ~4x of DRAM-rate reads). Case 3 sizes it with one
# on-chip rate.
MISTRAL_REASON = (
    "EXPLAINED (fixa45): [TRT9] Mistral 7B FP8 {gpu}, batch {batch}, {prompt}/{output}: published {published:,}; "
    "ours {ours:,.1f} ({err:+.1%}). (a) [XQA]: v0.9.0-era XQA takes 8 (or 1, later also 16) query heads a KV head "
    "and Mistral has 4, so, enabled or not, the decode step ran [MMHA]'s masked MHA kernel, a thread block a query "
    "head, which reads each KV head's cache once for each of its 4 query heads; the product reads it once a group "
    "(throughput.inference_throughput: 'GQA kernels share it across the group's query heads: TensorRT-LLM's XQA'). "
    "(b) Sized: the per-query-head bytes at one throughput of the masked MHA kernel, 3.7 TB/s (its on-chip work: "
    "1.8x the A100's HBM bandwidth, the same on the H100 and the H200; not an L2-served read rate), fitted on the "
    "two A100 FP16 Mistral long-output rows and held out here, put this row at {sized} (case 3: all 12 held-out "
    "Mistral rows of four cards inside 15%; Falcon 180B's long rows -19.7% to +4.3%, two of them outside 15%). "
    "It is a fit good to about +-20% on the long-output rows only: they imply 3.2-5.6 TB/s, while the 2,048/128 "
    "rows imply 4.6-6.75 and the 128/128 rows 2.84-3.91 (audx48a), and four prefill-heavy "
    "Falcon 180B Hopper rows that pass today would fall to -15.1 / -16.2 / -16.5 / -17.5% with it; the rows themselves show the decode is not bound by "
    "one DRAM read: the same table's MHA models gain 1.16-1.25x from the H200 over the H100 on the long-output "
    "shapes, Mistral 1.04x (case 1). Counted as re-reads from DRAM instead (4x the product's KV reads) the row "
    "would read {x4}. (c) No field states the serving engine's release or whether its decode attention shares a "
    "KV head across the group (inference.engine says only compiled or hf_eager; XQA itself was on by default, "
    "[PLUGIN] enable_xqa True), and the kernel's throughput is the rows' own, no source's: the product cannot "
    "size it"
)
HOPPER_MISTRAL = [
    # (gpu, batch, prompt, output, published [TRT9], ours, with x4 DRAM KV reads, sized at 3.7 TB/s (case 3))
    (H100, 896, 128, 128, 20404, 27287.6, "-7.1%", "+9.2%"),
    (H100, 120, 128, 2048, 8623, 17110.8, "-25.2%", "+7.5%"),
    (H100, 84, 2048, 128, 2405, 2820.8, "-21.8%", "-6.6%"),
    (H100, 56, 2048, 2048, 3731, 6401.5, "-35.2%", "-6.9%"),
    (H200, 896, 128, 128, 20460, 28550.4, "+5.7%", "+8.9%"),
    (H200, 120, 128, 2048, 8950, 24340.5, "+3.0%", "+11.5%"),
    (H200, 64, 2048, 128, 2423, 2997.2, "-9.7%", "-6.6%"),
    (H200, 56, 2048, 2048, 3867, 8778.0, "-11.9%", "-4.8%"),
]


def _hopper_param(row):
    gpu, batch, prompt, output, published, ours, x4, sized = row
    text = MISTRAL_REASON.format(
        gpu=NAMES[gpu],
        batch=batch,
        prompt=f"{prompt:,}",
        output=f"{output:,}",
        published=published,
        ours=ours,
        err=ours / published - 1,
        x4=x4,
        sized=sized,
    )
    return pytest.param(
        gpu,
        batch,
        prompt,
        output,
        published,
        marks=pytest.mark.xfail(strict=True, reason=text),
        id=f"{gpu}-b{batch}-{prompt}-{output}",
    )


@pytest.mark.parametrize(
    ("gpu", "batch", "prompt", "output", "published"), [_hopper_param(r) for r in HOPPER_MISTRAL]
)
def test_trt9_hopper_fp8_mistral_7b_rows(gpu, batch, prompt, output, published):
    assert per_gpu("mistral-7b", "fp8", gpu, 1, batch, prompt, output) == pytest.approx(published, rel=SPEED)


# --- Case 3: one per-query-head read rate, fitted on two rows, checked on the rest (the size of (b) above). --------
# The decode attention as [MMHA] runs it: the slower of the product's one read of the KV cache from memory and the
# group's per-query-head reads (query heads a KV head x the KV cache) at one on-chip rate R. R = 3.7 TB/s is fitted
# on the two A100 FP16 Mistral long-output rows of aud45a's case 3 (implied 3.40 / 4.16 TB/s); everything else is
# held out: the 12 other Mistral rows of the A100 / H100 / H200 / L40S tables (the L40S's slow memory binds first,
# so its rows do not move) and Falcon 180B's six long-output rows (29 query heads a KV head, head 64: [XQA] rejects
# it twice; test_outside_serve44.py, +46% to +119% today). fixg45 (after aud45g): the four prefill-heavy Falcon
# Hopper rows, passing today (-3.3% to -7.4%), would read -15.1 / -16.2 / -16.5 / -17.5% with it (their decode at
# batch 1,024 / 64 carries the same term; aud45g's test_xqa_group_test_splits_the_rows_and_the_one_rate_spreads
# pins them), and two of Falcon's held-out long rows land at -19.7 / -15.8%, outside 15% (their own strict xfail
# below, not a wider band here): reasons, with the missing field, that this is an explanation, not an engine change.
# R is the masked MHA kernel's throughput over the per-query-head bytes (1.8x the A100's 2,039 GB/s of HBM, the same
# on the H100 and the H200), not a read rate from L2; the held-out long-output rows imply 3.2-5.6 TB/s (case 4;
# long-output rows only: the 2,048/128 rows imply 4.6-6.75, the 128/128 rows 2.84-3.91, audx48a).
PER_QUERY_HEAD_RATE = 3.7e12  # B/s, fitted on aud45a's two A100 FP16 Mistral long-output rows (above)
REREAD_ROWS = [
    # (model, precision, gpu, tp, batch, prompt, output, published [TRT9], query heads a KV head): inside 15%
    ("mistral-7b", "fp16", "a100-sxm4-80gb", 1, 896, 128, 128, 6251, 4),  # -0.9%
    ("mistral-7b", "fp16", "a100-sxm4-80gb", 1, 64, 2048, 128, 698, 4),  # -8.6%
    ("mistral-7b", "fp8", H100, 1, 896, 128, 128, 20404, 4),  # +9.2%
    ("mistral-7b", "fp8", H100, 1, 120, 128, 2048, 8623, 4),  # +7.5%
    ("mistral-7b", "fp8", H100, 1, 84, 2048, 128, 2405, 4),  # -6.6%
    ("mistral-7b", "fp8", H100, 1, 56, 2048, 2048, 3731, 4),  # -6.9%
    ("mistral-7b", "fp8", H200, 1, 896, 128, 128, 20460, 4),  # +8.9%
    ("mistral-7b", "fp8", H200, 1, 120, 128, 2048, 8950, 4),  # +11.5%
    ("mistral-7b", "fp8", H200, 1, 64, 2048, 128, 2423, 4),  # -6.6%
    ("mistral-7b", "fp8", H200, 1, 56, 2048, 2048, 3867, 4),  # -4.8%
    ("mistral-7b", "fp8", "l40s", 1, 120, 128, 2048, 4387, 4),  # +1.1% (memory binds)
    ("mistral-7b", "fp8", "l40s", 1, 56, 2048, 2048, 1721, 4),  # -0.9% (memory binds)
    ("falcon-180b", "fp8", H200, 4, 64, 2048, 2048, 265, 29),  # +4.3%
    ("falcon-180b", "fp8", H100, 4, 64, 2048, 2048, 246, 29),  # +2.2%
    ("falcon-180b", "fp16", "a100-sxm4-80gb", 8, 512, 128, 2048, 266, 29),  # -0.8% (+1.9% before serve48b)
    ("falcon-180b", "fp16", "a100-sxm4-80gb", 8, 64, 2048, 2048, 93, 29),  # -1.3% (-1.8% before serve48b)
]


def _sized_and_implied(model, precision, gpu, tp, batch, prompt, output, published, group):
    """The product's step plus the group's per-query-head bytes at PER_QUERY_HEAD_RATE beyond its one read of the KV
    cache: (sized out tok/s/GPU, the rate the published row implies for the same bytes)."""
    raw = trtllm_spec(model if model not in MODELS else "llama-2-7b", precision, tp, batch, prompt, output)
    if model in MODELS:
        raw["model"] = MODELS[model]
    _, kv = decode_read_bytes(parse_workload_spec({"name": "s", **raw}), float(batch))
    step = batch / (
        per_gpu(model, precision, gpu, tp, batch, prompt, output) * tp
    )  # the product's, prefill in
    once = batch * kv / (tp * GPUS[gpu].memory_bandwidth_gbps * 1e9 * ACHIEVED_BANDWIDTH_FRACTION)
    per_query_head = batch * group * kv / tp
    sized = batch / (step + max(0.0, per_query_head / PER_QUERY_HEAD_RATE - once)) / tp
    implied = per_query_head / (once + batch / (published * tp) - step)
    return sized, implied


@pytest.mark.parametrize("row", REREAD_ROWS, ids=lambda r: f"{r[0]}-{r[2]}-b{r[4]}-{r[5]}-{r[6]}")
def test_one_per_query_head_read_rate_sizes_the_held_out_gqa_rows(row):
    sized, _ = _sized_and_implied(*row)
    assert sized == pytest.approx(row[7], rel=SPEED)


# The two held-out Falcon 180B long-output rows the one rate leaves outside 15% (fixa45 had them inside this test at
# a 0.20 band; aud45g: a wider band inside a passing test hides them). [TRT9] H200 FP8 TP 4 batch 1,024 128/2,048:
# 990, sized 794.5 (-19.7%), implied 5.57 TB/s; H100 FP8 TP 8 batch 1,024 128/2,048: 837, sized 704.4 (-15.8%),
# implied 5.32 TB/s. Their 2,048/2,048 rows of the same cards imply 3.43 / 3.55: one model, one card, two rates.
FALCON_PAST_15 = (
    "UNEXPLAINED (fixg45, after aud45g; the residual of fixa45's sizing, not a product figure): [TRT9] Falcon 180B "
    "{gpu} FP8 TP {tp}, batch 1,024, 128/2,048: published {published}; the product's step plus the per-query-head "
    "bytes at 3.7 TB/s gives {sized} ({err}). The row implies {implied} TB/s where the same card's 2,048/2,048 row "
    "implies {other} TB/s: the masked MHA kernel's throughput is not one number across batch and context (the "
    "held-out long-output rows span 3.2-5.6 TB/s; that spread covers the long-output rows only: the 2,048/128 rows "
    "imply 4.6-6.75 TB/s and the 128/128 rows 2.84-3.91, audx48a), so fixa45's term sizes the Falcon rows to about "
    "+-20%, not 15% (fix48x: a mechanism without its size fails explain-rules (b); audx48a withdrew the EXPLAINED "
    "label of these rows in test_outside_serve44.py)"
)
FALCON_ROWS_PAST_15 = [
    pytest.param(
        ("falcon-180b", "fp8", H200, 4, 1024, 128, 2048, 990, 29),
        marks=pytest.mark.xfail(
            strict=True,
            reason=FALCON_PAST_15.format(
                gpu="H200 SXM", tp=4, published=990, sized="794.5", err="-19.7%", implied="5.57", other="3.43"
            ),
        ),
        id="falcon-180b-h200-tp4-b1024-128-2048",
    ),
    pytest.param(
        ("falcon-180b", "fp8", H100, 8, 1024, 128, 2048, 837, 29),
        marks=pytest.mark.xfail(
            strict=True,
            reason=FALCON_PAST_15.format(
                gpu="H100 SXM5",
                tp=8,
                published=837,
                sized="704.4",
                err="-15.8%",
                implied="5.32",
                other="3.55",
            ),
        ),
        id="falcon-180b-h100-tp8-b1024-128-2048",
    ),
]


@pytest.mark.parametrize("row", FALCON_ROWS_PAST_15)
def test_one_per_query_head_read_rate_misses_two_held_out_falcon_rows(row):
    sized, _ = _sized_and_implied(*row)
    assert sized == pytest.approx(row[7], rel=SPEED)


# --- Case 4: the spread of the rate the held-out long-output rows imply (aud45g's note, restated as a check). ------
# Each held-out 2,048-output row of the masked-MHA models on the Hopper and A100 tables (the two A100 Mistral fit rows
# and the L40S rows, where memory binds first, left out) implies a rate for the per-query-head bytes: Mistral H100
# 3.37 / 4.07, H200 3.24 / 3.94; Falcon H200 5.57 / 3.43, H100 5.32 / 3.55, A100 3.53 / 3.90 TB/s (the fit rows:
# 3.40 / 4.16). 3.2-5.6 TB/s, 1.72x: 3.7 is a central value, and the per-row error follows the spread.
HELD_OUT_LONG = [r for r in REREAD_ROWS if r[6] == 2048 and r[2] != "l40s"] + [
    p.values[0] for p in FALCON_ROWS_PAST_15
]


def test_the_held_out_long_output_rows_imply_3_2_to_5_6_tb_s():
    implied = [_sized_and_implied(*row)[1] for row in HELD_OUT_LONG]
    assert len(implied) == 10
    assert 3.2e12 < min(implied) < 3.3e12 and 5.5e12 < max(implied) < 5.6e12
    assert max(implied) / min(implied) == pytest.approx(1.72, abs=0.02)
    assert PER_QUERY_HEAD_RATE / (GPUS["a100-sxm4-80gb"].memory_bandwidth_gbps * 1e9) == pytest.approx(
        1.8, abs=0.02
    )
