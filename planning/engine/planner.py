"""One capacity plan without its sensitivity: validate, choose the levels, cost them layer by layer.

plan.py adds the sensitivity rows (sensitivity.py re-runs this module) and the JSON report.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from decimal import Decimal

import numpy as np

from planning.engine.assumptions import engine_assumptions
from planning.engine.coefficients import (
    Coefficients,
    Periods,
    coefficients,
    commitment_monthly,
    deductions_of_cash,
    discount_weights,
    last_paid_month,
    market_monthly,
    one_year_monthly,
    plan_periods,
    renewal_option,
    renewal_starts_of,
    term_starts,
    year_of_month,
)
from planning.engine.options import Assumption, SupplyOptions
from planning.engine.plan_model import (
    CapacityPlan,
    Layer,
    PlanInputs,
    ScreeningLine,
)
from planning.engine.solver import (
    Levels,
    Units,
    cheapest_levels,
    option_units,
    renewal_by_period,
    trial_costs,
)
from planning.engine.stack import HOURS_PER_YEAR, LoadCurve
from planning.engine.tranches import Tranche, servers_needed_by_year, tranche_fixed_flows, tranche_schedule
from planning.engine.validation import validate_inputs


@dataclass(frozen=True)
class PlanContext:
    """What the solver and the sensitivity need, built once per set of inputs."""

    inputs: PlanInputs
    curve: LoadCurve  # its base: the GPUs in force in each period
    units: Units
    scale: np.ndarray  # (Y,)
    months: int  # months 0..last paid month
    weights_pv: np.ndarray
    coef_pv: Coefficients
    coef_cash: Coefficients
    periods: Periods

    @property
    def period_scale(self) -> np.ndarray:
        """(P,) each period's growth: its year's."""
        return self.scale[self.periods.year]


def plan_context(inputs: PlanInputs, *, headroom: float = 1.0) -> PlanContext:
    inputs = validate_inputs(inputs, headroom=headroom)
    horizon = inputs.horizon_months
    in_force_by_month = None if inputs.in_force is None else inputs.in_force.by_month(horizon)
    starts = renewal_starts_of(in_force_by_month, horizon)
    months = last_paid_month(inputs.options, horizon, starts) + 1
    periods = plan_periods(horizon, months, in_force_by_month)
    weights_pv = discount_weights(float(inputs.discount_rate_annual), months)
    return PlanContext(
        inputs=inputs,
        curve=LoadCurve(inputs.firm_gpus, inputs.interruptible_gpus, periods.in_force),
        units=option_units(inputs.options),
        scale=inputs.growth_by_year,
        months=months,
        weights_pv=weights_pv,
        coef_pv=coefficients(inputs.options, horizon, weights_pv, periods),
        coef_cash=coefficients(inputs.options, horizon, np.ones(months), periods),
        periods=periods,
    )


def money(value: float) -> Decimal:
    return Decimal(repr(float(value)))


@dataclass(frozen=True)
class Bands:
    """Each layer's GPU-hours a year (at the period's growth) in each period (coefficients.Periods), and
    GPUs by plan year, from the bottom of the stack."""

    committed_3y: np.ndarray
    renewal: np.ndarray
    committed_1y: np.ndarray
    owned: np.ndarray
    spot: np.ndarray
    on_demand: np.ndarray
    gpus: dict[str, tuple[int, ...]]
    in_force: np.ndarray


def stack_levels(context: PlanContext, levels: Levels) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(3-year + renewed GPUs, all commitments, top of the owned servers) in each period."""
    units, coef = context.units, context.coef_pv
    renewed = renewal_by_period(coef, renewal_gpus(context, levels))
    below_one_year = levels.committed_3y_units * units.committed_3y + renewed
    one_year = np.asarray(levels.committed_1y_units, dtype=np.float64) * units.committed_1y
    prepaid = below_one_year + coef.per_period(one_year)
    return below_one_year, prepaid, prepaid + levels.owned_servers * units.owned_gpus


def renewal_gpus(context: PlanContext, levels: Levels) -> np.ndarray:
    count = len(context.periods.renewal_starts)
    return np.asarray(levels.renewal_units or (0,) * count, dtype=np.float64) * context.units.renewal


