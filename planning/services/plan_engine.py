"""The plan engine's inputs from what the service resolved (demand, study, prices, status quo), and its
report extended with what the shells show: the recommendation in words, cost and status quo by year."""

from __future__ import annotations

from dataclasses import replace
from decimal import Decimal
from typing import Any

import numpy as np

from planning.engine import demand as demand_engine
from planning.engine.demand import DemandHistory, StatusQuo
from planning.engine.options import (
    DEFAULT_SPOT_INTERRUPTION_BAND,
    commitment_option,
    on_demand_option,
    options_from_study,
    spot_option,
)
from planning.engine.payment_options import cheapest_payment_option
from planning.engine.plan import PlanInputs, StatusQuoCategory, StatusQuoMix, capacity_plan, plan_report
from planning.engine.plan_finance import plan_finance
from planning.services.plan_prices import PlanPrice
from planning.services.plan_requests import PlanRequest
from pricing.models import SpotAdvisory
from procurement.costing.values import round_money

MICRO = Decimal("0.000001")
MAX_TERM_MONTHS = 36  # a term signed in the horizon's last month runs at most this far past it


def _price_source(price: PlanPrice) -> str:
    where = f" {price.offer}" if price.offer else ""
    when = f", observed {price.observed_at[:10]}" if price.observed_at else ""
    return f"{price.source}{where}{when} ({price.quality})"


def commitment_candidates(prices: list[PlanPrice]) -> dict[str, list]:
    """Each commitment term's options: the price the plan found and its offer's other payment options,
    each with its upfront fee (paid at signing) where the stored price gives it."""
    candidates: dict[str, list] = {}
    for price in prices:
        years = {"committed_1y": 1, "committed_3y": 3}.get(price.kind)
        if years is None:
            continue
        candidates[price.kind] = [
            commitment_option(
                years,
                source=_price_source(quoted),
                effective_per_gpu_hour=quoted.price_per_gpu_hour,
                upfront_per_gpu=quoted.upfront_per_gpu,
                pricing_model=quoted.pricing_model,
                price_observed_at=quoted.observed_at,
                payment_option=quoted.payment_option,
                unit_gpus=quoted.unit_gpus,
            )
            for quoted in (price, *price.alternatives)
        ]
    return candidates


def supply_options(
    study,
    prices: list[PlanPrice],
    *,
    horizon_months: int,
    include_owned: bool = True,
    billed_on_spot_share: Decimal = Decimal(0),
):
    by_kind = {price.kind: price for price in prices}
    commitments = {
        kind: cheapest_payment_option(
            options,
            horizon_months=horizon_months,
            months=horizon_months + MAX_TERM_MONTHS + 1,
            discount_rate_annual=study.discount_rate_annual,
        )
        for kind, options in commitment_candidates(prices).items()
    }
    spot = by_kind.get("spot")
    spot_choice = None
    if spot is not None:
        spot_choice = spot_option(
            spot.price_per_gpu_hour,
            source=_price_source(spot),
            interruption_band=spot_band(spot),
            billed_on_spot_share=billed_on_spot_share,
        )
    options = options_from_study(
        study, horizon_months=horizon_months, spot=spot_choice, include_owned=include_owned, **commitments
    )
    on_demand = by_kind["on_demand"]
    return replace(
        options, on_demand=on_demand_option(on_demand.price_per_gpu_hour, source=_price_source(on_demand))
    )


def spot_band(price: PlanPrice) -> int:
    """The stored Spot Instance Advisor band of the spot offer's instance type and region; without one,
    the options' default (the ">20%" band: the most pessimistic)."""
    provider, instance_type, region = (price.offer.split("/") + ["", "", ""])[:3]
    band = (
        SpotAdvisory.objects.filter(
            provider__slug=provider, region_code=region, instance_type_name=instance_type
        )
        .order_by("-observed_at")
        .values_list("interruption_band", flat=True)
        .first()
    )
    return DEFAULT_SPOT_INTERRUPTION_BAND if band is None else int(band)


def spot_billed_share(history: DemandHistory, quo: StatusQuo) -> Decimal:
    """The share of the interruptible GPU-hours the bills already bought on spot (at most 1)."""
    interruptible = float(np.nansum(history.demand_interruptible))
    spot_hours = float(quo.by_pricing_category.get("spot", {}).get("gpu_hours", 0.0))
    if interruptible <= 0 or spot_hours <= 0:
        return Decimal(0)
    return min(Decimal(1), Decimal(repr(spot_hours / interruptible))).quantize(MICRO)


