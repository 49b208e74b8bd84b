"""Outside audit aud51i (stop 51) of integ's image changes: the detector trainer's fp32 EMA copy counted
(image_model.detector_ema_bytes: yolo51, det51) and diffusers-0.7's two score tensors (diffmem); issue 29's
outside practitioner on fresh YOLO training and Flux LoRA training figures. Bars: image memory 15%, speed 25%.

Sources (grepped tests/ for each source and figure first: none used before; [VRU] is used elsewhere for its
GPU_mem / speed, not for its parameter count):
  [DESK-Y8N] find_string id 12574819253 (a YOLOv8 'desk and chair' labelling portfolio README, saved Colab
      output): 'Ultralytics YOLOv8.2.103 ... torch-2.6.0+cu124 CUDA:0 (Tesla T4, 15095MiB)', model=yolov8n.pt,
      epochs=20, batch=8, imgsz=640, amp=True, optimizer=auto -> 'AdamW(lr=0.001667, momentum=0.9)', 'Using 2
      dataloader workers', 25 train images (2 classes; 14 instances in 7 val images). GPU_mem over epochs 1-20:
      1.16G-1.22G, median 1.18G.
  [POTHOLE-Y8N] find_string id 18113825918 (a pothole-detection Colab notebook, saved output): 'Ultralytics
      8.3.28 ... torch-2.5.0+cu121 CUDA:0 (Tesla T4, 15102MiB)', model=yolov8n.pt, epochs=50, batch=16,
      imgsz=640, optimizer=auto -> 'AdamW(lr=0.002, momentum=0.9)', 'Using 2 dataloader workers', 45 iterations
      an epoch (about 720 images). Epoch 1 '4.78G ... 2.30it/s'; epochs 2-16 GPU_mem 2.4G-2.46G (median 2.40G),
      2.03-2.66 it/s (median 2.52 it/s = 40.3 images/s).
  [VRU] Faryalaurooj/Vulnerable-Road-Users-Detection-Tracking README.md (find_string id 9972342036): Ultralytics
      8.0.176 training yolov8x.pt: 'Model summary: 365 layers, 68155497 parameters, 68155481 gradients'.
  [FLUX-FP8] huggingface/blog flux-qlora.md (commit 2ece681fdf41928fbaf103d702ff7af1da4352fc), section 'FP8
      Fine-tuning with torchao': H100 SXM, train_dreambooth_lora_flux.py (diffusers-torchao variant), FLUX.1-dev,
      --mixed_precision=bf16 --use_8bit_adam --height=768 --width=512 --train_batch_size=1
      --gradient_accumulation_steps=1 --gradient_checkpointing --rank=4 --max_train_steps=700
      --checkpointing_steps=600 --do_fp8_training (no --cache_latents; captions from --caption_column, so the
      text encoders stay on the GPU): 'The training run had a peak memory usage of 36.57 GB and completed in
      approximately 20 minutes'.

GPU_mem (Ultralytics) is torch.cuda.memory_reserved() / 1e9, compared with (total - cuda_context_gib) in GB as
the other detection modules do. The author's spec states only what the log states: max_objects_per_image is
left at its default (93) since neither log gives its dataset's densest image.
"""

from __future__ import annotations

import copy

import pytest

from procurement.api.sizing import size_spec_document
from procurement.sizing import image_model as im
from procurement.sizing import parse_workload_spec
from procurement.sizing.assumptions import CUDA_CONTEXT_GIB
from tests.procurement.outside.ultralytics_gpu_mem import clears_cache_each_epoch

MEMORY, SPEED = 0.15, 0.25
GIB = 2.0**30


def _size(spec: dict, gpu: str) -> dict:
    report = size_spec_document(copy.deepcopy(spec), [gpu], calibrate=False)
    return next(c for c in report["candidates"] if c["gpu"] == gpu)


def _err(ours: float, published: float) -> float:
    return ours / published - 1.0


def _reserved_gb(row: dict) -> float:
    return (row["memory"]["total_per_gpu_gib"] - CUDA_CONTEXT_GIB) * GIB / 1e9


