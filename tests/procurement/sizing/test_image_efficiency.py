"""Issue 29 review fixes: compute efficiency from the work per kernel, the DiT's text length, the detector
default precision and the host's image loader as a bound on detector training."""

import numpy as np
import pytest

from procurement.sizing import gpu_by_slug, parse_workload_spec, size_workload
from procurement.sizing import image_model as im
from procurement.sizing.assumptions import (
    IMAGE_HALF_ROWS,
    IMAGE_HALF_ROWS_REFERENCE_TFLOPS,
    IMAGE_PEAK_EFFICIENCY,
    LOADER_IMAGES_PER_VCPU,
)
from procurement.sizing.compatibility import check_gpu
from procurement.sizing.spec import WorkloadSpecError
from procurement.sizing.throughput import loader_bound_hours, training_throughput


def _implied_efficiency(flops, seconds, traffic_seconds, peak):
    return flops / ((seconds - traffic_seconds) * peak)


def test_the_efficiency_curve_is_the_fit_of_its_two_sources():
    """Two measurements outside the review (assumptions.IMAGE_PEAK_EFFICIENCY): the SDXL UNet forward at
    batch 1 on an L40S (diffusers/benchmarks: 0.074 s; 362.05 TFLOPS, 864 GB/s) and fal's SDXL, 50 steps
    with CFG, fp16 on an A100 (5.933 s; 312 TFLOPS, 2,039 GB/s). Each gives the compute efficiency after
    the eager elementwise traffic; E x r / (r + h x peak / 312 TFLOPS) through both points gives E = 0.534,
    h = 549 (the half-efficiency rows scale with the card's peak: assumptions.IMAGE_HALF_ROWS)."""
    unet = im.network_cost("sdxl-base-1.0", 1024)
    rows_one = unet.macs / unet.params  # 1,317: latent positions each conv/linear weight multiplies
    assert rows_one == pytest.approx(1317, rel=0.001)
    forward_traffic = 2 * unet.saved * 2 / (864e9 * 0.7)
    e1 = _implied_efficiency(2 * unet.macs, 0.074, forward_traffic, 362.05e12)
    fal = parse_workload_spec({"task": "inference", "model": {"preset": "sdxl"}, "precision": "fp16"})
    e2 = _implied_efficiency(
        im.inference_flops_per_image(fal),
        5.933,
        im.inference_traffic_bytes_per_image(fal) / (2039e9 * 0.7),
        312e12,
    )
    r1, r2 = rows_one, 2 * rows_one  # CFG doubles the batch of every kernel
    p1, p2 = 362.05 / 312, 1.0  # each card's peak over the reference A100's
    # E r / e - h p = r at both points: two linear equations in E and h
    peak, half = np.linalg.solve([[r1 / e1, -p1], [r2 / e2, -p2]], [r1, r2])
    assert (e1, e2) == pytest.approx((0.36, 0.44), abs=0.01)
    assert half == pytest.approx(IMAGE_HALF_ROWS.value, rel=0.01)
    assert peak == pytest.approx(IMAGE_PEAK_EFFICIENCY.value, abs=0.002)
    assert IMAGE_HALF_ROWS_REFERENCE_TFLOPS.value == 312.0


def test_small_latents_reach_less_of_the_peak_than_large_ones():
    """SD 1.5 at 512 px (64 x 64 latents, CFG): 933 rows, 34% of an A100's peak; SDXL at 1024 px: 2,635
    rows, 44%."""
    sd15 = parse_workload_spec({"task": "inference", "model": {"preset": "sd-1.5"}})
    sdxl = parse_workload_spec({"task": "inference", "model": {"preset": "sdxl"}})
    a100 = 312e12
    assert im.inference_efficiency(sd15, a100) == pytest.approx(0.534 * 933 / (933 + 549), abs=0.002)
    assert im.inference_efficiency(sdxl, a100) == pytest.approx(0.534 * 2635 / (2635 + 549), abs=0.002)
    batched = parse_workload_spec({"task": "inference", "model": {"preset": "sd-1.5"}, "micro_batch_size": 8})
    # 8 x 933 rows (CFG included): 0.497, near the 0.534 ceiling
    assert im.inference_efficiency(batched, a100) == pytest.approx(
        0.534 * 8 * 933 / (8 * 933 + 549), abs=0.002
    )


