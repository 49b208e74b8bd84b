"""AWS Cost Explorer `get_cost_and_usage` to normalized spend rows.

One request per page, grouped by INSTANCE_TYPE and PURCHASE_TYPE (or INSTANCE_TYPE and a tag), daily,
with AmortizedCost (effective cost: commitments amortized), UnblendedCost (billed) and UsageQuantity
(instance-hours for EC2 instance usage); filtered to the EC2 compute service. `NextPageToken` pages
are followed; throttling and dropped connections are retried per page (pricing/providers/retry.py).
Cost Explorer revises recent days (`Estimated: true`), so a pull replaces the earlier pull's rows for
the same days instead of adding to them.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from typing import Any

import pandas as pd

from billing.imports.records import NORMALIZED_COLUMNS, BillingFileError
from pricing.providers.currencies import currency_problem
from pricing.providers.retry import RetryPolicy, call_with_retry

EC2_COMPUTE = "Amazon Elastic Compute Cloud - Compute"
METRICS = ["AmortizedCost", "UnblendedCost", "UsageQuantity"]
PURCHASE_TYPES = {
    "On Demand Instances": "on_demand",
    "Spot Instances": "spot",
    "Standard Reserved Instances": "committed",
    "Convertible Reserved Instances": "committed",
    "Savings Plans": "committed",
    "Reserved Instances": "committed",
}
MAX_DAYS = 400  # Cost Explorer keeps about 13 months of daily data
MAX_PAGES = 1000


def request_params(start: dt.date, end: dt.date, *, tag: str = "") -> dict[str, Any]:
    if end <= start:
        raise ValueError(f"--to ({end}) must be after --from ({start})")
    if (end - start).days > MAX_DAYS:
        raise ValueError(f"at most {MAX_DAYS} days per pull (Cost Explorer keeps about 13 months)")
    second = {"Type": "TAG", "Key": tag} if tag else {"Type": "DIMENSION", "Key": "PURCHASE_TYPE"}
    return {
        "TimePeriod": {"Start": start.isoformat(), "End": end.isoformat()},
        "Granularity": "DAILY",
        "Metrics": METRICS,
        "GroupBy": [{"Type": "DIMENSION", "Key": "INSTANCE_TYPE"}, second],
        "Filter": {"Dimensions": {"Key": "SERVICE", "Values": [EC2_COMPUTE]}},
    }


def pages(client, params: dict, policy: RetryPolicy) -> Iterator[dict]:
    token, number = None, 0
    while True:
        number += 1
        if number > MAX_PAGES:
            raise BillingFileError("cost explorer", f"more than {MAX_PAGES} pages; pull a shorter period")
        call_params = dict(params, NextPageToken=token) if token else params

        def call(call_params=call_params):
            return client.get_cost_and_usage(**call_params)

        page = call_with_retry(call, policy, what=f"Cost Explorer get_cost_and_usage page {number}")
        yield page
        token = page.get("NextPageToken")
        if not token:
            return


def normalized_rows(page_list, *, tag: str = "", account: str = "") -> pd.DataFrame:
    rows = []
    for page in page_list:
        for result in page.get("ResultsByTime", []):
            start, end = result["TimePeriod"]["Start"], result["TimePeriod"]["End"]
            for group in result.get("Groups", []):
                rows.append(_row(group, start, end, tag=tag, account=account, source_row=len(rows) + 1))
    frame = pd.DataFrame(rows, columns=NORMALIZED_COLUMNS)
    for column in ("charge_period_start", "charge_period_end", "billing_period_start", "commitment_end"):
        frame[column] = pd.to_datetime(frame[column], utc=True)
    for column in ("commitment_type", "commitment_family"):  # Cost Explorer names no commitment
        frame[column] = frame[column].astype(object).fillna("")
    frame["is_refund"] = False  # grouped by purchase type: no refund lines
    return frame


def _row(group: dict, start: str, end: str, *, tag: str, account: str, source_row: int) -> dict:
    keys = group["Keys"]
    instance_type = keys[0] if keys[0] not in ("NoInstanceType", "") else ""
    metrics = group["Metrics"]
    amortized, unblended, usage = (metrics.get(name, {}) for name in METRICS)
    currency = amortized.get("Unit", "USD")
    problem = currency_problem(currency)
    if problem:
        raise BillingFileError("cost explorer", problem, row=source_row, column="AmortizedCost.Unit")
    tags, pricing = {}, "other"
    if tag:
        value = keys[1].split("$", 1)[1] if "$" in keys[1] else ""
        tags = {tag: value} if value else {}
    else:
        pricing = PURCHASE_TYPES.get(keys[1], "other")
    hourly = usage.get("Unit", "") in ("Hrs", "Hours") and instance_type != ""
    return {
        "source_row": source_row,
        "charge_period_start": start,
        "charge_period_end": end,
        "billing_period_start": start[:8] + "01",
        "charge_category": "usage",
        "is_correction": False,
        "provider": "aws",
        "billing_account_id": account,
        "sub_account_id": "",
        "sub_account_name": "",
        "region": "",
        "availability_zone": "",
        "resource_id": "",
        "resource_type": "",
        "service_category": EC2_COMPUTE,
        "sku_id": "",
        "instance_type": instance_type,
        "pricing_category": pricing,
        "commitment_discount_id": "",
        "commitment_status": "used" if pricing == "committed" else "",
        "consumed_quantity": str(usage.get("Amount", "")) if hourly else "",
        "consumed_unit": "Hours" if hourly else "",
        "billed_cost": str(unblended.get("Amount", amortized.get("Amount", "0"))),
        "effective_cost": str(amortized.get("Amount", "0")),
        "list_cost": "",
        "contracted_cost": "",
        "currency": currency,
        "tags": tags,
    }
