"""loaderwarn (aud51y FIX LIST item 3): where the host's image loader decides (or comes within 20% of) a training
speed, the size report's candidate and each ranking row say so, with the vCPUs per GPU assumed (the spec's, the
offer's own, or the default) and the loader's images/s a GPU at half and at double them
(host.loader_images_per_second_per_gpu: loader_worker_vcpus x loader_images_per_vcpu). No figure moves.

Hand computation, YOLOv8n 1280 px (the [UZ-Y8N] Colab T4 spec of test_outside_detection_audit_aud51y.py):
mosaic_images_per_vcpu = 15.4 / ((1 - 0.5) x (1280 / 640)^2 + 0.5 / 4) = 15.4 / 2.125 = 7.247 images/s a vCPU
(YOLOV5_MOSAIC_IMAGES_PER_VCPU 15.4, LOADER_DECODE_SHARE 0.5, COCO-sized sources); at 2 vCPUs 14.49, at 1 7.247,
at 4 28.99 images/s, all under Ultralytics' 8 workers a GPU."""

from __future__ import annotations

import pytest

from procurement.ranking import RankingOptions, rank_workload
from procurement.sizing import gpu_by_slug, parse_workload_spec, size_workload
from procurement.sizing.host import loader_images_per_second_per_gpu
from tests.procurement.outside.test_outside_detection_audit_aud51y import UZ_Y8N
from tests.procurement.test_ranking import GPUS, NOW, OFFERS

MARK = "the host's image loader"
NOTE = "this training speed"
PER_VCPU_1280 = 15.4 / (0.5 * (1280 / 640) ** 2 + 0.5 / 4)  # 7.247 images/s a vCPU (module docstring)


def _notes(warnings: list[str]) -> list[str]:
    return [text for text in warnings if text.startswith(MARK) and NOTE in text]


def test_the_colab_t4_spec_states_its_two_vcpus_and_the_rate_at_one_and_four():
    spec = parse_workload_spec(UZ_Y8N)
    (row,) = size_workload(spec, [gpu_by_slug("t4")])["candidates"]
    assert row["throughput"]["training_images_per_second"] == pytest.approx(
        2 * PER_VCPU_1280, rel=1e-3
    )  # unchanged
    (note,) = _notes(row["warnings"])
    assert "decides" in note and "co-decides" not in note
    assert "assumes 2 vCPUs per GPU (host.vcpus_per_gpu, as stated)" in note
    # 2 x 7.247 = 14.49; 1 x 7.247 = 7.25; 4 x 7.247 = 28.99 (hand computation above)
    assert f"feeds {2 * PER_VCPU_1280:.3g} images/s a GPU" in note  # 14.5
    assert f"at 1 vCPU per GPU it feeds {PER_VCPU_1280:.3g} images/s" in note  # 7.25
    assert f"at 4 vCPUs {4 * PER_VCPU_1280:.3g} (" in note  # 29
    assert "The run's own host decides it" in note
    for text in ("True", "False", "None"):
        assert text not in note
    # the host module's own function gives the same three figures
    for vcpus, factor in ((2, 2), (1, 1), (4, 4)):
        assert loader_images_per_second_per_gpu(spec, vcpus) == pytest.approx(
            factor * PER_VCPU_1280, rel=1e-9
        )


def test_the_default_host_is_said_to_be_the_default():
    """300 COCO epochs of YOLOv8n on a V100, no host stated: 8 workers x 24.64 = 197.1 images/s
    (test_image_efficiency.py's case), the default vCPUs, one a loader worker; doubled, the 8 workers cap it."""
    spec = parse_workload_spec(
        {
            "task": "full_finetune",
            "model": {"preset": "yolov8n"},
            "micro_batch_size": 64,
            "image": {"epochs": 300, "dataset_images": 118287},
        }
    )
    (row,) = size_workload(spec, [gpu_by_slug("v100-sxm2-16gb")])["candidates"]
    (note,) = _notes(row["warnings"])
    assert "assumes 8 vCPUs per GPU (the default" in note
    assert f"at 4 vCPUs per GPU it feeds {4 * 24.64:.3g} images/s, at 16 vCPUs {8 * 24.64:.3g} (" in note


def test_a_gpu_bound_detector_shows_none():
    """YOLO11x 640 px batch 16 on an A100 with 8 vCPUs a GPU: the loader's 8 x 24.64 = 197 images/s against the
    GPU's ~72 images/s (loader 0.081 s a step against 0.222 s of GPU work): GPU-bound by far, no note."""
    spec = parse_workload_spec(
        {
            "task": "full_finetune",
            "model": {"preset": "yolo11x"},
            "precision": "fp16",
            "micro_batch_size": 16,
            "optimizer": "adamw",
            "image": {"resolution_px": 640, "epochs": 100, "dataset_images": 118287},
            "host": {"vcpus_per_gpu": 8},
        }
    )
    (row,) = size_workload(spec, [gpu_by_slug("a100-sxm4-80gb")])["candidates"]
    throughput = row["throughput"]
    assert throughput["loader_seconds"] < 0.8 * throughput["gpu_step_seconds"]  # GPU-bound, as the brief asks
    assert _notes(row["warnings"]) == []


def test_ranking_rows_state_the_offers_own_vcpus():
    spec = parse_workload_spec(UZ_Y8N | {"host": {}})
    options = RankingOptions(top=None, setup_hours=0.0, rerun_fraction=0.0, storage_gb=0.0)
    rows = rank_workload(spec, OFFERS, GPUS, options, now=NOW).results
    l4_four = [row for row in rows if row["instance_type"] == "g6.xlarge"]  # 4 vCPUs, 1 L4 (the test catalog)
    assert l4_four
    for row in l4_four:
        (note,) = _notes(row["warnings"])
        assert "assumes 4 vCPUs per GPU (the offer's own vCPUs)" in note
        # 4 x 7.247 = 28.99; 2 x = 14.49; 8 x = 57.98 (hand computation above)
        assert f"feeds {4 * PER_VCPU_1280:.3g} images/s a GPU" in note
        assert (
            f"at 2 vCPUs per GPU it feeds {2 * PER_VCPU_1280:.3g} images/s, at 8 vCPUs {8 * PER_VCPU_1280:.3g}"
            in note
        )
    unknown = [row for row in rows if row["instance_type"] == "rtx4090-unknown-host"]
    assert unknown and all(
        "(the default: the offer's vCPUs are not in the catalog)" in _notes(r["warnings"])[0] for r in unknown
    )
