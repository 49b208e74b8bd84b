"""Properties of the spot Monte Carlo over resampled price paths: P90 >= P50, and cost quantiles are
linear in the price level (the run lengths do not depend on prices)."""

from decimal import Decimal

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from procurement.costing.spot_simulation import MIN_HISTORY_HOURS, SpotSimulationInput, simulate_spot_job

prices = st.floats(min_value=0.01, max_value=50.0, allow_nan=False)
histories = st.lists(prices, min_size=MIN_HISTORY_HOURS, max_size=24 * 10)


def _spec(history, *, work_hours, rate, seed):
    return SpotSimulationInput(
        work_hours=Decimal(repr(work_hours)),
        rate_per_hour=Decimal(repr(rate)),
        interval_hours=Decimal("0.5"),
        checkpoint_write_hours=Decimal("0.02"),
        restart_hours=Decimal("0.1"),
        spot_price_per_hour=Decimal(2),
        price_history_per_hour=np.array(history),
        trials=300,
        seed=seed,
    )


@settings(max_examples=40, deadline=None)
@given(
    history=histories,
    work_hours=st.floats(min_value=0.1, max_value=300.0),
    rate=st.floats(min_value=0.0, max_value=0.2),
    seed=st.integers(min_value=0, max_value=2**32),
)
def test_it_never_puts_p90_below_p50(history, work_hours, rate, seed):
    result = simulate_spot_job(_spec(history, work_hours=work_hours, rate=rate, seed=seed))
    assert result.p90_cost >= result.p50_cost and result.p90_hours >= result.p50_hours
    # every hour costs between the history's cheapest and dearest price
    assert min(history) * float(result.p50_hours) * (1 - 1e-9) <= float(result.p50_cost)


@settings(max_examples=40, deadline=None)
@given(
    history=histories,
    multiplier=st.floats(min_value=0.1, max_value=10.0),
    work_hours=st.floats(min_value=0.1, max_value=300.0),
    rate=st.floats(min_value=0.0, max_value=0.2),
    seed=st.integers(min_value=0, max_value=2**32),
)
def test_it_scales_the_cost_quantiles_with_the_price_level(history, multiplier, work_hours, rate, seed):
    base = simulate_spot_job(_spec(history, work_hours=work_hours, rate=rate, seed=seed))
    scaled = simulate_spot_job(
        _spec([p * multiplier for p in history], work_hours=work_hours, rate=rate, seed=seed)
    )
    assert float(scaled.p50_cost) == pytest.approx(float(base.p50_cost) * multiplier, rel=1e-9)
    assert float(scaled.p90_cost) == pytest.approx(float(base.p90_cost) * multiplier, rel=1e-9)
    assert scaled.p90_hours == base.p90_hours
