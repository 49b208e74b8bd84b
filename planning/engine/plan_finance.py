"""What a CFO asks of a plan beyond its total (issue 27 item 6): each commitment layer under every
payment option the provider sells, the owned servers bought in tranches as demand grows, and the plan
after tax. The figures come from payment_options.py, tranches.py and after_tax.py over the plan's own
layers, levels and months; this module only gathers them into the report's JSON.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from decimal import Decimal
from typing import Any

import numpy as np

from planning.engine.after_tax import plan_after_tax
from planning.engine.coefficients import plan_years, year_of_month
from planning.engine.options import CommitmentOption
from planning.engine.payment_options import compare_payment_options
from planning.engine.plan_model import CapacityPlan
from planning.engine.planner import (
    _spread_over_months,
    bands,
    layer_monthly_costs,
    layer_tax_deductions,
    owned_schedule,
    plan_context,
)
from planning.engine.solver import Levels
from planning.engine.tranches import tranche_fixed_flows
from procurement.costing.tco import present_value
from procurement.costing.values import round_money, round_price


def by_year(monthly: Sequence[Decimal], horizon_months: int) -> list[Decimal]:
    """Month 0 in the first plan year, months past the horizon (a term paid in full) in the last."""
    years = year_of_month(horizon_months, len(monthly))
    totals = [Decimal(0)] * plan_years(horizon_months)
    for year, amount in zip(years, monthly, strict=True):
        totals[int(year)] += amount
    return totals


def plan_finance(
    plan: CapacityPlan,
    *,
    payment_alternatives: dict[str, Sequence[CommitmentOption]],
    lead_time_months: int,
    tax_rate: Decimal | None,
) -> dict[str, Any]:
    """The report's ``payment_options``, ``owned_tranches`` and ``after_tax`` sections."""
    context = plan_context(plan.inputs)
    levels = Levels(
        plan.owned_servers, plan.committed_3y_units, plan.committed_1y_units_by_year, plan.renewal_units
    )
    band = bands(context, levels)
    flows = layer_monthly_costs(context, levels, band)
    money = _money(plan.currency)
    return {
        "payment_options": _payment_options(plan, context, band, payment_alternatives, money),
        "owned_tranches": _tranches(plan, context, levels, lead_time_months, money),
        "after_tax": _after_tax(plan, context, band, flows, tax_rate, money),
    }


def _money(currency: str):
    def shown(amount: Decimal) -> str:
        return str(round_money(Decimal(amount), currency))

    return shown


def _payment_options(plan, context, band, alternatives, money) -> dict[str, Any]:
    inputs, horizon = plan.inputs, plan.inputs.horizon_months
    found = {}
    for kind in ("committed_3y", "committed_1y"):
        chosen = getattr(inputs.options, kind)
        if chosen is None:
            continue
        candidates = list(alternatives.get(kind) or [chosen])
        gpus = band.gpus[kind]
        costed = compare_payment_options(
            candidates,
            gpus,
            horizon_months=horizon,
            months=context.months,
            discount_rate_annual=inputs.discount_rate_annual,
        )
        found[kind] = {
            "chosen": chosen.payment_option or None,
            "basis": "lowest NPV at the plan's discount rate",
            "gpus_by_year": list(gpus),
            "options": [_option_json(cost, horizon, money) for cost in costed],
        }
    return found


def _option_json(cost, horizon: int, money) -> dict[str, Any]:
    option = cost.option
    return {
        "payment_option": option.payment_option or None,
        "pricing_model": option.pricing_model,
        "effective_per_gpu_hour": str(round_price(option.price_per_gpu_hour)),
        "upfront_per_gpu": None if option.upfront_per_gpu is None else money(option.upfront_per_gpu),
        "hourly_per_gpu": str(round_price(Decimal(repr(option.hourly_after_upfront)))),
        "cash_by_year": [money(amount) for amount in by_year(cost.monthly, horizon)],
        "upfront_cash_month_0": money(cost.monthly[0]),
        "total": money(cost.total),
        "npv": money(cost.npv),
        "implied_rate_vs_no_upfront": None
        if cost.implied_rate_vs_no_upfront is None
        else str(cost.implied_rate_vs_no_upfront),
        "source": option.source,
    }


