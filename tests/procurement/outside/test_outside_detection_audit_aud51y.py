"""Outside audit aud51y (issue 29's outside practitioner, detection training): four published Ultralytics training
figures that no test or source under tests/ or procurement/ used before (grepped for each issue number, repository
and figure), six cases, run through `manage.py size` as their authors stated them (defaults otherwise).

Bars (reviewer rules, image workloads): memory 15%, speed 25%. GPU_mem is torch.cuda.memory_reserved() / 1e9 (the
Ultralytics trainer's progress line), compared with (total - cuda_context_gib) in GB as the other outside modules do.

Sources:
  [UZ-Y8N] uzorcic/machinelearning yolov8_train_with_gpu.py (a saved Colab notebook; commit
      26f4556c8ef47410851c7d547dee965abad991d8, read_file id 22458124633): 'Ultralytics YOLOv8.0.227 ... torch-2.1.0
      +cu121 CUDA:0 (Tesla T4, 15102MiB)', model.train(data='coco128.yaml', device=0, epochs=100, imgsz=1280),
      trainer line batch=16, amp=True, optimizer=auto -> 'AdamW(lr=0.000119, momentum=0.9)', 'Using 2 dataloader
      workers', 128 train images (8 it an epoch), validation on the same 128 every epoch. Epochs 2-23 (epoch 1
      left out: warm-up and first allocations): GPU_mem 11.3 10.3 10.8 10.7 10.3 10.8 10.4 10.8 10.9 11.1 11.0
      11.6 11.0 10.5 12.3 10.7 10.4 10.7 10.7 10.9 11.7 10.4 G (median 10.8G, range 10.3-12.3); train rate 1.32
      1.41 1.46 1.35 1.36 1.19 1.22 1.47 1.45 1.37 1.40 1.41 1.18 1.17 1.39 1.46 1.37 1.36 1.22 1.11 1.23 1.51
      it/s (median 1.365 it/s x 16 = 21.84 images/s).
  [Y11X-T4] ultralytics/ultralytics issue #19571 (ss4824, 2025-03-08), the tuner's first iteration:
      model.tune(data=dataset_path, epochs=30, iterations=5, optimizer="AdamW", ...), 'Ultralytics 8.3.35 ...
      torch-2.5.1+cu124 CUDA:0 (Tesla T4, 14918MiB)', 'YOLO11x summary (fused): 464 layers, 56,828,179
      parameters', run dir x_e5_is576_oTrue and progress lines at Size 576; batch not stated (Ultralytics'
      default 16); 'train: ... 48 images, 20 backgrounds', validation on 48 images every epoch. GPU_mem 13.1G /
      13G / 13G / 13.1G (epochs 13-16) and 13.1G at 30/30; '30 epochs completed in 0.069 hours'.
  [Y10-210] THU-MIG/yolov10 issue #210, leonnil (a YOLOv10 author), 2024-06-11: 'In our local environment with
      8*3090, each epoch of training YOLOv10-N costs ~1min54s, which is similar to that of YOLOv8-N (~1min54s).'
      The repository README's training command: 'yolo detect train data=coco.yaml model=yolov10n/s/m/b/l/x.yaml
      epochs=500 batch=256 imgsz=640 device=0,1,2,3,4,5,6,7' (32 images a GPU); COCO train2017 118,287 images;
      500 epochs -> optimizer=auto picks SGD (over 10,000 iterations). 118,287 / 114 s = 1,037.6 images/s.
  [AB-4090] ultralytics/ultralytics issue #1451 (Simzie, 2023-03-16), 'AutoBatch on nano fails memory
      allocation': 'AutoBatch: Computing optimal batch size for imgsz=480', 'CUDA:0 (NVIDIA GeForce RTX 4090)
      23.99G total' (AutoBatch divides by 1 << 30: GiB), '3011043' params (YOLOv8n at 80 classes is 3,157,200,
      so a few-class head), 'AutoBatch: Using batch-size 281 for CUDA:0 16.87G/23.99G (70%)', then
      torch.cuda.OutOfMemoryError at 0/2 iterations of the first epoch. So batch 281 at 480 px does not fit 24 GiB.
"""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import call_command

from procurement.sizing.assumptions import CUDA_CONTEXT_GIB
from procurement.sizing.verdict import FEASIBLE_VERDICTS

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


# ---------------------------------------------------------------- [UZ-Y8N] YOLOv8n, 1280 px, batch 16, Colab T4

