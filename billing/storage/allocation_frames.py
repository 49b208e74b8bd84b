"""The showback's sums (allocation_sql.py) run in DuckDB over frames in memory: finance/allocation.py's
own entry points (team_usage, idle_micros_per_row), its tests and bench. No Django here; the review's
path reads the bill itself (duckdb_allocation.dataset_team_sums). Samples (resource_id, hour,
utilization_pct) are handed to DuckDB as an Arrow table, `samples`.
"""

from __future__ import annotations

import duckdb
import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from billing.storage import allocation_sql

# (team label, currency, charge month "YYYY-MM", effective, idle, GPU-hours micro-units)
TeamSum = tuple[str, str, str, int, int, int]


def samples_table(utilization: pd.DataFrame | None) -> pa.Table:
    """The samples (resource_id, hour, utilization_pct) as Arrow, none when `utilization` is empty."""
    if utilization is None or utilization.empty:
        resources, hours, values = [], [], []
    else:
        resources = utilization["resource_id"].astype(object).fillna("").astype(str).tolist()
        hours = _utc_times(utilization["hour"])
        values = utilization["utilization_pct"].to_numpy(float)
    return pa.table(
        {
            "resource_id": pa.array(resources, pa.string()),
            "hour": pa.array(hours, pa.timestamp("us", tz="UTC"), from_pandas=True),
            "utilization_pct": pa.array(values, pa.float64()),
        }
    )


def frame_team_sums(rows: pd.DataFrame, utilization: pd.DataFrame | None) -> list[TeamSum]:
    """allocation_sql.TEAM_SUMS over `rows` (a frame of allocation_sql.ALLOCATION_READ) in memory."""
    connection = _memory_connection()
    try:
        connection.register("spend_lines", _lines_table(rows))
        connection.register("samples", samples_table(utilization))
        found = connection.execute(allocation_sql.team_sums_sql("spend_lines", "samples")).fetchall()
    finally:
        connection.close()
    return [team_sum(row) for row in found]


def frame_row_idle(rows: pd.DataFrame, utilization: pd.DataFrame | None) -> np.ndarray:
    """allocation_sql.ROW_IDLE's idle micro-units of each of `rows` (ALLOCATION_READ), in their order."""
    lines = _lines_table(rows)
    lines = lines.append_column("line", pa.array(np.arange(len(rows), dtype=np.int64)))
    connection = _memory_connection()
    try:
        connection.register("spend_lines", lines)
        connection.register("samples", samples_table(utilization))
        sql = allocation_sql.ROW_IDLE.format(keys="line", rows="spend_lines", samples="samples")
        found = dict(connection.execute(sql).fetchall())
    finally:
        connection.close()
    return np.array([found.get(line, 0) for line in range(len(rows))], dtype=np.int64)


def _lines_table(rows: pd.DataFrame) -> pa.Table:
    columns = {}
    for name in allocation_sql.ALLOCATION_READ:
        values = rows[name]
        if name.endswith("_micros"):
            columns[name] = pa.array(values.to_numpy(np.int64), pa.int64())
        elif name.startswith("charge_period"):
            columns[name] = pa.array(_utc_times(values), pa.timestamp("us", tz="UTC"), from_pandas=True)
        else:
            columns[name] = _text(values)
    return pa.table(columns)


def _text(values: pd.Series) -> pa.Array:
    """Text as Arrow strings, a missing value as "" (a category decoded by Arrow, not row by row)."""
    array = pa.Array.from_pandas(values)
    if pa.types.is_dictionary(array.type):
        array = array.dictionary_decode()
    return pc.fill_null(array.cast(pa.string()), "")


def _utc_times(values) -> np.ndarray:
    """Times as naive UTC datetime64[us] (NaT for a missing one), which Arrow takes as UTC."""
    return pd.DatetimeIndex(values).tz_convert("UTC").tz_localize(None).as_unit("us").to_numpy()


def team_sum(row: tuple) -> TeamSum:
    team, currency, month, effective, idle, hours = row
    return (team, currency, month, int(effective or 0), int(idle or 0), int(hours or 0))


def _memory_connection() -> duckdb.DuckDBPyConnection:
    connection = duckdb.connect()
    connection.execute("SET TimeZone = 'UTC'")
    return connection
