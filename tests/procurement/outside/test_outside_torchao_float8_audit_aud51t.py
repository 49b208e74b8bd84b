"""Outside audit aud51t of fix51i (torchao Float8Linear eager kernels and frozen grad_weight in DiT training).

Sources (all read at the run's version; none used by another test for these figures):
  [AO011]  pytorch/ao tag v0.11.0 (the release fix51i names; v0.12.0 identical on these paths for tensorwise
           scaling: `git diff v0.11.0 v0.12.0` touches only force_recompute_fp8_weight_in_bwd's removal and a
           rowwise fp16/fp32 output cast): torchao/float8/float8_linear.py (Float8Linear.forward casts the weight
           with _get_weight_scale + _cast_weight_to_float8_t outside the autograd function, then
           matmul_with_hp_or_float8_args.apply; `output = output + self.bias.to(output.dtype)`;
           matmul_with_hp_or_float8_args.backward computes grad_weight = torch.mm(grad_output_fp8.t(),
           input_fp8) with no ctx.needs_input_grad check), float8_utils.py (tensor_to_amax: torch.max(torch.abs(x));
           amax_to_scale: amax.to(float64), torch.clamp(amax, min=EPS), finfo.max / ..., res.to(float32);
           to_fp8_saturated: clamp, to(float8)), float8_tensor.py (_ToFloat8ConstrFunc.forward:
           `tensor.to(torch.float32) * scale`), float8_ops.py (preprocess_addmm: `if
           scaled_mm_config.pad_inner_dim: a_data = pad_tensor_for_matmul(a_data, dims=1); b_data =
           pad_tensor_for_matmul(b_data, dims=0)`; addmm_float8_unwrapped: two reciprocals + torch._scaled_mm),
           float8_utils.pad_tensor_for_matmul (calls torch.nn.functional.pad unconditionally, pad may be 0).
  [PADND]  PyTorch aten/src/ATen/native/PadNd.cpp constant_pad_nd (stored copy id 50755086): "if none of the pads
           are positive ... if (all_pads_non_positive) { return c_input.clone(); }": a zero pad is one copy kernel.
  [DTAO]   sayakpaul/diffusers-torchao training/README.md (7042e930): the recipe the flux-qlora blog's
           --do_fp8_training runs: `convert_to_float8_training(module_being_trained,
           module_filter_fn=module_filter_fn, config=Float8LinearConfig(pad_inner_dim=True))`, proj_out filtered.
  [FLUX-FP8] the blog row aud51i used (H100 SXM, 700 steps in ~20 min = 1.714 s a step), re-judged here only
           through the code count above (no new published figure for it).

No second published torchao-float8 DiT training row (eager or compiled) was found in the time: the torchao
README's training table (Llama3-8B torchtitan, compiled) is already the fit of test_fp8_recipe.py, and the
SimpleTuner / ai-toolkit Flux pages found state memory, not a per-step time under torchao float8.
"""

from __future__ import annotations

import copy

import pytest

from procurement.api.sizing import size_spec_document
from procurement.sizing import image_model as im
from procurement.sizing import parse_workload_spec

from .test_outside_image_audit_aud51i import FLUX_FP8

SPEED = 0.25
H100 = "h100-sxm5-80gb"
KERNEL_S = 31e-6  # eager_kernel_host_s, the engine's own constant (fix51i's test states it)


def _size(spec: dict, gpu: str = H100) -> dict:
    report = size_spec_document(copy.deepcopy(spec), [gpu], calibrate=False)
    return next(c for c in report["candidates"] if c["gpu"] == gpu)


def _spec(doc: dict):
    return parse_workload_spec(copy.deepcopy(doc))


# Kernel counts from [AO011], tensorwise dynamic scaling (Float8LinearConfig's default), CUDA eager.
CAST = 2 + 4 + 4  # abs, max | to(f64), clamp, div, to(f32) | to(f32), mul, clamp, to(float8)
MM = 3  # two scale reciprocals + _scaled_mm
PAD = 2  # [DTAO] pad_inner_dim=True: pad_tensor_for_matmul on a and b, each a clone at a zero pad [PADND]


# ---------------------------------------------------------------- case 1: one cast is 10 kernels


def test_case1_cast_count_matches_torchao_v0110():
    """[AO011] hp_tensor_to_float8_dynamic = tensor_to_scale (abs, max, to(float64), clamp, finfo.max / amax,
    to(float32)) + _ToFloat8ConstrFunc (to(float32), * scale, clamp, to(float8)) = 10. The engine's forward 23 =
    weight cast + input cast + mm + bias add - the 16-bit addmm; backward 38 = grad_output cast + weight made
    column-major + mm, + grad_output cast again + input cast + two .contiguous() + mm, - the 16-bit grad_input mm.
    The weight is not re-cast in backward (tensor_already_casted_to_fp8: forward saved the Float8Tensor). PASS."""
    assert im.TORCHAO_FLOAT8_FORWARD_KERNELS == 2 * CAST + MM + 1 - 1
    assert im.TORCHAO_FLOAT8_BACKWARD_KERNELS == (CAST + 1 + MM) + (CAST + CAST + 2 + MM) - 1


# ---------------------------------------------------------------- case 2: the recipe's pad_inner_dim


