"""GET /api/offers/{id}/spot-history/ and the offer page chart, on stored spot prices."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest
from django.utils import timezone

from pricing.ingest import ingest_price_records
from pricing.models import Offer
from pricing.providers.records import InstanceTypeRecord, PriceRecord

pytestmark = pytest.mark.django_db
G5 = InstanceTypeRecord(provider="aws", name="g5.xlarge", gpu_name="A10G", gpu_count=Decimal(1))


def record(price: str, at: dt.datetime, zone: str, model: str = "spot") -> PriceRecord:
    return PriceRecord(
        instance=G5,
        region="us-east-1",
        zone=zone,
        pricing_model=model,
        price_per_hour=Decimal(price),
        currency="USD",
        observed_at=at,
        source="test",
    )


@pytest.fixture
def history(monkeypatch):
    now = timezone.now().replace(microsecond=0)
    monkeypatch.setattr("pricing.spot_selectors.timezone.now", lambda: now)  # the window ends exactly here
    start = now - dt.timedelta(days=2)
    ingest_price_records(
        [
            record("1.006", now - dt.timedelta(hours=1), "", "on_demand"),
            record("0.30", start - dt.timedelta(days=5), "use1-az1"),  # carried into the window
            record("0.50", start + dt.timedelta(days=1), "use1-az1"),
            record("0.45", now - dt.timedelta(days=10), "use1-az2"),  # before the window: holds all of it
        ]
    )
    return now


def test_it_returns_time_weighted_statistics_per_zone(viewer_client, history):
    offer = Offer.objects.get(zone="use1-az1")
    response = viewer_client.get(f"/api/offers/{offer.pk}/spot-history/?days=2&below=0.4")
    assert response.status_code == 200
    body = response.json()
    assert (body["instance_type"], body["region"], body["on_demand_per_hour"]) == (
        "g5.xlarge",
        "us-east-1",
        "1.006000",
    )
    zones = {z["zone"]: z for z in body["zones"]}
    assert set(zones) == {"use1-az1", "use1-az2"}
    az1 = zones["use1-az1"]["statistics"]
    # 0.30 for day 1, 0.50 for day 2: mean 0.40; below 0.40 half the time; discount 1 − 0.40 / 1.006 = 0.6024.
    assert (az1["mean"], az1["current"], az1["min"], az1["max"]) == (
        "0.400000",
        "0.500000",
        "0.300000",
        "0.500000",
    )
    assert (az1["share_below"], az1["mean_discount"]) == ("0.5000", "0.6024")
    assert zones["use1-az2"]["statistics"]["mean"] == "0.450000"
    # no refresh schedule stands behind these prices (ingested without a refresh), so the one freshness rule
    # of every page (pricing.selectors.price_staleness) judges them by the 90-day snapshot limit: 10 days
    # and 1 day old are fresh, as the catalog and the recommendations say of the same prices
    assert zones["use1-az2"]["stale"] is False and zones["use1-az1"]["stale"] is False
    assert [p["price_per_hour"] for p in zones["use1-az1"]["points"]] == ["0.300000", "0.500000"]


@pytest.mark.parametrize(
    ("query", "field"), [("days=0", "days"), ("days=abc", "days"), ("below=-1", "below")]
)
def test_it_names_an_invalid_parameter(viewer_client, history, query, field):
    offer = Offer.objects.get(zone="use1-az1")
    response = viewer_client.get(f"/api/offers/{offer.pk}/spot-history/?{query}")
    assert response.status_code == 400 and set(response.json()) == {"errors"}  # the field's own key dropped
    assert response.json()["errors"][0]["path"] == field  # the API's one error shape


def test_it_answers_404_for_an_unknown_offer(viewer_client, db):
    assert viewer_client.get("/api/offers/999999/spot-history/").status_code == 404


def test_it_draws_the_chart_on_the_offer_page(viewer_client, history):
    offer = Offer.objects.get(zone="")
    response = viewer_client.get(f"/offers/{offer.pk}/")
    html = response.content.decode()
    assert response.status_code == 200
    assert "<svg" in html and "use1-az1" in html and "on-demand 1.0060" in html
    assert html.count("<polyline") == 2  # one line per zone
