"""Outside audit aud48d (stop 48) of det48b: dense-dataset YOLO training memory, sized as a user would.

det48b stated image.max_objects_per_image = 892 for the [VRU] YOLOv8x 2080 SUPER row (VisDrone2019-DET-train's
densest image in the five merged VRU classes) and relabelled it FIXED. These cases are other published
Ultralytics GPU_mem figures on the same public dataset (VisDrone2019-DET, all ten classes, the rows
ultralytics/cfg/datasets/VisDrone.yaml keeps), each sized with the field stated from the same label files:
VisDrone2019-DET-train's densest image, 0000059_01886_d_0000114, carries 902 score-1 boxes over the ten classes
(counted by aud48d over the 6,471 files at saisriteja/DetectTech@c854c920 labels/, 343,205 boxes; none of the
four 'duplicate labels removed' warnings both logs print is for that image). None of these figures is used by
another test (the [L4-Y11] notebook's speed row is, in test_outside_image_workloads_6.py; its GPU_mem rows are not).

Units: Ultralytics' GPU_mem is torch.cuda.memory_reserved() / 1e9 (to 8.3.75: [L4-Y11]; / 2**30 from 8.3.76: [4070L-Y11M],
read through ultralytics_gpu_mem.py, yolomem) at the epoch's last batch (ultralytics engine/trainer.py):
compared with the product's total less cuda_context_gib, in GB. Target: memory within 15% (detection).
What the pool holds then depends on the release (fix51o, from aud51o's bisection; ultralytics_gpu_mem.
clears_cache_each_epoch): up to 8.3.86 every reading follows torch.cuda.empty_cache() at the previous epoch's end
([L4-Y11], 8.3.75); from 8.3.87 the cache is emptied only above 90% of the card, from 8.3.109 above 50%, and
from 8.3.152 also before validate(), so a later epoch's bar can carry the validator's cached blocks unless the
pool crosses the threshold ([4070L-Y11M], 8.3.170: see its row).

Sources:
  [4070L-Y11M] a training script's saved log in the public GitHub index (find_string id 5685207749; project
      path /home/tdelorenzi/1_yolo/.../visdrone.py): 'Ultralytics 8.3.170 ... torch-2.7.1+cu128 CUDA:0 (NVIDIA
      GeForce RTX 4070 Laptop GPU, 7806MiB)', model=yolo11m.pt, data=VisDrone.yaml, batch=4, imgsz=640,
      amp=True, close_mosaic=10, 'optimizer: SGD(lr=0.01, momentum=0.9)', 'train: ... 6471 images';
      '99/100  3.8G ... 1618/1618' and '100/100  3.8G ... 1618/1618' (the closed-mosaic epochs: every train
      image whole, once an epoch).
  [L4-Y11] a Colab notebook in the public index (find_string id 62465390008), 'Ultralytics 8.3.75 ...
      torch-2.5.1+cu124 CUDA:0 (NVIDIA L4, 22693MiB)', model=yolo11n.pt, data=VisDrone.yaml, batch=16,
      imgsz=640, SGD, 405 batches an epoch. GPU_mem rows read (verbatim, G): epochs 1-25: 9.68 7.24 10.5 7.37
      9.42 8.92 6.91 5.95 7.87 8.15 9.48 9.46 8.21 8.86 7.96 7.23 11.2 8.45 7.78 8.21 6.98 8.31 10.6 8.59 7.14;
      epochs 82-90: 8.63 9.08 7.17 9.37 10.8 10.1 7.12 9.79 8.71 (mosaic on; median of the 34: 8.52);
      'Closing dataloader mosaic', epochs 91-100: 4.89 6.25 10.2 9.62 8.72 6.21 8.91 7.68 7.31 9.08 (median 8.20).
"""

from __future__ import annotations

import io
import json
import statistics

import pytest
from django.core.management import call_command

