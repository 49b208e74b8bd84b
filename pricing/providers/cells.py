"""Parse single cells of a source file into typed values, naming the cell on failure.

Every parser raises ``SourceRowError`` with the location ("file:line") and the column, so a person
can open the file at the right line. Prices are quantized to 6 decimal places, the precision the
catalog stores, so that re-reading a file yields equal records.
"""

from __future__ import annotations

from decimal import Decimal, InvalidOperation

from pricing.providers.records import SourceRowError

PRICE_QUANTUM = Decimal("0.000001")
# No number a price file holds is this large (the widest stored column, an hourly price, holds 12
# integer digits); larger values (1e308) are errors, not overflows further on.
MAX_MAGNITUDE = 10**12


def decimal_or_none(cell: str | None, *, location: str, field: str) -> Decimal | None:
    """A finite decimal, or None for an empty cell."""
    text = (cell or "").strip()
    if not text:
        return None
    try:
        value = Decimal(text)
    except InvalidOperation:
        raise SourceRowError(location, field, f"{shown(text)} is not a number") from None
    if not value.is_finite():
        raise SourceRowError(location, field, f"{shown(text)} is not a finite number")
    if abs(value) >= MAX_MAGNITUDE:
        raise SourceRowError(location, field, f"{shown(text)} is too large (at most {MAX_MAGNITUDE - 1})")
    return value


def shown(text: str, limit: int = 40) -> str:
    """A cell as an error message quotes it: repr, cut to `limit` characters (never a whole input)."""
    return repr(text) if len(text) <= limit else repr(text[:limit]) + f"… ({len(text)} characters)"


def required_decimal(cell: str | None, *, location: str, field: str) -> Decimal:
    """A finite decimal that must be present."""
    value = decimal_or_none(cell, location=location, field=field)
    if value is None:
        raise SourceRowError(location, field, "is empty")
    return value


def price_or_none(cell: str | None, *, location: str, field: str) -> Decimal | None:
    """An hourly price quantized to 6 places; None for "no price" (empty cell or zero).

    Catalogs write 0.00 where they have no price (Vast spot) and a price is never free, so zero
    means missing. A negative price is a broken row, not a missing one.
    """
    value = decimal_or_none(cell, location=location, field=field)
    if value is None:
        return None
    if value < 0:
        raise SourceRowError(location, field, f"negative price {cell.strip()!r}")
    quantized = value.quantize(PRICE_QUANTUM)
    return quantized if quantized > 0 else None


def format_count(count: Decimal) -> str:
    """A GPU count as people write it: 1, 8, 0.5 (no trailing zeros)."""
    return format(count.normalize(), "f")
