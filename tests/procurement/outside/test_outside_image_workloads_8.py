"""An eighth outside practitioner's image cases for issue 29 (review x29h): ViT inference on three GeForce
generations, FLUX.1-dev 4-bit generation on an RTX 4090, SD 1.5 and SDXL LoRA training on an H100,
YOLOv8m training at 1024 px on a T4, and a ranking of
1,000 SDXL images judged by hand. None of these measurements is used by test_outside_image_workloads.py,
_2.py ... _7.py, image_workload_cases.json, procurement/sizing or docs/validation.md (grepped for the files, the
find_string ids and the figures).

Each case is the spec a practitioner would write for the published run, sized as a user sizes it
(`manage.py size FILE --gpu SLUG --format json`, `manage.py recommend FILE --format json` on the bundled catalog)
and compared with the published figure. Targets from the issue: memory within 15%, speed within 25%. A case the
product misses is a strict xfail whose reason carries the published figure, the product's, the gap and my
diagnosis.

Sources:
  [TIMM] huggingface/pytorch-image-models, timm's benchmark.py inference CSVs (AMP fp16 autocast, NCHW, eager, the
      batch built once on the GPU, no loader), columns model, infer_img_size, infer_samples_per_sec,
      infer_step_time, infer_batch_size:
        results/benchmark-infer-amp-nchw-pt240-cu124-rtx3090.csv @5c33776aa59f0f05bfb8008ff546ed4c09083f1a
          (PyTorch 2.4, RTX 3090): vit_base_patch16_224,224,1570.66,651.945,1024;
          vit_large_patch16_224,224,486.7,2103.941,1024.
        results/benchmark-infer-amp-nchw-pt291-cu128-4090.csv @90cae8c5ab83d2d7e23b1fb2bab1559bfdcbc7e9
          (PyTorch 2.9.1, RTX 4090): vit_large_patch16_224,224,954.12,1073.209,1024.
        results/benchmark-infer-amp-nchw-pt291-cu130-5090.csv @90cae8c5ab83d2d7e23b1fb2bab1559bfdcbc7e9
          (PyTorch 2.9.1, RTX 5090): vit_base_patch16_224,224,3915.56,261.5,1024;
          vit_large_patch16_224,224,1108.08,924.089,1024.
      (Round 3 used the pt240 RTX 4090 file and the pt112 3090 training file; these are other files.)
  [FLUX-4090] huggingface/diffusers docs/source/en/optimization/speed-memory-optims.md
      @58eb52c0803ea9af3abec60841c2a093bdf1f951, the table of "optimization strategy combinations ... for Flux",
      "benchmarked on Flux with a RTX 4090. The transformer and text_encoder components are quantized"; the page's
      code quantizes with bitsandbytes nf4 (bnb_4bit_compute_dtype bf16, components_to_quantize=["transformer",
      "text_encoder_2"]) and calls the pipeline with its defaults (FLUX.1-dev: 1024 x 1024, 28 steps, guidance
      distilled, max_sequence_length 512, batch 1):
        quantization: 32.602 s, 14.9453 GB; quantization + torch.compile: 25.847 s, 14.9448 GB;
        quantization + torch.compile + model CPU offloading: 32.312 s, 12.2369 GB.
      The memory column's counter is not stated on the page (the linked gist is not in reach); I compare with the
      product's total less its CUDA context and take the stricter of GiB and GB.
  [ST-SWEEP] bghira/SimpleTuner documentation/experimental/SEGMENTED_CHECKPOINTING.md
      @6a43fd4889932c11ba1fd502f44e038895522f84, 'Benchmarks': "Measured with real SimpleTuner examples on
      single-GPU H100 and L40S pods. Validation and checkpoint saves were disabled, cache preparation was
      excluded"; each cell "post-warmup sec/step / peak VRAM GiB". The examples' configs
      (simpletuner/examples/<name>/config.json at the same commit): mixed_precision bf16, optimizer adamw_bf16
      (bf16 states), train_batch_size 1, VAE latents and text embeddings cached
      (multidatabackend-small-dreambooth-{512,1024}px.json: square crops), mode 'none' = no checkpointing,
      'layer' = per-block checkpointing.
        SD 1.x, sd1x-dreamshaper.peft-lora (Lykon/dreamshaper-8, an SD 1.5 fine-tune), PEFT LoRA rank 16,
          512 px, bf16 rows: none 0.181 / 2.87 (H100), 0.176 / 2.83 (L40S); layer 0.305 / 1.98, 0.292 / 1.93.
        SDXL, sdxl.lycoris-lokr (LyCORIS LoKr, bypass mode, factor 12, on the Attention modules), 1024 px,
          bf16 rows: none 0.606 / 13.03 (H100), 0.585 / 12.98 (L40S); layer 1.080 / 6.53, 1.029 / 6.48.
      The counter behind 'peak VRAM GiB' is not named; I compare with the product's total less its CUDA
      context (torch's allocated peak). A LoKr of factor 12 on SDXL's attention projections holds about
      in x out / 144 weights a layer, a rank-8 LoRA's order: I size it as `lora: {rank: 8}` on attention.
  [T4-Y8M] a Colab training log in the public index (find_string id 62571532763; futsal-cv): 'Ultralytics
      YOLOv8.1.0 ... torch-2.11.0+cu128 CUDA:0 (Tesla T4, 14913MiB)', model=yolov8m.pt, batch=8, imgsz=1024,
      workers=8, optimizer=auto -> 'AdamW(lr=0.00125, momentum=0.9)', amp=True, deterministic=True, mosaic=1.0,
      mixup=0.15, 1,024 train images (128 it an epoch), 73 val images with 815 instances (11 an image), nc=4.
      Epochs 1-21: GPU_mem 8.36-8.94G (median 8.59G); epochs 2-21 at 1.36-1.38 it/s (median 1.37 = 10.96
      images/s). The host's vCPUs are not printed (a Colab T4 runtime has 2).
  [T4-Y8N] the same repository's YOLOv8n run on the same pipeline (find_string id 62588975953;
      Farisifakhri/futsal-cv .agents/hasil_eval_yolov8n_v1.md @ffbe25f8, saved beside the YOLOv8m log of [T4-Y8M]
      as .agents/hasil_eval_yolov8m_v1.md): 'Ultralytics YOLOv8.1.0 ... torch-2.11.0+cu128 CUDA:0 (Tesla T4,
      14913MiB)', model=yolov8n.pt, batch=16, imgsz=640, workers=8, mosaic=1.0, mixup=0.15, deterministic=True,
      the same 1,024 train images after the same CLAHE and offline-augmentation steps (64 it an epoch).
      Epochs 2-40 (mosaic on, as in [T4-Y8M]): 2.68-3.10 it/s, median 2.89 = 46.24 images/s; epochs 41-50
      (close_mosaic: mosaic and mixup off) 3.04-3.39, median 3.245 = 51.9 images/s.
"""

