"""A second outside practitioner's image cases for issue 29 (review x29, round 2). None of them is used by
the first outside file (test_outside_image_workloads.py / image_workload_cases.json) or by docs/validation.md.

Each case is the spec a user would write, run the way a user runs it (`manage.py size --format json` on the
bundled catalog; for a card the catalog does not sell, the same engine call `size` makes, size_workload, with
the card's datasheet figures), compared with a published measurement. Targets from the issue: memory within
15%, speed within 25%. A case the engine misses is a strict xfail whose reason carries the measured gap.

Units. diffusers' notebooks print torch.cuda.max_memory_allocated() / 1024**3 ("GB" in the blog, GiB in
fact): compared with the estimate less framework_overhead_gib (no CUDA context, no allocator slack).
Ultralytics' GPU_mem is torch.cuda.memory_reserved() / 1e9: compared with (total - cuda_context_gib) in GB.

Sources (figures quoted in each case):
  [SDXL-OPT] huggingface/blog simple_sdxl_optimizations.md (commit 11e799d7c87eef3c77efedfe2050f91c8351e181;
      https://huggingface.co/blog/simple_sdxl_optimizations), table 'Memory (GB) | Inference latency (ms)';
      run settings from its notebook huggingface/notebooks 'diffusers/exploring_simple optimizations_for_sdxl.ipynb'
      (commit 77458f176fb064e023812c5e01a26eb6fdd696eb): Colab A100 40GB, SDXL base 1.0, 1024 px,
      num_inference_steps = 25, num_images_per_prompt = 4 (CFG: 8 UNet samples per step), timed 3rd of 3 runs,
      memory = torch.cuda.max_memory_allocated() / 1024**3.
  [FLUX-README] huggingface/diffusers examples/dreambooth/README_flux.md (commit 12ea4470d8cc168cfb3bf0c29a849d1ff768169b):
      'a LoRA with a rank of 16 (w/ all components trained) can exceed 40GB of VRAM for training'; its LoRA
      command: bf16, --resolution=512, --train_batch_size=1, --gradient_accumulation_steps=4, prodigy, no
      gradient checkpointing, latents not cached; --train_text_encoder trains CLIP.
  [PERFCAM] AstraZeneca/PerfCam-Dataset experiments/az_kul_small_line/object_and_event_detection/trained/model/README.md
      (commit a4dd36111d6fcb9f536523b7a93e082ea7e88f4d): Ultralytics 8.3.55, torch 2.5.1, 'CUDA:0 (NVIDIA
      A100-SXM4-40GB, 40514MiB)', yolo11x.pt, batch=16, imgsz=640, amp=True, workers=8, nc=1, 440 train images:
      epochs 132/133 'GPU_mem 16.4G ... 28/28 [00:06<00:00, 4.07it/s]'.
  [FABIO] fabiodemo/Yolov8 Aula_3/main_1.md (commit a8d044dfe663f2ca0e6d2f1e64c3346811bbf6bb): Ultralytics 8.0.170,
      torch 2.0.1, 'NVIDIA GeForce RTX 3060, 12037MiB', yolov8m.pt, batch=16, imgsz=640, amp=True, nc=7:
      GPU_mem 6.61-6.66G over epochs 2-38 (median 6.65G).
  [VRU] Faryalaurooj/Vulnerable-Road-Users-Detection-Tracking README.md (commit 543bb117a3b51ad3838c622eb3d291c7e76a27ba):
      Ultralytics 8.0.176, torch 1.13.1, 'NVIDIA GeForce RTX 2080 SUPER, 7982MiB', yolov8x.pt, batch=4,
      imgsz=640, 4 dataloader workers, 6,471 images: '176/300 5.64G ... 1618/1618 [05:16<00:00, 5.11it/s]'.
"""

from __future__ import annotations

import io
import json
import re

import pytest
from django.core.management import call_command

from procurement.sizing import parse_workload_spec
from procurement.sizing.assumptions import CUDA_CONTEXT_GIB
from procurement.sizing.gpus import GpuSpec
from procurement.sizing.memory import memory_breakdown_scalar
from procurement.sizing.report import size_workload

GIB = 2.0**30
MEMORY, SPEED = 0.15, 0.25

# NVIDIA Turing whitepaper / RTX 2080 SUPER datasheet: 3,072 CUDA cores at 1,815 MHz boost = 11.15 TFLOPS fp32,
# tensor FP16 with FP32 accumulate 44.6 TFLOPS dense (GeForce Turing runs it at half the FP16-accumulate
# 89.2), 8 GB GDDR6 at 496 GB/s. Not in the catalog.
RTX_2080_SUPER = GpuSpec(
    slug="rtx-2080-super",
    name="NVIDIA GeForce RTX 2080 SUPER",
    architecture="Turing",
    memory_gb=8,
    memory_bandwidth_gbps=496,
    fp32_tflops=11.15,
    fp16_tflops_dense=44.6,
    pcie_gen=3,
    ecc=False,
    vendor="NVIDIA",
)

SDXL_B4 = {"task": "inference", "model": {"preset": "sdxl"}, "micro_batch_size": 4, "image": {"steps": 25}}


