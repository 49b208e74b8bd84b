"""The one writer of every CSV and XLSX cell the product emits: text a spreadsheet would run reaches it
as text (OWASP, "CSV Injection", https://owasp.org/www-community/attacks/CSV_Injection).

A cell whose text starts with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return is taken as a
formula by Excel, LibreOffice and Google Sheets, so a team or account name from a billing tag like
``=HYPERLINK("http://evil","click")`` must be shown, never run. OWASP adds that the start of the
field is not enough: a separator (``,`` or ``;``, the list separator of many locales) or a quote
inside a field starts a new cell for a reader that splits on it, so a trigger right after one is
escaped as well. The escape is OWASP's: a single quote before the trigger.

Numbers are not text: an ``int``, ``float`` or ``Decimal`` and a string that is only a plain number
(``-12.50``, what the reports write for a money column) pass as they are, since a number cannot run.
XLSX stores text as a string cell, with Excel's quote prefix when it looks like a formula; a formula
the product writes itself (a totals row's ``=SUM``) is set on the cell directly, never through here.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Iterable
from decimal import Decimal
from typing import Any

FORMULA_TRIGGERS = ("=", "+", "-", "@", "\t", "\r")
# a trigger at the start of the text, or right after a character that starts a new cell for a reader
# that splits on it (comma, semicolon, double quote, pipe, tab, line break), is a cell start a spreadsheet
# may run; after a single quote it is already text
_CELL_STARTS = re.compile(r"(^|[,;\"|\t\n\r])(?=[=+\-@\t\r])")
_PLAIN_NUMBER = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?")


def is_formula_like(text: str) -> bool:
    return text.startswith(FORMULA_TRIGGERS)


def csv_text(text: str) -> str:
    """The text with a quote before every trigger that starts a cell; plain numbers are kept."""
    if _PLAIN_NUMBER.fullmatch(text):
        return text
    return _CELL_STARTS.sub(lambda match: match.group(1) + "'", text)


def csv_cell(value: Any) -> Any:
    if value is None:
        return ""
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, int | float | Decimal):
        return value
    return csv_text(str(value))


class SafeCsvWriter:
    """``csv.writer`` whose every cell goes through ``csv_cell`` first."""

    def __init__(self, stream, **options) -> None:
        self._writer = csv.writer(stream, **options)

    def writerow(self, row: Iterable[Any]) -> None:
        self._writer.writerow([csv_cell(value) for value in row])

    def writerows(self, rows: Iterable[Iterable[Any]]) -> None:
        for row in rows:
            self.writerow(row)


def csv_writer(stream, **options) -> SafeCsvWriter:
    return SafeCsvWriter(stream, **options)


def xlsx_text(cell, text: Any) -> None:
    """A text cell that stays text: formula-like strings are stored as strings with a quote prefix."""
    value = "" if text is None else str(text)
    cell.value = value
    if is_formula_like(value):
        cell.data_type = "s"
        cell.quotePrefix = True