UZ_Y8N = {
    "task": "full_finetune",
    "model": {"preset": "yolov8n"},
    "precision": "fp16",  # amp=True, 'AMP: checks passed'
    "micro_batch_size": 16,  # batch=16 (trainer line)
    "optimizer": "adamw",  # 'optimizer: AdamW(lr=0.000119, momentum=0.9)'
    # max_objects_per_image not stated by the notebook: the product's default (93)
    "image": {"resolution_px": 1280, "epochs": 100, "dataset_images": 128},
    "host": {"vcpus_per_gpu": 2},  # 'Using 2 dataloader workers' on a 2-vCPU Colab host
}


@pytest.mark.django_db
def test_yolov8n_1280px_colab_t4_gpu_mem(bundled_catalog, tmp_path):
    """[UZ-Y8N] median GPU_mem 10.8G (epochs 2-23). Product 10.65 GB reserved (-1.4%). Caveat: the same spec
    (YOLOv8n, coco128, 1280 px, batch 16, T4) is the fit row colab-yolov8n-train-1280-b16-t4 (10.8 GB,
    detector_assigner_bytes fitted on it) from another Colab notebook: this is a replication of a fit row on a
    newer stack (8.0.227, torch 2.1.0), not a held-out check of the assigner constant."""
    row = _size(tmp_path, UZ_Y8N, "t4")
    _within(_reserved_gb(row), 10.8, MEMORY)


UZ_Y8N_RATE_REASON = (
    "UNEXPLAINED (aud51y): [UZ-Y8N] YOLOv8n 1280 px batch 16 on a Colab T4 with 2 loader workers trains at a "
    "median 1.365 it/s = 21.84 images/s (epochs 2-23); the product gives 14.49 images/s (-33.6%), bound by its "
    "loader: 2 vCPUs x 7.25 images/s, mosaic_images_per_vcpu = 15.4 / (0.5 x (1280/640)^2 + 0.125) with the "
    "canvas half scaled by the output pixels (mosaic_canvas_scale, procurement/sizing/host.py). The log needs "
    "10.9 images/s a vCPU. Sized so far: coco128's 128 images fit Ultralytics' decoded-image buffer "
    "(ultralytics/data/base.py: max_buffer_length = min(n, 8 x batch, 1000) = 128), so after epoch 1 the "
    "loader decodes almost nothing; dropping the 0.125 decode term gives 2 x 15.4 / 2.0 = 15.4 images/s "
    "(-29.5%), 12% of the gap. The rest (the canvas work growing less than the 4x of its pixels, or the "
    "main process's collate on a third thread) is not sized; no sibling checked."
)


@pytest.mark.django_db
@pytest.mark.xfail(strict=True, reason=UZ_Y8N_RATE_REASON)
def test_yolov8n_1280px_colab_t4_training_rate(bundled_catalog, tmp_path):
    row = _size(tmp_path, UZ_Y8N, "t4")
    _within(row["throughput"]["training_images_per_second"], 1.365 * 16, SPEED)


# ---------------------------------------------------------------- [Y11X-T4] YOLO11x, 576 px, batch 16, T4

Y11X_T4 = {
    "task": "full_finetune",
    "model": {"preset": "yolo11x"},
    "precision": "fp16",  # 'AMP: checks passed'
    "micro_batch_size": 16,  # not stated: Ultralytics' default batch
    "optimizer": "adamw",  # optimizer="AdamW"
    "image": {
        "resolution_px": 576,
        "epochs": 30,
        "dataset_images": 48,
        "eval_every_epochs": 1,  # Ultralytics validates every epoch (val=True)
        "eval_images": 48,
    },
}


@pytest.mark.django_db
def test_yolo11x_576px_t4_gpu_mem(bundled_catalog, tmp_path):
    """[Y11X-T4] GPU_mem 13.1G (epochs 13, 16, 30; 13G at 14-15). Product 14.55 GB reserved (+11.1%), inside
    15%, and its verdict is feasible on the T4, as the run was (14918MiB card)."""
    row = _size(tmp_path, Y11X_T4, "t4")
    assert row["verdict"] in FEASIBLE_VERDICTS
    _within(_reserved_gb(row), 13.1, MEMORY)


