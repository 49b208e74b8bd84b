"""Issue 26, stop 44 (acc44): the rows of the source inference.quant_kernel's one number comes from, as outside
cases of the hf_eager engine (procurement/sizing/serving_host.py). Tolerance: the issue's 15% on speed.

Source: [OPTGPTQ] huggingface/optimum @096386299309ec9c4c737c9e5ce260008c48fad7 tests/benchmark/README.md, "GPTQ
benchmark", "single NVIDIA A100-SXM4-80GB GPU. We use a prompt length of 512, and generate exactly 512 new
tokens"; Llama-2-13B-chat (daryl149/llama-2-13b-chat-hf; TheBloke/Llama-2-13B-chat-GPTQ 4-bit group 128), batch 1:
fp16 "36.958" ms a token ("27.058" tok/s), exllama "33.711" ("29.663"), autogptq-cuda-old "46.44" ("21.53").
transformers generate in eager PyTorch (benchmark_gptq.py), mid-2023. The run's stack: the same rows at optimum
@3ffebf994fbd579ab9acb589edc401fa66413928 tests/benchmark/README.md state "AutoGPTQ 0.4.2, PyTorch 2.0.1, bitsandbytes
0.41.1, transformers 4.32" (fix44q). The same benchmark on AutoGPTQ 0.7.0 / PyTorch 2.2.0 / transformers 4.37.2
(@4e987762cdd33c237a63538c181b1ccfa4d7648a) has exllama at 31.68 against fp16 30.43 ms, 1.041: the 0.912 is the 2023
stack's.
"""

from __future__ import annotations

import copy

import pytest

from procurement.api.sizing import size_spec_document

A100 = "a100-sxm4-80gb"


def _speed(quantization: str, quant_kernel: str | None = None) -> float:
    inference = {"concurrency": 1, "context_len": 1024, "output_tokens": 512, "engine": "hf_eager"}
    # qwen2cnt: the run's transformers (4.32, optimum @3ffebf99) and its only attention (eager): 47 kernels a layer
    inference |= {"attn_implementation": "eager", "transformers_release": "4.32.0"}
    if quant_kernel:
        inference["quant_kernel"] = quant_kernel
    spec = {
        "name": f"acc44-llama-2-13b-{quantization}",
        "task": "inference",
        "model": {"preset": "llama-2-13b"},
        "weight_quantization": quantization,
        "inference": inference,
    }
    report = size_spec_document(copy.deepcopy(spec), [A100], calibrate=False)
    assert report["candidates"][0]["verdict"] in {"fits", "tight", "oversized"}
    return report["throughput"]["decode_tokens_per_second_per_stream"]


