"""Outside audit of fill44 (stop 44): a YOLO practitioner's check of the detector GEMM fill and five published
detection training measurements that no other test uses (grepped tests/ for each source before use).

Hand checks of the change itself (no database):
  * YOLO11m's forward FLOPs recounted from ultralytics/ultralytics@0a2ae50b ultralytics/cfg/models/11/yolo11.yaml
    (scale m: [0.50, 1.00, 512]; parse_model gives every C3k2 of the m/l/x scales C3k blocks) with my own module
    arithmetic, against the Ultralytics docs table's 68.0 GFLOPs (the preset's gflops_at_reference).
  * Wave fill of two YOLO11m convolutions on an RTX 3090 (82 SMs) at 128 x 128 tiles, by hand.

Published cases (tolerances from docs/reviewer notes: detection memory 15%, speed 25%):
  [DETR-PAPER] Carion et al. 2020, 'End-to-End Object Detection with Transformers' (arXiv:2005.12872), section 4
      'Technical details', repeated in the facebook/detr-resnet-50 model card's 'Training' section: 'Training the
      baseline model for 300 epochs on 16 V100 GPUs takes 3 days, with 4 images per GPU (hence a total batch size
      of 64).' DETR R50, fp32 (the repo has no AMP), AdamW. 3 days = 72 h.
  [DEF-DETR] fundamentalvision/Deformable-DETR README.md (commit 024a085cda01002f5cd9c2c0ae2ca6cfbb76770a), 'Main
      Results' table, row 'DETR': 500 epochs, 'Total Train Time (GPU hours)' 2000, 'Train Speed (GPU hours /epoch)'
      4.0; note 2: 'Training and inference speed are measured on NVIDIA Tesla V100 GPU'.
  [RF-Y11S] roboflow/notebooks notebooks/train-yolo11-object-detection-on-custom-dataset.ipynb (commit
      d778fc83e7a7e94dd3799019b9d7681811a6a7c6, 2024-09-30), saved Colab output: 'Ultralytics 8.3.0 ... torch-2.4.1
      +cu121 CUDA:0 (Tesla T4, 15102MiB)', 'yolo task=detect mode=train model=yolo11s.pt ... epochs=10 imgsz=640',
      batch=16, deterministic=True, amp=True, optimizer=auto, close_mosaic=10 (so 'Closing dataloader mosaic' from
      epoch 1), 'Using 2 dataloader workers' (the Colab host's 2 vCPUs), 911 train images (57 it an epoch), about 16
      boxes an image (246 instances in the last batch of 15). Epochs 2-10: 2.71-2.80 it/s (median 2.74 = 43.8
      images/s), GPU_mem 4.38-4.41G (median 4.40G); '10 epochs completed in 0.073 hours'.
  [RF-Y8S] the same repository's notebooks/train-yolov8-object-detection-on-custom-dataset.ipynb (commit
      d1a4863d850859dfb241628510f3f10692928e75), saved Colab output: 'Ultralytics YOLOv8.0.9 ... torch-1.13.1+cu116
      CUDA:0 (Tesla T4, 15110MiB)', 'model=yolov8s.pt ... epochs=25 imgsz=800', batch=16, optimizer=SGD,
      deterministic=True (torch 1.13 has no fill of fresh allocations: torch.utils.deterministic
      .fill_uninitialized_memory arrived in 2.1), football-players-detection-1 (612 train images, 905 boxes in 38
      val images: about 24 an image, so a mosaic of four carries up to about 100). GPU_mem 7.61G in epochs 1-2,
      10.9G from epoch 4 to 25; the notebook's earlier run (commit 73ab71d1bdd70b012c4ef1a6f56a83222f3b48fc,
      Ultralytics 8.0.2, torch 1.13.0) shows the same 7.61G -> 9.25G -> 10.9G.

GPU_mem is torch.cuda.memory_reserved() / 1e9, compared with (total - cuda_context_gib) in GB as the other outside
modules do.
"""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import call_command

from procurement.sizing import image_model as im
from procurement.sizing.assumptions import CUDA_CONTEXT_GIB

MEMORY, SPEED = 0.15, 0.25
GIB = 2.0**30


