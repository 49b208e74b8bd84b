"""Azure GPU VM prices from the public Retail Prices API (no key): pay-as-you-go, Spot, reservations
and savings plans of the NC, ND and NV sizes, every region, one paged listing.

``GET https://prices.azure.com/api/retail/prices?api-version=2023-01-01-preview&meterRegion='primary'
&$filter=...`` answers ``{BillingCurrency, CustomerEntityId, Items: [...], NextPageLink, Count}``; the
reader follows ``NextPageLink`` until it is null. How an item is read (Microsoft Learn, "Azure Retail
Prices overview", learn.microsoft.com/rest/api/cost-management/retail-prices/azure-retail-prices):

- ``type`` Consumption with a meterName ending "Spot": a Spot price per hour; ending "Low Priority":
  the retired Batch low-priority meter, skipped; otherwise pay-as-you-go (on-demand). Windows products
  (productName ending "Windows") carry a licence and are skipped: gpuledger compares Linux prices.
- ``type`` Reservation: ``retailPrice`` is the price of the WHOLE term (``reservationTerm`` "1 Year" or
  "3 Years") although ``unitOfMeasure`` says "1 Hour"; the effective hourly price is that total over the
  term's hours (8,760 a year, as for AWS: vocabulary.TERM_HOURS). Azure bills a reservation up front or
  in equal monthly instalments at the same total, so it is emitted twice: all_upfront (the total kept as
  upfront_fee) and no_upfront (upfront_fee 0), at the same effective hourly price.
- ``savingsPlan`` (2023-01-01-preview only) on a pay-as-you-go item: ``[{unitPrice, retailPrice,
  term}]``, an hourly price for a 1- or 3-year hourly commitment: savings_plan_1y/3y, no_upfront.
- ``type`` DevTestConsumption (dev/test subscriptions only) is skipped.
- Only the Linux VM product of a size is priced. Its ``productName`` takes two forms in live answers:
  "Virtual Machines <series> Series" (Microsoft Learn's examples; NCasT4 v3) and "<series> Series Linux"
  (NCads A100 v4, recorded/real/azure_tide_gpu_eastus.json), both accepted. Other products share the size (``armSkuName``) and the meter name ("... Series Windows", "... Series
  Basic", "Cloud Services", dedicated hosts): they are skipped by the product's own name, never by where
  they stand in the listing. Two items left for one size, region, pricing model and payment option at
  different prices are both refused (``ambiguous``): the price never depends on the items' order.
- Every skipped item is counted under its reason (``AzureReadStats.skipped_reasons``), shown on /status/.
- ``armSkuName`` names the size (pricing/providers/azure_sizes.py gives its GPUs); ``armRegionName``
  the region. Only primary meters are asked for: a non-primary meter repeats a price under a second id.

Refused, with their reasons (pricing.price_checks): a unit other than "1 Hour" or a term other than
1 or 3 years (``unit``), a GPU size the table does not list (``size``); bad prices, currencies and
regions are refused by the checks every refresh runs.
"""

from __future__ import annotations

import datetime as dt
import re
import urllib.parse
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from pricing.price_checks import AMBIGUOUS, UNIT, Refusals
from pricing.providers.azure_sizes import AZURE_GPU_SIZES, is_gpu_family
from pricing.providers.cells import PRICE_QUANTUM
from pricing.providers.http_api import Transport, get_json, urllib_transport
from pricing.providers.records import InstanceTypeRecord, PriceRecord, SourceRowError
from pricing.providers.retry import RetryPolicy
from pricing.providers.vocabulary import (
    ALL_UPFRONT,
    NO_UPFRONT,
    ON_DEMAND,
    RESERVED_1Y,
    RESERVED_3Y,
    SAVINGS_PLAN_1Y,
    SAVINGS_PLAN_3Y,
    SPOT,
    TERM_HOURS,
)

