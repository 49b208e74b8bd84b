"""Real-shaped savingsplans DescribeSavingsPlansOfferingRates answers for Stubber.

The shape follows botocore's savingsplans 2019-06-28 service model (SavingsPlanOfferingRate:
savingsPlanOffering {offeringId, paymentOption, planType, durationSeconds, currency, planDescription},
rate as a string, unit, productType, serviceCode, usageType, operation, properties [{name, value}]).
The rates themselves are test inputs, not AWS's published figures.
"""

from __future__ import annotations

from typing import Any

YEAR_S, THREE_YEARS_S = 31_536_000, 94_608_000


def rate_item(
    instance_type: str,
    rate: str,
    *,
    plan: str = "EC2Instance",
    payment: str = "No Upfront",
    duration_s: int = YEAR_S,
    region: str = "us-east-1",
    usage_type: str = "",
    unit: str = "Hrs",
) -> dict[str, Any]:
    family = instance_type.split(".")[0]
    description = (
        f"1 year No Upfront {family} {region} EC2 Instance Savings Plan"
        if plan == "EC2Instance"
        else "Compute Savings Plan"
    )
    return {
        "savingsPlanOffering": {
            "offeringId": "8f6d7f3c-1111-4d1e-9a51-0c9b2c6f2a7e",
            "paymentOption": payment,
            "planType": plan,
            "durationSeconds": duration_s,
            "currency": "USD",
            "planDescription": description,
        },
        "rate": rate,
        "unit": unit,
        "productType": "EC2",
        "serviceCode": "AmazonEC2",
        "usageType": usage_type or f"BoxUsage:{instance_type}",
        "operation": "RunInstances",
        "properties": [
            {"name": "region", "value": region},
            {"name": "instanceType", "value": instance_type},
            {"name": "instanceFamily", "value": family},
            {"name": "productDescription", "value": "Linux/UNIX"},
            {"name": "tenancy", "value": "shared"},
        ],
    }
