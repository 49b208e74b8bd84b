"""AWS on-demand and reserved prices from the Pricing API (``get_products``).

The Pricing API answers only at us-east-1 (and a few other endpoints) whatever region is being
priced. Each ``PriceList`` entry is a JSON *string*: one product (an instance type in a region)
with its terms. On-demand is the "Hrs" dimension of the OnDemand term. Reserved terms carry an hourly
part (the "Hrs" dimension) and an upfront fee (the "Upfront Fee" dimension, unit "Quantity"); the
effective hourly price is hourly + upfront ÷ term hours (8760 h a year), with the fee and the hourly
part kept on the record. Standard and convertible reservations (``OfferingClass``) are different
products at different prices: each is its own commitment kind.

Only the product the filters ask for is priced: ``productFamily`` "Compute Instance" (or its bare-metal
form) with the asked instance type, region, Linux, shared tenancy, used capacity and no pre-installed
software, checked on the product's own attributes. Any other entry (a storage product, a dedicated host,
a reservation of capacity sharing the instance type) is skipped and counted under its reason, whatever
its place in the answer. An entry that cannot be read (not JSON, a price that is not a number) is refused
(``unreadable``) and the rest of the answer lands; two products pricing one term differently are both
refused (``ambiguous``): which one stands never depends on their order.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterator
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from pricing.price_checks import AMBIGUOUS, UNREADABLE, Refusals
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
    CONVERTIBLE_RESERVATION,
    NO_UPFRONT,
    ON_DEMAND,
    PARTIAL_UPFRONT,
    RESERVED_1Y,
    RESERVED_3Y,
    STANDARD_RESERVATION,
    TERM_HOURS,
)

PRICING_ENDPOINT_REGION = "us-east-1"
PRICING_SOURCE = "aws:pricing.get_products"
LEASE_TERMS = {"1yr": RESERVED_1Y, "1 yr": RESERVED_1Y, "3yr": RESERVED_3Y, "3 yr": RESERVED_3Y}
PURCHASE_OPTIONS = {"No Upfront": NO_UPFRONT, "Partial Upfront": PARTIAL_UPFRONT, "All Upfront": ALL_UPFRONT}
OFFERING_CLASSES = {"standard": STANDARD_RESERVATION, "convertible": CONVERTIBLE_RESERVATION}
COMPUTE_FAMILIES = ("Compute Instance", "Compute Instance (bare metal)")


@dataclass(frozen=True)
class _Term:
    pricing_model: str
    payment_option: str
    price: Decimal  # effective hourly
    upfront: Decimal | None
    kind: str = ""
    recurring: Decimal | None = None


def product_terms(instance_type: str, region: str) -> dict[str, str]:
    """One Linux, shared-tenancy, on-demand-capacity product without pre-installed software."""
    return {
        "instanceType": instance_type,
        "regionCode": region,
        "operatingSystem": "Linux",
        "tenancy": "Shared",
        "capacitystatus": "Used",
        "preInstalledSw": "NA",
        "operation": "RunInstances",
    }


def product_filters(instance_type: str, region: str) -> list[dict[str, str]]:
    terms = product_terms(instance_type, region)
    return [{"Type": "TERM_MATCH", "Field": name, "Value": value} for name, value in terms.items()]


def aws_list_prices(
    pricing: Any,
    *,
    region: str,
    instance: InstanceTypeRecord,
    observed_at: dt.datetime,
    policy: RetryPolicy,
    stats: AwsReadStats | None = None,
    refusals: Refusals | None = None,
) -> Iterator[PriceRecord]:
    """The on-demand and reserved prices of one instance type in one region."""
    stats = stats if stats is not None else AwsReadStats()
    refusals = refusals if refusals is not None else Refusals()
    wanted = product_terms(instance.name, region)
    by_key: dict[tuple[str, ...], list[tuple[_Term, str]]] = {}
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
            try:
                product = _decode(text, location)
                reason = _skip_reason(product, wanted)
                if reason is not None:
                    stats.skipped_reasons[reason] += 1
                    continue
                terms = list(_product_prices(product, location, stats))
            except SourceRowError as error:  # this entry goes; the rest of the answer lands
                refusals.refuse(UNREADABLE, str(error))
                continue
            for term in terms:
                by_key.setdefault((term.pricing_model, term.payment_option, term.kind), []).append(
                    (term, location)
                )
    for key, terms in by_key.items():
        if len({term.price for term, _ in terms}) > 1:
            where = "; ".join(f"{location} {term.price}" for term, location in terms)
            refusals.refuse(AMBIGUOUS, f"{instance.name} {region} {' '.join(key).strip()}: {where}")
            continue
        term, location = terms[0]
        stats.records += 1
        yield PriceRecord(
            instance=instance,
            region=region,
            zone="",
            pricing_model=term.pricing_model,
            price_per_hour=term.price,
            currency="USD",
            observed_at=observed_at,
            source=PRICING_SOURCE,
            location=location,
            payment_option=term.payment_option,
            upfront_fee=term.upfront,
            commitment_kind=term.kind,
            recurring_per_hour=term.recurring,
        )


def _skip_reason(product: dict[str, Any], wanted: dict[str, str]) -> str | None:
    """Why a PriceList entry is not the product asked for (read from its own attributes), else None."""
    described = product.get("product") or {}
    family = described.get("productFamily")
    if family not in COMPUTE_FAMILIES:
        return f"product family {family}"
    attributes = described.get("attributes") or {}
    for name, value in wanted.items():
        if name in attributes and attributes[name] != value:
            return f"{name} {attributes[name]}"
    return None


def _product_prices(product: dict[str, Any], location: str, stats: AwsReadStats) -> Iterator[_Term]:
    """The on-demand and reserved terms of one decoded PriceList entry."""
    terms = product.get("terms")
    if not isinstance(terms, dict):
        raise SourceRowError(location, "terms", "missing: not a Pricing API product")
    for code, term in (terms.get("OnDemand") or {}).items():
        hourly, _ = _dimensions(term, f"{location} terms.OnDemand.{code}")
        yield from _positive(_Term(ON_DEMAND, "", hourly, None), location, stats)
    for code, term in (terms.get("Reserved") or {}).items():
        attributes = term.get("termAttributes") or {}
        pricing_model = LEASE_TERMS.get(attributes.get("LeaseContractLength", ""))
        payment_option = PURCHASE_OPTIONS.get(attributes.get("PurchaseOption", ""))
        kind = OFFERING_CLASSES.get(attributes.get("OfferingClass", ""))
        if not kind or not pricing_model or not payment_option:
            continue
        hourly, upfront = _dimensions(term, f"{location} terms.Reserved.{code}")
        effective = (hourly + upfront / TERM_HOURS[pricing_model]).quantize(PRICE_QUANTUM)
        reserved = _Term(
            pricing_model, payment_option, effective, upfront, kind, hourly.quantize(PRICE_QUANTUM)
        )
        yield from _positive(reserved, location, stats)


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


def _positive(term: _Term, location: str, stats: AwsReadStats) -> Iterator[_Term]:
    """Pass a price above zero on; count and note any other (a price is never free)."""
    price = term.price.quantize(PRICE_QUANTUM)
    if price > 0:
        yield _Term(term.pricing_model, term.payment_option, price, term.upfront, term.kind, term.recurring)
        return
    stats.rejected += 1
    described = f"{term.pricing_model} {term.payment_option} {term.kind}".rstrip()
    stats.rejected_locations.append(f"{location}: {described} price {price}".replace("  ", " "))


def fetch_aws_list_prices(
    region: str,
    *,
    client_factory: ClientFactory = boto3_client_factory,
    now: dt.datetime | None = None,
    policy: RetryPolicy | None = None,
    stats: AwsReadStats | None = None,
    instance_types: dict[str, InstanceTypeRecord] | None = None,
    refusals: Refusals | None = None,
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
            refusals=refusals,
        )