def status_quo_mix(quo: StatusQuo) -> StatusQuoMix:
    categories = tuple(
        StatusQuoCategory(
            category,
            values["gpu_hours"],
            (Decimal(int(values["effective_cost_micros"])) * MICRO / Decimal(repr(values["gpu_hours"]))),
        )
        for category, values in quo.by_pricing_category.items()
        if values["gpu_hours"] > 0
    )
    return StatusQuoMix(
        categories,
        unused_commitment_cost=Decimal(quo.unused_commitment_micros) * MICRO,
        source=f"the bills: {quo.gpu_hours:,.0f} GPU-hours in {len(categories)} pricing categories",
        one_off_corrections=Decimal(quo.one_off_correction_micros) * MICRO,
    )


def lay_plan(
    *,
    request: PlanRequest,
    history: DemandHistory,
    study,
    prices: list[PlanPrice],
    status_quo: StatusQuo,
    gpu: str,
    with_sensitivity: bool = True,
    in_force=None,
    include_owned: bool = True,
) -> dict[str, Any]:
    horizon = request.horizon_months
    covered = ~np.isnan(history.demand)
    growth = demand_engine.scenarios(request.growth, horizon_months=horizon)[request.scenario].yearly
    trials = demand_engine.growth_trials(
        request.growth, horizon_months=horizon, trials=request.trials, seed=request.seed
    )
    inputs = PlanInputs(
        firm_gpus=history.demand_steady[covered],
        interruptible_gpus=history.demand_interruptible[covered],
        growth_by_year=growth,
        options=supply_options(
            study,
            prices,
            horizon_months=horizon,
            include_owned=include_owned,
            billed_on_spot_share=spot_billed_share(history, status_quo),
        ),
        horizon_months=horizon,
        in_force=in_force,
        owned_lead_time_months=request.lead_time_months,
        currency=study.currency,
        discount_rate_annual=study.discount_rate_annual,
        growth_trials=trials,
        status_quo=status_quo_mix(status_quo) if status_quo.gpu_hours > 0 else None,
        gpu_model=gpu,
    )
    plan = capacity_plan(inputs, with_sensitivity=with_sensitivity)
    report = plan_report(plan)
    report |= plan_finance(
        plan,
        payment_alternatives=commitment_candidates(prices),
        lead_time_months=request.lead_time_months,
        tax_rate=study.tax_rate,
    )
    years = len(growth)
    report["cost_by_year"] = [
        str(round_money(sum(year, Decimal(0)), plan.currency)) for year in _by_year(plan.monthly_cost, years)
    ]
    report["status_quo_by_year"] = [
        str(round_money(sum(year, Decimal(0)), plan.currency))
        for year in _by_year(plan.status_quo_monthly_cost, years)
    ]
    quo_cost = Decimal(report["status_quo_cost"]) if report.get("status_quo_cost") not in (None, "") else None
    savings = (
        Decimal(report["savings_vs_status_quo"])
        if report.get("savings_vs_status_quo") not in (None, "")
        else None
    )
    report["savings_share"] = (
        str((savings / quo_cost).quantize(MICRO)) if quo_cost and savings is not None else None
    )
    blended = inputs.status_quo.blended_cost_per_gpu_hour() if inputs.status_quo else None
    report["status_quo_cost_per_gpu_hour"] = str(blended.quantize(MICRO)) if blended is not None else None
    report["owned_servers"] = plan.owned_servers
    report["gpus_per_server"] = study.buy.gpus_per_server
    report["monthly_cost"] = [str(round_money(amount, plan.currency)) for amount in plan.monthly_cost]
    report["status_quo_monthly_cost"] = [
        str(round_money(amount, plan.currency)) for amount in plan.status_quo_monthly_cost
    ]
    options = inputs.options
    report["options_evaluated"] = [
        kind
        for kind, option in (
            ("owned", options.owned),
            ("committed_3y", options.committed_3y),
            ("committed_1y", options.committed_1y),
            ("on_demand", options.on_demand),
            ("spot", options.spot),
        )
        if option is not None
    ]
    report["recommendation"] = recommendation_text(report, plan, gpu=gpu, horizon=horizon)
    report["assumptions"] = [_assumption(item) for item in report.get("assumptions", [])]
    return report


