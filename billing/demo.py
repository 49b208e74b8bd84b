"""A realistic demo FOCUS 1.2 billing file and a matching DCGM utilization file (plain Python, no ORM).

Columns follow the FinOps Open Cost and Usage Specification (FOCUS) 1.2 (CC-BY-4.0). Prices are the
us-east-1 on-demand prices of the bundled catalog (pricing/data/skypilot/aws/vms.gpu.csv and
lambda/vms.csv, see pricing/data/skypilot/PROVENANCE.md); spot and committed rates are set per
resource below. One row per resource and day, except where a resource is billed by the hour (as an
hourly CUR or FOCUS export bills every resource); what the file holds, so the review and the capacity
plan have something to say:
- two AWS teams' fleets and one Lambda node: H100 (p5.48xlarge, gpu_8x_h100_sxm5), A100
  (p4d.24xlarge), L40S (g6e.12xlarge, g6e.xlarge) and L4 (g6.xlarge);
- on-demand, spot (Dynamic) and committed usage, with a commitment partly unused in the last month;
- an upfront commitment purchase (EffectiveCost 0: the usage rows amortize it);
- one correction row billed in the last month for the first month's charge period;
- monthly tax and daily storage rows (non-GPU spend);
- a utilization file for the last month where the L40S dev box and the L4 box idle part of the time;
- the interruptible p5 batch (14:00-22:00 UTC) and the Lambda fine-tuning node (08:00-20:00 UTC)
  billed one row per hour, so the hourly demand has a daytime peak over the always-on fleet (the
  capacity plan's load-duration curve; a daily row only gives the day's mean).
The seed only moves the dev box's daily hours, so totals stay easy to check by hand.
"""

from __future__ import annotations

import csv
import datetime as dt
import json
import random
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path

COLUMNS = [
    "BillingAccountId",
    "BillingAccountName",
    "BillingCurrency",
    "BillingPeriodStart",
    "BillingPeriodEnd",
    "ChargePeriodStart",
    "ChargePeriodEnd",
    "ChargeCategory",
    "ChargeClass",
    "ChargeDescription",
    "BilledCost",
    "EffectiveCost",
    "ListCost",
    "ContractedCost",
    "PricingCategory",
    "CommitmentDiscountId",
    "CommitmentDiscountStatus",
    "ConsumedQuantity",
    "ConsumedUnit",
    "ProviderName",
    "RegionId",
    "AvailabilityZone",
    "ResourceId",
    "ResourceType",
    "ServiceCategory",
    "SkuId",
    "SkuPriceDetails",
    "SubAccountId",
    "SubAccountName",
    "Tags",
    "x_UsageType",
]
CREDIT = "FinOps Open Cost and Usage Specification (FOCUS)"


@dataclass(frozen=True)
class DemoResource:
    resource_id: str
    provider: str
    account: str
    instance_type: str
    list_rate: Decimal  # catalog on-demand price per instance-hour, us-east-1
    rate: Decimal  # what the bill charges per instance-hour
    category: str  # FOCUS PricingCategory: Standard, Dynamic, Committed
    hours_per_day: int
    tags: dict
    usage_prefix: str = "USE1-BoxUsage"
    commitment: str = ""
    weekdays_only: bool = False
    hourly_from: int | None = None  # billed one row per running hour from this UTC hour (else one row a day)


