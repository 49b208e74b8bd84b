"""Reference: the deadline-aware spot plan as it was before the reserves were simulated together and
cached (procurement/costing/spot_fallback.py at commit c074555), one reserve at a time. Kept out of the
app package; tests/procurement/costing/test_spot_fallback_reference.py checks the new code against it."""

from __future__ import annotations

import numpy as np

from procurement.costing.spot_fallback import (
    EPSILON_HOURS,
    MAX_DECISIONS,
    RESERVE_FRACTIONS,
    FallbackInput,
    FallbackPlan,
    _validate,
    spot_run_limits,
    time_to_finish,
)
from procurement.costing.values import CostInputError


def reference_simulate_policy(spec: FallbackInput, reserve_hours: float) -> dict[str, np.ndarray]:
    """Per trial: finish time, spot hours and on-demand hours under the rule with reserve ``reserve_hours``."""
    interval, write, restart = spec.interval_hours, spec.checkpoint_write_hours, spec.restart_hours
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
        stay, limit, moved_work = spot_run_limits(
            t[active] + spot_restart,
            np.full(active.size, reserve_hours),
            work[active],
            needed,
            restart,
            spec,
        )
        leave = active[~stay]
        od_hours[leave] = od_restart + work[leave]  # on-demand finishes without checkpoint writes
        finish[leave] = t[leave] + od_hours[leave]
        switched[leave] = True
        run = active[stay]
        needed, limit, moved_work = needed[stay], limit[stay], moved_work[stay]
        start = t[run] + spot_restart
        spot_hours[run] += spot_restart
        until = (
            rng.exponential(1.0 / spec.rate_per_hour, run.size)
            if spec.rate_per_hour > 0
            else (np.full(run.size, np.inf))
        )
        done = (limit >= needed) & (until >= needed)
        spot_hours[run[done]] += needed[done]
        finish[run[done]] = start[done] + needed[done]
        volunteer = (limit < needed) & (until >= limit)
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
    return {"finish": finish, "spot_hours": spot_hours, "od_hours": od_hours, "switched": switched}


def reference_deadline_plan(spec: FallbackInput) -> FallbackPlan:
    """The cheapest reserve that meets the deadline with at least ``spec.probability`` (see module doc)."""
    _validate(spec)
    od_only_hours = float(spec.work_hours)
    od_only_cost = od_only_hours * spec.on_demand_price_per_hour * spec.instances
    segment = spec.interval_hours + spec.checkpoint_write_hours
    best: FallbackPlan | None = None
    for fraction in RESERVE_FRACTIONS:
        runs = reference_simulate_policy(spec, fraction * segment)
        cost = (
            runs["spot_hours"] * spec.spot_price_per_hour + runs["od_hours"] * spec.on_demand_price_per_hour
        )
        cost = cost * spec.instances
        met = float(np.mean(runs["finish"] <= spec.deadline_hours + EPSILON_HOURS))
        plan = FallbackPlan(
            meets_target=met >= spec.probability,
            reserve_fraction=fraction,
            expected_cost=float(cost.mean()),
            p90_cost=float(np.percentile(cost, 90)),
            p_meets_deadline=met,
            expected_spot_hours=float(runs["spot_hours"].mean()),
            expected_on_demand_hours=float(runs["od_hours"].mean()),
            switched_share=float(runs["switched"].mean()),
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
