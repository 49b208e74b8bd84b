"""The showback, budget and anomaly engines against hand computations, and their properties."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from billing.finance import allocation, anomalies, budgets

M = 1_000_000


def per_team(rows: dict[str, tuple[int, int, int]]) -> pd.DataFrame:
    """team -> (effective, idle, GPU-hours), whole units."""
    frame = pd.DataFrame(
        [(team, e * M, i * M, h * M) for team, (e, i, h) in rows.items()],
        columns=["team", "effective_micros", "idle_micros", "gpu_hours_micros"],
    )
    return frame.set_index("team")


def test_it_allocates_an_idle_cost_of_300_in_proportion_to_100_and_200_gpu_hours():
    # hand computation: 300 × 100/300 = 100 and 300 × 200/300 = 200 (the example)
    result = allocation.allocate(per_team({"a": (1000, 100, 100), "b": (2000, 200, 200)}), "proportional")
    assert result.idle_pool_micros == 300 * M
    lines = {line.team: line for line in result.teams}
    assert lines["a"].idle_micros == 100 * M and lines["b"].idle_micros == 200 * M
    assert lines["a"].direct_micros == 900 * M and lines["a"].showback_micros == 1000 * M


def test_it_splits_shared_cost_evenly_and_keeps_the_remainder_cent_exact():
    # 100 shared over three teams: 33.333334 + 33.333333 + 33.333333 (largest remainder, ties to the first)
    result = allocation.allocate(
        per_team({"": (100, 0, 0), "a": (1, 0, 1), "b": (1, 0, 1), "c": (1, 0, 1)}), "even"
    )
    assert [line.shared_micros for line in result.teams] == [33_333_334, 33_333_333, 33_333_333]


def test_it_leaves_the_pools_as_their_own_line_when_unallocated():
    result = allocation.allocate(per_team({"": (50, 0, 0), "a": (100, 30, 10)}), "unallocated")
    assert result.unallocated_micros == 80 * M and result.teams[0].shared_micros == 0


def test_an_even_rule_with_no_team_in_scope_is_an_error_naming_the_field():
    with pytest.raises(allocation.AllocationError, match="names no team") as error:
        allocation.allocate(per_team({"": (50, 0, 0)}), "even")
    assert error.value.field == "allocation"
    with pytest.raises(allocation.AllocationError, match="names no team"):
        allocation.allocate(per_team({"": (50, 0, 0), "a": (10, 0, 5)}), "even", teams=())
    with pytest.raises(allocation.AllocationError, match="unknown rule"):
        allocation.allocate(per_team({"a": (10, 0, 5)}), "fair")


def test_idle_cost_is_cost_times_one_minus_the_mean_utilization_of_the_rows_samples():
    # a 24 h row at 48.00 whose resource averaged 25% over 2 samples (10% and 40%): idle 48 × 0.75 = 36;
    # a row of a resource with no samples is not judged (0)
    start = pd.Timestamp("2026-11-01", tz="UTC")
    gpu = pd.DataFrame(
        {
            "resource_id": ["i-1", "i-2"],
            "charge_period_start": [start, start],
            "charge_period_end": [start + pd.Timedelta(days=1)] * 2,
            "effective_micros": [48 * M, 10 * M],
        }
    )
    samples = pd.DataFrame(
        {
            "resource_id": ["i-1", "i-1", "i-1"],
            "hour": [start, start + pd.Timedelta(hours=5), start + pd.Timedelta(days=1)],
            "utilization_pct": [10.0, 40.0, 0.0],  # the third sample is past the row's end
        }
    )
    assert list(allocation.idle_micros_per_row(gpu, samples)) == [36 * M, 0]


@settings(max_examples=200, deadline=None)
@given(
    st.dictionaries(
        st.sampled_from(["", "a", "b", "c", "d"]),
        st.tuples(st.integers(-(10**12), 10**12), st.integers(0, 10**12), st.integers(0, 10**9)),
        min_size=1,
    ),
    st.sampled_from(allocation.RULES),
)
def test_allocation_preserves_the_total_to_the_micro_unit(rows, rule):
    frame = pd.DataFrame(
        [(t, e, min(i, abs(e)), h) for t, (e, i, h) in rows.items()],
        columns=["team", "effective_micros", "idle_micros", "gpu_hours_micros"],
    ).set_index("team")
    try:
        result = allocation.allocate(frame, rule)
    except allocation.AllocationError:
        return
    lines = sum(line.showback_micros for line in result.teams) + result.unallocated_micros
    assert lines == int(frame["effective_micros"].sum())
    if rule == "proportional" and not result.unallocated_micros:
        weights = {t.team: t.gpu_hours_micros for t in result.teams}
        total = sum(w for w in weights.values() if w > 0)
        for line in result.teams if total else ():  # each share within one micro-unit of its exact quota
            exact_times_total = result.idle_pool_micros * max(weights[line.team], 0)
            assert abs(line.idle_micros * total - exact_times_total) <= total


@given(st.integers(-(10**15), 10**15), st.lists(st.integers(0, 10**9), min_size=1, max_size=20))
def test_apportion_adds_up_exactly(amount, weights):
    if sum(weights) == 0:
        weights[0] = 1
    assert sum(allocation.apportion(amount, weights)) == amount


NOVEMBER = dt.date(2026, 11, 1)


def test_a_budget_of_10000_with_4000_burnt_by_day_12_forecasts_10000_and_crosses_on_day_30():
    # hand computation: 4,000 / 12 days × 30 days = 10,000 = 100% of the budget; the cumulative run-rate
    # reaches 10,000 on day 10,000 × 12 / 4,000 = 30: November 30
    daily = {NOVEMBER + dt.timedelta(days=d): Decimal("333.33") for d in range(11)}
    daily[dt.date(2026, 11, 12)] = Decimal("333.37")  # 11 × 333.33 + 333.37 = 4,000.00
    status = budgets.budget_status(
        amount=Decimal(10000), month=NOVEMBER, daily_spend=daily, data_through=dt.date(2026, 11, 13)
    )
    assert status.burn == Decimal("4000.00") and status.forecast == Decimal(10000)
    assert status.days_so_far == 12 and status.days_in_month == 30
    assert status.overrun_date == dt.date(2026, 11, 30)
    assert status.thresholds_crossed == (80, 100) and status.state == "forecast_over"


def test_a_budget_already_overrun_names_the_day_the_burn_reached_it():
    daily = {NOVEMBER: Decimal(600), NOVEMBER + dt.timedelta(days=1): Decimal(600)}  # 1,200 by day 2
    status = budgets.budget_status(
        amount=Decimal(1000), month=NOVEMBER, daily_spend=daily, data_through=dt.date(2026, 11, 3)
    )
    assert status.overrun_date == dt.date(2026, 11, 2) and status.state == "over_budget"
    assert status.forecast == Decimal(18000)  # 1,200 / 2 × 30


def test_a_budget_on_track_has_no_overrun_date_and_crosses_no_threshold():
    daily = {NOVEMBER + dt.timedelta(days=d): Decimal(100) for d in range(10)}  # 1,000 by day 10 -> 3,000
    status = budgets.budget_status(
        amount=Decimal(5000), month=NOVEMBER, daily_spend=daily, data_through=dt.date(2026, 11, 11)
    )
    assert status.forecast == Decimal(3000) and status.forecast_pct == Decimal("60.0")
    assert status.overrun_date is None and status.thresholds_crossed == () and status.state == "on_track"
    at_80 = budgets.budget_status(
        amount=Decimal(3750), month=NOVEMBER, daily_spend=daily, data_through=dt.date(2026, 11, 11)
    )  # 3,000 / 3,750 = 80% exactly
    assert at_80.thresholds_crossed == (80,) and at_80.state == "at_risk"


def test_anomaly_in_a_series_with_a_known_median_and_mad():
    # 28 baseline days alternating 100 and 110 (units): median 105, |x - 105| = 5 every day, MAD 5,
    # scale 1.4826 × 5 = 7.413, threshold 3.5 × 7.413 = 25.9455. Day 29 at 131 departs by 26 > 25.9455:
    # an anomaly; 130 (25) is not.
    base = np.array([100, 110] * 14, dtype=np.int64) * M
    baseline = anomalies.rolling_baseline(np.append(base, 131 * M))
    assert baseline.median[-1] == 105 * M and baseline.mad[-1] == 5 * M
    assert baseline.scale[-1] == pytest.approx(7.413 * M)
    assert anomalies.flags(np.append(base, 131 * M))[-1]
    assert not anomalies.flags(np.append(base, 130 * M))[-1]


def test_a_flat_baseline_flags_a_departure_of_the_minimum_amount_only():
    # MAD = 0 and mean absolute deviation = 0: the scale is 0; 10 units away is flagged, 9.99 is not
    flat = np.full(28, 200 * M, dtype=np.int64)
    assert anomalies.flags(np.append(flat, 210 * M))[-1]
    assert not anomalies.flags(np.append(flat, 210 * M - 10_000))[-1]


def test_mad_zero_falls_back_to_the_mean_absolute_deviation():
    # 20 days at 100 and 8 at 128: median 100, MAD 0; mean |x - 100| = 8 × 28 / 28 = 8, scale 1.253314 × 8
    window = np.array([100] * 20 + [128] * 8, dtype=np.int64) * M
    baseline = anomalies.rolling_baseline(np.append(window, 0))
    assert baseline.mad[-1] == 0 and baseline.scale[-1] == pytest.approx(1.253314 * 8 * M)


def test_detect_reports_the_series_day_and_size_and_not_a_new_series_first_days():
    days = pd.date_range("2026-10-01", periods=40, freq="D")
    cost = [100 * M] * 39 + [400 * M]
    rows = pd.DataFrame(
        {"team": "a", "provider": "aws", "service": "Compute", "day": days, "effective_micros": cost}
    )
    young = pd.DataFrame(
        {
            "team": "b",
            "provider": "aws",
            "service": "Compute",
            "day": days[-3:],
            "effective_micros": [1 * M, 1 * M, 900 * M],
        }
    )
    found = anomalies.detect(
        pd.concat([rows, young]), check_from=dt.date(2026, 10, 1), check_to=dt.date(2026, 11, 10)
    )
    assert list(found["team"]) == ["a"] and found["day"].iloc[0] == days[-1]
    assert found["excess_micros"].iloc[0] == 300 * M and found["baseline_micros"].iloc[0] == 100 * M


series = st.lists(st.integers(0, 10**10), min_size=20, max_size=70)


@settings(max_examples=150, deadline=None)
@given(series, st.integers(0, 10**10))
def test_anomalies_do_not_change_when_a_constant_is_added_to_every_day(values, constant):
    values = np.array(values, dtype=np.int64)
    assert (anomalies.flags(values) == anomalies.flags(values + constant)).all()


@settings(max_examples=150, deadline=None)
@given(series, st.integers(1, 50))
def test_anomalies_do_not_change_when_spend_and_the_minimum_are_scaled_alike(values, factor):
    values = np.array(values, dtype=np.int64)
    scaled = anomalies.flags(values * factor, min_amount=anomalies.MIN_AMOUNT_MICROS * factor)
    assert (anomalies.flags(values) == scaled).all()


@given(st.integers(0, 10**10), st.integers(15, 60))
def test_a_constant_series_has_no_anomaly(level, length):
    assert not anomalies.flags(np.full(length, level, dtype=np.int64)).any()


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.integers(0, 10**9), min_size=1, max_size=30),
    st.integers(0, 10**10),
    st.integers(1, 30),
)
def test_budget_forecast_properties(cents_per_day, budget_cents, days_so_far):
    daily = {NOVEMBER + dt.timedelta(days=d): Decimal(c) / 100 for d, c in enumerate(cents_per_day)}
    amount = Decimal(budget_cents) / 100
    through = NOVEMBER + dt.timedelta(days=days_so_far)
    status = budgets.budget_status(amount=amount, month=NOVEMBER, daily_spend=daily, data_through=through)
    burn = sum((v for d, v in daily.items() if d < through), Decimal(0))
    assert status.burn == burn and status.forecast >= status.burn  # the run-rate never forecasts a refund
    # linear run-rate (to Decimal's 28 significant digits)
    assert abs(status.forecast * days_so_far - burn * 30) <= Decimal("1e-15") * max(burn, 1)
    if days_so_far == 30:
        assert status.forecast == status.burn  # a whole month forecasts what was spent
    if status.overrun_date is not None:
        assert NOVEMBER <= status.overrun_date <= dt.date(2026, 11, 30)
        assert status.forecast >= amount  # an overrun within the month means the forecast reaches the budget
    elif amount > 0:
        assert status.forecast < amount or status.burn == 0
    assert (100 in status.thresholds_crossed) == (amount > 0 and status.forecast >= amount)
