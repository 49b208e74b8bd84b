"""Per-GPU gates: precision and kernel support, interconnect and card-class warnings.

Errors make a card unusable for the spec as written: the candidate's verdict is `does_not_fit` with
`blocked_by` naming the gate (`"precision"`) and a remedy naming the fix (`precision_fix`). Warnings
change the estimate (FlashAttention falls back to eager attention) or flag a risk (tensor parallel
over PCIe, consumer cards on long training runs).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from procurement.sizing.assumptions import CONSUMER_LONG_TRAINING_HOURS
from procurement.sizing.gpus import GpuSpec
from procurement.sizing.spec import ParallelismSpec, WorkloadSpec

_PRECISION_RULES = {
    "bf16": "bf16 needs NVIDIA Ampere or later (Turing and Volta have no BF16): use fp16",
    "fp8": "fp8 needs NVIDIA Ada or Hopper or later",
    "fp4": "fp4 needs NVIDIA Blackwell",
}


# The card generation each precision needs, for the remedy text (see GpuSpec.supports_precision).
_CARD_FOR_PRECISION = {
    "bf16": "an Ampere-or-later card",
    "fp8": "an Ada, Hopper or later card",
    "fp4": "a Blackwell card",
}
# Precisions to fall back to, closest first: fewer bits keep memory and speed nearest the request.
_FALLBACKS = {
    "fp4": ("fp8", "bf16", "fp16"),
    "fp8": ("bf16", "fp16"),
    "bf16": ("fp16",),
    "fp16": ("bf16", "fp32"),
}


@dataclass
class Compatibility:
    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    flash_attention: bool = True
    blocked_by: str | None = None  # machine-readable gate that makes the card unusable: "precision"


def check_gpu(spec: WorkloadSpec, gpu: GpuSpec, plan: ParallelismSpec | None = None) -> Compatibility:
    """Gates for running `spec` on `gpu` under `plan` (default: the spec's own parallelism)."""
    plan = plan or spec.parallelism
    result = Compatibility(flash_attention=spec.flash_attention)
    if not gpu.supports_precision(spec.precision):
        result.errors.append(_PRECISION_RULES.get(spec.precision, f"{spec.precision} is not supported"))
        result.blocked_by = "precision"
    experts = stated_expert_precision(spec)
    if experts and not gpu.supports_precision(experts):
        # the experts' GEMMs run at their own precision (throughput.expert_split): a card without it is refused
        # like a model at that precision (aud47x: bf16 experts on a V100 / T4 read 'oversized' with no speed)
        result.errors.append(f"inference.expert_precision {experts}: {_PRECISION_RULES[experts]} experts")
        result.blocked_by = "precision"
    if spec.flash_attention and not gpu.supports_flash_attention() and not spec.model.is_image:
        result.flash_attention = False
        result.warnings.append(
            "FlashAttention 2 needs Ampere or later: eager attention assumed (activations include the 5as/h term)"
        )
    tp = plan.tensor_parallel
    if tp > 1 and not (gpu.has_nvlink_switch or tp <= gpu.bridge_gpus):
        result.warnings.append(
            f"tensor parallel {tp} over PCIe-only links: expect poor scaling, NVLink wanted"
        )
    if gpu.dense_tflops(_compute_precision(spec)) is None:
        result.warnings.append(
            f"no datasheet dense {_compute_precision(spec)} TFLOPS for {gpu.slug}: speed not estimated"
        )
    if plan.gpus > 1 and spec.is_training and gpu.is_consumer:
        result.warnings.append("consumer cards: no ECC/MIG and PCIe peer links slow multi-GPU training")
    return result


def stated_expert_precision(spec: WorkloadSpec) -> str | None:
    """The routed experts' precision where ``inference.expert_precision`` states it apart from the model's (an MoE
    model); None otherwise."""
    experts = spec.inference.expert_precision
    if not spec.model.is_moe or experts == "model":
        return None
    return experts


def precision_fix(spec: WorkloadSpec, gpu: GpuSpec) -> tuple[str, str] | None:
    """The closest precision this card runs and the remedy text naming both fixes; None if none needed.

    e.g. bf16 on a T4: ("fp16", "use fp16 (Turing has no BF16) or an Ampere-or-later card"). Where the model's
    precision runs but stated experts' (``inference.expert_precision``) do not, the fix names the experts' field
    (expert_precision_fix).
    """
    if gpu.supports_precision(spec.precision):
        return expert_precision_fix(spec, gpu)
    fallback = next((p for p in _FALLBACKS.get(spec.precision, ()) if gpu.supports_precision(p)), "fp32")
    lacks = f"{gpu.architecture or gpu.name} has no {spec.precision.upper()}"
    card = _CARD_FOR_PRECISION.get(spec.precision, f"a card with {spec.precision} support")
    return fallback, f"use {fallback} ({lacks}) or {card}"


def expert_precision_fix(spec: WorkloadSpec, gpu: GpuSpec) -> tuple[str, str] | None:
    """Stated experts at a precision this card lacks (bf16 experts on Volta / Turing): the closest 16-bit type it
    runs and the remedy text; None if none needed."""
    experts = stated_expert_precision(spec)
    if experts is None or gpu.supports_precision(experts):
        return None
    fallback = next((p for p in _FALLBACKS.get(experts, ()) if gpu.supports_precision(p)), "fp16")
    lacks = f"{gpu.architecture or gpu.name} has no {experts.upper()}"
    card = _CARD_FOR_PRECISION.get(experts, f"a card with {experts} support")
    return fallback, f"use inference.expert_precision {fallback} ({lacks}) or {card}"


def long_training_warning(spec: WorkloadSpec, gpu: GpuSpec, hours: float | None) -> str | None:
    limit = CONSUMER_LONG_TRAINING_HOURS.value
    if spec.is_training and gpu.is_consumer and hours is not None and hours > limit:
        return (
            f"consumer card (no ECC, no MIG) for a {hours:.0f} h training run: silent errors and no isolation"
        )
    return None


def _compute_precision(spec: WorkloadSpec) -> str:
    return spec.precision
