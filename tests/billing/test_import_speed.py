"""The importing thread's shortcuts (issue 28, stop 46) give what the per-row computations they replace gave.

Each shortcut works per distinct value, or from what a reader already knew, where the import had worked
per row: equal results on random frames (hypothesis), against the per-row computation kept here.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from billing.imports.codes import (
    _refactorized,
    coded,
    codes_and_values,
    first_flagged_row,
    text_values,
    tuple_codes,
)
from billing.imports.enrich import TAG_SET, object_codes, tag_codes
from billing.imports.tag_formats import tag_objects_and_ids
from billing.storage.datasets import _coded, _months, _spread

SMALL_CODES = st.lists(st.integers(0, 40), min_size=0, max_size=300)


@settings(max_examples=200, deadline=None)
@given(SMALL_CODES, st.integers(0, 200))
def test_dense_refactorized_is_factorize(values, spare):
    """The table of every possible code numbers codes as pd.factorize does (first appearance)."""
    combined = np.array(values, dtype=np.intp)
    radix = (int(combined.max()) + 1 if len(combined) else 1) + spare
    codes, firsts = _refactorized(combined, radix)
    expected, _ = pd.factorize(combined)
    assert codes.tolist() == expected.tolist()
    assert firsts.tolist() == [int(np.argmax(expected == code)) for code in range(len(firsts))]
    assert (_refactorized(combined)[0] == codes).all()  # the hash table's way: the same


TEXTS = st.sampled_from(["", "a", "b", "c", "é", "a ", "0", "1.5"])


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.tuples(TEXTS, TEXTS, st.one_of(st.none(), TEXTS)), min_size=1, max_size=200), st.booleans()
)
def test_tuple_codes_per_row(rows, categorical):
    """tuple_codes (narrow categorical codes, the dense table) against each row's tuple factorized."""
    columns = []
    for position in range(3):
        values = [row[position] for row in rows]
        if categorical:
            codes, uniques = pd.factorize(pd.Series(values, dtype=object))
            columns.append(coded(codes, list(uniques)))
        else:
            columns.append(pd.Series(values, dtype=object))
    codes, tuples = tuple_codes(*columns)
    # a missing value is a value of its own, read as "" (text_values), as on main: ("", None) and ("", "")
    # are two tuples, both read ("", "")
    per_row = [tuple("\0missing" if value is None else value for value in row) for row in rows]
    expected, uniques = pd.factorize(pd.Series(per_row, dtype=object))
    assert codes.tolist() == expected.tolist()
    assert tuples == [tuple("" if value == "\0missing" else value for value in row) for row in uniques]


@settings(max_examples=100, deadline=None)
@given(st.lists(st.one_of(st.none(), TEXTS), min_size=0, max_size=300))
def test_narrow_codes_index_their_values(values):
    """A categorical's codes as it keeps them (int8): text_values still gives each row its text."""
    codes, uniques = pd.factorize(pd.Series(values, dtype=object))
    column = coded(codes, list(uniques))
    narrow, distinct = codes_and_values(column)
    assert narrow.dtype == np.int8 or not len(values)
    row_codes, texts = text_values(column)
    assert [texts[code] for code in row_codes] == ["" if value is None else value for value in values]
    flags = np.array([text == "b" for text in distinct], dtype=bool)
    first_b = next((row for row, value in enumerate(values) if value == "b"), None)
    assert first_flagged_row(flags, narrow, 10) == (None if first_b is None else first_b + 10)


TAG_TEXTS = st.sampled_from(
    ['{"team": "a"}', '{"team":"a"}', "team=b", "", '{"project": "x"}', "env=prod;team=c"]
)


@settings(max_examples=150, deadline=None)
@given(st.lists(TAG_TEXTS, min_size=0, max_size=200), st.booleans())
def test_reader_tag_ids_are_object_codes(texts, categorical):
    """The tag sets' ids a reader gives (TAG_SET) make the codes object_codes finds by identity."""
    raw = pd.DataFrame({"Tags": pd.Series(texts, dtype="category" if categorical else object)})
    tags, ids = tag_objects_and_ids(raw, "Tags", file="f.csv", first_row=2)
    frame = pd.DataFrame({"tags": tags, TAG_SET: ids})
    codes, sets = tag_codes(frame)
    expected, expected_sets = object_codes(frame["tags"])
    assert codes.tolist() == expected.tolist()
    assert len(sets) == len(expected_sets) and all(a is b for a, b in zip(sets, expected_sets, strict=True))
    # enrich keeps the codes themselves in TAG_SET: read back as they are
    again, again_sets = tag_codes(frame.assign(**{TAG_SET: codes}))
    assert again.tolist() == codes.tolist() and all(a is b for a, b in zip(again_sets, sets, strict=True))


MICROS = st.integers(-(10**16), 10**16)  # 1653 to 2286


@settings(max_examples=200, deadline=None)
@given(st.lists(MICROS, min_size=0, max_size=100), st.integers(0, 10**11), st.booleans())
def test_months_table_is_numpy_calendar(stamps, near, spread_wide):
    """The table of the chunk's days gives every timestamp numpy's calendar month."""
    micros = np.array(stamps if spread_wide else [near * 1000 + s % 10**12 for s in stamps], dtype=np.int64)
    expected = micros.astype("datetime64[us]").astype("datetime64[M]").view(np.int64)
    assert _months(micros).tolist() == expected.tolist()


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.sampled_from(["", "a", "b", "c"]), min_size=1, max_size=4),
    st.lists(st.integers(-1, 3), min_size=0, max_size=200),
    st.integers(0, 2),
    st.booleans(),
)
def test_dataset_columns_of_one_code_or_many_hold_each_row_s_value(texts, picks, constant, ordered):
    """The dataset's text and amount columns (stop 46, perf46c: a column of one code a chunk is not taken
    row by row; amounts taken by numpy, a missing code a null index) hold each row's value as the per-row
    lookup: a text's code -1 is "", an amount's code -1 or a value without micro-units is null."""
    codes = np.array([code % len(texts) if code >= 0 else -1 for code in picks], dtype=np.int8)
    if constant == 1:
        codes[:] = codes[0] if len(codes) else 0
    elif constant == 2:
        codes[:] = -1
    order = np.random.default_rng(len(codes)).permutation(len(codes)) if ordered else None
    rows = codes if order is None else codes[order]
    array = _coded(list(texts), codes, order)
    assert array.to_pylist() == [texts[code] if code >= 0 else "" for code in rows]
    assert len(set(array.dictionary.to_pylist())) == len(array.dictionary)  # each text once
    amounts = [7, None, -3, 11][: len(texts)] + [None]  # as _micros gives them: a None last
    for distinct in (pa.array(amounts, pa.int64()), pa.array(amounts, pa.decimal128(38, 6))):
        spread = _spread(distinct, codes, order).to_pylist()
        assert [None if value is None else int(value) for value in spread] == [amounts[code] for code in rows]
