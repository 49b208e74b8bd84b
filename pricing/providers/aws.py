"""AWS EC2 through boto3: GPU instance types, availability zones and spot price history per region.

Credentials come only from boto3's standard chain (environment, shared config, instance or task
role); nothing here reads or stores a key. Every function takes a client made by a factory the
caller passes in, so tests hand in moto or ``botocore.stub.Stubber`` clients and production hands in
``boto3_client_factory``. Each region is a separate unit of work: the caller loops over the
configured regions, one task per region.

On-demand and reserved prices come from the Pricing API, in ``aws_pricing.py``.
"""

from __future__ import annotations

import datetime as dt
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

import boto3
from botocore.config import Config

from pricing.price_checks import UNREADABLE, Refusals
from pricing.providers.cells import PRICE_QUANTUM, decimal_or_none
from pricing.providers.records import InstanceTypeRecord, PriceRecord, SourceRowError
from pricing.providers.retry import RetryPolicy, call_with_retry, pages_with_retry
from pricing.providers.vocabulary import SPOT

ClientFactory = Callable[..., Any]  # factory("ec2", region_name="us-east-1") -> a boto3 client

LINUX = "Linux/UNIX"
SPOT_SOURCE = "aws:describe_spot_price_history"
DEFAULT_SPOT_LOOK_BACK = dt.timedelta(days=7)
MIB_PER_GIB = Decimal(1024)
# botocore's own retries stay few: pages_with_retry already retries throttling with jitter.
_BOTO_CONFIG = Config(retries={"mode": "standard", "max_attempts": 2}, connect_timeout=10, read_timeout=60)


def boto3_client_factory(service_name: str, *, region_name: str) -> Any:
    """A boto3 client on the standard credential chain (never a stored key)."""
    return boto3.session.Session().client(service_name, region_name=region_name, config=_BOTO_CONFIG)


@dataclass(frozen=True)
class AwsZone:
    zone_id: str  # e.g. "use1-az4": the same physical zone in every account
    zone_name: str  # e.g. "us-east-1a": mapped to a different zone per account
    region: str
    zone_type: str  # "availability-zone" | "local-zone" | "wavelength-zone"


@dataclass
class AwsReadStats:
    """What a region's fetch saw, for the PriceRefresh row and the command's report."""

    instance_types_seen: int = 0
    accelerated_instance_types: int = 0
    items_seen: int = 0
    rejected: int = 0  # zero, negative or empty prices
    rejected_locations: list[str] = field(default_factory=list)
    skipped_other_types: int = 0  # items for instance types we did not ask for
    records: int = 0
    skipped_reasons: Counter = field(default_factory=Counter)  # each skipped item under its reason


def aws_accelerated_instance_types(
    ec2: Any, *, policy: RetryPolicy, stats: AwsReadStats | None = None
) -> dict[str, InstanceTypeRecord]:
    """The region's instance types with GPUs (GpuInfo) or Neuron devices (NeuronInfo), by name."""
    stats = stats if stats is not None else AwsReadStats()
    found: dict[str, InstanceTypeRecord] = {}
    region = ec2.meta.region_name
    for page in pages_with_retry(
        ec2, "describe_instance_types", policy, what=f"aws {region} describe_instance_types"
    ):
        for item in page.get("InstanceTypes", []):
            stats.instance_types_seen += 1
            record = instance_type_record(item)
            if record is not None:
                found[record.name] = record
    stats.accelerated_instance_types = len(found)
    return found


def instance_type_record(item: dict[str, Any]) -> InstanceTypeRecord | None:
    """One describe_instance_types entry as a record; None when it has no GPU or Neuron device."""
    accelerator = _accelerator(item)
    if accelerator is None:
        return None
    gpu_name, gpu_count, gpu_memory_mib = accelerator
    storage_gb = (item.get("InstanceStorageInfo") or {}).get("TotalSizeInGB")
    return InstanceTypeRecord(
        provider="aws",
        name=item["InstanceType"],
        gpu_name=gpu_name,
        gpu_count=gpu_count,
        vcpus=_decimal_or_none(item.get("VCpuInfo", {}).get("DefaultVCpus")),
        memory_gib=_mib_to_gib(item.get("MemoryInfo", {}).get("SizeInMiB")),
        gpu_memory_gib=_mib_to_gib(gpu_memory_mib),
        local_disk_gb=_decimal_or_none(storage_gb),
        network=(item.get("NetworkInfo") or {}).get("NetworkPerformance", ""),
    )


def _accelerator(item: dict[str, Any]) -> tuple[str, Decimal, int | None] | None:
    """(name, count, memory MiB per device) from GpuInfo or NeuronInfo, or None."""
    gpus = (item.get("GpuInfo") or {}).get("Gpus") or []
    if gpus:
        gpu = gpus[0]
        count = Decimal(str(gpu.get("Count", 0)))
        if "GpuPartitionSize" in gpu:
            # Fractional GPUs (g6f): Count is 0, LogicalGpuCount × GpuPartitionSize is the share.
            logical = gpu.get("LogicalGpuCount") or gpu.get("Count") or 0
            count = Decimal(str(logical)) * Decimal(str(gpu["GpuPartitionSize"]))
        return (gpu["Name"], count, gpu.get("MemoryInfo", {}).get("SizeInMiB")) if count > 0 else None
    devices = (item.get("NeuronInfo") or {}).get("NeuronDevices") or []
    if devices:
        device = devices[0]
        return device["Name"], Decimal(device["Count"]), device.get("MemoryInfo", {}).get("SizeInMiB")
    return None


