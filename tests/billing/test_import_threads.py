"""The import's helper threads (issue 28): the file read ahead (chunks._read_ahead) and the dataset
written (datasets.DatasetWriter) on threads of their own, and what the dataset files hold once written
from Arrow dictionaries.

Expected values come from the files themselves: tests/billing/fixtures/aws_focus_export.csv holds 4 rows
charged in May 2026; the CSVs built here are counted as written.
"""

from __future__ import annotations

import threading
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from billing.imports import chunks
from billing.imports.importer import import_file
from billing.imports.records import BillingFileError
from billing.models import BillingImport, BillingImportFile
from billing.storage.datasets import SCHEMA, TEXT_COLUMNS
from billing.storage.import_datasets import ImportDatasets
from tests.billing.catalog import make_catalog

pytestmark = pytest.mark.django_db
AWS = Path(__file__).parent / "fixtures" / "aws_focus_export.csv"


def _readers() -> list[threading.Thread]:
    return [thread for thread in threading.enumerate() if thread.name == "billing-read-ahead"]


def test_the_dataset_files_hold_plain_text_and_statistics_of_the_times_only():
    """Text columns are written as Arrow dictionaries but read back as plain strings (no Arrow schema
    stored), every column of SCHEMA is there, and min/max statistics are kept for the charge period (what
    readers prune row groups by), not for text."""
    make_catalog()
    import_file(AWS)
    paths = [ImportDatasets().root / f.path for f in BillingImportFile.objects.all()]
    assert len(paths) == 1  # May 2026 only
    table = pq.read_table(paths[0])
    assert table.num_rows == 4
    assert table.schema.names == SCHEMA.names
    for name in TEXT_COLUMNS:
        assert table.schema.field(name).type == pa.string(), name
    columns = pq.ParquetFile(paths[0]).metadata.row_group(0)
    statistics = {
        columns.column(i).path_in_schema: columns.column(i).is_stats_set for i in range(columns.num_columns)
    }
    assert statistics["charge_period_start"] and statistics["effective_micros"]
    assert not statistics["team"] and not statistics["resource_id"]


def test_a_bad_line_far_into_the_file_is_named_from_the_read_ahead_thread(tmp_path):
    """A line with a field too many after thousands of good ones: Arrow meets it on the read-ahead
    thread, the error is raised on the importing one, naming the line, and the thread ends."""
    header = "ChargePeriodStart,ChargePeriodEnd,ChargeCategory,BilledCost,EffectiveCost,BillingCurrency,ProviderName"
    good = "2026-05-01T00:00:00Z,2026-05-02T00:00:00Z,Usage,1.00,1.00,USD,AWS"
    lines = [header] + [good] * 30_000 + [good + ",extra"] + [good] * 10
    path = tmp_path / "focus.csv"
    path.write_text("\n".join(lines) + "\n")
    make_catalog()
    with pytest.raises(BillingFileError) as raised:
        import_file(path, fmt="focus")
    assert raised.value.row == 30_002  # header is row 1, the bad line the 30,001st data row
    assert not _readers()
    assert not BillingImportFile.objects.exists()


def test_the_read_ahead_thread_ends_when_the_reader_stops_early(tmp_path):
    path = tmp_path / "rows.csv"
    path.write_text("a,b\n" + "".join(f"{i},x\n" for i in range(50_000)))
    batches = chunks.read_chunks(path, ["a", "b"], chunk_rows=1_000)
    first_row, frame = next(batches)
    assert (first_row, len(frame)) == (2, 250)  # the first chunk is a quarter (chunks._regrouped)
    batches.close()
    assert not _readers()


def test_a_failing_batch_source_is_raised_where_the_batch_was_asked_for():
    def source():
        yield "first"
        raise OSError("disk gone")

    read = chunks._read_ahead(source())
    assert next(read) == "first"
    with pytest.raises(OSError, match="disk gone"):
        next(read)
    assert not _readers()


def _pulled_after_a_pause(pulled: list, settle: float = 0.3) -> int:
    """How many batches the read-ahead thread has taken from its source once it stops taking more."""
    import time

    count = -1
    while count != len(pulled):
        count = len(pulled)
        time.sleep(settle)
    return count


