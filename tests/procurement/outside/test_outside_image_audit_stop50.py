"""Outside audit aud50i (stop 50), issue 29's bar: image training and generation cases no test used before
(grepped tests/, procurement/data and docs/validation.md for the sources, ids and figures).

Sources (verbatim where quoted):
  [NCHC-Y11X] a GitHub write-up "Training YOLO with 1 H200 GPU on Nano4" (find_string / read_file id 61377807633):
      run_uv.slurm "#SBATCH --cpus-per-task=12", "--gres=gpu:1", "yolo detect train data=data.yaml
      model=yolo11x.pt epochs=60 imgsz=640"; defaults batch=16, workers=8, amp=True, deterministic=True,
      optimizer=auto (600 iterations < 10,000: AdamW); data: "Images moving to train: 145", 11 classes
      (10 it an epoch). Its log (job 286542): "54/60        15G ... 640: 100% ... 10/10 8.5it/s 1.2s",
      "55/60        15G ... 10/10 8.7it/s 1.2s"; nvidia-smi on the node during it: "NVIDIA H200 ...
      16079MiB / 143771MiB | 99%". Two-GPU run (device=0,1, batch 16 = 8 a GPU): "11349MiB / 143771MiB"
      (GPU 0) and "10223MiB / 143771MiB" (GPU 1). GPU_mem is torch.cuda.memory_reserved() / 2**30 at
      this release (8.4.124; yolomem, stop 52: aud50i read / 1e9).
  [DIFF-SDXL-16G] huggingface/diffusers examples/dreambooth/README_sdxl.md (commit 0c693ca2, read_file id
      5060194659): "you can train SDXL LoRAs with less than 16GB of VRAM by adding the following flags ...
      --enable_xformers_memory_efficient_attention --gradient_checkpointing --use_8bit_adam
      --mixed_precision="fp16"" on the dog example (--resolution=1024 --train_batch_size=1
      --gradient_accumulation_steps=4 --max_train_steps=500; rank: the script's default 4; "When not fine-tuning
      the text encoders, we ALWAYS precompute the text embeddings").
  [AITK] ostris/ai-toolkit FAQ.md (commit d54b7512): "How much VRAM is required to train a lora on FLUX.1?
      24GB minimum is required."; config/examples/train_lora_flux_24gb.yaml (commit 016777ac): network lora
      "linear: 16" (every Linear of the transformer), batch_size 1, gradient_checkpointing true, optimizer
      "adamw8bit", dtype bf16, "cache_latents_to_disk: true", "quantize: true  # run 8bit mixed precision",
      resolution [512, 768, 1024], train_text_encoder false. toolkit/config_modules.py (read_file id
      215653408): 'self.quantize_te = kwargs.get("quantize_te", self.quantize)', 'self.qtype_te =
      kwargs.get("qtype_te", "qfloat8")': the T5 encoder is quantized to 8 bits too; text embeddings are not
      cached by that config.
  [KOHYA-827] github.com/kohya-ss/sd-scripts/issues/827 (FurkanGozukara, 2023-09-20, "Doesn't make sense speeds
      of training RTX 3090 vs RTX 4090"): "I have RTX 3090 TI, 64 GB RAM and 13900K CPU on Windows 10 ... LoRA
      gets 1.12 s/it with xformers enabled and gradient checkpoint disabled"; command: sdxl_train_network.py
      --resolution="1024,1024" --network_module=networks.lora --text_encoder_lr=0.0004 --unet_lr=0.0004
      --network_dim=32 --full_bf16 --train_batch_size="1" --mixed_precision="bf16" --cache_latents
      --cache_latents_to_disk --optimizer_type="Adafactor" --max_data_loader_n_workers="0" (--reg_data_dir: kohya
      puts class images into the epoch, one image a step at batch 1; no --network_train_unet_only: both text
      encoders get adapters and run each step). networks.lora targets every Linear of the UNet's transformer
      blocks and of the CLIP encoders' attention and MLP (all-linear).
  [BASETEN-SDXL] baseten.co/blog/sdxl-inference-in-under-2-seconds-the-ultimate-guide-to-stable-diffusion-optimiza
      (pages corpus): "Out of the box, Stable Diffusion XL 1.0 (SDXL) takes 8-10 seconds to create a
      1024x1024px image from a prompt on an A100 GPU." Its own optimizations then include "5. Chose a fp16 vae
      and efficient attention".
"""

