"""Spot Monte Carlo: exact when nothing interrupts, reproducible by seed, close to the closed form, and
priced on block-bootstrapped paths of a price history when at least a day of it exists."""

from decimal import Decimal

import numpy as np
import pytest

from procurement.costing.spot_simulation import SpotSimulationInput, simulate_spot_job
from procurement.costing.values import CostInputError

D = Decimal


def _spec(**overrides):
    values = {
        "work_hours": D("100"),
        "rate_per_hour": D("0.05"),
        "interval_hours": D("0.25"),
        "checkpoint_write_hours": D("0.01"),
        "restart_hours": D("0.1"),
        "spot_price_per_hour": D("2"),
        "trials": 4000,
        "seed": 7,
    }
    return SpotSimulationInput(**(values | overrides))


def test_it_is_exact_when_nothing_interrupts():
    # 10 h of work in 0.25 h segments = 40 segments, 39 checkpoint writes of 0.01 h -> 10.39 h;
    # 2 instances x 2/h x 10.39 h = 41.56
    result = simulate_spot_job(_spec(work_hours=D(10), rate_per_hour=D(0), instances=2, trials=10))
    assert float(result.p50_hours) == pytest.approx(10.39, abs=1e-9)
    assert float(result.p90_hours) == pytest.approx(10.39, abs=1e-9)
    assert float(result.p90_cost) == pytest.approx(41.56, abs=1e-9)
    assert result.mean_interruptions == 0


def test_it_reproduces_a_run_from_its_seed():
    assert simulate_spot_job(_spec()) == simulate_spot_job(_spec())
    assert simulate_spot_job(_spec()) != simulate_spot_job(_spec(seed=8))


def test_it_agrees_with_the_closed_form_overhead():
    # closed form: overhead = C/tau + (tau/2 + R) x lambda = 0.01/0.25 + (0.125 + 0.1) x 0.05 = 0.05125,
    # so about 105.1 h for 100 h of work; the simulation also loses part of a checkpoint write per hit,
    # so allow 1%. Interruptions: about 0.05 x 105 = 5.3 per run.
    result = simulate_spot_job(_spec())
    assert float(result.p50_hours) == pytest.approx(105.125, rel=0.01)
    assert float(result.mean_interruptions) == pytest.approx(5.26, rel=0.05)
    assert result.p90_hours > result.p50_hours


def test_it_prices_hours_on_resampled_price_history():
    # a history alternating 1 and 3 per hour averages 2 over any long window: the cost is about hours x 2
    history = [D(1), D(3)] * 50
    result = simulate_spot_job(_spec(price_history_per_hour=history))
    assert float(result.p50_cost) == pytest.approx(2 * float(result.p50_hours), rel=0.02)


def test_it_gives_up_when_the_job_can_never_finish():
    with pytest.raises(CostInputError) as error:
        simulate_spot_job(_spec(rate_per_hour=D(100), interval_hours=D(10), trials=20))
    assert error.value.field == "interruption_rate_per_hour"


def test_it_names_a_negative_history_price():
    with pytest.raises(CostInputError) as error:
        simulate_spot_job(_spec(price_history_per_hour=[D(1), D(-1)]))
    assert error.value.field == "price_history_per_hour[1]"


def _quantiles(result):
    return [float(result.p50_cost), float(result.p90_cost)]


def test_it_gives_the_current_price_result_for_a_constant_history():
    # every path of a constant history is that price each hour, so cost = hours x price, as without history
    # (equal up to float summation order)
    current = simulate_spot_job(_spec(spot_price_per_hour=D("1.234567"), instances=2))
    constant = simulate_spot_job(
        _spec(spot_price_per_hour=D("1.234567"), instances=2, price_history_per_hour=np.full(720, 1.234567))
    )
    assert constant.history_hours == 720 and current.history_hours == 0
    assert _quantiles(constant) == pytest.approx(_quantiles(current), rel=1e-12)
    assert (constant.p50_hours, constant.p90_hours) == (current.p50_hours, current.p90_hours)


def test_it_doubles_the_cost_quantiles_on_a_history_at_double_the_price():
    # the same seed draws the same run lengths first: 4/h every hour is exactly twice 2/h
    current = simulate_spot_job(_spec())
    doubled = simulate_spot_job(_spec(price_history_per_hour=[D(4)] * 48))
    assert _quantiles(doubled) == pytest.approx([2 * q for q in _quantiles(current)], rel=1e-12)
    assert doubled.p90_hours == current.p90_hours


def test_it_reproduces_resampled_paths_from_the_seed():
    history = np.linspace(1.0, 3.0, 24 * 30)
    assert simulate_spot_job(_spec(price_history_per_hour=history)) == simulate_spot_job(
        _spec(price_history_per_hour=history)
    )
    assert simulate_spot_job(_spec(price_history_per_hour=history)) != simulate_spot_job(
        _spec(price_history_per_hour=history, seed=8)
    )


def test_it_falls_back_to_the_current_price_under_a_day_of_history():
    # 23 hourly points at 10/h are not enough: the 2/h current price is used and nothing says "resampled"
    short = simulate_spot_job(_spec(price_history_per_hour=[D(10)] * 23))
    assert short == simulate_spot_job(_spec())
    assert short.history_hours == 0


def test_it_pays_each_hour_of_the_path_including_a_part_hour():
    # no interruptions: 1 h of work in one segment is 1 h of wall time; 0.5 h is half of a path's first hour.
    # A history of 24 hours at 1/h then 24 hours at 3/h, in 24-hour blocks that keep the hour of day: a
    # 48-hour run (no checkpoints: interval 48 h) pays either 24 x 1 + 24 x 3 = 96, 24 x 1 + 24 x 1 = 48,
    # or 24 x 3 + 24 x 3 = 144 when it starts at midnight; any start gives a cost between 48 and 144.
    history = [D(1)] * 24 + [D(3)] * 24
    result = simulate_spot_job(
        _spec(work_hours=D(48), rate_per_hour=D(0), interval_hours=D(48), price_history_per_hour=history)
    )
    assert result.p50_hours == result.p90_hours == 48
    assert 48 <= float(result.p50_cost) <= float(result.p90_cost) <= 144
    half = simulate_spot_job(
        _spec(work_hours=D("0.5"), rate_per_hour=D(0), interval_hours=D(1), price_history_per_hour=history)
    )
    assert {float(half.p50_cost), float(half.p90_cost)} <= {0.5, 1.5}


def test_it_names_a_bad_point_of_an_array_history():
    with pytest.raises(CostInputError) as error:
        simulate_spot_job(_spec(price_history_per_hour=np.array([1.0, 2.0, np.nan])))
    assert error.value.field == "price_history_per_hour[2]"
