"""GCP Cloud Billing Catalog reader against recorded, real-shaped SKU pages."""

from __future__ import annotations

import csv
import datetime as dt
import json
from decimal import Decimal
from pathlib import Path

import pytest

from pricing.price_checks import UNIT, Refusals
from pricing.providers.gcp_billing_catalog import (
    MACHINE_SHAPES,
    GcpReadStats,
    fetch_gcp_prices,
    gcp_machine_records,
    gcp_parts,
)
from pricing.providers.gcp_local_ssd import SSD_UNPRICED
from pricing.providers.http_api import HttpSourceError
from tests.pricing.providers.fake_http import FakeHttp, error_page, no_wait_policy, ok, throttled

NOW = dt.datetime(2026, 12, 3, 14, 20, tzinfo=dt.UTC)
HOSTS_CSV = Path(__file__).resolve().parents[3] / "pricing/data/skypilot/gcp/vms.hosts.csv"
RECORDED = Path(__file__).parent / "recorded"
LOCAL_SSD = "gcp_local_ssd_hand_written.json"
NO_HOST_PARTS = "GPU SKU without its machine's core or RAM SKU in the region"


def read(*answers, sleeps=None):
    refusals, stats, http = Refusals(), GcpReadStats(), FakeHttp(*answers)
    records = list(
        fetch_gcp_prices(
            api_key="test-key",
            now=NOW,
            refusals=refusals,
            stats=stats,
            transport=http,
            policy=no_wait_policy(sleeps),
        )
    )
    prices = {(r.instance.name, r.region, r.pricing_model): r for r in records}
    return prices, refusals, stats, http


def price(prices, name, model, region="us-central1") -> Decimal:
    return prices[(name, region, model)].price_per_hour


def test_it_pages_with_the_token_and_sends_the_key_only_in_a_header():
    _, _, stats, http = read(ok("gcp_page1.json"), ok("gcp_page2.json"))
    (first_url, first_headers), (second_url, _) = http.calls
    assert stats.pages == 2 and "pageToken" not in first_url
    assert "pageToken=CiA2RjgxLTU4NDQtNDU2QS9za3VzLzlCNEEtQTNBOS02QkYz" in second_url
    assert first_headers == {"X-Goog-Api-Key": "test-key"} and "test-key" not in first_url + second_url


def test_a2_highgpu_1g_is_its_gpu_plus_cores_plus_ram():
    prices, refusals, *_ = read(ok("gcp_page1.json"), ok("gcp_page2.json"))
    # 1 x 2.933908 + 12 x 0.031611 + 85 x 0.004237 = 3.673385 $/h: GCP's us-central1 list price of
    # a2-highgpu-1g; the host part 0.739477 is the bundled catalog's 0.73948 (vms.hosts.csv) rounded
    assert price(prices, "a2-highgpu-1g", "on_demand") == Decimal("3.673385")
    assert price(prices, "a2-highgpu-1g", "on_demand", "us-east1") == Decimal("3.673385")  # serviceRegions
    # Spot: 1.4341 + 12 x 0.015806 + 85 x 0.002119 = 1.803887
    assert price(prices, "a2-highgpu-1g", "spot") == Decimal("1.803887")
    # 1-year commitment: 1.848362 + 12 x 0.019915 + 85 x 0.002669 = 2.314207, billed monthly
    committed = prices[("a2-highgpu-1g", "us-central1", "reserved_1y")]
    assert (committed.price_per_hour, committed.payment_option, committed.upfront_fee) == (
        Decimal("2.314207"),
        "no_upfront",
        Decimal(0),
    )
    # 3-year: 1.320258 + 12 x 0.014225 + 85 x 0.001907 = 1.320258 + 0.1707 + 0.162095 = 1.653053
    assert price(prices, "a2-highgpu-1g", "reserved_3y") == Decimal("1.653053")
    # a2-highgpu-8g: 8 x 2.933908 + 96 x 0.031611 + 680 x 0.004237 = 23.471264 + 3.034656 + 2.88116
    assert price(prices, "a2-highgpu-8g", "on_demand") == Decimal("29.387080")
    assert refusals.total == 0


