"""FOCUS bills of known fleets, written by hand for the outside review of the capacity plan (issue 27).

Prices are AWS's public on-demand list prices as the bundled SkyPilot catalog carries them
(pricing/data/skypilot/aws/vms.gpu.csv): p5.48xlarge us-east-1 55.04 USD an instance-hour (line 2177,
8 x H100 SXM, 6.88 a GPU-hour), p4d.24xlarge us-east-1 21.957642 (line 2137, 8 x A100 40GB,
2.744705 a GPU-hour), g5.xlarge us-east-1 1.006 (line 903, 1 x A10G). Every row is a day of a
resource running 24 hours: steady fleets, so the load-duration curve is flat and the plan is a
question of how many GPUs to commit or own, nothing else."""

from __future__ import annotations

import csv
import datetime as dt
import json
from dataclasses import dataclass
from decimal import Decimal
from io import StringIO

COLUMNS = [
    "BillingAccountId",
    "BillingCurrency",
    "BillingPeriodStart",
    "BillingPeriodEnd",
    "ChargePeriodStart",
    "ChargePeriodEnd",
    "ChargeCategory",
    "ChargeClass",
    "BilledCost",
    "EffectiveCost",
    "ListCost",
    "ContractedCost",
    "PricingCategory",
    "CommitmentDiscountId",
    "CommitmentDiscountStatus",
    "x_CommitmentDiscountEndDate",
    "ConsumedQuantity",
    "ConsumedUnit",
    "ProviderName",
    "RegionId",
    "ResourceId",
    "ResourceType",
    "ServiceCategory",
    "SkuId",
    "Tags",
    "x_UsageType",
]
START = dt.date(2026, 9, 1)
DAYS = 28
PERIOD = {"from": "2026-09-01", "to": "2026-09-29"}


@dataclass(frozen=True)
class Machine:
    resource_id: str
    instance_type: str
    rate: Decimal  # USD per instance-hour as billed
    list_rate: Decimal
    category: str = "Standard"  # FOCUS PricingCategory
    commitment: str = ""
    commitment_end: str = ""
    interruptible: bool = False  # tagged interruptible=true, billed as spot (FOCUS Dynamic)


def _iso(day: dt.date) -> str:
    return f"{day.isoformat()}T00:00:00Z"


def focus_rows(machines: list[Machine], *, start: dt.date = START, days: int = DAYS) -> list[dict]:
    rows = []
    for offset in range(days):
        day = start + dt.timedelta(days=offset)
        for machine in machines:
            cost = (Decimal(24) * machine.rate).quantize(Decimal("0.000001"))
            prefix = "USE1-DiscountedUsage" if machine.commitment else "USE1-BoxUsage"
            prefix = "USE1-SpotUsage" if machine.interruptible else prefix
            tags = {"team": "ml"} | ({"interruptible": "true"} if machine.interruptible else {})
            rows.append(
                {
                    "BillingAccountId": "444455556666",
                    "BillingCurrency": "USD",
                    "BillingPeriodStart": _iso(day.replace(day=1)),
                    "BillingPeriodEnd": _iso(dt.date(2026, 10, 1)),
                    "ChargePeriodStart": _iso(day),
                    "ChargePeriodEnd": _iso(day + dt.timedelta(days=1)),
                    "ChargeCategory": "Usage",
                    "ChargeClass": "",
                    "BilledCost": "0" if machine.commitment else str(cost),
                    "EffectiveCost": str(cost),
                    "ListCost": str((Decimal(24) * machine.list_rate).quantize(Decimal("0.000001"))),
                    "ContractedCost": str(cost),
                    "PricingCategory": machine.category,
                    "CommitmentDiscountId": machine.commitment,
                    "CommitmentDiscountStatus": "Used" if machine.commitment else "",
                    "x_CommitmentDiscountEndDate": machine.commitment_end,
                    "ConsumedQuantity": "24",
                    "ConsumedUnit": "Hours",
                    "ProviderName": "AWS",
                    "RegionId": "us-east-1",
                    "ResourceId": machine.resource_id,
                    "ResourceType": "Virtual Machine",
                    "ServiceCategory": "Compute",
                    "SkuId": f"sku-{machine.instance_type}",
                    "Tags": json.dumps(tags),
                    "x_UsageType": f"{prefix}:{machine.instance_type}",
                }
            )
    return rows


def correction_row(machine: Machine, day: dt.date, amount: Decimal) -> dict:
    """A FOCUS correction (ChargeClass=Correction) of ``machine``'s usage on ``day``: money, no hours,
    as the demo's -24.00 credit re-rating one L4 day (billing/demo.py CORRECTION)."""
    (row,) = focus_rows([machine], start=day, days=1)
    return row | {
        "ChargeClass": "Correction",
        "BilledCost": str(amount),
        "EffectiveCost": str(amount),
        "ListCost": "0",
        "ContractedCost": str(amount),
        "ConsumedQuantity": "0",
    }


def import_bill(tmp_path, machines: list[Machine], name: str = "bill.csv", extra_rows: tuple = ()) -> None:
    from django.core.management import call_command

    path = tmp_path / name
    with path.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, COLUMNS)
        writer.writeheader()
        writer.writerows(focus_rows(machines) + list(extra_rows))
    out = StringIO()
    call_command("import_billing", str(path), "--no-progress", stdout=out)
    assert "rejected 0" in out.getvalue(), out.getvalue()


P5 = Decimal("55.04")
P4D = Decimal("21.957642")
G5 = Decimal("1.006")


def p5(n: int, prefix: str = "i-p5") -> list[Machine]:
    return [Machine(f"{prefix}-{k}", "p5.48xlarge", P5, P5) for k in range(n)]


def g5(n: int) -> list[Machine]:
    return [Machine(f"i-g5-{k}", "g5.xlarge", G5, G5) for k in range(n)]


def p4d(n: int) -> list[Machine]:
    return [Machine(f"i-p4d-{k}", "p4d.24xlarge", P4D, P4D) for k in range(n)]
