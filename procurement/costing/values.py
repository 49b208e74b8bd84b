"""Typed input checks and money rounding shared by the cost engines.

Every engine input passes through these helpers so that a bad value fails with the field's
path (``buy.average_load``) instead of a ``decimal.InvalidOperation`` deep in a formula, and
so that every report rounds money the same way (half-up to the currency's minor unit, the
convention invoices and finance spreadsheets use).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation

from gpuledger.errors import InputError
from pricing.providers.currencies import currency_problem

HOURS_PER_MONTH = Decimal(730)  # 8760 / 12, the convention cloud price sheets use for "per month"
HOURS_PER_YEAR = Decimal(8760)  # 365 x 24; providers price 1y/3y terms on 8760 h a year
PRICE_QUANTUM = Decimal("0.000001")  # hourly prices keep 6 decimal places

# ISO 4217 minor units for currencies that do not use two decimals; everything else rounds to cents.
_MINOR_UNITS = {"JPY": 0, "KRW": 0, "CLP": 0, "ISK": 0, "VND": 0, "BHD": 3, "KWD": 3, "OMR": 3, "JOD": 3}
# the quantum each currency's money rounds to (built once: round_money runs ~100 times a ranked workload)
_MINOR_QUANTA = {currency: Decimal(1).scaleb(-places) for currency, places in _MINOR_UNITS.items()}
_CENTS = Decimal(1).scaleb(-2)
_CURRENCY_PATTERN = re.compile(r"^[A-Z]{3}$")


# No money amount, hour count or quantity a person types is this large; 1e308 would overflow the
# float engines (or Decimal quantization) further on, so it is refused here, naming the field.
MAX_INPUT_NUMBER = Decimal("1e15")


class CostInputError(InputError):
    """A cost-engine input that cannot be used; ``field`` is its path in the input document."""


def to_decimal(value: object, field: str) -> Decimal:
    """Read a number (int, str, Decimal or float) exactly as written; reject bools, NaN and infinity."""
    if isinstance(value, bool) or value is None:
        raise CostInputError(field, f"must be a number, got {value!r}")
    if isinstance(value, float):
        if not math.isfinite(value):
            raise CostInputError(field, f"must be a finite number, got {value!r}")
        value = repr(
            value
        )  # repr keeps the shortest round-trip form: 0.1 stays 0.1, not 0.1000000000000000055
    if isinstance(value, Decimal):  # Decimal(str(d)) is d, digit for digit: skip the round trip
        number = value
    else:
        try:
            number = Decimal(str(value).strip())
        except InvalidOperation:
            raise CostInputError(field, f"must be a number, got {shown(value)}") from None
    if not number.is_finite():
        raise CostInputError(field, f"must be a finite number, got {shown(value)}")
    if abs(number) >= MAX_INPUT_NUMBER:
        raise CostInputError(field, f"is too large ({shown(value)}; at most {MAX_INPUT_NUMBER:.0e})")
    return number


def shown(value: object, limit: int = 40) -> str:
    """A value as an error quotes it: repr, cut to `limit` characters (never a whole input echoed back)."""
    text = repr(value)
    return text if len(text) <= limit else f"{text[:limit]}… ({len(text)} characters)"


def bounded_int(value: object, field: str, maximum: int) -> int:
    """A whole number from 1 to `maximum`: a size a request sets, bounded so one request is bounded work."""
    number = positive_int(value, field)
    if number > maximum:
        raise CostInputError(field, f"must be at most {maximum}, got {number}")
    return number


def non_negative(value: object, field: str) -> Decimal:
    number = to_decimal(value, field)
    if number < 0:
        raise CostInputError(field, f"must not be negative, got {number}")
    return number


def positive(value: object, field: str) -> Decimal:
    number = to_decimal(value, field)
    if number <= 0:
        raise CostInputError(field, f"must be greater than 0, got {number}")
    return number


def fraction(value: object, field: str, *, allow_zero: bool = True) -> Decimal:
    """A share between 0 and 1 inclusive (utilization, load, percentages written as fractions)."""
    number = to_decimal(value, field)
    if number > 1 or number < 0 or (number == 0 and not allow_zero):
        bounds = "between 0 and 1" if allow_zero else "greater than 0 and at most 1"
        raise CostInputError(field, f"must be {bounds}, got {number}")
    return number


def positive_int(value: object, field: str) -> int:
    number = to_decimal(value, field)
    if number != number.to_integral_value() or number < 1:
        raise CostInputError(field, f"must be a whole number of at least 1, got {shown(value)}")
    return int(number)


def currency_code(value: object, field: str = "currency") -> str:
    """An active ISO 4217 code (pricing.providers.currencies): 'XYZ' is three letters but no currency."""
    if not isinstance(value, str) or not _CURRENCY_PATTERN.match(value):
        raise CostInputError(field, f"must be a three-letter ISO 4217 code such as 'USD', got {value!r}")
    problem = currency_problem(value)
    if problem:
        raise CostInputError(field, problem)
    return value


def round_money(amount: Decimal, currency: str) -> Decimal:
    """Round half-up to the currency's minor unit (cents for USD/EUR, whole yen for JPY)."""
    quantum = _MINOR_QUANTA.get(currency, _CENTS)
    return amount.quantize(quantum, ROUND_HALF_UP)  # positional: half the call's cost of the keyword


def round_price(price_per_hour: Decimal) -> Decimal:
    """Hourly prices keep 6 decimal places (spot and per-GPU shares are often below a cent)."""
    return price_per_hour.quantize(PRICE_QUANTUM, ROUND_HALF_UP)


# Hours, months and GB a priced row shows keep 6 decimal places: the exact figures its money is priced on
# (aud48r, stop 48: hours printed to 3 decimals while the compute used the float missed by up to 18 cents)
QUANTITY_QUANTUM = Decimal("0.000001")


def round_quantity(value: float | Decimal) -> Decimal:
    """Hours, months or GB as the 6-decimal Decimal a row shows and its money is priced on."""
    exact = value if isinstance(value, Decimal) else Decimal(repr(float(value)))
    return exact.quantize(QUANTITY_QUANTUM, ROUND_HALF_UP)


def convert_currency(
    amount: Decimal,
    *,
    from_currency: str,
    to_currency: str,
    rates: Mapping[tuple[str, str], Decimal],
    field: str,
) -> Decimal:
    """Convert with an explicit FX table keyed ``(from, to)``; a missing pair is an input error, never 1:1."""
    if from_currency == to_currency:
        return amount
    if (from_currency, to_currency) in rates:
        return amount * rates[(from_currency, to_currency)]
    if (to_currency, from_currency) in rates:
        return amount / rates[(to_currency, from_currency)]
    raise CostInputError(field, f"no FX rate from {from_currency} to {to_currency}")