def _size(tmp_path, spec: dict, gpu: str) -> dict:
    path = tmp_path / "spec.json"
    path.write_text(json.dumps(spec))
    out = io.StringIO()
    call_command("size", str(path), "--gpu", gpu, "--format", "json", stdout=out)
    (candidate,) = json.loads(out.getvalue())["candidates"]
    return candidate


def _within(estimate: float, published: float, target: float) -> None:
    error = estimate / published - 1.0
    assert abs(error) <= target, f"{estimate:.4g} vs {published} ({error:+.1%})"


def _reserved_gb(row: dict) -> float:
    return (row["memory"]["total_per_gpu_gib"] - CUDA_CONTEXT_GIB) * GIB / 1e9


# ---------------------------------------------------------------- hand checks of fill44


def _macs(c_in: int, c_out: int, k: int, positions: int, groups: int = 1) -> int:
    return c_in // groups * c_out * k * k * positions


def _c3k2_c3k(c_in: int, c_out: int, e: float, positions: int) -> int:
    """Ultralytics C3k2(c_in, c_out, n=1, c3k=True, e): cv1 1x1 to 2c, one C3k(c, c) (two 1x1 halves to c/2,
    two Bottleneck(c/2, c/2, e=1.0) of two 3x3 each, 1x1 from c back to c), cv2 1x1 from 3c to c_out."""
    c = int(c_out * e)
    h = c // 2
    c3k = 2 * _macs(c, h, 1, positions) + 4 * _macs(h, h, 3, positions) + _macs(2 * h, c, 1, positions)
    return _macs(c_in, 2 * c, 1, positions) + c3k + _macs(3 * c, c_out, 1, positions)


def test_yolo11m_forward_flops_recounted_by_hand_from_the_yaml():
    """My own count of yolo11.yaml at scale m (depth 0.5 -> one repeat, width 1.0, channels capped at 512) at 640
    px. Maps: P1 320^2, P2 160^2, P3 80^2, P4 40^2, P5 20^2. The total, 67.98 GFLOPs of convolutions (C2PSA's
    two attention matmuls, 4 heads x 400^2 x (32 + 64) MACs = 0.12 GFLOPs, 0.2%, left out as fill44 does; its
    docstring's 'about 1%' overstates them), is the docs' 68.0 (the yaml's own comment, unfused, says 68.5).
    fill44's walk (image_shapes.yolo_convs) gives the same 67.98, so its layer shapes are the yaml's. (My first
    count took layer 16's input as 768 channels; layer 4 outputs 512, so concat(512 up, 512) = 1,024, as the
    walk has it.)"""
    p1, p2, p3, p4, p5 = 320**2, 160**2, 80**2, 40**2, 20**2
    backbone = (
        _macs(3, 64, 3, p1)
        + _macs(64, 128, 3, p2)
        + _c3k2_c3k(128, 256, 0.25, p2)
        + _macs(256, 256, 3, p3)
        + _c3k2_c3k(256, 512, 0.25, p3)
        + _macs(512, 512, 3, p4)
        + _c3k2_c3k(512, 512, 0.5, p4)
        + _macs(512, 512, 3, p5)
        + _c3k2_c3k(512, 512, 0.5, p5)
        + _macs(512, 256, 1, p5)  # SPPF cv1
        + _macs(1024, 512, 1, p5)  # SPPF cv2
        # C2PSA(512): cv1 512 -> 512, one PSABlock on 256 (qkv 256 -> 512, proj, 3x3 depthwise pe, FFN 256 -> 512
        # -> 256), cv2 512 -> 512
        + _macs(512, 512, 1, p5)
        + _macs(256, 512, 1, p5)
        + _macs(256, 256, 1, p5)
        + _macs(256, 256, 3, p5, groups=256)
        + _macs(256, 512, 1, p5)
        + _macs(512, 256, 1, p5)
        + _macs(512, 512, 1, p5)
    )
    head = (
        _c3k2_c3k(1024, 512, 0.5, p4)  # layer 13: concat(P5 up, P4)
        + _c3k2_c3k(1024, 256, 0.5, p3)  # layer 16: concat(13 up, layer 4's 512)
        + _macs(256, 256, 3, p4)
        + _c3k2_c3k(768, 512, 0.5, p4)  # layer 19
        + _macs(512, 512, 3, p5)
        + _c3k2_c3k(1024, 512, 0.5, p5)  # layer 22
    )
    detect = 0
    for ch, pos in ((256, p3), (512, p4), (512, p5)):  # box branch to 64, class branch to max(256, 80) = 256
        detect += _macs(ch, 64, 3, pos) + _macs(64, 64, 3, pos) + _macs(64, 64, 1, pos)
        detect += _macs(ch, ch, 3, pos, groups=ch) + _macs(ch, 256, 1, pos)
        detect += _macs(256, 256, 3, pos, groups=256) + _macs(256, 256, 1, pos) + _macs(256, 80, 1, pos)
    gflops = 2 * (backbone + head + detect) / 1e9
    assert gflops == pytest.approx(68.0, rel=0.003)
    from procurement.sizing.image_presets import image_preset
    from procurement.sizing.image_shapes import yolo_convs

    walked = 2 * sum(c.macs for c in yolo_convs(image_preset("yolo11m")["detector"], 640)) / 1e9
    assert walked == pytest.approx(gflops, rel=0.0005)


