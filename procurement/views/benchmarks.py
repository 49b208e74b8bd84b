"""Benchmark pages: the list, one run with its charts and diagnostics, and the calibration table."""

from __future__ import annotations

from django.shortcuts import render

from gpuledger.accounts.teams import get_visible_or_404, visible_to
from gpuledger.charts import line_chart
from gpuledger.roles import ADMIN, ENGINEER, role_required
from procurement import models
from procurement.benchmarks.calibration import MIN_SAMPLES, PRIOR_WEIGHT
from procurement.services.calibration import calibration_fits, calibration_pool


@role_required(ENGINEER, ADMIN)
def benchmark_list_page(request):
    rows = visible_to(models.BenchmarkResult.objects, request.user).select_related("gpu", "instance_type")[
        :200
    ]
    return render(request, "procurement/benchmark_list.html", {"benchmarks": rows})


def _series(samples: list[dict], key: str) -> dict[str, list[tuple[float, float]]]:
    series: dict[str, list[tuple[float, float]]] = {}
    for sample in samples:
        if sample.get(key) is None:
            continue
        name = f"GPU {sample['gpu']}" if sample.get("gpu") is not None else "process"
        series.setdefault(name, []).append((float(sample["t_s"]), float(sample[key])))
    return series


@role_required(ENGINEER, ADMIN)
def benchmark_detail_page(request, pk: int):
    row = get_visible_or_404(
        models.BenchmarkResult.objects.select_related("gpu", "instance_type"), request.user, pk=pk
    )
    samples = row.document.get("samples", [])
    steps = [s for s in row.document.get("steps", []) if not s.get("warmup")]
    charts = {
        "utilization": line_chart(
            _series(samples, "gpu_util_pct")
            | {"CPU": [(s["t_s"], s["cpu_util_pct"]) for s in samples if s.get("cpu_util_pct") is not None]},
            x_label="seconds",
            y_label="utilization %",
            title="GPU and CPU utilization",
        ),
        "memory": line_chart(
            _series(samples, "memory_used_gib"),
            x_label="seconds",
            y_label="GiB used",
            title="GPU memory used",
        ),
        "steps": line_chart(
            {"step time": [(s["index"], s["seconds"]) for s in steps]},
            x_label="step",
            y_label="seconds",
            title="Step time",
        ),
    }
    return render(
        request,
        "procurement/benchmark_detail.html",
        {
            "row": row,
            "charts": charts,
            "environment": row.document.get("environment", {}),
            "run": row.document.get("run", {}),
        },
    )


@role_required(ENGINEER, ADMIN)
def calibration_page(request):
    fits, skipped = calibration_fits()
    return render(
        request,
        "procurement/calibration.html",
        {
            "fits": fits,
            "skipped": skipped,
            "min_samples": MIN_SAMPLES,
            "prior_weight": PRIOR_WEIGHT,
            "pooled": calibration_pool(),
        },
    )
