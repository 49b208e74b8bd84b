"""Ingest: idempotent by natural key, all or nothing, guard rails (suspect, rejected, unknown currency)."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest

from pricing.choices import PriceStatus
from pricing.ingest import ingest_price_records
from pricing.models import FxRate, Offer, PriceObservation
from pricing.providers.records import InstanceTypeRecord, PriceRecord, SourceRowError
from pricing.selectors import current_price_observations

pytestmark = pytest.mark.django_db
T0 = dt.datetime(2026, 11, 1, tzinfo=dt.UTC)
P5 = InstanceTypeRecord(provider="aws", name="p5.48xlarge", gpu_name="H100", gpu_count=Decimal(8))


def spot(price: str, hour: int = 0, zone: str = "use1-az4", instance=P5, currency="USD") -> PriceRecord:
    return PriceRecord(
        instance=instance,
        region="us-east-1",
        zone=zone,
        pricing_model="spot",
        price_per_hour=Decimal(price),
        currency=currency,
        observed_at=T0 + dt.timedelta(hours=hour),
        source="aws:describe_spot_price_history",
        location=f"test:{hour}",
    )


def test_it_inserts_once_and_reports_the_rerun_as_unchanged():
    records = [spot("30.1", 0), spot("31.2", 1), spot("29.9", 1, zone="use1-az6")]
    first = ingest_price_records(records)
    second = ingest_price_records(records)
    assert (first.seen, first.inserted, first.unchanged) == (3, 3, 0)
    assert (second.seen, second.inserted, second.unchanged) == (3, 0, 3)
    assert PriceObservation.objects.count() == 3
    assert Offer.objects.count() == 2  # one per zone
    stored = PriceObservation.objects.get(offer__zone="use1-az4", observed_at=T0 + dt.timedelta(hours=1))
    assert (stored.amount_per_hour, stored.currency, stored.status) == (Decimal("31.2"), "USD", "published")


def test_it_collapses_duplicate_keys_within_one_batch():
    result = ingest_price_records([spot("30.1", 0), spot("30.1", 0)])
    assert (result.inserted, result.unchanged) == (1, 1)


def test_it_holds_back_a_price_over_five_times_its_current_one():
    ingest_price_records([spot("10", 0)])
    result = ingest_price_records([spot("50.000001", 1), spot("49.99", 2, zone="use1-az6"), spot("1.9", 3)])
    # use1-az4: current 10 → 50.000001 (> 5×) suspect; 1.9 (< 10/5 = 2) suspect.
    # use1-az6 is new: its reference is its own batch median (49.99), so it is published.
    assert (result.inserted, result.suspect) == (3, 2)
    statuses = dict(PriceObservation.objects.values_list("amount_per_hour", "status"))
    assert statuses == {
        Decimal("10"): "published",
        Decimal("50.000001"): "suspect",
        Decimal("49.99"): "published",
        Decimal("1.9"): "suspect",
    }
    current = current_price_observations(offer__zone="use1-az4").get()
    assert current.amount_per_hour == Decimal("10")  # suspect prices are not current


def test_it_accepts_a_price_at_exactly_five_times():
    ingest_price_records([spot("10", 0)])
    assert ingest_price_records([spot("50", 1), spot("2", 2)]).suspect == 0


def test_it_flags_a_lone_outlier_in_a_first_batch_against_the_batch_median():
    result = ingest_price_records([spot("1.0", h) for h in range(5)] + [spot("0.00001", 6)])
    assert result.suspect == 1
    assert PriceObservation.objects.get(status=PriceStatus.SUSPECT).amount_per_hour == Decimal("0.00001")


def test_it_rejects_and_counts_a_price_that_is_not_above_zero():
    result = ingest_price_records([spot("0", 0), spot("-1", 1), spot("2.5", 2)])
    assert (result.seen, result.rejected, result.inserted) == (3, 2, 1)
    assert not PriceObservation.objects.filter(amount_per_hour__lte=0).exists()


def test_it_refuses_a_currency_without_an_fx_rate_and_stores_nothing():
    with pytest.raises(SourceRowError, match="unknown currency 'CNY'") as error:
        ingest_price_records([spot("2.5", 0), spot("1.98", 1, currency="CNY")])
    assert (error.value.location, error.value.field) == ("test:1", "currency")
    assert not PriceObservation.objects.exists() and not Offer.objects.exists()
    FxRate.objects.create(currency="CNY", base="USD", rate=Decimal("0.14"), as_of=T0.date(), source="test")
    assert ingest_price_records([spot("1.98", 1, currency="CNY")]).inserted == 1


def test_it_leaves_the_database_unchanged_when_the_source_fails_half_way():
    ingest_price_records([spot("10", 0)])

    def failing_source():
        yield spot("11", 1)
        yield spot("12", 2)
        raise ConnectionError("source dropped half-way")

    with pytest.raises(ConnectionError):
        ingest_price_records(failing_source())
    assert list(PriceObservation.objects.values_list("amount_per_hour", flat=True)) == [Decimal("10")]
    assert current_price_observations().get().amount_per_hour == Decimal("10")