def test_yolo11m_wave_fill_of_two_layers_by_hand_on_a_3090():
    """128 x 128 tiles, 82 SMs. Layer 7 (Conv 512 -> 512, 3x3, stride 2, to P5's 400 positions): forward rows =
    batch x 400; batch 8: ceil(3,200 / 128) = 25 x 4 = 100 tiles, 2 waves, 100 / 164 = 0.610; batch 25: 79 x 4 =
    316 tiles, 4 waves, 316 / 328 = 0.963. Its input gradient (rows = batch x 1,600 input positions, 512 columns):
    batch 8 100 x 4 = 400 tiles, 5 waves, 400 / 410 = 0.976; batch 25 313 x 4 = 1,252, 16 waves, 0.954. With the
    weight gradient taken full, the layer's step fill is 3 / (1/0.610 + 1/0.976 + 1) = 0.819 at batch 8 and 0.972
    at 25. Layer 1 (Conv 64 -> 128 at P2, 25,600 positions): batch 8 forward 1,600 tiles in 20 waves, 0.976;
    input gradient 6,400 tiles (64 columns in one 128-wide tile: the half-empty tile is NOT counted as a loss) in
    79 waves, 0.988. Whole step (the product's): 0.897 at batch 8, 0.984 at 25."""
    assert im.gemm_fill(8 * 400, 512, 82) == pytest.approx(100 / 164)
    assert im.gemm_fill(25 * 400, 512, 82) == pytest.approx(316 / 328)
    assert im.gemm_fill(8 * 1600, 512, 82) == pytest.approx(400 / 410)
    assert im.gemm_fill(25 * 1600, 512, 82) == pytest.approx(1252 / 1312)
    assert im.gemm_fill(8 * 25600, 128, 82) == pytest.approx(1600 / 1640)
    assert im.gemm_fill(8 * 102400, 64, 82) == pytest.approx(6400 / 6478)
    layer8 = 3 / (164 / 100 + 410 / 400 + 1)
    layer25 = 3 / (328 / 316 + 1312 / 1252 + 1)
    assert (layer8, layer25) == pytest.approx((0.819, 0.972), abs=0.001)


# ---------------------------------------------------------------- [DETR-PAPER] / [DEF-DETR] DETR R50 on V100s


def _detr(gpus: int) -> dict:
    return {
        "task": "full_finetune",
        "model": {"preset": "detr-r50"},
        "precision": "fp32",  # facebookresearch/detr trains in fp32 (no AMP in main.py)
        "optimizer": "adamw",
        "micro_batch_size": 4,  # 'with 4 images per GPU'
        "parallelism": {"gpus": gpus},
        "image": {"epochs": 300, "dataset_images": 118_287},
    }


@pytest.mark.django_db
def test_detr_r50_300_epochs_on_16_v100s_in_three_days(bundled_catalog, tmp_path):
    """[DETR-PAPER] 300 epochs, 16 V100s x 4 images: 72 h. Product 58.45 h (-18.8%), inside 25% and on the same
    side as the 8-GPU README case (test_outside_image_workloads_3.py, -16.5%): DETR keeps the YOLO fits'
    ceiling and mean fill (no layer walk), and neither the padded batch's extra pixels nor the CPU Hungarian
    matcher is timed. The paper does not say 16 or 32 GB; the speed is the same on either part."""
    row = _size(tmp_path, _detr(16), "v100-sxm2-32gb")
    _within(row["throughput"]["training_hours"], 3 * 24, SPEED)


