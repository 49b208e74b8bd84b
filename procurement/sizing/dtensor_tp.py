"""Tensor parallelism as PyTorch DTensor runs it (parallelism.tp_implementation: dtensor, torchtitan's).

Two things differ from Megatron-Core / Transformer Engine, whose model throughput.py keeps by default.

The layout copy. torchtitan shards the sequence of [b, s, h] activations (Shard(1): pytorch/torchtitan
@820504e torchtitan/models/llama3/parallelize_llama.py apply_tp, SequenceParallel and PrepareModuleInput
from Shard(1) to Replicate; its NOTE there: "we can accelerate Sequence Parallel by folding (and unfolding)
the batch dimension and the sequence dimension", pytorch/torchtitan#437). NCCL gathers and scatters along
dim 0, so PyTorch's functional collectives copy the whole tensor around each one: all_gather_tensor with
gather_dim > 0 ends in ``torch.cat(torch.chunk(res, group_size, dim=0), dim=gather_dim)`` and
reduce_scatter_tensor with scatter_dim > 0 starts with ``torch.cat(torch.chunk(self, group_size,
dim=scatter_dim))`` (torch/distributed/_functional_collectives.py). Each collective thus reads and writes the
gathered tensor once more in HBM: 2 x its bytes at the card's achieved bandwidth (assumptions.
ACHIEVED_BANDWIDTH). Megatron-Core keeps [s, b, h] and gathers along dim 0: no copy.

Async TP (parallelism.tp_comm_overlap under dtensor: torchtitan's enable_async_tensor_parallel). Inductor's
micro-pipeline pass (torch/_inductor/fx_passes/micro_pipeline_tp.py) fuses an all-gather with the matmuls
that take its result as their left operand (fused_all_gather_matmul) and a reduce-scatter with the one
matmul that produces its input (fused_matmul_reduce_scatter; "no producer matmul found for reduce scatter,
skipping" otherwise). Each fused collective runs in tp chunks beside its own matmuls' chunks
(torch/distributed/_symmetric_memory/__init__.py _pipelined_all_gather_and_consume: the local shard's matmul
first, then each remote shard's copy and matmul; _pipelined_produce_and_all2all likewise), so its transfers
hide only under (tp - 1) / tp of those matmuls, not under the block's other GEMMs; a fused reduce-scatter
then sums the tp stacked partials in one more kernel (_fused_matmul_reduce_scatter_impl: reduce_fn over the
group dim), reading the whole tensor and writing 1 / tp of it after the pipeline. The backward
reduce-scatter of the attention input's gradient sums the wq, wk and wv data-gradient matmuls (and the MLP's
w1 and w3), so it has no single producer matmul: it stays exposed, with its layout copy. A collective's GEMM
time is its matmuls' share of the block linears' FLOPs (block_matmuls), out of the block linears' GEMM time
the step spends.
"""

from __future__ import annotations

import numpy as np

from procurement.sizing.assumptions import ACHIEVED_BANDWIDTH
from procurement.sizing.bytes_model import block_matmuls, op_level_recomputed_matmuls
from procurement.sizing.spec import WorkloadSpec

# A layer's sequence-parallel collectives by their matmuls, in torchtitan's names (Llama: fc1 / fc2 for a
# plain MLP): (kind, the matmuls it feeds or is fed by). The backward gathers the output gradients of wo and
# w2 for their data-gradient matmuls and reduce-scatters the input gradients of the column-parallel ones.
ATTENTION_IN, MLP_IN = ("wq", "wk", "wv"), ("w1", "w3", "fc1")
ATTENTION_OUT, MLP_OUT = ("wo",), ("w2", "fc2")


def copy_seconds(spec: WorkloadSpec, collectives, message_bytes, memory_bandwidth_gbps) -> np.ndarray:
    """The layout copies of ``collectives`` DTensor collectives of ``message_bytes`` each (the gathered
    tensor): 2 x its bytes at the achieved HBM bandwidth; 0 under Megatron-Core or without a bandwidth."""
    if spec.parallelism.tp_implementation != "dtensor":
        return np.zeros_like(np.asarray(collectives, dtype=float))
    bandwidth = np.asarray(memory_bandwidth_gbps, dtype=float) * 1e9 * ACHIEVED_BANDWIDTH.value
    return np.asarray(collectives, dtype=float) * 2.0 * message_bytes / bandwidth


