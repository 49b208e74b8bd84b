"""The CFO view of a study: both bases, the words of the recommendation, and the optional inputs.

Every expected figure is worked by hand from the docs' example (docs/cost-model.md, "Worked example"):
one 8 x H100 server, capex 305,000, running 6,450.3276 a month, residual 60,000, rent 2.99 per GPU-hour
(17,461.60 a month at full use), 8% a year discounted monthly by 1.08^(m/12).
"""

from dataclasses import replace
from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from procurement.costing.tco import irr_annual, present_value, run_tco, tco_report
from procurement.costing.tco_sensitivity import sensitivity_report
from procurement.costing.tco_spec import OfferRef, RentPrice, parse_tco_study
from procurement.costing.values import CostInputError
from tests.procurement.costing.tco_fixtures import GPUS, study_document

D = Decimal
V = 1.08 ** (-1 / 12)  # one month's discount factor at 8% a year


def annuity(months: int) -> float:
    """Sum of V^m for m = 1..months: the present value of 1 paid at the end of each month."""
    return V * (1 - V**months) / (1 - V)


def _study(**changes):
    return parse_tco_study(study_document(**changes), gpu_lookup=GPUS.get)


def _report(**changes):
    return tco_report(run_tco(_study(**changes)))


def test_it_reports_the_npv_break_even_utilization_and_recommends_on_the_same_basis():
    # rent NPV at full use = 17461.60 x annuity(36) = 559,527.84; buy NPV = 464,060.05 at any use
    # NPV break-even = 464,060.05 / 559,527.84 = 0.829378; at 80% renting wins although the cash
    # break-even utilization (0.759145) is lower: the recommendation follows the NPV one.
    assert 17461.60 * annuity(36) == pytest.approx(559527.84, abs=0.01)
    report = _report(utilization="0.8")
    assert report["npv_break_even_utilization"] == "0.829378"
    assert report["break_even_utilization"] == "0.759145"
    assert report["recommendation"] == "rent"
    assert report["recommendation_basis"] == "npv"
    # levelized: 464,060.05 / (5840 x 0.8 x annuity(36) + 0) GPU-hours in present value
    assert float(report["buy"]["npv_cost_per_used_gpu_hour"]) == pytest.approx(
        464060.05 / (5840 * 0.8 * annuity(36)), abs=1e-5
    )
    assert report["rent"]["npv_cost_per_used_gpu_hour"] == "2.990000"


def test_it_words_the_recommendation_with_the_hand_computed_gap():
    # at 80%: rent NPV 0.8 x 559,527.84 = 447,622.27; buy 464,060.05; renting cheaper by 16,437.78
    assert _report(utilization="0.8")["recommendation_reason"] == (
        "at 80% utilization over 36 months, renting costs 16,437.78 USD less than buying in present value "
        "(discount rate 8.0% a year); buying is cheaper in present value above 82.9% utilization "
        "(NPV break-even)"
    )
    # at 100%: 559,527.84 - 464,060.05 = 95,467.79 in favour of buying
    assert _report()["recommendation_reason"].startswith(
        "at 100% utilization over 36 months, buying costs 95,467.78 USD less than renting in present value"
    )


def test_it_says_when_renting_wins_even_at_full_use():
    # rent at 2.00: full-use rent NPV = 5840 x 2 x annuity(36) = 374,265.8; 464,060.05 / that = 1.239924
    reason = _report(rent__price_per_gpu_hour="2.00")["recommendation_reason"]
    assert reason.endswith(
        "renting stays cheaper in present value even at 100% utilization (NPV break-even 124.0%)"
    )


@settings(max_examples=30, deadline=None)
@given(utilization=st.decimals(min_value=D("0.05"), max_value=D(1), places=2))
def test_it_recommends_buy_exactly_above_the_npv_break_even_utilization(utilization):
    report = _report(utilization=str(utilization))
    above = utilization > D(report["npv_break_even_utilization"])
    assert (report["recommendation"] == "buy") == above


