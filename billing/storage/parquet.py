"""Spend rows as Parquet, one dataset per charge month (`month=YYYY-MM/rows.parquet` under a folder).

Writing a month replaces its file whole (a restated month is replaced, never appended to); money and
hours stay the review's exact int64 micro-units, text stays text (no categories on disk).
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from billing.storage.months import month_codes, month_label, months_between


class ParquetSpendStore:
    def __init__(self, root: Path):
        self.root = Path(root)

    def path(self, month: str) -> Path:
        return self.root / f"month={month}" / "rows.parquet"

    def write(self, frame: pd.DataFrame) -> list[str]:
        """Each charge month of `frame` (review rows: review.REVIEW_COLUMNS and more) as its own file;
        the months written."""
        if frame.empty:
            return []
        plain = frame.assign(
            **{
                name: frame[name].astype(object).fillna("").astype(str)
                for name in frame.columns
                if frame[name].dtype == "category" or frame[name].dtype == object
            }
        )
        codes = month_codes(plain["charge_period_start"])
        written = []
        for code in np.unique(codes):
            month = month_label(int(code))
            target = self.path(month)
            target.parent.mkdir(parents=True, exist_ok=True)
            table = pa.Table.from_pandas(plain[codes == code], preserve_index=False)
            temporary = target.with_suffix(".tmp")
            pq.write_table(table, temporary, coerce_timestamps="us")  # bill times are whole seconds
            temporary.replace(target)  # a reader sees the old month or the new one, never half of it
            written.append(month)
        return written

    @staticmethod
    def may_repeat_rows(files: list[Path]) -> bool:
        return False  # one file per month, each row once

    def files(self, start: dt.date, end: dt.date) -> list[Path]:
        """The stored months [start, end) touches."""
        return [path for path in map(self.path, months_between(start, end)) if path.exists()]
