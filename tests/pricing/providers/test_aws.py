"""AWS EC2 source: moto for instance types and zones; botocore Stubber for spot price history.

moto's spot history is a constant fake (0.00001, filters ignored, no pagination), so prices are
tested with Stubber and real-shaped responses instead.
"""

from __future__ import annotations

import datetime as dt
import json
from decimal import Decimal
from pathlib import Path

import pytest
from botocore.awsrequest import AWSResponse
from botocore.exceptions import ClientError
from botocore.stub import Stubber
from moto import mock_aws

from pricing.price_checks import UNREADABLE, Refusals
from pricing.providers.aws import (
    AwsReadStats,
    AwsZone,
    aws_accelerated_instance_types,
    aws_spot_prices,
    aws_zones,
    fetch_aws_spot,
    instance_type_record,
)
from pricing.providers.records import InstanceTypeRecord
from pricing.providers.retry import RetryPolicy, TransientSourceError
from tests.pricing.providers.aws_responses import client, spot_item

NOW = dt.datetime(2025, 6, 1, 12, tzinfo=dt.UTC)
P5 = InstanceTypeRecord(provider="aws", name="p5.48xlarge", gpu_name="H100", gpu_count=Decimal(8))
G5 = InstanceTypeRecord(provider="aws", name="g5.xlarge", gpu_name="A10G", gpu_count=Decimal(1))
ZONES = {
    "use1-az4": AwsZone("use1-az4", "us-east-1b", "us-east-1", "availability-zone"),
    "use1-az6": AwsZone("use1-az6", "us-east-1a", "us-east-1", "availability-zone"),
}


@pytest.fixture
def sleeps() -> list[float]:
    return []


@pytest.fixture
def policy(sleeps) -> RetryPolicy:
    # random_fraction=1 makes the full-jitter delay its ceiling: 0.5 s, 1 s, 2 s ...
    return RetryPolicy(max_retries=3, base_delay_s=0.5, sleep=sleeps.append, random_fraction=lambda: 1.0)


def spot_params(next_token: str | None = None) -> dict:
    params = {
        "InstanceTypes": ["g5.xlarge", "p5.48xlarge"],
        "ProductDescriptions": ["Linux/UNIX"],
        "StartTime": NOW - dt.timedelta(days=7),
        "EndTime": NOW,
    }
    if next_token:
        params["NextToken"] = next_token
    return params


def read_spot(ec2, policy, stats=None, refusals=None):
    return list(
        aws_spot_prices(
            ec2,
            instance_types={"p5.48xlarge": P5, "g5.xlarge": G5},
            zones=ZONES,
            start_time=NOW - dt.timedelta(days=7),
            end_time=NOW,
            policy=policy,
            stats=stats,
            refusals=refusals,
        )
    )


@mock_aws
def test_it_lists_gpu_and_neuron_instance_types_from_moto(policy):
    stats = AwsReadStats()
    found = aws_accelerated_instance_types(client("ec2"), policy=policy, stats=stats)
    # AWS p5.48xlarge: 8 × H100 80 GB, 192 vCPUs, 2 TiB RAM (EC2 accelerated computing instance specs).
    p5 = found["p5.48xlarge"]
    assert (p5.gpu_name, p5.gpu_count, p5.gpu_memory_gib, p5.vcpus, p5.memory_gib) == (
        "H100",
        8,
        80,
        192,
        2048,
    )
    trn1 = found["trn1.32xlarge"]  # 16 Trainium devices with 32 GiB each
    assert (trn1.gpu_name, trn1.gpu_count, trn1.gpu_memory_gib) == ("Trainium", 16, 32)
    assert found["g6f.large"].gpu_count == Decimal("0.125")  # an eighth of an L4: Count 0, partition 0.125
    assert {"p4d.24xlarge", "g5.xlarge", "g6e.xlarge", "inf2.xlarge"} <= set(found)
    assert "c5.large" not in found and "m5.large" not in found
    assert stats.instance_types_seen > stats.accelerated_instance_types == len(found)


def test_it_skips_an_instance_type_without_accelerators():
    assert instance_type_record({"InstanceType": "c5.large", "VCpuInfo": {"DefaultVCpus": 2}}) is None


@mock_aws
def test_it_keys_zones_by_zone_id(policy):
    zones = aws_zones(client("ec2"), policy=policy)
    names = {zone.zone_name for zone in zones.values()}
    assert "us-east-1a" in names
    for zone_id, zone in zones.items():
        assert zone_id == zone.zone_id and zone_id.startswith("use1-az") and zone.region == "us-east-1"


