"""DeepSpeed offload with pinned host buffers (parallelism.offload_pin_memory): seconds a step, not a share of it.

What DeepSpeed 0.14 moves and computes for an offloaded optimizer does not grow with the tokens a step: it is the
rank's partition of the trainable parameters, copied over PCIe and stepped on the host's CPU. So under pinned
buffers (DeepSpeed's `pin_memory: true`; jzhang38/EasyContext@1729d4f3 accelerate_configs/zero3_offload.json lines
30-35 set it for both offloads) the engine charges those seconds a step in place of offload_step_overhead's flat
share of the compute, which over-charged long-context steps (EasyContext's 64K row: 26.7 s a step against ~1 s).

Per rank and step, over PCIe (assumptions.PCIE_HOST_LINK), trainable partition P / (dp x cp):
- ZeRO-3 (stage3.py@v0.14.0 partition_grads, lines 1418-1467): each micro-batch's 16-bit gradient partition into
  its buffer, and from the second micro-batch on back to the GPU to be added (2 + 2 B); the updated 16-bit
  partition back to the GPU after the step when parameters are not offloaded (4 B: the fp32 source's copy_).
  Offloaded parameters (optimizer_and_params) are fetched each pass: throughput.offloaded_weight_seconds.
- ZeRO-1/2 (offl2, stage_1_and_2.py@v0.14.2 lines 1182, 1274, 1320-1324, 1871): (4 (A - 1) + 8) B.
On the host, each step: assumptions.PINNED_OFFLOAD_HOST_BYTES a trainable parameter of every rank on the node, at
assumptions.HOST_MEMORY_BANDWIDTH. Nothing is overlapped: a floor set by the bytes (the copies run beside the
backward under overlap_comm; the CPU step does not).
"""

from __future__ import annotations

import numpy as np

from procurement.sizing.assumptions import HOST_MEMORY_BANDWIDTH, PCIE_HOST_LINK, PINNED_OFFLOAD_HOST_BYTES


def applies(spec) -> bool:
    return spec.parallelism.offload != "none" and spec.parallelism.offload_pin_memory and spec.is_training


def pcie_bytes_per_param(spec, zero) -> np.ndarray:
    """Bytes a trainable parameter of the rank's partition crosses PCIe a step (module docstring)."""
    a = float(spec.gradient_accumulation_steps)
    zero3 = 2.0 * a + 2.0 * (a - 1.0) + (0.0 if spec.parallelism.offload == "optimizer_and_params" else 4.0)
    zero12 = 4.0 * (a - 1.0) + 8.0
    return np.where(np.asarray(zero) >= 3, zero3, zero12)


def seconds_per_step(
    spec, trainable_params: float, zero, grad_ranks, ranks_per_node, model_split
) -> np.ndarray:
    """PCIe copies of the rank's trainable partition plus the node's CPU step. ``model_split``: tp x pp (the
    rank's share of the model before the data-parallel split); ``ranks_per_node``: GPUs whose ranks share a host."""
    if not applies(spec):
        return np.zeros_like(np.asarray(grad_ranks, dtype=float))
    partition = trainable_params / (np.asarray(model_split, dtype=float) * grad_ranks)
    pcie_s = pcie_bytes_per_param(spec, zero) * partition / (PCIE_HOST_LINK.value * 1e9)
    host_s = (
        PINNED_OFFLOAD_HOST_BYTES.value * partition * ranks_per_node / (HOST_MEMORY_BANDWIDTH.value * 1e9)
    )
    return pcie_s + host_s
