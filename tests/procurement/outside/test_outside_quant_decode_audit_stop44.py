"""Issue 26, stop 44, outside audit (aud44a) of acc44's inference.quant_kernel (exllama: an hf_eager one-stream
step at 0.912 of fp16's, procurement/sizing/serving_host.QUANT_KERNEL_STEP_RATIO). Published single-stream and
small-batch decode of 4-bit GPTQ models that no test used before this module (grep of tests/ for the commits
and figures below). Tolerance: the issue's 15% on LLM speed.

Sources:
  [OPT24]  huggingface/optimum @4e987762cdd33c237a63538c181b1ccfa4d7648a tests/benchmark/README.md, "GPTQ
           benchmark", "AutoGPTQ 0.7.0, PyTorch 2.2.0, bitsandbytes 0.42.0, transformers 4.37.2", "a single NVIDIA
           A100-SXM4-80GB GPU", "## Decode benchmark": "a prefill length of 1, essentially measuring the decode
           step in text generation (512 tokens generated)", Llama-2-13b-chat (TheBloke/Llama-2-13B-chat-GPTQ,
           4-bit, group 128, no act-order). Per-token latency (ms) / throughput (tok/s):
             batch 1: fp16 30.43 / 32.86, exllama 31.68 / 31.57 (cuda-old 42.91, exllama_v2 31.60, marlin 28.96)
             batch 4: fp16 29.76 / 134.41, exllama 55.15 / 72.53
  [OPT23]  huggingface/optimum @096386299309ec9c4c737c9e5ce260008c48fad7 tests/benchmark/README.md (acc44's own
           source; the batch-4 rows, which acc44 did not use; the same rows, stated as "AutoGPTQ 0.4.2, PyTorch
           2.0.1, bitsandbytes 0.41.1, transformers 4.32", at @3ffebf994fbd579ab9acb589edc401fa66413928):
             batch 4: fp16 37.89 / 105.55, exllama 54.14 / 73.87
  [QWEN8K] QwenLM/Qwen @235aa8f71efd5218323e53a98c065554aeb41272 README.md (Oct 2023, until e8e15962 replaced the
           table), "Inference Performance / Speed": "average inference speed (tokens/s) of generating 2048 and
           8192 tokens", flash attention v2 rows, "a single A100-SXM4-80G GPU with PyTorch 2.0.1 and CUDA 11.8";
           "The generation speed of the Int4/Int8 models mentioned above is provided by the autogptq library"; the
           memory table's "generating 8192 tokens (with single token as context)". 8192 column: 7B BF16 36.14,
           Int4 38.61; 14B BF16 24.87, Int4 27.33 (the 2048 column, 40.93 / 50.09 and 38.72, is already used by
           test_outside_recommendations_stop43.py).

The engine's absolute eager times for Llama-2-13B are a known miss (test_outside_audit_stop44.py: 17.9 us a
kernel on hf_eager's 2,070 against the 31 us assumed), so the optimum cases judge what acc44 adds, the kernel's
step relative to fp16 on the same run: the estimate is the published fp16 row times the engine's own
exllama / fp16 speed ratio at that batch (both from size_spec_document).
"""

from __future__ import annotations

import copy

import pytest

from procurement.api.sizing import size_spec_document

A100 = "a100-sxm4-80gb"
QWEN_MODELS = {  # as test_outside_recommendations_stop43.QWEN_MODELS (Qwen-1 config.json shapes)
    "7b": {
        "name": "Qwen-7B",
        "num_layers": 32,
        "hidden_size": 4096,
        "num_attention_heads": 32,
        "intermediate_size": 11008,
        "vocab_size": 151936,
        "eager_layer": "qwen1_unfused_norm",  # fix47h: the README's run, 37 kernels a layer (was qwen1, 23)
    },
    "14b": {
        "preset": "llama-2-13b",
        "name": "Qwen-14B",
        "intermediate_size": 13696,
        "vocab_size": 152064,
        "eager_layer": "qwen1_unfused_norm",  # fix47h: the README's run, 37 kernels a layer (was qwen1, 23)
    },
}


