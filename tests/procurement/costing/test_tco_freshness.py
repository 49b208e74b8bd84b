"""A TCO study priced from an offer says whether that price is stale (docs/provider-prices.md)."""

import datetime as dt
import json
from io import StringIO
from unittest import mock

import yaml
from django.core.management import call_command
from django.utils import timezone

from pricing.models import PriceObservation
from procurement.models import TcoStudy
from procurement.services.recompute import tco_study_recompute
from tests.procurement.costing.tco_fixtures import study_document

P5 = {"provider": "aws", "instance_type": "p5.48xlarge", "region": "us-east-1"}
OFFER_STUDY = study_document(rent__price_per_gpu_hour=None, rent__offer=P5)


def _age_the_price(days: int) -> None:
    observation = PriceObservation.objects.get(
        offer__instance_type__name="p5.48xlarge", offer__region__code="us-east-1", pricing_model="on_demand"
    )
    observation.observed_at = timezone.now() - dt.timedelta(days=days)
    observation.save(update_fields=["observed_at"])


def test_a_fresh_offer_price_is_not_stale_and_a_typed_price_has_no_flag(engineer_client, bundled_catalog):
    rent = engineer_client.post("/api/tco/", OFFER_STUDY, content_type="application/json").json()["rent"]
    # the bundled catalog is a snapshot (no refresh schedule): stale only after 90 days = 2160 hours
    assert (rent["price_stale"], rent["price_stale_after_hours"]) == (False, 2160.0)
    typed = engineer_client.post("/api/tco/", study_document(), content_type="application/json").json()[
        "rent"
    ]
    assert typed["price_stale"] is None


def test_an_old_offer_price_is_stale_in_the_report_the_prices_used_the_page_and_the_table(
    engineer_client, bundled_catalog, tmp_path
):
    _age_the_price(days=100)
    created = engineer_client.post("/api/tco/", OFFER_STUDY, content_type="application/json").json()
    assert created["rent"]["price_stale"] is True
    study = TcoStudy.objects.get(pk=created["id"])
    assert study.prices_used[0]["stale"] is True
    assert 'id="rent-price-stale"' in engineer_client.get(f"/tco/{study.pk}/").content.decode()
    path = tmp_path / "study.yaml"
    path.write_text(yaml.safe_dump(OFFER_STUDY))
    out = StringIO()
    call_command("tco", str(path), stdout=out)
    assert "STALE: older than its refresh schedule allows" in out.getvalue()
    out = StringIO()
    call_command("tco", str(path), "--format", "json", stdout=out)
    assert json.loads(out.getvalue())["rent"]["price_stale"] is True


def test_a_price_that_only_ages_adds_no_recomputed_study_but_the_page_says_stale(
    engineer_client, bundled_catalog, settings
):
    settings.SESSION_COOKIE_AGE = 365 * 24 * 3600  # the mocked clock runs 120 days ahead: stay signed in
    engineer_client.force_login(engineer_client.user)
    created = engineer_client.post("/api/tco/", OFFER_STUDY, content_type="application/json").json()
    assert created["rent"]["price_stale"] is False
    later = timezone.now() + dt.timedelta(days=120)
    with mock.patch("procurement.services.tco.timezone.now", return_value=later):
        assert tco_study_recompute(created["id"])["created"] is False  # same price: nothing new stored
    with mock.patch("procurement.views.costing.timezone.now", return_value=later):
        html = engineer_client.get(f"/tco/{created['id']}/").content.decode()
    assert 'id="rent-price-stale"' in html  # the page judges the stored price's age today
