"""Benchmark: import 1,000,000 FOCUS rows (CSV and Parquet) and build the spend review over them.

    .venv/bin/python benchmarks/billing_bench.py [--rows 1000000]

Uses DATABASE_URL when set (give it a throwaway PostgreSQL database: it is migrated and its billing
imports deleted), else a temporary SQLite file. The rows are realistic FOCUS 1.2 usage lines: 2,000 resources
over 11 instance types of the bundled catalog, daily charge periods, four pricing categories, JSON tags
for 8 teams. Printed, each phase in its own process so that its peak memory is its own:

- pandas alone reading the file (`read_csv(dtype=str)` / `read_parquet`): the floor;
- the import (readers, validation, catalog mapping, row keys, the Parquet dataset, the count of rows
  new by key; the file read ahead and the dataset written on threads of their own, the checksum on a
  third while the bounds are scanned, so on this 2-core machine its wall time is below its CPU time):
  rows/s and the ratio against the pandas read;
- the re-import (0 inserted);
- the review: reading the rows into the engine frame (DuckDB over the import's dataset, pre-aggregated)
  and the engine itself, twice: the first review after the import and a later one over another period;
- the baseline (issue 28): DuckDB computing the review's aggregates (totals and the six breakdowns by
  month, team, project, provider, instance type and pricing category, one GROUPING SETS query) straight
  from the same input file, CSV against CSV and Parquet against Parquet, in a process of its own with
  its start-up excluded, as the import and review are timed; printed as the ratio of import plus first
  review to it (target: at most 2x);
- the floor: DuckDB alone writing the file's review columns as a month-partitioned Parquet dataset (no
  validation, mapping, keys or database), plus the first review, as a ratio to the baseline: the least any
  import that keeps its own dataset can reach;
- the CPU seconds of the import and of the baseline (every thread of the phase's process: on a shared
  machine less noisy than the wall time);
- peak RSS of each phase (target: import and review under 512 MiB each, flat from 1M to 5M rows).

Each import writes its Parquet dataset (billing/storage/datasets.py) under a temporary
BILLING_DATASET_DIR, its only copy of the bill's lines (issue 28: no PostgreSQL row per line); the
review reads it through DuckDB (billing/storage/duckdb_review.py).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import multiprocessing as mp
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
TYPES = [  # (instance type, on-demand USD/h, us-east-1, bundled catalog)
    ("p5.48xlarge", 55.04),
    ("p4d.24xlarge", 21.957642),
    ("p4de.24xlarge", 27.44705),
    ("g6e.xlarge", 1.861),
    ("g6e.12xlarge", 10.49264),
    ("g6.xlarge", 0.8048),
    ("g6.12xlarge", 4.6016),
    ("g5.xlarge", 1.006),
    ("g5.48xlarge", 16.288),
    ("p3.2xlarge", 3.06),
    ("m7i.large", 0.1008),
]
CATEGORIES = ["Standard", "Dynamic", "Committed", "Standard"]


def make_frame(rows: int, seed: int = 1) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    resource_ids = rng.integers(0, 2000, rows)
    types = np.array([t for t, _ in TYPES])[resource_ids % len(TYPES)]
    rates = np.array([r for _, r in TYPES])[resource_ids % len(TYPES)]
    days = pd.Timestamp("2026-01-01", tz="UTC") + pd.to_timedelta(rng.integers(0, 180, rows), unit="D")
    hours = rng.integers(1, 25, rows)
    category = np.array(CATEGORIES)[resource_ids % 4]
    factor = np.select([category == "Dynamic", category == "Committed"], [0.35, 0.6], 1.0)
    cost = np.round(hours * rates * factor, 6)
    teams = np.array([json.dumps({"team": f"team-{i}", "project": f"p{i % 3}"}) for i in range(8)])
    iso = days.strftime("%Y-%m-%dT%H:%M:%SZ")
    return pd.DataFrame(
        {
            "BillingAccountId": "111122223333",
            "BillingCurrency": "USD",
            "ChargePeriodStart": iso,
            "ChargePeriodEnd": (days + pd.Timedelta(days=1)).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "ChargeCategory": "Usage",
            "ChargeClass": "",
            "BilledCost": cost,
            "EffectiveCost": cost,
            "ListCost": np.round(hours * rates, 6),
            "PricingCategory": category,
            "ConsumedQuantity": hours,
            "ConsumedUnit": "Hours",
            "ProviderName": "AWS",
            "RegionId": "us-east-1",
            "ResourceId": np.char.add("i-", resource_ids.astype(str)),
            "ServiceCategory": "Compute",
            "Tags": teams[resource_ids % 8],
            "x_UsageType": np.char.add("USE1-BoxUsage:", types),
        }
    )


def write_files(rows: int, csv_path: str, parquet_path: str) -> None:
    frame = make_frame(rows)
    frame.to_csv(csv_path, index=False)
    frame.astype(str).to_parquet(parquet_path, index=False)


def _setup_django(db_path: str) -> None:
    os.environ.setdefault("DATABASE_URL", f"sqlite:///{db_path}")
    os.environ.setdefault("DEBUG", "1")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "gpuledger.settings.local")
    import django

    django.setup()


def _start_up() -> float:
    """Process start-up, outside the import's and the review's timers as the baseline's is outside its own
    (its `import duckdb`, `duckdb.connect()` and time zone come before its timer): the database connection,
    one DuckDB connection as the storage opens them (closed again) and the readers' modules. The seconds it
    took. The catalog, the tag mapping and every query of the import or review stay timed."""
    started = time.perf_counter()
    import pyarrow.csv  # noqa: F401
    import pyarrow.pandas_compat  # noqa: F401
    import pyarrow.parquet  # noqa: F401
    from django.db import connection

    from billing.storage.duckdb_review import _connection

    connection.ensure_connection()
    _connection().close()
    return time.perf_counter() - started


def _peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def phase_pandas(path: str, queue) -> None:
    start = time.perf_counter()
    frame = (
        pd.read_parquet(path)
        if path.endswith(".parquet")
        else pd.read_csv(path, dtype=str, keep_default_na=False)
    )
    queue.put({"seconds": time.perf_counter() - start, "rows": len(frame), "peak_mib": _peak_mib()})


BASELINE_SQL = """
SELECT strftime(CAST(ChargePeriodStart AS TIMESTAMPTZ), '%Y-%m') AS month,
       coalesce(json_extract_string(Tags, '$.team'), '') AS team,
       coalesce(json_extract_string(Tags, '$.project'), '') AS project,
       ProviderName AS provider, x_UsageType AS usage_type, PricingCategory AS pricing_category,
       sum(CAST(BilledCost AS DECIMAL(20, 6))) AS billed, sum(CAST(EffectiveCost AS DECIMAL(20, 6))) AS effective,
       sum(CAST(ListCost AS DECIMAL(20, 6))) AS list, sum(CAST(ConsumedQuantity AS DECIMAL(18, 6))) AS hours,
       count(*) AS rows
