"""AWS Pricing API source, against Stubber with real-shaped get_products responses (moto has no Pricing API)."""

from __future__ import annotations

import datetime as dt
import gzip
import json
from decimal import Decimal
from pathlib import Path

import pytest
from botocore.stub import Stubber

from pricing.price_checks import AMBIGUOUS, UNREADABLE, Refusals
from pricing.providers.aws import AwsReadStats
from pricing.providers.aws_pricing import aws_list_prices, fetch_aws_list_prices
from pricing.providers.records import InstanceTypeRecord
from pricing.providers.retry import RetryPolicy
from tests.pricing.providers.aws_responses import client, get_products_params, product

NOW = dt.datetime(2025, 6, 1, tzinfo=dt.UTC)
REAL = Path(__file__).parent / "recorded" / "real"
P5 = InstanceTypeRecord(provider="aws", name="p5.48xlarge", gpu_name="H100", gpu_count=Decimal(8))
G5 = InstanceTypeRecord(provider="aws", name="g5.xlarge", gpu_name="A10G", gpu_count=Decimal(1))

# p5.48xlarge us-east-1 on-demand $55.04/h (AWS price after the June 2025 reduction); the reserved
# figures are shaped like AWS's (hourly + upfront) and the effective prices below are hand-computed.
P5_RESERVED = [
    ("4NA7Y494T4", "1yr", "No Upfront", "57.6300000000", None),
    ("HU7G6KETJZ", "1yr", "Partial Upfront", "28.8150000000", "252419"),
    ("6QCMYABX3D", "1yr", "All Upfront", "0.0000000000", "504839"),
    ("NQ3QZPMQV9", "3yr", "All Upfront", "0.0000000000", "1229000"),
    ("7NE97W5U4E", "1yr", "No Upfront", "60.0000000000", None),  # convertible (below): its own kind
]


@pytest.fixture
def sleeps() -> list[float]:
    return []


@pytest.fixture
def policy(sleeps) -> RetryPolicy:
    return RetryPolicy(max_retries=2, base_delay_s=1, sleep=sleeps.append, random_fraction=lambda: 0.5)


def p5_product() -> str:
    text = product("p5.48xlarge", "us-east-1", "55.0400000000", P5_RESERVED)
    return text.replace(
        '"7NE97W5U4E", "termAttributes": {"LeaseContractLength": "1yr", "OfferingClass": "standard"',
        '"7NE97W5U4E", "termAttributes": {"LeaseContractLength": "1yr", "OfferingClass": "convertible"',
    )


def read(pricing, policy, instance=P5, stats=None, refusals=None):
    return list(
        aws_list_prices(
            pricing,
            region="us-east-1",
            instance=instance,
            observed_at=NOW,
            policy=policy,
            stats=stats,
            refusals=refusals,
        )
    )


def test_it_reads_on_demand_and_effective_reserved_prices(policy):
    pricing = client("pricing")
    with Stubber(pricing) as stub:
        stub.add_response(
            "get_products", {"PriceList": [p5_product()]}, get_products_params("p5.48xlarge", "us-east-1")
        )
        records = read(pricing, policy)
    prices = {
        (r.pricing_model, r.payment_option, r.commitment_kind): (
            r.price_per_hour,
            r.upfront_fee,
            r.recurring_per_hour,
        )
        for r in records
    }
    assert prices == {
        ("on_demand", "", ""): (Decimal("55.04"), None, None),
        ("reserved_1y", "no_upfront", "standard"): (Decimal("57.63"), Decimal(0), Decimal("57.63")),
        # 28.815 + 252419 / 8760 h = 28.815 + 28.814954 = 57.629954
        ("reserved_1y", "partial_upfront", "standard"): (
            Decimal("57.629954"),
            Decimal(252419),
            Decimal("28.815"),
        ),
        # 504839 / 8760 h = 57.630023
        ("reserved_1y", "all_upfront", "standard"): (Decimal("57.630023"), Decimal(504839), Decimal(0)),
        # 1229000 / 26280 h (3 × 365 × 24) = 46.765601
        ("reserved_3y", "all_upfront", "standard"): (Decimal("46.765601"), Decimal(1229000), Decimal(0)),
        # the convertible offering class is a different product with its own price
        ("reserved_1y", "no_upfront", "convertible"): (Decimal("60"), Decimal(0), Decimal("60")),
    }
    assert {(r.region, r.zone, r.currency, r.observed_at, r.source) for r in records} == {
        ("us-east-1", "", "USD", NOW, "aws:pricing.get_products")
    }


