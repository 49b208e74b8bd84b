"""A refresh on a REAL captured GCP Cloud Billing answer (opencost's test data, PROVENANCE.md): prices
read, skips counted by reason, a GPU type lost fails the run on /status/, prices that moved are flagged."""

from __future__ import annotations

import datetime as dt
import json
from decimal import Decimal

import pytest

from pricing.models import Offer
from pricing.providers.http_api import HttpAnswer
from pricing.selectors import current_price_observations
from pricing.sources import registry as sources
from pricing.sources.refresh import refresh_run
from tests.pricing.providers.fake_http import FakeHttp, ok, recorded

pytestmark = pytest.mark.django_db
DAY1 = dt.datetime(2026, 11, 20, 9, 30, tzinfo=dt.UTC)
DAY2 = DAY1 + dt.timedelta(days=1)
REAL = "real/gcp_opencost_skus.json"


@pytest.fixture
def gcp(settings, monkeypatch):
    settings.GCP_BILLING_API_KEY = "g-key"

    def answer(first: HttpAnswer):
        # The real answer carries a nextPageToken: the reader asks for a second page, which is empty.
        http = FakeHttp(first, ok("gcp_empty.json"))
        monkeypatch.setattr(sources, "http_transport", lambda: http)
        return http

    return answer


def price(name: str, region: str) -> Decimal:
    row = current_price_observations(
        offer__instance_type__name=name, offer__region__code=region, pricing_model="on_demand"
    ).get()
    return row.amount_per_hour


def test_the_real_answer_prices_every_a2_machine_in_its_three_regions(gcp):
    gcp(ok(REAL))
    run = refresh_run("gcp-billing", "", now=DAY1)
    assert run.status == "succeeded"
    # GCP's us-central1 list prices (cloud.google.com/compute/gpus-pricing, A2 machine types): the real
    # SKUs are A100 2.933908, A2 core 0.031611, A2 RAM 0.004237 $/h (effectiveTime 2023-03-24).
    assert price("a2-highgpu-1g", "us-central1") == Decimal(
        "3.673385"
    )  # 2.933908 + 12x0.031611 + 85x0.004237
    assert price("a2-highgpu-8g", "us-west1") == Decimal(
        "29.387080"
    )  # 8x2.933908 + 96x0.031611 + 680x0.004237
    # a2-highgpu-1g/2g/4g/8g and a2-megagpu-16g (A100 40GB) x us-central1, us-east1, us-west1
    assert run.rows_added == 15
    assert run.coverage == {"gcp": {"offers": 15, "gpu_types": ["A100"], "pricing_models": ["on_demand"]}}
    # The E2 and T2D core/RAM SKUs (priced in IDR) price no GPU machine: skipped, and counted by reason
    assert run.skipped_reasons == {"not a core or RAM of a GPU machine family": 4}
    assert run.refused_reasons == {}


def test_a_gpu_sku_in_a_form_no_rule_reads_fails_the_refresh_and_says_what_was_lost(gcp, viewer_client):
    gcp(ok(REAL))
    refresh_run("gcp-billing", "", now=DAY1)
    renamed = recorded(REAL).replace(b"Nvidia Tesla A100 GPU", b"Nvidia Tesla A100 Plus GPU")
    gcp(HttpAnswer(200, renamed))
    run = refresh_run("gcp-billing", "", now=DAY2)
    assert run.status == "failed"
    assert "gcp: GPU type 'A100' produced last time, not now" in run.error
    assert run.refused_reasons["unknown_form"]["count"] == 1
    assert (
        "Nvidia Tesla A100 Plus GPU running in Americas" in run.refused_reasons["unknown_form"]["examples"][0]
    )
    assert run.changes["gpu_types_gone"] == {"gcp": ["A100"]}
    html = viewer_client.get("/status/").content.decode()
    assert "GPU A100" in html and "unknown_form 1" in html
    offer = Offer.objects.get(instance_type__name="a2-highgpu-1g", region__code="us-central1")
    page = viewer_client.get(f"/offers/{offer.pk}/").content.decode()
    assert 'id="gpu-type-gone"' in page and "A100 was not in the last refresh of gcp-billing" in page


def test_a_price_that_moved_more_than_a_quarter_is_flagged(gcp, viewer_client):
    gcp(ok(REAL))
    refresh_run("gcp-billing", "", now=DAY1)
    # the A100 SKU one dollar dearer: a2-highgpu-1g 3.673385 -> 4.673385, +27.2 % (> 25 %)
    dearer = recorded(REAL).replace(
        b'"units": "2",\n                        "nanos": 933908000',
        b'"units": "3",\n                        "nanos": 933908000',
    )
    assert dearer != recorded(REAL)
    gcp(HttpAnswer(200, dearer))
    run = refresh_run("gcp-billing", "", now=DAY2)
    assert run.status == "succeeded"
    assert run.changes["count"] == 15  # every machine carries at least one A100
    move = next(m for m in run.changes["moves"] if m["offer"] == "gcp a2-highgpu-1g us-central1 on_demand")
    assert (move["before"], move["after"], move["share"]) == ("3.673385", "4.673385", "+27.2%")
    offer = Offer.objects.get(instance_type__name="a2-highgpu-1g", region__code="us-central1")
    page = viewer_client.get(f"/offers/{offer.pk}/").content.decode()
    assert 'id="price-moves"' in page
    assert "on_demand: 3.6734 USD/h (2026-11-20) → 4.6734 USD/h (2026-11-21), 27.2%" in page


def test_an_offer_priced_once_has_no_move_flag(gcp, viewer_client):
    gcp(ok(REAL))
    refresh_run("gcp-billing", "", now=DAY1)
    offer = Offer.objects.get(instance_type__name="a2-highgpu-1g", region__code="us-central1")
    page = viewer_client.get(f"/offers/{offer.pk}/").content.decode()
    assert 'id="price-moves"' not in page and 'id="gpu-type-gone"' not in page


def test_a_lambda_gpu_type_without_capacity_is_flagged_not_a_failed_refresh(settings, monkeypatch):
    """Lambda lists the types with capacity (recorded/lambda_instance_types.json): the B200 without
    capacity the next hour is a GPU type gone, flagged on the run, and the refresh still succeeds."""
    settings.LAMBDA_API_KEY = "l-key"
    document = json.loads(recorded("lambda_instance_types.json"))

    def answer(doc):
        http = FakeHttp(HttpAnswer(200, json.dumps(doc).encode()))
        monkeypatch.setattr(sources, "http_transport", lambda: http)

    answer(document)
    first = refresh_run("lambda-cloud", "", now=DAY1)
    assert "B200" in " ".join(first.coverage["lambda"]["gpu_types"])
    document["data"]["gpu_8x_b200_sxm6"]["regions_with_capacity_available"] = []
    answer(document)
    second = refresh_run("lambda-cloud", "", now=DAY1 + dt.timedelta(hours=1))
    assert second.status == "succeeded" and second.error == ""
    (gone,) = second.changes["gpu_types_gone"]["lambda"]
    assert "B200" in gone