from procurement.sizing import parse_workload_spec
from procurement.sizing.assumptions import CUDA_CONTEXT_GIB
from procurement.sizing.memory import memory_breakdown_scalar
from tests.procurement.outside.ultralytics_gpu_mem import clears_cache_each_epoch, gpu_mem_gb

GIB = 2.0**30
MEMORY = 0.15

# VisDrone2019-DET-train's densest image over the ten classes (aud48d count, see the module docstring).
VISDRONE_MAX_OBJECTS_PER_IMAGE = 902

L4_MOSAIC_EPOCHS_GB = [
    9.68,
    7.24,
    10.5,
    7.37,
    9.42,
    8.92,
    6.91,
    5.95,
    7.87,
    8.15,
    9.48,
    9.46,
    8.21,
    8.86,
    7.96,
    7.23,
    11.2,
    8.45,
    7.78,
    8.21,
    6.98,
    8.31,
    10.6,
    8.59,
    7.14,  # epochs 1-25
    8.63,
    9.08,
    7.17,
    9.37,
    10.8,
    10.1,
    7.12,
    9.79,
    8.71,  # epochs 82-90
]
L4_CLOSED_MOSAIC_EPOCHS_GB = [4.89, 6.25, 10.2, 9.62, 8.72, 6.21, 8.91, 7.68, 7.31, 9.08]  # epochs 91-100


def _within(estimate: float, published: float, target: float) -> None:
    error = estimate / published - 1.0
    assert abs(error) <= target, f"{estimate:.4g} vs {published} ({error:+.1%})"


def _reserved_gb(total_gib: float) -> float:
    return (total_gib - CUDA_CONTEXT_GIB) * GIB / 1e9


def _visdrone(preset: str, batch: int) -> dict:
    return {
        "task": "full_finetune",
        "model": {"preset": preset},
        "precision": "fp16",
        "micro_batch_size": batch,
        "optimizer": "sgd",
        "image": {
            "resolution_px": 640,
            "epochs": 100,
            "dataset_images": 6471,
            "max_objects_per_image": VISDRONE_MAX_OBJECTS_PER_IMAGE,
        },
    }


def _size_l4(tmp_path, spec: dict) -> float:
    path = tmp_path / "spec.json"
    path.write_text(json.dumps(spec))
    out = io.StringIO()
    call_command("size", str(path), "--gpu", "l4", "--format", "json", stdout=out)
    (row,) = json.loads(out.getvalue())["candidates"]
    return _reserved_gb(row["memory"]["total_per_gpu_gib"])


def test_yolo11m_visdrone_batch_4_memory_on_an_rtx_4070_laptop():
    """[4070L-Y11M] GPU_mem 3.8G at epochs 99 and 100 (YOLO11m, batch 4, VisDrone, closed mosaic).
    Product 3.85 GB (+1.2%) with image.max_objects_per_image 902; 2.47 GB (-35.1%) at the default 93.
    Not stated: VisDrone's 10 classes (no spec field; the engine's 80 add 4 x 8,400 x 70 x 21 B = 0.05 GB, ~1%).
    The RTX 4070 Laptop GPU is not in the catalog: the engine's memory call, as for the [VRU] card.
    yolomem (stop 52): 8.3.170 prints GiB (engine/trainer.py 526, memory / 2**30; ultralytics_gpu_mem.py), so
    3.8G is 4.08 GB and the product reads -5.6%, not +1.2%: still inside.
    fix51o: epochs 99 / 100 are later-epoch bars at a release that no longer empties the cache every epoch, but
    8.3.170 empties it before validate() and at the epoch's end whenever the pool is above half the card
    (_clear_memory(0.5), trainer.py 459 / 482): half of the laptop's 7,806 MiB is 3.81 GiB and the bar reads 3.8,
    at the threshold, so a pool above it is emptied before each validate() and each epoch's end, cached blocks
    cannot pile up past it, and the 50% clearing caps the reading (3.8 of 7.62 GiB), unlike [COLAB-Y11N]'s T4
    at 2.6 of 14.7 GiB. Not sized: how much of the 3.8 is validation's carry-over the log does not say."""
    assert not clears_cache_each_epoch("8.3.170")
    half_card_gib = 0.5 * 7806 / 1024
    assert half_card_gib == pytest.approx(3.81, abs=0.005) and abs(3.8 - half_card_gib) < 0.02
    memory = memory_breakdown_scalar(parse_workload_spec(_visdrone("yolo11m", 4)), 1)
    _within(_reserved_gb(memory["total_per_gpu_gib"]), gpu_mem_gb(3.8, "8.3.170"), MEMORY)


