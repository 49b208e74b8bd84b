"""Azure Retail Prices reader against recorded, real-shaped pages (tests/pricing/providers/recorded)."""

from __future__ import annotations

import datetime as dt
import json
import urllib.parse
from decimal import Decimal

import pytest

from pricing.price_checks import AMBIGUOUS, UNIT, Refusals
from pricing.providers.azure_retail import (
    SIZE,
    AzureReadStats,
    azure_price_records,
    fetch_azure_prices,
    first_page_url,
)
from pricing.providers.azure_sizes import AZURE_GPU_SIZES
from pricing.providers.retry import TransientSourceError
from tests.pricing.providers.fake_http import FakeHttp, error_page, no_wait_policy, ok, recorded, throttled

NOW = dt.datetime(2026, 12, 3, 14, 20, tzinfo=dt.UTC)
DAY = dt.datetime(2026, 12, 3, tzinfo=dt.UTC)


def read(*answers, sleeps=None):
    refusals, stats, http = Refusals(), AzureReadStats(), FakeHttp(*answers)
    records = list(
        fetch_azure_prices(
            now=NOW, refusals=refusals, stats=stats, transport=http, policy=no_wait_policy(sleeps)
        )
    )
    prices = {(r.instance.name, r.region, r.pricing_model, r.payment_option): r for r in records}
    return prices, refusals, stats, http


def test_it_pages_through_next_page_link_and_reads_every_price_kind():
    prices, refusals, stats, http = read(ok("azure_page1.json"), ok("azure_page2.json"))
    assert [url for url, _ in http.calls][1].endswith("&$skip=1000")  # the NextPageLink, as given
    assert stats.pages == 2 and stats.items_seen == 14
    h100 = ("Standard_ND96isr_H100_v5", "eastus")
    # pay-as-you-go and Spot: retailPrice per hour, as listed
    assert prices[(*h100, "on_demand", "")].price_per_hour == Decimal("98.32")
    assert prices[(*h100, "spot", "")].price_per_hour == Decimal("39.328")
    # savings plans: the hourly savingsPlan retailPrice of each term, no upfront
    assert prices[(*h100, "savings_plan_1y", "no_upfront")].price_per_hour == Decimal("78.656")
    assert prices[(*h100, "savings_plan_3y", "no_upfront")].price_per_hour == Decimal("66.1659")
    # reservations price the whole term: 551,004 / 8,760 h = 62.90; 1,122,156 / 26,280 h = 42.70
    one_year = prices[(*h100, "reserved_1y", "all_upfront")]
    assert (one_year.price_per_hour, one_year.upfront_fee) == (Decimal("62.900000"), Decimal("551004.0"))
    monthly = prices[(*h100, "reserved_1y", "no_upfront")]
    assert (monthly.price_per_hour, monthly.upfront_fee) == (Decimal("62.900000"), Decimal(0))
    assert prices[(*h100, "reserved_3y", "all_upfront")].price_per_hour == Decimal("42.700000")
    # Low Priority, Windows, Dev/Test and the non-primary meter are skipped, never priced
    assert stats.skipped == 4
    assert len([k for k in prices if k[:2] == h100]) == 8  # on-demand, Spot, 2 plans, 2 terms x 2 payments
    assert prices[("Standard_NC24ads_A100_v4", "westeurope", "on_demand", "")].price_per_hour == Decimal(
        "4.04"
    )
    assert all(r.observed_at == DAY and r.source == "azure:retail-prices" for r in prices.values())
    assert refusals.total == 0


def test_it_maps_sizes_to_gpus_from_the_size_table():
    prices, *_ = read(ok("azure_page1.json"), ok("azure_page2.json"))
    h100 = prices[("Standard_ND96isr_H100_v5", "eastus", "on_demand", "")].instance
    # ND H100 v5: 8 x H100 SXM5 80 GB, 96 vCPUs, 1,900 GiB (learn.microsoft.com .../ndh100v5-series)
    assert (h100.provider, h100.gpu_name, h100.gpu_count, h100.vcpus, h100.memory_gib) == (
        "azure",
        "H100",
        8,
        96,
        1900,
    )
    a100 = prices[("Standard_NC96ads_A100_v4", "eastus", "on_demand", "")].instance
    assert (a100.gpu_name, a100.gpu_count, a100.vcpus, a100.memory_gib) == ("A100-80GB-PCIE", 4, 96, 880)
    # NVv3's M60 keeps its name: stored unmapped (reported), never dropped
    assert prices[("Standard_NV12s_v3", "eastus", "on_demand", "")].instance.gpu_name == "M60"


