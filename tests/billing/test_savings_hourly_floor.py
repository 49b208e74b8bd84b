"""The commitment saving's floor by the hour and the bill's committed rate by region (fixf45, after aud45f's
case 4: tests/billing/outside/test_outside_finops_stop45.py).

Rows and prices are made up (no published figure): g6.xlarge (1 GPU) on demand at 0.80 an instance-hour,
a commitment at 0.40, a review of 3 days (72 hours). Every expectation is computed by hand in the comments.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from types import SimpleNamespace

import duckdb
import numpy as np
import pandas as pd
import pyarrow as pa

from billing.review.engine import text_category
from billing.review.savings import PriceContext, savings_opportunities
from billing.storage import review_sql

START, END = dt.date(2026, 5, 1), dt.date(2026, 5, 4)
EAST = ("aws", "g6.xlarge", "us-east-1")
STORED = PriceContext(committed={EAST: Decimal("0.40")})
HOUR = pd.Timedelta(hours=1)
T0 = pd.Timestamp(START, tz="UTC")


def line(start, end, micros, region="us-east-1", pricing="on_demand", rate_micros=800_000):
    return (start, end, region, micros, pricing, rate_micros)


def hourly(micros: int, per_hour: int = 1, skip: tuple[int, ...] = ()) -> list[tuple]:
    """`per_hour` one-hour lines of `micros` instance-hours in each of the 72 hours but `skip`."""
    return [line(T0 + h * HOUR, T0 + (h + 1) * HOUR, micros) for h in range(72) if h not in skip] * per_hour


def savings(lines: list[tuple], prices: PriceContext = STORED) -> list[dict]:
    records = []
    for start, end, region, micros, pricing, rate in lines:
        cost = micros * rate // 1_000_000
        records.append(
            (start, end, "aws", region, "r", "g6.xlarge", 1.0, pricing, "USD")
            + (cost, cost, cost, micros, micros, False)
        )
    columns = "charge_period_start charge_period_end provider region resource_id instance_type".split()
    columns += (
        "gpus_per_instance pricing_category currency billed_micros effective_micros list_micros".split()
    )
    columns += ["instance_hours_micros", "gpu_hours_micros", "interruptible"]
    gpu = pd.DataFrame.from_records(records, columns=columns)
    for column in ("provider", "region", "resource_id", "instance_type", "pricing_category", "currency"):
        gpu[column] = text_category(gpu[column])
    request = SimpleNamespace(start=START, end=END)
    return savings_opportunities(gpu, request=request, prices=prices, idle_micros=None, currency="USD")


def figures(found: list[dict]) -> list[tuple]:
    return [(s["kind"], s["amount"], s["hours_affected"]) for s in found]


def test_an_hourly_line_of_half_an_hour_is_half_an_instance():
    # one 0.5 h line an hour: 0.5 instances every hour, floor 0, no commitment
    assert figures(savings(hourly(500_000))) == []
    # two such lines an hour: 1 instance every hour, floor 1: 72 h x (0.80 - 0.40) = 28.80 over 72 GPU-h
    found = savings(hourly(500_000, per_hour=2))
    assert figures(found) == [("commitment", "28.80", "72.00")]
    # hourly lines only: the floor is a count by the hour, no note that it is an average
    assert not [a for a in found[0]["assumptions"] if "average" in a]
    assert found[0]["assumptions"][0].startswith(
        "commit to the utilization floor: the fewest instances running at the same time in any hour"
    )


def test_an_hour_without_usage_makes_the_floor_zero():
    # two instances every hour but 2026-05-02 03:00-04:00 (hour 27), where none ran: floor 0
    assert figures(savings(hourly(1_000_000, per_hour=2, skip=(27,)))) == []
    # a third instance in every hour but that one: 3 instances in 71 hours, 1 in hour 27: floor 1,
    # 72 x 0.40 = 28.80 (the 2 x 71 + 0 instance-hours above the floor stay on demand)
    lines = hourly(1_000_000, per_hour=2, skip=(27,)) + hourly(1_000_000)
    assert figures(savings(lines)) == [("commitment", "28.80", "72.00")]


def test_a_line_over_several_hours_is_spread_evenly_over_them_and_said_so():
    # a 36 h line 2026-05-01 00:00-12:00 (3 instances in each of its 12 hours) and a 60 h line 12:00 to
    # 2026-05-04 00:00 (1 instance in each of its 60 hours): every hour 1 or 3, floor 1: 28.80
    lines = [line(T0, T0 + 12 * HOUR, 36_000_000), line(T0 + 12 * HOUR, T0 + 72 * HOUR, 60_000_000)]
    (found,) = savings(lines)
    assert (found["amount"], found["hours_affected"]) == ("28.80", "72.00")
    assert (
        "aws g6.xlarge us-east-1: lines longer than an hour are spread evenly over their hours: within such a "
        "line an average, not a count of instances running at the same time"
    ) in found["assumptions"]
    # the same 96 instance-hours as 00:00-12:00 then 12:00-24:00 of day one only: no usage on 05-02 and
    # 05-03, floor 0
    assert (
        savings([line(T0, T0 + 12 * HOUR, 36_000_000), line(T0 + 12 * HOUR, T0 + 24 * HOUR, 60_000_000)])
        == []
    )


def test_daily_lines_only_keep_the_daily_average_and_say_so():
    # one whole-day line of 24 h each day: the bill gives no hours; 24 / 24 = 1 instance a day, 28.80
    days = [line(T0 + d * 24 * HOUR, T0 + (d + 1) * 24 * HOUR, 24_000_000) for d in range(3)]
    (found,) = savings(days)
    assert (found["amount"], found["hours_affected"]) == ("28.80", "72.00")
    assert (
        "aws g6.xlarge us-east-1: the bill has only daily (or longer) lines, so the floor is the fewest "
        "instance-hours / 24 of any day: a daily average, not a count of instances running at the same time"
    ) in found["assumptions"]
    # one hourly line added (hour 0, 1 h): the key is no longer daily only, the day lines spread 1 an hour,
    # 2 in hour 0: floor 1, the same 28.80, said as a spread
    (found,) = savings([*days, line(T0, T0 + HOUR, 1_000_000)])
    assert found["amount"] == "28.80"
    assert any("spread evenly" in a for a in found["assumptions"])
    assert not any("daily average" in a for a in found["assumptions"])


def test_the_bills_committed_rate_is_the_regions_own_else_across_regions():
    # Committed usage: us-east-1 72 h at 0.40 (28.80), eu-west-1 24 h at 0.60 (14.40); across both
    # 43.20 / 96 = 0.45. On demand: one instance all 72 hours in eu-west-1 and in ap-south-1 at 0.80, no
    # stored price. eu-west-1 is priced at its own 0.60: 72 x 0.20 = 14.40 (the rate across regions, as
    # before fixf45, gave 72 x 0.35 = 25.20); ap-south-1 has no committed usage and falls back to 0.45 across
    # regions, said so: 72 x 0.35 = 25.20. Total 39.60 over 144 GPU-hours.
    committed = [
        line(T0, T0 + 72 * HOUR, 72_000_000, pricing="committed", rate_micros=400_000),
        line(T0, T0 + 24 * HOUR, 24_000_000, "eu-west-1", pricing="committed", rate_micros=600_000),
    ]
    on_demand = [
        line(T0 + h * HOUR, T0 + (h + 1) * HOUR, 1_000_000, region)
        for region in ("eu-west-1", "ap-south-1")
        for h in range(72)
    ]
    (found,) = savings(committed + on_demand, PriceContext())
    assert (found["amount"], found["hours_affected"]) == ("39.60", "144.00")
    rates = {c["region"]: (c["basis"], c["rate_per_instance_hour"]) for c in found["commitment_prices"]}
    assert rates == {"ap-south-1": ("billed_rate", "0.450000"), "eu-west-1": ("billed_rate", "0.600000")}
    notes = {c["region"]: c["note"] for c in found["commitment_prices"]}
    assert notes["eu-west-1"] == (
        "aws g6.xlarge eu-west-1: no stored commitment price; the committed rate this bill already pays for "
        "g6.xlarge in eu-west-1, 0.600000 an instance-hour"
    )
    assert notes["ap-south-1"] == (
        "aws g6.xlarge ap-south-1: no stored commitment price and no committed usage in ap-south-1; the "
        "committed rate this bill already pays for g6.xlarge across its regions, 0.450000 an instance-hour"
    )
    assert notes["ap-south-1"] in found["assumptions"]


def test_the_hourly_floor_is_exact_past_int64():
    # SAVINGS_HOURLY_FLOOR as the product runs it: 4 one-hour lines at the int64 maximum of micro
    # instance-hours in hour 0 and one in hour 1 of a 2-hour period. Units of 1e-18 h: 4 x (2^63 - 1) x 10^12
    # (3.7e31, past int64, within HUGEINT's 1.7e38); hour 1 holds the fewest: (2^63 - 1) x 10^12 + 10^9 over
    # 10^18 = 9,223,372,036,854 instances. A line of 2 hours (hours 2-3, outside the period) is not read.
    big = 2**63 - 1
    hour_ns = 3_600 * 10**9
    starts = [0, 0, 0, 0, hour_ns, 2 * hour_ns]
    ends = [hour_ns] * 4 + [2 * hour_ns, 4 * hour_ns]
    n = len(starts)
    table = pa.table(
        {
            "provider": pa.DictionaryArray.from_arrays(np.zeros(n, np.int32), ["aws"]),
            "instance_type": pa.DictionaryArray.from_arrays(np.zeros(n, np.int32), ["g6.xlarge"]),
            "region": pa.DictionaryArray.from_arrays(np.zeros(n, np.int32), ["us-east-1"]),
            "instance_hours_micros": pa.array([big] * n, type=pa.int64()),
            "start_ns": pa.array(starts, type=pa.int64()),
            "end_ns": pa.array(ends, type=pa.int64()),
        }
    )
    con = duckdb.connect()
    con.register("savings_rows", table)
    found = con.execute(review_sql.SAVINGS_HOURLY_FLOOR, {"first_hour": 0, "last_hour": 2}).fetchall()
    assert found == [("aws", "g6.xlarge", "us-east-1", (big * 10**12 + 10**9) // 10**18, 2)]
    assert found[0][3] == 9_223_372_036_854
