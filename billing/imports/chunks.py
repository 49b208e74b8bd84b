"""Read a tabular billing file (CSV, gzip CSV or Parquet) in chunks of text columns.

Every cell comes back as text ("" for missing) so that each reader validates and converts the
columns it needs itself, and names the exact row and column of a bad value. Row numbers follow the
CSV convention people see in a spreadsheet: the header is row 1, the first data row is row 2
(Parquet rows are numbered the same way). A chunk holds at most `chunk_rows` rows, so a large file
is never in memory whole.

Both formats are read by Arrow, which parses a CSV on every core in blocks read ahead of the one
being imported, and gives each column dictionary-encoded: its distinct values and a code per row. With
`categorical=True` a chunk's columns are pandas categoricals built from those (no Python object per
row; codes.py); otherwise plain text. Arrow names no line for what it refuses, so then the file is
scanned again to name it: a byte that is not UTF-8 (check_text), or a line with another number of
fields than the header. A NUL, which Arrow keeps, is refused by row and column. Any other failure to
read the file (a truncated gzip or Parquet file, random bytes) is a BillingFileError naming the file.
"""

from __future__ import annotations

import codecs
import csv
import gzip
import queue
import threading
import zlib
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pandas as pd

from billing.imports.codes import coded, distinct_texts, object_array
from billing.imports.records import CHUNK_ROWS, BillingFileError, blocks

MISSING_MARKERS = ("null", "NULL", "None")  # FOCUS samples write a literal null for an empty cell
CSV_BLOCK_BYTES = (1 << 20, 64 << 20)  # bounds of what Arrow parses at once; chunks are cut from blocks
PARQUET_MAGIC = b"PAR1"
GZIP_MAGIC = b"\x1f\x8b"
READ_BLOCK = 1 << 20
# What reading a damaged file raises: a bad gzip stream, a cut file, a malformed CSV line
READ_ERRORS = (OSError, EOFError, zlib.error, UnicodeDecodeError, csv.Error, pd.errors.ParserError)


def file_kind(path: Path) -> str:
    """'parquet', 'gzip' or 'csv', from the first bytes (extensions lie about exports)."""
    with open(path, "rb") as handle:
        head = handle.read(4)
    if head == PARQUET_MAGIC:
        return "parquet"
    if head[:2] == GZIP_MAGIC:
        return "gzip"
    return "csv"


def _unreadable(path: Path, kind: str, error: Exception, row: int | None = None) -> BillingFileError:
    message = str(error).splitlines()[0][:200] if str(error) else type(error).__name__
    return BillingFileError(str(path), f"cannot be read as {kind}: {message}", row=row)


def _arrow_errors() -> tuple[type[Exception], ...]:
    import pyarrow as pa

    return (pa.ArrowException, OSError)


def header(path: Path) -> list[str]:
    kind = file_kind(path)
    if kind == "parquet":
        import pyarrow.parquet as pq

        try:
            return list(pq.ParquetFile(path).schema_arrow.names)
        except _arrow_errors() as error:
            raise _unreadable(path, kind, error) from None
    opener = gzip.open if kind == "gzip" else open
    try:
        with opener(path, "rt", newline="", encoding="utf-8-sig") as handle:
            return [name.strip() for name in next(csv.reader(handle), [])]
    except UnicodeDecodeError as error:  # decoding reads ahead of the header: find the bad line
        check_text(path)
        raise _unreadable(path, kind, error, row=1) from None
    except READ_ERRORS as error:
        raise _unreadable(path, kind, error, row=1) from None


def count_rows(path: Path) -> int:
    """Data rows in the file (for the progress bar and the count of a rejected file): lines but the
    header, counted in blocks."""
    kind = file_kind(path)
    if kind == "parquet":
        import pyarrow.parquet as pq

        try:
            return pq.ParquetFile(path).metadata.num_rows
        except _arrow_errors() as error:
            raise _unreadable(path, kind, error) from None
    opener = gzip.open if kind == "gzip" else open
    lines, last = 0, b"\n"
    try:
        with opener(path, "rb") as handle:
            for block in blocks(handle):
                lines, last = lines + block.count(b"\n"), bytes(block[-1:])
    except READ_ERRORS as error:
        raise _unreadable(path, kind, error) from None
    return max(lines + (last != b"\n") - 1, 0)


