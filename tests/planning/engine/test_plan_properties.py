"""Property tests of the plan: the rounded screening answer is the integer optimum (every combination
enumerated on small curves against an independent hour-by-hour reference), adding an option never raises
the optimum, the layers add up to the demand, and the cost never falls when a price rises."""

from dataclasses import replace
from decimal import Decimal

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from planning.engine.options import SupplyOptions
from planning.engine.plan import capacity_plan
from planning.engine.plan_model import CommitmentsInForce
from planning.engine.planner import plan_without_sensitivity
from tests.planning.engine.plan_fixtures import (
    commitment,
    inputs,
    on_demand,
    spot,
    synthetic_owned,
    tiled,
)
from tests.planning.engine.reference_plan import brute_force_minimum, reference_cost

D = Decimal
SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])

halves = st.integers(0, 6).map(lambda n: n / 2)  # 0 to 3 GPUs in half-GPU steps
prices = st.integers(20, 400).map(lambda cents: Decimal(cents) / 100)


@st.composite
def cases(draw, *, max_years: int = 2):
    horizon = draw(st.sampled_from([12, 18, 24][: 1 + 2 * (max_years > 1)]))
    years = -(-horizon // 12)
    firm = tiled(draw(st.lists(halves, min_size=1, max_size=6)))
    interruptible = tiled(draw(st.lists(st.integers(0, 4).map(lambda n: n / 2), min_size=1, max_size=6)))
    growth = np.array(draw(st.lists(st.sampled_from([0.75, 1.0, 1.25]), min_size=years, max_size=years)))
    on_demand_price = draw(prices)
    owned = None
    if draw(st.booleans()):
        gps = draw(st.sampled_from([1, 2, 4]))
        capex = draw(st.integers(0, 20_000))
        owned = synthetic_owned(
            gpus_per_server=gps,
            capex=capex,
            monthly=draw(st.integers(0, 1_500)) * gps / 4,
            residual=capex * draw(st.sampled_from([0.0, 0.2, 0.5])),  # a server resells for less than it cost
            variable=draw(st.sampled_from([0.0, 0.05, 0.15])),
            horizon=horizon,
        )
    c3 = (
        commitment(36, str(draw(prices) * D("0.7")), draw(st.sampled_from([1, 2])))
        if draw(st.booleans())
        else None
    )
    c1 = (
        commitment(12, str(draw(prices) * D("0.9")), draw(st.sampled_from([1, 2])))
        if draw(st.booleans())
        else None
    )
    spot_option = spot(str(draw(prices) * D("0.5") + D("0.2"))) if draw(st.booleans()) else None
    options = SupplyOptions(
        on_demand=on_demand(str(on_demand_price)),
        owned=owned,
        committed_1y=c1,
        committed_3y=c3,
        spot=spot_option,
    )
    rate = draw(st.sampled_from(["0", "0.08", "0.3"]))
    return inputs(options, firm=firm, interruptible=interruptible, horizon=horizon, growth=growth, rate=rate)


def _reference(case, plan) -> float:
    npv, _ = reference_cost(
        case.options,
        firm=case.firm_gpus,
        interruptible=case.interruptible_gpus,
        growth=case.growth_by_year,
        horizon=case.horizon_months,
        rate=float(case.discount_rate_annual),
        owned_servers=plan.owned_servers,
        units_3y=plan.committed_3y_units,
        units_1y=plan.committed_1y_units_by_year,
    )
    return npv


def _valid(case) -> bool:
    """The engine refuses owned servers whose running cost is above the cheapest burst price."""
    owned = case.options.owned
    if owned is None:
        return True
    burst = case.options.on_demand.price_per_gpu_hour
    if case.options.spot is not None:
        burst = min(burst, case.options.spot.effective_price_per_gpu_hour)
    return float(owned.variable_per_gpu_hour.max()) <= float(burst)


@SETTINGS
@given(cases())
def test_the_rounded_plan_is_the_cheapest_integer_mix(case):
    if not _valid(case):
        return
    plan = plan_without_sensitivity(case)
    best = brute_force_minimum(
        case.options,
        firm=case.firm_gpus,
        interruptible=case.interruptible_gpus,
        growth=case.growth_by_year,
        horizon=case.horizon_months,
        rate=float(case.discount_rate_annual),
    )
    assert float(plan.npv) <= best + 1e-6 * max(1.0, abs(best))
    # and the engine's vectorized cost of its levels is the reference's hour-by-hour cost of them
    assert float(plan.npv) == _approx(_reference(case, plan))


def _approx(value: float):
    return pytest.approx(value, rel=1e-9, abs=1e-6)


@SETTINGS
@given(cases(), st.sampled_from(["owned", "committed_1y", "committed_3y", "spot"]))
def test_adding_an_option_never_raises_the_optimum(case, name):
    if not _valid(case) or getattr(case.options, name) is None:
        return
    without = replace(case, options=replace(case.options, **{name: None}))
    assert float(plan_without_sensitivity(case).npv) <= float(plan_without_sensitivity(without).npv) + 1e-6


@SETTINGS
@given(cases())
def test_the_layers_hours_and_gpus_add_up_to_the_demand(case):
    if not _valid(case):
        return
    plan = plan_without_sensitivity(case)
    hours = sum(layer.hours_served for layer in plan.layers)
    assert hours == _approx(plan.demand_gpu_hours)
    assert sum(layer.share_of_demand for layer in plan.layers) == _approx(
        1.0 if plan.demand_gpu_hours else 0.0
    )
    demand = case.firm_gpus + case.interruptible_gpus
    for year, scale in enumerate(case.growth_by_year):
        # the prepaid layers are stacked, and each market layer is its own busiest hour: together at least
        # the peak, and at most the prepaid plus twice the peak above them (firm and spot peaks may differ)
        stacked = sum(layer.gpus_by_year[year] for layer in plan.layers)
        prepaid = sum(
            layer.gpus_by_year[year] for layer in plan.layers if layer.kind not in ("spot", "on_demand")
        )
        peak = int(np.ceil(demand.max() * scale - 1e-9))
        assert max(prepaid, peak) <= stacked <= prepaid + 2 * max(0, peak - prepaid)


@SETTINGS
@given(cases(max_years=1), st.sampled_from(["on_demand", "committed_1y", "committed_3y", "spot"]))
def test_the_cost_never_falls_when_a_price_rises(case, name):
    option = getattr(case.options, name)
    if not _valid(case) or option is None:
        return
    field = "effective_price_per_gpu_hour" if name == "spot" else "price_per_gpu_hour"
    dearer = replace(
        case, options=replace(case.options, **{name: replace(option, **{field: getattr(option, field) * 2})})
    )
    if not _valid(dearer):
        return
    assert float(plan_without_sensitivity(dearer).npv) >= float(plan_without_sensitivity(case).npv) - 1e-6


@settings(max_examples=10, deadline=None)
@given(cases())
def test_every_sensitivity_row_brackets_a_plan_that_exists(case):
    if not _valid(case):
        return
    plan = capacity_plan(case)
    drivers = {row.driver for row in plan.sensitivity}
    assert {"growth", "rent_price", "discount_rate"} <= drivers
    swings = [row.swing for row in plan.sensitivity]
    assert swings == sorted(swings, reverse=True)
    growth = next(row for row in plan.sensitivity if row.driver == "growth")
    assert growth.low_npv <= plan.npv + D("0.000001") <= growth.high_npv + D("0.000002")


@st.composite
def competing_cases(draw):
    """Every option present at prices near each other's break-even, so the optimum mixes them."""
    horizon = draw(st.sampled_from([12, 18, 24]))
    years = -(-horizon // 12)
    firm = tiled(draw(st.lists(halves, min_size=1, max_size=8)))
    interruptible = tiled(draw(st.lists(st.integers(0, 4).map(lambda n: n / 2), min_size=1, max_size=8)))
    growth = np.array(draw(st.lists(st.sampled_from([0.75, 1.0, 1.25]), min_size=years, max_size=years)))
    gps = draw(st.sampled_from([1, 2, 4]))
    per_gpu_month = draw(st.integers(400, 1300))
    owned = synthetic_owned(
        gpus_per_server=gps,
        capex=draw(st.integers(0, 6)) * per_gpu_month * gps,
        monthly=per_gpu_month * gps / 2,
        residual=0,
        variable=draw(st.sampled_from([0.0, 0.3, 0.5])),
        horizon=horizon,
    )

    def price(low: int, high: int) -> str:
        return str(D(draw(st.integers(low, high))) / 100)

    options = SupplyOptions(
        on_demand=on_demand("2"),
        owned=owned,
        committed_3y=commitment(36, price(60, 150), draw(st.sampled_from([1, 2, 3]))),
        committed_1y=commitment(12, price(100, 190), draw(st.sampled_from([1, 2]))),
        spot=spot(price(60, 190)) if draw(st.booleans()) else None,
    )
    return inputs(
        options, firm=firm, interruptible=interruptible, horizon=horizon, growth=growth, rate="0.08"
    )


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(competing_cases())
def test_the_rounded_plan_is_the_cheapest_integer_mix_when_options_compete(case):
    test_the_rounded_plan_is_the_cheapest_integer_mix.hypothesis.inner_test(case)


@settings(max_examples=30, deadline=None)
@given(cases(), st.lists(st.sampled_from([0.5, 0.9, 1.0, 1.3, 2.0]), min_size=2, max_size=2))
def test_a_trial_costs_what_the_chosen_levels_cost_at_its_growth(case, multipliers):
    # The trials are priced all at once over arrays; each must equal the hour-by-hour reference of the
    # plan's levels at that trial's growth.
    if not _valid(case):
        return
    years = case.growth_by_year.size
    trial = np.array(multipliers[:years])
    plan = plan_without_sensitivity(replace(case, growth_trials=np.vstack([trial, trial])))
    npv, cash = reference_cost(
        case.options,
        firm=case.firm_gpus,
        interruptible=case.interruptible_gpus,
        growth=trial,
        horizon=case.horizon_months,
        rate=float(case.discount_rate_annual),
        owned_servers=plan.owned_servers,
        units_3y=plan.committed_3y_units,
        units_1y=plan.committed_1y_units_by_year,
    )
    assert float(plan.p90_total_cost) == _approx(cash)
    assert float(plan.p90_npv) == _approx(npv)


def _assert_cheapest_mix_with_commitments_in_force(case) -> None:
    """No integer mix priced by the independent brute force is cheaper than the plan (commitments in force
    at the bottom of the stack), and the plan's cost is the hour-by-hour reference's."""
    if not _valid(case):
        return
    plan = plan_without_sensitivity(case)
    best = brute_force_minimum(
        case.options,
        firm=case.firm_gpus,
        interruptible=case.interruptible_gpus,
        growth=case.growth_by_year,
        horizon=case.horizon_months,
        rate=float(case.discount_rate_annual),
        in_force=case.in_force,
    )
    assert float(plan.npv) <= best + 1e-6 * max(1.0, abs(best))
    npv, cash = reference_cost(
        case.options,
        firm=case.firm_gpus,
        interruptible=case.interruptible_gpus,
        growth=case.growth_by_year,
        horizon=case.horizon_months,
        rate=float(case.discount_rate_annual),
        owned_servers=plan.owned_servers,
        units_3y=plan.committed_3y_units,
        units_1y=plan.committed_1y_units_by_year,
        in_force=case.in_force,
        renewal_units=plan.renewal_units,
    )
    assert float(plan.npv) == _approx(npv) and float(plan.total_cost) == _approx(cash)
    assert sum(layer.hours_served for layer in plan.layers) == _approx(plan.demand_gpu_hours)


@st.composite
def cases_with_commitments_in_force(draw):
    """The cases above with commitments bought before the plan: some GPUs in force in each plan year
    (0 once one has ended) and a payment every month."""
    case = draw(cases())
    years = case.growth_by_year.size
    gpus = np.array(draw(st.lists(st.sampled_from([0.0, 1.0, 2.0, 3.5]), min_size=years, max_size=years)))
    monthly = np.full(case.horizon_months + 1, float(draw(st.integers(0, 3000))))
    monthly[0] = 0.0
    return replace(case, in_force=CommitmentsInForce(gpus, monthly, "test"))


@SETTINGS
@given(cases_with_commitments_in_force())
def test_commitments_in_force_sit_below_the_cheapest_integer_mix(case):
    """Issue 27: the reservations in force are supply already bought. The plan with them is still the
    cheapest integer mix, by the hour-by-hour reference with the commitments at the bottom of the stack."""
    _assert_cheapest_mix_with_commitments_in_force(case)


@st.composite
def cases_with_a_commitment_ending_mid_year(draw):
    """The cases above with a commitment in force of 1-3.5 GPUs that ends in a month 2..H (inside a plan
    year or at a year's start), paid every month it runs; sometimes a second one ends later."""
    case = draw(cases())
    horizon = case.horizon_months
    held = np.zeros(horizon + 1)
    for _ in range(draw(st.integers(1, 2))):
        gpus = draw(st.sampled_from([1.0, 2.0, 3.5]))
        end = draw(st.integers(2, horizon))
        held[1:end] += gpus
    monthly = held * float(draw(st.integers(0, 1500)))
    years = case.growth_by_year.size
    by_year = np.array([held[12 * year + 1 : 12 * year + 13].min() for year in range(years)])
    return replace(case, in_force=CommitmentsInForce(by_year, monthly, "test", gpus_by_month=held))


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases_with_a_commitment_ending_mid_year())
def test_a_commitment_ending_mid_year_is_renewed_at_the_cheapest_integer_mix(case):
    """Issue 27: a commitment in force that ends inside a year is counted through the months it covers,
    and the plan may renew its GPUs from the month it ends. Every integer mix of servers, 3-year units,
    each year's 1-year units and each renewal's units (0 up to the GPUs that end) priced month by month
    by the independent reference: none is cheaper than the plan, and the plan's cost is the reference's."""
    _assert_cheapest_mix_with_commitments_in_force(case)