def bands(context: PlanContext, levels: Levels) -> Bands:
    curve, units = context.curve, context.units
    scale, periods = context.period_scale, context.periods
    base = float(levels.committed_3y_units * units.committed_3y)
    renewed, prepaid, top = stack_levels(context, levels)
    above, firm_above = curve.total_above(top, scale), curve.firm_above(top, scale)
    spot_cheaper = context.coef_pv.spot_cheaper
    spot_hours = np.where(spot_cheaper, above - firm_above, 0.0)
    spans = range(scale.size)
    spot_peak = [_peak(curve, top[p], scale[p], "interruptible", p) if spot_cheaper[p] else 0 for p in spans]
    on_demand_peak = [
        _peak(curve, top[p], scale[p], "firm" if spot_cheaper[p] else "total", p) for p in spans
    ]
    in_force = context.inputs.in_force
    return Bands(
        committed_3y=curve.total_above(0.0, scale) - curve.total_above(base, scale),
        renewal=curve.total_above(base, scale) - curve.total_above(renewed, scale),
        committed_1y=curve.total_above(renewed, scale) - curve.total_above(prepaid, scale),
        owned=curve.total_above(prepaid, scale) - above,
        spot=spot_hours,
        on_demand=above - spot_hours,
        gpus={
            "committed_3y": (int(base),) * context.scale.size,
            "renewal": _year_max(periods, np.rint(renewed - base)),
            "committed_1y": tuple(int(n) * units.committed_1y for n in levels.committed_1y_units),
            "owned": (levels.owned_servers * units.owned_gpus,) * context.scale.size,
            "spot": _year_max(periods, spot_peak),
            "on_demand": _year_max(periods, on_demand_peak),
            "in_force": _year_max(periods, np.floor(periods.in_force + 1e-9))
            if in_force is not None
            else (0,) * context.scale.size,
        },
        in_force=curve.in_force_hours(scale),
    )


def _year_max(periods: Periods, by_period) -> tuple[int, ...]:
    """The most of a per-period GPU count within each plan year."""
    values = np.asarray(by_period, dtype=np.float64)
    years = int(periods.year.max()) + 1
    found = np.zeros(years)
    np.maximum.at(found, periods.year, values)
    return tuple(int(value) for value in found)


def _peak(curve: LoadCurve, level: float, scale: float, part: str, period: int) -> int:
    """Whole GPUs a market layer needs at its busiest hour (float noise below a whole GPU ignored)."""
    return math.ceil(curve.peak_above(level, scale, part, period) - 1e-9)


def by_year_hours(context: PlanContext, by_period: np.ndarray) -> np.ndarray:
    """A band's GPU-hours a year per period as the GPU-hours served in each plan year."""
    periods = context.periods
    return np.bincount(periods.year, weights=by_period * periods.months / 12.0, minlength=context.scale.size)


def owned_schedule(context: PlanContext, levels: Levels) -> list[Tranche] | None:
    """The owned servers' tranches (tranches.py): each plan year's servers are those whose slice of the
    stack sees demand that year (its busiest hour above the commitments, in whole servers); None when the
    plan buys all at month 0 (no lead time given, or no server)."""
    owned, lead = context.inputs.options.owned, context.inputs.owned_lead_time_months
    if owned is None or lead is None or levels.owned_servers == 0:
        return None
    _, prepaid, _ = stack_levels(context, levels)
    scale = context.period_scale
    peaks = [0.0] * context.scale.size
    for period, year in enumerate(context.periods.year):  # a year's busiest hour: the most of its periods'
        peak = context.curve.peak_above(float(prepaid[period]), float(scale[period]), "total", period)
        peaks[int(year)] = max(peaks[int(year)], peak)
    needed = servers_needed_by_year(peaks, gpus_per_server=owned.gpus_per_server, level=levels.owned_servers)
    return tranche_schedule(needed, lead_time_months=lead)


def owned_fixed_flows(context: PlanContext, levels: Levels) -> np.ndarray:
    """The owned servers' fixed cash in months 0..H: by their tranches where the plan buys so, else the
    chosen level at month 0. The hours they serve are the same either way: a server not yet bought in a
    year is one whose slice of the stack sees no demand that year."""
    owned = context.inputs.options.owned
    assert owned is not None
    schedule = owned_schedule(context, levels)
    if schedule is None:
        return levels.owned_servers * owned.fixed_flows_per_server
    return tranche_fixed_flows(owned.study, schedule, horizon_months=context.inputs.horizon_months)


def _spread_over_months(per_period: np.ndarray, context: PlanContext) -> np.ndarray:
    """A period's GPU-hours (at the full-year rate) as GPU-hours in each month 1..H of that period."""
    hours = per_period[context.periods.of_month] / 12.0
    hours[0] = 0.0
    hours[context.inputs.horizon_months + 1 :] = 0.0
    return hours