def check_text(path: Path) -> None:
    """Raise naming the line (and the byte within it) of the first byte that is not UTF-8, or a NUL."""
    kind = file_kind(path)
    decoder = codecs.getincrementaldecoder("utf-8")()
    line, line_start = 1, 0  # line_start: offset in the file where the current line begins
    offset = 0
    opener = gzip.open if kind == "gzip" else open
    try:
        with opener(path, "rb") as handle:
            for block in iter(lambda: handle.read(READ_BLOCK), b""):
                nul = block.find(b"\x00")
                try:
                    decoder.decode(block if nul < 0 else block[:nul])
                except UnicodeDecodeError as error:
                    position = error.start
                    raise _bad_byte(path, block, position, line, line_start - offset, error) from None
                if nul >= 0:
                    before = block[:nul]
                    row = line + before.count(b"\n")
                    start = before.rfind(b"\n") + 1 if b"\n" in before else line_start - offset
                    raise BillingFileError(
                        str(path), f"holds a NUL byte (byte {nul - start + 1} of the line)", row=row
                    )
                line += block.count(b"\n")
                last = block.rfind(b"\n")
                if last >= 0:
                    line_start = offset + last + 1
                offset += len(block)
            decoder.decode(b"", final=True)
    except UnicodeDecodeError as error:
        raise BillingFileError(str(path), f"not UTF-8 text at its end: {error.reason}", row=line) from None
    except READ_ERRORS as error:
        raise _unreadable(path, kind, error) from None


def _bad_byte(path, block: bytes, position: int, line: int, start: int, error) -> BillingFileError:
    """The error for a byte that is not UTF-8 at `position` of `block` (incremental decoders report
    a position that may precede the block for a sequence begun in the previous one: clamp it)."""
    position = max(position, 0)
    before = block[:position]
    row = line + before.count(b"\n")
    if b"\n" in before:
        start = before.rfind(b"\n") + 1
    byte = block[position : position + 1].hex() or "??"
    return BillingFileError(
        str(path),
        f"not UTF-8 text: byte 0x{byte}, about byte {position - start + 1} of the line ({error.reason});"
        " export the file as UTF-8",
        row=row,
    )


def read_chunks(
    path: Path, columns: list[str], *, chunk_rows: int = CHUNK_ROWS, categorical: bool = False
) -> Iterator[tuple[int, pd.DataFrame]]:
    """(row number of the chunk's first row, text frame of `columns`) for each chunk; absent columns are ""."""
    kind = file_kind(path)
    present = header(path)
    wanted = [name for name in columns if name in set(present)]
    first_row = 2
    errors = READ_ERRORS + _arrow_errors()
    try:
        batches = (
            _parquet_batches(path, wanted, chunk_rows)
            if kind == "parquet"
            else _csv_batches(path, kind, present, wanted, _block_bytes(path, kind, chunk_rows))
        )
        for pieces in _regrouped(_read_ahead(batches, chunk_rows), chunk_rows):
            frame = _frame(pieces, columns, str(path), first_row, categorical)
            yield first_row, frame
            first_row += len(frame)
    except errors as error:
        if kind != "parquet":
            check_text(path)  # raises naming the line of a byte that is not UTF-8
            _check_field_counts(path, kind, len(present))
        raise _unreadable(path, kind, error, row=first_row) from None


def _read_ahead(batches: Iterator, ahead_rows: int = CHUNK_ROWS) -> Iterator:
    """The batches, read (parsed, decompressed) on a thread of its own up to `ahead_rows` rows before the
    caller asks (a batch is read while fewer are waiting, so one batch more at most): Arrow releases the
    GIL while it parses, so the file is read while the chunk before is normalized, keyed and written
    (issue 28: the parse was a fifth of an import, on its one thread). Bounded in rows, not batches: a
    CSV block is about a tenth of a chunk, and a bound of two batches had the reader parse a fifth of
    the next chunk while the importing thread worked on one, then the importing thread wait for the
    other four fifths (40% of its wall time at 1M CSV rows, under load). A Parquet batch is a chunk: one
    waits, one more is read meanwhile, as before.
    An error of the reader is raised here, where the caller would have met it; the thread ends when the
    caller stops early."""
    handoff: queue.Queue = queue.Queue()
    room = threading.Condition()
    waiting = [0]  # rows handed over and not yet taken by the caller
    stop = threading.Event()

    def hand(item, rows: int) -> bool:
        with room:
            while waiting[0] >= ahead_rows and not stop.is_set():
                room.wait(0.1)
            if stop.is_set():
                return False
            waiting[0] += rows
        handoff.put((item, rows))
        return True

    def read() -> None:
        try:
            for batch in batches:
                if not hand((batch, None), len(batch)):
                    return
            hand((None, None), 0)
        except BaseException as error:  # noqa: BLE001 (handed to the caller's thread, raised there)
            hand((None, error), 0)

    reader = threading.Thread(target=read, name="billing-read-ahead", daemon=True)
    reader.start()
    try:
        while True:
            (batch, error), rows = handoff.get()
            with room:
                waiting[0] -= rows
                room.notify()
            if error is not None:
                raise error
            if batch is None:
                return
            yield batch
    finally:
        stop.set()
        with room:
            room.notify_all()
        reader.join()