def test_the_read_ahead_is_bounded_in_rows_not_batches():
    """A CSV block is about a tenth of a chunk: the reader reads a chunk's rows ahead (ten blocks here),
    where a bound of two batches had the importing thread wait for most of each chunk's parse (issue 28),
    and no more than that (a batch more, in the reader's hand, waiting for room)."""
    pulled: list[int] = []

    def source():
        for number in range(100):
            pulled.append(number)
            yield pa.record_batch({"a": pa.array(np.arange(10))})

    read = chunks._read_ahead(source(), ahead_rows=100)
    assert len(next(read)) == 10
    assert _pulled_after_a_pause(pulled) == 1 + 10 + 1  # the one taken, 100 rows waiting, one in hand
    for _ in range(5):
        next(read)
    assert _pulled_after_a_pause(pulled) == 6 + 10 + 1
    read.close()
    assert not _readers()


def test_every_text_column_is_written_as_a_parquet_dictionary():
    """A dictionary holding a text twice (a "" added for missing values beside the column's own "") made
    Arrow's writer give up the column's dictionary and write each row's text plainly (issue 28: 11 of the
    bench's 24 text columns). The fixture's rows have blank columns
    (sub_account_id), columns blank on some rows only (commitment_discount_id: "" on 3 of 4) and
    tags; every text column is now dictionary-encoded, and reads back as written."""
    make_catalog()
    import_file(AWS)
    (path,) = [ImportDatasets().root / f.path for f in BillingImportFile.objects.all()]
    columns = pq.ParquetFile(path).metadata.row_group(0)
    encodings = {
        columns.column(i).path_in_schema: columns.column(i).encodings for i in range(columns.num_columns)
    }
    for name in TEXT_COLUMNS:
        assert "RLE_DICTIONARY" in encodings[name], (name, encodings[name])
    table = pq.read_table(path, columns=["sub_account_id", "gpu", "commitment_status"]).to_pydict()
    assert table["sub_account_id"] == [""] * 4
    # p5.48xlarge (H100) and g6e.xlarge (L40S) in the catalog; the EBS volume and the tax line have no GPU
    assert sorted(table["gpu"]) == ["", "", "h100-sxm5-80gb", "l40s"]
    assert sorted(table["commitment_status"]) == [""] * 4


def test_a_dictionary_written_with_repeated_texts_and_missing_codes_keeps_each_row_s_text():
    from billing.storage.datasets import _coded

    array = _coded(["", "a", "", "b"], np.array([0, 1, 2, 3, -1, 1]))
    assert array.dictionary.to_pylist() == ["", "a", "b"]  # each text once
    assert array.to_pylist() == ["", "a", "", "b", "", "a"]


def test_parquet_chunks_after_the_first_quarter_are_one_batch_each(tmp_path):
    """Parquet is read chunk_rows at a time; after the first quarter, a chunk ends where a batch ends
    rather than straddle two (whose dictionaries had to be unified): 5,000 rows by 1,000 are chunks of
    250, 750, then 1,000, holding the file's rows in order."""
    path = tmp_path / "rows.parquet"
    pq.write_table(pa.table({"a": [str(i) for i in range(5_000)], "b": ["x", "y"] * 2_500}), path)
    chunked = list(chunks.read_chunks(path, ["a", "b"], chunk_rows=1_000, categorical=True))
    assert [(first, len(frame)) for first, frame in chunked] == [
        (2, 250),
        (252, 750),
        (1_002, 1_000),
        (2_002, 1_000),
        (3_002, 1_000),
        (4_002, 1_000),
    ]
    assert [v for _, frame in chunked for v in frame["a"]] == [str(i) for i in range(5_000)]
    assert [v for _, frame in chunked for v in frame["b"]] == ["x", "y"] * 2_500


def test_distinct_texts_become_categories_as_given_and_others_are_merged():
    """chunks._frame gives coded an Arrow dictionary's texts as they are when they are distinct (issue 28:
    no factorize of them again); a text twice (a missing marker made "", a Parquet writer's dictionary
    holding a text twice) or a None still goes through the merge, and both ways give the same column."""
    from billing.imports.codes import coded, distinct_texts, object_array

    codes = np.array([2, 0, 1, 2, 0], dtype=np.int32)
    texts = object_array(["b", "a", "c"])
    assert distinct_texts(texts)
    fast, merged = coded(codes, texts, distinct=True), coded(codes, texts)
    assert fast.tolist() == merged.tolist() == ["c", "b", "a", "c", "b"]
    assert list(fast.cat.categories) == list(merged.cat.categories) == ["b", "a", "c"]
    assert fast.cat.codes.tolist() == merged.cat.codes.tolist()
    assert not distinct_texts(object_array(["", "a", ""]))
    assert not distinct_texts(object_array(["a", None]))
    assert coded(codes, object_array(["", "a", ""])).tolist() == ["", "", "a", "", ""]