from __future__ import annotations

import io
import json
from decimal import Decimal

import pytest
from django.core.management import call_command

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


def _recommend(tmp_path, spec: dict, top: int) -> list[dict]:
    path = tmp_path / "workload.json"
    path.write_text(json.dumps(spec))
    out = io.StringIO()
    call_command("recommend", str(path), "--top", str(top), "--format", "json", stdout=out)
    return json.loads(out.getvalue())["results"]


def _within(estimate: float, published: float, target: float) -> None:
    error = estimate / published - 1.0
    assert abs(error) <= target, f"{estimate:.4g} vs {published} ({error:+.1%})"


def _allocated_gib(row: dict) -> float:
    return row["memory"]["total_per_gpu_gib"] - CUDA_CONTEXT_GIB


def _reserved_gb(row: dict) -> float:
    return _allocated_gib(row) * GIB / 1e9


# ---------------------------------------------------------------- [TIMM] ViT inference, batch 1024, AMP, eager


def _vit(preset: str) -> dict:
    return {
        "task": "inference",
        "model": {"preset": preset},
        "precision": "fp16",
        "micro_batch_size": 1024,
    }


@pytest.mark.django_db
# Was a strict xfail: 1,570.66 published, product 1,172.4 (-25.4%), the GEMMs at vision_peak_efficiency 0.745.
# Now 1,338.2 (-14.8%) because that ceiling was fitted on timm's pt112 3090 training row with the row's eager
# attention (PyTorch 1.12, timm 0.6.6: no SDPA) left out of the step's passes, so it priced SDPA runs at the
# eager stack's rate (the same 3090's timm inference rows: pt113 eager ViT-B 1,209, pt210 SDPA 1,568 images/s).
# Stated as it ran, the row fits geforce_vision_peak_efficiency (0.886) for GeForce cards, whose fp16 figure is
# the half-rate fp32-accumulate peak at the rated boost, the same basis on the 3090, 4090 and 5090 (e29).
def test_vit_b16_inference_on_an_rtx_3090(bundled_catalog, tmp_path):
    """[TIMM] pt240 3090: vit_base_patch16_224 batch 1024, 1570.66 images/s."""
    row = _size(tmp_path, _vit("vit-b-16"), "rtx-3090")
    _within(row["throughput"]["images_per_second"], 1570.66, SPEED)


@pytest.mark.django_db
# Was a strict xfail: 486.7 published, product 353.2 (-27.4%), the GEMMs at vision_peak_efficiency 0.745. Now
# 406.3 (-16.5%) because that ceiling was fitted on timm's pt112 3090 training row with the row's eager
# attention (PyTorch 1.12, timm 0.6.6: no SDPA) left out of the step's passes, so it priced SDPA runs at the
# eager stack's rate (the same 3090's timm inference rows: pt113 eager ViT-B 1,209, pt210 SDPA 1,568 images/s).
# Stated as it ran, the row fits geforce_vision_peak_efficiency (0.886) for GeForce cards, whose fp16 figure is
# the half-rate fp32-accumulate peak at the rated boost, the same basis on the 3090, 4090 and 5090 (e29).
def test_vit_l16_inference_on_an_rtx_3090(bundled_catalog, tmp_path):
    """[TIMM] pt240 3090: vit_large_patch16_224 batch 1024, 486.7 images/s."""
    row = _size(tmp_path, _vit("vit-l-16"), "rtx-3090")
    _within(row["throughput"]["images_per_second"], 486.7, SPEED)


