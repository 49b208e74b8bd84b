"""Checks of enriched rows against what a bill line may hold (storage/datasets.py's TEXT_LIMITS and
HOURS_LIMIT), before anything is written.

A dataset would keep any text and any hours; the limits are kept so that a file the import refused while
bill lines were PostgreSQL rows is still refused (a text that long, or that many hours in one line, is a
broken or hostile file). Each check is vectorized and raises BillingFileError
naming the file's row and column (`source_columns` maps a normalized column to the file's own name).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from billing.imports.codes import codes_and_values, text_values
from billing.imports.records import BillingFileError
from billing.storage.datasets import HOURS_LIMIT, TEXT_LIMITS


def check_stored_bounds(rows: pd.DataFrame, *, file: str, source_columns: Mapping[str, str]) -> None:
    def fail(mask: np.ndarray, column: str, message: str) -> None:
        position = int(np.argmax(mask))
        row = int(rows["source_row"].iloc[position])
        raise BillingFileError(file, message, row=row, column=source_columns.get(column, column))

    for name, limit in TEXT_LIMITS.items():
        if name not in rows:
            continue
        codes, values = text_values(rows[name])
        lengths = np.fromiter(map(len, values), dtype=np.int64, count=len(values))
        if (lengths > limit).any():  # the rows looked at only when a distinct text is too long
            lengths = lengths[codes]
            mask = lengths > limit
            if mask.any():
                fail(mask, name, f"is {int(lengths[mask][0]):,} characters long (at most {limit})")
    backwards = (rows["charge_period_end"] < rows["charge_period_start"]).to_numpy()
    if backwards.any():
        fail(backwards, "charge_period_end", "the charge period ends before it starts")
    hours = _decimal_flags(rows["gpu_hours"], lambda h: abs(h) >= HOURS_LIMIT)
    if hours.any():
        fail(hours, "consumed_quantity", f"{HOURS_LIMIT:.0e} GPU-hours or more in one line")
    # a quantity may now be up to 1e32 (datasets.QUANTITY_TYPE), hours stay int64 micro-units under 1e12
    hours = _decimal_flags(rows["instance_hours"], lambda h: abs(h) >= HOURS_LIMIT)
    if hours.any():
        fail(hours, "consumed_quantity", f"{HOURS_LIMIT:.0e} instance-hours or more in one line")
    negative = _decimal_flags(rows["instance_hours"], lambda h: h < 0) & ~rows["is_correction"].to_numpy(bool)
    if negative.any():
        fail(negative, "consumed_quantity", "negative usage hours on a line that is not a correction")


def _decimal_flags(values: pd.Series, predicate) -> np.ndarray:
    """predicate(value) for each row, evaluated once per distinct Decimal."""
    codes, uniques = codes_and_values(values)
    flags = np.array([bool(predicate(v)) for v in uniques] + [False], dtype=bool)
    return flags[codes]
