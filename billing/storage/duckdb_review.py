"""The spend review's GPU aggregates as DuckDB SQL over a ParquetSpendStore (issue 28, item 1: a start).

The SQL lives here, once: GPU usage is what review.scope_masks calls it (usage rows with a GPU model,
not an unused commitment); sums are of exact int64 micro-units (DuckDB sums BIGINT into HUGEINT, so no
sum wraps or rounds); the breakdown labels are the review's (`(untagged)`, `unknown`, `other`). The
team scope of an engineer's granted access is part of the WHERE clause, so other teams' rows are never
aggregated. Not yet here: the attribution of unused commitments, the undetermined rule, FX and savings
(review/engine.py still computes the review; this module is compared with it to the cent).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence

import duckdb

from billing.review.engine import BREAKDOWNS
from billing.storage.import_datasets import ImportDatasets
from billing.storage.parquet import ParquetSpendStore

GPU_USAGE = "charge_category = 'usage' AND gpu <> '' AND commitment_status <> 'unused'"
LABELS = {
    "month": "strftime(charge_period_start, '%Y-%m')",
    "team": "CASE WHEN team = '' THEN '(untagged)' ELSE team END",
    "project": "CASE WHEN project = '' THEN '(untagged)' ELSE project END",
    "provider": "CASE WHEN provider = '' THEN 'unknown' ELSE provider END",
    "gpu": "gpu",
    "pricing_category": "CASE WHEN pricing_category = '' THEN 'other' ELSE pricing_category END",
}
READ = [
    "charge_period_start",
    "charge_category",
    "gpu",
    "commitment_status",
    "team",
    "project",
    "provider",
    "pricing_category",
    "billed_micros",
    "effective_micros",
    "list_micros",
    "gpu_hours_micros",
]
SUMS = "sum(billed_micros), sum(effective_micros), sum(list_micros), sum(gpu_hours_micros)"


def review_sums(
    store: ParquetSpendStore | ImportDatasets, start: dt.date, end: dt.date, allowed_teams: Sequence[str] = ()
) -> dict:
    """{"gpu": (billed, effective, list, gpu-hours) micro-units of GPU usage, "all_effective": the
    effective micro-units of every row, and each review breakdown name -> {label: (effective,
    gpu-hours)}} of the rows charged in [start, end)."""
    files = [str(path) for path in store.files(start, end)]
    empty = {"gpu": (0, 0, 0, 0), "all_effective": 0, **{name: {} for name in BREAKDOWNS}}
    if not files:
        return empty
    connection = duckdb.connect()
    try:
        connection.execute("SET TimeZone = 'UTC'")
        where, params = "charge_period_start >= ? AND charge_period_start < ?", [_utc(start), _utc(end)]
        if allowed_teams:
            where += f" AND team IN ({', '.join('?' * len(allowed_teams))})"
            params += list(allowed_teams)
        # only the columns the aggregates read, of the months asked; rows stored by two imports once
        unique = "DISTINCT ON (row_key_hi, row_key_lo) " if getattr(store, "keyed", False) else ""
        connection.execute(
            f"CREATE TEMP TABLE spend AS SELECT {unique}{', '.join(READ)} FROM read_parquet(?) WHERE {where}",  # noqa: S608 (fixed SQL; values are parameters)
            [files, *params],
        )
        gpu = connection.execute(f"SELECT {SUMS} FROM spend WHERE {GPU_USAGE}").fetchone()  # noqa: S608 (fixed SQL)
        everything = connection.execute("SELECT sum(effective_micros) FROM spend").fetchone()[0]
        found = {"gpu": tuple(int(v or 0) for v in gpu), "all_effective": int(everything or 0)}
        for name, key in BREAKDOWNS.items():
            rows = connection.execute(
                f"SELECT {LABELS[key]} AS label, sum(effective_micros), sum(gpu_hours_micros) FROM spend "  # noqa: S608 (fixed SQL)
                f"WHERE {GPU_USAGE} GROUP BY label ORDER BY label"
            ).fetchall()
            found[name] = {label: (int(effective), int(hours)) for label, effective, hours in rows}
        return found
    finally:
        connection.close()


def _utc(day: dt.date) -> dt.datetime:
    return dt.datetime.combine(day, dt.time(), tzinfo=dt.UTC)