def _size(tmp_path, spec: dict, gpu: str) -> dict:
    path = tmp_path / "spec.json"
    path.write_text(json.dumps(spec))
    out = io.StringIO()
    call_command("size", str(path), "--gpu", gpu, "--format", "json", stdout=out)
    (candidate,) = json.loads(out.getvalue())["candidates"]
    return candidate


def _allocated_gib(memory: dict) -> float:
    return memory["total_per_gpu_gib"] - memory["framework_overhead_gib"]


def _reserved_gb(total_gib: float) -> float:
    return (total_gib - CUDA_CONTEXT_GIB) * GIB / 1e9


def _within(estimate: float, published: float, target: float) -> None:
    error = estimate / published - 1.0
    assert abs(error) <= target, f"{estimate:.3f} vs {published} ({error:+.1%})"


# ---------------------------------------------------------------- diffusion: speed


@pytest.mark.django_db
def test_sdxl_fp16_sdpa_batch_of_4_on_an_a100_40gb(bundled_catalog, tmp_path):
    """[SDXL-OPT] 'fp16 + SDPA (default) | 21.72 | 11413.0': 11.41 s for 4 images x 25 steps.
    Hand: SDXL UNet forward at a 128x128 latent ~6.7 TFLOP; 4 images x 2 (CFG) x 25 steps = 200 forwards =
    1,340 TFLOP, plus 4 VAE decodes at 1024 px (~2.5 TFLOP each); at ~40% of the A100's 312 TFLOPS dense fp16
    (what SDXL's eager UNet reaches at batch 1, fal's 5.93 s for 50 steps) = 10.8 s. Product: 11.35 s (-0.6%)."""
    row = _size(tmp_path, SDXL_B4 | {"precision": "fp16"}, "a100-sxm4-40gb")
    _within(row["throughput"]["seconds_per_batch"], 11.413, SPEED)


@pytest.mark.django_db
def test_sdxl_fp16_eager_attention_batch_of_4_on_an_a100_40gb(bundled_catalog, tmp_path):
    """[SDXL-OPT] 'fp16 | 21.72 | 14800.9' (pipeline.unet.set_default_attn_processor(): eager softmax).
    Hand: SDPA's 11.41 s plus the eager score passes: 4 x 2 bytes x (10 x 10 x 4096 x 4173 + 60 x 20 x 1024 x
    1101) elements per sample x 8 samples x 25 steps ~ 0.56 TB of traffic at ~1.1 TB/s achieved = ~0.5-1 s,
    plus the unfused softmax kernels: 12-15 s. Product: 15.86 s (+7.1%)."""
    row = _size(tmp_path, SDXL_B4 | {"precision": "fp16", "flash_attention": False}, "a100-sxm4-40gb")
    _within(row["throughput"]["seconds_per_batch"], 14.8009, SPEED)


@pytest.mark.django_db
def test_sdxl_fp32_eager_batch_of_4_on_an_a100_40gb(bundled_catalog, tmp_path):
    """[SDXL-OPT] 'unoptimized pipeline | 28.09 | 72200.5' (fp32, default attention processor).
    Before: 144.0 s (+99%, every FLOP at fp32 x image efficiency), 113.4 s (+57%, convolutions at the TF32
    peak). Now 73.4 s (+1.7%): the 74% of the FLOPs that are matmuls (PyTorch keeps them out of TF32) run
    on the CUDA cores at cuBLAS SGEMM's 96.9% of peak (assumptions.FP32_SIMT_GEMM_EFFICIENCY, from
    Yinghan-Li/YHs_Sample issue #4: 18.88 of 19.49 TFLOPS on an A100; not fitted on this case), and eager
    attention's score passes move 4-byte elements under fp32. Hand: 0.739 x 348.6 TFLOP per image /
    (19.5 x 0.969) = 13.6 s + convs 0.261 x 348.6 / (156 x 0.53) = 1.1 s + 3.84 TB of eager traffic at
    0.7 x 1,555 GB/s = 3.5 s = 18.2 s per image, 73 s for 4."""
    row = _size(tmp_path, SDXL_B4 | {"precision": "fp32", "flash_attention": False}, "a100-sxm4-40gb")
    _within(row["throughput"]["seconds_per_batch"], 72.2005, SPEED)


# ---------------------------------------------------------------- diffusion: memory


@pytest.mark.django_db
def test_sdxl_fp16_batch_of_4_peaks_in_the_fp32_vae_decode(bundled_catalog, tmp_path):
    """[SDXL-OPT] 'fp16 + SDPA (default) | 21.72' GiB allocated. diffusers' SDXL pipeline upcasts the VAE to
    fp32 for the decode under fp16 (vae/config.json force_upcast): fixed in this review (the product had
    12.46 GiB, -43%, decoding in 2-byte elements).
    Hand: weights UNet 2.567e9 x 2 B = 4.78 GiB + CLIP-L 0.123e9 x 2 = 0.23 + OpenCLIP-bigG 0.695e9 x 2 = 1.29
    + VAE 83.65e6 x 4 (fp32) = 0.31 -> 6.62 GiB; decode peak per image at the last upsample: 3 tensors x 256
    ch x 1024^2 x 4 B = 3 GiB, x 4 images = 12 GiB -> 18.6 GiB. The published 21.72 implies ~3.8 GiB per
    image (cuDNN workspaces and GroupNorm temporaries in fp32). Product: 18.62 GiB (-14.3%, at the edge);
    23.62 GiB (+8.7%) once the decode counts its convolutions' NHWC copies (1,088 instead of 768 elements
    per 1024^2 position: see the fp32 case below)."""
    row = _size(tmp_path, SDXL_B4 | {"precision": "fp16"}, "a100-sxm4-40gb")
    _within(_allocated_gib(row["memory"]), 21.72, MEMORY)