# qwen2up2: the optimum runs' transformers release and attention, read from their own sources (qwen2cnt): [OPT24]
# @4e987762 transformers 4.37.2 (sdpa, its default there), [OPT23] @3ffebf99 4.32.0 (eager, its only attention).
# Stated, the Llama layer is counted as that release issues it (serving_host.RELEASE_LAYER_KERNELS: 42 / 47 a
# layer) at the rate read on those counts, hf_generate_release_kernel_host_s 19.68 us. The Qwen README rows (Qwen-1
# remote code, no transformers release of the layer) stay unstated.
OPT24 = ("4.37.2", "sdpa")
OPT23 = ("4.32.0", "eager")


def _speed(
    model: dict,
    quantization: str,
    concurrency: int,
    context: int,
    output: int,
    harness: str = "transformers",
    release: tuple[str, str] | None = None,
) -> float:
    inference = {
        "concurrency": concurrency,
        "context_len": context,
        "output_tokens": output,
        "engine": "hf_eager",
    }
    if release:
        inference["transformers_release"], inference["attn_implementation"] = release
    if quantization == "int4":
        inference["quant_kernel"] = "exllama"
    # host47b: inference.generate_harness as the run states it. fix47h: the Qwen README rows all run on the default
    # (transformers; auto_gptq is a stated host rate, "the host AutoGPTQ's README llama-7b fp16 A100 row measured, 31 us
    # a kernel; cause not shown", not the README's); optimum's benchmark (plain AutoModelForCausalLM) is transformers
    inference["generate_harness"] = harness
    spec = {
        "name": f"aud44a-{model.get('name', model.get('preset'))}-{quantization}-{concurrency}",
        "task": "inference",
        "model": model,
        "weight_quantization": quantization,
        "inference": inference,
    }
    report = size_spec_document(copy.deepcopy(spec), [A100], calibrate=False)
    assert report["candidates"][0]["verdict"] in {"fits", "tight", "oversized"}
    return report["throughput"]["decode_tokens_per_second_per_stream"]


def _llama13_ratio(concurrency: int, release: tuple[str, str] = OPT24) -> float:
    """The engine's exllama over fp16 per-stream speed for Llama-2-13B on one A100 (prompt 1, 512 generated), with
    the run's transformers release stated."""
    llama = {"preset": "llama-2-13b"}
    return _speed(llama, "int4", concurrency, 513, 512, release=release) / _speed(
        llama, "none", concurrency, 513, 512, release=release
    )


# --- 1. [OPT24] batch 1, decode only: the kernel measured again on a later stack --------------------------------
# Published exllama 31.57 tok/s; estimate 32.86 (the fp16 row) x 1.0963 (engine: 17.08 / 15.58) = 36.02, +14.1%:
# inside 15%, at its edge. The later stack has exllama 4% SLOWER than fp16 (31.68 vs 30.43 ms, 1.041), where acc44's
# 2023 row has it 8.8% faster (0.912): the ratio belongs to torch 2.0.1 / transformers 4.32 / AutoGPTQ 0.4.2, and
# the spec's value names no version. (Absolute, the engine gives 17.08 tok/s, -45.9%: test_outside_audit_stop44.)
@pytest.mark.django_db
def test_optimum_2024_decode_batch1_exllama_against_its_fp16_row(bundled_catalog):
    ratio = _llama13_ratio(1)
    assert ratio == pytest.approx(36.958 / 33.711, rel=0.001)  # acc44's 0.912, carried through the engine
    estimate = 32.86 * ratio  # [OPT24] fp16 batch 1: 30.43 ms, 32.86 tok/s
    assert estimate == pytest.approx(36.02, abs=0.01)
    assert estimate == pytest.approx(31.57, rel=0.15)  # [OPT24] exllama batch 1: 31.68 ms, 31.57 tok/s