from __future__ import annotations

import copy
import io
import json
from decimal import Decimal

import pytest
from django.core.management import call_command

from procurement.api.sizing import size_spec_document
from procurement.sizing import image_model, parse_workload_spec
from procurement.sizing.assumptions import CUDA_CONTEXT_GIB
from tests.procurement.outside.ultralytics_gpu_mem import gpu_mem_gb

MEMORY, SPEED = 0.15, 0.25
GIB = 2.0**30
MIB = 2.0**20
H200 = "h200-sxm-141gb"
# job 286542's environment: `uv pip install ultralytics` -> ultralytics==8.4.124, torch 2.13.0 (the write-up)
NCHC_ULTRALYTICS = "8.4.124"


def _size(spec: dict, gpu: str) -> dict:
    report = size_spec_document(copy.deepcopy(spec), [gpu], calibrate=False)
    return next(c for c in report["candidates"] if c["gpu"] == gpu)


def _err(ours: float, published: float) -> float:
    return ours / published - 1.0


def _yolo11x(batch: int = 16, gpus: int = 1) -> dict:
    spec = {
        "task": "full_finetune",
        "model": {"preset": "yolo11x"},
        "precision": "fp16",
        "micro_batch_size": batch,
        "optimizer": "adamw",  # optimizer=auto at 600 iterations
        "image": {"resolution_px": 640, "epochs": 60, "dataset_images": 145},
        "host": {"vcpus_per_gpu": 12},  # --cpus-per-task=12; Ultralytics starts min(vCPUs, 8) workers
    }
    if gpus > 1:
        spec["parallelism"] = {"gpus": gpus}
    return spec


# ---------------------------------------------------------------- [NCHC-Y11X] YOLO11x training on an H200


@pytest.mark.django_db
def test_yolo11x_h200_step_rate(bundled_catalog):
    """8.5-8.7 it/s x 16 = 136-139 images/s (mid 137.6); product 146.5 (+6.5%), GPU-bound (loader 0.081 s a
    step against 0.109 s of GPU work at 8 workers)."""
    row = _size(_yolo11x(), H200)
    ours = row["throughput"]["training_images_per_second"]
    assert abs(_err(ours, 8.6 * 16)) <= SPEED, ours
    assert row["throughput"]["loader_seconds"] < row["throughput"]["gpu_step_seconds"]


@pytest.mark.django_db
def test_yolo11x_h200_total_against_nvidia_smi(bundled_catalog):
    """nvidia-smi 16,079 MiB = 15.70 GiB (process 16,068 MiB); product total 16.861 GiB (+7.4%)."""
    ours = _size(_yolo11x(), H200)["memory"]["total_per_gpu_gib"]
    assert abs(_err(ours, 16079 * MIB / GIB)) <= MEMORY, ours


