"""Currency conversion through stored FX rates (never a live call, never a float)."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

from pricing.models import FxRate


class MissingFxRate(LookupError):
    def __init__(self, currency: str, base: str):
        self.currency = currency
        super().__init__(
            f"No FX rate stored for {currency} → {base}; add one (admin: FX rates) before using {currency} prices."
        )


def fx_rates(*, base: str = "USD", on: dt.date | None = None) -> dict[str, Decimal]:
    """The newest rate of every currency into `base`, as of `on` (default: latest)."""
    rates: dict[str, Decimal] = {base: Decimal(1)}
    rows = FxRate.objects.filter(base=base).order_by("currency", "-as_of")
    if on is not None:
        rows = rows.filter(as_of__lte=on)
    for row in rows:
        rates.setdefault(row.currency, row.rate)
    return rates
