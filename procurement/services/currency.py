"""Results in another currency: the rate from USD (the ranking engine's currency) through stored FX rates.

Never a live rate and never 1:1 for a missing one: a currency without a stored rate is an input error
naming the currency, raised before anything is stored.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from decimal import Decimal

from django.db.models import Q

from pricing.models import FxRate
from procurement.costing.values import CostInputError, convert_currency, currency_code
from procurement.services.tco import fx_pairs_into

ENGINE_CURRENCY = "USD"


@dataclass(frozen=True)
class UsdConversion:
    currency: str
    rate: Decimal  # units of ``currency`` one USD buys
    as_of: dt.date | None  # the stored rate's date (None for USD itself)


def usd_conversion(currency: object, *, field: str = "currency") -> UsdConversion:
    """The newest stored rate from USD into ``currency``; raises CostInputError naming the currency."""
    code = currency_code(currency, field)
    if code == ENGINE_CURRENCY:
        return UsdConversion(code, Decimal(1), None)
    rates = fx_pairs_into(code)
    try:
        rate = convert_currency(
            Decimal(1), from_currency=ENGINE_CURRENCY, to_currency=code, rates=rates, field=field
        )
    except CostInputError:
        raise CostInputError(
            field, f"no FX rate stored for {code}; add one (admin: FX rates) to rank in {code}"
        ) from None
    return UsdConversion(code, rate, _rate_date(code))


def _rate_date(code: str) -> dt.date | None:
    pair = Q(currency=code, base=ENGINE_CURRENCY) | Q(currency=ENGINE_CURRENCY, base=code)
    return FxRate.objects.filter(pair).order_by("-as_of").values_list("as_of", flat=True).first()
