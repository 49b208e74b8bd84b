"""Verdicts per candidate (GPU model x count) and the cheapest remedy when a workload does not fit.

Verdicts (exactly issue 3's four): `fits`, `tight` (peak over 90% of the card, or headroom does not
fit), `oversized` (peak under 50%) and `does_not_fit`; the first three are `FEASIBLE_VERDICTS` (the
card can run the spec). A card that lacks the spec's precision is `does_not_fit` too, with the
candidate's `blocked_by` saying so (see compatibility.precision_fix for its remedy). Remedies
are tried cumulatively in the guides' order: smaller batch or sequence (with gradient accumulation
keeping the global batch), bf16, gradient checkpointing, 8-bit optimizer / LoRA / QLoRA, offload;
for serving 16-bit weights, an fp8 KV cache, int8 and int4 weights, and only then fewer users;
the first prefix of steps that fits is the remedy. More GPUs or a larger card is the last resort.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace

import numpy as np

from procurement.sizing.assumptions import OVERSIZED_UTILIZATION, TIGHT_UTILIZATION
from procurement.sizing.gpus import GpuSpec
from procurement.sizing.memory import memory_per_gpu_gib
from procurement.sizing.spec import LoraSpec, ParallelismSpec, WorkloadSpec

FEASIBLE_VERDICTS = ("fits", "tight", "oversized")


def verdict_for(total_gib: float, required_gib: float, capacity_gib: float) -> str:
    if not total_gib <= capacity_gib:  # also catches NaN (an invalid plan)
        return "does_not_fit"
    utilization = total_gib / capacity_gib
    if utilization > TIGHT_UTILIZATION.value or required_gib > capacity_gib:
        return "tight"
    if utilization < OVERSIZED_UTILIZATION.value:
        return "oversized"
    return "fits"


Step = tuple[WorkloadSpec, str]


def _training_steps(spec: WorkloadSpec, gpu: GpuSpec) -> Iterator[Step]:
    if spec.micro_batch_size > 1:
        accumulation = spec.gradient_accumulation_steps * spec.micro_batch_size
        spec = replace(spec, micro_batch_size=1, gradient_accumulation_steps=accumulation)
        yield spec, f"micro_batch_size 1 with gradient_accumulation_steps {accumulation} (same global batch)"
    if spec.memory_seq_len > 2048:  # truncating caps the longest batch too (max_seq_len)
        spec, text = _truncated(spec)
        yield spec, text
    if spec.precision == "fp32":
        precision = "bf16" if gpu.supports_precision("bf16") else "fp16"
        spec = replace(spec, precision=precision)
        yield spec, f"{precision} mixed precision"
    if spec.gradient_checkpointing != "full":
        spec = replace(spec, gradient_checkpointing="full")
        yield spec, "full gradient checkpointing (about +33% compute)"
    if spec.optimizer == "adamw" and spec.task in ("pretrain", "full_finetune"):
        spec = replace(spec, optimizer="paged_adamw_8bit")
        yield spec, "8-bit paged AdamW"
    if spec.task == "full_finetune":
        spec = replace(spec, task="lora", lora=LoraSpec(rank=16), optimizer="adamw")
        yield spec, "LoRA (rank 16 on q_proj, v_proj) instead of full fine-tuning"
    if spec.task == "lora":
        spec = replace(spec, task="qlora", weight_quantization="nf4", precision=_sixteen_bit(spec, gpu))
        yield spec, "QLoRA (NF4 base weights)"
    par = spec.parallelism
    if par.offload == "none":
        spec = replace(spec, parallelism=replace(par, zero_stage=max(par.zero_stage, 1), offload="optimizer"))
        yield spec, "offload optimizer state to CPU (ZeRO-Offload)"
    if spec.parallelism.offload == "optimizer":
        spec = replace(
            spec, parallelism=replace(spec.parallelism, zero_stage=3, offload="optimizer_and_params")
        )
        yield spec, "ZeRO-3 with parameter offload to CPU"


def _truncated(spec: WorkloadSpec) -> Step:
    """Sequences cut to 2,048 tokens, named by the field the step changes. Samples of unequal length
    (max_seq_len above seq_len) are truncated, not packed: packing fills every row to its length and would
    raise the mean, and so the hours, to 2,048."""
    capped = replace(spec, seq_len=min(spec.seq_len, 2048), max_seq_len=2048)
    if spec.memory_seq_len == spec.seq_len:
        return capped, "seq_len 2048 (pack or truncate longer sequences)"
    fields = "max_seq_len 2048" if spec.seq_len <= 2048 else "seq_len and max_seq_len 2048"
    return capped, f"{fields} (truncate samples longer than 2,048 tokens)"


def _sixteen_bit(spec: WorkloadSpec, gpu: GpuSpec) -> str:
    if spec.precision in ("bf16", "fp16"):
        return spec.precision
    return "bf16" if gpu.supports_precision("bf16") else "fp16"


def _inference_steps(spec: WorkloadSpec, gpu: GpuSpec) -> Iterator[Step]:
    """Serving remedies that keep every user first (16-bit weights, an fp8 KV cache, int8 then int4
    weights: vLLM and TensorRT-LLM serve all of them), and only then fewer concurrent users. Serving
    Llama-3.1-8B to 32 users at 8k context fits an L40S with an fp8 KV cache (32 GiB of bf16 KV halved)."""
    if spec.precision == "fp32":
        precision = _sixteen_bit(spec, gpu)
        spec = replace(spec, precision=precision)
        yield spec, f"{precision} weights"
    if spec.inference.kv_cache_dtype not in ("fp8", "int8"):
        spec = replace(spec, inference=replace(spec.inference, kv_cache_dtype="fp8"))
        yield spec, "fp8 KV cache"
    for quantization in ("int8", "int4"):
        if spec.weight_quantization in ("none", "int8") and spec.weight_quantization != quantization:
            spec = replace(spec, weight_quantization=quantization)
            yield spec, f"{quantization} weight quantization"
    concurrency = spec.inference.concurrency
    while concurrency > 1:
        concurrency //= 2
        spec = replace(spec, inference=replace(spec.inference, concurrency=concurrency))
        yield spec, f"concurrency {concurrency}"


MAX_COUNT = 64
_COUNTS = np.arange(1, MAX_COUNT + 1)


def identity_cache(function):
    """Cache on the identity of the first argument (a spec) plus the other arguments.

    Hashing nested frozen specs costs more than the lookup saves; each entry keeps its spec alive and is
    checked with `is`, so a recycled id never returns stale numbers.
    """
    entries: dict[tuple, tuple] = {}

    def cached(spec, *args):
        key = (id(spec), *args)
        entry = entries.get(key)
        if entry is None or entry[0] is not spec:
            if len(entries) > 4096:
                entries.clear()
            entry = (spec, function(spec, *args))
            entries[key] = entry
        return entry[1]

    cached.__doc__ = function.__doc__
    return cached


@identity_cache
def _totals_by_count(spec: WorkloadSpec, flash: bool) -> np.ndarray:
    """Peak per GPU for 1..64 GPUs of the spec's plan; one vectorized call per spec variant."""
    return memory_per_gpu_gib(spec, _COUNTS, flash_attention=flash)


