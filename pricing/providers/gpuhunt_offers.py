"""GPU offers of the providers gpuledger has no module for, read through gpuhunt (dstack's maintained GPU
offer catalog, pinned in requirements.txt: gpuhunt==0.1.34, no extras).

gpuhunt answers ``CatalogItem`` objects (``provider, instance_name, location, price, cpu, memory,
gpu_count, gpu_name, gpu_memory, spot, disk_size``): offline providers (OCI, RunPod, CloudRift) from the
catalog dstack publishes, online ones (Crusoe, DigitalOcean, Hot Aisle, JarvisLabs, Seeweb, Vultr, Lium,
Daytona) by calling the provider's API with the provider's credentials. This module turns those items
into price records; it never imports gpuhunt itself (``fetch_gpuhunt_items`` does, only when a source is
on), so its tests run on recorded items without the library or the network.

- ``price`` is per instance-hour in USD (gpuhunt's catalogs are USD); ``spot`` true is ``spot``, else
  ``on_demand``. gpuhunt has no commitment prices and no zones: a price is regional.
- ``cpu`` and ``memory`` are kept as gpuhunt reports them (vCPUs, GB); ``gpu_memory`` is per GPU (DigitalOcean's, a
  droplet total in gpuhunt 0.1.34, is divided by the count; a figure above any GPU's is unknown).
- Host specs (``cpu``, ``memory``) are the provider's API figures as gpuhunt reports them (the record's
  source is ``gpuhunt:<provider>``); an instance type whose rows disagree on them gets the smallest of each,
  marked a lower bound, as the SkyPilot reader does (``with_contradicting_hosts_at_smallest``).
- Interconnect and fabric come from the provider's documentation, not from gpuhunt: rules per instance
  family in procurement/data/interconnects.csv (each with its source); a family no rule names stays
  unknown (PCIe assumed, marked unstated).
- A GPU name gpuhunt gives several parts (RunPod's ``H100`` is its H100 SXM and its H100 PCIe) is
  settled by the instance name through pricing/data/gpuhunt_gpu_names.csv, each row with its reason, to
  our GPU slug; a name the instance cannot settle is refused (``ambiguous_gpu``) with the row's reason.
- RunPod's instance name is the GPU ID whatever the GPU count: ``<n>x `` is put before it for n > 1 so
  that the 1- and 8-GPU pods, different hosts, are different instance types.
- Items without a GPU (``gpu_count`` 0) are skipped, counted under their reason; an item with no
  instance name, no location, a GPU count below zero or a price that is not a number is refused
  (``unreadable``) and the rest lands.

Providers with a module of ours (AWS, Azure, GCP, Lambda, Vast, Nebius, Verda) are never read through
gpuhunt: ours keep zones, commitments and their tests on real answers (docs/provider-prices.md).
"""

from __future__ import annotations

import csv
import datetime as dt
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from functools import lru_cache
from pathlib import Path
from typing import Any

from pricing.price_checks import AMBIGUOUS_GPU, UNREADABLE, Refusals
from pricing.providers.cells import PRICE_QUANTUM
from pricing.providers.records import InstanceTypeRecord, PriceRecord
from pricing.providers.skypilot_csv import with_contradicting_hosts_at_smallest
from pricing.providers.vocabulary import ON_DEMAND, SPOT