def test_it_follows_next_token_through_spot_history_pages(policy):
    ec2 = client("ec2")
    t1, t2 = NOW - dt.timedelta(hours=2), NOW - dt.timedelta(hours=1)
    with Stubber(ec2) as stub:
        stub.add_response(
            "describe_spot_price_history",
            {
                "SpotPriceHistory": [
                    spot_item("p5.48xlarge", "us-east-1a", "35.123400", t1),
                    spot_item("g5.xlarge", "us-east-1b", "0.4011", t1, zone_id="use1-az4"),
                ],
                "NextToken": "page-2-token",
            },
            spot_params(),
        )
        stub.add_response(
            "describe_spot_price_history",
            {"SpotPriceHistory": [spot_item("p5.48xlarge", "us-east-1a", "36.5", t2)], "NextToken": ""},
            spot_params("page-2-token"),
        )
        records = read_spot(ec2, policy)
        stub.assert_no_pending_responses()
    assert [(r.instance.name, r.zone, r.price_per_hour, r.observed_at) for r in records] == [
        (
            "p5.48xlarge",
            "use1-az6",
            Decimal("35.1234"),
            t1,
        ),  # zone name us-east-1a → ID via describe_availability_zones
        ("g5.xlarge", "use1-az4", Decimal("0.4011"), t1),
        ("p5.48xlarge", "use1-az6", Decimal("36.5"), t2),
    ]
    assert {(r.pricing_model, r.currency, r.region, r.source) for r in records} == {
        ("spot", "USD", "us-east-1", "aws:describe_spot_price_history")
    }
    assert records[2].location.endswith("page 2 item 1")


@pytest.mark.parametrize("code", ["RequestLimitExceeded", "ThrottlingException"])
def test_it_retries_a_throttled_page_with_backoff_then_succeeds(policy, sleeps, code):
    ec2 = client("ec2")
    with Stubber(ec2) as stub:
        stub.add_response(
            "describe_spot_price_history",
            {"SpotPriceHistory": [spot_item("g5.xlarge", "us-east-1b", "0.40", NOW)], "NextToken": "t2"},
            spot_params(),
        )
        stub.add_client_error("describe_spot_price_history", code, http_status_code=503)
        stub.add_client_error("describe_spot_price_history", code, http_status_code=503)
        stub.add_response(
            "describe_spot_price_history",
            {"SpotPriceHistory": [spot_item("g5.xlarge", "us-east-1b", "0.41", NOW)]},
            spot_params("t2"),
        )
        records = read_spot(ec2, policy)
        stub.assert_no_pending_responses()
    assert [r.price_per_hour for r in records] == [
        Decimal("0.40"),
        Decimal("0.41"),
    ]  # page 1 not fetched twice
    assert sleeps == [0.5, 1.0]


def test_it_gives_up_after_the_maximum_retries_with_a_transient_error(policy, sleeps):
    ec2 = client("ec2")
    with Stubber(ec2) as stub:
        for _ in range(4):
            stub.add_client_error("describe_spot_price_history", "RequestLimitExceeded", http_status_code=503)
        with pytest.raises(TransientSourceError, match="still failing after 3 retries"):
            read_spot(ec2, policy)
    assert sleeps == [0.5, 1.0, 2.0]


def test_it_does_not_retry_an_error_that_is_not_transient(policy, sleeps):
    ec2 = client("ec2")
    with Stubber(ec2) as stub:
        stub.add_client_error("describe_spot_price_history", "UnauthorizedOperation", http_status_code=403)
        with pytest.raises(ClientError, match="UnauthorizedOperation"):
            read_spot(ec2, policy)
    assert sleeps == []


def test_a_malformed_spot_item_is_refused_by_page_item_and_field_and_the_rest_lands(policy):
    ec2, refusals = client("ec2"), Refusals()
    with Stubber(ec2) as stub:
        stub.add_response(
            "describe_spot_price_history",
            {"SpotPriceHistory": [spot_item("g5.xlarge", "us-east-1b", "0.40", NOW)], "NextToken": "t2"},
            spot_params(),
        )
        stub.add_response(
            "describe_spot_price_history",
            {
                "SpotPriceHistory": [
                    spot_item("g5.xlarge", "us-east-1b", "0.41", NOW),
                    spot_item("g5.xlarge", "us-east-1b", "n/a", NOW),
                ]
            },
            spot_params("t2"),
        )
        records = read_spot(ec2, policy, refusals=refusals)
    assert [r.price_per_hour for r in records] == [Decimal("0.400000"), Decimal("0.410000")]
    (example,) = refusals.examples[UNREADABLE]
    assert example.startswith("aws:us-east-1:describe_spot_price_history page 2 item 2")
    assert "SpotPrice" in example and "'n/a' is not a number" in example


