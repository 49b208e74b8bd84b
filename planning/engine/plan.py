"""The capacity plan: the cheapest layering of owned servers, commitments, on-demand and spot over the
load-duration curve of the demand we had, grown over a horizon (docs/capacity-plan.md, "The plan").

Plain numpy over arrays (no ORM). The engine's inputs are the hourly demand samples (firm and
interruptible GPUs, each sample standing for 8760 / len hours of a representative year), the yearly
growth multipliers, optional growth trials, the supply options (options.py) and the finance terms.

Method, in short (the proofs are in docs/capacity-plan.md):
- Stack. In every hour the prepaid capacity (commitments, then owned servers: lowest running cost
  first) serves the demand from the bottom, firm demand below interruptible; what is above it goes to
  on-demand (firm) or to the cheaper of spot and on-demand (interruptible).
- Screening. Each 1-GPU slice k of the curve, served for H_k GPU-hours a year, costs F + V x H_k under
  each option, summed over the horizon in present value; the cheapest option at each slice gives the
  continuous levels of owned (horizon-long), 3-year (horizon-long) and 1-year (re-chosen each year).
- Rounding. Servers and commitment units are whole: the floor/ceil neighbours of the continuous levels
  are costed exactly (the stack above, month by month, 1-year levels re-optimized for each), then the
  search walks to a better neighbour until none is; tests enumerate every integer mix to prove it.
- Multi-year. Owned servers are bought at month 0 and held for the horizon (the TCO study's model);
  3-year commitments start at month 1 at one level, renewed at each term's end; 1-year commitments are
  re-chosen at the start of each plan year. A term that runs past the horizon is charged in full (its
  months after the horizon are booked in the last year): nothing is pro-rated away.
- Decision on NPV at the study's discount rate (the TCO verdict's basis); totals are cash.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from planning.engine.plan_model import (
    CapacityPlan,
    Layer,
    PlanInputs,
    ScreeningLine,
    SensitivityRow,
    StatusQuoCategory,
    StatusQuoMix,
)
from planning.engine.planner import LAYER_ORDER, plan_without_sensitivity
from planning.engine.sensitivity import plan_sensitivity, sensitivity_report
from planning.engine.validation import validate_inputs
from procurement.costing.values import round_money, round_price

HOURS_QUANTUM = Decimal("0.1")
RATIO_QUANTUM = Decimal("0.000001")

__all__ = [
    "CapacityPlan",
    "Layer",
    "PlanInputs",
    "ScreeningLine",
    "SensitivityRow",
    "StatusQuoCategory",
    "StatusQuoMix",
    "capacity_plan",
    "layer_kinds",
    "plan_report",
    "validate_inputs",
]


def capacity_plan(inputs: PlanInputs, *, with_sensitivity: bool = True) -> CapacityPlan:
    """The cheapest plan for the inputs (see the module docstring), with its cost by year and layer,
    NPV, P50/P90 over the growth trials, the status quo and its break-even month, and (unless
    ``with_sensitivity`` is False) the sensitivity rows. Raises PlanInputError naming the field."""
    plan = plan_without_sensitivity(inputs)
    if not with_sensitivity:
        return plan
    return replace(plan, sensitivity=plan_sensitivity(plan.inputs))


def plan_report(plan: CapacityPlan) -> dict[str, Any]:
    """The JSON contract: layers [{kind, gpu_model, gpus, hours_served, cost_by_year[], share_of_demand,
    ...}], total_cost, npv, p50_total_cost, p90_total_cost, status_quo_cost, savings_vs_status_quo,
    break_even_month, sensitivity, screening, assumptions, currency. Money as Decimal strings rounded
    to the currency's minor unit, hourly prices with 6 decimals, shares as 6-decimal fractions."""
    currency = plan.currency

    def shown(amount: Decimal | None) -> str | None:
        return None if amount is None else str(round_money(amount, currency))

    report = {
        "currency": currency,
        "horizon_months": plan.inputs.horizon_months,
        "gpu_model": plan.inputs.gpu_model,
        "layers": [_layer_json(layer, shown) for layer in plan.layers],
        "total_cost": shown(plan.total_cost),
        "npv": shown(plan.npv),
        "discount_rate_annual": str(plan.inputs.discount_rate_annual),
        "p50_total_cost": shown(plan.p50_total_cost),
        "p90_total_cost": shown(plan.p90_total_cost),
        "p50_npv": shown(plan.p50_npv),
        "p90_npv": shown(plan.p90_npv),
        "trials": plan.trials,
        "status_quo_cost": shown(plan.status_quo_cost),
        "status_quo_npv": shown(plan.status_quo_npv),
        "savings_vs_status_quo": shown(plan.savings_vs_status_quo),
        "break_even_month": plan.break_even_month,
        "levels": {
            "owned_servers": plan.owned_servers,
            "committed_3y_units": plan.committed_3y_units,
            "committed_1y_units_by_year": list(plan.committed_1y_units_by_year),
            # the renewal layer: units committed from each month a commitment in force ends
            "renewal_units": list(plan.renewal_units),
            "renewal_start_months": list(plan.renewal_start_months),
        },
        "demand_gpu_hours": _hours(plan.demand_gpu_hours),
        "demand_gpu_hours_by_year": [_hours(hours) for hours in plan.demand_gpu_hours_by_year],
        "monthly": _monthly_json(plan, shown),
        "screening": [_screening_json(line) for line in plan.screening],
        "sensitivity": sensitivity_report(plan.sensitivity, currency=currency, base_npv=plan.npv),
        "assumptions": [{"name": a.name, "value": a.value, "source": a.source} for a in plan.assumptions],
    }
    return report


