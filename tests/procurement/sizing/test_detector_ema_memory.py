"""yolo51 (stop 51, issue 29): the Ultralytics trainer's EMA copy of the weights on the GPU that prints GPU_mem.

Source (PyPI wheels, opened): ultralytics 8.2.103 engine/trainer.py 292-300 (`if RANK in {-1, 0}: ...
self.ema = ModelEMA(self.model)`) and utils/torch_utils.py 512 (`self.ema = deepcopy(de_parallel(model)).eval()
# FP32 EMA`); the 8.0.6 wheel's yolo/engine/trainer.py 234-239 and yolo/utils/torch_utils.py 250 the same. So a
single-GPU run (RANK -1) and rank 0 of a DDP run hold a second fp32 copy of every parameter beside the AMP model's
fp32 weights: 4 B a parameter (params_published of the preset: YOLOv8s 11.2M, YOLO11x 56.9M, image_architectures.json).
"""

import pytest

from procurement.sizing import image_model as im
from procurement.sizing import parse_workload_spec
from procurement.sizing.memory import memory_breakdown_scalar

GIB = 2.0**30


def _spec(preset: str, task: str = "full_finetune", **extra) -> object:
    return parse_workload_spec({"task": task, "model": {"preset": preset}, "micro_batch_size": 16, **extra})


@pytest.mark.parametrize(("preset", "params"), [("yolov8s", 11.2e6), ("yolo11x", 56.9e6), ("yolov8n", 3.2e6)])
def test_a_yolo_training_run_holds_a_fp32_ema_copy(preset, params):
    # hand: 4 B x the published parameter count (YOLOv8s 44.8 MB, YOLO11x 227.6 MB, YOLOv8n 12.8 MB)
    assert im.detector_ema_bytes(_spec(preset)) == pytest.approx(4 * params, rel=1e-12)


def test_the_copy_is_in_the_weights_part_and_nowhere_else(monkeypatch):
    """The weights part grows by exactly the copy; gradients, optimizer states and activations do not move."""
    spec = _spec("yolo11x")
    with_ema = memory_breakdown_scalar(spec, 1)
    monkeypatch.setattr(im, "detector_ema_bytes", lambda spec: 0.0)
    without = memory_breakdown_scalar(spec, 1)
    assert with_ema["weights_gib"] - without["weights_gib"] == pytest.approx(4 * 56.9e6 / GIB, rel=1e-9)
    for part in ("gradients_gib", "optimizer_states_gib", "activations_gib"):
        assert with_ema[part] == without[part]


def test_it_is_unsharded_under_data_parallel_plans(monkeypatch):
    """ModelEMA is built on rank 0 from de_parallel(model), the whole model: with the trained weights sharded
    over 8 GPUs (zero_stage 3) the copy still adds its full 4 B a parameter to the plan's per-GPU weights (the
    largest GPU, rank 0, is the one the plan must fit), not an eighth of it."""
    spec = _spec("yolov8m", parallelism={"gpus": 8, "zero_stage": 3})
    with_ema = memory_breakdown_scalar(spec, 8)["weights_gib"]
    monkeypatch.setattr(im, "detector_ema_bytes", lambda spec: 0.0)
    without = memory_breakdown_scalar(spec, 8)["weights_gib"]
    assert with_ema - without == pytest.approx(4 * 25.9e6 / GIB, rel=1e-9)


def test_no_copy_for_inference_or_for_a_trainer_without_one():
    assert im.detector_ema_bytes(_spec("yolov8s", task="inference")) == 0.0
    assert im.detector_ema_bytes(_spec("rt-detr-r50", task="inference")) == 0.0
    # DETR's own trainer (facebookresearch/detr main.py, engine.py train_one_epoch) keeps no EMA
    assert im.detector_ema_bytes(_spec("detr-r50")) == 0.0


def test_an_rt_detr_run_holds_its_solver_s_fp32_ema_on_every_gpu(monkeypatch):
    """det51 (stop 51): RT-DETR's solver keeps one too. lyuwenyu/RT-DETR rtdetr_pytorch
    configs/rtdetr/include/optimizer.yml @a4a0c6a3 (included by rtdetr_r50vd_6x_coco.yml): `use_ema: True`,
    ModelEMA decay 0.9999; src/solver/solver.py @a4a0c6a3 BaseSolver.setup: `self.ema = cfg.ema.to(device)` on
    every rank (no rank test); src/optim/ema.py @3330eca6: `deepcopy(dist.de_parallel(model)).eval()  # FP32 EMA`.
    Hand: 4 B x 42M parameters (arXiv:2304.08069 Table 2, the preset's params_published) = 168 MB a GPU, the
    same on each of issue #7's four GPUs (plain data parallel, nothing sharded)."""
    assert im.detector_ema_bytes(_spec("rt-detr-r50")) == pytest.approx(4 * 42e6, rel=1e-12)
    spec = _spec("rt-detr-r50", micro_batch_size=4, parallelism={"gpus": 4})
    with_ema = memory_breakdown_scalar(spec, 4)
    monkeypatch.setattr(im, "detector_ema_bytes", lambda spec: 0.0)
    without = memory_breakdown_scalar(spec, 4)
    assert with_ema["weights_gib"] - without["weights_gib"] == pytest.approx(4 * 42e6 / GIB, rel=1e-9)
    for part in ("gradients_gib", "optimizer_states_gib", "activations_gib"):
        assert with_ema[part] == without[part]
