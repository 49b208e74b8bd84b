"""DeepSpeed optimizer offload (parallelism.offload): seconds a step, not a share of the compute.

What DeepSpeed 0.14 moves and computes for an offloaded optimizer does not grow with the tokens a step: it is the
rank's partition of the trainable parameters, copied over PCIe and stepped on the host's CPU. Every offload is
priced so (fix51e: the flat +50% of the compute, offload_step_overhead, is retired); pin_memory
(parallelism.offload_pin_memory) sets only the rate of the copies: page-locked buffers at PCIE_HOST_LINK, pageable
ones (DeepSpeed's default, offload_config.py@v0.14.0 lines 43, 70) at PAGEABLE_HOST_LINK.

Per rank and step, over PCIe, trainable partition P / (tp x pp x dp x cp):
- ZeRO-3 (stage3.py@v0.14.0 partition_grads, lines 1418-1467): each micro-batch's 16-bit gradient partition into
  its host buffer, and from the second micro-batch on back to the GPU to be added (2 + 2 B); the updated 16-bit
  partition back to the GPU after the step when parameters are not offloaded (4 B: the fp32 source's copy_).
  Offloaded parameters (optimizer_and_params) are fetched each pass: throughput.offloaded_weight_seconds.
- ZeRO-1/2 (offl2, stage_1_and_2.py@v0.14.2 lines 1182, 1274, 1320-1324, 1871): (4 (A - 1) + 8) B.
On the host, each step: DeepSpeedCPUAdam over the rank's partition, an OpenMP loop of sqrt, divide and FMAs a
parameter (csrc/includes/cpu_adam.h@14e1981a Step_AVX, `#pragma omp parallel for`): its rate is the threads', so
CPU_ADAM_PARAMS_PER_CORE_SECOND (the ZeRO-Offload paper's Table 4, per physical core) x the physical cores the rank
gets (cores_per_rank: vCPUs / VCPUS_PER_PHYSICAL_CORE). The node's memory bandwidth (PINNED_OFFLOAD_HOST_BYTES of
every rank's partition at HOST_MEMORY_BANDWIDTH) is a lower bound on it: it holds the step's other host work
(stage_1_and_2.py@v0.17.5 step(): unscale_and_clip_grads' mul_, the fp32 -> 16-bit copy into the bit16 buffer, torch
CPU ops on the same threads). Nothing else is priced on the host: what DeepSpeed PR #7474's bound step spends past
the kernel, the engine's no-offload step and the copies (about 1.39 s of 2,383 ms) was not located in that source
(the per-tensor norm / overflow work runs on the GPU, the D2H gradient copy and H2D parameter copy are the PCIe terms
above), so it is not fitted (fix51e2). Nothing is overlapped (the copies run beside the backward under
overlap_comm; the CPU step does not).
"""

from __future__ import annotations

import math

import numpy as np

from procurement.sizing.assumptions import (
    CPU_ADAM_PARAMS_PER_CORE_SECOND,
    HOST_MEMORY_BANDWIDTH,
    OFFLOAD_CPU_CORES_PER_RANK,
    PAGEABLE_HOST_LINK,
    PCIE_HOST_LINK,
    PINNED_OFFLOAD_HOST_BYTES,
    VCPUS_PER_PHYSICAL_CORE,
)


def applies(spec) -> bool:
    return spec.parallelism.offload != "none" and spec.is_training


def host_link_gbps(spec) -> float:
    """GB/s of one host<->GPU copy: page-locked (pin_memory true) or pageable, DeepSpeed's default."""
    return PCIE_HOST_LINK.value if spec.parallelism.offload_pin_memory else PAGEABLE_HOST_LINK.value


def physical_cores(vcpus) -> np.ndarray:
    """Physical cores behind ``vcpus`` (two hardware threads a core on the catalog's hosts, VCPUS_PER_PHYSICAL_CORE):
    the CPU Adam rate is per physical core."""
    return np.asarray(vcpus, dtype=float) / VCPUS_PER_PHYSICAL_CORE.value


