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

from dataclasses import dataclass, replace
from decimal import Decimal
from functools import lru_cache
from typing import Any

import numpy as np

from procurement.costing.tco_spec import COMMITTED_PRICING_MODELS, BuySpec, TcoStudy
from procurement.costing.values import HOURS_PER_MONTH, round_money, round_price

RATIO_QUANTUM = Decimal("0.000001")


DEFAULT_REPAIR_DAYS = Decimal(14)  # gpuledger assumption: diagnose, ship and fit a part in two weeks
DEFAULT_IDLE_LOAD = Decimal("0.3")  # gpuledger assumption: an idle 8-GPU server draws ~30% of nameplate


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


def owned_servers(buy: BuySpec) -> int:
    """Servers bought: the working ones plus cold spares (colocated and maintained, drawing no energy)."""
    return buy.servers + (buy.spare_servers or 0)


def energy_load(buy: BuySpec, utilization: Decimal | None) -> Decimal:
    """Share of nameplate drawn. By default the servers draw ``average_load`` whatever the use; with
    ``energy_follows_utilization`` an idle server draws ``idle_load`` and a busy one ``average_load``."""
    if not buy.energy_follows_utilization or utilization is None:
        return buy.average_load
    idle = DEFAULT_IDLE_LOAD if buy.idle_load is None else buy.idle_load
    return idle + (buy.average_load - idle) * utilization


def buy_monthly_costs(buy: BuySpec, utilization: Decimal | None = None) -> BuyMonthlyCosts:
    power_kw = server_power_kw(buy)
    return BuyMonthlyCosts(
        energy=buy.servers
        * power_kw
        * energy_load(buy, utilization)
        * buy.pue
        * HOURS_PER_MONTH
        * buy.electricity_per_kwh,
        colocation=owned_servers(buy) * power_kw * buy.colocation_per_kw_month,
        maintenance=owned_servers(buy) * buy.server_price * buy.maintenance_pct_per_year / 12,
        staff=buy.ops_fte * buy.fte_cost_per_year / 12,
    )


def buy_capex(buy: BuySpec) -> Decimal:
    per_server = (
        buy.server_price
        + buy.install_cost
        + (buy.network_capex_per_server or 0)
        + (buy.storage_capex_per_server or 0)
    )
    return owned_servers(buy) * per_server


def residual_value(buy: BuySpec) -> Decimal:
    return owned_servers(buy) * buy.server_price * buy.residual_pct


def installed_gpus(study: TcoStudy) -> int:
    return study.buy.servers * study.buy.gpus_per_server


def monthly_utilization(study: TcoStudy) -> list[Decimal]:
    """Months 0..H; month 0 is the purchase (no use). A ramp of N months rises linearly to the study's
    utilization: month m uses utilization x m / N until m reaches N."""
    ramp = study.utilization_ramp_months or 0
    return [Decimal(0)] + [
        study.utilization if month >= ramp else study.utilization * month / ramp
        for month in range(1, study.horizon_months + 1)
    ]


def used_gpu_hours(study: TcoStudy) -> Decimal:
    """The GPU-hours both scenarios deliver over the horizon."""
    return installed_gpus(study) * HOURS_PER_MONTH * sum(monthly_utilization(study), Decimal(0))


