"""Tensor parallelism as PyTorch DTensor runs it (parallelism.tp_implementation: dtensor, torchtitan's; tp26) and
the all-gathers torchtitan's per-op SAC replays, against hand computations.

Llama-2-7B: 32 layers, hidden 4096 (32 heads of 128, no GQA), SwiGLU MLP of 11,008. TP 8 on one node, one
8,192-token sequence a step: each sequence-parallel collective moves 7/8 of the 8,192 x 4,096 x 2 B = 64 MiB
activation tensor over 450 x 0.8 GB/s NVLink; DTensor's layout copy reads and writes those 64 MiB once more at
3,350 x 0.7 GB/s (the H100 SXM's HBM at the achieved fraction).
Sources: pytorch/torchtitan @820504e torchtitan/models/llama3/parallelize_llama.py (apply_tp on Shard(1),
_save_list with reduce_scatter_tensor and no all-gather); torch/distributed/_functional_collectives.py
(chunk + cat around a collective with gather/scatter dim > 0); torch/_inductor/fx_passes/micro_pipeline_tp.py
(fused all-gather and reduce-scatter matmuls) and torch/distributed/_symmetric_memory/__init__.py (the fused
reduce-scatter's final sum of the stacked partials).
"""

import numpy as np
import pytest

from procurement.sizing import WorkloadSpecError, training_throughput
from procurement.sizing.throughput import training_flops_per_token, training_flops_shares
from tests.procurement.sizing.helpers import spec

NVLINK = 450 * 0.8
HBM = 3350.0
MESSAGE = 8192 * 4096 * 2
COLLECTIVE = 7 / 8 * MESSAGE / (NVLINK * 1e9)  # one all-gather or reduce-scatter, 0.163 ms
LATENCY = 20e-6  # a Megatron all-reduce's worth (an all-gather and a reduce-scatter)
COPY = 2 * MESSAGE / (HBM * 1e9 * 0.7)  # 0.057 ms
PEAK, MFU = 989.5, 0.4


def _pretrain(checkpointing="selective", **parallelism):
    return spec(
        task="pretrain",
        training_tokens=1e9,
        seq_len=8192,
        gradient_checkpointing=checkpointing,
        parallelism={"gpus": 8, "tensor_parallel": 8} | parallelism,
    )


def _train(workload, bandwidth=HBM):
    rows = training_throughput(
        workload,
        peak_tflops=PEAK,
        interconnect_gbps=NVLINK,
        mfu=MFU,
        gpu_counts=8,
        gpus_per_node=8,
        fabric_gbps=50 * 0.8,
        memory_bandwidth_gbps=bandwidth,
    )
    return {key: np.asarray(value).item() for key, value in rows.items()}


def test_per_op_sac_replays_the_two_forward_all_gathers():
    # 5 all-reduces' worth a layer (forward 2, the replayed all-gathers 1, backward 2), against 4 and 6
    for mode, allreduces in (("selective", 4), ("selective_op", 5), ("full", 6)):
        rows = _train(_pretrain(mode))
        expected = allreduces * 32 * (2 * COLLECTIVE + LATENCY)
        assert rows["tensor_parallel_seconds"] == pytest.approx(expected, rel=1e-12), mode


def test_dtensor_copies_the_gathered_tensor_around_each_collective():
    megatron = _train(_pretrain("selective_op"))
    dtensor = _train(_pretrain("selective_op", tp_implementation="dtensor"))
    copies = 10 * 32 * COPY  # 10 collectives a layer, 18.3 ms
    assert dtensor["tensor_parallel_seconds"] == pytest.approx(
        megatron["tensor_parallel_seconds"] + copies, rel=1e-12
    )
    # without async TP all of it is on the critical path, and the bytes sent are the same
    assert dtensor["tensor_parallel_exposed_seconds"] == dtensor["tensor_parallel_seconds"]
    assert dtensor["tensor_parallel_bytes_per_step"] == megatron["tensor_parallel_bytes_per_step"]
    # no bandwidth given: no copy counted
    unknown = _train(_pretrain("selective_op", tp_implementation="dtensor"), bandwidth=None)
    assert unknown["tensor_parallel_seconds"] == pytest.approx(megatron["tensor_parallel_seconds"], rel=1e-12)


