"""Where Megatron-Core lays a stage's routed experts over its GPUs: over the data x context parallel ranks
(expert tensor parallel = tensor_parallel, Megatron-Core's default), or across the tensor-parallel ranks too
when expert_parallel outgrows them or the spec states expert tensor parallel 1
(parallelism.expert_tensor_parallel: Megatron-Core's --expert-tensor-parallel-size, which NVIDIA's DeepSeek-V3
H100 recipe sets to 1 beside TP 2).

NVIDIA/Megatron-LM megatron/core/parallel_state.py @c5ff22b7f11822e0a36526b0434708d99c8206b0,
initialize_model_parallel: the expert grid is its own RankGenerator(tp=expert_tensor_parallel_size,
ep=expert_model_parallel_size, dp=expert_data_parallel_size, pp, cp=1, order "tp-cp-ep-dp-pp"), and
"world_size % expert_tensor_model_pipeline_parallel_size" (expert TP x EP x PP) must be 0. With
expert_tensor_parallel_size 1 (NVIDIA's Qwen3 recipes) EP must only divide a stage's tp x cp x dp ranks, and
an EP group is consecutive ranks, the tensor-parallel pairs included. Each GPU then holds num_experts / ep
whole experts. Arrays broadcast, so the ranking can pass a grid of GPU counts and degrees.
"""

from __future__ import annotations

import numpy as np


def expert_groups_tile(gpus, pipeline_parallel, expert_parallel) -> np.ndarray:
    """Whether a stage's tp x cp x dp ranks (gpus / pp) hold whole expert-parallel groups."""
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.mod(np.asarray(gpus, dtype=float) / pipeline_parallel, expert_parallel) == 0


def spans_tensor_parallel(
    gpus, tensor_parallel, pipeline_parallel, expert_parallel, expert_tensor_parallel=None
) -> np.ndarray:
    """Whether the EP groups lay across the tensor-parallel ranks (expert tensor parallel 1). Stated
    (``expert_tensor_parallel``): 1 spans them wherever tp > 1 and EP divides gpus / pp; any other value is
    Megatron-Core's default (expert TP = tp), which never does. Unstated: only where EP does not divide the
    data x context ranks of a stage, gpus / (tp x pp), but does divide gpus / pp (the only layout that
    runs)."""
    tiles = expert_groups_tile(gpus, pipeline_parallel, expert_parallel)
    if expert_tensor_parallel is not None:
        return tiles & (np.asarray(tensor_parallel) > 1) & (expert_tensor_parallel == 1)
    stage_ranks = np.asarray(gpus, dtype=float) / (np.asarray(tensor_parallel) * pipeline_parallel)
    with np.errstate(invalid="ignore", divide="ignore"):
        outside = np.mod(stage_ranks, expert_parallel) != 0
    return outside & tiles


def routed_expert_divisor(
    gpus, tensor_parallel, pipeline_parallel, expert_parallel, expert_tensor_parallel=None
) -> np.ndarray:
    """What a tensor-parallel rank's share of the routed experts (the engine's 1 / tp of a stage) is
    divided by: ep over the data-parallel ranks, ep / tp when the EP group spans the tp ranks (each GPU
    keeps num_experts / ep whole experts, unsplit by tp: (1 / tp) / (ep / tp) = 1 / ep)."""
    spans = spans_tensor_parallel(
        gpus, tensor_parallel, pipeline_parallel, expert_parallel, expert_tensor_parallel
    )
    return np.where(spans, float(expert_parallel) / np.asarray(tensor_parallel, dtype=float), expert_parallel)


def expert_rank_stride(
    gpus, tensor_parallel, pipeline_parallel, context_parallel, expert_parallel, expert_tensor_parallel=None
):
    """Ranks between two members of an EP group: tp x cp over the data-parallel ranks, 1 (consecutive
    ranks, Megatron-Core's expert order with expert tensor parallel 1) when it spans the tp ranks."""
    spans = spans_tensor_parallel(
        gpus, tensor_parallel, pipeline_parallel, expert_parallel, expert_tensor_parallel
    )
    return np.where(spans, 1.0, np.asarray(tensor_parallel, dtype=float) * context_parallel)
