"""AWS on-demand and reserved prices from the Pricing API (``get_products``).

The Pricing API answers only at us-east-1 (and a few other endpoints) whatever region is being
priced. Each ``PriceList`` entry is a JSON *string*: one product (an instance type in a region)
with its terms. On-demand is the "Hrs" dimension of the OnDemand term. Reserved terms (standard
offering class only: convertible reservations are a different product) carry an hourly part and an
upfront fee; the effective hourly price is hourly + upfront ÷ term hours, with the fee kept on the
record for audit.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

from pricing.providers.aws import (
    AwsReadStats,
    ClientFactory,
    aws_accelerated_instance_types,
    boto3_client_factory,
)
from pricing.providers.cells import PRICE_QUANTUM, required_decimal
from pricing.providers.records import InstanceTypeRecord, PriceRecord, SourceRowError
from pricing.providers.retry import RetryPolicy, pages_with_retry
from pricing.providers.vocabulary import (
    ALL_UPFRONT,
    NO_UPFRONT,
    ON_DEMAND,
    PARTIAL_UPFRONT,
    RESERVED_1Y,
    RESERVED_3Y,
    TERM_HOURS,
)

PRICING_ENDPOINT_REGION = "us-east-1"
PRICING_SOURCE = "aws:pricing.get_products"
LEASE_TERMS = {"1yr": RESERVED_1Y, "1 yr": RESERVED_1Y, "3yr": RESERVED_3Y, "3 yr": RESERVED_3Y}
PURCHASE_OPTIONS = {"No Upfront": NO_UPFRONT, "Partial Upfront": PARTIAL_UPFRONT, "All Upfront": ALL_UPFRONT}


def product_filters(instance_type: str, region: str) -> list[dict[str, str]]:
    """One Linux, shared-tenancy, on-demand-capacity product without pre-installed software."""
    terms = {
        "instanceType": instance_type,
        "regionCode": region,
        "operatingSystem": "Linux",
        "tenancy": "Shared",
        "capacitystatus": "Used",
        "preInstalledSw": "NA",
        "operation": "RunInstances",
    }
    return [{"Type": "TERM_MATCH", "Field": name, "Value": value} for name, value in terms.items()]


def aws_list_prices(
    pricing: Any,
    *,
    region: str,
    instance: InstanceTypeRecord,
    observed_at: dt.datetime,
    policy: RetryPolicy,
    stats: AwsReadStats | None = None,
) -> Iterator[PriceRecord]:
    """The on-demand and reserved prices of one instance type in one region."""
    stats = stats if stats is not None else AwsReadStats()
    seen: dict[tuple[str, str], tuple[Decimal, str]] = {}
    pages = pages_with_retry(
        pricing,
        "get_products",
        policy,
        what=f"aws pricing {region} {instance.name}",
        ServiceCode="AmazonEC2",
        FormatVersion="aws_v1",
        Filters=product_filters(instance.name, region),
    )
    for page_number, page in enumerate(pages, start=1):
        for item_number, text in enumerate(page.get("PriceList", []), start=1):
            stats.items_seen += 1
            location = f"aws-pricing:{region}:{instance.name} page {page_number} item {item_number}"
            for pricing_model, payment_option, price, upfront in _product_prices(text, location, stats):
                _check_consistent(seen, (pricing_model, payment_option), price, location)
                stats.records += 1
                yield PriceRecord(
                    instance=instance,
                    region=region,
                    zone="",
                    pricing_model=pricing_model,
                    price_per_hour=price,
                    currency="USD",
                    observed_at=observed_at,
                    source=PRICING_SOURCE,
                    location=location,
                    payment_option=payment_option,
                    upfront_fee=upfront,
                )


def _product_prices(
    text: Any, location: str, stats: AwsReadStats
) -> Iterator[tuple[str, str, Decimal, Decimal | None]]:
    """(pricing model, payment option, effective hourly, upfront fee) of one PriceList entry."""
    product = _decode(text, location)
    terms = product.get("terms")
    if not isinstance(terms, dict):
        raise SourceRowError(location, "terms", "missing: not a Pricing API product")
    for code, term in (terms.get("OnDemand") or {}).items():
        hourly, _ = _dimensions(term, f"{location} terms.OnDemand.{code}")
        yield from _positive(ON_DEMAND, "", hourly, None, location, stats)
    for code, term in (terms.get("Reserved") or {}).items():
        attributes = term.get("termAttributes") or {}
        pricing_model = LEASE_TERMS.get(attributes.get("LeaseContractLength", ""))
        payment_option = PURCHASE_OPTIONS.get(attributes.get("PurchaseOption", ""))
        if attributes.get("OfferingClass") != "standard" or not pricing_model or not payment_option:
            continue
        hourly, upfront = _dimensions(term, f"{location} terms.Reserved.{code}")
        effective = (hourly + upfront / TERM_HOURS[pricing_model]).quantize(PRICE_QUANTUM)
        yield from _positive(pricing_model, payment_option, effective, upfront, location, stats)


def _decode(text: Any, location: str) -> dict[str, Any]:
    try:
        product = json.loads(text)
    except (TypeError, json.JSONDecodeError) as error:
        raise SourceRowError(location, "PriceList", f"not a JSON product ({error})") from None
    if not isinstance(product, dict):
        raise SourceRowError(location, "PriceList", "not a JSON object")
    return product


def _dimensions(term: dict[str, Any], location: str) -> tuple[Decimal, Decimal]:
    """(hourly USD, upfront USD) summed over a term's price dimensions."""
    hourly = upfront = Decimal(0)
    for code, dimension in (term.get("priceDimensions") or {}).items():
        usd = (dimension.get("pricePerUnit") or {}).get("USD")
        amount = required_decimal(usd, location=location, field=f"priceDimensions.{code}.pricePerUnit.USD")
        if dimension.get("unit") == "Hrs":
            hourly += amount
        elif dimension.get("unit") == "Quantity":
            upfront += amount
    return hourly, upfront


