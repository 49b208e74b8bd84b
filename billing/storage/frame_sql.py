"""review_sql.py's aggregates run in DuckDB over frames the review has already prepared in memory
(issue 28, item 1: one way to sum). The review's rows are read from Parquet grouped (duckdb_review.py),
then attributed (commitment_attribution.py) and converted at each charge month's rate (engine._converted);
what is summed of them, the totals, the breakdowns and the unused-commitment findings, is the same SQL
the Parquet readers and the translated engines run, over a relation `spend` of those rows.
"""

from __future__ import annotations

import duckdb
import pandas as pd
import pyarrow as pa


class FrameSql:
    """A DuckDB connection (UTC) on which frames are registered by name, then review_sql's statements run."""

    def __init__(self) -> None:
        self.connection = duckdb.connect()
        self.connection.execute("SET TimeZone = 'UTC'")  # months and days of the charge starts in UTC
        self.connection.execute("SET threads = 1")  # a few thousand grouped rows: no gain from more

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