@pytest.mark.django_db
# Was a strict xfail: 954.12 published, product 681.1 (-28.6%), the GEMMs at vision_peak_efficiency 0.745. Now
# 763.9 (-19.9%) because that ceiling was fitted on timm's pt112 3090 training row with the row's eager
# attention (PyTorch 1.12, timm 0.6.6: no SDPA) left out of the step's passes, so it priced SDPA runs at the
# eager stack's rate (the same 3090's timm inference rows: pt113 eager ViT-B 1,209, pt210 SDPA 1,568 images/s).
# Stated as it ran, the row fits geforce_vision_peak_efficiency (0.886) for GeForce cards, whose fp16 figure is
# the half-rate fp32-accumulate peak at the rated boost, the same basis on the 3090, 4090 and 5090 (e29).
def test_vit_l16_inference_on_an_rtx_4090(bundled_catalog, tmp_path):
    """[TIMM] pt291 4090: vit_large_patch16_224 batch 1024, 954.12 images/s."""
    row = _size(tmp_path, _vit("vit-l-16"), "rtx-4090")
    _within(row["throughput"]["images_per_second"], 954.12, SPEED)


@pytest.mark.django_db
def test_vit_b16_inference_on_an_rtx_5090(bundled_catalog, tmp_path):
    """[TIMM] pt291 5090: vit_base_patch16_224 batch 1024, 3915.56 images/s; product 3,087.5 (-21.1%), 3,471.4
    (-11.3%) since e29 (geforce_vision_peak_efficiency: the 5090's peak is on the 3090's basis, not another)."""
    row = _size(tmp_path, _vit("vit-b-16"), "rtx-5090")
    _within(row["throughput"]["images_per_second"], 3915.56, SPEED)


@pytest.mark.django_db
def test_vit_l16_inference_on_an_rtx_5090(bundled_catalog, tmp_path):
    """[TIMM] pt291 5090: vit_large_patch16_224 batch 1024, 1108.08 images/s; product 950.0 (-14.3%), 1,078.6
    (-2.7%) since e29 (geforce_vision_peak_efficiency)."""
    row = _size(tmp_path, _vit("vit-l-16"), "rtx-5090")
    _within(row["throughput"]["images_per_second"], 1108.08, SPEED)


# ---------------------------------------------------------------- [FLUX-4090] FLUX.1-dev, bnb nf4, RTX 4090


def _flux_nf4(**image) -> dict:
    return {
        "task": "inference",
        "model": {"preset": "flux.1-dev"},
        "precision": "bf16",
        "weight_quantization": "nf4",
        # components_to_quantize=["transformer", "text_encoder_2"]: the T5 is 4-bit too.
        "image": {"quantize_text_encoders": True, **image},
    }


FLUX_SPEED_REASON = (
    "FLUX.1-dev nf4 on an RTX 4090: published {published} s an image, product {product} s ({error}). The "
    "product counts 2,098 TFLOP an image (28 steps x 4,608 tokens) and runs them at 135 TFLOPS, 81% of the "
    "4090's 165.2 dense bf16 TFLOPS; the published time is 64 TFLOPS (39%){compile}. Cause: the 4090's row in "
    "procurement/data/measured_efficiency.csv (rtx-4090, diffusion, fp16, 1.011) is a card/A100 ratio taken "
    "from SD 1.5 UNet steps at batch 16 under torch.compile (diffusers torch2.0.md: 3.84 vs 3.83 it/s) and is "
    "applied to every diffusion network on the card, a 12B DiT in bf16 with nf4 weights included (capped only "
    "by image_card_ceiling at 100% of the peak). A card without such a row shows the difference: the same "
    "spec gives the RTX 5090 20.5 s (49% of its 209.5 TFLOPS), so the product ranks a 4090 ahead of a 5090 for "
    "FLUX. bitsandbytes' per-call dequantization of each nf4 weight (the H100 in the HF quantization blog hid "
    "it: nf4 as fast as bf16 there) is not counted either. --no-calibration gives the same figure (the row is "
    "not a calibration). A user sizing 4090s for FLUX serving would buy half the cards needed."
)


@pytest.mark.django_db
# Was a strict xfail: 15.58 s vs 32.602 (-52.2%), the 4090's SD 1.5 UNet row (1.011) applied to a 12B DiT and
# bitsandbytes' per-call dequantization uncounted. Now 27.84 s (-14.6%): the GeForce rows are task unet
# (UNets only; FLUX takes image_peak_efficiency) and each forward unpacks every nf4 weight to bf16
# (image_model.NF4_DEQUANTIZE_WEIGHT_BYTES, 2.5 B a weight) (img29d).
def test_flux_nf4_latency_on_an_rtx_4090(bundled_catalog, tmp_path):
    """[FLUX-4090] 'quantization': 32.602 s."""
    row = _size(tmp_path, _flux_nf4(), "rtx-4090")
    _within(row["throughput"]["seconds_per_batch"], 32.602, SPEED)


@pytest.mark.django_db
# Was a strict xfail: 13.02 s vs 25.847 (-49.6%), the 4090's SD 1.5 UNet row (1.011) applied to a 12B DiT and
# bitsandbytes' per-call dequantization uncounted. Now 24.10 s (-6.8%): the GeForce rows are task unet
# (UNets only; FLUX takes image_peak_efficiency) and each forward unpacks every nf4 weight to bf16
# (image_model.NF4_DEQUANTIZE_WEIGHT_BYTES, 2.5 B a weight) (img29d).
def test_flux_nf4_compiled_latency_on_an_rtx_4090(bundled_catalog, tmp_path):
    """[FLUX-4090] 'quantization, torch.compile': 25.847 s."""
    row = _size(tmp_path, _flux_nf4(fused_kernels=True), "rtx-4090")
    _within(row["throughput"]["seconds_per_batch"], 25.847, SPEED)


