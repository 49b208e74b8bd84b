"""Aggregates of the spend review moved from pandas into review_sql statements (issue 28 item 1, sqlb44,
sav45), checked against the pandas sums they replace on random rows, and the breakdown label clash.

The pandas references below are engine.non_gpu_breakdown and commitment_coverage._joined as they stood at
69962c5a (billing/review/engine.py, commitment_coverage.py) and commitment_coverage._first_named and fx_months.missing_rates as
they stood at 3b0be897, copied verbatim but for their names (savings': test_savings_sql.py). The
amounts are random (hypothesis) or made up, each said where used."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from billing.review.commitment_coverage import SUMS, _facts
from billing.review.engine import (
    ReviewRequest,
    _converted,
    _filtered,
    _in_period,
    idle_gpu_hours,
    money,
    non_gpu_breakdown,
    spend_review,
    split_scope,
    with_attribution,
)
from billing.review.fx_months import groups_by_currency_month, missing_rates, rate_of
from billing.storage import review_sql
from billing.storage.frame_sql import FrameSql
from tests.billing.test_review_speedup import END, RESOURCES, START, frame, row


def pandas_non_gpu_breakdown(records: pd.DataFrame, request: ReviewRequest) -> list[dict]:
    """engine.non_gpu_breakdown at 69962c5a (a pandas groupby)."""
    period = _converted(_in_period(_filtered(records, request), request.start, request.end), request)
    _, _, other = split_scope(with_attribution(period, request))
    if other.empty:
        return []
    service = (
        other["service_category"]
        .astype(object)
        .where(other["service_category"].astype(object) != "", "other")
    )
    label = (
        other["charge_category"]
        .astype(object)
        .where(other["charge_category"].astype(object) != "usage", service)
    )
    sums = other["effective_micros"].groupby(label.to_numpy()).sum()
    return [
        {"charge": str(name), "effective_cost": money(value, request.currency)}
        for name, value in sums.items()
    ]


@settings(max_examples=40, deadline=None)
@given(
    st.lists(row, min_size=1, max_size=40),
    st.lists(st.sampled_from(["Compute", "", "Storage", "Networking"])),
)
def test_non_gpu_breakdown_in_sql_equals_the_pandas_groupby(rows, services):
    records = frame(rows)
    if services:  # service categories beside Compute, '' among them (listed as 'other')
        records["service_category"] = [services[i % len(services)] for i in range(len(records))]
    request = ReviewRequest(start=START, end=END, fx_to_currency={"EUR": Decimal("1.0837")})
    assert non_gpu_breakdown(records, request) == pandas_non_gpu_breakdown(records, request)


def test_untagged_and_a_literal_untagged_team_are_one_breakdown_row():
    """A bill with team '' and a team literally named '(untagged)' lists one '(untagged)' row whose sums
    are both rows' (review_sql.BREAKDOWN renames before grouping); before sqlb44 it listed two rows with
    the same label. Amounts: 24 h x 2.00 and 24 h x 3.00 of one g6.xlarge (one l4 GPU, test_review_speedup
    TYPES), made up for the test: 48.00 + 72.00 = 120.00 over 48 GPU-hours."""
    base = {
        "day": 0,
        "days": 1,
        "hours": 24,
        "offset": 0,
        "itype": "g6.xlarge",
        "pricing": "on_demand",
        "interruptible": False,
        "unused": False,
        "resource": "r1",
        "currency": "USD",
        "category": "usage",
    }
    records = frame(
        [
            base | {"team": "", "rate_micros": 2_000_000},
            base | {"team": "(untagged)", "rate_micros": 3_000_000, "resource": "r2"},
            base | {"team": "a", "rate_micros": 1_000_000, "resource": "r3"},
        ]
    )
    review = spend_review(records, ReviewRequest(start=START, end=dt.date(2026, 5, 2)))
    teams = [(x["team"], x["effective_cost"], x["gpu_hours"]) for x in review["by_team"]]
    assert teams == [("(untagged)", "120.00", "48.00"), ("a", "24.00", "24.00")]
    assert review["totals"]["effective_cost"] == "144.00"


def pandas_joined(commitments: pd.DataFrame, coverage: pd.DataFrame, key: str) -> pd.DataFrame:
    """commitment_coverage._joined at 69962c5a (pandas groupbys joined), copied verbatim."""
    costs = commitments.groupby(key, observed=True, sort=False)[SUMS[:5]].sum()
    hours_ = coverage.groupby(key, observed=True, sort=False)[SUMS[5:]].sum()
    costs.index, hours_.index = costs.index.astype(object), hours_.index.astype(object)  # a few labels
    joined = costs.join(hours_, how="outer").fillna(0).astype(np.int64)
    return joined.sort_index()


money_micros = st.integers(-(10**12), 10**12)


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["", "ri-1", "sp-2", "sp-10"]),
            st.sampled_from(["2026-04", "2026-05"]),
            st.sampled_from(["(untagged)", "a", "b"]),
            st.tuples(*[money_micros] * 6),
        ),
        max_size=30,
    ),
    st.lists(
        st.tuples(
            st.sampled_from(["2026-05", "2026-06"]), st.sampled_from(["(untagged)", "b", "c"]), money_micros
        ),
        max_size=20,
    ),
)
def test_commitment_sums_in_sql_equal_the_pandas_groupbys(commitment_rows, coverage_rows):
    """The commitments section's sums (review_sql.COMMITMENTS_BY, COMMITMENT_TOTALS, COVERAGE_TOTALS,
    COMMITMENTS_BY_ID, sqlb44) equal the pandas groupbys they replaced on random sums (labels on one side
    only included)."""
    names = [*SUMS[:5], "own_gpu_hours"]
    commitments = pd.DataFrame(
        {
            "id": np.array([r[0] for r in commitment_rows], dtype=object),
            "month": pd.Categorical([r[1] for r in commitment_rows]),
            "team": pd.Categorical([r[2] for r in commitment_rows]),
            **{
                name: np.array([r[3][i] for r in commitment_rows], dtype=np.int64)
                for i, name in enumerate(names)
            },
        }
    )
    hours_ = np.array([r[2] for r in coverage_rows], dtype=np.int64)
    coverage = pd.DataFrame(
        {
            "month": pd.Categorical([r[0] for r in coverage_rows]),
            "team": pd.Categorical([r[1] for r in coverage_rows]),
            "gpu_hours": hours_,
            "covered_gpu_hours": hours_ // 2,
        }
    )
    with FrameSql() as sql:
        sql.register("commitments", commitments).register("coverage", coverage)
        for key in ("month", "team"):
            found = [
                (label, *values) for label, *values in sql.rows(review_sql.COMMITMENTS_BY.format(key=key))
            ]
            expected = [
                (label, *map(int, s[SUMS]))
                for label, s in pandas_joined(commitments, coverage, key).iterrows()
            ]
            assert found == expected, key
        totals = [
            int(v or 0)
            for v in (*sql.rows(review_sql.COMMITMENT_TOTALS)[0], *sql.rows(review_sql.COVERAGE_TOTALS)[0])
        ]
        expected_totals = commitments[SUMS[:5]].sum().add(coverage[SUMS[5:]].sum(), fill_value=0)
        assert totals == [int(expected_totals[name]) for name in SUMS]
        named = commitments[commitments["id"] != ""]
        per = named.groupby("id", sort=True)[names].sum()
        assert sql.rows(review_sql.COMMITMENTS_BY_ID) == [(i, *map(int, s)) for i, s in per.iterrows()]


def pandas_first_named(ids: np.ndarray, values: pd.Series) -> pd.Series:
    """commitment_coverage._first_named at 3b0be897 (a pandas groupby), copied verbatim but for its name."""
    text = values.astype(object).to_numpy()
    named = text != ""
    return pd.Series(text[named]).groupby(ids[named]).first()


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["ri-1", "sp-2", "sp-10"]),
            st.sampled_from(["", "", "Reserved", "SavingsPlan", None]),
            st.sampled_from(["", "p5", "g6", None]),
            st.one_of(st.none(), st.integers(0, 800)),  # the end, days after 2026-01-01, or none
        ),
        min_size=1,
        max_size=30,
    )
)
def test_commitment_facts_in_sql_equal_the_pandas_groupbys(rows):
    """A commitment's first non-empty type and family and its latest end (review_sql.COMMITMENT_FACTS,
    sav45) equal commitment_coverage's groupbys at 3b0be897 (_first_named, a groupby max of the ends as
    int64 with NaT lowest, fillna('')) on random rows (made up: ids, types, families, ends)."""
    ids = np.array([r[0] for r in rows], dtype=object)
    ends = [
        None if r[3] is None else pd.Timestamp("2026-01-01", tz="UTC") + pd.Timedelta(days=r[3]) for r in rows
    ]
    with_id = pd.DataFrame(
        {
            "commitment_type": pd.Series([r[1] for r in rows], dtype=object),
            "commitment_family": pd.Series([r[2] for r in rows], dtype=object),
            "commitment_end": pd.to_datetime(pd.Series(ends, dtype=object), utc=True),
        }
    )
    expected = pd.DataFrame(
        {
            "kind": pandas_first_named(ids, with_id["commitment_type"]),
            "family": pandas_first_named(ids, with_id["commitment_family"]),
            "end": pd.Series(pd.DatetimeIndex(with_id["commitment_end"]).as_unit("ns").asi8)
            .groupby(ids)
            .max(),
        }
    ).fillna("")
    found = _facts(ids, with_id)
    assert sorted(found) == sorted(expected.index)
    for name, fact in found.items():
        assert (fact["kind"], fact["family"], int(fact["end"])) == tuple(expected.loc[name]), name


@settings(max_examples=30, deadline=None)
@given(
    st.lists(row, min_size=1, max_size=40),
    st.lists(
        st.tuples(st.sampled_from(RESOURCES), st.integers(0, 14 * 24 - 1), st.floats(0, 30)),
        min_size=1,
        max_size=80,
    ),
)
def test_idle_gpu_hours_total_in_sql_is_the_sum_of_the_rows(rows, samples):
    """The review's idle GPU-hours total (allocation_sql.IDLE_HOURS_TOTAL, sav45) is the sum of the per-row
    idle GPU-hours the savings read (IDLE_HOURS_ROWS), as the pandas `.sum()` it replaced summed them; random
    rows and samples as test_review_speedup's (made up)."""
    gpu = frame(rows)
    gpu = gpu[(gpu["gpu"] != "") & (gpu["commitment_status"] != "unused")].reset_index(drop=True)
    util = pd.DataFrame(
        [(r, 0, pd.Timestamp(START, tz="UTC") + pd.Timedelta(hours=h), pct) for r, h, pct in samples],
        columns=["resource_id", "gpu_index", "hour", "utilization_pct"],
    )
    per_row, total = idle_gpu_hours(gpu, util)
    assert total == int(per_row.sum())
    assert len(per_row) == len(gpu) and (per_row >= 0).all()


