"""Issue 27 item 6: commitment payment options, owned tranches with a lead time, the plan after tax.

Every figure is checked against a hand computation written here independently of the engine: closed-form
annuities for present values (not the engine's month-by-month sum), cash placed month by month by hand.

Payment options as the providers sell them:
- AWS Reserved Instances: "All Upfront: full payment is made at the start of the term ... Partial Upfront:
  a portion of the cost is paid upfront and the remaining hours in the term are billed at a discounted
  hourly rate ... No Upfront: ... billed a discounted hourly rate for every hour within the term"
  (docs.aws.amazon.com/AWSEC2/latest/UserGuide/reserved-instances-payment-options... ; the same three
  options for Savings Plans: docs.aws.amazon.com/savingsplans/latest/userguide/what-is-savings-plans.html).
- Azure reservations: "you can pay for a reservation up front or monthly ... the total cost of up-front
  and monthly reservations is the same" (learn.microsoft.com/azure/cost-management-billing/reservations/
  prepare-buy-reservation): monthly is the no-upfront case at the same effective price.
"""

from __future__ import annotations

from decimal import Decimal

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from planning.engine.errors import PlanInputError
from planning.engine.options import SupplyOptions, commitment_option, on_demand_option, owned_option
from planning.engine.payment_options import (
    cheapest_payment_option,
    compare_payment_options,
    implied_rate,
)
from planning.engine.plan import capacity_plan
from planning.engine.plan_finance import plan_finance
from planning.engine.tranches import servers_needed_by_year, tranche_fixed_flows, tranche_schedule
from tests.planning.engine.plan_fixtures import inputs, tiled, worked_study

D = Decimal
CENT = D("0.01")


def one_year(payment: str, effective: str, upfront: str | None):
    return commitment_option(
        1,
        source="test",
        effective_per_gpu_hour=D(effective),
        upfront_per_gpu=None if upfront is None else D(upfront),
        payment_option=payment,
    )


# One GPU for one year: no upfront 2.00/h; partial 7,008 upfront + 1.05/h (effective 1.85); all upfront
# 15,768 (effective 1.80 = 15,768 / 8,760).
NO = one_year("no_upfront", "2.00", None)
PARTIAL = one_year("partial_upfront", "1.85", "7008")
ALL = one_year("all_upfront", "1.80", "15768")


def annuity(payment: float, rate_annual: float, months: int) -> float:
    """Closed form: payment at the end of months 1..n discounted at (1 + r)^(m/12)."""
    monthly = (1 + rate_annual) ** (1 / 12) - 1
    return payment * (1 - (1 + monthly) ** -months) / monthly


def test_it_pays_the_upfront_in_month_0_and_the_hourly_part_monthly():
    (cost,) = compare_payment_options(
        [PARTIAL], [1], horizon_months=12, months=13, discount_rate_annual=D("0.1")
    )
    # month 0: the fee; months 1-12: (1.85 - 7,008 / 8,760) x 730 = 1.05 x 730 = 766.50
    assert cost.monthly[0] == D("7008")
    assert [round(float(flow), 6) for flow in cost.monthly[1:]] == [766.5] * 12
    assert cost.total.quantize(CENT) == D("16206.00")  # = 1.85 x 8,760


def test_it_costs_each_option_and_picks_the_lowest_npv():
    costed = compare_payment_options(
        [NO, PARTIAL, ALL], [1], horizon_months=12, months=13, discount_rate_annual=D("0.10")
    )
    by_option = {cost.option.payment_option: cost for cost in costed}
    # by hand at 10% a year: no upfront 1,460 a month for 12 months = 16,644.71; partial 7,008 +
    # 766.50 a month = 15,746.47; all upfront 15,768.00 (paid now, not discounted)
    assert float(by_option["no_upfront"].npv) == pytest.approx(annuity(1460, 0.10, 12), abs=0.005)
    assert float(by_option["no_upfront"].npv) == pytest.approx(16644.71, abs=0.005)
    assert float(by_option["partial_upfront"].npv) == pytest.approx(
        7008 + annuity(766.5, 0.10, 12), abs=0.005
    )
    assert by_option["all_upfront"].npv == D("15768")
    assert [cost.option.payment_option for cost in costed] == ["partial_upfront", "all_upfront", "no_upfront"]
    chosen = cheapest_payment_option(
        [NO, PARTIAL, ALL], horizon_months=36, months=73, discount_rate_annual=D("0.10")
    )
    assert chosen.payment_option == "partial_upfront"
    # at 45% a year money now is dear: no upfront wins although it costs the most in cash
    chosen = cheapest_payment_option(
        [NO, PARTIAL, ALL], horizon_months=36, months=73, discount_rate_annual=D("0.45")
    )
    assert chosen.payment_option == "no_upfront"


