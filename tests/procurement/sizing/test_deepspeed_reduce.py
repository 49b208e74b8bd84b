"""DeepSpeed ZeRO-1/2's gradient reductions a step (zacc, stop 51; procurement/sizing/deepspeed_reduce.py).

Source: deepspeed/runtime/zero/stage_1_and_2.py@v0.12.3: reduce_ready_partitions_and_remove_grads (lines 1328-1330)
reduces at every micro-batch's backward when partition_gradients (ZeRO-2), at the accumulation boundary's only at
ZeRO-1; average_tensor (line 956) runs the reduces on the backward's current stream when overlap_comm is false (line
962), on reduction_stream when true; all_gather_dp_groups gathers the updated 16-bit partitions once after the step
(line 1802).

By hand, LLaMA-2-7B (6,738,415,616 parameters, bf16 gradients: 13.4768 GB a rank), 8 ranks on one 200 GB/s link: a
reduce-scatter moves 7/8 x 13.4768e9 B = 11.792 GB, 58.96 ms. Accumulation 8: ZeRO-2 runs 8 of them a step, 471.7 ms.
"""

from __future__ import annotations

import pytest

from procurement.sizing import WorkloadSpecError, parse_workload_spec
from procurement.sizing.throughput import training_throughput

REDUCE_SCATTER_S = 7 / 8 * 6_738_415_616 * 2 / 200e9  # 58.96 ms


def _spec(**parallelism):
    return parse_workload_spec(
        {
            "task": "full_finetune",
            "model": {"preset": "llama-2-7b"},
            "precision": "bf16",
            "seq_len": 4096,
            "micro_batch_size": 1,
            "gradient_accumulation_steps": 8,
            "gradient_checkpointing": "full",
            "parallelism": {"gpus": 8, "zero_stage": 2} | parallelism,
        }
    )


def _rows(**parallelism) -> dict:
    # 312 TFLOPS at 0.4: a ~15 s step, long enough to hide every overlapped collective
    return training_throughput(
        _spec(**parallelism), peak_tflops=312, gpu_counts=8, interconnect_gbps=200, mfu=0.4
    )


def _exposed(**parallelism) -> float:
    return float(_rows(**parallelism)["data_parallel_exposed_seconds"])


def test_it_exposes_a_reduce_scatter_a_micro_batch_under_zero2_without_overlap_comm():
    # 8 x 58.96 = 471.7 ms of bandwidth, plus NCCL's per-call latency of 112 reduces (8 x 14 buckets of 5e8
    # elements, ~32 us each: 3.6 ms), inside 1%
    assert _exposed(reduce_bucket_size=500_000_000) == pytest.approx(8 * REDUCE_SCATTER_S, rel=0.01)


def test_it_exposes_one_reduce_scatter_a_step_under_zero1():
    assert _exposed(zero_stage=1, reduce_bucket_size=500_000_000) == pytest.approx(REDUCE_SCATTER_S, rel=0.01)


def test_it_hides_the_reductions_under_the_compute_with_overlap_comm():
    rows = _rows(reduce_bucket_size=500_000_000, overlap_comm=True)
    assert float(rows["data_parallel_exposed_seconds"]) == 0.0
    # the traffic is still counted: 8 reduce-scatters and the step's all-gather, 9 x 58.96 ms
    assert float(rows["gradient_seconds_node"]) == pytest.approx(9 * REDUCE_SCATTER_S, rel=1e-9)


def test_it_keeps_one_all_reduce_a_step_without_a_stated_deepspeed_config():
    # no reduce_bucket_size: the engine's older rule, 2 x 58.96 ms a step, hidden under the compute
    rows = _rows()
    assert float(rows["gradient_seconds_node"]) == pytest.approx(2 * REDUCE_SCATTER_S, rel=1e-9)
    assert float(rows["data_parallel_exposed_seconds"]) == 0.0


def test_last_micro_batch_sync_under_deepspeed_zero2_is_refused_naming_the_field():
    with pytest.raises(WorkloadSpecError) as caught:
        _spec(reduce_bucket_size=500_000_000, gradient_sync="last_micro_batch")
    errors = {error.path: error.message for error in caught.value.errors}
    assert "every micro-batch" in errors["parallelism.gradient_sync"]