def layer_monthly_costs(context: PlanContext, levels: Levels, band: Bands) -> dict[str, np.ndarray]:
    """Cash of each layer in months 0..last paid month."""
    inputs, months, units = context.inputs, context.months, context.units
    options, horizon = inputs.options, inputs.horizon_months
    flows: dict[str, np.ndarray] = {}
    if inputs.in_force is not None:
        owed = np.zeros(months)
        owed[: horizon + 1] = inputs.in_force.monthly_cost[: horizon + 1]
        flows["in_force"] = owed
    if options.owned is not None:
        owned = np.zeros(months)
        owned[: horizon + 1] = owned_fixed_flows(context, levels)
        variable = np.zeros(months)
        variable[: horizon + 1] = options.owned.variable_per_gpu_hour
        flows["owned"] = owned + variable * _spread_over_months(band.owned, context)
    if options.committed_3y is not None:
        gpus = levels.committed_3y_units * units.committed_3y
        flows["committed_3y"] = gpus * commitment_monthly(options.committed_3y, horizon, months)
    renewing = renewal_option(options)
    if renewing is not None and context.periods.renewal_starts:
        flows["renewal"] = sum(
            (
                gpus * commitment_monthly(renewing, horizon, months, first)
                for gpus, first in zip(
                    renewal_gpus(context, levels), context.periods.renewal_starts, strict=True
                )
            ),
            np.zeros(months),
        )
    if options.committed_1y is not None:
        flows["committed_1y"] = sum(
            (
                count * units.committed_1y * one_year_monthly(options.committed_1y, year, months)
                for year, count in enumerate(levels.committed_1y_units)
            ),
            np.zeros(months),
        )
    on_demand = options.on_demand
    flows["on_demand"] = market_monthly(
        float(on_demand.price_per_gpu_hour), on_demand.price_decline_per_year, horizon, months
    ) * _spread_over_months(band.on_demand, context)
    if options.spot is not None:
        spot = options.spot
        flows["spot"] = market_monthly(
            float(spot.effective_price_per_gpu_hour), spot.price_decline_per_year, horizon, months
        ) * _spread_over_months(band.spot, context)
    return flows


def layer_tax_deductions(
    context: PlanContext, levels: Levels, flows: dict[str, np.ndarray]
) -> dict[str, np.ndarray]:
    """When the tax deducts each layer's cash (layer_monthly_costs): as paid, except a new commitment's
    upfront fee for a term over 12 months, deducted over the term (coefficients.deductions_of_cash)."""
    inputs, months, units = context.inputs, context.months, context.units
    options, horizon = inputs.options, inputs.horizon_months
    deducted = dict(flows)
    if options.committed_3y is not None:
        option = options.committed_3y
        gpus = levels.committed_3y_units * units.committed_3y
        starts = term_starts(option, horizon)
        deducted["committed_3y"] = gpus * deductions_of_cash(
            option, commitment_monthly(option, horizon, months), starts
        )
    renewing = renewal_option(options)
    if renewing is not None and context.periods.renewal_starts:
        deducted["renewal"] = sum(
            (
                gpus
                * deductions_of_cash(
                    renewing,
                    commitment_monthly(renewing, horizon, months, first),
                    term_starts(renewing, horizon, first),
                )
                for gpus, first in zip(
                    renewal_gpus(context, levels), context.periods.renewal_starts, strict=True
                )
            ),
            np.zeros(months),
        )
    return deducted


# The stack from its base: commitments in force (bought before the plan), new commitments (no running
# cost), owned servers, then the market.
LAYER_ORDER = ("in_force", "committed_3y", "renewal", "committed_1y", "owned", "spot", "on_demand")