@pytest.mark.django_db
def test_flux_nf4_memory_on_an_rtx_4090(bundled_catalog, tmp_path):
    """[FLUX-4090] 'quantization': 14.9453 GB. Product 15.139 GiB total, 14.539 less the CUDA context: -2.7%
    if the page's GB are GiB (torch's max_memory_allocated / 1024**3, as diffusers' docs print it), +4.5% if
    they are 1e9 bytes. Both inside 15%; the test takes GiB."""
    row = _size(tmp_path, _flux_nf4(), "rtx-4090")
    _within(_allocated_gib(row), 14.9453, MEMORY)
    _within(_reserved_gb(row), 14.9453, MEMORY)


@pytest.mark.django_db
# Was a strict xfail: 8.40 GiB (-31.3%) with image.text_encoder_offload standing in for enable_model_cpu_offload.
# Now stated as the run ran: 11.72 GiB of weights (-4.2%; 12.59 GB, +2.9%, if the page's GB are 1e9 bytes). The
# page's script (the code above the table, at the cited commit) loads the whole pipeline with `.to("cuda")` and
# only then calls enable_model_cpu_offload(), so the run's peak counter covers the moment every component (nf4
# transformer, nf4 T5, CLIP, VAE) is resident: the draft of the same table (huggingface/diffusers@e09afc0d
# docs/source/en/optimization/speed-memory-optims.md, 2025-06-16) has a fourth row, 'quantization,
# torch.compile, group offloading | 60.235 | 12.2369', leaf-level group offloading of all four components, the
# same 12.2369 to the fourth decimal: a figure no offload strategy moves is the load state, not the offloaded
# denoising. The product's load state is its weights with nothing offloaded (the spec as loaded). Left: the
# offloaded denoising's own, lower peak, which the product does not size (no model-offload field).
def test_flux_nf4_model_offload_memory_on_an_rtx_4090(bundled_catalog, tmp_path):
    """[FLUX-4090] 'quantization, torch.compile, model CPU offloading': 12.2369 GB."""
    row = _size(tmp_path, _flux_nf4(fused_kernels=True), "rtx-4090")
    _within(row["memory"]["weights_gib"], 12.2369, MEMORY)
    _within(row["memory"]["weights_gib"] * GIB / 1e9, 12.2369, MEMORY)


# ---------------------------------------------------------------- [ST-SWEEP] SD 1.5 / SDXL LoRA training, H100


def _simpletuner_lora(preset: str, rank: int, resolution: int, checkpointing: str) -> dict:
    return {
        "task": "lora",
        "model": {"preset": preset},
        "precision": "bf16",
        "optimizer": "adamw",
        "master_weights_fp32": False,  # adamw_bf16: bf16 weights and states
        "micro_batch_size": 1,
        "lora": {"rank": rank},  # targets: attention (the product's image default, SimpleTuner's too)
        "gradient_checkpointing": checkpointing,
        "image": {"resolution_px": resolution, "cache_latents": True, "train_steps": 100},
    }


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("preset", "rank", "resolution", "checkpointing", "published_gib"),
    [
        # product 2.54 GiB (-11.5%)
        pytest.param("sd-1.5", 16, 512, "none", 2.87, id="sd15-none"),
        # product 1.85 GiB (-6.6%)
        pytest.param("sd-1.5", 16, 512, "full", 1.98, id="sd15-layer"),
        # product 11.65 GiB (-10.6%)
        pytest.param("sdxl", 8, 1024, "none", 13.03, id="sdxl-none"),
        # product 5.64 GiB (-13.6%): inside, at the edge; the weights (4.80 GiB) are most of it
        pytest.param("sdxl", 8, 1024, "full", 6.53, id="sdxl-layer"),
    ],
)
def test_lora_training_peak_on_an_h100(
    bundled_catalog, tmp_path, preset, rank, resolution, checkpointing, published_gib
):
    """[ST-SWEEP] peak VRAM GiB, H100 column (the L40S column is within 0.05 GiB of it, as the product's is
    the same on both cards). All four land 7-14% low, the same side: SimpleTuner's own buffers beyond the
    network (the cached batch, the huber/MSE loss temporaries, PEFT's/LyCORIS's dropout and scaling copies)."""
    row = _size(tmp_path, _simpletuner_lora(preset, rank, resolution, checkpointing), "h100-sxm5-80gb")
    _within(_allocated_gib(row), published_gib, MEMORY)


ST_SPEED_REASON = (
    "SimpleTuner {name} LoRA at batch 1 on an H100: published {published} s a step, product {product} s "
    "({error}). Both sides say the step is host-bound: the sweep's L40S column is within 4% of the H100's "
    "(0.176 / 0.585 s) on a card with 37% of its peak, and the product gives the same time on both (its "
    "eager floor: the network's forward kernels x 3 passes x 31 us). The product's floor leaves out what the "
    "trainer launches beyond the frozen network: the adapter branches (docstring of "
    "training_eager_seconds_per_image: 'the LoRA branches add more' is absorbed in the x3) and the optimizer "
    "step ('Left out: ... the optimizer step'). My count of those: {adapters} adapted attention linears x ~12 "
    "kernels (forward and backward of PEFT/LyCORIS's down, up, scale and add) and a per-tensor bf16 AdamW over "
    "{tensors} adapter tensors x ~10 kernels, {extra} s at 31 us a kernel, which brings the product to "
    "{corrected} s. A batch-1 LoRA trainer on any fast card is sized {factor} too fast; the cheap-card "
    "ranking that follows (H100 and L40S at the same time) is right for the wrong reason."
)


