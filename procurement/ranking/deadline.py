"""A deadline is met on wall-clock time, at a stated probability (issue 26).

A spot row's time to finish is not its compute hours: checkpoint writes, work lost to reclaims and
restarts come on top. The quantile of that wall-clock time at ``options.deadline_probability`` is read
from the same seeded Monte Carlo that gives a row its P50/P90 (``costing.spot_simulation``, same seed,
same inputs, so the figures agree); with an assumed band (no advisor data) it is read at the worst band,
as the row's P90 is. A spot row whose quantile is past the deadline does not pass the deadline filter
alone. It is ranked instead as the spot-with-on-demand-fallback plan (``costing.spot_fallback``): run on
spot, switch at the last safe moment to the cheapest on-demand offer of the same shape (same GPU model,
GPUs per instance, instances and plan: the same hours, so it still finishes) from any provider, priced at
the plan's expected cost; a plan that does not reach the probability, or whose expected cost is above
that cheapest on-demand offer alone (``deadline_plan`` keeps on-demand alone then), is not ranked (the
on-demand row is). Any provider, not only the spot offer's own: a provider that sells the shape only on
spot (Verda's 8 x B200) would otherwise have no plan, and one whose own on-demand price is far above the
market's (AWS's) would rank a plan dearer than the cheapest on-demand row. Assumed: the switch restarts
from the checkpoint read at the storage read bandwidth (the restart R, as after a reclaim), over the
internet when the providers differ; the egress of that one read (the checkpoint's GB) is not priced.

The plans are simulated lazily: a late spot row first ranks at its spot-alone total, a lower bound
(the plan pays on-demand prices for some hours), and only the rows that reach the top N are simulated
and re-priced, until the top N holds no unsimulated late row. The reserve runs are cached per
(hours, band, timing), so rows of one shape in several regions share one simulation.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from decimal import Decimal, getcontext
from functools import lru_cache
from typing import cast

import numpy as np
import pandas as pd

from procurement.costing.spot import (
    BAND_LABELS,
    band_interruption_rate_per_hour,
    job_interruption_rate_per_hour,
    spot_economics,
)
from procurement.costing.spot_fallback import FallbackInput, FallbackPlan, deadline_plan
from procurement.costing.spot_simulation import (
    SortedWallHours,
    SpotSimulationInput,
    sorted_percentiles,
    sorted_wall_hours_many,
    sorted_wall_hours_of_keys,
    valid_wall_key,
)
from procurement.ranking.configurations import Configurations, ranked_order
from procurement.ranking.offers import PreparedOffers
from procurement.ranking.spot_inputs import job_spot_timing

EPSILON_HOURS = 1e-9
MAX_PASSES = 50  # each pass simulates the late rows new to the top N; a few passes settle it


@dataclass(frozen=True)
class WallClock:
    p50_hours: float
    p90_hours: float
    at_probability_hours: float  # the quantile at the stated deadline probability
    basis: str


@dataclass
class DeadlineView:
    """Per ranked configuration index: its wall-clock quantiles (spot rows), and for a spot row ranked as
    the spot-with-fallback plan, that plan and the on-demand configuration it falls back on."""

    wall: dict[int, WallClock] = field(default_factory=dict)
    fallback_price_usd: dict[int, float] = field(default_factory=dict)
    fallback_config: dict[int, int] = field(default_factory=dict)
    plans: dict[int, FallbackPlan] = field(default_factory=dict)


def _exact(value: float) -> Decimal:
    return Decimal(repr(float(value)))


# (hours, band, known, write, restart, trials, seed, probability[, instances]): without the last, 1 instance
WallClockKey = (
    tuple[float, int, bool, float, float, int, int, float]
    | tuple[float, int, bool, float, float, int, int, float, int]
)
# Memo entries (a few hundred bytes each); full: start over. A recompute of the bench's workloads asks for
# ~6,600 distinct wall clocks in 3,000-4,000 workloads: at 4,096 the memo was cleared again and again and
# 23,776 were simulated where 6,624 are distinct (in process, 2026-12-06); 16,384 holds them (~5 MB).
WALL_CLOCKS_KEPT = 16384
_wall_clocks: dict[WallClockKey, WallClock] = {}


def wall_clock(
    hours: float,
    band: int,
    known: bool,
    write: float,
    restart: float,
    trials: int,
    seed: int,
    probability: float,
    instances: int = 1,
) -> WallClock:
    """Wall-clock quantiles of ``hours`` of work on spot at ``band`` (checkpoint every min(Young/Daly,
    15 min), the interval the row's economics use), on ``instances`` (reclaimed at instances x the band's
    rate); an assumed band reads P90 and the deadline quantile at the worst band too, keeping the larger
    (procurement/ranking/spot_details.py does the same)."""
    return wall_clocks([(hours, band, known, write, restart, trials, seed, probability, instances)])[0]


def wall_clocks(keys: list[WallClockKey]) -> list[WallClock]:
    """``wall_clock`` of each key; the ones not memoized yet are simulated together (one vectorized run,
    ``simulate_wall_hours_many``), each exactly as its own simulation would be. Memoized per process:
    rows of one shape in several regions, and workloads of one size, share a simulation."""
    keys = [key[:8] if _key_instances(key) == 1 else key for key in keys]  # one memo entry for 1 instance
    missing = list(dict.fromkeys(key for key in keys if key not in _wall_clocks))
    if missing:
        if len(_wall_clocks) + len(missing) > WALL_CLOCKS_KEPT:
            _wall_clocks.clear()
        _wall_clocks.update(zip(missing, _simulated_wall_clocks(missing), strict=True))
    return [_wall_clocks[key] for key in keys]


def _simulated_wall_clocks(keys: list[WallClockKey]) -> list[WallClock]:
    inputs, worst_band = [], len(BAND_LABELS) - 1
    for key in keys:
        hours, band, known, write, restart, trials, seed = key[:7]
        instances = _key_instances(key)
        interval = _interval_hours(band, write, restart, instances)
        inputs += [
            (hours, _job_rate(rate, instances), interval, write, restart, trials, seed)
            for rate in ([band] if known else [band, worst_band])
        ]
    walls = _sorted_walls(inputs)
    probabilities = [key[7] for key in keys for _ in range(1 if key[2] else 2)]
    quantiles = iter(
        [
            sorted_percentiles(wall.hours, (50, 90, 100.0 * probability))
            for wall, probability in zip(walls, probabilities, strict=True)
        ]
    )
    clocks = []
    for key in keys:
        p50, p90, at = next(quantiles)
        basis = f"simulated at the row's band ({BAND_LABELS[key[1]]} a month)"
        if not key[2]:
            worst = next(quantiles)
            p90, at = max(p90, worst[1]), max(at, worst[2])
            basis = (
                f"assumed band: P90 and the deadline quantile read at the {BAND_LABELS[-1]} band (the worst "
                "case)"
            )
        clocks.append(WallClock(round(p50, 3), round(p90, 3), round(at, 3), basis))
    return clocks


def _key_instances(key: WallClockKey) -> int:
    return int(key[8]) if len(key) > 8 else 1


def _job_rate(band: int, instances: int) -> Decimal:
    """The job's interruption rate at ``band``: instances x the band's per-instance rate (costing.spot)."""
    return job_interruption_rate_per_hour(band_interruption_rate_per_hour(band), instances)


def _interval_hours(band: int, write: float, restart: float, instances: int = 1) -> Decimal:
    """The checkpoint interval of a job at ``band`` on ``instances`` (min(Young/Daly, 15 min) at the job's
    rate), as the row's economics choose it; memoized per Decimal context, as the band's rate is."""
    context = getcontext()
    return _interval_in_context(band, write, restart, instances, context.prec, context.rounding)


@lru_cache(maxsize=4096)
def _interval_in_context(
    band: int, write: float, restart: float, instances: int, prec: int, rounding: str
) -> Decimal:
    return spot_economics(
        spot_price_per_hour=Decimal(0),
        rate_per_hour=band_interruption_rate_per_hour(band),
        checkpoint_write_hours=_exact(write),
        restart_hours=_exact(restart),
        instances=instances,
    ).interval_hours


def _sorted_walls(
    inputs: list[tuple[float, Decimal, Decimal, float, float, int, int]],
) -> list[SortedWallHours]:
    """The simulations' sorted hours, by key (work, the job's rate, interval, write, restart, trials, seed);
    inputs that fail the simulation's checks go through its validated entry, which names the field."""
    keys = [
        (hours, float(rate), float(interval), write, restart, trials, seed)
        for hours, rate, interval, write, restart, trials, seed in inputs
    ]
    if all(valid_wall_key(key) for key in keys):
        return sorted_wall_hours_of_keys(keys)
    return sorted_wall_hours_many([_simulation_input(*values) for values in inputs])


