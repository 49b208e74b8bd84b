"""Commitments: effective hourly, break-even utilization and the cheapest commit-plus-burst mix."""

from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from procurement.costing.commitments import (
    break_even_utilization,
    cheapest_commitment_mix,
    discount_against,
    effective_hourly,
)
from procurement.costing.values import CostInputError

D = Decimal


def test_it_spreads_the_upfront_payment_over_the_term_hours():
    # 1 year = 8760 h: 1.5 + 8760 / 8760 = 2.5; 3 years = 26280 h: 0 + 26280 / 26280 = 1
    assert effective_hourly(recurring_per_hour=D("1.5"), upfront=D(8760), term_years=1) == D("2.5")
    assert effective_hourly(recurring_per_hour=D(0), upfront=D(26280), term_years=3) == D(1)


def test_it_puts_break_even_utilization_at_one_minus_the_discount():
    # effective 2.4 against on-demand 4: discount 40%, so the commitment pays above 60% utilization
    assert discount_against(effective_per_hour=D("2.4"), on_demand_per_hour=D(4)) == D("0.4")
    assert break_even_utilization(effective_per_hour=D("2.4"), on_demand_per_hour=D(4)) == D("0.6")


def test_it_commits_to_the_floor_when_the_peaks_are_too_rare():
    # demand [2,2,4,4,4,6,2,2], u* = 0.6: levels 3-4 are used 4/8 = 50% of periods < 60%, so k = 2 (the floor).
    # committed 2 x 8 x 0.6 = 9.6; burst (2+2+2+4) x 1.0 = 10 -> 19.6; all on demand 26 x 1.0 = 26
    mix = cheapest_commitment_mix(
        demand_gpus=[2, 2, 4, 4, 4, 6, 2, 2],
        period_hours=D(1),
        committed_per_gpu_hour=D("0.6"),
        on_demand_per_gpu_hour=D("1.0"),
    )
    assert (mix.committed_gpus, mix.total, mix.all_burst_cost, mix.savings) == (
        2,
        D("19.6"),
        D("26.0"),
        D("6.4"),
    )


def test_it_commits_above_the_floor_when_the_extra_gpus_are_busy_often_enough():
    # u* = 0.4: levels 3-4 used 50% >= 40% -> k = 4: 4 x 8 x 0.4 = 12.8 + burst 2 x 1.0 = 14.8
    # (k = 2: 6.4 + 10 = 16.4, the floor's total; k = 3: 9.6 + 6 = 15.6; k = 5: 16 + 1 = 17)
    mix = cheapest_commitment_mix(
        demand_gpus=[2, 2, 4, 4, 4, 6, 2, 2],
        period_hours=D(1),
        committed_per_gpu_hour=D("0.4"),
        on_demand_per_gpu_hour=D("1.0"),
    )
    assert (mix.committed_gpus, mix.total, mix.floor_gpus, mix.floor_total) == (4, D("14.8"), 2, D("16.4"))


def test_it_bursts_on_spot_when_spot_is_cheaper():
    # burst at 0.3 spot: k = 2 gives 9.6 + 10 x 0.3 = 12.6; k = 0 gives 26 x 0.3 = 7.8, the cheapest
    mix = cheapest_commitment_mix(
        demand_gpus=[2, 2, 4, 4, 4, 6, 2, 2],
        period_hours=D(1),
        committed_per_gpu_hour=D("0.6"),
        on_demand_per_gpu_hour=D("1.0"),
        spot_per_gpu_hour=D("0.3"),
    )
    assert (mix.committed_gpus, mix.total) == (0, D("7.8"))


def test_it_names_a_bad_demand_period():
    with pytest.raises(CostInputError) as error:
        cheapest_commitment_mix(
            demand_gpus=[1, -2], period_hours=D(1), committed_per_gpu_hour=D(1), on_demand_per_gpu_hour=D(2)
        )
    assert error.value.field == "demand_gpus[1]"


@given(
    demand=st.lists(st.integers(min_value=0, max_value=16), min_size=1, max_size=48),
    committed=st.decimals(min_value=D("0.01"), max_value=D(5), places=2),
    on_demand=st.decimals(min_value=D("0.01"), max_value=D(5), places=2),
)
def test_it_never_costs_more_than_no_commitment_or_the_floor(demand, committed, on_demand):
    mix = cheapest_commitment_mix(
        demand_gpus=demand,
        period_hours=D(1),
        committed_per_gpu_hour=committed,
        on_demand_per_gpu_hour=on_demand,
    )
    assert mix.total <= mix.all_burst_cost
    assert mix.total <= mix.floor_total
