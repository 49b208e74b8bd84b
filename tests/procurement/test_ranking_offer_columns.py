"""Issue 26 "Speed": the prepared offer table keeps its text columns as codes (TextColumn) instead of one
Python object per offer. Every read must give what ``Series.to_numpy(dtype=object)`` gives at the same
positions, the column the ranking read before, including a column with missing values."""

import numpy as np
import pandas as pd

from procurement.ranking import RankingOptions, prepare
from procurement.ranking.offers import TextColumn
from tests.procurement.test_ranking import GPUS, OFFERS


def _as_before(series: pd.Series) -> np.ndarray:
    return series.to_numpy(dtype=object)


def test_a_text_column_reads_as_the_object_array_it_replaces():
    series = pd.Series(["aws", "gcp", "aws", "lambda", "gcp"], dtype="str")
    column, before = TextColumn.of(series), _as_before(series)
    assert [column[i] for i in range(5)] == list(before) == ["aws", "gcp", "aws", "lambda", "gcp"]
    positions = np.array([4, 0, 3])
    assert list(column[positions]) == ["gcp", "aws", "lambda"]
    assert list(column == "aws") == [True, False, True, False, False]
    assert len(column) == 5


def test_a_column_with_missing_values_keeps_pandas_markers():
    for series in (pd.Series(["a", None, "b"], dtype="str"), pd.Series(["a", None, "b"], dtype=object)):
        column, before = TextColumn.of(series), _as_before(series)
        for i in range(3):
            assert (column[i] is before[i]) or (column[i] == before[i])
        assert list(column == "b") == [False, False, True]


def test_prepared_text_is_the_offer_tables_text_row_for_row():
    prepared = prepare(OFFERS, GPUS, RankingOptions())
    for name in ("provider", "instance_type", "region", "zone", "gpu", "pricing_model", "payment_option"):
        before = _as_before(OFFERS[name])
        assert list(prepared.text[name][np.arange(len(OFFERS))]) == list(before)
        assert list(prepared.text[name] == before[0]) == list(before == before[0])
