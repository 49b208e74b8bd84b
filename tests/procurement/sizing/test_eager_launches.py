"""Eager PyTorch's per-kernel host floor (assumptions.EAGER_KERNEL_HOST_SECONDS: ~5 us of dispatch per
no-grad op, pytorch/pytorch issue #41383, + ~4 us of CUDA launch, CUDA.jl docs 'Graphs'): in each block of an
eager UNet forward the elementwise kernels take the longer of their traffic and kernels x 9 us."""

import pytest

from procurement.sizing import gpu_by_slug, parse_workload_spec
from procurement.sizing import image_model as im


def _spec(preset: str, **extra) -> object:
    return parse_workload_spec(
        {"task": "inference", "model": {"preset": preset}, "precision": "fp16"} | extra
    )


def test_sd15_kernels_are_counted_from_diffusers_blocks():
    """22 ResNets x 14 (+1 for each of the 14 with a 1x1 shortcut: two down, all twelve up) = 322; 16
    BasicTransformerBlocks x 12 = 192; 16 Transformer2D wrappers x 8 = 128; 3 downsample biases, 3 upsamples
    x 2, 12 skip concatenations and 16 stem/head kernels: 679 per forward."""
    cost = im.network_cost("sd-1.5", 512)
    assert sum(kernels for kernels, _ in cost.launches) + cost.launches_fixed == 679


def test_with_no_traffic_every_kernel_costs_its_host_time():
    """An unbounded bandwidth leaves only the floor: (679 + 13 per-step pipeline kernels) x 9 us x 50 steps
    = 0.311 s per image at batch 1."""
    seconds = im.eager_launch_seconds_per_image(_spec("sd-1.5"), 1e30)
    assert seconds == pytest.approx(692 * 9e-6 * 50, rel=1e-9)


def test_sd15_at_512_px_is_launch_bound_and_sdxl_at_a_batch_is_not():
    """On an A100 80GB (2,039 GB/s x 0.7): SD 1.5's 512 px blocks move too little to hide 9 us a kernel
    (0.19 s of 0.31 possible per image); SDXL at batch 4 (CFG 8) mostly hides it behind its traffic."""
    bandwidth = gpu_by_slug("a100-sxm4-80gb").memory_bandwidth_gbps * 1e9
    sd15 = im.eager_launch_seconds_per_image(_spec("sd-1.5"), bandwidth)
    sdxl = im.eager_launch_seconds_per_image(
        _spec("sdxl", micro_batch_size=4, image={"steps": 50}), bandwidth
    )
    assert 0.15 < sd15 < 0.311
    assert sdxl < 0.2 * sd15


def test_fused_stacks_and_dits_pay_no_floor():
    bandwidth = 2039e9
    assert im.eager_launch_seconds_per_image(_spec("sd-1.5", image={"fused_kernels": True}), bandwidth) == 0.0
    assert im.eager_launch_seconds_per_image(_spec("flux.1-dev"), bandwidth) == 0.0