def test_case2_flux_fp8_pad_inner_dim_clones_are_counted(bundled_catalog):
    """[DTAO] the run's config is Float8LinearConfig(pad_inner_dim=True). [AO011] preprocess_addmm then calls
    pad_tensor_for_matmul on both operands of every float8 mm; FLUX's dims are all multiples of 16 (3,072, 12,288,
    15,360, 64, 4,096), so the pad is 0 and [PADND] constant_pad_nd returns c_input.clone(): 2 copy kernels an mm.
    Per linear: forward 1 mm (x2 under full recomputation) + backward 2 mms = 4 x 2 = 8 kernels the engine does
    not count (84 -> 92 a linear). 496 x 8 = 3,968 kernels = 0.123 s at 31 us.
    Product 1.407 s vs published 1.714 (-17.9%, within 25%); with the clones 1.530 s (-10.7%). PASS on the
    bar; an under-count the engine's own mechanism should carry (FIX LIST 1)."""
    # fix51t restated (FIX LIST 1 acted on: spec field fp8_pad_inner_dim, which [FLUX-FP8] now states):
    # before, the engine's count left the clones out (84 a linear, 1.407 s) and this case added them by hand;
    # after, the engine counts them (92 a linear, 1.530 s) and the field off gives back the 84 / 1.407 s.
    spec = _spec(FLUX_FP8)
    linears = im.torchao_float8_linears(spec)
    assert linears == 496
    assert im.torchao_float8_training_kernels(spec) == linears * (84 + PAD * (2 + 2))  # 92 a linear
    unpadded = copy.deepcopy(FLUX_FP8)
    unpadded["fp8_pad_inner_dim"] = False
    assert im.torchao_float8_training_kernels(_spec(unpadded)) == linears * 84
    step = _size(FLUX_FP8)["throughput"]["step_seconds"]
    before = _size(unpadded)["throughput"]["step_seconds"]
    published = 20 * 60 / 700
    assert before == pytest.approx(1.407, abs=0.005)
    # the report rounds step_seconds to 3 decimals
    assert step == pytest.approx(before + linears * PAD * (2 + 2) * KERNEL_S, abs=0.0011)
    assert step == pytest.approx(1.530, abs=0.005)
    assert abs(step / published - 1) <= SPEED


# ---------------------------------------------------------------- case 3: frozen grad_weight FLOPs


def test_case3_frozen_grad_weight_flops_are_the_linears_macs():
    """[AO011] matmul_with_hp_or_float8_args.backward runs the grad_weight mm whatever the weight's requires_grad,
    so a frozen base linear under LoRA pays 2 x its MACs again. The engine adds 2 x (macs - attention_macs) a
    sample: every GEMM, including proj_out, which [DTAO]'s module_filter_fn leaves as nn.Linear (its grad_weight
    is skipped by autograd: frozen). proj_out of FLUX is 3,072 x 64 on ~1,521 tokens = 0.3 GMAC vs ~29.6 TMAC
    of linears: < 0.01%, immaterial. PASS (the mechanism is the code's)."""
    # fix51t restated (FIX LIST 3 acted on): before, 2 x (macs - attention_macs), proj_out included; after,
    # proj_out's MACs (3,072 x 64 a latent token, 1,521 tokens at 624 px: 299.0 M) are left out.
    fp8 = _spec(FLUX_FP8)
    te_doc = copy.deepcopy(FLUX_FP8)
    del te_doc["fp8_recipe"], te_doc["fp8_pad_inner_dim"]
    cost = im.spec_network_cost(fp8)
    proj_out = 3_072 * 64 * (624 // 8 // 2) ** 2  # hidden x (16 channels x 2 x 2) x 39^2 tokens, by hand
    assert cost.output_linear_macs == proj_out
    extra = im.training_flops_per_image(fp8) - im.training_flops_per_image(_spec(te_doc))
    assert extra == pytest.approx(2.0 * (cost.macs - cost.attention_macs - proj_out), rel=1e-9)


# ---------------------------------------------------------------- case 4: neighbour, compiled torchao


def test_case4_compiled_torchao_charges_no_eager_casts(bundled_catalog):
    """Neighbour: torchao float8 under torch.compile (image.fused_kernels) fuses the casts (torchao README: 'With
    torch.compile on, we demonstrate e2e pretraining throughput speedups'); the engine charges none and the step
    falls to the GPU-bound time. PASS as a contract (no published compiled DiT row to size it)."""
    doc = copy.deepcopy(FLUX_FP8)
    doc["image"]["fused_kernels"] = True
    assert im.torchao_float8_training_kernels(_spec(doc)) == 0
    assert _size(doc)["throughput"]["step_seconds"] < _size(FLUX_FP8)["throughput"]["step_seconds"]


# ---------------------------------------------------------------- case 5: neighbour, no recomputation


def test_case5_no_checkpointing_pays_the_forward_once():
    """[AO011] without activation checkpointing the forward's 23 run once: 496 x (23 + 38) = 30,256. PASS."""
    doc = copy.deepcopy(FLUX_FP8)
    doc["gradient_checkpointing"] = "none"
    # fix51t restated: [FLUX-FP8] now states pad_inner_dim, 2 copies a float8 mm (1 forward, 2 backward):
    # 496 x (23 + 38) = 30,256 -> 496 x (25 + 42) = 33,232
    assert im.torchao_float8_training_kernels(_spec(doc)) == 496 * (23 + PAD + 38 + 2 * PAD)
    doc["fp8_pad_inner_dim"] = False
    assert im.torchao_float8_training_kernels(_spec(doc)) == 496 * (23 + 38)


# ---------------------------------------------------------------- case 6: neighbours left alone


def test_case6_bf16_and_transformer_engine_flux_unchanged():
    """bf16 and fp8 under the default Transformer Engine recipe add no torchao kernels or FLOPs. PASS."""
    bf16 = copy.deepcopy(FLUX_FP8)
    bf16["precision"] = "bf16"
    del bf16["fp8_recipe"], bf16["fp8_pad_inner_dim"]
    te = copy.deepcopy(FLUX_FP8)
    del te["fp8_recipe"], te["fp8_pad_inner_dim"]
    for doc in (bf16, te):
        assert im.torchao_float8_linears(_spec(doc)) == 0
