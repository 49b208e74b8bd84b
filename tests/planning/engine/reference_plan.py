"""A slow, independent reference for the capacity plan's cost: hour-by-hour dispatch and month-by-month
cash, written without the engine's load-duration sums, coefficients or search. Tests only.

For given integer levels it dispatches every sample of every plan month (commitments first, then owned
servers; firm demand before interruptible), prices each month's GPU-hours, adds each commitment term's
payments (a term past the horizon paid in full) and discounts month m by (1 + r)^(m / 12).

Commitments in force hold their GPUs month by month (``gpus_by_month`` where given, else their year's);
in each month 2..H where they fall, a renewal of ``renewal_units`` may start: the 3-year option (else the
1-year one) signed that month and renewed at each term's end while the horizon lasts.
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from planning.engine.options import SupplyOptions


def _factor(decline, month: int) -> float:
    return (1.0 - float(decline)) ** ((month - 1) // 12) if month > 0 else 1.0


def reference_cost(
    options: SupplyOptions,
    *,
    firm: np.ndarray,
    interruptible: np.ndarray,
    growth: np.ndarray,
    horizon: int,
    rate: float,
    owned_servers: int,
    units_3y: int,
    units_1y: tuple[int, ...],
    in_force=None,
    renewal_units: tuple[int, ...] = (),
) -> tuple[float, float]:
    """(NPV, cash) of the levels. ``in_force`` (plan_model.CommitmentsInForce): GPUs bought before the
    plan, at the very bottom of each month's dispatch, and their payments month by month."""
    hours_per_sample = 8760.0 / firm.size
    cash: dict[int, float] = {}

    def pay(month: int, amount: float) -> None:
        cash[month] = cash.get(month, 0.0) + amount

    if in_force is not None:
        for month, amount in enumerate(in_force.monthly_cost[: horizon + 1]):
            pay(month, float(amount))
    gps = options.owned.gpus_per_server if options.owned else 0
    owned_gpus = owned_servers * gps
    if options.owned is not None:
        for month in range(horizon + 1):
            pay(month, owned_servers * float(options.owned.fixed_flows_per_server[month]))
    c3 = options.committed_3y
    gpus_3y = units_3y * (c3.unit_gpus if c3 else 0)
    if c3 is not None:
        for start in range(1, horizon + 1, 36):
            price = float(c3.price_per_gpu_hour) * _factor(c3.price_decline_per_year, start)
            for month in range(start, start + 36):
                pay(month, gpus_3y * price * 730)
    held_before = in_force_by_month(in_force, horizon)
    renewing = c3 if c3 is not None else options.committed_1y
    renewed_from = {}
    for start, units in zip(renewal_months(held_before), renewal_units or (), strict=False):
        gpus = units * (renewing.unit_gpus if renewing else 0)
        renewed_from[start] = gpus
        for signed in range(start, horizon + 1, renewing.term_months) if renewing and gpus else ():
            price = float(renewing.price_per_gpu_hour) * _factor(renewing.price_decline_per_year, signed)
            for month in range(signed, signed + renewing.term_months):
                pay(month, gpus * price * 730)
    c1 = options.committed_1y
    for year in range(math.ceil(horizon / 12)):
        gpus_1y = units_1y[year] * (c1.unit_gpus if c1 else 0)
        if c1 is not None:
            start = 12 * year + 1
            price = float(c1.price_per_gpu_hour) * _factor(c1.price_decline_per_year, start)
            for month in range(start, start + 12):
                pay(month, gpus_1y * price * 730)
        f, i = firm * growth[year], interruptible * growth[year]
        for month in range(12 * year + 1, min(12 * year + 12, horizon) + 1):
            renewed = sum(gpus for start, gpus in renewed_from.items() if month >= start)
            committed = gpus_3y + gpus_1y + held_before[month] + renewed
            firm_committed = np.minimum(f, committed)
            interruptible_committed = np.minimum(i, committed - firm_committed)
            firm_left, interruptible_left = f - firm_committed, i - interruptible_committed
            firm_owned = np.minimum(firm_left, owned_gpus)
            interruptible_owned = np.minimum(interruptible_left, owned_gpus - firm_owned)
            owned_hours = (firm_owned.sum() + interruptible_owned.sum()) * hours_per_sample / 12
            on_demand_hours = (firm_left - firm_owned).sum() * hours_per_sample / 12
            burst_hours = (interruptible_left - interruptible_owned).sum() * hours_per_sample / 12
            od = float(options.on_demand.price_per_gpu_hour) * _factor(
                options.on_demand.price_decline_per_year, month
            )
            burst = od
            if options.spot is not None:
                burst = min(
                    od,
                    float(options.spot.effective_price_per_gpu_hour)
                    * _factor(options.spot.price_decline_per_year, month),
                )
            variable = float(options.owned.variable_per_gpu_hour[month]) if options.owned else 0.0
            pay(month, owned_hours * variable + on_demand_hours * od + burst_hours * burst)
    npv = sum(amount / (1 + rate) ** (month / 12) for month, amount in cash.items())
    return npv, sum(cash.values())


def in_force_by_month(in_force, horizon: int) -> list[float]:
    """GPUs in force in months 0..H: the given months, else each month its plan year's."""
    if in_force is None:
        return [0.0] * (horizon + 1)
    if getattr(in_force, "gpus_by_month", None) is not None:
        return [float(g) for g in in_force.gpus_by_month[: horizon + 1]]
    return [float(in_force.gpus_by_year[max(month - 1, 0) // 12]) for month in range(horizon + 1)]


def renewal_months(held: list[float]) -> list[int]:
    """The months 2..H in which the GPUs in force fall."""
    return [month for month in range(2, len(held)) if held[month] < held[month - 1] - 1e-9]


def brute_force_minimum(
    options: SupplyOptions, *, firm, interruptible, growth, horizon, rate, in_force=None
) -> float:
    """The least NPV over every integer combination of levels up to one unit past the peak."""
    years = math.ceil(horizon / 12)
    peak = float((firm + interruptible).max() * growth.max())

    def counts(option, unit_attr) -> range:
        if option is None:
            return range(1)
        return range(math.ceil(peak / getattr(option, unit_attr)) + 2)

    held = in_force_by_month(in_force, horizon)
    renewing = options.committed_3y or options.committed_1y
    # a renewal replaces at most the GPUs that end (the engine's option set: more would be a staged
    # purchase for growth, which the plan does not make)
    renewal_ranges = [
        range(math.ceil((held[month - 1] - held[month]) / renewing.unit_gpus - 1e-9) + 1 if renewing else 1)
        for month in renewal_months(held)
    ]
    best = math.inf
    for servers in counts(options.owned, "gpus_per_server"):
        for units_3y in counts(options.committed_3y, "unit_gpus"):
            for units_1y in itertools.product(counts(options.committed_1y, "unit_gpus"), repeat=years):
                for renewed in itertools.product(*renewal_ranges):
                    npv, _ = reference_cost(
                        options,
                        firm=firm,
                        interruptible=interruptible,
                        growth=growth,
                        horizon=horizon,
                        rate=rate,
                        owned_servers=servers,
                        units_3y=units_3y,
                        units_1y=units_1y,
                        in_force=in_force,
                        renewal_units=renewed,
                    )
                    best = min(best, npv)
    return best
