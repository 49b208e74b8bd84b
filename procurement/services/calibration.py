"""Calibration from stored measurements: the fitted MFU and memory factors per GPU model and method,
with their sample counts and the prediction error before and after (procurement.benchmarks.calibration)."""

from __future__ import annotations

from procurement import models
from procurement.benchmarks.calibration import MIN_SAMPLES, Fit, Observation, calibrate
from procurement.sizing.mfu import Calibration, CalibrationFactor


def calibration_observations() -> list[Observation]:
    rows = models.BenchmarkResult.objects.filter(cpu_only=False, gpu__isnull=False).exclude(estimate={})
    observations = []
    for slug, task, estimate, peak in rows.values_list("gpu__slug", "task", "estimate", "peak_memory_gib"):
        comparable = estimate.get("comparable_memory") and peak is not None
        observations.append(
            Observation(
                gpu=slug,
                method=task,
                measured_tokens_per_second=estimate.get("measured_tokens_per_second_full_depth"),
                estimated_tokens_per_second=estimate.get("tokens_per_second"),
                measured_peak_gib=float(peak) if comparable else None,
                estimated_peak_gib=estimate.get("peak_memory_gib") if comparable else None,
            )
        )
    return observations


def calibration_fits() -> tuple[list[Fit], int]:
    """The fits, and how many CPU-path runs were left out (a tiny model measures no GPU)."""
    skipped = models.BenchmarkResult.objects.filter(cpu_only=True).count()
    return calibrate(calibration_observations()), skipped


def calibration_pool() -> dict[str, int]:
    """What the shared calibration pools: every team's GPU runs (the factors are shared; the runs are
    not: each team sees its own), as counts the page states."""
    runs = models.BenchmarkResult.objects.filter(cpu_only=False)
    return {
        "runs": runs.count(),
        "teams": runs.exclude(team__isnull=True).values("team").distinct().count(),
        "without_team": runs.filter(team__isnull=True).count(),
    }


def calibration_factors() -> Calibration:
    """The fitted factors the estimates apply, per (GPU slug, method): only groups with at least
    MIN_SAMPLES runs and a factor that moved (the fit already shrinks it toward 1)."""
    return {
        (fit.gpu, fit.method): CalibrationFactor(fit.samples, fit.throughput_factor, fit.memory_factor)
        for fit in calibrate(calibration_observations())
        if fit.samples >= MIN_SAMPLES and (fit.throughput_factor != 1.0 or fit.memory_factor != 1.0)
    }