def test_it_sends_the_term_match_filters_to_the_us_east_1_endpoint():
    params = get_products_params("g6e.xlarge", "eu-west-1")
    filters = {(f["Type"], f["Field"], f["Value"]) for f in params["Filters"]}
    assert filters == {
        ("TERM_MATCH", "instanceType", "g6e.xlarge"),
        ("TERM_MATCH", "regionCode", "eu-west-1"),
        ("TERM_MATCH", "operatingSystem", "Linux"),
        ("TERM_MATCH", "tenancy", "Shared"),
        ("TERM_MATCH", "capacitystatus", "Used"),
        ("TERM_MATCH", "preInstalledSw", "NA"),
        ("TERM_MATCH", "operation", "RunInstances"),
    }


def test_it_follows_next_token_and_retries_throttling(policy, sleeps):
    pricing = client("pricing")
    with Stubber(pricing) as stub:
        stub.add_response(
            "get_products",
            {"PriceList": [], "NextToken": "tok-2"},
            get_products_params("g5.xlarge", "us-east-1"),
        )
        stub.add_client_error("get_products", "ThrottlingException", http_status_code=400)
        stub.add_response(
            "get_products",
            {"PriceList": [product("g5.xlarge", "us-east-1", "1.0060000000")]},
            get_products_params("g5.xlarge", "us-east-1", "tok-2"),
        )
        records = read(pricing, policy, instance=G5)
        stub.assert_no_pending_responses()
    assert [(r.pricing_model, r.price_per_hour) for r in records] == [("on_demand", Decimal("1.006"))]
    assert sleeps == [0.5]  # 1 s ceiling × jitter 0.5


def test_an_entry_that_is_not_json_is_refused_by_page_and_item_and_the_rest_lands(policy):
    pricing, refusals = client("pricing"), Refusals()
    with Stubber(pricing) as stub:
        stub.add_response(
            "get_products",
            {"PriceList": [product("g5.xlarge", "us-east-1", "1.006"), '{"product": {'], "NextToken": ""},
            get_products_params("g5.xlarge", "us-east-1"),
        )
        records = read(pricing, policy, instance=G5, refusals=refusals)
    assert [r.price_per_hour for r in records] == [Decimal("1.006000")]
    assert refusals.counts == {UNREADABLE: 1}
    assert refusals.examples[UNREADABLE][0].startswith("aws-pricing:us-east-1:g5.xlarge page 1 item 2")


def test_a_non_numeric_price_dimension_is_refused_naming_the_field(policy):
    pricing, refusals = client("pricing"), Refusals()
    with Stubber(pricing) as stub:
        stub.add_response(
            "get_products",
            {"PriceList": [product("g5.xlarge", "us-east-1", "call us")]},
            get_products_params("g5.xlarge", "us-east-1"),
        )
        assert read(pricing, policy, instance=G5, refusals=refusals) == []
    assert "'call us' is not a number" in refusals.examples[UNREADABLE][0]
    assert ".pricePerUnit.USD" in refusals.examples[UNREADABLE][0]


def test_it_rejects_and_counts_a_zero_on_demand_price(policy):
    pricing = client("pricing")
    stats = AwsReadStats()
    with Stubber(pricing) as stub:
        stub.add_response(
            "get_products",
            {"PriceList": [product("g5.xlarge", "us-east-1", "0.0000000000")]},
            get_products_params("g5.xlarge", "us-east-1"),
        )
        assert read(pricing, policy, instance=G5, stats=stats) == []
    assert (stats.items_seen, stats.rejected) == (1, 1)


@pytest.mark.parametrize("order", [(0, 1), (1, 0)])
def test_two_products_that_disagree_are_both_refused_whatever_their_order(policy, order):
    entries = [product("g5.xlarge", "us-east-1", "1.006"), product("g5.xlarge", "us-east-1", "2.0")]
    pricing, refusals = client("pricing"), Refusals()
    with Stubber(pricing) as stub:
        stub.add_response(
            "get_products",
            {"PriceList": [entries[i] for i in order]},
            get_products_params("g5.xlarge", "us-east-1"),
        )
        assert read(pricing, policy, instance=G5, refusals=refusals) == []
    assert refusals.counts == {AMBIGUOUS: 1}


@pytest.mark.parametrize("first", [True, False])
def test_a_product_of_another_family_sharing_the_instance_type_is_never_the_linux_price(policy, first):
    """A Windows product (operatingSystem) and a dedicated host (productFamily) of g5.xlarge in one answer
    with the Linux product: only the Linux product's 1.006 $/h (AWS's us-east-1 list price) is taken,
    wherever it stands, and each other entry is counted as skipped under its reason."""
    linux = product("g5.xlarge", "us-east-1", "1.006")
    windows = linux.replace('"operatingSystem": "Linux"', '"operatingSystem": "Windows"').replace(
        "1.006", "1.19"
    )
    host = linux.replace('"productFamily": "Compute Instance"', '"productFamily": "Dedicated Host"').replace(
        "1.006", "8.0"
    )
    listed = [linux, windows, host] if first else [host, windows, linux]
    pricing, stats, refusals = client("pricing"), AwsReadStats(), Refusals()
    with Stubber(pricing) as stub:
        stub.add_response(
            "get_products", {"PriceList": listed}, get_products_params("g5.xlarge", "us-east-1")
        )
        records = read(pricing, policy, instance=G5, stats=stats, refusals=refusals)
    assert [(r.pricing_model, r.price_per_hour) for r in records] == [("on_demand", Decimal("1.006000"))]
    assert stats.skipped_reasons == {"operatingSystem Windows": 1, "product family Dedicated Host": 1}
    assert refusals.total == 0