def _hours(value: float) -> str:
    return str(Decimal(repr(value)).quantize(HOURS_QUANTUM, rounding=ROUND_HALF_UP))


def _ratio(value: float | Decimal | None) -> str | None:
    if value is None:
        return None
    return str(
        Decimal(repr(value) if isinstance(value, float) else value).quantize(
            RATIO_QUANTUM, rounding=ROUND_HALF_UP
        )
    )


def _layer_json(layer: Layer, shown) -> dict[str, Any]:
    return {
        "kind": layer.kind,
        "gpu_model": layer.gpu_model,
        "gpus": layer.gpus,
        "gpus_by_year": list(layer.gpus_by_year),
        "units": layer.units,
        "unit_gpus": layer.unit_gpus,
        "hours_served": _hours(layer.hours_served),
        "hours_by_year": [_hours(hours) for hours in layer.hours_by_year],
        "cost_by_year": [shown(cost) for cost in layer.cost_by_year],
        "total_cost": shown(sum(layer.cost_by_year, Decimal(0))),
        "npv": shown(layer.npv),
        "share_of_demand": _ratio(layer.share_of_demand),
        "price_source": layer.price_source,
    }


def _screening_json(line: ScreeningLine) -> dict[str, Any]:
    return {
        "kind": line.kind,
        "fixed_per_gpu_year": str(round_price(line.fixed_per_gpu_year)),
        "variable_per_gpu_hour": str(round_price(line.variable_per_gpu_hour)),
        "fixed_per_gpu_year_cash": str(round_price(line.fixed_per_gpu_year_cash)),
        "variable_per_gpu_hour_cash": str(round_price(line.variable_per_gpu_hour_cash)),
        "break_even_capacity_factor": _ratio(line.break_even_capacity_factor),
        "cash_break_even_capacity_factor": _ratio(line.cash_break_even_capacity_factor),
    }


def _monthly_json(plan: CapacityPlan, shown) -> dict[str, Any]:
    running, cumulative = Decimal(0), []
    for cost in plan.monthly_cost:
        running += cost
        cumulative.append(shown(running))
    status_running, status_cumulative = Decimal(0), []
    for cost in plan.status_quo_monthly_cost:
        status_running += cost
        status_cumulative.append(shown(status_running))
    return {
        "month": list(range(len(plan.monthly_cost))),
        "plan_cumulative": cumulative,
        "status_quo_cumulative": status_cumulative,
    }


def layer_kinds() -> Sequence[str]:
    """The layer kinds in stack order, base first as a chart shades them (and as ``layers`` lists them)."""
    return LAYER_ORDER