def test_g2_a3_and_n1_machines_are_built_from_their_own_families():
    prices, *_ = read(ok("gcp_page1.json"), ok("gcp_page2.json"))
    # g2-standard-4: 1 L4 0.56004 + 4 x 0.024988 + 16 x 0.002927 = 0.706824
    assert price(prices, "g2-standard-4", "on_demand") == Decimal("0.706824")
    # g2-standard-24 carries 2 L4s: 2 x 0.56004 + 24 x 0.024988 + 96 x 0.002927 = 1.12008 + 0.599712 + 0.280992 = 2.000784
    assert price(prices, "g2-standard-24", "on_demand") == Decimal("2.000784")
    # a3-highgpu-8g comes with 6,000 GiB of Local SSD and these pages hold no Local SSD SKU: refused
    # (its GPUs + cores + RAM alone, 98.589024, would under-state the bill: the Local SSD tests below)
    assert ("a3-highgpu-8g", "us-central1", "on_demand") not in prices
    # n1 host plus GPUs as gcp_n1.py pairs them: 0.35 + 4 x 0.031611 + 15 x 0.004237 = 0.539999
    n1 = prices[("n1-standard-4+1xT4", "us-central1", "on_demand")]
    assert (n1.price_per_hour, n1.instance.gpu_name, n1.instance.gpu_count) == (Decimal("0.539999"), "T4", 1)
    # no Spot SKUs for L4 or G2 in the recording: no Spot price is made up
    assert ("g2-standard-4", "us-central1", "spot") not in prices


def test_machine_shapes_match_the_bundled_catalog_hosts():
    with HOSTS_CSV.open(newline="") as handle:
        bundled = {
            row["InstanceType"]: (float(row["vCPUs"]), float(row["MemoryGiB"]))
            for row in csv.DictReader(handle)
        }
    shared = set(MACHINE_SHAPES) & set(bundled)
    assert {"a2-highgpu-1g", "a3-highgpu-8g", "g2-standard-4"} <= shared
    assert all(bundled[name] == MACHINE_SHAPES[name] for name in shared)


def test_it_refuses_skus_whose_unit_or_tiers_it_cannot_read():
    prices, refusals, *_ = read(ok("gcp_bad_data.json"))
    # the Spot GPU SKU is priced per "mo", the commitment has two tiers: both refused as unit
    assert refusals.counts[UNIT] == 2
    assert ("a2-highgpu-1g", "us-central1", "spot") not in prices
    assert price(prices, "a2-highgpu-1g", "on_demand") == Decimal("3.673385")
    # the undocumented region is priced by the reader; the refresh's checks refuse it (test_live_sources)
    assert ("a2-highgpu-1g", "moon-central1", "on_demand") in prices


def test_an_empty_catalog_yields_nothing():
    prices, refusals, stats, _ = read(ok("gcp_empty.json"))
    assert (prices, refusals.total, stats.items_seen) == ({}, 0, 0)


def test_throttling_is_waited_out_and_a_refused_key_is_not_retried():
    sleeps: list[float] = []
    prices, *_ = read(throttled("3"), ok("gcp_page1.json"), ok("gcp_page2.json"), sleeps=sleeps)
    assert sleeps == [3.0] and prices
    from pricing.providers.http_api import HttpAnswer

    with pytest.raises(HttpSourceError, match="HTTP 400"):
        read(HttpAnswer(400, b'{"error": {"message": "API key not valid. Please pass a valid API key."}}'))


def test_an_html_error_page_is_retried():
    prices, *_ = read(error_page(502), ok("gcp_page1.json"), ok("gcp_page2.json"))
    assert price(prices, "a2-highgpu-1g", "on_demand") == Decimal("3.673385")


def test_a2_highgpu_1g_agrees_with_the_bundled_catalog_to_its_five_decimals():
    prices, *_ = read(ok("gcp_page1.json"), ok("gcp_page2.json"))
    gpu_csv = HOSTS_CSV.with_name("vms.gpu.csv")
    with HOSTS_CSV.open(newline="") as hosts, gpu_csv.open(newline="") as gpus:
        host = next(
            r
            for r in csv.DictReader(hosts)
            if (r["InstanceType"], r["AvailabilityZone"]) == ("a2-highgpu-1g", "us-central1-a")
        )
        gpu = next(
            r
            for r in csv.DictReader(gpus)
            if (r["AcceleratorName"], r["AcceleratorCount"], r["AvailabilityZone"])
            == ("A100", "1", "us-central1-a")
        )
    bundled = Decimal(host["Price"]) + Decimal(gpu["Price"])  # 0.73948 + 2.93391 = 3.67339
    assert abs(price(prices, "a2-highgpu-1g", "on_demand") - bundled) <= Decimal("0.00001")


def test_a_machine_with_bundled_local_ssd_and_no_ssd_sku_is_refused_counted_and_the_rest_lands():
    prices, refusals, stats, _ = read(ok("gcp_page1.json"), ok("gcp_page2.json"))
    # the H100 on-demand SKU (us-central1) completes a3-highgpu-1g/2g/4g/8g, each bundling Local SSD
    # (750, 1,500, 3,000, 6,000 GiB) that no SKU here prices: 4 machines refused under one reason
    assert stats.skipped_reasons[SSD_UNPRICED] == 4
    assert not [key for key in prices if key[0].startswith("a3-")]
    # the H100 GPU is not counted a second time as a GPU without its host SKUs
    assert stats.skipped_reasons[NO_HOST_PARTS] == 0
    # the rest of the source lands
    assert price(prices, "a2-highgpu-1g", "on_demand") == Decimal("3.673385") and refusals.total == 0


