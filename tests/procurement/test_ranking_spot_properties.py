"""Properties: a higher interruption band never lowers the spot overhead or the simulated P90; more
instances never lower a job's interruption rate or the expected cost of its spot plan."""

from decimal import Decimal

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from procurement.costing.spot import band_interruption_rate_per_hour, spot_economics
from procurement.costing.spot_simulation import SpotSimulationInput, simulate_spot_job
from procurement.ranking import spot_overhead_by_band

BANDS = np.arange(5)


@given(st.floats(1 / 3600, 1.0), st.floats(0.0, 2.0))
def test_overhead_never_falls_as_the_band_rises(write_hours, restart_hours):
    overhead = spot_overhead_by_band(BANDS, write_hours, restart_hours)
    assert np.all(np.diff(overhead) >= -1e-15)


@settings(max_examples=20, deadline=None)
@given(
    st.decimals(Decimal("1"), Decimal("3000"), places=1),
    st.decimals(Decimal("0.0003"), Decimal("0.2"), places=4),
    st.decimals(Decimal("0"), Decimal("1"), places=3),
    st.integers(0, 3),
)
def test_p90_never_falls_as_the_band_rises(work_hours, write_hours, restart_hours, band):
    def p90(b):
        rate = band_interruption_rate_per_hour(b)
        economics = spot_economics(
            spot_price_per_hour=Decimal(1),
            rate_per_hour=rate,
            checkpoint_write_hours=write_hours,
            restart_hours=restart_hours,
        )
        result = simulate_spot_job(
            SpotSimulationInput(
                work_hours=work_hours,
                rate_per_hour=rate,
                interval_hours=economics.interval_hours,
                checkpoint_write_hours=write_hours,
                restart_hours=restart_hours,
                spot_price_per_hour=Decimal(1),
                trials=2000,
            )
        )
        return result.p90_hours, result.p90_cost

    lower, higher = p90(band), p90(band + 1)
    assert higher[0] >= lower[0] and higher[1] >= lower[1]


# A job on N instances stops when any one is reclaimed: lambda = N r (independent reclaims, costing/spot.py).
# The overhead at the chosen interval, C / tau + (tau / 2 + R) lambda, grows with lambda at a fixed tau and
# at Young/Daly's optimum (its derivative in lambda is tau / 2 + R > 0), so the expected cost of the same work
# (instance-hours W, spread over N instances) on spot, price x (1 + overhead) x W, never falls as N grows.
@given(
    st.integers(0, 4),
    st.decimals(Decimal("0.0003"), Decimal("0.2"), places=4),
    st.decimals(Decimal("0"), Decimal("2"), places=3),
    st.decimals(Decimal("0"), Decimal("0.5"), places=3),
    st.integers(1, 64),
    st.integers(1, 64),
)
def test_more_instances_never_lower_the_rate_or_the_expected_cost(band, write, restart, background, n, extra):
    def economics(instances):
        return spot_economics(
            spot_price_per_hour=Decimal("2.5"),
            rate_per_hour=band_interruption_rate_per_hour(band),
            checkpoint_write_hours=write,
            restart_hours=restart,
            background_write_hours=background,
            instances=instances,
        )

    fewer, more = economics(n), economics(n + extra)
    assert more.rate_per_hour >= fewer.rate_per_hour
    assert more.rate_per_hour == (n + extra) * band_interruption_rate_per_hour(band)
    work_instance_hours = Decimal(1000)
    assert (
        more.effective_price_per_hour * work_instance_hours
        >= fewer.effective_price_per_hour * work_instance_hours
    )
    assert more.overhead >= fewer.overhead
    # the ranking's vectorized overhead (ranking/configurations.py) agrees in direction
    counts = np.array([n, n + extra])
    vector = spot_overhead_by_band(
        np.array([band, band]), float(write), float(restart), float(background), counts
    )
    assert vector[1] >= vector[0] - 1e-15
