"""Properties of the demand engine for any rows (hypothesis)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from planning.engine.demand import (
    UsageRows,
    UtilizationRows,
    demand_history,
    growth_multipliers,
    growth_trials,
    load_duration_curve,
)

PERIOD = 240  # hours 0-240


@st.composite
def rows(draw):
    count = draw(st.integers(1, 30))
    starts = draw(st.lists(st.integers(-50, PERIOD + 20), min_size=count, max_size=count))
    lengths = draw(st.lists(st.integers(0, 100), min_size=count, max_size=count))
    gpu_hours = draw(st.lists(st.floats(0.5, 5000), min_size=count, max_size=count))
    flags = draw(st.lists(st.booleans(), min_size=count, max_size=count))
    resources = draw(st.lists(st.sampled_from(["a", "b", "c", ""]), min_size=count, max_size=count))
    return UsageRows.of(
        start_hour=starts,
        end_hour=np.add(starts, lengths),
        gpu_hours=gpu_hours,
        interruptible=flags,
        resource_id=resources,
    )


def inside(usage: UsageRows) -> np.ndarray:
    ends = np.maximum(usage.end_hour, usage.start_hour + 1)
    return (usage.start_hour >= 0) & (ends <= PERIOD)


@settings(max_examples=200, deadline=None)
@given(rows())
def test_spreading_preserves_the_gpu_hours_of_rows_inside_the_period(usage):
    if not inside(usage).any():
        return
    # rows wholly inside the period keep every GPU-hour; rows crossing its edges only the part inside
    only_inside = UsageRows.of(
        start_hour=usage.start_hour[inside(usage)],
        end_hour=usage.end_hour[inside(usage)],
        gpu_hours=usage.gpu_hours[inside(usage)],
    )
    history = demand_history(only_inside, start_hour=0, end_hour=PERIOD)
    assert np.isclose(np.nansum(history.billed), only_inside.gpu_hours.sum(), rtol=1e-9)
    assert np.all(np.nan_to_num(history.billed_interruptible) <= np.nan_to_num(history.billed) + 1e-9)


@settings(max_examples=200, deadline=None)
@given(
    rows(),
    st.lists(
        st.tuples(st.sampled_from(["a", "b", "z"]), st.integers(0, PERIOD), st.floats(0, 1)), min_size=1
    ),
)
def test_busy_never_exceeds_billed_and_the_ldc_never_rises(usage, samples):
    if not inside(usage).any():
        return
    utilization = UtilizationRows.of(
        resource_id=[s[0] for s in samples], hour=[s[1] for s in samples], utilization=[s[2] for s in samples]
    )
    history = demand_history(usage, start_hour=0, end_hour=PERIOD, utilization=utilization)
    covered = history.covered
    assert np.all(history.busy[covered] <= history.billed[covered] + 1e-6)
    assert np.all(history.busy[covered] >= -1e-6)
    assert 0 <= history.utilization_coverage <= 1
    curve = load_duration_curve(history.billed)
    assert len(curve) == history.covered_hours
    assert np.all(np.diff(curve) <= 0)


@given(st.integers(1, 120))
def test_growth_of_rate_zero_is_one_everywhere(horizon):
    found = growth_multipliers(0.0, horizon_months=horizon)
    assert np.all(found.monthly == 1) and np.all(found.yearly == 1)
    assert len(found.yearly) == -(-horizon // 12)


@settings(max_examples=30, deadline=None)
@given(st.floats(-0.5, 0.5), st.integers(0, 2**32), st.integers(1, 120))
def test_seeded_trials_are_reproducible(rate, seed, horizon):
    first = growth_trials(rate, horizon_months=horizon, trials=50, seed=seed)
    assert np.array_equal(first, growth_trials(rate, horizon_months=horizon, trials=50, seed=seed))
    assert np.all(first > 0)