@pytest.mark.django_db
def test_sdxl_bf16_keeps_its_vae_in_16_bits(bundled_catalog, tmp_path):
    """The upcast is fp16-only (needs_upcasting = vae.dtype == float16 and force_upcast): a bf16 pipeline
    decodes in bf16, so its batch-4 decode is half the fp16 run's (8.5 vs 17.0 GiB)."""
    fp16 = _size(tmp_path, SDXL_B4 | {"precision": "fp16"}, "a100-sxm4-40gb")["memory"]
    bf16 = _size(tmp_path, SDXL_B4 | {"precision": "bf16"}, "a100-sxm4-40gb")["memory"]
    assert fp16["activations_gib"] == pytest.approx(2 * bf16["activations_gib"], rel=0.01)
    assert fp16["weights_gib"] - bf16["weights_gib"] == pytest.approx(83.65e6 * 2 / GIB, rel=0.01)


@pytest.mark.django_db
def test_sdxl_fp32_batch_of_4_memory(bundled_catalog, tmp_path):
    """[SDXL-OPT] 'unoptimized pipeline | 28.09' GiB. Before: 23.24 GiB (-17.3%). Now 29.92 (+6.5%), from two
    counts: (1) an fp32 pipeline loads its text encoders and VAE in fp32 too (diffusers from_pretrained
    without torch_dtype): weights 3.469e9 x 4 B = 12.92 GiB, not 11.24 with them in 16 bits; (2) the
    decode's tensor-core convolutions (TF32 on the A100) keep an NHWC copy of their input and of their
    output (cuDNN docs: NCHW-to-NHWC transformations for Tensor Core operations;
    image_shapes.CONV_NHWC_COPIES): at the last Upsample2D, the 512^2 input (64 per 1024^2 position),
    the nearest copy, its NHWC copy, the NHWC output and the output, 256 channels each: 1,088 x 1024^2 x
    4 B = 4.25 GiB per image, 17.0 for 4 (was 3 x 256 = 12.0)."""
    row = _size(tmp_path, SDXL_B4 | {"precision": "fp32", "flash_attention": False}, "a100-sxm4-40gb")
    _within(_allocated_gib(row["memory"]), 28.09, MEMORY)