@pytest.mark.django_db
def test_detr_r50_gpu_hours_per_epoch_on_v100s(bundled_catalog, tmp_path):
    """[DEF-DETR] 4.0 V100 GPU-hours an epoch (2,000 for 500 epochs). Product at 16 x 4 images: 58.45 h x 16 / 300
    = 3.12 GPU-hours an epoch (-22.1%), inside 25%; the README does not state DETR's per-GPU batch (its own models
    use a total of 32), and the product's per-GPU rate depends on the 4 images a GPU only."""
    row = _size(tmp_path, _detr(16), "v100-sxm2-32gb")
    per_epoch = row["throughput"]["training_hours"] * 16 / 300
    _within(per_epoch, 2000 / 500, SPEED)


# ---------------------------------------------------------------- [RF-Y11S] YOLO11s on a Colab T4


RF_Y11S = {
    "task": "full_finetune",
    "model": {"preset": "yolo11s"},
    "precision": "fp16",  # amp=True
    "micro_batch_size": 16,
    "optimizer": "adamw",  # optimizer=auto: AdamW for a 10-epoch run (under 10,000 iterations)
    # about 16 boxes an image (mosaic closed for all ten epochs); 30 is my bound for the densest image (15 -> 60
    # moves memory 4.18 -> 4.49 GB, all inside 15%)
    "image": {"resolution_px": 640, "epochs": 10, "dataset_images": 911, "max_objects_per_image": 30},
    "host": {"vcpus_per_gpu": 2},  # 'Using 2 dataloader workers' on a 2-vCPU Colab host
}


@pytest.mark.django_db
def test_yolo11s_colab_t4_training_rate(bundled_catalog, tmp_path):
    """[RF-Y11S] 43.8 images/s (median 2.74 it/s x 16, epochs 2-10). Product 49.28 (+12.5%), bound by its loader
    (2 vCPUs x 24.6 images/s; its GPU side alone is 93.8 images/s on the T4's 40 SMs, fill near 1), as the two
    other Colab T4 logs (22.5 and 23.1 images/s a vCPU) were. Mosaic was closed for the whole run, which the
    loader term (a mosaic sample's canvas) does not distinguish; its rate is still within 13%."""
    row = _size(tmp_path, RF_Y11S, "t4")
    throughput = row["throughput"]
    assert throughput["loader_seconds"] == pytest.approx(throughput["step_seconds"], rel=0.01)
    _within(throughput["training_images_per_second"], 2.74 * 16, SPEED)


@pytest.mark.django_db
def test_yolo11s_colab_t4_gpu_mem(bundled_catalog, tmp_path):
    """[RF-Y11S] GPU_mem 4.40G (epochs 2-10). Product 4.29 GB reserved (-2.5%)."""
    row = _size(tmp_path, RF_Y11S, "t4")
    _within(_reserved_gb(row), 4.40, MEMORY)


# ---------------------------------------------------------------- [RF-Y8S] YOLOv8s at 800 px on a Colab T4


