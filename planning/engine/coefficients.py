"""The supply options as money per unit over the plan's months, under one weighting of the months.

The weighting is 1 for cash and 1 / (1 + r)^(m / 12) for present value (the TCO engine's monthly
discounting, ``tco.present_value``). Every figure is "per unit of what the stack decides":
- owned_fixed_per_gpu: per owned GPU (a server's over its GPUs), the buy side's fixed flows of months 0..H (purchase at 0, residual at H);
- owned_variable[y], on_demand[y], interruptible_burst[y]: per GPU-hour a year of demand served in plan
  year y, spread evenly over the year's months (a year's demand shape is the representative year);
- committed_3y: per GPU for every month the 3-year terms are paid (renewed at months 37, 73, ...; a
  term past the horizon is paid in full);
- committed_1y[y]: per GPU for the 12 months of the term signed at the start of year y (a last,
  partial year's term is paid in full);
- renewal[k]: per GPU committed from month ``renewal_starts[k]`` (the month a commitment in force ends),
  renewed at each term's end while the horizon lasts, a term past the horizon paid in full.

The money that follows demand is per **period**: a plan year, cut where the commitments in force change
(a reservation ending in month 7 cuts year 1 into months 1-6 and 7-12), so the stack below the market can
change inside a year. Each period's coefficient is its months' money per GPU-hour of a year's demand,
so coefficient x (GPU-hours a year above a level) is the period's cost.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from planning.engine.options import CommitmentOption, SupplyOptions, market_price_factors

HOURS_PER_MONTH = 730.0


def plan_years(horizon_months: int) -> int:
    return math.ceil(horizon_months / 12)


def last_paid_month(options: SupplyOptions, horizon_months: int, renewal_starts: tuple[int, ...] = ()) -> int:
    """The last month any cash is paid: the horizon, or the end of a commitment term that runs past it."""
    last = horizon_months
    for option in (options.committed_1y, options.committed_3y):
        if option is not None:
            starts = term_starts(option, horizon_months)
            last = max(last, starts[-1] + option.term_months - 1)
    renewing = renewal_option(options)
    if renewing is not None:
        for first in renewal_starts:
            starts = term_starts(renewing, horizon_months, first)
            last = max(last, starts[-1] + renewing.term_months - 1)
    return last


def term_starts(option: CommitmentOption, horizon_months: int, first: int = 1) -> list[int]:
    return list(range(first, horizon_months + 1, option.term_months))


def renewal_option(options: SupplyOptions) -> CommitmentOption | None:
    """What replaces a commitment in force from the month it ends: the 3-year commitment where priced
    (the longest term, the cheapest rate), else the 1-year one; None: the market takes its GPUs."""
    return options.committed_3y or options.committed_1y


def renewal_starts_of(in_force_by_month: np.ndarray | None, horizon_months: int) -> tuple[int, ...]:
    """The months 2..H in which the GPUs in force fall (a commitment ends): a renewal may start there."""
    if in_force_by_month is None:
        return ()
    gpus = np.asarray(in_force_by_month, dtype=np.float64)[: horizon_months + 1]
    return tuple(int(m) for m in range(2, gpus.size) if gpus[m] < gpus[m - 1] - 1e-9)


@dataclass(frozen=True)
class Periods:
    """The plan's months cut into periods: plan years, cut again where the GPUs in force change."""

    of_month: np.ndarray  # (months,) the period of months 0..months-1 (0: month 0; the last: the tail)
    year: np.ndarray  # (P,) the plan year of each period
    months: np.ndarray  # (P,) months of 1..H in each period
    in_force: np.ndarray  # (P,) GPUs in force through each period
    renewal_starts: tuple[int, ...]  # (K,) months a renewal may start
    renewal_gpus_ending: np.ndarray  # (K,) GPUs in force that end there
    renewal_active: np.ndarray  # (K, P) bool: the renewal holds its GPUs in the period

    @property
    def year_starts(self) -> np.ndarray:
        """The first period of each plan year (periods are in time order)."""
        return np.flatnonzero(np.r_[True, np.diff(self.year) > 0])


