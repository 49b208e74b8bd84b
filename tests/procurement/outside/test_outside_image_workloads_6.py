"""A sixth outside practitioner's image cases for issue 29 (review x29f). None of these measurements is used by
test_outside_image_workloads.py, _2.py ... _5.py, image_workload_cases.json or docs/validation.md.

Each case is the spec a practitioner would write for the published run, sized the way a user sizes it
(`manage.py size --gpu SLUG --format json`, `manage.py recommend --format json` on the bundled catalog), and
compared with the published figure. Targets from the issue: memory within 15%, speed within 25%. A case the
product misses is a strict xfail whose reason carries the published figure, the product's, the gap and the
diagnosed cause.

Sources (figures quoted in each case):
  [SF] chengzeyi/stable-fast README.md, section 'Performance Comparison', rows 'Vanilla PyTorch (2.1.0)'
      (diffusers pipeline, fp16, batch 1, default CFG, speed in denoising iterations/s measured with CUDA events,
      so the VAE and text encoders are outside the figure). At commit 2b9b84e9d94b36cf5484c261b410c177836ebffe:
      'H100': SD 1.5 54.5 it/s, SD XL (1024x1024) 14.9 it/s; 'A100': SD 1.5 35.6 it/s, SD XL 8.7 it/s.
      At commit 3dfda5dc15e75ae4c5a35841155322d407b7c4ed (2023-12-09): 'RTX 4090 (512x512, batch size 1, fp16,
      tcmalloc enabled)' SD 1.5 24.9 it/s; 'RTX 3090 (...)' SD 1.5 22.5 it/s ('Vanilla PyTorch (2.1.0+cu118)').
      The README does not say SXM or PCIe for the H100 and A100; I size the SXM parts (the PCIe H100 and the
      A100 PCIe 40GB give the same verdicts: SDXL 69.6 and 122.7 ms a step, SD 1.5 31.1 ms).
      One iteration = one denoising step = two UNet samples (CFG). The product's step is read as the difference
      of two sizings, 50 and 20 steps, over 30 (the encoders and VAE cancel).
  [LAMBDA] LambdaLabsML/lambda-diffusers benchmarks/benchmark.csv (commit 8571d8d492c6a999b8417cfb7752694a18d209a6;
      rows written by 6eb1199, 2023-01-24) with docs/benchmark-update.md and scripts/benchmark.py, Dockerfile and
      Makefile (same commit): CompVis/stable-diffusion-v1-4 (the SD 1.x UNet, the sd-1.5 preset's shapes),
      512 px, '--steps 30', default guidance (CFG), `enable_xformers_memory_efficient_attention()`,
      `enable_vae_slicing()` when n_samples > 16, 'half' = torch_dtype fp16, 'single' = fp32; diffusers 0.11.0 on
      NGC PyTorch 22.11 (PyTorch 1.13, CUDA 11.8). latency = mean seconds for one call producing n_samples images;
      memory = torch.cuda.memory_reserved() / 1e9 after a call (GB, no CUDA context): compared with
      (total - cuda_context_gib) converted to GB. Rows used (device, precision, n_samples, latency, memory;
      -1 = out of memory):
        NVIDIA A100 80GB PCIe, half, 1, 1.17, 3.19       NVIDIA A100 80GB PCIe, half, 16, 9.93, 19.81
        NVIDIA A100 80GB PCIe, half, 64, 36.89, 12.46    NVIDIA A100-SXM4-40GB, single, 8, 10.16, 18.11
        NVIDIA A100-SXM4-40GB, half, 8, 4.85, 11.12     NVIDIA A10, half, 8, 12.93, 11.05
        NVIDIA A10, single, 32, 108.78, 15.88           NVIDIA A10, single, 64, -1, -1
        NVIDIA A10, half, 128, 212.94, 22.18            NVIDIA A100 80GB PCIe, half, 128, 73.72, 22.68
        Tesla V100-SXM2-16GB, half, 8, 10.64, 10.45     Tesla V100-SXM2-16GB, half, 16, 20.96, 10.87
        Tesla V100-SXM2-16GB, half, 32, 40.13, 7.73     Tesla V100-SXM2-16GB, half, 64, 79.82, 13.51
        Tesla V100-SXM2-16GB, half, 128, -1, -1         Tesla V100-SXM2-16GB, single, 8, 28.71, 15.88
        Tesla V100-SXM2-16GB, single, 16, -1, -1
      The stack is older than the product's 'optimized' one; I state image.runtime 'pytorch-2.0' (the 2023 stack
      with xformers, the closest the spec offers). Under 'optimized' every fp16 speed row below comes out 28-36%
      faster than published.
  [XFLUX] XLabs-AI/x-flux issue #12 'A100 80GB lora training out of memory', comment by thavocado (2024-08-09):
      'With default settings in example files this requires 42837MiB VRAM' (nvidia-smi, so CUDA context
      included) under the single-GPU DeepSpeed ZeRO-2 accelerate config it quotes. The example files at the
      commit of that day (ccc4039, 2024-08-09): train_configs/test_lora.yaml: flux-dev, img_size 512,
      train_batch_size 1, gradient_accumulation_steps 2, rank 16, mixed_precision bf16, AdamW;
      train_flux_lora_deepspeed.py: LoRA processors on the double blocks' attention, the Flux transformer
      loaded in bf16 (safetensors, assign=True), T5-XXL (max_length 512) and CLIP-L loaded in bf16 on the GPU
      and run every step (no cached embeddings), the VAE on the GPU encoding every step (no cached latents), no
      gradient checkpointing.
  [L4-Y11] a Colab notebook in the public index (find_string id 62465390008; its Colab badge points at
      github.com/NANInithin/Vehicle-speed-estimation-through-aerial-videos YOLO11_Speed_esimation_Training.py):
      'Ultralytics 8.3.75 ... torch-2.5.1+cu124 CUDA:0 (NVIDIA L4, 22693MiB)', 'Setup complete (12 CPUs, 53.0 GB
      RAM ...)', model.train(data="VisDrone.yaml", epochs=100, imgsz=640, batch=16): deterministic=True,
      amp=True, workers=8 ('Using 8 dataloader workers'), 6,471 train images (405 iterations), nc=10.
      Epochs 4-16: 6.36-6.45 it/s (median 6.41 = 102.6 images/s), 62-64 s an epoch.
  [A100-Y8X] ArwaASM/In-classroom-Interaction-Detection README.md (find_string id 11385549373): Colab,
      'Ultralytics 8.3.9 ... torch-2.4.1+cu121 CUDA:0 (NVIDIA A100-SXM4-40GB, 40514MiB)', `yolo task=detect
      mode=train model=yolov8x.pt ... epochs=120 imgsz=800` (default batch 16, AMP, deterministic, SGD via
      optimizer=auto for a run this long), 6,369 train images (224 x 224 Roboflow exports, 31,265 labels in
      7,271 images: sparse), 452 validation images each epoch: '120 epochs completed in 4.345 hours.'
"""

