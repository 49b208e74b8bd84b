"""hfdec43: the host floor of an eager transformers decode loop (inference.engine hf_eager; serving_host.py).

By hand, Qwen-1's decoder layer in decode (modeling_qwen.py with flash-attn's fused rms_norm and rotary): 18
non-GEMM kernels + 5 linears = 23; the loop 30. Qwen-7B (32 layers): (32 x 23 + 30) x 31 us = 23.75 ms a token
(42.1 tokens/s) against 10.3 ms of GPU work on an A100; the default (compiled) keeps the GPU's step.

fix43d: transformers 4.30's LlamaDecoderLayer (model.eager_layer llama, the default): 44 non-GEMM kernels (norms
2 x 8, cos / sin casts 2, rotary 12, KV cat 2, matmul-softmax attention 8, residuals 2, SiLU and gate 2) + 7
linears = 51; Llama-2-7B (32 x 51 + 30) x 31 us = 51.5 ms a token (19.4 tokens/s)."""

from __future__ import annotations

import numpy as np
import pytest

from procurement.sizing import WorkloadSpecError, parse_workload_spec, serving_host
from procurement.sizing.assumptions import HF_GENERATE_KERNEL_HOST_SECONDS
from procurement.sizing.documents import spec_from_knobs
from procurement.sizing.throughput import inference_throughput

# host47b: the default harness (inference.generate_harness transformers), 16.99 us a kernel (was 31 us for every loop)
HOST = HF_GENERATE_KERNEL_HOST_SECONDS.value
# hfeager: Qwen-1's flash-attn rotary is a Triton kernel (flash-attn >= 2.1.2), 2 a layer, launched through Triton's
# Python launcher at 62 us (triton-lang/triton PR #3503, many-argument kernels; serving_host.TRITON_LAUNCH_HOST_SECONDS)
TRITON = 62e-6


def _spec(engine=None, eager_layer=None, **inference):
    block = {"concurrency": 1, "context_len": 2049, "output_tokens": 2048} | inference
    if engine:
        block["engine"] = engine
    model = {"preset": "llama-2-7b"} | ({"eager_layer": eager_layer} if eager_layer else {})
    return parse_workload_spec({"task": "inference", "model": model, "inference": block})


def _rows(spec):
    return inference_throughput(spec, bandwidth_gbps=2039.0, peak_tflops=312.0, generation=80)


def test_the_host_time_a_token_is_counted_from_the_layer_and_the_loop():
    qwen1 = _spec("hf_eager", "qwen1")
    assert serving_host.kernels_per_layer(qwen1) == 23.0
    # hfeager: (32 x 21 + 30) x 16.99 us + 32 x 2 x 62 us = 11.927 + 3.968 = 15.895 ms (was (32 x 23 + 30) x 16.99 us
    # = 13.014 ms: the two Triton rotary launches a layer priced as CUDA kernels)
    assert serving_host.triton_launches_per_layer(qwen1) == 2.0
    assert (32 * 21 + 30) * HOST + 64 * TRITON == pytest.approx(15.895e-3, rel=1e-3)
    assert serving_host.host_seconds_per_token(qwen1) == pytest.approx((32 * 21 + 30) * HOST + 64 * TRITON)
    assert "2 of them a layer (flash-attn's rotary" in serving_host.text(qwen1)
    assert "23 kernels a layer x 32 layers" in serving_host.text(qwen1)
    assert "Qwen-1's layer" in serving_host.text(qwen1)


def test_the_qwen1_layers_without_the_fused_norm_or_flash_attn_are_counted():
    # fix47h: counted from zhangningboo/Qwen-7B @e7a368b0 modeling_qwen.py (serving_host.EAGER_LAYER_KERNELS):
    # flash-attn 2 without csrc/layer_norm: the two RMSNorms eager, 8 kernels each where the fused one is 1: 23 + 14
    unfused = _spec("hf_eager", "qwen1_unfused_norm")
    assert serving_host.kernels_per_layer(unfused) == 37.0
    # hfeager: 35 kernels at 16.99 us and 2 Triton launches at 62 us a layer (was 37 x 16.99 us)
    assert serving_host.host_seconds_per_token(unfused) == pytest.approx((32 * 35 + 30) * HOST + 64 * TRITON)
    assert "37 kernels" in serving_host.text(unfused) and "csrc/layer_norm" in serving_host.text(unfused)
    # no flash-attn: norms 16, rotary 16, KV cats 2, SDPA 1, contiguous 1, silu / mul 2, residuals 2 + 5 linears
    no_flash = _spec("hf_eager", "qwen1_no_flash")
    assert serving_host.kernels_per_layer(no_flash) == 45.0
    # without flash-attn the rotary is eager PyTorch: no Triton launch, every kernel at the harness's rate
    assert serving_host.triton_launches_per_layer(no_flash) == 0.0
    assert serving_host.host_seconds_per_token(no_flash) == pytest.approx((32 * 45 + 30) * HOST)
    assert "without flash-attn, 45 kernels" in serving_host.text(no_flash)
    # Qwen-1 keeps one KV head a query head: no repeat_kv in any of its layers
    assert serving_host.kv_cache_passes(unfused) == serving_host.kv_cache_passes(no_flash) == 3.0