def test_it_gives_the_discounted_break_even_month():
    # at full use buying saves 17,461.60 - 6,450.3276 = 11,011.2724 a month against 305,000 up front:
    # discounted payback is the first m with 11,011.2724 x annuity(m) >= 305,000 (before the residual)
    first = next(m for m in range(1, 37) if 11011.2724 * annuity(m) >= 305000)
    report = _report()
    assert report["discounted_break_even_month"] == first == 31
    assert report["break_even_month"] == 28
    assert report["break_even_month_note"] is None


def test_it_says_a_month_36_break_even_comes_from_the_residual_alone():
    # at 80%: month 36 cumulative rent 36 x 13,969.28 = 502,894.08 >= buy 477,211.79 only because the
    # 60,000 residual is credited then (537,211.79 without it); in present value it never breaks even
    report = _report(utilization="0.8")
    assert report["break_even_month"] == 36
    assert "only because the residual value (60,000.00 USD) is credited" in report["break_even_month_note"]
    assert report["discounted_break_even_month"] is None


def test_it_computes_an_annual_irr_from_monthly_flows():
    # -100 now and +110 in a year: 10% a year
    assert irr_annual([D(-100)] + [D(0)] * 11 + [D(110)]) == D("0.100000")
    assert irr_annual([D(1), D(2)]) is None  # never an investment


def test_it_gives_the_irr_of_buying_instead_of_renting():
    # the IRR discounts buying's savings (rent - buy each month) to zero
    report = _report()
    irr = D(report["irr"])
    study = _study()
    result = run_tco(study)
    savings = [rent - buy for buy, rent in zip(result.buy_flows, result.rent_flows, strict=True)]
    assert abs(present_value(savings, irr)) < 5  # within the rounding of a 6-decimal rate
    assert irr > D("0.08")  # it beats the 8% discount rate, as the positive NPV advantage says
    assert report["irr"] == "0.282137"  # the figure docs/cost-model.md quotes (28.2% a year)


def test_it_refuses_a_rent_price_of_zero_naming_the_field():
    with pytest.raises(CostInputError) as error:
        _study(rent__price_per_gpu_hour="0")
    assert error.value.field == "rent.price_per_gpu_hour"
    assert "greater than 0" in error.value.message


def test_it_refuses_an_offer_priced_at_zero():
    def lookup(offer: OfferRef, model: str) -> RentPrice:
        return RentPrice(D(0), "USD", "2026-11-01T00:00:00+00:00", "test")

    document = study_document(rent__price_per_gpu_hour=None)
    document["rent"]["offer"] = {"provider": "aws", "instance_type": "p5.48xlarge", "region": "us-east-1"}
    with pytest.raises(CostInputError) as error:
        parse_tco_study(document, gpu_lookup=GPUS.get, offer_lookup=lookup)
    assert error.value.field == "rent.offer"


def test_it_applies_corporate_tax_with_a_straight_line_shield():
    # 25% tax, straight line over 5 years: shield 0.25 x 305,000 / 60 x 36 = 45,750; book 122,000, sold
    # at 60,000: a 62,000 loss saves 15,500. After-tax buy = 305,000 + 0.75 x 36 x 6,450.3276
    # - 45,750 - 60,000 - 15,500 = 357,908.85; rent 0.75 x 628,617.60 = 471,463.20
    after_tax = _report(tax_rate="0.25")["after_tax"]
    assert after_tax["depreciation_method"] == "straight_line"
    assert after_tax["depreciation_tax_shield"] == "45750.00"
    assert after_tax["buy"]["total"] == "357908.85"
    assert after_tax["rent"]["total"] == "471463.20"
    assert after_tax["recommendation"] == "buy"
    assert "after_tax" not in _report()


