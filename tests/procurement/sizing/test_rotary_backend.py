"""fix51h: inference.rotary_backend, the code that rotates q and k in Qwen-1's flash-attn layers (serving_host).

hfeager priced flash-attn's rotary on q and k as 2 Triton launches a layer (62 us each) in every qwen1 /
qwen1_unfused_norm spec, but only flash-attn >= 2.1.2 runs it in Triton (Dao-AILab/flash-attention 942fcbf0,
"[Rotary] Implement rotary in Triton"). By hand, from the code (serving_host.ROTARY_BACKEND_KERNELS):
  triton (the layer's own, unstated): t.float(), rotary_kernel, type_as on q and k = 6 kernels, 2 through Triton.
  cuda_ext (flash-attn 2.0-2.1.1, or a csrc/rotary build): rotary_emb.apply_rotary once a tensor, 6 kernels, none
    through Triton: every kernel at the harness's 16.99 us.
  eager (flash-attn v1.0.x without csrc/rotary: apply_rotary_emb_func None, Qwen-1's fallback): 8 a tensor, 16,
    10 more than the layer's count, none through Triton.
Llama-2-7B's shape (32 layers) with Qwen-1's layer, as test_serving_host_floor.py states it.
"""

from __future__ import annotations

import pytest

from procurement.sizing import WorkloadSpecError, parse_workload_spec, serving_host
from procurement.sizing.assumptions import HF_GENERATE_KERNEL_HOST_SECONDS
from procurement.sizing.documents import spec_from_knobs

HOST = HF_GENERATE_KERNEL_HOST_SECONDS.value
TRITON = 62e-6  # triton-lang/triton PR #3503, many-argument launch (serving_host.TRITON_LAUNCH_HOST_SECONDS)


def _spec(eager_layer="qwen1_unfused_norm", engine="hf_eager", **inference):
    block = {"concurrency": 1, "context_len": 2049, "output_tokens": 2048} | inference
    if engine:
        block["engine"] = engine
    model = {"preset": "llama-2-7b", "eager_layer": eager_layer}
    return parse_workload_spec({"task": "inference", "model": model, "inference": block})


def test_it_keeps_the_layers_triton_rotary_unstated_or_stated():
    unstated, stated = _spec(), _spec(rotary_backend="triton")
    assert serving_host.rotary_backend(unstated) == "triton"
    for spec in (unstated, stated):
        assert serving_host.kernels_per_layer(spec) == 37.0
        assert serving_host.triton_launches_per_layer(spec) == 2.0
        # (32 x 35 + 30) x 16.99 us + 64 x 62 us (hfeager's count, unchanged)
        assert serving_host.host_seconds_per_token(spec) == pytest.approx((32 * 35 + 30) * HOST + 64 * TRITON)


def test_it_prices_the_cuda_extension_rotary_at_the_harness_rate():
    spec = _spec(rotary_backend="cuda_ext")
    assert serving_host.kernels_per_layer(spec) == 37.0
    assert serving_host.triton_launches_per_layer(spec) == 0.0
    # (32 x 37 + 30) x 16.99 us = 20.63 ms (48.48 tokens/s: the Qwen-7B figure before hfeager)
    assert serving_host.host_seconds_per_token(spec) == pytest.approx((32 * 37 + 30) * HOST)
    assert "CUDA extension (inference.rotary_backend cuda_ext" in serving_host.text(spec)
    assert "Triton's Python launcher" not in serving_host.text(spec)


def test_it_counts_qwen1s_eager_rotary_for_a_flash_attn_v1_run():
    # flash-attn v1 without its csrc builds: eager norms (qwen1_unfused_norm) + eager rotary = 37 + 10 = 47
    v1 = _spec(rotary_backend="eager")
    assert serving_host.kernels_per_layer(v1) == 47.0
    assert serving_host.triton_launches_per_layer(v1) == 0.0
    assert serving_host.host_seconds_per_token(v1) == pytest.approx((32 * 47 + 30) * HOST)
    assert "47 kernels a layer x 32 layers" in serving_host.text(v1)
    # the fused-norm layer with an eager rotary: 23 + 10 = 33
    assert serving_host.kernels_per_layer(_spec("qwen1", rotary_backend="eager")) == 33.0


def test_it_accepts_eager_where_the_layer_rotates_eagerly_and_changes_nothing():
    for layer in ("qwen1_no_flash", "llama"):
        assert serving_host.host_seconds_per_token(
            _spec(layer, rotary_backend="eager")
        ) == serving_host.host_seconds_per_token(_spec(layer))


@pytest.mark.parametrize(
    ("layer", "backend"), [("qwen1_no_flash", "triton"), ("qwen1_no_flash", "cuda_ext"), ("llama", "triton")]
)
def test_it_refuses_flash_attns_rotary_in_a_layer_that_does_not_call_it(layer, backend):
    with pytest.raises(WorkloadSpecError, match="inference.rotary_backend") as error:
        _spec(layer, rotary_backend=backend)
    assert f"model.eager_layer {layer}" in str(error.value)


def test_it_refuses_the_field_outside_an_eager_loop_and_an_unknown_value():
    with pytest.raises(WorkloadSpecError, match="inference.rotary_backend"):
        _spec(engine=None, rotary_backend="eager")
    with pytest.raises(WorkloadSpecError, match="inference.rotary_backend"):
        _spec(rotary_backend="cuda")


def test_the_form_offers_it_and_states_a_non_default_value_only():
    from procurement.views.sizing import KNOB_DEFAULTS, form_fields

    field = next(f for f in form_fields(KNOB_DEFAULTS, {}) if f["name"] == "rotary_backend")
    assert tuple(field["choices"]) == ("unstated", "triton", "cuda_ext", "eager")
    for literal in ("True", "False", "None"):
        assert literal not in field["hint"]
    form = {"task": "inference", "preset": "llama-2-7b", "serving_engine": "hf_eager", "eager_layer": "qwen1"}
    assert "rotary_backend" not in spec_from_knobs(form | {"rotary_backend": "unstated"})["inference"]
    assert spec_from_knobs(form | {"rotary_backend": "cuda_ext"})["inference"]["rotary_backend"] == "cuda_ext"
