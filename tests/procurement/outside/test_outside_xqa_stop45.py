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
          Its 'Benchmarking per Model' warning: the GQA (XQA) kernels "are currently experimental and not enabled
          by default. In order to enable them, simply run `export TRTLLM_ENABLE_XQA=1` ... we have enabled GQA
          where our tests displayed performance benefits"; the Llama2-70b and Falcon-180B recipes export it, the
          GPT-J and Llama2-7b recipes do not; Mistral and Mixtral have no recipe on the page.
  [XQA]   cpp/tensorrt_llm/kernels/decoderMaskedMultiheadAttention/decoderXQARunner.h, DecoderXQARunner::shouldUse,
          three stored copies (read_file ids; the v0.9.0 tag's own copy is not in the index):
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

from tests.procurement.outside.test_outside_serve44 import per_gpu

SPEED = 0.15
H100, H200 = "h100-sxm5-80gb", "h200-sxm-141gb"
NAMES = {H100: "H100 SXM5", H200: "H200 SXM"}


# --- Case 1: the published rows alone: Mistral's long-output rows do not follow the card's memory bandwidth. ------
# On the same table and shapes, the dense MHA models (one query head a KV head: masked MHA reads each KV head once)
# gain 1.16-1.25x from the H200's 4.8 TB/s over the H100's 3.35 (1.43x); Mistral 7B (4 query heads a KV head,
# masked MHA [XQA]) gains 1.04x on both long-output shapes. A decode step bound by reading the weights and the KV
# cache once from memory, as the product counts it, would gain about as much as the MHA models (the product:
# Mistral H200 over H100 1.42x / 1.37x). So these rows' decode attention is bound by something the H200 does not
# speed up: the per-query-head re-reads of [MMHA], served partly from L2, not DRAM.
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
# A100 FP16 rows of aud45a's case 3: one rate on three cards whose DRAM bandwidths span 2.4x, above the H100's and
# A100's DRAM bandwidth (so partly L2), which no source states. Counted as re-reads from DRAM (x4 the product's KV
# reads) the long rows would read H100 -25.2% / -35.2%, H200 +3.0% / -11.9%, A100 -48.1% / -53.9%: the bracket
# [1x, 4x] holds every row's need (A100 ~1.5x, H100 ~2x, H200 ~4x of DRAM-rate reads).
LONG_REASON = (
    "EXPLAINED (fixa45): [TRT9] Mistral 7B FP8 {gpu}, batch {batch}, {prompt}/{output}: published {published:,}; "
    "ours {ours:,.1f} ({err:+.1%}). (a) [XQA]: v0.9.0-era XQA takes 8 (or 1, later also 16) query heads a KV head "
    "and Mistral has 4, so, enabled or not, the decode step ran [MMHA]'s masked MHA kernel, one thread block a "
    "query head, which reads each KV head's cache once for each of its 4 query heads; the product reads it once a "
    "group (throughput.inference_throughput: 'GQA kernels share it across the group's query heads: TensorRT-LLM's "
    "XQA'). (b) Sized from the rows: the same table's dense MHA models gain 1.16-1.25x from the H200 over the H100 "
    "on these shapes, Mistral 1.04x (test_mistral_long_output_rows_gain_nothing_from_the_h200s_bandwidth), so no "
    "model that reads the KV cache once from DRAM meets both cards' rows; the time the rows leave for attention "
    "over the 4 per-query-head reads is one rate on the A100, H100 and H200 (3.2-4.2 TB/s), between one DRAM read "
    "(ours) and four ({x4}); the re-reads are served partly from L2. (c) No field states the serving engine's "
    "release or whether its decode attention shares a KV head across the group (inference.engine says only "
    "compiled or hf_eager), nor a per-query-head read rate (the rows' own, no source): the product cannot size it"
)
SHORT_REASON = (
    "UNEXPLAINED (fixa45): [TRT9] Mistral 7B FP8 {gpu}, batch {batch}, {prompt}/{output}: published {published:,}; "
    "ours {ours:,.1f} ({err:+.1%}). Lead, the long rows' mechanism ([XQA]: no XQA for 4 query heads a KV head, so "
    "masked MHA re-reads each KV head per query head): counted as re-reads from DRAM the row reads {x4}. Not "
    "proved here: these prefill-heavy rows gain 1.00-1.01x from the H200 as the MHA models' short rows do "
    "(compute-bound prefill), so the rows cannot show what binds their decode, and their implied per-query-head "
    "rate (2.8-4.6 TB/s) carries the product's prefill error"
)
HOPPER_MISTRAL = [
    # (gpu, batch, prompt, output, published [TRT9], ours, ours with x4 KV reads, reason)
    (H100, 896, 128, 128, 20404, 27287.6, "-7.1%", SHORT_REASON),
    (H100, 120, 128, 2048, 8623, 17110.8, "-25.2%", LONG_REASON),
    (H100, 84, 2048, 128, 2405, 2820.8, "-21.8%", SHORT_REASON),
    (H100, 56, 2048, 2048, 3731, 6401.5, "-35.2%", LONG_REASON),
    (H200, 896, 128, 128, 20460, 28550.4, "+5.7%", SHORT_REASON),
    (H200, 120, 128, 2048, 8950, 24340.5, "+3.0%", LONG_REASON),
    (H200, 64, 2048, 128, 2423, 2997.2, "-9.7%", SHORT_REASON),
    (H200, 56, 2048, 2048, 3867, 8778.0, "-11.9%", LONG_REASON),
]


def _hopper_param(row):
    gpu, batch, prompt, output, published, ours, x4, reason = row
    text = reason.format(
        gpu=NAMES[gpu],
        batch=batch,
        prompt=f"{prompt:,}",
        output=f"{output:,}",
        published=published,
        ours=ours,
        err=ours / published - 1,
        x4=x4,
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