def plan_periods(horizon_months: int, months: int, in_force_by_month: np.ndarray | None = None) -> Periods:
    gpus = (
        np.zeros(horizon_months + 1)
        if in_force_by_month is None
        else np.asarray(in_force_by_month, dtype=np.float64)[: horizon_months + 1]
    )
    renewals = renewal_starts_of(in_force_by_month, horizon_months)
    cuts = sorted(
        set(range(1, horizon_months + 1, 12))
        | {m for m in range(2, horizon_months + 1) if gpus[m] != gpus[m - 1]}
    )
    first_months = np.asarray(cuts, dtype=np.int64)
    month = np.clip(np.arange(months), 1, horizon_months)
    of_month = np.searchsorted(first_months, month, side="right") - 1
    count = first_months.size
    return Periods(
        of_month=of_month,
        year=(first_months - 1) // 12,
        months=np.bincount(of_month[1 : horizon_months + 1], minlength=count),
        in_force=gpus[first_months],
        renewal_starts=renewals,
        renewal_gpus_ending=np.array([gpus[m - 1] - gpus[m] for m in renewals], dtype=np.float64),
        renewal_active=np.array([first_months >= m for m in renewals], dtype=bool).reshape(
            len(renewals), count
        ),
    )


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
    owned_variable: np.ndarray  # (P,)
    committed_3y: float
    committed_1y: np.ndarray  # (Y,)
    on_demand: np.ndarray  # (P,)
    interruptible_burst: np.ndarray  # (P,): spot where cheaper than on-demand in that period
    spot: np.ndarray  # (P,): inf without a spot option
    spot_cheaper: np.ndarray  # (P,) bool
    period_year: np.ndarray  # (P,) the plan year of each period
    renewal: np.ndarray  # (K,) per GPU renewed from each renewal start
    renewal_active: np.ndarray  # (K, P) bool

    def per_period(self, by_year: np.ndarray) -> np.ndarray:
        """A (..., Y) array as (..., P): each period takes its year's value."""
        return np.asarray(by_year)[..., self.period_year]

    def year_sums(self, by_period: np.ndarray) -> np.ndarray:
        """A (..., P) array summed within each plan year: (..., Y)."""
        starts = np.flatnonzero(np.r_[True, np.diff(self.period_year) > 0])
        return np.add.reduceat(by_period, starts, axis=-1)


def commitment_monthly(
    option: CommitmentOption, horizon_months: int, months: int, first: int = 1
) -> np.ndarray:
    """Cash per committed GPU in each month 0..months-1 for a level held from month ``first`` (1: the
    horizon-long 3-year level; a renewal's start month), renewed at each term's end while the horizon
    lasts."""
    paid = np.zeros(months)
    factors = market_price_factors(option.price_decline_per_year, months)
    for start in term_starts(option, horizon_months, first):
        paid[start : start + option.term_months] = (
            option.hourly_after_upfront * factors[start] * HOURS_PER_MONTH
        )
        paid[start - 1] += float(option.upfront_per_gpu or 0) * factors[start]  # signed the month before
    return paid


# US tax (Treas. Reg. 1.263(a)-4(f), the 12-month rule): a prepayment whose benefit runs 12 months or
# less may be deducted when paid; a longer one is capitalised and deducted over its term.
PREPAYMENT_DEDUCTIBLE_MONTHS = 12


def deductions_of_cash(option: CommitmentOption, cash: np.ndarray, starts: Sequence[int]) -> np.ndarray:
    """When the tax deducts ``cash`` (one GPU's, from commitment_monthly or one_year_monthly for terms
    starting in ``starts``): a term over 12 months has its upfront fee (paid the month before it runs)
    deducted in equal parts over the term's months instead; a term's months past the array's last month
    are deducted in that month."""
    deducted = np.array(cash, dtype=np.float64)
    if not option.upfront_per_gpu or option.term_months <= PREPAYMENT_DEDUCTIBLE_MONTHS:
        return deducted
    factors = market_price_factors(option.price_decline_per_year, deducted.size)
    for start in starts:
        fee = float(option.upfront_per_gpu) * factors[start]
        deducted[start - 1] -= fee
        share = fee / option.term_months
        within = max(0, min(option.term_months, deducted.size - start))
        deducted[start : start + within] += share
        deducted[-1] += share * (option.term_months - within)
    return deducted


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


def coefficients(
    options: SupplyOptions, horizon_months: int, weights: np.ndarray, periods: Periods | None = None
) -> Coefficients:
    months = weights.size
    count = plan_years(horizon_months)
    periods = periods or plan_periods(horizon_months, months)
    of_month, span = periods.of_month, periods.year.size
    on_demand = _per_year(
        market_monthly(
            float(options.on_demand.price_per_gpu_hour),
            options.on_demand.price_decline_per_year,
            horizon_months,
            months,
        ),
        weights,
        of_month,
        span,
    )
    if options.spot is None:
        spot = np.full(span, np.inf)
    else:
        spot = _per_year(
            market_monthly(
                float(options.spot.effective_price_per_gpu_hour),
                options.spot.price_decline_per_year,
                horizon_months,
                months,
            ),
            weights,
            of_month,
            span,
        )
    owned_fixed_per_gpu, owned_variable = 0.0, np.zeros(span)
    if options.owned is not None:
        fixed = np.zeros(months)
        fixed[: horizon_months + 1] = options.owned.fixed_flows_per_server
        owned_fixed_per_gpu = float(np.sum(fixed * weights)) / options.owned.gpus_per_server
        variable = np.zeros(months)
        variable[: horizon_months + 1] = options.owned.variable_per_gpu_hour
        owned_variable = _per_year(variable, weights, of_month, span)
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
    renewing = renewal_option(options)
    renewal = np.array(
        [
            float(np.sum(commitment_monthly(renewing, horizon_months, months, first) * weights))
            if renewing is not None
            else 0.0
            for first in periods.renewal_starts
        ],
        dtype=np.float64,
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
        period_year=periods.year,
        renewal=renewal,
        renewal_active=periods.renewal_active,
    )
