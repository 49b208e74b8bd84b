"""AWS Savings Plans rates source, against Stubber with real-shaped answers (never the network)."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest
from botocore.stub import Stubber

from pricing.price_checks import UNIT, Refusals
from pricing.providers.aws import AwsReadStats
from pricing.providers.aws_savings_plans import aws_savings_plan_rates, rates_request
from pricing.providers.records import InstanceTypeRecord
from pricing.providers.retry import RetryPolicy, TransientSourceError
from tests.pricing.providers.aws_responses import client
from tests.pricing.providers.savings_plans_responses import THREE_YEARS_S, rate_item

NOW = dt.datetime(2026, 12, 1, tzinfo=dt.UTC)
P5 = InstanceTypeRecord(provider="aws", name="p5.48xlarge", gpu_name="H100", gpu_count=Decimal(8))
TYPES = {"p5.48xlarge": P5}


@pytest.fixture
def sleeps() -> list[float]:
    return []


@pytest.fixture
def policy(sleeps) -> RetryPolicy:
    return RetryPolicy(max_retries=2, base_delay_s=1, sleep=sleeps.append, random_fraction=lambda: 0.5)


def read(savings, policy, stats=None, region="us-east-1", refusals=None):
    return list(
        aws_savings_plan_rates(
            savings,
            region=region,
            instance_types=TYPES,
            observed_at=NOW,
            policy=policy,
            stats=stats,
            refusals=refusals,
        )
    )


def test_it_reads_each_plan_type_term_and_payment_option_over_pages(policy):
    savings = client("savingsplans")
    request = rates_request("us-east-1", ["p5.48xlarge"])
    first = {
        "searchResults": [
            rate_item("p5.48xlarge", "33.5000", plan="EC2Instance", payment="No Upfront"),
            rate_item("p5.48xlarge", "31.0000", plan="EC2Instance", payment="Partial Upfront"),
        ],
        "nextToken": "page-2",
    }
    second = {
        "searchResults": [
            rate_item("p5.48xlarge", "30.0000", plan="EC2Instance", payment="All Upfront"),
            rate_item("p5.48xlarge", "39.9000", plan="Compute", payment="No Upfront"),
            rate_item(
                "p5.48xlarge", "24.1000", plan="EC2Instance", payment="All Upfront", duration_s=THREE_YEARS_S
            ),
        ]
    }
    stats = AwsReadStats()
    with Stubber(savings) as stub:
        stub.add_response("describe_savings_plans_offering_rates", first, request)
        stub.add_response("describe_savings_plans_offering_rates", second, request | {"nextToken": "page-2"})
        records = read(savings, policy, stats)
        stub.assert_no_pending_responses()
    got = {
        (r.pricing_model, r.commitment_kind, r.payment_option): (
            r.price_per_hour,
            r.upfront_fee,
            r.recurring_per_hour,
        )
        for r in records
    }
    assert got == {
        # the rate is the effective hourly price; a plan sized to one instance pays it hourly
        ("savings_plan_1y", "ec2_instance_sp", "no_upfront"): (Decimal("33.5"), Decimal(0), Decimal("33.5")),
        # half upfront: 31 × 8760 h × 0.5 = 135,780 USD, and 15.50 an hour besides
        ("savings_plan_1y", "ec2_instance_sp", "partial_upfront"): (
            Decimal(31),
            Decimal(135780),
            Decimal("15.5"),
        ),
        # all upfront: 30 × 8760 h = 262,800 USD, nothing hourly
        ("savings_plan_1y", "ec2_instance_sp", "all_upfront"): (Decimal(30), Decimal(262800), Decimal(0)),
        ("savings_plan_1y", "compute_sp", "no_upfront"): (Decimal("39.9"), Decimal(0), Decimal("39.9")),
        # 3 years: 24.1 × 26,280 h = 633,348 USD
        ("savings_plan_3y", "ec2_instance_sp", "all_upfront"): (Decimal("24.1"), Decimal(633348), Decimal(0)),
    }
    assert {(r.region, r.zone, r.currency, r.observed_at, r.source) for r in records} == {
        ("us-east-1", "", "USD", NOW, "aws:savingsplans.describe_savings_plans_offering_rates")
    }
    assert (stats.items_seen, stats.records) == (5, 5)


def test_it_retries_a_throttled_page_from_its_own_token(policy, sleeps):
    savings = client("savingsplans")
    request = rates_request("us-east-1", ["p5.48xlarge"])
    with Stubber(savings) as stub:
        stub.add_response(
            "describe_savings_plans_offering_rates",
            {"searchResults": [rate_item("p5.48xlarge", "33.5")], "nextToken": "t2"},
            request,
        )
        stub.add_client_error("describe_savings_plans_offering_rates", "ThrottlingException", "Rate exceeded")
        stub.add_response(
            "describe_savings_plans_offering_rates",
            {"searchResults": [rate_item("p5.48xlarge", "39.9", plan="Compute")]},
            request | {"nextToken": "t2"},
        )
        records = read(savings, policy)
        stub.assert_no_pending_responses()
    assert [r.price_per_hour for r in records] == [Decimal("33.5"), Decimal("39.9")]
    assert sleeps == [0.5]  # one backoff: uniform(0, 1 s) drawn at 0.5


def test_it_gives_up_after_the_retries_naming_the_call(policy):
    savings = client("savingsplans")
    with Stubber(savings) as stub:
        for _ in range(3):
            stub.add_client_error(
                "describe_savings_plans_offering_rates", "ThrottlingException", "Rate exceeded"
            )
        with pytest.raises(TransientSourceError, match="aws savingsplans us-east-1 page 1"):
            read(savings, policy)


def test_an_empty_answer_yields_nothing(policy):
    savings = client("savingsplans")
    with Stubber(savings) as stub:
        stub.add_response("describe_savings_plans_offering_rates", {"searchResults": []})
        assert read(savings, policy) == []


def test_it_skips_other_usage_and_refuses_bad_rates(policy):
    savings = client("savingsplans")
    stats = AwsReadStats()
    page = {
        "searchResults": [
            rate_item("p5.48xlarge", "33.5", usage_type="DedicatedUsage:p5.48xlarge"),  # not shared tenancy
            rate_item("p4d.24xlarge", "12.0"),  # a type we did not ask for
            rate_item("p5.48xlarge", "0.0000"),  # never free
            rate_item("p5.48xlarge", "33.5", region="us-west-2"),  # another region
        ]
    }
    with Stubber(savings) as stub:
        stub.add_response("describe_savings_plans_offering_rates", page)
        assert read(savings, policy, stats) == []
    assert (stats.skipped_other_types, stats.rejected) == (3, 1)
    assert stats.records == 0
    assert stats.rejected_locations == ["aws-savingsplans:us-east-1 page 1 item 3: rate '0.0000'"]


def test_it_reads_a_region_prefixed_usage_type(policy):
    savings = client("savingsplans")
    item = rate_item("p5.48xlarge", "34.1", region="us-west-2", usage_type="USW2-BoxUsage:p5.48xlarge")
    with Stubber(savings) as stub:
        stub.add_response("describe_savings_plans_offering_rates", {"searchResults": [item]})
        records = read(savings, policy, region="us-west-2")
    assert [(r.region, r.price_per_hour) for r in records] == [("us-west-2", Decimal("34.1"))]


def test_a_rate_in_another_unit_is_refused_naming_the_field_and_the_rest_lands(policy):
    savings, refusals = client("savingsplans"), Refusals()
    with Stubber(savings) as stub:
        stub.add_response(
            "describe_savings_plans_offering_rates",
            {"searchResults": [rate_item("p5.48xlarge", "1", unit="Request"), rate_item("p5.48xlarge", "2")]},
        )
        records = read(savings, policy, refusals=refusals)
    assert [r.price_per_hour for r in records] == [Decimal("2.000000")]
    assert refusals.counts == {UNIT: 1} and "column 'unit'" in refusals.examples[UNIT][0]
