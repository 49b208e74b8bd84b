"""fix48d (stop 48, aud48d's fix list item 5): a YOLO training answer on a set denser than COCO says, in its
memory assumptions, that the product sizes a typical epoch and how far a peak epoch reads above it.

Source of the figures: the [L4-Y11] Colab notebook (find_string id 62465390008; Ultralytics 8.3.75, YOLO11n,
VisDrone, batch 16, an L4), GPU_mem of its 34 mosaic epochs read in
tests/procurement/outside/test_outside_dense_detection_audit_stop48.py: median 8.52 G, highest 11.2 G (epoch 17).
Threshold: COCO train2017's densest image, 93 (detector_max_objects_per_image), where the calibration stops
(image_model.DENSE_DETECTOR_PEAK_NOTE_OBJECTS says why)."""

from __future__ import annotations

import statistics

import pytest

from procurement.sizing import image_model as im
from procurement.sizing import parse_workload_spec
from procurement.sizing.assumptions import DETECTOR_MAX_OBJECTS
from procurement.sizing.report import size_workload

# GPU_mem (G) of epochs 1-25 and 82-90, as the notebook prints them
L4_MOSAIC_EPOCHS_GB = [
    float(gb)
    for gb in (
        "9.68 7.24 10.5 7.37 9.42 8.92 6.91 5.95 7.87 8.15 9.48 9.46 8.21 8.86 7.96 7.23 11.2 8.45 7.78 8.21 6.98 "
        "8.31 10.6 8.59 7.14 8.63 9.08 7.17 9.37 10.8 10.1 7.12 9.79 8.71"
    ).split()
]


def _yolo(preset: str = "yolo11n", task: str = "full_finetune", **image) -> dict:
    return {
        "task": task,
        "model": {"preset": preset},
        "precision": "fp16",
        "micro_batch_size": 16,
        "image": {"resolution_px": 640, "epochs": 100, "dataset_images": 6471, **image},
    }


def test_the_peak_ratio_is_the_published_runs_highest_epoch_over_its_median():
    assert statistics.median(L4_MOSAIC_EPOCHS_GB) == pytest.approx(8.52)
    assert max(L4_MOSAIC_EPOCHS_GB) / statistics.median(L4_MOSAIC_EPOCHS_GB) == pytest.approx(
        im.DENSE_DETECTOR_PEAK_OVER_MEDIAN
    )
    assert im.DENSE_DETECTOR_PEAK_OVER_MEDIAN == pytest.approx(1.31, abs=0.005)
    assert im.DENSE_DETECTOR_PEAK_NOTE_OBJECTS == DETECTOR_MAX_OBJECTS.value == 93


def test_it_tells_a_dense_yolo_training_answer_it_sizes_a_typical_epoch():
    report = size_workload(parse_workload_spec(_yolo(max_objects_per_image=902)), [])
    (note,) = [
        text for text in report["workload"]["memory_assumptions"] if text.startswith("dense detection")
    ]
    assert "max_objects_per_image 902" in note
    assert "typical epoch" in note and "1.31x the median" in note
    assert "5.95-11.2 G" in note and "8.52 G" in note


@pytest.mark.parametrize(
    "spec",
    [
        _yolo(),  # the default, COCO's 93
        _yolo(max_objects_per_image=93),  # at the threshold: the calibrated density
        _yolo(max_objects_per_image=40),
        _yolo(task="inference") | {"image": {"images": 1000}},
    ],
)
def test_it_says_nothing_at_or_below_coco_density_or_outside_training(spec):
    assert im.dense_detector_peak_note(parse_workload_spec(spec)) is None
    assert not any(text.startswith("dense detection") for text in im.memory_notes(parse_workload_spec(spec)))


def test_it_says_it_just_above_the_threshold():
    assert im.dense_detector_peak_note(parse_workload_spec(_yolo(max_objects_per_image=94))) is not None


def test_an_inference_spec_stating_the_assigners_density_is_refused_naming_it():
    # fix50i (stop 50): a field that acts in training only is refused on an inference spec, naming it
    from procurement.sizing.spec import WorkloadSpecError

    with pytest.raises(WorkloadSpecError, match="image.max_objects_per_image"):
        parse_workload_spec(
            _yolo(task="inference") | {"image": {"images": 1000, "max_objects_per_image": 902}}
        )
