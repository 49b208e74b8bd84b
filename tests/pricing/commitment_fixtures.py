"""Stored p5.48xlarge prices for the commitment tests, written through the one ingest path.

On-demand 55.04 USD/h is AWS's p5.48xlarge us-east-1 price after the June 2025 reduction (as in
tests/pricing/providers/test_aws_pricing.py). The commitment figures are test inputs shaped as AWS quotes
them (an upfront fee and an hourly part), not AWS's published rates; the tests compute the rest by hand.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

from pricing.ingest import ingest_price_records
from pricing.models import Offer, PriceObservation
from pricing.providers.records import InstanceTypeRecord, PriceRecord

OBSERVED = dt.datetime(2026, 12, 1, tzinfo=dt.UTC)
P5 = InstanceTypeRecord(provider="aws", name="p5.48xlarge", gpu_name="H100", gpu_count=Decimal(8))
PRICING = "aws:pricing.get_products"
SAVINGS = "aws:savingsplans.describe_savings_plans_offering_rates"
# (pricing model, payment, kind, effective per hour, upfront, recurring per hour, source)
COMMITMENTS = [
    # 16 + 120,000 / 8,760 h = 16 + 13.698630 = 29.698630
    ("reserved_1y", "partial_upfront", "standard", "29.698630", "120000", "16", PRICING),
    ("reserved_1y", "no_upfront", "standard", "34.000000", "0", "34", PRICING),
    # 500,000 / 26,280 h = 19.025875
    ("reserved_3y", "all_upfront", "standard", "19.025875", "500000", "0", PRICING),
    ("reserved_1y", "no_upfront", "convertible", "38.000000", "0", "38", PRICING),
    ("savings_plan_1y", "no_upfront", "ec2_instance_sp", "33.500000", "0", "33.5", SAVINGS),
    ("savings_plan_1y", "no_upfront", "compute_sp", "39.900000", "0", "39.9", SAVINGS),
]


def p5_records(region: str = "us-east-1", observed_at: dt.datetime = OBSERVED) -> list[PriceRecord]:
    records = [
        PriceRecord(P5, region, "", "on_demand", Decimal("55.04"), "USD", observed_at, PRICING),
        PriceRecord(
            P5,
            region,
            "use1-az4",
            "spot",
            Decimal("21.5"),
            "USD",
            observed_at,
            "aws:describe_spot_price_history",
        ),
    ]
    for model, payment, kind, effective, upfront, recurring, source in COMMITMENTS:
        records.append(
            PriceRecord(
                P5,
                region,
                "",
                model,
                Decimal(effective),
                "USD",
                observed_at,
                source,
                payment_option=payment,
                upfront_fee=Decimal(upfront),
                commitment_kind=kind,
                recurring_per_hour=Decimal(recurring),
            )
        )
    return records


def store_p5_prices(region: str = "us-east-1") -> Offer:
    """Ingest the prices; the regional offer (on-demand and commitments) is returned."""
    ingest_price_records(p5_records(region))
    return Offer.objects.get(instance_type__name="p5.48xlarge", region__code=region, zone="")


def price_id(model: str, payment: str, kind: str) -> int:
    return PriceObservation.objects.get(pricing_model=model, payment_option=payment, commitment_kind=kind).pk
