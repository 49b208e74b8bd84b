"""A multi-node checkpoint is written by every instance at once (costing/spot_timing.py "Writers",
docs/cost-model.md "Spot timing"), checked by hand.

GPT-3 175B (Brown et al. 2020, Table 2.1) trained on 128 GPUs, 16 nodes of 8: the resumable checkpoint is
175.2e9 parameters x 14 B (16-bit weights + fp32 master and Adam moments) = 2.45 TB. Megatron's distributed
checkpoint and PyTorch DCP write one file per rank, so each node writes its own shard: at 0.5 GB/s a node,
W = 2.45e12 / (16 x 0.5e9) = 306 s = 5.1 min (issue 26, outside round 4, case 10); one volume for the whole
job was 82 min, which refused spot.
"""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from procurement.costing.spot_timing import SpotTimingInput, spot_timing
from procurement.costing.values import CostInputError
from procurement.ranking import RankingOptions
from procurement.ranking.configurations import checkpoint_too_slow
from procurement.ranking.spot_inputs import checkpoint_writers, job_spot_timing
from procurement.sizing import parse_workload_spec

GPT3_SPEC = {
    "task": "pretrain",
    "model": {
        "name": "gpt3-175b",
        "num_layers": 96,
        "hidden_size": 12288,
        "num_attention_heads": 96,
        "intermediate_size": 4 * 12288,
        "vocab_size": 51200,
        "gated_mlp": False,
    },
    "precision": "bf16",
    "seq_len": 2048,
    "parallelism": {"gpus": 128, "zero_stage": 1, "tensor_parallel": 4, "pipeline_parallel": 8},
    "training_tokens": 300e9,
}


def test_sixteen_writers_write_a_sixteenth_each():
    one = spot_timing(SpotTimingInput(checkpoint_gb=2450.0, image_gb=0.0, provisioning_hours=0.0))
    sixteen = spot_timing(
        SpotTimingInput(checkpoint_gb=2450.0, image_gb=0.0, provisioning_hours=0.0, writers=16)
    )
    assert one.checkpoint_write_hours * 3600 == pytest.approx(4900.0)  # 2,450 GB / 0.5 GB/s: 81.7 min
    assert sixteen.checkpoint_write_hours * 3600 == pytest.approx(2450.0 / 8.0)  # 306.25 s = 5.1 min
    # the restore reads the shards back the same way: 2,450 / (16 x 0.5) s
    assert sixteen.restart_parts_hours["checkpoint_restore"] * 3600 == pytest.approx(306.25)


def test_a_shared_file_system_caps_the_sum():
    # 16 writers at 0.5 GB/s would write 8 GB/s; a file system that takes 2 GB/s in all bounds it: 1,225 s
    capped = spot_timing(
        SpotTimingInput(
            checkpoint_gb=2450.0,
            image_gb=0.0,
            provisioning_hours=0.0,
            writers=16,
            aggregate_write_gb_per_s=2.0,
        )
    )
    assert capped.checkpoint_write_hours * 3600 == pytest.approx(1225.0)


@pytest.mark.parametrize(
    ("field", "value"), [("writers", 0), ("writers", 1.5), ("aggregate_write_gb_per_s", 0.0)]
)
def test_bad_writers_or_cap_name_the_field(field, value):
    with pytest.raises(CostInputError) as error:
        spot_timing(SpotTimingInput(checkpoint_gb=1.0, image_gb=0.0, **{field: value}))
    assert error.value.field == field


@given(
    checkpoint_gb=st.floats(0.1, 1e5),
    writers=st.integers(1, 4096),
    cap=st.one_of(st.none(), st.floats(0.01, 1e3)),
)
def test_more_writers_never_slow_the_write_and_the_cap_bounds_it(checkpoint_gb, writers, cap):
    def write(count):
        timing = spot_timing(
            SpotTimingInput(
                checkpoint_gb=checkpoint_gb, image_gb=0.0, writers=count, aggregate_write_gb_per_s=cap
            )
        )
        return timing.checkpoint_write_hours * 3600

    assert write(writers + 1) <= write(writers) * (1 + 1e-12)
    assert write(writers) >= checkpoint_gb / (writers * 0.5) * (1 - 1e-12)
    if cap is not None:
        assert write(writers) >= checkpoint_gb / cap * (1 - 1e-12)


def test_gpt3_on_16_nodes_writes_in_5_minutes_and_keeps_spot_open():
    spec = parse_workload_spec(GPT3_SPEC)
    assert checkpoint_writers(spec) == 16
    timing = job_spot_timing(spec, RankingOptions())
    # several GPUs, full training: an asynchronous save; the storage write runs in the background
    assert timing.mode == "async"
    assert timing.checkpoint_gb == pytest.approx(175.2e9 * 14 / 1e9, rel=0.01)
    assert timing.background_write_hours * 60 == pytest.approx(2452.8 / 8.0 / 60, rel=0.01)  # 5.1 min
    assert not checkpoint_too_slow(spec, RankingOptions())


def test_one_gpu_and_gpus_auto_keep_one_writer():
    assert checkpoint_writers(parse_workload_spec(GPT3_SPEC | {"parallelism": {"gpus": 8}})) == 1
    assert checkpoint_writers(parse_workload_spec(GPT3_SPEC | {"parallelism": {"gpus": 9}})) == 2
    assert checkpoint_writers(parse_workload_spec(GPT3_SPEC | {"parallelism": {"gpus": "auto"}})) == 1