def test_async_tp_hides_each_collective_under_its_own_matmuls_only():
    workload = _pretrain(tp_implementation="dtensor", tp_comm_overlap=True)
    rows = _train(workload)
    # the step's block-linear GEMM time, split by each matmul group's forward FLOPs a token and layer
    compute = training_flops_per_token(workload) * 8192 / (8 * PEAK * 1e12 * MFU)  # 121.3 ms
    linear_s = compute * training_flops_shares(workload)[0]
    qkv, out = 2 * 4096 * 3 * 4096, 2 * 4096 * 4096
    up, down = 2 * 4096 * 2 * 11008, 2 * 11008 * 4096
    per_flop = linear_s / (3 * (qkv + out + up + down))  # forward + 2 x backward, no recomputation
    each = 32 * (COLLECTIVE + LATENCY / 2)  # a layer's collective, over the step's 32 layers
    copy = 32 * COPY

    def beside(flops):  # transfers run beside 7/8 of the matmuls (the local shard's goes first)
        return max(0.0, each - flops * per_flop * 7 / 8)

    partial_sums = copy / 2 * (1 + 1 / 8)  # a fused reduce-scatter's sum of its 8 stacked partials
    forward = beside(qkv) + beside(out) + partial_sums + beside(up) + beside(down) + partial_sums
    backward = beside(out) + beside(down) + 2 * (each + copy)  # the 2 input-gradient reduce-scatters
    assert beside(out) > 0 and beside(qkv) == 0  # wo's GEMM is shorter than its reduce-scatter here
    assert rows["tensor_parallel_exposed_seconds"] == pytest.approx(forward + backward, rel=1e-9)
    assert rows["tensor_parallel_seconds"] == pytest.approx(8 * each + 8 * copy, rel=1e-12)


def test_async_tp_under_per_op_sac_fuses_the_replayed_all_gathers_with_the_replayed_matmuls():
    # Llama's op-level policy replays wk (a column of the attention input's gather) and w3 (of the MLP's)
    workload = _pretrain("selective_op", tp_implementation="dtensor", tp_comm_overlap=True)
    plain = _pretrain("selective_op", tp_implementation="dtensor")
    rows, vanilla = _train(workload), _train(plain)
    assert rows["tensor_parallel_seconds"] == pytest.approx(vanilla["tensor_parallel_seconds"], rel=1e-12)
    assert 0 < rows["tensor_parallel_exposed_seconds"] < vanilla["tensor_parallel_exposed_seconds"]
    # at least the 2 unfused reduce-scatters and their copies stay on the critical path
    assert rows["tensor_parallel_exposed_seconds"] >= 2 / 10 * vanilla["tensor_parallel_seconds"]


def test_dtensor_is_a_dense_training_option():
    assert _pretrain().parallelism.tp_implementation == "megatron"
    with pytest.raises(WorkloadSpecError) as raised:
        spec(task="inference", parallelism={"gpus": 2, "tensor_parallel": 2, "tp_implementation": "dtensor"})
    assert [error.path for error in raised.value.errors] == ["parallelism.tp_implementation"]
    with pytest.raises(WorkloadSpecError) as raised:
        spec(
            task="pretrain",
            model={"preset": "mixtral-8x7b"},
            parallelism={"gpus": 8, "tensor_parallel": 8, "tp_implementation": "dtensor"},
        )
    assert [error.path for error in raised.value.errors] == ["parallelism.tp_implementation"]
    with pytest.raises(WorkloadSpecError):
        _pretrain(tp_implementation="nccl")