def rent_price_factor(study: TcoStudy, month: int) -> Decimal:
    """Rent prices fall ``price_decline_per_year`` at each anniversary: year k of the study pays
    (1 - decline)^k of today's price."""
    decline = study.rent.price_decline_per_year or Decimal(0)
    return (1 - decline) ** ((month - 1) // 12) if month > 0 else Decimal(1)


def rent_per_month(study: TcoStudy) -> Decimal:
    """Steady-state rent (no ramp, today's price): the figure the report prints as rent per month."""
    paid_share = Decimal(1) if study.rent.pricing_model in COMMITTED_PRICING_MODELS else study.utilization
    return installed_gpus(study) * HOURS_PER_MONTH * paid_share * study.rent.blended_price_per_gpu_hour()


def rent_cash_flows(study: TcoStudy) -> list[Decimal]:
    committed = study.rent.pricing_model in COMMITTED_PRICING_MODELS
    price = study.rent.blended_price_per_gpu_hour()
    gpu_hours = installed_gpus(study) * HOURS_PER_MONTH
    return [Decimal(0)] + [
        gpu_hours * (Decimal(1) if committed else used) * price * rent_price_factor(study, month)
        for month, used in enumerate(monthly_utilization(study)[1:], start=1)
    ]


def committed_rent_flows(
    study: TcoStudy,
    price_per_gpu_hour: Decimal,
    *,
    upfront_per_gpu: Decimal | None = None,
    term_months: int | None = None,
) -> list[Decimal]:
    """A commitment's cash month by month. With its upfront fee known, the fee is paid when each term is
    signed (month 0, then at each renewal inside the horizon) and only the rest of the effective price
    (price - upfront / the term's hours, never below 0) every month: an all-upfront reservation is cash
    at signing, not an even spread (issue 27). Without it, the effective price every month."""
    gpus = installed_gpus(study)
    gpu_hours = gpus * HOURS_PER_MONTH
    hourly = price_per_gpu_hour
    flows = [Decimal(0)] * (study.horizon_months + 1)
    if upfront_per_gpu and term_months:
        hourly = max(Decimal(0), price_per_gpu_hour - upfront_per_gpu / (term_months * HOURS_PER_MONTH))
        for start in range(1, study.horizon_months + 1, term_months):  # signed the month before it runs
            flows[start - 1] += gpus * upfront_per_gpu * rent_price_factor(study, start)
    for month in range(1, study.horizon_months + 1):
        flows[month] += gpu_hours * hourly * rent_price_factor(study, month)
    return flows


def uncovered_failed_servers(buy: BuySpec) -> Decimal:
    """Expected servers out of service at any time (failures a year x repair days / 365) that the spare
    servers do not replace."""
    if not buy.annual_failure_rate:
        return Decimal(0)
    repair_days = DEFAULT_REPAIR_DAYS if buy.repair_days is None else buy.repair_days
    down = buy.servers * buy.annual_failure_rate * repair_days / 365
    return max(Decimal(0), down - (buy.spare_servers or 0))


@dataclass(frozen=True)
class BuySchedule:
    """The owned scenario month by month (0..H), by component, before tax."""

    capex: list[Decimal]  # purchase at month 0 (0 when financed)
    running: list[Decimal]  # energy, colocation, maintenance, staff
    failure_cover: list[Decimal]  # GPU-hours lost to failed servers, rented on demand
    financing: list[Decimal]  # loan or lease payments (and a loan's payoff at H)
    interest: list[Decimal]  # the interest part of loan payments (tax-deductible)
    residual: list[Decimal]  # the residual value returned at H (negative cash)

    @property
    def cash(self) -> list[Decimal]:
        return [
            sum(parts, Decimal(0))
            for parts in zip(
                self.capex, self.running, self.failure_cover, self.financing, self.residual, strict=True
            )
        ]


def annuity_payment(principal: Decimal, rate_annual: Decimal, term_months: int) -> Decimal:
    """Level monthly payment repaying ``principal`` over the term at rate_annual / 12 a month."""
    monthly = rate_annual / 12
    if monthly == 0:
        return principal / term_months
    return principal * monthly / (1 - (1 + monthly) ** -term_months)


def buy_schedule(study: TcoStudy) -> BuySchedule:
    buy, horizon = study.buy, study.horizon_months
    zero = [Decimal(0)] * (horizon + 1)
    utilization = monthly_utilization(study)
    running = [Decimal(0)] + [buy_monthly_costs(buy, used).total for used in utilization[1:]]
    lost_gpu_hours = uncovered_failed_servers(buy) * buy.gpus_per_server * HOURS_PER_MONTH
    price = study.rent.blended_price_per_gpu_hour()
    cover = [Decimal(0)] + [
        lost_gpu_hours * used * price * rent_price_factor(study, month)
        for month, used in enumerate(utilization[1:], start=1)
    ]
    capex, residual = list(zero), list(zero)
    financing, interest = list(zero), list(zero)
    if buy.financing is None:
        capex[0] = buy_capex(buy)
    elif buy.financing.kind == "loan":
        financing, interest = _loan_schedule(buy_capex(buy), buy.financing, horizon)
    if buy.financing is None or buy.financing.kind == "loan":
        residual[-1] = -residual_value(buy)
    else:  # a lease: the lessor keeps the servers, and prices the residual into the payment
        financing = _lease_schedule(buy_capex(buy), residual_value(buy), buy.financing, horizon)
    return BuySchedule(capex, running, cover, financing, interest, residual)


def _loan_schedule(principal: Decimal, financing, horizon: int) -> tuple[list[Decimal], list[Decimal]]:
    """Annuity payments from month 1; a balance still owed at the horizon is repaid then."""
    payment = annuity_payment(principal, financing.rate_annual, financing.term_months)
    payments, interest = [Decimal(0)] * (horizon + 1), [Decimal(0)] * (horizon + 1)
    balance = principal
    for month in range(1, min(financing.term_months, horizon) + 1):
        interest[month] = balance * financing.rate_annual / 12
        balance -= payment - interest[month]
        payments[month] = payment
    if financing.term_months > horizon:
        payments[horizon] += balance
    return payments, interest


def _lease_schedule(capex: Decimal, residual: Decimal, financing, horizon: int) -> list[Decimal]:
    """Payment that repays the capex less the present value of the residual the lessor keeps."""
    monthly = financing.rate_annual / 12
    residual_now = residual / (1 + monthly) ** horizon
    payment = annuity_payment(capex - residual_now, financing.rate_annual, horizon)
    return [Decimal(0)] + [payment] * horizon


def buy_cash_flows(study: TcoStudy) -> list[Decimal]:
    """Months 0..H: purchase at 0, running costs from 1, the residual value returned at H."""
    return buy_schedule(study).cash


@lru_cache(maxsize=64)
def _discount_divisors(discount_rate_annual: Decimal, months: int) -> tuple[Decimal, ...]:
    """(1 + r)^(m/12) for m = 0..months-1: a fractional Decimal power is slow, and a study's
    sensitivity runs the same rate and horizon a dozen times."""
    growth = 1 + discount_rate_annual
    return tuple(growth ** (Decimal(month) / 12) for month in range(months))


def present_value(flows: list[Decimal], discount_rate_annual: Decimal) -> Decimal:
    return sum(discounted(flows, discount_rate_annual), Decimal(0))


def discounted(flows: list[Decimal], discount_rate_annual: Decimal) -> list[Decimal]:
    divisors = _discount_divisors(discount_rate_annual, len(flows))
    return [flow / divisor for flow, divisor in zip(flows, divisors, strict=True)]


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


def break_even_utilization(study: TcoStudy, buy_total: Decimal | None = None) -> Decimal | None:
    """The utilization at which undiscounted totals are equal (cash basis). ``buy_total`` is accepted
    for callers of the old signature; the answer is solved from the model itself."""
    return _break_even_utilization(study, lambda result: result.rent_total - result.buy_total)


def npv_break_even_utilization(study: TcoStudy) -> Decimal | None:
    """The utilization at which the buy and rent NPVs are equal: the recommendation is buy exactly
    when the study's utilization is above it."""
    return _break_even_utilization(study, lambda result: result.rent_npv - result.buy_npv)


def _break_even_utilization(study: TcoStudy, advantage) -> Decimal | None:
    """Every cash flow is affine in utilization (rent, energy that follows it, failure cover), so
    buying's advantage is a straight line through its values at 0 and 1, and the root is exact. None
    when the advantage does not grow with use (committed rent): no utilization makes buying win.
    A value above 1 means renting stays cheaper even at full use."""
    at_zero = advantage(run_tco(replace(study, utilization=Decimal(0))))
    at_full = advantage(run_tco(replace(study, utilization=Decimal(1))))
    slope = at_full - at_zero
    if slope <= 0:
        return None
    return -at_zero / slope


def irr_annual(flows: list[Decimal]) -> Decimal | None:
    """Annual internal rate of return of monthly flows (an investment: negative first), by bisection on
    the monthly rate; None when the flows never change sign or no rate in (-99%, +1000%) a month fits."""
    values = np.array([float(flow) for flow in flows])
    if not (values.min() < 0 < values.max()):
        return None
    months = np.arange(values.size)

    def npv(rate: float) -> float:
        return float(np.sum(values / (1 + rate) ** months))

    low, high = -0.99, 10.0
    low_value = npv(low)
    if low_value * npv(high) > 0:
        return None
    for _ in range(100):  # the bracket shrinks by 2^-100: far below the 6 decimals reported
        middle = (low + high) / 2
        middle_value = npv(middle)
        if low_value * middle_value <= 0:
            high = middle
        else:
            low, low_value = middle, middle_value
    return Decimal(repr((1 + (low + high) / 2) ** 12 - 1)).quantize(RATIO_QUANTUM)


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

    def npv_cost_per_used_gpu_hour(self, npv: Decimal) -> Decimal:
        """NPV over the present value of the GPU-hours delivered: the discounted (levelized) unit cost."""
        study = self.study
        hours = [installed_gpus(study) * HOURS_PER_MONTH * used for used in monthly_utilization(study)]
        return npv / present_value(hours, study.discount_rate_annual)


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
    rate = study.discount_rate_annual
    buy_pv_cumulative = cumulative(discounted(result.buy_flows, rate))
    rent_pv_cumulative = cumulative(discounted(result.rent_flows, rate))
    cash_month = break_even_month(buy_cumulative, rent_cumulative)
    discounted_month = break_even_month(buy_pv_cumulative, rent_pv_cumulative)
    break_even_u = break_even_utilization(study)
    npv_break_even_u = npv_break_even_utilization(study)
    irr = irr_annual([rent - buy for buy, rent in zip(result.buy_flows, result.rent_flows, strict=True)])
    report = {
        "name": study.name,
        "currency": currency,
        "horizon_months": study.horizon_months,
        "utilization": str(study.utilization),
        "used_gpu_hours": str(used_gpu_hours(study)),
        "buy": _buy_section(result),
        "rent": _rent_section(result),
        "break_even_month": cash_month,
        "break_even_utilization": _ratio(break_even_u),
        "recommendation": result.recommendation,
        "recommendation_basis": "npv",
        "recommendation_reason": _recommendation_reason(result, npv_break_even_u),
        "npv_break_even_utilization": _ratio(npv_break_even_u),
        "discounted_break_even_month": discounted_month,
        "break_even_month_note": _residual_note(study, cash_month, buy_cumulative, rent_cumulative, "cash"),
        "discounted_break_even_month_note": _residual_note(
            study, discounted_month, buy_pv_cumulative, rent_pv_cumulative, "present value"
        ),
        "irr": None if irr is None else str(irr),
        "monthly": {
            "month": list(range(study.horizon_months + 1)),
            "buy_cumulative": [str(round_money(value, currency)) for value in buy_cumulative],
            "rent_cumulative": [str(round_money(value, currency)) for value in rent_cumulative],
            "buy_npv_cumulative": [str(round_money(value, currency)) for value in buy_pv_cumulative],
            "rent_npv_cumulative": [str(round_money(value, currency)) for value in rent_pv_cumulative],
        },
        "depreciation": _depreciation_section(result),
    }
    if study.tax_rate is not None:
        report["after_tax"] = after_tax_section(result)
    if study.rent.reserved_alternative is not None:
        report["reserved_alternative"] = _reserved_section(result)
    return report


def _ratio(value: Decimal | None) -> str | None:
    return None if value is None else str(value.quantize(RATIO_QUANTUM))


def _residual_note(study, month, buy_cumulative, rent_cumulative, basis: str) -> str | None:
    """A break-even in the last month that exists only because the residual value is credited then."""
    if month != study.horizon_months:
        return None
    residual = (
        residual_value(study.buy)
        if study.buy.financing is None or study.buy.financing.kind == "loan"
        else Decimal(0)
    )
    if not residual:
        return None
    factor = 1 if basis == "cash" else (1 + study.discount_rate_annual) ** (Decimal(month) / 12)
    if buy_cumulative[month] + residual / factor > rent_cumulative[month]:
        amount = round_money(residual, study.currency)
        return (
            f"{basis} break-even in month {month} only because the residual value ({amount:,} "
            f"{study.currency}) is credited in that month; without it renting stays cheaper"
        )
    return None


def _buy_section(result: TcoResult) -> dict[str, Any]:
    buy, currency = result.study.buy, result.study.currency
    monthly = buy_monthly_costs(buy, result.study.utilization)
    section = {
        "total": str(round_money(result.buy_total, currency)),
        "npv": str(round_money(result.buy_npv, currency)),
        "cost_per_used_gpu_hour": str(round_price(result.cost_per_used_gpu_hour(result.buy_total))),
        "npv_cost_per_used_gpu_hour": str(round_price(result.npv_cost_per_used_gpu_hour(result.buy_npv))),
        "capex": str(round_money(buy_capex(buy), currency)),
        "residual_value": str(round_money(residual_value(buy), currency)),
        "server_power_kw": str(server_power_kw(buy)),
        "per_month": {
            name: str(round_money(getattr(monthly, name), currency))
            for name in ("energy", "colocation", "maintenance", "staff", "total")
        },
    }
    schedule = buy_schedule(result.study)
    if buy.financing is not None:
        section["financing"] = {
            "kind": buy.financing.kind,
            "rate_annual": str(buy.financing.rate_annual),
            "term_months": buy.financing.term_months,
            "payments_total": str(round_money(sum(schedule.financing, Decimal(0)), currency)),
            "interest_total": str(round_money(sum(schedule.interest, Decimal(0)), currency)),
        }
    if any(schedule.failure_cover):
        section["failure_cover_total"] = str(round_money(sum(schedule.failure_cover, Decimal(0)), currency))
    return section


def _rent_section(result: TcoResult) -> dict[str, Any]:
    rent, currency = result.study.rent, result.study.currency
    return {
        "total": str(round_money(result.rent_total, currency)),
        "npv": str(round_money(result.rent_npv, currency)),
        "cost_per_used_gpu_hour": str(round_price(result.cost_per_used_gpu_hour(result.rent_total))),
        "npv_cost_per_used_gpu_hour": str(round_price(result.npv_cost_per_used_gpu_hour(result.rent_npv))),
        "pricing_model": rent.pricing_model,
        "price_per_gpu_hour": str(round_price(rent.blended_price_per_gpu_hour())),
        "per_month": str(round_money(rent_per_month(result.study), currency)),
        "price_observed_at": rent.price_observed_at,
        "price_source": rent.price_source,
        "price_stale": rent.price_stale,  # null for a price typed in the study file
        "price_stale_after_hours": rent.price_stale_after_hours,
    }


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


def _depreciation_section(result: TcoResult) -> dict[str, Any]:
    study, currency = result.study, result.study.currency
    view = depreciation(study)
    running_total = sum(buy_schedule(study).running, Decimal(0))
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


# IRS Publication 946, Table A-1: 5-year property, half-year convention (six tax years).
MACRS_5_YEAR = (
    Decimal("0.20"),
    Decimal("0.32"),
    Decimal("0.192"),
    Decimal("0.1152"),
    Decimal("0.1152"),
    Decimal("0.0576"),
)


def tax_depreciation(study: TcoStudy) -> list[Decimal]:
    """Months 0..H of tax depreciation of the owned capex: straight-line over ``depreciation_years``, or
    MACRS 5-year with each tax year's share spread evenly over its twelve months. None for a lease."""
    buy, horizon = study.buy, study.horizon_months
    capex = buy_capex(buy)
    schedule = [Decimal(0)] * (horizon + 1)
    for month in range(1, horizon + 1):
        if buy.depreciation_method == "macrs_5":
            year = (month - 1) // 12
            schedule[month] = capex * MACRS_5_YEAR[year] / 12 if year < len(MACRS_5_YEAR) else Decimal(0)
        elif month <= buy.depreciation_years * 12:
            schedule[month] = capex / (buy.depreciation_years * 12)
    return schedule


def after_tax_flows(study: TcoStudy) -> tuple[list[Decimal], list[Decimal], Decimal]:
    """Both scenarios after corporate tax, with tax paid or saved in the month the cost falls.

    Deductible: running costs, failure cover, loan interest, lease payments and rent; owned servers
    also deduct their tax depreciation (the shield), and at the horizon the sale at the residual value
    is taxed on its gain over book value (a loss saves tax). Returns buy flows, rent flows and the
    undiscounted depreciation shield."""
    tax = study.tax_rate or Decimal(0)
    schedule = buy_schedule(study)
    leased = study.buy.financing is not None and study.buy.financing.kind == "lease"
    depreciation_months = [Decimal(0)] * (study.horizon_months + 1) if leased else tax_depreciation(study)
    deductible_financing = schedule.financing if leased else schedule.interest
    buy_flows = [
        cash - tax * (running + cover + financed + dep)
        for cash, running, cover, financed, dep in zip(
            schedule.cash,
            schedule.running,
            schedule.failure_cover,
            deductible_financing,
            depreciation_months,
            strict=True,
        )
    ]
    if not leased:
        book_value = buy_capex(study.buy) - sum(depreciation_months, Decimal(0))
        buy_flows[-1] += tax * (residual_value(study.buy) - book_value)
    rent_flows = [flow * (1 - tax) for flow in rent_cash_flows(study)]
    return buy_flows, rent_flows, tax * sum(depreciation_months, Decimal(0))


def after_tax_section(result: TcoResult) -> dict[str, Any]:
    study, currency = result.study, result.study.currency
    buy_flows, rent_flows, shield = after_tax_flows(study)
    buy_npv = present_value(buy_flows, study.discount_rate_annual)
    rent_npv = present_value(rent_flows, study.discount_rate_annual)
    return {
        "tax_rate": str(study.tax_rate),
        "depreciation_method": study.buy.depreciation_method or "straight_line",
        "buy": {
            "total": str(round_money(sum(buy_flows, Decimal(0)), currency)),
            "npv": str(round_money(buy_npv, currency)),
        },
        "rent": {
            "total": str(round_money(sum(rent_flows, Decimal(0)), currency)),
            "npv": str(round_money(rent_npv, currency)),
        },
        "depreciation_tax_shield": str(round_money(shield, currency)),
        "recommendation": "buy" if buy_npv < rent_npv else "rent",
    }


def _reserved_section(result: TcoResult) -> dict[str, Any]:
    study, currency = result.study, result.study.currency
    reserved = study.rent.reserved_alternative
    assert reserved is not None
    flows = committed_rent_flows(
        study,
        reserved.price_per_gpu_hour,
        upfront_per_gpu=reserved.upfront_per_gpu,
        term_months=36 if reserved.pricing_model.endswith("3y") else 12,  # reserved_3y, savings_plan_1y, ...
    )
    npv = present_value(flows, study.discount_rate_annual)
    options = {"buy": result.buy_npv, "rent": result.rent_npv, "reserved": npv}
    return {
        "pricing_model": reserved.pricing_model,
        "price_per_gpu_hour": str(round_price(reserved.price_per_gpu_hour)),
        "price_source": reserved.price_source,
        "price_observed_at": reserved.price_observed_at,
        "total": str(round_money(sum(flows, Decimal(0)), currency)),
        "npv": str(round_money(npv, currency)),
        "cheapest_by_npv": min(options, key=lambda name: (options[name], name != "rent")),
        # which stored commitment it is (None for a quoted rate); its upfront fee is paid at signing
        # (month 0 and each renewal), the rest of the effective price every month
        "price_id": reserved.price_id,
        "payment_option": reserved.payment_option,
        "commitment_kind": reserved.commitment_kind,
        "upfront_per_gpu": None
        if reserved.upfront_per_gpu is None
        else str(round_money(reserved.upfront_per_gpu, currency)),
    }


def _recommendation_reason(result: TcoResult, npv_break_even_u: Decimal | None) -> str:
    study = result.study
    gap = round_money(abs(result.rent_npv - result.buy_npv), study.currency)
    cheaper, dearer = ("buying", "renting") if result.recommendation == "buy" else ("renting", "buying")
    reason = (
        f"at {study.utilization * 100:.0f}% utilization over {study.horizon_months} months, {cheaper} costs "
        f"{gap:,} {study.currency} less than {dearer} in present value "
        f"(discount rate {study.discount_rate_annual * 100:.1f}% a year)"
    )
    if npv_break_even_u is None:
        return reason
    threshold = f"{npv_break_even_u * 100:.1f}%"
    if npv_break_even_u <= 1:
        return reason + f"; buying is cheaper in present value above {threshold} utilization (NPV break-even)"
    return (
        reason
        + f"; renting stays cheaper in present value even at 100% utilization (NPV break-even {threshold})"
    )