# --- 2, 3. Batch 4 (four streams): acc44 prices exllama above one stream as fp16 -------------------------------
# docs/workload-spec.md (acc44): "above one stream it is priced as fp16 (the same table: 0.997 at batch 2)". The
# same table at batch 4 has exllama at 1.43x fp16's step, the 2024 one at 1.85x: AutoGPTQ's exllama (v1) kernel
# is a GEMV whose GPU time grows with the rows (optimum: "rather slow for larger batch sizes"), so at four
# streams the step is the kernel's GPU time, above the fp16 loop's host floor.
# fix44q: the engine now prices the GEMV's rows (serving_host.EXLLAMA_ROW_SECONDS_PER_WEIGHT, fitted on [OPT23]
# batch 2 / 4): Llama-2-13B at 4 streams is GPU-bound at 4 x 15.24 ms + the KV reads (0.59 ms at this module's
# prompt of 1, 1.76 ms at [OPT23]'s 512) = 61.53 / 62.71 ms (tests 2b, 3b below, absolute). These relative
# estimates still miss: the engine's fp16 loop is its host floor, 64.17 ms, where the runs' fp16 rows are 37.89 /
# 29.76 ms, so the engine's exllama / fp16 speed ratio is 64.17 / 61.53 = 1.043, not 0.700 / 0.540.
# cls45d: the eager loop's KV traffic is 3 passes (torch.cat's copy; serving_host.EAGER_KV_CACHE_PASSES) and the
# per-row constant is refitted on the same two rows (14.35 ms a row): 4 x 14.355 + 3 x (0.59 / 1.76) = 59.19 /
# 62.71 ms, ratio 64.17 / 59.19 = 1.084.
_BATCH4 = {
    # id: (published exllama tok/s per stream, published fp16 tok/s per stream, source row)
    "optimum-2023": (73.87 / 4, 105.55 / 4, "[OPT23] batch 4: fp16 37.89 ms, exllama 54.14 ms (1.429)"),
    "optimum-2024": (72.53 / 4, 134.41 / 4, "[OPT24] batch 4: fp16 29.76 ms, exllama 55.15 ms (1.853)"),
}
# the engine's exllama GPU step at 4 streams (s) by context: 4 rows x 15.236 ms + the KV reads, 4 x 0.4408 ms at a
# mean context of 768 (prompt 512 + 256), scaled to 257 (prompt 1 + 256)
# decode48b: 13.423 ms a row and 5.114 pass-equivalents (the fp16 cache's 3 passes, the cat's 2 copies at 2.057 each:
# serving_host.EAGER_2BYTE_COPY_PASS_RATIO), the per-row constant refitted on the same two rows: 56.71 / 62.71 ms
# fix48x: the ratio corrected to 1.944 (decode48b's 2.057 inverted pytorch#150233's table): 13.522 ms a row and
# 4.889 pass-equivalents, refitted on the same two rows: 56.99 / 62.71 ms
_GPU4 = {  # cls45d: 14.355 ms a row and 3 passes over the cache (were 15.236 ms and 1 pass: 61.53 / 62.71 ms)
    513: 4 * 13.522e-3 + 4.889 * 4 * 0.4408e-3 * 257 / 768,
    1024: 4 * 13.522e-3 + 4.889 * 4 * 0.4408e-3,
}  # 56.99 / 62.71 ms (56.71 at decode48b's 2.057; 59.19 / 62.71 before decode48b)
_ENGINE_RATIO4_AT_31US = (40 * 51 + 30) * 31e-6 / _GPU4[513]  # 64.17 / 59.19 ms = 1.084 (1.043 before cls45d)
# host47b: the fp16 loop's floor at the default harness's 16.99 us (plain transformers generate, as benchmark_gptq.py
# runs): 2,070 x 16.99 us = 35.17 ms (still above the fp16 GPU step, ~23.3 ms) / 59.19 ms = 0.594
_ENGINE_RATIO4_UNSTATED = (40 * 51 + 30) * 16.99e-6 / _GPU4[513]  # 35.17 / 56.99 = 0.617 (fix48x)
# qwen2up2: each run's release stated, the fp16 floor is that release's count at 19.68 us
# (hf_generate_release_kernel_host_s): [OPT23] 4.32.0 eager (40 x 47 + 30) x 19.68 us = 37.59 ms, 0.660;
# [OPT24] 4.37.2 sdpa (40 x 42 + 30) x 19.68 us = 33.65 ms, 0.591 (was 0.617 for both on the 51 count at 16.99 us)
# fixtr: the rate is 19.67 us (the model-level rotary of the Qwen2.5 fit rows recounted 8 -> 9): 37.57 / 33.63 ms.
_ENGINE_RATIO4 = {
    "optimum-2023": (40 * 47 + 30) * 19.67e-6 / _GPU4[513],
    "optimum-2024": (40 * 42 + 30) * 19.67e-6 / _GPU4[513],
}
_BATCH4_REASON = (
    "EXPLAINED (cls45d, stop 45): {row}: published exllama {published:.2f} tok/s a stream; estimate {estimate:.2f} (the fp16 row x the engine's "
    "exllama / fp16 ratio at concurrency 4, 1.084), {gap:+.1f}%. Was (aud44a): acc44 priced exllama above one "
    "stream as fp16 (ratio 1.000). fix44q prices exllama's GEMV rows on the GPU (62.71 / 59.19 ms at 4 streams "
    "since cls45d's 3 KV passes, against the published 54.14 / 55.15 ms: -13.7% / -6.8% in tokens/s, inside, "
    "tests 2b / 3b), but the "
    "engine's fp16 loop is its host floor, 2,070 kernels x 31 us = 64.17 ms, where this run's fp16 row is "
    "{fp16_ms} ms (17.9 us a kernel, the known miss of test_outside_audit_stop44.py), so the ratio of the two "
    "engine steps is 1.084 (1.043 before cls45d) instead of the run's {run_ratio}. The fp16 host floor, not the kernel (was UNEXPLAINED). "
    "(a) Mechanism: both fp16 rows are the eager loop's host dispatch, not GPU work: the same run's fp16 step does "
    "not move from one stream to four ([OPT24] 30.43 -> 29.76 ms, [OPT23] 36.96 -> 37.89 ms) where 26 GB of fp16 "
    "weights take about 17 ms on the A100, so the denominator is the host's kernel rate, 14.4-18.3 us a kernel on "
    "transformers' Llama layer (2,070 kernels, counted from 4.30.2; the [OPT24] run's transformers 4.37.2 layer is "
    "not recounted), against the 31 us the engine prices. (b) Proof from published rows "
    "that no per-kernel rate of the stated spec fits both: [AGPTQ] (test_outside_audit_stop43d.py, AutoGPTQ README: "
    "llama-7b fp16, one A100, batch 1, transformers generate, num_beams 1) decodes the 7B, 32 layers, at 53.0 ms a "
    "token, host-bound too (13.5 GB of weights), where this table's Llama-2-13B, 40 layers of the same layer code, "
    "takes 36.96 / 30.43 ms: the larger model 1.43-1.74x faster on the same loop and card family (AutoGPTQ's row on "
    "an A100-40G, optimum's on an A100-SXM4-80GB; host-bound steps, so the card's memory does not enter), so the "
    "two hosts "
    "dispatch 1.7-2.2x apart (31.9 us against 14.4-18.3 us a kernel); the engine's exllama GPU step alone meets the "
    "run (tests 2b / 3b, -13.7% / -6.8%). (c) A spec would need the host's eager dispatch time (its CPU and "
    "PyTorch release); no field states it and no published table maps CPUs to it, so the engine keeps 31 us."
)
_RELEASE = {"optimum-2023": OPT23, "optimum-2024": OPT24}  # qwen2up2: each run's transformers, as read
_BATCH4_MS = {"optimum-2023": ("37.89", "0.700"), "optimum-2024": ("29.76", "0.540")}