from __future__ import annotations

import io
import json
from decimal import Decimal

import pytest
from django.core.management import call_command

from procurement.sizing.assumptions import CUDA_CONTEXT_GIB

MEMORY, SPEED = 0.15, 0.25
GIB = 2**30


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


def _cents(value) -> Decimal:
    return Decimal(str(value)).quantize(Decimal("0.01"))


# ---------------------------------------------------------------- [SF] eager denoising steps, batch 1


def _generation(preset: str, steps: int, **image) -> dict:
    return {
        "task": "inference",
        "model": {"preset": preset},
        "precision": "fp16",
        "image": {"steps": steps, **image},
    }


def _step_seconds(tmp_path, preset: str, gpu: str, **image) -> float:
    """One denoising step (two UNet samples under CFG), as stable-fast's it/s counts it: the product's
    50-step and 20-step images differ by 30 steps, the text encoders and the VAE cancelling."""
    long = _size(tmp_path, _generation(preset, 50, **image), gpu)["throughput"]["seconds_per_batch"]
    short = _size(tmp_path, _generation(preset, 20, **image), gpu)["throughput"]["seconds_per_batch"]
    return (long - short) / 30


SF_AGREED = [
    # SDXL on an H100: 67.1 ms a step published; product 66.7 ms (-0.6%). fix51a: 68.9 -> 63.4 ms (+2.6% ->
    # -5.6%): the Hopper host class (28 us) shortens the queue where host and GPU co-decide. 13.5 TFLOP a step (two 6.76 TFLOP
    # UNet samples at a 128 x 128 latent) in 67 ms is 203 TFLOPS, 21% of the H100's dense fp16.
    pytest.param("sdxl", "h100-sxm5-80gb", 14.9, id="sdxl-h100"),
    # SDXL on an A100: 114.9 ms published; product 116.8 ms (+1.6%).
    pytest.param("sdxl", "a100-sxm4-80gb", 8.7, id="sdxl-a100"),
    # SD 1.5 on an A100: 28.1 ms published; product 31.1 ms (+10.8%): the product's host floor (1,004 kernels
    # x eager_kernel_host_s 31 us), fitted on fal's A100 host, binds here.
    pytest.param("sd-1.5", "a100-sxm4-80gb", 35.6, id="sd15-a100"),
    # SD 1.5 on an RTX 4090 (commit 3dfda5dc): 40.2 ms published; product 31.1 ms (-22.6%), inside the bar
    # at its edge, the same host floor; the Ada board-power bound does not bind at batch 1.
    pytest.param("sd-1.5", "rtx-4090", 24.9, id="sd15-rtx-4090"),
]


@pytest.mark.django_db
@pytest.mark.parametrize(("preset", "gpu", "published_it_s"), SF_AGREED)
def test_stable_fast_vanilla_pytorch_step(bundled_catalog, tmp_path, preset, gpu, published_it_s):
    _within(_step_seconds(tmp_path, preset, gpu), 1.0 / published_it_s, SPEED)


