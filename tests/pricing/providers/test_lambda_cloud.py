"""Lambda Cloud instance-types reader against recorded, real-shaped answers."""

from __future__ import annotations

import datetime as dt
import json
from decimal import Decimal

import pytest

from pricing.price_checks import UNIT, UNKNOWN_FORM, Refusals
from pricing.providers.http_api import HttpAnswer, HttpSourceError
from pricing.providers.lambda_cloud import LambdaReadStats, fetch_lambda_prices
from tests.pricing.providers.fake_http import FakeHttp, error_page, no_wait_policy, ok, recorded, throttled

NOW = dt.datetime(2026, 12, 3, 14, 20, tzinfo=dt.UTC)


def read(*answers, sleeps=None):
    refusals, stats, http = Refusals(), LambdaReadStats(), FakeHttp(*answers)
    records = list(
        fetch_lambda_prices(
            api_key="lk-test",
            now=NOW,
            refusals=refusals,
            stats=stats,
            transport=http,
            policy=no_wait_policy(sleeps),
        )
    )
    return {(r.instance.name, r.region): r for r in records}, refusals, stats, http


def test_it_prices_each_type_in_each_region_with_capacity():
    prices, refusals, stats, http = read(ok("lambda_instance_types.json"))
    assert http.calls[0][1] == {"Authorization": "Bearer lk-test"}
    # 2392 cents per hour = 23.92 $/h for 8 x H100 SXM5 (2.99 $/GPU-h), in both regions with capacity
    h100 = prices[("gpu_8x_h100_sxm5", "us-east-1")]
    assert (h100.price_per_hour, h100.pricing_model, h100.currency) == (
        Decimal("23.920000"),
        "on_demand",
        "USD",
    )
    assert prices[("gpu_8x_h100_sxm5", "us-south-2")].price_per_hour == Decimal("23.92")
    instance = h100.instance
    assert (instance.gpu_name, instance.gpu_count, instance.vcpus, instance.memory_gib) == (
        "H100",
        8,
        208,
        1800,
    )
    # 22,528 GiB of local disk is 24,189.3 GB (x 1.073741824)
    assert instance.local_disk_gb == Decimal("24189.3")
    assert prices[("gpu_1x_a100_sxm4", "us-west-1")].instance.gpu_name == "A100"
    # the A10 has no capacity anywhere: no price this time; the CPU type is no GPU offer
    assert not any(name == "gpu_1x_a10" for name, _ in prices)
    assert (stats.without_capacity, stats.skipped, len(prices), refusals.total) == (1, 1, 4, 0)
    assert stats.skipped_reasons == {"no GPU (cpu_ type)": 1, "no region with capacity": 1}
    assert all(r.observed_at == dt.datetime(2026, 12, 3, 14, tzinfo=dt.UTC) for r in prices.values())


def test_a_price_that_is_not_whole_cents_is_refused_as_unit():
    prices, refusals, *_ = read(ok("lambda_bad_data.json"))
    assert refusals.counts[UNIT] == 1 and "149.5" in refusals.examples[UNIT][0]
    assert ("gpu_1x_h100_pcie", "us-west-3") in prices
    assert ("gpu_1x_a6000", "us-moon-1") in prices  # the refresh's region check refuses it


def test_an_empty_answer_yields_nothing():
    prices, refusals, *_ = read(ok("lambda_empty.json"))
    assert (prices, refusals.total) == ({}, 0)


def test_throttling_and_an_error_page_are_retried_and_a_bad_key_is_not():
    sleeps: list[float] = []
    prices, *_ = read(throttled("2"), error_page(500), ok("lambda_instance_types.json"), sleeps=sleeps)
    assert sleeps == [2.0, 1.0] and prices  # Retry-After 2 s, then backoff 1 s (2 s ceiling, half jitter)
    with pytest.raises(HttpSourceError, match="HTTP 401") as raised:
        read(
            HttpAnswer(
                401, b'{"error": {"code": "global/invalid-api-key", "message": "API key was invalid"}}'
            )
        )
    assert "lk-test" not in str(raised.value)


def test_a_type_name_in_a_form_no_rule_reads_is_refused_not_taken_for_a_cpu_type():
    document = json.loads(recorded("lambda_instance_types.json"))
    entry = document["data"].pop("gpu_8x_b200_sxm6")
    entry["instance_type"]["name"] = "b200_8x_sxm6"  # a new naming form: not gpu_<n>x_<model>, not cpu_
    document["data"]["b200_8x_sxm6"] = entry
    prices, refusals, stats, _ = read(HttpAnswer(200, json.dumps(document).encode()))
    assert refusals.counts == {UNKNOWN_FORM: 1} and "'b200_8x_sxm6'" in refusals.examples[UNKNOWN_FORM][0]
    assert stats.skipped_reasons == {"no GPU (cpu_ type)": 1, "no region with capacity": 1}
    assert not any(name == "b200_8x_sxm6" for name, _ in prices)
