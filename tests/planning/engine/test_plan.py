"""The capacity plan on cases small enough to compute by hand (the arithmetic is in each test)."""

from decimal import Decimal

import numpy as np
import pytest

from planning.engine.options import SupplyOptions, commitment_option, options_from_study, spot_option
from planning.engine.plan import StatusQuoCategory, StatusQuoMix, capacity_plan, plan_report
from procurement.costing.tco import buy_capex, buy_monthly_costs, residual_value
from procurement.costing.values import round_money
from tests.planning.engine.plan_fixtures import (
    commitment,
    inputs,
    on_demand,
    spot,
    synthetic_owned,
    tiled,
    worked_study,
)

D = Decimal


def cents(amount: Decimal) -> Decimal:
    return round_money(amount, "USD")


def _layer(plan, kind):
    return next(layer for layer in plan.layers if layer.kind == kind)


def _kinds(plan):
    return [layer.kind for layer in plan.layers]


def test_it_commits_the_slices_used_above_the_break_even_and_buys_the_rest_on_demand():
    # 2 GPUs all year and a 3rd half the time. On-demand 2.00, 1-year commitment 1.20 (break-even 60%).
    # GPUs 1-2: 8760 h: commit 8760 x 1.2 = 10,512 < on demand 17,520. GPU 3: 4380 h: on demand
    # 4380 x 2 = 8,760 < 10,512. Total = 2 x 10,512 + 8,760 = 29,784.
    options = SupplyOptions(on_demand=on_demand("2"), committed_1y=commitment(12, "1.2"))
    plan = capacity_plan(inputs(options, firm=tiled([2, 3])), with_sensitivity=False)
    assert plan.committed_1y_units_by_year == (2,)
    assert cents(plan.total_cost) == D("29784.00")
    assert [(layer.kind, layer.gpus, layer.hours_served) for layer in plan.layers] == [
        ("committed_1y", 2, 17520.0),
        ("on_demand", 1, 4380.0),
    ]
    assert _layer(plan, "committed_1y").share_of_demand == pytest.approx(17520 / 21900)


def test_it_serves_interruptible_demand_on_spot_and_firm_demand_never():
    # Firm 2 GPUs all year; interruptible 1 GPU all year. Spot 0.90 effective, commitment 1.20, on-demand 2.
    # Stack: firm at the bottom. Slices 1-2 (firm, 8760 h): commit 10,512 < on-demand 17,520.
    # Slice 3 (interruptible, 8760 h): spot 8760 x 0.9 = 7,884 < commit 10,512. Total 21,024 + 7,884 = 28,908.
    options = SupplyOptions(on_demand=on_demand("2"), committed_1y=commitment(12, "1.2"), spot=spot("0.9"))
    plan = capacity_plan(inputs(options, firm=tiled([2]), interruptible=tiled([1])), with_sensitivity=False)
    assert cents(plan.total_cost) == D("28908.00")
    assert _kinds(plan) == ["committed_1y", "spot"]
    # The same GPU tagged firm cannot go to spot: it is committed (10,512 < 17,520): 3 x 10,512 = 31,536.
    firm_only = capacity_plan(inputs(options, firm=tiled([3])), with_sensitivity=False)
    assert cents(firm_only.total_cost) == D("31536.00")
    assert _kinds(firm_only) == ["committed_1y"]