FLEET = [
    DemoResource(
        "i-0h100train0001",
        "AWS",
        "ml-research",
        "p5.48xlarge",
        Decimal("55.04"),
        Decimal("33.024"),
        "Committed",
        24,
        {"team": "ml-research", "project": "llm-pretrain", "environment": "prod"},
        usage_prefix="USE1-DiscountedUsage",
        commitment="ri-p5-2026",
    ),
    DemoResource(
        "i-0h100batch0002",
        "AWS",
        "ml-research",
        "p5.48xlarge",
        Decimal("55.04"),
        Decimal("55.04"),
        "Standard",
        8,
        {"team": "ml-research", "project": "eval-batch", "interruptible": "true"},
        hourly_from=14,
    ),
    DemoResource(
        "i-0a100serve0001",
        "AWS",
        "platform",
        "p4d.24xlarge",
        Decimal("21.957642"),
        Decimal("13.174585"),
        "Committed",
        24,
        {"team": "platform", "project": "inference", "environment": "prod"},
        usage_prefix="USE1-DiscountedUsage",
        commitment="ri-p4d-2026",
    ),
    DemoResource(
        "i-0a100serve0002",
        "AWS",
        "platform",
        "p4d.24xlarge",
        Decimal("21.957642"),
        Decimal("21.957642"),
        "Standard",
        24,
        {"team": "platform", "project": "inference", "environment": "prod"},
    ),
    DemoResource(
        "i-0a100serve0003",
        "AWS",
        "platform",
        "p4d.24xlarge",
        Decimal("21.957642"),
        Decimal("21.957642"),
        "Standard",
        24,
        {"team": "platform", "project": "inference", "environment": "prod"},
    ),
    DemoResource(
        "i-0l40sdev00001",
        "AWS",
        "vision",
        "g6e.12xlarge",
        Decimal("10.49264"),
        Decimal("10.49264"),
        "Standard",
        10,
        {"cost-center": "vision", "project": "detector", "environment": "dev"},
        weekdays_only=True,
    ),
    DemoResource(
        "i-0l40sspot0001",
        "AWS",
        "vision",
        "g6e.xlarge",
        Decimal("1.861"),
        Decimal("0.9154"),
        "Dynamic",
        12,
        {"team": "vision", "project": "detector", "interruptible": "true"},
        usage_prefix="USE1-SpotUsage",
    ),
    DemoResource(
        "i-0l4embed00001",
        "AWS",
        "platform",
        "g6.xlarge",
        Decimal("0.8048"),
        Decimal("0.8048"),
        "Standard",
        24,
        {"team": "platform", "project": "embeddings", "environment": "prod"},
    ),
    DemoResource(
        "lambda-h100-node-1",
        "Lambda",
        "lambda-main",
        "gpu_8x_h100_sxm5",
        Decimal("31.92"),
        Decimal("31.92"),
        "Standard",
        12,
        {"team": "ml-research", "project": "llm-finetune", "workload": "llama-finetune"},
        hourly_from=8,
    ),
]
UNUSED_COMMITMENT = DemoResource(
    "ri-p5-2026-slot2",
    "AWS",
    "ml-research",
    "p5.48xlarge",
    Decimal("55.04"),
    Decimal("33.024"),
    "Committed",
    6,
    {"team": "ml-research", "project": "llm-pretrain"},
    commitment="ri-p5-2026",
)  # a second reserved p5 slot left unused 6 h a day in the last month
UPFRONT_PURCHASE = Decimal("50000.00")  # paid once in the first month; EffectiveCost 0 (amortized in usage)
CORRECTION = Decimal("-24.00")  # a credit re-rating one L4 day of the first month
STORAGE_GB = Decimal("20000")
STORAGE_RATE_GB_MONTH = Decimal("0.08")  # EBS gp3, us-east-1 list price per GB-month
TAX_RATE = Decimal("0.05")  # on each month's AWS billed usage, a round figure for the demo
IDLE_PCT, BUSY_PCT = 3, 62


def _month_starts(start: dt.date, months: int) -> list[dt.date]:
    firsts, current = [], start.replace(day=1)
    for _ in range(months + 1):
        firsts.append(current)
        current = (current + dt.timedelta(days=32)).replace(day=1)
    return firsts


def _iso(day: dt.date | dt.datetime) -> str:
    if isinstance(day, dt.datetime):
        return day.strftime("%Y-%m-%dT%H:%M:%SZ")
    return f"{day.isoformat()}T00:00:00Z"


def default_start(months: int, today: dt.date | None = None) -> dt.date:
    today = today or dt.datetime.now(dt.UTC).date()
    start = today.replace(day=1)
    for _ in range(months):
        start = (start - dt.timedelta(days=1)).replace(day=1)
    return start


def _dev_hours(rng: random.Random, day: dt.date, resource: DemoResource) -> int:
    if resource.weekdays_only and day.weekday() >= 5:
        return 0
    if resource.resource_id == "i-0l40sdev00001":
        return rng.choice([8, 10, 12])
    return resource.hours_per_day