_BATCH4_HOST47 = (
    " host47b: the default harness (inference.generate_harness transformers; benchmark_gptq.py calls plain "
    "AutoModelForCausalLM generate) now prices the fp16 loop at 16.99 us a kernel (hf_generate_kernel_host_s, whose "
    "fit rows include this table's 2023 batch-1 fp16 row): 35.17 ms, so the engine's ratio is 0.594 and the "
    "estimate {estimate:.2f} ({gap:+.1f}%). Still out: the engine's fp16 step at four streams is its host floor "
    "(35.17 ms) where this run's is {fp16_ms} ms (flat from batch 1: the run's own host is 18.3 us on the count, "
    "the default's 16.99 puts it 7% fast), and the exllama GPU step is -13.7% (test 2b); the two land the estimate "
    "by -15.1%, 0.1 point outside. No field states this host's rate apart from the default's fit."
)
# Was a strict xfail [optimum-2024]: "EXPLAINED (cls45d): [OPT24] batch 4: fp16 29.76 ms, exllama 55.15 ms (1.853):
# published exllama 18.13 tok/s a stream; estimate 36.43 (the fp16 row x the engine's exllama / fp16 ratio at
# concurrency 4, 1.084), +100.9%". Now 19.97 (+10.1%) because the fp16 loop's host floor is priced at the default
# harness's 16.99 us (host47b: 35.17 ms, ratio 0.594), near this run's own 14.4 us fp16 host (held out: optimum
# @4e987762 is one of hf_generate_kernel_host_s's held-out rows); its exllama GPU step (59.19 ms) is -6.8% (test 3b).
# fix47h: passing since stop 47's default host rate (held out: optimum @4e987762 batch 4, not a fit row); not FIXED
# (host47b moved 8 passing cases out). decode48b: 19.97 (+10.1%) -> 20.84 (+14.9%), the ratio 0.594 -> 0.620 (the
# exllama step at 513 tokens 59.19 -> 56.71 ms, the refit moving time from the per-row term to the KV copies).
# Was a strict xfail [optimum-2023]: "EXPLAINED (cls45d) ... host47b: the engine's ratio is 0.594 and the estimate
# 15.68 (-15.1%) ... the two land the estimate by -15.1%, 0.1 point outside". Now 16.37 (-11.4%, ratio 0.620) because
# the eager loop's cache copies cost 2.057 passes each on its fp16 cache (decode48b, serving_host.
# EAGER_2BYTE_COPY_PASS_RATIO: the cat is torch.cat of 2-byte tensors, one element a thread before pytorch#150233,
# whose own benchmark sizes it), which the per-row constant's refit on its unchanged fit rows (batch 2 / 4, 31.35 /
# 62.71 ms) carries into a shorter exllama step at this table's 513-token context (56.71 ms).
# fix48k (aud48k): [optimum-2023] is not FIXED. It passes on a refit of its own fit row (OPT23 batch 4, 54.14 ms):
# that published step is one of EXLLAMA_ROW_SECONDS_PER_WEIGHT's two fit rows, which decode48b refitted (and fix48x
# again, at the corrected 1.944: 16.29, -11.8%), so its landing is the fit's, not a mechanism held out on it.
# [optimum-2024] (held out) sits near the edge: decode48b 20.84 (+14.9%), fix48x 20.74 (+14.4%, 0.6 point inside);
# a small move of the exllama step or the host rate takes it out. qwen2up2: stated as run (transformers 4.37.2 sdpa,
# 42 kernels a layer at 19.68 us; [OPT23] 4.32.0 eager, 47) 19.85 (+9.5%) / [OPT23] 17.41 (-5.7%).