def _simulation_input(hours, rate, interval, write, restart, trials, seed) -> SpotSimulationInput:
    return SpotSimulationInput(
        work_hours=_exact(hours),
        rate_per_hour=rate,
        interval_hours=interval,
        checkpoint_write_hours=_exact(write),
        restart_hours=_exact(restart),
        spot_price_per_hour=Decimal(0),
        trials=trials,
        seed=seed,
    )


def wall_clock_key(
    index: int, configs: Configurations, prepared: PreparedOffers, spec, options
) -> WallClockKey:
    offer = int(configs.offer[index])
    timing = job_spot_timing(spec, options)
    return (
        float(configs.hours[index]),
        int(prepared.columns["band"][offer]),
        bool(prepared.columns["band_known"][offer]),
        float(timing.checkpoint_write_hours),
        float(timing.restart_hours),
        int(options.spot_simulation_trials),
        int(options.spot_simulation_seed),
        float(options.deadline_probability),
        int(configs.instances[index]),
    )


def spot_wall_clock(
    index: int, configs: Configurations, prepared: PreparedOffers, spec, options
) -> WallClock:
    return wall_clock(*wall_clock_key(index, configs, prepared, spec, options))


def spot_wall_clocks(
    indices: list[int], configs: Configurations, prepared: PreparedOffers, spec, options
) -> dict[int, WallClock]:
    """``spot_wall_clock`` of each configuration index, simulated together."""
    clocks, inverse = _distinct_spot_wall_clocks(
        np.asarray(indices, dtype=np.int64), configs, prepared, spec, options
    )
    return dict(zip(indices, [clocks[j] for j in inverse.tolist()], strict=True))


