"""Outside audit aud51o of yolomem (Ultralytics GPU_mem read in GiB from 8.3.76): five published YOLO training logs
no test used (grepped tests/, docs/ and procurement/data for each id, path and figure), three printed at 8.3.76 or
later (the change should move them), two before (controls it must not move).

Wheels opened (PyPI, engine/trainer.py unless said), the unit: 8.2.5 line 397 `memory_reserved() / 1E9`; 8.3.75 496
`/ 1e9`; 8.3.76 496 and 8.3.78 496 `/ (2**30)`; 8.3.239 551 and 8.4.41 596 `/ 2**30`. The change's gate holds.
The cache clearing at the epoch's end, bisected here (yolomem had not: "8.3.170, the first release with the
threshold not bisected"):
  up to 8.3.86   `self._clear_memory()` every epoch (8.3.86 455), after validate(): the next bar starts clean;
  8.3.87-8.3.108 `if self._get_memory(fraction=True) > 0.9: self._clear_memory()` (8.3.87 455, 8.3.108 460);
  8.3.109-8.3.151 the same at `> 0.5` (8.3.109 460, 8.3.150 / 8.3.151 481);
  8.3.152 on     `_clear_memory(threshold=0.5)` also before validate() (8.3.152 459 / 482; 8.3.239 477 / 507;
                 8.4.41 520 / 550).
So from 8.3.87, not 8.3.170, a card under the threshold keeps the validator's blocks (batch x 2: 8.3.239 329,
8.4.41 277, 8.2.5 281) into the next epoch; epoch 1's bar precedes any validate() on every release.

Sources (find_string / read_file ids; verbatim figures):
  [FRUIT-Y8S] id 30543722530, a Turkish Colab notebook (fruits, 2 classes): 'Ultralytics 8.3.239 ... torch-2.9.0
      +cu126 CUDA:0 (Tesla T4, 15095MiB)', model=yolov8s.pt, batch=16, imgsz=640, epochs=10, optimizer=AdamW,
      close_mosaic=10 ('Closing dataloader mosaic' before epoch 1: every epoch mosaic-free), 160 train images
      (10 it an epoch), 40 val images with 120 instances. GPU_mem epochs 1-10: 3.73 4.54 4.57 4.61 4.65 4.68 4.72
      4.76 4.79 4.83G.
  [T4-Y8N] id 54958923800, a Colab notebook (1 class): 'Ultralytics 8.4.41 ... torch-2.10.0+cu128 CUDA:0 (Tesla
      T4, 14913MiB)', model=yolov8n.pt, batch=16, imgsz=640, epochs=50, optimizer=auto -> 'AdamW(lr=0.002,
      momentum=0.9)', 7,058 train images (442 it an epoch), 2,048 val images with 2,134 instances. GPU_mem epoch 1
      2.03G, epochs 2-24 2.89G every one (mosaic on throughout: close_mosaic=10 of 50).
  [V100-Y8N] id 66447892585, an HPC notebook (insect traps, 1 class): 'Ultralytics 8.3.78 ... torch-2.6.0+cu124
      CUDA:0 (Tesla V100-SXM2-32GB, 32494MiB)', model=yolov8n.pt, batch=4, imgsz=960, optimizer=auto ->
      'AdamW(lr=0.002, momentum=0.9)', 38 train images (10 it), 10 val images with 155 instances. '1/50  1.8G'
      (the run then stops in save_model: no pandas).
  [FSL-Y8L] (control) id 17371179891, a Filipino sign-language Colab notebook (48 classes): 'Ultralytics
      YOLOv8.2.5 ... torch-2.2.1+cu121 CUDA:0 (Tesla T4, 15102MiB)', model=yolov8l.pt, batch=16, imgsz=640,
      epochs=5, optimizer=auto -> AdamW, 4,430 train images (277 it), 32 val images with 32 instances. GPU_mem
      epochs 1-5: 11.2 11 11 10.9 10.9G.
  [WFACE-Y8S] (control) id 403443954, YOLO11Face's training notes: 'Ultralytics 8.3.75 ... torch-1.12.1+cu113
      CUDA:0 (NVIDIA GeForce RTX 3090, 24268MiB)', 'WARNING Upgrade to torch>=2.0.0 for deterministic training',
      model=yolov8s.pt, batch=8, imgsz=800, optimizer=auto -> SGD, WIDER FACE 12,876 train images (1,610 it),
      3,225 val images with 39,675 instances. '1/300  14.5G'.

Compared: the product's total less CUDA_CONTEXT_GIB (memory_reserved) in GB against the printed figure in GB at
its release (ultralytics_gpu_mem.gpu_mem_gb). Bar: detection memory 15%. max_objects_per_image is not in any log
(the densest label file): my bound is stated per case, with its val set's mean beside it.
"""

