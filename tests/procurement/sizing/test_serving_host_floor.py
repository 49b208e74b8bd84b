"""hfdec43: the host floor of an eager transformers decode loop (inference.engine hf_eager; serving_host.py).

By hand, Qwen-1's decoder layer in decode (modeling_qwen.py with flash-attn's fused rms_norm and rotary): 18
non-GEMM kernels + 5 linears = 23; the loop 30. Qwen-7B (32 layers): (32 x 23 + 30) x 31 us = 23.75 ms a token
(42.1 tokens/s) against 10.3 ms of GPU work on an A100; the default (compiled) keeps the GPU's step."""

from __future__ import annotations

import numpy as np
import pytest

from procurement.sizing import WorkloadSpecError, parse_workload_spec, serving_host
from procurement.sizing.documents import spec_from_knobs
from procurement.sizing.throughput import inference_throughput


def _spec(engine=None, **inference):
    block = {"concurrency": 1, "context_len": 2049, "output_tokens": 2048} | inference
    if engine:
        block["engine"] = engine
    return parse_workload_spec({"task": "inference", "model": {"preset": "llama-2-7b"}, "inference": block})


def _rows(spec):
    return inference_throughput(spec, bandwidth_gbps=2039.0, peak_tflops=312.0, generation=80)


def test_the_host_time_a_token_is_counted_from_the_layer_and_the_loop():
    assert serving_host.kernels_per_layer(_spec("hf_eager")) == 23.0
    assert serving_host.host_seconds_per_token(_spec("hf_eager")) == pytest.approx((32 * 23 + 30) * 31e-6)
    assert "23 kernels a layer x 32 layers" in serving_host.text(_spec("hf_eager"))


def test_the_default_compiled_engine_pays_no_floor_and_keeps_its_step():
    assert _spec().inference.engine == "compiled"
    assert serving_host.host_seconds_per_token(_spec()) == 0.0
    assert serving_host.text(_spec()) == ""
    assert float(np.asarray(_rows(_spec())["decode_step_seconds"])) < 0.5 * (32 * 23 + 30) * 31e-6


def test_the_step_is_the_larger_of_the_gpu_and_the_host_not_their_sum():
    eager = float(np.asarray(_rows(_spec("hf_eager"))["decode_step_seconds"]))
    assert eager == pytest.approx((32 * 23 + 30) * 31e-6)
    # many streams: the GPU's step outlasts the host's, which then costs nothing
    busy = _spec("hf_eager", concurrency=256)
    busy_compiled = _spec(concurrency=256)
    assert float(np.asarray(_rows(busy)["decode_step_seconds"])) == pytest.approx(
        float(np.asarray(_rows(busy_compiled)["decode_step_seconds"]))
    )


def test_an_unknown_engine_is_refused_by_path():
    with pytest.raises(WorkloadSpecError, match="inference.engine"):
        _spec("tgi")


def test_the_form_states_a_non_default_engine_only():
    form = {"task": "inference", "preset": "llama-3.1-8b", "concurrency": "1", "serving_engine": "compiled"}
    assert "engine" not in spec_from_knobs(form)["inference"]
    assert spec_from_knobs(form | {"serving_engine": "hf_eager"})["inference"]["engine"] == "hf_eager"
    assert "inference" not in spec_from_knobs(form | {"task": "lora", "serving_engine": "hf_eager"})
