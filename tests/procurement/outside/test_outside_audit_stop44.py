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
_COUNT = (
    "EXPLAINED (was UNEXPLAINED at stop 44; relabelled by fixd45 to agree with the optimum batch-4 rows of "
    "test_outside_quant_decode_audit_stop44.py, same mechanism): [OPTGPTQ] Llama-2-13B on one A100-SXM4-80GB, batch "
    "1, transformers generate: published {published} tokens/s, ours {ours} ({gap}): hf_eager's host floor (40 x 51 + "
    "30 = 2,070 kernels x 31 us = 64.2 ms{scaled}) against the run's {ms} ms a token. (a) Mechanism: host dispatch; "
    "the run's fp16 step is the eager loop's host time, not GPU work (it does not move from 1 to 4 streams, 36.96 -> "
    "37.89 ms, where 26 GB of fp16 weights take about 17 ms on the card): 17.9 us a kernel on the counted 2,070, "
    "against the 31 us the engine prices (calibrated on fal's eager diffusers UNet, torch 2.1; published range 31-46 "
    "us). (b) Proof from published rows that no per-kernel rate of the stated spec meets both: AutoGPTQ's README "
    "llama-7b fp16 (1xA100-40G, batch 1, transformers generate; test_outside_audit_stop43d.py) decodes 32 layers of "
    "the same Llama layer code at 53.0 ms a token, host-bound, where this table's 40 layers take 36.96 ms: 31.9 "
    "against 17.9 us a kernel, hosts 1.8x apart. This run's transformers, 4.32 (optimum @3ffebf99: AutoGPTQ 0.4.2, "
    "PyTorch 2.0.1, transformers 4.32), may issue another count than the 51 read from 4.30.2; 4.32's layer is not "
    "recounted. (c) A spec would need the host's eager dispatch time (its CPU and PyTorch release); no field states "
    "it. The ratio between the two rows (0.912, that 2023 stack's: AutoGPTQ 0.7.0 / PyTorch 2.2 measured 1.041 at "
    "optimum @4e987762) is what acc44 takes from this table, not the absolute time."
)


@pytest.mark.django_db
@pytest.mark.xfail(
    strict=True,
    reason=_COUNT.format(published="27.06", ours="15.58", gap="-42.4%", scaled="", ms="36.958"),
)
def test_optimum_gptq_benchmark_fp16_row(bundled_catalog):
    speed = _speed("none")
    assert speed == pytest.approx(1 / ((40 * 51 + 30) * 31e-6), rel=0.002)  # 15.58, host-bound
    assert speed == pytest.approx(27.058, rel=0.15)


@pytest.mark.django_db
@pytest.mark.xfail(
    strict=True,
    reason=_COUNT.format(
        published="29.66", ours="17.08", gap="-42.4%", scaled=" x 0.912, exllama stated: 58.5 ms", ms="33.711"
    ),
)
def test_optimum_gptq_benchmark_exllama_row(bundled_catalog):
    speed = _speed("int4", "exllama")
    assert speed == pytest.approx(1 / ((40 * 51 + 30) * 31e-6 * 33.711 / 36.958), rel=0.002)  # 17.08
    assert speed == pytest.approx(29.663, rel=0.15)


@pytest.mark.django_db
def test_the_two_rows_keep_the_published_ratio(bundled_catalog):
    """The fit row of QUANT_KERNEL_STEP_RATIO, reproduced through the whole engine: fp16 over exllama speed =
    36.958 / 33.711 = 1.0963 (the engine's host-bound steps carry it exactly)."""
    assert _speed("int4", "exllama") / _speed("none") == pytest.approx(36.958 / 33.711, rel=0.001)
