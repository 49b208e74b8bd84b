"""Outside audit aud51s (stop 51): issue 29's outside practitioner on SDXL (aud51i had no SDXL case). Bars: image
memory 15%, image speed 25%. Calibration off (size_spec_document(..., calibrate=False)).

Sources (tests/ grepped for each source and figure first: fal's SDXL SDPA row, 5.933 s, is the product's own
efficiency anchor (tests/procurement/sizing/test_image_efficiency.py), so it is NOT a case here; the other fal SDXL
rows and kohya_ss #1288 appear nowhere in tests/):
  [FAL] fal-ai/stable-diffusion-benchmarks README.md (read_file id 20444563025, commit 0490f695), 'SDXL (End-to-end)
      Benchmarks', 'Running on an A100 80G SXM', num_inference_steps=50, 1024x1024, batch 1, 'For all other options,
      the defaults' (diffusers' SDXL guidance 5.0: CFG on), 'Weights are always half-precision (fp16)'. Stack:
      benchmarks/benchmark_diffusers.py (read_file id 20910479052): diffusers 0.21.4, torch 2.1.0, xformers
      0.0.22.post7; compile = torch.compile(pipeline.unet, fullgraph=True, mode="reduce-overhead") (the UNet only).
      Rows (median s): 'Diffusers (torch 2.1, xformers) | ... 5.724s'; 'Diffusers (torch 2.1, SDPA, compiled) |
      ... 5.247s'; '... compiled, NCHW channels last | ... 5.132s'; 'TensorRT 9.0 (cuda graphs, static shapes) |
      ... 4.104s'. (The 'OneFlow' row, 4.607 s, has no image.engine value and is left out.)
  [KOHYA-1288] github.com/bmaltais/kohya_ss/issues/1288 ('SDXL Lora training Extremely slow on Rtx 4090'),
      comment quoted by FurkanGozukara 2023-08-03: "I'm seeing this also with my 4090, all 24GB of VRAM get used up
      CUDA usage is at 99% and it's training at 10.2s/it for a 1024x1024 res", command sdxl_train_network.py
      --resolution="1024,1024" --network_module=networks.lora --text_encoder_lr=0.0001 --unet_lr=0.0001
      --network_dim=256 --network_alpha=1 --train_batch_size="1" --mixed_precision="bf16" (no --full_bf16)
      --cache_latents --cache_latents_to_disk --optimizer_type="Adafactor" --optimizer_args scale_parameter=False
      relative_step=False warmup_init=False --xformers --max_data_loader_n_workers="4" (no
      --gradient_checkpointing, no --cache_text_encoder_outputs: the text encoders get adapters and run each step).
"""

from __future__ import annotations

import copy

import pytest

from procurement.api.sizing import size_spec_document

MEMORY, SPEED = 0.15, 0.25
A100 = "a100-sxm4-80gb"


def _size(spec: dict, gpu: str) -> dict:
    report = size_spec_document(copy.deepcopy(spec), [gpu], calibrate=False)
    return next(c for c in report["candidates"] if c["gpu"] == gpu)


def _err(ours: float, published: float) -> float:
    return ours / published - 1.0


def _fal(**image) -> dict:
    return {
        "task": "inference",
        "model": {"preset": "sdxl"},
        "precision": "fp16",  # torch_dtype=torch.float16
        "micro_batch_size": 1,
        "image": {"resolution_px": 1024, "steps": 50} | image,  # guidance: the pipeline default (CFG)
    }


# ---------------------------------------------------------------- [FAL] SDXL base, A100 80G SXM, 50 steps


@pytest.mark.django_db
def test_fal_sdxl_xformers_a100(bundled_catalog):
    """[FAL] 'Diffusers (torch 2.1, xformers)' median 5.724 s. Product 5.960 s (+4.1%). The product has no
    xformers-vs-SDPA distinction (both are memory-efficient attention kernels); published they differ by 3.6%."""
    ours = _size(_fal(), A100)["throughput"]["seconds_per_batch"]
    assert ours == pytest.approx(5.960, abs=0.02)
    assert abs(_err(ours, 5.724)) <= SPEED


@pytest.mark.django_db
def test_fal_sdxl_compiled_a100(bundled_catalog):
    """[FAL] 'Diffusers (torch 2.1, SDPA, compiled)' median 5.247 s (torch.compile of the UNet, reduce-overhead:
    CUDA graphs). Product with image.fused_kernels 4.996 s (-4.8%)."""
    ours = _size(_fal(fused_kernels=True), A100)["throughput"]["seconds_per_batch"]
    assert ours == pytest.approx(4.996, abs=0.02)
    assert abs(_err(ours, 5.247)) <= SPEED


@pytest.mark.django_db
def test_fal_sdxl_compiled_channels_last_a100(bundled_catalog):
    """[FAL] '... compiled, NCHW channels last' median 5.132 s. No spec field states channels-last; the author's
    spec is the compiled one: 4.996 s (-2.6%)."""
    ours = _size(_fal(fused_kernels=True), A100)["throughput"]["seconds_per_batch"]
    assert abs(_err(ours, 5.132)) <= SPEED