def test_the_cli_documented_answer_is_read_and_its_vpc_product_skipped_by_reason(policy):
    """The AWS CLI's verbatim DescribeSpotPriceHistory example (recorded/real/, PROVENANCE.md): two
    m1.xlarge prices of product "Linux/UNIX (Amazon VPC)" (EC2-Classic era). Asked for m1.xlarge, the
    reader skips both under their product, never takes them for Linux/UNIX prices, and refuses nothing."""
    answer = json.loads(
        (Path(__file__).parent / "recorded/real/aws_cli_describe_spot_price_history.json").read_text()
    )
    for item in answer["SpotPriceHistory"]:  # botocore hands the reader datetimes, not strings
        item["Timestamp"] = dt.datetime.fromisoformat(item["Timestamp"].replace("Z", "+00:00"))
    m1 = InstanceTypeRecord(provider="aws", name="m1.xlarge", gpu_name="", gpu_count=Decimal(0))
    ec2, stats, refusals = client("ec2"), AwsReadStats(), Refusals()
    params = {**spot_params(), "InstanceTypes": ["m1.xlarge"]}
    with Stubber(ec2) as stub:
        stub.add_response("describe_spot_price_history", answer, params)
        records = list(
            aws_spot_prices(
                ec2,
                instance_types={"m1.xlarge": m1},
                zones=ZONES,
                start_time=NOW - dt.timedelta(days=7),
                end_time=NOW,
                policy=policy,
                stats=stats,
                refusals=refusals,
            )
        )
    assert records == [] and refusals.total == 0
    assert stats.skipped_reasons == {"product Linux/UNIX (Amazon VPC)": 2}
    # the same items as Linux/UNIX (today's product name for VPC instances) are read at 0.08 $/h per zone
    for item in answer["SpotPriceHistory"]:
        item["ProductDescription"] = "Linux/UNIX"
    with Stubber(ec2) as stub:
        stub.add_response("describe_spot_price_history", answer, params)
        records = list(
            aws_spot_prices(
                ec2,
                instance_types={"m1.xlarge": m1},
                zones=ZONES,
                start_time=NOW - dt.timedelta(days=7),
                end_time=NOW,
                policy=policy,
                refusals=refusals,
            )
        )
    assert [(r.zone, r.price_per_hour) for r in records] == [
        ("us-west-1a", Decimal("0.080000")),
        ("us-west-1c", Decimal("0.080000")),
    ]


def test_it_rejects_and_counts_a_zero_spot_price(policy):
    ec2 = client("ec2")
    stats = AwsReadStats()
    with Stubber(ec2) as stub:
        stub.add_response(
            "describe_spot_price_history",
            {
                "SpotPriceHistory": [
                    spot_item("g5.xlarge", "us-east-1b", "0.000000", NOW),
                    spot_item("g5.xlarge", "us-east-1b", "0.42", NOW),
                    spot_item(
                        "c5.large", "us-east-1b", "0.03", NOW
                    ),  # not asked for (moto ignores filters too)
                ]
            },
            spot_params(),
        )
        records = read_spot(ec2, policy, stats)
    assert [r.price_per_hour for r in records] == [Decimal("0.42")]
    assert (stats.items_seen, stats.rejected, stats.skipped_other_types, stats.records) == (3, 1, 1, 1)


@mock_aws
def test_it_fetches_a_region_with_moto_instance_types_and_recorded_spot_prices(policy):
    ec2 = client("ec2", "us-west-2")
    t = NOW - dt.timedelta(hours=3)
    calls = answer_with(
        ec2,
        "DescribeSpotPriceHistory",
        [
            {"SpotPriceHistory": [spot_item("p4d.24xlarge", "us-west-2a", "9.8304", t)], "NextToken": "n2"},
            {"SpotPriceHistory": [spot_item("g6e.xlarge", "us-west-2b", "0.7494", t)]},
        ],
    )
    zone_ids = {zone.zone_name: zone_id for zone_id, zone in aws_zones(ec2, policy=policy).items()}
    records = list(
        fetch_aws_spot(
            "us-west-2",
            client_factory=lambda *_, **__: ec2,
            now=NOW,
            look_back=dt.timedelta(0),
            policy=policy,
        )
    )
    assert [(r.instance.name, r.instance.gpu_name, r.zone, r.price_per_hour) for r in records] == [
        ("p4d.24xlarge", "A100", zone_ids["us-west-2a"], Decimal("9.8304")),
        ("g6e.xlarge", "L40S", zone_ids["us-west-2b"], Decimal("0.7494")),
    ]
    # A zero look-back asks for the price in effect now; the filter names moto's accelerated types only.
    assert calls[0]["StartTime"] == calls[0]["EndTime"] == NOW
    assert calls[1]["NextToken"] == "n2"
    assert {"p4d.24xlarge", "p5.48xlarge", "g5.xlarge", "g6e.xlarge"} <= set(calls[0]["InstanceTypes"])
    assert "c5.large" not in calls[0]["InstanceTypes"]


def answer_with(ec2, operation: str, pages: list[dict]) -> list[dict]:
    """Answer one operation from recorded pages and let moto answer every other call."""
    calls: list[dict] = []

    def record_params(params, **_):
        calls.append(dict(params))

    def answer(**_):
        return AWSResponse(None, 200, {}, None), pages[len(calls) - 1]

    ec2.meta.events.register(f"before-parameter-build.ec2.{operation}", record_params)
    ec2.meta.events.register(f"before-call.ec2.{operation}", answer)
    return calls
