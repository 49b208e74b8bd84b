"""One-at-a-time sensitivity of a TCO study: each driver moved -20% and +20%, for a tornado chart.

The measured outcome is the present-value advantage of buying, ``rent.npv - buy.npv`` (positive:
buying is cheaper). Utilization and the residual share are capped at 1: a study cannot use more
than every hour nor sell a server for more than it cost. The horizon moves by whole months.

One lever is counted once: for on-demand rent whose owned costs do not depend on use, the rent price
and the utilization scale the same rent bill, so their rows would be identical; they are reported as
one row, ``rent_price_or_utilization``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from decimal import Decimal
from typing import Any

from procurement.costing.tco import run_tco
from procurement.costing.tco_spec import TcoStudy
from procurement.costing.values import round_money

DEFAULT_SPREAD = Decimal("0.20")


def _scale_rent_price(study: TcoStudy, factor: Decimal) -> TcoStudy:
    rent = study.rent
    spot = None if rent.spot_price_per_gpu_hour is None else rent.spot_price_per_gpu_hour * factor
    return replace(
        study,
        rent=replace(rent, price_per_gpu_hour=rent.price_per_gpu_hour * factor, spot_price_per_gpu_hour=spot),
    )


def _scale_utilization(study: TcoStudy, factor: Decimal) -> TcoStudy:
    return replace(study, utilization=min(study.utilization * factor, Decimal(1)))


def _scale_power_price(study: TcoStudy, factor: Decimal) -> TcoStudy:
    return replace(study, buy=replace(study.buy, electricity_per_kwh=study.buy.electricity_per_kwh * factor))


def _scale_residual(study: TcoStudy, factor: Decimal) -> TcoStudy:
    return replace(
        study, buy=replace(study.buy, residual_pct=min(study.buy.residual_pct * factor, Decimal(1)))
    )


def _scale_purchase_price(study: TcoStudy, factor: Decimal) -> TcoStudy:
    return replace(study, buy=replace(study.buy, server_price=study.buy.server_price * factor))


def _scale_discount_rate(study: TcoStudy, factor: Decimal) -> TcoStudy:
    return replace(study, discount_rate_annual=study.discount_rate_annual * factor)


def _scale_horizon(study: TcoStudy, factor: Decimal) -> TcoStudy:
    horizon = max(1, int((study.horizon_months * factor).to_integral_value()))
    financing = study.buy.financing
    if financing is not None and financing.kind == "lease":  # a lease runs for the horizon
        financing = replace(financing, term_months=horizon)
    return replace(study, horizon_months=horizon, buy=replace(study.buy, financing=financing))


SENSITIVITY_DRIVERS: dict[str, Callable[[TcoStudy, Decimal], TcoStudy]] = {
    "rent_price": _scale_rent_price,
    "utilization": _scale_utilization,
    "power_price": _scale_power_price,
    "residual_value": _scale_residual,
    "purchase_price": _scale_purchase_price,
    "discount_rate": _scale_discount_rate,
    "horizon_months": _scale_horizon,
}
SAME_LEVER = ("rent_price", "utilization")
SAME_LEVER_NAME = "rent_price_or_utilization"


@dataclass(frozen=True)
class SensitivityRow:
    driver: str
    low_advantage: Decimal  # buying's NPV advantage with the driver at -spread
    high_advantage: Decimal  # ... at +spread

    @property
    def swing(self) -> Decimal:
        return abs(self.high_advantage - self.low_advantage)


def buy_advantage(study: TcoStudy) -> Decimal:
    result = run_tco(study)
    return result.rent_npv - result.buy_npv


def sensitivity_rows(study: TcoStudy, spread: Decimal = DEFAULT_SPREAD) -> list[SensitivityRow]:
    """Widest swing first, the order a tornado chart draws its bars."""
    rows = [
        SensitivityRow(name, buy_advantage(vary(study, 1 - spread)), buy_advantage(vary(study, 1 + spread)))
        for name, vary in SENSITIVITY_DRIVERS.items()
    ]
    by_name = {row.driver: row for row in rows}
    price, use = (by_name[name] for name in SAME_LEVER)
    if (price.low_advantage, price.high_advantage) == (use.low_advantage, use.high_advantage):
        rows = [row for row in rows if row.driver not in SAME_LEVER]
        rows.append(SensitivityRow(SAME_LEVER_NAME, price.low_advantage, price.high_advantage))
    return sorted(rows, key=lambda row: row.swing, reverse=True)


def sensitivity_report(study: TcoStudy, spread: Decimal = DEFAULT_SPREAD) -> dict[str, Any]:
    currency = study.currency
    return {
        "metric": "rent.npv - buy.npv",
        "spread": str(spread),
        "base": str(round_money(buy_advantage(study), currency)),
        "rows": [
            {
                "driver": row.driver,
                "low": str(round_money(row.low_advantage, currency)),
                "high": str(round_money(row.high_advantage, currency)),
                "swing": str(round_money(row.swing, currency)),
            }
            for row in sensitivity_rows(study, spread)
        ],
    }
