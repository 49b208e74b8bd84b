"""Each saving carries the catalog prices it used, with their observation date and quality, and the
spend review report lists them as its price dates (issue 8: the report's `price_dates` was empty).

On the demo bill (tests/billing/catalog.py, make_demo_billing seed 3): the spot saving re-prices the
interruptible p5.48xlarge hours at the median of three us-east-1 zones (18.00, 20.00, 25.00); here the
az4 price is a newer catalog snapshot, and a quoted 1-year commitment price for p4d.24xlarge is added."""

from __future__ import annotations

import datetime as dt
import json
from decimal import Decimal
from io import StringIO

import pytest
from django.core.management import call_command

from billing.review.selectors import spot_overhead
from pricing.models import InstanceType, Offer, PriceObservation, Region
from procurement.reports.kinds import spend_review as kind
from procurement.reports.registry import ReportPeriod
from tests.billing.catalog import import_demo_billing

pytestmark = pytest.mark.django_db
DAYS = 184
NOV_1, NOV_20, OCT_15 = "2026-11-01T00:00:00+00:00", "2026-11-20T00:00:00+00:00", "2026-10-15T00:00:00+00:00"


@pytest.fixture
def demo(tmp_path):
    import_demo_billing(tmp_path, months=6)
    az4 = Offer.objects.get(instance_type__name="p5.48xlarge", zone="use1-az4")
    PriceObservation.objects.create(
        offer=az4,
        pricing_model="spot",
        amount_per_hour=Decimal("25.00"),
        currency="USD",
        observed_at=dt.datetime(2026, 11, 20, tzinfo=dt.UTC),
        source="skypilot:aws/vms.csv",
    )
    p4d = Offer.objects.create(
        instance_type=InstanceType.objects.get(name="p4d.24xlarge"),
        region=Region.objects.get(code="us-east-1"),
    )
    PriceObservation.objects.create(
        offer=p4d,
        pricing_model="reserved_1y",
        amount_per_hour=Decimal("13.00"),
        currency="USD",
        observed_at=dt.datetime(2026, 10, 15, tzinfo=dt.UTC),
        source="file:negotiated.csv",
    )


def review() -> dict:
    out = StringIO()
    call_command("spend_review", "--from", "2026-05-01", "--to", "2026-11-01", "--format", "json", stdout=out)
    return json.loads(out.getvalue())


def test_each_saving_lists_the_prices_it_used_with_dates_and_quality(demo):
    savings = {s["kind"]: s for s in review()["savings"]}
    spot = [(p["label"], p["observed_at"], p["quality"], p["source"]) for p in savings["spot"]["prices"]]
    assert spot == [
        ("aws p5.48xlarge us-east-1 use1-az1 spot", NOV_1, "observed", "test"),
        ("aws p5.48xlarge us-east-1 use1-az2 spot", NOV_1, "observed", "test"),
        ("aws p5.48xlarge us-east-1 use1-az4 spot", NOV_20, "snapshot", "skypilot:aws/vms.csv"),
    ]
    # the median is still 20.00 (hand computation as in test_demo_review.py)
    expected = DAYS * 8 * Decimal("55.04") - DAYS * 8 * Decimal("20.00") * (1 + spot_overhead()[0])
    assert Decimal(savings["spot"]["amount"]) == round(expected, 2)
    commitment = savings["commitment"]
    assert [(p["label"], p["observed_at"], p["quality"]) for p in commitment["prices"]] == [
        ("aws p4d.24xlarge us-east-1 reserved_1y", OCT_15, "quoted")
    ]
    # two p4d all day for 184 days, committed at the quoted 13.00 instead of 21.957642 on demand
    assert Decimal(commitment["amount"]) == round(
        2 * 24 * DAYS * (Decimal("21.957642") - Decimal("13.00")), 2
    )
    assert commitment["confidence"] == "high"
    assert savings["cheaper_gpu" if "cheaper_gpu" in savings else "idle"]["prices"] == []  # no catalog price


def test_the_report_lists_the_price_dates_and_says_when_they_are_stale(demo):
    inputs = kind.load_inputs(ReportPeriod(dt.date(2026, 5, 1), dt.date(2026, 11, 1)))
    report = kind.build_report(inputs, dt.datetime(2026, 12, 1, tzinfo=dt.UTC))
    dates = [(p.label, p.observed_at, p.quality, p.age_days, p.stale) for p in report.price_dates]
    assert dates == [
        ("spot saving: aws p5.48xlarge us-east-1 use1-az1 spot", NOV_1, "observed", 30, False),
        ("spot saving: aws p5.48xlarge us-east-1 use1-az2 spot", NOV_1, "observed", 30, False),
        ("spot saving: aws p5.48xlarge us-east-1 use1-az4 spot", NOV_20, "snapshot", 11, False),
        ("commitment saving: aws p4d.24xlarge us-east-1 reserved_1y", OCT_15, "quoted", 47, False),
    ]
    assert not report.stale
    # none of these sources is refreshed on a schedule: stale past the snapshot limit (90 days)
    later = kind.build_report(inputs, dt.datetime(2027, 2, 10, tzinfo=dt.UTC))
    assert [p.stale for p in later.price_dates] == [True, True, False, True]
    assert later.stale


def test_the_billing_page_data_has_a_table_of_the_prices_used(demo):
    from billing.review.service import build_report, make_request

    data = build_report(make_request(start=dt.date(2026, 5, 1), end=dt.date(2026, 11, 1)))
    table = {t.key: t for t in data["tables"]}["prices"]
    assert [(r["saving"], r["observed_at"], r["quality"]) for r in table.rows] == [
        ("spot", NOV_1, "observed"),
        ("spot", NOV_1, "observed"),
        ("spot", NOV_20, "snapshot"),
        ("commitment", OCT_15, "quoted"),
    ]
    assert "prices" in next(s for s in data["sections"] if s["id"] == "savings")["tables"]
