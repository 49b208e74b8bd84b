"""parallelism.gradient_sync (e26b): where an accumulated DDP / ZeRO-1/2 step's data-parallel traffic can hide.
overlapped (default): under communication_overlap_fraction of the whole step's compute; last_micro_batch
(Megatron-Core's no_sync_func for the first micro-batches, PyTorch DDP no_sync): of the last micro-batch's only.
Checked by hand on Llama-2-7B, ZeRO-1 over 64 GPUs in 8 nodes at 5 GB/s a GPU, 4 micro-batches a step."""

import pytest

from procurement.sizing import WorkloadSpecError, training_throughput
from procurement.sizing.assumptions import COMM_OVERLAP, GRADIENT_SYNC_LAST_MICRO_BATCH
from tests.procurement.sizing.helpers import spec


def _plan(accumulation: int = 4, **parallelism):
    plan = {"gpus": 64, "zero_stage": 1} | parallelism
    return spec(
        task="pretrain",
        training_tokens=1e9,
        seq_len=4096,
        gradient_accumulation_steps=accumulation,
        parallelism=plan,
    )


def _rows(workload) -> dict:
    return training_throughput(
        workload,
        peak_tflops=989.5,
        gpu_counts=None,
        interconnect_gbps=360.0,
        mfu=0.4,
        gpus_per_node=8,
        fabric_gbps=5.0,
    )


def _traffic(rows) -> float:
    keys = (
        "gradient_seconds_node",
        "gradient_seconds_fabric",
        "gather_seconds_node",
        "gather_seconds_fabric",
    )
    keys += ("gradient_latency_seconds", "gather_latency_seconds")
    return sum(float(rows[key]) for key in keys)


def test_last_micro_batch_hides_the_traffic_under_one_micro_batch():
    overlapped = _rows(_plan())
    last = _rows(_plan(gradient_sync="last_micro_batch"))
    compute = float(last["compute_seconds"])
    assert float(overlapped["compute_seconds"]) == compute
    traffic = _traffic(last)
    window = COMM_OVERLAP.value * compute * GRADIENT_SYNC_LAST_MICRO_BATCH.value / 4
    assert float(last["data_parallel_exposed_seconds"]) == pytest.approx(max(0.0, traffic - window), rel=1e-9)
    assert float(overlapped["data_parallel_exposed_seconds"]) == pytest.approx(
        max(0.0, traffic - COMM_OVERLAP.value * compute), rel=1e-9
    )
    assert float(last["data_parallel_exposed_seconds"]) > float(overlapped["data_parallel_exposed_seconds"])


def test_one_micro_batch_a_step_is_the_same_either_way():
    overlapped = _rows(_plan(accumulation=1))
    last = _rows(_plan(accumulation=1, gradient_sync="last_micro_batch"))
    assert float(last["step_seconds"]) == pytest.approx(float(overlapped["step_seconds"]), rel=1e-12)


def test_sharded_weights_move_their_traffic_every_micro_batch():
    with pytest.raises(WorkloadSpecError) as raised:
        _plan(zero_stage="fsdp", gradient_sync="last_micro_batch")
    assert [error.path for error in raised.value.errors] == ["parallelism.gradient_sync"]


def test_an_unknown_timing_is_refused():
    with pytest.raises(WorkloadSpecError) as raised:
        _plan(gradient_sync="sometimes")
    assert [error.path for error in raised.value.errors] == ["parallelism.gradient_sync"]
