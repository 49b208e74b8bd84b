"""Spot checkpoint write and restart times from sizes and bandwidths, checked by hand."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from procurement.costing.spot_timing import SpotTimingInput, spot_timing
from procurement.costing.values import CostInputError
from procurement.ranking import RankingOptions
from procurement.ranking.spot_inputs import job_spot_timing, resumable_checkpoint_gb
from procurement.sizing import parse_workload_spec

MISTRAL_FULL = parse_workload_spec(
    {"name": "m", "task": "full_finetune", "model": {"preset": "mistral-7b"}, "training_tokens": 1e9}
)


def test_write_and_restart_follow_the_sizes():
    # C = 100 GB / 0.5 GB/s = 200 s; R = 300 s + 30 GB / 0.25 GB/s (120 s) + (16 + 4 + 100) GB / 0.5 GB/s (240 s)
    timing = spot_timing(
        SpotTimingInput(checkpoint_gb=100.0, image_gb=30.0, model_load_gb=16.0, dataset_gb=4.0)
    )
    assert timing.checkpoint_write_hours == pytest.approx(200 / 3600, rel=1e-12)
    assert timing.restart_hours == pytest.approx((300 + 120 + 240) / 3600, rel=1e-12)
    assert timing.restart_parts_hours["checkpoint_restore"] == pytest.approx(200 / 3600, rel=1e-12)
    assert timing.restart_parts_hours["model_load"] == pytest.approx(32 / 3600, rel=1e-12)
    assert timing.as_dict()["restart_minutes"] == 11.0  # 660 s


def test_a_faster_volume_shortens_the_write():
    slow = spot_timing(SpotTimingInput(checkpoint_gb=10.0, image_gb=0.0, storage_write_gb_per_s=0.125))
    fast = spot_timing(SpotTimingInput(checkpoint_gb=10.0, image_gb=0.0, storage_write_gb_per_s=1.0))
    assert slow.checkpoint_write_hours == pytest.approx(80 / 3600)  # 10 GB at gp3's 125 MB/s baseline
    assert fast.checkpoint_write_hours == pytest.approx(10 / 3600)


@pytest.mark.parametrize(
    ("field", "value"),
    [("storage_write_gb_per_s", 0.0), ("storage_read_gb_per_s", -1.0), ("checkpoint_gb", -1.0)],
)
def test_bad_sizes_name_the_field(field, value):
    values = {"checkpoint_gb": 1.0, "image_gb": 1.0, field: value}
    with pytest.raises(CostInputError) as error:
        spot_timing(SpotTimingInput(**values))
    assert error.value.field == field


def test_a_full_finetune_checkpoint_is_weights_plus_optimizer_state():
    # Mistral-7B: 7,241,732,096 params x (2 B bf16 weights + 4 B fp32 master + 8 B AdamW m, v) = 101.384 GB;
    # at 0.5 GB/s: 202.77 s = 3.38 min; the restart reads it back (202.77 s) with no separate model load.
    assert resumable_checkpoint_gb(MISTRAL_FULL) == pytest.approx(7_241_732_096 * 14 / 1e9, rel=1e-12)
    timing = job_spot_timing(MISTRAL_FULL, RankingOptions())
    assert timing.checkpoint_write_hours * 3600 == pytest.approx(202.768, abs=1e-3)
    assert timing.restart_parts_hours["model_load"] == 0.0
    # R = 300 + 120 + 1e9 tokens x 4 B / 0.5 GB/s (8 s) + 202.768 s = 630.768 s
    assert timing.restart_hours * 3600 == pytest.approx(630.768, abs=1e-3)


def test_options_replace_the_derived_figures():
    timing = job_spot_timing(MISTRAL_FULL, RankingOptions(checkpoint_write_hours=0.01, restart_hours=0.2))
    assert (timing.checkpoint_write_hours, timing.restart_hours, timing.derived) == (0.01, 0.2, False)
    faster = job_spot_timing(MISTRAL_FULL, RankingOptions(storage_write_gb_per_s=2.0))
    assert faster.checkpoint_write_hours * 3600 == pytest.approx(202.768 / 4, abs=1e-3)


@given(st.floats(0.0, 2000.0), st.floats(0.0, 2000.0))
def test_a_bigger_checkpoint_never_writes_or_restarts_faster(small, extra):
    a = spot_timing(SpotTimingInput(checkpoint_gb=small, image_gb=30.0))
    b = spot_timing(SpotTimingInput(checkpoint_gb=small + extra, image_gb=30.0))
    assert b.checkpoint_write_hours >= a.checkpoint_write_hours
    assert b.restart_hours >= a.restart_hours


def test_the_interval_rules_are_stated_apart():
    from decimal import Decimal

    from procurement.costing.spot import interval_rule

    capped = interval_rule(Decimal("4.0"), Decimal("0.25"))
    assert capped == (
        "Young/Daly optimum sqrt(2 C / lambda) = 4.000 h; capped by the guides' 15-minute ceiling "
        "(reclaims cluster in bad weeks)"
    )
    assert interval_rule(Decimal("0.1"), Decimal("0.1")).endswith(
        "0.100 h, under the guides' 15-minute ceiling"
    )
    assert interval_rule(None, Decimal("0.25")).startswith("no interruptions expected")
