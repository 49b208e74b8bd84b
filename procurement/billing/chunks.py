"""Read a tabular billing file (CSV, gzip CSV or Parquet) in chunks of text columns.

Every cell comes back as text ("" for missing) so that each reader validates and converts the
columns it needs itself, and names the exact row and column of a bad value. Row numbers follow the
CSV convention people see in a spreadsheet: the header is row 1, the first data row is row 2
(Parquet rows are numbered the same way). A chunk holds at most `chunk_rows` rows, so a large file
is never in memory whole.

A CSV is checked to be UTF-8 without NUL bytes before pandas reads it (one streaming pass): pandas
would name no line for a bad byte, and its C parser cuts a field at a NUL. Any failure to read the
file (a truncated gzip or Parquet file, random bytes) is a BillingFileError naming the file.
"""

from __future__ import annotations

import codecs
import csv
import gzip
import zlib
from collections.abc import Iterator
from pathlib import Path

import pandas as pd

from procurement.billing.records import CHUNK_ROWS, BillingFileError

MISSING_MARKERS = ("null", "NULL", "None")  # FOCUS samples write a literal null for an empty cell
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
    """Data rows in the file (for the progress bar and the count of a rejected file)."""
    kind = file_kind(path)
    if kind == "parquet":
        import pyarrow.parquet as pq

        try:
            return pq.ParquetFile(path).metadata.num_rows
        except _arrow_errors() as error:
            raise _unreadable(path, kind, error) from None
    opener = gzip.open if kind == "gzip" else open
    try:
        with opener(path, "rb") as handle:
            return max(sum(1 for _ in handle) - 1, 0)
    except READ_ERRORS as error:
        raise _unreadable(path, kind, error) from None


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
    path: Path, columns: list[str], *, chunk_rows: int = CHUNK_ROWS
) -> Iterator[tuple[int, pd.DataFrame]]:
    """(row number of the chunk's first row, text frame of `columns`) for each chunk; absent columns are ""."""
    kind = file_kind(path)
    present = set(header(path))
    wanted = [name for name in columns if name in present]
    if kind != "parquet":
        check_text(path)
    first_row = 2
    try:
        if kind == "parquet":
            frames = _parquet_chunks(path, wanted, chunk_rows)
        else:
            frames = pd.read_csv(
                path, usecols=wanted, dtype=str, keep_default_na=False, chunksize=chunk_rows,
                compression="gzip" if kind == "gzip" else None, encoding="utf-8-sig",
            )  # fmt: skip
        for frame in frames:
            frame = frame.reset_index(drop=True)
            for name in columns:
                if name not in frame.columns:
                    frame[name] = ""
            frame = frame[columns].replace(list(MISSING_MARKERS), "")
            _check_nul(frame, str(path), first_row)
            yield first_row, frame
            first_row += len(frame)
    except READ_ERRORS + _arrow_errors() as error:
        raise _unreadable(path, kind, error, row=first_row) from None


def _check_nul(frame: pd.DataFrame, file: str, first_row: int) -> None:
    """PostgreSQL text cannot hold NUL (a Parquet string can)."""
    for name in frame.columns:
        holds = frame[name].str.contains("\x00", regex=False).to_numpy(dtype=bool)
        if holds.any():
            row = first_row + int(holds.argmax())
            raise BillingFileError(file, "holds a NUL character", row=row, column=name)


def _parquet_chunks(path: Path, columns: list[str], chunk_rows: int) -> Iterator[pd.DataFrame]:
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    parquet = pq.ParquetFile(path)
    for batch in parquet.iter_batches(batch_size=chunk_rows, columns=columns):
        arrays = {}
        for name, array in zip(batch.schema.names, batch.columns, strict=True):
            if pa.types.is_map(array.type) or pa.types.is_struct(array.type) or pa.types.is_list(array.type):
                arrays[name] = pd.Series(array.to_pylist(), dtype=object).map(_json_text)
                continue
            if pa.types.is_timestamp(array.type):
                array = (
                    pc.strftime(array, format="%Y-%m-%dT%H:%M:%S%z")
                    if array.type.tz
                    else pc.strftime(array, format="%Y-%m-%dT%H:%M:%S")
                )
            elif not pa.types.is_string(array.type) and not pa.types.is_large_string(array.type):
                array = pc.cast(array, pa.string())
            # to_pandas gives an object column of str/None at C speed (to_pylist builds it in Python)
            arrays[name] = pd.Series(array.to_pandas(), dtype=object).fillna("")
        yield pd.DataFrame(arrays)


def _json_text(value) -> str:
    import json

    if value is None:
        return ""
    if isinstance(value, list) and all(isinstance(item, tuple) and len(item) == 2 for item in value):
        value = dict(value)  # pyarrow gives a map column as a list of (key, value) pairs
    return json.dumps(value, sort_keys=True)