# FIXED (yolomem, stop 52; was a strict xfail UNEXPLAINED, aud50i, at +16.4%): the run printed GiB, not GB. Job
# 286542 ran the uv install the write-up lists (ultralytics 8.4.124; the container job beside it 8.4.115), whose
# trainer divides memory_reserved() by 2**30 (8.4.124 wheel engine/trainer.py 679, 8.4.115 676; every wheel from
# 8.3.76 on, 8.3.75 was the last to divide by 1e9: ultralytics_gpu_mem.py). 15G is 15 GiB = 16.11 GB, and ours
# 16.261 GiB reserved (total 16.861 less CUDA_CONTEXT_GIB 0.6) is +8.4%. The same run's nvidia-smi (16,079 MiB =
# 15.70 GiB) then leaves 0.70 GiB outside the pool, where CUDA_CONTEXT_GIB says 0.6: aud50i's "1.7 GiB outside
# the pool" lead was the unit (test_outside_gpu_mem_units_yolomem.py).
@pytest.mark.django_db
def test_yolo11x_h200_gpu_mem_reserved(bundled_catalog):
    """GPU_mem 15G at 8.4.124 = 15 GiB reserved; ours 16.261 GiB (+8.4%)."""
    row = _size(_yolo11x(), H200)
    ours_gb = (row["memory"]["total_per_gpu_gib"] - CUDA_CONTEXT_GIB) * GIB / 1e9
    assert abs(_err(ours_gb, gpu_mem_gb(15.0, NCHC_ULTRALYTICS))) <= MEMORY, ours_gb


@pytest.mark.django_db
def test_yolo11x_two_h200_rank1_nvidia_smi(bundled_catalog):
    """device=0,1, batch 16 (8 a GPU): GPU 1 10,223 MiB = 9.98 GiB; product 9.176 GiB a GPU (-8.1%)."""
    ours = _size(_yolo11x(batch=8, gpus=2), H200)["memory"]["total_per_gpu_gib"]
    assert abs(_err(ours, 10223 * MIB / GIB)) <= MEMORY, ours


R_Y11X_RANK0 = (
    "UNEXPLAINED (aud50i): published GPU 0 11,349 MiB (11.08 GiB) in the two-H200 run, ours 9.176 GiB a GPU "
    "(-17.2%); lead: only rank 0 runs Ultralytics' per-epoch validation (at batch x 2) and the plots, which the "
    "product does not size on any rank (GPU 1, 9.98 GiB, lands -8.1%); no spec field says rank 0 carries more. "
    "yolomem (stop 52), read at the run's release (ultralytics 8.4.124 wheel): that lead does not hold there. "
    "engine/trainer.py 409 builds ModelEMA on every rank (no RANK check), 296-299 give every rank its own val loader "
    "(batch 8 x 2) and 601 calls validate() on every rank (engine/validator.py 291-296 then reduce the loss to rank "
    "0); what runs on rank 0 alone is check_amp (trainer.py 366: YOLO('yolo26n.pt') forwards on rank 0's GPU, "
    "utils/checks.py 1030), the val-batch plots (validator.py 275, on the CPU) and save_model (608-616), whose "
    "GPU copies of the EMA (728) and the AdamW state (745) are 12-14 B a parameter, 0.64-0.74 GiB, 58-67% of the "
    "1,126 MiB between the GPUs at most (test_nchc_rank0_save_model_copies_size_under_80_percent_of_the_gap): not "
    "sized to 80%. _clear_memory(0.5) (trainer.py 600 / 631) never empties the cache "
    "at 8% of an H200, so each rank keeps its validator's blocks"
)


@pytest.mark.django_db
@pytest.mark.xfail(strict=True, reason=R_Y11X_RANK0)
def test_yolo11x_two_h200_rank0_nvidia_smi(bundled_catalog):
    ours = _size(_yolo11x(batch=8, gpus=2), H200)["memory"]["total_per_gpu_gib"]
    assert abs(_err(ours, 11349 * MIB / GIB)) <= MEMORY, ours


