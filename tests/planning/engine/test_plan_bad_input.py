"""Bad plan input raises PlanInputError naming the field, before any work."""

from dataclasses import replace
from decimal import Decimal

import numpy as np
import pytest

from planning.engine.errors import PlanInputError
from planning.engine.options import SupplyOptions, owned_option
from planning.engine.plan import StatusQuoCategory, StatusQuoMix, capacity_plan
from tests.planning.engine.plan_fixtures import inputs, on_demand, synthetic_owned, tiled, worked_study

D = Decimal
GOOD = inputs(SupplyOptions(on_demand=on_demand("2")), firm=tiled([1, 2]), horizon=24, growth=[1, 1.2])


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        (
            {"firm_gpus": tiled([1], 100), "interruptible_gpus": tiled([0], 100)},
            "firm_gpus",
        ),  # under 168 samples
        ({"firm_gpus": tiled([1, np.nan])}, "firm_gpus"),
        ({"firm_gpus": tiled([1, -1])}, "firm_gpus"),
        ({"firm_gpus": [1.0] * 168}, "firm_gpus"),  # a list, not an array
        ({"firm_gpus": np.ones((168, 2))}, "firm_gpus"),
        ({"interruptible_gpus": tiled([0], 200)}, "interruptible_gpus"),
        ({"firm_gpus": tiled([2_000_000])}, "firm_gpus"),
        ({"growth_by_year": np.array([1.0])}, "growth"),  # 24 months need 2 years
        ({"growth_by_year": np.array([1.0, 0.0])}, "growth"),
        ({"growth_by_year": np.array([1.0, np.inf])}, "growth"),
        ({"firm_gpus": tiled([600_000]), "growth_by_year": np.array([1.0, 2.0])}, "growth"),  # 1.2M GPUs
        ({"growth_trials": np.ones((10, 3))}, "trials"),
        ({"growth_trials": np.ones(2)}, "trials"),
        ({"growth_trials": np.ones((10_001, 2))}, "trials"),
        ({"horizon_months": 121}, "horizon_months"),
        ({"horizon_months": 0}, "horizon_months"),
        ({"currency": "XYZ"}, "currency"),
        ({"currency": "usd"}, "currency"),
        ({"discount_rate_annual": D("-0.01")}, "discount_rate_annual"),
        ({"discount_rate_annual": 0.08}, "discount_rate_annual"),
        ({"status_quo": StatusQuoMix((StatusQuoCategory("on_demand", 0.0, D(2)),))}, "status_quo"),
    ],
)
def test_it_names_the_field_of_a_bad_input(changes, field):
    with pytest.raises(PlanInputError) as raised:
        capacity_plan(replace(GOOD, **changes))
    assert raised.value.field == field


def test_an_owned_option_built_for_another_horizon_is_refused():
    options = SupplyOptions(on_demand=on_demand("2"), owned=owned_option(worked_study(), horizon_months=36))
    with pytest.raises(PlanInputError, match="built for 36 months, the plan has 24") as raised:
        capacity_plan(replace(GOOD, options=options))
    assert raised.value.field == "study"


def test_owned_servers_dearer_to_run_than_the_market_are_refused_not_misdispatched():
    owned = synthetic_owned(gpus_per_server=8, capex=0, monthly=0, residual=0, variable=3.0, horizon=24)
    with pytest.raises(PlanInputError, match="running cost per used GPU-hour") as raised:
        capacity_plan(replace(GOOD, options=SupplyOptions(on_demand=on_demand("2"), owned=owned)))
    assert raised.value.field == "study"


def test_no_demand_at_all_is_a_plan_of_nothing():
    plan = capacity_plan(replace(GOOD, firm_gpus=np.zeros(168), interruptible_gpus=np.zeros(168)))
    assert (plan.layers, plan.total_cost, plan.break_even_month) == ((), D("0.0"), None)


def test_a_plan_near_the_gpu_bound_keeps_its_growth_sensitivity():
    # 900,000 GPUs is within the bound; the +20% growth row re-plans 1,080,000 GPUs without refusing it
    near = replace(
        GOOD,
        firm_gpus=tiled([900_000]),
        interruptible_gpus=np.zeros(168),
        horizon_months=12,
        growth_by_year=np.array([1.0]),
    )
    plan = capacity_plan(near)
    growth = next(row for row in plan.sensitivity if row.driver == "growth")
    # all on demand at 2.00: 900,000 x 8760 x 2 x 1.2
    assert float(growth.high_total_cost) == pytest.approx(900_000 * 8760 * 2 * 1.2)