@pytest.mark.django_db
# Was a strict xfail: 0.092 s a step vs 0.181 (-49%), the adapters' kernels and the optimizer step left out of the
# host floor. Now 0.187 s (+3.5%): 10 kernels an adapted layer at eager_kernel_host_s and adamw_bf16's
# 31 ops a tensor at optimizer_op_host_s (image_model.lora_training_kernels, optimizer_host_seconds)
# (img29d).
def test_sd15_lora_step_on_an_h100(bundled_catalog, tmp_path):
    """[ST-SWEEP] SD 1.x bf16 none, H100: 0.181 s a step."""
    row = _size(tmp_path, _simpletuner_lora("sd-1.5", 16, 512, "none"), "h100-sxm5-80gb")
    _within(1.0 / row["throughput"]["training_images_per_second"], 0.181, SPEED)


@pytest.mark.django_db
# Was a strict xfail: 0.199 s a step vs 0.606 (-67%), the adapters' kernels and the optimizer step left out of the
# host floor. Now 0.615 s (+1.6%): 10 kernels an adapted layer at eager_kernel_host_s and adamw_bf16's
# 31 ops a tensor at optimizer_op_host_s (image_model.lora_training_kernels, optimizer_host_seconds)
# (img29d).
def test_sdxl_lora_step_on_an_h100(bundled_catalog, tmp_path):
    """[ST-SWEEP] SDXL bf16 none, H100: 0.606 s a step."""
    row = _size(tmp_path, _simpletuner_lora("sdxl", 8, 1024, "none"), "h100-sxm5-80gb")
    _within(1.0 / row["throughput"]["training_images_per_second"], 0.606, SPEED)


# ---------------------------------------------------------------- [T4-Y8M] YOLOv8m training at 1024 px on a T4


def _yolov8m_t4(vcpus: int = 2) -> dict:
    return {
        "task": "full_finetune",
        "model": {"preset": "yolov8m"},
        "precision": "fp16",
        "micro_batch_size": 8,
        "optimizer": "adamw",  # optimizer=auto chose AdamW (the log)
        # 815 boxes over 73 val images (11 an image): 40 bounds a futsal frame's densest image.
        "image": {
            "resolution_px": 1024,
            "epochs": 100,
            "dataset_images": 1024,
            "max_objects_per_image": 40,
        },
        "host": {"vcpus_per_gpu": vcpus},
    }


@pytest.mark.django_db
def test_yolov8m_1024px_batch8_gpu_mem_on_a_t4(bundled_catalog, tmp_path):
    """[T4-Y8M] GPU_mem median 8.59G (8.36-8.94G over epochs 1-21); product 8.066 GiB = 8.661 GB (+0.8%).
    With max_objects_per_image at the default 93 the product stays inside the bar too."""
    row = _size(tmp_path, _yolov8m_t4(), "t4")
    _within(_reserved_gb(row), 8.59, MEMORY)


@pytest.mark.django_db
def test_yolov8n_640px_same_pipeline_rate_on_a_t4(bundled_catalog, tmp_path):
    """[T4-Y8N] 46.24 images/s published (median 2.89 it/s x 16 over the mosaic epochs 2-40, same host, frames
    and augmentation as [T4-Y8M]); product 49.28 (+6.6%), bound by its loader (2 vCPUs x 24.6 images/s at COCO-sized
    sources, mixup not counted: with it, 1/1.15 of that, 42.9, -7.3%). Not fitted on. It is the measurement of
    this host's loader on these frames that the 1024 px case below needs: the frames cost no more to load than
    COCO's photos (stated as 1080p frames, image.source_megapixels 2.07, the product would give 22.1, -52%)."""
    spec = _yolov8m_t4()
    spec["model"]["preset"] = "yolov8n"
    spec["micro_batch_size"] = 16  # the log's batch=16 (train_pipeline: 16 if imgsz <= 640)
    spec["image"]["resolution_px"] = 640
    spec["image"]["epochs"] = 50
    row = _size(tmp_path, spec, "t4")
    assert row["throughput"]["loader_seconds"] == pytest.approx(row["throughput"]["step_seconds"], rel=0.01)
    _within(row["throughput"]["training_images_per_second"], 2.89 * 16, SPEED)