@pytest.mark.django_db
@pytest.mark.xfail(
    strict=True,
    reason=(
        "EXPLAINED (vit45; fixa45 after aud45a: the bound is the row's own): (a) the host's launch time a kernel,"
        " not the card: the product prices the eager SD 1.5 step's 1,004 kernels at eager_kernel_host_s (31 us,"
        " fal's A100 host), a 31.1 ms floor. The published row bounds this host directly: a vanilla eager step"
        " issues its 1,004 kernels one by one from the host, and the README @2b9b84e9 ('H100' table, 'Vanilla"
        " PyTorch (2.1.0)') times the step at 1 / 54.5 it/s = 18.3 ms, so the host took at most 18.3 ms / 1,004 ="
        " 18.2 us a kernel (GPU time that does not overlap only lowers it), against the product's 31: no model"
        " at 31 us a kernel meets the row. (The same table's 'torch.compile (2.1.0, max-autotune)' row, 66.0 it/s,"
        " 1.21x, adds nothing to the bound: compilation also fuses kernels.) The README says its tables come from different contributors'"
        " machines, that 'performance varies very greatly across different hardware/software/platform/driver"
        " configurations', and recommends TCMalloc 'to reduce CPU overhead'. (b) Size: 1,004 x (31 - 18.2) us ="
        " 12.8 ms, the whole gap (31.1 - 18.3 ms); the product's GPU step under image.runtime pytorch-2.0 is 14.9 ms (-19% of"
        " 18.3). (c) A spec would need the host CPU's launch time a kernel: no field states it, and no source"
        " gives that time per CPU (a per-host value would be fitted on this row). History:"
        " [SF] SD 1.5 eager on an H100: published 54.5 it/s = 18.3 ms a step vs product 31.1 ms (+69.6%). The"
        " product's eager UNet step cannot go below 1,004 kernels x eager_kernel_host_s (31 us, fitted on fal's A100"
        " host), so SD 1.5 at batch 1 costs 31.1 ms on an A100, H100, RTX 4090 and RTX 3090 alike. The H100 run"
        " issued its kernels at ~18 us each (the README's H100 hosts are newer than fal's): launch cost is a property"
        " of the host CPU and PyTorch build, which the spec cannot state. A buyer ranking batch-1 SD 1.5 serving sees"
        " no gain from an H100 over a 3090 at ~1/10 of its price. sd29c: the same README at 2b9b84e9 bounds each host"
        " from its own rows: 'torch.compile (2.1.0, max-autotune)' (CUDA graphs: no per-kernel host cost) runs SD 1.5"
        " at 66.0 it/s on the H100 (15.2 ms) and 41.9 on the A100 (23.9 ms); vanilla is 1.21x and 1.18x of those, so"
        " both steps nearly keep pace with their GPUs and the H100 host issued its 1,004 kernels at <= 18.3 us, the"
        " A100 host at <= 28 us. With image.runtime pytorch-2.0 (this run's PyTorch 2.1.0, before SDPA's"
        " FlashAttention-2) the product's GPU step is 26.0 ms on the A100 (-8% of 28.1) and 14.9 ms on the H100 (-19%"
        " of 18.3), so the card model agrees and the host binds. No card-independent host passes this README's own"
        " vanilla rows: the RTX 4090's 40.2 ms needs >= 32.1 ms (-25%) where its GPU step is 20.2 ms (28.4 under"
        " pytorch-2.0), i.e. >= 32 us a kernel, and the H100's 18.3 ms needs <= 22.9 ms, i.e. <= 22.8 us. The host is"
        " not a property of the card either: on A100s the published hosts run 28 us (this README), 31 (fal, the fit),"
        " ~46 (diffusers torch2.0.md) and ~52 us a kernel (the LCM blog, test_outside_image_workloads_4.py). A host"
        " paired with the card's era (H100 servers on newer CPUs) would need >= 1.36x the single-thread speed of the"
        " A100's; a Geekbench 5 report puts prototype Sapphire Rapids Xeon 8468s (1,257 single-thread) level with"
        " EPYC 7763s (1,249) (bloglaralemi.com 2022-09-09, after Tom's Hardware), so the era does not carry 1.7x. On"
        " H100s alone the window is narrow: the SDB README's eager H100 PCIe row (1.44 s,"
        " test_outside_image_workloads_4.py) needs >= ~21 us a kernel, this row <= 22.8; a Hopper-only host at 22 us"
        " (31 / 1.41) passes both at the bars' edges (+20.4% here, -21.4% there), a window between two cases, not a"
        " measured host: not adopted. The README's author says as much of his own host ('my personal gaming PC ..."
        " has a more powerful CPU than those from cloud server providers': RTX 4080 29.5 it/s vanilla, the 4090 row,"
        " another host, 24.9). Lowering eager_kernel_host_s to 18 us for all cards breaks the check that needs the"
        " slow end (torch2.0.md's A100 batch-4/batch-1 ratio in docs/validation.md: ~2.9 vs 1.87) and moves the LCM"
        " A100 case further off. Needs a stated host (a spec field for the host CPU and a per-kernel cost per CPU,"
        " with a source per case); left. diffspeed43 (stop 43): the README at 2b9b84e9 says how it timed ('I use"
        " `CUDA Event` to measure the speed of iterations per second accurately', not tqdm's bar): events recorded"
        " on the stream time the GPU's timeline, which in a host-bound step follows the host's launches (the GPU"
        " idles until each kernel arrives), so the method does not take the host out of the figure; its ControlNet"
        " column keeps the H100's compiled / vanilla ratio near SD 1.5's (40.7 / 35.8 = 1.14 against 66.0 / 54.5 ="
        " 1.21): a host nearly keeping pace with its GPU in both. Unchanged. diff44 (stop 44), unchanged (31.1 ms):"
        " the README @2b9b84e9 credits its tables to different people's machines (H100: @Consceleratus and"
        " @harishp; A100: @SuperSecureHuman and @jon-chuang; RTX 4080: the author's gaming PC) and recommends"
        " TCMalloc (LD_PRELOAD) 'to reduce CPU overhead'; its RTX 4090 and 3090 rows, labelled 'tcmalloc enabled'"
        " at 3dfda5dc, are its slowest hosts (the 4090's >= 32 us a kernel, above; the 3090's 44.4 ms a step"
        " slower still), so the allocator is not what makes the H100 host fast. The README states no CPU for any row; a per-host launch cost would be fitted on the case"
        " it is meant to pass. Left. fix51a: 31.1 -> 28.1 ms (+69.6% -> +53.2%), label kept: the host now has a"
        " class read from the card (eager_kernel_host_s_hopper, 28 us on generation >= 90), set on ONE Hopper row,"
        " [SDB]'s eager H100 PCIe SD 1.5 row (1.584 -> 1.436 s vs 1.44, test_outside_image_workloads_4.py), and held"
        " out here: this H100 host (<= 18.2 us, torch 2.1) is 1.5x faster than that one (~28 us, torch 2.0), so a"
        " per-class rate cannot land both; the rest is still this host's own speed, which no field states."
    ),
)
def test_stable_fast_vanilla_sd15_step_on_an_h100(bundled_catalog, tmp_path):
    _within(_step_seconds(tmp_path, "sd-1.5", "h100-sxm5-80gb"), 1.0 / 54.5, SPEED)