from __future__ import annotations

import copy
import statistics

import pytest

from procurement.api.sizing import size_spec_document
from procurement.sizing.assumptions import CUDA_CONTEXT_GIB
from tests.procurement.outside.ultralytics_gpu_mem import GIB, clears_cache_each_epoch, gpu_mem_gb

MEMORY = 0.15

FRUIT_VERSION, FRUIT_GPU_MEM = "8.3.239", [3.73, 4.54, 4.57, 4.61, 4.65, 4.68, 4.72, 4.76, 4.79, 4.83]
T4_Y8N_VERSION, T4_Y8N_EPOCH_1, T4_Y8N_EPOCHS_2_24 = "8.4.41", 2.03, 2.89
V100_VERSION, V100_EPOCH_1 = "8.3.78", 1.8
FSL_VERSION, FSL_GPU_MEM = "8.2.5", [11.2, 11.0, 11.0, 10.9, 10.9]
WFACE_VERSION, WFACE_EPOCH_1 = "8.3.75", 14.5


def _yolo(
    preset: str, batch: int, px: int, images: int, epochs: int, optimizer: str, objects: int | None
) -> dict:
    image = {"resolution_px": px, "epochs": epochs, "dataset_images": images}
    if objects is not None:
        image["max_objects_per_image"] = objects
    return {
        "task": "full_finetune",
        "model": {"preset": preset},
        "precision": "fp16",  # amp=True in every log
        "micro_batch_size": batch,
        "optimizer": optimizer,
        "image": image,
    }


# 120 instances in 40 val images (3 a image): 10 is my bound for the densest
FRUIT = _yolo("yolov8s", 16, 640, 160, 10, "adamw", 10)
# 2,134 instances in 2,048 val images (1.04 a image): 10 is my bound
T4_Y8N = _yolo("yolov8n", 16, 640, 7058, 50, "adamw", 10)
# 155 instances in 10 val images (15.5 a image): 40 is my bound
V100_Y8N = _yolo("yolov8n", 4, 960, 38, 50, "adamw", 40)
# one sign an image (32 instances in 32 val images): a mosaic of four carries four, as [COLAB-Y11N] states it
FSL = _yolo("yolov8l", 16, 640, 4430, 5, "adamw", 4)
# WIDER FACE's densest image is not in the log (39,675 faces in 3,225 val images, 12.3 a image): the default 93
WFACE = _yolo("yolov8s", 8, 800, 12876, 300, "sgd", None)
WFACE["image"]["deterministic"] = False  # torch 1.12.1: the log's own warning, no deterministic fill


def _ours_gb(spec: dict, gpu: str) -> float:
    report = size_spec_document(copy.deepcopy(spec), [gpu], calibrate=False)
    (row,) = [c for c in report["candidates"] if c["gpu"] == gpu]
    return (row["memory"]["total_per_gpu_gib"] - CUDA_CONTEXT_GIB) * GIB / 1e9


def _err(ours: float, published: float) -> float:
    return ours / published - 1.0


def test_the_gate_reads_each_log_at_its_own_release():
    """The three 8.3.76+ logs are converted (x 2**30 / 1e9 = 1.0737), the 8.2.5 and 8.3.75 controls are not:
    8.3.75 is the last wheel that divides by 1e9, so [WFACE-Y8S] sits on the gate's edge."""
    assert gpu_mem_gb(WFACE_EPOCH_1, WFACE_VERSION) == pytest.approx(14.5)
    assert gpu_mem_gb(FSL_GPU_MEM[0], FSL_VERSION) == pytest.approx(11.2)
    assert gpu_mem_gb(V100_EPOCH_1, V100_VERSION) == pytest.approx(1.8 * GIB / 1e9)
    assert gpu_mem_gb(FRUIT_GPU_MEM[0], FRUIT_VERSION) == pytest.approx(4.005, abs=1e-3)
    assert gpu_mem_gb(T4_Y8N_EPOCH_1, T4_Y8N_VERSION) == pytest.approx(2.180, abs=1e-3)