API_URL = "https://prices.azure.com/api/retail/prices"
API_VERSION = "2023-01-01-preview"
# Filter values are case-sensitive from this API version on (the overview page says so).
GPU_FILTER = (
    "serviceName eq 'Virtual Machines' and (contains(armSkuName, 'Standard_NC') or "
    "contains(armSkuName, 'Standard_ND') or contains(armSkuName, 'Standard_NV'))"
)
SOURCE = "azure:retail-prices"
SIZE = "size"  # a refusal reason of this reader: an NC/ND/NV size azure_sizes.py does not list
HOURLY_UNIT = "1 Hour"
RESERVATION_TERMS = {"1 Year": RESERVED_1Y, "3 Years": RESERVED_3Y}
SAVINGS_PLAN_TERMS = {"1 Year": SAVINGS_PLAN_1Y, "3 Years": SAVINGS_PLAN_3Y}
MAX_PAGES = 2000  # the GPU listing is a few dozen pages of 1,000 items; a loop beyond this is a bug
# The Linux product of a VM series, in both forms live answers use: "Virtual Machines Ev4 Series" (Microsoft
# Learn's Retail Prices examples, whose Windows sibling is "Virtual Machines FS Series Windows") and
# "NCads A100 v4 Series Linux" (a recorded eastus answer, tests/.../real/PROVENANCE.md, whose Windows
# sibling is "NCads A100 v4 Series Windows"). Accepting only the first left newer GPU series unpriced.
LINUX_PRODUCT = re.compile(r"^(Virtual Machines .+ Series|.+ Series Linux)$")


@dataclass
class AzureReadStats:
    """What a listing held, for the PriceRefresh row (rejected: kept 0 here, the checks count those)."""

    pages: int = 0
    items_seen: int = 0
    skipped: int = 0  # other families, Windows, low priority, dev/test, non-primary meters
    skipped_reasons: Counter = field(default_factory=Counter)  # each skip under its reason
    records: int = 0
    rejected: int = 0
    rejected_locations: list[str] = field(default_factory=list)


def first_page_url() -> str:
    query = {"api-version": API_VERSION, "meterRegion": "'primary'", "$filter": GPU_FILTER}
    return f"{API_URL}?{urllib.parse.urlencode(query, quote_via=urllib.parse.quote)}"


def azure_pages(*, transport: Transport, policy: RetryPolicy) -> Iterator[dict[str, Any]]:
    """Every page of the GPU listing, following NextPageLink."""
    url: str | None = first_page_url()
    for page_number in range(1, MAX_PAGES + 1):
        page = get_json(
            url, transport=transport, policy=policy, what=f"azure retail prices page {page_number}"
        )
        yield page
        url = page.get("NextPageLink")
        if not url:
            return
        if not url.startswith(API_URL):
            raise SourceRowError(f"azure page {page_number}", "NextPageLink", "points outside the price API")
    raise SourceRowError("azure", "NextPageLink", f"still another page after {MAX_PAGES} pages")


def azure_price_records(
    pages: Iterator[dict[str, Any]], *, observed_at: dt.datetime, refusals: Refusals, stats: AzureReadStats
) -> Iterator[PriceRecord]:
    """Every priced item, once per (size, region, pricing model, payment option). The listing is read
    whole first: which item stands for a key must not depend on where it stands in the listing."""
    by_key: dict[tuple[str, str, str, str], list[PriceRecord]] = {}
    for page_number, page in enumerate(pages, start=1):
        stats.pages += 1
        currency = page.get("BillingCurrency", "USD")
        for item_number, item in enumerate(page.get("Items") or [], start=1):
            stats.items_seen += 1
            location = f"azure:retail-prices page {page_number} item {item_number}"
            for record in _item_records(item, currency, location, observed_at, refusals, stats):
                key = (record.instance.name, record.region, record.pricing_model, record.payment_option)
                by_key.setdefault(key, []).append(record)
    for key, records in by_key.items():
        prices = {(r.price_per_hour, r.currency) for r in records}
        if len(prices) > 1:  # two products claim one offer at different prices: neither is the price
            where = "; ".join(f"{r.location} {r.price_per_hour} {r.currency}" for r in records)
            refusals.refuse(AMBIGUOUS, f"{' '.join(filter(None, key))}: {where}")
            continue
        if len(records) > 1:  # the same price under a second meter: counted, one stands
            _skip(stats, "same price under another meter", len(records) - 1)
        stats.records += 1
        yield records[0]


def _skip(stats: AzureReadStats, reason: str, count: int = 1) -> None:
    stats.skipped += count
    stats.skipped_reasons[reason] += count


