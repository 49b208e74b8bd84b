"""Bounds on a billing file before anything parses it: its decompressed size and its longest line.

A gzip file of 204 KB can expand to 200 MB of one line; the CSV readers hold a whole line (the csv
module) or a whole block (Arrow) in memory before they see anything wrong, so that file took 19.5 s
and a 2 GB worker before it was refused (issue 31). This scan streams the decompressed bytes in
blocks of 1 MiB and stops at the first block past either bound, naming the file and the line, so a
bomb is refused after reading about one block more than the bound, in bounded memory.

The bounds are generous for real exports: a month of a large AWS CUR 2.0 is a few GiB of CSV whose
longest line (one resource with its tags) is a few KiB; MAX_LINE_BYTES is the csv module's default
field limit (131,072 characters) times eight, so a line under it can still hold a field over that
limit, which the readers refuse as a clean error naming the line (chunks.py).
"""

from __future__ import annotations

import gzip
import zlib
from pathlib import Path

from django.conf import settings

from procurement.billing.records import BillingFileError

READ_BLOCK = 1 << 20
MAX_DECOMPRESSED_BYTES = 16 << 30  # 16 GiB of CSV: several months of a large CUR 2.0 export
MAX_LINE_BYTES = 1 << 20  # 1 MiB


class FileOutOfBounds(BillingFileError):
    """Over a bound: refused before any row is read (its rows are not counted either)."""


def _limits() -> tuple[int, int]:
    return (
        getattr(settings, "BILLING_MAX_DECOMPRESSED_BYTES", MAX_DECOMPRESSED_BYTES),
        getattr(settings, "BILLING_MAX_LINE_BYTES", MAX_LINE_BYTES),
    )


def check_bounds(path: Path) -> None:
    """Raise FileOutOfBounds naming the file (and line) of the first bound passed."""
    with open(path, "rb") as handle:
        head = handle.read(4)
    if head == b"PAR1":
        _check_parquet(path)
    elif head[:2] == b"\x1f\x8b":
        _check_stream(path, gzip.open)
    else:
        _check_stream(path, open)


def _check_stream(path: Path, opener) -> None:
    max_bytes, max_line = _limits()
    total, line, line_length = 0, 1, 0
    try:
        with opener(path, "rb") as handle:
            for block in iter(lambda: handle.read(READ_BLOCK), b""):
                total += len(block)
                end = block.find(b"\n")
                start = 0
                while end >= 0:
                    if line_length + end - start > max_line:
                        raise _long_line(path, line, max_line)
                    line, line_length, start = line + 1, 0, end + 1
                    end = block.find(b"\n", start)
                line_length += len(block) - start
                if line_length > max_line:
                    raise _long_line(path, line, max_line)
                if total > max_bytes:
                    raise FileOutOfBounds(
                        str(path), f"over {max_bytes // 2**20} MiB once decompressed; split the export"
                    )
    except (OSError, EOFError, zlib.error):
        return  # a damaged file: the readers name what is wrong with it


def _long_line(path: Path, line: int, max_line: int) -> FileOutOfBounds:
    return FileOutOfBounds(
        str(path),
        f"a line over {max_line // 1024} KiB (no billing export has one); not a billing file?",
        row=line,
    )


def _check_parquet(path: Path) -> None:
    """Parquet says its uncompressed size in its footer: refuse before reading a row group."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    max_bytes, _ = _limits()
    try:
        metadata = pq.ParquetFile(path).metadata
    except (pa.ArrowException, OSError):
        return  # unreadable: the reader names it
    size = sum(metadata.row_group(index).total_byte_size for index in range(metadata.num_row_groups))
    if size > max_bytes:
        raise FileOutOfBounds(str(path), f"over {max_bytes // 2**20} MiB uncompressed; split the export")