def test_it_charges_a_term_that_runs_past_the_horizon_in_full():
    # 1 GPU all the time, horizon 18 months (year 2 has 6 months), on-demand 2.00, 1-year 1.20, 3-year 0.80.
    # 3-year: paid 36 months = 0.8 x 730 x 36 = 21,024 (18 months after the horizon still owed).
    # Year 1: 1-year 10,512 < on-demand 17,520. Year 2 (6 months): on-demand 2 x 730 x 6 = 8,760 < a 1-year
    # term paid in full 10,512. Flexible = 10,512 + 8,760 = 19,272 < 21,024: no 3-year commitment.
    options = SupplyOptions(
        on_demand=on_demand("2"), committed_1y=commitment(12, "1.2"), committed_3y=commitment(36, "0.8")
    )
    plan = capacity_plan(inputs(options, firm=tiled([1]), horizon=18, growth=[1, 1]), with_sensitivity=False)
    assert (plan.committed_3y_units, plan.committed_1y_units_by_year) == (0, (1, 0))
    assert cents(plan.total_cost) == D("19272.00")
    # With 3-year at 0.70: 0.7 x 730 x 36 = 18,396 < 19,272, booked 6,132 in year 1 and 12,264 in year 2.
    cheaper = capacity_plan(
        inputs(
            SupplyOptions(
                on_demand=on_demand("2"),
                committed_1y=commitment(12, "1.2"),
                committed_3y=commitment(36, "0.7"),
            ),
            firm=tiled([1]),
            horizon=18,
            growth=[1, 1],
        ),
        with_sensitivity=False,
    )
    assert cheaper.committed_3y_units == 1
    assert [cents(cost) for cost in _layer(cheaper, "committed_3y").cost_by_year] == [
        D("6132.00"),
        D("12264.00"),
    ]
    assert len(cheaper.monthly_cost) == 37  # months 0..36: the term's last payment is month 36


def test_it_grows_demand_by_the_yearly_multipliers_and_rechooses_one_year_commitments():
    # 2 GPUs all year, growth 1 then 1.5 (3 GPUs). Year 1: commit 2; year 2: commit 3 (each slice 8760 h).
    # Cost = 2 x 10,512 + 3 x 10,512 = 52,560.
    options = SupplyOptions(on_demand=on_demand("2"), committed_1y=commitment(12, "1.2"))
    plan = capacity_plan(
        inputs(options, firm=tiled([2]), horizon=24, growth=[1, 1.5]), with_sensitivity=False
    )
    assert plan.committed_1y_units_by_year == (2, 3)
    assert cents(plan.total_cost) == D("52560.00")
    assert plan.demand_gpu_hours_by_year == (17520.0, 26280.0)


def test_it_rounds_owned_servers_to_whole_servers_by_costing_the_neighbours():
    # 8-GPU servers: 12 GPUs all year = 1.5 servers. Owned: fixed 12,000 per server-year (1,000 a month,
    # no capex, no residual), on-demand 1.00 (8,760 a GPU-year) -> a GPU-slice used 8760 h costs
    # 12,000 / 8 = 1,500 owned. 1 server + 4 GPUs on demand = 12,000 + 4 x 8,760 = 47,040;
    # 2 servers = 24,000 (4 GPUs idle): cheaper. The neighbours 1 and 2 are both costed exactly.
    owned = synthetic_owned(gpus_per_server=8, capex=0, monthly=1000, residual=0, variable=0, horizon=12)
    options = SupplyOptions(on_demand=on_demand("1"), owned=owned)
    plan = capacity_plan(inputs(options, firm=tiled([12])), with_sensitivity=False)
    assert plan.owned_servers == 2
    assert cents(plan.total_cost) == D("24000.00")
    # at on-demand 0.25 (2,190 a GPU-year): 1 server + 4 x 2,190 = 20,760 < 24,000 < 12 x 2,190 = 26,280
    cheaper_market = capacity_plan(
        inputs(SupplyOptions(on_demand=on_demand("0.25"), owned=owned), firm=tiled([12])),
        with_sensitivity=False,
    )
    assert cheaper_market.owned_servers == 1
    assert cents(cheaper_market.total_cost) == D("20760.00")


def test_it_discounts_month_by_month_like_the_tco_engine():
    # 1 GPU on demand at 1.00 for 12 months at 10% a year: NPV = sum over m = 1..12 of 730 / 1.1^(m/12).
    options = SupplyOptions(on_demand=on_demand("1"))
    plan = capacity_plan(inputs(options, firm=tiled([1]), rate="0.1"), with_sensitivity=False)
    expected = sum(730 / 1.1 ** (month / 12) for month in range(1, 13))
    assert float(plan.npv) == pytest.approx(expected, rel=1e-12)
    assert cents(plan.total_cost) == D("8760.00")


