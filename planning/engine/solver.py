"""The cheapest integer levels of owned servers and commitments: screening curves, then exact rounding.

Cost of a plan (one weighting: present value to decide, cash to report), with P_y = 3-year GPUs +
1-year GPUs of year y, O the owned GPUs and Q_y = P_y + O, the demand of year y grown by g_y:
    owned_fixed x servers + committed_3y x 3y GPUs
    + sum over years [ committed_1y[y] x 1y GPUs
                       + owned_variable[y] x (T(P_y) - T(Q_y))       owned serve the band above commitments
                       + on_demand[y] x F(Q_y)                       firm demand above the stack
                       + interruptible_burst[y] x (T(Q_y) - F(Q_y)) ] interruptible demand above the stack
T(x) and F(x) are all and firm GPU-hours a year above level x (stack.LoadCurve). Commitments (no
running cost) sit below owned servers (their energy), which is the cheapest dispatch in every hour;
firm demand is served first because its alternative (on-demand) costs at least the interruptible's.

Search (docs/capacity-plan.md, "Rounding"): the screening curve gives continuous levels; the owned and
3-year counts around them (floor and ceil, widened by a unit's size where units differ) are costed
exactly, each with its best 1-year level per year (the cost is convex in the 1-year level, so a
bisection on its increment finds it), and the search moves to the best window until it stays.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np

from planning.engine.coefficients import Coefficients, renewal_option
from planning.engine.options import SupplyOptions
from planning.engine.stack import LoadCurve


@dataclass(frozen=True)
class Units:
    owned_gpus: int  # GPUs per server (0: no owned option)
    committed_3y: int  # GPUs per unit (0: none)
    committed_1y: int
    renewal: int = 0  # GPUs per unit of the renewal option (coefficients.renewal_option; 0: none)


def option_units(options: SupplyOptions) -> Units:
    renewing = renewal_option(options)
    return Units(
        owned_gpus=options.owned.gpus_per_server if options.owned else 0,
        committed_3y=options.committed_3y.unit_gpus if options.committed_3y else 0,
        committed_1y=options.committed_1y.unit_gpus if options.committed_1y else 0,
        renewal=renewing.unit_gpus if renewing else 0,
    )


@dataclass(frozen=True)
class Levels:
    owned_servers: int
    committed_3y_units: int
    committed_1y_units: tuple[int, ...]  # per plan year
    renewal_units: tuple[int, ...] = ()  # per renewal start (coefficients.Periods.renewal_starts)


def renewal_by_period(coef: Coefficients, renewal_gpus) -> np.ndarray:
    """GPUs renewed in each period: (..., K) -> (..., P) (0 without renewals)."""
    gpus = np.asarray(renewal_gpus, dtype=np.float64)
    if coef.renewal.size == 0:
        return np.zeros(gpus.shape[:-1] + (coef.period_year.size,))
    return gpus @ coef.renewal_active.astype(np.float64)


def _renewal_array(coef: Coefficients, renewal_gpus, shape: tuple[int, ...]) -> np.ndarray:
    if renewal_gpus is None:
        return np.zeros(shape + (coef.renewal.size,))
    return np.asarray(renewal_gpus, dtype=np.float64)


def stack_cost(
    curve: LoadCurve,
    coef: Coefficients,
    *,
    owned_gpus,
    committed_3y_gpus,
    committed_1y_gpus,
    scale,
    renewal_gpus=None,
) -> np.ndarray:
    """The cost of a stack; the last axis of ``committed_1y_gpus`` and ``scale`` is the plan year, of
    ``renewal_gpus`` the renewal start; other axes broadcast (many candidate levels, or many growth
    trials, at once). The money that follows demand is summed period by period (coefficients.Periods)."""
    owned = np.asarray(owned_gpus, dtype=np.float64)[..., None]
    committed_3y = np.asarray(committed_3y_gpus, dtype=np.float64)
    renewed = _renewal_array(coef, renewal_gpus, committed_3y.shape)
    one_year = np.asarray(committed_1y_gpus, dtype=np.float64)
    prepaid = committed_3y[..., None] + coef.per_period(one_year) + renewal_by_period(coef, renewed)
    running = _market_cost(curve, coef, prepaid, owned, coef.per_period(np.asarray(scale, dtype=np.float64)))
    fixed = (
        coef.owned_fixed_per_gpu * owned[..., 0]
        + coef.committed_3y * committed_3y
        + (renewed * coef.renewal).sum(axis=-1)
    )
    return fixed + running.sum(axis=-1) + (coef.committed_1y * one_year).sum(axis=-1)


def _market_cost(curve: LoadCurve, coef: Coefficients, prepaid, owned, scale) -> np.ndarray:
    """Per period: owned servers' running cost on the band above the commitments, the market above."""
    top = prepaid + owned
    above_top = curve.total_above(top, scale)
    firm_above_top = curve.firm_above(top, scale)
    return (
        coef.owned_variable * (curve.total_above(prepaid, scale) - above_top)
        + coef.on_demand * firm_above_top
        + coef.interruptible_burst * (above_top - firm_above_top)
    )