GPUHUNT_VERSION = "0.1.34"
# gpuhunt provider name -> gpuledger provider slug, for the providers without a module here.
GPUHUNT_PROVIDERS = {
    "oci": "oci",
    "runpod": "runpod",
    "cloudrift": "cloudrift",
    "crusoe": "crusoe",
    "digitalocean": "digitalocean",
    "hotaisle": "hotaisle",
    "jarvislabs": "jarvislabs",
    "seeweb": "seeweb",
    "vultr": "vultr",
    "lium": "lium",
    "daytona": "daytona",
}
# Read by a module of ours instead (gpuhunt's name -> ours)
OURS = {
    "aws": "aws",
    "azure": "azure",
    "gcp": "gcp",
    "lambdalabs": "lambda",
    "vastai": "vast",
    "nebius": "nebius",
    "verda": "verda",
    "datacrunch": "verda",
}
GPU_NAMES_CSV = Path(__file__).resolve().parents[1] / "data" / "gpuhunt_gpu_names.csv"
# Providers whose gpuhunt instance name does not carry the GPU count (runpod.py: instance_name=pod["id"])
NAME_WITHOUT_COUNT = {"runpod"}
# Providers whose gpuhunt ``gpu_memory`` is the memory of all the instance's GPUs, not of one: gpuhunt 0.1.34
# digitalocean.py sets ``gpu_memory = float(gpu_info["vram"]["amount"])``, the droplet's total (DigitalOcean's
# /v2/sizes "gpu-h100x8-640gb": count 8, vram 640 GiB; "gpu-mi300x8-1536gb": 8 x 192). Divided by the count
# (found by the outside review of issue 32 on gpuhunt's recorded /v2/sizes answer).
PROVIDERS_WITH_TOTAL_GPU_MEMORY = {"digitalocean"}
# No GPU sold has more memory than this (B300 and MI355X: 288 GB): a larger per-GPU figure is a total or a
# unit slip, read as unknown rather than trusted.
MAX_GPU_MEMORY_GIB = Decimal(300)


@dataclass(frozen=True)
class GpuNameRule:
    provider: str  # "*": every gpuhunt provider, tried after the provider's own rules
    gpu_name: str
    instance_name_contains: str  # "" matches every instance (the provider's fallback for the name)
    gpu_slug: str  # "" refuses the row
    reason: str


@lru_cache(maxsize=1)
def gpu_name_rules() -> tuple[GpuNameRule, ...]:
    """pricing/data/gpuhunt_gpu_names.csv, most specific first: the provider's own rules before the "*"
    ones, each by longest instance_name_contains."""
    with GPU_NAMES_CSV.open(newline="", encoding="utf-8") as handle:
        rules = [
            GpuNameRule(
                row["provider"],
                row["gpu_name"],
                row["instance_name_contains"],
                row["gpu_slug"],
                row["reason"],
            )
            for row in csv.DictReader(handle)
        ]
    return tuple(sorted(rules, key=lambda rule: (rule.provider == "*", -len(rule.instance_name_contains))))


def settled_gpu_name(provider: str, gpu_name: str, instance_name: str) -> str:
    """The GPU name to map: our slug where a rule settles an ambiguous name, else gpuhunt's own name.
    Raises ValueError (with the rule's reason) for an ambiguous name the instance name cannot settle."""
    name = instance_name.lower()
    for rule in gpu_name_rules():
        if (
            rule.provider in (provider, "*")
            and rule.gpu_name == gpu_name
            and rule.instance_name_contains.lower() in name
        ):
            if not rule.gpu_slug:
                raise ValueError(rule.reason)
            return rule.gpu_slug
    return gpu_name


@dataclass
class GpuhuntReadStats:
    items_seen: int = 0
    records: int = 0
    skipped: int = 0
    skipped_reasons: Counter = field(default_factory=Counter)
    rejected: int = 0  # kept 0: the checks every refresh runs count bad prices
    rejected_locations: list[str] = field(default_factory=list)


def gpuhunt_price_records(
    items: Iterable[Any],
    *,
    provider: str,
    observed_at: dt.datetime,
    refusals: Refusals,
    stats: GpuhuntReadStats,
) -> Iterator[PriceRecord]:
    """One price per item of gpuhunt provider `provider`, as of `observed_at`; host figures an instance
    type's items contradict are the smallest listed, a lower bound (``with_contradicting_hosts_at_smallest``)."""
    yield from with_contradicting_hosts_at_smallest(
        list(
            _price_records(items, provider=provider, observed_at=observed_at, refusals=refusals, stats=stats)
        )
    )


