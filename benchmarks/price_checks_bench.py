"""What the live-refresh bookkeeping adds to an ingest batch, as ratios against a step measured in the
same run.

    .venv/bin/python benchmarks/price_checks_bench.py [--rows 200000]

Two costs issue 21 added to every batch, both plain numpy over the batch's columns (no database):

1. ``pricing.ingest._changes`` (how many prices are added or changed, run on every ingest) against
   ``pricing.ingest._statuses`` (the suspect rule, which every ingest already ran);
2. ``pricing.price_checks.price_records_screen`` (the bad-data rules, run on live refreshes only)
   against building the same number of PriceRecord objects, the least a reader spends per row.

Synthetic batch: 5,000 series (offer x pricing model) of hourly prices, 40 hours each at 200,000 rows.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import sys
import time
from decimal import Decimal
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "gpuledger.settings.local")
os.environ.setdefault("DEBUG", "1")

import django  # noqa: E402

django.setup()

import numpy as np  # noqa: E402

from pricing.ingest import _amounts, _changes, _Columns, _statuses  # noqa: E402
from pricing.price_checks import CheckContext, Refusals, price_records_screen  # noqa: E402
from pricing.providers.records import InstanceTypeRecord, PriceRecord  # noqa: E402

SERIES = 5000
BASE = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)


def timed(call) -> float:
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        call()
        best = min(best, time.perf_counter() - start)
    return best


def batch_columns(rows: int) -> _Columns:
    columns = _Columns()
    columns.series_index = [i % SERIES for i in range(rows)]
    columns.observed_at = [BASE + dt.timedelta(hours=i // SERIES) for i in range(rows)]
    columns.amount = [Decimal("1.5") + Decimal(i % 7) for i in range(rows)]
    return columns


def records(rows: int) -> list[PriceRecord]:
    instances = [
        InstanceTypeRecord(provider="azure", name=f"Standard_X{i}", gpu_name="H100", gpu_count=Decimal(8))
        for i in range(SERIES)
    ]
    return [
        PriceRecord(
            instance=instances[i % SERIES],
            region="eastus",
            zone="",
            pricing_model="on_demand",
            price_per_hour=Decimal("98.32") + i % 7,
            currency="USD",
            observed_at=BASE,
            source="bench",
        )
        for i in range(rows)
    ]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=200_000)
    rows = parser.parse_args().rows
    columns = batch_columns(rows)
    amount = _amounts(columns)
    reference, reference_at = np.full(SERIES, np.nan), [None] * SERIES
    statuses_s = timed(lambda: _statuses(columns, amount, reference))
    changes_s = timed(lambda: _changes(columns, amount, reference, reference_at))
    print(
        f"{rows:,} rows: suspect rule {statuses_s:.3f} s, added/changed {changes_s:.3f} s, "
        f"ratio {changes_s / statuses_s:.2f}x"
    )
    built_s = timed(lambda: records(rows))
    batch = records(rows)
    context = CheckContext(currencies=frozenset({"USD"}))
    screen_s = timed(lambda: price_records_screen(batch, context, Refusals()))
    print(
        f"{rows:,} rows: building the records {built_s:.3f} s, bad-data rules {screen_s:.3f} s, "
        f"ratio {screen_s / built_s:.2f}x"
    )


if __name__ == "__main__":
    main()
