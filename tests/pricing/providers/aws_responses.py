"""Real-shaped AWS responses for Stubber: spot price history pages and Pricing API products.

Shapes follow the EC2 DescribeSpotPriceHistory and Pricing GetProducts API references; the product
JSON mirrors a real ``get_products`` PriceList entry (attributes trimmed to those we read and filter on).
"""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

import boto3

FAKE_CREDENTIALS = {"aws_access_key_id": "testing", "aws_secret_access_key": "testing"}


def client(service: str, region: str = "us-east-1") -> Any:
    return boto3.client(service, region_name=region, **FAKE_CREDENTIALS)


def spot_item(
    instance_type: str,
    zone_name: str,
    price: str,
    at: dt.datetime,
    zone_id: str | None = None,
) -> dict[str, Any]:
    item = {
        "AvailabilityZone": zone_name,
        "InstanceType": instance_type,
        "ProductDescription": "Linux/UNIX",
        "SpotPrice": price,
        "Timestamp": at,
    }
    if zone_id:
        item["AvailabilityZoneId"] = zone_id
    return item


def reserved_term(
    sku: str, code: str, lease: str, option: str, hourly: str, upfront: str | None, cls="standard"
):
    dimensions = {
        f"{sku}.{code}.6YS6EN2CT7": {
            "unit": "Hrs",
            "endRange": "Inf",
            "description": "Linux/UNIX (Amazon VPC), instance-hour",
            "appliesTo": [],
            "rateCode": f"{sku}.{code}.6YS6EN2CT7",
            "beginRange": "0",
            "pricePerUnit": {"USD": hourly},
        }
    }
    if upfront is not None:
        dimensions[f"{sku}.{code}.2TG2D8R56U"] = {
            "unit": "Quantity",
            "description": "Upfront Fee",
            "appliesTo": [],
            "rateCode": f"{sku}.{code}.2TG2D8R56U",
            "pricePerUnit": {"USD": upfront},
        }
    return {
        f"{sku}.{code}": {
            "priceDimensions": dimensions,
            "sku": sku,
            "effectiveDate": "2025-06-01T00:00:00Z",
            "offerTermCode": code,
            "termAttributes": {"LeaseContractLength": lease, "OfferingClass": cls, "PurchaseOption": option},
        }
    }


def product(
    instance_type: str,
    region: str,
    on_demand_usd: str,
    reserved: list[tuple[str, str, str, str, str | None]] = (),
    sku: str = "7QQ8HXK3DAJ8TYUQ",
) -> str:
    """One PriceList entry as the API sends it: a JSON string. reserved: (code, lease, option, hourly, upfront)."""
    reserved_terms: dict[str, Any] = {}
    for code, lease, option, hourly, upfront in reserved:
        reserved_terms.update(reserved_term(sku, code, lease, option, hourly, upfront))
    return json.dumps(
        {
            "product": {
                "productFamily": "Compute Instance",
                "attributes": {
                    "instanceType": instance_type,
                    "regionCode": region,
                    "operatingSystem": "Linux",
                    "tenancy": "Shared",
                    "capacitystatus": "Used",
                    "preInstalledSw": "NA",
                    "operation": "RunInstances",
                    "licenseModel": "No License required",
                    "servicecode": "AmazonEC2",
                },
                "sku": sku,
            },
            "serviceCode": "AmazonEC2",
            "terms": {
                "OnDemand": {
                    f"{sku}.JRTCKXETXF": {
                        "priceDimensions": {
                            f"{sku}.JRTCKXETXF.6YS6EN2CT7": {
                                "unit": "Hrs",
                                "endRange": "Inf",
                                "description": f"${on_demand_usd} per On Demand Linux {instance_type} Instance Hour",
                                "appliesTo": [],
                                "rateCode": f"{sku}.JRTCKXETXF.6YS6EN2CT7",
                                "beginRange": "0",
                                "pricePerUnit": {"USD": on_demand_usd},
                            }
                        },
                        "sku": sku,
                        "effectiveDate": "2025-06-01T00:00:00Z",
                        "offerTermCode": "JRTCKXETXF",
                        "termAttributes": {},
                    }
                },
                "Reserved": reserved_terms,
            },
            "version": "20250601000000",
            "publicationDate": "2025-06-01T00:00:00Z",
        }
    )