# img29 (not fixed; root cause): the 3090's diffusion row (1.161 of 71) is a ratio to the A100 measured on the
# PyTorch 2.0 stack (torch2.0.md compiled batch 16: 3090 49.6 TFLOPS = 70% of its fp32-accumulate 71, A100 98 =
# 31% of 312). The engine applies it under the optimized stack, whose SD 1.x rate is 1/0.65 of PyTorch 2.0's on
# the A100, so the 3090 inherits a 1.54x gain the A100 had headroom for and it has not: 81 TFLOPS saturated
# (114% of 71), 63.8 at batch 1 (90%). Weight reads at batch 1 are 1.7 GB a step, 1.8 ms at 936 GB/s: not it.
# The same README's 3090 rows say so: torch.compile 39.5 ms, and the fused engines reach 26-32 ms only with
# fp16-accumulate GEMMs (stable-fast README: 'compute with fp16', 2x the fp32-accumulate rate on GeForce). Stated
# at its PyTorch 2.0 rate (0.755 of 71) the step is 40.9 ms (-8.1%); the fix re-bases the 3090, 4090 and T4 rows
# (and the L40 and RTX 6000 Ada rows fitted on the 4090's) on their stack, left for a round with time to rerun them.
# Was a strict xfail: 31.1 ms (-30.0%). Now 33.5 ms (-24.6%) (sd29: a card's row stops at its own dense
# peak, assumptions.image_card_ceiling: the 3090's 1.161 of 71 under the optimized stack was a PyTorch 2.0
# card/A100 ratio carried across stacks; now at most 1.0 of its fp32-accumulate 71 TFLOPS). At the edge of
# the bar: the card's measured PyTorch 2.0 rate (0.755 of 71) would give 40.9 ms (img29).
@pytest.mark.django_db
def test_stable_fast_vanilla_sd15_step_on_an_rtx_3090(bundled_catalog, tmp_path):
    _within(_step_seconds(tmp_path, "sd-1.5", "rtx-3090"), 1.0 / 22.5, SPEED)


# ---------------------------------------------------------------- [LAMBDA] SD 1.x batch generation, 30 steps


def _lambda(batch: int, precision: str = "fp16") -> dict:
    """scripts/benchmark.py's call: prompt x n_samples, 30 steps, CFG, xformers, VAE slicing above 16."""
    # tf32_matmul: every row of the CSV ran in lambda-diffusers' scripts/Dockerfile, FROM
    # nvcr.io/nvidia/pytorch:22.11-py3 (docs/benchmark-update.md: "PyTorch 1.13, NGC 22.11"), whose
    # TORCH_ALLOW_TF32_CUBLAS_OVERRIDE=1 puts cuBLAS fp32 matmuls on TF32 (no effect in fp16 or on the V100)
    image = {"steps": 30, "runtime": "pytorch-2.0", "tf32_matmul": True}
    if batch > 16:
        image["vae_slicing"] = True
    return {
        "task": "inference",
        "model": {"preset": "sd-1.5"},
        "precision": precision,
        "micro_batch_size": batch,
        "image": image,
    }


def _reserved_gb(row: dict) -> float:
    """The product's peak as torch.cuda.memory_reserved() / 1e9 reads it: without the CUDA context."""
    return (row["memory"]["total_per_gpu_gib"] - CUDA_CONTEXT_GIB) * GIB / 1e9


