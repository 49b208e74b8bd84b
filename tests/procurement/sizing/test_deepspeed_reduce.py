"""DeepSpeed ZeRO-1/2's gradient reductions a step (zacc, stop 51; procurement/sizing/deepspeed_reduce.py).

Source: deepspeed/runtime/zero/stage_1_and_2.py@v0.12.3: reduce_ready_partitions_and_remove_grads (lines 1328-1330)
reduces at every micro-batch's backward when partition_gradients (ZeRO-2), at the accumulation boundary's only at
ZeRO-1; average_tensor (line 956) runs the reduces on the backward's current stream when overlap_comm is false (line
962), on reduction_stream when true; all_gather_dp_groups gathers the updated 16-bit partitions once after the step
(line 1802).

What each reduction sends (fix51c): DeepSpeed from v0.12.4 (PR #4695, 2afa1c7f) defaults
use_multi_rank_bucket_allreduce to true (zero/config.py@v0.14.2 line 111), under which average_tensor all-reduces each
bucket (stage_1_and_2.py@v0.14.2 lines 1116-1130 -> 997-1007 -> 1500 dist.all_reduce); v0.12.3 and earlier (no such
key) reduce each rank's slice to its owner (dist.reduce, @v0.12.3 line 1044), a reduce-scatter's bytes.

By hand, LLaMA-2-7B (6,738,415,616 parameters, bf16 gradients: 13.4768 GB a rank), 8 ranks on one 200 GB/s link: a
reduce-scatter moves 7/8 x 13.4768e9 B = 11.792 GB, 58.96 ms; an all-reduce twice that, 117.92 ms. Accumulation 8:
ZeRO-2 runs 8 reductions a step, 943.4 ms as all-reduces (the default), 471.7 ms as reduce-scatters (flag false).
"""

from __future__ import annotations

import pytest

from procurement.sizing import WorkloadSpecError, parse_workload_spec
from procurement.sizing.throughput import training_throughput

REDUCE_SCATTER_S = 7 / 8 * 6_738_415_616 * 2 / 200e9  # 58.96 ms
ALL_REDUCE_S = 2 * REDUCE_SCATTER_S  # 2 (n - 1) / n of the bytes: 117.92 ms


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


def test_it_exposes_an_all_reduce_a_micro_batch_under_zero2_without_overlap_comm():
    # DeepSpeed >= 0.12.4's default (multi_rank_bucket_allreduce true): 8 x 117.92 = 943.4 ms of bandwidth, plus
    # NCCL's per-call latency of 112 all-reduces (8 x 14 buckets of 5e8 elements), inside 1%
    assert _exposed(reduce_bucket_size=500_000_000) == pytest.approx(8 * ALL_REDUCE_S, rel=0.01)


def test_it_exposes_a_reduce_scatter_a_micro_batch_with_the_flag_false():
    # fix51c: before the flag this was the only rule (the test above then asserted 8 x 58.96 = 471.7 ms for the
    # default); it is now DeepSpeed <= 0.12.3's per-rank dist.reduce: 8 x 58.96 ms plus 112 reduces' latency
    # (~32 us each: 3.6 ms), inside 1%
    exposed = _exposed(reduce_bucket_size=500_000_000, multi_rank_bucket_allreduce=False)
    assert exposed == pytest.approx(8 * REDUCE_SCATTER_S, rel=0.01)


def test_it_exposes_one_reduction_a_step_under_zero1():
    # one all-reduce (117.92 ms) by default; one reduce-scatter (58.96 ms) with the flag false (fix51c: before the
    # flag the default read 58.96 ms)
    assert _exposed(zero_stage=1, reduce_bucket_size=500_000_000) == pytest.approx(ALL_REDUCE_S, rel=0.01)
    exposed = _exposed(zero_stage=1, reduce_bucket_size=500_000_000, multi_rank_bucket_allreduce=False)
    assert exposed == pytest.approx(REDUCE_SCATTER_S, rel=0.01)


def test_it_hides_the_reductions_under_the_compute_with_overlap_comm():
    rows = _rows(reduce_bucket_size=500_000_000, overlap_comm=True)
    assert float(rows["data_parallel_exposed_seconds"]) == 0.0
    # the traffic is still counted: 8 all-reduces (2 x 58.96 ms each) and the step's all-gather, 17 x 58.96 ms
    # (fix51c: 9 x 58.96 before, the 8 priced as reduce-scatters)
    assert float(rows["gradient_seconds_node"]) == pytest.approx(17 * REDUCE_SCATTER_S, rel=1e-9)
    rows = _rows(reduce_bucket_size=500_000_000, overlap_comm=True, multi_rank_bucket_allreduce=False)
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


def test_it_defaults_multi_rank_bucket_allreduce_to_deepspeeds_own_default():
    # use_multi_rank_bucket_allreduce: bool = True, zero/config.py@v0.14.2 line 111
    assert _spec(reduce_bucket_size=500_000_000).parallelism.multi_rank_bucket_allreduce is True
    assert (
        _spec(
            reduce_bucket_size=500_000_000, multi_rank_bucket_allreduce=False
        ).parallelism.multi_rank_bucket_allreduce
        is False
    )


@pytest.mark.parametrize("value", [True, False])
def test_multi_rank_bucket_allreduce_without_a_bucket_is_refused_naming_the_field(value):
    with pytest.raises(WorkloadSpecError) as caught:
        _spec(multi_rank_bucket_allreduce=value)
    errors = {error.path: error.message for error in caught.value.errors}
    assert "parallelism.reduce_bucket_size" in errors["parallelism.multi_rank_bucket_allreduce"]


def test_multi_rank_bucket_allreduce_must_be_a_flag():
    with pytest.raises(WorkloadSpecError) as caught:
        _spec(reduce_bucket_size=500_000_000, multi_rank_bucket_allreduce="yes")
    assert "parallelism.multi_rank_bucket_allreduce" in {error.path for error in caught.value.errors}