@pytest.mark.django_db
@pytest.mark.parametrize("row", list(_BATCH4))
def test_optimum_exllama_four_streams_against_their_fp16_row(bundled_catalog, row):
    """[optimum-2023] passes on a refit of its own fit row (OPT23 batch 4, 54.14 ms), not FIXED (aud48k; decode48b
    labelled it FIXED). [optimum-2024] is held out and passes (+14.4% at fix48x's 1.944; +9.5% with its release
    stated, qwen2up2)."""
    published, fp16, _ = _BATCH4[row]
    ratio = _llama13_ratio(4, _RELEASE[row])
    # was 1.0 (acc44: above one stream exllama priced as fp16); fix44q: the GEMV's rows, 61.53 ms against 64.17
    # (cls45d: 59.19 ms, 1.084); host47b: 35.17 / 59.19 = 0.594 at the default harness's 16.99 us
    assert ratio == pytest.approx(_ENGINE_RATIO4[row], rel=0.002)
    estimate = fp16 * ratio
    # 2023: 28.61 vs 18.47 (+54.9%); 2024: 36.43 vs 18.13 (+100.9%) (cls45d; +49.0 / +93.3%); host47b: 2023 15.68
    # (-15.1%), 2024 19.97 (+10.1%); fix48x 2023 16.29 (-11.8%), 2024 20.74 (+14.4%); qwen2up2 (each run's release
    # stated, its count at 19.68 us): 2023 16.29 -> 17.41 (-5.7%), 2024 20.74 (+14.4%) -> 19.85 (+9.5%)
    assert estimate == pytest.approx(published, rel=0.15)


