"""Cost Explorer pulls, against botocore's Stubber with responses shaped like real get_cost_and_usage ones."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import boto3
import pytest
from botocore.stub import Stubber

from billing.imports.cost_explorer import pages, request_params
from billing.storage.store import pull_cost_explorer
from pricing.providers.retry import RetryPolicy, TransientSourceError
from tests.billing.catalog import make_catalog
from tests.billing.stored import stored_row, stored_rows

START, END = dt.date(2026, 5, 1), dt.date(2026, 5, 3)
NO_SLEEP = RetryPolicy(max_retries=2, sleep=lambda s: None, random_fraction=lambda: 0.0)


def group(instance_type, purchase, amortized, unblended, hours):
    return {
        "Keys": [instance_type, purchase],
        "Metrics": {
            "AmortizedCost": {"Amount": amortized, "Unit": "USD"},
            "UnblendedCost": {"Amount": unblended, "Unit": "USD"},
            "UsageQuantity": {"Amount": hours, "Unit": "Hrs"},
        },
    }


def day(date, groups):
    end = (dt.date.fromisoformat(date) + dt.timedelta(days=1)).isoformat()
    return {"TimePeriod": {"Start": date, "End": end}, "Total": {}, "Groups": groups, "Estimated": False}


PAGE_1 = {
    "GroupDefinitions": [
        {"Type": "DIMENSION", "Key": "INSTANCE_TYPE"},
        {"Type": "DIMENSION", "Key": "PURCHASE_TYPE"},
    ],
    "ResultsByTime": [
        day(
            "2026-05-01",
            [
                group("p5.48xlarge", "On Demand Instances", "1320.96", "1320.96", "24"),
                group("p4d.24xlarge", "Savings Plans", "316.19", "0", "24"),
            ],
        )
    ],
    "DimensionValueAttributes": [],
    "NextPageToken": "page-2",
}
PAGE_2 = {
    "GroupDefinitions": PAGE_1["GroupDefinitions"],
    "ResultsByTime": [
        day(
            "2026-05-02",
            [
                group("g6e.xlarge", "Spot Instances", "10.98", "10.98", "12"),
                group("NoInstanceType", "On Demand Instances", "3.10", "3.10", "12.5"),
            ],
        )
    ],
    "DimensionValueAttributes": [],
}


def stubbed(responses):
    client = boto3.client("ce", region_name="us-east-1", aws_access_key_id="x", aws_secret_access_key="x")
    stubber = Stubber(client)
    params = request_params(START, END)
    token = None  # each request after a page with a NextPageToken asks for that token
    for response in responses:
        expected = dict(params, NextPageToken=token) if token else params
        if isinstance(response, str):
            stubber.add_client_error(
                "get_cost_and_usage", response, http_status_code=400, expected_params=expected
            )
            continue
        stubber.add_response("get_cost_and_usage", response, expected)
        token = response.get("NextPageToken")
    stubber.activate()
    return client, stubber, params


@pytest.mark.django_db
def test_pages_throttling_and_idempotent_storage():
    make_catalog()
    client, stubber, params = stubbed([PAGE_1, "ThrottlingException", PAGE_2])
    result = pull_cost_explorer(pages(client, params, NO_SLEEP), start=START, end=END)
    stubber.assert_no_pending_responses()
    assert (result.inserted, result.unchanged) == (4, 0)
    p5 = stored_row(instance_type="p5.48xlarge")
    assert (p5.pricing_category, p5.instance_hours, p5.gpu_hours, p5.effective_cost) == (
        "on_demand",
        Decimal(24),
        Decimal(192),
        Decimal("1320.96"),
    )
    p4d = stored_row(instance_type="p4d.24xlarge")
    assert (p4d.pricing_category, p4d.commitment_status, p4d.billed_cost) == ("committed", "used", Decimal(0))
    assert stored_row(instance_type="g6e.xlarge").pricing_category == "spot"
    # a second pull of the same days, one day revised: the revised row replaces the old one
    revised = dict(
        PAGE_2,
        ResultsByTime=[
            day(
                "2026-05-02",
                [
                    group("g6e.xlarge", "Spot Instances", "11.50", "11.50", "12"),
                    group("NoInstanceType", "On Demand Instances", "3.10", "3.10", "12.5"),
                ],
            )
        ],
    )
    client, stubber, params = stubbed([PAGE_1, revised])
    again = pull_cost_explorer(pages(client, params, NO_SLEEP), start=START, end=END)
    assert (again.inserted, again.unchanged) == (1, 3)
    assert len(stored_rows()) == 4
    assert stored_row(instance_type="g6e.xlarge").effective_cost == Decimal("11.50")


def test_throttling_that_never_stops_is_a_transient_error():
    client, _, params = stubbed(["ThrottlingException"] * 3)
    with pytest.raises(TransientSourceError, match="page 1: still failing after 2 retries"):
        list(pages(client, params, NO_SLEEP))


def test_request_groups_by_tag_and_bounds_the_period():
    params = request_params(START, END, tag="team")
    assert params["GroupBy"][1] == {"Type": "TAG", "Key": "team"}
    assert params["Metrics"] == ["AmortizedCost", "UnblendedCost", "UsageQuantity"]
    with pytest.raises(ValueError, match="at most 400 days"):
        request_params(START, START + dt.timedelta(days=401))


@pytest.mark.django_db
def test_a_later_pull_replaces_only_the_days_it_holds():
    """The readers keep each charge day's rows of the latest pull with rows that day
    (review_sql.LATEST_PULLS): a pull of 2 May alone revises 2 May and leaves 1 May as the first pull
    stored it (1,320.96 + 316.19 of 1 May; 2 May revised from 10.98 + 3.10 to 12.00 alone)."""
    make_catalog()
    client, _, params = stubbed([PAGE_1, PAGE_2])
    pull_cost_explorer(pages(client, params, NO_SLEEP), start=START, end=END)
    only_may_2 = dict(
        PAGE_2,
        ResultsByTime=[day("2026-05-02", [group("g6e.xlarge", "Spot Instances", "12.00", "12.00", "12")])],
    )
    client, _, params = stubbed([only_may_2])
    again = pull_cost_explorer(pages(client, params, NO_SLEEP), start=START, end=END)
    assert (again.inserted, again.unchanged) == (1, 0)
    by_day = {}
    for row in stored_rows():
        by_day.setdefault(row.charge_period_start.date().isoformat(), []).append(row.effective_cost)
    assert by_day == {
        "2026-05-01": [Decimal("1320.96"), Decimal("316.19")],
        "2026-05-02": [Decimal("12.00")],
    }