def _yolov8n_colab(batch: int, images: int, epochs: int) -> dict:
    return {
        "task": "full_finetune",
        "model": {"preset": "yolov8n"},
        "precision": "fp16",  # amp=True
        "micro_batch_size": batch,
        "optimizer": "adamw",  # optimizer=auto chose AdamW (the log)
        "image": {"resolution_px": 640, "epochs": epochs, "dataset_images": images},
        "host": {"vcpus_per_gpu": 2},  # 'Using 2 dataloader workers' on the Colab host
    }


DESK = _yolov8n_colab(batch=8, images=25, epochs=20)
POTHOLE = _yolov8n_colab(batch=16, images=720, epochs=50)


# ---------------------------------------------------------------- the change itself: the EMA copy


def test_yolov8x_ema_copy_matches_the_logged_parameter_count():
    """[VRU] 68,155,497 parameters logged by Ultralytics 8.0.176 for yolov8x (3 classes): ModelEMA's fp32 deepcopy
    is 4 B each, 272.6 MB. The product's detector_ema_bytes (preset's 68.2M, the 80-class count) gives 272.8 MB,
    +0.07%: right in size, dtype (fp32 under AMP) and placement (rank 0 / every single-GPU run)."""
    spec = parse_workload_spec(
        {
            "task": "full_finetune",
            "model": {"preset": "yolov8x"},
            "precision": "fp16",
            "micro_batch_size": 4,
            "optimizer": "sgd",
            "image": {"resolution_px": 640, "epochs": 300, "dataset_images": 6471},
        }
    )
    ours = im.detector_ema_bytes(spec)
    assert abs(_err(ours, 4 * 68_155_497)) <= 0.002
    # inference holds no EMA; DETR's trainer keeps none (det51)
    assert (
        im.detector_ema_bytes(parse_workload_spec({"task": "inference", "model": {"preset": "yolov8x"}})) == 0
    )


# ---------------------------------------------------------------- [POTHOLE-Y8N] YOLOv8n, Colab T4, 8.3.28


@pytest.mark.django_db
def test_pothole_yolov8n_t4_gpu_mem(bundled_catalog):
    """[POTHOLE-Y8N] GPU_mem 2.40G (median of epochs 2-16; 8.3.28, like every release before 8.3.87, empties the
    cache at each epoch's end, so epoch 1's 4.78G, with the AMP check's and the first validation's blocks, is not
    a per-epoch figure). Product 2.712 GB reserved (+13.0%) at the default 93 objects; the EMA is 12.8 MB of it
    (0.5%)."""
    assert clears_cache_each_epoch("8.3.28")  # fix51o: so a later epoch's bar reads the step
    ours = _reserved_gb(_size(POTHOLE, "t4"))
    assert ours == pytest.approx(2.712, abs=0.01)
    assert abs(_err(ours, 2.40)) <= MEMORY


@pytest.mark.django_db
def test_pothole_yolov8n_t4_training_rate(bundled_catalog):
    """[POTHOLE-Y8N] median 2.52 it/s x 16 = 40.3 images/s (epochs 2-16). Product 49.28 images/s (+22.3%), loader
    bound (2 vCPUs x 24.6 images/s), as the product's other Colab T4 YOLO rows are."""
    throughput = _size(POTHOLE, "t4")["throughput"]
    assert throughput["loader_seconds"] == pytest.approx(throughput["step_seconds"], rel=0.01)
    assert abs(_err(throughput["training_images_per_second"], 2.52 * 16)) <= SPEED


# ---------------------------------------------------------------- [DESK-Y8N] YOLOv8n, Colab T4, 8.2.103, batch 8

R_DESK = (
    "UNEXPLAINED (aud51i): [DESK-Y8N] YOLOv8n batch 8 on a Colab T4 (Ultralytics 8.2.103, the version yolo51 read "
    "for the EMA): GPU_mem median 1.18G (1.16-1.22G over 20 epochs), product 1.389 GB reserved at the default "
    "max_objects_per_image 93 (+17.7%; +13.9% against the highest epoch). The EMA is not the cause (12.8 MB, "
    "1.1%). Known: the dataset is sparse (14 instances in 7 val images; the log's Instances column never shows "
    "more than 8 in a mosaic batch), and the product's assigner term scales with the stated densest image: at "
    "8 objects it reads 1.100 GB (-6.8%), at 4 1.086 GB (-8.0%), so ~0.29 GB of the 0.21 GB excess is the default "
    "density (>100% sized, by the product's own term, not by a published densest-image count: no (b) from the "
    "source, no (c) sibling). The log does not give the densest label file, so the author's spec cannot state it"
)


