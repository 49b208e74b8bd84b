"""The spend review's commitment saving uses the stored commitment price of the same instance type and
region and says which one (price id, source, date, quality); only where none is stored does it fall back to
the committed rate the bill already pays, and it says so.

Demo bill (tests/billing/catalog.py, seed 3, May to October 2026: 184 days): two on-demand p4d.24xlarge run
all day every day at 21.957642 an instance-hour (test_demo_review.py), and the bill's own committed p4d
rate is 13.174585."""

from __future__ import annotations

import datetime as dt
import json
from decimal import Decimal
from io import StringIO

import pytest
from django.core.management import call_command

from pricing.ingest import ingest_price_records
from pricing.models import PriceObservation
from pricing.providers.records import InstanceTypeRecord, PriceRecord
from tests.billing.catalog import import_demo_billing

pytestmark = pytest.mark.django_db
DAYS = 184
P4D = InstanceTypeRecord(provider="aws", name="p4d.24xlarge", gpu_name="A100", gpu_count=Decimal(8))
OBSERVED = dt.datetime(2026, 11, 2, tzinfo=dt.UTC)


def review() -> dict:
    out = StringIO()
    call_command("spend_review", "--from", "2026-05-01", "--to", "2026-11-01", "--format", "json", stdout=out)
    return json.loads(out.getvalue())


def commitment_saving() -> dict:
    return next(s for s in review()["savings"] if s["kind"] == "commitment")


def store_p4d_reservation(source: str = "aws:pricing.get_products") -> int:
    # a test input shaped as AWS quotes it: 60,000 upfront and 6.00 an hour for a year;
    # effective 6 + 60,000 / 8,760 = 6 + 6.849315 = 12.849315
    record = PriceRecord(
        P4D,
        "us-east-1",
        "",
        "reserved_1y",
        Decimal("12.849315"),
        "USD",
        OBSERVED,
        source,
        payment_option="partial_upfront",
        upfront_fee=Decimal(60000),
        commitment_kind="standard",
        recurring_per_hour=Decimal(6),
    )
    ingest_price_records([record])
    return PriceObservation.objects.get(
        pricing_model="reserved_1y", offer__instance_type__name="p4d.24xlarge"
    ).pk


def test_it_uses_the_stored_commitment_price_and_names_it(tmp_path):
    import_demo_billing(tmp_path, months=6)
    price_id = store_p4d_reservation()
    saving = commitment_saving()
    # the floor of two p4d for 2 x 24 x 184 instance-hours at 12.849315 instead of 21.957642
    assert Decimal(saving["amount"]) == round(
        2 * 24 * DAYS * (Decimal("21.957642") - Decimal("12.849315")), 2
    )
    assert saving["confidence"] == "high"
    (choice,) = saving["commitment_prices"]
    assert (choice["instance_type"], choice["region"], choice["basis"]) == (
        "p4d.24xlarge",
        "us-east-1",
        "stored",
    )
    assert choice["rate_per_instance_hour"] == "12.849315"
    assert (choice["price"]["price_id"], choice["price"]["source"], choice["price"]["observed_at"]) == (
        price_id,
        "aws:pricing.get_products",
        OBSERVED.isoformat(),
    )
    assert (
        f"stored commitment price #{price_id}" in choice["note"] and choice["note"] in saving["assumptions"]
    )
    assert saving["prices"][0]["label"] == "aws p4d.24xlarge us-east-1 reserved_1y partial_upfront standard"


def test_without_a_stored_price_it_says_it_used_the_billed_rate(tmp_path):
    import_demo_billing(tmp_path, months=6)
    saving = commitment_saving()
    # test_demo_review.py's figure: the bill's own committed p4d rate
    assert Decimal(saving["amount"]) == round(
        2 * 24 * DAYS * (Decimal("21.957642") - Decimal("13.174585")), 2
    )
    (choice,) = saving["commitment_prices"]
    assert (choice["basis"], choice["price"], choice["rate_per_instance_hour"]) == (
        "billed_rate",
        None,
        "13.174585",
    )
    assert "no stored commitment price" in choice["note"] and choice["note"] in saving["assumptions"]
    assert saving["confidence"] == "medium"


def test_an_illustrative_commitment_price_never_decides_the_saving(tmp_path):
    import_demo_billing(tmp_path, months=6)
    store_p4d_reservation(source="illustrative:aws-commitments-demo.json")
    assert commitment_saving()["commitment_prices"][0]["basis"] == "billed_rate"
