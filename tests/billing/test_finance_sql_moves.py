"""The finance sums sav45b moved from pandas into SQL (issue 28 item 1), checked against the pandas code they
replace on random rows: the budgets' burn per team and day (review_sql.BUDGET_DAILY, sections._daily_by_team),
the anomaly series per team, provider, service and day, dense (review_sql.ANOMALY_DAILY,
anomalies.daily_series), the showback's team lines added up per team (allocation_sql.TEAM_TOTALS,
allocation.per_team_frame) and its idle pool (allocation_sql.IDLE_POOL, allocation.allocate).

The references are verbatim copies of the pandas versions at 49f6d6ac (tests/billing/reference/
finance_pandas.py). The amounts are random (hypothesis): bill-shaped rows from test_review_speedup's
generator (GPU and other rows, unused commitments, USD and EUR at a rate that leaves remainders), and rows
of any team, day and amount, negative ones (credits) among them."""

from __future__ import annotations

from decimal import Decimal

import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from billing.finance import allocation, anomalies, sections
from billing.review.engine import ReviewRequest, categorized
from tests.billing.reference.finance_pandas import (
    pandas_allocate,
    pandas_daily_by_team,
    pandas_daily_series,
    pandas_per_team_frame,
)
from tests.billing.test_review_speedup import END, START, frame, row

# made up: EUR at a rate with a long expansion, so that the per-row conversion leaves remainders
FX = {"EUR": Decimal(2) / Decimal(3)}
TEAMS = st.sampled_from(["a", "b", "", "(untagged)", "Zeta", "ä"])
MICROS = st.integers(-(10**12), 10**12)
# any instant of May 2026, to the second, so that days and their UTC midnights are crossed
INSTANTS = st.integers(0, 31 * 86_400 - 1).map(
    lambda s: pd.Timestamp("2026-05-01", tz="UTC") + pd.Timedelta(seconds=s)
)


def _request(**filters) -> ReviewRequest:
    return ReviewRequest(start=START, end=END, fx_to_currency=FX, **filters)


@settings(max_examples=60, deadline=None)
@given(st.lists(row, min_size=1, max_size=50), st.booleans())
def test_budget_burn_in_sql_equals_the_pandas_groupby_on_bill_rows(rows, as_categories):
    """The fallback's input as budget_states builds it: the GPU rows of the grouped frame, converted."""
    records = frame(rows)
    if as_categories:  # text as the DuckDB reader hands it over: sorted categories
        records = categorized(records)
    picked = sections.gpu_rows(records, _request())
    assert sections._daily_by_team(picked) == pandas_daily_by_team(picked)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(TEAMS, INSTANTS, MICROS), max_size=60))
def test_budget_burn_in_sql_equals_the_pandas_groupby_on_any_rows(lines):
    rows = pd.DataFrame(
        {
            "team": pd.Series([team for team, _, _ in lines], dtype=object),
            "charge_period_start": pd.DatetimeIndex([at for _, at, _ in lines], tz="UTC").as_unit("ns"),
            "effective_micros": np.array([micros for _, _, micros in lines], dtype=np.int64),
        }
    )
    assert sections._daily_by_team(rows) == pandas_daily_by_team(rows)


@settings(max_examples=60, deadline=None)
@given(st.lists(row, min_size=1, max_size=50), st.booleans())
def test_anomaly_series_in_sql_equals_the_pandas_groupby_on_bill_rows(rows, as_categories):
    """The fallback's input as _anomaly_series builds it (sections._anomaly_rows of the grouped frame)."""
    records = frame(rows)
    if as_categories:
        records = categorized(records)
    series = sections._anomaly_rows(records, _request())
    pd.testing.assert_frame_equal(anomalies.daily_series(series), pandas_daily_series(series))


@settings(max_examples=80, deadline=None)
@given(
    st.lists(
        st.tuples(
            TEAMS,
            st.sampled_from(["aws", "gcp", ""]),
            st.sampled_from(["Compute", "other"]),
            INSTANTS,
            MICROS,
        ),
        max_size=60,
    )
)
def test_anomaly_series_in_sql_equals_the_pandas_groupby_on_any_rows(lines):
    rows = pd.DataFrame(
        {
            "day": pd.DatetimeIndex([at for *_, at, _ in lines]).tz_localize(None).floor("D").as_unit("ns"),
            "team": np.array([line[0] for line in lines], dtype=object),
            "provider": np.array([line[1] for line in lines], dtype=object),
            "service": np.array([line[2] for line in lines], dtype=object),
            "effective_micros": np.array([line[4] for line in lines], dtype=np.int64),
        }
    )
    found = anomalies.daily_series(rows)
    if rows.empty:  # both hand back the empty frame of the same columns
        assert found.empty and list(found.columns) == list(pandas_daily_series(rows).columns)
        return
    pd.testing.assert_frame_equal(found, pandas_daily_series(rows))


def test_anomaly_series_is_dense_to_the_last_day_of_any_series():
    """Made-up rows: team a spends on 1 and 3 May, team b on 4 May; a's series runs 1-4 May with 0 on 2 and
    4 May, b's is 4 May alone."""
    day = pd.Timestamp("2026-05-01")
    rows = pd.DataFrame(
        {
            "day": [day, day + pd.Timedelta(days=2), day + pd.Timedelta(days=3)],
            "team": ["a", "a", "b"],
            "provider": ["aws"] * 3,
            "service": ["Compute"] * 3,
            "effective_micros": np.array([5, 7, 11], dtype=np.int64),
        }
    )
    found = anomalies.daily_series(rows)
    assert found["team"].tolist() == ["a"] * 4 + ["b"]
    assert [d.day for d in found["day"]] == [1, 2, 3, 4, 4]
    assert found["effective_micros"].tolist() == [5, 0, 7, 0, 11]


team_line = st.tuples(
    TEAMS, st.sampled_from(["USD"]), st.sampled_from(["2026-04", "2026-05"]), MICROS, MICROS, MICROS
)


@settings(max_examples=80, deadline=None)
@given(
    st.lists(team_line, max_size=30),
    st.sampled_from(allocation.RULES),
    st.none() | st.lists(TEAMS, max_size=4).map(tuple),
)
def test_showback_team_totals_and_idle_pool_in_sql_equal_pandas(lines, rule, teams):
    """GPU-hours are made non-negative where the rule weighs by them, as TEAM_SUMS' are."""
    lines = [(t, c, m, e, i, abs(h)) for t, c, m, e, i, h in lines]
    per_team = allocation.per_team_frame(lines)
    pd.testing.assert_frame_equal(per_team, pandas_per_team_frame(lines))
    try:
        expected = pandas_allocate(per_team, rule, teams=teams)
    except allocation.AllocationError as error:
        expected = error.message
    try:
        found = allocation.allocate(per_team, rule, teams=teams)
    except allocation.AllocationError as error:
        found = error.message
    assert found == expected
    assert allocation.idle_pool(per_team) == int(per_team.loc[per_team.index != "", "idle_micros"].sum())


def test_empty_inputs():
    assert sections._daily_by_team(frame([]).iloc[0:0]) == {}
    assert allocation.per_team_frame([]).empty
    assert allocation.idle_pool(allocation.per_team_frame([])) == 0