def test_the_bar_climbs_after_the_first_validation_only_where_the_cache_is_kept():
    """The published sequences, no product: epoch 1 -> epoch 2 is +0.81 GiB ([FRUIT-Y8S], 8.3.239, torch 2.9) and
    +0.86 GiB ([T4-Y8N], 8.4.41, torch 2.10) on T4s that never reach the 0.5 threshold (7.4 GiB), but -0.2 GB at
    8.2.5 ([FSL-Y8L], emptied every epoch: 8.2.5 trainer.py 442). [COLAB-Y11N] (8.3.179, torch 2.6, T4, YOLO11n)
    climbs only 0.15 GiB (2.44 -> 2.59G): the kept validator blocks are not one size across runs (not sized)."""
    assert FRUIT_GPU_MEM[1] - FRUIT_GPU_MEM[0] == pytest.approx(0.81, abs=1e-9)
    assert T4_Y8N_EPOCHS_2_24 - T4_Y8N_EPOCH_1 == pytest.approx(0.86, abs=1e-9)
    assert FSL_GPU_MEM[1] - FSL_GPU_MEM[0] == pytest.approx(-0.2, abs=1e-9)
    assert 4.83 < 0.5 * 15095 / 1024 and 2.89 < 0.5 * 14913 / 1024  # never cleared on these T4s
    # fix51o: the releases say the same (8.3.87 is the first that does not clear every epoch)
    assert clears_cache_each_epoch(FSL_VERSION) and clears_cache_each_epoch(V100_VERSION)
    assert not clears_cache_each_epoch(FRUIT_VERSION) and not clears_cache_each_epoch(T4_Y8N_VERSION)


@pytest.mark.django_db
def test_fruit_y8s_epoch_1_bar_on_a_t4(bundled_catalog):
    """[FRUIT-Y8S] epoch 1, 3.73 GiB = 4.005 GB (before any validate()). Ours 3.811 GB: -4.9% (+2.2% had the
    bar been read as GB: the unit does not decide this row)."""
    assert not clears_cache_each_epoch(FRUIT_VERSION)  # fix51o: only epoch 1's bar reads the step alone
    ours = _ours_gb(FRUIT, "t4")
    assert abs(_err(ours, gpu_mem_gb(FRUIT_GPU_MEM[0], FRUIT_VERSION))) <= MEMORY, ours


R_FRUIT_LATER = (
    "UNEXPLAINED (aud51o): [FRUIT-Y8S] median GPU_mem of epochs 2-10 4.68 GiB (8.3.239) = 5.025 GB, ours 3.811 GB "
    "(-24.2%; -18.6% read as GB). Located: 8.3.239 clears only above half the card (trainer.py 477 / 507), so from "
    "epoch 2 the pool keeps what validate() (batch 32, fp16) left; the bar jumps 0.81 GiB after the first "
    "validation and then climbs 0.03-0.04 GiB an epoch. Not sized: the validator's share is not counted by the "
    "product and no spec field says which release (or which epoch's bar) a user will see"
)


@pytest.mark.django_db
@pytest.mark.xfail(strict=True, reason=R_FRUIT_LATER)
def test_fruit_y8s_later_epochs_on_a_t4(bundled_catalog):
    ours = _ours_gb(FRUIT, "t4")
    median = statistics.median(FRUIT_GPU_MEM[1:])
    assert abs(_err(ours, gpu_mem_gb(median, FRUIT_VERSION))) <= MEMORY, ours