def _layers(
    context: PlanContext, levels: Levels, band: Bands, flows: dict[str, np.ndarray]
) -> tuple[Layer, ...]:
    inputs, units = context.inputs, context.units
    months_in_year = np.bincount(year_of_month(inputs.horizon_months, inputs.horizon_months + 1)[1:])
    year_share = months_in_year / 12.0
    demand_total = float((context.curve.gpu_hours(context.scale) * year_share).sum())
    years = year_of_month(inputs.horizon_months, context.months)
    layers = []
    for kind in LAYER_ORDER:
        # a layer with money but no GPUs stays: a reservation ending inside year 1 is paid to its end
        # while planned as absent, and a layers table without it would not add up to the total
        if kind not in flows or not (any(band.gpus[kind]) or getattr(band, kind).any() or flows[kind].any()):
            continue
        hours_by_year = by_year_hours(context, getattr(band, kind))
        cost_by_year = np.bincount(years, weights=flows[kind], minlength=year_share.size)
        layers.append(
            Layer(
                kind=kind,
                gpu_model=_layer_model(inputs, kind),
                gpus=max(band.gpus[kind]),
                gpus_by_year=band.gpus[kind],
                hours_served=float(hours_by_year.sum()),
                hours_by_year=tuple(float(hours) for hours in hours_by_year),
                cost_by_year=tuple(money(cost) for cost in cost_by_year),
                npv=money(float(np.sum(flows[kind] * context.weights_pv))),
                share_of_demand=float(hours_by_year.sum() / demand_total) if demand_total else 0.0,
                units=_units(kind, levels),
                unit_gpus={
                    "owned": units.owned_gpus,
                    "committed_3y": units.committed_3y,
                    "committed_1y": units.committed_1y,
                    "renewal": units.renewal,
                }.get(kind, 1),
                price_source=_price_source(inputs.options, kind, inputs),
            )
        )
    return tuple(layers)


def _units(kind: str, levels: Levels) -> int:
    if kind == "owned":
        return levels.owned_servers
    if kind == "committed_3y":
        return levels.committed_3y_units
    if kind == "committed_1y":
        return max(levels.committed_1y_units)
    if kind == "renewal":
        return sum(levels.renewal_units)
    return 0


def _layer_model(inputs: PlanInputs, kind: str) -> str:
    if kind == "owned" and inputs.options.owned is not None:
        return inputs.options.owned.gpu_model
    return inputs.gpu_model


def _price_source(options: SupplyOptions, kind: str, inputs: PlanInputs | None = None) -> str:
    if kind == "in_force" and inputs is not None and inputs.in_force is not None:
        return inputs.in_force.source
    if kind == "renewal":
        renewing = renewal_option(options)
        term = "3-year" if renewing is options.committed_3y else "1-year"
        return (
            f"{term} commitment from the month a commitment in force ends: {getattr(renewing, 'source', '')}"
        )
    option = getattr(options, kind, None)
    return getattr(option, "source", "") if option is not None else ""


def screening_lines(context: PlanContext) -> tuple[ScreeningLine, ...]:
    """Each option's levelized line: present value (and cash) over the horizon per GPU-year of capacity."""
    horizon = context.inputs.horizon_months
    options = context.inputs.options
    lines = []
    for kind, present in (
        ("owned", options.owned),
        ("committed_3y", options.committed_3y),
        ("committed_1y", options.committed_1y),
        ("spot", options.spot),
    ):
        if present is None:
            continue
        pv = _levelized(kind, context.coef_pv, context.weights_pv[1 : horizon + 1].sum() / 12.0)
        cash = _levelized(kind, context.coef_cash, horizon / 12.0)
        lines.append(
            ScreeningLine(
                kind=kind,
                fixed_per_gpu_year=money(pv[0]),
                variable_per_gpu_hour=money(pv[1]),
                fixed_per_gpu_year_cash=money(cash[0]),
                variable_per_gpu_hour_cash=money(cash[1]),
                break_even_capacity_factor=_crossing(pv, pv[2]),
                cash_break_even_capacity_factor=_crossing(cash, cash[2]),
            )
        )
    return tuple(lines)


def _levelized(kind: str, coef: Coefficients, annuity_years: float) -> tuple[float, float, float]:
    """(fixed per GPU-year, variable per GPU-hour, on-demand per GPU-hour), levelized over the horizon."""
    fixed = {
        "owned": coef.owned_fixed_per_gpu,
        "committed_3y": coef.committed_3y,
        "committed_1y": float(coef.committed_1y.sum()),
    }.get(kind, 0.0)
    variable = {"owned": float(coef.owned_variable.sum()), "spot": float(coef.spot.sum())}.get(kind, 0.0)
    return fixed / annuity_years, variable / annuity_years, float(coef.on_demand.sum()) / annuity_years


def _crossing(line: tuple[float, float, float], on_demand: float) -> Decimal | None:
    """The capacity factor where fixed + variable x 8760 cf = on-demand x 8760 cf; None if never."""
    fixed, variable, _ = line
    if on_demand <= variable or fixed <= 0:
        return None
    return Decimal(repr(float(fixed / (HOURS_PER_YEAR * (on_demand - variable))))).quantize(
        Decimal("0.000001")
    )


def plan_assumptions(context: PlanContext) -> tuple[Assumption, ...]:
    return (
        engine_assumptions(context.inputs) + context.inputs.options.assumptions + context.inputs.assumptions
    )


