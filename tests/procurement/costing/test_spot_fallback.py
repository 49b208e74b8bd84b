"""The deadline-aware spot plan: spot with an on-demand fallback when the slack runs out."""

from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from procurement.costing.spot_fallback import FallbackInput, deadline_plan, simulate_policy, time_to_finish
from procurement.costing.values import CostInputError

BASE = FallbackInput(
    work_hours=20.0,
    deadline_hours=24.0,
    rate_per_hour=0.0,
    interval_hours=0.25,
    checkpoint_write_hours=0.01,
    restart_hours=0.2,
    spot_price_per_hour=1.0,
    on_demand_price_per_hour=3.0,
    trials=500,
)


def test_time_to_finish_adds_a_write_between_segments():
    # 20 h in 0.25 h segments: 80 segments, 79 writes of 0.01 h: 20.79 h
    assert time_to_finish(np.array([20.0]), 0.25, 0.01)[0] == pytest.approx(20.79)


def test_without_reclaims_the_whole_job_runs_on_spot():
    plan = deadline_plan(BASE)
    # 20.79 h on spot at 1.00/h; on-demand alone would be 20 h x 3.00 = 60.00
    assert plan.expected_cost == pytest.approx(20.79) and plan.p_meets_deadline == 1.0
    assert plan.expected_on_demand_hours == 0.0 and plan.on_demand_only_cost == pytest.approx(60.0)


def test_a_deadline_too_close_for_spot_alone_moves_to_on_demand_at_the_last_safe_moment():
    # 20.9 h: the whole run on spot needs t + r + R + T(W) <= D, where R = 0.2 h is the on-demand start after
    # a reclaim (counted from the first decision on: issue 26's safety gap, where it was 0 there). Even
    # reserve 0 gives 0 + 0 + 0.2 + 20.79 = 20.99 > 20.9, so every reserve moves to on-demand at the last
    # safe moment: segment k starts while k x 0.26 + max(r, 0.01) + 0.2 + (20 - k x 0.25) <= 20.9, i.e.
    # k x 0.01 <= 0.69 at reserve 0: k = 0..69, 70 segments = 18.2 h of spot (17.5 h of work), then
    # 0.2 + 2.5 = 2.7 h on demand, finishing at 18.2 + 2.7 = 20.9 h; 18.2 x 1.00 + 2.7 x 3.00 = 26.30, the
    # cheapest reserve (a larger one leaves fewer segments). Before the fix it stayed on spot for 20.79.
    plan = deadline_plan(replace(BASE, deadline_hours=20.9))
    assert plan.reserve_fraction == 0.0 and plan.expected_cost == pytest.approx(26.3)
    assert plan.expected_spot_hours == pytest.approx(18.2) and plan.expected_on_demand_hours == pytest.approx(
        2.7
    )
    # 21.0 h: 0 + 0 + 0.2 + 20.79 = 20.99 <= 21.0, so reserve 0 stays on spot and (no reclaims) pays 20.79
    assert deadline_plan(replace(BASE, deadline_hours=21.0)).expected_cost == pytest.approx(20.79)
    # 20.5 h: 20.79 h on spot alone misses, so the run moves to on-demand at the last safe moment (issue 26):
    # segment k starts while k x 0.26 + max(reserve, 0.01) + 0.2 restart + (20 - k x 0.25) <= 20.5, i.e.
    # k x 0.01 <= 0.29 at reserve 0: 30 segments (7.8 h of spot, 7.5 h of work), then 0.2 + 12.5 = 12.7 h on
    # demand, finishing at 20.5 h; 7.8 x 1.00 + 12.7 x 3.00 = 45.90 < 60.00 on demand alone. (Before, a
    # run switched only at a reclaim and this deadline went all on-demand.)
    tight = deadline_plan(replace(BASE, deadline_hours=20.5))
    assert tight.reserve_fraction == 0.0 and tight.p_meets_deadline == 1.0
    assert tight.expected_spot_hours == pytest.approx(
        7.8
    ) and tight.expected_on_demand_hours == pytest.approx(12.7)
    assert tight.expected_cost == pytest.approx(45.9) and tight.switched_share == 1.0
    # the safe reserve (a whole segment, 0.26 h) leaves k x 0.01 <= 0.04: 5 segments, 1.3 h on spot, then
    # 0.2 + 18.75 h on demand: 1.3 + 3 x 18.95 = 58.15, also within 20.5 h (1.3 + 18.95 = 20.25)
    safe = simulate_policy(replace(BASE, deadline_hours=20.5), 0.26)
    assert np.allclose(safe["spot_hours"], 1.3) and np.allclose(safe["finish"], 20.25)
    assert deadline_plan(replace(BASE, deadline_hours=19.0)).p_meets_deadline == 0.0  # even on-demand is late


