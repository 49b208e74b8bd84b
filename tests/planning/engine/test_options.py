"""Supply options are the existing engines' numbers, split into fixed and variable parts."""

from dataclasses import replace
from decimal import Decimal

import numpy as np
import pytest

from planning.engine.errors import PlanInputError
from planning.engine.options import (
    commitment_option,
    market_price_factors,
    on_demand_option,
    options_from_study,
    owned_option,
    spot_option,
)
from procurement.costing.commitments import effective_hourly
from procurement.costing.spot import band_interruption_rate_per_hour, spot_economics
from procurement.costing.tco import buy_cash_flows, rent_price_factor
from tests.planning.engine.plan_fixtures import worked_study

D = Decimal


def test_market_price_factors_are_the_tco_rent_rule_month_by_month():
    study = worked_study(rent__price_decline_per_year="0.1", horizon_months=60)
    factors = market_price_factors(D("0.1"), 61)
    assert factors.tolist() == pytest.approx([float(rent_price_factor(study, month)) for month in range(61)])
    assert factors[12] == 1.0 and factors[13] == pytest.approx(0.9)  # month 13 starts year 2


@pytest.mark.parametrize(
    "changes",
    [
        {},
        {"buy__energy_follows_utilization": True},
        {
            "buy__energy_follows_utilization": True,
            "buy__idle_load": "0.2",
            "buy__annual_failure_rate": "0.3",
            "buy__repair_days": "20",
            "buy__servers": 3,
            "buy__ops_fte": "0.2",
            "buy__spare_servers": 1,
        },
        {"buy__financing": {"kind": "loan", "rate_annual": "0.07", "term_months": 48}},
        {"buy__financing": {"kind": "lease", "rate_annual": "0.09"}},
    ],
)
@pytest.mark.parametrize("utilization", ["0.3", "0.8"])
def test_owned_fixed_plus_variable_reproduces_the_tco_buy_flows_at_any_utilization(changes, utilization):
    # Every buy flow is affine in utilization, so fixed + variable x GPU-hours used gives the engine's
    # flows exactly at any u (per working server: the fleet's flows / its servers).
    study = worked_study(**changes)
    option = owned_option(study, horizon_months=36)
    flows = buy_cash_flows(replace(option.study, utilization=D(utilization)))
    gpu_hours_per_month = option.gpus_per_server * 730 * float(utilization)
    rebuilt = option.fixed_flows_per_server + option.variable_per_gpu_hour * gpu_hours_per_month
    rebuilt[0] = option.fixed_flows_per_server[0]
    assert (rebuilt * study.buy.servers).tolist() == pytest.approx([float(flow) for flow in flows], rel=1e-12)


def test_energy_that_follows_use_is_the_variable_part_and_otherwise_energy_is_fixed():
    # Fixed energy (default): nothing follows use, variable = 0.
    assert not owned_option(worked_study(), horizon_months=36).variable_per_gpu_hour.any()
    # Following use: (average 0.7 - idle 0.3) x server 10.2 kW (8 x 0.7 + 4.6) x PUE 1.58 x 0.10 a kWh / 8
    # GPUs = 0.4 x 10.2 x 1.58 x 0.1 / 8 = 0.0805800 per used GPU-hour (idle 0.3: tco.DEFAULT_IDLE_LOAD).
    option = owned_option(worked_study(buy__energy_follows_utilization=True), horizon_months=36)
    assert option.variable_per_gpu_hour[1:] == pytest.approx(0.08058, rel=1e-12)
    assert option.variable_per_gpu_hour[0] == 0.0


def test_the_owned_option_runs_over_the_plans_horizon_with_a_lease_of_that_length():
    study = worked_study(buy__financing={"kind": "lease", "rate_annual": "0.09"})
    option = owned_option(study, horizon_months=24)
    assert option.horizon_months == 24
    assert option.study.buy.financing.term_months == 24
    assert option.fixed_flows_per_server.size == 25


def test_commitments_take_the_effective_price_of_the_commitments_engine():
    # 1-year: 1.00 an hour + 8,760 upfront / 8,760 h = 2.00; 3-year: 0.50 + 26,280 / 26,280 h = 1.50
    one = commitment_option(1, source="quote", recurring_per_gpu_hour=D("1"), upfront_per_gpu=D("8760"))
    three = commitment_option(3, source="quote", recurring_per_gpu_hour=D("0.5"), upfront_per_gpu=D("26280"))
    assert (one.price_per_gpu_hour, one.term_months, one.kind) == (D("2.000000"), 12, "committed_1y")
    assert (three.price_per_gpu_hour, three.term_months, three.kind) == (D("1.500000"), 36, "committed_3y")
    assert one.price_per_gpu_hour == effective_hourly(
        recurring_per_hour=D("1"), upfront=D("8760"), term_years=1
    )
    stored = commitment_option(
        3, source="pricing: aws p5 savings plan", effective_per_gpu_hour=D("2.1234567")
    )
    assert stored.price_per_gpu_hour == D("2.123457")  # hourly prices keep 6 decimals


