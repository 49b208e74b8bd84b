"""Spot Monte Carlo: exact when nothing interrupts, reproducible by seed, close to the closed form."""

from decimal import Decimal

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