def _distinct_spot_wall_clocks(
    indices: np.ndarray, configs: Configurations, prepared: PreparedOffers, spec, options
) -> tuple[list[WallClock], np.ndarray]:
    """The wall clocks of the distinct keys among ``indices`` and, per index, its position in them. Only
    (hours, band, known band, instances) vary between rows (``wall_clock_key``), and 100,000 offers hold a
    few hundred distinct ones: the keys are built per distinct tuple, not per row (issue 26, "Speed": one
    key per row was most of a deadline ranking's time)."""
    offer = configs.offer[indices]
    varying = (
        configs.hours[indices].astype(np.float64),
        prepared.columns["band"][offer].astype(np.int64),
        prepared.columns["band_known"][offer].astype(bool),
        configs.instances[indices].astype(np.int64),
    )
    codes = [pd.factorize(column, use_na_sentinel=False) for column in varying]
    combined = np.zeros(len(indices), dtype=np.int64)
    for code, uniques in codes:
        combined = combined * len(uniques) + code
    inverse, distinct = pd.factorize(combined)  # in order of first appearance, as the rows come
    first = np.full(len(distinct), len(indices), dtype=np.int64)
    np.minimum.at(first, inverse, np.arange(len(indices)))
    timing = job_spot_timing(spec, options)
    fixed = (
        float(timing.checkpoint_write_hours),
        float(timing.restart_hours),
        int(options.spot_simulation_trials),
        int(options.spot_simulation_seed),
        float(options.deadline_probability),
    )
    hours, band, known, instances = (column[first].tolist() for column in varying)
    # tolist() gives Python floats / ints / bools, as WallClockKey states
    keys = cast(
        list[WallClockKey],
        [(h, b, k, *fixed, n) for h, b, k, n in zip(hours, band, known, instances, strict=True)],
    )
    return wall_clocks(keys), inverse


