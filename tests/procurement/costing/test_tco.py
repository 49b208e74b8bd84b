"""Buy versus rent: the worked 8 x H100 example to the cent, NPV, break-evens and properties."""

from dataclasses import replace
from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from procurement.costing.tco import (
    break_even_month,
    buy_monthly_costs,
    present_value,
    run_tco,
    tco_report,
)
from procurement.costing.tco_spec import parse_tco_study
from tests.procurement.costing.tco_fixtures import GPUS, study_document

D = Decimal


def _study(**changes):
    return parse_tco_study(study_document(**changes), gpu_lookup=GPUS.get)


def test_it_reproduces_the_worked_example_cash_model():
    # power = 8 x 700 W / 1000 + 4.6 kW = 10.2 kW
    # energy      = 1 x 10.2 x 0.7 x 1.58 x 730 x 0.10 = 823.5276 a month
    # colocation  = 1 x 10.2 x 184                      = 1876.80
    # maintenance = 1 x 300000 x 0.10 / 12              = 2500.00
    # staff       = 0.1 x 150000 / 12                   = 1250.00      -> 6450.3276 a month
    # buy total   = 300000 + 5000 (month 0) + 36 x 6450.3276 - 0.20 x 300000 (month 36) = 477211.7936
    # rent        = 8 x 730 x 1.0 x 2.99 = 17461.60 a month -> 36 months = 628617.60
    study = _study()
    monthly = buy_monthly_costs(study.buy)
    assert (monthly.energy, monthly.colocation, monthly.maintenance, monthly.staff) == (
        D("823.5276"),
        D("1876.80"),
        D("2500.00"),
        D("1250.00"),
    )
    report = tco_report(run_tco(study))
    assert report["buy"]["total"] == "477211.79"
    assert report["rent"]["total"] == "628617.60"
    assert report["buy"]["cost_per_used_gpu_hour"] == "2.269843"  # 477211.7936 / 210240 GPU-hours
    assert report["rent"]["cost_per_used_gpu_hour"] == "2.990000"
    # cumulative rent 28 x 17461.60 = 488924.80 >= buy 305000 + 28 x 6450.3276 = 485609.17; month 27 is short
    assert report["break_even_month"] == 28
    # 477211.7936 / (8 x 730 x 36 x 2.99) = 477211.7936 / 628617.60 = 0.759145
    assert report["break_even_utilization"] == "0.759145"
    assert report["recommendation"] == "buy"


@pytest.mark.parametrize(
    ("utilization", "used_gpu_hours", "cost_per_used_gpu_hour"),
    [
        # owned cost per used GPU-hour = 477211.7936 / (8 x 730 x 36 x utilization)
        ("1", "210240", "2.269843"),  # 477211.7936 / 210240
        ("0.8", "168192.0", "2.837304"),  # 477211.7936 / 168192
        ("0.6", "126144.0", "3.783072"),  # 477211.7936 / 126144
        ("0.4", "84096.0", "5.674608"),  # 477211.7936 / 84096
    ],
)
def test_it_gives_the_owned_cost_per_used_gpu_hour_of_the_worked_example(
    utilization, used_gpu_hours, cost_per_used_gpu_hour
):
    report = tco_report(run_tco(_study(utilization=utilization)))
    assert report["used_gpu_hours"] == used_gpu_hours
    assert report["buy"]["total"] == "477211.79"  # the servers stay on: buying costs the same at any use
    assert report["buy"]["cost_per_used_gpu_hour"] == cost_per_used_gpu_hour


def test_it_recommends_renting_at_40_percent_utilization():
    # rent = 628617.60 x 0.4 = 251447.04 < 477211.79: shifting load favours renting (the guides)
    report = tco_report(run_tco(_study(utilization="0.4")))
    assert report["rent"]["total"] == "251447.04"
    assert report["recommendation"] == "rent"
    assert report["break_even_month"] is None


def test_it_discounts_month_m_by_one_plus_r_to_the_m_over_12():
    # 100 now + 112 in month 12 at 12% a year = 100 + 112 / 1.12 = 200; month 6: 1.12^0.5 = 1.0583005
    flows = [D(100)] + [D(0)] * 11 + [D(112)]
    assert present_value(flows, D("0.12")) == D(200)
    assert float(present_value([D(0)] * 6 + [D("105.83005244")], D("0.12"))) == pytest.approx(100, abs=1e-6)


