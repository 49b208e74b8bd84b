"""Spreadsheet formula injection: text a spreadsheet would run must reach it as text.

A cell whose text starts with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return is taken as a
formula by Excel, LibreOffice and Google Sheets (OWASP, "CSV Injection"). A provider or team name
like ``=HYPERLINK("http://evil","click")`` must be shown, never run. XLSX writes such text as a
string cell with Excel's quote prefix; CSV prefixes it with a single quote, the OWASP remedy.
Numbers are written by their column type and never pass through here.
"""

from __future__ import annotations

FORMULA_TRIGGERS = ("=", "+", "-", "@", "\t", "\r")


def is_formula_like(text: str) -> bool:
    return text.startswith(FORMULA_TRIGGERS)


def csv_text(text: str) -> str:
    return "'" + text if is_formula_like(text) else text
