"""The catalog through the CLI and the API: slugs people type, prices machines read."""

import datetime as dt
from decimal import Decimal
from io import StringIO

import pytest
from django.core.management import call_command
from django.utils import timezone

pytestmark = pytest.mark.django_db


def test_gpus_lists_every_slug_with_its_name(bundled_catalog):
    out = StringIO()
    call_command("gpus", stdout=out)
    lines = out.getvalue().splitlines()
    assert len(lines) == 37  # 33 -> 37: 4 GeForce 12 / 16 GB cards added (pricing/data/SOURCES.md)
    assert any(
        line.startswith("h100-sxm5-80gb") and "NVIDIA H100 SXM5 80GB (80 GB)" in line for line in lines
    )


def test_the_gpu_api_returns_datasheet_fields_by_slug(viewer_client, bundled_catalog):
    body = viewer_client.get("/api/gpus/a100-sxm4-80gb/").json()
    # NVIDIA A100 datasheet: 80 GB HBM2e, 2039 GB/s (gpu_specs.csv).
    assert (body["memory_gb"], body["memory_bandwidth_gbps"], body["architecture"]) == (
        "80.00",
        "2039.00",
        "Ampere",
    )
    assert viewer_client.get("/api/gpus/no-such-gpu/").status_code == 404
    assert viewer_client.get("/api/gpus/").json()["count"] == 37  # 33 -> 37: four GeForce cards


def test_the_offer_api_filters_current_prices(viewer_client, bundled_catalog):
    rows = viewer_client.get(
        "/api/offers/", {"gpu": "h100-sxm5-80gb", "provider": "aws", "pricing_model": "on_demand"}
    ).json()
    # p5.48xlarge (8 GPUs) and p5.4xlarge (1 GPU) are the H100 SXM types in the AWS snapshot.
    assert rows and {r["instance_type"] for r in rows} == {"p5.48xlarge", "p5.4xlarge"}
    assert all(Decimal(r["price_per_hour"]) > 0 and r["currency"] == "USD" and r["observed_at"] for r in rows)


def test_the_offer_api_marks_stale_and_gpu_only_prices(viewer_client, bundled_catalog):
    from pricing.models import PriceObservation
    from pricing.price_version import price_version_bump

    rows = viewer_client.get(
        "/api/offers/", {"gpu": "l4", "pricing_model": "on_demand", "limit": 1000}
    ).json()
    gcp = [row for row in rows if row["instance_type"].startswith("gcp-gpu-")]
    assert gcp and all(row["host_priced_separately"] for row in gcp)  # GCP lists L4 GPUs without the host VM
    # ... and the g2 machine types carry host + GPUs: whole instances (pricing/providers/gcp_hosts.py)
    g2 = [row for row in rows if row["instance_type"].startswith("g2-standard-")]
    assert g2 and not any(row["host_priced_separately"] for row in g2)
    assert {row["price_quality"] for row in rows} == {"snapshot"}
    assert not any(row["host_priced_separately"] for row in rows if row["provider"] == "aws")
    # The bundled catalog is a fresh snapshot: stale only after 90 days (2160 hours)
    assert not any(row["stale"] for row in rows) and {row["stale_after_hours"] for row in rows} == {2160.0}
    g6 = next(row for row in rows if row["instance_type"] == "g6.xlarge")
    PriceObservation.objects.filter(pk=g6["observation_id"]).update(
        observed_at=timezone.now() - dt.timedelta(days=91)
    )
    price_version_bump()  # as every bulk writer of prices does (pricing/price_version.py): pages are cached per version
    again = viewer_client.get(
        "/api/offers/", {"gpu": "l4", "pricing_model": "on_demand", "limit": 1000}
    ).json()
    assert [row["stale"] for row in again if row["observation_id"] == g6["observation_id"]] == [True]
    assert sum(row["stale"] for row in again) == 1