def _flops(names: tuple[str, ...], matmuls: list[tuple[str, float, float]]) -> float:
    """Forward FLOPs a token of the named matmuls (2 x input x output width)."""
    return sum(2.0 * inp * out for name, inp, out in matmuls if name in names)


def layer_collectives(spec: WorkloadSpec) -> list[tuple[str, float]]:
    """A layer's collectives as async TP runs them: (fused_all_gather | fused_reduce_scatter | exposed, the
    forward FLOPs a token of the matmuls it runs beside). Forward: the two all-gathers before the attention
    and MLP inputs' matmuls and the two reduce-scatters after wo and w2. Recomputation replays them where it
    replays their matmuls: all four under full recomputation; under torchtitan's op-level policy
    (selective_op) the all-gathers only (reduce_scatter_tensor is on its save list), beside the recomputed
    matmuls they feed (Llama: wk, w3). Backward: the gathers of wo's and w2's output gradients beside their
    data-gradient matmuls, and the two input-gradient reduce-scatters, exposed (a sum of matmuls)."""
    matmuls = block_matmuls(spec.model)
    forward = [
        ("fused_all_gather", _flops(ATTENTION_IN, matmuls)),
        ("fused_reduce_scatter", _flops(ATTENTION_OUT, matmuls)),
        ("fused_all_gather", _flops(MLP_IN, matmuls)),
        ("fused_reduce_scatter", _flops(MLP_OUT, matmuls)),
    ]
    backward = [
        ("fused_all_gather", _flops(ATTENTION_OUT, matmuls)),
        ("fused_all_gather", _flops(MLP_OUT, matmuls)),
        ("exposed", 0.0),
        ("exposed", 0.0),
    ]
    if spec.gradient_checkpointing == "full":
        return forward + forward + backward
    if spec.gradient_checkpointing == "selective_op":
        again = op_level_recomputed_matmuls(spec.model)
        replayed = [_flops(ATTENTION_IN, again), _flops(MLP_IN, again)]
        return forward + [("fused_all_gather" if f > 0 else "exposed", f) for f in replayed] + backward
    return forward + backward


def block_linear_flops(spec: WorkloadSpec) -> float:
    """A layer's block-linear FLOPs a trained token: forward, twice that backward, and what recomputation
    replays (the whole forward under full; the op-level policy's recomputed matmuls under selective_op)."""
    matmuls = block_matmuls(spec.model)
    forward = sum(2.0 * inp * out for _, inp, out in matmuls)
    replay = 0.0
    if spec.gradient_checkpointing == "full":
        replay = forward
    elif spec.gradient_checkpointing == "selective_op":
        replay = sum(2.0 * inp * out for _, inp, out in op_level_recomputed_matmuls(spec.model))
    return 3.0 * forward + replay


def exposed_seconds(spec: WorkloadSpec, collective_s, copy_s, linear_s, tp) -> np.ndarray:
    """The tensor-parallel seconds on the critical path under dtensor: every collective and its layout copy
    without async TP; with it (tp_comm_overlap), per collective of the layer: a fused one what its transfers
    outlast of (tp - 1) / tp of its matmuls, a fused reduce-scatter also its partials' sum ((1 + 1 / tp) x the
    tensor's bytes in HBM, half a layout copy's 2 x), an unfused one all of it and its copy.
    ``collective_s`` and ``copy_s``: the step's collectives and layout copies (equal shares a collective);
    ``linear_s``: the step's block-linear GEMM time."""
    if not spec.parallelism.tp_comm_overlap:
        return collective_s + copy_s
    layer = layer_collectives(spec)
    each, copy_each = collective_s / len(layer), copy_s / len(layer)
    per_flop = linear_s / block_linear_flops(spec)
    tp = np.maximum(np.asarray(tp, dtype=float), 1.0)
    beside = (tp - 1.0) / tp
    exposed = np.zeros_like(np.asarray(collective_s, dtype=float))
    for kind, flops in layer:
        outlast = np.maximum(0.0, each - flops * per_flop * beside)
        if kind == "fused_all_gather":
            exposed = exposed + outlast
        elif kind == "fused_reduce_scatter":
            exposed = exposed + outlast + copy_each / 2.0 * (1.0 + 1.0 / tp)
        else:
            exposed = exposed + each + copy_each
    return exposed
