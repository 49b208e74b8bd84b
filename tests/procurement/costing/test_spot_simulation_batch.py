"""The batched spot wall-clock simulation (issue 26, "Speed") gives exactly the figures of one run per
input: the same seeded draws per trial, the same arithmetic, the same quantiles (bit for bit, not
approximately)."""

from dataclasses import replace
from decimal import Decimal

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from procurement.costing import spot_simulation
from procurement.costing.spot_simulation import (
    SpotSimulationInput,
    _wall_hours_and_interruptions,
    _wall_key,
    simulate_spot_job,
    simulate_wall_hours,
    simulate_wall_hours_many,
    sorted_percentiles,
    sorted_wall_hours_many,
    standard_exponentials,
)
from procurement.ranking import deadline
from tests.reference.spot_wall_hours import (
    quantiles_one_by_one,
    spot_job_on_its_own_generator,
    wall_hours_one_by_one,
)


@pytest.fixture(scope="module")
def monkeypatch_window():
    """WINDOW = 0 for one test (a module-scoped fixture: hypothesis runs the test many times)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(spot_simulation, "WINDOW", 0)
        yield


def _decimal(value: float) -> Decimal:
    return Decimal(repr(value))


inputs = st.builds(
    lambda work, rate, interval, write, restart, trials, seed: SpotSimulationInput(
        work_hours=_decimal(work),
        rate_per_hour=_decimal(rate),
        interval_hours=_decimal(interval),
        checkpoint_write_hours=_decimal(write),
        restart_hours=_decimal(restart),
        spot_price_per_hour=Decimal(1),
        trials=trials,
        seed=seed,
    ),
    work=st.floats(min_value=0.01, max_value=400.0),
    rate=st.one_of(st.just(0.0), st.floats(min_value=1e-6, max_value=0.3)),
    interval=st.floats(min_value=0.05, max_value=2.0),
    write=st.floats(min_value=0.0, max_value=0.05),
    restart=st.floats(min_value=0.0, max_value=0.5),
    trials=st.sampled_from([1, 7, 300, 2000]),
    seed=st.sampled_from([0, 0, 3, 2**31]),
)


@settings(max_examples=60, deadline=None)
@given(specs=st.lists(inputs, min_size=1, max_size=12))
def test_it_gives_each_input_exactly_its_own_runs_hours(specs):
    batched = simulate_wall_hours_many(specs)
    for one, many in zip(wall_hours_one_by_one(specs), batched, strict=True):
        assert np.array_equal(one, many)


@settings(max_examples=40, deadline=None)
@given(spec=inputs, price=st.floats(min_value=0.01, max_value=90.0), instances=st.integers(1, 4))
def test_a_spot_job_without_history_reads_exactly_its_own_generators_draws(spec, price, instances):
    """simulate_spot_job without a price history reads the seed's shared stream, round one in sorted
    order (costing/spot_simulation.py): every trial's hours and interruptions are those of the round-by-
    round loop on its own generator, so P50/P90 hours and cost and the mean interruptions are too."""
    spec = replace(spec, spot_price_per_hour=_decimal(price), instances=instances)
    wall, interruptions = spot_job_on_its_own_generator(spec)
    (shared_wall,), (shared_interruptions,) = _wall_hours_and_interruptions([_wall_key(spec)], spec.seed)
    assert np.array_equal(shared_wall, wall)
    assert np.array_equal(shared_interruptions, interruptions)
    result = simulate_spot_job(spec)
    cost = wall * float(spec.spot_price_per_hour) * instances
    (p50_hours, p90_hours), (p50_cost, p90_cost) = np.percentile([wall, cost], [50, 90], axis=1).T
    assert (result.p50_hours, result.p90_hours, result.p50_cost, result.p90_cost) == tuple(
        _decimal(float(q)) for q in (p50_hours, p90_hours, p50_cost, p90_cost)
    )
    assert result.mean_interruptions == _decimal(float(interruptions.mean()))


def test_round_one_finds_the_interrupted_trials_at_the_edge_of_a_draw():
    """A job whose uninterrupted time equals one trial's first draw exactly: that trial finishes (draw >=
    needed), the trials with a smaller draw are interrupted, as in the round-by-round loop."""
    stream = np.random.default_rng(5).standard_exponential(300)
    rate = 0.01
    work = float(np.sort(stream)[40] * (1 / rate))  # the 41st smallest draw, in hours
    spec = SpotSimulationInput(
        work_hours=_decimal(work),
        rate_per_hour=_decimal(rate),
        interval_hours=_decimal(work * 2),  # one segment: needed = work, no checkpoint write
        checkpoint_write_hours=Decimal(0),
        restart_hours=_decimal(0.25),
        spot_price_per_hour=Decimal(1),
        trials=300,
        seed=5,
    )
    wall, interruptions = spot_job_on_its_own_generator(spec)
    (shared_wall,), (shared_interruptions,) = _wall_hours_and_interruptions([_wall_key(spec)], 5)
    assert np.array_equal(shared_wall, wall) and np.array_equal(shared_interruptions, interruptions)
    assert int((interruptions > 0).sum()) >= 40  # the 40 smaller draws at least were interrupted


@settings(max_examples=200, deadline=None)
@given(
    values=st.lists(
        st.one_of(st.floats(min_value=0.0, max_value=1e6), st.sampled_from([0.0, 1.5, 7.25])),
        min_size=1,
        max_size=2500,
    ),
    percents=st.lists(
        st.one_of(st.sampled_from([0, 50, 90, 100]), st.floats(min_value=0.0, max_value=100.0)),
        min_size=1,
        max_size=4,
    ),
)
def test_percentiles_read_off_sorted_values_are_numpys(values, percents):
    """The wall clocks' and the spot object's quantiles are read off memoized sorted hours: the same
    floats ``np.percentile`` (method "linear") gives on the unsorted trials, ties and ends included."""
    array = np.array(values)
    assert sorted_percentiles(np.sort(array), percents) == tuple(
        float(q) for q in np.percentile(array, percents)
    )


@settings(max_examples=30, deadline=None)
@given(specs=st.lists(inputs, min_size=1, max_size=6))
def test_the_memoized_sorted_hours_are_each_inputs_own_runs(specs):
    for walls, one in zip(sorted_wall_hours_many(specs), wall_hours_one_by_one(specs), strict=True):
        assert np.array_equal(walls.hours, np.sort(one))


@settings(max_examples=15, deadline=None)
@given(specs=st.lists(inputs, min_size=1, max_size=6))
def test_round_one_counts_every_value_where_the_window_does_not_settle_it(specs, monkeypatch_window):
    """With no values checked around the binary search's answer, round one falls back on comparing every
    value (the path a quotient far off its products would take): the same hours."""
    for one, many in zip(wall_hours_one_by_one(specs), simulate_wall_hours_many(specs), strict=True):
        assert np.array_equal(one, many)


def test_the_seed_stream_drawn_in_pieces_is_the_stream_drawn_at_once():
    at_once = np.random.default_rng(11).standard_exponential(50_000)
    assert np.array_equal(standard_exponentials(11, 10)[:10], at_once[:10])
    assert np.array_equal(standard_exponentials(11, 50_000)[:50_000], at_once)
    # and rng.exponential(scale, n) is scale times those values, the identity the batch rests on
    assert np.array_equal(
        np.random.default_rng(11).exponential(1 / 0.003, 2000), at_once[:2000] * (1 / 0.003)
    )


def test_a_deadline_wall_clock_is_the_quantiles_of_its_own_simulation():
    """Rows of a ranking simulated together, against each simulated alone (an assumed band also reads
    the worst band: the larger P90 and deadline quantile)."""
    keys = [
        (hours, band, known, 1 / 3600, 0.126056, 2000, 0, 0.9)
        for hours, band, known in [(3.5, 0, True), (41.25, 2, True), (41.25, 1, False), (120.0, 4, True)]
    ]
    deadline._wall_clocks.clear()
    clocks = deadline.wall_clocks(keys)
    worst = deadline.band_interruption_rate_per_hour(len(deadline.BAND_LABELS) - 1)
    for (hours, band, known, write, restart, trials, seed, probability), clock in zip(
        keys, clocks, strict=True
    ):
        rate = deadline.band_interruption_rate_per_hour(band)
        interval = deadline.spot_economics(
            spot_price_per_hour=Decimal(0),
            rate_per_hour=rate,
            checkpoint_write_hours=_decimal(write),
            restart_hours=_decimal(restart),
        ).interval_hours
        alone = [
            simulate_wall_hours(
                SpotSimulationInput(
                    work_hours=_decimal(hours),
                    rate_per_hour=r,
                    interval_hours=interval,
                    checkpoint_write_hours=_decimal(write),
                    restart_hours=_decimal(restart),
                    spot_price_per_hour=Decimal(0),
                    trials=trials,
                    seed=seed,
                )
            )
            for r in ([rate] if known else [rate, worst])
        ]
        quantiles = quantiles_one_by_one(alone, probability)
        p50, p90, at = quantiles[0]
        if not known:
            p90, at = max(p90, quantiles[1][1]), max(at, quantiles[1][2])
        assert (clock.p50_hours, clock.p90_hours, clock.at_probability_hours) == (
            round(p50, 3),
            round(p90, 3),
            round(at, 3),
        )
    assert deadline.wall_clocks(keys) == clocks  # and the memo answers the same
