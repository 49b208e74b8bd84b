"""An unused commitment is one finding, not seven daily anomalies (issue 28, item 4).

The bill (hand-made FOCUS, g6.xlarge = 1 NVIDIA L4 in tests/billing/catalog.py; the unused rows follow
the FOCUS 1.2 commitment-discount examples, /work/shared/data/focus/commitment_discount_flexibility/
zero_percent_utilization_without_commitment_discount_flexibility.csv: CommitmentDiscountStatus Unused,
PricingCategory Committed, the commitment's id):
- research: on demand every day 2026-10-01..2026-11-12, 24 GPU-hours at 100.00 a day, except
  2026-11-10 at 400.00 (a real spike);
- platform: reservation ri-0001 used 24 h a day at 50.00 from 2026-10-01 to 2026-11-05; from 2026-11-06
  to 2026-11-12 the workload is gone and the reservation's 50.00 a day is unused (7 days, 350.00).
Before issue 28, platform's series fell from 50.00 to 0 on each of the 7 days: 7 "drop" anomalies
beside research's spike (checked below by turning the rule off). Now: research's spike, and ri-0001 as
one finding.
"""

from __future__ import annotations

import datetime as dt

import numpy as np
import pytest

from billing.imports.importer import import_files
from billing.review.service import _build_review, make_request
from tests.billing.catalog import make_catalog

pytestmark = pytest.mark.django_db
HEADER = (
    "ChargePeriodStart,ChargePeriodEnd,ChargeCategory,BilledCost,EffectiveCost,BillingCurrency,ProviderName,"
    "RegionId,ResourceId,ServiceCategory,ConsumedQuantity,ConsumedUnit,x_UsageType,PricingCategory,"
    "CommitmentDiscountId,CommitmentDiscountStatus,Tags"
)
NOVEMBER = {"start": dt.date(2026, 11, 1), "end": dt.date(2026, 12, 1)}


def line(day, cost, usage_type, pricing, team, commitment="", status=""):
    start, end = f"{day}T00:00:00Z", f"{day + dt.timedelta(days=1)}T00:00:00Z"
    tags = f'"{{""team"": ""{team}""}}"' if team else ""
    resource = commitment or f"i-{team}"
    return (
        f"{start},{end},Usage,{cost},{cost},USD,AWS,us-east-1,{resource},Compute,24,Hours,{usage_type},"
        f"{pricing},{commitment},{status},{tags}"
    )


@pytest.fixture
def bill(tmp_path, django_capture_on_commit_callbacks):
    make_catalog()
    lines, day = [HEADER], dt.date(2026, 10, 1)
    while day <= dt.date(2026, 11, 12):
        cost = "400.00" if day == dt.date(2026, 11, 10) else "100.00"
        lines.append(line(day, cost, "USE1-BoxUsage:g6.xlarge", "Standard", "research"))
        if day <= dt.date(2026, 11, 5):
            lines.append(
                line(
                    day, "50.00", "USE1-DiscountedUsage:g6.xlarge", "Committed", "platform", "ri-0001", "Used"
                )
            )
        else:  # the reservation's unused hours: no workload, so no team tag
            lines.append(line(day, "50.00", "USE1-UnusedBox:g6.xlarge", "Committed", "", "ri-0001", "Unused"))
        day += dt.timedelta(days=1)
    path = tmp_path / "bill.csv"
    path.write_text("\n".join(lines) + "\n")
    with django_capture_on_commit_callbacks(execute=True):
        assert not import_files([path], fmt="focus").errors


def test_an_unused_reservation_is_one_finding_not_seven_anomalies(bill):
    review = _build_review(make_request(**NOVEMBER))
    found = review["anomalies"]
    assert [(a["day"], a["team"], a["direction"]) for a in found["items"]] == [
        ("2026-11-10", "research", "spike")
    ]
    assert found["unused_commitments"] == [
        {
            "commitment_id": "ri-0001",
            "days_unused": 7,
            "first_day": "2026-11-06",
            "last_day": "2026-11-12",
            "unused_cost": "350.00",
        }  # 7 × 50.00
    ]
    # the unused cost stays GPU spend, as the review counts it: 350.00 of unused commitments
    assert review["unused_commitment_cost"] == "350.00"


def test_without_the_rule_the_same_bill_gives_seven_daily_drops(bill, monkeypatch):
    """The comparison can fail: counting the reservation's days as daily spend flags each of them."""
    monkeypatch.setattr("billing.finance.sections.under_commitment", lambda rows: np.zeros(len(rows), bool))
    found = _build_review(make_request(**NOVEMBER))["anomalies"]
    drops = [a["day"] for a in found["items"] if a["team"] == "platform" and a["direction"] == "drop"]
    assert drops == [f"2026-11-{day:02d}" for day in range(6, 13)]


def test_the_finding_shows_in_the_command_and_the_report(bill, client_as):
    from io import StringIO

    from django.core.management import call_command

    out = StringIO()
    call_command("spend_review", "--from", "2026-11-01", "--to", "2026-12-01", stdout=out)
    assert "unused commitment ri-0001: 7 day(s) 2026-11-06..2026-11-12, 350.00 USD" in out.getvalue()
    page = client_as("finance").get("/billing/?start=2026-11-01&end=2026-12-01")
    assert b"Unused commitments (1 found, one line each)" in page.content


def test_an_unused_non_gpu_reservation_is_one_finding_of_its_own(
    tmp_path, django_capture_on_commit_callbacks
):
    """An m7i.large reservation (no GPU: not in tests/billing/catalog.py, AWS's naming rules it out) used
    2026-11-01..11-03 at 3.00 a day, then unused 2026-11-04..11-08 (5 days × 3.00 = 15.00): one non-GPU
    finding, none among the GPU ones, and no daily anomaly (anomalies read GPU spend only)."""
    make_catalog()
    lines, day = [HEADER], dt.date(2026, 10, 1)
    while day <= dt.date(2026, 11, 8):
        lines.append(line(day, "100.00", "USE1-BoxUsage:g6.xlarge", "Standard", "research"))
        if day >= dt.date(2026, 11, 1):
            used = day <= dt.date(2026, 11, 3)
            usage = "USE1-DiscountedUsage:m7i.large" if used else "USE1-UnusedBox:m7i.large"
            team, status = ("web", "Used") if used else ("", "Unused")
            lines.append(line(day, "3.00", usage, "Committed", team, "ri-m7i", status))
        day += dt.timedelta(days=1)
    path = tmp_path / "bill.csv"
    path.write_text("\n".join(lines) + "\n")
    with django_capture_on_commit_callbacks(execute=True):
        assert not import_files([path], fmt="focus").errors
    found = _build_review(make_request(**NOVEMBER))["anomalies"]
    assert found["items"] == [] and found["unused_commitments"] == []
    assert found["unused_non_gpu_commitments"] == [
        {
            "commitment_id": "ri-m7i",
            "days_unused": 5,
            "first_day": "2026-11-04",
            "last_day": "2026-11-08",
            "unused_cost": "15.00",  # 5 × 3.00
        }
    ]
