"""parallelism.reshard_after_forward false (torchtitan's FSDP2 under pipeline parallelism): the stage's
weights stay gathered and, under PP, its gradients accumulate unsharded in fp32 until the last micro-batch;
the step skips the backward re-gathers. Against hand computations on Llama-2-7B (6,738,415,616 parameters,
32 layers), bf16, FSDP over 8 data-parallel ranks."""

import numpy as np
import pytest

from procurement.sizing import WorkloadSpecError, training_throughput
from procurement.sizing.assumptions import GIB
from tests.procurement.sizing.helpers import memory, spec

P7 = 6_738_415_616


def _fsdp(pp: int, **parallelism):
    plan = {"gpus": 8 * pp, "zero_stage": "fsdp", "pipeline_parallel": pp} | parallelism
    return spec(
        task="pretrain", training_tokens=1e9, seq_len=4096, gradient_accumulation_steps=4, parallelism=plan
    )


def _calls(workload) -> tuple[float, float]:
    rows = training_throughput(workload, peak_tflops=989.5, gpu_counts=None, interconnect_gbps=360.0, mfu=0.4)
    return float(rows["gradient_calls_per_step"]), float(rows["gather_calls_per_step"])


def test_it_keeps_a_pipeline_stage_gathered_with_fp32_gradients():
    # PP 2: a stage holds P7 / 2 parameters, whole in bf16 (2 B) and their gradients in fp32 (4 B)
    kept = memory(_fsdp(2, reshard_after_forward=False))
    assert kept["weights_gib"] == pytest.approx(P7 / 2 * 2 / GIB, rel=1e-9)
    assert kept["gradients_gib"] == pytest.approx(P7 / 2 * 4 / GIB, rel=1e-9)
    resharded = memory(_fsdp(2))
    assert resharded["gradients_gib"] == pytest.approx(P7 / 2 * 2 / 8 / GIB, rel=1e-9)
    assert kept["optimizer_states_gib"] == resharded["optimizer_states_gib"]  # the fp32 shards stay sharded
    assert kept["activations_gib"] == resharded["activations_gib"]


def test_without_pipeline_parallelism_only_the_weights_stay_gathered():
    kept, resharded = memory(_fsdp(1, reshard_after_forward=False)), memory(_fsdp(1))
    assert kept["weights_gib"] == pytest.approx(P7 * 2 / GIB, rel=1e-9)
    assert kept["gradients_gib"] == resharded["gradients_gib"] == pytest.approx(P7 * 2 / 8 / GIB, rel=1e-9)


def test_it_gathers_and_reduces_once_a_step_under_pipeline_parallelism():
    # 16 layers a stage, 4 micro-batches: resharding gives 16 x 4 reduce-scatters and 16 x 4 x 2 all-gathers
    assert _calls(_fsdp(2)) == (64.0, 128.0)
    assert _calls(_fsdp(2, reshard_after_forward=False)) == (16.0, 16.0)
    # no PP: the forward gathers stay (32 x 4), the backward's go
    assert _calls(_fsdp(1, reshard_after_forward=False)) == (128.0, 128.0)


def test_a_plan_without_sharded_weights_cannot_keep_them_gathered():
    with pytest.raises(WorkloadSpecError) as raised:
        _fsdp(2, zero_stage=1, reshard_after_forward=False)
    assert [error.path for error in raised.value.errors] == ["parallelism.reshard_after_forward"]


def test_the_ranking_s_other_zero_stages_keep_their_sharding():
    workload = _fsdp(2, reshard_after_forward=False)
    rows = memory(workload, zero_stage=np.array(1.0))
    assert rows["gradients_gib"] == pytest.approx(P7 / 2 * 2 / GIB, rel=1e-9)