def test_a_parquet_file_of_several_row_groups_is_read_one_row_group_at_a_time(tmp_path):
    """Read across all its row groups at once, Arrow's reader grew with the file (issue 28: 57 -> 84 MiB
    over the 5 row groups of 5M bench rows); read a row group at a time, no batch spans two, and the chunks
    hold the file's rows in order: 3,000 rows in row groups of 700 by chunks of 1,000."""
    path = tmp_path / "rows.parquet"
    table = pa.table({"a": [str(i) for i in range(3_000)], "b": ["x", "y", "z"] * 1_000})
    pq.write_table(table, path, row_group_size=700)
    assert pq.ParquetFile(path).metadata.num_row_groups == 5
    batches = list(chunks._parquet_batches(path, ["a", "b"], 1_000))
    assert [batch.num_rows for batch in batches] == [700, 700, 700, 700, 200]
    chunked = list(chunks.read_chunks(path, ["a", "b"], chunk_rows=1_000, categorical=True))
    assert [v for _, frame in chunked for v in frame["a"]] == [str(i) for i in range(3_000)]
    assert [v for _, frame in chunked for v in frame["b"]] == ["x", "y", "z"] * 1_000


def test_a_month_s_file_is_split_into_parts_of_a_bounded_number_of_row_groups(tmp_path, monkeypatch):
    """Arrow's Parquet writer keeps each row group's metadata in memory until its file is closed (36 kB
    a row group, one row group a chunk and month): the import's memory grew with the file (issue 28).
    Past ROW_GROUPS_PER_FILE row groups a month's file is closed and the month goes on in its next part;
    every row is kept once, in order, each part recorded with its month and rows. Here 3 a file: 8
    chunks of May and June each give May parts of 3, 3 and 2 row groups, June the same."""
    from billing.storage import datasets

    monkeypatch.setattr(datasets, "ROW_GROUPS_PER_FILE", 3)
    writer = datasets.DatasetWriter(tmp_path)
    may, june = np.datetime64("2026-05-03", "us"), np.datetime64("2026-06-07", "us")
    for chunk in range(8):
        rows = np.arange(chunk * 10, chunk * 10 + 10)
        starts = np.where(rows % 2 == 0, may, june)
        arrays = {"source_row": pa.array(rows), "row_key_hi": pa.array(rows.astype(np.uint64))}
        arrays["charge_period_start"] = pa.array(starts, type=pa.timestamp("us", tz="UTC"))
        table = pa.table(
            [arrays.get(field.name, pa.nulls(len(rows), field.type)) for field in SCHEMA], schema=SCHEMA
        )
        writer.write(table)
    files = writer.finish("import=1")
    assert [(f.path, f.month, f.rows) for f in files] == [
        ("import=1/month=2026-05/part-00000.parquet", "2026-05", 15),
        ("import=1/month=2026-05/part-00001.parquet", "2026-05", 15),
        ("import=1/month=2026-05/part-00002.parquet", "2026-05", 10),
        ("import=1/month=2026-06/part-00000.parquet", "2026-06", 15),
        ("import=1/month=2026-06/part-00001.parquet", "2026-06", 15),
        ("import=1/month=2026-06/part-00002.parquet", "2026-06", 10),
    ]
    groups = [pq.ParquetFile(tmp_path / f.path).metadata.num_row_groups for f in files]
    assert groups == [3, 3, 2, 3, 3, 2]
    read = [pq.read_table(tmp_path / f.path)["source_row"].to_pylist() for f in files]
    assert sum(read[:3], []) == list(range(0, 80, 2)) and sum(read[3:], []) == list(range(1, 80, 2))
    assert all(f.size_bytes == (tmp_path / f.path).stat().st_size for f in files)


def test_a_first_import_reads_its_first_chunk_while_the_checksum_is_computed(monkeypatch):
    """Issue 28 (imp28x): with no import of its format and provider on record, no checksum can match, so
    the first chunk is read before the checksum is known; a re-import still waits for it and reads
    nothing (test_import_datasets). The checksum is held back here until the first chunk has been read."""
    from billing.imports import importer

    make_catalog()
    first_chunk_read = threading.Event()
    real_read_focus, real_checksum = importer.focus.read_focus, importer._checksum_checking_text

    def read_focus(*args, **kwargs):
        for chunk in real_read_focus(*args, **kwargs):
            first_chunk_read.set()
            yield chunk

    def checksum(path):
        assert first_chunk_read.wait(30), "the file was not read while the checksum was computed"
        return real_checksum(path)

    monkeypatch.setattr(importer.focus, "read_focus", read_focus)
    monkeypatch.setattr(importer, "_checksum_checking_text", checksum)
    result = import_file(AWS, fmt="focus")
    assert (result.inserted, result.rows_seen, result.errors) == (4, 4, [])
    assert BillingImportFile.objects.get().rows == 4  # the fixture's 4 rows, all charged in May 2026


