"""Properties of the review engine on generated spend rows (plain pandas, no database)."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from billing.review.engine import REVIEW_COLUMNS, ReviewRequest, spend_review
from billing.review.savings import PriceContext

START, END = dt.date(2026, 5, 1), dt.date(2026, 5, 8)
TYPES = {"p5.48xlarge": ("h100", 8.0), "g6.xlarge": ("l4", 1.0)}

row = st.fixed_dictionaries(
    {
        "day": st.integers(0, 6),
        "hours": st.integers(0, 24),
        "itype": st.sampled_from(sorted(TYPES)),
        "pricing": st.sampled_from(["on_demand", "spot", "committed"]),
        "team": st.sampled_from(["a", "b", ""]),
        "rate_cents": st.integers(50, 6000),
        "interruptible": st.booleans(),
        "unused": st.booleans(),
        "resource": st.sampled_from(["r1", "r2", "r3"]),
    }
)


def frame(rows) -> pd.DataFrame:
    records = []
    for r in rows:
        start = pd.Timestamp(START, tz="UTC") + pd.Timedelta(days=r["day"])
        gpu, per = TYPES[r["itype"]]
        hours = 0 if r["unused"] else r["hours"]
        cost = r["hours"] * r["rate_cents"] * 10_000  # micros
        records.append(
            (
                start,
                start + pd.Timedelta(days=1),
                "usage",
                "aws",
                "us-east-1",
                r["resource"],
                r["itype"],
                gpu,
                per,
                "committed" if r["unused"] else r["pricing"],
                "unused" if r["unused"] else "",
                r["team"],
                "",
                "USD",
                cost,
                cost,
                cost,
                hours * 1_000_000,
                int(hours * per) * 1_000_000,
                r["interruptible"],
                "",
                "Compute",
            )
        )
    out = pd.DataFrame.from_records(records, columns=REVIEW_COLUMNS)
    for column in [c for c in REVIEW_COLUMNS if c.endswith("_micros")]:
        out[column] = out[column].astype(np.int64)
    return out


@settings(max_examples=40, deadline=None)
@given(st.lists(row, min_size=1, max_size=30), st.integers(0, 24))
def test_breakdowns_add_up_and_savings_never_exceed_the_hours(rows, idle_hours):
    records = frame(rows)
    util = pd.DataFrame(
        {
            "resource_id": "r1",
            "gpu_index": 0,
            "utilization_pct": 2.0,
            "hour": pd.date_range(pd.Timestamp(START, tz="UTC"), periods=idle_hours, freq="h"),
        }
    )
    prices = PriceContext(
        spot={("aws", "p5.48xlarge", "us-east-1"): Decimal("12.5")},
        spot_overhead=Decimal("0.07"),
        committed={("aws", "g6.xlarge", "us-east-1"): Decimal("0.40")},
    )
    review = spend_review(records, ReviewRequest(start=START, end=END), prices=prices, utilization=util)
    total = Decimal(review["totals"]["effective_cost"])
    for key in ("by_team", "by_pricing_category", "by_gpu", "by_month"):
        parts = sum(Decimal(e["effective_cost"]) for e in review[key])
        assert abs(parts - total) <= Decimal("0.01") * len(review[key])  # each part rounded to the cent
    gpu_hours = Decimal(review["totals"]["gpu_hours"])
    assert sum(Decimal(s["hours_affected"]) for s in review["savings"]) <= gpu_hours + Decimal("0.01")
    for saving in review["savings"]:
        assert Decimal(saving["amount"]) > 0 and saving["assumptions"]
    kinds = [s["kind"] for s in review["savings"]]
    assert kinds == sorted(kinds, key=["spot", "commitment", "cheaper_gpu", "idle"].index)
    if review["idle_gpu_hours"] is not None:
        assert Decimal(review["idle_gpu_hours"]) <= gpu_hours


def test_previous_period_trend_and_bounds():
    rows = [
        {
            "day": 0,
            "hours": 10,
            "itype": "g6.xlarge",
            "pricing": "on_demand",
            "team": "a",
            "rate_cents": 100,
            "interruptible": False,
            "unused": False,
            "resource": "r1",
        }
    ]
    records = frame(rows)
    earlier = records.assign(
        charge_period_start=records["charge_period_start"] - pd.Timedelta(days=7),
        charge_period_end=records["charge_period_end"] - pd.Timedelta(days=7),
        effective_micros=5_000_000,
    )
    review = spend_review(
        pd.concat([records, earlier], ignore_index=True), ReviewRequest(start=START, end=END)
    )
    assert review["by_team"] == [
        {
            "team": "a",
            "effective_cost": "10.00",
            "gpu_hours": "10.00",
            "billed_cost": "10.00",
            "effective_cost_per_gpu_hour": "1.000000",
            "previous_effective_cost": "5.00",
        }
    ]
    import pytest

    from billing.review.engine import ReviewInputError

    with pytest.raises(ReviewInputError, match="to: must be after from"):
        ReviewRequest(start=END, end=START)
    with pytest.raises(ReviewInputError, match="at most three years"):
        ReviewRequest(start=START, end=START + dt.timedelta(days=1200))


def test_unknown_review_currency_is_refused():
    import pytest

    from billing.review.engine import ReviewInputError

    with pytest.raises(ReviewInputError, match="currency: unknown currency 'XYZ'"):
        ReviewRequest(start=START, end=END, currency="XYZ")


def test_review_converts_other_currencies_through_the_given_rates():
    rows = [
        {
            "day": 0,
            "hours": 10,
            "itype": "g6.xlarge",
            "pricing": "on_demand",
            "team": "a",
            "rate_cents": 100,
            "interruptible": False,
            "unused": False,
            "resource": "r1",
        }
    ]
    records = frame(rows).assign(currency="EUR")
    # 10.00 EUR at 1.10 USD per EUR = 11.00 USD
    review = spend_review(
        records, ReviewRequest(start=START, end=END, fx_to_currency={"EUR": Decimal("1.10")})
    )
    assert review["totals"]["effective_cost"] == "11.00"
    # no rate (issue 28): the EUR rows are left out and named, never converted 1:1, never an error
    without = spend_review(records, ReviewRequest(start=START, end=END))
    assert (without["totals"]["effective_cost"], without["totals"]["gpu_hours"]) == ("0.00", "0.00")
    assert [(m["currency"], m["rows"], m["billed_cost"]) for m in without["fx_missing"]] == [
        ("EUR", 1, "10.00")
    ]