def _by_year(monthly, years: int) -> list[list[Decimal]]:
    """Month 0 (the purchase) in year 1; months past the horizon (a term paid in full) in the last year."""
    buckets: list[list[Decimal]] = [[] for _ in range(max(years, 1))]
    for month, amount in enumerate(monthly):
        buckets[min(max(month - 1, 0) // 12, len(buckets) - 1)].append(Decimal(amount))
    return buckets


def _assumption(item) -> dict[str, str]:
    if isinstance(item, dict):
        return {
            "name": str(item.get("name", "")),
            "value": str(item.get("value", "")),
            "source": str(item.get("source", "")),
        }
    return {"name": item.name, "value": item.value, "source": item.source}


def _layer_unit(report: dict, kind: str) -> int:
    return next(
        (int(layer.get("unit_gpus") or 1) for layer in report.get("layers", []) if layer["kind"] == kind), 1
    )


def _layer_gpus(report: dict, kind: str) -> int:
    return sum(int(layer.get("gpus") or 0) for layer in report.get("layers", []) if layer["kind"] == kind)


def recommendation_text(report: dict, plan, *, gpu: str, horizon: int) -> str:
    """The plan in one paragraph, the money first: what a CFO reads before anything else."""
    currency = plan.currency
    parts = []
    evaluated = report.get("options_evaluated") or [
        "owned",
        "committed_3y",
        "committed_1y",
        "on_demand",
        "spot",
    ]
    in_force = _layer_gpus(report, "in_force")
    if in_force:
        parts.append(f"keep the {in_force} GPUs of commitments in force")
    if "owned" not in evaluated:
        parts.append(
            "owned servers not evaluated (no server price, or no server that runs this fleet's work: see warnings)"
        )
    elif plan.owned_servers:
        parts.append(
            f"own {plan.owned_servers} server{'s' if plan.owned_servers != 1 else ''} "
            f"({_layer_gpus(report, 'owned')} {gpu} GPUs)"
        )
    else:
        parts.append("own no servers")
    for kind, label in (
        ("committed_3y", "3 years"),
        ("committed_1y", "1 year (the largest year's level, re-chosen yearly)"),
    ):
        gpus = _layer_gpus(report, kind)
        if kind not in evaluated:
            parts.append(
                f"{kind.split('_')[1][0]}-year commitments not evaluated (no price: see missing_prices)"
            )
        elif gpus:
            parts.append(f"commit {gpus} GPU{'s' if gpus != 1 else ''} for {label}")
    for gpus, month in zip(
        (units * _layer_unit(report, "renewal") for units in plan.renewal_units),
        plan.renewal_start_months,
        strict=True,
    ):
        if gpus:
            parts.append(
                f"renew {gpus} GPU{'s' if gpus != 1 else ''} from month {month}, when a commitment in force ends"
            )
    rest = [
        f"{label} (peak {gpus} GPUs)"
        for kind, label in (("on_demand", "on-demand"), ("spot", "spot"))
        if (gpus := _layer_gpus(report, kind))
    ]
    parts.append("leave the rest to " + " and ".join(rest) if rest else "nothing left to rent")
    text = "; ".join(parts)
    text = text[0].upper() + text[1:] + "."
    text += f" Total {_money(report.get('total_cost'), currency)} over {horizon} months (NPV {_money(report.get('npv'), currency)}"
    if report.get("p90_total_cost"):
        text += f", P90 {_money(report['p90_total_cost'], currency)}"
    text += ")."
    if report.get("savings_vs_status_quo") not in (None, ""):
        text += savings_sentence(report["savings_vs_status_quo"], report.get("break_even_month"), currency)
    return text


def savings_sentence(savings, month, currency: str) -> str:
    """The saving against the status quo in words a CFO reads right: a plan that buys nothing new costs
    what the bills show ("saves 0.00; never breaks even" read as a loss: the outside review), and a
    negative saving is a cost."""
    amount = Decimal(str(savings))
    if amount == 0:
        return " Costs the same as buying it as the bills show."
    if amount < 0:
        return f" Costs {_money(-amount, currency)} more than buying it as the bills show."
    text = f" Saves {_money(amount, currency)} against buying it as the bills show"
    return text + (f"; break-even in month {month}." if month else "; never breaks even.")


def _money(value, currency: str) -> str:
    if value in (None, ""):
        return "—"
    return f"{Decimal(value):,.2f} {currency}"