def best_one_year_units(
    curve: LoadCurve,
    coef: Coefficients,
    units: Units,
    *,
    owned_gpus,
    committed_3y_gpus,
    scale: np.ndarray,
    renewal_gpus=None,
) -> np.ndarray:
    """The cheapest 1-year units of each year for arrays of owned and 3-year GPUs: shape (..., Y).
    Ties go to fewer units. Bisection on the increment of a convex cost (its proof: docs); a year's cost
    is the sum of its periods'."""
    owned = np.asarray(owned_gpus, dtype=np.float64)[..., None]
    committed_3y = np.asarray(committed_3y_gpus, dtype=np.float64)
    base = committed_3y[..., None]
    shape = np.broadcast_shapes(owned.shape, scale.shape)
    if units.committed_1y == 0:
        return np.zeros(shape, dtype=np.int64)
    below = base + renewal_by_period(coef, _renewal_array(coef, renewal_gpus, committed_3y.shape))
    unit = float(units.committed_1y)
    peak = curve.peak * scale
    high = np.broadcast_to(np.ceil(np.maximum(peak - base, 0.0) / unit), shape).astype(np.int64).copy()
    low = np.zeros(shape, dtype=np.int64)
    period_scale = coef.per_period(scale)

    def year_cost(count: np.ndarray) -> np.ndarray:
        prepaid = below + coef.per_period(count * unit)
        market = _market_cost(curve, coef, prepaid, owned, period_scale)
        return coef.committed_1y * count * unit + coef.year_sums(market)

    # smallest n in [low, high] with cost(n + 1) - cost(n) >= 0 (at `high` adding more never helps)
    while np.any(low < high):
        middle = (low + high) // 2
        rising = year_cost(middle + 1) - year_cost(middle) >= -1e-9 * np.maximum(
            1.0, np.abs(year_cost(middle))
        )
        high = np.where(rising, middle, high)
        low = np.where(rising, low, middle + 1)
    return low


SCREENING_CHUNK = 65_536  # slices costed at once: (chunk, years) float64 arrays stay a few MiB


def screening_levels(
    curve: LoadCurve, coef: Coefficients, units: Units, scale: np.ndarray
) -> tuple[float, float]:
    """Continuous owned servers and 3-year units: each 1-GPU slice of the curve goes to the option with
    the lowest cost over the horizon at its GPU-hours (the 1-year commitment or the market, re-chosen
    each year, competes as one 'flexible' option)."""
    slices = int(math.ceil(curve.peak * float(scale.max()))) if curve.peak > 0 else 0
    owned = committed = 0
    for first in range(0, slices, SCREENING_CHUNK):
        lower = np.arange(first, min(slices, first + SCREENING_CHUNK), dtype=np.float64)[:, None]
        chosen_owned, chosen_committed = _cheapest_slices(curve, coef, units, scale, lower)
        owned += chosen_owned
        committed += chosen_committed
    return (
        owned / units.owned_gpus if units.owned_gpus else 0.0,
        committed / units.committed_3y if units.committed_3y else 0.0,
    )


def _cheapest_slices(curve, coef: Coefficients, units: Units, scale, lower: np.ndarray) -> tuple[int, int]:
    """How many of the slices [lower, lower + 1) go to owned and to 3-year commitments."""
    period_scale = coef.per_period(scale)
    hours = curve.total_above(lower, period_scale) - curve.total_above(lower + 1, period_scale)  # (slices, P)
    firm = curve.firm_above(lower, period_scale) - curve.firm_above(lower + 1, period_scale)
    market = coef.year_sums(coef.on_demand * firm + coef.interruptible_burst * (hours - firm))  # (slices, Y)
    if units.committed_1y:
        market = np.minimum(market, coef.committed_1y)
    candidates, names = [market.sum(axis=1)], ["flexible"]
    if units.owned_gpus:
        candidates.append(coef.owned_fixed_per_gpu + (coef.owned_variable * hours).sum(axis=1))
        names.append("owned")
    if units.committed_3y:
        candidates.append(np.full(lower.shape[0], coef.committed_3y))
        names.append("committed_3y")
    choice = np.argmin(np.vstack(candidates), axis=0)  # ties: the earlier name (flexible: no capital)
    counted = {name: int(np.sum(choice == index)) for index, name in enumerate(names)}
    return counted.get("owned", 0), counted.get("committed_3y", 0)


def _window(center: float, width: int, maximum: int) -> np.ndarray:
    return np.arange(max(0, math.floor(center) - width), min(maximum, math.ceil(center) + width) + 1)


def _width(unit: int, others: tuple[int, int]) -> int:
    """How far around the continuous level to look: one unit, or as many units as another option's unit
    spans (8-GPU servers against 1-GPU commitments: the remainder can move by a whole server)."""
    if not unit:
        return 0
    return max([1, *(math.ceil(size / unit) for size in others if size)])


