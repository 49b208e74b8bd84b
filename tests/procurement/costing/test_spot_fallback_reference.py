"""The batched, cached deadline plan gives exactly the plan of the one-reserve-at-a-time reference."""

from dataclasses import replace

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from procurement.costing.spot_fallback import FallbackInput, deadline_plan, simulate_policy, simulate_reserves
from tests.procurement.costing.reference_spot_fallback import (
    reference_deadline_plan,
    reference_simulate_policy,
)

BASE = FallbackInput(
    work_hours=20.0,
    deadline_hours=24.0,
    rate_per_hour=0.5,
    interval_hours=0.25,
    checkpoint_write_hours=0.01,
    restart_hours=0.2,
    spot_price_per_hour=1.0,
    on_demand_price_per_hour=3.0,
    trials=300,
)


@settings(max_examples=60, deadline=None)
@given(
    work=st.floats(0.5, 60.0),
    slack=st.floats(0.0, 2.0),
    rate=st.sampled_from([0.0, 0.01, 0.05, 0.2, 0.5, 1.5]),
    interval=st.floats(0.05, 2.0),
    write=st.floats(0.0, 0.1),
    restart=st.floats(0.0, 0.5),
    spot=st.floats(0.1, 5.0),
    on_demand=st.floats(0.5, 10.0),
    instances=st.integers(1, 4),
    probability=st.floats(0.5, 1.0),
    trials=st.integers(1, 300),
    seed=st.integers(0, 2**16),
)
def test_the_plan_equals_the_reference_exactly(
    work, slack, rate, interval, write, restart, spot, on_demand, instances, probability, trials, seed
):
    spec = FallbackInput(
        work_hours=work,
        deadline_hours=work * (1.0 + slack) + 0.01,
        rate_per_hour=rate,
        interval_hours=interval,
        checkpoint_write_hours=write,
        restart_hours=restart,
        spot_price_per_hour=spot,
        on_demand_price_per_hour=on_demand,
        instances=instances,
        probability=probability,
        trials=trials,
        seed=seed,
    )
    assert deadline_plan(spec) == reference_deadline_plan(spec)  # every field, bit for bit


@settings(max_examples=30, deadline=None)
@given(rate=st.sampled_from([0.0, 0.1, 0.5, 2.0]), reserve=st.floats(0.0, 1.0), seed=st.integers(0, 1000))
def test_each_reserve_simulated_together_equals_it_simulated_alone(rate, reserve, seed):
    spec = replace(BASE, rate_per_hour=rate, seed=seed)
    together = simulate_reserves(spec, (0.0, reserve, 0.26))
    for k, hours in enumerate((0.0, reserve, 0.26)):
        alone = reference_simulate_policy(spec, hours)
        for key in ("finish", "spot_hours", "od_hours", "switched"):
            assert np.array_equal(together[key][k], alone[key]), key
    assert all(
        np.array_equal(simulate_policy(spec, reserve)[k], reference_simulate_policy(spec, reserve)[k])
        for k in ("finish", "spot_hours", "od_hours", "switched")
    )


def test_rows_that_share_hours_and_band_reuse_one_simulation():
    from procurement.costing.spot_fallback import _reserve_runs

    _reserve_runs.cache_clear()
    first = deadline_plan(BASE)
    cheaper_elsewhere = deadline_plan(replace(BASE, spot_price_per_hour=0.8, on_demand_price_per_hour=2.5))
    info = _reserve_runs.cache_info()
    assert (info.misses, info.hits) == (1, 1)  # prices differ, the simulation is shared
    assert cheaper_elsewhere.expected_cost < first.expected_cost
    assert cheaper_elsewhere == reference_deadline_plan(
        replace(BASE, spot_price_per_hour=0.8, on_demand_price_per_hour=2.5)
    )
