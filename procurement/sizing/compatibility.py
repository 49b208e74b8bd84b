"""Per-GPU gates: precision and kernel support, interconnect and card-class warnings.

Errors make a card unusable for the spec as written (verdict `incompatible`); warnings change the
estimate (FlashAttention falls back to eager attention) or flag a risk (tensor parallel over PCIe,
consumer cards on long training runs).
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


@dataclass
class Compatibility:
    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    flash_attention: bool = True


def check_gpu(spec: WorkloadSpec, gpu: GpuSpec, plan: ParallelismSpec | None = None) -> Compatibility:
    """Gates for running `spec` on `gpu` under `plan` (default: the spec's own parallelism)."""
    plan = plan or spec.parallelism
    result = Compatibility(flash_attention=spec.flash_attention)
    if not gpu.supports_precision(spec.precision):
        result.errors.append(_PRECISION_RULES.get(spec.precision, f"{spec.precision} is not supported"))
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


def long_training_warning(spec: WorkloadSpec, gpu: GpuSpec, hours: float | None) -> str | None:
    limit = CONSUMER_LONG_TRAINING_HOURS.value
    if spec.is_training and gpu.is_consumer and hours is not None and hours > limit:
        return (
            f"consumer card (no ECC, no MIG) for a {hours:.0f} h training run: silent errors and no isolation"
        )
    return None


def _compute_precision(spec: WorkloadSpec) -> str:
    return spec.precision