LAMBDA_SPEED = [
    # A100 80GB PCIe, fp16, 16 images: 9.93 s; product 9.05 s (-8.9%)
    pytest.param("a100-pcie-80gb", 16, 9.93, id="a100-pcie-fp16-b16"),
    # same card, 64 images with VAE slicing: 36.89 s; product 35.35 s (-4.2%)
    pytest.param("a100-pcie-80gb", 64, 36.89, id="a100-pcie-fp16-b64-sliced"),
    # A10, fp16, 8 images: 12.93 s; product 11.68 s (-9.6%)
    pytest.param("a10", 8, 12.93, id="a10-fp16-b8"),
    # V100 SXM2 16GB, fp16, 8 images: 10.64 s; product 11.00 s (+3.4%)
    pytest.param("v100-sxm2-16gb", 8, 10.64, id="v100-fp16-b8"),
]


@pytest.mark.django_db
@pytest.mark.parametrize(("gpu", "batch", "published_s"), LAMBDA_SPEED)
def test_lambda_sd_batch_generation_time(bundled_catalog, tmp_path, gpu, batch, published_s):
    row = _size(tmp_path, _lambda(batch), gpu)
    _within(row["throughput"]["seconds_per_batch"], published_s, SPEED)


@pytest.mark.django_db
def test_lambda_sd_one_image_reserved_memory_on_an_a100(bundled_catalog, tmp_path):
    """[LAMBDA] A100 80GB PCIe, half, 1 image: 3.19 GB reserved; product 2.84 GB (-11.0%). Weights 1.99 GiB
    (UNet 860M, CLIP-L 123M, VAE 84M in fp16) are most of it."""
    row = _size(tmp_path, _lambda(1), "a100-pcie-80gb")
    _within(_reserved_gb(row), 3.19, MEMORY)


# Reserved memory is what the caching allocator kept, not what the run needed: the same 16 unsliced fp16 images
# read 19.81 GB on the A100 80GB PCIe, 19.86 on the A10 (24 GB), 20.01 on the RTX A6000 and 10.87 on the V100
# 16GB, where the allocator, short of room, frees its cached blocks and retries before it fails. I compare the
# product with the readings taken under pressure (the V100's), and check every fit/OOM boundary the CSV shows.


@pytest.mark.django_db
def test_lambda_sd_sixteen_unsliced_images_on_a_v100_16gb(bundled_catalog, tmp_path):
    """[LAMBDA] Tesla V100-SXM2-16GB, half, 16 images, no slicing (n_samples 16 is not > 16): 10.87 GB
    reserved, an upper bound on the need (it ran). Product 11.82 GB (+8.7%), 'fits' on the card."""
    row = _size(tmp_path, _lambda(16), "v100-sxm2-16gb")
    _within(_reserved_gb(row), 10.87, MEMORY)


@pytest.mark.django_db
def test_lambda_sd_fp32_eight_images_on_a_v100_16gb(bundled_catalog, tmp_path):
    """[LAMBDA] Tesla V100-SXM2-16GB, single, 8 images: 15.88 GB reserved (14.79 GiB of the card's 14.90: at
    its limit). Product 14.06 GB (-11.5%), fp32 weights 3.97 GiB (fp32 inference keeps the text encoder and
    VAE in fp32 too), verdict 'tight'. On the A100-SXM4-40GB the same run read 18.11 GB (allocator slack)."""
    row = _size(tmp_path, _lambda(8, "fp32"), "v100-sxm2-16gb")
    _within(_reserved_gb(row), 15.88, MEMORY)
    assert row["verdict"] == "tight"


# diff29 (stop 42): the trace below missed two things bound in UNet2DConditionModel.forward while an up block runs:
# `res_samples` (all per_level + 1 skips of the level, not the two left in the block's tuple) and `sample` (the
# block's input, 640 channels at level 0), 26 C in all at SD 1.5's level 0 where the product counted 23 C;
# image_shapes.unet_forward_peak now counts them.
# img29 (not fixed): traced against diffusers 0.11's source, the UNet forward at 128 samples holds no batch-sized
# tensor the product leaves out beyond ~4% (BasicTransformerBlock keeps attn_output, norm2's output, the block
# input and Transformer2DModel's residual alive across the GEGLU: 22 C at the top level where the product
# counts 18 C, but the product also counts every skip connection where only two are alive). latents, the CFG
# concat and the text embeddings are MBs; the decoded images are 64 x 3 x 512 x 512 fp16 (0.1 GB, after the
# UNet's peak; decode_latents moves them to the CPU before .float()). The CSV's own sliced rows are
# allocator-shaped (64 images: 12.46 A100 80GB, 13.79 A100 40GB, 13.51 V100, 17.54 A10, 23.84 A6000; 32: 7.33-7.73
# on all five; 128: 22.68 on both A100s, 22.18 on the A10 under pressure), so the rest is cuDNN workspace or
# the caching allocator, neither stated in a source.
# Was a strict xfail: "published 13.51 GB reserved vs product 11.40 GB (-15.6%; 10.37 GB, -23.2%, before diff29
# traced the UNet's no-grad peak through diffusers' up path) ... The gap is inside the UNet's forward at 128 samples
# or in blocks the allocator cannot reuse". Now 12.07 GB (-10.6%) because the product counts what the caching
# allocator reserves over a UNet forward (diffmem43, the sd-1.5 preset's forward_reserve_ratio, 1.127 reserved per allocated
# byte at the forward's peak in place of the flat 5%). Both halves of the old diagnosis were checked: diffusers
# 0.11.0's own forward, run on CPU with memory-efficient attention and its allocations recorded
# (tests/procurement/sizing/data/sd14_unet_forward_allocations.json), holds 34,078,720 elements a sample at its
# peak, the engine's traced count to the element (no tensor left out); replayed through the caching allocator's
# rules (c10/cuda/CUDACachingAllocator.cpp: 2 MiB rounding, best-fit split of cached blocks, no merging across
# segments) the same forward reserves 1.126-1.128 of that from 64 to 512 samples
# (tests/procurement/sizing/test_unet_allocator_reserve.py). None of the CSV's rows set the ratio. The other sliced
# rows move with it: 32 images 6.82 -> 7.16 GB (7.73 published, -11.8% -> -7.4%); 128 images on the A100 80GB and
# the A10 20.56 -> 21.90 (22.68 / 22.18: -3.4% / -1.2%); the A100 80GB's 64-image reading 12.46 (-3.1%) and the
# A100 40GB's 13.79 (-12.5%, test_outside_audit_stop42b.py). What this card reads above the A100 80GB for the same
# run (1.05 GB) is likely history, not the run: scripts/benchmark.py runs every (images, precision) pair in one
# process and moves each new pipeline to the GPU (best fit into the blocks the previous run cached) before its
# empty_cache, so every segment a weight lands in stays reserved; its size depends on the previous run's segments
# (not computed). The readings of this one run spread 12.46-23.84 GB over five cards.
@pytest.mark.django_db
def test_lambda_sd_64_sliced_images_on_a_v100_16gb(bundled_catalog, tmp_path):
    row = _size(tmp_path, _lambda(64), "v100-sxm2-16gb")
    _within(_reserved_gb(row), 13.51, MEMORY)


