"""The dense peak a workload's FLOPs run at on a card: its precision's datasheet figure, with PyTorch's
TF32 default for the convolutions of fp32 image networks."""

from __future__ import annotations

from procurement.sizing import image_model
from procurement.sizing.gpus import GpuSpec


def spec_peak_tflops(spec, gpu: GpuSpec) -> float | None:
    """`gpu.dense_tflops(spec.precision)`, except for an fp32 image preset on a card with TF32 tensor cores
    (Ampere and later). PyTorch runs convolutions in TF32 by default (torch.backends.cudnn.allow_tf32 =
    True) and matmuls in full fp32 (torch.backends.cuda.matmul.allow_tf32 = False since 1.12): PyTorch docs,
    notes/cuda.html 'TensorFloat-32 (TF32) on Ampere (and later) devices'. The conv share of the FLOPs
    (image_model.conv_flops_share) runs at the TF32 peak, the rest at the fp32 one: the time-weighted
    (harmonic) mean of the two. Language models in fp32 are all matmuls: their fp32 peak stands."""
    peak = gpu.dense_tflops(spec.precision)
    tf32 = gpu.tf32_tflops_dense
    if spec.precision != "fp32" or peak is None or not tf32 or spec.model.image_arch is None:
        return peak
    if spec.model.is_image_tier:
        return peak
    share = image_model.conv_flops_share(spec)
    return 1.0 / (share / tf32 + (1.0 - share) / peak)