@pytest.mark.xfail(
    strict=True,
    reason="UNEXPLAINED: (fix46d, stop 46; diff46 had relabelled it EXPLAINED, reversed by the outside audit "
    "aud46d, tests/procurement/outside/test_outside_vision_audit_stop46.py::"
    "test_sdxl_cached_workspace_reading_does_not_fit_its_own_table) 10.87 GiB allocated estimated vs 15.40 GiB "
    "measured (-29.4%), unchanged. From the published rows ([SDXL-OPT] table, A100 40GB, fp16, 4 images, SDPA): "
    "'default + VAE slicing' 15.40 and 'default + Tiny Autoencoder' 15.48 put the UNet step at CFG batch 8 at "
    "15.40 - 6.461 (UNet 4.782 + text encoders 1.523 + VAE 0.156 GiB of weights) = 8.94 GiB over the weights, "
    "against the 1.25 GiB the product counts (image_shapes.unet_forward_peak) and diffmem43's 1.23 GiB of live "
    "tensors (82.6M elements a sample at batch 8 in fp16): ~7.7 GiB is allocated inside kernel calls. Lead, not "
    "a size: PyTorch's cuDNN v8 path (aten/src/ATen/native/cudnn/Conv_v8.cpp @06ca69ca, opened) runs, without "
    "cudnn.benchmark, the first of cuDNN's heuristic engine configs whose plan.getWorkspaceSize() the caching "
    "allocator can hand out (max_memory_allocated counts it) and caches that plan per shape (thread_local "
    "benchmark_cache, keyed by the convolution's params, not by free memory). That reading does not fit the "
    "same table: a workspace cached once per shape is a constant, so every row with the same UNet shapes should "
    "hold ~8.94 GiB over its resident weights, but 'VAE slicing + sequential CPU offload' (11.47 GiB, almost no "
    "weights resident: accelerate moves one leaf module at a time, and the decode is sliced the same way) peaks "
    "11.47 / 8.94 - 1 = +28% above it (2.5 GiB), so (b) is not computed from the rows: 7.7 GiB is a gap, not "
    "the mechanism's size. A competing reading fits the number as well: materialised level-1 attention scores, "
    "3 tensors of 8 samples x 10 heads x 4,096^2 x 2 B = 7.5 GiB (15.1 GiB, -2%), against which only the SDPA "
    "row's 3.4 s speed-up over the eager-attention row (11.41 vs 14.80 s) argues. Neither is sized; no field "
    "states it. History: "
    "SDXL fp16 batch 4 with enable_vae_slicing, now stated as image.vae_slicing: 10.87 GiB allocated "
    "estimated vs 15.40 GiB measured (-29.4%; was 7.70 GiB, -50%, through vae_tiling, the closest field then, "
    "which the engine read as one 512 px tile where diffusers tiles SDXL at its 1024 px sample size, i.e. not "
    "at all at 1024 px). The sliced decode is now one image's: 6.62 GiB of weights + 1,088 x 1024^2 x 4 B = "
    "4.25 GiB (fp32 upcast). What is left is not the decode: the blog's Tiny-"
    "Autoencoder row (15.48) puts a ~8.8 GiB transient in the UNet forward at CFG batch 8, 7x the 1.25 GiB the "
    "architecture holds (diff29, stop 42: the up block's input and skips + the first ResNet, "
    "image_shapes.unet_forward_peak; 1.09 GiB before). Root cause, from the same table: "
    "the peak grows with the memory left free, so it is not an architecture property. Without the text "
    "encoders (precomputed embeddings, 1.52 GiB less of weights) the peak rises to 21.85 from 21.72; with "
    "sequential CPU offload (almost no weights resident) the decode alone reaches 19.91 vs ~15.1 beside the "
    "weights, and slicing with sequential offload 11.47 vs 8.8 beside them; model offload (UNet + VAE resident "
    "during the decode) gives 4.78 + 0.31 + 15.1 = 20.21. PyTorch "
    "runs the first cuDNN algorithm of the heuristics' list whose workspace fits the free memory "
    "(pytorch/pytorch issue #49207: 'on a 40GB GPU, the first layer uses 36GB workspace'; the linked forum "
    "case, an 8.7 GB block allocated and freed by one conv2d forward), and that workspace goes through the "
    "caching allocator, so max_memory_allocated counts it. On a card with less free memory the same run picks "
    "smaller-workspace algorithms: the measurement is an opportunistic peak on an A100 40GB, not the run's "
    "need. The engine sizes the need; the gap stays until a free-memory-dependent workspace is modelled "
    "(no published rule for the heuristics' choice was found). gen29: the same excess over the engine's 1024 px "
    "decode appears elsewhere: ~2.3 GiB on SD3 Medium's fp16 decode (A100 80GB, 18.765 vs 16.45) and ~2.6 GiB "
    "reserved on FLUX.1-dev's bf16 one (H100, 4.72 over its weights vs 2.13), ~4.5 GiB here in fp32: each about "
    "2.25 x (input + output) bytes of the decoder's 256-channel 3x3 convolutions at 1024^2, the transformed tiles "
    "of a non-fused Winograd F(4x4,3x3) (36 input-tile elements per 16 outputs; Lavin and Gray, arXiv:1509.09308). "
    "Not adopted: this notebook's batch-4 decode under sequential offload (no weights resident, ~22 GiB free "
    "beside its 17.0 GiB need) reaches 19.91 GiB where that rule's 18 GiB workspace would fit and give ~35, and "
    "the Tiny-Autoencoder row is not explained by it: the pick changes with the shape, and cuDNN publishes no "
    "rule for it. sd29c, checked in the notebook (huggingface/notebooks diffusers/'exploring_simple "
    "optimizations_for_sdxl.ipynb' @77458f1): every row loads a fresh pipeline after `del pipe` and flush() "
    "(gc.collect, empty_cache, reset_peak_memory_stats), so no earlier row's weights or peak carry over; the "
    "peak is over 3 calls. Materialized level-1 scores would fit the number (3 tensors of 8 samples x 10 heads "
    "x 4,096^2 x 2 B = 7.5 GiB: 15.1 GiB, -2%) but the SDPA row runs 3.4 s faster than the default-processor "
    "row (11.41 vs 14.80 s), the order of the eager scores' traffic over 25 steps (~4.5 s at 1.5 TB/s), "
    "so SDPA ran a fused kernel that holds none: not adopted. diffmem43, the Python side ruled out: diffusers "
    "0.21.4's own SDXL UNet forward (AttnProcessor2_0, SDPA; channels / 5, CPU, allocations recorded with the "
    "profiler) holds 82.6M elements a sample at its live peak (the engine's 83.9M counts the NHWC copies), and its "
    "largest single allocation is the level-1 feed-forward's 8C projection (a level-1 score tensor would be 8x "
    "larger and does not appear): the ~8.8 GiB transient is allocated inside a kernel call on the GPU (a cuDNN "
    "workspace or the SDPA backend's), which no CPU run shows. The caching allocator's reserve over the UNet "
    "forward (the sd-1.5 preset's forward_reserve_ratio) is reserved memory and does not apply to this allocated row."
    " diff44 (stop 44), unchanged (10.87 GiB, -29.4%): the workspace rule checked in PyTorch's own code (pytorch/"
    "pytorch aten/src/ATen/native/cudnn/Conv_v8.cpp @06ca69ca, the cuDNN v8 path): without cudnn.benchmark,"
    " run_single_conv takes cuDNN's heuristic engine configs in cuDNN's own ranked order (CUDNN_HEUR_MODE_INSTANT),"
    " and try_configs runs the first one whose plan.getWorkspaceSize() bytes the caching allocator can hand out,"
    " catching OutOfMemoryError and moving to the next, then caches that plan for the shape. So each convolution's"
    " workspace is the highest-ranked plan that fits the memory free at its first call: the peak follows the free"
    " memory (the offload rows) and a ranking that cuDNN does not publish, and no count of the network's tensors"
    " gives it. The notebook @77458f1, re-read: pipe.unet.set_default_attn_processor() is called only in the"
    " fp32 and 'Just FP16' rows, so this row's UNet runs SDPA, the spec's default; its decode is AutoencoderKL"
    " with enable_slicing (z.split(1), one image at a time), as image.vae_slicing sizes it. Left.",
)
@pytest.mark.django_db
def test_sdxl_fp16_batch_of_4_with_the_decode_sliced(bundled_catalog, tmp_path):
    """[SDXL-OPT] 'default + VAE slicing | 15.40' GiB (and 'default + Tiny Autoencoder | 15.48')."""
    spec = SDXL_B4 | {"precision": "fp16", "image": {"steps": 25, "vae_slicing": True}}
    row = _size(tmp_path, spec, "a100-sxm4-40gb")
    _within(_allocated_gib(row["memory"]), 15.40, MEMORY)


