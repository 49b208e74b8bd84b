"""GCP GPU machine prices from the Cloud Billing Catalog API: on-demand, Spot and committed use.

``GET https://cloudbilling.googleapis.com/v1/services/6F81-5844-456A/skus?pageToken=...`` (Compute
Engine's SKUs; the API key travels in the ``X-Goog-Api-Key`` header, never in the URL) answers
``{skus: [{name, skuId, description, category: {resourceFamily, resourceGroup, usageType},
serviceRegions, pricingInfo: [{pricingExpression: {usageUnit, tieredRates: [{unitPrice: {currencyCode,
units, nanos}}]}}]}], nextPageToken}``; pages are followed until the token is empty.

GCP prices a GPU machine by its parts, so the reader rebuilds each machine as gcp_hosts.py does from the
bundled catalog (cloud.google.com/compute/gpus-pricing, "GPU machine types" and "N1"):

    machine price = GPUs x GPU SKU + vCPUs x core SKU of its family + GiB x RAM SKU of its family
                    + bundled Local SSD GiB x Local SSD SKU per GiB-month / 730 h (A3, A2 Ultra)

per region and usage type: OnDemand (on_demand), Preemptible (spot: GCP's Spot VMs are billed on the
"Spot Preemptible" SKUs), Commit1Yr / Commit3Yr (reserved_1y / reserved_3y, payment no_upfront: a
committed-use discount is billed monthly, nothing up front). a2, a3 and g2 machine types come with
their GPUs (gcp_hosts.attached_gpus) and the vCPUs and memory in MACHINE_SHAPES; an n1 host carries the
GPU pairings gcp_n1.py allows, priced with the N1 core and RAM SKUs. A machine missing any part in a
region (no Spot SKU for that GPU there, say) is not priced there. A machine that comes with Local SSD
(gcp_local_ssd.BUNDLED_LOCAL_SSD_GIB) whose Local SSD SKU the answer lacks for that region and pricing
model is refused, counted under "bundled Local SSD unpriced", never priced without its disks.

Example (us-central1, on-demand): a2-highgpu-1g = 1 x 2.933908 (A100) + 12 x 0.031611 (A2 core)
+ 85 x 0.004237 (A2 RAM GiB) = 3.673385 $/h, GCP's list price for a2-highgpu-1g.

A GPU SKU is read by its category (resourceGroup "GPU", usageType) and the accelerator named in its
description ("Nvidia <label> GPU", wherever it stands: "Spot Preemptible Nvidia L4 GPU running in
Americas", "Nvidia Tesla T4 GPU attached to Spot Preemptible VMs running in Americas", "Commitment v1:
Nvidia L4 GPU in Americas for 1 Year"). A GPU SKU whose accelerator GPU_LABELS does not know is refused
under ``unknown_form`` with its description, never counted as an ordinary skip: a new GPU family shows
on /status/. Every other skip is counted under its reason (``GcpReadStats.skipped_reasons``).

Refused (pricing.price_checks): a GPU, core or RAM SKU in a unit other than "h" / "GiBy.h", a Local
SSD SKU in a unit other than "GiBy.mo" / "GiBy.h", or any of them with several price tiers (``unit``);
bad prices, currencies and regions by the checks every refresh runs.
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

from pricing.price_checks import UNIT, UNKNOWN_FORM, Refusals
from pricing.providers.cells import PRICE_QUANTUM
from pricing.providers.gcp_hosts import attached_gpus
from pricing.providers.gcp_local_ssd import (
    BUNDLED_LOCAL_SSD_GIB,
    GENERIC,
    SSD_UNIT_HOURS,
    SSD_UNPRICED,
    local_ssd_family,
    mentions_local_ssd,
    says_spot,
)
from pricing.providers.gcp_n1 import N1_HOSTS, n1_attachments, n1_instance_name
from pricing.providers.http_api import Transport, get_json, urllib_transport
from pricing.providers.records import InstanceTypeRecord, PriceRecord, SourceRowError
from pricing.providers.retry import RetryPolicy
from pricing.providers.vocabulary import NO_UPFRONT, ON_DEMAND, RESERVED_1Y, RESERVED_3Y, SPOT

COMPUTE_ENGINE_SERVICE = "6F81-5844-456A"
API_URL = f"https://cloudbilling.googleapis.com/v1/services/{COMPUTE_ENGINE_SERVICE}/skus"
SOURCE = "gcp:cloudbilling.skus"
PAGE_SIZE = 5000  # the API's maximum page size
MAX_PAGES = 200
USAGE_TYPES = {"OnDemand": ON_DEMAND, "Preemptible": SPOT, "Commit1Yr": RESERVED_1Y, "Commit3Yr": RESERVED_3Y}
UNITS = {"GPU": "h", "CPU": "h", "RAM": "GiBy.h"}
NANOS = Decimal(10) ** 9

# GPU SKU label ("Nvidia <label> GPU running in ...") -> the accelerator name of gcp_hosts / gcp_n1 and
# pricing/data/gpu_aliases.csv (provider gcp).
GPU_LABELS = {
    "Tesla T4": "T4",
    "Tesla V100": "V100",
    "Tesla P100": "P100",
    "Tesla P4": "P4",
    "L4": "L4",
    "Tesla A100": "A100",
    "A100 80GB": "A100-80GB",
    "H100 80GB": "H100",
    "H100 80GB Mega": "H100-MEGA",
    "H100 80GB Plus": "H100-MEGA",
    "H200 141GB": "H200",
}
# GCP bills the A3 Mega machine (a3-megagpu-8g) on SKUs of its own: "Nvidia H100 80GB Plus GPU ..." and
# "A3Plus Instance Core/Ram ..." (a real Nov 2024 answer: tests/pricing/outside/data/PROVENANCE.md), not
# on the a3-highgpu "A3" core and RAM SKUs, which cost about 5 % less.
MACHINE_FAMILIES = {"a3-megagpu-": "A3Plus"}
_GPU = re.compile(r"\bNvidia (.+?) GPU\b")
_PART = re.compile(
    r"^(?:Spot Preemptible )?(A2|A3Plus|A3|G2|N1 Predefined) Instance (?:Core|Ram) running in "
)
_COMMIT_PART = re.compile(r"^Commitment v1: (?:(A2|A3|G2) )?(?:Cpu|Ram) in ")
N1_FAMILY = "N1 Predefined"

# Machine type -> (vCPUs, memory GiB), cloud.google.com/compute/docs/accelerator-optimized-machines
# (GCP writes "GB" for these binary sizes; the RAM SKU is priced per GiB-hour). The same figures are
# the vCPUs and MemoryGiB of the bundled catalog's host rows (a test compares them).
MACHINE_SHAPES: dict[str, tuple[int, int]] = {
    "a2-highgpu-1g": (12, 85),
    "a2-highgpu-2g": (24, 170),
    "a2-highgpu-4g": (48, 340),
    "a2-highgpu-8g": (96, 680),
    "a2-megagpu-16g": (96, 1360),
    "a2-ultragpu-1g": (12, 170),
    "a2-ultragpu-2g": (24, 340),
    "a2-ultragpu-4g": (48, 680),
    "a2-ultragpu-8g": (96, 1360),
    "a3-highgpu-1g": (26, 234),
    "a3-highgpu-2g": (52, 468),
    "a3-highgpu-4g": (104, 936),
    "a3-highgpu-8g": (208, 1872),
    "a3-megagpu-8g": (208, 1872),
    "a3-ultragpu-8g": (224, 2952),
    "g2-standard-4": (4, 16),
    "g2-standard-8": (8, 32),
    "g2-standard-12": (12, 48),
    "g2-standard-16": (16, 64),
    "g2-standard-24": (24, 96),
    "g2-standard-32": (32, 128),
    "g2-standard-48": (48, 192),
    "g2-standard-96": (96, 384),
}

PartKey = tuple[
    str, str, str, str
]  # (resource group "GPU"|"CPU"|"RAM"|"SSD", family or accelerator, model, region)


@dataclass
class GcpReadStats:
    pages: int = 0
    items_seen: int = 0
    skipped: int = 0  # SKUs that price no part of a GPU machine
    skipped_reasons: Counter = field(default_factory=Counter)  # each skip under its reason
    records: int = 0
    rejected: int = 0
    rejected_locations: list[str] = field(default_factory=list)
    # (accelerator, model, region) of machines refused for their bundled Local SSD's missing price
    ssd_unpriced: set[tuple[str, str, str]] = field(default_factory=set)


@dataclass(frozen=True)
class Part:
    price: Decimal
    currency: str
    location: str


def gcp_pages(*, api_key: str, transport: Transport, policy: RetryPolicy) -> Iterator[dict[str, Any]]:
    token = ""
    headers = {"X-Goog-Api-Key": api_key}
    for page_number in range(1, MAX_PAGES + 1):
        query = {"pageSize": PAGE_SIZE, **({"pageToken": token} if token else {})}
        url = f"{API_URL}?{urllib.parse.urlencode(query)}"
        page = get_json(
            url,
            transport=transport,
            policy=policy,
            what=f"gcp billing catalog page {page_number}",
            headers=headers,
        )
        yield page
        token = page.get("nextPageToken") or ""
        if not token:
            return
    raise SourceRowError("gcp", "nextPageToken", f"still another page after {MAX_PAGES} pages")


def gcp_parts(
    pages: Iterator[dict[str, Any]], *, refusals: Refusals, stats: GcpReadStats
) -> dict[PartKey, Part]:
    """The hourly price of every GPU, core and RAM SKU of a GPU machine family, per region."""
    parts: dict[PartKey, Part] = {}
    for page_number, page in enumerate(pages, start=1):
        stats.pages += 1
        for sku_number, sku in enumerate(page.get("skus") or [], start=1):
            stats.items_seen += 1
            location = f"gcp:cloudbilling page {page_number} sku {sku_number} ({sku.get('skuId', '?')})"
            key = _part_key(sku)
            if isinstance(key, str):  # a skip reason, or a GPU SKU whose form no rule reads
                if key == UNKNOWN_FORM:
                    refusals.refuse(UNKNOWN_FORM, f"{location}: {sku.get('description')!r}")
                else:
                    stats.skipped += 1
                    stats.skipped_reasons[key] += 1
                continue
            part = _part_price(sku, key[0], location, refusals)
            if part is not None:
                for region in sku.get("serviceRegions") or []:
                    parts[(*key, str(region))] = part
    return parts


def _part_key(sku: dict[str, Any]) -> tuple[str, str, str] | str:
    """(resource group, family or accelerator, pricing model) of a machine part's SKU; else why it is
    skipped, or UNKNOWN_FORM for a GPU SKU whose accelerator no label reads."""
    category = sku.get("category") or {}
    group, model = category.get("resourceGroup"), USAGE_TYPES.get(category.get("usageType", ""))
    description = str(sku.get("description") or "")
    if group == "LocalSSD":
        return _local_ssd_key(description, model, category.get("usageType"))
    if category.get("resourceFamily") == "Storage" and mentions_local_ssd(description):
        return "Local SSD description outside resource group LocalSSD"
    if category.get("resourceFamily") != "Compute":
        return f"resource family {category.get('resourceFamily')}"
    if model is None:
        return f"usage type {category.get('usageType')}"
    if group == "GPU":
        match = _GPU.search(description)
        accelerator = GPU_LABELS.get(match.group(1)) if match else None
        return (group, accelerator, model) if accelerator else UNKNOWN_FORM
    if group in ("CPU", "RAM"):
        match = _PART.match(description) or _COMMIT_PART.match(description)
        if match is None or "Sole Tenancy" in description or "Custom" in description:
            return "not a core or RAM of a GPU machine family"
        return group, match.group(1) or N1_FAMILY, model
    return f"resource group {group}"


def _local_ssd_key(description: str, model: str | None, usage_type: Any) -> tuple[str, str, str] | str:
    """("SSD", family or GENERIC, pricing model) of a Local SSD SKU. A "Spot Preemptible" description is
    Spot whatever usageType says (Google files the generic Spot SKU under OnDemand: gcp_local_ssd.py)."""
    if model is None:
        return f"usage type {usage_type}"
    if says_spot(description):
        if model not in (ON_DEMAND, SPOT):
            return "Local SSD SKU says Spot but is a commitment"
        model = SPOT
    return "SSD", local_ssd_family(description), model


def _part_price(sku: dict[str, Any], group: str, location: str, refusals: Refusals) -> Part | None:
    """The SKU's price per unit-hour of its resource group (a Local SSD GiB-month / 730), or None
    (refused, with the reason) when its unit or tiers cannot be read as one price."""
    infos = sku.get("pricingInfo") or []
    expression = (infos[-1].get("pricingExpression") if infos else None) or {}
    unit, tiers = expression.get("usageUnit"), expression.get("tieredRates") or []
    expected = sorted(SSD_UNIT_HOURS) if group == "SSD" else [UNITS[group]]
    if unit not in expected:
        refusals.refuse(UNIT, f"{location}: usageUnit {unit!r} for a {group} SKU (expected {expected})")
        return None
    if len(tiers) != 1:
        refusals.refuse(UNIT, f"{location}: {len(tiers)} price tiers (one hourly price expected)")
        return None
    money = tiers[0].get("unitPrice") or {}
    try:
        price = Decimal(str(money.get("units") or "0")) + Decimal(int(money.get("nanos") or 0)) / NANOS
    except (ArithmeticError, ValueError, TypeError):
        refusals.refuse(UNIT, f"{location}: unitPrice {money!r} is not a price")
        return None
    hours = SSD_UNIT_HOURS[unit] if group == "SSD" else 1
    return Part(price / hours, str(money.get("currencyCode") or ""), location)


def gcp_machines() -> list[tuple[str, str, int, str, int, int]]:
    """(machine name, accelerator, GPUs, core/RAM family, vCPUs, memory GiB) of every machine priced."""
    machines = []
    for name, (vcpus, memory) in MACHINE_SHAPES.items():
        accelerator, count = attached_gpus(name) or ("", 0)
        machines.append((name, accelerator, count, machine_family(name), vcpus, memory))
    for host, (vcpus, memory) in N1_HOSTS.items():
        for accelerator, count in n1_attachments(host):
            name = n1_instance_name(host, accelerator, count)
            machines.append((name, accelerator, count, N1_FAMILY, vcpus, memory))
    return machines


def machine_family(name: str) -> str:
    """The family whose core and RAM SKUs bill a fixed-GPU machine type (A2, A3, A3Plus, G2)."""
    return next(
        (fam for prefix, fam in MACHINE_FAMILIES.items() if name.startswith(prefix)), name[:2].upper()
    )


def gcp_machine_records(
    parts: dict[PartKey, Part], *, observed_at: dt.datetime, stats: GcpReadStats | None = None
) -> Iterator[PriceRecord]:
    """One price per machine, region and pricing model whose GPU, core and RAM SKUs (and Local SSD SKU,
    for a machine that bundles Local SSD) are all there; a machine refused for its Local SSD alone is
    counted in ``stats`` under SSD_UNPRICED."""
    stats = stats if stats is not None else GcpReadStats()
    regions = sorted({key[3] for key in parts})
    for name, accelerator, count, family, vcpus, memory in gcp_machines():
        instance = InstanceTypeRecord(
            provider="gcp",
            name=name,
            gpu_name=accelerator,
            gpu_count=Decimal(count),
            vcpus=Decimal(vcpus),
            memory_gib=Decimal(memory),
        )
        for model in USAGE_TYPES.values():
            for region in regions:
                gpu = parts.get(("GPU", accelerator, model, region))
                core = parts.get(("CPU", family, model, region))
                ram = parts.get(("RAM", family, model, region))
                if (
                    gpu is None
                    or core is None
                    or ram is None
                    or len({gpu.currency, core.currency, ram.currency}) > 1
                ):
                    continue
                total = count * gpu.price + vcpus * core.price + memory * ram.price
                ssd_gib = BUNDLED_LOCAL_SSD_GIB.get(name, 0)
                ssd = _local_ssd(parts, family, model, region) if ssd_gib else None
                if ssd_gib and (ssd is None or ssd.currency != gpu.currency):
                    stats.skipped += 1
                    stats.skipped_reasons[SSD_UNPRICED] += 1
                    stats.ssd_unpriced.add((accelerator, model, region))
                    continue
                location = f"{gpu.location} + {core.location} + {ram.location}"
                if ssd is not None:
                    total += ssd_gib * ssd.price
                    location += f" + {ssd.location}"
                committed = model in (RESERVED_1Y, RESERVED_3Y)
                yield PriceRecord(
                    instance=instance,
                    region=region,
                    zone="",
                    pricing_model=model,
                    price_per_hour=total.quantize(PRICE_QUANTUM),
                    currency=gpu.currency,
                    observed_at=observed_at,
                    source=SOURCE,
                    location=location,
                    payment_option=NO_UPFRONT if committed else "",
                    upfront_fee=Decimal(0) if committed else None,
                )


def _local_ssd(parts: dict[PartKey, Part], family: str, model: str, region: str) -> Part | None:
    """The family's own Local SSD SKU there, else the generic "SSD backed Local Storage" one."""
    return parts.get(("SSD", family, model, region)) or parts.get(("SSD", GENERIC, model, region))


