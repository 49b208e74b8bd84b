"""Refreshes of the Azure, GCP and Lambda sources end to end, on recorded answers (never the network):
what each run records, the bad-data rules, failing three times in a row, sources that are off."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from pricing.choices import PriceStatus
from pricing.ingest import ingest_price_records
from pricing.models import Offer, PriceObservation, UnmappedGpuName
from pricing.providers.http_api import HttpAnswer
from pricing.providers.records import InstanceTypeRecord, PriceRecord
from pricing.selectors import current_price_observations
from pricing.sources import registry as sources
from pricing.sources.refresh import refresh_run
from pricing.spot_selectors import offer_spot_history
from pricing.tasks import refresh_prices, refresh_source_region
from scheduler.models import PriceRefresh, RefreshStatus
from tests.pricing.providers.fake_http import FakeHttp, ok, recorded

pytestmark = pytest.mark.django_db
DAY1 = dt.datetime(2026, 11, 20, 9, 30, tzinfo=dt.UTC)
DAY2 = DAY1 + dt.timedelta(days=1)


@pytest.fixture
def live(settings, monkeypatch):
    """Every live source on, each answering from whatever FakeHttp the test sets."""
    settings.GPULEDGER_AZURE_PRICES, settings.GCP_BILLING_API_KEY, settings.LAMBDA_API_KEY = (
        True,
        "g-key",
        "l-key",
    )

    def answer(*answers):
        http = FakeHttp(*answers)
        monkeypatch.setattr(sources, "http_transport", lambda: http)
        return http

    return answer


def current(name: str, region: str, model: str = "on_demand", payment: str = "") -> Decimal | None:
    row = current_price_observations(
        offer__instance_type__name=name,
        offer__region__code=region,
        pricing_model=model,
        payment_option=payment,
    ).first()
    return row.amount_per_hour if row else None


def test_an_azure_refresh_records_seen_added_changed_and_duration(live):
    live(ok("azure_page1.json"), ok("azure_page2.json"))
    first = refresh_run("azure-retail", "", now=DAY1)
    # 8 prices of ND96isr H100 v5 in eastus (on-demand, Spot, 2 savings plans, 2 terms x 2 payments)
    # and 6 on-demand/Spot prices of the NC A100 v4 and NVv3 sizes
    assert (first.status, first.rows_seen, first.rows_added, first.rows_changed) == ("succeeded", 14, 14, 0)
    assert (first.rows_refused, first.refused_reasons, first.failures_in_a_row) == (0, {}, 0)
    assert first.duration_s is not None and first.duration_s >= 0
    assert current("Standard_ND96isr_H100_v5", "eastus", "reserved_1y", "all_upfront") == Decimal("62.900000")
    assert UnmappedGpuName.objects.filter(name="M60").exists()  # NVv3, reported, not dropped
    # the next day the Spot price moved: one price changed, the rest still hold (history kept)
    page1 = recorded("azure_page1.json").replace(b"39.328", b"41.0")
    live(HttpAnswer(200, page1), ok("azure_page2.json"))
    second = refresh_run("azure-retail", "", now=DAY2)
    assert (second.rows_inserted, second.rows_added, second.rows_changed) == (14, 0, 1)
    assert current("Standard_ND96isr_H100_v5", "eastus", "spot") == Decimal("41.0")
    assert PriceObservation.objects.filter(refresh__source="azure-retail").count() == 28
    # a rerun the same day inserts nothing and changes nothing
    live(HttpAnswer(200, page1), ok("azure_page2.json"))
    third = refresh_run("azure-retail", "", now=DAY2 + dt.timedelta(hours=2))
    assert (third.rows_inserted, third.rows_added, third.rows_changed, third.rows_unchanged) == (0, 0, 0, 14)


def test_spot_history_statistics_work_on_azure_spot_prices(live):
    live(ok("azure_page1.json"), ok("azure_page2.json"))
    refresh_run("azure-retail", "", now=DAY1)
    live(HttpAnswer(200, recorded("azure_page1.json").replace(b"39.328", b"41.0")), ok("azure_page2.json"))
    refresh_run("azure-retail", "", now=DAY2)
    offer = Offer.objects.get(instance_type__name="Standard_ND96isr_H100_v5", region__code="eastus", zone="")
    end = dt.datetime(2026, 11, 21, 12, tzinfo=dt.UTC)
    history = offer_spot_history(offer, window_days=2, now=end)
    stats = history["zones"][0]["statistics"]
    # 39.328 for 24 h (from 2026-11-20 00:00), then 41.0 for 12 h, over a window whose first 12 h have
    # no price: time-weighted mean (39.328 x 24 + 41.0 x 12) / 36 = 39.885333
    assert stats["mean"] == Decimal("39.885333") and stats["current"] == Decimal("41.0")
    # discount against on-demand 98.32: 1 - 39.885333 / 98.32 = 0.5943
    assert stats["mean_discount"] == Decimal("0.5943") and stats["hours"] == Decimal("36.00")


def test_bad_rows_are_refused_with_reasons_and_nothing_published_changes(live):
    a100 = InstanceTypeRecord(
        provider="azure", name="Standard_NC24ads_A100_v4", gpu_name="A100-80GB-PCIE", gpu_count=Decimal(1)
    )
    ingest_price_records(
        [
            PriceRecord(
                instance=a100,
                region="westus2",
                zone="",
                pricing_model="on_demand",
                price_per_hour=Decimal("3.673"),
                currency="USD",
                observed_at=DAY1 - dt.timedelta(days=1),
                source="azure:retail-prices",
            )
        ]
    )
    live(ok("azure_bad_data.json"))
    run = refresh_run("azure-retail", "", now=DAY1)
    counts = {reason: entry["count"] for reason, entry in run.refused_reasons.items()}
    # one row per rule in the recording (tests/pricing/providers/recorded/README.md)
    assert counts == {"absurd": 1, "currency": 1, "not_positive": 1, "region": 1, "size": 1, "unit": 1}
    assert (run.status, run.rows_refused, run.rows_seen) == ("succeeded", 6, 9)
    assert "367.3" in run.refused_reasons["absurd"]["examples"][0]
    assert "'marsnorth'" in run.refused_reasons["region"]["examples"][0]
    # the three good rows landed; the absurd 367.3 for westus2 never replaced the published 3.673
    assert current("Standard_NC96ads_A100_v4", "eastus") == Decimal("14.692")
    assert current("Standard_NC24ads_A100_v4", "westus2") == Decimal("3.673")
    assert not PriceObservation.objects.filter(amount_per_hour__gt=100).exists()
    assert not PriceObservation.objects.exclude(status=PriceStatus.PUBLISHED).exists()


def test_gcp_and_lambda_refuse_undocumented_regions_and_unreadable_units(live):
    live(ok("gcp_bad_data.json"))
    gcp = refresh_run("gcp-billing", "", now=DAY1)
    counts = {reason: entry["count"] for reason, entry in gcp.refused_reasons.items()}
    # every machine built for moon-central1 (a2-highgpu-1g/2g/4g/8g, a2-megagpu-16g) is refused
    assert counts == {"region": 5, "unit": 2}
    assert current("a2-highgpu-1g", "us-central1") == Decimal("3.673385")
    live(ok("lambda_bad_data.json"))
    lam = refresh_run("lambda-cloud", "", now=DAY1)
    assert {r: e["count"] for r, e in lam.refused_reasons.items()} == {"region": 1, "unit": 1}
    assert current("gpu_1x_h100_pcie", "us-west-3") == Decimal("2.49")


def test_three_failures_in_a_row_show_as_failing_until_a_run_succeeds(live, viewer_client):
    for expected in (1, 2, 3):
        live(HttpAnswer(403, b'{"error": {"message": "API key not valid"}}'))
        with pytest.raises(Exception, match="HTTP 403"):
            refresh_run("gcp-billing", "", now=DAY1)
        last = sources_last("gcp-billing")
        assert (last.status, last.failures_in_a_row) == (RefreshStatus.FAILED, expected)
    html = viewer_client.get("/status/").content.decode()
    assert "failing (3 in a row)" in html and '<span class="badge bad">failing</span>' in html
    assert "g-key" not in html
    live(ok("gcp_page1.json"), ok("gcp_page2.json"))
    assert refresh_run("gcp-billing", "", now=DAY1).failures_in_a_row == 0
    assert '<span class="badge bad">failing</span>' not in viewer_client.get("/status/").content.decode()


def sources_last(name: str):
    return PriceRefresh.objects.filter(source=name).order_by("-started_at", "-pk").first()


def test_a_source_is_off_until_its_setting_or_key_exists(settings, viewer_client, monkeypatch):
    settings.GPULEDGER_AZURE_PRICES, settings.GCP_BILLING_API_KEY, settings.LAMBDA_API_KEY = False, "", ""
    monkeypatch.setattr(sources, "http_transport", lambda: FakeHttp())  # any request would fail the test
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIAEXAMPLE")  # credentials found: the AWS sources are on
    out = StringIO()
    with pytest.raises(CommandError, match="1 refresh"):
        call_command("refresh_prices", "--source", "azure-retail", "--no-progress", stdout=out)
    assert "azure-retail: off: set GPULEDGER_AZURE_PRICES=1" in out.getvalue()
    for name in ("azure-retail", "gcp-billing", "lambda-cloud"):
        off_reason = sources.SOURCES[name].off_reason
        assert refresh_prices.run(name) == {"queued": [], "off": [f"{name}: {off_reason}"]}
        # a job queued before the source was switched off does nothing, and leaves no row
        assert refresh_source_region.run(name, "") == {"status": "off", "source": name}
    assert not PriceRefresh.objects.exists()
    html = viewer_client.get("/status/").content.decode()
    states = html.split('id="source-states"', 1)[1].split("</table>", 1)[0]
    # the three live sources, the Vast market (GPULEDGER_VAST_MARKET unset) and the 11 gpuhunt providers
    # (GPULEDGER_GPUHUNT_PROVIDERS unset) are off; the four AWS ones are on
    assert states.count('<span class="badge warn">off</span>') == 4 + 11
    assert states.count('badge good">on') == 4  # 4 AWS
    assert "set LAMBDA_API_KEY" in html and "set GCP_BILLING_API_KEY" in html


LATER = dt.datetime(2026, 12, 2, 9, 30, tzinfo=dt.UTC)  # after the bundled snapshot's 2026-11-30


def test_live_prices_land_on_the_bundled_instance_types_with_their_gpus(live, bundled_catalog):
    live(ok("azure_page1.json"), ok("azure_page2.json"))
    refresh_run("azure-retail", "", now=LATER)
    from pricing.models import InstanceType

    # azure sizes map through gpu_aliases.csv (provider azure)
    assert (
        InstanceType.objects.get(provider__slug="azure", name="Standard_ND96isr_H100_v5").gpu.slug
        == "h100-sxm5-80gb"
    )
    assert (
        InstanceType.objects.get(provider__slug="azure", name="Standard_NC24ads_A100_v4").gpu.slug
        == "a100-pcie-80gb"
    )
    live(ok("lambda_instance_types.json"))
    lam = refresh_run("lambda-cloud", "", now=LATER)
    # the bundled Lambda catalog has gpu_8x_h100_sxm5 (31.92 $/h); the live 23.92 is a new price of the
    # same instance type, not a second one, and within 5x of the old one so it is published
    h100 = InstanceType.objects.get(provider__slug="lambda", name="gpu_8x_h100_sxm5")
    assert h100.gpu.slug == "h100-sxm5-80gb" and lam.rows_refused == 0
    assert current("gpu_8x_h100_sxm5", "us-east-1") == Decimal("23.92")
    live(ok("gcp_page1.json"), ok("gcp_page2.json"))
    gcp = refresh_run("gcp-billing", "", now=LATER)
    # a2-highgpu-1g in us-central1 is priced per zone in the snapshot, per region here
    assert current("a2-highgpu-1g", "us-central1") == Decimal("3.673385") and gcp.rows_refused == 0
    assert InstanceType.objects.get(provider__slug="gcp", name="a2-highgpu-1g").gpu.slug == "a100-sxm4-40gb"


def test_a_reader_s_own_rejections_are_refusals_with_their_reason_for_every_source():
    from pricing.providers.aws import AwsReadStats
    from pricing.sources.registry import Fetch, Source

    stats = AwsReadStats(rejected=2, rejected_locations=["aws:us-east-1 page 1 item 3: SpotPrice '0.0'"] * 2)
    source = Source("aws-spot", lambda region, now: Fetch(iter([]), stats), lambda: ["us-east-1"])
    run = refresh_run(source, "us-east-1", now=DAY1)
    assert (run.rows_seen, run.rows_refused, run.rows_rejected) == (2, 2, 2)
    assert run.refused_reasons["not_positive"]["examples"][0].endswith("SpotPrice '0.0'")


def test_aws_savings_plans_are_off_until_boto3_would_find_credentials(settings, monkeypatch, tmp_path):
    """The new AWS source is off without credentials (issue 21: off until its credentials exist); the
    instance metadata service is never asked (it is network), so an instance role is a setting."""
    for name in (*sources.AWS_CREDENTIAL_VARIABLES, "AWS_SHARED_CREDENTIALS_FILE", "AWS_CONFIG_FILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))  # no ~/.aws here
    settings.GPULEDGER_AWS_SAVINGS_PLANS = False
    source = sources.SOURCES["aws-savings-plans"]
    assert not source.enabled()
    assert refresh_prices.run("aws-savings-plans") == {
        "queued": [],
        "off": [f"aws-savings-plans: {source.off_reason}"],
    }
    (tmp_path / ".aws").mkdir()
    (tmp_path / ".aws" / "credentials").write_text("[default]\n")
    assert source.enabled()
    (tmp_path / ".aws" / "credentials").unlink()
    monkeypatch.setenv("AWS_PROFILE", "finance")
    assert source.enabled()
    monkeypatch.delenv("AWS_PROFILE")
    settings.GPULEDGER_AWS_SAVINGS_PLANS = True  # an EC2 instance role
    assert source.enabled()