T4_1024_REASON = (
    "UNEXPLAINED (labelled at stop 48): "
    "YOLOv8m, 1024 px, batch 8 on a Colab T4 (2 vCPUs): published 1.37 it/s = 10.96 images/s (0.730 s a step),"
    " product 21.92 (+100%), which the product calls loader-bound (0.365 s a step for 2 workers at 10.96 images/s"
    " each) over a GPU side of 0.312 s (25.63 images/s at 8 vCPUs). det29 (stop 42): the loader is not what binds"
    " this run, so the frames' size is not its cause. The same repository saved a YOLOv8n run on the same Colab"
    " host, frames, CLAHE and offline-augmentation steps, mosaic 1.0 and mixup 0.15 ([T4-Y8N], the passing case"
    " above): 46.24 images/s at 640 px on the same 2 workers, where the product says 49.28 (+6.6%). Ultralytics"
    " sizes all of a sample's non-decode work by imgsz (load_image resizes to imgsz, Mosaic fills a 2 x imgsz"
    " canvas, RandomPerspective warps to imgsz), so at 1024 px a sample costs at most (1024 / 640)^2 = 2.56x"
    " the 640 px one and these workers deliver at least 46.24 / 2.56 = 18.1 images/s (0.44 s a step of 8), more"
    " than the 10.96 published: the step's other >= 0.29 s are the GPU's (or the host's kernel launches). The"
    " [T4-Y8N] run also shows the canvas is a small part of a sample on these frames (if, as the product says,"
    " its loader binds it): closing the mosaic (and mixup) at epoch 41 raised it only to 51.9 images/s (+12%). So stating the frames as 1080p"
    " (image.source_megapixels 2.07: 14.18, +29.4%; with mixup 12.33, +12.5%) would land this case for the wrong"
    " reason: the same statement puts [T4-Y8N] at 22.1 images/s (-52%). What is left is the T4's rate for"
    " YOLOv8m training at 1024 px: the run's 0.730 s a step is 6.66 TFLOPS (3 x 202.5 GFLOP x 10.96), 10.2% of"
    " the T4's 65; the product's GPU side runs it at 15.6 TFLOPS (24%): detector_training_efficiency's V100"
    " fit scaled by the T4's FLOPs per clock at its 1,590 MHz boost, with none of the 70 W cap's clock loss"
    " that card_image_factor gives other image networks on slot-powered cards (the T4 row, 0.681 of the V100's"
    " rate per datasheet FLOP; at that row this case would be ~17.5 images/s, +60%, still out). No published"
    " YOLO training rate on a T4 that is GPU-bound was found to fit a T4 detector-training rate on; the two"
    " Colab T4 runs of the outside cases (yolov8n at 640, 2 vCPUs) are loader-bound and do not resolve it."
    " yolo43 (stop 43), a same-architecture bound, not adopted: the [VRU] run (test_outside_image_workloads_2.py)"
    " trained YOLOv8x at 640 px on a Turing RTX 2080 SUPER (48 SMs, 1,815 MHz boost, 496 GB/s), 773.4 GFLOP an"
    " image in training against this case's 606.0, at 20.44 images/s: 15.8 TFLOPS, 35% of its 44.6 (half-rate"
    " fp32 accumulate); this T4 run is 6.64 TFLOPS, 2.38x less, where the product puts the two within 1.1x."
    " Scaled from the 2080 SUPER by SMs x boost clock (40 x 1,590 / 48 x 1,815 = 0.73, i.e. the T4's full-rate"
    " tensor cores counted for no more than the GeForce card's half-rate ones) the T4 step is 52.5 ms of"
    " compute an image + 9.9 ms of deterministic fill (the 2080 SUPER's torch 1.13 run filled none) = 16.0"
    " images/s (+46%); with the T4 row's 70 W clock loss on top (0.681, card_image_factor) 87.0 ms = 11.5"
    " images/s (+4.9%). Two factors whose overlap is unknown (the T4 row is a T4/V100 ratio for diffusion and"
    " ViT networks, so it already holds part of any tensor-core shortfall), chosen after seeing this case, and"
    " they move the L4 the same way (72 W, the hand-judged YOLO11m COCO ranking); kept as the lead. Checked:"
    " the run is AMP ('AMP: checks passed' in the log, Ultralytics 8.1.0 check_amp), so fp16 is right."
    " det44 (stop 44), the card's bandwidth checked as the missing root, not adopted: detector_training_efficiency"
    " is one V100 fit of whole steps, so the step's memory-bound work (BatchNorm, SiLU, concatenations and their"
    " backward) is priced at the V100's 7.2 GB/s per dense TFLOPS, where the T4 has 300 / 65 = 4.6. Counted with the"
    " engine's own saved activations (image_model.training_activation_bytes, 0.98 GB an image here) at 6 passes"
    " (forward write, backward read, gradient write and read, 2 more for the norms' statistics; an assumption, not"
    " a measurement) and ACHIEVED_BANDWIDTH 0.7: 28.0 ms an image on the T4, 70% of the product's 39.0 ms step"
    " (of which 9.3 ms is the deterministic fill), and 31-34% of the fitted V100 step (no fill) for YOLOv8s/m/l/x"
    " at the README's batches 64/40/24/16, about the same share at every scale. Refitting the V100 rows as 68%"
    " compute + that traffic and pricing the T4 the same way gives 17.39 images/s (+58.7%); with the T4 row's 70 W"
    " clock loss on the compute part (0.681, above) 14.94 (+36.3%). Both mechanisms together leave the case outside, the pass"
    " count is not sourced, and the refit moves every detector training case (the RTX 3090 at 13.2 GB/s per TFLOPS"
    " would gain, where geforce_detector_rate 1.19 was fitted; the RTX 4090 at 6.1, the A100 at 5.0 and the L4 at"
    " 2.5, the hand-judged YOLO11m COCO ranking's top card, would lose), so the engine is unchanged."
    " fill44 (stop 44): the step's GEMM fill (image_model.yolo_step_fill, 128 x 128 tiles) does not move it: YOLOv8m"
    " at 1024 px and batch 8 fills the T4's 40 SMs 0.986 (the V100 fit rows 0.979), so its GPU side is unchanged"
    " within 1% and the product still calls it loader-bound (21.92). The bandwidth split above was not adopted:"
    " its 6 passes are not sourced and, with the 70 W clock loss, it still leaves the case at +36%."
    " det45 (stop 45), the T4's sustained clock checked: the product prices detector training on the T4 at its"
    " 1,590 MHz datasheet boost (compute_peak.card_image_factor returns geforce_detector_rate, 1 on a T4; the"
    " T4 row's 0.681 reaches diffusion and ViT networks only). The one published T4 clock under sustained"
    " tensor load found (mlcommons/inference_results_v0.5 issue #20, 2020-06-16: an AWS g4dn.4xlarge T4 set to"
    " application clocks 5001,1590 'dropping down to ~900 MHz' in a BERT SingleStream run) is an inference"
    " run, not this Colab host. Taken at face value (0.566 of the boost) on the step's compute part, the"
    " memory-bound deterministic fill kept: (39.0 - 9.3) / 0.566 + 9.3 = 61.8 ms an image, 16.2 images/s"
    " (+47.6%), still outside; only with det44's unsourced 6-pass bandwidth split (20.1 ms of compute an"
    " image at the boost and 37.4 ms of traffic and fill, solved from its 17.39 and 14.94 images/s) does it"
    " reach 20.1 / 0.566 + 37.4 = 72.9 ms, 13.7 images/s (+25.1%), just outside the tolerance."
    " No clock measured on a Colab T4 under training was found, so the engine is unchanged: 21.92 (+100%),"
    " UNEXPLAINED."
    " det46 (stop 46), the clock sized from the published rows, still not a fix: a second published sustained-load"
    " T4 figure was found (forums.developer.nvidia.com/t/about-gpu-peak-performance/264462: a cuBLAS fp16 4096 x"
    " 4096 x 4096 GEMM timed over 100 iterations on a T4 runs about 24 of its 65 TFLOPS, 0.369 of the datasheet"
    " peak, which the thread's answer attributes to power capping at about 70 W, 'expected behavior for"
    " approximately continuous matrix multiply operations on a T4'). Per SM per GHz of datasheet boost, the two"
    " Turing training logs read: this run 10.96 x 606.0 GFLOP = 6.64 TFLOPS / (40 SMs x 1.590 GHz) = 0.104; the"
    " [VRU] RTX 2080 SUPER run (the same TU104 die at 250 W) 20.44 x 773.4 = 15.81 TFLOPS / (48 x 1.815) = 0.181."
    " The T4 did 0.575 of the 2080 SUPER's work a SM-cycle at boost: the same work a SM-cycle at 0.575 x 1,590 ="
    " 915 MHz, where mlcommons issue #20 saw ~900 MHz. The product (measured this stop: gpu_step_seconds 0.3154"
    " for 8 images, 25.36 images/s with the loader lifted, 21.92 as priced) reads 25.36 x 606.0 = 15.37 TFLOPS on"
    " the T4 (0.242 a SM-GHz) and 21.05 x 773.4 = 16.28 on the 2080 SUPER (0.187): it gives the T4 1.29x the 2080"
    " SUPER's work a SM-cycle (the T4's full-rate fp32-accumulate tensor peak, 1,024 FLOP a SM-clock in"
    " gpu_clocks.csv, against the GeForce half rate, 512, x geforce_detector_rate 1.26), where the logs show"
    " 0.575. The gap on the GPU side, 25.36 / 10.96 = 2.31 over the 2080 SUPER's own 21.05 / 20.44 = 1.03, is 2.25"
    " = 1.29 / 0.575: either a ~900 MHz clock (1.74-1.77) times a tensor-rate advantage that does not reach a YOLO"
    " training step (1.27-1.29), or a lower clock alone: the whole GPU step scaled by the clock lands inside 25%"
    " (<= 13.7 images/s) only at <= 13.7 / 25.36 x 1,590 = 859 MHz, which the GEMM figure gives if cuBLAS reaches"
    " >= 0.69 of the T4's peak at boost (24 / 65 / 0.69 x 1,590 = 851 MHz), a figure not found. Not adopted: a T4"
    " detector clock of 900 / 1,590 on the whole step gives 14.35 images/s (+31%, still outside; the Colab T4"
    " held-out rows are loader-bound and would not move: [RF-Y11S]'s GPU side 93.75 -> 53.1 images/s over its"
    " 49.28 loader bound); two logs cannot tell the two factors apart. A spec would need the card's sustained"
    " clock under the run's load (no field). UNEXPLAINED."
    " det51 (stop 51), the trainer's EMA checked as a step cost and ruled out: the memory copy is counted since"
    " yolo51 (103.6 MB, no speed term); its update loop (ultralytics utils/torch_utils.py ModelEMA.update, four"
    " host-issued ops on each floating state_dict entry) runs once an optimizer step, every accumulate ="
    " round(nbs 64 / batch 8) = 8 batches. Bounded by YOLO11x's 848 floating entries (yolo51's count; YOLOv8m"
    " is the shallower network, depth 0.67 without C3k blocks): 848 x 4 x 7 us = 23.7 ms a step, <= 3.0 ms a"
    " batch, <= 0.7% of the 0.418 s a batch between the published 0.730 s and the product's 0.312 s GPU side."
)


