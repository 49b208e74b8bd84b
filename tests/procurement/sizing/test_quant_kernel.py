"""acc44: the library that runs an eager loop's quantized linears (inference.quant_kernel; serving_host.py).

Source of the one number: huggingface/optimum @096386299309ec9c4c737c9e5ce260008c48fad7 tests/benchmark/README.md,
"GPTQ benchmark", Llama-2-13B-chat on one A100-SXM4-80GB, transformers generate, prompt 512, 512 new tokens,
"Batch size = 1" table: fp16 "36.958" ms a token, GPTQ 4-bit group 128 "exllama" "33.711", "autogptq-cuda-old"
"46.44"; "Batch size = 2": fp16 "37.35", exllama "37.25". exllama's one-stream step is 33.711 / 36.958 = 0.912 of
fp16's; at two streams 0.997 (nothing claimed there)."""

from __future__ import annotations

import numpy as np
import pytest

from procurement.sizing import WorkloadSpecError, parse_workload_spec, serving_host
from procurement.sizing.documents import spec_from_knobs
from procurement.sizing.throughput import inference_throughput

EXLLAMA_RATIO = 33.711 / 36.958  # optimum README, batch 1 (module docstring)


def _spec(quant_kernel=None, quantization="int4", concurrency=1, engine="hf_eager"):
    block = {"concurrency": concurrency, "context_len": 2049, "output_tokens": 2048, "engine": engine}
    if quant_kernel:
        block["quant_kernel"] = quant_kernel
    model = {"preset": "llama-2-7b", "eager_layer": "qwen1"}
    return parse_workload_spec(
        {"task": "inference", "model": model, "weight_quantization": quantization, "inference": block}
    )


def _step(spec):
    rows = inference_throughput(spec, bandwidth_gbps=2039.0, peak_tflops=312.0, generation=80)
    return float(np.asarray(rows["decode_step_seconds"]))


def test_the_ratio_is_the_published_one():
    assert serving_host.QUANT_KERNEL_STEP_RATIO["exllama"] == pytest.approx(0.9121, abs=1e-4)
    assert serving_host.QUANT_KERNEL_STEP_RATIO["exllama"] == EXLLAMA_RATIO


def test_unstated_keeps_the_bf16_host_cost():
    assert _spec().inference.quant_kernel == "unstated"
    assert serving_host.host_seconds_per_token(_spec()) == pytest.approx((32 * 23 + 30) * 31e-6)
    assert "quant_kernel" not in serving_host.text(_spec())


def test_exllama_scales_the_host_floor_of_one_stream():
    # Qwen-7B's count: (32 x 23 + 30) x 31 us = 23.75 ms; x 0.912 = 21.66 ms, still above the GPU's work
    exllama = _spec("exllama")
    assert serving_host.host_seconds_per_token(exllama) == pytest.approx(
        (32 * 23 + 30) * 31e-6 * EXLLAMA_RATIO
    )
    assert _step(exllama) == pytest.approx((32 * 23 + 30) * 31e-6 * EXLLAMA_RATIO)
    text = serving_host.text(exllama)
    assert "0.912 of the fp16 loop's" in text and "optimum" in text


def test_above_one_stream_exllama_is_priced_as_the_fp16_loop():
    # batch 2 in the same table: exllama 37.25 against fp16 37.35 ms, 0.997: no saving is claimed
    busy = _spec("exllama", concurrency=2)
    assert serving_host.host_seconds_per_token(busy) == pytest.approx(
        serving_host.host_seconds_per_token(_spec(concurrency=2))
    )
    assert "at one stream only" in serving_host.text(busy)


@pytest.mark.parametrize(
    ("quantization", "engine"), [("none", "hf_eager"), ("int8", "hf_eager"), ("int4", "compiled")]
)
def test_exllama_needs_4_bit_weights_in_an_eager_loop(quantization, engine):
    with pytest.raises(WorkloadSpecError, match="inference.quant_kernel"):
        _spec("exllama", quantization=quantization, engine=engine)


def test_an_unknown_kernel_is_refused_by_path():
    with pytest.raises(WorkloadSpecError, match="inference.quant_kernel"):
        _spec("marlin")


def test_the_form_states_a_non_default_kernel_only():
    form = {
        "task": "inference",
        "preset": "llama-3.1-8b",
        "concurrency": "1",
        "serving_engine": "hf_eager",
        "quant_kernel": "unstated",
    }
    assert "quant_kernel" not in spec_from_knobs(form)["inference"]
    assert spec_from_knobs(form | {"quant_kernel": "exllama"})["inference"]["quant_kernel"] == "exllama"