# diff29 (stop 42): the largest sliced batch the CSV ran, 128 images (256 UNet samples under CFG), read 22.68 GB on
# the A100 80GB PCIe (and on the A100-SXM4-40GB) and 22.18 GB on the A10, where the allocator was short of room.
# Product 20.56 GB on both (-9.3%, -7.3%); it was 18.49 GB (-18.5%, -16.6%) while the UNet's peak counted every skip
# plus an 18 C feed-forward, before image_shapes.unet_forward_peak traced the up path (26 C at level 0: the up
# block's input and three skips held by UNet2DConditionModel.forward, and a transformer block's 21 C).
# diffmem43: 21.90 GB on both (-3.4%, -1.2%) with the caching allocator's reserve over the UNet forward
# (the sd-1.5 preset's forward_reserve_ratio).
LAMBDA_SLICED_128 = [
    pytest.param("a100-pcie-80gb", 22.68, id="a100-pcie-80gb"),
    pytest.param("a10", 22.18, id="a10"),
]


@pytest.mark.django_db
@pytest.mark.parametrize(("gpu", "published_gb"), LAMBDA_SLICED_128)
def test_lambda_sd_128_sliced_images_reserved_memory(bundled_catalog, tmp_path, gpu, published_gb):
    row = _size(tmp_path, _lambda(128), gpu)
    _within(_reserved_gb(row), published_gb, MEMORY)


LAMBDA_BOUNDARIES = [
    # (card, precision, images, ran): the CSV's -1 rows are out-of-memory failures
    pytest.param("v100-sxm2-16gb", "fp32", 8, True, id="v100-fp32-8-ran"),
    pytest.param("v100-sxm2-16gb", "fp32", 16, False, id="v100-fp32-16-oom"),
    pytest.param("v100-sxm2-16gb", "fp16", 16, True, id="v100-fp16-16-ran"),
    pytest.param("v100-sxm2-16gb", "fp16", 64, True, id="v100-fp16-64-sliced-ran"),
    pytest.param("v100-sxm2-16gb", "fp16", 128, False, id="v100-fp16-128-sliced-oom"),
    pytest.param("a10", "fp32", 32, True, id="a10-fp32-32-sliced-ran"),
    pytest.param("a10", "fp16", 128, True, id="a10-fp16-128-sliced-ran"),
    # Was a strict xfail: "the CSV's -1 (out of memory). Product peak 21.8 GiB on a 22.35 GiB card, verdict
    # 'tight' ... 2.5% more would put it over the card". Now 23.08 GiB, 'does_not_fit', because the product counts
    # the caching allocator's reserve over the UNet forward (the sd-1.5 preset's forward_reserve_ratio, 1.127 of its 16.25
    # GiB fp32 activation peak, the flat 5% before): the same run on the A100 80GB PCIe read 26.17 GB reserved, the
    # product now 24.14 GB (-7.8%, was 22.80, -12.9%).
    pytest.param("a10", "fp32", 64, False, id="a10-fp32-64-sliced-oom"),
]


@pytest.mark.django_db
@pytest.mark.parametrize(("gpu", "precision", "batch", "ran"), LAMBDA_BOUNDARIES)
def test_lambda_sd_fit_or_oom(bundled_catalog, tmp_path, gpu, precision, batch, ran):
    """Every run of the CSV on the two smallest cards either ran or failed for memory; the product's verdict
    ('fits' / 'tight' = runs, 'does_not_fit' = fails) should say which."""
    row = _size(tmp_path, _lambda(batch, precision), gpu)
    assert (row["verdict"] in ("fits", "tight")) == ran, row["verdict"]