def _positive(
    pricing_model: str,
    payment_option: str,
    price: Decimal,
    upfront: Decimal | None,
    location: str,
    stats: AwsReadStats,
) -> Iterator[tuple[str, str, Decimal, Decimal | None]]:
    """Pass a price above zero on; count and note any other (a price is never free)."""
    price = price.quantize(PRICE_QUANTUM)
    if price > 0:
        yield pricing_model, payment_option, price, upfront
        return
    stats.rejected += 1
    stats.rejected_locations.append(f"{location}: {pricing_model} {payment_option} price {price}".rstrip())


def _check_consistent(
    seen: dict[tuple[str, str], tuple[Decimal, str]], key: tuple[str, str], price: Decimal, location: str
) -> None:
    """Two products for one instance type, region and term must agree; else the filters matched too much."""
    if key not in seen:
        seen[key] = (price, location)
        return
    first_price, first_location = seen[key]
    if first_price != price:
        raise SourceRowError(
            location,
            "PriceList",
            f"{' '.join(key).strip()} {price} contradicts {first_price} at {first_location}",
        )


def fetch_aws_list_prices(
    region: str,
    *,
    client_factory: ClientFactory = boto3_client_factory,
    now: dt.datetime | None = None,
    policy: RetryPolicy | None = None,
    stats: AwsReadStats | None = None,
    instance_types: dict[str, InstanceTypeRecord] | None = None,
) -> Iterator[PriceRecord]:
    """One region's on-demand and reserved prices for its accelerated instance types."""
    policy = policy or RetryPolicy()
    observed_at = now or dt.datetime.now(dt.UTC)
    if instance_types is None:
        ec2 = client_factory("ec2", region_name=region)
        instance_types = aws_accelerated_instance_types(ec2, policy=policy, stats=stats)
    pricing = client_factory("pricing", region_name=PRICING_ENDPOINT_REGION)
    for name in sorted(instance_types):
        yield from aws_list_prices(
            pricing,
            region=region,
            instance=instance_types[name],
            observed_at=observed_at,
            policy=policy,
            stats=stats,
        )
