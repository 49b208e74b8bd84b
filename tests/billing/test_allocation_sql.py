"""The showback's per-team sums as SQL (storage/allocation_sql.py, issue 28 item 1) against a hand
computation on a small bill: effective cost, idle cost (cost x (1 - mean utilization of the samples in
the row's [start, end))) and GPU-hours per team, the team scope and the review's filters in the query."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import numpy as np
import pandas as pd

from billing.finance import allocation
from billing.finance.sections import converted_team_sums
from billing.review.engine import ReviewRequest
from billing.storage import ParquetSpendStore
from billing.storage.allocation_frames import frame_row_idle
from billing.storage.duckdb_allocation import dataset_team_sums
from billing.storage.translated_review import team_sums_statement, translate

M = 1_000_000
NOVEMBER = (dt.date(2026, 11, 1), dt.date(2026, 12, 1))
DAY = pd.Timestamp("2026-11-01", tz="UTC")


def line(team, resource, start, days, effective, gpu_hours, **extra):
    row = {
        "charge_period_start": start,
        "charge_period_end": start + pd.Timedelta(days=days),
        "charge_category": "usage",
        "gpu": "H100",
        "commitment_status": "",
        "resource_id": resource,
        "team": team,
        "project": "llm",
        "provider": "aws",
        "currency": "USD",
        "effective_micros": int(effective * M),
        "gpu_hours_micros": int(gpu_hours * M),
    }
    return row | extra


def small_bill() -> pd.DataFrame:
    nov2 = DAY + pd.Timedelta(days=1)
    return pd.DataFrame(
        [
            line("a", "i-a", DAY, 1, 48, 24),  # samples 10% and 40%: mean 25%, idle 48 x 0.75 = 36
            line("a", "i-a", nov2, 1, 20, 8),  # samples 0% (at its start) and 50%: idle 20 x 0.75 = 15
            line("b", "i-b", DAY, 1, 30, 16),  # no samples: not judged, idle 0
            line("", "i-c", DAY, 1, 12.5, 4),  # untagged, sampled at 80%: idle 12.50 x 0.2 = 2.50
            line("b", "", DAY, 1, 7, 5, commitment_status="unused"),  # unused: cost only, no hours, no idle
            line("a", "vol-1", DAY, 1, 3, 0, gpu="", service_category="storage"),  # not GPU spend
            line("a", "i-a", DAY - pd.Timedelta(days=1), 1, 99, 9),  # October: outside the period
            line("b", "i-g", DAY, 1, 11, 2, provider="gcp"),  # another provider, no samples
        ]
    )


def samples() -> pd.DataFrame:
    nov2 = DAY + pd.Timedelta(days=1)
    rows = [
        ("i-a", DAY, 10.0),
        ("i-a", DAY + pd.Timedelta(hours=5), 40.0),
        ("i-a", nov2, 0.0),  # the end of the first row (excluded there), the start of the second
        ("i-a", nov2 + pd.Timedelta(hours=12), 50.0),
        ("i-c", DAY + pd.Timedelta(hours=3), 80.0),
    ]
    return pd.DataFrame(rows, columns=["resource_id", "hour", "utilization_pct"])


def test_it_sums_effective_idle_and_gpu_hours_per_team_as_computed_by_hand(tmp_path):
    store = ParquetSpendStore(tmp_path / "store")
    store.write(small_bill())
    # a: 48 + 20 effective, 36 + 15 idle, 24 + 8 GPU-hours; b: 30 + 7 (unused) + 11, 16 + 2 GPU-hours;
    # untagged: 12.50, idle 2.50, 4 GPU-hours. October's row and the storage row are not GPU spend of Nov.
    assert dataset_team_sums(store, *NOVEMBER, samples()) == [
        ("", "USD", "2026-11", 12_500_000, 2_500_000, 4 * M),
        ("a", "USD", "2026-11", 68 * M, 51 * M, 32 * M),
        ("b", "USD", "2026-11", 48 * M, 0, 18 * M),
    ]
    # the same statement over the frame in memory (allocation.team_usage) gives the same per-team rows
    bill = small_bill()
    in_november = bill[bill["charge_period_start"] >= DAY]
    gpu = in_november[(in_november["gpu"] != "") & (in_november["commitment_status"] != "unused")]
    unused = in_november[in_november["commitment_status"] == "unused"]
    per_team = allocation.team_usage(gpu, unused, samples())
    assert per_team.loc["a"].tolist() == [68 * M, 51 * M, 32 * M]
    assert per_team.loc["b"].tolist() == [48 * M, 0, 18 * M]
    assert per_team.loc[""].tolist() == [12_500_000, 2_500_000, 4 * M]


def test_the_team_scope_and_the_filters_are_in_the_query(tmp_path):
    store = ParquetSpendStore(tmp_path / "store")
    store.write(small_bill())
    assert dataset_team_sums(store, *NOVEMBER, samples(), allowed_teams=("a",)) == [
        ("a", "USD", "2026-11", 68 * M, 51 * M, 32 * M)
    ]
    assert dataset_team_sums(store, *NOVEMBER, samples(), filters={"provider": "gcp"}) == [
        ("b", "USD", "2026-11", 11 * M, 0, 2 * M)
    ]
    assert dataset_team_sums(store, *NOVEMBER, None, filters={"team": "b", "project": "llm"}) == [
        ("b", "USD", "2026-11", 48 * M, 0, 18 * M)
    ]
    # a team name is a parameter, never SQL text
    assert dataset_team_sums(store, *NOVEMBER, samples(), allowed_teams=("a' OR true --",)) == []


def test_idle_rounds_half_to_even_per_row_as_numpy_rint():
    # 1, 3 and 5 micro-units at a mean of 50%: 0.5, 1.5, 2.5 -> 0, 2, 2 (rint), in every engine
    rows = pd.DataFrame([line("a", "i-a", DAY, 1, 0, 1) for _ in range(3)])
    rows["effective_micros"] = [1, 3, 5]
    half = pd.DataFrame([("i-a", DAY, 50.0)], columns=["resource_id", "hour", "utilization_pct"])
    assert frame_row_idle(rows, half).tolist() == np.rint([0.5, 1.5, 2.5]).astype(int).tolist() == [0, 2, 2]


def test_the_statement_translates_for_athena_and_spark_without_duckdb_functions():
    sql = team_sums_statement(*NOVEMBER, ("a",))
    for engine in ("athena", "spark"):
        translated = translate(sql, engine)
        assert "strftime" not in translated.lower() and "list_contains" not in translated.lower()
        assert "IN ('a')" in translated


def test_each_team_line_is_converted_at_its_charge_months_rate_and_rounded_half_to_even():
    # 1 EUR = 1.25 USD in November, no rate in October: 10.000001 EUR -> 12.50000125 -> 12.500001 USD;
    # 0.000002 EUR -> 0.0000025 -> 0.000002 (half to even); October's EUR line is left out, USD kept as is
    request = ReviewRequest(
        start=dt.date(2026, 10, 1),
        end=dt.date(2026, 12, 1),
        currency="USD",
        fx_months={"2026-11": {"EUR": Decimal("1.25")}, "2026-10": {}},
    )
    sums = [
        ("a", "EUR", "2026-11", 10_000_001, 2, 5 * M),
        ("a", "EUR", "2026-10", 7 * M, 0, M),
        ("b", "USD", "2026-10", 3 * M, M, 2 * M),
    ]
    assert converted_team_sums(sums, request) == [
        ("a", "USD", "2026-11", 12_500_001, 2, 5 * M),
        ("b", "USD", "2026-10", 3 * M, M, 2 * M),
    ]
    assert allocation.per_team_frame(converted_team_sums(sums, request)).loc["a"].tolist() == [
        12_500_001,
        2,
        5 * M,
    ]