def test_a_faster_card_needs_more_rows_for_the_same_efficiency():
    """Little's law: the half-efficiency rows scale with the dense peak, so the same SDXL forward reaches
    less of an H100's 989.5 TFLOPS (half at 549 x 989.5 / 312 = 1,741 rows) than of an A100's (549)."""
    sdxl = parse_workload_spec({"task": "inference", "model": {"preset": "sdxl"}})
    h100 = im.inference_efficiency(sdxl, 989.5e12)
    assert h100 == pytest.approx(0.534 * 2635 / (2635 + 549 * 989.5 / 312), rel=1e-4)
    assert h100 < im.inference_efficiency(sdxl, 312e12) < im.inference_efficiency(sdxl, 165.2e12)


def test_sdpa_attention_on_hopper_runs_at_flashattention2s_ceiling(monkeypatch):
    """SD3 Medium at 1024 px with CFG: 2 x (4,096 + 333) = 8,858 rows; attention is 2 x 4,429^2 x 1,536
    MACs per block x 24 blocks x 2 (CFG) x 28 steps = 162 TFLOPs (31% of the pipeline's 515). On an H100
    (generation 90) those FLOPs run at 35% of peak (FlashAttention-2 on Hopper, FlashAttention-3 paper);
    on an A100 (80) and with fused kernels or eager attention, at the GEMMs' efficiency. The generation also picks
    the eager host's rate (fix51a: image_model.eager_host_rate, 28 us on generation >= 90): held at one host here,
    so the difference is the attention ceiling's alone."""
    monkeypatch.setattr(im, "eager_host_rate", lambda generation=None: 31e-6)
    spec = parse_workload_spec({"task": "inference", "model": {"preset": "sd3-medium"}, "precision": "fp16"})
    attention = im.attention_flops_per_image(spec)
    assert attention == pytest.approx(2 * 2 * 4429**2 * 1536 * 24 * 2 * 28, rel=0.01)
    assert attention / im.inference_flops_per_image(spec) == pytest.approx(0.31, abs=0.01)
    peak, bandwidth = 989.5e12, 3350e9
    efficiency = im.inference_efficiency(spec, peak)
    assert efficiency == pytest.approx(0.534 * 8858 / (8858 + 549 * 989.5 / 312), rel=0.001)
    hopper = im.inference_seconds_per_image(spec, peak, bandwidth, 90)
    ampere_kernels = im.inference_seconds_per_image(spec, peak, bandwidth, 80)
    assert hopper - ampere_kernels == pytest.approx(attention / peak * (1 / 0.35 - 1 / efficiency), rel=1e-4)
    for variant in ({"flash_attention": False}, {"image": {"fused_kernels": True}}):
        other = parse_workload_spec(
            {"task": "inference", "model": {"preset": "sd3-medium"}, "precision": "fp16"} | variant
        )
        assert im.inference_seconds_per_image(other, peak, bandwidth, 90) == pytest.approx(
            im.inference_seconds_per_image(other, peak, bandwidth, 80), rel=1e-12
        )


def test_a_dits_text_length_is_a_spec_field():
    """FLUX.1-dev trained on 77-token cached T5 embeddings (HF flux-qlora post): 1,521 + 77 joint tokens
    instead of 1,521 + 512; the FLOPs of a DiT block scale with its tokens."""
    base = {
        "task": "lora",
        "model": {"preset": "flux.1-dev"},
        "lora": {"rank": 4},
        "image": {"cache_latents": True, "resolution_px": 624, "train_steps": 10},
    }
    preset = parse_workload_spec(base)
    short = parse_workload_spec(base | {"image": base["image"] | {"text_tokens": 77}})
    assert short.image.text_tokens == 77 and preset.image.text_tokens is None
    assert im.spec_network_cost(short).tokens == 1521 + 77
    assert im.spec_network_cost(preset).tokens == 1521 + 512
    ratio = im.training_flops_per_image(short) / im.training_flops_per_image(preset)
    assert 0.75 < ratio < 1598 / 2033 + 0.02  # linear part scales with tokens, attention with tokens^2
    with pytest.raises(WorkloadSpecError, match="image.text_tokens"):
        parse_workload_spec({"task": "inference", "model": {"preset": "sdxl"}, "image": {"text_tokens": 77}})
    with pytest.raises(WorkloadSpecError, match="image.text_tokens"):
        parse_workload_spec(
            {"task": "inference", "model": {"preset": "flux.1-dev"}, "image": {"text_tokens": 0}}
        )


