"""The spot overhead worked out per band and read per offer (ranking/configurations.py, issue 26 "Speed")
is the per-offer figure bit for bit: same inputs, same operations, so every ranked total stays the same."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from procurement.costing.spot import BAND_MONTHLY_INTERRUPTION
from procurement.ranking.configurations import spot_overhead_by_band

bands = len(BAND_MONTHLY_INTERRUPTION)


@settings(max_examples=60, deadline=None)
@given(
    offer_bands=st.lists(st.integers(0, bands - 1), min_size=1, max_size=3000),
    write_hours=st.floats(min_value=1e-6, max_value=0.24),
    restart_hours=st.floats(min_value=0.0, max_value=5.0),
)
def test_it_gives_each_offer_its_bands_overhead_exactly(offer_bands, write_hours, restart_hours):
    band = np.array(offer_bands)
    per_offer = spot_overhead_by_band(band, write_hours, restart_hours)
    per_band = spot_overhead_by_band(np.arange(bands), write_hours, restart_hours)[band]
    assert np.array_equal(per_offer, per_band)
