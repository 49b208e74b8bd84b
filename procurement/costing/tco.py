"""Buy versus rent over a horizon: the base cash model, NPV, break-even and the accounting view.

The base cash model (docs/cost-model.md, "Buy versus rent"), followed exactly:
    hours per month          = 730
    server power kW          = gpus_per_server x GPU TDP / 1000 + server_overhead_kw
    energy per month         = servers x power x average_load x pue x 730 x electricity_per_kwh
    colocation per month     = servers x power x colocation_per_kw_month
    maintenance per month    = servers x server_price x maintenance_pct_per_year / 12
    staff per month          = ops_fte x fte_cost_per_year / 12
    month 0                  : servers x (server_price + install_cost)
    month H (horizon)        : - servers x server_price x residual_pct  (residual returned)
    rent per month           = servers x gpus_per_server x 730 x utilization x price
                               (reserved and savings plans: every hour, whatever the utilization)
    present value of month m = cash / (1 + r)^(m / 12)
Depreciation is the accounting view reported beside the cash view, never added to it.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from procurement.costing.tco_spec import COMMITTED_PRICING_MODELS, BuySpec, TcoStudy
from procurement.costing.values import HOURS_PER_MONTH, round_money, round_price

RATIO_QUANTUM = Decimal("0.000001")


@dataclass(frozen=True)
class BuyMonthlyCosts:
    energy: Decimal
    colocation: Decimal
    maintenance: Decimal
    staff: Decimal

    @property
    def total(self) -> Decimal:
        return self.energy + self.colocation + self.maintenance + self.staff


def server_power_kw(buy: BuySpec) -> Decimal:
    return buy.gpus_per_server * buy.gpu_tdp_w / 1000 + buy.server_overhead_kw


def buy_monthly_costs(buy: BuySpec) -> BuyMonthlyCosts:
    power_kw = server_power_kw(buy)
    return BuyMonthlyCosts(
        energy=buy.servers
        * power_kw
        * buy.average_load
        * buy.pue
        * HOURS_PER_MONTH
        * buy.electricity_per_kwh,
        colocation=buy.servers * power_kw * buy.colocation_per_kw_month,
        maintenance=buy.servers * buy.server_price * buy.maintenance_pct_per_year / 12,
        staff=buy.ops_fte * buy.fte_cost_per_year / 12,
    )


def buy_capex(buy: BuySpec) -> Decimal:
    return buy.servers * (buy.server_price + buy.install_cost)


def residual_value(buy: BuySpec) -> Decimal:
    return buy.servers * buy.server_price * buy.residual_pct


def installed_gpus(study: TcoStudy) -> int:
    return study.buy.servers * study.buy.gpus_per_server


def used_gpu_hours(study: TcoStudy) -> Decimal:
    """The GPU-hours both scenarios deliver over the horizon."""
    return installed_gpus(study) * HOURS_PER_MONTH * study.horizon_months * study.utilization


def rent_per_month(study: TcoStudy) -> Decimal:
    paid_share = Decimal(1) if study.rent.pricing_model in COMMITTED_PRICING_MODELS else study.utilization
    return installed_gpus(study) * HOURS_PER_MONTH * paid_share * study.rent.blended_price_per_gpu_hour()


def buy_cash_flows(study: TcoStudy) -> list[Decimal]:
    """Months 0..H: purchase at 0, running costs from 1, the residual value returned at H."""
    running = buy_monthly_costs(study.buy).total
    flows = [buy_capex(study.buy)] + [running] * study.horizon_months
    flows[-1] -= residual_value(study.buy)
    return flows


def rent_cash_flows(study: TcoStudy) -> list[Decimal]:
    return [Decimal(0)] + [rent_per_month(study)] * study.horizon_months


def present_value(flows: list[Decimal], discount_rate_annual: Decimal) -> Decimal:
    growth = 1 + discount_rate_annual
    return sum((flow / growth ** (Decimal(month) / 12) for month, flow in enumerate(flows)), Decimal(0))


def cumulative(flows: list[Decimal]) -> list[Decimal]:
    running, series = Decimal(0), []
    for flow in flows:
        running += flow
        series.append(running)
    return series


def break_even_month(buy_cumulative: list[Decimal], rent_cumulative: list[Decimal]) -> int | None:
    """First month where cumulative rent has caught up with cumulative buy; None if it never does."""
    for month, (buy, rent) in enumerate(zip(buy_cumulative, rent_cumulative, strict=True)):
        if rent >= buy:
            return month
    return None


def break_even_utilization(study: TcoStudy, buy_total: Decimal) -> Decimal | None:
    """The utilization at which undiscounted totals are equal. Buying costs the same at any utilization
    (the servers stay on), renting on demand scales with it; a committed rent does not, so it has none.
    A value above 1 means renting stays cheaper even at full use."""
    if study.rent.pricing_model in COMMITTED_PRICING_MODELS:
        return None
    rent_at_full_use = (
        installed_gpus(study)
        * HOURS_PER_MONTH
        * study.horizon_months
        * study.rent.blended_price_per_gpu_hour()
    )
    if rent_at_full_use == 0:
        return None
    return buy_total / rent_at_full_use


@dataclass(frozen=True)
class Depreciation:
    """Straight-line to zero over the configured life: the accounting view of the purchase."""

    per_month: Decimal
    over_horizon: Decimal
    book_value_at_horizon: Decimal
    disposal_gain: Decimal  # residual received minus book value (negative: a loss)


def depreciation(study: TcoStudy) -> Depreciation:
    capex = buy_capex(study.buy)
    life_months = study.buy.depreciation_years * 12
    per_month = capex / life_months
    over_horizon = per_month * min(study.horizon_months, life_months)
    book_value = capex - over_horizon
    return Depreciation(per_month, over_horizon, book_value, residual_value(study.buy) - book_value)


@dataclass(frozen=True)
class TcoResult:
    study: TcoStudy
    buy_flows: list[Decimal]
    rent_flows: list[Decimal]
    buy_npv: Decimal
    rent_npv: Decimal

    @property
    def buy_total(self) -> Decimal:
        return sum(self.buy_flows, Decimal(0))

    @property
    def rent_total(self) -> Decimal:
        return sum(self.rent_flows, Decimal(0))

    @property
    def recommendation(self) -> str:
        """Decided on present value: the cheaper NPV wins; a tie goes to renting (no capital at risk)."""
        return "buy" if self.buy_npv < self.rent_npv else "rent"

    def cost_per_used_gpu_hour(self, total: Decimal) -> Decimal:
        return total / used_gpu_hours(self.study)


def run_tco(study: TcoStudy) -> TcoResult:
    buy_flows, rent_flows = buy_cash_flows(study), rent_cash_flows(study)
    return TcoResult(
        study=study,
        buy_flows=buy_flows,
        rent_flows=rent_flows,
        buy_npv=present_value(buy_flows, study.discount_rate_annual),
        rent_npv=present_value(rent_flows, study.discount_rate_annual),
    )


def tco_report(result: TcoResult) -> dict[str, Any]:
    """The JSON contract: buy/rent totals, NPVs, cost per used GPU-hour, break-evens, monthly series."""
    study, currency = result.study, result.study.currency
    buy_cumulative, rent_cumulative = cumulative(result.buy_flows), cumulative(result.rent_flows)
    break_even_u = break_even_utilization(study, result.buy_total)
    return {
        "name": study.name,
        "currency": currency,
        "horizon_months": study.horizon_months,
        "utilization": str(study.utilization),
        "used_gpu_hours": str(used_gpu_hours(study)),
        "buy": _buy_section(result),
        "rent": _rent_section(result),
        "break_even_month": break_even_month(buy_cumulative, rent_cumulative),
        "break_even_utilization": None if break_even_u is None else str(break_even_u.quantize(RATIO_QUANTUM)),
        "recommendation": result.recommendation,
        "recommendation_reason": _recommendation_reason(result),
        "monthly": {
            "month": list(range(study.horizon_months + 1)),
            "buy_cumulative": [str(round_money(value, currency)) for value in buy_cumulative],
            "rent_cumulative": [str(round_money(value, currency)) for value in rent_cumulative],
        },
        "depreciation": _depreciation_section(result),
    }


def _buy_section(result: TcoResult) -> dict[str, Any]:
    buy, currency = result.study.buy, result.study.currency
    monthly = buy_monthly_costs(buy)
    return {
        "total": str(round_money(result.buy_total, currency)),
        "npv": str(round_money(result.buy_npv, currency)),
        "cost_per_used_gpu_hour": str(round_price(result.cost_per_used_gpu_hour(result.buy_total))),
        "capex": str(round_money(buy_capex(buy), currency)),
        "residual_value": str(round_money(residual_value(buy), currency)),
        "server_power_kw": str(server_power_kw(buy)),
        "per_month": {
            name: str(round_money(getattr(monthly, name), currency))
            for name in ("energy", "colocation", "maintenance", "staff", "total")
        },
    }


def _rent_section(result: TcoResult) -> dict[str, Any]:
    rent, currency = result.study.rent, result.study.currency
    return {
        "total": str(round_money(result.rent_total, currency)),
        "npv": str(round_money(result.rent_npv, currency)),
        "cost_per_used_gpu_hour": str(round_price(result.cost_per_used_gpu_hour(result.rent_total))),
        "pricing_model": rent.pricing_model,
        "price_per_gpu_hour": str(round_price(rent.blended_price_per_gpu_hour())),
        "per_month": str(round_money(rent_per_month(result.study), currency)),
        "price_observed_at": rent.price_observed_at,
        "price_source": rent.price_source,
        "price_stale": rent.price_stale,  # null for a price typed in the study file
        "price_stale_after_hours": rent.price_stale_after_hours,
    }


def _depreciation_section(result: TcoResult) -> dict[str, Any]:
    study, currency = result.study, result.study.currency
    view = depreciation(study)
    running_total = buy_monthly_costs(study.buy).total * study.horizon_months
    accounting_cost = view.over_horizon + running_total
    return {
        "method": "straight_line",
        "life_years": study.buy.depreciation_years,
        "per_month": str(round_money(view.per_month, currency)),
        "over_horizon": str(round_money(view.over_horizon, currency)),
        "book_value_at_horizon": str(round_money(view.book_value_at_horizon, currency)),
        "disposal_gain": str(round_money(view.disposal_gain, currency)),
        "accounting_cost_total": str(round_money(accounting_cost, currency)),
        "accounting_cost_per_used_gpu_hour": str(round_price(accounting_cost / used_gpu_hours(study))),
    }


def _recommendation_reason(result: TcoResult) -> str:
    study = result.study
    gap = round_money(abs(result.rent_npv - result.buy_npv), study.currency)
    cheaper, dearer = ("buying", "renting") if result.recommendation == "buy" else ("renting", "buying")
    return (
        f"at {study.utilization * 100:.0f}% utilization over {study.horizon_months} months, {cheaper} costs "
        f"{gap} {study.currency} less than {dearer} in present value "
        f"(discount rate {study.discount_rate_annual * 100:.1f}% a year)"
    )
