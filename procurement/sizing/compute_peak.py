"""The dense peak a workload's FLOPs run at on a card: its precision's datasheet figure, with PyTorch's
TF32 default for the convolutions of fp32 image networks and the CUDA cores' SGEMM rate for their
matmuls."""

from __future__ import annotations

from dataclasses import replace

from procurement.sizing import image_model
from procurement.sizing.assumptions import (
    ADA_UNET_TFLOPS_PER_WATT,
    EIGHT_BIT_DIFFUSION_RATE,
    EIGHT_BIT_DIT_RATE,
    FP32_SIMT_GEMM_EFFICIENCY,
    FP32_SIMT_GEMM_EFFICIENCY_VOLTA,
    GEFORCE_DETECTOR_RATE,
    GEFORCE_VISION_PEAK_EFFICIENCY,
    IMAGE_CARD_CEILING,
    IMAGE_PEAK_EFFICIENCY,
    SLOT_POWERED_CARD_W,
    VISION_PEAK_EFFICIENCY,
)
from procurement.sizing.efficiency import (
    diffusion_saturation_of,
    image_saturation,
    image_saturation_of,
    serving_efficiency,
)
from procurement.sizing.gpus import GpuSpec

AMPERE = 80
ADA = 89
SIXTEEN_BIT = ("fp16", "bf16")


def spec_peak_tflops(spec, gpu: GpuSpec) -> float | None:
    """`gpu.dense_tflops(spec.precision)`, except for an fp32 image preset, whose FLOPs split in two:

    - Convolutions: on a card with TF32 tensor cores (Ampere and later) PyTorch runs them in TF32 by
      default (torch.backends.cudnn.allow_tf32 = True), at the TF32 peak; on older cards at the fp32 one.
    - Everything else (linears, attention's bmm): PyTorch keeps matmuls in full fp32
      (torch.backends.cuda.matmul.allow_tf32 = False since 1.12): PyTorch docs, notes/cuda.html
      'TensorFloat-32 (TF32) on Ampere (and later) devices'. They run on the CUDA cores, compute-bound, at
      FP32_SIMT_GEMM_EFFICIENCY of the fp32 peak (cuBLAS SGEMM measurements, assumptions.py). With
      `image.tf32_matmul` they run on the TF32 tensor cores like the convolutions: PyTorch 1.7-1.11's
      default (allow_tf32 True until the 1.12 release notes turned it off), a script's allow_tf32 = True or
      set_float32_matmul_precision('high'), and NVIDIA's NGC PyTorch containers, which set
      TORCH_ALLOW_TF32_CUBLAS_OVERRIDE=1 (the 2022-2023 benchmarks run in them, e.g. lambda-diffusers'
      scripts/Dockerfile FROM nvcr.io/nvidia/pytorch:22.11-py3). Cards without TF32 keep the SIMT rate.

    The engine later applies the image efficiency (image_model.kernel_efficiency, the network's
    image_model.peak_efficiency when saturated) to the whole: the matmuls' fp32 peak is stated in those
    units, fp32 x FP32_SIMT_GEMM_EFFICIENCY / that ceiling, so their time comes out at the SGEMM rate. The
    returned peak is the time-weighted (harmonic) mean over the conv share (image_model.conv_flops_share).
    Language models in fp32 are all matmuls at the fp32 peak and their own MFU: unchanged."""
    peak = gpu.dense_tflops(spec.precision)
    if peak is None or spec.model.image_arch is None or spec.model.is_image_tier:
        return peak
    if spec.precision in LOW_BIT_PRECISIONS:
        peak = low_bit_image_peak(spec, gpu, peak)
    peak *= card_image_factor(spec, gpu)
    if spec.precision != "fp32":
        return peak
    conv_peak = (gpu.tf32_tflops_dense or peak) * card_image_factor(spec, gpu)
    if spec.image.tf32_matmul and gpu.tf32_tflops_dense:
        return conv_peak
    matmul_peak = peak * fp32_simt_gemm_efficiency(gpu) / image_model.peak_efficiency(spec)
    share = image_model.conv_flops_share(spec)
    return 1.0 / (share / conv_peak + (1.0 - share) / matmul_peak)


LOW_BIT_PRECISIONS = ("fp8", "fp4")


