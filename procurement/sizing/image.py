"""Tier estimates for image workloads (detection, diffusion) from the guides' tier tables: ONLY the
fallback for an image architecture without a preset. Presets (image_architectures.json) are sized from
their shapes by image_model.py; a tier (`yolo-small`, `sd1x-tier`, `sdxl-tier`) has no shapes, so
memory is the top of the guide's tier range at
the tier's reference resolution and batch, split into model state (from the parameter count) and
activations; activations scale with pixel count (side x2 -> x4) and batch. Every figure is marked
"tier estimate: benchmark recommended".
"""

from __future__ import annotations

import numpy as np

from procurement.sizing.assumptions import CUDA_CONTEXT_GIB, FRAGMENTATION_FRACTION, GB, GIB
from procurement.sizing.presets import ImageTier
from procurement.sizing.spec import WorkloadSpec

TIER_WARNING = "tier estimate: benchmark recommended"
FALLBACK_NOTE = (
    "tier table: the fallback for an image architecture without a preset; presets with shapes "
    "(sd-1.5, sdxl, sd3-medium, flux.1-dev, yolov8n-x, vit-b-16, resnet-50, ...) are sized from their architecture"
)


def state_bytes_per_param(spec: WorkloadSpec) -> tuple[float, float, float]:
    """(weights, gradients, optimizer) bytes per parameter for the tier's model."""
    if spec.task in ("pretrain", "full_finetune"):
        return 2.0, 2.0, 12.0  # mixed-precision Adam, DESIGN reference facts
    return 2.0, 0.0, 0.0  # LoRA adapters and inference: frozen 16-bit weights dominate


def _tier(spec: WorkloadSpec) -> ImageTier:
    """The tier table row the spec is sized from (these functions serve image-tier models only)."""
    if spec.model.image_tier is None:
        raise ValueError(f"{spec.model.name} is not sized from an image tier")
    return spec.model.image_tier


def activation_scale(spec: WorkloadSpec) -> float:
    tier = _tier(spec)
    resolution = spec.image_resolution_px or tier.reference_resolution_px
    return (resolution / tier.reference_resolution_px) ** 2 * (spec.micro_batch_size / tier.reference_batch)


def tier_memory_bytes(spec: WorkloadSpec, dp: np.ndarray) -> dict[str, np.ndarray]:
    tier = _tier(spec)
    weight_b, grad_b, opt_b = state_bytes_per_param(spec)
    params = spec.model.params
    tensors_at_reference = (tier.tier_high_gb * GB - CUDA_CONTEXT_GIB * GIB) / (1 + FRAGMENTATION_FRACTION)
    fixed = params * (weight_b + grad_b + opt_b)
    activations = max(tensors_at_reference - fixed, 0.0) * activation_scale(spec)
    zero = 0 * dp
    return {
        "weights": params * weight_b + zero,
        "gradients": params * grad_b + zero,
        "optimizer_states": params * opt_b + zero,
        "activations": activations + zero,
        "kv_cache": zero,
        "host_offload": zero,
    }


def tier_summary(spec: WorkloadSpec) -> dict:
    tier = _tier(spec)
    return {
        "tier": tier.slug,
        "label": tier.label,
        "tier_range_gb": [tier.tier_low_gb, tier.tier_high_gb],
        "reference_resolution_px": tier.reference_resolution_px,
        "reference_batch": tier.reference_batch,
        "resolution_px": spec.image_resolution_px or tier.reference_resolution_px,
        "activation_scale": activation_scale(spec),
        "source": tier.source,
        "note": TIER_WARNING,
        "fallback": FALLBACK_NOTE,
    }