@pytest.mark.django_db
@pytest.mark.xfail(strict=True, reason=T4_1024_REASON)
# Earlier reason (e29), its loader diagnosis superseded by det29's above: YOLOv8m, 1024 px, batch 8 on a Colab T4
# (2 vCPUs): published 1.37 it/s = 10.96 images/s, product 21.92 (+100%; +134% before img29d scaled the mosaic
# canvas with image.resolution_px), bound by its loader: 2 workers x 10.96 images/s (the 1,024 px canvas on COCO-
# sized sources); its GPU side is 25.63 (8 vCPUs). e29, verified from the run's repository (Farisifakhri/futsal-cv
# src/preprocess.py @1a93c3f4: frames extracted from video and kept at their original resolution, 'tanpa resize';
# src/augment.py @04df9552: offline variants resized back to the original size; data/README.roboflow.txt
# @c253248c: exported with no pre-processing): the sources are video frames, not COCO-sized photos, and the log's
# mixup=0.15 builds a second mosaic for 15% of the samples, which the product has no field for. Quantified: stated
# as 1080p frames (image.source_megapixels 2.07) the product gives 14.18 (+29.4%), and the mixup share (x 1/1.15)
# 12.33 (+12.5%); the frames' resolution is in neither the log nor the repository's snapshot (its JPEGs are not
# stored), so the spec cannot state it and the case stays as the practitioner wrote it.
def test_yolov8m_1024px_batch8_rate_on_a_t4(bundled_catalog, tmp_path):
    """[T4-Y8M] 1.37 it/s x 8 = 10.96 images/s."""
    row = _size(tmp_path, _yolov8m_t4(), "t4")
    _within(row["throughput"]["training_images_per_second"], 1.37 * 8, SPEED)