def low_bit_image_peak(spec, gpu: GpuSpec, low_bit_peak: float) -> float:
    """The peak of an 8-bit (or 4-bit) diffusion generation: quantizers (NVIDIA ModelOpt for TensorRT,
    torchao) replace the denoiser's convolutions and linears only; its attention matmuls and softmax, the
    norms, the VAE decode and the text encoders stay in 16-bit. Those FLOPs run at the card's 16-bit peak:
    the time-weighted (harmonic) mean over the quantized share (image_model.quantized_flops_share). The
    MLPerf Inference SDXL configs quantize the UNet only (mlcommons/inference_results_v4.1, closed/NVIDIA/
    configs/stable-diffusion-xl: precision fp8 for the UNet, the VAE and CLIP engines in fp16/fp32). The
    8-bit layers run at eight_bit_rate of the 8-bit peak (a UNet's 1.16x the 16-bit rate, fitted on NVIDIA's
    MLPerf v4.1 H100 fp8 SDXL run; a DiT's 1.38x, on diffusers-torchao's CogVideoX-5B); 4-bit ones at their peak (no run to fit). Other image networks and
    training: the low-bit peak for every FLOP, as before."""
    half = gpu.dense_tflops("bf16") or gpu.dense_tflops("fp16")
    if spec.is_training or not spec.model.image_arch.is_diffusion or not half:
        return low_bit_peak
    if spec.precision == "fp8":
        low_bit_peak *= eight_bit_rate(spec)
    share = image_model.quantized_flops_share(spec)
    return 1.0 / (share / low_bit_peak + (1.0 - share) / half)


def eight_bit_rate(spec) -> float:
    """The fraction of the 8-bit peak a diffusion denoiser's 8-bit layers reach: a UNet's (convolutions and
    narrow linears, ModelOpt/TensorRT: EIGHT_BIT_DIFFUSION_RATE, fitted on NVIDIA's MLPerf SDXL fp8 run) or a
    DiT's (wide linears only, torchao float8 under torch.compile: EIGHT_BIT_DIT_RATE, fitted on
    diffusers-torchao's CogVideoX-5B H100 rows)."""
    return EIGHT_BIT_DIFFUSION_RATE.value if image_model.is_unet(spec) else EIGHT_BIT_DIT_RATE.value


def fp32_simt_gemm_efficiency(gpu: GpuSpec) -> float:
    """cuBLAS SGEMM's fraction of the fp32 peak on the card's generation: measured on an A100 (Ampere and
    later) and on a V100 (Volta and Turing, whose fp32 units sit beside first-generation tensor cores;
    no Turing measurement was found, the V100's is used)."""
    if gpu.generation is not None and gpu.generation < AMPERE:
        return FP32_SIMT_GEMM_EFFICIENCY_VOLTA.value
    return FP32_SIMT_GEMM_EFFICIENCY.value


def card_image_factor(spec, gpu: GpuSpec) -> float:
    """A diffusion/ViT network's rate on this card relative to the efficiency model's reference cards:
    the card's measured saturated efficiency (efficiency.image_saturation) over image_peak_efficiency,
    1 where none is published, except on a slot-powered card (board power at most SLOT_POWERED_CARD_W:
    the L4), which takes the T4's measured row (same 75 W cap on its clocks). Detectors keep their own
    fits (detector_efficiency includes T4 TensorRT figures), except on a GeForce card (geforce_detector_rate). A ViT on
    a GeForce card runs at geforce_vision_peak_efficiency where other cards take vision_peak_efficiency: the
    same ratio (fitted on ViT GEMMs, so not a convolutional classifier's: ResNet-50 takes the rows below)."""
    if spec.model.image_arch.family == "detection":
        return geforce_detector_rate(gpu, spec.precision)
    if image_model.is_vit(spec) and is_geforce(gpu) and spec.precision in SIXTEEN_BIT:
        return min(geforce_rate(gpu, spec.precision), own_peak_ceiling_factor(spec))
    row = _diffusion_row(spec, gpu.slug) or image_saturation(gpu, spec.precision)
    if row is None and gpu.tdp_w is not None and gpu.tdp_w <= SLOT_POWERED_CARD_W.value:
        row = _diffusion_row(spec, "t4") or image_saturation_of("t4", spec.precision)
    if row is None:
        return 1.0
    return min(row.efficiency / IMAGE_PEAK_EFFICIENCY.value, own_peak_ceiling_factor(spec))


def is_geforce(gpu: GpuSpec) -> bool:
    """A GeForce card: its catalogued fp16 figure is the half-rate fp32-accumulate peak (the catalog's
    notes; NVIDIA's GA102, Ada and RTX Blackwell whitepapers), which PyTorch's fp16 GEMMs run at."""
    return "geforce" in gpu.name.lower()


def geforce_rate(gpu: GpuSpec, precision: str) -> float:
    """How much nearer its datasheet peak a GeForce card's 16-bit ViT runs than a full-rate card's:
    geforce_vision_peak_efficiency / vision_peak_efficiency (0.886 / 0.600 = 1.48) on a GeForce card
    (is_geforce) in fp16 or bf16 (the half-rate fp32-accumulate tensor figure; fp32, TF32 and 8-bit runs
    were not measured), 1 elsewhere."""
    if not is_geforce(gpu) or precision not in SIXTEEN_BIT:
        return 1.0
    return GEFORCE_VISION_PEAK_EFFICIENCY.value / VISION_PEAK_EFFICIENCY.value


