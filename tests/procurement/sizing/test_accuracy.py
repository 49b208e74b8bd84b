"""Measured accuracy (issue 26 item 7): the class table behind every sizing and ranking row's `accuracy`
object, from the published rows of docs/validation.md (procurement/sizing/accuracy.py)."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from procurement.sizing import accuracy, parse_workload_spec
from procurement.sizing.accuracy import (
    ACCURACY_CLASSES_JSON,
    FAMILY_LABELS,
    IMAGE_TARGETS,
    accuracy_classes,
    accuracy_document,
    accuracy_text,
    class_summary,
    image_case_family,
    workload_accuracy,
    workload_family,
)
from procurement.sizing.image_validation import MEMORY_TARGET, SPEED_TARGET, image_cases


def test_it_matches_a_fresh_computation_so_the_committed_table_cannot_go_stale():
    # Regenerate with `python manage.py validate_sizing` after a change to the engine or the cases.
    assert accuracy_document() == ACCURACY_CLASSES_JSON.read_text(encoding="utf-8")


def test_it_counts_the_lora_memory_class_as_docs_validation_md_does():
    # By hand from docs/validation.md's table (the five `memory` rows whose inputs begin "lora,"):
    #   tt-llama31-8b-lora-a6000 +30.2%, tt-llama31-70b-lora-8xa100 +1.9%, tt-llama32-3b-lora-packed +42.4%,
    #   peft-mt0xxl-lora-a100 +13.5%, llamafactory-table-7b/lora16 -0.2%
    # |errors| sorted: 0.2, 1.9, 13.5, 30.2, 42.4 -> median 13.5%; within the 10% memory target: 2 (0.2, 1.9);
    # 90th percentile between the 4th and 5th: 30.2 + 0.6 x (42.4 - 30.2) = 37.52%.
    lora_memory = accuracy_classes()["lora/memory"]
    assert lora_memory["cases"] == 5
    assert lora_memory["median_abs_error"] == pytest.approx(0.135, abs=0.0005)
    assert lora_memory["within_target"] == 2 and lora_memory["target"] == 0.10
    assert lora_memory["p90_abs_error"] == pytest.approx(0.3752, abs=0.001)
    assert set(lora_memory["references"]) == {
        "tt-llama31-8b-lora-a6000",
        "tt-llama31-70b-lora-8xa100",
        "tt-llama32-3b-lora-packed",
        "peft-mt0xxl-lora-a100",
        "llamafactory-table-7b/lora16",
    }


def test_it_summarises_a_class_by_hand():
    # |errors| 0.02, 0.05, 0.10, 0.20, 0.30: median 0.10, 3 within 15%, p90 = 0.20 + 0.6 x 0.10 = 0.26
    summary = class_summary([0.05, -0.02, 0.2, 0.1, -0.3], 0.15)
    assert summary["cases"] == 5 and summary["within_target"] == 3
    assert summary["median_abs_error"] == pytest.approx(0.10)
    assert summary["p90_abs_error"] == pytest.approx(0.26)
    assert summary["share_within_target"] == pytest.approx(0.6)
    assert accuracy_text(summary, "LoRA fine-tunes") == (
        "within 15% on 3 of 5 published runs of LoRA fine-tunes (median error 10%)"
    )


def test_it_gives_the_count_not_a_percentage_under_five_cases():
    summary = class_summary([0.05, -0.4, 0.1], 0.15)
    assert accuracy_text(summary, "QLoRA fine-tunes") == "few published runs (3) of QLoRA fine-tunes"
    assert accuracy_text(class_summary([], 0.15), "image tier estimates") == (
        "no published runs of image tier estimates to check it against"
    )


@given(st.lists(st.floats(min_value=-10, max_value=10, allow_nan=False), min_size=1, max_size=60))
def test_its_shares_lie_in_0_1_and_its_p90_is_at_least_the_median(errors):
    summary = class_summary(errors, 0.15)
    assert 0.0 <= summary["share_within_target"] <= 1.0
    assert 0 <= summary["within_target"] <= summary["cases"] == len(errors)
    assert summary["p90_abs_error"] >= summary["median_abs_error"] >= 0.0


def test_it_uses_the_image_targets_of_the_image_validation():
    assert IMAGE_TARGETS == {"memory": MEMORY_TARGET, "throughput": SPEED_TARGET}


@pytest.mark.parametrize(
    ("document", "family"),
    [
        ({"task": "lora", "model": {"preset": "llama-3.1-8b"}}, "lora"),
        ({"task": "qlora", "model": {"preset": "llama-3.1-8b"}}, "qlora"),
        ({"task": "pretrain", "model": {"preset": "llama-3.1-8b"}}, "pretrain"),
        ({"task": "inference", "model": {"preset": "llama-3.1-8b"}}, "inference"),
        ({"task": "inference", "model": {"preset": "sdxl"}}, "image_diffusion"),
        ({"task": "inference", "model": {"preset": "yolov8n"}}, "image_detection"),
        ({"task": "inference", "model": {"preset": "vit-b-16"}}, "image_vision"),
    ],
)
def test_it_classifies_a_workload(document, family):
    assert workload_family(parse_workload_spec(document)) == family


def test_it_classifies_every_image_case_and_repeats_the_family_of_a_same_row():
    assert image_case_family("same, int4 base weights (quanto)", "image_diffusion") == "image_diffusion"
    family = None
    for case in image_cases():
        family = image_case_family(case.inputs, family)
        assert family in FAMILY_LABELS
        if "yolo" in case.key or "detr" in case.key:
            assert family == "image_detection", case.key


def test_it_looks_the_class_up_without_running_the_validation(monkeypatch):
    def refuse():
        raise AssertionError("the validation ran for a lookup")

    monkeypatch.setattr("procurement.sizing.validation.validation_rows", refuse)
    spec = parse_workload_spec({"task": "lora", "model": {"preset": "llama-3.1-8b"}})
    first = workload_accuracy(spec)
    assert first["family"] == "lora" and first["throughput"]["class"] == "lora/throughput"
    first["throughput"]["text"] = "changed"  # every call returns its own copy
    assert workload_accuracy(spec)["throughput"]["text"] != "changed"
    assert accuracy.accuracy_classes.cache_info().currsize == 1
