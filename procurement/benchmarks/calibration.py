"""Calibrate the estimator's MFU and memory-overhead factors from stored measurements.

Per (GPU model, method) group, the measured/estimated ratio is averaged in log space and shrunk toward
1 (the default) with a prior worth PRIOR_WEIGHT observations: fitted = default x exp(n·mean(log r) / (n + k)).
Groups with fewer than MIN_SAMPLES measurements keep the default. Shrinkage keeps one odd run from
moving a factor far; with many runs the data dominate (empirical-Bayes style partial pooling).
"""

from __future__ import annotations

import math
import statistics
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

MIN_SAMPLES = 2
PRIOR_WEIGHT = 3.0


@dataclass(frozen=True)
class Observation:
    gpu: str
    method: str
    measured_tokens_per_second: float | None
    estimated_tokens_per_second: float | None
    measured_peak_gib: float | None = None
    estimated_peak_gib: float | None = None


@dataclass(frozen=True)
class Fit:
    gpu: str
    method: str
    samples: int
    throughput_factor: float  # multiply the default MFU by this
    memory_factor: float  # multiply the estimated peak by this
    throughput_error_before: float | None
    throughput_error_after: float | None
    memory_error_before: float | None
    memory_error_after: float | None


def shrunk_factor(ratios: list[float], *, prior_weight: float = PRIOR_WEIGHT) -> float:
    if len(ratios) < MIN_SAMPLES:
        return 1.0
    logs = [math.log(r) for r in ratios]
    return math.exp(sum(logs) / (len(logs) + prior_weight))


def _median_error(pairs: list[tuple[float, float]], factor: float) -> float | None:
    if not pairs:
        return None
    return statistics.median(abs(estimate * factor - measured) / measured for measured, estimate in pairs)


def _pairs(rows, measured_key, estimated_key) -> list[tuple[float, float]]:
    return [
        (getattr(r, measured_key), getattr(r, estimated_key))
        for r in rows
        if getattr(r, measured_key) and getattr(r, estimated_key)
    ]


def calibrate(observations: Iterable[Observation]) -> list[Fit]:
    groups: dict[tuple[str, str], list[Observation]] = defaultdict(list)
    for observation in observations:
        groups[(observation.gpu, observation.method)].append(observation)
    fits = []
    for (gpu, method), rows in sorted(groups.items()):
        speed = _pairs(rows, "measured_tokens_per_second", "estimated_tokens_per_second")
        memory = _pairs(rows, "measured_peak_gib", "estimated_peak_gib")
        speed_factor = shrunk_factor([m / e for m, e in speed])
        memory_factor = shrunk_factor([m / e for m, e in memory])
        fits.append(
            Fit(
                gpu=gpu,
                method=method,
                samples=len(rows),
                throughput_factor=speed_factor,
                memory_factor=memory_factor,
                throughput_error_before=_median_error(speed, 1.0),
                throughput_error_after=_median_error(speed, speed_factor),
                memory_error_before=_median_error(memory, 1.0),
                memory_error_after=_median_error(memory, memory_factor),
            )
        )
    return fits