@pytest.mark.django_db
@pytest.mark.xfail(strict=True, reason=R_DESK)
def test_desk_yolov8n_t4_batch8_gpu_mem(bundled_catalog):
    ours = _reserved_gb(_size(DESK, "t4"))
    assert abs(_err(ours, 1.18)) <= MEMORY, ours


@pytest.mark.django_db
def test_desk_yolov8n_gpu_mem_with_a_sparse_density_stated_diagnostic(bundled_catalog):
    """Diagnostic beside R_DESK (not a published spec): stating the log's largest batch count (8) as the densest
    image lands it (1.100 GB, -6.8%): the miss above is the unstated density default, not the EMA or the
    weights part."""
    spec = copy.deepcopy(DESK)
    spec["image"]["max_objects_per_image"] = 8
    ours = _reserved_gb(_size(spec, "t4"))
    assert ours == pytest.approx(1.100, abs=0.01)
    assert abs(_err(ours, 1.18)) <= MEMORY


# ---------------------------------------------------------------- [FLUX-FP8] FLUX.1-dev LoRA on an H100 SXM

FLUX_FP8 = {
    "task": "lora",
    "model": {"preset": "flux.1-dev"},
    "precision": "fp8",  # --do_fp8_training (torchao float8 linears over bf16 weights)
    # fix51i: the blog names the library (convert_to_float8_training from torchao.float8); the spec's default
    # fp8_recipe is Transformer Engine's, which diffusers' scripts do not run
    "fp8_recipe": "torchao",
    # fix51t (aud51t): the run's recipe builds Float8LinearConfig(pad_inner_dim=True) (sayakpaul/diffusers-torchao
    # training/README.md @7042e930): 2 copy kernels a float8 mm, 84 -> 92 a linear; step 1.407 -> 1.530 s
    "fp8_pad_inner_dim": True,
    "optimizer": "adamw_8bit",  # --use_8bit_adam
    "lora": {
        "rank": 4,
        "targets": "attention",
    },  # --rank=4; the script's default targets (attention projections)
    "gradient_checkpointing": "full",
    "micro_batch_size": 1,
    # 512 x 768: the 624 px square has the same latent tokens (1,521 vs 1,536); latents not cached; text encoders
    # stay on the GPU (captions encoded each step: --caption_column)
    "image": {
        "cache_latents": False,
        "cache_text_embeddings": False,
        "resolution_px": 624,
        "train_steps": 700,
    },
}


@pytest.mark.django_db
def test_flux_fp8_lora_h100_peak_memory(bundled_catalog):
    """[FLUX-FP8] 'peak memory usage of 36.57 GB'. Product 34.60 GiB total (transformer, T5-XXL, CLIP and VAE in
    bf16 = 31.45 GiB of weights): -5.4% if the post's GB are torch's GiB, 37.15 GB = +1.6% if decimal; inside
    15% either way. torchao's float8 training keeps the bf16 weights (casts per matmul), as the product does."""
    row = _size(FLUX_FP8, "h100-sxm5-80gb")
    total = row["memory"]["total_per_gpu_gib"]
    assert total == pytest.approx(34.60, abs=0.02)
    assert abs(_err(total, 36.57)) <= MEMORY
    assert abs(_err(total * GIB / 1e9, 36.57)) <= MEMORY