def peak_by_count(spec: WorkloadSpec, gpu_count: int, flash: bool) -> float:
    """Peak per GPU of the spec's plan at `gpu_count` GPUs (cached per spec object for 1..64 GPUs)."""
    if gpu_count > MAX_COUNT:
        return float(memory_per_gpu_gib(spec, gpu_count, flash_attention=flash))
    return float(_totals_by_count(spec, flash)[gpu_count - 1])


def _fits(spec: WorkloadSpec, gpu: GpuSpec, gpu_count: int, flash: bool) -> tuple[bool, float]:
    if gpu_count > MAX_COUNT:
        return False, float("nan")
    total = float(_totals_by_count(spec, flash)[gpu_count - 1])
    return total <= gpu.capacity_gib, total


@identity_cache
def remedy_ladder(spec: WorkloadSpec, gpu_has_bf16: bool) -> tuple[Step, ...]:
    """The cumulative remedy steps for a spec (built once; only bf16 support varies by card)."""
    probe = _Bf16Probe(gpu_has_bf16)
    steps: Callable[[WorkloadSpec, GpuSpec], Iterator[Step]] = (
        _training_steps if spec.is_training else _inference_steps
    )
    return tuple(steps(spec, probe))  # type: ignore[arg-type]


class _Bf16Probe:
    """Stands in for a GpuSpec in the remedy ladder, which only asks about bf16 support."""

    def __init__(self, has_bf16: bool):
        self.has_bf16 = has_bf16

    def supports_precision(self, precision: str) -> bool:
        return self.has_bf16 or precision != "bf16"