def geforce_detector_rate(gpu: GpuSpec, precision: str) -> float:
    """A detector's rate on a GeForce card in fp16 or bf16 over its V100-fitted step: geforce_detector_rate
    (1.28), fitted on the four GeForce detector training logs of tests/procurement/outside (RTX 3090 YOLO11s
    and YOLO11m, RTX 2080 SUPER YOLOv8x, RTX 4090 YOLO11x: 10-35% slow at 1, -3.9% to +3.7% in images/s at
    1.28 with each step's GEMM fill on the card's SMs); 1 elsewhere."""
    if not is_geforce(gpu) or precision not in SIXTEEN_BIT:
        return 1.0
    return GEFORCE_DETECTOR_RATE.value


def own_peak_ceiling_factor(spec) -> float:
    """The largest card_image_factor a card's row may give: the factor at which the network, saturated on
    this spec's stack (image_model.peak_efficiency x image_model.runtime_rate), reaches IMAGE_CARD_CEILING
    of the card's own dense peak (GeForce: the fp32-accumulate rate PyTorch runs at). A row is a card/A100
    ratio measured on one stack (the GeForce rows: diffusers' PyTorch 2.0 benchmark, where the A100 ran
    SD 1.x at pytorch_2_0_narrow_unet_rate of its optimized rate); carried to a faster stack it would hand
    the card the A100's gain past its own peak (the RTX 3090's 1.161 x 71 TFLOPS under the optimized stack).
    On the stack a row was measured on the bound does not bind (the 3090 at 0.755, the 4090 at 0.657)."""
    stack_rate = image_model.peak_efficiency(spec) * image_model.runtime_rate(spec)
    return IMAGE_CARD_CEILING.value / stack_rate


def _diffusion_row(spec, slug: str):
    """The card's diffusion row (efficiency.diffusion_saturation_of) for a diffusion generation; None for
    ViTs, for cards without one, and for training: the rows are fitted on inference pipelines, and a
    training step's backward, optimizer and (QLoRA) dequantization kernels were not measured beside them.
    A GeForce card's row (task unet) applies to UNets only: it is a card/A100 ratio of SD 1.5 UNet steps
    (FLUX.1-dev, a DiT, ran at 39% of a 4090's peak where the row gives UNets 101%)."""
    if spec.is_training or not spec.model.image_arch.is_diffusion:
        return None
    return diffusion_saturation_of(slug, spec.precision, unet=image_model.is_unet(spec))


def power_bound_tflops(spec, gpu: GpuSpec) -> float:
    """The FLOP rate a UNet generation cannot beat on an Ada Lovelace card: ADA_UNET_TFLOPS_PER_WATT x the
    card's board power (image_model.inference_seconds_per_image takes the longer of its estimate and the
    FLOPs at this rate). Where a card's datasheet peak outruns its power limit (the 300 W RTX 6000 Ada at
    364.2 dense TFLOPS, the 350 W L40S) a saturated UNet runs at the board's rate. inf elsewhere: other
    generations (no measurement), DiTs and 8-bit engines (faster per watt than the fit), training (not
    measured), cards without a board power, and slot-powered cards (the L4), whose power cap already sets
    their rate through the T4's measured row (card_image_factor)."""
    if (
        gpu.generation != ADA
        or not gpu.tdp_w
        or gpu.tdp_w <= SLOT_POWERED_CARD_W.value
        or spec.is_training
        or spec.precision not in SIXTEEN_BIT
        or spec.model.image_arch is None
        or not image_model.is_unet(spec)
    ):
        return float("inf")
    return ADA_UNET_TFLOPS_PER_WATT.value * gpu.tdp_w


def expert_rate_inputs(spec, gpu: GpuSpec, peak=None) -> tuple[float, float]:
    """(dense peak TFLOPS, measured serving efficiency) the routed experts' GEMMs run at where
    ``inference.expert_precision`` states them apart from the model's precision (throughput.expert_split):
    the card's datasheet peak at that precision, scaled like ``peak`` (the model precision's peak as the caller
    adjusted it; None: the datasheet's), and this part's measured serving efficiency at that precision (NaN: the
    engine's 16-bit prefill_efficiency applies, as for a 16-bit model). (NaN, NaN) where the experts run at the
    model's precision."""
    dtype = spec.inference.expert_precision
    if not spec.model.is_moe or dtype == "model":
        return float("nan"), float("nan")
    own = gpu.dense_tflops(spec.precision)
    expert_peak = gpu.dense_tflops(dtype)
    if expert_peak is None:
        return float("nan"), float("nan")
    if peak is not None and own:
        expert_peak = expert_peak * float(peak) / own
    return float(expert_peak), serving_efficiency(replace(spec, precision=dtype), gpu)