FROM {source}
GROUP BY GROUPING SETS ((), (month), (team), (project), (provider), (usage_type), (pricing_category))
"""


def _duckdb_reading(path: str):
    """A fresh DuckDB connection (UTC) and the relation that reads the input file: Parquet as typed, CSV all
    as text, as the import reads it (cast where summed)."""
    import duckdb

    connection = duckdb.connect()
    connection.execute("SET TimeZone = 'UTC'")
    if path.endswith(".parquet"):
        return connection, f"read_parquet('{path}')"
    return connection, f"read_csv('{path}', header = true, all_varchar = true)"


def phase_duckdb_baseline(path: str, queue) -> None:
    """DuckDB alone: the review's sums and breakdowns straight from the input file (all text read as
    text, as the import reads it, and cast where summed)."""
    connection, source = _duckdb_reading(path)
    start, cpu = time.perf_counter(), time.process_time()
    groups = connection.execute(BASELINE_SQL.format(source=source)).fetchall()
    total = next(row for row in groups if all(v is None for v in row[:6]))
    queue.put(
        {
            "seconds": time.perf_counter() - start,
            "cpu_seconds": time.process_time() - cpu,
            "groups": len(groups),
            "effective": str(total[7]),
            "peak_mib": _peak_mib(),
        }
    )


# The floor of any import that keeps its own dataset (issue 28: "a target below its physical floor: measure
# the floor"): DuckDB alone reading the file, casting the columns the review sums, and writing them as Parquet
# partitioned by month, with no validation, no catalog mapping, no row keys and no database. An import that
# writes a dataset cannot be faster than this; with the first review on top it is the least the target's
# "import + first review" can take.
FLOOR_SQL = """
COPY (
  SELECT CAST(ChargePeriodStart AS TIMESTAMPTZ) AS charge_start, CAST(ChargePeriodEnd AS TIMESTAMPTZ) AS charge_end,
         strftime(CAST(ChargePeriodStart AS TIMESTAMPTZ), '%Y-%m') AS month, ProviderName AS provider,
         x_UsageType AS usage_type, PricingCategory AS pricing_category, ResourceId AS resource_id, Tags AS tags,
         coalesce(json_extract_string(Tags, '$.team'), '') AS team,
         CAST(BilledCost AS DECIMAL(20, 6)) AS billed, CAST(EffectiveCost AS DECIMAL(20, 6)) AS effective,
         CAST(ListCost AS DECIMAL(20, 6)) AS list, CAST(ConsumedQuantity AS DECIMAL(18, 6)) AS hours
  FROM {source}
) TO '{target}' (FORMAT parquet, COMPRESSION zstd, PARTITION_BY (month))
"""


def phase_duckdb_floor(path: str, target: str, queue) -> None:
    """DuckDB alone writing the file's review columns as a month-partitioned Parquet dataset (FLOOR_SQL)."""
    connection, source = _duckdb_reading(path)
    start = time.perf_counter()
    connection.execute(FLOOR_SQL.format(source=source, target=target))
    queue.put({"seconds": time.perf_counter() - start, "peak_mib": _peak_mib()})