def _tranches(plan, context, levels, lead_time_months: int, money) -> dict[str, Any] | None:
    owned = plan.inputs.options.owned
    if owned is None or plan.owned_servers == 0:
        return None
    horizon = plan.inputs.horizon_months
    tranches = (
        owned_schedule(
            replace(context, inputs=replace(context.inputs, owned_lead_time_months=lead_time_months)), levels
        )
        or []
    )
    staged = tranche_fixed_flows(owned.study, tranches, horizon_months=horizon)
    at_once = plan.owned_servers * owned.fixed_flows_per_server
    rate = plan.inputs.discount_rate_annual
    needed, held = [], 0
    for year in range(context.scale.size):
        held += sum(tranche.servers for tranche in tranches if tranche.year == year)
        needed.append(held)
    in_headline = plan.inputs.owned_lead_time_months is not None
    return {
        "lead_time_months": lead_time_months,
        "servers_by_year": needed,
        "tranches": [
            {
                "year": tranche.year + 1,
                "servers": tranche.servers,
                "paid_month": tranche.paid_month,
                "in_service_month": tranche.in_service_month,
            }
            for tranche in tranches
        ],
        "in_tranches": _cash_section(staged, horizon, rate, money),
        "all_at_month_0": _cash_section(at_once, horizon, rate, money),
        "headline": "in_tranches" if in_headline else "all_at_month_0",
        "headline_reason": HEADLINE_REASON if in_headline else "no lead time given: the TCO study's model",
        "basis": "fixed owned cash: purchase, colocation, maintenance, staff and energy at idle, the "
        "residual returned at the horizon; the cost that follows use is the plan's",
    }


HEADLINE_REASON = (
    "the plan's total, NPV, cost by year, break-even and P50/P90 pay the owned servers in these tranches: "
    "a server is bought (its lead time before) only in the year its slice of demand arrives, which is how "
    "a CFO would fund it and never costs more than buying all at month 0 (the same hours are served); the "
    "level itself is chosen as if bought at month 0, the cautious side; the growth trials keep the base "
    "growth's schedule"
)


def _cash_section(flows: np.ndarray, horizon: int, rate: Decimal, money) -> dict[str, Any]:
    monthly = [Decimal(repr(float(flow))) for flow in flows]
    return {
        "cash_by_year": [money(amount) for amount in by_year(monthly, horizon)],
        "total": money(sum(monthly, Decimal(0))),
        "npv": money(present_value(monthly, rate)),
    }


def _after_tax(plan, context, band, flows, tax_rate, money) -> dict[str, Any]:
    levels = Levels(
        plan.owned_servers, plan.committed_3y_units, plan.committed_1y_units_by_year, plan.renewal_units
    )
    if tax_rate is None:
        return {
            "tax_rate": None,
            "note": "give study.tax_rate (and buy.depreciation_method) for the after-tax NPV",
        }
    owned_hours = _spread_over_months(band.owned, context)
    result = plan_after_tax(
        layer_flows=flows,
        owned=plan.inputs.options.owned,
        owned_servers=plan.owned_servers,
        owned_gpu_hours=owned_hours,
        tax_rate=tax_rate,
        discount_rate_annual=plan.inputs.discount_rate_annual,
        tranches=owned_schedule(context, levels),
        deductions=layer_tax_deductions(context, levels, flows),
    )
    owned = plan.inputs.options.owned
    method = owned.study.buy.depreciation_method if owned is not None else None
    return {
        "tax_rate": str(tax_rate),
        "depreciation_method": method or "straight_line",
        "cost_by_year": [money(amount) for amount in by_year(result.monthly, plan.inputs.horizon_months)],
        "total_cost": money(result.total),
        "npv": money(result.npv),
        "depreciation_tax_shield": money(result.depreciation_tax_shield),
        "prepayment_rule": PREPAYMENT_RULE,
    }


PREPAYMENT_RULE = (
    "an upfront commitment fee for a term over 12 months is capitalised and deducted in equal monthly "
    "parts over its term (US Treas. Reg. 1.263(a)-4(f), the 12-month rule); a 1-year term's fee, within "
    "the rule, is deducted when paid"
)
