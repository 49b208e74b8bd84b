"""The commitments command and API read a stored commitment price (by offer, by id, or the cheapest of an
instance type in a region) and give the same report as the typed prices they stand for."""

from __future__ import annotations

import json
from decimal import Decimal
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from tests.pricing.commitment_fixtures import price_id, store_p5_prices

pytestmark = pytest.mark.django_db

PROFILE = "8,8,16,16,16,24,8,8"  # GPUs a month: one to three p5.48xlarge


def run(*args: str) -> dict:
    out = StringIO()
    call_command("commitments", *args, "--utilization-profile", PROFILE, "--format", "json", stdout=out)
    return json.loads(out.getvalue())


def without_prices(report: dict) -> dict:
    return {key: value for key, value in report.items() if key != "prices_used"}


def test_offer_gives_the_report_of_the_typed_prices_it_stands_for():
    offer = store_p5_prices()
    stored = run("--offer", str(offer.pk), "--term-years", "1", "--payment-option", "partial_upfront")
    # typed per GPU-hour: on-demand 55.04 / 8 = 6.88; the 1-year partial-upfront reservation's
    # 16 + 120,000 / 8,760 = 29.698630 per instance-hour / 8 = 3.71232875
    typed = run("--on-demand", "6.88", "--reserved-effective", "3.71232875")
    assert without_prices(stored) == without_prices(typed)
    # discount 1 - 3.71232875 / 6.88 = 0.460417 (break-even utilization 0.539583)
    assert (stored["discount"], stored["break_even_utilization"]) == ("0.460417", "0.539583")
    used = stored["prices_used"]
    assert used["commitment"]["price_id"] == price_id("reserved_1y", "partial_upfront", "standard")
    assert (used["commitment"]["upfront"], used["commitment"]["recurring_per_hour"]) == (
        "120000.000000",
        "16.000000",
    )
    assert (used["commitment"]["source"], used["commitment"]["quality"]) == (
        "aws:pricing.get_products",
        "observed",
    )
    assert used["commitment"]["observed_at"] == "2026-12-01T00:00:00+00:00"
    assert used["on_demand"]["effective_per_hour"] == "55.040000"
    assert typed["prices_used"] == {"commitment": "typed", "on_demand": "typed"}


def test_without_filters_the_offer_gives_its_cheapest_commitment():
    offer = store_p5_prices()
    report = run("--offer", str(offer.pk))
    # the 3-year all-upfront reservation: 500,000 / 26,280 = 19.025875 / 8 GPUs = 2.378234375
    assert report["committed_per_gpu_hour"] == "2.378234"
    assert report["prices_used"]["commitment"]["pricing_model"] == "reserved_3y"


def test_instance_type_and_region_pick_the_cheapest_and_a_price_id_pins_one():
    store_p5_prices()
    cheapest = run(
        "--instance-type",
        "p5.48xlarge",
        "--region",
        "us-east-1",
        "--term-years",
        "1",
        "--payment-option",
        "no_upfront",
    )
    # no upfront, 1 year: the EC2 Instance Savings Plan at 33.50 beats the standard reservation at 34
    assert cheapest["prices_used"]["commitment"]["commitment_kind"] == "ec2_instance_sp"
    assert cheapest["committed_per_gpu_hour"] == "4.187500"  # 33.5 / 8
    compute_plan = price_id("savings_plan_1y", "no_upfront", "compute_sp")
    pinned = run("--commitment-price", str(compute_plan), "--on-demand", "6.88")
    assert pinned["committed_per_gpu_hour"] == "4.987500"  # 39.9 / 8
    assert pinned["prices_used"]["on_demand"] == "typed"


def test_the_table_says_which_prices_were_used():
    offer = store_p5_prices()
    out = StringIO()
    call_command(
        "commitments",
        "--offer",
        str(offer.pk),
        "--term-years",
        "3",
        "--utilization-profile",
        PROFILE,
        stdout=out,
    )
    text = out.getvalue()
    assert "commitment price used: #" in text and "reserved_3y all_upfront standard 19.025875 USD/h" in text
    assert "observed 2026-12-01 from aws:pricing.get_products" in text


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--offer", "999999"), "--offer: no current commitment price stored for offer 999999"),
        (("--instance-type", "p5.48xlarge"), "--region: is required with instance_type"),
        (
            ("--instance-type", "p5.48xlarge", "--region", "us-east-1", "--payment-option", "monthly"),
            "--payment-option: must be one of no_upfront, partial_upfront, all_upfront",
        ),
        (("--offer", "1", "--reserved-effective", "3"), "--reserved-effective: give either a stored price"),
        (("--commitment-price", "999999"), "--commitment-price: no stored commitment price 999999"),
    ],
)
def test_it_names_the_flag_of_a_bad_stored_price_request(args, message):
    store_p5_prices()
    with pytest.raises(CommandError, match=message):
        run(*args)


def test_the_api_reads_the_same_stored_price(engineer_client):
    offer = store_p5_prices()
    body = {
        "offer": offer.pk,
        "term_years": 1,
        "payment_option": "partial_upfront",
        "utilization_profile": [8, 8, 16, 16, 16, 24, 8, 8],
    }
    response = engineer_client.post("/api/commitments/", body, content_type="application/json")
    assert response.status_code == 200, response.content
    assert without_prices(response.json()) == without_prices(
        run("--offer", str(offer.pk), "--term-years", "1", "--payment-option", "partial_upfront")
    )
    assert Decimal(response.json()["prices_used"]["commitment"]["effective_per_hour"]) == Decimal("29.698630")


def test_the_api_takes_typed_prices_and_names_a_bad_field(engineer_client):
    typed = {"on_demand": "6.88", "reserved_effective": "3.71232875", "utilization_profile": [8, 16]}
    assert (
        engineer_client.post("/api/commitments/", typed, content_type="application/json").status_code == 200
    )
    bad = engineer_client.post(
        "/api/commitments/", typed | {"utilization_profile": [8] * 2000}, content_type="application/json"
    )
    assert bad.status_code == 400 and bad.json()["errors"][0]["path"] == "utilization_profile"
    missing = engineer_client.post(
        "/api/commitments/",
        {"on_demand": "6.88", "utilization_profile": [8]},
        content_type="application/json",
    )
    assert missing.status_code == 400 and missing.json()["errors"][0]["path"] == "reserved_effective"