# --- 2b, 3b. (fix44q) the same batch-4 rows, absolute: at four streams the engine's exllama step is its GPU work
# (above its 58.53 ms host floor), which the per-row constant prices. [OPT23] batch 4 (prompt 512 + 512: context
# 1,024) is one of its two fit rows (a check of the fit: 62.71 ms, 15.95 tok/s, -13.7%); [OPT24] batch 4 (prompt
# 1 + 512: context 513) is held out (AutoGPTQ 0.7.0 / PyTorch 2.2 stack; 61.53 ms, 16.25 tok/s, -10.4%; cls45d, 3 KV
# passes and the refitted row constant: 59.19 ms, 16.89 tok/s, -6.8%).
@pytest.mark.django_db
@pytest.mark.parametrize(("row", "context"), [("optimum-2023", 1024), ("optimum-2024", 513)])
def test_optimum_exllama_four_streams_absolute(bundled_catalog, row, context):
    # 2023: 73.87 / 4 = 18.47 tok/s a stream (54.14 ms); 2024: 72.53 / 4 = 18.13 (55.15 ms)
    published = _BATCH4[row][0]
    speed = _speed({"preset": "llama-2-13b"}, "int4", 4, context, 512, release=_RELEASE[row])
    assert speed == pytest.approx(1 / _GPU4[context], rel=0.003)  # 15.95 / 16.89 tok/s, GPU-bound
    assert speed == pytest.approx(published, rel=0.15)