@pytest.mark.django_db
def test_vae_slicing_decodes_one_image_and_tiling_keeps_sdxl_whole_at_1024_px(bundled_catalog, tmp_path):
    """diffusers AutoencoderKL.decode: enable_vae_slicing decodes `z.split(1)`, one image at a time;
    enable_vae_tiling cuts the latent into tiles of the VAE's sample_size (1024 px for SDXL's VAE) and only
    when the latent is larger, each tile over the whole batch. Hand (fp16 pipeline, decode upcast to fp32):
    the last Upsample2D holds 1,088 elements per 1024^2 position (see test_sdxl_fp32_batch_of_4_memory),
    1,088 x 1024^2 x 4 B = 4.25 GiB per image: sliced 4.25 GiB, whole batch 17.0 GiB, tiled at 1024 px
    17.0 GiB (no tile smaller than the image)."""
    sliced = _size(
        tmp_path,
        SDXL_B4 | {"precision": "fp16", "image": {"steps": 25, "vae_slicing": True}},
        "a100-sxm4-40gb",
    )
    tiled = _size(
        tmp_path,
        SDXL_B4 | {"precision": "fp16", "image": {"steps": 25, "vae_tiling": True}},
        "a100-sxm4-40gb",
    )
    whole = _size(tmp_path, SDXL_B4 | {"precision": "fp16"}, "a100-sxm4-40gb")
    assert sliced["memory"]["activations_gib"] == pytest.approx(1088 * 1024**2 * 4 / GIB, rel=0.01)
    assert whole["memory"]["activations_gib"] == pytest.approx(4 * 1088 * 1024**2 * 4 / GIB, rel=0.01)
    assert tiled["memory"]["activations_gib"] == pytest.approx(whole["memory"]["activations_gib"], rel=1e-6)


@pytest.mark.django_db
def test_flux_dreambooth_lora_rank_16_with_the_text_encoder_exceeds_40_gb(bundled_catalog, tmp_path):
    """[FLUX-README] 'a LoRA with a rank of 16 (w/ all components trained) can exceed 40GB'. A lower bound.
    Hand: bf16 weights FLUX transformer 11.9e9 x 2 = 22.2 GiB + T5-XXL 4.76e9 x 2 = 8.9 + CLIP-L 0.23 + VAE
    0.16 = 31.5 GiB before any activation: 512 px, no checkpointing (1,024 image + 77 text tokens through 57
    blocks) adds ~10 GiB. Product: 46.4 GiB = 49.8 GB > 40 GB."""
    spec = {
        "task": "lora",
        "model": {"preset": "flux.1-dev"},
        "lora": {"rank": 16, "targets": "attention"},
        "micro_batch_size": 1,
        "gradient_accumulation_steps": 4,
        "image": {"resolution_px": 512, "train_text_encoder": True, "text_tokens": 77, "train_steps": 500},
    }
    row = _size(tmp_path, spec, "h100-sxm5-80gb")
    assert row["memory"]["total_per_gpu_gib"] * GIB / 1e9 > 40.0
    assert row["memory"]["weights_gib"] > 31.0


# ---------------------------------------------------------------- detection: memory