# Was a strict xfail: "published 10.16 s vs product 21.01 s (+106.8%): the product runs an fp32 network's
# matmuls on the CUDA cores; the run's NGC 22.11 container puts them on TF32 and the spec could not say so".
# Now 9.36 s (-7.9%) (img29: image.tf32_matmul, stated for every Lambda row from the benchmark's Dockerfile).
@pytest.mark.django_db
def test_lambda_sd_fp32_eight_images_on_an_a100_40gb(bundled_catalog, tmp_path):
    row = _size(tmp_path, _lambda(8, "fp32"), "a100-sxm4-40gb")
    _within(row["throughput"]["seconds_per_batch"], 10.16, SPEED)


# ---------------------------------------------------------------- [XFLUX] FLUX.1-dev LoRA, encoders resident

XFLUX = {
    "task": "lora",
    "model": {"preset": "flux.1-dev"},
    "precision": "bf16",
    "micro_batch_size": 1,
    "gradient_accumulation_steps": 2,
    "lora": {"rank": 16, "targets": "attention"},
    "image": {
        "resolution_px": 512,
        "text_tokens": 512,
        "cache_latents": False,
        "cache_text_embeddings": False,
        "train_steps": 1000,
    },
}


@pytest.mark.django_db
def test_xflux_lora_default_example_memory(bundled_catalog, tmp_path):
    """[XFLUX] 42,837 MiB = 41.83 GiB (nvidia-smi). Product total 44.52 GiB (+6.4%): weights 31.52 GiB (the
    transformer 11.9B and T5-XXL 4.76B in bf16 with CLIP-L and the VAE: both encoders resident, the
    image.cache_text_embeddings false path), activations 10.02 GiB at 1,024 image + 512 text tokens without
    checkpointing. My LoRA targets are wider than x-flux's (every attention, not the double blocks' only): a few
    MB of adapters and their optimizer state, within the noise. DeepSpeed ZeRO-2's bucket buffers on one GPU are
    not counted by the product and not separable in the reading."""
    row = _size(tmp_path, XFLUX, "a100-sxm4-80gb")
    _within(row["memory"]["total_per_gpu_gib"], 42837 / 1024, MEMORY)


# ---------------------------------------------------------------- [L4-Y11] YOLO11n on VisDrone, an L4

L4_YOLO = {
    "task": "full_finetune",
    "model": {"preset": "yolo11n"},
    "precision": "fp16",
    "micro_batch_size": 16,
    "optimizer": "sgd",
    # VisDrone is dense (38,759 boxes in the 548 val images, 71 an image; the last train batch of 7 images
    # carried up to 814 labels). 400 is my stated bound; the verdict holds for any bound up to 1,000 (below).
    # loader_workers: the log's 'Using 8 dataloader workers' (workers=8 on 12 CPUs). source_megapixels:
    # VisDrone2019-DET's stored images run from 1360 x 765 (1.04 MP) to 2000 x 1500 (3.0 MP) (the dataset's
    # maximum; public VisDrone training scripts quote '~1360x765 to 2000x1500', with 960 x 540 and 1920 x 1080
    # also common); no per-image mean is published, so the middle of that range, 2.0 MP, is stated. The
    # product lands within SPEED for any stated size from 1.1 to 2.5 MP (1.04: +26.6%, 3.0: -33.0%).
    "image": {
        "resolution_px": 640,
        "epochs": 100,
        "dataset_images": 6471,
        "max_objects_per_image": 400,
        "loader_workers": 8,
        "source_megapixels": 2.0,
    },
    "host": {"vcpus_per_gpu": 12},
}


# Was a strict xfail: published 102.6 images/s vs product 181.1 (+76.5%). Now 90.5 (-11.8%) (ldr29: the loader
# runs Ultralytics' 8 workers, not all 12 vCPUs, and each decodes VisDrone's 2 MP sources at 11.3 images/s).
@pytest.mark.django_db
def test_yolo11n_visdrone_training_rate_on_an_l4(bundled_catalog, tmp_path):
    row = _size(tmp_path, L4_YOLO, "l4")
    _within(row["throughput"]["training_images_per_second"], 102.6, SPEED)


# ---------------------------------------------------------------- [A100-Y8X] YOLOv8x at 800 px, an A100 40GB


# fill44 (stop 44): 4.365 -> 4.321 h (+0.5% -> -0.6%).
@pytest.mark.django_db
def test_yolov8x_800px_run_hours_on_an_a100_40gb(bundled_catalog, tmp_path):
    """[A100-Y8X] 4.345 h for 120 epochs (validation included, ~5% of it). Product 4.365 h (+0.5%), 48.6
    images/s, GPU-bound: 224 px sources decode fast, so a Colab A100 host's 12 vCPUs (8 loader workers) are not
    the bound (the same 4.365 h at 8 vCPUs). The detector training rate scaled by the A100's dense FLOPs per
    clock (gpu_clocks.csv) plus the deterministic fill lands on it; nothing here was fitted on an A100 log."""
    spec = {
        "task": "full_finetune",
        "model": {"preset": "yolov8x"},
        "precision": "fp16",
        "micro_batch_size": 16,
        "optimizer": "sgd",
        "image": {"resolution_px": 800, "epochs": 120, "dataset_images": 6369},
        "host": {"vcpus_per_gpu": 12},
    }
    row = _size(tmp_path, spec, "a100-sxm4-40gb")
    _within(row["throughput"]["training_hours"], 4.345, SPEED)


