"""Savings' sums as review_sql statements (issue 28 item 1, sav45) against the pandas version they replaced.

tests/billing/reference/savings_pandas.py is billing/review/savings.py as it stood at 3b0be897, copied
verbatim: its sums per (provider, instance type, region), per committed (provider, instance type), per
resource and per idle value were pandas groupbys and numpy sorted-run sums, its instance-hours per day
float sums in a pinned order (a pandas groupby, then np.add.at in row order). The SQL version sums exact
integers (review_sql.SAVINGS_*; the daily instance-hours in 1e-18 hours). On random GPU usage rows, every
figure the savings report (amounts in cents, GPU-hours to 0.01, the commitment choices, the prices) must
be the same. The rows, prices and hours below are made up, each chosen to reach the rules: several keys
and resources, rows of one day and of up to 31 days, instance-hours in odd micro-units and in fractions of
a day that add up to whole days only as exact sums (2.4 h x 10, 8 h x 3), interruptible and committed
usage, cheaper-GPU options, idle GPU-hours.

fixf45 changed two rules on purpose (aud45f's case 4): the commitment floor is the fewest instances running
in any hour of the period where a key has lines shorter than a day (the pandas version's days' instance-hours
/ 24 is an average, not a count of instances at once), and the bill's committed rate is the key's own
region's before the instance type's across regions. Those two figures are excluded from the comparison
with the verbatim pandas version explicitly: `reference_savings` runs it with its commitment step replaced
by tests/billing/reference/commitment_hourly.py (the same step with only those two changes, marked, the
hourly floor a Python loop over lines and hours). Every other figure, and the commitment's on keys of
daily lines, is still the verbatim version's. The rows gained charge periods of an hour and of 12 hours,
and the base loads whole-day and hourly lines: under the hourly rule the old loads (a day's instance-hours
in one 10-minute line) have a floor of 0, so the commitment saving would no longer be reached."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from types import SimpleNamespace
from unittest import mock

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from billing.review.engine import GPU_COLUMNS, text_category
from billing.review.savings import CheaperGpu, PriceContext, savings_opportunities
from tests.billing.reference import commitment_hourly, savings_pandas
from tests.billing.reference.savings_pandas import savings_opportunities as pandas_savings

START, END = dt.date(2026, 5, 1), dt.date(2026, 5, 4)  # three days: utilization floors above 0 are common
KEYS = [
    ("aws", "p5.48xlarge", "us-east-1", 8.0),
    ("aws", "g6.xlarge", "us-east-1", 1.0),
    ("aws", "g6.xlarge", "eu-west-1", 1.0),
    ("azure", "Standard_NC24ads_A100_v4", "eastus", 1.0),
]
RESOURCES = ["r1", "r2", "r3", "r4"]
# instance-hours of a row in micro-units: whole days, fractions of a day whose float sums are not exact
# (2.4 h, 8 h, 4.8 h), odd micro-units
HOURS = st.sampled_from([24_000_000, 2_400_000, 8_000_000, 4_800_000, 72_000_000, 1_000_001, 23_999_999])

row = st.fixed_dictionaries(
    {
        "key": st.integers(0, len(KEYS) - 1),
        "day": st.integers(0, 2),
        "offset_minutes": st.sampled_from([0, 0, 0, 30, 23 * 60]),
        "days": st.sampled_from([0, 0, 0, 1, 2, 3, 7, 31]),  # 0: ends within the start's day
        "minutes": st.sampled_from([10, 10, 60, 12 * 60]),  # the charge period where `days` is 0 (fixf45)
        "instance_hours": st.one_of(HOURS, st.integers(1, 100_000_000)),
        "rate_micros": st.integers(100_000, 60_000_000),
        "pricing": st.sampled_from(["on_demand", "on_demand", "on_demand", "committed", "spot"]),
        "interruptible": st.booleans(),
        "resource": st.sampled_from(RESOURCES),
        "idle_share": st.sampled_from([0, 0, 0.25, 1.0, 2.0]),
    }
)


def gpu_frame(rows) -> tuple[pd.DataFrame, np.ndarray]:
    """The review's GPU frame (engine.GPU_COLUMNS, text as sorted categories) and idle micro GPU-hours."""
    records, idle = [], []
    for r in rows:
        provider, itype, region, per = KEYS[r["key"]]
        start = pd.Timestamp(START, tz="UTC") + pd.Timedelta(days=r["day"], minutes=r["offset_minutes"])
        end = start + (
            pd.Timedelta(days=r["days"]) if r["days"] else pd.Timedelta(minutes=r.get("minutes", 10))
        )
        ih = r["instance_hours"]
        cost = ih * r["rate_micros"] // 1_000_000
        gh = int(ih * per)
        records.append(
            (start, end, provider, region, r["resource"], itype, per, r["pricing"], "USD")
            + (cost, cost, cost, ih, gh, r["interruptible"])
        )
        idle.append(int(gh * r["idle_share"]))
    columns = list(GPU_COLUMNS)  # what the review hands the savings: the engine's own list
    frame = pd.DataFrame.from_records(records, columns=columns)
    for column in ("provider", "region", "resource_id", "instance_type", "pricing_category", "currency"):
        frame[column] = text_category(frame[column])
    for column in [c for c in columns if c.endswith("_micros")]:
        frame[column] = frame[column].astype(np.int64)
    return frame, np.array(idle, dtype=np.int64)