# ---------------------------------------------------------------- ranking: 1,000 SDXL images, judged by hand

SDXL_JOB = {
    "task": "inference",
    "model": {"preset": "sdxl"},
    "precision": "fp16",
    "image": {"images": 1000},
}


@pytest.mark.django_db
def test_sdxl_thousand_images_ranking_by_hand(bundled_catalog, tmp_path):
    """Cost of 1,000 SDXL images (1024 px, 50 steps, CFG, fp16, batch 1), top five by hand (bundled catalog,
    2026-11-30 snapshot):
      1. vast 8x-Tesla_V100-32-65536 (8 x v100-pcie-16gb) 0.85 USD/h, 0.503 h, 1.58 USD
      2. lium RTX4090_1x 0.28 USD/h, 1.929 h, 1.70     3. lium RTX3090_8x 1.28 USD/h, 0.438 h, 1.71
      4. verda 1V100.6V 0.1381 USD/h, 4.028 h, 1.73    5. vast 2x-RTX_3090 0.33 USD/h, 1.751 h, 1.74
    First row: 8 GPUs x 0.069 images/s (14.5 s an image on one V100) = 0.552 images/s; 1,000 / 0.552 / 3,600 =
    0.503 h; compute 0.85 x 1 instance x 0.503 = 0.43 USD (the listed price is the 8-GPU instance's); storage
    1.15 (~50 GB held the job plus the 7-day retention at vast's assumed 0.1 USD/GB-month: 50 x 0.1 x
    (168 + 0.5) / 730 = 1.15); total 1.58. It holds the job: 12.0 GiB peak (fp16 UNet, fp32-upcast VAE decode)
    on a 14.9 GiB card, 14.4 with 20% headroom. Like-for-like: every row is the same spec (fp16, batch 1, no
    compile), priced as a job, one replica per GPU, ranked by total. Storage is 1.15-1.18 USD of every row, 73%
    of the winner's cost: the ranking is decided by 0.43-0.58 USD of compute, which a reader of 'cost per
    1,000 images' should be told (a user with a volume already attached pays about a quarter of this)."""
    rows = _recommend(tmp_path, SDXL_JOB, 5)
    assert len(rows) == 5
    first = rows[0]
    # The first row's cost recomputed from the catalog price, the instances and the hours.
    compute = Decimal(first["effective_price_per_hour"]) * first["instances"] * Decimal(str(first["hours"]))
    assert abs(compute - Decimal(first["cost_breakdown"]["compute"])) <= Decimal("0.01")
    assert Decimal(first["total_cost"]) == sum(
        Decimal(first["cost_breakdown"][k]) for k in ("compute", "setup", "storage", "reruns")
    )
    # Hours from the product's own rate: 1,000 images at the instance's images/s.
    serving = first["serving"]
    assert serving["job_images"] == 1000
    assert abs(1000 / serving["images_per_second"] / 3600 - first["hours"]) <= 0.002
    # Each card holds the job with the asked headroom.
    for row in rows:
        assert row["fits"]
        assert row["required_per_gpu_gib"] <= row["memory_margin"]["capacity_gib"]
    # Like-for-like: same spec on every row, ordered by total cost, each priced per 1,000 images.
    totals = [Decimal(row["total_cost"]) for row in rows]
    assert totals == sorted(totals)
    for row in rows:
        assert row["serving"]["priced_as"] == "job"
        assert row["serving"]["images_per_batch"] == 1
        assert Decimal(row["unit_costs"]["per_thousand_images"]) == Decimal(row["total_cost"])
        assert row["differs_from_spec"] == []
