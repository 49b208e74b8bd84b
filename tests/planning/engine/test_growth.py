"""Growth multipliers, scenarios and trials (planning/engine/demand.py) against hand values."""

from __future__ import annotations

import numpy as np
import pytest

from planning.engine.demand import growth_multipliers, growth_trials, scenarios
from planning.engine.errors import PlanInputError


def test_a_monthly_rate_compounds_from_the_first_plan_month():
    found = growth_multipliers(0.02, horizon_months=24)
    assert found.monthly[:3] == pytest.approx([1.0, 1.02, 1.0404])
    # year 1 = mean of 1.02^0..1.02^11 = (1.02^12 - 1) / (0.02 x 12) = 1.118088...
    assert found.yearly[0] == pytest.approx((1.02**12 - 1) / (0.02 * 12))
    assert found.yearly[1] == pytest.approx(found.yearly[0] * 1.02**12)


def test_yearly_multipliers_hold_for_their_year_and_a_partial_last_year_averages_its_months():
    found = growth_multipliers([1.0, 1.2, 1.44], horizon_months=30)
    assert found.monthly.tolist() == [1.0] * 12 + [1.2] * 12 + [1.44] * 6
    assert found.yearly.tolist() == pytest.approx([1.0, 1.2, 1.44])
    partial = growth_multipliers(0.1, horizon_months=13)
    assert partial.yearly[1] == pytest.approx(1.1**12)  # the last year is its one month


def test_scenarios_take_the_spread_off_and_on_the_monthly_rate():
    found = scenarios(0.02, horizon_months=12, spread=0.01)
    assert found["low"].monthly[11] == pytest.approx(1.01**11)
    assert found["base"].monthly[11] == pytest.approx(1.02**11)
    assert found["high"].monthly[11] == pytest.approx(1.03**11)
    listed = scenarios([1.0, 2.0], horizon_months=24, spread=0.01)
    assert listed["high"].monthly[13] == pytest.approx(2.0 * 1.01**13)


def test_trials_are_reproducible_and_centred_on_the_rate():
    first = growth_trials(0.02, horizon_months=36, trials=1000, seed=7)
    again = growth_trials(0.02, horizon_months=36, trials=1000, seed=7)
    other = growth_trials(0.02, horizon_months=36, trials=1000, seed=8)
    assert first.shape == (1000, 3)
    assert np.array_equal(first, again) and not np.array_equal(first, other)
    # sigma 0 gives the base multipliers in every trial
    exact = growth_trials(0.02, horizon_months=36, trials=5, sigma=0.0)
    assert exact == pytest.approx(np.tile(growth_multipliers(0.02, horizon_months=36).yearly, (5, 1)))
    # the median trial's year-3 multiplier is close to the base one (normal draws: the median rate is the rate)
    assert np.median(first[:, 2]) == pytest.approx(
        growth_multipliers(0.02, horizon_months=36).yearly[2], rel=0.02
    )


@pytest.mark.parametrize(
    ("call", "field"),
    [
        (lambda: growth_multipliers(0.51, horizon_months=12), "growth"),
        (lambda: growth_multipliers(-0.6, horizon_months=12), "growth"),
        (lambda: growth_multipliers(float("nan"), horizon_months=12), "growth"),
        (lambda: growth_multipliers("0.02", horizon_months=12), "growth"),
        (lambda: growth_multipliers([1.0], horizon_months=24), "growth"),  # one year for two
        (lambda: growth_multipliers([1.0, 0.0], horizon_months=24), "growth"),
        (lambda: growth_multipliers([200.0], horizon_months=12), "growth"),  # 200x in a year: 55%/month
        (lambda: growth_multipliers(0.02, horizon_months=121), "horizon_months"),
        (lambda: growth_multipliers(0.02, horizon_months=0), "horizon_months"),
        (lambda: growth_trials(0.02, horizon_months=12, trials=10_001), "trials"),
        (lambda: growth_trials(0.02, horizon_months=12, sigma=-0.1), "sigma"),
        (lambda: growth_trials(0.02, horizon_months=12, seed=-1), "seed"),
        (lambda: scenarios(0.02, horizon_months=12, spread=0.9), "spread"),
    ],
)
def test_bad_growth_inputs_name_the_field(call, field):
    with pytest.raises(PlanInputError) as error:
        call()
    assert error.value.field == field
