"""review_sql.py's aggregates run in DuckDB over frames the review has already prepared in memory
(issue 28, item 1: one way to sum). The review's rows are read from Parquet grouped (duckdb_review.py),
then attributed (commitment_attribution.py) and converted at each charge month's rate (engine._converted);
what is summed of them, the totals, the breakdowns and the unused-commitment findings, is the same SQL
the Parquet readers and the translated engines run, over a relation `spend` of those rows.
"""

from __future__ import annotations

import os
import threading

import duckdb
import pandas as pd
import pyarrow as pa

# One in-memory database a process, each FrameSql a cursor of it (its own connection to the same
# database: registrations and settings are its own). Opening a database costs 40-80 ms on this machine, a
# cursor well under 1 ms; a review runs about fifteen statements on a few cursors. Per process id: a
# forked child (Celery's prefork, the benchmarks) opens its own.
_DATABASE: dict[int, duckdb.DuckDBPyConnection] = {}
_LOCK = threading.Lock()


def _database() -> duckdb.DuckDBPyConnection:
    with _LOCK:
        pid = os.getpid()
        if pid not in _DATABASE:
            _DATABASE.clear()
            database = duckdb.connect()
            database.execute("SET threads = 1")  # a few thousand grouped rows: no gain from more
            _DATABASE[pid] = database
        return _DATABASE[pid]


class FrameSql:
    """A DuckDB connection (UTC) on which frames are registered by name, then review_sql's statements run."""

    def __init__(self) -> None:
        self.connection = _database().cursor()
        self.connection.execute("SET TimeZone = 'UTC'")  # months and days of the charge starts in UTC

    def register(self, name: str, frame: pd.DataFrame) -> FrameSql:
        """`frame` as the relation `name`; text categories become VARCHAR (Arrow dictionaries), so that
        ORDER BY sorts text as Python does (by code point), whatever the categories' order."""
        self.connection.register(name, pa.Table.from_pandas(frame, preserve_index=False))
        return self

    def rows(self, sql: str, params: dict | None = None) -> list[tuple]:
        return self.connection.execute(sql, params or {}).fetchall()

    def close(self) -> None:
        self.connection.close()

    def __enter__(self) -> FrameSql:
        return self

    def __exit__(self, *_) -> None:
        self.close()