RF_Y8S_MEMORY_REASON = (
    "UNEXPLAINED (withdrawn by audx48b: (b) fails: the counted 8.0.x assigner (104 B a slot) reaches -24.9% to"
    " -20.2% against 10.9G, outside 15%; the last 2.2-2.7 GB is sized only by this log's own climb, and the reason"
    " itself says fragmentation and the densest batch 'either fits the climb, no log separates them', so no proof"
    " excludes a one-step need; its ~27 boxes a frame is reasoning, not a published count; (a) read at 8.0.6 /"
    " 8.0.35, not 8.0.9): "
    "EXPLAINED: [RF-Y8S] YOLOv8s, batch 16, 800 px on a Colab T4 (Ultralytics 8.0.9, torch 1.13.1): published"
    " GPU_mem 10.9G (epochs 4-25; 7.61G in epochs 1-2, 9.25G in epoch 3) vs product 6.73 GB reserved at "
    "max_objects_per_image 100 (-38.2%; 6.69 GB, -38.6%, before yolo51 counted the trainer's fp32 EMA copy, "
    "+44.8 MB). det45 (stop 45): 8.0.9 is not on PyPI; the wheels on either side of "
    "it, 8.0.6 (built 2023-01-14) and 8.0.35 (2023-02-11), were opened. (1) Their trainer empties the CUDA "
    "cache only after the last epoch (yolo/engine/trainer.py: one torch.cuda.empty_cache(), after "
    "final_eval), where 8.0.60 (2023-04-03: 'clears GPU vRAM at end of epoch') and every later wheel opened "
    "(8.0.90, 8.0.105, 8.0.114, 8.0.170, 8.0.176, 8.0.227, 8.1.47) also empty it at each epoch's end. So at "
    "this version GPU_mem (memory_reserved / 1e9, the same trainer line) is the whole run's high-water mark, "
    "every earlier batch's and validation pass's cached blocks kept: the log's own 7.61G (epochs 1-2) -> "
    "9.25G -> 10.9G (epoch 4 on) at one spec, repeated to the digit by the seeded 8.0.2 run (torch 1.13.0), "
    "is that climb. No single estimate of this spec is within 15% of both readings (7.61 x 1.15 = 8.75 < 10.9"
    " x 0.85 = 9.27); the product sizes one step's reserve as the later wheels report it, and its 6.69 GB "
    "against the one-epoch 7.61G is -12.1%. (2) Their assigner is heavier a slot: select_topk_candidates "
    "builds F.one_hot(topk_idxs, num_anchors), a (batch, n_max_boxes, topk 10, anchors) int64 tensor (pytorch"
    " aten/src/ATen/native/Onehot.cpp: at::zeros(shape, self.options()) then scatter_), and its int64 "
    ".sum(-2), beside align_metric, overlaps, mask_in_gts and their product (fp32): 80 + 8 + 16 = 104 B a "
    "slot, where the fit rows' code (8.0.105 on: an int8 scatter_add_) peaks at select_candidates_in_gts (the"
    " 36 B that detector_assigner_bytes counts). Counted in the engine (104 B plus the fit's 12.4 B of "
    "allocator reserve over its counted 36, or 104 x 48.4 / 36): 8.19-8.70 GB at 100 slots (+7.6% to +14.4% "
    "against 7.61G, -24.9% to -20.2% against 10.9G). One step reaches 10.9G only at about 175-205 slots, more"
    " than four frames carry (a pitch holds 22 players, the officials and a ball: about 27 boxes a frame), so"
    " the last 2.2-2.7 GB is (1)'s accumulation, sized by the log itself (+3.29 GB from epoch 2 to 4) and "
    "otherwise unsized (allocator fragmentation as the 1-2 GB assigner tensor changes size every batch, or the "
    "densest batch: either fits the climb, no log separates them). The reading is a run-long maximum: epochs "
    "16-25, after 'Closing dataloader mosaic' (close_mosaic 10; 90-95 instances in the last batch, 1.13-1.30 "
    "it/s against 1.8-1.9 s/it with mosaic), still read 10.9G (roboflow/notebooks@d1a4863), which a per-epoch "
    "reading of lighter batches could not. The same spec's epoch 1 (the only reading from an empty cache, like "
    "for like with later versions' per-epoch figures) is checked by "
    "test_yolov8s_800px_colab_t4_first_epoch_gpu_mem: 7.61G, product -12.1%, passing. A first-epoch figure is "
    "version-bound too: the pre-release notebook (roboflow/notebooks@037a0e9, 'Ultralytics YOLO 0.0.59', torch "
    "1.13.0, same spec and 612 images) reads 11.9G already at epoch 1 (aud45b's strict xfail "
    "test_yolov8s_800px_t4_first_epoch_on_the_pre_release, -43.8%). What a spec would "
    "need: the Ultralytics version (no field; with it the engine could count (2), +1.5 to +2.0 GB here) and, "
    "for (1), the allocator's history, which none can state. This stack is a year older than both fit rows (8.0.227, "
    "8.1.47). Earlier (e44): 'Diagnosis not established: the first month of YOLOv8 (an early "
    "TaskAlignedAssigner whose 2023 code I could not read at that commit), the reserved memory climbing over "
    "three epochs as batches with more boxes arrive; UNEXPLAINED (not a fill44 regression: fill44 does not "
    "touch memory)'; 5.89 GB at 25 objects (-46%). detmem (stop 49): fragmentation alone can carry a climb at "
    "fixed batch contents (test_detector_allocator_order.py: the caching allocator's rules, the same per-batch "
    "counts in another order, reserve 1.9-2.6x one step's peak, densest-first exactly one step), so the climb does "
    "not need a denser batch; but its size follows the order of the run's padded counts, which neither the log nor "
    "a published label set of this 612-image dataset gives: not (b), still UNEXPLAINED. cudnn autotuning "
    "workspaces ruled out at 8.0.x (init_seeds keeps cudnn.benchmark commented out)."
)


