"""Issue 29 review fixes: compute efficiency from the work per kernel, the DiT's text length, the detector
default precision and the host's image loader as a bound on detector training."""

import numpy as np
import pytest

from procurement.sizing import gpu_by_slug, parse_workload_spec, size_workload
from procurement.sizing import image_model as im
from procurement.sizing.assumptions import IMAGE_HALF_ROWS, IMAGE_PEAK_EFFICIENCY, LOADER_IMAGES_PER_VCPU
from procurement.sizing.compatibility import check_gpu
from procurement.sizing.spec import WorkloadSpecError
from procurement.sizing.throughput import loader_bound_hours, training_throughput


def _implied_efficiency(flops, seconds, traffic_seconds, peak):
    return flops / ((seconds - traffic_seconds) * peak)


def test_the_efficiency_curve_is_the_fit_of_its_two_sources():
    """Two measurements outside the review (assumptions.IMAGE_PEAK_EFFICIENCY): the SDXL UNet forward at
    batch 1 on an L40S (diffusers/benchmarks: 0.074 s; 362.05 TFLOPS, 864 GB/s) and fal's SDXL, 50 steps
    with CFG, fp16 on an A100 (5.933 s; 312 TFLOPS, 2,039 GB/s). Each gives the compute efficiency after
    the eager elementwise traffic; E x r / (r + h) through both points gives E = 0.566, h = 753."""
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
    half = (e1 * r2 * r1 - e2 * r1 * r2) / (e2 * r1 - e1 * r2)  # solve E r/(r+h) through both points
    peak = e2 * (r2 + half) / r2
    assert (e1, e2) == pytest.approx((0.36, 0.44), abs=0.01)
    assert half == pytest.approx(IMAGE_HALF_ROWS.value, rel=0.05)
    assert peak == pytest.approx(IMAGE_PEAK_EFFICIENCY.value, abs=0.01)


def test_small_latents_reach_less_of_the_peak_than_large_ones():
    """SD 1.5 at 512 px (64 x 64 latents, CFG): 933 rows, 31% of peak; SDXL at 1024 px: 2,635 rows, 44%."""
    sd15 = parse_workload_spec({"task": "inference", "model": {"preset": "sd-1.5"}})
    sdxl = parse_workload_spec({"task": "inference", "model": {"preset": "sdxl"}})
    assert im.inference_efficiency(sd15) == pytest.approx(0.57 * 933 / (933 + 750), abs=0.002)
    assert im.inference_efficiency(sdxl) == pytest.approx(0.57 * 2635 / (2635 + 750), abs=0.002)
    batched = parse_workload_spec({"task": "inference", "model": {"preset": "sd-1.5"}, "micro_batch_size": 8})
    # 8 x 933 rows (CFG included): 0.518, near the 0.57 ceiling
    assert im.inference_efficiency(batched) == pytest.approx(0.57 * 8 * 933 / (8 * 933 + 750), abs=0.002)


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
    """300 COCO epochs at the host rule's 8 vCPUs per GPU: 8 x 15.4 = 123.2 images/s (yolov5 issue 4252),
    35.49 M images / 123.2 / 3,600 = 80.0 h; the V100's GPU side alone would take a few hours."""
    spec = parse_workload_spec(YOLOV8N_COCO)
    (row,) = size_workload(spec, [gpu_by_slug("v100-sxm2-16gb")])["candidates"]
    assert row["throughput"]["training_images_per_second"] == pytest.approx(8 * 15.4, rel=1e-3)
    assert row["throughput"]["training_hours"] == pytest.approx(300 * 118287 / 123.2 / 3600, rel=1e-3)
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
    assert rows["training_tokens_per_second"][1] == pytest.approx(min(32 * 15.4, gpu_only))
    assert loader_bound_hours(spec, np.array([4.0]))[0] == pytest.approx(300 * 118287 / 61.6 / 3600)
    cached = parse_workload_spec(
        {"task": "lora", "model": {"preset": "sdxl"}, "image": {"cache_latents": True, "train_steps": 100}}
    )
    assert loader_bound_hours(cached, np.array([1.0]))[0] == 0.0  # tensors only: no decoding