def _price_records(
    items: Iterable[Any],
    *,
    provider: str,
    observed_at: dt.datetime,
    refusals: Refusals,
    stats: GpuhuntReadStats,
) -> Iterator[PriceRecord]:
    slug = GPUHUNT_PROVIDERS[provider]
    for number, item in enumerate(items, start=1):
        stats.items_seen += 1
        location = f"gpuhunt:{provider} item {number}"
        try:
            record = _record(item, slug, provider, location, observed_at)
        except AmbiguousGpu as error:
            refusals.refuse(AMBIGUOUS_GPU, f"{location}: {error}")
            continue
        except ValueError as error:
            refusals.refuse(UNREADABLE, f"{location}: {error}")
            continue
        if record is None:
            stats.skipped += 1
            stats.skipped_reasons["no GPU"] += 1
            continue
        stats.records += 1
        yield record


class AmbiguousGpu(ValueError):
    """A GPU name several parts share that the row's instance name does not settle."""


def _record(
    item: Any, slug: str, provider: str, location: str, observed_at: dt.datetime
) -> PriceRecord | None:
    name, region = str(getattr(item, "instance_name", "") or ""), str(getattr(item, "location", "") or "")
    if not name or not region:
        raise ValueError("no instance_name or location")
    count = _decimal(getattr(item, "gpu_count", None), "gpu_count")
    if count is None or count < 0:
        raise ValueError(f"gpu_count {getattr(item, 'gpu_count', None)!r}")
    if count == 0 or not getattr(item, "gpu_name", None):
        return None
    price = _decimal(getattr(item, "price", None), "price")
    if price is None:
        raise ValueError(f"price {getattr(item, 'price', None)!r} is not a number")
    count_text = f"{count.normalize():f}"
    if provider in NAME_WITHOUT_COUNT and count > 1 and not name.startswith(f"{count_text}x "):
        name = f"{count_text}x {name}"
    try:
        gpu_name = settled_gpu_name(provider, str(item.gpu_name), name)
    except ValueError as error:
        raise AmbiguousGpu(f"{item.gpu_name} on {name}: {error}") from None
    instance = InstanceTypeRecord(
        provider=slug,
        name=name,
        gpu_name=gpu_name,
        gpu_count=count,
        vcpus=_positive(getattr(item, "cpu", None)),
        memory_gib=_positive(getattr(item, "memory", None)),
        gpu_memory_gib=_gpu_memory_gib(item, provider, count),
        local_disk_gb=_positive(getattr(item, "disk_size", None)),
    )
    return PriceRecord(
        instance=instance,
        region=region,
        zone="",
        pricing_model=SPOT if _truthy(item.spot) else ON_DEMAND,
        price_per_hour=price.quantize(PRICE_QUANTUM),
        currency="USD",
        observed_at=observed_at,
        source=f"gpuhunt:{provider}",
        location=location,
    )


def _gpu_memory_gib(item: Any, provider: str, count: Decimal) -> Decimal | None:
    """Memory of one GPU: gpuhunt's figure, divided by the count where the provider's is a total, and
    unknown (None) where it is above any GPU's."""
    memory = _positive(getattr(item, "gpu_memory", None))
    if memory is None:
        return None
    if provider in PROVIDERS_WITH_TOTAL_GPU_MEMORY:
        memory = memory / count
    return memory if memory <= MAX_GPU_MEMORY_GIB else None


def _decimal(value: Any, name: str) -> Decimal | None:
    if value is None or value == "" or isinstance(value, bool):
        return None
    try:
        number = Decimal(str(value))
    except InvalidOperation:
        return None
    return number if number.is_finite() else None


def _positive(value: Any) -> Decimal | None:
    number = _decimal(value, "")
    return number if number is not None and number > 0 else None


def _truthy(value: Any) -> bool:
    return value is True or str(value).strip().lower() == "true"


def fetch_gpuhunt_items(provider: str) -> list[Any]:
    """gpuhunt's current items of `provider` (offline catalog download or the provider's API): network."""
    import gpuhunt  # noqa: PLC0415 (the library is needed only when a gpuhunt source is on)

    return list(gpuhunt.query(provider=[provider]))
