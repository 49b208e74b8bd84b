"""Vectorized checks of one text column of a chunk; the first bad cell raises with file, row, column.

Each check runs once per distinct value of the column (codes.py) and names the first row holding a
bad one. A categorical column comes back categorical, a plain one as plain text.
"""

from __future__ import annotations

import json
from decimal import Decimal, InvalidOperation

import numpy as np
import pandas as pd

from billing.imports.codes import coded, first_flagged_row, object_array, text_values
from billing.imports.records import BillingFileError
from billing.storage.datasets import QUANTITY_LIMIT as STORED_QUANTITY_LIMIT
from gpuledger.input_bounds import YEAR_RANGE, year_problem
from gpuledger.json_depth import loads_bounded
from pricing.providers.currencies import currency_problem


class Distinct:
    """A text column of a chunk as codes and distinct values: checks flag values, errors name rows."""

    def __init__(self, frame: pd.DataFrame, column: str, *, file: str, first_row: int):
        self.source = frame[column]
        self.codes, self.values = text_values(self.source)
        self.column, self.file, self.first_row = column, file, first_row

    def stripped(self) -> np.ndarray:
        return object_array([value.strip() for value in self.values])

    def fail_if(self, bad, message) -> None:
        """Raise for the first row whose value is flagged in `bad` (one flag per distinct value);
        `message` is a text or a function of the distinct value's position."""
        row = first_flagged_row(np.asarray(bad, dtype=bool), self.codes, self.first_row)
        if row is not None:
            position = int(self.codes[row - self.first_row])
            text = message(position) if callable(message) else message
            raise BillingFileError(self.file, text, row=row, column=self.column)

    def result(self, values) -> pd.Series:
        """New values per distinct one, as a column of the input's kind."""
        if isinstance(self.source.dtype, pd.CategoricalDtype):
            return coded(self.codes, values, self.source.index)
        return pd.Series(object_array(values)[self.codes], index=self.source.index, dtype="str")


def timestamps(
    frame: pd.DataFrame, column: str, *, file: str, first_row: int, required: bool = True
) -> pd.Series:
    cells = Distinct(frame, column, file=file, first_row=first_row)
    text = cells.stripped()
    parsed = pd.to_datetime(pd.Series(text, dtype=object), utc=True, format="ISO8601", errors="coerce")
    empty = text == ""
    cells.fail_if(parsed.isna().to_numpy() & ~empty, lambda at: f"unparseable date {text[at]!r}")
    if required:
        cells.fail_if(empty, "a date is required here")
    refuse_far_years(cells, parsed.dt.year.to_numpy(dtype=float, na_value=np.nan))
    return pd.Series(parsed.array.take(cells.codes), index=frame.index)


def refuse_far_years(cells: Distinct, years: np.ndarray) -> None:
    """Raise for the first row whose date (year per distinct value, NaN for none) is outside the years
    every date of the product lies in (gpuledger.input_bounds): a charge in 2300 was stored, then summed
    in its invoice but in no review, and one in 9999 overflowed pandas' nanosecond timestamps (issue 28)."""
    with np.errstate(invalid="ignore"):
        far = (years < YEAR_RANGE[0]) | (years > YEAR_RANGE[1])
    text = cells.stripped()
    cells.fail_if(far, lambda at: f"{text[at]!r} is {year_problem(int(years[at]))}")


MONEY_LIMIT = 1e14  # numeric(20, 6): 14 digits before the point
# what the dataset's decimal(38, 6) holds, 1e32 (storage/datasets.py QUANTITY_TYPE); it was 1e12, the
# NUMERIC(18, 6) of the retired row store, which refused Google's RAM byte-seconds (1.7e16 in one line)
QUANTITY_LIMIT = float(STORED_QUANTITY_LIMIT)
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
    of magnitude under `limit` (what the stored field holds)."""
    cells = Distinct(frame, column, file=file, first_row=first_row)
    text = cells.stripped()
    lengths = np.fromiter(map(len, text), dtype=np.int64, count=len(text))
    cells.fail_if(lengths > NUMBER_TEXT_LIMIT, lambda at: f"not a number: {lengths[at]:,} characters long")
    empty = text == ""
    parsed = pd.to_numeric(pd.Series(np.where(empty, None, text), dtype=object), errors="coerce").to_numpy(
        float
    )
    bad = (np.isnan(parsed) & ~empty) | np.isinf(parsed) | _not_decimal(text)
    cells.fail_if(bad, lambda at: f"not a number: {text[at]!r}")
    with np.errstate(invalid="ignore"):
        huge = np.abs(parsed) >= limit
    cells.fail_if(huge, lambda at: f"{text[at]!r} is too large (under {limit:.0e} here)")
    if required:
        cells.fail_if(empty, "a number is required here")
    return cells.result(text)


def _not_decimal(text: np.ndarray) -> np.ndarray:
    """Values pandas reads as a number but a decimal (Python's, PostgreSQL's numeric) may not."""
    flags = np.zeros(len(text), dtype=bool)
    for position, value in enumerate(text):
        try:
            flags[position] = value != "" and not Decimal(value).is_finite()
        except InvalidOperation:
            flags[position] = True
    return flags


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
    cells = Distinct(frame, column, file=file, first_row=first_row)
    lowered = {k.lower(): v for k, v in mapping.items()}
    if default is not None:
        lowered[""] = default
    mapped = [lowered.get(value.strip().lower()) for value in cells.values]
    allowed = ", ".join(sorted(mapping))
    cells.fail_if(
        [value is None for value in mapped],
        lambda at: f"unknown value {cells.values[at]!r} (expected one of: {allowed})",
    )
    return cells.result(mapped)


def currencies(frame: pd.DataFrame, column: str, *, file: str, first_row: int) -> pd.Series:
    cells = Distinct(frame, column, file=file, first_row=first_row)
    codes = [value.strip().upper() for value in cells.values]
    problems = ["a currency is required here" if code == "" else currency_problem(code) for code in codes]
    cells.fail_if([bool(problem) for problem in problems], lambda at: problems[at])
    return cells.result(codes)


def json_objects(frame: pd.DataFrame, column: str, *, file: str, first_row: int) -> pd.Series:
    """Each cell as a dict ({} when empty); parsed once per distinct text, since tags repeat a lot. Rows
    sharing a text share one dict object (enrich.object_codes relies on it)."""
    codes, parsed = json_object_values(frame, column, file=file, first_row=first_row)
    return pd.Series(object_array(parsed)[codes], index=frame.index, dtype=object)


def json_object_values(
    frame: pd.DataFrame, column: str, *, file: str, first_row: int
) -> tuple[np.ndarray, list]:
    """(code per row, the dict of each distinct text) once every text is checked to be a JSON object."""
    cells = Distinct(frame, column, file=file, first_row=first_row)
    parsed, problems = [], []
    for value in cells.values:
        obj, problem = _json_object(value)
        parsed.append(obj)
        problems.append(problem)
    cells.fail_if([bool(problem) for problem in problems], lambda at: problems[at])
    return cells.codes, parsed


def _json_object(value: str) -> tuple[dict, str]:
    """(the parsed object, "") or ({}, what is wrong with it)."""
    if value.strip() == "":
        return {}, ""
    try:
        obj = loads_bounded(value)
    except json.JSONDecodeError as error:
        return {}, f"not JSON: {error.msg}"
    if not isinstance(obj, dict):
        return {}, "must be a JSON object of key/value pairs"
    return obj, _json_text_problem(obj)


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
