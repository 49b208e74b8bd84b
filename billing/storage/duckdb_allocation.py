"""The showback's sums (allocation_sql.TEAM_SUMS) run in DuckDB over the imports' Parquet datasets of a
period: the team scope and the review's filters in the WHERE clause, each row key once, the latest Cost
Explorer pull of each day (as every reader of duckdb_review.py). The utilization samples come from
PostgreSQL (models.GpuUtilization), handed to DuckDB as an Arrow table (allocation_frames.samples_table).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence

import pandas as pd

from billing.storage import allocation_sql
from billing.storage.allocation_frames import TeamSum, samples_table, team_sum
from billing.storage.duckdb_review import _bill, _connection, _pulls, _utc, repeated_rows_filter
from billing.storage.import_datasets import ImportDatasets
from billing.storage.parquet import ParquetSpendStore


def dataset_team_sums(
    store: ImportDatasets | ParquetSpendStore,
    start: dt.date,
    end: dt.date,
    utilization: pd.DataFrame | None,
    *,
    allowed_teams: Sequence[str] = (),
    filters: Mapping[str, str] | None = None,
) -> list[TeamSum]:
    """allocation_sql.TEAM_SUMS of the lines charged in [start, end) of the store's files, of
    `allowed_teams` only when given and of the review's `filters` (team, project, provider: value)."""
    files = [str(path) for path in store.files(start, end)]
    if not files:
        return []
    asked = {name: value for name, value in (filters or {}).items() if value}
    params = {"files": files, "start": _utc(start), "end": _utc(end), **_pulls(store, files), **asked}
    if allowed_teams:
        params["teams"] = list(allowed_teams)
    fill = {
        "scope": "AND list_contains($teams, team)" if allowed_teams else "",
        "filters": " ".join(allocation_sql.FILTERS[name] for name in asked),
    }
    connection = _connection()
    try:
        where = "charge_period_start >= $start AND charge_period_start < $end {scope} {filters}".format(
            **fill
        )
        unique = repeated_rows_filter(connection, params, where) if store.may_repeat_rows(files) else ""
        rows = allocation_sql.DATASET_ROWS.format(
            columns=allocation_sql.dataset_columns(), bill=_bill(params), unique=unique, **fill
        )
        connection.register("samples", samples_table(utilization))
        sql = allocation_sql.team_sums_sql(rows, "samples")
        found = connection.execute(sql, params).fetchall()
    finally:
        connection.close()
    return [team_sum(row) for row in found]