# By hand: Llama-2-13B (40 layers) in transformers' Llama layer (51 kernels) + 30 of the loop = 2,070 kernels x
# 31 us = 64.17 ms a token (15.58 tokens/s), host-bound (26 GB of fp16 weights at the A100's ~1.4-1.6 TB/s is
# ~17 ms). The published 36.958 ms is 17.9 us a kernel on that count.
# cls45f: EXPLAINED from [OPTGPTQ]'s own rows. The README's batch sweep (same file, "Batch size = 2 / 4") gives
# fp16 36.958 / 37.35 / 37.89 ms a token at batch 1 / 2 / 4 and the exllama rows 33.711 / 37.25: the fp16 and the
# 4-bit engines read 26 GB against ~7 GB of weights a token (3.6x) yet run 9% apart at batch 1, and fp16 does not
# move from 1 to 4 streams, so the step is neither weight reads (26 GB at 2.0 TB/s = 13 ms) nor any GPU work that
# grows with bytes or rows: it is the host's issue time of one fixed kernel sequence. The run's transformers 4.32
# (optimum @3ffebf99), recounted from the 4.32.0 wheel's models/llama/modeling_llama.py against 4.30.2's: the
# rotary cos / sin caches are built in the load dtype (_set_cos_sin_cache(..., dtype=torch.get_default_dtype());
# benchmark_gptq.py loads with torch_dtype=torch.float16, which from_pretrained makes the default dtype,
# modeling_utils.py _set_default_torch_dtype), so their .to(dtype=x.dtype) issues nothing (-2), and the
# torch.tensor(finfo.min) / torch.max clamp after the mask is gone (-2); repeat_kv returns at n_rep == 1; RMSNorm and the MLP issue the same kernels: 47 a layer,
# 40 x 47 + 30 = 1,910 a token, 19.3 us a kernel at 36.958 ms (hf_eager at 31 us on that count: 59.2 ms, -37.6%).
# [AGPTQ] (test_outside_audit_stop43d.py, passing at 31 us) ran 4.30's 51-kernel layer on an A100-40G, host-bound
# too (13.5 GB in 53.0 ms): 53.0 ms / 1,662 = 31.9 us a kernel. Two published A100 hosts issue transformers' eager
# kernels 1.65x apart: a constant lands this row within 15% only at 16.8-22.8 us a kernel and [AGPTQ]'s only at
# 27.7-37.5 us (no overlap). hf_eager's 31 us is [AGPTQ]'s host; this run's is 0.62 of it.
# fixg45 (aud45g's note): held out, [OPTGPTQ]'s fp16 batch 8 / 16 rows (47.37 / 69.94 ms; the same README, verified
# at @09638629) are above the run's host time, so they time the GPU: the product's eager GPU step there (host rate set
# to ~0) is 28.59 / 39.17 ms, 1.66 / 1.79x short; at batch 1 / 2 / 4 it is 19.33 / 20.65 / 23.30 ms, under the host.
_COUNT = (
    "EXPLAINED (cls45f, was UNEXPLAINED at stop 44): the host's kernel issue time. The README's own rows prove the "
    "step host-bound (fp16 36.958 / 37.35 / 37.89 ms at batch 1 / 2 / 4; exllama 33.711 at batch 1, 9% under fp16 "
    "though it reads 3.6x fewer weight bytes), so its time is one fixed kernel sequence: transformers 4.32's Llama "
    "layer (47 kernels, recounted from the 4.32.0 wheel: the rotary caches' casts and the finfo.min clamp of 4.30 "
    "are gone) x 40 + 30 = 1,910 kernels in 36.958 ms, 19.3 us a kernel, where [AGPTQ]'s A100-40G host (llama-7b "
    "fp16, 4.30's 51-kernel layer, 53.0 ms, the row hf_eager's 31 us lands, test_outside_audit_stop43d.py) takes "
    "31.9 us: two published hosts 1.65x apart, which no per-kernel constant lands within 15% (this row needs "
    "16.8-22.8 us, [AGPTQ]'s 27.7-37.5). Size: 1,910 x 31 us = 59.2 ms, -37.6% from the host's rate, the other "
    "4.8 points from 4.30's count (2,070 kernels). A spec would need the host's per-kernel launch time (its CPU, "
    "driver and Python), which no field states and no source gives per CPU, and the transformers release (4.32's "
    "47-kernel layer; model.eager_layer has only 4.30's llama count). Scope (fixg45, after aud45g): the host "
    "explanation holds for batch 1-4: with the run's own 17.85 us a kernel on the product's 2,070 the product "
    "lands the fp16 rows at batch 1 / 2 / 4 at +0.0 / +1.1 / +2.5% (the run flat at 36.958-37.89 ms while the "
    "product's GPU step grows 19.3 -> 23.3 ms). The held-out batch 8 / 16 rows (47.37 / 69.94 ms) time the GPU, "
    "where the product's eager GPU step is 28.6 / 39.2 ms, short by 1.66-1.79x: batch 8 is a strict xfail "
    "(-26.2%) and batch 16's pass (+9.0%) is compensation by the 31 us host floor (64.2 ms standing in for GPU "
    "work the engine does not price; test_outside_explanations_audit_stop45g.py). So the eager GPU step that grows "
    "with streams is unexplained; it does not reach these host-bound batch-1 rows. History: "
    "[OPTGPTQ] Llama-2-13B on one A100-SXM4-80GB, batch 1, transformers generate: published {published} tokens/s, "
    "ours {ours} ({gap}): hf_eager's host floor (40 x 51 + 30 = 2,070 kernels x 31 us = 64.2 ms{scaled}) against "
    "the run's {ms} ms a token, 17.9 us a kernel on the same count. The per-kernel host cost differs by host: 31 us "
    "was calibrated on fal's eager diffusers UNet (torch 2.1), the published range was 31-46 us, and this run is "
    "under it; or this run's transformers, 4.32 (optimum @3ffebf99 states AutoGPTQ 0.4.2, PyTorch 2.0.1, "
    "transformers 4.32), issues fewer kernels a layer than the 51 counted from 4.30.2 (4.32's layer not "
    "recounted). Not sized: the spec cannot state the host's CPU or the transformers release. The ratio between "
    "the two rows (0.912, that 2023 stack's: AutoGPTQ 0.7.0 / PyTorch 2.2 measured 1.041 at optimum @4e987762) is "
    "what acc44 takes from this table (the quantization kernel's share), not the absolute time. (Labelled "
    "UNEXPLAINED at stop 44.)"
)


