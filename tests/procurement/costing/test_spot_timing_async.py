"""Asynchronous checkpoints: the loop blocks for the copy to host memory, the storage write overlaps training
(costing/spot_timing.py, docs/cost-model.md "Spot timing"), checked by hand."""

from decimal import Decimal

import pytest

from procurement.costing.spot import (
    GUIDE_MAX_CHECKPOINT_INTERVAL_HOURS,
    chosen_interval_hours,
    spot_economics,
)
from procurement.costing.spot_timing import SpotTimingInput, spot_timing
from procurement.costing.values import CostInputError
from procurement.ranking import RankingOptions
from procurement.ranking.configurations import checkpoint_too_slow
from procurement.ranking.spot_inputs import job_spot_timing, saves_asynchronously
from procurement.sizing import WorkloadSpecError, parse_workload_spec


def test_async_blocks_for_each_gpus_shard_copy_and_loses_the_write_in_flight():
    # 112 GB over 8 GPUs = 14 GB a GPU at 10 GB/s: C = 1.4 s; W = 112 GB / 0.5 GB/s = 224 s in the
    # background; R = 0 provisioning + 112 / 0.5 (restore, 224 s) + W (224 s, the checkpoint in flight)
    timing = spot_timing(
        SpotTimingInput(checkpoint_gb=112.0, image_gb=0.0, provisioning_hours=0.0, asynchronous=True, gpus=8)
    )
    assert timing.checkpoint_write_hours == pytest.approx(1.4 / 3600, rel=1e-12)
    assert timing.background_write_hours == pytest.approx(224 / 3600, rel=1e-12)
    assert timing.restart_parts_hours["checkpoint_in_flight"] == pytest.approx(224 / 3600, rel=1e-12)
    assert timing.restart_hours == pytest.approx(448 / 3600, rel=1e-12)
    assert timing.as_dict()["checkpoint_mode"] == "async"
    assert "1.4 s" in timing.mode_text() and "3.73-min write" in timing.mode_text()
    sync = spot_timing(SpotTimingInput(checkpoint_gb=112.0, image_gb=0.0, provisioning_hours=0.0, gpus=8))
    assert sync.checkpoint_write_hours == pytest.approx(224 / 3600, rel=1e-12)  # the whole write blocks
    assert sync.background_write_hours == 0.0 and "checkpoint_in_flight" not in sync.restart_parts_hours


def test_async_overhead_is_the_copy_not_the_write():
    # band 4: lambda = -ln(0.75)/730 = 3.941e-4 /h; tau = 15 min (Young/Daly sqrt(2 x 1.4 s / lambda) = 1.19 h)
    # sync:  C = 224 s: 224/900 + (0.125 + 224/3600) x 3.941e-4 = 24.89% + 0.0074% = 24.896%
    # async: C = 1.4 s: 1.4/900 + (0.125 + 448/3600) x 3.941e-4 = 0.1556% + 0.0098% = 0.1654%
    rate = -(Decimal("0.75").ln()) / 730
    sync = spot_economics(
        spot_price_per_hour=Decimal(1),
        rate_per_hour=rate,
        checkpoint_write_hours=Decimal(224) / 3600,
        restart_hours=Decimal(224) / 3600,
    )
    async_ = spot_economics(
        spot_price_per_hour=Decimal(1),
        rate_per_hour=rate,
        checkpoint_write_hours=Decimal("1.4") / 3600,
        restart_hours=Decimal(448) / 3600,
        background_write_hours=Decimal(224) / 3600,
    )
    assert float(sync.overhead) == pytest.approx(0.24896, abs=2e-5)
    assert float(async_.overhead) == pytest.approx(0.001654, abs=2e-6)
    assert async_.interval_hours == GUIDE_MAX_CHECKPOINT_INTERVAL_HOURS


def test_the_next_checkpoint_waits_for_the_background_write():
    # Young/Daly 0.1 h, ceiling 0.25 h, background write 0.3 h: the interval is 0.3 h (over the guides' 15 min)
    assert chosen_interval_hours(Decimal("0.1"), Decimal("0.3")) == Decimal("0.3")
    assert chosen_interval_hours(Decimal("0.1"), Decimal("0.05")) == Decimal("0.1")
    assert chosen_interval_hours(None) == GUIDE_MAX_CHECKPOINT_INTERVAL_HOURS


def _spec(**extra):
    return parse_workload_spec(
        {"name": "m", "task": "pretrain", "model": {"preset": "llama-3.1-8b"}, "training_tokens": 1e9} | extra
    )


def test_auto_is_async_for_multi_gpu_full_training_and_sync_otherwise():
    assert saves_asynchronously(_spec(parallelism={"gpus": 8, "zero_stage": 1}))
    assert not saves_asynchronously(_spec())  # one GPU: torch.save / Trainer saves block
    assert not saves_asynchronously(_spec(parallelism={"gpus": 8}, host={"checkpoint": "sync"}))
    assert saves_asynchronously(_spec(host={"checkpoint": "async"}))
    lora = parse_workload_spec(
        {
            "name": "l",
            "task": "lora",
            "model": {"preset": "llama-3.1-8b"},
            "training_tokens": 1e7,
            "parallelism": {"gpus": 8},
        }
    )
    assert not saves_asynchronously(lora)  # adapters: PEFT save_pretrained, a second or less anyway


def test_a_bad_checkpoint_mode_names_the_field():
    with pytest.raises(WorkloadSpecError, match="host.checkpoint"):
        _spec(host={"checkpoint": "sometimes"})


def test_an_async_write_that_cannot_finish_in_15_minutes_refuses_spot():
    # 70B full training: 70.6e9 x 14 B = 988 GB, W = 988 / 0.5 = 1,976 s, over 900 s; the copy is 12 s
    big = parse_workload_spec(
        {
            "name": "b",
            "task": "pretrain",
            "model": {"preset": "llama-3-70b"},
            "training_tokens": 1e9,
            "parallelism": {"gpus": 8, "zero_stage": 3},
        }
    )
    timing = job_spot_timing(big, RankingOptions())
    assert timing.mode == "async" and timing.checkpoint_write_hours < 0.01
    assert timing.background_write_hours > float(GUIDE_MAX_CHECKPOINT_INTERVAL_HOURS)
    assert checkpoint_too_slow(big, RankingOptions())


def test_gpus_must_be_whole():
    with pytest.raises(CostInputError, match="gpus"):
        spot_timing(SpotTimingInput(checkpoint_gb=1.0, image_gb=0.0, asynchronous=True, gpus=0))