def _percentiles(values: np.ndarray) -> tuple[Decimal, Decimal]:
    p50, p90 = np.percentile(values, [50, 90])
    return money(p50), money(p90)


def _status_quo(context: PlanContext) -> np.ndarray | None:
    """Cash of the status quo month by month: the bills' blended rate on the plan's demand, following
    the on-demand price's yearly decline (the bills' rates are market rates)."""
    status_quo = context.inputs.status_quo
    if status_quo is None:
        return None
    horizon = context.inputs.horizon_months
    on_demand = context.inputs.options.on_demand
    rate = market_monthly(
        float(status_quo.blended_cost_per_gpu_hour()), on_demand.price_decline_per_year, horizon, horizon + 1
    )
    demand = context.curve.gpu_hours(context.scale)
    hours = demand[year_of_month(horizon, horizon + 1)] / 12.0
    return rate * hours


def _break_even_month(plan_monthly: np.ndarray, status_quo_monthly: np.ndarray, horizon: int) -> int | None:
    """First month whose cumulative plan cost is below the status quo's; None if none up to the horizon."""
    below = np.nonzero(np.cumsum(plan_monthly[: horizon + 1]) < np.cumsum(status_quo_monthly) - 1e-6)[0]
    return int(below[0]) if below.size else None


def plan_without_sensitivity(inputs: PlanInputs, *, headroom: float = 1.0) -> CapacityPlan:
    context = plan_context(inputs, headroom=headroom)
    levels = cheapest_levels(
        context.curve, context.coef_pv, context.units, context.scale, context.periods.renewal_gpus_ending
    )
    return cost_plan(context, levels)


def cost_plan(context: PlanContext, levels: Levels) -> CapacityPlan:
    """The plan of these levels, costed layer by layer, with its trials and the status quo."""
    inputs = context.inputs
    band = bands(context, levels)
    flows = layer_monthly_costs(context, levels, band)
    monthly = sum(flows.values(), np.zeros(context.months))
    horizon = inputs.horizon_months
    year_share = np.bincount(year_of_month(horizon, horizon + 1)[1:]) / 12.0
    demand_by_year = context.curve.gpu_hours(context.scale) * year_share
    extras: dict = {}
    if inputs.growth_trials is not None:
        cash = trial_costs(context.curve, context.coef_cash, context.units, levels, inputs.growth_trials)
        pv = trial_costs(context.curve, context.coef_pv, context.units, levels, inputs.growth_trials)
        if "in_force" in flows:  # owed whatever the growth
            cash = cash + float(flows["in_force"].sum())
            pv = pv + float(np.sum(flows["in_force"] * context.weights_pv))
        if inputs.options.owned is not None and levels.owned_servers:  # tranches: the base growth's schedule
            staged = np.zeros(context.months)
            staged[: horizon + 1] = owned_fixed_flows(context, levels) - (
                levels.owned_servers * inputs.options.owned.fixed_flows_per_server
            )
            cash = cash + float(staged.sum())
            pv = pv + float(np.sum(staged * context.weights_pv))
        (extras["p50_total_cost"], extras["p90_total_cost"]) = _percentiles(cash)
        (extras["p50_npv"], extras["p90_npv"]) = _percentiles(pv)
        extras["trials"] = int(inputs.growth_trials.shape[0])
    status_quo = _status_quo(context)
    if status_quo is not None:
        extras["status_quo_cost"] = money(status_quo.sum())
        extras["status_quo_npv"] = money(float(np.sum(status_quo * context.weights_pv[: horizon + 1])))
        extras["status_quo_monthly_cost"] = tuple(money(value) for value in status_quo)
        extras["savings_vs_status_quo"] = money(status_quo.sum() - monthly.sum())
        extras["break_even_month"] = _break_even_month(monthly, status_quo, horizon)
    return CapacityPlan(
        inputs=inputs,
        layers=_layers(context, levels, band, flows),
        total_cost=money(monthly.sum()),
        npv=money(float(np.sum(monthly * context.weights_pv))),
        monthly_cost=tuple(money(value) for value in monthly),
        demand_gpu_hours=float(demand_by_year.sum()),
        demand_gpu_hours_by_year=tuple(float(hours) for hours in demand_by_year),
        owned_servers=levels.owned_servers,
        committed_3y_units=levels.committed_3y_units,
        committed_1y_units_by_year=levels.committed_1y_units,
        renewal_units=levels.renewal_units,
        renewal_start_months=context.periods.renewal_starts,
        screening=screening_lines(context),
        assumptions=plan_assumptions(context),
        **extras,
    )