def test_it_applies_macrs_five_year_depreciation():
    # MACRS 5-year (IRS Pub. 946 Table A-1) years 1-3: 20%, 32%, 19.2% of 305,000 = 217,160; shield at
    # 25% = 54,290. Book 87,840, sold at 60,000: a 27,840 loss saves 6,960. The undiscounted total is the
    # same as straight line (305,000 - 60,000 is deducted either way), the NPV lower (earlier shield).
    macrs = _report(tax_rate="0.25", buy__depreciation_method="macrs_5")["after_tax"]
    straight = _report(tax_rate="0.25")["after_tax"]
    assert macrs["depreciation_tax_shield"] == "54290.00"
    assert macrs["buy"]["total"] == straight["buy"]["total"] == "357908.85"
    assert D(macrs["buy"]["npv"]) < D(straight["buy"]["npv"])


def test_it_lowers_rent_prices_each_year():
    # 10% a year: 12 x 17,461.60 x (1 + 0.9 + 0.81) = 567,851.23
    assert _report(rent__price_decline_per_year="0.10")["rent"]["total"] == "567851.23"


def test_it_finances_the_purchase_with_a_loan():
    # a 0% loan over 36 months spreads 305,000 evenly: the same cash total, a lower NPV
    free = _report(buy__financing={"kind": "loan", "rate_annual": "0", "term_months": 36})
    assert free["buy"]["total"] == "477211.79"
    assert D(free["buy"]["npv"]) < D("464060.05")
    # 6%: payment 305,000 x 0.005 / (1 - 1.005^-36) = 9,278.7; interest = 36 x payment - 305,000
    loan = _report(buy__financing={"kind": "loan", "rate_annual": "0.06", "term_months": 36})["buy"][
        "financing"
    ]
    payment = 305000 * 0.005 / (1 - 1.005**-36)
    assert float(loan["payments_total"]) == pytest.approx(36 * payment, abs=0.01)
    assert float(loan["interest_total"]) == pytest.approx(36 * payment - 305000, abs=0.01)


def test_it_repays_a_loan_longer_than_the_horizon_at_the_horizon():
    # 0% over 72 months: 36 payments of 305,000 / 72 and the other half at month 36: the same total
    report = _report(buy__financing={"kind": "loan", "rate_annual": "0", "term_months": 72})
    assert report["buy"]["total"] == "477211.79"


def test_it_prices_a_lease_that_leaves_the_residual_to_the_lessor():
    # at 0%: payment = (305,000 - 60,000) / 36; no residual returned: total = 245,000 + 36 x 6,450.3276
    report = _report(buy__financing={"kind": "lease", "rate_annual": "0"})
    assert report["buy"]["total"] == "477211.79"  # 245,000 + 232,211.79: the same cash as buying outright
    with pytest.raises(CostInputError) as error:
        _study(buy__financing={"kind": "lease", "rate_annual": "0.05", "term_months": 24})
    assert error.value.field == "buy.financing.term_months"


def test_it_ramps_utilization_up():
    # 6-month ramp at 80%: months 1..5 use 0.8 x m/6, then 0.8: sum = 0.8 x (15/6 + 31) = 26.8 months
    # used GPU-hours = 8 x 730 x 26.8 = 156,512; rent = 156,512 x 2.99 = 467,970.88
    report = _report(utilization="0.8", utilization_ramp_months=6)
    assert D(report["used_gpu_hours"]) == D("156512.0")
    assert report["rent"]["total"] == "467970.88"
    assert report["buy"]["total"] == "477211.79"


def test_it_rents_the_capacity_lost_to_failures_unless_spares_cover_it():
    # 50% failing a year, 73 days to repair: 1 x 0.5 x 73 / 365 = 0.1 servers down; the lost
    # 0.1 x 8 x 730 GPU-hours a month rented at 2.99 = 1,746.16 a month, 62,861.76 over 36 months
    failing = _report(buy__annual_failure_rate="0.5", buy__repair_days="73")
    assert failing["buy"]["failure_cover_total"] == "62861.76"
    assert failing["buy"]["total"] == "540073.55"  # 477,211.7936 + 62,861.76
    # one cold spare covers it but is bought, colocated, maintained (and sold) like a server
    spared = _report(buy__annual_failure_rate="0.5", buy__repair_days="73", buy__spare_servers=1)
    assert "failure_cover_total" not in spared["buy"]
    assert spared["buy"]["capex"] == "610000.00"


