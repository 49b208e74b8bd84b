"""The landing page and the admin, as a person sees them."""

import datetime as dt
from decimal import Decimal

import pytest
from django.contrib.auth import get_user_model
from django.utils import timezone

from pricing.models import PriceObservation
from pricing.price_version import price_version_bump

pytestmark = pytest.mark.django_db


def test_the_landing_page_lists_all_33_gpus_with_real_prices(viewer_client, bundled_catalog):
    response = viewer_client.get("/")
    assert response.status_code == 200
    rows = response.context["rows"]
    assert len(rows) == 37  # 33 -> 37: 4 GeForce 12 / 16 GB cards added (pricing/data/SOURCES.md)
    by_slug = {row["gpu"].slug: row for row in rows}
    # The cheapest on-demand A10 GPU-hour in the bundled catalog: Lambda gpu_1x_a10 at 1.29 USD/h.
    a10 = by_slug["a10"]["on_demand"]
    assert (a10.provider, a10.price_per_gpu_hour_usd) == ("lambda", Decimal("1.29"))
    html = response.content.decode()
    assert "NVIDIA H100 SXM5 80GB" in html and "h100-sxm5-80gb" in html
    assert "no price" in html  # GPUs without offers say so instead of showing 0


def test_the_cheapest_price_leaves_out_illustrative_cny_prices_but_converts_them(
    viewer_client, bundled_catalog
):
    from pricing.selectors import offer_frame

    # AutoDL's bundled CNY prices are illustrative (pricing/data/SOURCES.md): never the cheapest shown
    rtx = {row["gpu"].slug: row for row in viewer_client.get("/").context["rows"]}["rtx-4090"]["on_demand"]
    assert rtx.provider != "autodl" and rtx.price_quality != "illustrative"
    # ... but still converted through the stored FX rate where they are listed: 1.98 CNY x 0.13986 USD/CNY
    frame = offer_frame()
    autodl = frame[(frame["provider"] == "autodl") & (frame["instance_type"] == "rtx4090-1x")].iloc[0]
    assert autodl["price_quality"] == "illustrative"
    assert autodl["price_per_gpu_hour_usd"] == Decimal("1.980000") * Decimal("0.13986")


def test_search_filters_the_catalog(viewer_client, bundled_catalog):
    rows = viewer_client.get("/", {"q": "h100"}).context["rows"]
    assert {row["gpu"].slug for row in rows} == {"h100-sxm5-80gb", "h100-pcie-80gb", "h100-nvl-94gb"}


def test_the_admin_shows_prices_read_only_and_rejects_negative_prices(viewer_client, bundled_catalog):
    admin = get_user_model().objects.create_superuser("root", "root@example.com", "pw")
    viewer_client.force_login(admin)
    observation = PriceObservation.objects.first()
    assert viewer_client.get("/admin/pricing/priceobservation/").status_code == 200
    assert viewer_client.get(f"/admin/pricing/priceobservation/{observation.pk}/change/").status_code == 200
    assert viewer_client.post(f"/admin/pricing/priceobservation/{observation.pk}/delete/").status_code == 403
    response = viewer_client.post(
        "/admin/pricing/storagerate/add/",
        {
            "provider": observation.offer.region.provider_id,
            "storage_class": "object",
            "price_per_gb_month": "-0.02",
            "currency": "USD",
            "source": "typo",
            "observed_at_0": "2026-11-30",
            "observed_at_1": "00:00:00",
        },
    )
    assert response.status_code == 200
    assert "A storage price must be above zero per GB-month." in response.content.decode()


def test_the_admin_rejects_an_impossible_gpu_spec(viewer_client, db):
    admin = get_user_model().objects.create_superuser("root", "root@example.com", "pw")
    viewer_client.force_login(admin)
    response = viewer_client.post(
        "/admin/pricing/gpumodel/add/",
        {
            "slug": "bad",
            "name": "Bad card",
            "vendor": "X",
            "architecture": "Y",
            "memory_gb": "80000",
            "memory_bandwidth_gbps": "0",
            "tdp_w": "300",
            "mig_instances": "0",
        },
    )
    body = response.content.decode()
    assert "check the unit (GB, not MB)" in body
    assert "Memory bandwidth must be above zero GB/s." in body


