"""A deadline-aware spot plan: run on spot, fall back to on-demand when the slack runs out.

The job (W hours of work, checkpoints every tau hours taking C, restarts taking R) starts on spot. At
every decision point (the start and each reclaim) it stays on spot only if, even when the next spot
run loses a reserve r of work to a reclaim, an on-demand restart would still finish by the deadline D:

    stay on spot  iff  t + R_spot + r + R + T(W) <= D      (else restart on on-demand and finish there)

with t the wall-clock time, W the work left behind the last checkpoint, T(W) = W + C x (segments - 1)
the time to finish it on spot (on-demand, never reclaimed, needs only W), R_spot the spot restart (0 at the
start: the first launch) and R the on-demand restart. R counts at the first decision too: the on-demand
start this rule guards is the one after a reclaim of the spot run, never the first launch (going to
on-demand at the very start takes no restart, as the leave case charges). When that fails, the run may still use spot up to the last safe moment
(``spot_run_limits``): segment k of the run (from t + R_spot + k (tau + C), W - k tau left) starts only
while t + R_spot + k (tau + C) + max(r, C) + R + W - k tau <= D, and after the last such segment the job
moves to on-demand at its checkpoint without waiting for a reclaim. With r = tau + C (a whole segment and
its write, the most a reclaim can lose) the rule is safe: every trial meets the deadline whenever
on-demand alone would. A smaller reserve keeps
more hours on spot at some risk; the plan takes the cheapest reserve of {0, 1/4, 1/2, 1} x (tau + C)
whose simulated probability of meeting the deadline is at least the one asked for (default 95%), or
on-demand alone when that is cheaper still (a reclaim-heavy spot run can cost more than it saves).

Reclaims are the same Poisson process as ``spot_simulation`` (memoryless, so each spot run draws a fresh
exponential time to its reclaim); every hour is billed at the price of the instance it runs on. The
reserves are simulated together (``simulate_reserves``) and, since prices do not enter the simulation,
once per distinct (hours, interruption rate, timing, deadline, trials, seed): a ranking's rows that share
them reuse one run (``_reserve_runs``); prices only weigh the hours afterwards.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from procurement.costing.values import CostInputError

RESERVE_FRACTIONS = (0.0, 0.25, 0.5, 1.0)  # of one segment (tau + C); 1.0 is the safe rule
MAX_DECISIONS = 10_000
EPSILON_HOURS = 1e-9


@dataclass(frozen=True)
class FallbackInput:
    work_hours: float
    deadline_hours: float
    rate_per_hour: float
    interval_hours: float
    checkpoint_write_hours: float
    restart_hours: float
    spot_price_per_hour: float  # per instance-hour
    on_demand_price_per_hour: float
    instances: int = 1
    probability: float = 0.95
    trials: int = 2_000
    seed: int = 0


@dataclass(frozen=True)
class FallbackPlan:
    meets_target: bool  # some reserve meets the deadline with at least ``probability``
    reserve_fraction: float | None  # the chosen reserve, in segments; None: on-demand alone
    expected_cost: float
    p90_cost: float
    p_meets_deadline: float
    expected_spot_hours: float
    expected_on_demand_hours: float
    switched_share: float  # share of trials that ended on on-demand
    on_demand_only_cost: float
    on_demand_only_hours: float
    worst_cost: float = 0.0  # the dearest of the trials: every reclaim as late as the rule allows


def time_to_finish(work: np.ndarray, interval: float, write: float) -> np.ndarray:
    """T(W) = W + C x (ceil(W / tau) - 1): the work plus a checkpoint between segments."""
    segments = np.ceil(work / interval - 1e-12)
    return work + write * np.maximum(segments - 1.0, 0.0)


def _validate(spec: FallbackInput) -> None:
    for name in ("work_hours", "deadline_hours", "interval_hours"):
        if not getattr(spec, name) > 0:
            raise CostInputError(name, f"must be > 0, got {getattr(spec, name)!r}")
    for name in (
        "rate_per_hour",
        "checkpoint_write_hours",
        "restart_hours",
        "spot_price_per_hour",
        "on_demand_price_per_hour",
    ):
        if not getattr(spec, name) >= 0:
            raise CostInputError(name, f"must not be negative, got {getattr(spec, name)!r}")
    if not 0 < spec.probability <= 1:
        raise CostInputError("deadline_probability", f"must be in (0, 1], got {spec.probability!r}")
    if spec.trials < 1 or spec.instances < 1:
        raise CostInputError("trials", "trials and instances must be at least 1")


def simulate_policy(spec: FallbackInput, reserve_hours: float) -> dict[str, np.ndarray]:
    """Per trial: finish time, spot hours and on-demand hours under the rule with reserve ``reserve_hours``."""
    return {key: values[0] for key, values in simulate_reserves(spec, (reserve_hours,)).items()}


def simulate_reserves(spec: FallbackInput, reserves: tuple[float, ...]) -> dict[str, np.ndarray]:
    """``simulate_policy`` for every reserve at once: arrays of shape (reserves, trials).

    All reserves advance decision by decision together, as one flat array (reserve k's trials are
    the slice k x trials ... (k + 1) x trials), so each decision is a few numpy calls for every reserve
    rather than per reserve. Common random numbers: every reserve reads the same seeded stream of
    exponential draws from its own cursor, in trial order, exactly as a separate
    ``default_rng(seed).exponential`` per reserve would (numpy draws a stream the same in one call or
    in pieces), so the results equal simulating each reserve alone.
    """
    interval, write, restart = spec.interval_hours, spec.checkpoint_write_hours, spec.restart_hours
    trials, count = spec.trials, len(reserves)
    stream = _DrawStream(spec.seed, spec.rate_per_hour)
    reserve = np.repeat(np.asarray(reserves, dtype=float), trials)
    size = count * trials
    t = np.zeros(size)
    work = np.full(size, float(spec.work_hours))
    spot_hours, od_hours, finish = np.zeros(size), np.zeros(size), np.full(size, np.inf)
    switched = np.zeros(size, dtype=bool)
    active = np.arange(size)
    cursors = np.zeros(count, dtype=np.int64)  # draws each reserve has read so far
    spot_restart, od_restart = 0.0, 0.0  # the start: both are the first launch
    for _ in range(MAX_DECISIONS):
        if active.size == 0:
            break
        needed = time_to_finish(work[active], interval, write)
        stay, limit, moved_work = spot_run_limits(
            t[active] + spot_restart, reserve[active], work[active], needed, restart, spec
        )
        leave = active[~stay]
        od_hours[leave] = od_restart + work[leave]  # on-demand finishes without checkpoint writes
        finish[leave] = t[leave] + od_hours[leave]
        switched[leave] = True
        run = active[stay]
        needed, limit, moved_work = needed[stay], limit[stay], moved_work[stay]
        start = t[run] + spot_restart
        spot_hours[run] += spot_restart
        taken = np.bincount(run // trials, minlength=count)  # ``run`` is sorted: reserve by reserve
        until = stream.take(cursors, taken)
        cursors += taken
        done = (limit >= needed) & (until >= needed)
        spot_hours[run[done]] += needed[done]
        finish[run[done]] = start[done] + needed[done]
        volunteer = (limit < needed) & (until >= limit)  # the last safe moment came before any reclaim
        moved = run[volunteer]
        spot_hours[moved] += limit[volunteer]
        work[moved] -= moved_work[volunteer]
        od_hours[moved] = restart + work[moved]
        finish[moved] = start[volunteer] + limit[volunteer] + od_hours[moved]
        switched[moved] = True
        reclaimed = ~(done | volunteer)
        hit, elapsed = run[reclaimed], until[reclaimed]
        work[hit] -= np.floor(elapsed / (interval + write)) * interval
        spot_hours[hit] += elapsed
        t[hit] = start[reclaimed] + elapsed
        active = hit
        spot_restart, od_restart = restart, restart
    else:
        raise CostInputError("interruption_rate_per_hour", "too many reclaims: the plan does not converge")
    shape = (count, trials)
    return {
        "finish": finish.reshape(shape),
        "spot_hours": spot_hours.reshape(shape),
        "od_hours": od_hours.reshape(shape),
        "switched": switched.reshape(shape),
    }


def spot_run_limits(
    start: np.ndarray,
    reserve: np.ndarray,
    work: np.ndarray,
    needed: np.ndarray,
    restart: float,
    spec: FallbackInput,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For spot runs starting at ``start``: (go on spot at all, wall hours the run may last before it
    switches to on-demand at the last safe moment, work those hours commit).

    A run that can finish on spot under the reclaim-time rule of the module doc (start + reserve + R +
    T(W) <= D) may last ``needed``. Otherwise it still starts on spot if segment 0 is safe, and segment k
    (from start + k (tau + C), W - k tau left) begins only while a reclaim in it, losing at most
    max(reserve, C), or the voluntary switch after it still finishes on demand: start + k (tau + C) +
    max(reserve, C) + R + W - k tau <= D, i.e. k C <= D - start - max(reserve, C) - R - W. After the last
    such segment the run moves to on-demand at its checkpoint (issue 26: "at the last safe moment"); without
    this, a job whose slack is under its total checkpoint writes never used spot at all.
    """
    deadline, interval, write = (
        spec.deadline_hours + EPSILON_HOURS,
        spec.interval_hours,
        spec.checkpoint_write_hours,
    )
    whole = start + reserve + restart + needed <= deadline  # R: the on-demand start after a reclaim
    room = deadline - start - np.maximum(reserve, write) - restart - work
    if write > 0:
        # a checkpoint write of a few microseconds against a long room overflows to inf segments, which
        # the cap at `left` below turns into "spot to the end": the right answer, so the warning is noise
        with np.errstate(over="ignore"):
            segments = np.where(room >= 0, np.floor(room / write) + 1.0, 0.0)
    else:
        segments = np.where(room >= 0, np.inf, 0.0)
    left = np.ceil(work / interval - 1e-12)
    segments = np.where(whole, left, np.minimum(segments, left))
    limit = np.where(segments >= left, needed, segments * (interval + write))
    committed = np.where(segments >= left, work, segments * interval)
    return whole | (segments >= 1), limit, committed