def test_it_adds_network_and_storage_capex_per_server():
    report = _report(buy__network_capex_per_server="10000", buy__storage_capex_per_server="5000")
    assert report["buy"]["capex"] == "320000.00"
    assert report["buy"]["total"] == "492211.79"  # 477,211.79 + 15,000


def test_it_lets_energy_follow_utilization():
    # idle 0.3, busy 0.7, used half the time: load 0.5; energy = 10.2 x 0.5 x 1.58 x 730 x 0.10 = 588.234
    report = _report(utilization="0.5", buy__energy_follows_utilization=True)
    assert report["buy"]["per_month"]["energy"] == "588.23"


def test_it_prices_a_quoted_reserved_alternative():
    # reserved 3y at 1.90 for every hour: 8 x 730 x 1.9 x 36 = 399,456.00
    report = _report(
        rent__reserved_alternative={"pricing_model": "reserved_3y", "price_per_gpu_hour": "1.90"}
    )
    reserved = report["reserved_alternative"]
    assert reserved["total"] == "399456.00"
    assert reserved["price_source"] == "quoted rate"
    assert reserved["cheapest_by_npv"] == "reserved"  # 11,096 x annuity(36) = 355,546 < 464,060.05


def test_it_needs_a_price_for_a_reserved_alternative_without_an_offer():
    with pytest.raises(CostInputError) as error:
        _study(rent__reserved_alternative={"pricing_model": "reserved_1y"})
    assert error.value.field == "rent.reserved_alternative.price_per_gpu_hour"


def test_it_keeps_older_studies_inputs_unchanged():
    # no optional input given: the stored inputs have exactly the keys they had before
    inputs = _study().as_dict()
    assert "tax_rate" not in inputs and "financing" not in inputs["buy"]
    assert "price_decline_per_year" not in inputs["rent"]


def test_the_tornado_counts_one_lever_once_and_adds_discount_rate_and_horizon():
    # at 80% utilization on demand, +-20% of the rent price and of the utilization move the same bill
    drivers = {row["driver"] for row in sensitivity_report(_study(utilization="0.8"))["rows"]}
    assert drivers == {
        "rent_price_or_utilization",
        "power_price",
        "residual_value",
        "purchase_price",
        "discount_rate",
        "horizon_months",
    }
    # at full use utilization cannot rise: the two levers differ and keep their own rows
    full = {row["driver"] for row in sensitivity_report(_study())["rows"]}
    assert {"rent_price", "utilization"} <= full


def test_the_horizon_driver_moves_by_whole_months():
    study = _study(utilization="0.8")
    rows = {row["driver"]: row for row in sensitivity_report(study)["rows"]}
    # 36 x 0.8 = 28.8 -> 29 months; 36 x 1.2 = 43.2 -> 43 months
    short = tco_report(run_tco(replace(study, horizon_months=29)))
    gap = D(short["rent"]["npv"]) - D(short["buy"]["npv"])  # each NPV rounded: within a cent
    assert abs(D(rows["horizon_months"]["low"]) - gap) <= D("0.01")