# fix51i: FIXED (was UNEXPLAINED (aud51i), 0.171 s, -90.0%). The run is stated as the blog ran it (the spec was
# right on batch 1, accumulation 1, checkpointing, 768 x 512, uncached latents and captions; fp8_recipe torchao
# added). The engine already charged the per-step VAE encode and the CLIP / T5 caption encodes (94.8 TFLOP a
# step). What it missed is torchao float8 in eager mode (pytorch/ao v0.11.0 torchao/float8/float8_linear.py, no
# torch.compile in the command): 496 Float8Linears x (23 x 2 forward + 38 backward) = 41,664 extra kernels a step
# (image_model.TORCHAO_FLOAT8_*), + PEFT's 3,724 adapter kernels, at eager_kernel_host_s 31 us = 1.407 s on the
# host, which the GPU's ~0.22 s cannot hide; and matmul_with_hp_or_float8_args.backward computes grad_weight of
# the frozen base linears too (+26.2 TFLOP a step: 121.1). Product now 1.407 s vs 1.714 (-17.9%); the wall
# clock's loading and saves, not separable, would move the published per-step figure toward it.


@pytest.mark.django_db
def test_flux_fp8_lora_h100_step_time(bundled_catalog):
    ours = _size(FLUX_FP8, "h100-sxm5-80gb")["throughput"]["step_seconds"]
    # fix51t: + pad_inner_dim's 496 x 8 = 3,968 copies (aud51t): 41,664 -> 45,632 kernels, 1.407 -> 1.530 s
    assert ours == pytest.approx((45_632 + 3_724) * 31e-6, rel=0.01)  # host-bound: the kernels x 31 us
    assert abs(_err(ours, 20 * 60 / 700)) <= SPEED, ours


def test_torchao_float8_kernel_count_is_the_counted_one():
    """Hand count (pytorch/ao v0.11.0): FLUX.1-dev has 19 joint blocks x 14 linears + 38 single blocks x 6 + 3
    (x_embedder, context_embedder, proj_out) = 497, less proj_out (diffusers-torchao's module_filter_fn) = 496;
    each adds 23 forward kernels (twice under full checkpointing) and 38 backward: 496 x 84 = 41,664. bf16 (or
    fp8 under the default Transformer Engine recipe) adds none."""
    spec = parse_workload_spec(copy.deepcopy(FLUX_FP8))
    assert im.torchao_float8_linears(spec) == 19 * 14 + 38 * 6 + 3 - 1
    # fix51t: the row states pad_inner_dim (2 copies a float8 mm, 1 forward + 2 backward): 84 -> 92 a linear
    assert im.torchao_float8_training_kernels(spec) == 496 * ((23 + 2) * 2 + 38 + 2 * 2)
    bf16 = copy.deepcopy(FLUX_FP8)
    bf16["precision"] = "bf16"
    del bf16["fp8_recipe"], bf16["fp8_pad_inner_dim"]
    assert im.torchao_float8_training_kernels(parse_workload_spec(bf16)) == 0
    te = copy.deepcopy(FLUX_FP8)
    del te["fp8_recipe"], te["fp8_pad_inner_dim"]
    assert im.torchao_float8_training_kernels(parse_workload_spec(te)) == 0


@pytest.mark.django_db
def test_desk_unstated_density_is_said_in_the_answer(bundled_catalog):
    """fix51i (aud51i fix list 2): no default change without a source; the answer says what the unstated
    max_objects_per_image assumes (COCO's 93) and how much memory that holds beyond one object an image: the
    note's GiB is the engine's own total at 93 less its total at 1 (the assigner's slots, nothing else)."""
    note = im.unstated_density_note(parse_workload_spec(copy.deepcopy(DESK)))
    assert note and "max_objects_per_image" in note and "93 objects" in note
    one = copy.deepcopy(DESK)
    one["image"]["max_objects_per_image"] = 1
    gap = _size(DESK, "t4")["memory"]["total_per_gpu_gib"] - _size(one, "t4")["memory"]["total_per_gpu_gib"]
    stated = float(note.split(" GiB of this memory")[0].rsplit(" ", 1)[1])
    assert stated == pytest.approx(gap, abs=0.015)  # the total also rounds to the allocator's blocks
    assert 0.25 <= stated <= 0.30  # aud51i's diagnostic: 1.389 - 1.100 GB at 93 vs 8 objects, + 7 more slots
    assert im.unstated_density_note(parse_workload_spec(one)) is None
