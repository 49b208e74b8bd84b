"""GCP whole-instance prices: a host VM row plus the row of the GPUs it carries, in the same zone.

GCP bills the host VM (vCPUs and memory) and each attached GPU separately, and the SkyPilot catalog
keeps them apart: ``vms.hosts.csv`` holds the host rows (a2-, a3-, g2- and six n1- machine types, GPU
columns empty), ``vms.gpu.csv`` the GPU rows (empty InstanceType; the price of N GPUs per zone). The a2, a3
and g2 machine types come with a fixed GPU model and count (GCP "GPU machine types"), so

    instance price = host row price + GPU row price for that model and count, in the same zone

for on-demand and for spot alike. An n1 host (n1-standard-4 ... n1-highmem-16) carries T4, V100, P100 or
P4 GPUs in the counts GCP allows for its size (pricing/providers/gcp_n1.py); each allowed pairing is a
whole instance named "<host>+<count>x<GPU>" (n1-standard-8+2xT4), priced the same way. The results are whole-instance records
(``host_priced_separately`` False) that rank like any other; the GPU-only rows stay, labelled, for reference.

Example (us-central1-a): a2-highgpu-1g host 0.73948 $/h + 1 x A100 2.93391 $/h = 3.67339 $/h, which is
the price GCP lists for a2-highgpu-1g (docs/cost-model.md, "GCP instances").
"""

from __future__ import annotations

import csv
import datetime as dt
import re
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path

from pricing.providers.cells import decimal_or_none, price_or_none, required_decimal
from pricing.providers.gcp_n1 import N1_HOSTS, n1_attachments, n1_instance_name
from pricing.providers.records import InstanceTypeRecord, PriceRecord, SourceRowError
from pricing.providers.skypilot_csv import _gpu_memory_gib
from pricing.providers.vocabulary import ON_DEMAND, SPOT

# Machine type -> (the catalog's accelerator name, GPUs), from GCP's "GPU machine types" page
# (cloud.google.com/compute/docs/gpus): a2-highgpu-Ng and a2-megagpu-16g carry A100 40GB, a2-ultragpu-Ng
# A100 80GB, a3-highgpu/edgegpu H100 80GB, a3-megagpu-8g H100 Mega, a3-ultragpu-8g H200; g2-standard-N one
# to eight L4s (4, 8, 12, 16, 32 vCPUs: 1 GPU; 24: 2; 48: 4; 96: 8).
G2_GPUS = {"4": 1, "8": 1, "12": 1, "16": 1, "24": 2, "32": 1, "48": 4, "96": 8}
FAMILIES = (
    (re.compile(r"^a2-(?:highgpu|megagpu)-(\d+)g$"), "A100"),
    (re.compile(r"^a2-ultragpu-(\d+)g$"), "A100-80GB"),
    (re.compile(r"^a3-(?:highgpu|edgegpu)-(\d+)g(?:-nolssd)?$"), "H100"),
    (re.compile(r"^a3-megagpu-(\d+)g$"), "H100-MEGA"),
    (re.compile(r"^a3-ultragpu-(\d+)g(?:-nolssd)?$"), "H200"),
)
SOURCE = "skypilot:gcp/vms.hosts.csv+vms.gpu.csv"


def attached_gpus(machine_type: str) -> tuple[str, int] | None:
    """(accelerator name, count) a fixed-GPU machine type comes with; None for any other type."""
    if machine_type.startswith("g2-standard-"):
        count = G2_GPUS.get(machine_type.removeprefix("g2-standard-"))
        return ("L4", count) if count else None
    for pattern, accelerator in FAMILIES:
        match = pattern.match(machine_type)
        if match:
            return accelerator, int(match.group(1))
    return None


def _gpu_prices(gpu_path: Path) -> dict[tuple[str, int, str], dict[str, str]]:
    """(accelerator, count, zone) -> its GPU row (the price of that many GPUs in that zone)."""
    table = {}
    with gpu_path.open(newline="", encoding="utf-8-sig") as handle:
        for row in csv.DictReader(handle):
            if row["InstanceType"].strip() or not row["AcceleratorName"].strip():
                continue
            count = required_decimal(
                row["AcceleratorCount"], location=str(gpu_path), field="AcceleratorCount"
            )
            table[(row["AcceleratorName"].strip(), int(count), row["AvailabilityZone"].strip())] = row
    return table


