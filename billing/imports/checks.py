"""Checks of enriched rows against what SpendRecord can hold, before anything is written.

The database would refuse these rows anyway (a varchar too short, a numeric overflow, a CHECK
constraint), but as an IntegrityError with no row or column, and PostgreSQL would refuse a NUL
character that SQLite keeps. Each check is vectorized and raises BillingFileError naming the
file's row and column (`source_columns` maps a normalized column to the file's own name).
"""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal

import numpy as np
import pandas as pd
from django.db.models import CharField

from billing.imports.codes import codes_and_values, text_values
from billing.imports.records import BillingFileError
from billing.models import HOURS, SpendRecord

TEXT_LIMITS = {
    field.name: field.max_length
    for field in SpendRecord._meta.fields
    if isinstance(field, CharField) and field.name != "row_key"
}
HOURS_LIMIT = Decimal(10) ** (HOURS["max_digits"] - HOURS["decimal_places"])  # numeric(18, 6) < 1e12


def check_stored_bounds(rows: pd.DataFrame, *, file: str, source_columns: Mapping[str, str]) -> None:
    def fail(mask: np.ndarray, column: str, message: str) -> None:
        position = int(np.argmax(mask))
        row = int(rows["source_row"].iloc[position])
        raise BillingFileError(file, message, row=row, column=source_columns.get(column, column))

    for name, limit in TEXT_LIMITS.items():
        if name not in rows:
            continue
        codes, values = text_values(rows[name])
        lengths = np.fromiter(map(len, values), dtype=np.int64, count=len(values))[codes]
        if (lengths > limit).any():
            mask = lengths > limit
            fail(mask, name, f"is {int(lengths[mask][0]):,} characters long (at most {limit})")
    backwards = (rows["charge_period_end"] < rows["charge_period_start"]).to_numpy()
    if backwards.any():
        fail(backwards, "charge_period_end", "the charge period ends before it starts")
    hours = _decimal_flags(rows["gpu_hours"], lambda h: abs(h) >= HOURS_LIMIT)
    if hours.any():
        fail(hours, "consumed_quantity", f"{HOURS_LIMIT:.0e} GPU-hours or more in one line")
    negative = _decimal_flags(rows["instance_hours"], lambda h: h < 0) & ~rows["is_correction"].to_numpy(bool)
    if negative.any():
        fail(negative, "consumed_quantity", "negative usage hours on a line that is not a correction")


def _decimal_flags(values: pd.Series, predicate) -> np.ndarray:
    """predicate(value) for each row, evaluated once per distinct Decimal."""
    codes, uniques = codes_and_values(values)
    flags = np.array([bool(predicate(v)) for v in uniques] + [False], dtype=bool)
    return flags[codes]