def test_it_costs_the_status_quo_at_the_bills_blended_rate_and_finds_the_break_even_month():
    # Bills: 600 GPU-h on demand at 2.99 and 400 reserved at 1.90 plus 100 of unused commitment:
    # (1,794 + 760 + 100) / 1,000 = 2.654 per GPU-hour used.
    mix = StatusQuoMix(
        (StatusQuoCategory("on_demand", 600.0, D("2.99")), StatusQuoCategory("reserved", 400.0, D("1.90"))),
        unused_commitment_cost=D("100"),
    )
    assert mix.blended_cost_per_gpu_hour() == D("2.654")
    # One owned 8-GPU server (the TCO worked example), 8 GPUs busy every hour for 36 months.
    # Status quo a month: 8 x 730 x 2.654 = 15,499.36. The server: capex at month 0, then its running cost
    # a month; break-even = first m with capex + m x running < m x 15,499.36.
    study = worked_study()
    options = options_from_study(study, horizon_months=36)
    plan = capacity_plan(
        inputs(options, firm=tiled([8]), horizon=36, growth=[1, 1, 1], rate="0.08", status_quo=mix),
        with_sensitivity=False,
    )
    capex, running = buy_capex(study.buy), buy_monthly_costs(study.buy).total
    status_quo_month = 8 * 730 * D("2.654")
    assert plan.owned_servers == 1
    assert plan.status_quo_cost == pytest.approx(status_quo_month * 36)
    expected_month = next(m for m in range(1, 37) if capex + m * running < m * status_quo_month)
    assert plan.break_even_month == expected_month
    # capex 305,000; running 1,275 x 1.58... per the engine; the total is capex + 36 running - residual
    expected_total = capex + 36 * running - residual_value(study.buy)
    assert float(plan.total_cost) == pytest.approx(float(expected_total), rel=1e-12)
    assert plan.savings_vs_status_quo == pytest.approx(plan.status_quo_cost - plan.total_cost)


def test_it_prices_trials_of_the_same_growth_at_the_plans_cost_and_orders_p50_below_p90():
    options = SupplyOptions(on_demand=on_demand("2"), committed_1y=commitment(12, "1.2"))
    same = np.ones((5, 2))
    plan = capacity_plan(
        inputs(options, firm=tiled([2, 3]), horizon=24, growth=[1, 1], growth_trials=same),
        with_sensitivity=False,
    )
    assert plan.p50_total_cost == plan.p90_total_cost == plan.total_cost
    spread = np.array([[1.0, 1.0], [1.0, 2.0], [1.5, 1.5], [0.5, 0.5]])
    plan = capacity_plan(
        inputs(options, firm=tiled([2, 3]), horizon=24, growth=[1, 1], growth_trials=spread),
        with_sensitivity=False,
    )
    # Levels held at 2 committed GPUs a year (21,024 a year). Trial by trial (on-demand 2.00 a GPU-hour):
    #   1x, 1x:     29,784 + 29,784                                                       =  59,568
    #   1x, 2x:     29,784 + 21,024 + (2 x 8760 + 2 x 4380) x 2 = 29,784 + 73,584        = 103,368
    #   1.5x, 1.5x: 2 x (21,024 + (1 x 8760 + 1.5 x 4380) x 2) = 2 x 51,684               = 103,368
    #   0.5x, 0.5x: demand 1-1.5 GPUs, under the commitment: 2 x 21,024                   =  42,048
    # P50 (linear) = (59,568 + 103,368) / 2 = 81,468; P90 = 103,368.
    assert plan.trials == 4
    assert (cents(plan.p50_total_cost), cents(plan.p90_total_cost)) == (D("81468.00"), D("103368.00"))


def test_it_reports_the_contract_keys_as_decimal_strings():
    options = SupplyOptions(on_demand=on_demand("2"), committed_1y=commitment(12, "1.2"))
    report = plan_report(capacity_plan(inputs(options, firm=tiled([2, 3])), with_sensitivity=True))
    for key in (
        "layers",
        "total_cost",
        "npv",
        "p90_total_cost",
        "status_quo_cost",
        "savings_vs_status_quo",
        "break_even_month",
        "sensitivity",
        "assumptions",
        "currency",
    ):
        assert key in report
    layer = report["layers"][0]
    assert set(layer) >= {"kind", "gpu_model", "gpus", "hours_served", "cost_by_year", "share_of_demand"}
    assert report["total_cost"] == "29784.00"
    assert layer["cost_by_year"] == ["21024.00"]
    assert {row["driver"] for row in report["sensitivity"]["rows"]} == {
        "growth",
        "rent_price",
        "discount_rate",
    }
    # rent prices x 0.8 scale every cost in this plan (all rented): 29,784 x 0.8 = 23,827.20
    rent = next(row for row in report["sensitivity"]["rows"] if row["driver"] == "rent_price")
    assert (rent["low"], rent["high"]) == ("23827.20", "35740.80")
    assert any(item["name"] == "committed_1y price" for item in report["assumptions"])