# --- 4, 5. [QWEN8K] Qwen-7B / 14B Chat Int4 generating 8,192 tokens from one token, one A100 ---------------------
# The same README runs as the 2048 rows acc44 moved inside (auto-gptq library, exllama stated as acc44 states it).
# Absolute: the engine's hf_eager step is its host floor at every context (Qwen-7B 21.66 ms, 14B 26.86 ms with
# exllama; GPU work 4.8 / 8.2 ms even at 8k), so 8,192 tokens run as fast as 2,048: 7B 46.17 vs 38.61 (+19.6%;
# 42.11 unstated was +9.1%, inside), 14B 37.23 vs 27.33 (+36.2%; unstated 33.96, +24.3%). The README's BF16 rows
# slow as much from 2,048 to 8,192 (7B 40.93 -> 36.14, 14B 32.88 -> 24.87, engine 42.11 / 33.96 at both), so the
# miss is the context term of an eager step, not the kernel: see test 6, where the Int4 / BF16 step ratio holds.
_QWEN8K = {
    # fix47h: one harness (transformers) and the README's layer (qwen1_unfused_norm, 37): 46.17 -> 53.15, 37.23 -> 42.73
    # hfeager: flash-attn's Triton rotary priced (2 launches a layer at 62 us, triton-lang/triton PR #3503; the README's
    # 2,048 BF16 rows land): 53.15 -> 46.64, 42.73 -> 37.47, still host-bound and out
    "7b": (38.61, 36.14, 46.64),  # published Int4, published BF16, engine Int4 exllama (tok/s)
    "14b": (27.33, 24.87, 37.47),
}
_QWEN8K_REASON = (
    "UNEXPLAINED: [QWEN8K] Qwen-{model} Chat Int4 generating 8,192 tokens on one A100: published {published}, ours {ours} "
    "({gap}; fix47h: one harness, transformers 16.99 us, and the README's layer qwen1_unfused_norm, 37 kernels; "
    "the 2,048 rows of the same table now pass, so the miss is the context term below). hf_eager takes a step as max(GPU work, host floor) and the floor does not grow with the context; the "
    "README's steps do (7B Int4 20.0 -> 25.9 ms, BF16 24.4 -> 27.7 ms; 14B Int4 25.8 -> 36.6 ms, BF16 30.4 -> "
    "40.2 ms from 2,048 to 8,192 generated). Likely the O(context) KV work of each step (Qwen-1's torch.cat of the "
    "past keys / values, a copy of the whole cache a step, and the attention reads) is not hidden behind the "
    "launches (a per-step synchronisation in generate's stopping check or the allocator's growing buffers); not "
    "verified. The spec states the context; the engine has no term for it. "
    "Stating acc44's exllama moves this row further out ({unstated} unstated). UNEXPLAINED (aud44a, new). "
    "cls45d (stop 45) sized the context term against Qwen-1's attention (its decode path as reproduced in "
    "optimum-intel's Qwen patch, stored id 34240564312, and a copy of modeling_qwen.py, id 5744137592; the HF hub "
    "file at the rows' revision is not in the index): each step and layer runs torch.cat((past_key, key), dim=1) "
    "and the same for value, a new tensor of the whole cache (read and write: 2 passes), then flash-attn reads it "
    "(1 pass). Per GB of added mean-context cache (7B 0.524 MB a token, 14B 0.819 MB; mean context 1,024 -> 4,096 "
    "from the 2,048 to the 8,192 column: +1.61 / +2.52 GB) the README's steps grow 2.05 ms (7B BF16), 3.66 (7B "
    "Int4), 3.89 (14B BF16), 4.29 (14B Int4): 2.9 / 5.2 / 5.5 / 6.1 passes at 1.42 TB/s. Three passes fit only 7B "
    "BF16, and the Int4 / BF16 pair of one model reads the same 16-bit cache (AutoGPTQ runs fp16 activations), so "
    "bytes alone do not size it; the engine now counts the 3 passes (serving_host.EAGER_KV_CACHE_PASSES, cls45d, "
    "which moves the GPU-bound Qwen-72B rows), but here that GPU work stays under the host floor (7B BF16 at 8k: "
    "15.4 GB of weights and 6.4 GB of cache passes, 15 ms of a 27.7 ms step) unless the loop waits on the GPU "
    "each token, so these rows do not move. The row's own setting is ambiguous too: the README @235aa8f7 under the table says 'the setting "
    "of profiling is encoding 2048 tokens and generating 8192 new tokens ... averaged over the encoded and "
    "generated tokens', its memory table 'generating 8192 tokens (with single token as context)'; read as the "
    "speed sentence states it (10,240 tokens counted, context 2,048 -> 10,240) the 8,192 column's step is 1.25 / "
    "speed (7B Int4 32.4 ms, BF16 34.6 ms) instead of 25.9 / 27.7, and the engine's 21.7 ms floor is further out. "
    "Not added: a context term fitted on these four rows would have no held-out row. "
    "decode46, one lead sized, not closing: the rows' torch 2.0.1 has no vectorized torch.cat for any dtype "
    "(CatArrayBatchedCopy; the 16-byte path, pytorch#102815, June 2023, came later and is 32 / 64-bit only; 8-byte "
    "loads for 2-byte dtypes only from pytorch#150233, 2025, whose own bf16 benchmark runs 1.66x faster after): at "
    "1.66x the cat's 2 passes cost 3.3, 4.3 pass-equivalents (3.0 ms a GB) against the 5.2 / 5.5 / 6.1 needed, "
    "while 7B BF16 needs 2.9; the Int4 / BF16 split of one cache stays unexplained."
)


_DECODE48_QWEN1 = (  # decode48, lead (3) of its brief checked in Qwen-1's own code
    " decode48: Qwen-1's modeling_qwen.py (zhangningboo/Qwen-7B @1ff20863, the HF file's FlashSelfAttention."
    "forward) runs flash-attn at batch 1 with no sync (flash_attn_func, or flash_attn_unpadded_func on "
    "torch.arange cu_seqlens); unpad_input's nonzero "
    "and .max().item() run only at batch_size > 1 with a mask, so no per-layer sync makes host and GPU add here; "
    "the context growth stays unsized (test_outside_eager_sync_audit_stop48.py)."
)


