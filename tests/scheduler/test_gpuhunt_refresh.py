"""A gpuhunt source end to end on recorded items (no library, no network): off until configured, then a
refresh lands its prices, /status/ says how to turn the others on, /api/offers/ lists the mapped ones."""

from __future__ import annotations

import datetime as dt

import pytest

from pricing.models import PriceObservation, UnmappedGpuName
from pricing.sources import registry as sources
from pricing.sources.refresh import refresh_run
from tests.pricing.providers.test_gpuhunt_offers import recorded_items

pytestmark = pytest.mark.django_db
DAY1 = dt.datetime(2026, 12, 4, 9, 0, tzinfo=dt.UTC)


def test_a_gpuhunt_provider_is_off_until_named_in_the_setting(settings):
    settings.GPULEDGER_GPUHUNT_PROVIDERS = ""
    assert not sources.SOURCES["gpuhunt-runpod"].enabled()
    settings.GPULEDGER_GPUHUNT_PROVIDERS = "vultr, runpod"
    assert sources.SOURCES["gpuhunt-runpod"].enabled() and not sources.SOURCES["gpuhunt-oci"].enabled()
    assert [s.name for s in sources.expand_sources("gpuhunt")][:3] == [
        "gpuhunt-oci",
        "gpuhunt-runpod",
        "gpuhunt-cloudrift",
    ]


def test_a_refresh_lands_the_recorded_items_and_the_status_page_lists_the_others(
    bundled_catalog, settings, monkeypatch, viewer_client
):
    settings.GPULEDGER_GPUHUNT_PROVIDERS = "runpod"
    monkeypatch.setattr(sources, "gpuhunt_items", lambda provider: recorded_items())
    run = refresh_run("gpuhunt-runpod", "", now=DAY1)
    assert (run.status, run.rows_added, run.rows_refused) == ("succeeded", 4, 1)
    assert run.skipped_reasons == {"no GPU": 1}
    assert run.coverage["runpod"] == {
        "offers": 3,
        "gpu_types": ["RTX4090", "h100-sxm5-80gb"],
        "pricing_models": ["on_demand", "spot"],
    }
    # gpuhunt's "H100" names RunPod's SXM and PCIe parts; the GPU ID 'NVIDIA H100 80GB HBM3' settles it
    # to the SXM5 part (pricing/data/gpuhunt_gpu_names.csv), so nothing is left unmapped
    assert not UnmappedGpuName.objects.filter(provider__slug="runpod", name="H100").exists()
    # every page (1,000 rows each, the most the API gives at once): the bundled snapshot lists over 1,000
    rows = viewer_client.get("/api/offers/?provider=runpod&limit=1000").json()
    rows += viewer_client.get("/api/offers/?provider=runpod&limit=1000&offset=1000").json()
    # beside the bundled SkyPilot snapshot (runpod/vms.v7.csv: 639 on-demand prices, one per type and country,
    # and 786 spot, one per zone; tests/pricing/test_catalog_oci_runpod.py), which the refresh leaves as it was
    snapshot = [row for row in rows if row["source"] == "skypilot:runpod/vms.v7.csv"]
    assert snapshot and len(rows) == len(snapshot) + 4
    assert PriceObservation.objects.filter(source="skypilot:runpod/vms.v7.csv").count() == 639 + 786
    # the recorded rows (recorded/gpuhunt_runpod.csv): all four priced offers, the H100s as the SXM5 part
    assert sorted(
        (row["instance_type"], row["gpu"], row["price_per_hour"], row["source"])
        for row in rows
        if row["source"] == "gpuhunt:runpod"
    ) == [
        ("8x NVIDIA H100 80GB HBM3", "h100-sxm5-80gb", "21.520000", "gpuhunt:runpod"),
        ("NVIDIA GeForce RTX 4090", "rtx-4090", "0.690000", "gpuhunt:runpod"),
        ("NVIDIA H100 80GB HBM3", "h100-sxm5-80gb", "1.750000", "gpuhunt:runpod"),
        ("NVIDIA H100 80GB HBM3", "h100-sxm5-80gb", "2.690000", "gpuhunt:runpod"),
    ]
    html = viewer_client.get("/status/").content.decode()
    assert "gpuhunt-vultr" in html and "add vultr to GPULEDGER_GPUHUNT_PROVIDERS" in html
    # the landing page lists the gpuhunt providers no refresh has priced yet, RunPod no longer among them,
    # nor JarvisLabs, Lium, Daytona, (since the outside review of issue 32) Seeweb and (since OCI's GPU rows of
    # every region are bundled, issue 32) OCI, whose bundled SkyPilot snapshots give them offers: 11 - 1 - 5 = 5;
    # and (stop 36) Azure, read by a source of our own, with no bundled snapshot and no price stored: 5 + 1 = 6
    landing = viewer_client.get("/").content.decode()
    listed = landing.split('id="not-refreshed"', 1)[1].split("</p>", 1)[0]
    assert "<strong>vultr</strong> (add vultr to GPULEDGER_GPUHUNT_PROVIDERS" in listed
    assert "<strong>runpod</strong>" not in listed and "<strong>lium</strong>" not in listed
    assert "<strong>oci</strong>" not in listed
    assert "<strong>azure</strong> (set GPULEDGER_AZURE_PRICES=1" in listed
    assert listed.count("<strong>") == 6


def test_the_daily_gpuhunt_job_queues_only_the_providers_turned_on_and_their_prices_go_stale_after_2_days(
    settings,
):
    from pricing.tasks import refresh_prices
    from scheduler.freshness import stale_after_for
    from scheduler.schedule import SCHEDULE

    (job,) = [job for job in SCHEDULE if job.kwargs.get("source") == "gpuhunt"]
    assert job.every_seconds == 24 * 3600
    settings.GPULEDGER_GPUHUNT_PROVIDERS = ""
    result = refresh_prices.run("gpuhunt")
    assert result["queued"] == [] and len(result["off"]) == 11
    # twice the daily period, as for the other daily list-price sources (docs: "Stale prices")
    assert stale_after_for("gpuhunt-runpod", "on_demand") == dt.timedelta(days=2)