def test_the_sdk_documented_get_products_answer_is_skipped_as_a_storage_product(policy):
    """botocore's verbatim GetProducts example (recorded/real/aws_pricing_botocore_examples.json,
    PROVENANCE.md) is an EBS storage product: skipped under its family, not priced, not refused."""
    answer = json.loads((REAL / "aws_pricing_botocore_examples.json").read_text())
    pricing, stats, refusals = client("pricing"), AwsReadStats(), Refusals()
    with Stubber(pricing) as stub:
        stub.add_response(
            "get_products", {"PriceList": answer["PriceList"]}, get_products_params("g5.xlarge", "us-east-1")
        )
        assert read(pricing, policy, instance=G5, stats=stats, refusals=refusals) == []
    assert stats.skipped_reasons == {"product family Storage": 1}
    assert refusals.total == 0


def test_it_prices_every_instance_type_of_a_region(policy):
    pricing = client("pricing")
    factory_calls = []

    def factory(service, *, region_name):
        factory_calls.append((service, region_name))
        return pricing

    with Stubber(pricing) as stub:
        stub.add_response(
            "get_products",
            {"PriceList": [product("g5.xlarge", "eu-west-1", "1.123")]},
            get_products_params("g5.xlarge", "eu-west-1"),
        )
        stub.add_response(
            "get_products",
            {"PriceList": [product("p5.48xlarge", "eu-west-1", "60.1")]},
            get_products_params("p5.48xlarge", "eu-west-1"),
        )
        records = list(
            fetch_aws_list_prices(
                "eu-west-1",
                client_factory=factory,
                now=NOW,
                policy=policy,
                instance_types={"p5.48xlarge": P5, "g5.xlarge": G5},
            )
        )
    assert factory_calls == [("pricing", "us-east-1")]
    assert [(r.instance.name, r.region, r.price_per_hour) for r in records] == [
        ("g5.xlarge", "eu-west-1", Decimal("1.123")),
        ("p5.48xlarge", "eu-west-1", Decimal("60.1")),
    ]


def dedicated_host_products() -> list[dict]:
    """recorded/real/aws_price_list_dedicated_hosts_20190920.jsonl.gz (PROVENANCE.md): 380 real price-list
    products of publication 20190920043334, one JSON object after another as `aws pricing get-products`
    piped through jq prints them; the recording's author emptied their terms (``"Reserved": {}``)."""
    text = gzip.decompress((REAL / "aws_price_list_dedicated_hosts_20190920.jsonl.gz").read_bytes()).decode()
    decoder, products, at = json.JSONDecoder(), [], 0
    while at < len(text.rstrip()):
        item, at = decoder.raw_decode(text, at)
        products.append(item)
        while at < len(text) and text[at].isspace():
            at += 1
    return products


def test_real_gpu_dedicated_host_products_are_skipped_by_family_never_priced(policy):
    """The 45 GPU products of the real listing (p2, p3, p3dn, g2, g3 hosts, e.g. "p3" in EU (London):
    8 GPUs, 64 vCPUs, 488 GiB) are Dedicated Host products that share the instance family with the VM
    products: asked for p3.16xlarge, each is skipped under its family, none is taken for its price."""
    products = dedicated_host_products()
    assert len(products) == 380 and {p["version"] for p in products} == {"20190920043334"}
    gpu = [p for p in products if p["product"]["attributes"].get("instanceFamily") == "GPU instance"]
    assert len(gpu) == 45
    p3 = InstanceTypeRecord(provider="aws", name="p3.16xlarge", gpu_name="V100", gpu_count=Decimal(8))
    pricing, stats, refusals = client("pricing"), AwsReadStats(), Refusals()
    with Stubber(pricing) as stub:
        stub.add_response(
            "get_products",
            {"PriceList": [json.dumps(p) for p in gpu]},
            get_products_params("p3.16xlarge", "us-east-1"),
        )
        assert read(pricing, policy, instance=p3, stats=stats, refusals=refusals) == []
    assert stats.skipped_reasons == {"product family Dedicated Host": 45}
    assert refusals.total == 0