@pytest.mark.django_db
def test_t4_y8n_epoch_1_bar(bundled_catalog):
    """[T4-Y8N] epoch 1, 2.03 GiB = 2.180 GB. Ours 2.145 GB: -1.6% (+5.7% had it been read as GB)."""
    assert not clears_cache_each_epoch(T4_Y8N_VERSION)  # fix51o: only epoch 1's bar reads the step alone
    ours = _ours_gb(T4_Y8N, "t4")
    assert abs(_err(ours, gpu_mem_gb(T4_Y8N_EPOCH_1, T4_Y8N_VERSION))) <= MEMORY, ours


R_T4_Y8N_LATER = (
    "UNEXPLAINED (aud51o): [T4-Y8N] GPU_mem 2.89G at every epoch 2-24 (8.4.41: GiB) = 3.103 GB, ours 2.145 GB "
    "(-30.9%; -25.8% read as GB). Located as [FRUIT-Y8S]'s (8.4.41 trainer.py 520 / 550 clear only above 0.5): "
    "+0.86 GiB from the first validate() (64 batches of 32, 2,048 val images) and flat after, a reserve the "
    "product does not size; not sized (no hand count of the validator's blocks reaches 80% of it)"
)


@pytest.mark.django_db
@pytest.mark.xfail(strict=True, reason=R_T4_Y8N_LATER)
def test_t4_y8n_later_epochs(bundled_catalog):
    ours = _ours_gb(T4_Y8N, "t4")
    assert abs(_err(ours, gpu_mem_gb(T4_Y8N_EPOCHS_2_24, T4_Y8N_VERSION))) <= MEMORY, ours


R_V100 = (
    "UNEXPLAINED (aud51o): [V100-Y8N] '1/50 1.8G' at 8.3.78 (GiB; the epoch-end clear is still unconditional "
    "there, and this is epoch 1 anyway) = 1.933 GB; ours 1.352 GB at max_objects_per_image 40 (-30.0%; -24.9% "
    "read as GB; -19.6% at the default 93). Batch 4 at 960 px on a V100, 10 iterations: the unit moves it 5 "
    "points further out, the rest is not located (the densest trap image, the V100's cuDNN workspaces at batch "
    "4 and the allocator's rounding of a small step are candidates, none sized)"
)


@pytest.mark.django_db
@pytest.mark.xfail(strict=True, reason=R_V100)
def test_v100_y8n_960px_batch_4_epoch_1(bundled_catalog):
    ours = _ours_gb(V100_Y8N, "v100-sxm2-32gb")
    assert abs(_err(ours, gpu_mem_gb(V100_EPOCH_1, V100_VERSION))) <= MEMORY, ours


@pytest.mark.django_db
def test_fsl_y8l_control_at_8_2_5_stays_in_gb(bundled_catalog):
    """Control: [FSL-Y8L] 8.2.5 prints GB (trainer.py 397), so the change leaves 11.2 / median 11.0 as GB. Ours
    10.439 GB: -6.8% on epoch 1, -5.1% on the median (read as GiB, wrongly, -13.2%)."""
    assert clears_cache_each_epoch(FSL_VERSION)  # fix51o: so the later epochs' median reads the step too
    ours = _ours_gb(FSL, "t4")
    assert abs(_err(ours, gpu_mem_gb(FSL_GPU_MEM[0], FSL_VERSION))) <= MEMORY, ours
    assert abs(_err(ours, gpu_mem_gb(statistics.median(FSL_GPU_MEM), FSL_VERSION))) <= MEMORY, ours


R_WFACE = (
    "UNEXPLAINED (aud51o): control [WFACE-Y8S] '1/300 14.5G' at 8.3.75 (GB, unchanged by the change, correctly), "
    "ours 3.42 GB at the default max_objects_per_image 93 (-76%). WIDER FACE is a crowd set (12.3 faces a val "
    "image) whose densest label file the log does not give; the product reaches the figure only near 2,000 "
    "objects an image (12.5 GiB at 1,968): not located, not sized; the unit plays no part"
)


@pytest.mark.django_db
@pytest.mark.xfail(strict=True, reason=R_WFACE)
def test_wface_y8s_control_at_8_3_75(bundled_catalog):
    ours = _ours_gb(WFACE, "rtx-3090")
    assert abs(_err(ours, gpu_mem_gb(WFACE_EPOCH_1, WFACE_VERSION))) <= MEMORY, ours
