"""The host's image loader (ldr29): Ultralytics' loader workers cap the vCPUs that feed it, the source images'
size sets the mosaic's one decode, and `size` and the ranking ask for the same vCPUs (host.pipeline_vcpus_needed).

Ultralytics: ultralytics/data/build.py build_dataloader starts min(os.cpu_count() // max(GPUs, 1), workers)
workers, cfg/default.yaml `workers: 8`. Rates: 15.4 / ((1 - 0.5) x (imgsz / 640)^2 + 0.5 / 4 x MP / 0.29) images/s
a worker (assumptions yolov5_mosaic_images_per_vcpu, loader_decode_share, loader_reference_source_megapixels,
loader_reference_canvas_px)."""

from __future__ import annotations

import numpy as np
import pytest

from procurement.ranking.shapes import host_vcpus_needed
from procurement.sizing.gpus import gpu_by_slug
from procurement.sizing.host import (
    loader_images_per_vcpu,
    loader_workers_per_gpu,
    pipeline_vcpus_needed,
)
from procurement.sizing.report import size_workload
from procurement.sizing.spec import WorkloadSpecError, parse_workload_spec

YOLO11N = {
    "task": "full_finetune",
    "model": {"preset": "yolo11n"},
    "precision": "fp16",
    "micro_batch_size": 16,
    "optimizer": "sgd",
    "image": {"resolution_px": 640, "epochs": 100, "dataset_images": 6471},
}


def _spec(image: dict | None = None, host: dict | None = None):
    return parse_workload_spec(YOLO11N | {"image": YOLO11N["image"] | (image or {}), "host": host or {}})


def test_it_defaults_detectors_to_ultralytics_eight_workers_and_crops_to_deits_ten():
    assert loader_workers_per_gpu(_spec()) == 8
    assert loader_workers_per_gpu(_spec({"loader_workers": 3})) == 3
    vit = parse_workload_spec(
        {
            "task": "full_finetune",
            "model": {"preset": "vit-b-16"},
            "image": {"epochs": 1, "dataset_images": 10},
        }
    )
    assert loader_workers_per_gpu(vit) == 10
    photos = parse_workload_spec({"task": "lora", "model": {"preset": "sdxl"}, "image": {"train_steps": 10}})
    assert loader_workers_per_gpu(photos) == np.inf  # diffusion on decoded photos: the script's, when stated


def test_it_scales_the_one_decode_with_the_source_pixels():
    """COCO-sized sources keep 15.4 / 0.625 = 24.64; 2.0 MP: 15.4 / (0.5 + 0.125 x 2.0 / 0.29) = 11.31."""
    assert loader_images_per_vcpu(_spec()) == pytest.approx(24.64)
    assert loader_images_per_vcpu(_spec({"source_megapixels": 0.29})) == pytest.approx(24.64)
    assert loader_images_per_vcpu(_spec({"source_megapixels": 2.0})) == pytest.approx(11.31, rel=1e-3)


def test_the_canvas_work_scales_with_the_detectors_output_pixels():
    """img29d: Ultralytics sizes the resize, the 2 x imgsz mosaic canvas, the warp to imgsz and HSV by imgsz
    (assumptions loader_reference_canvas_px), so the non-decode half scales with (imgsz / 640)^2 and the
    decode stays the source's. By hand: 1024 px, 15.4 / (0.5 x 2.56 + 0.125) = 10.961; 1024 px at 2.0 MP,
    15.4 / (1.28 + 0.125 x 2.0 / 0.29) = 15.4 / 2.142 = 7.189; 320 px, 15.4 / (0.5 x 0.25 + 0.125) = 61.6. Diffusion on
    decoded photos keeps the 640 px rate (the detector's rate as the closest figure, not a crop model)."""
    assert loader_images_per_vcpu(_spec({"resolution_px": 1024})) == pytest.approx(10.961, rel=1e-4)
    assert loader_images_per_vcpu(_spec({"resolution_px": 1024, "source_megapixels": 2.0})) == pytest.approx(
        7.189, rel=1e-3
    )
    assert loader_images_per_vcpu(_spec({"resolution_px": 320})) == pytest.approx(61.6)
    photos = {"task": "lora", "model": {"preset": "sdxl"}, "image": {"train_steps": 10}}
    assert loader_images_per_vcpu(parse_workload_spec(photos)) == pytest.approx(24.64)
    at_1024 = photos | {"image": {"train_steps": 10, "resolution_px": 1024}}
    assert loader_images_per_vcpu(parse_workload_spec(at_1024)) == pytest.approx(24.64)


def test_a_twelve_vcpu_host_feeds_only_eight_workers():
    """12 vCPUs per GPU on an L4: the loader runs 8 workers, 8 x 11.31 = 90.5 images/s at 2 MP."""
    spec = _spec({"source_megapixels": 2.0}, {"vcpus_per_gpu": 12})
    (row,) = size_workload(spec, [gpu_by_slug("l4")])["candidates"]
    assert row["throughput"]["training_images_per_second"] == pytest.approx(8 * 11.31, rel=1e-3)
    assert any("more vCPUs do not help" in w for w in row["warnings"])


def test_size_recommends_the_vcpus_the_ranking_checks():
    """One rule: the GPUs' own images/s over the rate a worker, rounded up, at most 8 workers, at least 4."""
    spec = _spec()
    report = size_workload(spec, [gpu_by_slug("t4")])
    throughput = report["throughput"]
    gpu_rate = (
        throughput["training_tokens_per_second"] * throughput["step_seconds"] / throughput["gpu_step_seconds"]
    )
    hours = spec.training_tokens / gpu_rate / 3600.0
    ranking = host_vcpus_needed(spec, np.array([hours]), 1, np.array([1.0]))[0]
    assert report["host"]["vcpus_per_node"] == ranking == pipeline_vcpus_needed(spec, gpu_rate, 1)
    assert 4 <= ranking <= 8


def test_the_need_is_capped_at_the_workers_and_floored_at_four_a_gpu():
    spec = _spec()
    rates = np.array([10.0, 150.0, 1000.0])
    assert pipeline_vcpus_needed(spec, rates, 1).tolist() == [4.0, 7.0, 8.0]
    assert pipeline_vcpus_needed(spec, rates * 2, 2).tolist() == [8.0, 13.0, 16.0]


@pytest.mark.parametrize(
    ("image", "path"),
    [({"loader_workers": 0}, "image.loader_workers"), ({"source_megapixels": 0}, "image.source_megapixels")],
)
def test_it_refuses_bad_loader_fields(image, path):
    with pytest.raises(WorkloadSpecError) as error:
        _spec(image)
    assert path in str(error.value.errors)


def test_the_crop_pipeline_and_inference_refuse_a_source_size():
    with pytest.raises(WorkloadSpecError) as error:
        parse_workload_spec(
            {
                "task": "full_finetune",
                "model": {"preset": "vit-b-16"},
                "image": {"epochs": 1, "dataset_images": 10, "source_megapixels": 1.0},
            }
        )
    assert "image.source_megapixels" in str(error.value.errors)
    with pytest.raises(WorkloadSpecError) as error:
        parse_workload_spec(
            {"task": "inference", "model": {"preset": "yolo11n"}, "image": {"loader_workers": 4}}
        )
    assert "image.loader_workers" in str(error.value.errors)