def _row(
    resource: DemoResource, day: dt.date, month: dt.date, next_month: dt.date, hours: Decimal, **overrides
) -> dict:
    region = "us-east-1"
    aws = resource.provider == "AWS"
    usage_type = f"{resource.usage_prefix}:{resource.instance_type}" if aws else ""
    cost = (hours * resource.rate).quantize(Decimal("0.000001"))
    row = {
        "BillingAccountId": "111122223333" if aws else "lambda-org-42",
        "BillingAccountName": "Example Corp",
        "BillingCurrency": "USD",
        "BillingPeriodStart": _iso(month),
        "BillingPeriodEnd": _iso(next_month),
        "ChargePeriodStart": _iso(day),
        "ChargePeriodEnd": _iso(day + dt.timedelta(days=1)),
        "ChargeCategory": "Usage",
        "ChargeClass": "",
        "ChargeDescription": f"{resource.instance_type} usage",
        "BilledCost": str(cost) if resource.category != "Committed" else "0",
        "EffectiveCost": str(cost),
        "ListCost": str((hours * resource.list_rate).quantize(Decimal("0.000001"))),
        "ContractedCost": str(cost),
        "PricingCategory": resource.category,
        "CommitmentDiscountId": resource.commitment,
        "CommitmentDiscountStatus": "Used" if resource.commitment else "",
        "ConsumedQuantity": str(hours),
        "ConsumedUnit": "Hours",
        "ProviderName": resource.provider,
        "RegionId": region,
        "AvailabilityZone": "use1-az2" if aws else "",
        "ResourceId": resource.resource_id,
        "ResourceType": "Virtual Machine",
        "ServiceCategory": "Compute",
        "SkuId": f"sku-{resource.instance_type}",
        "SkuPriceDetails": json.dumps({"InstanceType": resource.instance_type}) if not aws else "",
        "SubAccountId": resource.account,
        "SubAccountName": resource.account,
        "Tags": json.dumps(resource.tags),
        "x_UsageType": usage_type,
    }
    row.update(overrides)
    return row


def _usage_rows(resource: DemoResource, day: dt.date, month: dt.date, next_month: dt.date, hours: Decimal):
    """A day's usage of `resource`: one row for the day, or one per running hour when billed hourly."""
    if not hours:
        return []
    if resource.hourly_from is None:
        return [_row(resource, day, month, next_month, hours)]
    midnight = dt.datetime.combine(day, dt.time(), tzinfo=dt.UTC)
    return [
        _row(
            resource,
            day,
            month,
            next_month,
            Decimal(1),
            ChargePeriodStart=_iso(midnight + dt.timedelta(hours=h)),
            ChargePeriodEnd=_iso(midnight + dt.timedelta(hours=h + 1)),
        )
        for h in range(resource.hourly_from, resource.hourly_from + int(hours))
    ]


def demo_rows(*, seed: int, months: int, start: dt.date) -> list[dict]:
    rng = random.Random(seed)
    firsts = _month_starts(start, months)
    rows: list[dict] = []
    for month, next_month in zip(firsts[:-1], firsts[1:], strict=True):
        last_month = next_month == firsts[-1]
        aws_billed = Decimal(0)
        day = month
        while day < next_month:
            for resource in FLEET:
                hours = Decimal(_dev_hours(rng, day, resource))
                for row in _usage_rows(resource, day, month, next_month, hours):
                    rows.append(row)
                    if resource.provider == "AWS":
                        aws_billed += Decimal(row["BilledCost"])
            if last_month:
                unused = Decimal(UNUSED_COMMITMENT.hours_per_day)
                rows.append(
                    _row(
                        UNUSED_COMMITMENT,
                        day,
                        month,
                        next_month,
                        unused,
                        BilledCost="0",
                        ConsumedQuantity="",
                        ConsumedUnit="",
                        CommitmentDiscountStatus="Unused",
                        ResourceId=UNUSED_COMMITMENT.commitment,
                        SkuPriceDetails=json.dumps({"InstanceType": UNUSED_COMMITMENT.instance_type}),
                        ChargeDescription="unused reserved instance hours",
                        x_UsageType="",
                        EffectiveCost=str((unused * UNUSED_COMMITMENT.rate).quantize(Decimal("0.000001"))),
                        ListCost="",
                    )
                )
            storage = (STORAGE_GB * STORAGE_RATE_GB_MONTH / ((next_month - month).days)).quantize(
                Decimal("0.000001")
            )
            rows.append(
                _non_gpu(month, next_month, day, "Storage", "USE1-EBS:VolumeUsage.gp3", storage, "GB-Mo")
            )
            aws_billed += storage
            day += dt.timedelta(days=1)
        if month == firsts[0]:
            rows.append(
                _non_gpu(
                    month,
                    next_month,
                    month,
                    "Compute",
                    "USE1-RI-Upfront:p5.48xlarge",
                    UPFRONT_PURCHASE,
                    "",
                    category="Purchase",
                    effective=Decimal(0),
                    span_to=next_month,
                )
            )
        tax = (aws_billed * TAX_RATE).quantize(Decimal("0.01"))
        rows.append(
            _non_gpu(month, next_month, month, "Other", "Tax", tax, "", category="Tax", span_to=next_month)
        )
    rows.append(_correction(firsts))
    return rows


