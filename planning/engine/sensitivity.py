"""One-at-a-time sensitivity of a capacity plan: each driver moved -20% and +20%, for a tornado chart.

The pattern of procurement/costing/tco_sensitivity.py, on the plan's NPV:
- growth: every year's demand multiplier x (1 -/+ 20%), the plan re-optimized;
- purchase_price: the study's server price x (1 -/+ 20%), owned servers re-costed by the TCO engine,
  the plan re-optimized;
- rent_price: on-demand, spot and commitment prices x (1 -/+ 20%) (one rent market), re-optimized;
- discount_rate: the study's rate x (1 -/+ 20%), re-optimized;
- owned_utilization: the plan held as chosen, the GPU-hours its owned servers deliver x (1 -/+ 20%)
  (capped at their hours and at the demand above them); hours they do not deliver are bought on
  demand, hours they deliver more displace on-demand (firm) GPU-hours. It measures the risk of the
  owned decision if the servers are used less, or more, than the history says.
"""

from __future__ import annotations

from dataclasses import replace
from decimal import Decimal
from typing import Any

import numpy as np

from planning.engine.options import SupplyOptions, owned_option
from planning.engine.plan_model import CapacityPlan, PlanInputs, SensitivityRow
from planning.engine.planner import (
    PlanContext,
    bands,
    money,
    plan_context,
    plan_without_sensitivity,
    stack_levels,
)
from planning.engine.solver import Levels
from procurement.costing.values import round_money

DEFAULT_SPREAD = Decimal("0.20")
DRIVERS = ("growth", "purchase_price", "rent_price", "discount_rate", "owned_utilization")


def _growth(inputs: PlanInputs, factor: Decimal) -> PlanInputs:
    return replace(inputs, growth_by_year=inputs.growth_by_year * float(factor))


def _purchase_price(inputs: PlanInputs, factor: Decimal) -> PlanInputs:
    owned = inputs.options.owned
    assert owned is not None
    study = replace(
        owned.study, buy=replace(owned.study.buy, server_price=owned.study.buy.server_price * factor)
    )
    return replace(
        inputs,
        options=replace(inputs.options, owned=owned_option(study, horizon_months=inputs.horizon_months)),
    )


def _rent_price(inputs: PlanInputs, factor: Decimal) -> PlanInputs:
    options: SupplyOptions = inputs.options
    on_demand = replace(options.on_demand, price_per_gpu_hour=options.on_demand.price_per_gpu_hour * factor)
    committed_1y, committed_3y = (
        None if option is None else replace(option, price_per_gpu_hour=option.price_per_gpu_hour * factor)
        for option in (options.committed_1y, options.committed_3y)
    )
    spot = options.spot
    if spot is not None:
        spot = replace(
            spot,
            listed_price_per_gpu_hour=spot.listed_price_per_gpu_hour * factor,
            effective_price_per_gpu_hour=spot.effective_price_per_gpu_hour * factor,
        )
    scaled = replace(
        options, on_demand=on_demand, committed_1y=committed_1y, committed_3y=committed_3y, spot=spot
    )
    return replace(inputs, options=scaled)


def _discount_rate(inputs: PlanInputs, factor: Decimal) -> PlanInputs:
    return replace(inputs, discount_rate_annual=inputs.discount_rate_annual * factor)


REPLANNED = {
    "growth": _growth,
    "purchase_price": _purchase_price,
    "rent_price": _rent_price,
    "discount_rate": _discount_rate,
}


def _levels(plan: CapacityPlan) -> Levels:
    return Levels(
        plan.owned_servers, plan.committed_3y_units, plan.committed_1y_units_by_year, plan.renewal_units
    )


