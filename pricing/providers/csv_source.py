"""Read a CSV source file defensively: every failure is a SourceRowError naming file, line and column.

The file is read as bytes and decoded line by line, so a byte that is not UTF-8 is reported where it
is (line, column) instead of as a UnicodeDecodeError from somewhere in an 8 KB buffer; a csv-module
error (a field over the size limit, a stray quote) names its line too. A UTF-8 byte-order mark on the
first line is dropped, as ``utf-8-sig`` does.
"""

from __future__ import annotations

import csv
from collections.abc import Iterator
from pathlib import Path

from pricing.providers.records import SourceRowError

BOM = "\ufeff"
MAX_LINE_BYTES = 1 << 20  # a price row is ~200 bytes; a 1 MB line is not a price file


class CsvSource:
    """Iterate the rows of a CSV file (lists of cells); `line_num` is the last physical line read."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self._handle = self.path.open("rb")
        self._reader = csv.reader(self._lines())
        self._physical_line = 0

    def _lines(self) -> Iterator[str]:
        for raw in self._handle:
            self._physical_line += 1
            if len(raw) > MAX_LINE_BYTES:
                raise SourceRowError(
                    f"{self.path}:{self._physical_line}:1",
                    "(file)",
                    f"line longer than {MAX_LINE_BYTES} bytes",
                )
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as error:
                byte = raw[error.start]
                raise SourceRowError(
                    f"{self.path}:{self._physical_line}:{error.start + 1}",
                    "(encoding)",
                    f"byte 0x{byte:02x} is not valid UTF-8 (save the file as UTF-8)",
                ) from None
            if self._physical_line == 1 and line.startswith(BOM):
                line = line[1:]
            yield line

    @property
    def line_num(self) -> int:
        return self._reader.line_num

    def __iter__(self) -> CsvSource:
        return self

    def __next__(self) -> list[str]:
        try:
            return next(self._reader)
        except csv.Error as error:
            raise SourceRowError(f"{self.path}:{self._reader.line_num}:1", "(csv)", str(error)) from None

    def __enter__(self) -> CsvSource:
        return self

    def __exit__(self, *exc_info) -> None:
        self._handle.close()