@pytest.mark.django_db
def test_fal_sdxl_tensorrt_a100(bundled_catalog):
    """[FAL] 'TensorRT 9.0 (cuda graphs, static shapes)' median 4.104 s. Product image.engine tensorrt 4.996 s
    (+21.7%; images/s -17.9%): inside 25%, but the product prices TensorRT exactly as torch.compile (4.996 s both),
    where fal measured TensorRT 21.8% faster than compile on the same card and stack. Passes by the bar's width.
    trtimg: 4.996 -> 4.996 s (+21.7%, unchanged): a TensorRT UNet rate SET on this pair (1.285 on the UNet's
    compute) fails its CHECK on stabilityai/stable-diffusion-xl-1.0-tensorrt's H100 'UNet 40 steps' row (-4.1% ->
    -25.4%), so none is landed (test_outside_trt_unet_rate_trtimg.py)."""
    trt = _size(_fal(engine="tensorrt"), A100)["throughput"]["seconds_per_batch"]
    compiled = _size(_fal(fused_kernels=True), A100)["throughput"]["seconds_per_batch"]
    assert trt == pytest.approx(compiled, rel=0.001)  # the finding: no TensorRT-over-compile step
    assert abs(_err(trt, 4.104)) <= SPEED


@pytest.mark.django_db
def test_fal_sdxl_memory_fits_and_peak_is_sane(bundled_catalog):
    """[FAL] publishes no memory figure; the product's 12.01 GiB (fp16 UNet + both text encoders + the fp32-upcast
    VAE decode) is consistent with [SDXL-OPT]-class SDPA peaks elsewhere in tests/. Pinned, not judged."""
    row = _size(_fal(), A100)
    assert row["memory"]["total_per_gpu_gib"] == pytest.approx(12.01, abs=0.05)


# ---------------------------------------------------------------- [KOHYA-1288] SDXL LoRA dim 256, RTX 4090

KOHYA_1288 = {
    "task": "lora",
    "model": {"preset": "sdxl"},
    "precision": "bf16",  # --mixed_precision bf16, no --full_bf16: fp32 LoRA weights (master_weights default)
    "optimizer": "adafactor",
    "micro_batch_size": 1,
    # networks.lora: every Linear of the UNet's transformer blocks and of both text encoders
    "lora": {"rank": 256, "targets": "all-linear"},
    "gradient_checkpointing": "none",
    "image": {
        "resolution_px": 1024,
        "train_steps": 5800,
        "cache_latents": True,
        "train_text_encoder": True,  # --text_encoder_lr set, no --network_train_unet_only
        "lora_module": "kohya",
        "loader_workers": 4,
    },
}

R_1288_SPEED = (
    "UNEXPLAINED (aud51s): [KOHYA-1288] kohya sdxl_train_network dim 256, bf16 mixed, Adafactor, no gradient "
    "checkpointing, text encoders trained, batch 1, 1024 px on an RTX 4090: published 10.2 s/it with 'all 24GB of "
    "VRAM ... used up'; product 0.981 s a step (-90.4%) and verdict 'fits' (19.43 GiB total, 23.32 GiB required "
    "with headroom). Known: the symptom (full VRAM, 99% 'CUDA usage', ~10x slower) is the Windows driver's "
    "sysmem fallback (A1111 wiki 'Optimum SDXL Usage': drivers above 531 slow down near the VRAM limit, NVIDIA "
    "custhelp a_id 5490; the remedy in threads like it is lowering network_dim, as kohya_ss #1730's 3090 went 200+ s/it -> 1.2 s/it at dim 32 -> 8). The "
    "product cannot price a spill and does not see this run as over the card: not sized (0%), no (a)(b) from "
    "the run (the driver version and the demand past 24 GB are not logged)"
)


@pytest.mark.django_db
@pytest.mark.xfail(strict=True, reason=R_1288_SPEED)
def test_kohya_1288_sdxl_lora_dim256_4090_step(bundled_catalog):
    ours = _size(KOHYA_1288, "rtx-4090")["throughput"]["step_seconds"]
    assert abs(_err(ours, 10.2)) <= SPEED, ours


R_1288_MEMORY = (
    "UNEXPLAINED (aud51s): [KOHYA-1288] 'all 24GB of VRAM get used up' (a lower bound on the run's demand: "
    "the card's 24 GiB less ~1 GiB Windows/desktop = ~23 GiB resident, with the rest spilled); product total "
    "19.43 GiB (-15.5% against 23 GiB, beyond 15%). The product's own 'required' (23.32 GiB with its headroom) "
    "reaches the card, so its verdict 'fits' rather than 'tight' is the finding. Not sized: which of the dim-256 "
    "adapters' fp32 weights / grads (8.18 + 3.40 GiB in the product) or the un-checkpointed activations "
    "(6.35 GiB) is short is not separable from a screenshot-level report"
)


@pytest.mark.django_db
@pytest.mark.xfail(strict=True, reason=R_1288_MEMORY)
def test_kohya_1288_sdxl_lora_dim256_4090_memory(bundled_catalog):
    total = _size(KOHYA_1288, "rtx-4090")["memory"]["total_per_gpu_gib"]
    assert total >= (1 - MEMORY) * 23.0, total


@pytest.mark.django_db
def test_kohya_1288_rank_is_what_moves_memory_diagnostic(bundled_catalog):
    """Diagnostic beside R_1288_* (not a published spec): the same run at dim 8 (kohya_ss #1730's remedy) is
    12.5 GiB in the product, 6.9 GiB less, the size of the fix the thread reports (spill -> no spill)."""
    spec = copy.deepcopy(KOHYA_1288)
    spec["lora"]["rank"] = 8
    assert _size(spec, "rtx-4090")["memory"]["total_per_gpu_gib"] == pytest.approx(12.5, abs=0.1)
