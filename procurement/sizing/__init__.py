"""Workload sizing engine: memory per GPU, speed, compatibility, host sizing and verdicts.

Plain Python (no Django). Entry points:
- `parse_workload_spec(data) -> WorkloadSpec` (raises `WorkloadSpecError` with every bad field path)
- `size_workload(spec, gpus, gpu_counts=None) -> dict` (the issue-3 JSON output contract)
- vectorized, for ranking: `memory_breakdown_gib`, `memory_per_gpu_gib`, `required_memory_per_gpu_gib`,
  `training_throughput`, `training_hours`, `inference_throughput`
- `GpuSpec`, `load_bundled_gpus()`, `collective_bandwidth_gbps(gpu, count)`
"""

from procurement.sizing.gpus import GpuSpec, collective_bandwidth_gbps, gpu_by_slug, load_bundled_gpus
from procurement.sizing.memory import (
    MEMORY_KEYS,
    memory_breakdown_gib,
    memory_per_gpu_gib,
    required_memory_per_gpu_gib,
)
from procurement.sizing.report import size_workload
from procurement.sizing.spec import FieldError, WorkloadSpec, WorkloadSpecError, parse_workload_spec
from procurement.sizing.throughput import inference_throughput, training_hours, training_throughput
from procurement.sizing.verdict import FEASIBLE_VERDICTS, verdict_for

__all__ = [
    "FEASIBLE_VERDICTS",
    "MEMORY_KEYS",
    "FieldError",
    "GpuSpec",
    "WorkloadSpec",
    "WorkloadSpecError",
    "collective_bandwidth_gbps",
    "gpu_by_slug",
    "inference_throughput",
    "load_bundled_gpus",
    "memory_breakdown_gib",
    "memory_per_gpu_gib",
    "parse_workload_spec",
    "required_memory_per_gpu_gib",
    "size_workload",
    "training_hours",
    "training_throughput",
    "verdict_for",
]