def _load(
    key: int, instance_hours: int, per_day: int, pricing: str = "on_demand", days: int = 0
) -> list[dict]:
    """`per_day` rows a day of the period of one key, resource r3, 0.80 an instance-hour, each starting at
    00:00 and lasting 10 minutes (`days` 0) or `days` days."""
    one = {
        "offset_minutes": 0,
        "days": days,
        "rate_micros": 800_000,
        "interruptible": False,
        "resource": "r3",
    }
    one |= {"idle_share": 0, "key": key, "instance_hours": instance_hours, "pricing": pricing}
    return [one | {"day": day} for day in range(3) for _ in range(per_day)]


def _hourly(key: int, instance_hours: int, per_hour: int) -> list[dict]:
    """`per_hour` one-hour rows in each of the period's 72 hours of one key (as _load's)."""
    one = _load(key, instance_hours, 1)[0] | {"minutes": 60}
    return [one | {"day": h // 24, "offset_minutes": h % 24 * 60} for h in range(72) for _ in range(per_hour)]


# a floor of instances running in every hour under the random rows (the commitment saving needs one in every
# hour): none, whole-day lines (fixf45: were 10-minute lines holding a day's hours, a floor of 0 by the hour),
# tenths of a day in whole-day lines (2.4 h x 10: 23.999999999999996 h as a float sum), hourly lines (one
# 1-hour line, and ten 0.1-hour lines, an hour: 0.9999999999999999 as a float sum), and the azure key's
# committed rows (the bill's own committed rate, where no stored price is)
BASE_LOADS = {
    "none": [],
    "whole": _load(1, 24_000_000, 1, days=1)
    + _load(3, 24_000_000, 2, days=1)
    + _load(3, 8_000_000, 1, "committed"),
    "tenths": _load(1, 2_400_000, 10, days=1)
    + _load(3, 2_400_000, 20, days=1)
    + _load(3, 4_800_000, 1, "committed"),
    "hourly": _hourly(1, 1_000_000, 1) + _hourly(3, 100_000, 10) + _load(3, 8_000_000, 1, "committed"),
}


def reference_savings(gpu, **args) -> list[dict]:
    """The verbatim pandas version with its commitment step replaced by commitment_hourly's (fixf45's two
    rule changes, module docstring): the hourly floor and the committed rate by region are not compared
    with the pandas version's daily average and rate across regions, which they replace on purpose."""
    with mock.patch.object(savings_pandas, "_commitment", commitment_hourly._commitment):
        return pandas_savings(gpu, **args)


@settings(max_examples=80, deadline=None)
@given(
    st.lists(row, min_size=1, max_size=50),
    st.sampled_from(sorted(BASE_LOADS)),
    st.booleans(),
    st.booleans(),
    st.sampled_from([Decimal("0.75"), Decimal("1.2"), Decimal(2) / Decimal(3)]),
)
def test_savings_in_sql_report_the_pandas_versions_figures(
    rows, base, with_idle, with_committed_price, ratio
):
    gpu, idle = gpu_frame(rows + BASE_LOADS[base])
    committed = {("aws", "g6.xlarge", "us-east-1"): Decimal("0.40")} if with_committed_price else {}
    prices = PriceContext(
        spot={
            ("aws", "p5.48xlarge", "us-east-1"): Decimal("12.5"),
            ("aws", "g6.xlarge", "eu-west-1"): Decimal("0.3"),
        },
        spot_overhead=Decimal("0.0712"),
        committed=committed,
        cheaper_gpu={
            "r2": CheaperGpu(ratio, "aws g6.xlarge x1 (l4)"),
            "r4": CheaperGpu(Decimal("0.9"), "aws x"),
        },
    )
    request = SimpleNamespace(start=START, end=END)
    args = {
        "request": request,
        "prices": prices,
        "idle_micros": idle if with_idle else None,
        "currency": "USD",
    }
    assert savings_opportunities(gpu, **args) == reference_savings(gpu, **args)


@pytest.mark.parametrize(
    ("loads", "daily_lines"),
    [
        # ten whole-day rows of 2.4 instance-hours a day (fixf45: were 10-minute rows at 00:00, below):
        # as floats 23.999999999999996 h, floored to one instance by the pandas version's 1e-9 slack; the
        # exact sums count 24 h. Daily lines only: the daily average, as before.
        (_load(1, 2_400_000, 10, days=1), True),
        # nine rows of 8 instance-hours, each spread over 3 days (the first day's start to the period's
        # end): 2.666... h a day each, 24 h a day as rationals; the SQL's shares floored at 1e-18 h sum
        # under 24 h, and the same slack counts one instance
        ([r | {"day": 0, "days": 3} for r in _load(1, 8_000_000, 3)], True),
        # fixf45: ten one-hour rows of 0.1 instance-hours in every hour: 0.9999999999999999 as a float
        # sum, 10 x 10^17 = 10^18 units (1 instance) as the SQL's exact sum, every hour
        (_hourly(1, 100_000, 10), False),
    ],
    ids=["tenths", "thirds", "tenths_each_hour"],
)
def test_fractions_of_a_day_that_add_up_to_whole_days_are_one_instance_a_day(loads, daily_lines):
    """Hand computation (made-up rows): 3 days x 24 instance-hours of g6.xlarge at 0.80 on demand; a
    commitment at 0.40 for the floor of one instance saves 72 x 0.40 = 28.80 over 72 GPU-hours. Rows of
    daily (or longer) lines only are the verbatim pandas version's figures; hourly lines the reference's
    hourly floor (reference_savings)."""
    gpu, _ = gpu_frame(loads)
    prices = PriceContext(committed={("aws", "g6.xlarge", "us-east-1"): Decimal("0.40")})
    args = {"request": SimpleNamespace(start=START, end=END), "prices": prices, "idle_micros": None}
    found = savings_opportunities(gpu, **args, currency="USD")
    assert [(s["kind"], s["amount"], s["hours_affected"]) for s in found] == [
        ("commitment", "28.80", "72.00")
    ]
    assert found == reference_savings(gpu, **args, currency="USD")
    if (
        daily_lines
    ):  # the figures and choices, all but fixf45's wording (assumptions, notes): the verbatim version's

        def figures(saving: dict) -> dict:
            choices = [{k: v for k, v in c.items() if k != "note"} for c in saving["commitment_prices"]]
            return {k: v for k, v in saving.items() if k != "assumptions"} | {"commitment_prices": choices}

        (old,) = pandas_savings(gpu, **args, currency="USD")
        assert figures(found[0]) == figures(old)


def test_a_days_instance_hours_in_ten_minutes_are_not_an_instance_all_day():
    """Recomputed by hand at fixf45 (this was the "tenths" case above, which relied on the daily average):
    ten rows of 2.4 instance-hours, each 00:00-00:10 of each of the 3 days. By the hour: 00:00-01:00 holds
    24 instance-hours (24 instances), 01:00-24:00 none, so the floor over the 72 hours is 0 and no
    commitment saving (was 28.80 over 72.00 GPU-hours: 24 h a day / 24 = 1 instance). The pandas version
    (a daily average, replaced on purpose) still says 28.80."""
    gpu, _ = gpu_frame(_load(1, 2_400_000, 10))
    prices = PriceContext(committed={("aws", "g6.xlarge", "us-east-1"): Decimal("0.40")})
    args = {"request": SimpleNamespace(start=START, end=END), "prices": prices, "idle_micros": None}
    assert savings_opportunities(gpu, **args, currency="USD") == []
    assert reference_savings(gpu, **args, currency="USD") == []
    assert [s["amount"] for s in pandas_savings(gpu, **args, currency="USD")] == ["28.80"]