def aws_zones(ec2: Any, *, policy: RetryPolicy) -> dict[str, AwsZone]:
    """The region's enabled zones keyed by zone ID, which names one physical zone in every account."""
    region = ec2.meta.region_name
    response = call_with_retry(
        ec2.describe_availability_zones, policy, what=f"aws {region} describe_availability_zones"
    )
    return {
        zone["ZoneId"]: AwsZone(
            zone_id=zone["ZoneId"],
            zone_name=zone["ZoneName"],
            region=zone.get("RegionName", region),
            zone_type=zone.get("ZoneType", "availability-zone"),
        )
        for zone in response.get("AvailabilityZones", [])
    }


def aws_spot_prices(
    ec2: Any,
    *,
    instance_types: dict[str, InstanceTypeRecord],
    zones: dict[str, AwsZone],
    start_time: dt.datetime,
    end_time: dt.datetime,
    policy: RetryPolicy,
    stats: AwsReadStats | None = None,
    refusals: Refusals | None = None,
) -> Iterator[PriceRecord]:
    """Every Linux/UNIX spot price of the given types between the two times, with its zone ID.

    AWS returns the price in effect at `start_time` too, so a zero-length window gives "now". An item
    that cannot be read (no instance type, a price or time that is not one) is refused (``unreadable``)
    with its page and item, and the rest of the history lands; an item of another product or type is
    skipped and counted under its reason.
    """
    stats = stats if stats is not None else AwsReadStats()
    refusals = refusals if refusals is not None else Refusals()
    region = ec2.meta.region_name
    zone_ids = {zone.zone_name: zone.zone_id for zone in zones.values()}
    pages = pages_with_retry(
        ec2,
        "describe_spot_price_history",
        policy,
        what=f"aws {region} describe_spot_price_history",
        InstanceTypes=sorted(instance_types),
        ProductDescriptions=[LINUX],
        StartTime=start_time,
        EndTime=end_time,
    )
    for page_number, page in enumerate(pages, start=1):
        for item_number, item in enumerate(page.get("SpotPriceHistory", []), start=1):
            stats.items_seen += 1
            location = f"aws:{region}:describe_spot_price_history page {page_number} item {item_number}"
            try:
                record = _spot_record(item, location, region, instance_types, zone_ids, stats)
            except SourceRowError as error:  # this item goes; the rest of the history lands
                refusals.refuse(UNREADABLE, str(error))
                continue
            if record is not None:
                stats.records += 1
                yield record


def _spot_record(
    item: dict[str, Any],
    location: str,
    region: str,
    instance_types: dict[str, InstanceTypeRecord],
    zone_ids: dict[str, str],
    stats: AwsReadStats,
) -> PriceRecord | None:
    name = _required(item, "InstanceType", location)
    instance, product = instance_types.get(name), item.get("ProductDescription", LINUX)
    if instance is None or product != LINUX:
        stats.skipped_other_types += 1
        stats.skipped_reasons[
            "instance type not asked for" if instance is None else f"product {product}"
        ] += 1
        return None
    price = decimal_or_none(str(item.get("SpotPrice", "")), location=location, field="SpotPrice")
    if price is None or price.quantize(PRICE_QUANTUM) <= 0:
        stats.rejected += 1
        stats.rejected_locations.append(f"{location}: SpotPrice {item.get('SpotPrice')!r}")
        return None
    timestamp = _required(item, "Timestamp", location)
    if not isinstance(timestamp, dt.datetime) or timestamp.tzinfo is None:
        raise SourceRowError(location, "Timestamp", f"{timestamp!r} is not a timezone-aware time")
    zone_name = _required(item, "AvailabilityZone", location)
    return PriceRecord(
        instance=instance,
        region=region,
        zone=item.get("AvailabilityZoneId") or zone_ids.get(zone_name, zone_name),
        pricing_model=SPOT,
        price_per_hour=price.quantize(PRICE_QUANTUM),
        currency="USD",
        observed_at=timestamp.astimezone(dt.UTC),
        source=SPOT_SOURCE,
        location=location,
    )


def fetch_aws_spot(
    region: str,
    *,
    client_factory: ClientFactory = boto3_client_factory,
    now: dt.datetime | None = None,
    look_back: dt.timedelta = DEFAULT_SPOT_LOOK_BACK,
    policy: RetryPolicy | None = None,
    stats: AwsReadStats | None = None,
    refusals: Refusals | None = None,
) -> Iterator[PriceRecord]:
    """One region's spot prices of accelerated instance types over `look_back` (zero: current only)."""
    policy = policy or RetryPolicy()
    now = now or dt.datetime.now(dt.UTC)
    ec2 = client_factory("ec2", region_name=region)
    instance_types = aws_accelerated_instance_types(ec2, policy=policy, stats=stats)
    if not instance_types:
        return
    yield from aws_spot_prices(
        ec2,
        instance_types=instance_types,
        zones=aws_zones(ec2, policy=policy),
        start_time=now - look_back,
        end_time=now,
        policy=policy,
        stats=stats,
        refusals=refusals,
    )


def _required(item: dict[str, Any], key: str, location: str) -> Any:
    value = item.get(key)
    if value in (None, ""):
        raise SourceRowError(location, key, "missing")
    return value


def _decimal_or_none(value: Any) -> Decimal | None:
    return None if value is None else Decimal(str(value))


def _mib_to_gib(value: Any) -> Decimal | None:
    return None if value is None else (Decimal(str(value)) / MIB_PER_GIB).quantize(Decimal("0.01"))