class _DrawStream:
    """The exponential times to a reclaim of one seeded generator, drawn on demand and kept, so several
    readers can each read it from their own position."""

    def __init__(self, seed: int, rate: float) -> None:
        self._rng = np.random.default_rng(seed)
        self._scale = 1.0 / rate if rate > 0 else None
        self._draws = np.zeros(0)

    def take(self, starts: np.ndarray, counts: np.ndarray) -> np.ndarray:
        """Reader k's next ``counts[k]`` draws from ``starts[k]``, concatenated in reader order."""
        total = int(counts.sum())
        if self._scale is None:
            return np.full(total, np.inf)
        wanted = int((starts + counts).max()) if counts.size else 0
        if wanted > self._draws.size:
            # Generator.exponential(scale, n) is scale x the next n standard exponentials
            more = self._rng.exponential(self._scale, wanted - self._draws.size)
            self._draws = np.concatenate([self._draws, more])
        if total == 0:
            return np.zeros(0)
        return np.concatenate([self._draws[a : a + n] for a, n in zip(starts, counts, strict=True) if n])


@lru_cache(maxsize=256)
def _reserve_runs(
    work: float,
    deadline: float,
    rate: float,
    interval: float,
    write: float,
    restart: float,
    trials: int,
    seed: int,
) -> tuple[tuple[np.ndarray, np.ndarray, float, float], ...]:
    """Per reserve of RESERVE_FRACTIONS: (spot hours, on-demand hours, share meeting the deadline,
    share switched). Prices do not enter the simulation, so the rows of one ranking that share the job's
    hours and interruption band (the same instance type in several regions, say) simulate it once."""
    spec = FallbackInput(
        work_hours=work,
        deadline_hours=deadline,
        rate_per_hour=rate,
        interval_hours=interval,
        checkpoint_write_hours=write,
        restart_hours=restart,
        spot_price_per_hour=0.0,
        on_demand_price_per_hour=0.0,
        trials=trials,
        seed=seed,
    )
    segment = interval + write
    runs = simulate_reserves(spec, tuple(fraction * segment for fraction in RESERVE_FRACTIONS))
    met = (runs["finish"] <= deadline + EPSILON_HOURS).mean(axis=1)
    result = []
    for k in range(len(RESERVE_FRACTIONS)):
        spot_hours, od_hours = runs["spot_hours"][k].copy(), runs["od_hours"][k].copy()
        spot_hours.flags.writeable = od_hours.flags.writeable = False  # shared by every caller
        result.append((spot_hours, od_hours, float(met[k]), float(runs["switched"][k].mean())))
    return tuple(result)


