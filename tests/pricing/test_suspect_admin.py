"""A suspect price stays out of the current prices until a person accepts it in the admin."""

import datetime as dt
from decimal import Decimal

import pytest

from pricing.ingest import ingest_price_records
from pricing.models import PriceObservation
from pricing.providers.records import InstanceTypeRecord, PriceRecord
from pricing.selectors import current_price_observations

pytestmark = pytest.mark.django_db
G5 = InstanceTypeRecord(provider="aws", name="g5.xlarge", gpu_name="A10G", gpu_count=Decimal(1))


def on_demand(price: str, day: int) -> PriceRecord:
    return PriceRecord(
        instance=G5,
        region="us-east-1",
        zone="",
        pricing_model="on_demand",
        price_per_hour=Decimal(price),
        currency="USD",
        observed_at=dt.datetime(2026, 11, day, tzinfo=dt.UTC),
        source="test",
    )


def test_it_publishes_a_suspect_price_only_once_accepted(admin_client):
    ingest_price_records([on_demand("1.006", 1)])
    ingest_price_records([on_demand("10.06", 2)])  # 10× the current price: held back
    suspect = PriceObservation.objects.get(status="suspect")
    assert current_price_observations().get().amount_per_hour == Decimal("1.006")
    listing = admin_client.get("/admin/pricing/priceobservation/?status__exact=suspect")
    assert listing.status_code == 200 and "10.06" in listing.content.decode()
    response = admin_client.post(
        "/admin/pricing/priceobservation/",
        {"action": "accept_suspect_prices", "_selected_action": [suspect.pk]},
        follow=True,
    )
    assert "1 suspect price(s) accepted" in response.content.decode()
    assert current_price_observations().get().amount_per_hour == Decimal("10.06")


def test_only_the_accept_permission_publishes_a_suspect_price(client, user_with_role):
    """Seeing prices in the admin (a view-only staff user) is not enough to publish a held-back one."""
    from django.contrib.auth.models import Permission

    ingest_price_records([on_demand("1.006", 1)])
    ingest_price_records([on_demand("10.06", 2)])
    suspect = PriceObservation.objects.get(status="suspect")
    viewer = user_with_role(None, is_staff=True)
    viewer.user_permissions.add(Permission.objects.get(codename="view_priceobservation"))
    client.force_login(viewer)
    listing = client.get("/admin/pricing/priceobservation/")
    assert listing.status_code == 200 and "accept_suspect_prices" not in listing.content.decode()
    client.post(
        "/admin/pricing/priceobservation/",
        {"action": "accept_suspect_prices", "_selected_action": [suspect.pk]},
    )
    suspect.refresh_from_db()
    assert suspect.status == "suspect"

    client.force_login(user_with_role("admin"))  # the admin role: its group holds the permission
    client.post(
        "/admin/pricing/priceobservation/",
        {"action": "accept_suspect_prices", "_selected_action": [suspect.pk]},
    )
    suspect.refresh_from_db()
    assert suspect.status == "published"
    from pricing.models import SuspectPricePublication

    assert SuspectPricePublication.objects.filter(observation=suspect).exists()  # audited (issue 9)