def test_every_size_in_the_table_is_a_gpu_family_with_a_source_page():
    assert all(name.startswith(("Standard_NC", "Standard_ND", "Standard_NV")) for name in AZURE_GPU_SIZES)
    assert all(
        size.series_page.endswith("-series") and size.gpu_count > 0 for size in AZURE_GPU_SIZES.values()
    )


def test_the_query_asks_for_gpu_vm_meters_of_the_primary_region_only():
    query = urllib.parse.parse_qs(urllib.parse.urlsplit(first_page_url()).query)
    assert query["api-version"] == ["2023-01-01-preview"] and query["meterRegion"] == ["'primary'"]
    assert "contains(armSkuName, 'Standard_ND')" in query["$filter"][0]


def test_it_refuses_rows_it_cannot_read_and_keeps_the_rest():
    prices, refusals, *_ = read(ok("azure_bad_data.json"))
    # "1/Month" is no hourly unit; NC8ads_A10_v4 is no size in the table
    assert dict(refusals.counts) == {UNIT: 1, SIZE: 1}
    assert "unitOfMeasure '1/Month'" in refusals.examples[UNIT][0]
    assert ("Standard_NC24ads_A100_v4", "eastus", "on_demand", "") in prices


def test_an_empty_answer_yields_nothing():
    prices, refusals, stats, _ = read(ok("azure_empty.json"))
    assert (prices, refusals.total, stats.pages) == ({}, 0, 1)


def test_a_throttled_page_is_fetched_again_after_its_retry_after():
    sleeps: list[float] = []
    prices, _, stats, http = read(
        ok("azure_page1.json"), throttled("4"), ok("azure_page2.json"), sleeps=sleeps
    )
    assert sleeps == [4.0] and stats.pages == 2 and http.calls[1][0] == http.calls[2][0]


def test_an_error_page_that_persists_fails_the_run_as_transient():
    with pytest.raises(TransientSourceError, match="azure retail prices page 1"):
        read(*[error_page()] * 4)


def _items(*items: dict) -> list[dict]:
    return [{"Items": list(items), "NextPageLink": None}]


def _h100(product: str, price: float, **extra) -> dict:
    """The Linux pay-as-you-go item of azure_page1.json (ND96isr H100 v5, eastus, 98.32 $/h: Azure's
    published price), with its product name and price set; Microsoft Learn's examples show the Linux
    product named "Virtual Machines <series> Series" and its Windows sibling "... Series Windows"."""
    item = {
        k: v for k, v in json.loads(recorded("azure_page1.json"))["Items"][0].items() if k != "savingsPlan"
    }
    return {**item, "productName": product, "retailPrice": price, "unitPrice": price, **extra}


LINUX = _h100("Virtual Machines NDisrH100v5 Series", 98.32)
WINDOWS = _h100("Virtual Machines NDisrH100v5 Series Windows", 132.232)  # same size, same meterName
OTHER = _h100("Virtual Machines NDisrH100v5 Series Dedicated Host", 120.0)


@pytest.mark.parametrize("order", [(LINUX, WINDOWS, OTHER), (OTHER, WINDOWS, LINUX), (WINDOWS, LINUX, OTHER)])
def test_the_linux_price_does_not_depend_on_the_items_order(order):
    refusals, stats = Refusals(), AzureReadStats()
    records = list(azure_price_records(iter(_items(*order)), observed_at=DAY, refusals=refusals, stats=stats))
    assert [(r.pricing_model, r.price_per_hour) for r in records] == [("on_demand", Decimal("98.320000"))]
    assert stats.skipped_reasons == {"Windows product": 1, "another product of the size": 1}
    assert refusals.total == 0


def test_two_linux_products_pricing_one_offer_differently_are_both_refused():
    second = _h100("Virtual Machines NDisr H100 v5 Series", 101.0)
    refusals, stats = Refusals(), AzureReadStats()
    records = list(
        azure_price_records(iter(_items(LINUX, second)), observed_at=DAY, refusals=refusals, stats=stats)
    )
    assert records == []
    assert refusals.counts == {AMBIGUOUS: 1}
    assert "98.320000" in refusals.examples[AMBIGUOUS][0] and "101.000000" in refusals.examples[AMBIGUOUS][0]


def test_microsoft_learns_verbatim_examples_are_skipped_with_their_reasons():
    """The three documented answers (recorded/real/azure_learn_examples.json, PROVENANCE.md) are F16s and
    E64 v4 items: no GPU size, so nothing is priced and each skip is counted, none refused."""
    prices, refusals, stats, _ = read(ok("real/azure_learn_examples.json"))
    assert prices == {} and refusals.total == 0
    assert stats.skipped_reasons == {"not an NC/ND/NV size": 3}
