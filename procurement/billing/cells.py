"""Vectorized checks of one text column of a chunk; the first bad cell raises with file, row, column."""

from __future__ import annotations

import json

import pandas as pd

from pricing.providers.currencies import currency_problem
from procurement.billing.records import BillingFileError


def _first_bad(mask: pd.Series, first_row: int) -> int:
    return first_row + int(mask.to_numpy().argmax())


def timestamps(
    frame: pd.DataFrame, column: str, *, file: str, first_row: int, required: bool = True
) -> pd.Series:
    text = frame[column].str.strip()
    parsed = pd.to_datetime(text, utc=True, format="ISO8601", errors="coerce")
    empty = text == ""
    bad = parsed.isna() & ~empty
    if bad.any():
        row = _first_bad(bad, first_row)
        raise BillingFileError(file, f"unparseable date {text[bad].iloc[0]!r}", row=row, column=column)
    if required and empty.any():
        raise BillingFileError(
            file, "a date is required here", row=_first_bad(empty, first_row), column=column
        )
    return parsed


def numbers(
    frame: pd.DataFrame, column: str, *, file: str, first_row: int, required: bool = True
) -> pd.Series:
    """The column's text, stripped, once every non-empty cell is checked to be a finite decimal number."""
    text = frame[column].str.strip()
    parsed = pd.to_numeric(text.where(text != "", None), errors="coerce")
    empty = text == ""
    bad = (parsed.isna() & ~empty) | parsed.isin([float("inf"), float("-inf")])
    if bad.any():
        row = _first_bad(bad, first_row)
        raise BillingFileError(file, f"not a number: {text[bad].iloc[0]!r}", row=row, column=column)
    if required and empty.any():
        raise BillingFileError(
            file, "a number is required here", row=_first_bad(empty, first_row), column=column
        )
    return text


def choice(
    frame: pd.DataFrame,
    column: str,
    mapping: dict[str, str],
    *,
    file: str,
    first_row: int,
    default: str | None = None,
) -> pd.Series:
    """Map the column's values (case-insensitive) through `mapping`; "" becomes `default` (None: an error)."""
    key = frame[column].str.strip().str.lower()
    lowered = {k.lower(): v for k, v in mapping.items()}
    if default is not None:
        lowered[""] = default
    mapped = key.map(lowered)
    bad = mapped.isna()
    if bad.any():
        value = frame[column][bad].iloc[0]
        allowed = ", ".join(sorted(mapping))
        raise BillingFileError(
            file,
            f"unknown value {value!r} (expected one of: {allowed})",
            row=_first_bad(bad, first_row),
            column=column,
        )
    return mapped


def currencies(frame: pd.DataFrame, column: str, *, file: str, first_row: int) -> pd.Series:
    text = frame[column].str.strip().str.upper()
    for code in pd.unique(text):
        problem = "a currency is required here" if code == "" else currency_problem(code)
        if problem:
            raise BillingFileError(file, problem, row=_first_bad(text == code, first_row), column=column)
    return text


def json_objects(frame: pd.DataFrame, column: str, *, file: str, first_row: int) -> pd.Series:
    """Each cell as a dict ({} when empty); parsed once per distinct text, since tags repeat a lot."""
    text = frame[column]
    parsed: dict[str, dict] = {}
    for value in pd.unique(text):
        if value.strip() == "":
            parsed[value] = {}
            continue
        try:
            obj = json.loads(value)
        except json.JSONDecodeError as error:
            raise BillingFileError(
                file, f"not JSON: {error.msg}", row=_first_bad(text == value, first_row), column=column
            ) from None
        if not isinstance(obj, dict):
            raise BillingFileError(
                file,
                "must be a JSON object of key/value pairs",
                row=_first_bad(text == value, first_row),
                column=column,
            )
        parsed[value] = obj
    return text.map(parsed)


def require_columns(present: list[str], required: list[str], *, file: str) -> None:
    missing = [name for name in required if name not in present]
    if missing:
        raise BillingFileError(
            file, f"missing required column(s): {', '.join(missing)}", row=1, column=missing[0]
        )