def test_it_gives_the_rate_implied_by_paying_upfront():
    # by hand (bisection on the annuity formula, monthly rate i): 15,768 = 1,460 x (1 - (1 + i)^-12) / i at
    # i = 1.659368%, 21.8341% a year; partial: 7,008 = 693.50 x (...) at i = 2.748256%, 38.4502% a year
    assert float(implied_rate(ALL, NO)) == pytest.approx(0.218341, abs=2e-6)
    assert float(implied_rate(PARTIAL, NO)) == pytest.approx(0.384502, abs=2e-6)


def test_a_1_year_layer_re_signed_each_year_pays_each_fee_the_month_before_its_year():
    (cost,) = compare_payment_options([ALL], [2, 3], horizon_months=24, months=25, discount_rate_annual=D(0))
    assert cost.monthly[0] == 2 * D("15768") and cost.monthly[12] == 3 * D("15768")
    assert sum(cost.monthly[1:12]) == 0 and sum(cost.monthly[13:]) == 0


@given(
    no_upfront=st.decimals(min_value=D("0.50"), max_value=D("20"), places=2),
    upfront_share=st.decimals(min_value=D("0.05"), max_value=D("1"), places=2),
    discount=st.decimals(min_value=D("0.01"), max_value=D("0.40"), places=2),
    rate=st.decimals(min_value=D("0"), max_value=D("0.9"), places=3),
)
def test_paying_upfront_is_cheaper_in_present_value_exactly_below_its_implied_rate(
    no_upfront, upfront_share, discount, rate
):
    """Property: an upfront option (a share of a discounted effective price paid at signing) costs less in
    NPV than no upfront iff the discount rate is below the rate its saving implies."""
    effective = no_upfront * (1 - discount)
    fee = (effective * upfront_share * 8760).quantize(CENT)
    upfront = one_year("all_upfront" if upfront_share == 1 else "partial_upfront", str(effective), str(fee))
    plain = one_year("no_upfront", str(no_upfront), None)
    implied = implied_rate(upfront, plain)
    assert implied is not None and implied > 0
    assume(abs(rate - implied) > D("0.0005"))  # the IRR is reported to 6 decimals
    costs = compare_payment_options(
        [plain, upfront], [1], horizon_months=12, months=13, discount_rate_annual=rate
    )
    npv = {cost.option.payment_option: cost.npv for cost in costs}
    assert (npv[upfront.payment_option] <= npv["no_upfront"]) == (rate < implied)


@given(
    price=st.decimals(min_value=D("0.5"), max_value=D("10"), places=2),
    fee=st.decimals(min_value=D("0"), max_value=D("20000"), places=2),
    years=st.integers(min_value=1, max_value=4),
)
def test_at_a_zero_rate_every_option_costs_its_cash(price, fee, years):
    assume(fee < price * 8760)
    option = one_year("partial_upfront", str(price), str(fee))
    (cost,) = compare_payment_options(
        [option], [1] * years, horizon_months=12 * years, months=12 * years + 1, discount_rate_annual=D(0)
    )
    assert abs(cost.npv - cost.total) < D("0.000001")
    assert abs(cost.total - price * 8760 * years) < D("0.01")


# The worked study (docs/cost-model.md): one 8 x H100 server, 300,000 + 5,000 install; a month costs
# energy 10.2 kW x 0.7 x 1.58 x 730 h x 0.10 = 823.5276, colocation 10.2 x 184 = 1,876.80, maintenance
# 300,000 x 10% / 12 = 2,500, staff 0.1 x 150,000 / 12 = 1,250: 6,450.3276; residual 20% = 60,000.
MONTHLY = 6450.3276
CAPEX, RESIDUAL = 305000.0, 60000.0


