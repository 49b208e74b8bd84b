"""The supply options as money per unit over the plan's months, under one weighting of the months.

The weighting is 1 for cash and 1 / (1 + r)^(m / 12) for present value (the TCO engine's monthly
discounting, ``tco.present_value``). Every figure is "per unit of what the stack decides":
- owned_fixed_per_gpu: per owned GPU (a server's over its GPUs), the buy side's fixed flows of months 0..H (purchase at 0, residual at H);
- owned_variable[y], on_demand[y], interruptible_burst[y]: per GPU-hour a year of demand served in plan
  year y, spread evenly over the year's months (a year's demand shape is the representative year);
- committed_3y: per GPU for every month the 3-year terms are paid (renewed at months 37, 73, ...; a
  term past the horizon is paid in full);
- committed_1y[y]: per GPU for the 12 months of the term signed at the start of year y (a last,
  partial year's term is paid in full).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from planning.engine.options import CommitmentOption, SupplyOptions, market_price_factors

HOURS_PER_MONTH = 730.0


def plan_years(horizon_months: int) -> int:
    return math.ceil(horizon_months / 12)


def last_paid_month(options: SupplyOptions, horizon_months: int) -> int:
    """The last month any cash is paid: the horizon, or the end of a commitment term that runs past it."""
    last = horizon_months
    for option in (options.committed_1y, options.committed_3y):
        if option is not None:
            starts = term_starts(option, horizon_months)
            last = max(last, starts[-1] + option.term_months - 1)
    return last


def term_starts(option: CommitmentOption, horizon_months: int) -> list[int]:
    return list(range(1, horizon_months + 1, option.term_months))


def discount_weights(discount_rate_annual: float, months: int) -> np.ndarray:
    """1 / (1 + r)^(m / 12) for months 0..months-1 (the TCO engine's present value)."""
    return 1.0 / (1.0 + discount_rate_annual) ** (np.arange(months) / 12.0)


def year_of_month(horizon_months: int, months: int) -> np.ndarray:
    """The plan year of each month 0..months-1: month 0 (the purchase) and months past the horizon
    (commitment tails) are booked in the first and the last year."""
    month = np.arange(months)
    years = plan_years(horizon_months)
    return np.clip((month - 1) // 12, 0, years - 1)


@dataclass(frozen=True)
class Coefficients:
    owned_fixed_per_gpu: float  # the server's fixed flows / its GPUs
    owned_variable: np.ndarray  # (Y,)
    committed_3y: float
    committed_1y: np.ndarray  # (Y,)
    on_demand: np.ndarray  # (Y,)
    interruptible_burst: np.ndarray  # (Y,): spot where cheaper than on-demand that year
    spot: np.ndarray  # (Y,): inf without a spot option
    spot_cheaper: np.ndarray  # (Y,) bool


def commitment_monthly(option: CommitmentOption, horizon_months: int, months: int) -> np.ndarray:
    """Cash per committed GPU in each month 0..months-1 for the horizon-long 3-year level."""
    paid = np.zeros(months)
    factors = market_price_factors(option.price_decline_per_year, months)
    for start in term_starts(option, horizon_months):
        paid[start : start + option.term_months] = (
            option.hourly_after_upfront * factors[start] * HOURS_PER_MONTH
        )
        paid[start - 1] += float(option.upfront_per_gpu or 0) * factors[start]  # signed the month before
    return paid


def one_year_monthly(option: CommitmentOption, year: int, months: int) -> np.ndarray:
    """Cash per GPU committed for the 1-year term signed at the start of plan year ``year``."""
    paid = np.zeros(months)
    start = 12 * year + 1
    factor = market_price_factors(option.price_decline_per_year, start + 1)[start]
    paid[start : start + 12] = option.hourly_after_upfront * factor * HOURS_PER_MONTH
    paid[start - 1] += float(option.upfront_per_gpu or 0) * factor  # signed the month before it runs
    return paid


def market_monthly(price_per_gpu_hour: float, decline, horizon_months: int, months: int) -> np.ndarray:
    """Price per GPU-hour in each month (0 outside months 1..H: on-demand is only bought while used)."""
    prices = price_per_gpu_hour * market_price_factors(decline, months)
    prices[0] = 0.0
    prices[horizon_months + 1 :] = 0.0
    return prices


def _per_year(monthly: np.ndarray, weights: np.ndarray, years: np.ndarray, count: int) -> np.ndarray:
    """Sum of monthly x weight / 12 within each plan year: money per GPU-hour of a year's demand."""
    return np.bincount(years, weights=monthly * weights / 12.0, minlength=count)


def coefficients(options: SupplyOptions, horizon_months: int, weights: np.ndarray) -> Coefficients:
    months = weights.size
    count = plan_years(horizon_months)
    years = year_of_month(horizon_months, months)
    on_demand = _per_year(
        market_monthly(
            float(options.on_demand.price_per_gpu_hour),
            options.on_demand.price_decline_per_year,
            horizon_months,
            months,
        ),
        weights,
        years,
        count,
    )
    if options.spot is None:
        spot = np.full(count, np.inf)
    else:
        spot = _per_year(
            market_monthly(
                float(options.spot.effective_price_per_gpu_hour),
                options.spot.price_decline_per_year,
                horizon_months,
                months,
            ),
            weights,
            years,
            count,
        )
    owned_fixed_per_gpu, owned_variable = 0.0, np.zeros(count)
    if options.owned is not None:
        fixed = np.zeros(months)
        fixed[: horizon_months + 1] = options.owned.fixed_flows_per_server
        owned_fixed_per_gpu = float(np.sum(fixed * weights)) / options.owned.gpus_per_server
        variable = np.zeros(months)
        variable[: horizon_months + 1] = options.owned.variable_per_gpu_hour
        owned_variable = _per_year(variable, weights, years, count)
    committed_3y = 0.0
    if options.committed_3y is not None:
        committed_3y = float(
            np.sum(commitment_monthly(options.committed_3y, horizon_months, months) * weights)
        )
    committed_1y = np.zeros(count)
    if options.committed_1y is not None:
        committed_1y = np.array(
            [np.sum(one_year_monthly(options.committed_1y, year, months) * weights) for year in range(count)]
        )
    return Coefficients(
        owned_fixed_per_gpu=owned_fixed_per_gpu,
        owned_variable=owned_variable,
        committed_3y=committed_3y,
        committed_1y=committed_1y,
        on_demand=on_demand,
        interruptible_burst=np.minimum(on_demand, spot),
        spot=spot,
        spot_cheaper=spot < on_demand,
    )