def read_gcp_instances(
    hosts_path: Path, gpu_path: Path, *, observed_at: dt.datetime
) -> Iterator[PriceRecord]:
    """Whole-instance on-demand prices (once per type and region) and spot prices (per zone)."""
    gpus = _gpu_prices(gpu_path)
    seen_on_demand: dict[tuple[str, str], tuple[Decimal, str]] = {}
    with hosts_path.open(newline="", encoding="utf-8-sig") as handle:
        reader = csv.DictReader(handle)
        for row in reader:
            location = f"{hosts_path}:{reader.line_num}"
            zone = row["AvailabilityZone"].strip()
            for name, accelerator, count in _combinations(row, location):
                gpu_row = gpus.get((accelerator, count, zone))
                if gpu_row is None:
                    continue  # these GPUs are not priced (or not offered) in this zone
                yield from _instance_prices(
                    row, gpu_row, name, accelerator, count, location, seen_on_demand, observed_at
                )


def _combinations(row: dict[str, str], location: str) -> list[tuple[str, str, int]]:
    """(instance name, accelerator, count) for a host row: one for a fixed-GPU type, the allowed
    attachments for an n1 host (pricing/providers/gcp_n1.py), none for any other row."""
    host = row["InstanceType"].strip()
    attached = attached_gpus(host)
    if attached:
        return [(host, attached[0], attached[1])]
    if host not in N1_HOSTS:
        return []
    vcpus = decimal_or_none(row["vCPUs"], location=location, field="vCPUs")
    memory = decimal_or_none(row["MemoryGiB"], location=location, field="MemoryGiB")
    if (vcpus, memory) != tuple(Decimal(figure) for figure in N1_HOSTS[host]):
        # the attachment rules were chosen for the stated size; a different size needs them re-checked
        raise SourceRowError(
            location, "vCPUs", f"{host} is {vcpus} vCPUs / {memory} GiB, not {N1_HOSTS[host]}"
        )
    return [
        (n1_instance_name(host, accelerator, count), accelerator, count)
        for accelerator, count in n1_attachments(host)
    ]


def _instance_prices(
    row, gpu_row, name, accelerator, count, location, seen_on_demand, observed_at
) -> Iterator[PriceRecord]:
    """On-demand (once per type and region, equal in every zone) and spot (per zone) for one instance."""
    zone = row["AvailabilityZone"].strip()
    instance = InstanceTypeRecord(
        provider="gcp",
        name=name,
        gpu_name=accelerator,
        gpu_count=Decimal(count),
        vcpus=decimal_or_none(row["vCPUs"], location=location, field="vCPUs"),
        memory_gib=decimal_or_none(row["MemoryGiB"], location=location, field="MemoryGiB"),
        gpu_memory_gib=_gpu_memory_gib(gpu_row.get("GpuInfo", ""), Decimal(count), "gcp", location),
    )
    for model, column, price_zone in ((ON_DEMAND, "Price", ""), (SPOT, "SpotPrice", zone)):
        total = _sum(row, gpu_row, column, location)
        if total is None:
            continue
        if model == ON_DEMAND:
            key = (instance.name, row["Region"].strip())
            if key in seen_on_demand:
                if seen_on_demand[key][0] != total:
                    raise SourceRowError(
                        location,
                        column,
                        f"{total} differs from {seen_on_demand[key][0]} in {seen_on_demand[key][1]}",
                    )
                continue
            seen_on_demand[key] = (total, zone)
        yield PriceRecord(
            instance=instance,
            region=row["Region"].strip(),
            zone=price_zone,
            pricing_model=model,
            price_per_hour=total,
            currency="USD",
            observed_at=observed_at,
            source=SOURCE,
            location=location,
        )


def _sum(host: dict[str, str], gpu: dict[str, str], column: str, location: str) -> Decimal | None:
    """Host + GPUs; None when either part has no price (an empty or 0.0 cell is never free)."""
    host_price = price_or_none(host.get(column), location=location, field=column)
    gpu_price = price_or_none(gpu.get(column), location=location, field=column)
    if host_price is None or gpu_price is None:
        return None
    return host_price + gpu_price
