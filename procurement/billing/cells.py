"""Vectorized checks of one text column of a chunk; the first bad cell raises with file, row, column."""

from __future__ import annotations

import json
from decimal import Decimal, InvalidOperation

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


MONEY_LIMIT = 1e14  # numeric(20, 6): 14 digits before the point
QUANTITY_LIMIT = 1e12  # numeric(18, 6)
NUMBER_TEXT_LIMIT = 60  # characters: a decimal number in a bill is never longer


def numbers(
    frame: pd.DataFrame,
    column: str,
    *,
    file: str,
    first_row: int,
    required: bool = True,
    limit: float = MONEY_LIMIT,
) -> pd.Series:
    """The column's text, stripped, once every non-empty cell is checked to be a finite decimal number
    of magnitude under `limit` (what the stored field holds)."""  # fmt: skip
    text = frame[column].str.strip()
    too_long = text.str.len() > NUMBER_TEXT_LIMIT
    if too_long.any():
        raise BillingFileError(
            file, f"not a number: {len(text[too_long].iloc[0]):,} characters long",
            row=_first_bad(too_long, first_row), column=column,
        )  # fmt: skip
    parsed = pd.to_numeric(text.where(text != "", None), errors="coerce")
    empty = text == ""
    bad = (parsed.isna() & ~empty) | parsed.isin([float("inf"), float("-inf")]) | _not_decimal(text)
    if bad.any():
        row = _first_bad(bad, first_row)
        raise BillingFileError(file, f"not a number: {text[bad].iloc[0]!r}", row=row, column=column)
    huge = parsed.abs() >= limit
    if huge.any():
        raise BillingFileError(
            file, f"{text[huge].iloc[0]!r} is too large (under {limit:.0e} here)",
            row=_first_bad(huge, first_row), column=column,
        )  # fmt: skip
    if required and empty.any():
        raise BillingFileError(
            file, "a number is required here", row=_first_bad(empty, first_row), column=column
        )
    return text


def _not_decimal(text: pd.Series) -> pd.Series:
    """Cells pandas reads as a number but a decimal (Python's, PostgreSQL's numeric) may not: checked
    once per distinct text, since a bill repeats its amounts."""
    flags = {}
    for value in pd.unique(text):
        try:
            flags[value] = value != "" and not Decimal(value).is_finite()
        except InvalidOperation:
            flags[value] = True
    return text.map(flags).astype(bool)


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
        problem = _json_text_problem(obj)
        if problem:
            raise BillingFileError(file, problem, row=_first_bad(text == value, first_row), column=column)
        parsed[value] = obj
    return text.map(parsed)


def _json_text_problem(obj) -> str:
    """What PostgreSQL's jsonb refuses that json.loads accepts: a \\u0000 escape, a lone surrogate."""
    for text in _json_strings(obj):
        if "\x00" in text:
            return "holds a NUL character (\\u0000)"
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            return "holds an unpaired UTF-16 surrogate escape (\\ud800-\\udfff)"
    return ""


def _json_strings(obj):
    """Every key and string value of a parsed JSON document."""
    if isinstance(obj, str):
        yield obj
    elif isinstance(obj, dict):
        for key, value in obj.items():
            yield key
            yield from _json_strings(value)
    elif isinstance(obj, list):
        for value in obj:
            yield from _json_strings(value)


def require_columns(present: list[str], required: list[str], *, file: str) -> None:
    missing = [name for name in required if name not in present]
    if missing:
        raise BillingFileError(
            file, f"missing required column(s): {', '.join(missing)}", row=1, column=missing[0]
        )