def cores_per_rank(spec, vcpus_per_gpu=None) -> tuple[np.ndarray, str]:
    """(physical host cores a rank's CPU optimizer step runs on, where the figure comes from: stated / host / offer /
    assumed). parallelism.offload_cpu_cores_per_rank (physical cores), else host.vcpus_per_gpu / 2, else the offer's
    vCPUs per GPU / 2 (``vcpus_per_gpu``, where finite; rows without one take the assumption), else
    OFFLOAD_CPU_CORES_PER_RANK: "assumed" only where nothing is known."""
    stated = spec.parallelism.offload_cpu_cores_per_rank
    if stated:
        return np.asarray(float(stated)), "stated"
    if spec.host.vcpus_per_gpu is not None and math.isfinite(spec.host.vcpus_per_gpu):
        return physical_cores(spec.host.vcpus_per_gpu), "host"
    offer = np.asarray(np.nan if vcpus_per_gpu is None else vcpus_per_gpu, dtype=float)
    known = np.isfinite(offer) & (offer > 0)
    cores = np.where(known, physical_cores(np.where(known, offer, 0.0)), OFFLOAD_CPU_CORES_PER_RANK.value)
    return cores, ("offer" if np.any(known) else "assumed")


def cores_sentence(spec) -> str:
    """The answer's words for the CPU step's cores: physical cores, their vCPUs, and whether they are assumed."""
    cores, source = cores_per_rank(spec)
    core_count = float(np.max(cores))
    vcpus = core_count * VCPUS_PER_PHYSICAL_CORE.value
    words = {
        "stated": "as stated (parallelism.offload_cpu_cores_per_rank)",
        "host": "host.vcpus_per_gpu / 2 threads a core",
        "assumed": "assumed (AWS p4d / GCP a2: 12 vCPUs a GPU); state parallelism.offload_cpu_cores_per_rank",
    }[source]
    return f"{core_count:g} physical cores a rank ({vcpus:g} vCPUs), {words}"


def pcie_bytes_per_param(spec, zero) -> np.ndarray:
    """Bytes a trainable parameter of the rank's partition crosses PCIe a step (module docstring)."""
    a = float(spec.gradient_accumulation_steps)
    zero3 = 2.0 * a + 2.0 * (a - 1.0) + (0.0 if spec.parallelism.offload == "optimizer_and_params" else 4.0)
    zero12 = 4.0 * (a - 1.0) + 8.0
    return np.where(np.asarray(zero) >= 3, zero3, zero12)


def host_step_seconds(partition, ranks_per_node, cores) -> np.ndarray:
    """The CPU optimizer step of a rank's ``partition`` trainable parameters on ``cores`` host cores, no shorter
    than the node's memory traffic (every rank on it stepping at once)."""
    compute_s = partition / (np.asarray(cores, dtype=float) * CPU_ADAM_PARAMS_PER_CORE_SECOND.value)
    floor_s = (
        PINNED_OFFLOAD_HOST_BYTES.value * partition * ranks_per_node / (HOST_MEMORY_BANDWIDTH.value * 1e9)
    )
    return np.maximum(compute_s, floor_s)


def seconds_per_step(
    spec, trainable_params: float, zero, grad_ranks, ranks_per_node, model_split, vcpus_per_gpu=None
) -> np.ndarray:
    """PCIe copies of the rank's trainable partition plus its CPU step. ``model_split``: tp x pp (the rank's share
    of the model before the data-parallel split); ``ranks_per_node``: GPUs whose ranks share a host."""
    if not applies(spec):
        return np.zeros_like(np.asarray(grad_ranks, dtype=float))
    partition = trainable_params / (np.asarray(model_split, dtype=float) * grad_ranks)
    pcie_s = pcie_bytes_per_param(spec, zero) * partition / (host_link_gbps(spec) * 1e9)
    cores, _ = cores_per_rank(spec, vcpus_per_gpu)
    return pcie_s + host_step_seconds(partition, ranks_per_node, cores)
