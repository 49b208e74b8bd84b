"""Reads for the dashboard's finance panel: one month's GPU spend, its top savings, and how fresh the prices are.

Thin Django shell over the billing review (``billing.review.service``): the month is this one
when it has spend rows, else the latest month that does (a bill lands days after a month closes, so
"this month" is often still empty). Only finance and admin are shown it (the view decides).
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

TOP_SAVINGS = 3


def _month_bounds(day: dt.date) -> tuple[dt.date, dt.date]:
    start = day.replace(day=1)
    return start, (start + dt.timedelta(days=32)).replace(day=1)


def spend_month(today: dt.date, teams: tuple[str, ...] = ()) -> tuple[dt.date, dt.date] | None:
    """This month when it has spend rows, else the latest month that has; None without any spend.
    `teams`: only these teams' rows count (an engineer's granted access)."""
    from billing.review.selectors import month_with_rows

    start, end = _month_bounds(today)
    in_month, newest = month_with_rows(start, end, teams)
    if in_month:
        return start, end
    return _month_bounds(newest.astimezone(dt.UTC).date()) if newest is not None else None


def price_freshness(now: dt.datetime | None = None) -> dict:
    """Current catalog prices: how many, how many are past their freshness limit, the newest's date
    (counted in SQL: the catalog may hold hundreds of thousands of prices). Without `now`, as of this
    minute's start and cached per price version and minute (pricing/price_cache.py)."""
    from pricing.offer_pages import current_price_freshness
    from pricing.price_cache import cached_price_read

    if now is not None:
        return current_price_freshness(now)
    return cached_price_read("price-freshness", current_price_freshness)


def finance_summary(now: dt.datetime | None = None, scope=None) -> dict:
    """`scope` (billing.access.SpendScope): an engineer's granted teams; None: all spend.
    Without `now`, as of this minute's start, cached per price version, billing data and minute (the
    dashboard's read: pricing/price_cache.py, billing/review/cache.py)."""
    from billing.review.cache import billing_data_key
    from pricing.price_cache import cached_price_read

    if now is None:
        teams = scope.teams if scope is not None else ()
        return cached_price_read(
            "finance-summary", lambda minute: _finance_summary(minute, scope), teams, billing_data_key()
        )
    return _finance_summary(now, scope)


def _finance_summary(now: dt.datetime, scope) -> dict:
    from billing.review.service import build_review, make_request

    freshness = price_freshness(now)
    teams = scope.teams if scope is not None else ()
    month = spend_month(now.date(), teams)
    summary = {"month": None, "price_freshness": freshness, "teams": teams}
    if month is None:
        return summary
    review = build_review(make_request(start=month[0], end=month[1], scope=scope))
    savings = sorted(review["savings"], key=lambda saving: Decimal(saving["amount"]), reverse=True)
    return summary | {
        "month": month[0],
        "month_end": month[1],
        "is_current_month": month[0] == now.date().replace(day=1),
        "currency": review["currency"],
        "totals": review["totals"],
        "non_gpu_cost": review["non_gpu_cost"],
        "top_savings": savings[:TOP_SAVINGS],
    }