def cheapest_on_demand_same_shape(
    configs: Configurations, prepared: PreparedOffers, rows: np.ndarray, shapes_count: int
) -> dict[int, int]:
    """Per spot configuration in ``rows``: the cheapest (hourly price x its hours) feasible on-demand
    configuration of the same shape from any provider (module doc), absent when there is none. Same shape:
    the same GPU model, GPUs per instance, instances and plan (a shape also carries the host's link, so
    providers' rows of one GPU shape are matched on those four), finishing in no more hours than the spot
    row's (the plan charges the spot row's hours on demand: never less than the fallback needs).
    ``shapes_count``: the number of shapes (kinds x instance counts x plans, laid out kind by kind).

    Column operations (issue 26, "Speed"): within a group, in cost order (ties in index order), the first
    configuration with hours <= h is the first whose running minimum of hours is <= h, a binary search."""
    rows = np.asarray(rows, dtype=np.int64)
    pricing = prepared.text["pricing_model"][prepared.positions[configs.offer]]
    on_demand = np.flatnonzero(configs.fits & (pricing == "on_demand"))
    group_of = _same_shape_groups(configs, prepared, shapes_count)
    row_groups = group_of(rows)
    od_groups = group_of(on_demand)
    # only the groups asked for; NaN <= h never holds: never a match
    keep = np.isin(od_groups, row_groups) & ~np.isnan(configs.hours[on_demand])
    on_demand, od_groups = on_demand[keep], od_groups[keep]
    cost = configs.offer_price_per_hour[configs.offer[on_demand]] * configs.hours[on_demand]
    by_cost = np.argsort(cost, kind="stable")
    in_groups = by_cost[np.argsort(od_groups[by_cost], kind="stable")]  # group by group, each in cost order
    candidates, candidate_groups = on_demand[in_groups], od_groups[in_groups]
    low = np.searchsorted(candidate_groups, row_groups, side="left")
    high = np.searchsorted(candidate_groups, row_groups, side="right")
    limit = configs.hours[rows] + EPSILON_HOURS
    match = np.full(len(rows), -1, dtype=np.int64)
    for start, stop in set(zip(low.tolist(), high.tolist(), strict=True)):
        if start == stop:
            continue
        mine = np.flatnonzero((low == start) & (high == stop) & ~np.isnan(limit))
        running = np.minimum.accumulate(configs.hours[candidates[start:stop]])
        first = np.searchsorted(-running, -limit[mine], side="left")
        found = first < stop - start
        match[mine[found]] = candidates[start + first[found]]
    matched = match >= 0
    return dict(zip(rows[matched].tolist(), match[matched].tolist(), strict=True))


