"""torchao's Float8LinearConfig(pad_inner_dim=True) (spec `fp8_pad_inner_dim`) and the DiT's proj_out left in 16 bits.

Sources (aud51t's fix list; tests/procurement/outside/test_outside_torchao_float8_audit_aud51t.py):
  [AO011]  pytorch/ao tag v0.11.0 torchao/float8/float8_ops.py preprocess_addmm: `if scaled_mm_config.pad_inner_dim:
           a_data = pad_tensor_for_matmul(a_data, dims=1); b_data = pad_tensor_for_matmul(b_data, dims=0)`;
           float8_utils.pad_tensor_for_matmul calls torch.nn.functional.pad whatever the pad.
  [PADND]  PyTorch aten/src/ATen/native/PadNd.cpp constant_pad_nd: no positive pad -> `c_input.clone()`, one copy.
  [DTAO]   sayakpaul/diffusers-torchao training/README.md @7042e930: Float8LinearConfig(pad_inner_dim=True);
           module_filter_fn skips `fqn == "proj_out"` (the top-level output linear) and linears whose dims are
           not multiples of 16 (so the pads are all zero).
"""

from __future__ import annotations

import copy

import pytest

from procurement.sizing import image_model as im
from procurement.sizing.spec import WorkloadSpecError, parse_workload_spec
from tests.procurement.outside.test_outside_image_audit_aud51i import FLUX_FP8


def flux(**changes):
    doc = copy.deepcopy(FLUX_FP8)
    doc.update(changes)
    return parse_workload_spec(doc)


def test_default_is_off_and_counts_as_before():
    """Default false (torchao's own): a linear under full recomputation adds 23 x 2 + 38 = 84 kernels."""
    doc = copy.deepcopy(FLUX_FP8)
    del doc["fp8_pad_inner_dim"]
    spec = parse_workload_spec(doc)
    assert spec.fp8_pad_inner_dim is False
    assert im.torchao_float8_training_kernels(spec) == 496 * 84


@pytest.mark.parametrize(
    ("checkpointing", "per_linear"),
    [
        ("full", (23 + 2) * 2 + (38 + 2 * 2)),  # 92: the forward mm twice, two backward mms, 2 copies each
        ("none", (23 + 2) + (38 + 2 * 2)),  # 67
    ],
)
def test_pad_inner_dim_adds_two_copies_a_float8_mm(checkpointing, per_linear):
    """[AO011] + [PADND]: 1 forward mm (replayed under full recomputation) and 2 backward mms (grad_input,
    grad_weight), each with 2 clones. 19 x 14 + 38 x 6 + 3 - 1 (proj_out) = 496 linears."""
    spec = flux(fp8_pad_inner_dim=True, gradient_checkpointing=checkpointing)
    assert im.torchao_float8_training_kernels(spec) == 496 * per_linear


def test_pad_inner_dim_costs_nothing_compiled():
    """image.fused_kernels (torch.compile): the casts and copies are not eager launches; none are charged."""
    doc = copy.deepcopy(FLUX_FP8)
    doc["image"]["fused_kernels"] = True
    assert im.torchao_float8_training_kernels(parse_workload_spec(doc)) == 0


@pytest.mark.parametrize(
    "changes",
    [
        {"fp8_recipe": "transformer_engine"},  # Transformer Engine has no pad_inner_dim
        {"precision": "bf16", "fp8_recipe": "transformer_engine"},
    ],
)
def test_pad_inner_dim_is_refused_without_torchao(changes):
    doc = copy.deepcopy(FLUX_FP8)
    doc.update(changes)
    with pytest.raises(WorkloadSpecError) as caught:
        parse_workload_spec(doc)
    errors = {error.path: error.message for error in caught.value.errors}
    assert "needs fp8_recipe torchao" in errors["fp8_pad_inner_dim"]


def test_pad_inner_dim_must_be_a_flag():
    doc = copy.deepcopy(FLUX_FP8)
    doc["fp8_pad_inner_dim"] = "sometimes"
    with pytest.raises(WorkloadSpecError) as caught:
        parse_workload_spec(doc)
    assert "fp8_pad_inner_dim" in {error.path for error in caught.value.errors}


def test_proj_out_macs_by_hand_on_a_sibling_dit():
    """Sibling not used by aud51t: SD3 Medium at 1,024 px. Latent 128 (VAE /8), patch 2 -> 64^2 = 4,096 tokens;
    proj_out maps hidden 1,536 to 2 x 2 x 16 = 64 a token: 1,536 x 64 x 4,096 = 402,653,184 MACs."""
    cost = im.network_cost("sd3-medium", 1024, 333)
    assert cost.output_linear_macs == 1_536 * 64 * 4_096 == 402_653_184


def test_frozen_grad_weight_flops_leave_proj_out_out():
    """[DTAO] proj_out stays an nn.Linear: autograd skips its frozen grad_weight. FLUX at 624 px: 39^2 = 1,521
    latent tokens (624 / 8 / 2), proj_out 3,072 x 64 x 1,521 = 299,040,768 MACs; the extra grad_weight FLOPs
    are 2 x (macs - attention_macs - that)."""
    fp8 = flux()
    te = copy.deepcopy(FLUX_FP8)
    del te["fp8_recipe"], te["fp8_pad_inner_dim"]
    cost = im.spec_network_cost(fp8)
    assert cost.output_linear_macs == 3_072 * 64 * 1_521 == 299_040_768
    extra = im.training_flops_per_image(fp8) - im.training_flops_per_image(parse_workload_spec(te))
    assert extra == pytest.approx(2.0 * (cost.macs - cost.attention_macs - 299_040_768), rel=1e-9)
