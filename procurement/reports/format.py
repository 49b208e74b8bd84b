"""How a typed cell reads on a page or a PDF: thousands separators, sensible decimals, % for shares."""

from __future__ import annotations

from decimal import Decimal, InvalidOperation
from typing import Any

from gpuledger.templatetags.formatting import hourly

# A price per hour reads with at most 4 decimals on a page or PDF (|hourly, the pages' one filter set);
# the XLSX and CSV exports keep all 6 (issue 30).
DECIMALS = {"money": 2, "price": 4, "number": 2, "integer": 0}


def as_decimal(value: Any) -> Decimal | None:
    if value is None or value == "":
        return None
    try:
        return Decimal(str(value))
    except InvalidOperation:
        return None


def display(value: Any, column_type: str, currency: str = "") -> str:
    """The text a reader sees; an unreadable number is shown as given rather than hidden."""
    if value is None:
        return "—"
    if column_type in ("text", "date"):
        return str(value)
    number = as_decimal(value)
    if number is None:
        return str(value)
    if column_type == "percent":
        return f"{number * 100:,.1f}%"
    if column_type == "price":
        return hourly(number)
    if column_type == "number":
        places = 0 if number == number.to_integral_value() else DECIMALS["number"]
        return f"{number:,.{places}f}"
    text = f"{number:,.{DECIMALS[column_type]}f}"
    return f"{text} {currency}" if column_type == "money" and currency else text
