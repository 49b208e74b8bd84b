"""A ranked offer's own vCPUs in an offloaded optimizer's CPU step (parallelism.offload, pinned_offload.py).

shapes.py prices every shape once, GPU-side, with the CPU step on the assumed cores (OFFLOAD_CPU_CORES_PER_RANK);
here each offer's vCPUs per GPU / 2 (physical cores, pinned_offload.cores_per_rank) replace them, as the image
loader's bound takes each offer's vCPUs (configurations.configure). The host-step difference is added to the
shape's step (hours x (step + own - assumed) / step): the collectives' overlap stays as read at the assumed cores.
Untouched: a stated parallelism.offload_cpu_cores_per_rank or host.vcpus_per_gpu (the spec's host decides), an
offer without a vCPU figure (the assumption), a shape whose hours a benchmark measured.
"""

from __future__ import annotations

import numpy as np

from procurement.sizing import pinned_offload
from procurement.sizing.assumptions import OFFLOAD_CPU_CORES_PER_RANK


def offer_hours(
    spec, shapes, shape: np.ndarray, vcpus_per_instance: np.ndarray, hours: np.ndarray
) -> np.ndarray:
    """Per configuration: ``hours`` with the CPU step on the offer's own physical cores a rank."""
    rows = shapes.communication or {}
    if not pinned_offload.applies(spec) or "offload_partition_params" not in rows:
        return hours
    if pinned_offload.cores_per_rank(spec)[1] != "assumed":  # stated or the spec's host: already priced so
        return hours
    gpus_per_instance = shapes.total_gpus[shape] / shapes.instances[shape]
    with np.errstate(invalid="ignore", divide="ignore"):
        per_gpu = np.asarray(vcpus_per_instance, dtype=float) / gpus_per_instance
    own_cores, _ = pinned_offload.cores_per_rank(spec, per_gpu)
    partition = rows["offload_partition_params"][shape]
    per_node = rows["offload_ranks_per_node"][shape]
    step = rows["step_seconds"][shape]
    assumed_s = pinned_offload.host_step_seconds(partition, per_node, OFFLOAD_CPU_CORES_PER_RANK.value)
    own_s = pinned_offload.host_step_seconds(partition, per_node, own_cores)
    measured = np.asarray(shapes.measured, dtype=bool)[shape]
    with np.errstate(invalid="ignore", divide="ignore"):
        scale = (step + own_s - assumed_s) / step
    keep = measured | ~np.isfinite(scale) | (partition <= 0)
    return np.where(keep, hours, hours * scale)
