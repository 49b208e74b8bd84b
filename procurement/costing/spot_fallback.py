"""A deadline-aware spot plan: run on spot, fall back to on-demand when the slack runs out.

The job (W hours of work, checkpoints every tau hours taking C, restarts taking R) starts on spot. At
every decision point (the start and each reclaim) it stays on spot only if, even when the next spot
run loses a reserve r of work to a reclaim, an on-demand restart would still finish by the deadline D:

    stay on spot  iff  t + R_spot + r + R + T(W) <= D      (else restart on on-demand and finish there)

with t the wall-clock time, W the work left behind the last checkpoint, T(W) = W + C x (segments - 1)
the time to finish it on spot (on-demand, never reclaimed, needs only W), R_spot the spot restart (0 at the start) and R the on-demand one (0 at the start:
both are the first launch). With r = tau + C (a whole segment and its write, the most a reclaim can lose)
the rule is safe: every trial meets the deadline whenever on-demand alone would. A smaller reserve keeps
more hours on spot at some risk; the plan takes the cheapest reserve of {0, 1/4, 1/2, 1} x (tau + C)
whose simulated probability of meeting the deadline is at least the one asked for (default 95%), or
on-demand alone when that is cheaper still (a reclaim-heavy spot run can cost more than it saves).

Reclaims are the same Poisson process as ``spot_simulation`` (memoryless, so each spot run draws a fresh
exponential time to its reclaim); every hour is billed at the price of the instance it runs on.
"""

from __future__ import annotations

from dataclasses import dataclass

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


def time_to_finish(work: np.ndarray, interval: float, write: float) -> np.ndarray:
    """T(W) = W + C x (ceil(W / tau) - 1): the work plus a checkpoint between segments."""
    segments = np.ceil(work / interval - 1e-12)
    return work + write * np.maximum(segments - 1.0, 0.0)


def _validate(spec: FallbackInput) -> None:
    for name in ("work_hours", "deadline_hours", "interval_hours"):
        if not getattr(spec, name) > 0:
            raise CostInputError(name, f"must be > 0, got {getattr(spec, name)!r}")
    for name in ("rate_per_hour", "checkpoint_write_hours", "restart_hours", "spot_price_per_hour",
                 "on_demand_price_per_hour"):  # fmt: skip
        if not getattr(spec, name) >= 0:
            raise CostInputError(name, f"must not be negative, got {getattr(spec, name)!r}")
    if not 0 < spec.probability <= 1:
        raise CostInputError("deadline_probability", f"must be in (0, 1], got {spec.probability!r}")
    if spec.trials < 1 or spec.instances < 1:
        raise CostInputError("trials", "trials and instances must be at least 1")


def simulate_policy(spec: FallbackInput, reserve_hours: float) -> dict[str, np.ndarray]:
    """Per trial: finish time, spot hours and on-demand hours under the rule with reserve ``reserve_hours``."""
    interval, write, restart, deadline = (
        spec.interval_hours, spec.checkpoint_write_hours, spec.restart_hours, spec.deadline_hours
    )  # fmt: skip
    rng = np.random.default_rng(spec.seed)  # common random numbers: every reserve sees the same draws
    trials = spec.trials
    t = np.zeros(trials)
    work = np.full(trials, float(spec.work_hours))
    spot_hours, od_hours, finish = np.zeros(trials), np.zeros(trials), np.full(trials, np.inf)
    switched = np.zeros(trials, dtype=bool)
    active = np.arange(trials)
    spot_restart, od_restart = 0.0, 0.0  # the start: both are the first launch
    for _ in range(MAX_DECISIONS):
        if active.size == 0:
            break
        needed = time_to_finish(work[active], interval, write)
        stay = t[active] + spot_restart + reserve_hours + od_restart + needed <= deadline + EPSILON_HOURS
        leave = active[~stay]
        od_hours[leave] = od_restart + work[leave]  # on-demand finishes without checkpoint writes
        finish[leave] = t[leave] + od_hours[leave]
        switched[leave] = True
        run = active[stay]
        needed = needed[stay]
        start = t[run] + spot_restart
        spot_hours[run] += spot_restart
        until = rng.exponential(1.0 / spec.rate_per_hour, run.size) if spec.rate_per_hour > 0 else (
            np.full(run.size, np.inf)
        )  # fmt: skip
        done = until >= needed
        spot_hours[run[done]] += needed[done]
        finish[run[done]] = start[done] + needed[done]
        hit, elapsed = run[~done], until[~done]
        work[hit] -= np.floor(elapsed / (interval + write)) * interval
        spot_hours[hit] += elapsed
        t[hit] = start[~done] + elapsed
        active = hit
        spot_restart, od_restart = restart, restart
    else:
        raise CostInputError("interruption_rate_per_hour", "too many reclaims: the plan does not converge")
    return {"finish": finish, "spot_hours": spot_hours, "od_hours": od_hours, "switched": switched}


def deadline_plan(spec: FallbackInput) -> FallbackPlan:
    """The cheapest reserve that meets the deadline with at least ``spec.probability`` (see module doc)."""
    _validate(spec)
    od_only_hours = float(spec.work_hours)
    od_only_cost = od_only_hours * spec.on_demand_price_per_hour * spec.instances
    segment = spec.interval_hours + spec.checkpoint_write_hours
    best: FallbackPlan | None = None
    for fraction in RESERVE_FRACTIONS:
        runs = simulate_policy(spec, fraction * segment)
        cost = (
            runs["spot_hours"] * spec.spot_price_per_hour + runs["od_hours"] * spec.on_demand_price_per_hour
        )
        cost = cost * spec.instances
        met = float(np.mean(runs["finish"] <= spec.deadline_hours + EPSILON_HOURS))
        plan = FallbackPlan(
            meets_target=met >= spec.probability, reserve_fraction=fraction, expected_cost=float(cost.mean()),
            p90_cost=float(np.percentile(cost, 90)), p_meets_deadline=met,
            expected_spot_hours=float(runs["spot_hours"].mean()),
            expected_on_demand_hours=float(runs["od_hours"].mean()),
            switched_share=float(runs["switched"].mean()), on_demand_only_cost=od_only_cost,
            on_demand_only_hours=od_only_hours,
        )  # fmt: skip
        if plan.expected_spot_hours == 0.0:  # every trial starts on on-demand: that is on-demand alone
            continue
        if plan.meets_target and (best is None or plan.expected_cost < best.expected_cost):
            best = plan
    met = 1.0 if od_only_hours <= spec.deadline_hours + EPSILON_HOURS else 0.0
    if best is not None and (best.expected_cost <= od_only_cost or met < spec.probability):
        return best
    return FallbackPlan(  # on-demand alone: cheaper than any spot mix that meets the target, or the only hope
        meets_target=met >= spec.probability, reserve_fraction=None, expected_cost=od_only_cost,
        p90_cost=od_only_cost, p_meets_deadline=met, expected_spot_hours=0.0,
        expected_on_demand_hours=od_only_hours, switched_share=1.0, on_demand_only_cost=od_only_cost,
        on_demand_only_hours=od_only_hours,
    )  # fmt: skip
