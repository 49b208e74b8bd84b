"""Spot statistics are weighted by how long each price held, with the window's carried-in price."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pricing.spot_history import spot_statistics, statistics_as_decimals

T0 = dt.datetime(2025, 1, 1, tzinfo=dt.UTC)


def hours(n: float) -> dt.datetime:
    return T0 + dt.timedelta(hours=n)


def frame(rows: list[tuple[object, dt.datetime, float]]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=["series", "observed_at", "price_per_hour"])


def test_it_weights_each_price_by_the_time_it_held():
    # Window 12 h .. 72 h (60 h). Price 1.0 from 0 h (carried in: 12 h inside), 2.0 from 24 h (24 h),
    # 4.0 from 48 h (24 h). Hand-computed: mean = (12·1 + 24·2 + 24·4) / 60 = 2.6;
    # variance = (12·1.6² + 24·0.6² + 24·1.4²) / 60 = 1.44, so cv = 1.2 / 2.6 = 0.461538;
    # median: 1.0 holds 20% of the time, 1.0–2.0 60% → 2.0; p95 → 4.0; below 2.5 for 36 of 60 h = 0.6;
    # discount against an on-demand 8.0: 1 − 2.6 / 8 = 0.675.
    observations = frame([("a", hours(0), 1.0), ("a", hours(24), 2.0), ("a", hours(48), 4.0)])
    stats = spot_statistics(
        observations,
        window_start=hours(12),
        window_end=hours(72),
        on_demand_per_hour={"a": 8.0},
        below_price=2.5,
    )
    row = stats.loc["a"]
    assert row["mean"] == pytest.approx(2.6)
    assert row["cv"] == pytest.approx(1.2 / 2.6)
    assert (row["median"], row["p95"], row["min"], row["max"], row["current"]) == (2.0, 4.0, 1.0, 4.0, 4.0)
    assert row["share_below"] == pytest.approx(0.6)
    assert row["mean_discount"] == pytest.approx(0.675)
    assert (row["observations"], row["hours"]) == (3, 60)


def test_it_ignores_prices_after_the_window_and_all_but_the_last_before_it():
    observations = frame(
        [("a", hours(-48), 9.0), ("a", hours(-1), 3.0), ("a", hours(5), 5.0), ("a", hours(10), 100.0)]
    )
    row = spot_statistics(observations, window_start=hours(0), window_end=hours(10)).loc["a"]
    # 3.0 for 5 h, then 5.0 for 5 h; 100.0 arrives exactly at the window end and 9.0 was replaced.
    assert (row["mean"], row["min"], row["max"], row["current"], row["hours"]) == (4.0, 3.0, 5.0, 5.0, 10.0)


def test_it_computes_each_series_on_its_own_and_leaves_missing_references_empty():
    observations = frame([("a", hours(0), 2.0), ("b", hours(0), 1.0), ("b", hours(1), 3.0)])
    stats = spot_statistics(
        observations, window_start=hours(0), window_end=hours(2), on_demand_per_hour={"b": 4.0}
    )
    assert stats.loc["a", "mean"] == 2.0 and stats.loc["a", "cv"] == 0.0
    assert np.isnan(stats.loc["a", "mean_discount"]) and np.isnan(stats.loc["a", "share_below"])
    assert stats.loc["b", "mean"] == 2.0 and stats.loc["b", "mean_discount"] == 0.5


def test_it_returns_no_rows_for_a_window_without_prices():
    stats = spot_statistics(frame([("a", hours(5), 2.0)]), window_start=hours(0), window_end=hours(5))
    assert stats.empty


def test_it_refuses_an_empty_window_and_naive_times():
    with pytest.raises(ValueError, match="must be after"):
        spot_statistics(frame([]), window_start=hours(1), window_end=hours(1))
    with pytest.raises(ValueError, match="no time zone"):
        spot_statistics(
            frame([("a", hours(0), 1.0)]), window_start=dt.datetime(2025, 1, 1), window_end=hours(1)
        )


def test_it_turns_a_row_into_decimals_for_reports():
    stats = spot_statistics(frame([("a", hours(0), 1.1234567)]), window_start=hours(0), window_end=hours(3))
    row = statistics_as_decimals(stats.loc["a"].to_dict())
    assert row["mean"] == Decimal("1.123457") and row["cv"] == Decimal("0.0000")
    assert row["mean_discount"] is None and row["observations"] == 1 and row["hours"] == Decimal("3.00")


hourly_prices = st.lists(st.integers(min_value=1, max_value=10_000), min_size=1, max_size=60)


@settings(max_examples=60, deadline=None)
@given(cents=hourly_prices, threshold=st.integers(min_value=0, max_value=10_001))
def test_it_matches_plain_statistics_of_the_hour_by_hour_prices(cents, threshold):
    # One price per hour for n hours: the time-weighted figures equal the plain ones of the hourly list.
    prices = np.array(cents, dtype=float) / 100
    observations = frame([("s", hours(i), price) for i, price in enumerate(prices)])
    row = spot_statistics(
        observations, window_start=hours(0), window_end=hours(len(prices)), below_price=threshold / 100
    ).loc["s"]
    assert row["mean"] == pytest.approx(prices.mean())
    assert row["cv"] == pytest.approx(prices.std() / prices.mean(), abs=1e-9)
    assert row["median"] == np.sort(prices)[int(np.ceil(0.5 * len(prices))) - 1]  # lower median
    assert row["p95"] == np.sort(prices)[int(np.ceil(0.95 * len(prices))) - 1]
    assert row["share_below"] == pytest.approx((prices < threshold / 100).mean())
    assert row["min"] <= row["median"] <= row["p95"] <= row["max"]


@settings(max_examples=40, deadline=None)
@given(cents=hourly_prices, repeat_at=st.integers(min_value=0, max_value=59))
def test_it_is_unchanged_by_a_repeated_observation_of_the_same_price(cents, repeat_at):
    # AWS may report an unchanged price again; time weighting makes that a no-op.
    prices = np.array(cents, dtype=float) / 100
    rows = [("s", hours(i), price) for i, price in enumerate(prices)]
    index = repeat_at % len(prices)
    repeated = [*rows, ("s", hours(index + 0.5), prices[index])]
    window = {"window_start": hours(0), "window_end": hours(len(prices))}
    plain = spot_statistics(frame(rows), **window).loc["s"]
    again = spot_statistics(frame(repeated), **window).loc["s"]
    for column in ("mean", "median", "p95", "min", "max", "current", "hours"):
        assert again[column] == pytest.approx(plain[column])
