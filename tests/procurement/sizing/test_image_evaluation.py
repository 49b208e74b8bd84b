"""det47 (stop 47, issue 29, aud29's fix list item 2): `image.eval_every_epochs` / `image.eval_images`, a training
run's evaluations between epochs, priced by the inference engine on the validation images.

Source of the mechanism: facebookresearch/detr main.py (read at 04d5706a) calls `evaluate(model, criterion,
postprocessors, data_loader_val, base_ds, device, args.output_dir)` after every epoch; data_loader_val is a
DistributedSampler over COCO val2017 (5,000 images) at args.batch_size. facebookresearch/detr issue #283 (fmassa,
2020-11-09): detr-r50 'Trained on 32 GPUs, batch size 2 (per GPU), Training + eval time for 500 epochs: 85h'."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import call_command

from procurement.sizing.spec import WorkloadSpecError, parse_workload_spec

COCO_TRAIN, COCO_VAL = 118_287, 5_000
V100 = "v100-sxm2-32gb"


def _detr(gpus: int = 32, batch: int = 2, epochs: int = 500, **image) -> dict:
    return {
        "task": "full_finetune",
        "model": {"preset": "detr-r50"},
        "precision": "fp32",
        "optimizer": "adamw",
        "micro_batch_size": batch,
        "parallelism": {"gpus": gpus},
        "image": {"epochs": epochs, "dataset_images": COCO_TRAIN, **image},
    }


def _size(tmp_path, spec: dict, gpu: str) -> dict:
    path = tmp_path / "spec.json"
    path.write_text(json.dumps(spec))
    out = io.StringIO()
    call_command("size", str(path), "--gpu", gpu, "--format", "json", stdout=out)
    (candidate,) = json.loads(out.getvalue())["candidates"]
    return candidate


def test_the_parser_reads_both_fields_and_leaves_them_unset_by_default():
    image = parse_workload_spec(_detr(eval_every_epochs=2, eval_images=COCO_VAL)).image
    assert (image.eval_every_epochs, image.eval_images) == (2, COCO_VAL)
    plain = parse_workload_spec(_detr()).image
    assert (plain.eval_every_epochs, plain.eval_images) == (None, None)  # no evaluation: as before


@pytest.mark.parametrize(
    ("spec", "path"),
    [
        (_detr(eval_every_epochs=1), "image.eval_images"),  # how many validation images
        (_detr(eval_images=COCO_VAL), "image.eval_images"),  # images but no schedule
        (_detr(eval_every_epochs=0, eval_images=COCO_VAL), "image.eval_every_epochs"),
        (
            _detr() | {"image": {"train_steps": 100, "eval_every_epochs": 1, "eval_images": COCO_VAL}},
            "image.eval_every_epochs",
        ),  # counted in epochs
        (
            {
                "task": "inference",
                "model": {"preset": "detr-r50"},
                "image": {"eval_every_epochs": 1, "eval_images": COCO_VAL},
            },
            "image.eval_every_epochs",
        ),
    ],
)
def test_the_parser_refuses_an_evaluation_it_cannot_count(spec, path):
    with pytest.raises(WorkloadSpecError) as error:
        parse_workload_spec(spec)
    assert path in str(error.value.errors)


@pytest.mark.django_db
def test_the_evaluations_are_the_inference_engines_forwards_over_the_validation_images(
    bundled_catalog, tmp_path
):
    """500 evaluations of 5,000 images over 32 GPUs, each image at the inference path's seconds for the same
    network, batch and precision on the V100: 500 x 5,000 / 32 x (seconds a 2-image batch / 2)."""
    plain = _size(tmp_path, _detr(), V100)["throughput"]
    evaluated = _size(tmp_path, _detr(eval_every_epochs=1, eval_images=COCO_VAL), V100)["throughput"]
    forward = _size(
        tmp_path,
        {"task": "inference", "model": {"preset": "detr-r50"}, "precision": "fp32", "micro_batch_size": 2},
        V100,
    )["throughput"]
    per_image = forward["seconds_per_batch"] / 2
    expected_hours = 500 * COCO_VAL / 32 * per_image / 3600
    added = evaluated["training_hours"] - plain["training_hours"]
    assert added == pytest.approx(expected_hours, rel=0.01)
    # 48.71 h of training + 0.78 h of evaluation: the evaluations' forwards are not the 85 h's gap
    assert plain["training_hours"] == pytest.approx(48.71, abs=0.01)
    assert added == pytest.approx(0.78, abs=0.01)
    # every other epoch: half the passes; the step itself is untouched
    half = _size(tmp_path, _detr(eval_every_epochs=2, eval_images=COCO_VAL), V100)["throughput"]
    assert half["training_hours"] - plain["training_hours"] == pytest.approx(added / 2, rel=0.01)
    assert evaluated["step_seconds"] == plain["step_seconds"]