@pytest.mark.django_db
def test_yolo11n_visdrone_batch_16_memory_on_an_l4_median_mosaic_epoch(bundled_catalog, tmp_path):
    """[L4-Y11] median GPU_mem of the 34 mosaic-epoch rows read, 8.52 G (range 5.95-11.2). Product 8.43 GB
    (-1.1%) with image.max_objects_per_image 902; 2.90 GB (-66%) at the default 93."""
    published = statistics.median(L4_MOSAIC_EPOCHS_GB)
    assert published == pytest.approx(8.52)
    _within(_size_l4(tmp_path, _visdrone("yolo11n", 16)), published, MEMORY)


@pytest.mark.django_db
def test_yolo11n_visdrone_batch_16_memory_on_an_l4_closed_mosaic(bundled_catalog, tmp_path):
    """[L4-Y11] median GPU_mem of epochs 91-100 (mosaic closed: each image whole, the 902-box one in every
    epoch), 8.20 G (range 4.89-10.2). Product 8.43 GB (+2.7%)."""
    published = statistics.median(L4_CLOSED_MOSAIC_EPOCHS_GB)
    assert published == pytest.approx(8.20)
    _within(_size_l4(tmp_path, _visdrone("yolo11n", 16)), published, MEMORY)


@pytest.mark.xfail(
    strict=True,
    reason="UNEXPLAINED: [L4-Y11] the run's highest GPU_mem row read, 11.2 G (epoch 17), vs product 8.43 GB "
    "(-24.8%) at image.max_objects_per_image 902. The product lands on the median epoch (8.52 G, -1.1%) but GPU_mem "
    "moves 5.95-11.2 G from epoch to epoch on the same data (-30% / +31% about the median), and the object count "
    "does not carry all of it: with the mosaic closed (epochs 91-100, every image whole, at most 902 boxes in any "
    "one) the rows still run 4.89-10.2 G, and at the engine's 48.4 B a slot 10.2 G would need ~1,160 boxes in one "
    "image. Ruled out: validation (GPU_mem is printed at the last training batch, before the epoch's validate(); "
    "trainer.py empties the cache at each epoch's end). Lead: the caching allocator's fragmentation from each "
    "batch's differently sized (16 x n_max_boxes x 8,400) assigner blocks, which depends on the order of the "
    "batches' n_max_boxes in the epoch (no published figure sizes it), and the augmented mosaic's box count "
    "(aud48d's re-simulation of 8.0.176's Mosaic + RandomPerspective reproduces the log's 'Instances' column, "
    "544 per 7-image last batch published vs 562 simulated). No spec field states a peak epoch. fix48d: the answer "
    "now says so (its memory assumptions carry image_model.dense_detector_peak_note above 93 objects: a typical "
    "epoch, the peak 1.31x the median here); the estimate, and this gap, are unchanged. detmem (stop 49): the "
    "lead's mechanism checked at the run's version (ultralytics 8.3.75 wheel: trainer.py 413 / 495 GPU_mem = "
    "memory_reserved() at every batch, 455 / 498-506 gc.collect + empty_cache unconditionally at each epoch's end; "
    "loss.py 189 pads to counts.max(); torch_utils.py 481-486 cudnn.benchmark commented out and, deterministic=True "
    "as the log prints, cudnn.deterministic with a 4 x 8 MiB cuBLAS workspace: no autotuning workspace) and "
    "replayed through the caching allocator's rules (test_detector_allocator_order.py): the same 405 batches' "
    "counts in six orders reserve 10.6-14.0 GB, densest-first only the one-step peak, so the order alone spreads "
    "an epoch's reading by the log's order of magnitude. Not sized: the per-batch padded counts are not logged and "
    "the replay's counts are illustrative, so no held-out figure puts the peak inside 15% (the same log's other "
    "epochs are a bracket of this row, not (b)); charging a peak factor would move the passing median case "
    "(test_yolo11n_visdrone_batch_16_memory_on_an_l4_median_mosaic_epoch, -1.1%) out. Still UNEXPLAINED; best lead: a replay of 8.3.75's "
    "per-batch allocations (a recorded YOLO11n step, as data/record_unet_allocations.py records the UNet) over "
    "the VisDrone mosaic counts aud48d simulated, giving the distribution of 34 epochs' maxima.",
)
@pytest.mark.django_db
def test_yolo11n_visdrone_batch_16_peak_epoch_memory_on_an_l4(bundled_catalog, tmp_path):
    """[L4-Y11] '17/100  11.2G ... 405/405', the highest GPU_mem row of the 44 read. A user sizing a card for the
    run needs the peak; the product gives a typical epoch."""
    _within(_size_l4(tmp_path, _visdrone("yolo11n", 16)), max(L4_MOSAIC_EPOCHS_GB), MEMORY)