def _same_shape_groups(configs: Configurations, prepared: PreparedOffers, shapes_count: int):
    """A function of configuration indices: a code equal for the same (GPU model, GPUs per instance,
    instances and plan)."""
    per_kind = max(1, shapes_count // max(1, len(prepared.kinds)))
    pairs = zip(prepared.kinds["gpu"].map(str), prepared.kinds["gpus_per_instance"].astype(int), strict=True)
    kind_group = pd.factorize(pd.Series(list(pairs), dtype=object))[0].astype(np.int64)

    def group_of(indices: np.ndarray) -> np.ndarray:
        kind = prepared.offer_kind[configs.offer[indices]]
        return kind_group[kind] * per_kind + configs.shape[indices] % per_kind

    return group_of


def apply_deadline(
    configs: Configurations, prepared: PreparedOffers, instances_of: np.ndarray, spec, options
) -> tuple[Configurations, DeadlineView]:
    """The configurations with the deadline met on wall-clock time (see the module doc), and the view the
    rows are described from. ``instances_of``: instances per shape."""
    view = DeadlineView()
    if options.deadline_hours is None or not spec.is_training:
        return configs, view
    deadline = float(options.deadline_hours)
    is_spot = prepared.columns["is_spot"][configs.offer]
    spot = np.flatnonzero(configs.selected & configs.fits & is_spot)
    clocks, inverse = _distinct_spot_wall_clocks(spot, configs, prepared, spec, options)
    view.wall.update(zip(spot.tolist(), [clocks[j] for j in inverse.tolist()], strict=True))
    at_probability = np.array([clock.at_probability_hours for clock in clocks], dtype=np.float64)
    late = spot[at_probability[inverse] > deadline + EPSILON_HOURS]
    if not len(late):
        return configs, view
    selected, total = configs.selected.copy(), configs.total_cost.copy()
    fallback = cheapest_on_demand_same_shape(configs, prepared, late, len(instances_of))
    # late alone, nothing of the same shape to fall back on: not ranked
    selected[late[~np.isin(late, np.fromiter(fallback, dtype=np.int64, count=len(fallback)))]] = False
    timing = job_spot_timing(spec, options)
    for _ in range(MAX_PASSES):
        current = replace(configs, selected=selected, total_cost=total)
        new = [
            int(i) for i in ranked_order(current, options.top) if int(i) in fallback and i not in view.plans
        ]
        if not new:
            break
        for index in new:
            od_index = fallback[index]
            od_price = float(configs.offer_price_per_hour[configs.offer[od_index]])
            instances = int(instances_of[int(configs.shape[index])])
            plan = _plan(configs, prepared, index, instances, od_price, timing, options)
            view.plans[index] = plan
            if not plan.meets_target or plan.reserve_fraction is None:
                selected[index] = False  # on-demand alone is its own row; a plan short of the target is out
                continue
            view.fallback_price_usd[index], view.fallback_config[index] = od_price, od_index
            spot_compute = configs.effective_price_per_hour(index) * float(configs.hours[index]) * instances
            total[index] += (plan.expected_cost - spot_compute) * (1.0 + options.rerun_fraction)
    return replace(configs, selected=selected, total_cost=total), view


def fallback_input(
    hours: float, band: int, spot_price: float, od_price: float, instances: int, timing, options
) -> FallbackInput:
    """The plan's inputs, as spot_details shows the plan: the row's band (its rate and the interval
    min(Young/Daly, 15 min)), its spot price, the fallback's on-demand price, the stated probability."""
    write, restart = float(timing.checkpoint_write_hours), float(timing.restart_hours)
    economics = spot_economics(
        spot_price_per_hour=_exact(spot_price),
        rate_per_hour=band_interruption_rate_per_hour(band),
        checkpoint_write_hours=_exact(write),
        restart_hours=_exact(restart),
        instances=instances,
    )
    return FallbackInput(
        work_hours=hours,
        deadline_hours=float(options.deadline_hours),
        rate_per_hour=float(economics.rate_per_hour),  # the job's: instances x the per-instance rate
        interval_hours=float(economics.interval_hours),
        checkpoint_write_hours=write,
        restart_hours=restart,
        spot_price_per_hour=float(economics.spot_price_per_hour),
        on_demand_price_per_hour=od_price,
        instances=instances,
        probability=options.deadline_probability,
        trials=options.spot_simulation_trials,
        seed=options.spot_simulation_seed,
    )


def _plan(configs, prepared, index: int, instances: int, od_price: float, timing, options) -> FallbackPlan:
    band = int(prepared.columns["band"][int(configs.offer[index])])
    return deadline_plan(
        fallback_input(
            float(configs.hours[index]),
            band,
            configs.price_per_hour(index),
            od_price,
            instances,
            timing,
            options,
        )
    )
