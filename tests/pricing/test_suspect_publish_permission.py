"""Publishing a suspect price needs pricing.publish_suspect, and each publication is audited."""

import datetime as dt
from decimal import Decimal

import pytest
from django.contrib.auth.models import Permission

from pricing.ingest import ingest_price_records
from pricing.models import PriceObservation, SuspectPricePublication
from pricing.providers.records import InstanceTypeRecord, PriceRecord
from pricing.publishing import suspect_prices_publish
from pricing.selectors import current_price_observations

pytestmark = pytest.mark.django_db
G5 = InstanceTypeRecord(provider="aws", name="g5.xlarge", gpu_name="A10G", gpu_count=Decimal(1))
CHANGELIST = "/admin/pricing/priceobservation/"


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


@pytest.fixture
def suspect():
    ingest_price_records([on_demand("1.006", 1)])
    ingest_price_records([on_demand("10.06", 2)])  # 10× the current price: held back
    return PriceObservation.objects.get(status="suspect")


def _staff(django_user_model, *codenames):
    user = django_user_model.objects.create_user("staffer", password="pw", is_staff=True)
    user.user_permissions.add(*Permission.objects.filter(codename__in=codenames))
    return user


def test_a_view_only_staff_user_cannot_publish_a_suspect_price(client, django_user_model, suspect):
    client.force_login(_staff(django_user_model, "view_priceobservation"))
    listing = client.get(CHANGELIST)
    assert listing.status_code == 200
    assert "accept_suspect_prices" not in listing.content.decode()  # the action is not offered
    client.post(CHANGELIST, {"action": "accept_suspect_prices", "_selected_action": [suspect.pk]})
    suspect.refresh_from_db()
    assert suspect.status == "suspect"
    assert current_price_observations().get().amount_per_hour == Decimal("1.006")
    assert not SuspectPricePublication.objects.exists()


def test_publishing_with_the_permission_writes_an_audit_entry_shown_in_the_admin(
    client, django_user_model, suspect
):
    user = _staff(
        django_user_model, "view_priceobservation", "publish_suspect", "view_suspectpricepublication"
    )
    client.force_login(user)
    response = client.post(
        CHANGELIST, {"action": "accept_suspect_prices", "_selected_action": [suspect.pk]}, follow=True
    )
    assert "1 suspect price(s) accepted" in response.content.decode()
    entry = SuspectPricePublication.objects.get()
    assert (entry.observation_id, entry.published_by) == (suspect.pk, user)
    assert (entry.previous_current_amount, entry.new_current_amount) == (Decimal("1.006"), Decimal("10.06"))
    assert entry.new_current_currency == "USD"
    audit_page = client.get("/admin/pricing/suspectpricepublication/").content.decode()
    assert "staffer" in audit_page and "10.060000" in audit_page


def test_publishing_twice_publishes_once_and_audits_once(django_user_model, suspect):
    user = _staff(django_user_model, "publish_suspect")
    assert suspect_prices_publish([suspect.pk], user=user) == 1
    assert suspect_prices_publish([suspect.pk], user=user) == 0
    assert SuspectPricePublication.objects.count() == 1


def test_publishing_an_older_suspect_price_leaves_the_current_value_and_says_so(django_user_model):
    ingest_price_records([on_demand("1.00", 1)])
    ingest_price_records([on_demand("1.00", 3)])
    ingest_price_records([on_demand("9.00", 2)])  # held back, and older than the current price
    held = PriceObservation.objects.get(status="suspect")
    suspect_prices_publish([held.pk], user=_staff(django_user_model, "publish_suspect"))
    entry = SuspectPricePublication.objects.get()
    assert (entry.previous_current_amount, entry.new_current_amount) == (Decimal("1.00"), Decimal("1.00"))