@pytest.mark.django_db
def test_yolo11x_h200_job_ranked_top_five(bundled_catalog, tmp_path):
    """recommend --top 5 on the bundled catalog: five single-L4 AWS spot rows (g6.xlarge / g6.2xlarge,
    eu-south-2), USD 0.93-0.96 a run. Row 1 is sensible for a 4-minute job on 145 images (16.9 GiB fits the
    L4's 22.4 usable). Cost rebuilt by hand: compute 0.091466 x 0.063956 h = 0.0058 -> 0.01, setup 1 h x
    0.091466 = 0.09, storage 45 GB x 0.08 x 0.231594 months = 0.83: 0.93. Note: storage is 89% of the cost."""
    path = tmp_path / "w.json"
    path.write_text(json.dumps({k: v for k, v in _yolo11x().items() if k != "host"}))
    out = io.StringIO()
    call_command("recommend", str(path), "--top", "5", "--format", "json", stdout=out)
    rows = json.loads(out.getvalue())["results"]
    assert len(rows) == 5
    assert all(r["gpu"] == "l4" and r["gpus"] == 1 and r["fits"] for r in rows)
    first = rows[0]
    compute = Decimal(first["effective_price_per_hour"]) * Decimal(str(first["hours"]))
    setup = Decimal(first["effective_price_per_hour"]) * 1
    storage = Decimal("45") * Decimal("0.08") * Decimal("0.231594")
    rebuilt = round(compute, 2) + round(setup, 2) + round(storage, 2) + Decimal("0.00")
    assert rebuilt == Decimal(first["total_cost"]), (rebuilt, first["cost_breakdown"])
    costs = [Decimal(r["total_cost"]) for r in rows]
    assert costs == sorted(costs)


# ---------------------------------------------------------------- [DIFF-SDXL-16G] SDXL DreamBooth LoRA, < 16 GB


@pytest.mark.django_db
def test_sdxl_dreambooth_lora_under_16_gb(bundled_catalog):
    """A bound: 'less than 16GB of VRAM'. Product 6.37 GiB total (UNet fp16 weights 4.96 GiB of it): under the
    bound, and consistent with kohya's '8GB' (test_outside_image_workloads_3.py). Passing a bound shows only that
    the product does not over-ask here."""
    spec = {
        "task": "lora",
        "model": {"preset": "sdxl"},
        "precision": "fp16",
        "optimizer": "adamw_8bit",
        "micro_batch_size": 1,
        "gradient_accumulation_steps": 4,
        "lora": {"rank": 4},
        "gradient_checkpointing": "full",
        "image": {
            "resolution_px": 1024,
            "train_steps": 500,
            "cache_text_embeddings": True,  # precomputed when the text encoders are not trained
            "loader_workers": 1,  # the script's --dataloader_num_workers default 0 (main process)
        },
    }
    ours = _size(spec, "a100-sxm4-40gb")["memory"]["total_per_gpu_gib"]
    assert ours * GIB / 1e9 < 16.0, ours


# ---------------------------------------------------------------- [AITK] FLUX.1-dev LoRA on a 24 GB card


def _aitk_flux(quantize_te: bool = True) -> dict:
    """train_lora_flux_24gb.yaml; `quantize: true` sets quantize_te too (config_modules.py @016777ac), so the
    frozen T5 runs in 8 bits (image.quantize_text_encoders on a training spec, fix50i)."""
    spec = {
        "task": "lora",
        "model": {"preset": "flux.1-dev"},
        "precision": "bf16",
        "optimizer": "adamw_8bit",
        "micro_batch_size": 1,
        "weight_quantization": "int8",  # quanto qfloat8: one byte a weight
        "lora": {"rank": 16, "targets": "all-linear"},
        "gradient_checkpointing": "full",
        "image": {
            "resolution_px": 1024,
            "train_steps": 2000,
            "cache_latents": True,
            "cache_text_embeddings": False,
        },
    }
    if quantize_te:
        spec["image"]["quantize_text_encoders"] = True
    return spec


@pytest.mark.django_db
def test_flux_lora_24gb_config_fits_a_4090(bundled_catalog):
    """FIXED (fix50i; was a strict xfail EXPLAINED by the 8-bit T5, aud50i): 24.563 GiB does_not_fit ->
    20.035 GiB 'tight' on the 4090's 23.39 usable, with the config's quantize_te (T5's linears at 1 B: weights
    20.427 -> 16.114 GiB)."""
    row = _size(_aitk_flux(), "rtx-4090")
    assert row["verdict"] != "does_not_fit", row["memory"]
    assert row["memory"]["total_per_gpu_gib"] > 16e9 / GIB  # the FAQ's 'minimum' rules out 16 GB cards