def test_detectors_default_to_fp16_amp_and_run_on_t4_and_v100():
    """Ultralytics trains with `amp: True` (fp16 autocast) by default; T4 (Turing) and V100 (Volta) have
    no bf16, so a bf16 default would wrongly block them."""
    spec = parse_workload_spec({"task": "full_finetune", "model": {"preset": "yolov8s"}})
    assert spec.precision == "fp16"
    for slug in ("t4", "v100-sxm2-16gb"):
        assert check_gpu(spec, gpu_by_slug(slug)).blocked_by is None
    stated = parse_workload_spec(
        {"task": "full_finetune", "model": {"preset": "yolov8s"}, "precision": "bf16"}
    )
    assert stated.precision == "bf16"
    assert parse_workload_spec({"task": "inference", "model": {"preset": "sdxl"}}).precision == "bf16"


YOLOV8N_COCO = {
    "task": "full_finetune",
    "model": {"preset": "yolov8n"},
    "micro_batch_size": 64,
    "image": {"epochs": 300, "dataset_images": 118287},
}


def test_the_host_loader_bounds_detector_training_in_the_size_report():
    """300 COCO epochs at the host rule's 8 vCPUs per GPU: 8 x 24.64 = 197.1 images/s (Ultralytics' mosaic,
    assumptions loader_images_per_vcpu), 35.49 M images / 197.1 / 3,600 = 50.0 h; the V100's GPU side alone would take a few hours."""
    spec = parse_workload_spec(YOLOV8N_COCO)
    (row,) = size_workload(spec, [gpu_by_slug("v100-sxm2-16gb")])["candidates"]
    assert row["throughput"]["training_images_per_second"] == pytest.approx(
        8 * LOADER_IMAGES_PER_VCPU.value, rel=1e-3
    )
    assert row["throughput"]["training_hours"] == pytest.approx(300 * 118287 / (8 * 24.64) / 3600, rel=1e-3)
    assert any(
        w.startswith("the host's image loader sets the pace: 8 vCPUs per GPU") for w in row["warnings"]
    )
    cached = parse_workload_spec(
        {"task": "lora", "model": {"preset": "sdxl"}, "image": {"cache_latents": True, "train_steps": 100}}
    )
    (gpu_bound,) = size_workload(cached, [gpu_by_slug("a100-sxm4-80gb")])["candidates"]
    assert gpu_bound["throughput"]["loader_seconds"] == 0.0
    assert not any("image loader" in w for w in gpu_bound["warnings"])


def test_the_loader_bound_follows_the_vcpus_and_skips_cached_latents():
    spec = parse_workload_spec(YOLOV8N_COCO)
    rows = training_throughput(
        spec,
        peak_tflops=125.0,
        gpu_counts=1,
        interconnect_gbps=None,
        mfu=0.35,
        vcpus_per_gpu=[4.0, 32.0, np.inf],
    )
    gpu_only = rows["training_tokens_per_second"][2]
    assert rows["training_tokens_per_second"][0] == pytest.approx(4 * LOADER_IMAGES_PER_VCPU.value)
    assert rows["training_tokens_per_second"][1] == pytest.approx(
        min(32 * LOADER_IMAGES_PER_VCPU.value, gpu_only)
    )
    assert loader_bound_hours(spec, np.array([4.0]))[0] == pytest.approx(300 * 118287 / (4 * 24.64) / 3600)
    cached = parse_workload_spec(
        {"task": "lora", "model": {"preset": "sdxl"}, "image": {"cache_latents": True, "train_steps": 100}}
    )
    assert loader_bound_hours(cached, np.array([1.0]))[0] == 0.0  # tensors only: no decoding
