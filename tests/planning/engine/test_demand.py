"""Demand from history (planning/engine/demand.py) against series computed by hand.

Hour indexes are hours since 1970-01-01 00:00 UTC; the tests use a period starting at hour 0
(1970-01-01) so that offsets and indexes coincide, except where calendar months matter."""

from __future__ import annotations

import datetime as dt
import json

import numpy as np
import pytest

from planning.engine.demand import (
    BUSY_COVERAGE_MIN,
    DataGaps,
    UsageRows,
    UtilizationRows,
    data_gaps,
    demand_history,
    demand_percentiles,
    load_duration_curve,
    monthly_gpu_hours,
    status_quo,
)
from planning.engine.errors import PlanInputError

WEEK = 7 * 24


def hour_of(day: dt.date) -> int:
    return int(dt.datetime.combine(day, dt.time(), tzinfo=dt.UTC).timestamp()) // 3600


def test_it_spreads_a_row_evenly_over_its_charge_period():
    # 48 GPU-hours charged over one day: 48 / 24 = 2 GPUs in each of its 24 hours
    usage = UsageRows.of(start_hour=[0], end_hour=[24], gpu_hours=[48])
    history = demand_history(usage, start_hour=0, end_hour=WEEK)
    assert history.billed[:24].tolist() == [2.0] * 24
    assert np.isnan(history.billed[24:]).all()
    assert (history.covered_hours, history.total_hours) == (24, WEEK)
    assert history.series_used == "billed"


def test_it_adds_overlapping_rows_and_splits_interruptible_demand():
    # 48 GPU-hours over hours 0-24 (2 GPUs) and 24 interruptible GPU-hours over hours 12-36 (1 GPU)
    usage = UsageRows.of(
        start_hour=[0, 12], end_hour=[24, 36], gpu_hours=[48, 24], interruptible=[False, True]
    )
    history = demand_history(usage, start_hour=0, end_hour=WEEK)
    assert history.billed[:36].tolist() == [2.0] * 12 + [3.0] * 12 + [1.0] * 12
    assert history.billed_interruptible[:36].tolist() == [0.0] * 12 + [1.0] * 24
    assert history.demand_steady[:36].tolist() == [2.0] * 24 + [0.0] * 12


def test_an_uncovered_hour_is_unknown_but_a_billed_hour_without_gpu_rows_is_zero():
    # GPU rows on day 0 and day 2; a storage row of the same bill covers day 1: 0 GPUs there, not NaN;
    # days 3-6 nothing covers: NaN
    usage = UsageRows.of(
        start_hour=[0, 48],
        end_hour=[24, 72],
        gpu_hours=[24, 24],
        covered_start_hour=[24],
        covered_end_hour=[48],
    )
    history = demand_history(usage, start_hour=0, end_hour=WEEK)
    assert history.billed[24:48].tolist() == [0.0] * 24
    assert np.isnan(history.billed[72:]).all()
    assert history.covered_hours == 72
    assert data_gaps(history.covered, start_hour=0) == DataGaps(
        ranges=((72, WEEK),), covered_hours=72, total_hours=WEEK
    )


def test_a_monthly_row_is_spread_over_the_hours_of_its_month():
    # June 2026 has 30 days = 720 hours; 1440 GPU-hours billed for the month = 2 GPUs every hour
    june, july = hour_of(dt.date(2026, 6, 1)), hour_of(dt.date(2026, 7, 1))
    assert july - june == 720
    usage = UsageRows.of(start_hour=[june], end_hour=[july], gpu_hours=[1440])
    history = demand_history(usage, start_hour=june, end_hour=july)
    assert np.all(history.billed == 2.0)
    months = monthly_gpu_hours(history.billed, start_hour=june)
    assert months == [{"month": "2026-06", "gpu_hours": 1440.0, "covered_hours": 720, "hours": 720}]


def test_a_row_crossing_the_period_end_counts_only_its_hours_inside():
    # 240 GPU-hours over hours 160-200 (6 GPUs an hour); the period ends at hour 168: 8 hours x 6 = 48 inside
    usage = UsageRows.of(start_hour=[0, 160], end_hour=[24, 200], gpu_hours=[24, 240])
    history = demand_history(usage, start_hour=0, end_hour=WEEK)
    assert history.billed[160:].tolist() == [6.0] * 8
    assert history.gpu_hours == 24 + 48