def phase_import(path: str, db_path: str, queue) -> None:
    _setup_django(db_path)
    from billing.imports.importer import import_files
    from billing.storage import store

    store.check_spend_after_commit = lambda import_id: (
        None
    )  # the anomaly and budget re-check is not the import
    start_up = _start_up()
    start, cpu = time.perf_counter(), time.process_time()
    result = import_files([Path(path)], fmt="focus")
    seconds, cpu_seconds = time.perf_counter() - start, time.process_time() - cpu
    # the post-import task's first step (billing.tasks): the daily summary, after the commit; printed on
    # its own, outside "import + first review" (the review reads the files and does not wait for it)
    from billing.models import BillingImport
    from billing.storage.daily_spend import daily_spend_record

    summary_start = time.perf_counter()
    for billing_import in BillingImport.objects.filter(pk__in=result.imports):
        daily_spend_record(billing_import)
    queue.put(
        {
            "seconds": seconds,
            "summary_seconds": time.perf_counter() - summary_start,
            "cpu_seconds": cpu_seconds,  # every thread of the import's process
            "start_up_seconds": start_up,
            "inserted": result.inserted,
            "unchanged": result.unchanged,
            "errors": result.errors,
            "peak_mib": _peak_mib(),
        }
    )


def phase_review(db_path: str, queue) -> None:
    """The first review after the import, and a second review of the same data, another period (the
    review cache is not involved: the frame is read and the engine run each time)."""
    _setup_django(db_path)
    from billing.review import selectors
    from billing.review.engine import spend_review
    from billing.review.service import make_request

    start_up = _start_up()
    figures = {}
    for label, start in (("first", dt.date(2026, 1, 1)), ("later", dt.date(2026, 1, 2))):
        request = make_request(start=start, end=dt.date(2026, 7, 1))
        started = time.perf_counter()
        frame = selectors.spend_frame(request)
        read_s = time.perf_counter() - started
        prices = selectors.price_context(frame)
        started = time.perf_counter()
        review = spend_review(frame, request, prices=prices, utilization=None)
        figures[label] = {
            "read_seconds": read_s,
            "engine_seconds": time.perf_counter() - started,
            "rows": len(frame),
            "effective_cost": review["totals"]["effective_cost"],
        }
    queue.put({**figures, "start_up_seconds": start_up, "peak_mib": _peak_mib()})


