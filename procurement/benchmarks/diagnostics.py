"""Bottleneck diagnostics over a benchmark's samples: the procurement guides' rules, one function each.

Each rule returns a Finding (triggered or not, a sentence, and the evidence it read), so the benchmark
page can show why it said what it said. Thresholds are the guides' figures, named below.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field

from procurement.sizing.communication_text import communication_phrase

LOW_UTIL_PCT = 50.0  # "GPU utilization below ~50% while CPU is pegged: the input pipeline starves the GPU"
BUSY_CPU_PCT = 80.0
STALL_UTIL_PCT = 1.0  # a sample at (near) zero utilization
STALL_SHARE = 0.10  # a tenth of the run idle in bursts
NEARLY_FULL = 0.90
SMALL_BATCH_UTIL_PCT = 60.0  # "small batches keep utilization under 60%"
SMALL_BATCH = 2
UNEVEN_SPREAD_PCT = 20.0
STEP_VARIATION = 0.20  # "steps/s varying by more than 20%"
TIGHT_SHARE, OVERSIZED_SHARE = 0.90, 0.50
COMMUNICATION_SHARE = 0.30


@dataclass(frozen=True)
class Finding:
    rule: str
    triggered: bool
    message: str
    evidence: dict = field(default_factory=dict)

    def as_dict(self) -> dict:
        return asdict(self)


def _gpu_samples(samples: Sequence[dict]) -> list[dict]:
    return [s for s in samples if s.get("gpu") is not None and s.get("gpu_util_pct") is not None]


def _no_gpu(rule: str) -> Finding:
    return Finding(rule, False, "not applicable: no GPU utilization samples (CPU run)")


def data_loading(samples: Sequence[dict]) -> Finding:
    gpu = _gpu_samples(samples)
    if not gpu:
        return _no_gpu("data_loading")
    util = statistics.median(s["gpu_util_pct"] for s in gpu)
    cpu = statistics.median(s.get("cpu_util_pct", 0.0) for s in gpu)
    hit = util < LOW_UTIL_PCT and cpu > BUSY_CPU_PCT
    message = (
        f"data loading: GPU busy {util:.0f}% while the CPU is at {cpu:.0f}%; add dataloader workers or pre-tokenize"
        if hit
        else f"no data-loading bottleneck (GPU {util:.0f}%, CPU {cpu:.0f}%)"
    )
    return Finding("data_loading", hit, message, {"median_gpu_util_pct": util, "median_cpu_util_pct": cpu})


def periodic_stalls(samples: Sequence[dict]) -> Finding:
    gpu = _gpu_samples(samples)
    if not gpu:
        return _no_gpu("periodic_stalls")
    idle = [s["gpu_util_pct"] <= STALL_UTIL_PCT for s in gpu]
    share = sum(idle) / len(idle)
    # A stall is a run of idle samples between busy ones: count the transitions busy -> idle.
    stalls = sum(1 for before, now in zip(idle, idle[1:], strict=False) if now and not before)
    hit = share >= STALL_SHARE and stalls >= 2
    message = (
        f"I/O or synchronization waits: utilization drops to zero {stalls} times ({share:.0%} of samples)"
        if hit
        else "no periodic stalls"
    )
    return Finding("periodic_stalls", hit, message, {"idle_share": share, "stalls": stalls})


def memory_full_low_util(samples: Sequence[dict]) -> Finding:
    gpu = [s for s in _gpu_samples(samples) if s.get("memory_total_gib")]
    if not gpu:
        return _no_gpu("memory_full_low_util")
    used = max(s["memory_used_gib"] / s["memory_total_gib"] for s in gpu)
    util = statistics.median(s["gpu_util_pct"] for s in gpu)
    hit = used > NEARLY_FULL and util < SMALL_BATCH_UTIL_PCT
    message = (
        f"memory {used:.0%} full with {util:.0f}% utilization: batch too small for the card, or communication-bound"
        if hit
        else "memory and utilization consistent"
    )
    return Finding(
        "memory_full_low_util", hit, message, {"memory_used_share": used, "median_gpu_util_pct": util}
    )


def uneven_gpus(samples: Sequence[dict]) -> Finding:
    per_gpu: dict[int, list[float]] = {}
    for s in _gpu_samples(samples):
        per_gpu.setdefault(s["gpu"], []).append(s["gpu_util_pct"])
    if len(per_gpu) < 2:
        return Finding("uneven_gpus", False, "one GPU: balance not applicable", {"gpus": len(per_gpu)})
    means = {gpu: statistics.fmean(values) for gpu, values in per_gpu.items()}
    spread = max(means.values()) - min(means.values())
    hit = spread > UNEVEN_SPREAD_PCT
    message = (
        f"uneven utilization across GPUs ({spread:.0f} points apart): sharding or placement imbalance"
        if hit
        else f"GPUs evenly loaded ({spread:.0f} points apart)"
    )
    return Finding("uneven_gpus", hit, message, {"mean_util_pct_by_gpu": means, "spread_pct": spread})


def step_variation(step_seconds: Sequence[float]) -> Finding:
    if len(step_seconds) < 3:
        return Finding(
            "step_variation", False, "too few steps to judge variation", {"steps": len(step_seconds)}
        )
    rates = [1.0 / s for s in step_seconds]
    median = statistics.median(rates)
    variation = (max(rates) - min(rates)) / median
    hit = variation > STEP_VARIATION
    message = (
        f"steps/s varies by {variation:.0%}: an input pipeline bottleneck (prefetch, pin memory, more workers)"
        if hit
        else f"steady steps ({variation:.0%} variation)"
    )
    return Finding(
        "step_variation", hit, message, {"variation": variation, "median_steps_per_second": median}
    )


def small_batch(samples: Sequence[dict], micro_batch_size: int) -> Finding:
    gpu = _gpu_samples(samples)
    if not gpu:
        return _no_gpu("small_batch")
    util = statistics.median(s["gpu_util_pct"] for s in gpu)
    hit = micro_batch_size <= SMALL_BATCH and util < SMALL_BATCH_UTIL_PCT
    message = (
        f"micro-batch {micro_batch_size} keeps utilization at {util:.0f}%: raise the batch or use gradient accumulation"
        if hit
        else "batch size not limiting utilization"
    )
    return Finding(
        "small_batch", hit, message, {"micro_batch_size": micro_batch_size, "median_gpu_util_pct": util}
    )


def memory_fit(peak_gib: float | None, capacity_gib: float | None, cheaper_fit: str | None = None) -> Finding:
    if not peak_gib or not capacity_gib:
        return Finding("memory_fit", False, "peak memory or card capacity unknown")
    share = peak_gib / capacity_gib
    evidence = {"peak_gib": peak_gib, "capacity_gib": capacity_gib, "share": share}
    if share > TIGHT_SHARE:
        return Finding(
            "memory_fit",
            True,
            f"tight: peak {share:.0%} of the card; expect OOM on longer sequences",
            evidence,
        )
    if share < OVERSIZED_SHARE:
        suggestion = f"; {cheaper_fit} fits with headroom" if cheaper_fit else ""
        return Finding(
            "memory_fit",
            True,
            f"oversized: peak only {share:.0%} of the card{suggestion}",
            evidence | {"cheaper_fit": cheaper_fit},
        )
    return Finding("memory_fit", False, f"peak {share:.0%} of the card", evidence)


def communication(share: float | None, exposed: float | None = None) -> Finding:
    """The estimate's communication: the exposed share (what the traffic adds to the step) decides and is
    stated first when the estimate gives it; ``share`` alone (all traffic, hidden or not) otherwise."""
    evidence = {"communication_share": share, "exposed_communication_share": exposed}
    if exposed is not None:
        hit = exposed > COMMUNICATION_SHARE
        text = "communication " + communication_phrase(exposed, math.nan if share is None else share)
    elif share is not None:
        hit = share > COMMUNICATION_SHARE
        text = f"communication {share:.0%} of compute plus traffic, hidden or not"
    else:
        return Finding("communication", False, "communication share unknown")
    message = f"{text}: adding GPUs will not scale linearly" if hit else text
    return Finding("communication", hit, message, evidence)


def diagnose(
    *,
    samples: Sequence[dict],
    step_seconds: Sequence[float],
    micro_batch_size: int,
    peak_gib: float | None,
    capacity_gib: float | None,
    cheaper_fit: str | None = None,
    communication_share: float | None = None,
    exposed_communication_share: float | None = None,
) -> list[Finding]:
    return [
        data_loading(samples),
        periodic_stalls(samples),
        memory_full_low_util(samples),
        uneven_gpus(samples),
        step_variation(step_seconds),
        small_batch(samples, micro_batch_size),
        memory_fit(peak_gib, capacity_gib, cheaper_fit),
        communication(communication_share, exposed_communication_share),
    ]