@pytest.mark.django_db
def test_flux_lora_24gb_sized_cause_t5_in_8_bits(bundled_catalog):
    """The sized cause of the 4090 miss before fix50i: T5-XXL's encoder, 4.76e9 weights (the product's resident encoders less CLIP-L's
    0.123e9), in 8 bits saves 4.76e9 B = 4.43 GiB; the product's peak less that is under the 4090's usable memory
    and over 16 GB (the FAQ's 'minimum' rules out 16 GB cards)."""
    base = _size(_aitk_flux(quantize_te=False), "rtx-4090")
    cached = _aitk_flux(quantize_te=False)
    cached["image"]["cache_text_embeddings"] = True
    encoders_gib = base["memory"]["weights_gib"] - _size(cached, "rtx-4090")["memory"]["weights_gib"]
    assert encoders_gib == pytest.approx((4.76e9 + 0.123e9) * 2 / GIB, rel=0.05), encoders_gib
    with_t5_8bit = base["memory"]["total_per_gpu_gib"] - 4.76e9 / GIB
    assert 16e9 / GIB < with_t5_8bit < base["usable_memory_gib"], with_t5_8bit
    # The engine's own figure (fix50i): T5's linears 4.762e9 - its 32,128 x 4,096 embedding = 4.630e9
    # weights at 2 -> 1 B (optimum-quanto replaces nn.Linear only; no wo kept in fp32 without a transformers
    # quantizer): 4.31 GiB off the weights.
    quantized = _size(_aitk_flux(), "rtx-4090")["memory"]["weights_gib"]
    saved = base["memory"]["weights_gib"] - quantized
    assert saved == pytest.approx((4.762e9 - 32128 * 4096) / GIB, abs=0.01), saved


# ---------------------------------------------------------------- [BASETEN-SDXL] SDXL out of the box on an A100


R_BASETEN = (
    "UNEXPLAINED (aud50i): published 8-10 s (mid 9.0) for one 1024 px SDXL image on an A100 'out of the box' "
    "(diffusers' defaults: 50 steps, CFG), ours 5.93 s in fp16 with SDPA (-34%; 5.96 s, -33.8%, at stop 51); lead: the post's own step 5 "
    "adds 'efficient attention' and an fp16 VAE, so its baseline ran eager attention (and an fp32-upcast VAE): "
    "flash_attention false gives 7.65 s (-15%); the card (40 or 80 GB) and its diffusers/torch are not stated. "
    "img51 read the post: its facts are the 8-10 s, the A100 and that step 5 ('Chose a fp16 vae and efficient "
    "attention to improve memory efficiency') came after it; the fp32 VAE that implies is already priced "
    "(SDXL presets under fp16 decode with force_upcast, image_model vae_fp32_under_fp16). Not restated as eager: "
    "diffusers v0.19.0 (@ef9824f9, SDXL 1.0's release) picks AttnProcessor2_0 (SDPA) whenever torch has "
    "F.scaled_dot_product_attention (models/attention_processor.py 162), so the baseline ran eager only under "
    "torch 1.x, which the post does not state ('efficient attention' may be xformers over SDPA). Ours 5.96 s on "
    "the 80 GB (6.26 s on the 40 GB, -30%); stated as eager 7.68 / 8.51 s (-14.7% / -5.4%): the eager lead "
    "would size 80-100% of the gap, but (a) is not located in the run"
)


@pytest.mark.django_db
@pytest.mark.xfail(strict=True, reason=R_BASETEN)
def test_sdxl_out_of_the_box_a100(bundled_catalog):
    spec = {
        "task": "inference",
        "model": {"preset": "sdxl"},
        "precision": "fp16",
        "micro_batch_size": 1,
        "image": {"resolution_px": 1024, "steps": 50, "images": 1000},
    }
    ours = _size(spec, "a100-sxm4-80gb")["throughput"]["seconds_per_batch"]
    assert abs(_err(ours, 9.0)) <= SPEED, ours