def _l4_on_demand(viewer_client):
    return {row["gpu"].slug: row for row in viewer_client.get("/").context["rows"]}["l4"]["on_demand"]


def test_the_landing_page_prefers_a_whole_instance_price_to_a_cheaper_gpu_only_one(
    viewer_client, bundled_catalog
):
    # GCP prices L4 GPUs without their host VM (gcp-gpu-L4-x*); the cheapest whole L4 instance in the
    # bundled catalog is GCP g2-standard-4 in us-east4: host 0.14631 (skypilot/gcp/vms.hosts.csv) + one L4
    # 0.55821 (vms.gpu.csv) = 0.70452 USD/h, below AWS g6.xlarge at 0.8048, so that is what the page shows.
    gpu_only = PriceObservation.objects.filter(
        offer__instance_type__gpu__slug="l4",
        offer__instance_type__host_priced_separately=True,
        pricing_model="on_demand",
    ).order_by("amount_per_hour")
    assert gpu_only.exists() and gpu_only.first().amount_per_hour < Decimal("0.70452")
    # JarvisLabs' 1x_L4_28V_124G (skypilot/jarvislabs/vms.csv line 2: 0.44 USD/h, a whole instance) and
    # RunPod's L4 pods (skypilot/runpod/vms.v7.csv: 1x_L4_SECURE 0.44 USD/h, n GPUs n x 0.44) tie as the
    # cheapest L4 of all, below every GCP GPU-only price (from 0.55821)
    cheapest = _l4_on_demand(viewer_client)
    assert cheapest.provider in {"jarvislabs", "runpod"} and not cheapest.host_priced_separately
    assert cheapest.price_per_gpu_hour_usd == Decimal("0.440")
    # without them, a GPU-only GCP price is below every whole instance: the page still shows a whole one
    PriceObservation.objects.filter(
        offer__instance_type__provider__slug__in=["jarvislabs", "runpod"]
    ).delete()
    price_version_bump()
    cheapest = _l4_on_demand(viewer_client)
    assert (cheapest.provider, cheapest.instance_type, cheapest.region, cheapest.price_per_gpu_hour_usd) == (
        "gcp",
        "g2-standard-4",
        "us-east4",
        Decimal("0.70452"),
    )
    assert not cheapest.host_priced_separately


def test_the_landing_page_labels_a_gpu_only_price_when_it_is_the_only_one(viewer_client, bundled_catalog):
    PriceObservation.objects.filter(
        offer__instance_type__gpu__slug="l4", offer__instance_type__host_priced_separately=False
    ).delete()
    cheapest = _l4_on_demand(viewer_client)
    assert cheapest.provider == "gcp" and cheapest.host_priced_separately
    html = viewer_client.get("/", {"q": "l4"}).content.decode()
    assert ">GPU only, host extra</span>" in html


def test_the_landing_page_marks_a_stale_price(viewer_client, bundled_catalog):
    # The A10's cheapest price (Lambda gpu_1x_a10) observed 100 days ago: a snapshot is stale after 90
    a10 = {row["gpu"].slug: row for row in viewer_client.get("/").context["rows"]}["a10"]["on_demand"]
    assert not a10.stale
    PriceObservation.objects.filter(pk=a10.observation_id).update(
        observed_at=timezone.now() - dt.timedelta(days=100)
    )
    price_version_bump()  # as every bulk writer of prices does (pricing/price_version.py): pages are cached per version
    rows = {row["gpu"].slug: row for row in viewer_client.get("/").context["rows"]}
    assert rows["a10"]["on_demand"].stale and rows["a10"]["on_demand"].observation_id == a10.observation_id
    html = viewer_client.get("/", {"q": "a10"}).content.decode()
    assert html.count(">stale</span>") == 1
