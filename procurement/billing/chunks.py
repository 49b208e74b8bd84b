"""Read a tabular billing file (CSV, gzip CSV or Parquet) in chunks of text columns.

Every cell comes back as text ("" for missing) so that each reader validates and converts the
columns it needs itself, and names the exact row and column of a bad value. Row numbers follow the
CSV convention people see in a spreadsheet: the header is row 1, the first data row is row 2
(Parquet rows are numbered the same way). A chunk holds at most `chunk_rows` rows, so a large file
is never in memory whole.
"""

from __future__ import annotations

import csv
import gzip
from collections.abc import Iterator
from pathlib import Path

import pandas as pd

from procurement.billing.records import CHUNK_ROWS, BillingFileError

MISSING_MARKERS = ("null", "NULL", "None")  # FOCUS samples write a literal null for an empty cell
PARQUET_MAGIC = b"PAR1"
GZIP_MAGIC = b"\x1f\x8b"


def file_kind(path: Path) -> str:
    """'parquet', 'gzip' or 'csv', from the first bytes (extensions lie about exports)."""
    with open(path, "rb") as handle:
        head = handle.read(4)
    if head == PARQUET_MAGIC:
        return "parquet"
    if head[:2] == GZIP_MAGIC:
        return "gzip"
    return "csv"


def header(path: Path) -> list[str]:
    kind = file_kind(path)
    if kind == "parquet":
        import pyarrow.parquet as pq

        return list(pq.ParquetFile(path).schema_arrow.names)
    opener = gzip.open if kind == "gzip" else open
    with opener(path, "rt", newline="", encoding="utf-8-sig") as handle:
        return [name.strip() for name in next(csv.reader(handle), [])]


def count_rows(path: Path) -> int:
    """Data rows in the file (for the progress bar and the count of a rejected file)."""
    kind = file_kind(path)
    if kind == "parquet":
        import pyarrow.parquet as pq

        return pq.ParquetFile(path).metadata.num_rows
    opener = gzip.open if kind == "gzip" else open
    with opener(path, "rb") as handle:
        return max(sum(1 for _ in handle) - 1, 0)


def read_chunks(
    path: Path, columns: list[str], *, chunk_rows: int = CHUNK_ROWS
) -> Iterator[tuple[int, pd.DataFrame]]:
    """(row number of the chunk's first row, text frame of `columns`) for each chunk; absent columns are ""."""
    kind = file_kind(path)
    present = set(header(path))
    wanted = [name for name in columns if name in present]
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
            yield first_row, frame
            first_row += len(frame)
    except (pd.errors.ParserError, UnicodeDecodeError, OSError, EOFError) as error:
        raise BillingFileError(str(path), f"cannot be read as {kind}: {error}", row=first_row) from error


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
