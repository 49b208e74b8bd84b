"""Benchmark: one month of many bill lines (issue 28: "a 50M-row month imported and reviewed").

    .venv/bin/python benchmarks/billing_month_bench.py [--rows 50000000] [--folder /tmp]

billing_bench.py's FOCUS lines (its 11 instance types, four pricing categories, 8 teams' tags), all in
January 2026 and over 200,000 resources, so that a month's lines are nearly all distinct (hourly usage
of a large fleet; billing_bench's 2,000 resources would repeat every line many times at 50M). DuckDB
writes them straight to Parquet files of text columns, one per 20M lines (records.MAX_ROWS_PER_FILE:
an import refuses more, as a provider splits a large export into parts) (pandas would take far longer and hold the
month in memory). Then, each in a process of its own as in billing_bench.py: DuckDB computing the
review's aggregates straight from the file (the baseline), the import, the re-import, the review; and
the import's dataset on disk. Printed as seconds, peak RSS and the ratio against the baseline of the
same run. The generated file and the dataset are deleted at the end.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

import duckdb

sys.path.insert(0, str(Path(__file__).resolve().parent))
import billing_bench as bench  # noqa: E402 (the folder above on the path first)

MAX_ROWS_PER_FILE = 20_000_000  # billing/imports/records.py: an import refuses a file of more

GENERATE = """
COPY (
  WITH drawn AS (
    SELECT (hash(i, 1) % 200000)::INT AS res, (hash(i, 2) % 31)::INT AS day, (1 + hash(i, 3) % 24)::INT AS hours
    FROM range({first}, {end}) AS t(i)
  ), lines AS (
    SELECT res, hours, ([{types}])[res % 11 + 1] AS itype, ([{rates}])[res % 11 + 1] AS rate,
           ([{categories}])[res % 4 + 1] AS category, TIMESTAMP '2026-01-01' + to_days(day) AS ts FROM drawn
  ), priced AS (
    SELECT *, CASE category WHEN 'Dynamic' THEN 0.35 WHEN 'Committed' THEN 0.6 ELSE 1.0 END AS factor
    FROM lines
  )
  SELECT '111122223333' AS BillingAccountId, 'USD' AS BillingCurrency,
         strftime(ts, '%Y-%m-%dT%H:%M:%SZ') AS ChargePeriodStart,
         strftime(ts + INTERVAL 1 DAY, '%Y-%m-%dT%H:%M:%SZ') AS ChargePeriodEnd,
         'Usage' AS ChargeCategory, '' AS ChargeClass,
         CAST(round(hours * rate * factor, 6) AS DECIMAL(18, 6))::VARCHAR AS BilledCost,
         CAST(round(hours * rate * factor, 6) AS DECIMAL(18, 6))::VARCHAR AS EffectiveCost,
         CAST(round(hours * rate, 6) AS DECIMAL(18, 6))::VARCHAR AS ListCost,
         category AS PricingCategory, hours::VARCHAR AS ConsumedQuantity, 'Hours' AS ConsumedUnit,
         'AWS' AS ProviderName, 'us-east-1' AS RegionId, 'i-' || res AS ResourceId,
         'Compute' AS ServiceCategory,
         '{{"team": "team-' || (res % 8) || '", "project": "p' || (res % 8 % 3) || '"}}' AS Tags,
         'USE1-BoxUsage:' || itype AS x_UsageType
  FROM priced
) TO '{path}' (FORMAT parquet, ROW_GROUP_SIZE 1000000)
"""


def generate(first: int, end: int, path: str) -> None:
    """Lines number `first` to `end` (excluded) of the month, into `path`."""
    connection = duckdb.connect()
    connection.execute("SET TimeZone = 'UTC'")
    connection.execute(
        GENERATE.format(
            first=first,
            end=end,
            path=path,
            types=", ".join(f"'{name}'" for name, _ in bench.TYPES),
            rates=", ".join(str(rate) for _, rate in bench.TYPES),
            categories=", ".join(f"'{name}'" for name in bench.CATEGORIES),
        )
    )


def phase_baseline(paths: list[str], queue) -> None:
    """billing_bench.phase_duckdb_baseline over every part of the month."""
    connection = duckdb.connect()
    connection.execute("SET TimeZone = 'UTC'")
    start = time.perf_counter()
    groups = connection.execute(bench.BASELINE_SQL.format(source=f"read_parquet({paths!r})")).fetchall()
    queue.put({"seconds": time.perf_counter() - start, "groups": len(groups), "peak_mib": bench._peak_mib()})


def phase_import_all(paths: list[str], db_path: str, queue) -> None:
    """billing_bench.phase_import over every part of the month, one import each, in one process."""
    bench._setup_django(db_path)
    from billing.imports.importer import import_files
    from billing.storage import store

    store.check_spend_after_commit = lambda import_id: None  # the re-check is not the import
    start = time.perf_counter()
    result = import_files([Path(path) for path in paths], fmt="focus")
    queue.put(
        {
            "seconds": time.perf_counter() - start,
            "inserted": result.inserted,
            "unchanged": result.unchanged,
            "errors": result.errors,
            "peak_mib": bench._peak_mib(),
        }
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=50_000_000)
    parser.add_argument("--folder", default=tempfile.gettempdir(), help="where the file and dataset go")
    args = parser.parse_args()
    folder = tempfile.mkdtemp(prefix="billing-month-bench-", dir=args.folder)
    try:
        os.environ["BILLING_DATASET_DIR"] = os.path.join(folder, "datasets")
        db_path = os.path.join(folder, "bench.sqlite3")
        started = time.perf_counter()
        paths = []
        for first in range(0, args.rows, MAX_ROWS_PER_FILE):  # an export over the limit comes in parts
            paths.append(os.path.join(folder, f"month-part{len(paths) + 1}.parquet"))
            generate(first, min(first + MAX_ROWS_PER_FILE, args.rows), paths[-1])
        print(
            f"rows: {args.rows:,} in one month, {len(paths)} file(s) (Parquet "
            f"{sum(os.path.getsize(p) for p in paths) / 2**20:.0f} MiB, written in "
            f"{time.perf_counter() - started:.0f} s); load average {os.getloadavg()[0]:.1f}",
            flush=True,
        )
        bench.run(lambda queue: (bench.prepare_database(db_path), bench._clear(), queue.put({})))
        baseline = bench.run(phase_baseline, paths)
        print(f"DuckDB baseline {baseline['seconds']:.1f} s, peak {baseline['peak_mib']:.0f} MiB", flush=True)
        imported = bench.run(phase_import_all, paths, db_path)
        disk = sum(f.stat().st_size for f in Path(folder, "datasets").rglob("*.parquet"))
        print(
            f"import {imported['seconds']:.1f} s = {args.rows / imported['seconds']:,.0f} rows/s, inserted "
            f"{imported['inserted']:,}, peak {imported['peak_mib']:.0f} MiB; dataset {disk / 2**20:.0f} MiB on disk"
            f"{' ERRORS ' + str(imported['errors']) if imported['errors'] else ''}",
            flush=True,
        )
        again = bench.run(phase_import_all, paths, db_path)
        print(f"re-import {again['seconds']:.1f} s, unchanged {again['unchanged']:,}", flush=True)
        review = bench.run(bench.phase_review, db_path)
        for which in ("first", "later"):
            one = review[which]
            print(
                f"review ({which}): read {one['rows']:,} rows in {one['read_seconds']:.1f} s, engine "
                f"{one['engine_seconds']:.1f} s (effective {one['effective_cost']} USD)",
                flush=True,
            )
        first = imported["seconds"] + review["first"]["read_seconds"] + review["first"]["engine_seconds"]
        print(
            f"review: peak {review['peak_mib']:.0f} MiB; import + first review {first:.1f} s = "
            f"{first / baseline['seconds']:.1f}x the DuckDB baseline; load average {os.getloadavg()[0]:.1f}"
        )
        bench.run(lambda queue: (bench._setup_django(db_path), bench._clear(), queue.put({})))
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