def test_it_charges_a_reservation_for_every_hour_whatever_the_utilization():
    # reserved: 8 x 730 x 1.9 = 11096 a month at any utilization -> 36 x 11096 = 399456
    full = tco_report(run_tco(_study(rent__pricing_model="reserved_3y", rent__price_per_gpu_hour="1.9")))
    half = tco_report(
        run_tco(_study(utilization="0.5", rent__pricing_model="reserved_3y", rent__price_per_gpu_hour="1.9"))
    )
    assert full["rent"]["total"] == half["rent"]["total"] == "399456.00"
    assert full["break_even_utilization"] is None


def test_it_reports_straight_line_depreciation_beside_the_cash_view():
    # capex 305000 over 5 x 12 = 60 months = 5083.33 a month; 36 months = 183000; book value 122000;
    # the 60000 residual is a 62000 loss on disposal; accounting cost = 183000 + 36 x 6450.3276 = 415211.79
    depreciation = tco_report(run_tco(_study()))["depreciation"]
    assert depreciation["per_month"] == "5083.33"
    assert depreciation["over_horizon"] == "183000.00"
    assert depreciation["book_value_at_horizon"] == "122000.00"
    assert depreciation["disposal_gain"] == "-62000.00"
    assert depreciation["accounting_cost_total"] == "415211.79"


def test_it_gives_monthly_cumulative_series_from_month_zero():
    report = tco_report(run_tco(_study()))
    monthly = report["monthly"]
    assert len(monthly["buy_cumulative"]) == len(monthly["rent_cumulative"]) == 37
    assert monthly["buy_cumulative"][0] == "305000.00"
    assert monthly["rent_cumulative"][1] == "17461.60"
    assert monthly["buy_cumulative"][-1] == report["buy"]["total"]


def test_it_blends_a_spot_mix():
    # 30% spot at 1.0, 70% on demand at 2.99: 0.7 x 2.99 + 0.3 x 1.0 = 2.393
    study = _study(
        rent__pricing_model="spot_mix", rent__spot_fraction="0.3", rent__spot_price_per_gpu_hour="1.0"
    )
    assert tco_report(run_tco(study))["rent"]["price_per_gpu_hour"] == "2.393000"


def test_it_finds_the_first_month_rent_catches_up():
    assert break_even_month([D(10), D(11), D(12)], [D(0), D(11), D(20)]) == 1
    assert break_even_month([D(10), D(11)], [D(0), D(5)]) is None


utilizations = st.decimals(min_value=D("0.01"), max_value=D(1), places=2)


@settings(max_examples=40)
@given(low=utilizations, high=utilizations)
def test_it_never_raises_the_owned_cost_per_used_gpu_hour_with_higher_utilization(low, high):
    low, high = sorted((low, high))
    base = _study()

    def owned_cost(utilization):
        result = run_tco(replace(base, utilization=utilization))
        return result.cost_per_used_gpu_hour(result.buy_total)

    assert owned_cost(high) <= owned_cost(low)


@settings(max_examples=40)
@given(
    rate=st.decimals(min_value=D(0), max_value=D("0.5"), places=3),
    price=st.decimals(min_value=D("0.01"), max_value=D(20), places=2),
)
def test_it_never_values_positive_flows_above_their_total(rate, price):
    result = run_tco(replace(_study(), discount_rate_annual=rate))
    result = run_tco(replace(result.study, rent=replace(result.study.rent, price_per_gpu_hour=price)))
    assert result.rent_npv <= result.rent_total
    assert result.buy_npv <= result.buy_total


@settings(max_examples=40)
@given(price=st.decimals(min_value=D("0.5"), max_value=D(20), places=2))
def test_it_puts_equal_totals_at_the_break_even_utilization(price):
    study = _study(rent__price_per_gpu_hour=str(price))
    result = run_tco(study)
    report = tco_report(result)
    at_break_even = replace(study, utilization=result.buy_total / (D(8 * 730 * 36) * price))
    assert report["break_even_utilization"] is not None
    assert run_tco(at_break_even).rent_total == pytest.approx(result.buy_total, rel=D("1e-20"))
