"""Future dates: a price or FX rate dated beyond a day of clock skew is refused, naming the field."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest
from django.core.exceptions import ValidationError
from django.utils import timezone

from pricing.catalog import CatalogError, _load_fx_rates
from pricing.ingest import ingest_price_records
from pricing.models import FxRate, PriceObservation
from pricing.providers.records import InstanceTypeRecord, PriceRecord, SourceRowError

pytestmark = pytest.mark.django_db
P5 = InstanceTypeRecord(provider="aws", name="p5.48xlarge", gpu_name="H100", gpu_count=Decimal(8))


def on_demand(price: str, at: dt.datetime, line: int = 2) -> PriceRecord:
    return PriceRecord(
        instance=P5,
        region="us-east-1",
        zone="",
        pricing_model="on_demand",
        price_per_hour=Decimal(price),
        currency="USD",
        observed_at=at,
        source="file:prices.csv",
        location=f"prices.csv:{line}",
    )


def test_a_price_dated_9999_is_refused_naming_observed_at_and_nothing_is_stored():
    now = timezone.now()
    records = [
        on_demand("30", now - dt.timedelta(hours=1)),
        on_demand("0.01", dt.datetime(9999, 12, 31, tzinfo=dt.UTC), 3),
    ]
    with pytest.raises(SourceRowError) as caught:
        ingest_price_records(records)
    assert caught.value.field == "observed_at"
    assert str(caught.value).startswith("prices.csv:3: column 'observed_at': 9999-12-31")
    assert PriceObservation.objects.count() == 0


def test_a_price_within_the_clock_skew_allowance_is_accepted():
    result = ingest_price_records([on_demand("30", timezone.now() + dt.timedelta(hours=23))])
    assert result.inserted == 1


def test_a_price_just_past_one_day_ahead_is_refused():
    with pytest.raises(SourceRowError, match="observed_at"):
        ingest_price_records([on_demand("30", timezone.now() + dt.timedelta(days=1, minutes=5))])


def _fx_file(tmp_path, *rows: str):
    path = tmp_path / "fx_rates.csv"
    path.write_text("currency,base,rate,as_of,source\n" + "".join(f"{row}\n" for row in rows))
    return path


def test_a_bundled_fx_rate_dated_9999_is_a_catalog_error_naming_as_of(tmp_path):
    path = _fx_file(tmp_path, "CNY,USD,0.14,2026-11-01,test", "CNY,USD,7.15,9999-01-01,forged")
    with pytest.raises(CatalogError) as caught:
        _load_fx_rates(path)
    assert str(caught.value).startswith(f"{path}:3: column 'as_of': 9999-01-01 is in the future")


def test_an_fx_rate_edited_to_a_future_date_fails_validation_on_as_of():
    rate = FxRate(currency="CNY", base="USD", rate=Decimal("0.14"), as_of=dt.date(9999, 1, 1), source="admin")
    with pytest.raises(ValidationError) as caught:
        rate.full_clean()
    assert list(caught.value.message_dict) == ["as_of"]
    rate.as_of = timezone.now().date()
    rate.full_clean()  # today is fine
