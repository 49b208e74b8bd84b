"""The review's two reads of stored spend rows give the same engine frame: PostgreSQL's CSV stream
parsed by Arrow (spend_columns.py) and rows fetched through the cursor (any database). Both are read
from the same stored rows: the demo bill (make_demo_billing seed 3), and a file of the awkward cases
(text with commas, quotes and a newline, tags of every JSON kind, no list cost, negative corrections,
the largest money the engine holds exactly)."""

from __future__ import annotations

import datetime as dt
import json

import pandas as pd
import pytest
from django.db import connection

from billing.imports.importer import import_files
from billing.review import selectors
from billing.review.service import make_request
from tests.billing.catalog import import_demo_billing, make_catalog

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.skipif(connection.vendor != "postgresql", reason="the CSV stream is PostgreSQL's COPY"),
]
HEADER = (
    "ChargePeriodStart,ChargePeriodEnd,ChargeCategory,ChargeClass,BilledCost,EffectiveCost,ListCost,"
    "BillingCurrency,ProviderName,RegionId,ResourceId,PricingCategory,ConsumedQuantity,ConsumedUnit,"
    "ServiceCategory,x_UsageType,Tags"
)


def tags(**values) -> str:
    return '"' + json.dumps(values).replace('"', '""') + '"'


ROWS = [
    # a resource id with a comma, a quote and a newline; interruptible spelt "TRUE"; list cost absent
    "2026-05-01T00:00:00Z,2026-05-02T00:00:00Z,Usage,,12.345678,12.345678,,USD,AWS,us-east-1,"
    '"i-a,""b""\nc",Standard,24,Hours,Compute,USE1-BoxUsage:p5.48xlarge,'
    + tags(interruptible="TRUE", team="ml"),
    # JSON true and a numeric workload tag; spot
    "2026-05-01T06:30:00Z,2026-05-01T07:30:00Z,Usage,,0.000001,0.000001,9.5,USD,AWS,us-east-1,i-2,Dynamic,1,"
    "Hours,Compute,USE1-SpotUsage:g6e.xlarge," + tags(interruptible=True, workload=17),
    # a correction: negative cost and hours; a null workload tag
    "2026-05-02T00:00:00Z,2026-05-03T00:00:00Z,Usage,Correction,-3.5,-3.5,-3.5,USD,AWS,us-east-1,i-3,Standard,-2,"
    "Hours,Compute,USE1-BoxUsage:g6.xlarge," + tags(workload=None, interruptible="no"),
    # the largest money the engine holds exactly (int64 micro-units); no tags; not a GPU
    "2026-05-03T00:00:00Z,2026-05-04T00:00:00Z,Usage,,9223372036854.775807,9223372036854.775807,,USD,AWS,,"
    "vol-1,Standard,5,GB-Mo,Storage,,",
    "2026-05-03T00:00:00Z,2026-05-04T00:00:00Z,Tax,,1.25,1.25,,USD,AWS,,,,,,,,",
]


def assert_same_rows(left: pd.DataFrame, right: pd.DataFrame) -> None:
    """The same rows, columns and types, in any order: neither read has an ORDER BY (the engine does
    not depend on row order), and two plans may scan the heap differently."""
    pd.testing.assert_frame_equal(in_row_order(left), in_row_order(right))


def in_row_order(frame: pd.DataFrame) -> pd.DataFrame:
    return frame.sort_values(list(frame.columns), kind="stable").reset_index(drop=True)


def both_frames(start: dt.date, end: dt.date) -> tuple[pd.DataFrame, pd.DataFrame]:
    request = make_request(start=start, end=end)
    where = "WHERE r.charge_period_start >= %s AND r.charge_period_start < %s"
    bounds = [
        dt.datetime.combine(day, dt.time(), tzinfo=dt.UTC) for day in (request.previous[0], request.end)
    ]
    return selectors.copied_spend_frame(where, bounds), selectors.fetched_spend_frame(where, bounds)


def test_the_demo_bill_reads_the_same_both_ways(tmp_path):
    import_demo_billing(tmp_path, months=3)
    copied, fetched = both_frames(dt.date(2026, 5, 1), dt.date(2026, 8, 1))
    assert len(copied) == 2586  # every row make_demo_billing wrote (930 daily + 92 days x 18 hourly rows)
    assert_same_rows(copied, fetched)


def test_awkward_rows_read_the_same_both_ways_and_as_written(tmp_path):
    make_catalog()
    path = tmp_path / "awkward.csv"
    path.write_text(HEADER + "\n" + "\n".join(ROWS) + "\n")
    assert import_files([path], fmt="focus").inserted == len(ROWS)
    copied, fetched = both_frames(dt.date(2026, 5, 1), dt.date(2026, 6, 1))
    assert_same_rows(copied, fetched)
    rows = copied.set_index(copied["resource_id"].astype(str))
    first = rows.loc['i-a,"b"\nc']
    assert (first["billed_micros"], first["list_micros"], first["gpu"], first["interruptible"]) == (
        12_345_678,
        0,
        "h100-sxm5-80gb",
        True,
    )
    assert first["gpu_hours_micros"] == 24 * 8 * 1_000_000  # p5.48xlarge: 8 GPUs
    spot = rows.loc["i-2"]
    assert (spot["billed_micros"], spot["interruptible"], spot["workload"]) == (1, True, "17")
    assert str(spot["charge_period_start"]) == "2026-05-01 06:30:00+00:00"
    correction = rows.loc["i-3"]
    assert (correction["billed_micros"], correction["interruptible"], correction["workload"]) == (
        -3_500_000,
        False,
        "",
    )
    assert rows.loc["vol-1"]["billed_micros"] == 2**63 - 1