def fetch_gcp_prices(
    *,
    api_key: str,
    now: dt.datetime,
    refusals: Refusals,
    stats: GcpReadStats,
    transport: Transport = urllib_transport,
    policy: RetryPolicy | None = None,
) -> Iterator[PriceRecord]:
    """Every GPU machine's prices in every region, stamped with the day they were read."""
    day = now.replace(hour=0, minute=0, second=0, microsecond=0)
    pages = gcp_pages(api_key=api_key, transport=transport, policy=policy or RetryPolicy())
    parts = gcp_parts(pages, refusals=refusals, stats=stats)
    priced: set[tuple[str, str, str]] = set()
    for record in gcp_machine_records(parts, observed_at=day, stats=stats):
        stats.records += 1
        priced.add((record.instance.gpu_name, record.pricing_model, record.region))
        yield record
    # A GPU price that completes no machine (its family's core or RAM SKU missing there) prices nothing:
    # counted, so that a family whose host SKUs changed form shows on /status/ instead of vanishing.
    # A GPU whose machine was refused for its Local SSD is counted under that reason already.
    accounted = priced | stats.ssd_unpriced
    for group, accelerator, model, region in parts:
        if group == "GPU" and (accelerator, model, region) not in accounted:
            stats.skipped += 1
            stats.skipped_reasons["GPU SKU without its machine's core or RAM SKU in the region"] += 1