def test_busy_is_gpus_times_utilization_where_samples_exist():
    # resource a: 4 GPUs over hours 0-24 (96 GPU-hours); its GPUs average 50% in hours 0-23 -> 2 busy GPUs.
    # Two GPUs report per hour (30% and 70%): the resource's hour is their mean, 50%.
    usage = UsageRows.of(start_hour=[0], end_hour=[24], gpu_hours=[96], resource_id=["a"])
    hours = np.repeat(np.arange(24), 2)
    utilization = UtilizationRows.of(resource_id=["a"] * 48, hour=hours, utilization=[0.3, 0.7] * 24)
    history = demand_history(usage, start_hour=0, end_hour=WEEK, utilization=utilization)
    assert history.busy[:24] == pytest.approx([2.0] * 24)
    assert history.utilization_coverage == pytest.approx(1.0)
    assert history.series_used == "busy"
    assert history.demand is history.busy


def test_busy_counts_unsampled_hours_as_busy_and_falls_back_to_billed_under_the_coverage_rule():
    # a: 2 GPUs over hours 0-24, sampled at 25% in hours 0-11 only; b: 1 GPU over 0-24, no samples.
    # Billed 72 GPU-hours, sampled 24: coverage 1/3 < BUSY_COVERAGE_MIN, so the plan uses billed.
    usage = UsageRows.of(start_hour=[0, 0], end_hour=[24, 24], gpu_hours=[48, 24], resource_id=["a", "b"])
    utilization = UtilizationRows.of(resource_id=["a"] * 12, hour=range(12), utilization=[0.25] * 12)
    history = demand_history(usage, start_hour=0, end_hour=WEEK, utilization=utilization)
    # hours 0-11: a busy 2 x 0.25 = 0.5, b counted busy 1 -> 1.5; hours 12-23: 3 as billed
    assert history.busy[:24] == pytest.approx([1.5] * 12 + [3.0] * 12)
    assert history.utilization_coverage == pytest.approx(1 / 3)
    assert BUSY_COVERAGE_MIN > 1 / 3
    assert history.series_used == "billed"
    assert "33%" in history.series_reason and "95%" in history.series_reason
    forced = demand_history(usage, start_hour=0, end_hour=WEEK, utilization=utilization, series="busy")
    assert forced.series_used == "busy"


def test_utilization_of_resources_outside_the_rows_or_the_period_is_ignored():
    usage = UsageRows.of(start_hour=[0], end_hour=[24], gpu_hours=[24], resource_id=["a"])
    utilization = UtilizationRows.of(resource_id=["other", "a"], hour=[3, 500], utilization=[0.0, 0.0])
    history = demand_history(usage, start_hour=0, end_hour=WEEK, utilization=utilization)
    assert history.busy[:24].tolist() == [1.0] * 24
    assert history.utilization_coverage == 0


def test_unused_commitments_are_cost_not_demand():
    usage = UsageRows.of(
        start_hour=[0, 0],
        end_hour=[24, 24],
        gpu_hours=[24, 48],
        unused_commitment=[False, True],
        effective_cost_micros=[10_000_000, 6_000_000],
        pricing_category=["on_demand", "committed"],
    )
    history = demand_history(usage, start_hour=0, end_hour=WEEK)
    assert history.billed[:24].tolist() == [1.0] * 24
    quo = status_quo(usage, start_hour=0, end_hour=WEEK)
    # 16 USD for 24 GPU-hours used: 0.666667 USD per GPU-hour, the unused 6 USD included
    assert (quo.effective_cost_micros, quo.unused_commitment_micros, quo.gpu_hours) == (
        16_000_000,
        6_000_000,
        24.0,
    )
    assert quo.cost_per_gpu_hour == pytest.approx(16 / 24)
    assert quo.by_pricing_category == {"on_demand": {"gpu_hours": 24.0, "effective_cost_micros": 10_000_000}}


def test_percentiles_are_numpys_linear_ones_over_the_covered_hours():
    # hand list 1..10 (and NaN for uncovered hours): linear P10 = 1 + 0.9 = 1.9, P50 = 5.5, P90 = 9.1
    series = np.array([np.nan, 3, 1, 2, 10, 4, 5, np.nan, 6, 7, 8, 9], dtype=float)
    found = demand_percentiles(series)
    assert (found.p10, found.p50, found.p90, found.peak, found.mean) == pytest.approx(
        (1.9, 5.5, 9.1, 10, 5.5)
    )
    assert found.p50 == np.percentile(np.arange(1, 11), 50)
    assert load_duration_curve(series).tolist() == [10, 9, 8, 7, 6, 5, 4, 3, 2, 1]


