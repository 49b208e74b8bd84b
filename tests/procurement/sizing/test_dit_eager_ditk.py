"""ditk (aud51v FIX LIST item 1): the eager DiT inference step's own kernels (procurement/sizing/dit_eager.py,
counted from huggingface/diffusers v0.32.0, the release [ORT-22986] pins) through the launch queue
(image_model.eager_pass_seconds), and SD3.5 Large's fp32 q / k RMSNorm chains (the same rule as FLUX.1's,
image_model.flux_qk_chain_dram_bytes_per_step). Hand computations below."""

from __future__ import annotations

import pytest

from procurement.sizing import dit_eager
from procurement.sizing import image_model as im
from procurement.sizing.image_presets import image_preset
from procurement.sizing.spec import parse_workload_spec

H100_L2 = 50e6  # the table's H100 SXM L2 (gpus.L2_CACHE_BYTES_BY_SLUG)


def _spec(preset: str, task: str = "inference", **image) -> object:
    doc = {"task": task, "model": {"preset": preset}, "precision": "bf16", "micro_batch_size": 1}
    if task != "inference":
        doc["lora"] = {"rank": 16}
    return parse_workload_spec(doc | {"image": {"resolution_px": 1024} | image})


def _denoiser(slug: str) -> dict:
    return image_preset(slug)["denoiser"]


def test_block_kernels_as_counted_from_diffusers_0_32():
    # FLUX.1 joint: 2 AdaLNZero (5 each) + 4 RMSNorm (8) + 3 cats + 2 RoPE (8) + 1 copy + 2 tails (9) = 80
    assert dit_eager.joint_block_kernels(_denoiser("flux.1-dev")) == 10 + 32 + 3 + 16 + 1 + 18 == 80
    # FLUX.1 single: AdaLNZeroSingle 5 + 2 RMSNorm 16 + copy 1 + 2 RoPE 16 + GELU, cat, gate, residual 4 = 42
    assert dit_eager.single_block_kernels(_denoiser("flux.1-dev")) == 42
    # SD3 Medium (no qk norm, no RoPE): 10 + 3 + 1 + 18 = 32; its context_pre_only last block 23
    sd3 = dit_eager.block_kernels(_denoiser("sd3-medium"))
    assert [k for _, k in sd3] == [32] * 23 + [23]
    # SD3.5 Large: the qk RMSNorms add 4 x 8 a block
    sd35 = dit_eager.block_kernels(_denoiser("sd3.5-large"))
    assert [k for _, k in sd35] == [64] * 37 + [55]


def test_forward_kernels_by_hand():
    # + GEMMs 15 a joint block, 7 a single one (image_shapes), + norm_out 5 + 3 embedding GEMMs
    assert im.dit_forward_kernels(_spec("flux.1-dev")) == 19 * 95 + 38 * 49 + 8 == 3675
    assert im.dit_forward_kernels(_spec("sd3-medium")) == 23 * 47 + 38 + 8 == 1127
    assert im.dit_forward_kernels(_spec("sd3.5-large")) == 37 * 79 + 70 + 8 == 3001
    assert im.dit_forward_kernels(_spec("flux.1-dev", fused_kernels=True)) == 0.0


def test_training_keeps_its_own_host_model():
    # a DiT LoRA step's host is training_eager_seconds_per_image's (dit51: not landed); no units, no chains
    spec = _spec("flux.1-dev", task="lora")
    assert im.dit_eager_step_units(spec) == []
    assert float(im.flux_qk_chain_dram_bytes_per_step(spec, H100_L2)) == 0.0


def test_a_gpu_bound_h100_step_hides_the_host():
    """SD3.5 Large at 1,024 px with CFG on an H100: 3,001 + 13 kernels x 31 us = 93.4 ms of host against ~165 ms of
    GPU work a step; every block's GPU share (~4.3 ms) outlasts its host (79 x 31 us = 2.4 ms), so the queue adds
    only its first launches: the host moves [ORT-22986]'s SD3.5 Large eager row by ~2 ms in 9.4 s."""
    spec = _spec("sd3.5-large", steps=50)
    units = im.dit_eager_step_units(spec)
    gpu = 0.165
    step = float(im.eager_pass_seconds(units, im.PIPELINE_STEP_KERNELS, gpu))
    assert (3001 + 13) * 31e-6 == pytest.approx(0.0934, abs=1e-4)
    assert step - gpu < 0.2e-3
    # with no GPU work to hide behind, the host is the step
    assert float(im.eager_pass_seconds(units, im.PIPELINE_STEP_KERNELS, 0.0)) == pytest.approx(
        (3001 + 13) * 31e-6
    )


def test_sd35_large_qk_rmsnorm_chains_spill_the_h100_l2():
    """JointAttnProcessor2_0 (diffusers v0.32.0 attention_processor.py 1399-1470) runs norm_q / norm_k on the image
    q and k and norm_added_q / norm_added_k on the text's, CFG's two samples at once: the image q is 2 x 4,096 x
    2,432 x 4 B = 79.7 MB in fp32 (spills the H100's 50 MB), the text's 2 x 333 x 2,432 x 4 B = 6.5 MB (fits).
    Bytes: 19.92M elements x 30 B x 2 tensors x 38 blocks = 45.4 GB a step, at 0.70 x 3,350 GB/s 19.4 ms, x 50
    steps 0.968 s (8.458 -> 9.426 s on [ORT-22986]'s row). SD3 Medium has no qk norm: none; the L40S (96 MB) holds
    the tensor: none."""
    spec = _spec("sd3.5-large", steps=50)
    elements = 2 * 4096 * 2432
    assert 4 * elements == pytest.approx(79.7e6, rel=1e-3)
    expected = elements * 30.0 * 2 * 38
    assert float(im.flux_qk_chain_dram_bytes_per_step(spec, H100_L2)) == pytest.approx(expected)
    assert expected / (0.70 * 3350e9) * 50 == pytest.approx(0.968, abs=0.001)
    assert float(im.flux_qk_chain_dram_bytes_per_step(spec, 96e6)) == 0.0
    assert float(im.flux_qk_chain_dram_bytes_per_step(_spec("sd3-medium"), H100_L2)) == 0.0