def test_the_safe_reserve_always_meets_a_reachable_deadline():
    spec = replace(BASE, rate_per_hour=0.5)  # a reclaim every 2 h on average
    runs = simulate_policy(spec, spec.interval_hours + spec.checkpoint_write_hours)
    assert np.all(runs["finish"] <= spec.deadline_hours + 1e-9)
    assert runs["switched"].any()  # the fallback did happen in some trials


def test_it_picks_the_cheapest_reserve_that_meets_the_target():
    spec = replace(BASE, rate_per_hour=0.5)
    plan = deadline_plan(spec)
    assert plan.meets_target and plan.p_meets_deadline >= 0.95
    assert plan.on_demand_only_cost == pytest.approx(60.0)
    assert plan.expected_cost < plan.on_demand_only_cost  # cheaper than on-demand alone
    # any cheaper reserve misses the target
    segment = spec.interval_hours + spec.checkpoint_write_hours
    for fraction in (0.0, 0.25, 0.5, 1.0):
        runs = simulate_policy(spec, fraction * segment)
        met = np.mean(runs["finish"] <= spec.deadline_hours + 1e-9)
        cost = np.mean(runs["spot_hours"] * 1.0 + runs["od_hours"] * 3.0)
        if cost < plan.expected_cost - 1e-9:
            assert met < 0.95


def test_bad_input_names_the_field():
    with pytest.raises(CostInputError) as error:
        deadline_plan(replace(BASE, probability=1.5))
    assert error.value.field == "deadline_probability"
    with pytest.raises(CostInputError) as error:
        deadline_plan(replace(BASE, deadline_hours=0.0))
    assert error.value.field == "deadline_hours"


@settings(max_examples=25, deadline=None)
@given(st.floats(0.0, 1.0), st.floats(20.5, 40.0))
def test_the_plan_never_costs_more_than_on_demand_alone_when_on_demand_is_dearer(rate, deadline):
    plan = deadline_plan(replace(BASE, rate_per_hour=rate, deadline_hours=deadline, trials=200))
    # on-demand alone (20 h) always meets these deadlines, so the plan meets the target and never costs more
    assert plan.p_meets_deadline >= 0.95
    assert plan.expected_cost <= plan.on_demand_only_cost + 1e-9


def test_a_dear_spot_price_falls_back_to_on_demand_alone():
    plan = deadline_plan(replace(BASE, spot_price_per_hour=3.5))  # spot above on-demand saves nothing
    assert plan.reserve_fraction is None and plan.expected_cost == pytest.approx(60.0)


@settings(max_examples=60, deadline=None)
@given(st.floats(0.0, 2.0), st.floats(0.0, 0.999), st.floats(0.0, 0.05))
def test_the_last_safe_moment_meets_every_deadline_on_demand_alone_meets(rate, share, write):
    # Deadlines too tight for the reclaim-time rule at the start (D < r + T(W) = 20.25 + 80 C with the reserve
    # of a whole segment), so the run goes on spot only segment by segment: a reclaim loses at most tau + C
    # and a voluntary switch after segment k needs C + R + W_k, and every trial still finishes by D.
    deadline = 20.2 + share * (0.05 + 80 * write)
    spec = replace(BASE, rate_per_hour=rate, checkpoint_write_hours=write, deadline_hours=deadline)
    runs = simulate_policy(spec, spec.interval_hours + write)
    assert np.all(runs["finish"] <= spec.deadline_hours + 1e-9)
    assert np.all(runs["spot_hours"] + runs["od_hours"] >= 20.0 - 1e-9)  # the work is done somewhere


def test_the_safe_reserve_is_safe_when_the_first_spot_run_is_reclaimed_late():
    spec = replace(BASE, rate_per_hour=1.0, checkpoint_write_hours=0.0, deadline_hours=20.325)
    runs = simulate_policy(spec, spec.interval_hours)
    assert np.all(runs["finish"] <= spec.deadline_hours + 1e-9)
