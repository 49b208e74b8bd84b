"""A team's monthly GPU budget against its burn: forecast to month end and the overrun date (no ORM).

Forecast method (docs/billing.md, "Budgets"): **linear run-rate of the days so far**. The days so far are
the days of the month up to `data_through` (exclusive: the day after the newest charge day stored for
the month, so a bill that lags a day is not read as a day without spend); forecast = burn ÷ days so far ×
days in the month. The overrun date is the day the cumulative spend reaches the budget: the day it did,
when the burn already has, else the day the run-rate reaches it (day ⌈budget × days so far ÷ burn⌉), if
that falls within the month. Exact Decimal arithmetic throughout; rounding happens at the report edge.
"""

from __future__ import annotations

import calendar
import datetime as dt
from dataclasses import dataclass
from decimal import ROUND_CEILING, Decimal

THRESHOLDS_PCT = (80, 100)  # the forecast crossing each of these sends one e-mail (per budget and month)
FORECAST_METHOD = "linear run-rate of the days so far (burn ÷ days so far × days in the month)"


@dataclass(frozen=True)
class BudgetStatus:
    amount: Decimal
    burn: Decimal
    forecast: Decimal
    days_so_far: int
    days_in_month: int
    overrun_date: dt.date | None
    thresholds_crossed: tuple[int, ...]

    @property
    def burn_pct(self) -> Decimal | None:
        return _pct(self.burn, self.amount)

    @property
    def forecast_pct(self) -> Decimal | None:
        return _pct(self.forecast, self.amount)

    @property
    def state(self) -> str:
        if self.amount > 0 and self.burn >= self.amount or self.amount == 0 and self.burn > 0:
            return "over_budget"
        if 100 in self.thresholds_crossed:
            return "forecast_over"
        if 80 in self.thresholds_crossed:
            return "at_risk"
        return "on_track"


def _pct(part: Decimal, whole: Decimal) -> Decimal | None:
    return None if whole <= 0 else (part / whole * 100).quantize(Decimal("0.1"))


def days_in_month(month: dt.date) -> int:
    return calendar.monthrange(month.year, month.month)[1]


def month_closed(month: dt.date, today: dt.date) -> bool:
    """Whether `month` has ended by `today` (its budget can no longer be acted on, only reported)."""
    following = (month.replace(day=1) + dt.timedelta(days=32)).replace(day=1)
    return following <= today


def budget_status(
    *, amount: Decimal, month: dt.date, daily_spend: dict[dt.date, Decimal], data_through: dt.date
) -> BudgetStatus:
    """`daily_spend`: the team's spend per charge day, in the budget's currency; days outside the month or
    from `data_through` on are ignored."""
    if amount < 0:
        raise ValueError("amount: a budget cannot be negative")
    month = month.replace(day=1)
    length = days_in_month(month)
    so_far = min(max((data_through - month).days, 0), length)
    end = month + dt.timedelta(days=so_far)
    days = sorted((day, value) for day, value in daily_spend.items() if month <= day < end)
    burn = sum((value for _, value in days), Decimal(0))
    forecast = burn * length / so_far if so_far else Decimal(0)
    crossed = tuple(t for t in THRESHOLDS_PCT if amount > 0 and forecast * 100 >= amount * t)
    return BudgetStatus(
        amount, burn, forecast, so_far, length, _overrun(amount, month, days, burn, so_far, length), crossed
    )


def _overrun(amount, month, days, burn, so_far, length) -> dt.date | None:
    if amount == 0:
        return next((day for day, value in days if value > 0), None)
    if burn >= amount:
        total = Decimal(0)
        for day, value in days:
            total += value
            if total >= amount:
                return day
    if burn <= 0 or so_far == 0:
        return None
    day_number = int((amount * so_far / burn).to_integral_value(rounding=ROUND_CEILING))
    return month + dt.timedelta(days=day_number - 1) if day_number <= length else None