def test_the_form_offers_the_qwen1_layers():
    from procurement.views.sizing import KNOB_DEFAULTS, form_fields

    field = next(f for f in form_fields(KNOB_DEFAULTS, {}) if f["name"] == "eager_layer")
    assert {"qwen1_unfused_norm", "qwen1_no_flash"} <= set(field["choices"])
    assert "qwen1_unfused_norm (37)" in field["hint"] and "qwen1_no_flash (45)" in field["hint"]


def test_a_model_without_a_stated_layer_runs_transformers_llama_layer():
    llama = _spec("hf_eager")
    assert llama.model.eager_layer == "llama"
    assert serving_host.kernels_per_layer(llama) == 51.0
    assert serving_host.host_seconds_per_token(llama) == pytest.approx((32 * 51 + 30) * HOST)
    # transformers' Llama layer launches no Triton kernel
    assert serving_host.triton_launches_per_layer(llama) == 0.0
    assert "51 kernels a layer x 32 layers" in serving_host.text(llama)
    assert "transformers 4.30's Llama decoder layer" in serving_host.text(llama)


def test_an_unknown_eager_layer_is_refused_by_path():
    with pytest.raises(WorkloadSpecError, match="model.eager_layer"):
        _spec("hf_eager", "gpt2")


def test_the_default_compiled_engine_pays_no_floor_and_keeps_its_step():
    assert _spec().inference.engine == "compiled"
    assert serving_host.host_seconds_per_token(_spec()) == 0.0
    assert serving_host.text(_spec()) == ""
    assert (
        float(np.asarray(_rows(_spec())["decode_step_seconds"])) < 0.5 * (32 * 51 + 30) * HOST
    )  # host47b: llama-2-7b's own count at 17 us


def test_the_step_is_the_larger_of_the_gpu_and_the_host_not_their_sum():
    eager = float(np.asarray(_rows(_spec("hf_eager", "qwen1"))["decode_step_seconds"]))
    assert eager == pytest.approx((32 * 21 + 30) * HOST + 64 * TRITON)  # hfeager: was (32 x 23 + 30) x HOST
    # many streams: the GPU's step outlasts the host's, which then costs nothing; the eager GPU step is the
    # compiled one plus torch.cat's copy of the cache (cls45d: one read and one write more than the compiled
    # engine's single read, serving_host.EAGER_KV_CACHE_PASSES)
    busy = _rows(_spec("hf_eager", concurrency=256))
    busy_compiled = _rows(_spec(concurrency=256))
    attention = float(np.asarray(busy_compiled["decode_attention_seconds"]))
    # decode48b: on this bf16 cache the cat's two copy passes cost EAGER_2BYTE_COPY_PASS_RATIO (1.944; fix48x, was the inverted 2.057) each
    passes = serving_host.kv_cache_pass_seconds_equivalent(_spec("hf_eager", concurrency=256))
    assert passes == pytest.approx(3.0 + 2.0 * (2.0 * 2.668288 / 2.744544 - 1.0))
    assert float(np.asarray(busy["decode_attention_seconds"])) == pytest.approx(passes * attention)
    assert float(np.asarray(busy["decode_step_seconds"])) == pytest.approx(
        float(np.asarray(busy_compiled["decode_step_seconds"])) + (passes - 1.0) * attention
    )
    assert float(np.asarray(busy["decode_step_seconds"])) > serving_host.host_seconds_per_token(
        _spec("hf_eager", concurrency=256)
    )


def test_an_unknown_engine_is_refused_by_path():
    with pytest.raises(WorkloadSpecError, match="inference.engine"):
        _spec("tgi")


def test_the_form_states_a_non_default_engine_only():
    form = {"task": "inference", "preset": "llama-3.1-8b", "concurrency": "1", "serving_engine": "compiled"}
    assert "engine" not in spec_from_knobs(form)["inference"]
    assert spec_from_knobs(form | {"serving_engine": "hf_eager"})["inference"]["engine"] == "hf_eager"
    assert "inference" not in spec_from_knobs(form | {"task": "lora", "serving_engine": "hf_eager"})
