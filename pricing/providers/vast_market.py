"""Vast.ai's public offer search (``GET https://console.vast.ai/api/v0/bundles/?q=<JSON>``) into price records.

The answer is ``{"offers": [...]}``, one object per rentable ask. The shape and units read here are the
ones Vast's own CLI and SkyPilot's catalog fetcher read (vast-ai/vast-python ``vast.py`` ``search offers``:
GET ``/bundles`` with the query as the ``q`` parameter, rows under ``offers``; skypilot
``sky/catalog/data_fetchers/fetch_vast.py``: ``cpu_ram`` divided by 1024 to GiB, ``gpu_total_ram`` in MiB):

- ``id`` (int): the offer; ``gpu_name`` ("RTX 4090", "H100 SXM", "A100 SXM4"); ``num_gpus`` (int);
- ``dph_total``: the whole offer's price in USD per hour (GPUs, the host's share and the searched disk);
  ``min_bid``: the current lowest bid in USD per hour for the same machine as an interruptible (spot) rental;
- ``cpu_cores_effective`` (vCPUs this offer gets), ``cpu_ram`` (MB, the whole machine's: scaled by
  ``gpu_frac``, the offer's share of the machine's GPUs), ``gpu_ram`` (MB per GPU),
  ``disk_space`` (GB), ``inet_down`` (Mb/s), ``geolocation`` ("Texas, US"), ``reliability2`` (0..1; not
  stored).

Each offer becomes its own instance type, ``<n>x-<gpu_name with _>-<GiB per GPU>g-offer<id>``
(``8x-H100_SXM-80g-offer21536`` ...): the prefix is the one SkyPilot's Vast catalog uses, so the Vast rules of
procurement/data/interconnects.csv apply, and the GPU memory in the name lets an alias tell the 40 GB A100
from the 80 GB one (pricing/data/gpu_aliases.csv). Host figures are the offer's own: known.

The API does not page by itself: it answers up to the query's ``limit`` rows. We page by key: offers in
``id`` order, each page asking for ids above the last one seen, until a page comes back short. A page that
is throttled (429, waiting what Retry-After asks) or hits a briefly failing server (5xx) is retried on its
own (pricing/providers/http_api.py); a refused request (403), a body that is not JSON (an HTML page) or
one over ``http_api.MAX_BODY_BYTES`` fails the refresh, and so does an empty first answer (the market is
never empty; "no offers" means the search broke), so that nothing is marked gone on a bad answer.

A row that cannot be a price (no id, no GPU name, a GPU count or price that is not a positive number, no
location) is refused and counted with its reason; the rest of the answer lands.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import re
import urllib.parse
from collections.abc import Iterator
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from typing import Any

from pricing.providers.cells import PRICE_QUANTUM
from pricing.providers.http_api import HttpSourceError, Transport, get_json, urllib_transport
from pricing.providers.records import InstanceTypeRecord, PriceRecord, SourceRowError
from pricing.providers.retry import RetryPolicy
from pricing.providers.vocabulary import ON_DEMAND, SPOT

VAST_BUNDLES_URL = "https://console.vast.ai/api/v0/bundles/"
PROVIDER = "vast"
SOURCE = "vast:bundles"
CURRENCY = "USD"  # Vast prices every offer in US dollars
PAGE_SIZE = 1000
MAX_PAGES = 100  # at most 100,000 offers a refresh (Vast lists some thousands): a bound, not a target
MB_PER_GIB = Decimal(1024)  # Vast's "MB" are MiB: 24564 for a 24 GiB RTX 4090, 81920 for an 80 GB A100
# Above any real figure read here (the largest, cpu_ram, is ~2e6 MB on a 2 TiB host; a price is < 1e3 $/h):
# a figure this big is a broken row, and refusing it keeps quantize and the numeric columns in range.
MAX_NUMBER = Decimal("1e9")
# No credentials: the search is public. A named client, since some gateways refuse urllib's default agent.
HEADERS = {
    "Accept": "application/json",
    "User-Agent": "gpuledger price refresh (+https://github.com/gpuledger)",
}


_WHITESPACE = re.compile(r"\s+")


class EmptyMarketAnswer(HttpSourceError):
    """The search listed no offer at all: a broken answer, not an empty market. Nothing is marked gone."""


@dataclass
class VastMarketStats:
    """What a refresh saw; ``listed`` and ``complete`` decide which stored offers are gone."""

    pages: int = 0
    items_seen: int = 0
    rejected: int = 0
    rejected_locations: list[str] = field(default_factory=list)  # "page 2 offer 123: dph_total: ..."
    records: int = 0
    listed: set[tuple[str, str, str]] = field(default_factory=set)  # (instance type, region, zone)
    complete: bool = False  # every page was read: only then is an offer not listed gone


def offers_query(*, after_id: int, limit: int) -> dict[str, Any]:
    """The search: every rentable on-demand offer of a verified host (the CLI's default filter), in id
    order, ids above ``after_id`` only (our paging key)."""
    return {
        "verified": {"eq": True},
        "external": {"eq": False},
        "rentable": {"eq": True},
        "id": {"gt": after_id},
        "order": [["id", "asc"]],
        "type": "on-demand",
        "limit": limit,
    }


def offers_url(*, after_id: int, limit: int) -> str:
    query = json.dumps(offers_query(after_id=after_id, limit=limit), separators=(",", ":"))
    return f"{VAST_BUNDLES_URL}?q={urllib.parse.quote(query)}"


def fetch_vast_market(
    *,
    now: dt.datetime,
    transport: Transport = urllib_transport,
    policy: RetryPolicy | None = None,
    page_size: int = PAGE_SIZE,
    max_pages: int = MAX_PAGES,
    stats: VastMarketStats | None = None,
) -> Iterator[PriceRecord]:
    """The on-demand and interruptible prices of every listed offer, observed at ``now``, page by page."""
    policy = policy or RetryPolicy()
    stats = stats if stats is not None else VastMarketStats()
    after_id = 0
    for page in range(1, max_pages + 1):
        url = offers_url(after_id=after_id, limit=page_size)
        document = get_json(
            url, transport=transport, policy=policy, what=f"vast bundles page {page}", headers=HEADERS
        )
        offers = _offers(document, page)
        stats.pages = page
        if page == 1 and not offers:
            raise EmptyMarketAnswer(
                "vast bundles page 1: no offers listed; nothing marked gone, prices as they were"
            )
        yield from parse_offers(offers, observed_at=now, page=page, stats=stats)
        ids = [
            offer["id"] for offer in offers if _is_id(offer.get("id") if isinstance(offer, dict) else None)
        ]
        if len(offers) < page_size or not ids:
            stats.complete = True
            return
        after_id = max(ids)


def parse_offers(
    offers: list[Any], *, observed_at: dt.datetime, page: int = 1, stats: VastMarketStats | None = None
) -> Iterator[PriceRecord]:
    """Price records of one page's offers; refused rows are counted in ``stats`` with their reason."""
    stats = stats if stats is not None else VastMarketStats()
    for index, offer in enumerate(offers):
        stats.items_seen += 1
        where = f"{SOURCE} page {page} row {index + 1}"
        try:
            records = list(_offer_records(offer, observed_at, where))
        except _Refused as refused:
            stats.rejected += 1
            stats.rejected_locations.append(f"{refused.location}: {refused.field}: {refused.reason}")
            continue
        first = records[0]
        stats.listed.add((first.instance.name, first.region, first.zone))
        stats.records += len(records)
        yield from records


class _Refused(Exception):
    def __init__(self, location: str, field_name: str, reason: str):
        super().__init__(f"{location}: {field_name}: {reason}")
        self.location, self.field, self.reason = location, field_name, reason


def _offers(document: Any, page: int) -> list[Any]:
    if not isinstance(document, dict) or not isinstance(document.get("offers"), list):
        keys = sorted(document)[:5] if isinstance(document, dict) else type(document).__name__
        raise SourceRowError(
            f"{SOURCE} page {page}", "offers", f"no list of offers in the answer (got {keys})"
        )
    return document["offers"]


def _is_id(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value > 0


def _offer_records(offer: Any, observed_at: dt.datetime, where: str) -> Iterator[PriceRecord]:
    if not isinstance(offer, dict):
        raise _Refused(where, "offer", f"not an object ({type(offer).__name__})")
    if not _is_id(offer.get("id")):
        raise _Refused(where, "id", f"{offer.get('id')!r} is not a positive whole number")
    where = f"{where} offer {offer['id']}"
    instance = _instance(offer, where)
    region = _text(offer, "geolocation", where)
    # Vast answers float noise (0.16805555555555554): an hourly price keeps 6 decimals, as every source's
    price = _number(offer, "dph_total", where)
    price = price.quantize(PRICE_QUANTUM) if price is not None else None
    if price is None or price <= 0:
        raise _Refused(where, "dph_total", f"{_shown(offer.get('dph_total'))} is not a price above zero")
    prices = [(ON_DEMAND, price)]
    bid = _number(offer, "min_bid", where)
    bid = bid.quantize(PRICE_QUANTUM) if bid is not None else None
    if bid is not None and bid > 0:  # 0 or absent: no interruptible price, never a free one
        prices.append((SPOT, bid))
    for pricing_model, amount in prices:
        yield PriceRecord(
            instance=instance,
            region=region,
            zone="",
            pricing_model=pricing_model,
            price_per_hour=amount,
            currency=CURRENCY,
            observed_at=observed_at,
            source=SOURCE,
            location=where,
        )


def _instance(offer: dict, where: str) -> InstanceTypeRecord:
    gpu_name = _text(offer, "gpu_name", where)
    gpus = _number(offer, "num_gpus", where)
    if gpus is None or gpus <= 0 or gpus != gpus.to_integral_value():
        raise _Refused(
            where, "num_gpus", f"{_shown(offer.get('num_gpus'))} is not a whole number of GPUs above zero"
        )
    gpu_mib = _positive(offer, "gpu_ram", where)
    gpu_gib = None if gpu_mib is None else (gpu_mib / MB_PER_GIB).quantize(Decimal("0.01"))
    memory_mib = _offer_share_of_ram(offer, where)
    disk_gb = _positive(offer, "disk_space", where)
    inet_down = _positive(offer, "inet_down", where)
    memory_tag = f"{gpu_gib.to_integral_value()}g" if gpu_gib is not None else "unknown-g"
    return InstanceTypeRecord(
        provider=PROVIDER,
        name=f"{int(gpus)}x-{_WHITESPACE.sub('_', gpu_name)}-{memory_tag}-offer{offer['id']}",
        gpu_name=gpu_name,
        gpu_count=gpus,
        vcpus=_positive(offer, "cpu_cores_effective", where, quantum="0.01"),
        memory_gib=None if memory_mib is None else (memory_mib / MB_PER_GIB).quantize(Decimal("0.01")),
        gpu_memory_gib=gpu_gib,
        local_disk_gb=None if disk_gb is None else disk_gb.quantize(Decimal("0.1")),
        network="" if inet_down is None else f"internet down {inet_down.normalize():f} Mb/s",
    )


def _text(offer: dict, key: str, where: str) -> str:
    value = offer.get(key)
    if not isinstance(value, str) or not value.strip():
        raise _Refused(where, key, f"{value!r} is not a name")
    return value.strip()


def _number(offer: dict, key: str, where: str) -> Decimal | None:
    """A JSON number as Decimal; None when absent or null. The fetched answer's decimals are already
    Decimal (http_api parses them exactly); a float (a row built in code) is read by its shortest repr,
    so 0.35 stays 0.35. NaN and Infinity (which JSON parsing lets through as floats) are refused."""
    value = offer.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float | Decimal):
        raise _Refused(where, key, f"{value!r} is not a number")
    if isinstance(value, Decimal):
        number = value
    elif isinstance(value, float) and not math.isfinite(value):
        raise _Refused(where, key, f"{value!r} is not a finite number")
    else:
        try:
            number = Decimal(repr(value))
        except InvalidOperation:
            raise _Refused(where, key, f"{value!r} is not a number") from None
    if not number.is_finite() or abs(number) >= MAX_NUMBER:
        raise _Refused(where, key, f"{_shown(value)} is not a plausible figure")
    return number


def _shown(value: Any) -> str:
    """A value as a refusal names it: a Decimal as its digits (0.0, not Decimal('0.0'))."""
    return str(value) if isinstance(value, Decimal) else repr(value)


def _offer_share_of_ram(offer: dict, where: str) -> Decimal | None:
    """The system RAM this offer gets, in MiB. ``cpu_ram`` is the whole machine's ("system RAM", vast.py
    ``search offers`` help) and an offer may rent part of the machine: ``gpu_frac`` is the "Ratio of GPUs in
    the offer to gpus in the system" (same help), and Vast scales the cores by it (``cpu_cores_effective``
    = ``cpu_cores`` x ``gpu_frac`` in all 1,396 offers of the recorded real answer, 806 of them below 1).
    The RAM is scaled the same way. Without a ``gpu_frac`` in (0, 1] the share is not known: unknown."""
    machine_mib = _positive(offer, "cpu_ram", where)
    share = _number(offer, "gpu_frac", where)
    if machine_mib is None or share is None or not 0 < share <= 1:
        return None
    return machine_mib * share


def _positive(offer: dict, key: str, where: str, quantum: str | None = None) -> Decimal | None:
    """A host figure: above zero, else unknown (Vast writes 0 or omits it when the host reports none)."""
    value = _number(offer, key, where)
    if value is None or value <= 0:
        return None
    return value.quantize(Decimal(quantum)) if quantum else value
