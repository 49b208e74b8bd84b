"""An eager ViT forward's kernel count (image_model.vit_forward_kernels), counted from timm 0.6's
VisionTransformer: 10 kernels a Block around its attention, 7 for timm 0.6's eager attention (three copies
torch.matmul makes of the permuted q, k and v, two bmm, the scale, the softmax) or 1 SDPA kernel, 6 a forward.
Where the host's kernels x eager_kernel_host_s outlast the GPU work, the forward takes the host's time."""

import pytest

from procurement.sizing import gpu_by_slug, parse_workload_spec
from procurement.sizing import image_model as im
from procurement.sizing.compute_peak import spec_peak_tflops


def _vit(batch: int, flash: bool = False, preset: str = "vit-b-16", **image) -> object:
    return parse_workload_spec(
        {
            "task": "inference",
            "model": {"preset": preset},
            "precision": "fp16",
            "micro_batch_size": batch,
            "flash_attention": flash,
            "image": image,
        }
    )


def test_the_counts_from_timms_code():
    assert im.vit_forward_kernels(_vit(1)) == 12 * 17 + 6 == 210  # ViT-B, eager attention
    assert im.vit_forward_kernels(_vit(1, flash=True)) == 12 * 11 + 6
    assert im.vit_forward_kernels(_vit(1, preset="vit-l-16")) == 24 * 17 + 6


def _seconds(spec) -> float:
    a100 = gpu_by_slug("a100-sxm4-40gb")
    peak = spec_peak_tflops(spec, a100) * 1e12
    return float(
        im.inference_seconds_per_image(spec, peak, a100.memory_bandwidth_gbps * 1e9, a100.generation)
    )


def test_batch_one_takes_the_hosts_time():
    """210 kernels x 31 us = 6.51 ms a forward (eager_kernel_host_s), whatever the GPU's work at one image."""
    assert _seconds(_vit(1)) == pytest.approx(210 * 31e-6)


def test_large_batches_and_fused_stacks_pay_no_floor():
    spec = _vit(256)
    assert im.eager_launch_seconds_per_image(spec, 0.088) == 0.0  # 88 ms of GPU work hides 6.5 ms
    assert im.eager_launch_seconds_per_image(_vit(1, fused_kernels=True), 0.0) == 0.0


def test_a_host_bound_answer_says_so():
    """The answer text states the assumption where it decides the answer: batch 1 (6.51 ms of host time
    against ~0.85 ms of GPU work on an A100), not batch 256 (88 ms of GPU work)."""
    small = _vit(1)
    text = im.vit_host_floor_warning(small, 1.0 / _seconds(small))
    assert text is not None and "210 kernels" in text and "6.5 ms" in text
    # the per-kernel assumption and its source, and what AITemplate's A100 host implies ([AIT-VIT] PyTorch 1.12
    # eager ViT-B batch 1, 4.95 ms / 210 kernels = 23.6 us; 210 x 24 us = 5.0 ms, 1 - 24 / 31 = 23% less)
    assert "31 us of host time each" in text and "diffusers" in text
    assert "about 24 us (5.0 ms for this forward, 23% less)" in text
    large = _vit(256)
    assert im.vit_host_floor_warning(large, 1.0 / _seconds(large)) is None
    assert im.vit_host_floor_warning(_vit(1, fused_kernels=True), 1000.0) is None