def renewal_ranges(coef: Coefficients, units: Units, ending_gpus: np.ndarray) -> list[list[int]]:
    """Each renewal's candidate units: 0 up to the GPUs that end then, in whole units (the renewal
    replaces what ends; more would be a purchase for growth timed inside a year, which the plan does not
    make). Past MAX_RENEWAL_COMBINATIONS in all, an even grid of each range, both ends kept (a limit of
    the search: docs/capacity-plan.md)."""
    if units.renewal == 0:
        return [[0] for _ in range(coef.renewal.size)]
    ranges = [list(range(math.ceil(float(gpus) / units.renewal - 1e-9) + 1)) for gpus in ending_gpus]
    if math.prod(len(levels) for levels in ranges) <= MAX_RENEWAL_COMBINATIONS:
        return ranges
    per_range = max(2, int(MAX_RENEWAL_COMBINATIONS ** (1 / len(ranges))))
    grids = []
    for levels in ranges:
        step = max(1, math.ceil((len(levels) - 1) / (per_range - 1)))
        grids.append(sorted({*range(0, len(levels), step), len(levels) - 1}))
    return grids


MAX_RENEWAL_COMBINATIONS = 4096


def cheapest_levels(
    curve: LoadCurve,
    coef: Coefficients,
    units: Units,
    scale: np.ndarray,
    renewal_ending_gpus: np.ndarray | None = None,
) -> Levels:
    """Screening, then the exact integer search around it (module docstring); each renewal's units are
    searched over their whole range (renewal_ranges)."""
    peak = curve.peak * float(scale.max())
    owned_max = math.ceil(peak / units.owned_gpus) if units.owned_gpus else 0
    committed_max = math.ceil(peak / units.committed_3y) if units.committed_3y else 0
    owned_width = _width(units.owned_gpus, (units.committed_3y, units.committed_1y))
    committed_width = _width(units.committed_3y, (units.owned_gpus, units.committed_1y))
    renewals = list(
        itertools.product(
            *renewal_ranges(
                coef,
                units,
                np.zeros(coef.renewal.size) if renewal_ending_gpus is None else renewal_ending_gpus,
            )
        )
    )
    center = screening_levels(curve, coef, units, scale)
    seen: set[tuple[int, ...]] = set()
    best, best_cost = None, math.inf
    while True:
        servers = _window(center[0], owned_width, owned_max)
        committed = _window(center[1], committed_width, committed_max)
        fresh = [
            (s, c, *r)
            for s, c, r in itertools.product(servers.tolist(), committed.tolist(), renewals)
            if (s, c, *r) not in seen
        ]
        if not fresh:
            break
        seen.update(fresh)
        candidates = np.array(fresh, dtype=np.int64).reshape(len(fresh), 2 + coef.renewal.size)
        owned_gpus = candidates[:, 0] * units.owned_gpus
        committed_gpus = candidates[:, 1] * units.committed_3y
        renewal_gpus = candidates[:, 2:] * units.renewal
        one_year = best_one_year_units(
            curve,
            coef,
            units,
            owned_gpus=owned_gpus,
            committed_3y_gpus=committed_gpus,
            scale=scale,
            renewal_gpus=renewal_gpus,
        )
        costs = stack_cost(
            curve,
            coef,
            owned_gpus=owned_gpus,
            committed_3y_gpus=committed_gpus,
            committed_1y_gpus=one_year * units.committed_1y,
            scale=scale,
            renewal_gpus=renewal_gpus,
        )
        # ties: less capital first (fewer servers, then fewer 3-year units, then fewer renewed), as the
        # TCO verdict's tie (costs compared to 1e-9 of their size, so float noise does not break a tie)
        rounded = np.round(costs / max(1.0, float(np.abs(costs).max())), 9)
        keys = [candidates[:, k] for k in range(candidates.shape[1] - 1, -1, -1)]
        order = np.lexsort((*keys, rounded))
        index = int(order[0])
        if costs[index] < best_cost - 1e-9 * max(1.0, abs(best_cost)) or best is None:
            best_cost = float(costs[index])
            best = Levels(
                int(candidates[index, 0]),
                int(candidates[index, 1]),
                tuple(int(n) for n in one_year[index]),
                tuple(int(n) for n in candidates[index, 2:]),
            )
            center = (float(best.owned_servers), float(best.committed_3y_units))
        else:
            break
    assert best is not None
    return best


def trial_costs(
    curve: LoadCurve, coef: Coefficients, units: Units, levels: Levels, scales: np.ndarray
) -> np.ndarray:
    """The cost of the chosen levels under each growth trial: scales (trials, Y) -> (trials,)."""
    one_year = np.asarray(levels.committed_1y_units, dtype=np.float64) * units.committed_1y
    renewed = np.asarray(levels.renewal_units or (0,) * coef.renewal.size, dtype=np.float64) * units.renewal
    return stack_cost(
        curve,
        coef,
        owned_gpus=np.full(scales.shape[0], levels.owned_servers * units.owned_gpus),
        committed_3y_gpus=np.full(scales.shape[0], levels.committed_3y_units * units.committed_3y),
        committed_1y_gpus=np.broadcast_to(one_year, scales.shape),
        scale=scales,
        renewal_gpus=np.broadcast_to(renewed, (scales.shape[0], coef.renewal.size)),
    )
