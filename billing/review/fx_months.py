"""FX by charge month (issue 28): money in another currency is converted at the rate of the month it
was charged in, and a month without a stored rate leaves out only its own rows, with a warning.

The rate of a month is the newest stored rate dated on or before the month's last day (the rate in
force when the month closed), crossed through USD, the base every stored rate has. A rate stored only
after the month does not convert it: it would be another month's rate. Plain Python, no ORM: the
stored rates come in as `history` (selectors.fx_history).
"""

from __future__ import annotations

import bisect
import datetime as dt
from decimal import Decimal

import numpy as np
import pandas as pd

from billing.storage import review_sql
from billing.storage.frame_sql import FrameSql
from billing.storage.months import month_bounds, month_codes, month_label

RATE_RULE = (
    "money in another currency is converted at the rate of its charge month: the newest stored rate dated "
    "on or before the month's last day, through USD"
)


def rates_by_month(
    history: dict[str, list[tuple[dt.date, Decimal]]], currency: str, months: list[str]
) -> dict[str, dict[str, Decimal]]:
    """For each month: units of `currency` one unit of each stored currency buys, at that month's rates.
    `history`: currency -> [(as_of, units of USD per unit)] sorted by date; USD is 1 always."""
    found: dict[str, dict[str, Decimal]] = {}
    for label in months:
        last_day = month_bounds(label)[1] - dt.timedelta(days=1)
        usd = {"USD": Decimal(1)}
        for code, dated in history.items():
            position = bisect.bisect_right([day for day, _ in dated], last_day)
            if position:
                usd[code] = dated[position - 1][1]
        if currency in usd:
            found[label] = {code: rate / usd[currency] for code, rate in usd.items()}
        else:
            found[label] = {}
    return found


def rate_of(request, currency: str, month: str) -> Decimal | None:
    """The rate of `request` (review.ReviewRequest) for `currency` in `month`; a request without rates by
    month (an engine caller's) has one rate for every month."""
    if currency == request.currency:
        return Decimal(1)
    if request.fx_months:
        return request.fx_months.get(month, {}).get(currency)
    return request.fx_to_currency.get(currency)


def groups_by_currency_month(frame: pd.DataFrame, mask: np.ndarray) -> dict[tuple[str, str], np.ndarray]:
    """Positions of the rows under `mask`, grouped by (currency, charge month label)."""
    positions = np.flatnonzero(mask)
    if not len(positions):
        return {}
    currencies = frame["currency"].astype(object).to_numpy()[positions]
    codes = month_codes(frame["charge_period_start"].iloc[positions])
    keys = pd.DataFrame({"currency": currencies, "month": codes})
    return {
        (str(currency), month_label(int(code))): positions[index]
        for (currency, code), index in keys.groupby(["currency", "month"], sort=True).indices.items()
    }


def missing_rates(frame: pd.DataFrame, request) -> list[dict]:
    """The (currency, month) pairs of `frame` that have no rate into the review currency: how many rows
    and how much they billed, in their own currency (micro-units); these rows are left out of the review.
    Summed per pair by review_sql.FX_MONTHS in DuckDB; a pre-aggregated frame (storage/duckdb_review.py,
    `grouped`) says how many bill lines each of its rows stands for in `row_count`."""
    other = (frame["currency"] != request.currency).to_numpy(bool)
    if not other.any():
        return []
    lines = "row_count" if "row_count" in frame else "1"
    rows = frame.loc[
        other, ["currency", "charge_period_start", "billed_micros", *([lines] if lines != "1" else [])]
    ]
    with FrameSql() as sql:
        found = sql.register("fx_rows", rows).rows(
            review_sql.FX_MONTHS.format(lines=lines), {"currency": request.currency}
        )
    return [
        {"currency": str(currency), "month": str(month), "rows": int(count), "billed_micros": int(billed)}
        for currency, month, count, billed in found
        if rate_of(request, str(currency), str(month)) is None
    ]


def missing_rate_warning(entry: dict, review_currency: str, bills: list[str]) -> str:
    """The warning of one missing rate, naming the bills and the month."""
    named = ", ".join(bills) if bills else "an imported bill"
    return (
        f"{named}: no stored FX rate from {entry['currency']} to {review_currency} for {entry['month']} "
        f"(none dated on or before the month's end); its {entry['rows']} {entry['currency']} row(s) "
        f"({entry['billed_cost']} {entry['currency']} billed) are left out of this review; add the rate "
        f"(admin: FX rates) to include them"
    )
