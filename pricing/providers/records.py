"""Normalized records every price source yields.

Each module in ``pricing.providers`` turns one source (an API, a catalog file) into these plain
records; ``pricing.ingest`` is the only code that writes them to the database. Keeping the
records ORM-free lets the parsers be tested without a database and run inside any worker.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from decimal import Decimal

from gpuledger.errors import InputError


@dataclass(frozen=True)
class InstanceTypeRecord:
    """What a provider sells, independent of where and at what price."""

    provider: str  # provider slug, e.g. "aws", "lambda", "autodl"
    name: str  # e.g. "p5.48xlarge"; for GPU-only rows (GCP) a synthetic "<gpu>-x<count>"
    gpu_name: str  # the source's accelerator name, mapped to a GpuModel through aliases
    gpu_count: Decimal  # fractional for shared GPUs
    vcpus: Decimal | None = None
    memory_gib: Decimal | None = None
    gpu_memory_gib: Decimal | None = None  # per GPU
    local_disk_gb: Decimal | None = None
    network: str = ""
    interconnect: str = ""
    # True when the source prices the GPUs alone and the host VM separately (GCP GPU-only rows).
    host_priced_separately: bool = False
    # True when vcpus / memory_gib are the smallest of figures the source lists for this type in different
    # regions (skypilot_csv.with_contradicting_hosts_at_smallest): a lower bound, not the one host's figure.
    host_figures_lower_bound: bool = False


@dataclass(frozen=True)
class PriceRecord:
    """One observed hourly price of an instance type in a region (and zone, for spot)."""

    instance: InstanceTypeRecord
    region: str
    zone: str  # "" when the price is regional
    pricing_model: str  # a pricing.choices.PricingModel value
    price_per_hour: Decimal  # always > 0: sources drop empty/zero prices (never "free")
    currency: str  # ISO 4217
    observed_at: dt.datetime  # timezone-aware
    source: str  # e.g. "skypilot:aws/vms.gpu.csv", "aws:describe_spot_price_history"
    location: str = ""  # "file:line" or API page, for error messages
    # Reserved and savings-plan terms only: "no_upfront" | "partial_upfront" | "all_upfront".
    payment_option: str = ""
    # Reserved terms: the one-off fee already spread into price_per_hour (kept for audit).
    upfront_fee: Decimal | None = None
    # Commitments: which product ("standard" | "convertible" | "compute_sp" | "ec2_instance_sp"; "" when
    # the source does not say) and the hourly part billed besides the fee (None: price_per_hour minus the
    # fee spread over the term).
    commitment_kind: str = ""
    recurring_per_hour: Decimal | None = None


@dataclass(frozen=True)
class SpotAdvisoryRecord:
    """AWS Spot Advisor band for an instance type in a region on a date."""

    region: str
    instance_type: str
    interruption_band: int  # index into the advisor's ranges: 0 (<5%) .. 4 (>20%)
    interruption_label: str  # e.g. "<5%"
    savings_pct: int  # savings against on-demand, percent
    observed_at: dt.datetime
    source: str


class SourceRowError(InputError):
    """A source row that cannot be read; names the file (or page), line and field."""

    def __init__(self, location: str, field: str, message: str):
        self.location = location
        text = f"{location}: column {field!r}: {message}"
        problems = [(f"{location}, column {field}", message)]
        super().__init__(field, message, file=location, column=field, problems=problems, text=text)
