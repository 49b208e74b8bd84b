"""A budget's fields checked one by one (amount, currency, month), without pandas: the admin's budget form
uses them at start-up, the budget service before it saves. Each bad value is a ReviewInputError naming
the field."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal, InvalidOperation

from billing.input_errors import ReviewInputError
from pricing.fx import fx_rates
from pricing.providers.currencies import currency_problem

MAX_BUDGET = Decimal("1e14")  # the largest money the spend rows hold (docs/billing.md, "Hostile files")


def parse_month(value) -> dt.date:
    if isinstance(value, dt.date):
        if value.day != 1:
            raise ReviewInputError("month", f"must be the first day of a month, got {value.isoformat()}")
        return value
    text = str(value or "").strip()
    try:
        return dt.date.fromisoformat(f"{text}-01" if len(text) == 7 else text).replace(day=1)
    except ValueError:
        raise ReviewInputError("month", f"must be YYYY-MM, got {text[:20]!r}") from None


def parse_amount(value) -> Decimal:
    try:
        amount = Decimal(str(value).strip())
    except (InvalidOperation, ValueError):
        raise ReviewInputError("amount", f"must be a decimal number, got {str(value)[:30]!r}") from None
    if not amount.is_finite():
        raise ReviewInputError("amount", "must be a finite number")
    if amount < 0:
        raise ReviewInputError("amount", f"a budget cannot be negative, got {amount}")
    if amount >= MAX_BUDGET or amount.as_tuple().exponent < -6:
        raise ReviewInputError("amount", "must be under 1e14 with at most 6 decimal places")
    return amount


def check_currency(code) -> str:
    code = str(code or "").strip().upper()
    problem = currency_problem(code)
    if problem:
        raise ReviewInputError("currency", problem)
    if code not in fx_rates(base="USD"):
        raise ReviewInputError("currency", f"no stored FX rate for {code}: add one before budgeting in it")
    return code
