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
usage, cheaper-GPU options, idle GPU-hours."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from billing.review.engine import text_category
from billing.review.savings import CheaperGpu, PriceContext, savings_opportunities
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
        end = start + (pd.Timedelta(days=r["days"]) if r["days"] else pd.Timedelta(minutes=10))
        ih = r["instance_hours"]
        cost = ih * r["rate_micros"] // 1_000_000
        gh = int(ih * per)
        records.append(
            (start, end, provider, region, r["resource"], itype, per, r["pricing"], "USD")
            + (cost, cost, cost, ih, gh, r["interruptible"])
        )
        idle.append(int(gh * r["idle_share"]))
    columns = [
        "charge_period_start",
        "charge_period_end",
        "provider",
        "region",
        "resource_id",
        "instance_type",
        "gpus_per_instance",
        "pricing_category",
        "currency",
        "billed_micros",
        "effective_micros",
        "list_micros",
        "instance_hours_micros",
        "gpu_hours_micros",
        "interruptible",
    ]
    frame = pd.DataFrame.from_records(records, columns=columns)
    for column in ("provider", "region", "resource_id", "instance_type", "pricing_category", "currency"):
        frame[column] = text_category(frame[column])
    for column in [c for c in columns if c.endswith("_micros")]:
        frame[column] = frame[column].astype(np.int64)
    return frame, np.array(idle, dtype=np.int64)


def _load(key: int, instance_hours: int, per_day: int, pricing: str = "on_demand") -> list[dict]:
    """`per_day` rows a day of the period of one key, resource r3, 0.80 an instance-hour."""
    one = {"offset_minutes": 0, "days": 0, "rate_micros": 800_000, "interruptible": False, "resource": "r3"}
    one |= {"idle_share": 0, "key": key, "instance_hours": instance_hours, "pricing": pricing}
    return [one | {"day": day} for day in range(3) for _ in range(per_day)]


# a floor of instances running all day under the random rows (the commitment saving needs one every day):
# none, whole days, tenths of a day (2.4 h x 10: 23.999999999999996 h as a float sum), and the azure key's
# committed rows (the bill's own committed rate, where no stored price is)
BASE_LOADS = {
    "none": [],
    "whole": _load(1, 24_000_000, 1) + _load(3, 24_000_000, 2) + _load(3, 8_000_000, 1, "committed"),
    "tenths": _load(1, 2_400_000, 10) + _load(3, 2_400_000, 20) + _load(3, 4_800_000, 1, "committed"),
}


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
    assert savings_opportunities(gpu, **args) == pandas_savings(gpu, **args)


@pytest.mark.parametrize(
    "loads",
    [
        # ten rows of 2.4 instance-hours a day: as floats 23.999999999999996 h, floored to one instance by
        # the pandas version's 1e-9 slack; the exact sums count 24 h
        _load(1, 2_400_000, 10),
        # nine rows of 8 instance-hours, each spread over 3 days (the first day's start to the period's
        # end): 2.666... h a day each, 24 h a day as rationals; the SQL's shares floored at 1e-18 h sum
        # under 24 h, and the same slack counts one instance
        [r | {"day": 0, "days": 3} for r in _load(1, 8_000_000, 3)],
    ],
    ids=["tenths", "thirds"],
)
def test_fractions_of_a_day_that_add_up_to_whole_days_are_one_instance_a_day(loads):
    """Hand computation (made-up rows): 3 days x 24 instance-hours of g6.xlarge at 0.80 on demand; a
    commitment at 0.40 for the floor of one instance saves 72 x 0.40 = 28.80 over 72 GPU-hours."""
    gpu, _ = gpu_frame(loads)
    prices = PriceContext(committed={("aws", "g6.xlarge", "us-east-1"): Decimal("0.40")})
    args = {"request": SimpleNamespace(start=START, end=END), "prices": prices, "idle_micros": None}
    found = savings_opportunities(gpu, **args, currency="USD")
    assert [(s["kind"], s["amount"], s["hours_affected"]) for s in found] == [
        ("commitment", "28.80", "72.00")
    ]
    assert found == pandas_savings(gpu, **args, currency="USD")
