"""Price quality travels with every price, and one freshness rule holds on every page."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest
from django.utils import timezone

from pricing.ingest import ingest_price_records
from pricing.models import Offer
from pricing.price_quality import (
    ILLUSTRATIVE,
    OBSERVED,
    QUOTED,
    SNAPSHOT,
    price_quality,
    quality_text,
)
from pricing.providers.records import InstanceTypeRecord, PriceRecord
from pricing.selectors import offer_frame
from pricing.spot_selectors import offer_spot_history
from scheduler.models import PriceRefresh


@pytest.mark.parametrize(
    ("source", "quality"),
    [
        ("skypilot:aws/vms.gpu.csv", SNAPSHOT),
        ("aws:describe_spot_price_history", OBSERVED),
        ("file:acme_rates.csv", QUOTED),
        ("file:autodl_cny.csv", ILLUSTRATIVE),  # the bundled made-up CNY prices (pricing/data/SOURCES.md)
    ],
)
def test_each_source_has_one_quality(source, quality):
    assert price_quality(source) == quality


def test_a_snapshot_says_its_data_date_is_unknown_and_never_an_age():
    bundled = dt.datetime(2026, 11, 30, tzinfo=dt.UTC)
    now = bundled + dt.timedelta(days=1)
    assert quality_text(SNAPSHOT, bundled, now) == "snapshot, data date unknown, bundled 2026-11-30"
    assert "old" not in quality_text(SNAPSHOT, bundled, now)
    assert quality_text(OBSERVED, bundled, now) == "observed 2026-11-30, 1 d old"


G5 = InstanceTypeRecord(provider="aws", name="g5.xlarge", gpu_name="A10G", gpu_count=Decimal(1))


def _record(price, at, zone, source, model="spot"):
    return PriceRecord(
        instance=G5,
        region="us-east-1",
        zone=zone,
        pricing_model=model,
        price_per_hour=Decimal(price),
        currency="USD",
        observed_at=at,
        source=source,
    )


@pytest.mark.django_db
def test_the_offer_page_and_the_catalog_use_one_freshness_rule():
    now = timezone.now().replace(microsecond=0)
    three_hours = now - dt.timedelta(hours=3)
    # a snapshot 3 hours old (no schedule: fresh until the 90-day limit) in one zone ...
    ingest_price_records([_record("0.40", three_hours, "use1-az1", "skypilot:aws/vms.gpu.csv")])
    # ... and a price of the hourly aws-spot refresh, 3 hours old (stale past twice its 1 h schedule)
    refresh = PriceRefresh.objects.create(source="aws-spot")
    ingest_price_records([_record("0.41", three_hours, "use1-az2", "aws:spot")], refresh=refresh)
    frame = offer_frame(gpu_mapped_only=False, now=now)
    catalog = dict(zip(frame["zone"], frame["stale"], strict=True))
    assert catalog == {"use1-az1": False, "use1-az2": True}
    assert dict(zip(frame["zone"], frame["price_quality"], strict=True)) == {
        "use1-az1": SNAPSHOT,
        "use1-az2": OBSERVED,
    }
    page = offer_spot_history(Offer.objects.get(zone="use1-az1"), now=now)
    assert {zone["zone"]: zone["stale"] for zone in page["zones"]} == catalog
    assert {zone["zone"]: zone["price_quality"] for zone in page["zones"]} == {
        "use1-az1": SNAPSHOT,
        "use1-az2": OBSERVED,
    }