def deadline_plan(spec: FallbackInput) -> FallbackPlan:
    """The cheapest reserve that meets the deadline with at least ``spec.probability`` (see module doc)."""
    _validate(spec)
    od_only_hours = float(spec.work_hours)
    od_only_cost = od_only_hours * spec.on_demand_price_per_hour * spec.instances
    best: FallbackPlan | None = None
    runs = _reserve_runs(
        float(spec.work_hours),
        float(spec.deadline_hours),
        float(spec.rate_per_hour),
        float(spec.interval_hours),
        float(spec.checkpoint_write_hours),
        float(spec.restart_hours),
        int(spec.trials),
        int(spec.seed),
    )
    for fraction, (spot_hours, od_hours, met, switched) in zip(RESERVE_FRACTIONS, runs, strict=True):
        cost = spot_hours * spec.spot_price_per_hour + od_hours * spec.on_demand_price_per_hour
        cost = cost * spec.instances
        plan = FallbackPlan(
            meets_target=met >= spec.probability,
            reserve_fraction=fraction,
            expected_cost=float(cost.mean()),
            p90_cost=float(np.percentile(cost, 90)),
            p_meets_deadline=met,
            expected_spot_hours=float(spot_hours.mean()),
            expected_on_demand_hours=float(od_hours.mean()),
            switched_share=switched,
            on_demand_only_cost=od_only_cost,
            on_demand_only_hours=od_only_hours,
            worst_cost=float(cost.max()),
        )
        if plan.expected_spot_hours == 0.0:  # every trial starts on on-demand: that is on-demand alone
            continue
        if plan.meets_target and (best is None or plan.expected_cost < best.expected_cost):
            best = plan
    met = 1.0 if od_only_hours <= spec.deadline_hours + EPSILON_HOURS else 0.0
    if best is not None and (best.expected_cost <= od_only_cost or met < spec.probability):
        return best
    return FallbackPlan(  # on-demand alone: cheaper than any spot mix that meets the target, or the only hope
        meets_target=met >= spec.probability,
        reserve_fraction=None,
        expected_cost=od_only_cost,
        p90_cost=od_only_cost,
        p_meets_deadline=met,
        expected_spot_hours=0.0,
        expected_on_demand_hours=od_only_hours,
        switched_share=1.0,
        on_demand_only_cost=od_only_cost,
        on_demand_only_hours=od_only_hours,
        worst_cost=od_only_cost,
    )