def test_monthly_gpu_hours_split_at_calendar_months():
    # 2026-05-31 00:00 to 2026-06-02 00:00: 24 hours of May, 24 of June, 1 GPU each hour
    start = hour_of(dt.date(2026, 5, 31))
    found = monthly_gpu_hours(np.ones(48), start_hour=start)
    assert [(m["month"], m["gpu_hours"]) for m in found] == [("2026-05", 24.0), ("2026-06", 24.0)]


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"end_hour": WEEK - 1}, "to"),  # 6 days 23 hours
        ({"end_hour": 3 * 366 * 24 + 1}, "to"),
        ({"series": "peak"}, "series"),
    ],
)
def test_bad_periods_and_options_name_the_field(change, field):
    usage = UsageRows.of(start_hour=[0], end_hour=[24], gpu_hours=[24])
    arguments = {"start_hour": 0, "end_hour": WEEK, **change}
    with pytest.raises(PlanInputError) as error:
        demand_history(usage, **arguments)
    assert error.value.field == field


def test_a_scope_without_gpu_hours_in_the_period_is_refused():
    usage = UsageRows.of(start_hour=[1000], end_hour=[1024], gpu_hours=[24])  # after the period
    with pytest.raises(PlanInputError, match="no GPU usage") as error:
        demand_history(usage, start_hour=0, end_hour=WEEK)
    assert error.value.field == "from"
    with pytest.raises(PlanInputError) as error:
        demand_percentiles(np.full(5, np.nan))
    assert error.value.field == "from"


def test_the_busy_series_cannot_be_forced_without_utilization():
    usage = UsageRows.of(start_hour=[0], end_hour=[24], gpu_hours=[24])
    with pytest.raises(PlanInputError) as error:
        demand_history(usage, start_hour=0, end_hour=WEEK, series="busy")
    assert error.value.field == "series"


def test_the_worked_example_of_docs_capacity_plan_md():
    """docs/capacity-plan.md, "Demand from history", worked example: every figure stated there."""
    usage = UsageRows.of(
        start_hour=[0, 12],
        end_hour=[24, 36],
        gpu_hours=[48, 24],
        interruptible=[False, True],
        resource_id=["i-a", "i-b"],
        covered_start_hour=[0],
        covered_end_hour=[WEEK],
    )
    utilization = UtilizationRows.of(resource_id=["i-a"] * 24, hour=range(24), utilization=[0.5] * 24)
    history = demand_history(usage, start_hour=0, end_hour=WEEK, utilization=utilization)
    assert history.billed.tolist() == [2.0] * 12 + [3.0] * 12 + [1.0] * 12 + [0.0] * 132
    assert history.billed_interruptible[12:36].tolist() == [1.0] * 24
    assert np.nansum(history.billed) == 72
    curve = load_duration_curve(history.billed)
    assert curve[:36].tolist() == [3.0] * 12 + [2.0] * 12 + [1.0] * 12 and curve[36:].max() == 0
    levels = demand_percentiles(history.billed)
    assert (levels.p10, levels.p50, levels.p90, levels.peak) == (0, 0, 2, 3)
    assert levels.mean == pytest.approx(72 / 168)  # 0.4286
    assert history.busy[:24].tolist() == [1.0] * 12 + [2.0] * 12  # i-a's 2 GPUs at 50%
    assert history.utilization_coverage == pytest.approx(48 / 72)  # 67%: under 95%, billed is used
    assert history.series_used == "billed"
    from planning.engine.demand import growth_multipliers

    yearly = growth_multipliers(0.02, horizon_months=36).yearly
    # year 1: mean of 1.02^0..1.02^11 = (1.02^12 - 1) / (12 x 0.02) = 0.268242 / 0.24; then x 1.268242 a year
    assert yearly.round(4).tolist() == [1.1177, 1.4175, 1.7977]


def test_the_summary_states_the_series_coverage_and_levels():
    from planning.engine.demand import demand_summary

    usage = UsageRows.of(
        start_hour=[0, 12], end_hour=[24, 36], gpu_hours=[48, 24], interruptible=[False, True]
    )
    summary = demand_summary(demand_history(usage, start_hour=0, end_hour=WEEK))
    assert (summary["series_used"], summary["covered_hours"], summary["total_hours"]) == ("billed", 36, WEEK)
    assert (summary["gpu_hours"], summary["interruptible_gpu_hours"]) == (72.0, 24.0)
    assert summary["percentiles"]["peak"] == 3.0 and summary["percentile_method"] == "linear"
    assert summary["gaps"] == {
        "ranges": [[36, WEEK]],
        "covered_hours": 36,
        "uncovered_hours": 132,
        "total_hours": WEEK,
    }
    assert json.dumps(summary)  # JSON-ready as it is
