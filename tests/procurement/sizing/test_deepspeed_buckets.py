"""parallelism.reduce_bucket_size / overlap_comm: DeepSpeed ZeRO-1/2's gradient staging buckets (qwenq, stop 51).

Source: deepspeed/runtime/zero/stage_1_and_2.py@v0.12.3 lines 1934-1947, DeepSpeedZeroOptimizer.backward: with
contiguous_gradients (zero/config.py line 93, default True) `torch.empty(int(self.reduce_bucket_size),
dtype=self.dtype)`, the 16-bit parameters' dtype (line 282), and a second under overlap_comm; released at the end
of that backward, not at the step (fix51q: independent_gradient_partition_epilogue ends in _release_ipg_buffers(),
line 750, reached from engine.py line 1966 every micro-batch at ZeRO-2), so beside the backward's peak.
"""

from __future__ import annotations

import pytest

from procurement.sizing import WorkloadSpecError, parse_workload_spec
from procurement.sizing.memory import memory_breakdown_scalar

GIB = 2.0**30


def _spec(**parallelism) -> dict:
    return {
        "task": "lora",
        "model": {"preset": "llama-2-7b"},
        "precision": "bf16",
        "seq_len": 1024,
        "gradient_checkpointing": "full",
        "lora": {"rank": 16},
        "parallelism": {"gpus": 1, "zero_stage": 2} | parallelism,
    }


def _errors(data: dict) -> dict:
    with pytest.raises(WorkloadSpecError) as caught:
        parse_workload_spec(data)
    return {error.path: error.message for error in caught.value.errors}


def _gradients_gib(data: dict) -> float:
    return memory_breakdown_scalar(parse_workload_spec(data), 1)["gradients_gib"]


def test_it_adds_the_stated_buckets_to_the_gradients_by_hand():
    # By hand: 2e8 elements x 2 B (bf16) = 4e8 B = 0.3725 GiB a bucket; overlap_comm doubles it, 0.7451 GiB.
    unstated = _gradients_gib(_spec())
    one = _gradients_gib(_spec(reduce_bucket_size=200_000_000))
    two = _gradients_gib(_spec(reduce_bucket_size=200_000_000, overlap_comm=True))
    assert one - unstated == pytest.approx(4e8 / GIB, rel=1e-9)
    assert two - unstated == pytest.approx(8e8 / GIB, rel=1e-9)


def test_fp32_parameters_take_4_bytes_an_element():
    # By hand: 1e8 elements x 4 B = 4e8 B, one bucket.
    data = _spec(reduce_bucket_size=100_000_000) | {"precision": "fp32"}
    assert _gradients_gib(data) - _gradients_gib(_spec() | {"precision": "fp32"}) == pytest.approx(4e8 / GIB)


def test_the_default_counts_nothing():
    assert parse_workload_spec(_spec()).parallelism.reduce_bucket_size == 0
    assert _gradients_gib(_spec()) == _gradients_gib(_spec(reduce_bucket_size=0))


@pytest.mark.parametrize(
    "parallelism",
    [
        {"zero_stage": 0, "reduce_bucket_size": 200_000_000},
        {"zero_stage": 3, "reduce_bucket_size": 200_000_000},
        {"gpus": 2, "pipeline_parallel": 2, "zero_stage": 1, "reduce_bucket_size": 200_000_000},
    ],
    ids=["zero0", "zero3", "pipeline"],
)
def test_a_bucket_outside_zero_1_2_without_a_pipeline_is_refused_naming_the_field(parallelism):
    errors = _errors(_spec(**parallelism))
    assert "parallelism.reduce_bucket_size" in errors
    assert "zero_stage 1 or 2" in errors["parallelism.reduce_bucket_size"]


def test_a_bucket_on_an_inference_spec_is_refused_naming_the_field():
    data = {
        "task": "inference",
        "model": {"preset": "llama-2-7b"},
        "parallelism": {"gpus": 1, "zero_stage": 2, "reduce_bucket_size": 200_000_000},
    }
    assert "parallelism.reduce_bucket_size" in _errors(data)


def test_overlap_comm_without_a_bucket_is_refused_naming_the_field():
    errors = _errors(_spec(overlap_comm=True))
    assert "reduce_bucket_size" in errors["parallelism.overlap_comm"]


def test_a_negative_bucket_is_refused_naming_the_field():
    assert "parallelism.reduce_bucket_size" in _errors(_spec(reduce_bucket_size=-1))