@pytest.mark.django_db
@pytest.mark.parametrize(
    "model",
    [
        pytest.param(
            "7b",
            marks=pytest.mark.xfail(
                strict=True,
                reason=_QWEN8K_REASON.format(
                    model="7B",
                    published=38.61,
                    ours="46.17 (+19.6%) -> 53.15 (+37.7%) at fix47h -> 46.64 at hfeager (flash-attn's Triton "
                    "rotary priced, 2 launches a layer at 62 us)",
                    gap="+20.8%",
                    unstated="48.48, +25.6%",
                )
                + _DECODE48_QWEN1,
            ),
        ),
        pytest.param(
            "14b",
            marks=pytest.mark.xfail(
                strict=True,
                reason=_QWEN8K_REASON.format(
                    model="14B",
                    published=27.33,
                    ours="37.23 (+36.2%) -> 42.73 (+56.3%) at fix47h -> 37.47 at hfeager (flash-attn's Triton "
                    "rotary priced, 2 launches a layer at 62 us)",
                    gap="+37.1%",
                    unstated="38.98, +42.6%",
                )
                + _DECODE48_QWEN1,
            ),
        ),
    ],
)
def test_qwen_int4_generating_8192_on_one_a100(bundled_catalog, model):
    published, _, ours = _QWEN8K[model]
    speed = _speed(QWEN_MODELS[model], "int4", 1, 8193, 8192)  # host47b: stated as run
    assert speed == pytest.approx(ours, rel=0.01)  # the figure the reason quotes
    assert speed == pytest.approx(published, rel=0.15)


# --- 6. [QWEN8K] the same rows anchored on their BF16 row: the kernel's share alone -------------------------------
# Published Int4 over BF16 at 8,192: 7B 38.61 / 36.14 = 1.068, 14B 27.33 / 24.87 = 1.099; the engine, exllama
# stated: 1.0963 for both (host-bound, the floor x 0.912). Estimates 36.14 x 1.0963 = 39.62 (+2.6%), 24.87 x 1.0963
# = 27.27 (-0.2%). (The 2048 column gives 44.87 vs 50.09, -10.4%, and 36.05 vs 38.72, -6.9%: inside too.)
# host47b: stated with the Int4 row on auto_gptq (31 us) and the BF16 row on transformers (16.99 us) the engine's ratio
# was 0.668 at 7B and 0.961 at 14B, 7B a strict xfail.
# Was a strict xfail [7b]: "published 1.068 (38.61 / 36.14); engine ratio 0.668, estimate 24.13 (-37.5%)". Now 1.0963,
# estimate 39.62 (+2.6%), because fix47h states both rows on one harness (transformers; host47b's auto_gptq cause for
# the Int4 row is withdrawn, aud47h) and the README's layer (qwen1_unfused_norm, 37): both host-bound, the Int4 step
# the BF16 one x exllama's 0.912. [14b]: 0.961 (-12.5%) -> 1.1031, estimate 27.43 (+0.4%; the 14B BF16 step at 8,192
# is partly the GPU's), passing.
# decode48b: [14b] 1.1031 -> 1.2137, estimate 30.18 (+10.4%): the BF16 step at 8,192, partly the GPU's, takes the
# cat's 2 copy passes at 2.057 each (the Int4 step stays the host floor x 0.912)
# hfeager: [14b] 1.2137 -> 1.1338, estimate 28.20 (+3.2%): with flash-attn's 2 Triton rotary launches a layer priced
# (62 us each, triton-lang/triton PR #3503) the 14B BF16 floor (29.26 ms) again binds over more of its GPU work; [7b]
# unchanged (both steps host-bound, the ratio exllama's alone)
_QWEN8K_RATIO = {"7b": (1.0963, "39.62", "+2.6%"), "14b": (1.1338, "28.20", "+3.2%")}


@pytest.mark.django_db
@pytest.mark.parametrize("model", list(_QWEN8K))
def test_qwen_int4_over_bf16_at_8192_keeps_the_exllama_step_ratio(bundled_catalog, model):
    published, bf16, _ = _QWEN8K[model]
    ratio = _speed(QWEN_MODELS[model], "int4", 1, 8193, 8192) / _speed(
        QWEN_MODELS[model], "none", 1, 8193, 8192
    )
    assert ratio == pytest.approx(_QWEN8K_RATIO[model][0], abs=0.001)  # the figure the reason quotes
    assert bf16 * ratio == pytest.approx(published, rel=0.15)