def _non_gpu(
    month, next_month, day, service, usage_type, cost, unit, *, category="Usage", effective=None, span_to=None
):
    end = span_to or day + dt.timedelta(days=1)
    return {
        "BillingAccountId": "111122223333",
        "BillingAccountName": "Example Corp",
        "BillingCurrency": "USD",
        "BillingPeriodStart": _iso(month),
        "BillingPeriodEnd": _iso(next_month),
        "ChargePeriodStart": _iso(day),
        "ChargePeriodEnd": _iso(end),
        "ChargeCategory": category,
        "ChargeClass": "",
        "ChargeDescription": usage_type,
        "BilledCost": str(cost),
        "EffectiveCost": str(cost if effective is None else effective),
        "ListCost": "",
        "ContractedCost": "",
        "PricingCategory": "Standard" if category == "Usage" else "",
        "CommitmentDiscountId": "",
        "CommitmentDiscountStatus": "",
        "ConsumedQuantity": "",
        "ConsumedUnit": unit,
        "ProviderName": "AWS",
        "RegionId": "us-east-1",
        "AvailabilityZone": "",
        "ResourceId": "",
        "ResourceType": "",
        "ServiceCategory": service,
        "SkuId": usage_type,
        "SkuPriceDetails": "",
        "SubAccountId": "platform",
        "SubAccountName": "platform",
        "Tags": json.dumps({"team": "platform"}),
        "x_UsageType": usage_type,
    }


def _correction(firsts: list[dt.date]) -> dict:
    """Billed in the last month, for the first day of the first month: a delta, 0 hours."""
    l4 = next(r for r in FLEET if r.instance_type == "g6.xlarge")
    return _row(
        l4,
        firsts[0],
        firsts[-2],
        firsts[-1],
        Decimal(0),
        ChargeClass="Correction",
        BilledCost=str(CORRECTION),
        EffectiveCost=str(CORRECTION),
        ListCost="0",
        ContractedCost=str(CORRECTION),
        ConsumedQuantity="0",
        ChargeDescription="re-rated g6.xlarge usage",
    )


def utilization_rows(*, seed: int, months: int, start: dt.date, billing_rows: list[dict]) -> list[dict]:
    """Hourly DCGM samples for the last month: GPUs 2-3 of the L40S dev box idle whenever it runs, the L4
    box idle from 00:00 to 06:00 UTC, the second A100 server busy."""
    firsts = _month_starts(start, months)
    last = _iso(firsts[-2])
    gpus = {"i-0l40sdev00001": 4, "i-0l4embed00001": 1, "i-0a100serve0002": 8}
    rows = []
    for row in billing_rows:
        rid = row["ResourceId"]
        if rid not in gpus or row["ChargePeriodStart"] < last or row["ChargeClass"]:
            continue
        day = dt.datetime.fromisoformat(row["ChargePeriodStart"].replace("Z", "+00:00"))
        for hour in range(int(Decimal(row["ConsumedQuantity"]))):
            stamp = day + dt.timedelta(hours=hour)
            for gpu in range(gpus[rid]):
                idle = (rid == "i-0l40sdev00001" and gpu >= 2) or (rid == "i-0l4embed00001" and hour < 6)
                rows.append(
                    {
                        "timestamp": _iso(stamp),
                        "resource_id": rid,
                        "gpu": gpu,
                        "DCGM_FI_DEV_GPU_UTIL": IDLE_PCT if idle else BUSY_PCT,
                        "DCGM_FI_DEV_FB_USED": 512 if idle else 30000,
                    }
                )
    return rows


def write_demo(
    output: Path, *, seed: int = 7, months: int = 6, start: dt.date | None = None
) -> tuple[Path, Path, int]:
    start = start or default_start(months)
    rows = demo_rows(seed=seed, months=months, start=start)
    with open(output, "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=COLUMNS)
        writer.writeheader()
        writer.writerows(rows)
    util_path = output.with_name(output.stem + "_utilization.csv")
    util = utilization_rows(seed=seed, months=months, start=start, billing_rows=rows)
    with open(util_path, "w", newline="") as handle:
        writer = csv.DictWriter(
            handle,
            fieldnames=["timestamp", "resource_id", "gpu", "DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_DEV_FB_USED"],
        )
        writer.writeheader()
        writer.writerows(util)
    return output, util_path, len(rows)