@pytest.mark.django_db
@pytest.mark.xfail(strict=True, reason=RF_Y8S_MEMORY_REASON)
def test_yolov8s_800px_colab_t4_gpu_mem(bundled_catalog, tmp_path):
    spec = {
        "task": "full_finetune",
        "model": {"preset": "yolov8s"},
        "precision": "fp16",  # Ultralytics 8.0.x trains with AMP on CUDA
        "micro_batch_size": 16,
        "optimizer": "sgd",  # optimizer=SGD (the log)
        # about 24 players a frame; a mosaic of four frames carries up to about 100 (the product's best case)
        "image": {
            "resolution_px": 800,
            "epochs": 25,
            "dataset_images": 612,
            "max_objects_per_image": 100,
            "deterministic": False,  # torch 1.13: no fill of fresh allocations
        },
        "host": {"vcpus_per_gpu": 2},
    }
    row = _size(tmp_path, spec, "t4")
    _within(_reserved_gb(row), 10.9, MEMORY)


# fixb45 (aud45b's note): the like-for-like reading of the same run. Ultralytics 8.0.2 (roboflow/notebooks@73ab71d1,
# 2023-01-10, torch 1.13.0) and 8.0.9 (roboflow/notebooks@d1a4863, torch 1.13.1), notebooks/train-yolov8-object-
# detection-on-custom-dataset.ipynb, saved Colab output on a Tesla T4: '1/25 7.61G ... 800: 100% 39/39' in both.
RF_Y8S_SPEC = {
    "task": "full_finetune",
    "model": {"preset": "yolov8s"},
    "precision": "fp16",
    "micro_batch_size": 16,
    "optimizer": "sgd",
    "image": {
        "resolution_px": 800,
        "epochs": 25,
        "dataset_images": 612,
        "max_objects_per_image": 100,
        "deterministic": False,
    },
    "host": {"vcpus_per_gpu": 2},
}


@pytest.mark.django_db
def test_yolov8s_800px_colab_t4_first_epoch_gpu_mem(bundled_catalog, tmp_path):
    """[RF-Y8S] epoch 1 of the same run: GPU_mem 7.61G on Ultralytics 8.0.2 (roboflow/notebooks@73ab71d1) and 8.0.9
    (roboflow/notebooks@d1a4863), the same to the digit. At these versions the trainer empties the CUDA cache only
    after final_eval (8.0.6 / 8.0.35 wheels' yolo/engine/trainer.py), so GPU_mem (memory_reserved / 1e9) climbs
    over the run (7.61 -> 9.25 -> 10.9G, the xfail above); epoch 1 is its only reading from an empty cache, the
    high-water of one epoch's 39 steps, like for like with the per-epoch figures of 8.0.60 and later (which empty
    the cache at each epoch's end). Pinned to 8.0.2 / 8.0.9: a first-epoch reading is version-bound too (the
    pre-release 0.0.59 reads 11.9G at epoch 1: test_outside_explanations_audit_stop45b.py). Product 6.73 GB reserved
    at 100 objects (-11.5%), within 15% (yolo51, stop 51: 6.69 -> 6.73 GB, -12.1% -> -11.5%, the trainer's fp32 EMA
    copy now counted, image_model.detector_ema_bytes: 11.2M parameters x 4 B = 44.8 MB; ModelEMA is built on rank 0
    at this version too, the 8.0.6 wheel's yolo/engine/trainer.py 234-239); the engine sizes the later assigner (36 B a slot), so this row is not a
    check of 8.0.x's heavier one (+1.4 to +1.9 GB in aud45b's recount, which would read +6.7..+13.1%)."""
    ours = _reserved_gb(_size(tmp_path, RF_Y8S_SPEC, "t4"))
    assert ours == pytest.approx(6.73, abs=0.01)
    assert ours / 7.61 - 1 == pytest.approx(-0.115, abs=0.001)
    _within(ours, 7.61, MEMORY)