def test_it_buys_each_tranche_a_lead_time_before_its_demand_arrives():
    needed = servers_needed_by_year([7.5, 9.0, 30.0, 12.0], gpus_per_server=8, level=3)
    assert needed == [1, 2, 3, 3]  # 7.5 GPUs: 1 server; 9: 2; 30: 4, capped at the plan's 3; 12: kept
    tranches = tranche_schedule([1, 2, 2], lead_time_months=3)
    assert [(t.year, t.servers, t.paid_month, t.in_service_month) for t in tranches] == [
        (0, 1, 0, 1),  # the first is bought in month 0, as the TCO study buys
        (1, 1, 10, 13),  # demand of year 2 arrives in month 13: paid 3 months before
    ]
    flows = tranche_fixed_flows(worked_study(), tranches, horizon_months=36)
    hand = np.zeros(37)
    hand[0] += CAPEX
    hand[1:37] += MONTHLY
    hand[10] += CAPEX
    hand[13:37] += MONTHLY
    hand[36] -= 2 * RESIDUAL
    assert flows == pytest.approx(hand, abs=1e-6)
    # by year: 305,000 + 12 x 6,450.3276 + 305,000 = 687,403.93; 154,807.86; 24 x 6,450.3276 - 120,000
    assert round(flows[:13].sum(), 2) == 687403.93
    assert round(flows[13:25].sum(), 2) == 154807.86
    assert round(flows[25:].sum(), 2) == 34807.86


def test_one_tranche_in_month_0_is_the_plans_purchase():
    (tranche,) = tranche_schedule([2, 2, 2], lead_time_months=6)
    flows = tranche_fixed_flows(worked_study(), [tranche], horizon_months=36)
    plan_owned = 2 * owned_option(worked_study(), horizon_months=36).fixed_flows_per_server
    assert flows == pytest.approx(plan_owned, abs=1e-6)


def test_a_lead_time_out_of_range_is_refused_naming_the_field():
    with pytest.raises(PlanInputError) as raised:
        tranche_schedule([1], lead_time_months=25)
    assert raised.value.field == "lead_time_months"


def _owned_plan(
    *, horizon: int = 36, rate: str = "0.08", growth=None, on_demand: str = "2.99", lead: int | None = None
):
    study = worked_study()
    options = SupplyOptions(
        on_demand=on_demand_option(D(on_demand), source="test"),
        owned=owned_option(study, horizon_months=horizon),
    )
    return capacity_plan(
        inputs(
            options, firm=tiled([8.0]), horizon=horizon, rate=rate, growth=growth, owned_lead_time_months=lead
        ),
        with_sensitivity=False,
    )


def test_the_plan_after_tax_by_hand():
    """One server serving a flat 8 GPUs, tax 25%, straight-line over 5 years (the TCO engine's rule):
    month 0 pays 305,000 (not deductible); months 1-36 pay 6,450.3276 x 0.75 less the shield of
    0.25 x 305,000 / 60 = 1,270.8333; month 36 returns 60,000 and is taxed on the loss against the book
    value 305,000 - 36 x 5,083.33 = 122,000: 0.25 x (60,000 - 122,000) = -15,500."""
    plan = _owned_plan()
    assert plan.owned_servers == 1 and {layer.kind for layer in plan.layers} == {"owned"}
    section = plan_finance(plan, payment_alternatives={}, lead_time_months=3, tax_rate=D("0.25"))["after_tax"]
    hand = [CAPEX] + [MONTHLY * 0.75 - 0.25 * CAPEX / 60] * 36
    hand[36] += -RESIDUAL - 15500
    assert D(section["total_cost"]) == D(repr(sum(hand))).quantize(CENT)  # 357,908.85
    assert section["total_cost"] == "357908.85"
    npv = hand[0] + sum(flow / 1.08 ** (month / 12) for month, flow in enumerate(hand) if month)
    assert float(section["npv"]) == pytest.approx(npv, abs=0.01)
    assert section["depreciation_tax_shield"] == "45750.00"  # 0.25 x 36 x 5,083.33


