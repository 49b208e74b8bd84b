"""Aggregates of the spend review moved from pandas into review_sql statements (issue 28 item 1, sqlb44),
checked against the pandas sums they replace on random rows, and the breakdown label clash.

The pandas reference below is engine.non_gpu_breakdown's groupby as it stood at 69962c5a
(billing/review/engine.py), copied here verbatim but for its name."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from billing.review.engine import (
    ReviewRequest,
    _converted,
    _filtered,
    _in_period,
    money,
    non_gpu_breakdown,
    spend_review,
    split_scope,
    with_attribution,
)
from tests.billing.test_review_speedup import END, START, frame, row


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
