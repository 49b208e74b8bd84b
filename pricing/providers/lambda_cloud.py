"""Lambda on-demand prices from the Lambda Cloud API: each instance type, in each region with capacity.

``GET https://cloud.lambdalabs.com/api/v1/instance-types`` with ``Authorization: Bearer <key>`` answers
``{data: {"gpu_8x_h100_sxm5": {instance_type: {name, description, gpu_description,
price_cents_per_hour, specs: {vcpus, memory_gib, storage_gib, gpus}}, regions_with_capacity_available:
[{name, description}]}}}`` (docs.lambda.ai, Cloud API reference, "List available instance types").

Lambda lists one price per instance type, the same in every region, and the regions that can launch it
now: the reader emits an on-demand price per region with capacity, so an offer exists where it can be
rented. A type with no capacity anywhere yields no price this time (its earlier prices stay as they
were). Instance type names are Lambda's own (``gpu_1x_a100_sxm4``), the names the bundled catalog
uses, so live prices land on the same instance types. The GPU name is read from the name's model part
(``a100_sxm4`` -> "A100", matched to a GPU model through pricing/data/gpu_aliases.csv, provider lambda);
a model part not in MODEL_PARTS keeps the API's ``gpu_description`` and is reported unmapped.

Refused: a price that is not a whole number of cents (``unit``); bad prices, currencies and regions by
the checks every refresh runs.
"""

from __future__ import annotations

import datetime as dt
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from pricing.price_checks import UNIT, UNKNOWN_FORM, Refusals
from pricing.providers.cells import PRICE_QUANTUM
from pricing.providers.http_api import Transport, get_json, urllib_transport
from pricing.providers.records import InstanceTypeRecord, PriceRecord
from pricing.providers.retry import RetryPolicy
from pricing.providers.vocabulary import ON_DEMAND

API_URL = "https://cloud.lambdalabs.com/api/v1/instance-types"
SOURCE = "lambda:instance-types"
CENTS = Decimal(100)
_NAME = re.compile(r"^gpu_(\d+)x_(.+)$")
# Model part of a Lambda type name -> the accelerator name the bundled Lambda catalog uses.
MODEL_PARTS = {
    "a10": "A10",
    "a100": "A100",
    "a100_sxm4": "A100",
    "a100_80gb_sxm4": "A100-80GB",
    "a6000": "A6000",
    "b200_sxm6": "B200",
    "gh200": "GH200",
    "h100_pcie": "H100",
    "h100_sxm5": "H100",
    "rtx6000": "RTX6000",
    "v100": "V100",
    "v100_n": "V100",
}


@dataclass
class LambdaReadStats:
    items_seen: int = 0
    skipped: int = 0  # CPU-only types
    without_capacity: int = 0
    skipped_reasons: Counter = field(default_factory=Counter)  # each skip under its reason
    records: int = 0
    rejected: int = 0
    rejected_locations: list[str] = field(default_factory=list)


def lambda_price_records(
    document: dict[str, Any], *, observed_at: dt.datetime, refusals: Refusals, stats: LambdaReadStats
) -> Iterator[PriceRecord]:
    for key, entry in sorted((document.get("data") or {}).items()):
        stats.items_seen += 1
        location = f"lambda:instance-types {key}"
        spec = entry.get("instance_type") or {}
        name = str(spec.get("name") or key)
        match = _NAME.match(name)
        if match is None:
            if name.startswith("cpu_"):  # cpu_4x_general and the like: no GPU
                stats.skipped += 1
                stats.skipped_reasons["no GPU (cpu_ type)"] += 1
            else:  # a name form no rule reads: shown, never taken for a CPU type
                refusals.refuse(UNKNOWN_FORM, f"{location}: instance type name {name!r}")
            continue
        cents = spec.get("price_cents_per_hour")
        if isinstance(cents, bool) or not isinstance(cents, int | Decimal) or cents != int(cents):
            refusals.refuse(
                UNIT, f"{location}: price_cents_per_hour {cents!r} is not a whole number of cents"
            )
            continue
        regions = [str(r.get("name") or "") for r in entry.get("regions_with_capacity_available") or []]
        if not regions:
            stats.without_capacity += 1
            stats.skipped_reasons["no region with capacity"] += 1
            continue
        instance = _instance(name, match, spec)
        for region in regions:
            stats.records += 1
            yield PriceRecord(
                instance=instance,
                region=region,
                zone="",
                pricing_model=ON_DEMAND,
                price_per_hour=(Decimal(int(cents)) / CENTS).quantize(PRICE_QUANTUM),
                currency="USD",
                observed_at=observed_at,
                source=SOURCE,
                location=location,
            )


def _instance(name: str, match: re.Match, spec: dict[str, Any]) -> InstanceTypeRecord:
    specs = spec.get("specs") or {}
    gpus = specs.get("gpus")
    return InstanceTypeRecord(
        provider="lambda",
        name=name,
        gpu_name=MODEL_PARTS.get(match.group(2), str(spec.get("gpu_description") or match.group(2))),
        gpu_count=Decimal(int(gpus)) if isinstance(gpus, int) and gpus > 0 else Decimal(match.group(1)),
        vcpus=_number(specs.get("vcpus")),
        memory_gib=_number(specs.get("memory_gib")),
        local_disk_gb=_gib_to_gb(_number(specs.get("storage_gib"))),
    )


def _gib_to_gb(gib: Decimal | None) -> Decimal | None:
    """The catalog keeps local disk in GB (10^9 bytes); Lambda states GiB (2^30 bytes)."""
    return None if gib is None else (gib * Decimal("1.073741824")).quantize(Decimal("0.1"))


def _number(value: Any) -> Decimal | None:
    return Decimal(str(value)) if isinstance(value, int | Decimal) and not isinstance(value, bool) else None


def fetch_lambda_prices(
    *,
    api_key: str,
    now: dt.datetime,
    refusals: Refusals,
    stats: LambdaReadStats,
    transport: Transport = urllib_transport,
    policy: RetryPolicy | None = None,
) -> Iterator[PriceRecord]:
    """The on-demand prices of every GPU type where it has capacity, stamped with the hour read
    (capacity moves within a day; a rerun within the hour inserts nothing)."""
    hour = now.replace(minute=0, second=0, microsecond=0)
    document = get_json(
        API_URL,
        transport=transport,
        policy=policy or RetryPolicy(),
        what="lambda instance-types",
        headers={"Authorization": f"Bearer {api_key}"},
    )
    yield from lambda_price_records(document, observed_at=hour, refusals=refusals, stats=stats)