def _regrouped(batches, chunk_rows: int) -> Iterator[list]:
    """The batches' rows as lists of batch slices of at most `chunk_rows` rows each, but a first one of a
    quarter of that: the database starts on it while the next is read and prepared. A chunk ends early
    rather than split a batch whose rest fits the next chunk whole: a Parquet file read `chunk_rows` at a
    time then gives its chunks one batch each (a dictionary of its own, nothing to unify: issue 28), where
    the first quarter had shifted every later chunk across two batches."""
    pending: list = []
    count, target = 0, max(chunk_rows // 4, 1)
    for batch in batches:
        offset = 0
        while offset < batch.num_rows:
            rest = batch.num_rows - offset
            if count and count + rest > target and rest <= chunk_rows:
                yield pending
                pending, count, target = [], 0, chunk_rows
            piece = batch.slice(offset, target - count)
            pending.append(piece)
            offset, count = offset + piece.num_rows, count + piece.num_rows
            if count == target:
                yield pending
                pending, count, target = [], 0, chunk_rows
    if count:
        yield pending


def _block_bytes(path: Path, kind: str, chunk_rows: int) -> int:
    """A block size of about a tenth of `chunk_rows` lines, from the length of the first lines: Arrow
    parses the blocks ahead on other cores, and a small first block starts the import sooner."""
    opener = gzip.open if kind == "gzip" else open
    with opener(path, "rb") as handle:
        head = handle.read(READ_BLOCK)
    line_bytes = len(head) / max(head.count(b"\n"), 1)
    low, high = CSV_BLOCK_BYTES
    return int(min(max(line_bytes * chunk_rows / 10, low), high))


def _csv_batches(path: Path, kind: str, present: list[str], wanted: list[str], block_bytes: int):
    import pyarrow as pa
    import pyarrow.csv as pcsv

    source = pa.input_stream(str(path), compression="gzip" if kind == "gzip" else None)
    text = pa.dictionary(pa.int32(), pa.string())
    return pcsv.open_csv(
        source,
        read_options=pcsv.ReadOptions(column_names=present, skip_rows=1, block_size=block_bytes),
        parse_options=pcsv.ParseOptions(newlines_in_values=True),  # a quoted field may hold a line break
        convert_options=pcsv.ConvertOptions(
            include_columns=wanted,
            column_types={name: text for name in wanted},
            strings_can_be_null=False,
            quoted_strings_can_be_null=False,
        ),
    )


def _check_field_counts(path: Path, kind: str, expected: int) -> None:
    """Raise naming the first line whose number of fields is not the header's (Arrow names none)."""
    opener = gzip.open if kind == "gzip" else open
    with opener(path, "rt", newline="", encoding="utf-8-sig") as handle:
        reader = csv.reader(handle)
        try:
            next(reader, None)
            for row, fields in enumerate(reader, start=2):
                if fields and len(fields) != expected:
                    raise BillingFileError(
                        str(path), f"{len(fields)} fields where the header has {expected}", row=row
                    )
        except csv.Error as error:  # a field over csv.field_size_limit(), a stray quote: name the line
            raise BillingFileError(
                str(path), f"cannot be read as CSV: {error}", row=reader.line_num
            ) from None


def _frame(pieces: list, columns: list[str], file: str, first_row: int, categorical: bool) -> pd.DataFrame:
    """The rows of the batch slices as text columns ("" for missing and the missing markers); absent
    columns are ""."""
    rows = sum(piece.num_rows for piece in pieces)
    out = {}
    for number, name in enumerate(pieces[0].schema.names):
        column = _combined([piece.column(number) for piece in pieces])
        if rows and len(column.dictionary) == 1 and not column.null_count:
            # one text in every row (17 of the bench's 24 text columns, a bill's provider, currency,
            # account...): its codes are zeros, not read, counted and narrowed (issue 28)
            codes, values = np.zeros(rows, dtype=np.int8), object_array(column.dictionary.to_pylist())
        else:
            codes, values = _used(*_dictionary(column))
        values = object_array(["" if value in MISSING_MARKERS else value for value in values])
        _check_nul(values, codes, file, first_row, name)
        if categorical:  # an Arrow dictionary's texts are distinct, unless a marker became "" (or a writer
            # of the Parquet file wrote a text twice): then coded merges them
            out[name] = coded(codes, values, distinct=distinct_texts(values))
        else:
            out[name] = pd.Series(values[codes], dtype="str")
    for name in columns:
        if name not in out:
            out[name] = (
                coded(np.zeros(rows, dtype=np.intp), [""])
                if categorical
                else pd.Series([""] * rows, dtype="str")
            )
    return pd.DataFrame({name: out[name] for name in columns}, copy=False)


def _combined(arrays: list):
    """Dictionary-encoded Arrow arrays (slices of blocks, each block with its own dictionary) as one,
    over one dictionary of the distinct texts (unified in Arrow: a text is checked once a chunk)."""
    import pyarrow as pa

    return arrays[0] if len(arrays) == 1 else pa.chunked_array(arrays).combine_chunks()


def _dictionary(array) -> tuple[np.ndarray, np.ndarray]:
    """(code per row, distinct texts) of a dictionary-encoded Arrow array; a null is "" (a code past the
    dictionary's texts only where there is a null: a CSV column has none, and a "" no row held made
    _used map every row's code again)."""
    import pyarrow.compute as pc

    texts, indices = array.dictionary.to_pylist(), array.indices
    if indices.null_count:
        texts.append("")
        indices = pc.fill_null(indices, len(texts) - 1)
    return indices.to_numpy(zero_copy_only=False), object_array(texts)


def _used(codes: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Only the values some row holds: a chunk cut from a block shares the block's dictionary. The codes
    as Arrow gave them (int32: a categorical narrows them once, no widening to int64 first)."""
    used = np.bincount(codes, minlength=len(values)) > 0
    if used.all():
        return codes, values
    return (np.cumsum(used, dtype=np.int32) - 1)[codes], values[used]


def _check_nul(values: np.ndarray, codes: np.ndarray, file: str, first_row: int, column: str) -> None:
    """PostgreSQL text cannot hold NUL (a Parquet string can, and Arrow keeps one in a CSV). A cell over
    the csv module's field limit (131,072 characters) is refused as the csv reader refuses it: Arrow has
    no such limit, so a 200,000-character tag was imported as a team name (issue 31, outside probe)."""
    holds = np.fromiter(("\x00" in value for value in values), dtype=bool, count=len(values))
    if holds.any():
        row = first_row + int(holds[codes].argmax())
        raise BillingFileError(file, "holds a NUL character", row=row, column=column)
    limit = csv.field_size_limit()
    too_long = np.fromiter((len(value) > limit for value in values), dtype=bool, count=len(values))
    if too_long.any():
        row = first_row + int(too_long[codes].argmax())
        raise BillingFileError(
            file, f"a cell over {limit:,} characters (the CSV field limit)", row=row, column=column
        )


def _parquet_batches(path: Path, columns: list[str], chunk_rows: int):
    """Record batches of `columns`, every one dictionary-encoded text (string columns are read encoded:
    Parquet stores them so; others are converted to text first)."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    schema = pq.ParquetFile(path).schema_arrow
    strings = [
        name
        for name in columns
        if pa.types.is_string(schema.field(name).type) or pa.types.is_large_string(schema.field(name).type)
    ]
    parquet = pq.ParquetFile(path, read_dictionary=strings)
    # one row group at a time: read across all of them, the reader's memory grew with the file, its pool
    # flat (issue 28: anonymous RSS 57 -> 84 MiB over a 5M-row file's 5 row groups; 53 MiB throughout so)
    for batch in (
        batch
        for group in range(parquet.metadata.num_row_groups)
        for batch in parquet.iter_batches(batch_size=chunk_rows, row_groups=[group], columns=columns)
    ):
        arrays = []
        for array in batch.columns:
            if pa.types.is_dictionary(array.type) and not pa.types.is_string(array.type.value_type):
                array = array.dictionary_decode()  # e.g. a pandas categorical of numbers
            if not pa.types.is_dictionary(array.type):
                array = pc.dictionary_encode(_parquet_text(array))
            arrays.append(array)
        yield pa.RecordBatch.from_arrays(arrays, names=batch.schema.names)


def _parquet_text(array):
    """A non-text Parquet column as text: timestamps in ISO 8601, nested values as JSON."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if pa.types.is_map(array.type) or pa.types.is_struct(array.type) or pa.types.is_list(array.type):
        return pa.array([_json_text(value) for value in array.to_pylist()], type=pa.string())
    if pa.types.is_timestamp(array.type):
        return pc.strftime(array, format="%Y-%m-%dT%H:%M:%S%z" if array.type.tz else "%Y-%m-%dT%H:%M:%S")
    if pa.types.is_string(array.type) or pa.types.is_large_string(array.type):
        return array
    return pc.cast(array, pa.string())


def _json_text(value) -> str:
    import json

    if value is None:
        return ""
    if isinstance(value, list) and all(isinstance(item, tuple) and len(item) == 2 for item in value):
        value = dict(value)  # pyarrow gives a map column as a list of (key, value) pairs
    return json.dumps(value, sort_keys=True)