Y11X_T4_TIME_REASON = (
    "UNEXPLAINED (aud51y): [Y11X-T4] '30 epochs completed in 0.069 hours' (8.28 s an epoch: 3 steps of 16 "
    "images and a 48-image validation) against the product's 0.0187 h (2.24 s an epoch: 1.53 s of training "
    "at 31.3 images/s, 0.72 s of validation), -72.9%. Known: at 3 steps an epoch the run is made of per-epoch "
    "fixed costs the product does not price: the trainer saves last.pt every epoch (save=True) and best.pt "
    "when fitness improves, each with the EMA (114.4 MB stripped, per the log) plus AdamW's two fp32 moments "
    "of 56.8M params (455 MB) in the full checkpoint; the validator builds its loader and runs NMS and "
    "metrics; the train loader restarts its epoch. None is sized from this log (it prints no per-phase "
    "times), so 0% of the 6.0 s gap is accounted for; no sibling checked. A COCO-sized run would not show it."
)


@pytest.mark.django_db
@pytest.mark.xfail(strict=True, reason=Y11X_T4_TIME_REASON)
def test_yolo11x_576px_t4_30_epochs_of_48_images(bundled_catalog, tmp_path):
    row = _size(tmp_path, Y11X_T4, "t4")
    _within(row["throughput"]["training_hours"], 0.069, SPEED)


# ---------------------------------------------------------------- [Y10-210] YOLOv8n on COCO, 8 x RTX 3090

Y10_210_REASON = (
    "UNEXPLAINED (aud51y): [Y10-210] YOLOv8-N on COCO train2017, 8 x RTX 3090, 32 images a GPU: ~1 min 54 s an "
    "epoch (1,037.6 images/s, 129.7 a GPU) against the product's 75.0 s (10.418 h / 500 epochs; 1,577 images/s, "
    "-34.2%), bound by its loader at the host rule's 8 vCPUs a GPU x 24.6 images/s. The author does not state "
    "the host: 129.7 / 24.6 = 5.3 vCPUs a GPU would reproduce it (e.g. a 48-thread host: Ultralytics gives each "
    "rank min(os.cpu_count() // 8, workers) = 6 workers, 147.6 images/s a GPU, still +13.8% over the log), but that "
    "host is a guess, not a fact of the source, so nothing is sized; the DDP all-reduce of 3.2M fp32 gradients "
    "(12.6 MB a step over PCIe) is too small to matter. Whether the ~1 min 54 s includes validation is not said."
)


@pytest.mark.django_db
@pytest.mark.xfail(strict=True, reason=Y10_210_REASON)
def test_yolov8n_coco_epoch_on_eight_rtx_3090s(bundled_catalog, tmp_path):
    spec = {
        "task": "full_finetune",
        "model": {"preset": "yolov8n"},
        "precision": "fp16",  # Ultralytics trains with AMP
        "micro_batch_size": 32,  # batch=256 over device=0,...,7 (README)
        "optimizer": "sgd",  # optimizer=auto over 10,000 iterations picks SGD
        "parallelism": {"gpus": 8},
        "image": {"resolution_px": 640, "epochs": 500, "dataset_images": 118_287},
    }
    row = _size(tmp_path, spec, "rtx-3090")
    epoch_seconds = row["throughput"]["training_hours"] * 3600 / 500
    _within(epoch_seconds, 114.0, SPEED)


# ---------------------------------------------------------------- [AB-4090] AutoBatch's 281 on a 24 GB RTX 4090


@pytest.mark.django_db
def test_yolov8n_480px_batch_281_does_not_fit_a_4090(bundled_catalog, tmp_path):
    """[AB-4090] AutoBatch picked 281 (predicting 16.87G from a forward/backward of the bare model, no loss, no
    optimizer) and the first step ran out of memory on 23.99 GiB. Product: 24.98 GiB at batch 281 (loss and
    assigner tensors counted), above the card, so its verdict is not feasible, as the run found; the published
    figure is a lower bound only (the need is > 23.99 GiB), so the product's +4.1% over it cannot be judged
    further. Dataset size and density not stated: 562 images (2 steps of 281, the log's '0/2') and the default
    93 objects."""
    spec = {
        "task": "full_finetune",
        "model": {"preset": "yolov8n"},
        "precision": "fp16",  # AMP default
        "micro_batch_size": 281,
        "optimizer": "sgd",  # not stated; the optimizer's state of 3.0M params is 24 MB either way
        "image": {"resolution_px": 480, "epochs": 100, "dataset_images": 562},
    }
    row = _size(tmp_path, spec, "rtx-4090")
    assert row["memory"]["total_per_gpu_gib"] > 23.99
    assert row["verdict"] not in FEASIBLE_VERDICTS