# [VRU]'s densest training image, counted (det48b; re-counted by aud48d and fix48d) over VisDrone2019-DET-train's
# 6,471 label files as stored at saisriteja/DetectTech@c854c920 labels/ (scripts/annotation.py there keeps every row
# with score 1, 'if cla == 1', the rows ultralytics/ultralytics@002363f1 ultralytics/cfg/datasets/VisDrone.yaml keeps:
# 'if row[4] != "0"'; 343,205 boxes over the ten classes; its first image matches the raw-id copy at HiBorn4/PyVision_
# Low-Resolution-Human-Detection-in-the-Wild@760a554e labels/ class for class, and that repository's 548 val files give
# Ultralytics' val counts, pedestrian 8,844, people 5,125, bicycle 1,287, tricycle 1,045, awning-tricycle 532). The VRU
# set merges pedestrian + people, tricycle + awning-tricycle and keeps bicycle (det46, from its README's val counts),
# so an image's VRU boxes are those five classes: 0000059_01886_d_0000114 carries 842 + 46 + 3 + 1 = 892 (8 cars
# and 2 motors dropped); the next densest carries 332 (0000137_02220_d_0000163), the mean 19.3.
# What the field states is the dataset's densest labelled image (docs/workload-spec.md), the convention
# detector_assigner_bytes is calibrated in; what Ultralytics pads the assigner to is the densest AUGMENTED MOSAIC of
# each batch (ultralytics 8.0.176 v8DetectionLoss.preprocess: zeros(batch_size, counts.max(), 5)). At epoch 176 (a
# mosaic epoch, close_mosaic=10) 892 is an upper bound: aud48d's re-simulation of 8.0.176's Mosaic + RandomPerspective
# over these labels puts one epoch's densest mosaic at 267-974 boxes (median ~620, where the row reads 5.15 GB, -8.6%,
# test_outside_dense_detection_audit_stop48.py); the row's -0.5% at 892 is not a measured agreement.
VRU_MAX_OBJECTS_PER_IMAGE = 892

# The same label files, two more counts that pin them to the run's dataset (aud48d, re-counted by fix48d over
# saisriteja/DetectTech@c854c920 labels/ with the five VRU classes merged as above): 699 of the 6,471 train files hold
# no VRU box, and exactly 2 hold the same merged row twice (0000137_02220_d_0000163, 9999987_00000_d_0000049).
VRU_TRAIN_FILES_COUNTED = {"files": 6471, "without_a_vru_box": 699, "with_a_duplicate_row": 2}
# [VRU]'s README (commit 543bb117) trains YOLOv7x on the same VRU_Dataset folder and prints its label scan (the
# progress bar's blocks elided):
VRU_README_YOLOV7_TRAIN_SCAN = (
    "train: Scanning 'VRU_Dataset/labels/train.cache' images and labels... 5772 found, 699 missing, 0 empty, "
    "2 corrupted: 100%|...| 6471/6471"
)


def test_the_vru_label_counts_are_pinned_by_the_readme_yolov7_scan():
    """YOLOv7's scan (WongKinYiu/yolov7@00fe4a64 utils/datasets.py cache_labels) counts an image without a label
    file as 'missing' (the VRU export evidently wrote none for an image without a VRU box) and a file whose rows are not
    unique as 'corrupted' ('duplicate labels', caught into nc): so 699 / 2 are the counted files without a VRU box
    and with a duplicate merged row, and 5,772 found the rest. The val counts det46 matched pin the classes; these
    pin the train files the densest-image count was made over."""
    found, missing, corrupted = (
        int(re.search(rf"(\d+) {word}", VRU_README_YOLOV7_TRAIN_SCAN).group(1))
        for word in ("found", "missing", "corrupted")
    )
    total = int(VRU_README_YOLOV7_TRAIN_SCAN.rsplit("/", 1)[1])
    counted = VRU_TRAIN_FILES_COUNTED
    assert total == found + missing == counted["files"]
    assert missing == counted["without_a_vru_box"]
    assert corrupted == counted["with_a_duplicate_row"]


def _detector(preset: str, batch: int, epochs: int = 100, images: int = 1000) -> dict:
    return {
        "task": "full_finetune",
        "model": {"preset": preset},
        "micro_batch_size": batch,
        "image": {"epochs": epochs, "dataset_images": images},
    }


def test_yolov8x_batch_4_memory_on_a_2080_super():
    """[VRU] GPU_mem 5.64G (memory_reserved), dense dataset (16,833 instances in 548 val images).
    Hand: weights, gradients fp32 68.2e6 x 4 x 2 = 0.51 GB, Adam/SGD state ~0.27-0.55 GB; activations of a
    258 GFLOP network at 640 px, batch 4, ~1.1 GiB per image with the loss temporaries. Product before
    image2's additive loss term: 5.62 GB (-0.4%); after: 4.25 GB (-24.7%).
    Was a strict xfail: 4.25 GB reserved vs 5.64 GB (-24.7%) at the default image.max_objects_per_image (COCO's
    93), the VRU set's densest image unpublished (det29-det46: the relabelled set is VisDrone2019-DET with classes
    merged; the assigner's batch x objects x anchors temporaries, 48.4 B a slot, are what a dense set adds).
    Now 5.61 GB at 892 because the spec states the field the engine already has, counted from the public
    annotations (det48b): VRU_MAX_OBJECTS_PER_IMAGE, 892 boxes in VisDrone2019-DET-train 0000059_01886_d_0000114,
    the dataset's densest labelled image (the field's convention). The mechanism: Ultralytics pads the assigner's
    (batch, n_max_boxes, anchors) tensors to the densest augmented mosaic in the batch (v8DetectionLoss.preprocess,
    counts.max()), so at epoch 176, a mosaic epoch, 892 is an upper bound; aud48d's simulated median densest
    mosaic, ~620 boxes, gives 5.15 GB (-8.6%), still inside. The count was not matched to the gap."""
    spec = _detector("yolov8x", 4, 176, 6471)
    spec["image"]["max_objects_per_image"] = VRU_MAX_OBJECTS_PER_IMAGE
    memory = memory_breakdown_scalar(parse_workload_spec(spec), 1)
    _within(_reserved_gb(memory["total_per_gpu_gib"]), 5.64, MEMORY)