def test_it_prices_the_reserved_alternative_from_the_offers_stored_reserved_price():
    # the offer lookup stands for the stored prices: on demand 23.92/h for 8 GPUs = 2.99, reserved 3y 15.20 = 1.90
    prices = {"on_demand": D("2.99"), "reserved_3y": D("1.90")}

    def lookup(offer: OfferRef, model: str) -> RentPrice | None:
        if model not in prices:
            return None
        return RentPrice(prices[model], "USD", "2026-11-20T00:00:00+00:00", f"aws {model} price list")

    document = study_document(rent__price_per_gpu_hour=None)
    document["rent"]["offer"] = {"provider": "aws", "instance_type": "p5.48xlarge", "region": "us-east-1"}
    document["rent"]["reserved_alternative"] = {"pricing_model": "reserved_3y"}
    reserved = tco_report(run_tco(parse_tco_study(document, gpu_lookup=GPUS.get, offer_lookup=lookup)))[
        "reserved_alternative"
    ]
    assert reserved["total"] == "399456.00"  # 8 x 730 x 1.90 x 36
    assert reserved["price_source"] == "aws reserved_3y price list"
    assert reserved["price_observed_at"] == "2026-11-20T00:00:00+00:00"
    document["rent"]["reserved_alternative"] = {"pricing_model": "reserved_1y"}  # no stored price
    with pytest.raises(CostInputError) as error:
        parse_tco_study(document, gpu_lookup=GPUS.get, offer_lookup=lookup)
    assert error.value.field == "rent.reserved_alternative.pricing_model"


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"horizon_months": 361}, "horizon_months"),  # at most 360 months (issue 9)
        ({"utilization_ramp_months": 37}, "utilization_ramp_months"),
        ({"buy__servers": 100_001}, "buy.servers"),
        ({"buy__spare_servers": 100_001}, "buy.spare_servers"),
        (
            {"buy__financing": {"kind": "loan", "rate_annual": "0.05", "term_months": 481}},
            "buy.financing.term_months",
        ),
        ({"tax_rate": "1"}, "tax_rate"),
        ({"rent__price_decline_per_year": "1"}, "rent.price_decline_per_year"),
        ({"buy__depreciation_method": "declining"}, "buy.depreciation_method"),
        ({"buy__energy_follows_utilization": "yes"}, "buy.energy_follows_utilization"),
    ],
)
def test_it_bounds_and_checks_every_optional_input(changes, field):
    with pytest.raises(CostInputError) as error:
        _study(**changes)
    assert error.value.field == field


@settings(max_examples=25, deadline=None)
@given(
    utilization=st.decimals(min_value=D("0.05"), max_value=D(1), places=2),
    term=st.integers(min_value=1, max_value=72),
)
def test_a_free_loan_never_changes_the_cash_total_and_never_raises_the_npv(utilization, term):
    cash = _report(utilization=str(utilization))
    loan = _report(
        utilization=str(utilization), buy__financing={"kind": "loan", "rate_annual": "0", "term_months": term}
    )
    assert abs(D(loan["buy"]["total"]) - D(cash["buy"]["total"])) <= D("0.01")
    assert D(loan["buy"]["npv"]) <= D(cash["buy"]["npv"])  # paying later is worth less today


@settings(max_examples=25, deadline=None)
@given(utilization=st.decimals(min_value=D("0.05"), max_value=D(1), places=2))
def test_a_zero_tax_rate_leaves_the_npvs_as_they_are(utilization):
    report = _report(utilization=str(utilization), tax_rate="0")
    assert report["after_tax"]["buy"]["npv"] == report["buy"]["npv"]
    assert report["after_tax"]["rent"]["npv"] == report["rent"]["npv"]
    assert report["after_tax"]["recommendation"] == report["recommendation"]


@settings(max_examples=25, deadline=None)
@given(decline=st.decimals(min_value=D(0), max_value=D("0.5"), places=2))
def test_a_falling_rent_price_never_favours_buying_more(decline):
    base = _report(utilization="0.8")
    falling = _report(utilization="0.8", rent__price_decline_per_year=str(decline))
    assert D(falling["rent"]["npv"]) <= D(base["rent"]["npv"])
    assert D(falling["npv_break_even_utilization"]) >= D(base["npv_break_even_utilization"])


def test_committed_rent_has_no_break_even_utilization_on_either_basis():
    # reserved 3y at 1.90 is paid every hour: no utilization makes it cheaper or dearer
    report = _report(rent__pricing_model="reserved_3y", rent__price_per_gpu_hour="1.90")
    assert report["break_even_utilization"] is None and report["npv_break_even_utilization"] is None
    assert "break-even" not in report["recommendation_reason"]
    # 11,096 x annuity(36) = 355,546.3 < 464,060.05: renting the reservation wins
    assert report["recommendation"] == "rent"
    assert float(report["rent"]["npv"]) == pytest.approx(11096 * annuity(36), abs=0.01)
