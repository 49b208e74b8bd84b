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
import re
import zlib
from pathlib import Path

from django.conf import settings

from billing.imports.records import BillingFileError, blocks

READ_BLOCK = 1 << 20
MAX_DECOMPRESSED_BYTES = 16 << 30  # 16 GiB of CSV: several months of a large CUR 2.0 export
MAX_LINE_BYTES = 1 << 20  # 1 MiB
# gzip of CSV shrinks a real export 5-50 times; gzip's most is about 1,030 (one byte repeated). Past
# EXPANSION_CHECKED_AFTER bytes, a file expanding more than MAX_EXPANSION times is a bomb, refused then
# rather than after 16 GiB (a 16 MB gzip of newlines would otherwise hold a worker for minutes).
MAX_EXPANSION = 250
EXPANSION_CHECKED_AFTER = 64 << 20


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
        _check_stream(path, gzip.open, compressed_bytes=path.stat().st_size)
    else:
        _check_stream(path, open)


def _check_stream(path: Path, opener, compressed_bytes: int | None = None) -> None:
    max_bytes, max_line = _limits()
    max_expansion = getattr(settings, "BILLING_MAX_EXPANSION", MAX_EXPANSION)
    if compressed_bytes is not None:
        max_bytes = min(max_bytes, max(EXPANSION_CHECKED_AFTER, compressed_bytes * max_expansion))
    # a run of more than max_line bytes without a newline, found by the regex engine: the scan stays at
    # C speed however many lines a block holds (a Python step per line let a 0.5 MB gzip of 512 MiB of
    # empty lines hold a worker for minutes)
    too_long = re.compile(b"[^\n]{%d}" % (max_line + 1))
    # the lines are not counted on the way (counting newlines was 80% of this scan's CPU time, 0.2 of 0.25
    # s at 1M bench rows, before the first row is read: issue 28); a line over the bound is named by its
    # offset, counted again only then (_long_line)
    total, carried = 0, 0  # carried: bytes of the line still open at the block's end
    try:
        with opener(path, "rb") as handle:
            for block in blocks(handle, READ_BLOCK):
                start, total = total, total + len(block)
                first = block.find(b"\n")
                if first < 0:
                    carried += len(block)
                    if carried > max_line:
                        raise _long_line(path, opener, start, max_line)
                else:
                    if carried + first > max_line:
                        raise _long_line(path, opener, start, max_line)
                    last = block.rfind(b"\n")
                    inside = too_long.search(block, first + 1, last) if last - first > max_line else None
                    if inside is not None:
                        raise _long_line(path, opener, start + inside.start(), max_line)
                    carried = len(block) - last - 1
                    if carried > max_line:
                        raise _long_line(path, opener, total, max_line)
                if total > max_bytes:
                    raise FileOutOfBounds(
                        str(path),
                        f"over {max_bytes // 2**20} MiB once decompressed (at most {max_bytes // 2**20} MiB, "
                        f"or {max_expansion} times the gzip file); split the export or check it is a bill",
                    )
    except (OSError, EOFError, zlib.error):
        return  # a damaged file: the readers name what is wrong with it


def _long_line(path: Path, opener, offset: int, max_line: int) -> FileOutOfBounds:
    """The refusal of a line over the bound, named by its number: one more than the newlines before
    `offset` (a byte of that line, in the decompressed stream), counted by reading the file again up to it."""
    newlines, read = 0, 0
    with opener(path, "rb") as handle:
        while read < offset:
            block = handle.read(min(READ_BLOCK, offset - read))
            if not block:
                break
            newlines, read = newlines + block.count(b"\n"), read + len(block)
    return FileOutOfBounds(
        str(path),
        f"a line over {max_line // 1024} KiB (no billing export has one); not a billing file?",
        row=newlines + 1,
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
    max_line = _limits()[1]
    groups = [metadata.row_group(index) for index in range(metadata.num_row_groups)]
    for number, group in enumerate(groups, start=1):
        # a row is a CSV line's peer: a row group whose rows average over the line bound holds a cell that
        # Arrow would decode whole (one 300 MiB cell compresses to 13 KB of zstd)
        if group.total_byte_size > max_line * max(group.num_rows, 1):
            raise FileOutOfBounds(
                str(path), f"row group {number}: rows over {max_line // 1024} KiB each (not a billing file?)"
            )
    size = sum(group.total_byte_size for group in groups)
    if size > max_bytes:
        raise FileOutOfBounds(str(path), f"over {max_bytes // 2**20} MiB uncompressed; split the export")