def _holding_the_checksum(monkeypatch, until: threading.Event) -> list[str]:
    """The checksum's thread waits for `until` (30 s at most) and notes whether it came; read_focus sets
    nothing itself: each test hooks what it waits for."""
    from billing.imports import importer

    noted: list[str] = []
    real_checksum = importer._checksum_checking_text

    def checksum(path):
        noted.append("read first" if until.wait(30) else "checksum first")
        return real_checksum(path)

    monkeypatch.setattr(importer, "_checksum_checking_text", checksum)
    return noted


def _reading(monkeypatch, on_first: threading.Event, on_last: threading.Event, chunk_rows: int = 2) -> None:
    from billing.imports import importer

    real_read_focus = importer.focus.read_focus

    def read_focus(*args, **kwargs):
        for chunk in real_read_focus(*args, **{**kwargs, "chunk_rows": chunk_rows}):
            on_first.set()
            yield chunk
        on_last.set()

    monkeypatch.setattr(importer.focus, "read_focus", read_focus)


def test_a_file_no_import_of_its_size_is_read_whole_while_the_checksum_is_computed(monkeypatch, tmp_path):
    """Issue 28 (perf46a): with an import of the same format and provider on record but none of the same
    size (BillingImport.file_bytes), no checksum can match, so every chunk is read, normalized and written
    before the checksum is known (stop 45 read the first chunk only, and nothing where any import of the
    format was on record). The checksum is held back here until the last chunk has been read; the file is
    the fixture's 4 lines less its last (3 rows, chunks of 2)."""
    make_catalog()
    import_file(AWS, fmt="focus")
    shorter = tmp_path / "aws_focus_three_lines.csv"
    shorter.write_text("\n".join(AWS.read_text().splitlines()[:4]) + "\n")
    first, last = threading.Event(), threading.Event()
    _reading(monkeypatch, first, last)
    noted = _holding_the_checksum(monkeypatch, last)
    result = import_file(shorter, fmt="focus")
    assert noted == ["read first"]
    assert (result.inserted, result.unchanged, result.rows_seen, result.errors) == (0, 3, 3, [])
    latest = BillingImport.objects.order_by("pk").last()
    assert latest.file_bytes == shorter.stat().st_size and len(latest.file_sha256) == 64
    assert not _readers()


def test_a_file_of_a_size_on_record_waits_for_its_checksum_before_a_line_is_read(monkeypatch, tmp_path):
    """The same size as an import on record (or an import whose size is not on record: made before
    stop 46) may be the same file: the checksum comes first, as before (a known file is not read at all:
    test_import_datasets). Here other bytes of the same size: read only once the checksum is known."""
    make_catalog()
    import_file(AWS, fmt="focus")
    text = AWS.read_text()
    same_size = tmp_path / "aws_focus_same_size.csv"
    same_size.write_text(text.replace("2026-05-0", "2026-05-1", 1))
    assert same_size.stat().st_size == AWS.stat().st_size and same_size.read_text() != text
    first, last = threading.Event(), threading.Event()
    _reading(monkeypatch, first, last)
    monkeypatch.setattr("billing.imports.importer._checksum_checking_text", _checksum_after(first))
    assert import_file(same_size, fmt="focus").errors == [] and first.is_set()
    BillingImport.objects.update(file_bytes=None)  # imports made before stop 46
    other = tmp_path / "aws_focus_three_lines.csv"
    other.write_text("\n".join(text.splitlines()[:4]) + "\n")
    first.clear()
    assert import_file(other, fmt="focus").errors == [] and first.is_set()


def _checksum_after(read: threading.Event):
    from billing.imports import importer

    real_checksum = importer._checksum_checking_text

    def checksum(path):
        # a second for a read begun meanwhile to show (the file's first chunk takes milliseconds)
        assert not read.wait(1), "a line was read before the checksum was known"
        return real_checksum(path)

    return checksum


