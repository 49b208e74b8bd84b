"""YOLO training memory: the layers' saved activations as counted, plus the loss temporaries as an additive
term: per image and anchor, the classification targets over the head's classes and the box distribution
(detector_score_bytes_per_class x detector_classes + detector_box_distribution_bytes, whatever the labels)
and the task-aligned assigner's part per object slot (detector_assigner_bytes x
detector_max_objects_per_image; ultralytics/utils/tal.py and loss.py)."""

import pytest

from procurement.sizing import image_model as im
from procurement.sizing import parse_workload_spec
from procurement.sizing.memory import memory_breakdown_scalar
from procurement.sizing.spec import WorkloadSpecError

GIB = 2.0**30


def _spec(preset: str = "yolov8m", batch: int = 16, **image) -> object:
    return parse_workload_spec(
        {"task": "full_finetune", "model": {"preset": preset}, "micro_batch_size": batch, "image": image}
    )


def test_it_counts_one_anchor_per_cell_of_the_three_grids():
    # Detect head over strides 8, 16, 32: 80^2 + 40^2 + 20^2 at 640 px; 88^2 + 44^2 + 22^2 at 704 px
    assert im.detector_anchors(640) == 8400
    assert im.detector_anchors(704) == 10164
    assert im.detector_anchors(1280) == 33600


def test_it_adds_the_assigner_term_to_the_counted_activations_without_a_factor():
    """YOLOv8m, batch 16, 640 px, fp16 AMP. Hand: layers 16 x saved x 2 B; loss 16 images x 8,400 anchors x
    (80 classes x 21 B + 512 B + 93 objects (COCO train2017's densest image) x 48.4 B) = 899,566,080 B =
    0.838 GiB, within 0.05% of the 72 B-per-object-slot term it replaced at COCO's 93 objects (its fit)."""
    spec = _spec()
    saved = im.network_cost("yolov8m", 640).saved
    loss = 16 * 8400 * (80 * 21 + 512 + 93 * 48.4)
    assert im.detector_loss_bytes(spec) == pytest.approx(loss, rel=1e-12)
    assert loss == pytest.approx(899_566_080, rel=1e-12)
    assert loss == pytest.approx(16 * 93 * 8400 * 72, rel=5e-4)
    activations = memory_breakdown_scalar(spec, 1)["activations_gib"]
    assert activations == pytest.approx((16 * saved * 2 + loss) / GIB, rel=1e-9)


def test_the_assigner_term_does_not_grow_with_the_network_width():
    """The loss temporaries depend on batch, objects and anchors only: n and x carry the same term, and
    their activation difference is the layers' difference alone."""
    small, large = _spec("yolov8n"), _spec("yolov8x")
    assert im.detector_loss_bytes(small) == im.detector_loss_bytes(large)
    difference = (
        memory_breakdown_scalar(large, 1)["activations_gib"]
        - memory_breakdown_scalar(small, 1)["activations_gib"]
    )
    layers = 16 * 2 * (im.network_cost("yolov8x", 640).saved - im.network_cost("yolov8n", 640).saved)
    assert difference == pytest.approx(layers / GIB, rel=1e-9)


def test_a_denser_dataset_states_its_objects_per_image():
    dense = _spec(max_objects_per_image=300)
    assert im.detector_loss_bytes(dense) == pytest.approx(16 * 8400 * (2192 + 300 * 48.4), rel=1e-12)
    assert im.detector_loss_bytes(dense) > im.detector_loss_bytes(_spec())


def test_a_sparse_dataset_keeps_the_loss_memory_that_does_not_scale_with_objects():
    """One object per image: the assigner's part shrinks to one slot, the classification targets and the
    box distribution stay (16 x 8,400 x (80 x 21 + 512) = 294.6 MB of 301.1 MB). With the old single term
    the same batch held 16 x 1 x 8,400 x 72 B = 9.7 MB."""
    sparse = im.detector_loss_bytes(_spec(max_objects_per_image=1))
    assert sparse == pytest.approx(16 * 8400 * (2192 + 48.4), rel=1e-12)
    assert sparse == pytest.approx(301_109_760, rel=1e-12)
    assert sparse > 0.3 * im.detector_loss_bytes(_spec())


def test_detector_inference_carries_no_loss_term():
    spec = parse_workload_spec({"task": "inference", "model": {"preset": "yolov8m"}})
    assert im.detector_loss_bytes(spec) == 0.0


@pytest.mark.parametrize(
    ("spec", "field"),
    [
        (
            {"task": "inference", "model": {"preset": "sdxl"}, "image": {"max_objects_per_image": 50}},
            "image.max_objects_per_image",
        ),
        (
            {"task": "full_finetune", "model": {"preset": "yolov8n"}, "image": {"max_objects_per_image": 0}},
            "image.max_objects_per_image",
        ),
    ],
)
def test_it_refuses_objects_per_image_where_it_means_nothing(spec, field):
    with pytest.raises(WorkloadSpecError, match=field.replace(".", r"\.")):
        parse_workload_spec(spec)