def test_the_worked_example_of_docs_capacity_plan_md():
    # docs/capacity-plan.md, "Worked example": 168 samples; firm 12 GPUs in 126 (75%), 10 in the rest;
    # interruptible 4 GPUs in 42 of the 126 (25%). The TCO worked example's server (8 GPUs), on-demand 2.99,
    # 3-year 2.40, 1-year 2.60, spot 0.90 listed; 36 months, no growth, discount 0 (NPV = cash).
    firm = np.full(168, 10.0)
    firm[:126] = 12
    interruptible = np.zeros(168)
    interruptible[:42] = 4
    study = worked_study()
    options = options_from_study(
        study,
        horizon_months=36,
        committed_3y=commitment_option(3, source="quote", effective_per_gpu_hour=D("2.40")),
        committed_1y=commitment_option(1, source="quote", effective_per_gpu_hour=D("2.60")),
        spot=spot_option(D("0.90"), source="catalog"),
    )
    mix = StatusQuoMix((StatusQuoCategory("on_demand", 1000.0, D("2.99")),))
    plan = capacity_plan(
        inputs(options, firm=firm, interruptible=interruptible, horizon=36, growth=[1, 1, 1], status_quo=mix)
    )
    # spot: overhead = 0.0563 / 0.25 + (0.25 / 2 + 0.173) x (-ln 0.75 / 730) = 0.225317; 0.9 x 1.225317
    assert options.spot.effective_price_per_gpu_hour == D("1.102786")
    # server a month: energy 10.2 kW x 0.7 x 1.58 x 730 x 0.10 = 823.5276, colocation 10.2 x 184 = 1,876.80,
    # maintenance 300,000 x 0.10 / 12 = 2,500, staff 0.1 x 150,000 / 12 = 1,250: 6,450.3276
    running = D("823.5276") + D("1876.8") + D("2500") + D("1250")
    server_total = D("305000") + 36 * running - D("60000")  # capex, 36 months, residual 20% of 300,000
    assert cents(server_total) == D("477211.79")  # per GPU-year: / 8 / 3 = 19,883.82 (break-even 75.9%)
    assert (plan.owned_servers, plan.committed_3y_units, plan.committed_1y_units_by_year) == (1, 2, (0, 0, 0))
    # layers listed from the stack's base: commitments, owned servers, then the market
    assert _kinds(plan) == ["committed_3y", "owned", "spot", "on_demand"]
    assert [layer.share_of_demand for layer in plan.layers] == pytest.approx([0.16, 0.64, 0.08, 0.12])
    three_year = 2 * D("2.40") * 8760 * 3  # slices 9-10 (used every hour): 21,024 a GPU-year < 26,192.40
    on_demand_cost = 2 * D("0.75") * 8760 * D("2.99") * 3  # slices 11-12 at 75%: 19,644.30 < 19,883.82
    spot_cost = 4 * D("0.25") * 8760 * D("1.102786") * 3  # slices 13-16, interruptible at 25%
    assert cents(plan.total_cost) == cents(server_total + three_year + on_demand_cost + spot_cost)
    assert cents(plan.total_cost) == D("750202.81")
    # status quo: 109,500 GPU-hours a year (10 x 8760 + 2 x 6570 + 4 x 2190) x 2.99 x 3 = 982,215
    assert cents(plan.status_quo_cost) == D("982215.00")
    assert cents(plan.savings_vs_status_quo) == D("232012.19")
    # break-even: 305,000 + m x 14,033.41 (running + 3,504 + 3,274.05 + 805.03) < m x 27,283.75 from m = 24
    assert plan.break_even_month == 24