def test_a_byte_that_is_not_utf8_found_by_the_checksum_after_the_read_leaves_nothing(monkeypatch, tmp_path):
    """A file read whole while its checksum is computed (above) whose only bad byte is in a column no
    reader takes: the checksum's error is raised once every chunk is read, and nothing is stored, no
    dataset file left (the writer's files abandoned). 200 lines (the header's read decodes the first 8 KiB),
    the bad byte on the last."""
    make_catalog()
    lines = AWS.read_text().splitlines()
    body = [line + ",ok" for line in lines[1:]] * 50
    body[-1] = body[-1][: -len("ok")] + "\xfc"
    bad = tmp_path / "aws_focus_latin1.csv"
    bad.write_bytes(("\n".join([lines[0] + ",x_Note", *body]) + "\n").encode("latin-1"))
    first, last = threading.Event(), threading.Event()
    _reading(monkeypatch, first, last, chunk_rows=50)
    noted = _holding_the_checksum(monkeypatch, last)
    with pytest.raises(BillingFileError, match="not UTF-8 text: byte 0xfc"):
        import_file(bad, fmt="focus")
    assert noted == ["read first"]
    assert not BillingImport.objects.exists()
    root = ImportDatasets().root  # shared by the session's tests: no import's folder being written is left
    assert not [p for p in root.iterdir() if p.name.startswith(".incoming-")] if root.exists() else True
    assert not _readers()


def test_the_writer_numbers_identical_rows_in_chunk_order(tmp_path):
    """The occurrence numbers are given on the dataset writer's thread (store._write_dataset): a file of
    one line repeated across several chunks keeps one key per occurrence, each key once."""
    make_catalog()
    lines = AWS.read_text().splitlines()
    path = tmp_path / "repeated.csv"
    path.write_text("\n".join([lines[0], *([lines[1]] * 2_500)]) + "\n")
    from billing.imports import focus
    from billing.storage.store import store_chunks

    read = list(focus.read_focus(path, chunk_rows=1_000))
    assert len(read) == 4  # a first quarter chunk (250 rows), then 1,000, 1,000 and 250
    result = store_chunks(iter(read), file_name=path.name, source_format="focus")
    assert result.inserted == 2_500
    keys = pa.concat_tables(
        pq.read_table(ImportDatasets().root / f.path, columns=["row_key_hi", "row_key_lo"])
        for f in BillingImportFile.objects.all()
    )
    pairs = set(zip(keys["row_key_hi"].to_pylist(), keys["row_key_lo"].to_pylist(), strict=True))
    assert len(pairs) == 2_500


def test_a_chunk_of_several_months_is_made_in_month_order_and_written_as_the_rows_taken_by_month(tmp_path):
    """Issue 28 (imp45b): the writer took each month's rows of a chunk out of the table (a copy of every
    column); now dataset_frame makes the table in month_order's order (each column taken as it is
    converted) and the writer slices it. The table is the unordered one taken in that order (times with
    a missing one, text codes with a missing one, amounts, flags, row keys), a chunk of one month keeps
    its order (None), and the files written are the same bytes either way: May's rows then June's, each
    in file order."""
    import pandas as pd

    from billing.storage import datasets

    starts = ["2026-06-02T00:00:00Z", "2026-05-01T00:00:00Z", "2026-06-30T23:00:00Z", "2026-05-31T23:59:59Z"]
    rows = pd.DataFrame(
        {
            "source_row": [2, 3, 4, 5],
            "charge_period_start": pd.to_datetime(starts, utc=True),
            "charge_period_end": pd.to_datetime([starts[0], None, starts[2], starts[3]], utc=True),
            "resource_id": pd.Categorical(["a", None, "b", "a"]),
            "gpu_slug": pd.Categorical(["h100", "", "a100", "h100"]),
            "is_refund": [True, False, False, True],
            "billed_cost": pd.Categorical(["1.5", "2", None, "0.000001"]),
        }
    )
    lanes = np.arange(8, dtype=np.uint64).reshape(4, 2) * np.uint64(3)
    order = datasets.month_order(rows)
    assert order.tolist() == [1, 3, 0, 2]
    assert datasets.month_order(rows.iloc[[1, 3, 0]]) is None  # one month, then the next: in order already
    made = datasets.keyed(datasets.dataset_frame(rows, None, order), lanes, order)
    assert made.equals(datasets.keyed(datasets.dataset_frame(rows, None), lanes).take(pa.array(order)))
    assert made["source_row"].to_pylist() == [3, 5, 2, 4]
    written = {}
    for name, table in (("made", made), ("taken", datasets.keyed(datasets.dataset_frame(rows, None), lanes))):
        writer = datasets.DatasetWriter(tmp_path / name)
        writer.write(table)
        files = writer.finish("import=1")
        written[name] = {f.path: (tmp_path / name / f.path).read_bytes() for f in files}
        assert [(f.month, f.rows) for f in files] == [("2026-05", 2), ("2026-06", 2)]
    assert written["made"] == written["taken"]
    may = pq.read_table(tmp_path / "made" / "import=1/month=2026-05/part-00000.parquet")
    assert may["source_row"].to_pylist() == [3, 5] and may["billed_micros"].to_pylist() == [2_000_000, 1]
