"""Sizing a workload document on the catalog GPUs: what `manage.py size`, `POST /api/size/` and the sizing
page share. No DRF and no pandas here: the command imports only this (issue 30, benchmarks/cli_bench.py).
"""

from __future__ import annotations

from collections.abc import Sequence

from pricing.models import GpuModel
from procurement.services.calibration import calibration_factors
from procurement.sizing import GpuSpec, WorkloadSpecError, parse_workload_spec, size_workload
from procurement.sizing.gpus import gpu_spec_from_record
from procurement.sizing.spec import FieldError


def catalog_gpus(slugs: Sequence[str] | None = None) -> list[GpuSpec]:
    """GPU models from the catalog as engine records; every unknown slug is reported under path `gpu`."""
    rows = GpuModel.objects.all()
    if slugs:
        rows = rows.filter(slug__in=list(slugs))
    gpus = {row.slug: gpu_spec_from_record(row) for row in rows}
    missing = [slug for slug in (slugs or []) if slug not in gpus]
    if missing:
        known = ", ".join(sorted(GpuModel.objects.values_list("slug", flat=True)))
        raise WorkloadSpecError(
            [FieldError("gpu", f"unknown GPU {slug!r}; known: {known}") for slug in missing]
        )
    if slugs:
        return [gpus[slug] for slug in dict.fromkeys(slugs)]
    return sorted(gpus.values(), key=lambda gpu: (gpu.memory_gb, gpu.slug))


def size_spec_document(
    data: dict, gpu_slugs: Sequence[str] | None = None, gpu_counts=None, *, calibrate: bool = True
) -> dict:
    """Validate a spec dict and size it on the catalog GPUs (all of them unless slugs are given), with the
    calibration factors fitted from stored benchmarks unless `calibrate` is False."""
    spec = parse_workload_spec(data)
    calibration = calibration_factors() if calibrate else None
    return size_workload(spec, catalog_gpus(gpu_slugs), gpu_counts, calibration)