@identity_cache
def _ladder_totals(spec: WorkloadSpec, gpu_has_bf16: bool, flash: bool) -> tuple[tuple[str, ...], np.ndarray]:
    """Action texts (concurrency steps merged) and peak per GPU after each step, shape (steps, 64)."""
    ladder = remedy_ladder(spec, gpu_has_bf16)
    if not ladder:
        return (), np.empty((0, MAX_COUNT))
    return tuple(action for _, action in ladder), np.vstack([_totals_by_count(s, flash) for s, _ in ladder])


def _merge_actions(actions: tuple[str, ...]) -> list[str]:
    merged: list[str] = []
    for action in actions:
        if action.startswith("concurrency") and merged and merged[-1].startswith("concurrency"):
            merged[-1] = action  # halving concurrency again replaces the previous figure
        else:
            merged.append(action)
    return merged


def cheapest_remedy(spec: WorkloadSpec, gpu: GpuSpec, gpu_count: int, flash: bool) -> dict | None:
    """The shortest prefix of the guides' remedies that makes the spec fit this card and count."""
    if spec.model.is_image or gpu_count > MAX_COUNT:
        return None
    actions, totals = _ladder_totals(spec, gpu.supports_precision("bf16"), flash)
    if not actions:
        return None
    column = totals[:, gpu_count - 1]
    fitting = np.nonzero(column <= gpu.capacity_gib)[0]
    if fitting.size == 0:
        return None
    step = int(fitting[0])
    return {
        "actions": _merge_actions(actions[: step + 1]),
        "total_per_gpu_gib": round(float(column[step]), 2),
    }


@identity_cache
def scale_out_ladder(spec: WorkloadSpec, max_gpus: int) -> tuple[tuple[int, WorkloadSpec, str], ...]:
    """Plans with 2, 4, 8 ... GPUs: ZeRO-3 for training, tensor (then pipeline) parallel for inference."""
    ladder = []
    count = 2
    while count <= max_gpus:
        if spec.is_training:
            plan = replace(spec.parallelism, gpus=count, zero_stage=3, tensor_parallel=1, pipeline_parallel=1)
            label = "ZeRO-3"
        else:
            tp = min(count, 8)
            plan = ParallelismSpec(gpus=count, tensor_parallel=tp, pipeline_parallel=count // tp)
            label = f"tensor parallel {tp}" + (f" x pipeline {count // tp}" if count > tp else "")
        ladder.append((count, replace(spec, parallelism=plan), label))
        count *= 2
    return tuple(ladder)


@identity_cache
def _scale_out_totals(spec: WorkloadSpec, flash: bool) -> np.ndarray:
    """Peak per GPU of each scale-out plan at its own count."""
    ladder = scale_out_ladder(spec, MAX_COUNT)
    return np.array([_totals_by_count(plan_spec, flash)[count - 1] for count, plan_spec, _ in ladder])


def scale_out(spec: WorkloadSpec, gpu: GpuSpec, flash: bool) -> dict | None:
    """The fewest GPUs of this card (powers of two up to 64) that hold the spec."""
    totals = _scale_out_totals(spec, flash)
    fitting = np.nonzero(totals <= gpu.capacity_gib)[0]
    if fitting.size == 0:
        return None
    count, _, label = scale_out_ladder(spec, MAX_COUNT)[int(fitting[0])]
    return {"gpus": count, "plan": label, "total_per_gpu_gib": round(float(totals[fitting[0]]), 2)}


def larger_card(spec: WorkloadSpec, total_gib: float, gpu: GpuSpec, catalog: Sequence[GpuSpec]) -> str | None:
    """The smallest card in the catalog that holds this per-GPU peak and runs the spec's precision."""
    for other in sorted(catalog, key=lambda candidate: candidate.memory_gb):
        if (
            other.memory_gb > gpu.memory_gb
            and other.capacity_gib >= total_gib
            and other.supports_precision(spec.precision)
        ):
            return other.slug
    return None