def test_vru_row_still_lands_at_the_simulated_median_densest_mosaic():
    """Audit check of det48b's FIXED (not a new case): what Ultralytics pads the assigner to is the densest
    augmented mosaic of the batch (v8DetectionLoss.preprocess: out = torch.zeros(batch_size, counts.max(), 5)),
    and [VRU]'s 5.64G is epoch 176 of 300, a mosaic epoch (close_mosaic=10). aud48d's re-simulation of
    ultralytics 8.0.176's Mosaic (4 images, partners from the 32-image buffer) and RandomPerspective (scale
    0.5-1.5, box_candidates' 2-pixel floor, which drops most of 0000059_01886_d_0000114's 3-5 px pedestrians below
    scale 1: 36 of 892 survive at 0.5, 695 at 1.0) over the VRU labels puts one epoch's densest mosaic at 267-974
    boxes over 100 simulated epochs (median ~620; 28 below 412, the case's floor). At the median the row still
    lands (5.15 GB, -8.6%): the mechanism carries the FIXED, 892 is an upper bound, not the epoch's count."""
    spec = {
        "task": "full_finetune",
        "model": {"preset": "yolov8x"},
        "micro_batch_size": 4,
        "image": {"epochs": 176, "dataset_images": 6471, "max_objects_per_image": 620},
    }
    memory = memory_breakdown_scalar(parse_workload_spec(spec), 1)
    _within(_reserved_gb(memory["total_per_gpu_gib"]), 5.64, MEMORY)


@pytest.mark.django_db
def test_the_l4_answer_says_it_sizes_a_typical_epoch_not_the_peak(bundled_catalog, tmp_path):
    """fix48d (aud48d's item 5): the peak epoch above stays a strict xfail, but the answer a user reads for this
    run says the product sizes a typical epoch and how far [L4-Y11]'s peak read above its median (11.2 / 8.52)."""
    path = tmp_path / "spec.json"
    path.write_text(json.dumps(_visdrone("yolo11n", 16)))
    out = io.StringIO()
    call_command("size", str(path), "--gpu", "l4", "--format", "json", stdout=out)
    notes = json.loads(out.getvalue())["workload"]["memory_assumptions"]
    (note,) = [text for text in notes if text.startswith("dense detection")]
    ratio = max(L4_MOSAIC_EPOCHS_GB) / statistics.median(L4_MOSAIC_EPOCHS_GB)
    assert f"{ratio:.2f}x the median" in note and "typical epoch" in note