def test_yolov8m_batch_16_memory_on_an_rtx_3060():
    """[FABIO] GPU_mem 6.65G, 647 val images with 3,074 instances (4.8 per image), nc=7.
    Before (x1.56 activation factor): 9.55 GB (+43.6%). After (image2: layers' activations as counted plus
    the assigner's batch x 93 objects x 8,400 anchors x 72 B = 0.84 GiB): 7.22 GB (+8.6%)."""
    memory = memory_breakdown_scalar(parse_workload_spec(_detector("yolov8m", 16, 90, 2000)), 1)
    _within(_reserved_gb(memory["total_per_gpu_gib"]), 6.65, MEMORY)


@pytest.mark.django_db
def test_yolo11x_batch_16_memory_on_an_a100_40gb(bundled_catalog, tmp_path):
    """[PERFCAM] GPU_mem 16.4G (16.4-16.7G over the run). Before: 25.23 GB (+53.8%); after (image2's
    additive assigner term, no activation factor): 17.46 GB (+6.5%)."""
    row = _size(tmp_path, _detector("yolo11x", 16, 133, 440), "a100-sxm4-40gb")
    _within(_reserved_gb(row["memory"]["total_per_gpu_gib"]), 16.4, MEMORY)


# ---------------------------------------------------------------- detection: speed


# fill44 (stop 44): 21.55 -> 22.33 images/s (+5.4% -> +9.2%): geforce_detector_rate 1.19 -> 1.26, and the 2080 SUPER has no SM row (gpu_clocks.csv), so it keeps the fit rows' mean fill.
# Was 22.33 images/s (+9.2%), now 21.05 (+3.0%) because fixd44 gives the card its SM row (gpu_clocks.csv: 48 SMs, 1,815
# MHz; NVIDIA's RTX 2080 SUPER spec page, 3,072 CUDA cores / 64 a Turing SM): its batch-4 step fills the 48 SMs 0.908
# (image_model.yolo_step_fill) instead of the fit rows' mean 0.979, 22.33 x 0.908 / 0.979 = 20.73 (its clock, 1,815
# against the reference 1,530 MHz, does not move it: the step stays capped at detector_efficiency), and
# geforce_detector_rate 1.26 -> 1.28 refitted on the four logs: 20.73 x 1.28 / 1.26 = 21.05.
def test_yolov8x_batch_4_training_speed_on_a_2080_super():
    """[VRU] 5.11 it/s x 4 images = 20.4 images/s (4 loader workers; the GPU is the bound at batch 4).
    The run is torch 1.13.1 (the log's header): Ultralytics 8.0.176 applies deterministic mode only on
    torch >= 2.0 and the fill exists from 2.1, so the spec states image.deterministic false (with the fill
    counted the estimate would be 15.7 images/s, -23%).
    Hand: YOLOv8x 257.8 GFLOP forward at 640 -> x3 for training = 773 GFLOP per image; at 35% of the
    2080 SUPER's 44.6 TFLOPS (fp16 with fp32 accumulate) = 15.6 TFLOPS -> 20.2 images/s. Product: 20.18
    (-1.3%) at the card's MFU; 18.11 (-11.4%) after image2's detector_training_efficiency (capped here at
    detector_efficiency, 31.4%). e29: 21.53 (+5.4%; 18.11 just before) at the GeForce rate
    (compute_peak.geforce_rate: a Turing GeForce card's fp16 figure is the half-rate fp32-accumulate one too)."""
    spec = _detector("yolov8x", 4, 176, 6471)
    spec["image"]["deterministic"] = False
    # The same run's dataset (det48b); the densest image moves memory, not speed: 21.05 either way.
    spec["image"]["max_objects_per_image"] = VRU_MAX_OBJECTS_PER_IMAGE
    (row,) = size_workload(parse_workload_spec(spec), [RTX_2080_SUPER])["candidates"]
    _within(row["throughput"]["training_images_per_second"], 5.11 * 4, SPEED)


# fill44 (stop 44): 70.6 -> 70.0 images/s (+8.4% -> +7.5%): the A100's 108 SMs fill YOLO11x's batch-16 step 0.965 (fit rows 0.979).
@pytest.mark.django_db
def test_yolo11x_batch_16_training_speed_on_an_a100_40gb(bundled_catalog, tmp_path):
    """[PERFCAM] 4.07 it/s x 16 images = 65.1 images/s (epochs 132-133, steady). Before: 123.2 (+89%), then
    83.9 (+28.9%) with detector_training_efficiency (fitted on YOLOv5's V100 COCO times, runs without
    deterministic fill). Now 72.9 (+12.0%): the log's trainer line shows deterministic=True (Ultralytics'
    default) on torch 2.5.1, so use_deterministic_algorithms also fills every fresh allocation
    (image_model.deterministic_fill_bytes_per_image): 2 x the step's 15.7 GB of activations / 16 images =
    1.97 GB per image at 0.7 x 1,555 GB/s = 1.81 ms, on top of 11.9 ms of compute per image (1/83.9).
    The loader (8 vCPUs x 24.64 = 197 images/s) is not the bound. yolo29: 70.6 (+8.5%): the fit's work per
    image is scaled by the A100's FLOPs per clock (312 TFLOPS at 1,410 MHz, assumptions
    detector_training_reference_clock_mhz), not its peak: 0.1516 of peak before the fill (was 0.1573)."""
    row = _size(tmp_path, _detector("yolo11x", 16, 133, 440), "a100-sxm4-40gb")
    _within(row["throughput"]["training_images_per_second"], 4.07 * 16, SPEED)