# Was a strict xfail: "EXPLAINED (cls45f): the host's kernel issue time ... published 27.06 tokens/s, ours 15.58
# (-42.4%): hf_eager's host floor (40 x 51 + 30 = 2,070 kernels x 31 us = 64.2 ms)" (_COUNT above). Now 28.43
# (+5.1%) because the default harness (inference.generate_harness transformers: benchmark_gptq.py calls plain
# AutoModelForCausalLM generate) prices a kernel at hf_generate_kernel_host_s, 16.99 us (host47b), and 31 us is
# AutoGPTQ's generate wrapper's host (auto_gptq). Not a held-out row: this row (17.85 us on the count) is one of the
# constant's three fit rows (assumptions.py); the held-out ones are optimum @4e987762 and the Qwen2 page.
# fix47h (aud47h's label check): passing since stop 47's default host rate (fit row): not FIXED (host47b moved 8
# passing cases out), and not evidence for the constant, which was fitted on it (17.85 us; +5.1% here).
@pytest.mark.django_db
# qwen2cnt: 28.43 (+5.1%) -> 26.60 (-1.7%): stated as run (transformers 4.32.0, eager: 40 + 7 = 47 kernels a layer,
# not 4.30's 51) at hf_generate_kernel_host_s refitted on the recounted fit rows, 19.68 us (19.67 us since fixtr:
# the Qwen2.5 fit rows over the model-level rotary's 9 kernels, not 8; 1 / (1,910 x 19.67 us) = 26.62).
def test_optimum_gptq_benchmark_fp16_row(bundled_catalog):
    speed = _speed("none")
    assert speed == pytest.approx(1 / ((40 * 47 + 30) * 19.67e-6), rel=0.002)  # 26.60, host-bound
    assert speed == pytest.approx(27.058, rel=0.15)


# Was a strict xfail: "published 29.66, ours 17.08 (-42.4%; x 0.912, exllama stated: 58.5 ms)" (_COUNT). Now 31.17
# (+5.1%) because of the same default host rate (host47b), 2,070 x 16.99 us x 0.912 = 32.08 ms; the 0.912 is this
# table's own fp16 / exllama ratio (acc44), so the row is not independent of the fp16 fit row.
# fix47h: passing since stop 47's default host rate (fit row: the optimum @3ffebf99 fp16 fit row x the same table's
# 0.912, a fit consequence, not held out); not FIXED (host47b moved 8 passing cases out).
@pytest.mark.django_db
# qwen2cnt: 31.17 (+5.1%) -> 29.17 (-1.7%), the fp16 row's restatement x the same 0.912.
def test_optimum_gptq_benchmark_exllama_row(bundled_catalog):
    speed = _speed("int4", "exllama")
    assert speed == pytest.approx(1 / ((40 * 47 + 30) * 19.67e-6 * 33.711 / 36.958), rel=0.002)  # 29.17
    assert speed == pytest.approx(29.663, rel=0.15)


@pytest.mark.django_db
def test_the_two_rows_keep_the_published_ratio(bundled_catalog):
    """The fit row of QUANT_KERNEL_STEP_RATIO, reproduced through the whole engine: fp16 over exllama speed =
    36.958 / 33.711 = 1.0963 (the engine's host-bound steps carry it exactly)."""
    assert _speed("int4", "exllama") / _speed("none") == pytest.approx(36.958 / 33.711, rel=0.001)