def pandas_missing_rates(frame: pd.DataFrame, request) -> list[dict]:
    """fx_months.missing_rates with its _row_count at 3b0be897 (numpy sums per currency and month),
    copied verbatim but for their names."""
    other = (frame["currency"] != request.currency).to_numpy(bool)
    missing = []
    for (currency, month), positions in groups_by_currency_month(frame, other).items():
        if rate_of(request, currency, month) is None:
            missing.append(
                {
                    "currency": currency,
                    "month": month,
                    "rows": pandas_row_count(frame, positions),
                    "billed_micros": int(frame["billed_micros"].to_numpy(np.int64)[positions].sum()),
                }
            )
    return missing


def pandas_row_count(frame: pd.DataFrame, positions: np.ndarray) -> int:
    if "row_count" in frame:
        return int(frame["row_count"].to_numpy(np.int64)[positions].sum())
    return len(positions)


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["USD", "EUR", "GBP", "JPY"]),
            st.integers(0, 100),  # hours after 2026-03-31 22:00 UTC: March's last hours, April, May
            st.integers(-(10**12), 10**12),
            st.integers(1, 1000),
        ),
        max_size=40,
    ),
    st.booleans(),
    st.sets(st.sampled_from(["2026-03", "2026-04", "2026-05"])),
)
def test_missing_fx_rates_in_sql_equal_the_numpy_sums(rows, grouped, rated_months):
    """The rows and billed cost of each currency and month without a rate (review_sql.FX_MONTHS, sav45)
    equal fx_months' numpy sums at 3b0be897 on random rows (made up: currencies, amounts, line counts;
    EUR has a rate in `rated_months`, GBP in April only, JPY none), with and without `row_count`."""
    start = pd.Timestamp("2026-03-31 22:00", tz="UTC")
    frame = pd.DataFrame(
        {
            "currency": pd.Categorical([r[0] for r in rows]),
            "charge_period_start": pd.DatetimeIndex([start + pd.Timedelta(hours=24 * r[1]) for r in rows]),
            "billed_micros": np.array([r[2] for r in rows], dtype=np.int64),
            **({"row_count": np.array([r[3] for r in rows], dtype=np.int64)} if grouped else {}),
        }
    )
    fx_months = {month: {"EUR": Decimal("1.08")} for month in rated_months}
    fx_months.setdefault("2026-04", {})["GBP"] = Decimal("1.27")
    request = ReviewRequest(start=dt.date(2026, 3, 1), end=dt.date(2026, 6, 1), fx_months=fx_months)
    assert missing_rates(frame, request) == pandas_missing_rates(frame, request)