def local_ssd_read(drop: tuple[str, ...] = ()):
    """page1 + page2 + the HAND-WRITTEN Local SSD page (tests/pricing/providers/recorded/
    gcp_local_ssd_hand_written.json: edge cases in the documented SKU forms, round prices for hand
    computation, not Google's), without the SKUs in ``drop``."""
    pages = [
        json.loads((RECORDED / name).read_text()) for name in ("gcp_page1.json", "gcp_page2.json", LOCAL_SSD)
    ]
    pages[2]["skus"] = [sku for sku in pages[2]["skus"] if sku["skuId"] not in drop]
    refusals, stats = Refusals(), GcpReadStats()
    parts = gcp_parts(iter(pages), refusals=refusals, stats=stats)
    records = list(gcp_machine_records(parts, observed_at=NOW, stats=stats))
    prices = {(r.instance.name, r.region, r.pricing_model): r.price_per_hour for r in records}
    return parts, prices, stats, refusals


def test_bundled_local_ssd_is_priced_per_gib_month_over_730_hours_from_the_familys_own_sku_first():
    """Hand-written edge cases (see local_ssd_read): the family's own "A3 Instance Local SSD" SKU
    (0.073 USD per GiB-month) is taken before the generic "SSD backed Local Storage" (0.08)."""
    parts, prices, stats, refusals = local_ssd_read()
    # a3-highgpu-8g = 98.589024 (GPUs + cores + RAM, above) + 6,000 GiB x 0.073 / 730 h = + 0.6
    assert prices[("a3-highgpu-8g", "us-central1", "on_demand")] == Decimal("99.189024")
    # a3-highgpu-1g = 11.06125 + 26 x 0.029563 + 234 x 0.00211 + 750 x 0.073 / 730
    # = 11.06125 + 0.768638 + 0.49374 + 0.075 = 12.398628
    assert prices[("a3-highgpu-1g", "us-central1", "on_demand")] == Decimal("12.398628")
    # the Spot SKU Google files under usageType OnDemand is read as Spot (its description), so it never
    # replaces the on-demand SSD price: 0.048 / 730 per GiB-hour under spot
    assert parts[("SSD", "", "spot", "us-central1")].price == Decimal("0.048") / 730
    assert parts[("SSD", "", "on_demand", "us-central1")].price == Decimal("0.08") / 730
    # "SSD backed Local Storage in Paris" filed under resource group "SSD": not read by its text alone
    assert stats.skipped_reasons["Local SSD description outside resource group LocalSSD"] == 1
    assert stats.skipped_reasons[SSD_UNPRICED] == 0 and refusals.total == 0


def test_without_a_family_sku_the_generic_local_storage_sku_prices_the_bundled_ssd():
    _, prices, *_ = local_ssd_read(drop=("HAND-0001-0004",))
    # 98.589024 + 6,000 x 0.08 / 730 = 98.589024 + 0.657534246... = 99.246558 (to the micro-dollar)
    assert prices[("a3-highgpu-8g", "us-central1", "on_demand")] == Decimal("99.246558")
    # a machine with no bundled SSD is unchanged: a2-highgpu-1g 3.673385
    assert prices[("a2-highgpu-1g", "us-central1", "on_demand")] == Decimal("3.673385")


def test_a_local_ssd_sku_in_an_unknown_unit_is_refused_and_its_machines_with_it():
    pages = json.loads((RECORDED / LOCAL_SSD).read_text())
    for sku in pages["skus"]:
        sku["pricingInfo"][0]["pricingExpression"]["usageUnit"] = "GBy.mo"
    refusals, stats = Refusals(), GcpReadStats()
    parts = gcp_parts(
        iter([json.loads((RECORDED / "gcp_page2.json").read_text()), pages]), refusals=refusals, stats=stats
    )
    assert refusals.counts[UNIT] == 3  # the three LocalSSD SKUs; the mis-grouped one is skipped, not read
    records = list(gcp_machine_records(parts, observed_at=NOW, stats=stats))
    assert {r.instance.name for r in records} >= {"g2-standard-4"}  # page2's other machines still land
    assert not [r for r in records if r.instance.name.startswith("a3-")]
    assert stats.skipped_reasons[SSD_UNPRICED] == 4
