"""Row keys (keys.py): what makes re-imports idempotent, so their values are a stored contract."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from billing.imports.records import NORMALIZED_COLUMNS
from billing.storage.keys import OccurrenceCounter, export_part, row_keys

ROW = {
    "source_row": 2,
    "charge_period_start": pd.Timestamp("2026-05-01", tz="UTC"),
    "charge_period_end": pd.Timestamp("2026-05-02", tz="UTC"),
    "billing_period_start": pd.NaT,
    "charge_category": "usage",
    "is_correction": False,
    "provider": "aws",
    "billing_account_id": "111",
    "sub_account_id": "",
    "sub_account_name": "",
    "region": "us-east-1",
    "availability_zone": "",
    "resource_id": "i-1",
    "resource_type": "",
    "service_category": "Compute",
    "sku_id": "",
    "instance_type": "g6.xlarge",
    "pricing_category": "on_demand",
    "commitment_discount_id": "",
    "commitment_status": "",
    "consumed_quantity": "24",
    "consumed_unit": "Hours",
    "billed_cost": "10.00",
    "effective_cost": "9.50",
    "list_cost": "",
    "contracted_cost": "",
    "currency": "USD",
    "tags": {"team": "ml"},
}


def frame(*rows: dict) -> pd.DataFrame:
    out = pd.DataFrame([dict(ROW, **row) for row in rows], columns=NORMALIZED_COLUMNS)
    out["billing_period_start"] = pd.to_datetime(out["billing_period_start"], utc=True)
    return out


def test_it_pins_the_key_of_a_known_row():
    # Stored keys must never change meaning: a new scheme would re-import every stored file as new
    # rows. This value was computed once by this scheme; changing it needs a migration story.
    assert row_keys(frame({})).tolist() == ["21ff87bcff7cae27bf6ed6901bd2d2df"]


def test_it_numbers_identical_rows_across_chunks_so_each_keeps_its_own_key():
    seen = OccurrenceCounter()
    first = row_keys(frame({}, {}), seen).tolist()
    later = row_keys(frame({}), seen).tolist()
    assert len(set(first + later)) == 3
    again = OccurrenceCounter()
    assert row_keys(frame({}, {}), again).tolist() + row_keys(frame({}), again).tolist() == first + later


def test_it_keys_identical_lines_of_two_parts_apart_and_keeps_the_key_without_a_part():
    # issue 28: three parts of a 50M-line month stored 32.3M lines (identical lines across parts shared
    # keys); the export part is now in the key, a row without one keeps its pinned key
    plain = row_keys(frame({})).tolist()
    one, two = row_keys(frame({}), part="part 1").tolist(), row_keys(frame({}), part="part 2").tolist()
    assert plain == ["21ff87bcff7cae27bf6ed6901bd2d2df"]
    assert len({plain[0], one[0], two[0]}) == 3
    assert row_keys(frame({}), part="part 1").tolist() == one  # a re-export of the same part: same key


def test_a_part_keeps_the_numbering_of_identical_lines_within_a_file():
    seen = OccurrenceCounter()
    keys = (
        row_keys(frame({}, {}), seen, part="part 2").tolist() + row_keys(frame({}), seen, "part 2").tolist()
    )
    again = OccurrenceCounter()
    redone = row_keys(frame({}), again, "part 2").tolist() + row_keys(frame({}, {}), again, "part 2").tolist()
    assert len(set(keys)) == 3 and redone == keys


def test_a_line_id_is_part_of_the_key_and_a_line_without_one_keeps_its_key():
    with_ids = frame({}, {}, {}).assign(line_id=["", "li-1", "li-2"])
    keys = row_keys(with_ids).tolist()
    assert keys[0] == "21ff87bcff7cae27bf6ed6901bd2d2df"
    assert len(set(keys)) == 3
    assert row_keys(frame({}).assign(line_id=["li-1"])).tolist() == keys[1:2]  # the same id, the same key
    assert row_keys(frame({}).assign(line_id=[""])).tolist() == keys[:1]


@pytest.mark.parametrize(
    ("name", "part"),
    [
        ("month-part1.parquet", "part 1"),  # billing_month_bench.py's parts
        ("month-part2.parquet", "part 2"),
        ("export-00002.csv.gz", "part 2"),  # AWS Data Exports (CUR 2.0, FOCUS): <name>-00001.csv.gz
        ("part_0_0002.csv", "part 0_2"),  # Azure cost exports split into parts
        ("000000000003.csv", ""),  # no separator before the digits: no part
        ("bq-000000000003.csv", "part 3"),  # BigQuery's 12-digit shards
        # scheduled.py downloads as <listing number:05d>-<key's name>: only the export's own number counts
        ("00003-export-00002.csv.gz", "part 2"),
        ("00000-part_0_0002.csv", "part 0_2"),
        ("00001-month-part2.parquet", "part 2"),
        ("00003-aws_focus_export.csv", ""),
        ("aws_again.csv", ""),  # a bill under another name: the same rows, the same keys
        ("focus-2026-05.csv", ""),  # a month in the name is no part number
        ("costs-20260501.csv", ""),  # nor a date
    ],
)
def test_it_reads_the_part_number_of_an_export_file_from_its_name(name, part):
    assert export_part(name) == part


def test_it_ignores_the_row_number_but_not_any_value():
    base = row_keys(frame({})).tolist()[0]
    assert row_keys(frame({"source_row": 99})).tolist()[0] == base  # a re-export may reorder lines
    changes = [
        {"billed_cost": "10.01"},
        {"resource_id": "i-2"},
        {"tags": {"team": "ai"}},
        {"is_correction": True},
        {"charge_period_start": pd.Timestamp("2026-05-01 00:00:01", tz="UTC")},
        {"sub_account_id": "\t"},
    ]
    keys = {row_keys(frame(change)).tolist()[0] for change in changes}
    assert base not in keys and len(keys) == len(changes)
    assert all(len(key) == 32 and set(key) <= set("0123456789abcdef") for key in keys)


def test_it_gives_categorical_columns_the_keys_of_plain_ones():
    # the FOCUS reader gives text as categoricals, hashed once per distinct value: the same keys
    plain = frame({}, {"resource_id": "i-2"}, {}, {"region": ""})
    categorical = plain.copy()
    for column in ("resource_id", "region", "provider", "billed_cost"):
        categorical[column] = categorical[column].astype("category")
    assert row_keys(categorical).tolist() == row_keys(plain).tolist()


@given(st.lists(st.lists(st.integers(0, 5), max_size=40), min_size=1, max_size=5))
def test_it_numbers_occurrences_like_a_running_count(chunks):
    counter, counts = OccurrenceCounter(), {}
    for chunk in chunks:
        numbers = counter.number(np.array(chunk, dtype=np.uint64)).tolist()
        expected = []
        for value in chunk:
            expected.append(counts.get(value, 0))
            counts[value] = counts.get(value, 0) + 1
        assert numbers == expected


@given(st.lists(st.lists(st.integers(0, 60), max_size=25), min_size=1, max_size=40))
def test_it_numbers_occurrences_across_many_chunks_as_its_runs_merge(chunks):
    """Many chunks of new and repeated hashes: the sorted runs of hashes seen merge as they grow
    (keys.OccurrenceCounter), and the numbering stays a running count of each hash."""
    counter, counts = OccurrenceCounter(), {}
    for chunk in chunks:
        numbers = counter.number(np.array(chunk, dtype=np.uint64)).tolist()
        expected = []
        for value in chunk:
            expected.append(counts.get(value, 0))
            counts[value] = counts.get(value, 0) + 1
        assert numbers == expected
    held = sum(len(run) for run in counter.runs)
    assert held + len(counter.segments) == len(counts)  # each hash kept once, in memory or on disk
    assert len(counter.runs) <= max(1, held).bit_length() + 1


@given(
    st.lists(st.lists(st.integers(0, 2**64 - 1) | st.integers(0, 40), max_size=30), min_size=1, max_size=30),
    st.sampled_from([2, 4, 1 << 10]),
)
def test_it_numbers_occurrences_of_hashes_spilled_to_disk(chunks, filter_words):
    """Past `spill_hashes` hashes in memory, the hashes seen go to disk as sorted segments and a filter
    screens each chunk (occurrences.py). A filter of 2 or 4 words says "may have been seen" for nearly
    every hash: the exact look-ups on disk must still give a running count, each hash kept once."""
    counter, counts = OccurrenceCounter(spill_hashes=8, filter_words=filter_words), {}
    for chunk in chunks:
        numbers = counter.number(np.array(chunk, dtype=np.uint64)).tolist()
        expected = []
        for value in chunk:
            expected.append(counts.get(value, 0))
            counts[value] = counts.get(value, 0) + 1
        assert numbers == expected
    on_disk = [np.fromfile(path, dtype=np.uint64) for path in counter.segments.paths]
    kept = np.concatenate([np.empty(0, np.uint64), *counter.runs, *on_disk]).astype(object)
    assert sorted(kept) == sorted(counts)  # each hash once
    assert all((np.diff(segment.astype(object)) > 0).all() for segment in on_disk)  # sorted
    assert bool(on_disk) == (len(counts) > 8)  # on disk once more than 8 were held
    if len(counts) > 8:
        assert (
            counter.filter is not None
            and counter.filter.holds(*counter.filter.place(kept.astype(np.uint64))).all()
        )


def test_the_occurrence_counter_memory_does_not_grow_with_distinct_lines():
    """Issue 28: the import's peak grew with the file, the counter holding 8 bytes for each distinct line
    (160 MB at 20M lines). Now what it holds past `spill_hashes` is on disk: between 400,000 and 1,200,000
    distinct hashes the Python heap it holds (tracemalloc, which numpy reports to) must not grow by even a
    tenth of the 6.4 MB that 800,000 more hashes at 8 bytes would take. Runs in about a second."""
    import gc
    import tracemalloc

    rng = np.random.default_rng(28)
    tracemalloc.start()
    try:
        counter = OccurrenceCounter(spill_hashes=1 << 15)
        held, previous = [], np.zeros(50, dtype=np.uint64)
        for chunk in range(60):
            hashes = rng.integers(0, 2**64 - 1, 20_000, dtype=np.uint64, endpoint=True)
            if chunk % 7 == 3:
                hashes[:50] = previous[:50]  # identical lines across chunks: numbered, not added again
            numbers = counter.number(hashes)
            assert (numbers[:50] == (1 if chunk % 7 == 3 else 0)).all()
            previous = hashes
            if chunk in (19, 59):
                gc.collect()
                held.append(tracemalloc.get_traced_memory()[0])
    finally:
        tracemalloc.stop()
    assert len(counter.segments) > 1_000_000  # the hashes seen are on disk, not in memory
    assert held[1] - held[0] < 640_000, (held, "the counter's memory grows with the distinct lines")


def test_the_occurrence_counter_memory_does_not_grow_with_repeated_lines():
    """Issue 28: the counts of hashes seen twice or more were kept in memory apart, 12 bytes each (12 MB at
    5M lines of billing_bench.py). Now each hash's count is kept with it, on disk past `spill_hashes`:
    chunks whose every other hash repeats a new one of the chunk before (400,000 hashes come a second
    time between the two readings, 4.8 MB at 12 bytes) must not grow the Python heap by a tenth of that,
    and each repeat is numbered 1."""
    import gc
    import tracemalloc

    rng = np.random.default_rng(28)
    tracemalloc.start()
    try:
        counter = OccurrenceCounter(spill_hashes=1 << 15)
        held, previous = [], None
        for chunk in range(60):
            hashes = rng.integers(0, 2**64 - 1, 20_000, dtype=np.uint64, endpoint=True)
            if previous is not None:
                hashes[::2] = previous[1::2]  # the chunk before's new hashes, each a second time
            numbers = counter.number(hashes)
            assert (numbers[::2] == (chunk > 0)).all() and (numbers[1::2] == 0).all()
            previous = hashes
            if chunk in (19, 59):
                gc.collect()
                held.append(tracemalloc.get_traced_memory()[0])
    finally:
        tracemalloc.stop()
    assert held[1] - held[0] < 480_000, (held, "the counter's memory grows with the repeated lines")


def test_the_occurrence_counter_removes_its_segments():
    counter = OccurrenceCounter(spill_hashes=4)
    counter.number(np.arange(10, dtype=np.uint64))
    folder = counter.segments.folder
    assert folder is not None and any(folder.iterdir())
    del counter
    import gc

    gc.collect()
    assert not folder.exists()