def owned_utilization_cost(context: PlanContext, levels: Levels, factor: float) -> tuple[float, float]:
    """(NPV, cash) of the plan as chosen when its owned servers deliver ``factor`` x their GPU-hours: the
    shortfall is bought on demand; extra hours (up to the servers' idle hours and the demand above
    them) displace on-demand firm GPU-hours first, then the interruptible burst."""
    band = bands(context, levels)
    curve, scale = context.curve, context.period_scale
    owned_gpus = levels.owned_servers * context.units.owned_gpus
    _, _, top = stack_levels(context, levels)
    firm_above, above = curve.firm_above(top, scale), curve.total_above(top, scale)
    change = (factor - 1.0) * band.owned
    if factor > 1:
        change = np.minimum(np.minimum(change, owned_gpus * 8760.0 - band.owned), above)
    results = []
    for coef in (context.coef_pv, context.coef_cash):
        firm_moved = np.minimum(np.maximum(change, 0.0), firm_above)
        saved = (
            firm_moved * coef.on_demand + (np.maximum(change, 0.0) - firm_moved) * coef.interruptible_burst
        )
        lost = np.maximum(-change, 0.0) * coef.on_demand
        results.append(float(np.sum(lost - saved + change * coef.owned_variable)))
    return results[0], results[1]


def plan_sensitivity(inputs: PlanInputs, *, spread: Decimal = DEFAULT_SPREAD) -> tuple[SensitivityRow, ...]:
    """Rows widest swing first (the tornado's order); a driver that does not apply (no owned option for
    purchase_price and owned_utilization) is left out."""
    base_inputs = replace(inputs, growth_trials=None, status_quo=None, assumptions=())
    base = plan_without_sensitivity(base_inputs)
    rows = []
    for driver, vary in REPLANNED.items():
        if driver == "purchase_price" and inputs.options.owned is None:
            continue
        low, high = (
            plan_without_sensitivity(vary(base_inputs, 1 + sign * spread), headroom=float(1 + spread))
            for sign in (-1, 1)
        )
        rows.append(
            SensitivityRow(driver, low.npv, high.npv, low.total_cost, high.total_cost, _NOTES[driver])
        )
    if inputs.options.owned is not None and base.owned_servers:
        context = plan_context(base_inputs)
        low_pv, low_cash = owned_utilization_cost(context, _levels(base), float(1 - spread))
        high_pv, high_cash = owned_utilization_cost(context, _levels(base), float(1 + spread))
        rows.append(
            SensitivityRow(
                "owned_utilization",
                base.npv + money(low_pv),
                base.npv + money(high_pv),
                base.total_cost + money(low_cash),
                base.total_cost + money(high_cash),
                _NOTES["owned_utilization"],
            )
        )
    return tuple(sorted(rows, key=lambda row: row.swing, reverse=True))


_NOTES = {
    "growth": "every year's demand x (1 -/+ spread), re-planned",
    "purchase_price": "server price x (1 -/+ spread), owned re-costed by the TCO engine, re-planned",
    "rent_price": "on-demand, spot and commitment prices x (1 -/+ spread), re-planned",
    "discount_rate": "discount rate x (1 -/+ spread), re-planned",
    "owned_utilization": "plan held; owned GPU-hours delivered x (1 -/+ spread), the difference on demand",
}


def sensitivity_report(
    rows: tuple[SensitivityRow, ...], *, currency: str, base_npv: Decimal, spread: Decimal = DEFAULT_SPREAD
) -> dict[str, Any]:
    """{"metric": "npv", "spread", "base", "rows": [{driver, low, high, swing, low_total_cost,
    high_total_cost, note}]} with money as strings rounded to the currency's minor unit."""

    def shown(amount: Decimal) -> str:
        return str(round_money(amount, currency))

    return {
        "metric": "npv",
        "spread": str(spread),
        "base": shown(base_npv),
        "rows": [
            {
                "driver": row.driver,
                "low": shown(row.low_npv),
                "high": shown(row.high_npv),
                "swing": shown(row.swing),
                "low_total_cost": shown(row.low_total_cost),
                "high_total_cost": shown(row.high_total_cost),
                "note": row.note,
            }
            for row in rows
        ],
    }