def get_products_params(instance_type: str, region: str, next_token: str | None = None) -> dict[str, Any]:
    from pricing.providers.aws_pricing import product_filters

    params: dict[str, Any] = {
        "ServiceCode": "AmazonEC2",
        "FormatVersion": "aws_v1",
        "Filters": product_filters(instance_type, region),
    }
    if next_token:
        params["NextToken"] = next_token
    return params


# Prices a stubbed AWS answers with, per instance type: on-demand and a 1-year partial-upfront and a
# 3-year all-upfront reservation. On-demand figures are AWS us-east-1 list prices (p4d $21.96,
# p5 $55.04 after the June 2025 cut, g5.xlarge $1.006, g6e.xlarge $1.861).
STUB_LIST_PRICES = {
    "p4d.24xlarge": ("21.9600000000", "6.5880000000", "57710", "291170"),
    "p5.48xlarge": ("55.0400000000", "16.5120000000", "144650", "730000"),
    "g5.xlarge": ("1.0060000000", "0.3020000000", "2644", "13350"),
    "g6e.xlarge": ("1.8610000000", "0.5580000000", "4890", "24700"),
}
STUB_SPOT_PRICES = {
    "p4d.24xlarge": "9.8304",
    "p5.48xlarge": "35.1234",
    "g5.xlarge": "0.4011",
    "g6e.xlarge": "0.7494",
}


def stub_products(instance_type: str, region: str) -> list[str]:
    if instance_type not in STUB_LIST_PRICES:
        return []
    on_demand, partial_hourly, partial_upfront, all_upfront = STUB_LIST_PRICES[instance_type]
    reserved = [
        ("HU7G6KETJZ", "1yr", "Partial Upfront", partial_hourly, partial_upfront),
        ("NQ3QZPMQV9", "3yr", "All Upfront", "0.0000000000", all_upfront),
    ]
    return [product(instance_type, region, on_demand, reserved)]


def stub_spot_page(region: str, zone_names: list[str], now: dt.datetime) -> dict[str, Any]:
    """Three hourly prices per instance type and zone, ending an hour before `now`."""
    items = []
    for instance_type, price in STUB_SPOT_PRICES.items():
        for zone_name in zone_names:
            for hours_ago in (3, 2, 1):
                at = now - dt.timedelta(hours=hours_ago)
                items.append(spot_item(instance_type, zone_name, price, at))
    return {"SpotPriceHistory": items}


def fake_aws_factory(now: dt.datetime):
    """A client factory: moto EC2 (instance types, zones) whose spot history and the Pricing API are
    answered from the stub tables above. Call it inside ``mock_aws``."""
    clients: dict[tuple[str, str], Any] = {}

    def factory(service: str, *, region_name: str) -> Any:
        key = (service, region_name)
        if key not in clients:
            clients[key] = _stubbed_client(service, region_name, now)
        return clients[key]

    return factory


def _stubbed_client(service: str, region: str, now: dt.datetime) -> Any:
    from botocore.awsrequest import AWSResponse

    made = client(service, region)
    last_params: list[dict] = []
    made.meta.events.register("before-parameter-build", lambda params, **_: last_params.append(dict(params)))

    def answer_spot(**_):
        zones = [z["ZoneName"] for z in made.describe_availability_zones()["AvailabilityZones"][:2]]
        return AWSResponse(None, 200, {}, None), stub_spot_page(region, zones, now)

    def answer_products(**_):
        filters = {f["Field"]: f["Value"] for f in last_params[-1]["Filters"]}
        products = stub_products(filters["instanceType"], filters["regionCode"])
        return AWSResponse(None, 200, {}, None), {"FormatVersion": "aws_v1", "PriceList": products}

    def answer_rates(**_):
        from tests.pricing.providers.savings_plans_responses import rate_item

        filters = {f["name"]: f["values"] for f in last_params[-1]["filters"]}
        region_code = filters["region"][0]
        # every type asked for: an EC2 Instance Savings Plan 1 year no upfront at 60% of a nominal 10/h
        items = [rate_item(name, "6.0000", region=region_code) for name in filters["instanceType"]]
        return AWSResponse(None, 200, {}, None), {"searchResults": items}

    if service == "savingsplans":
        made.meta.events.register("before-call.savingsplans.DescribeSavingsPlansOfferingRates", answer_rates)
    if service == "ec2":
        made.meta.events.register("before-call.ec2.DescribeSpotPriceHistory", answer_spot)
    if service == "pricing":
        made.meta.events.register("before-call.pricing.GetProducts", answer_products)
    return made
