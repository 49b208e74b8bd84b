"""fix51o (aud51o's FIX LIST item 2): a YOLO training answer says the product sizes the training step (epoch 1's
GPU_mem, before any validate()) and that later epochs can read up to ~0.9 GiB more on Ultralytics >= 8.3.87,
which keeps the validator's cached blocks. A caveat only: no memory term is added (the jump is not sized).

Source of the figures: the published logs read in tests/procurement/outside/test_outside_gpu_mem_units_audit_aud51o.py
([FRUIT-Y8S] find_string id 30543722530, 8.3.239: epoch 1 3.73G, epoch 2 4.54G; [T4-Y8N] id 54958923800, 8.4.41:
2.03G then 2.89G) and the release of the clearing change from aud51o's bisection of the PyPI wheels
(engine/trainer.py 8.3.86 455 unconditional `_clear_memory()`, 8.3.87 455 `> 0.9`, 8.3.109 460 `> 0.5`)."""

from __future__ import annotations

import pytest

from procurement.sizing import image_model as im
from procurement.sizing import parse_workload_spec
from procurement.sizing.report import size_workload


def _yolo(task: str = "full_finetune", **image) -> dict:
    return {
        "task": task,
        "model": {"preset": "yolov8n"},
        "precision": "fp16",
        "micro_batch_size": 16,
        "image": image
        or {"resolution_px": 640, "epochs": 50, "dataset_images": 7058, "max_objects_per_image": 10},
    }


def _notes(spec: dict) -> list[str]:
    return size_workload(parse_workload_spec(spec), [])["workload"]["memory_assumptions"]


def test_the_jump_is_the_larger_published_epoch_1_to_2_step():
    # GiB, as 8.3.76+ prints them: [FRUIT-Y8S] 4.54 - 3.73, [T4-Y8N] 2.89 - 2.03
    assert im.ULTRALYTICS_VALIDATOR_CACHE_JUMP_GIB == pytest.approx(0.86)
    assert im.ULTRALYTICS_KEEPS_VALIDATOR_CACHE_RELEASE == "8.3.87"


def test_a_yolo_training_answer_carries_the_caveat_with_its_source():
    (note,) = [text for text in _notes(_yolo()) if "validator's cached blocks" in text]
    assert "up to ~0.9 GiB on Ultralytics >= 8.3.87" in note
    assert "epoch 1, before any validation" in note
    assert "engine/trainer.py" in note and "not counted here" in note
    assert "True" not in note and "None" not in note  # page text, no Python literals


def test_it_follows_the_dense_and_unstated_density_notes_without_displacing_them():
    dense = im.memory_notes(
        parse_workload_spec(
            _yolo(resolution_px=640, epochs=100, dataset_images=6471, max_objects_per_image=902)
        )
    )
    assert dense[0].startswith("dense detection") and "validator's cached blocks" in dense[-1]
    unstated = im.memory_notes(parse_workload_spec(_yolo(resolution_px=640, epochs=10, dataset_images=100)))
    assert (
        unstated[0].startswith("the densest training image") and "validator's cached blocks" in unstated[-1]
    )


def test_the_caveat_adds_no_memory():
    """A caveat only: the YOLO training total is the one the memory model gives without it."""
    spec = parse_workload_spec(_yolo())
    with_note = size_workload(spec, [])
    from procurement.sizing import report

    original = im.ultralytics_validator_cache_note
    try:
        im.ultralytics_validator_cache_note = lambda spec: None
        without = report.size_workload(spec, [])
    finally:
        im.ultralytics_validator_cache_note = original
    assert with_note["candidates"] == without["candidates"]
    assert (
        len(with_note["workload"]["memory_assumptions"]) == len(without["workload"]["memory_assumptions"]) + 1
    )


def test_no_caveat_for_yolo_inference():
    # memory_notes is what report._workload_summary adds to memory_assumptions (size_workload with no card
    # raises IndexError for an image inference spec, report.py 215: noted for the integrator, not this item)
    spec = parse_workload_spec(_yolo(task="inference", images=1000))
    assert im.ultralytics_validator_cache_note(spec) is None
    assert not any("validator" in text for text in im.memory_notes(spec))


def test_no_caveat_for_a_language_model():
    spec = {"task": "lora", "model": {"preset": "llama-3.1-8b"}, "seq_len": 2048, "micro_batch_size": 1}
    assert im.ultralytics_validator_cache_note(parse_workload_spec(spec)) is None
    assert not any("validator" in text for text in _notes(spec))