@pytest.mark.parametrize("horizon", [12, 36])
def test_at_a_zero_tax_rate_the_after_tax_npv_is_the_plans(horizon):
    plan = _owned_plan(horizon=horizon, growth=[1.0, 1.5, 2.0][: horizon // 12])
    section = plan_finance(plan, payment_alternatives={}, lead_time_months=3, tax_rate=D(0))["after_tax"]
    assert abs(D(section["npv"]) - plan.npv) <= CENT
    assert abs(D(section["total_cost"]) - plan.total_cost) <= CENT


def test_a_plan_without_a_tax_rate_says_how_to_give_one():
    section = plan_finance(_owned_plan(), payment_alternatives={}, lead_time_months=3, tax_rate=None)[
        "after_tax"
    ]
    assert section["tax_rate"] is None and "study.tax_rate" in section["note"]


def test_the_plans_tranches_follow_its_growing_demand():
    """8 GPUs in year 1, 16 in year 2, 24 in year 3: the plan owns 3 servers and buys them a year apart,
    each 3 months before its year; in tranches it pays less in present value than all at month 0. On
    demand at 9.00 a GPU-hour a year of 8 GPUs costs 630,720, more than a server for 36 months."""
    plan = _owned_plan(growth=[1.0, 2.0, 3.0], on_demand="9.00")
    assert plan.owned_servers == 3
    section = plan_finance(plan, payment_alternatives={}, lead_time_months=3, tax_rate=None)["owned_tranches"]
    assert section["servers_by_year"] == [1, 2, 3]
    assert [(t["year"], t["servers"], t["paid_month"]) for t in section["tranches"]] == [
        (1, 1, 0),
        (2, 1, 10),
        (3, 1, 22),
    ]
    assert D(section["all_at_month_0"]["total"]) == (
        3 * D(repr(CAPEX)) + 108 * D("6450.3276") - 3 * D(60000)
    ).quantize(CENT)
    staged = 3 * CAPEX + (36 + 24 + 12) * MONTHLY - 3 * RESIDUAL
    assert float(section["in_tranches"]["total"]) == pytest.approx(staged, abs=0.005)
    assert D(section["in_tranches"]["npv"]) < D(section["all_at_month_0"]["npv"])
    hand = np.zeros(37)
    hand[[0, 10, 22]] += CAPEX
    hand[1:] += MONTHLY
    hand[13:] += MONTHLY
    hand[25:] += MONTHLY
    hand[36] -= 3 * RESIDUAL
    hand_npv = sum(flow / 1.08 ** (month / 12) for month, flow in enumerate(hand))
    assert float(section["in_tranches"]["npv"]) == pytest.approx(hand_npv, abs=0.01)


@settings(max_examples=40)  # each example runs the TCO buy side per tranche (~50 ms)
@given(
    increments=st.lists(st.integers(min_value=0, max_value=2), min_size=3, max_size=3),
    lead=st.integers(min_value=0, max_value=24),
    rate=st.decimals(min_value=D("0"), max_value=D("0.3"), places=2),
)
def test_buying_in_tranches_never_costs_more_than_all_in_month_0(increments, lead, rate):
    """Property: a server bought later pays its purchase no earlier and runs fewer months, and returns
    the same residual at the horizon, so the staged cash and NPV are at most buying the final level in
    month 0 (the worked study's costs are all positive)."""
    from procurement.costing.tco import present_value

    increments[0] = max(increments[0], 1)
    servers_by_year = list(np.cumsum(increments))
    staged = tranche_fixed_flows(
        worked_study(), tranche_schedule(servers_by_year, lead_time_months=lead), horizon_months=36
    )
    at_once = servers_by_year[-1] * owned_option(worked_study(), horizon_months=36).fixed_flows_per_server
    assert staged.sum() <= at_once.sum() + 1e-6
    pv = [present_value([D(repr(float(x))) for x in flows], rate) for flows in (staged, at_once)]
    assert pv[0] <= pv[1] + D("0.000001")


def test_the_headline_pays_the_owned_servers_in_tranches_when_demand_grows():
    """Issue 27: the same 8 / 16 / 24 GPUs with a lead time of 3 months given (as the service always
    gives it): the plan's own total, NPV and owned cost by year are the tranches', by hand:
    3 x 305,000 + (36 + 24 + 12) x 6,450.3276 - 3 x 60,000 = 1,199,423.59 against 1,431,635.38 all at
    month 0 (108 server-months); year 1 pays the first server (month 0) and the second (month 10) and
    12 server-months, year 2 the third (month 22) and 24, year 3 36 server-months less the 3 residuals."""
    at_once = _owned_plan(growth=[1.0, 2.0, 3.0], on_demand="9.00")
    plan = _owned_plan(growth=[1.0, 2.0, 3.0], on_demand="9.00", lead=3)
    assert plan.owned_servers == at_once.owned_servers == 3
    staged = 3 * CAPEX + 72 * MONTHLY - 3 * RESIDUAL
    assert float(plan.total_cost) == pytest.approx(staged, abs=0.005)
    assert float(at_once.total_cost) == pytest.approx(3 * CAPEX + 108 * MONTHLY - 3 * RESIDUAL, abs=0.005)
    (owned,) = plan.layers
    assert [float(cost) for cost in owned.cost_by_year] == pytest.approx(
        [2 * CAPEX + 12 * MONTHLY, CAPEX + 24 * MONTHLY, 36 * MONTHLY - 3 * RESIDUAL], abs=0.005
    )
    hand = np.zeros(37)
    hand[[0, 10, 22]] += CAPEX
    hand[1:] += MONTHLY
    hand[13:] += MONTHLY
    hand[25:] += MONTHLY
    hand[36] -= 3 * RESIDUAL
    assert float(plan.npv) == pytest.approx(sum(f / 1.08 ** (m / 12) for m, f in enumerate(hand)), abs=0.01)
    finance = plan_finance(plan, payment_alternatives={}, lead_time_months=3, tax_rate=D(0))
    section = finance["owned_tranches"]
    assert section["headline"] == "in_tranches" and "never costs more" in section["headline_reason"]
    assert D(section["in_tranches"]["total"]) == plan.total_cost.quantize(CENT)
    assert D(section["in_tranches"]["npv"]) == plan.npv.quantize(CENT)
    # the after-tax view buys the same tranches: at a zero tax rate it is the plan's cash and NPV
    assert abs(D(finance["after_tax"]["total_cost"]) - plan.total_cost) <= CENT
    assert abs(D(finance["after_tax"]["npv"]) - plan.npv) <= CENT


def test_flat_demand_buys_every_server_in_month_0_with_or_without_a_lead_time():
    at_once, staged = _owned_plan(), _owned_plan(lead=3)
    assert staged.total_cost == at_once.total_cost and staged.npv == at_once.npv


def _committed_plan(option, *, horizon: int):
    options = SupplyOptions(on_demand=on_demand_option(D("3.00"), source="test"), **{option.kind: option})
    return capacity_plan(
        inputs(options, firm=tiled([4.0]), horizon=horizon, rate="0.08"), with_sensitivity=False
    )


THREE_YEAR_ALL = commitment_option(
    3,
    source="test",
    effective_per_gpu_hour=D("1.50"),
    upfront_per_gpu=D("39420"),
    payment_option="all_upfront",
)


def test_a_3_year_prepayment_is_deducted_over_its_term():
    """4 GPUs flat, 3-year All Upfront at 1.50/h (39,420 a GPU = 1.50 x 26,280 h) against on-demand at
    3.00: all 4 committed, 157,680 paid in month 0. US tax capitalises a prepayment whose benefit runs past
    12 months (Treas. Reg. 1.263(a)-4(f)) and deducts it over the term: 157,680 / 36 = 4,380 a month in
    months 1..36, a shield of 0.25 x 4,380 = 1,095 a month. After tax: 157,680 - 36 x 1,095 = 118,260;
    NPV 157,680 - 1,095 x annuity(36 months at 8%) (deducted when paid it would be 0.75 x 157,680 =
    118,260 in month 0, a lower NPV)."""
    plan = _committed_plan(THREE_YEAR_ALL, horizon=36)
    assert [(layer.kind, layer.gpus) for layer in plan.layers if layer.gpus] == [("committed_3y", 4)]
    section = plan_finance(plan, payment_alternatives={}, lead_time_months=3, tax_rate=D("0.25"))["after_tax"]
    assert section["total_cost"] == "118260.00"
    assert float(section["npv"]) == pytest.approx(157680 - annuity(1095, 0.08, 36), abs=0.01)
    assert float(section["npv"]) > 118260 + 1000  # not deducted when paid
    assert "1.263(a)-4(f)" in section["prepayment_rule"]
    zero = plan_finance(plan, payment_alternatives={}, lead_time_months=3, tax_rate=D(0))["after_tax"]
    assert abs(D(zero["npv"]) - plan.npv) <= CENT and zero["npv"] == "157680.00"


def test_a_1_year_prepayment_within_the_12_month_rule_is_deducted_when_paid():
    """1 year All Upfront (15,768 a GPU, 1.80/h) for 4 GPUs: 63,072 paid in month 0 for 12 months of
    benefit, within the 12-month rule: deducted when paid, 0.75 x 63,072 = 47,304 in month 0, the NPV."""
    plan = _committed_plan(ALL, horizon=12)
    assert [(layer.kind, layer.gpus) for layer in plan.layers if layer.gpus] == [("committed_1y", 4)]
    section = plan_finance(plan, payment_alternatives={}, lead_time_months=3, tax_rate=D("0.25"))["after_tax"]
    assert section["npv"] == "47304.00" and section["total_cost"] == "47304.00"