# ---------------------------------------------------------------- [KOHYA-827] SDXL LoRA step, kohya, RTX 3090 Ti


def _kohya_827() -> dict:
    return {
        "task": "lora",
        "model": {"preset": "sdxl"},
        "precision": "bf16",
        "master_weights_fp32": False,  # --full_bf16
        "optimizer": "adafactor",
        "micro_batch_size": 1,
        "lora": {"rank": 32, "targets": "all-linear"},
        "gradient_checkpointing": "none",
        "image": {
            "resolution_px": 1024,
            "train_steps": 8320,
            "cache_latents": True,
            "train_text_encoder": True,
            # networks.lora's LoRAModule (fix50j, after aud50j); its Adafactor runs with the args the thread's
            # command passes, scale_parameter=False relative_step=False (image.adafactor_scale_parameter false)
            "lora_module": "kohya",
        },
    }


@pytest.mark.django_db
def test_kohya_sdxl_lora_step_on_a_3090(bundled_catalog):
    """FIXED (fix50i; was a strict xfail UNEXPLAINED, aud50i): published 1.12 s/it (RTX 3090 Ti, Windows 10),
    ours 0.470 -> 0.989 s on an RTX 3090 (-58% -> -11.7%), the host floor on any card (the same on a 4090);
    fix50j (aud50j's counts: Adafactor 24 ops with the run's args, kohya's modules 5 + 7 kernels): 1.022 s (-8.7%).
    A 3090 Ti's ~1.13x tensor peak does not move a host-bound step; Windows' launch cost is not sized."""
    ours = _size(_kohya_827(), "rtx-3090")["throughput"]["step_seconds"]
    assert abs(_err(ours, 1.12)) <= SPEED, ours


def test_kohya_sdxl_lora_host_floor_counted_from_code():
    """The floor by hand (fix50i), every count read from code at the run's versions:
    kohya-ss/sd-scripts@b99cd2a9 (2023-09-20) networks/lora.py UNET_TARGET_REPLACE_MODULE ["Transformer2DModel"],
    TEXT_ENCODER_TARGET_REPLACE_MODULE ["CLIPAttention", "CLIPMLP"]: U-Net 70 blocks x 10 + 11 x proj_in/out 2 =
    722, TE1 12 x 6 = 72, TE2 32 x 6 = 192: 986 adapted modules (was 876), 1,972 tensors; train_util.py
    get_optimizer builds transformers.optimization.Adafactor with the run's --optimizer_args
    scale_parameter=False relative_step=False (aud50j), whose step at transformers 4.30.2 (requirements.txt
    @9d855091) runs 24 ops on a factored tensor + 3 casts on bf16 ones (--full_bf16): 1,972 x 27 x 7 us =
    0.3727 s (fix50i: 29, 0.4003 s); the UNet 2,138 kernels x 3 passes and kohya's LoRAModule 986 x (5 + 7) at
    31 us = 0.1988 + 0.3668 s (fix50i: peft's 4 + 6, 0.3057 s); the trained CLIP encoders (modeling_clip.py at
    4.30.2) 12 x 22 + 32 x 20 = 904 kernels x 3 passes x 31 us = 0.0841 s. Sum 1.0224 s (was 0.9889)."""
    spec = parse_workload_spec(_kohya_827())
    assert image_model.lora_layers(spec) == 986
    assert image_model.optimizer_host_seconds(spec) == pytest.approx(1972 * 27 * 7e-6, rel=1e-6)
    assert image_model.trained_text_encoder_forward_kernels(spec) == 12 * 22 + 32 * 20
    unet = image_model.network_forward_kernels(spec)
    assert unet == pytest.approx(2138, abs=1)
    floor = (unet * 3 + 986 * 12 + 904 * 3) * 31e-6 + 1972 * 27 * 7e-6
    assert floor == pytest.approx(1.0224, abs=0.0005)
