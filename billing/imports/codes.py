"""Dictionary-encoded columns: a code per row and the distinct values, so each value is handled once.

A bill repeats a few accounts, regions, instance types, amounts and tag sets over millions of rows, so
the billing import works on distinct values and spreads results back by code. The readers give text
columns as pandas categoricals (built from Arrow dictionaries without a Python object per row); a
plain column is factorized on first use. Code -1 is a missing value.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd


def codes_and_values(values: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """(code of each row, the distinct values as an object array); a missing value is code -1. A
    categorical's codes are its own, read-only and as narrow as it keeps them (int8 under 127 values):
    every code and len(values) fit their type."""
    if isinstance(values.dtype, pd.CategoricalDtype):
        # the Categorical's own codes, not `.cat.codes` (a new Series each call: issue 28, 80 of
        # 215 us a call on 100,000 rows, at ~1,100 calls a million rows), and not widened to intp (a
        # copy of every row's code at each call, then narrowed again by `coded`: issue 28, about a
        # tenth of the importing thread's samples); numpy widens them where they index
        categorical = values.array
        return categorical.codes, np.asarray(categorical.categories, dtype=object)
    codes, uniques = pd.factorize(values.to_numpy(dtype=object))
    return codes.astype(np.intp, copy=False), np.asarray(uniques, dtype=object)


def object_array(values: Sequence | np.ndarray) -> np.ndarray:
    """A 1-d object array of `values` (np.asarray would make a list of tuples two-dimensional)."""
    out = np.empty(len(values), dtype=object)
    out[:] = list(values)
    return out


def coded(
    codes: np.ndarray, values: Sequence | np.ndarray, index: pd.Index | None = None, *, distinct: bool = False
) -> pd.Series:
    """A categorical column holding values[code] in each row; equal values merge, None is missing.
    `distinct`: the caller knows `values` are distinct texts (no None): they are the categories as given,
    not factorized again (distinct_texts)."""
    if distinct:
        categories = values if isinstance(values, np.ndarray) else object_array(values)
    else:
        merged, categories = pd.factorize(object_array(values))
        if len(categories) < len(merged) or (merged < 0).any():  # equal values merge, None goes missing
            codes = np.append(merged, -1)[codes] if len(codes) else codes  # code -1 stays missing
    if not len(codes):
        codes = np.empty(0, dtype=np.intp)
    # the codes index `values` (or are -1) by construction: no check of each row's code; narrowed here
    # as pandas would (int8 under 127 categories), the categories given as a dtype, the Series not
    # copied: a quarter of this function's time went to pandas' checks of what is known (issue 28).
    # The categories are distinct and none is missing (factorized, or the caller's distinct texts):
    # pandas' own check of that (a hash table of them again, CategoricalDtype(...)) is skipped, as
    # pandas itself does for categories it built (issue 28: with the factorize that coded spared, 85%
    # of this function's time on a column of 2,000 resource ids; 0.4 of the 2.5 CPU seconds of the
    # importing thread at 1M rows went to this function)
    dtype = pd.CategoricalDtype._from_fastpath(pd.Index(categories, dtype=object, copy=False), False)
    categorical = pd.Categorical.from_codes(
        codes.astype(_code_type(len(categories)), copy=False), dtype=dtype, validate=False
    )
    return pd.Series(categorical, index=index, copy=False)


def distinct_texts(values: np.ndarray) -> bool:
    """Whether `values` (texts, or None) are distinct texts: a set of them, which Python's strings
    (their hashes kept) build faster than pd.factorize."""
    seen = set(values)
    return len(seen) == len(values) and None not in seen


def _code_type(categories: int) -> type:
    """The narrowest codes pandas keeps for that many categories (its coerce_indexer_dtype)."""
    for kind in (np.int8, np.int16, np.int32):
        if categories < np.iinfo(kind).max:
            return kind
    return np.int64


def map_values(values: pd.Series, function: Callable) -> pd.Series:
    """`function` applied once per distinct value (a missing value stays missing)."""
    codes, uniques = codes_and_values(values)
    return coded(codes, [function(value) for value in uniques], values.index)


def spread(codes: np.ndarray, values: Sequence, missing=None) -> np.ndarray:
    """values[code] for each row as an object array (code -1: `missing`)."""
    table = object_array([*values, missing])
    return table[codes]


def first_flagged_row(bad_values: np.ndarray, codes: np.ndarray, first: int) -> int | None:
    """Row number of the first row whose value is flagged in `bad_values` (None when none is). The rows
    are looked at only when a distinct value is flagged (issue 28: a gather of every row's flag at each
    of ~370 checks a million rows, all but never flagged)."""
    flags = np.asarray(bad_values, dtype=bool)
    if not flags.any():
        return None
    bad = np.append(flags, False)[codes]
    return first + int(bad.argmax()) if bad.any() else None


def text_values(values: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """codes_and_values with a missing value read as "" (every row a text)."""
    codes, uniques = codes_and_values(values)
    if (codes < 0).any():
        codes = np.where(codes < 0, len(uniques), codes)
        uniques = object_array([*uniques, ""])
    return codes, uniques


def tuple_codes(*columns: pd.Series) -> tuple[np.ndarray, list[tuple]]:
    """Codes of the distinct tuples of the columns' values in each row, and those tuples (the columns'
    codes are combined into one integer a row, mixed radix, and factorized once; refactorized on the
    way only where the radix would overflow: no tuple is built per row)."""
    combined = np.zeros(len(columns[0]), dtype=np.intp)
    radix, tables = 1, []
    for column in columns:
        codes, values = text_values(column)
        tables.append((codes, values))
        if len(values) == 1:
            continue  # one value: every row's tuple gets the same part, nothing tells rows apart
        if radix * (len(values) + 1) >= RADIX_LIMIT:
            combined, firsts = _refactorized(combined, radix)
            radix = len(firsts)
        combined = combined * (len(values) + 1) + codes + 1
        radix *= len(values) + 1
    combined, firsts = _refactorized(combined, radix)
    return combined, [tuple(values[codes[row]] for codes, values in tables) for row in firsts]


RADIX_LIMIT = 1 << 62  # combined codes stay within int64
# Combined codes below this many (and below a few times the rows) are refactorized through a table of
# every possible code instead of a hash table: 8 bytes a possible code (8 MiB at most)
DENSE_CODES = 1 << 20


def _refactorized(combined: np.ndarray, radix: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(codes 0..k-1 in order of first appearance, the first row of each). Given `radix` (every code
    is in 0..radix-1) and few enough possible codes, through a table of them: each code's first row
    by a minimum at each code, no hash table (issue 28: pd.factorize of the combined codes was 0.12
    of the importing thread's 2.1 CPU s a million bench rows; the table is 2-3x faster); the same
    codes as pd.factorize's (test_import_speed)."""
    rows = len(combined)
    if radix is not None and 0 < radix <= min(DENSE_CODES, 4 * rows + 1024):
        first = np.full(radix, rows, dtype=np.intp)
        np.minimum.at(first, combined, np.arange(rows, dtype=np.intp))
        present = np.flatnonzero(first < rows)  # every code some row holds, by value
        by_row = np.argsort(first[present], kind="stable")  # distinct first rows: in order of appearance
        renumber = np.empty(radix, dtype=np.intp)
        renumber[present[by_row]] = np.arange(len(present), dtype=np.intp)
        return renumber[combined], first[present[by_row]]
    codes, _ = pd.factorize(combined)
    return codes.astype(np.intp, copy=False), first_rows(codes)


def first_rows(codes: np.ndarray) -> np.ndarray:
    """The first row holding each code, for codes numbered in order of first appearance (as
    pd.factorize numbers them): there the running maximum of the codes grows."""
    if not len(codes):
        return np.zeros(0, dtype=np.intp)
    running = np.maximum.accumulate(codes)
    return np.flatnonzero(np.r_[True, running[1:] > running[:-1]])
