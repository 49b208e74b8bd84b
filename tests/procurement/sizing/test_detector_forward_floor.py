"""A detector inference's per-forward floor (assumptions detector_tensorrt_forward_overhead_s for a TensorRT
YOLO forward, detector_forward_overhead_s for other detector forwards): charged once per batch forward, and
said to decide the answer where it is most of the time, since it is the host's and the serving stack's
latency, not the card's. det29c: the TensorRT floor is solved with its work-dependent rate from Ultralytics'
YOLOv8 A100 rows at batch 1 (yolov8.md) and at batch 8 (integrations/tensorrt.md, whose 'batch 1' COCO val
row also ran at batch 8: the validator takes an engine's batch)."""

import pytest

from procurement.sizing import gpu_by_slug, parse_workload_spec, size_workload
from procurement.sizing import image_model as im


def _tensorrt(preset: str, batch: int) -> object:
    return parse_workload_spec(
        {
            "task": "inference",
            "model": {"preset": preset},
            "precision": "fp16",
            "micro_batch_size": batch,
            "image": {"fused_kernels": True},
        }
    )


def _warnings(spec, gpu: str) -> list[str]:
    (candidate,) = size_workload(spec, [gpu_by_slug(gpu)])["candidates"]
    return candidate["warnings"]


def test_the_floor_is_paid_once_per_forward():
    """0.743 ms per TensorRT forward: 0.743 ms an image at batch 1, 0.0929 ms an image at batch 8; an eager
    (not fused) detector forward keeps detector_forward_overhead_s, 0.9 ms."""
    assert im.forward_overhead_seconds_per_image(_tensorrt("yolov8n", 1)) == pytest.approx(0.743e-3)
    assert im.forward_overhead_seconds_per_image(_tensorrt("yolov8n", 8)) == pytest.approx(0.743e-3 / 8)
    eager = parse_workload_spec({"task": "inference", "model": {"preset": "yolov8n"}, "micro_batch_size": 2})
    assert im.forward_overhead_seconds_per_image(eager) == pytest.approx(0.9e-3 / 2)


def test_a_batch_one_nano_on_an_a100_is_told_the_floor_decides():
    """YOLOv8n at batch 1 on an A100: 0.743 of 0.990 ms is the floor (75%): the answer names it and says it
    is the serving stack's."""
    (warning,) = [w for w in _warnings(_tensorrt("yolov8n", 1), "a100-sxm4-80gb") if "per forward" in w]
    assert "0.743 ms" in warning and "75%" in warning
    assert "detector_tensorrt_forward_overhead_s" in warning
    assert "benchmark your engine" in warning


@pytest.mark.parametrize(("preset", "batch"), [("yolov8n", 8), ("yolov8x", 1)])
def test_no_floor_warning_where_the_network_sets_the_time(preset, batch):
    """YOLOv8n at batch 8 (0.093 of 0.340 ms, 27%) and YOLOv8x at batch 1 (0.743 of 3.53 ms): under half."""
    assert not any("per forward" in w for w in _warnings(_tensorrt(preset, batch), "a100-sxm4-80gb"))


def test_training_carries_no_floor_warning():
    spec = parse_workload_spec(
        {
            "task": "full_finetune",
            "model": {"preset": "yolov8n"},
            "micro_batch_size": 1,
            "image": {"epochs": 1, "dataset_images": 100},
        }
    )
    assert im.forward_floor_warning(spec, 1000.0) is None