# ---------------------------------------------------------------- ranking judgement: 100,000 SDXL images

SDXL_100K = {
    "task": "inference",
    "model": {"preset": "sdxl"},
    "precision": "fp16",
    "image": {"steps": 30, "images": 100_000},
}


@pytest.mark.django_db
def test_sdxl_100k_images_top_row_by_hand(bundled_catalog, tmp_path):
    """Which offer makes 100,000 SDXL images (fp16, 1024 px, 30 steps, CFG, eager diffusers) cheapest?
    Today's top row: vast '8x-Tesla_V100-32-65536' (pricing/data/skypilot/vast/vms.csv line 56: 8 x V100,
    131,072 MiB in all = 16 GB each, 32 vCPUs, 64 GiB, 0.85 USD/h, Sweden) on demand, 30.577 h. By hand:
    compute 0.85 x 30.577 = 25.9907 -> 25.99 USD; storage 1.36; total 27.35 USD; per 1,000 images 0.2735 USD.
    (diffspd, stop 51: 30.522 h, 25.94 / 27.30 USD before the eager step's launch queue was priced as a critical
    path, image_model.eager_pass_seconds: +0.18% on this GPU-bound step.)
    Per image on the card: 30.577 h x 8 x 3600 / 100,000 = 8.81 s (product `size` on v100-pcie-16gb agrees),
    about 0.29 s a denoising step, 49 TFLOPS of the V100's 125.
    Judgement: the arithmetic is right and 16 GB holds SDXL fp16 (12.0 GiB peak). The row rests on the V100's
    SDXL rate, which no source here measures: the nearest check is [LAMBDA]'s V100 fp16 SD 1.x row (+3.4% under
    image.runtime 'pytorch-2.0', -28% under the 'optimized' default this ranking uses). The second row (lium
    RTX3090_8x, 31.67 USD) is 16% dearer, so a V100 18% slower than the product says would flip the order; the
    first answer is fragile, and the product says nothing of it. The 3090's own rate is the [SF] miss above
    (30% too fast at batch 1), which, corrected, moves the 3090 rows further down, not up."""
    rows = _recommend(tmp_path, SDXL_100K, top=3)
    first = rows[0]
    assert (first["provider"], first["instance_type"], first["gpus"]) == ("vast", "8x-Tesla_V100-32-65536", 8)
    assert first["price_per_hour"] == "0.850000" and first["pricing_model"] == "on_demand"
    assert first["fits"] and first["memory_per_gpu_gib"] <= first["memory_margin"]["capacity_gib"]
    price, hours = Decimal(first["price_per_hour"]), Decimal(str(first["hours"]))
    breakdown = {k: Decimal(v) for k, v in first["cost_breakdown"].items()}
    assert breakdown["compute"] == _cents(price * hours) == Decimal("25.99")
    assert sum(breakdown[k] for k in ("compute", "setup", "storage", "reruns")) == breakdown["total"]
    assert breakdown["total"] == Decimal(first["total_cost"]) == Decimal("27.35")
    assert _cents(breakdown["total"] / 100) == _cents(first["unit_costs"]["per_thousand_images"])
    per_image = float(hours) * first["gpus"] * 3600 / 100_000
    sized = _size(
        tmp_path,
        {k: v for k, v in SDXL_100K.items() if k != "image"} | {"image": {"steps": 30}},
        first["gpu"],
    )
    assert per_image == pytest.approx(sized["throughput"]["seconds_per_batch"], rel=0.01)
    # The runner-up was lium RTX3090_8x at 31.67 USD (1.16x), within the 25% speed bar. sd29 (integration):
    # the 3090 is held at its own fp32-accumulate peak under every runtime (compute_peak.own_peak_ceiling_factor),
    # which, as the docstring predicted, moved the 3090 rows down: the runner-up now costs 34.70 USD (1.27x).
    # What stays true and is checked: the second row costs more than the first, and by less than half again
    # (the first answer still rests on an unmeasured V100 SDXL rate).
    margin = Decimal(rows[1]["total_cost"]) / breakdown["total"]
    assert Decimal("1") < margin < Decimal("1.5")


@pytest.mark.django_db
def test_sdxl_100k_top_row_says_its_host_is_unknown(bundled_catalog, tmp_path):
    """The top row warns 'host RAM and vCPUs unknown for this offer: not checked' although its catalog line
    says 32 vCPUs and 64.0 GiB. I first read that as a dishonest warning; it is not: Vast writes 32 / 64.0 on
    all 67 rows of vms.csv (a placeholder, pricing/providers/skypilot_csv.py PROVIDERS_WITH_PLACEHOLDER_HOST),
    and the product says unknown rather than trusting it. For an 8-GPU image job (the guides' 8 vCPUs a GPU
    for decoding) that warning matters, and it is shown."""
    first = _recommend(tmp_path, SDXL_100K, top=1)[0]
    assert "host RAM and vCPUs unknown for this offer: not checked" in first["warnings"]