def test_spot_is_priced_with_the_spot_models_overhead():
    # Band 0 (<5% a month): lambda = -ln(0.975) / 730; C = 1 minute, R = 0.1 h.
    option = spot_option(
        D("1.2"), source="test", interruption_band=0, checkpoint_write_hours=D(1) / 60, restart_hours=D("0.1")
    )
    economics = spot_economics(
        spot_price_per_hour=D("1.2"),
        rate_per_hour=band_interruption_rate_per_hour(0),
        checkpoint_write_hours=D(1) / 60,
        restart_hours=D("0.1"),
    )
    assert option.effective_price_per_gpu_hour == economics.effective_price_per_hour
    assert option.checkpoint_interval_hours == D("0.25")  # Young/Daly's optimum is over the guides' 15 min
    # Default: the ">20%" band (25% a month), C = 0.0563 h, R = 0.173 h; overhead = C/tau + (tau/2 + R) lambda
    default = spot_option(D("1"), source="test")
    rate = float(band_interruption_rate_per_hour(4))
    assert float(default.overhead) == pytest.approx(0.0563 / 0.25 + (0.125 + 0.173) * rate)
    assert default.effective_price_per_gpu_hour > D("1")


def test_a_study_gives_owned_on_demand_and_its_reserved_alternative():
    study = worked_study(
        rent__reserved_alternative={"pricing_model": "savings_plan_3y", "price_per_gpu_hour": "1.9"}
    )
    options = options_from_study(study, horizon_months=36)
    assert options.on_demand.price_per_gpu_hour == D("2.99")
    assert options.committed_3y.price_per_gpu_hour == D("1.9")
    assert options.committed_3y.pricing_model == "savings_plan_3y"
    assert options.committed_1y is None and options.owned.gpus_per_server == 8
    assert np.isclose(options.owned.fixed_flows_per_server[0], 305000.0)  # 300,000 server + 5,000 install


@pytest.mark.parametrize(
    ("build", "field"),
    [
        (lambda: commitment_option(2, source="x", effective_per_gpu_hour=D(1)), "term_years"),
        (
            lambda: commitment_option(1, source="x", effective_per_gpu_hour=D(1), unit_gpus=0),
            "committed_1y.unit_gpus",
        ),
        (
            lambda: commitment_option(3, source="x", effective_per_gpu_hour=D(-1)),
            "committed_3y.price_per_gpu_hour",
        ),
        (lambda: commitment_option(1, source="x", recurring_per_gpu_hour=D(1)), "committed_1y"),
        (lambda: on_demand_option(D(0), source="x"), "on_demand.price_per_gpu_hour"),
        (lambda: spot_option(D(1), source="x", interruption_band=7), "spot.interruption_band"),
        (lambda: spot_option(D(1), source="x", checkpoint_write_hours=D(0)), "spot.checkpoint_write_hours"),
    ],
)
def test_bad_option_inputs_name_the_field(build, field):
    with pytest.raises(PlanInputError) as raised:
        build()
    assert raised.value.field == field


def test_a_studys_rent_is_the_option_it_is_and_then_needs_an_on_demand_price():
    reserved = worked_study(rent__pricing_model="reserved_3y", rent__price_per_gpu_hour="1.95")
    with pytest.raises(PlanInputError, match="rent is a reserved_3y price") as raised:
        options_from_study(reserved, horizon_months=36)
    assert raised.value.field == "study"
    options = options_from_study(
        reserved, horizon_months=36, on_demand=on_demand_option(D("2.99"), source="x")
    )
    assert (options.committed_3y.price_per_gpu_hour, options.on_demand.price_per_gpu_hour) == (
        D("1.95"),
        D("2.99"),
    )
    spot_study = worked_study(rent__pricing_model="spot", rent__price_per_gpu_hour="1.10")
    options = options_from_study(
        spot_study, horizon_months=36, on_demand=on_demand_option(D("2.99"), source="x")
    )
    assert options.spot.listed_price_per_gpu_hour == D("1.10")
    assert options.spot.effective_price_per_gpu_hour > D("1.10")  # the spot model's overhead


def test_an_upfront_fee_is_paid_at_signing_and_weighs_more_in_present_value():
    """Issue 27: a 1-year commitment of 1.00 an hour + 8,760 upfront (effective 2.00, commitments.
    effective_hourly) pays the fee in month 0 and 1.00 x 730 each month after. With flat demand of 4 GPUs
    and on-demand at 3.00 the plan commits 4 GPUs: month 0 = 4 x 8,760 = 35,040, months 1-12 = 4 x 730 =
    2,920; the cash total is the effective price's (4 x 2.00 x 8,760 = 70,080), the NPV at 8% higher than
    the even spread's because the fee is not discounted."""
    from planning.engine.options import SupplyOptions
    from planning.engine.plan import capacity_plan
    from tests.planning.engine.plan_fixtures import inputs, on_demand, tiled

    fee = commitment_option(1, source="quote", recurring_per_gpu_hour=D("1"), upfront_per_gpu=D("8760"))
    spread = replace(fee, upfront_per_gpu=None)
    plans = [
        capacity_plan(
            inputs(
                SupplyOptions(on_demand=on_demand("3"), committed_1y=option), firm=tiled([4]), rate="0.08"
            ),
            with_sensitivity=False,
        )
        for option in (fee, spread)
    ]
    paid, even = plans
    assert paid.committed_1y_units_by_year == (4,)
    assert [float(amount) for amount in paid.monthly_cost[:3]] == pytest.approx([35_040, 2_920, 2_920])
    assert float(paid.total_cost) == pytest.approx(70_080) == float(even.total_cost)
    assert paid.npv > even.npv