# ---------------------------------------------------------------- ranking judgements


def _recommend(tmp_path, spec: dict, top: int = 5) -> list[dict]:
    path = tmp_path / "workload.json"
    path.write_text(json.dumps(spec))
    out = io.StringIO()
    call_command("recommend", str(path), "--top", str(top), "--format", "json", stdout=out)
    return json.loads(out.getvalue())["results"]


@pytest.mark.django_db
def test_flux_dev_batch_generation_top_row_is_one_i_would_buy(bundled_catalog, tmp_path):
    """50,000 FLUX.1-dev images (1024 px, 28 steps, bf16, batch 1). Judgement: the job needs ~35 GiB (22.2
    GiB transformer + 8.9 GiB T5 + activations), so 24/32 GB consumer cards are out and a 48 GB Ada card
    (L40S / RTX 6000 Ada) is the value choice. Hand speed: diffusers' benchmark measures one FLUX.1-dev
    forward at 1024 px on an L40S in 0.535 s (huggingface.co/datasets/diffusers/benchmarks, in
    docs/validation.md); the RTX 6000 Ada is the same AD102 at 182 vs 183 TFLOPS, so 28 x 0.535 + ~0.3 s
    of VAE = 15.3 s per image. At the top row's marketplace price (~0.39 USD/h) that is 15.3 x 1000 / 3600
    x 0.39 = 1.66 USD per 1,000 images. The product's top row: RTX 6000 Ada, 208.5 h (15.0 s per image),
    1.64 USD per 1,000 images. I would buy it."""
    rows = _recommend(
        tmp_path, {"task": "inference", "model": {"preset": "flux.1-dev"}, "image": {"images": 50000}}
    )
    first = rows[0]
    assert first["gpu"] in {"rtx-6000-ada", "l40s", "l40", "a40", "rtx-a6000"}  # a 48 GB card
    # per GPU: the job's hours run on every GPU of the row (round 4: the top row is a multi-GPU L40S offer,
    # the RTX 6000 Ada now at its measured diffusion rate, procurement/data/measured_efficiency.csv)
    seconds_per_image = float(first["hours"]) * first["gpus"] * 3600 / 50000
    _within(seconds_per_image, 28 * 0.535 + 0.3, SPEED)
    per_thousand = float(first["unit_costs"]["per_thousand_images"])
    assert per_thousand == pytest.approx(float(first["total_cost"]) / 50, abs=0.01)
    assert per_thousand < 2.5  # well under the H100 rows (~3.3 USD per 1,000)


@pytest.mark.django_db
def test_yolo11l_training_top_row_hours_are_credible(bundled_catalog, tmp_path):
    """Judgement on `recommend` for a real detector job; hand estimate as in the reason."""
    (first,) = _recommend(tmp_path, _detector("yolo11l", 16, 100, 20000), top=1)
    assert first["gpu"] in {"l4", "rtx-4090", "rtx-3090", "a10", "a10g", "t4", "rtx-a6000", "l40s"}  # a buy
    hand_hours = 100 * 20000 / 65.1 / 3600  # at the PerfCam run's 65.1 images/s: 8.5 h
    assert float(first["hours"]) >= hand_hours * (1 - SPEED), (first["gpu"], first["hours"], hand_hours)


# ---------------------------------------------------------------- the web form


@pytest.mark.django_db
def test_the_sizing_form_gives_the_fp16_sdxl_batch_what_the_command_gives(
    bundled_catalog, client_as, tmp_path
):
    """The /size/ form with the [SDXL-OPT] batch (fp16, batch 4, 25 steps): the A100 40GB row carries the
    same memory and time as `manage.py size`, and the page speaks in images."""
    form = {
        "source": "fields",
        "name": "sdxl-b4",
        "task": "inference",
        "preset": "sdxl",
        "precision": "fp16",
        "micro_batch_size": "4",
        "seq_len": "2048",
        "gradient_checkpointing": "none",
        "training_tokens": "",
        "lora_rank": "8",
        "gpus": "1",
        "zero_stage": "0",
        "concurrency": "1",
        "context_len": "4096",
        "resolution_px": "",
        "steps": "25",
    }
    page = client_as("engineer").post("/size/", form)
    assert page.status_code == 200
    html = page.content.decode()
    assert "Images per second" in html
    report = page.context["report"]
    (row,) = [c for c in report["candidates"] if c["gpu"] == "a100-sxm4-40gb" and c["gpus"] == 1]
    cli = _size(tmp_path, SDXL_B4 | {"precision": "fp16"}, "a100-sxm4-40gb")
    assert row["memory"]["total_per_gpu_gib"] == pytest.approx(cli["memory"]["total_per_gpu_gib"], abs=0.01)
    assert row["throughput"]["seconds_per_batch"] == pytest.approx(
        cli["throughput"]["seconds_per_batch"], rel=1e-3
    )
