"""AWS Savings Plans rates for GPU instance types: ``savingsplans.describe_savings_plans_offering_rates``.

A Savings Plan is a commitment to spend an amount per hour for 1 or 3 years; usage it covers is billed
at the plan's rate for the usage type (``BoxUsage:p5.48xlarge``, ``USW2-BoxUsage:p5.48xlarge``).
Compute Savings Plans apply to any family and region, EC2 Instance Savings Plans to one family in one
region, at a lower rate: each plan type is its own commitment kind, and each rate is an effective hourly
price of the instance type in the region.

The API quotes the rate, not the split into upfront and hourly parts: those follow from the
commitment. For a plan sized to exactly one instance (commitment = rate per hour), All Upfront pays
rate × term hours at purchase and nothing hourly; Partial Upfront pays half of that at purchase and half
of the rate hourly (a model assumption: AWS asks at least half of the commitment upfront for Partial Upfront,
and the purchase page proposes half); No Upfront pays the rate hourly. The effective hourly price is the
rate in each case, which is what every engine reads; the split is shown beside it.

The rates API has no paginator in botocore: pages follow ``nextToken`` by hand, each retried on its own
(throttling), and there is no duration filter, so 1- and 3-year rates come in one listing and are told
apart by ``savingsPlanOffering.durationSeconds`` (31536000 and 94608000).
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

from pricing.price_checks import UNIT, UNREADABLE, Refusals
from pricing.providers.aws import (
    AwsReadStats,
    ClientFactory,
    aws_accelerated_instance_types,
    boto3_client_factory,
)
from pricing.providers.cells import PRICE_QUANTUM, required_decimal
from pricing.providers.records import InstanceTypeRecord, PriceRecord, SourceRowError
from pricing.providers.retry import RetryPolicy, call_with_retry
from pricing.providers.vocabulary import (
    ALL_UPFRONT,
    COMPUTE_SAVINGS_PLAN,
    INSTANCE_SAVINGS_PLAN,
    NO_UPFRONT,
    PARTIAL_UPFRONT,
    SAVINGS_PLAN_1Y,
    SAVINGS_PLAN_3Y,
    TERM_HOURS,
)

SAVINGS_PLANS_ENDPOINT_REGION = "us-east-1"  # the API is global, served from us-east-1
SAVINGS_PLANS_SOURCE = "aws:savingsplans.describe_savings_plans_offering_rates"
DURATIONS = {31_536_000: SAVINGS_PLAN_1Y, 94_608_000: SAVINGS_PLAN_3Y}  # 365 and 3 × 365 days
PLAN_TYPES = {"Compute": COMPUTE_SAVINGS_PLAN, "EC2Instance": INSTANCE_SAVINGS_PLAN}
PAYMENT_OPTIONS = {"No Upfront": NO_UPFRONT, "Partial Upfront": PARTIAL_UPFRONT, "All Upfront": ALL_UPFRONT}
UPFRONT_SHARE = {NO_UPFRONT: Decimal(0), PARTIAL_UPFRONT: Decimal("0.5"), ALL_UPFRONT: Decimal(1)}
# Shared-tenancy instance usage, with the region's prefix outside us-east-1 (USW2-BoxUsage:p5.48xlarge);
# not DedicatedUsage, HostUsage or UnusedBox.
BOX_USAGE = re.compile(r"(?:[A-Z]{2,4}[0-9]?-)?BoxUsage:[a-z0-9.\-]+")
TYPES_PER_REQUEST = 20  # instance types per filter: a handful of requests per region
PAGE_SIZE = 1000  # the API's maximum


def rates_request(region: str, instance_types: list[str]) -> dict[str, Any]:
    """Linux, shared-tenancy EC2 usage of these instance types in one region, every plan and payment."""
    return {
        "products": ["EC2"],
        "serviceCodes": ["AmazonEC2"],
        "savingsPlanTypes": sorted(PLAN_TYPES),
        "savingsPlanPaymentOptions": sorted(PAYMENT_OPTIONS),
        "operations": ["RunInstances"],
        "filters": [
            {"name": "region", "values": [region]},
            {"name": "instanceType", "values": instance_types},
            {"name": "tenancy", "values": ["shared"]},
            {"name": "productDescription", "values": ["Linux/UNIX"]},
        ],
        "maxResults": PAGE_SIZE,
    }


def rate_pages(client: Any, request: dict[str, Any], policy: RetryPolicy, *, what: str) -> Iterator[dict]:
    """Every page of one rates listing, following nextToken; each page retried on its own."""
    token, number = None, 0
    while True:
        number += 1
        params = request | ({"nextToken": token} if token else {})

        def call(params: dict[str, Any] = params) -> dict[str, Any]:
            return client.describe_savings_plans_offering_rates(**params)

        page = call_with_retry(call, policy, what=f"{what} page {number}")
        yield page
        token = page.get("nextToken")
        if not token:
            return


def aws_savings_plan_rates(
    client: Any,
    *,
    region: str,
    instance_types: dict[str, InstanceTypeRecord],
    observed_at: dt.datetime,
    policy: RetryPolicy,
    stats: AwsReadStats | None = None,
    refusals: Refusals | None = None,
) -> Iterator[PriceRecord]:
    """The 1- and 3-year Compute and EC2 Instance Savings Plans rates of the given types in a region. A rate
    in a unit other than Hrs (``unit``) or that is not a number (``unreadable``) is refused with its page
    and item; the rest lands."""
    stats = stats if stats is not None else AwsReadStats()
    refusals = refusals if refusals is not None else Refusals()
    names = sorted(instance_types)
    for start in range(0, len(names), TYPES_PER_REQUEST):
        request = rates_request(region, names[start : start + TYPES_PER_REQUEST])
        what = f"aws savingsplans {region}"
        for page_number, page in enumerate(rate_pages(client, request, policy, what=what), start=1):
            for item_number, item in enumerate(page.get("searchResults") or [], start=1):
                stats.items_seen += 1
                location = f"aws-savingsplans:{region} page {page_number} item {item_number}"
                try:
                    record = _rate_record(item, location, region, instance_types, observed_at, stats)
                except SourceRowError as error:  # this rate goes; the rest lands
                    refusals.refuse(UNIT if error.field == "unit" else UNREADABLE, str(error))
                    continue
                if record is not None:
                    stats.records += 1
                    yield record


def _rate_record(
    item: dict[str, Any],
    location: str,
    region: str,
    instance_types: dict[str, InstanceTypeRecord],
    observed_at: dt.datetime,
    stats: AwsReadStats,
) -> PriceRecord | None:
    properties = {p.get("name"): p.get("value") for p in item.get("properties") or []}
    instance = instance_types.get(properties.get("instanceType", ""))
    offering = item.get("savingsPlanOffering") or {}
    pricing_model = DURATIONS.get(offering.get("durationSeconds"))
    kind = PLAN_TYPES.get(offering.get("planType", ""))
    payment = PAYMENT_OPTIONS.get(offering.get("paymentOption", ""))
    usage = item.get("usageType", "")
    if (
        instance is None
        or properties.get("region", region) != region
        or BOX_USAGE.fullmatch(usage) is None
        or usage.rsplit(":", 1)[-1] != instance.name
        or None in (pricing_model, kind, payment)
    ):
        stats.skipped_other_types += 1
        stats.skipped_reasons["another type, region, usage or plan"] += 1
        return None
    if item.get("unit") != "Hrs":
        raise SourceRowError(location, "unit", f"{item.get('unit')!r} is not an hourly rate (Hrs)")
    rate = required_decimal(item.get("rate"), location=location, field="rate").quantize(PRICE_QUANTUM)
    if rate <= 0:
        stats.rejected += 1
        stats.rejected_locations.append(f"{location}: rate {item.get('rate')!r}")
        return None
    share = UPFRONT_SHARE[payment]
    upfront = (rate * TERM_HOURS[pricing_model] * share).quantize(PRICE_QUANTUM)
    return PriceRecord(
        instance=instance,
        region=region,
        zone="",
        pricing_model=pricing_model,
        price_per_hour=rate,
        currency=offering.get("currency") or "USD",
        observed_at=observed_at,
        source=SAVINGS_PLANS_SOURCE,
        location=location,
        payment_option=payment,
        upfront_fee=upfront,
        commitment_kind=kind,
        recurring_per_hour=(rate * (1 - share)).quantize(PRICE_QUANTUM),
    )


def fetch_aws_savings_plan_rates(
    region: str,
    *,
    client_factory: ClientFactory = boto3_client_factory,
    now: dt.datetime | None = None,
    policy: RetryPolicy | None = None,
    stats: AwsReadStats | None = None,
    refusals: Refusals | None = None,
    instance_types: dict[str, InstanceTypeRecord] | None = None,
) -> Iterator[PriceRecord]:
    """One region's Savings Plans rates for its accelerated instance types."""
    policy = policy or RetryPolicy()
    observed_at = now or dt.datetime.now(dt.UTC)
    if instance_types is None:
        ec2 = client_factory("ec2", region_name=region)
        instance_types = aws_accelerated_instance_types(ec2, policy=policy, stats=stats)
    if not instance_types:
        return
    client = client_factory("savingsplans", region_name=SAVINGS_PLANS_ENDPOINT_REGION)
    yield from aws_savings_plan_rates(
        client,
        region=region,
        instance_types=instance_types,
        observed_at=observed_at,
        policy=policy,
        stats=stats,
        refusals=refusals,
    )