def phase_review_per_line(db_path: str, queue) -> None:
    """The review as it was before issue 28 item 1's pre-aggregation: one engine row per bill line read
    from the same datasets (duckdb_review.engine_rows, grouped=False), for the before/after of one run."""
    _setup_django(db_path)
    from billing.review import selectors
    from billing.review.engine import spend_review
    from billing.review.service import make_request

    request = make_request(start=dt.date(2026, 1, 1), end=dt.date(2026, 7, 1))
    started = time.perf_counter()
    frame = selectors.dataset_rows(request.previous[0], request.end, grouped=False)
    read_s = time.perf_counter() - started
    prices = selectors.price_context(frame)
    started = time.perf_counter()
    review = spend_review(frame, request, prices=prices, utilization=None)
    queue.put(
        {
            "read_seconds": read_s,
            "engine_seconds": time.perf_counter() - started,
            "rows": len(frame),
            "effective_cost": review["totals"]["effective_cost"],
            "peak_mib": _peak_mib(),
        }
    )


def run(target, *args) -> dict:
    queue = mp.get_context("fork").Queue()
    process = mp.get_context("fork").Process(target=target, args=(*args, queue))
    process.start()
    result = queue.get()
    process.join()
    return result


def prepare_database(db_path: str) -> None:
    _setup_django(db_path)
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    from pricing.models import InstanceType

    if not InstanceType.objects.exists():
        call_command("load_catalog", verbosity=0)
    _clear()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--formats", default="csv,parquet", help="csv, parquet or both (comma-separated)")
    parser.add_argument(
        "--files",
        default="",
        help="a folder for the input files (focus.csv, focus.parquet): written there when missing, else reused "
        "as they are (the same --rows: make_frame's seed is fixed), so that two trees' runs read the same files",
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="billing-bench-") as folder:
        db_path = os.path.join(folder, "bench.sqlite3")
        os.environ["BILLING_DATASET_DIR"] = os.path.join(folder, "datasets")
        started = time.perf_counter()
        files = args.files or folder
        csv_path, parquet_path = os.path.join(files, "focus.csv"), os.path.join(files, "focus.parquet")
        if not (args.files and os.path.exists(csv_path) and os.path.exists(parquet_path)):
            # in a process of its own: each phase is forked from this one, whose memory it would inherit
            run(lambda queue: (write_files(args.rows, csv_path, parquet_path), queue.put({})))
        print(
            f"rows: {args.rows:,} (files written in {time.perf_counter() - started:.1f} s; "
            f"CSV {os.path.getsize(csv_path) / 2**20:.0f} MiB, Parquet {os.path.getsize(parquet_path) / 2**20:.0f} MiB)"
        )
        run(lambda queue: (prepare_database(db_path), queue.put({})))
        formats = args.formats.split(",")
        for label, path in (("CSV", csv_path), ("Parquet", parquet_path)):
            if label.lower() not in formats:
                continue
            plain = run(phase_pandas, path)
            baseline = run(phase_duckdb_baseline, path)
            print(
                f"{label}: DuckDB baseline (the review's sums and breakdowns straight from the file) "
                f"{baseline['seconds']:.2f} s (CPU {baseline['cpu_seconds']:.2f} s), {baseline['groups']} groups, effective {baseline['effective']} USD, "
                f"peak {baseline['peak_mib']:.0f} MiB"
            )
            floor = run(phase_duckdb_floor, path, os.path.join(folder, f"floor-{label.lower()}"))
            imported = run(phase_import, path, db_path)
            again = run(phase_import, path, db_path)
            ratio = imported["seconds"] / plain["seconds"]
            print(
                f"{label}: pandas read {plain['seconds']:.2f} s ({args.rows / plain['seconds']:,.0f} rows/s, "
                f"peak {plain['peak_mib']:.0f} MiB)"
            )
            print(
                f"{label}: import {imported['seconds']:.2f} s (CPU {imported['cpu_seconds']:.2f} s, all threads) = "
                f"{args.rows / imported['seconds']:,.0f} rows/s, "
                f"{ratio:.1f}x the pandas read, inserted {imported['inserted']:,}, peak {imported['peak_mib']:.0f} MiB"
                f"{' ERRORS ' + str(imported['errors']) if imported['errors'] else ''}"
            )
            print(
                f"{label}: process start-up before the import's timer (excluded, as the baseline's connect is) "
                f"{imported['start_up_seconds']:.2f} s"
            )
            print(
                f"{label}: then the post-import task's daily summary (after the commit, not in the ratio) "
                f"{imported['summary_seconds']:.2f} s"
            )
            print(
                f"{label}: re-import {again['seconds']:.2f} s, inserted {again['inserted']:,}, unchanged {again['unchanged']:,}"
            )
            if label == "CSV":
                per_line = run(phase_review_per_line, db_path)
                print(
                    f"review per bill line (before): read {per_line['rows']:,} rows in {per_line['read_seconds']:.2f} s, "
                    f"engine {per_line['engine_seconds']:.2f} s, peak {per_line['peak_mib']:.0f} MiB "
                    f"(effective {per_line['effective_cost']} USD); import + it "
                    f"{(imported['seconds'] + per_line['read_seconds'] + per_line['engine_seconds']) / baseline['seconds']:.1f}x "
                    "the DuckDB baseline"
                )
            review = run(phase_review, db_path)
            for which in ("first", "later"):
                one = review[which]
                print(
                    f"review ({which}): read {one['rows']:,} rows in {one['read_seconds']:.2f} s, engine "
                    f"{one['engine_seconds']:.2f} s, total {one['read_seconds'] + one['engine_seconds']:.2f} s "
                    f"(effective {one['effective_cost']} USD)"
                )
            print(f"review: peak {review['peak_mib']:.0f} MiB")
            print(f"review: process start-up before its timer (excluded) {review['start_up_seconds']:.2f} s")
            first = imported["seconds"] + review["first"]["read_seconds"] + review["first"]["engine_seconds"]
            print(
                f"{label}: import + first review {first:.2f} s = {first / baseline['seconds']:.1f}x the DuckDB "
                f"baseline (target: at most 2x)"
            )
            least = floor["seconds"] + review["first"]["read_seconds"] + review["first"]["engine_seconds"]
            print(
                f"{label}: floor: DuckDB alone writing the month-partitioned dataset {floor['seconds']:.2f} s "
                f"(peak {floor['peak_mib']:.0f} MiB), + the first review {least:.2f} s = "
                f"{least / baseline['seconds']:.1f}x the baseline: the least any import that keeps a dataset can reach"
            )
            run(lambda queue: (_setup_django(db_path), _clear(), queue.put({})))


def _clear() -> None:
    """No billing import and no dataset: each import starts on the same empty store."""
    import shutil

    from django.conf import settings

    from billing.models import BillingImport

    BillingImport.objects.all().delete()
    shutil.rmtree(settings.BILLING_DATASET_DIR, ignore_errors=True)  # unrecorded files are never read


if __name__ == "__main__":
    main()
