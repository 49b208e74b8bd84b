"""The bad-data rules of every live refresh (pricing/price_checks.py), one test per rule."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

from hypothesis import given
from hypothesis import strategies as st

from pricing.price_checks import (
    ABSURD,
    CURRENCY,
    MAX_EXAMPLES,
    NOT_POSITIVE,
    REGION,
    CheckContext,
    Refusals,
    price_records_screen,
)
from pricing.providers.records import InstanceTypeRecord, PriceRecord

NOW = dt.datetime(2026, 12, 3, tzinfo=dt.UTC)
CONTEXT = CheckContext(currencies=frozenset({"USD", "CNY"}))


def record(price, *, gpus=1, region="eastus", currency="USD", provider="azure", model="on_demand", name="NC"):
    instance = InstanceTypeRecord(provider=provider, name=name, gpu_name="A100", gpu_count=Decimal(gpus))
    return PriceRecord(
        instance=instance,
        region=region,
        zone="",
        pricing_model=model,
        price_per_hour=Decimal(str(price)),
        currency=currency,
        observed_at=NOW,
        source="test",
        location=f"row {price} {region}",
    )


def screen(records, context=CONTEXT):
    refusals = Refusals()
    kept = price_records_screen(records, context, refusals)
    return kept, refusals


def test_a_zero_or_negative_price_is_refused():
    kept, refusals = screen([record(-3.673), record(0), record(3.673)])
    assert refusals.counts == {NOT_POSITIVE: 2} and [r.price_per_hour for r in kept] == [Decimal("3.673")]


def test_a_price_over_ten_times_its_family_median_per_gpu_hour_is_refused():
    # per GPU-hour: 3.673, 3.673 (7.346 / 2), 3.673 (14.692 / 4), 367.3: median 3.673, limit 36.73
    rows = [record(3.673), record(7.346, gpus=2), record(14.692, gpus=4), record(367.3, region="westus2")]
    kept, refusals = screen(rows)
    assert refusals.counts == {ABSURD: 1} and "367.3" in refusals.examples[ABSURD][0]
    assert len(kept) == 3


def test_ten_times_the_median_exactly_is_kept():
    kept, refusals = screen([record(1), record(1), record(10)])
    assert refusals.total == 0 and len(kept) == 3


def test_known_prices_count_in_the_median_so_a_lone_row_is_judged_too():
    # a refresh with one H100 row at 400 $/GPU-h against three current prices near 12: refused
    known = {("azure", "A100", "on_demand", "USD"): [12.29, 12.0, 12.5]}
    kept, refusals = screen([record(400)], CheckContext(frozenset({"USD"}), known))
    assert (kept, refusals.counts) == ([], {ABSURD: 1})
    kept, _ = screen([record(400)])  # with nothing known, one row is its own median
    assert len(kept) == 1


def test_families_are_separate_per_pricing_model_and_currency():
    # a reservation's all-upfront effective price is not judged against spot prices
    rows = [record(1.0, model="spot"), record(1.1, model="spot"), record(30.0, model="reserved_1y")]
    kept, refusals = screen(rows)
    assert refusals.total == 0 and len(kept) == 3


def test_a_currency_without_an_fx_rate_is_refused():
    kept, refusals = screen([record(3.38, currency="EUR"), record(25, currency="CNY")])
    assert refusals.counts == {CURRENCY: 1} and "'EUR'" in refusals.examples[CURRENCY][0]
    assert [r.currency for r in kept] == ["CNY"]


def test_a_region_the_provider_does_not_document_is_refused():
    kept, refusals = screen([record(3.673, region="marsnorth"), record(3.673, region="eastus")])
    assert refusals.counts == {REGION: 1} and [r.region for r in kept] == ["eastus"]
    # providers without a documented list (bundled catalogs, imported files) are not region-checked
    kept, refusals = screen([record(1, provider="cudo", region="anywhere-1")])
    assert refusals.total == 0


def test_examples_are_kept_a_few_per_reason():
    _, refusals = screen([record(-i - 1) for i in range(12)])
    assert refusals.counts[NOT_POSITIVE] == 12 and len(refusals.examples[NOT_POSITIVE]) == MAX_EXAMPLES
    assert refusals.as_json()[NOT_POSITIVE]["count"] == 12


@given(st.lists(st.decimals(min_value="0.01", max_value="1000", places=2), min_size=1, max_size=30))
def test_no_kept_price_is_over_ten_times_the_median_of_the_kept_and_refused(prices):
    import statistics

    kept, refusals = screen([record(p) for p in prices])
    median = statistics.median(float(p) for p in prices)
    assert all(float(r.price_per_hour) <= 10 * median for r in kept)
    assert len(kept) + refusals.total == len(prices)