def _item_records(
    item: dict[str, Any],
    currency: str,
    location: str,
    observed_at: dt.datetime,
    refusals: Refusals,
    stats: AzureReadStats,
) -> list[PriceRecord]:
    size_name = str(item.get("armSkuName") or "")
    reason = _skip_reason(item, size_name)
    if reason is not None:
        _skip(stats, reason)
        return []
    size = AZURE_GPU_SIZES.get(size_name)
    if size is None:
        refusals.refuse(SIZE, f"{location}: {size_name} is not in azure_sizes.py")
        return []
    if item.get("unitOfMeasure") != HOURLY_UNIT:
        refusals.refuse(UNIT, f"{location}: unitOfMeasure {item.get('unitOfMeasure')!r}")
        return []
    instance = InstanceTypeRecord(
        provider="azure",
        name=size_name,
        gpu_name=size.gpu_name,
        gpu_count=size.gpu_count,
        vcpus=Decimal(size.vcpus),
        memory_gib=Decimal(size.memory_gib),
        interconnect=size.interconnect,
    )
    try:
        price = _price(item, "retailPrice", location)
        plans = [
            (number, plan, _price(plan, "retailPrice", f"{location} savingsPlan {number}"))
            for number, plan in enumerate(item.get("savingsPlan") or [], start=1)
        ]
    except SourceRowError as error:  # a price that is not a number: this row goes, the rest lands
        refusals.refuse(UNIT, str(error))
        return []

    def record(model: str, amount: Decimal, payment: str = "", upfront: Decimal | None = None) -> PriceRecord:
        return PriceRecord(
            instance=instance,
            region=str(item.get("armRegionName") or ""),
            zone="",
            pricing_model=model,
            price_per_hour=amount.quantize(PRICE_QUANTUM),
            currency=str(item.get("currencyCode") or currency),
            observed_at=observed_at,
            source=SOURCE,
            location=location,
            payment_option=payment,
            upfront_fee=upfront,
        )

    if item.get("type") == "Reservation":
        model = RESERVATION_TERMS.get(str(item.get("reservationTerm") or ""))
        if model is None:
            refusals.refuse(UNIT, f"{location}: reservationTerm {item.get('reservationTerm')!r}")
            return []
        hourly = price / TERM_HOURS[model]
        return [record(model, hourly, ALL_UPFRONT, price), record(model, hourly, NO_UPFRONT, Decimal(0))]
    if str(item.get("meterName", "")).endswith("Spot"):
        return [record(SPOT, price)]
    records = [record(ON_DEMAND, price)]
    for number, plan, plan_price in plans:
        model = SAVINGS_PLAN_TERMS.get(str(plan.get("term") or ""))
        if model is None:
            refusals.refuse(UNIT, f"{location} savingsPlan {number}: term {plan.get('term')!r}")
            continue
        records.append(record(model, plan_price, NO_UPFRONT))
    return records


def _skip_reason(item: dict[str, Any], size_name: str) -> str | None:
    """Why an item is outside what gpuledger compares (other families, Windows, low priority, dev/test,
    another product of the same size), or None when it is a Linux VM price to read."""
    meter, product = str(item.get("meterName") or ""), str(item.get("productName") or "")
    if not is_gpu_family(size_name):
        return "not an NC/ND/NV size"
    if item.get("type") not in ("Consumption", "Reservation"):
        return f"type {item.get('type')}"
    if meter.endswith("Low Priority"):
        return "low priority meter"
    if item.get("isPrimaryMeterRegion") is False:
        return "non-primary meter"
    if product.endswith(" Windows"):
        return "Windows product"
    if not LINUX_PRODUCT.match(product):
        return "another product of the size"
    return None


def _price(item: dict[str, Any], key: str, location: str) -> Decimal:
    value = item.get(key)
    if isinstance(value, bool) or not isinstance(value, int | float | Decimal):
        raise SourceRowError(location, key, f"{value!r} is not a number")
    return Decimal(str(value))


def fetch_azure_prices(
    *,
    now: dt.datetime,
    refusals: Refusals,
    stats: AzureReadStats,
    transport: Transport = urllib_transport,
    policy: RetryPolicy | None = None,
) -> Iterator[PriceRecord]:
    """Every GPU VM price of every region, stamped with the day it was read (a rerun the same day
    inserts nothing; the next day records that the price still holds)."""
    day = now.replace(hour=0, minute=0, second=0, microsecond=0)
    pages = azure_pages(transport=transport, policy=policy or RetryPolicy())
    yield from azure_price_records(pages, observed_at=day, refusals=refusals, stats=stats)
