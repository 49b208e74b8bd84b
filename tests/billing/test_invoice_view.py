"""The invoice view (issue 28, item 4): billed and effective cost by provider and billing period, each
kind of charge its own line, so that the review ties to the invoice; corrections to a closed billing
period flagged.

1. The FOCUS 1.2 appendix's "AWS Savings Plan - All Upfront - 50% Utilization" scenario as this project
   rebuilt it (tests/billing/fixtures/focus12_ec2_instance_savings_plan_50pct.csv, SOURCES.md there),
   February 2026, by hand from the file: one Purchase billed 693,003.60 (79.11 an hour × 8,760 hours of
   the one-year term) with EffectiveCost 0; 12 Used and 12 Unused hours at 79.11 (effective 949.32
   each, billed 0); 3 on-demand hours billed and effective 11.52. Invoice: usage billed 11.52,
   effective 1,910.16; purchases billed 693,003.60, effective 0.00; billed total 693,015.12.
2. A correction billed in February of a January charge (FOCUS ChargeClass Correction).
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from pathlib import Path

import pytest

from billing.imports.importer import import_file
from billing.models import SpendGrant
from billing.review.service import _build_review, make_request
from tests.billing.catalog import make_catalog

pytestmark = pytest.mark.django_db
FIXTURES = Path(__file__).parent / "fixtures"
HEADER = (
    "BillingPeriodStart,ChargePeriodStart,ChargePeriodEnd,ChargeCategory,ChargeClass,BilledCost,EffectiveCost,"
    "BillingCurrency,ProviderName,ServiceCategory,ConsumedQuantity,ConsumedUnit,x_UsageType"
)


def invoice(client, query="from=2026-01&to=2026-03"):
    response = client.get(f"/billing/invoice/?{query}&format=json")
    assert response.status_code == 200, response.content
    return response.json()


def test_the_focus_savings_plan_scenario_ties_the_invoice_to_the_review(client_as):
    make_catalog()
    import_file(FIXTURES / "focus12_ec2_instance_savings_plan_50pct.csv")
    view = invoice(client_as("finance"))
    assert view["invoices"] == [
        {
            "provider": "aws",
            "billing_period": "2026-02",
            "currency": "USD",
            "lines": [
                {"line": "usage", "label": "Usage", "billed_cost": "11.52", "effective_cost": "1910.16"},
                {
                    "line": "purchase",
                    "label": "Purchases (upfront and recurring commitment fees)",
                    "billed_cost": "693003.60",
                    "effective_cost": "0.00",
                },
            ],
            "billed_total": "693015.12",
            "effective_total": "1910.16",
        }
    ]
    assert view["closed_period_corrections"] == []
    # the review of the same month counts every effective dollar once, in one of its four places
    review = _build_review(make_request(start=dt.date(2026, 2, 1), end=dt.date(2026, 3, 1)))
    counted = sum(
        Decimal(value)
        for value in (
            review["totals"]["effective_cost"],
            review["non_gpu_cost"],
            review["unattributed_commitment_cost"],
            review["undetermined_cost"],
        )
    )
    assert counted == Decimal("1910.16")


def test_a_correction_to_a_closed_billing_period_is_flagged(client_as, tmp_path):
    make_catalog()
    path = tmp_path / "bill.csv"
    path.write_text(
        "\n".join(
            [
                HEADER,
                # January: 100.00 of usage and a 7.00 tax; February: 50.00 of usage and a -20.00 correction of
                # a January charge (credited on February's invoice), and a 5.00 credit
                "2026-01-01T00:00:00Z,2026-01-15T00:00:00Z,2026-01-16T00:00:00Z,Usage,,100.00,100.00,USD,AWS,Storage,,,",
                "2026-01-01T00:00:00Z,2026-01-31T00:00:00Z,2026-02-01T00:00:00Z,Tax,,7.00,7.00,USD,AWS,,,,",
                "2026-02-01T00:00:00Z,2026-02-03T00:00:00Z,2026-02-04T00:00:00Z,Usage,,50.00,50.00,USD,AWS,Storage,,,",
                "2026-02-01T00:00:00Z,2026-01-15T00:00:00Z,2026-01-16T00:00:00Z,Usage,Correction,-20.00,-20.00,USD,AWS,Storage,,,",
                "2026-02-01T00:00:00Z,2026-02-10T00:00:00Z,2026-02-11T00:00:00Z,Credit,,-5.00,-5.00,USD,AWS,,,,",
            ]
        )
        + "\n"
    )
    assert import_file(path).rejected == 0
    view = invoice(client_as("finance"))
    january, february = view["invoices"]
    assert [(line["line"], line["billed_cost"]) for line in january["lines"]] == [
        ("usage", "100.00"),
        ("tax", "7.00"),
    ]
    assert january["billed_total"] == "107.00"
    assert [(line["line"], line["billed_cost"]) for line in february["lines"]] == [
        ("usage", "50.00"),
        ("credit", "-5.00"),
        ("correction", "-20.00"),
    ]
    assert february["billed_total"] == "25.00"  # 50 - 5 - 20
    assert view["closed_period_corrections"] == [
        {
            "provider": "aws",
            "billing_period": "2026-02",
            "corrects_period": "2026-01",
            "currency": "USD",
            "rows": 1,
            "billed_cost": "-20.00",
            "effective_cost": "-20.00",
        }
    ]
    # the review sums by charge period: January is 100 + 7 - 20 = 87.00, the invoice's 107.00 less the
    # flagged correction billed in February
    review = _build_review(make_request(start=dt.date(2026, 1, 1), end=dt.date(2026, 2, 1)))
    assert review["non_gpu_cost"] == "87.00"
    page = client_as("finance").get("/billing/invoice/?from=2026-01&to=2026-03")
    assert (
        page.status_code == 200
        and b'<tr class="flagged"><td>aws</td><td>2026-02</td><td>2026-01</td>' in page.content
    )


def test_bad_months_name_the_field(client_as):
    client = client_as("finance")
    response = client.get("/billing/invoice/?from=2026-13&format=json")
    assert response.status_code == 400 and response.json()["errors"][0]["path"] == "from"
    response = client.get("/billing/invoice/?from=2026-03&to=2026-01&format=json")
    assert response.status_code == 400 and response.json()["errors"][0]["path"] == "to"


@pytest.mark.parametrize("role", ["viewer", "engineer"])
def test_only_finance_and_admin_see_invoices(client_as, role):
    assert client_as(role).get("/billing/invoice/").status_code == 403


def test_a_granted_engineer_does_not_see_the_whole_accounts_invoice(client_as, team_named, user_with_role):
    research = team_named("research")
    SpendGrant.objects.create(team=research, granted_by=user_with_role("admin"))
    assert client_as("engineer", team=research).get("/billing/invoice/").status_code == 403


def test_anonymous_is_sent_to_login(client):
    assert client.get("/billing/invoice/").status_code == 302


@pytest.mark.parametrize("role", ["finance", "admin"])
def test_finance_and_admin_reach_the_page(client_as, role):
    assert client_as(role).get("/billing/invoice/").status_code == 200


def test_a_cur_refund_is_its_own_line_and_a_reimport_adds_nothing(client_as, tmp_path):
    # AWS CUR 2.0 line types (CUR data dictionary, line_item_line_item_type): Usage 300.00, Tax 30.00,
    # Credit -12.00, Refund -45.00 (a refund of an earlier charge), all billed in March 2026
    make_catalog()
    header = (
        "bill_billing_period_start_date,line_item_usage_start_date,line_item_usage_end_date,"
        "line_item_line_item_type,line_item_usage_type,line_item_unblended_cost,line_item_currency_code"
    )
    lines = [
        ("Usage", "USE1-EBS:VolumeUsage.gp3", "300.00"),
        ("Tax", "", "30.00"),
        ("Credit", "", "-12.00"),
        ("Refund", "", "-45.00"),
    ]
    rows = [
        f"2026-03-01T00:00:00Z,2026-03-02T00:00:00Z,2026-03-03T00:00:00Z,{kind},{usage},{cost},USD"
        for kind, usage, cost in lines
    ]
    path = tmp_path / "cur.csv"
    path.write_text("\n".join([header, *rows]) + "\n")
    assert import_file(path, fmt="cur", provider="aws").inserted == 4
    assert import_file(path, fmt="cur", provider="aws").inserted == 0  # is_refund is not in the row key
    (march,) = invoice(client_as("finance"), "from=2026-03&to=2026-04")["invoices"]
    assert [(line["line"], line["billed_cost"]) for line in march["lines"]] == [
        ("usage", "300.00"),
        ("tax", "30.00"),
        ("credit", "-12.00"),
        ("refund", "-45.00"),
    ]
    assert march["billed_total"] == "273.00"  # 300 + 30 - 12 - 45


def test_a_focus_refund_is_its_own_line_and_a_promotional_credit_is_not_one(client_as, tmp_path):
    # FOCUS 1.0-1.2 have no refund column: ChargeCategory Usage, Purchase and Tax are "positive or negative
    # charges ... including refunds", Credit is what the provider grants (FOCUS_Spec
    # specification/columns/chargecategory.md); a refund of an already invoiced period also carries
    # ChargeClass "Correction" (chargeclass.md), the invoice's correction line, flagged with its period.
    # March 2026, by hand: usage 300.00, tax 30.00, a promotional credit -12.00, a refund of a one-time
    # reservation purchase -1,200.00 (billed; effective 0, as the purchase's own effective cost was: its
    # usage lines amortize it), a tax refund -3.00 and a correction of a February usage charge -20.00.
    make_catalog()
    header = (
        "BillingAccountId,BillingPeriodStart,ChargePeriodStart,ChargePeriodEnd,ChargeCategory,ChargeClass,"
        "ChargeFrequency,ChargeDescription,CommitmentDiscountId,CommitmentDiscountType,BilledCost,"
        "EffectiveCost,BillingCurrency,ProviderName,ServiceCategory,x_UsageType"
    )
    march, day = "2026-03-01T00:00:00Z", "2026-03-10T00:00:00Z,2026-03-11T00:00:00Z"
    reservation = "/providers/Microsoft.Capacity/reservationOrders/ro-1/reservations/r-1"
    rows = [
        f"acct-1,{march},{day},Usage,,Usage-Based,Storage,,,300.00,300.00,USD,AWS,Storage,",
        f"acct-1,{march},{day},Tax,,Recurring,Sales tax,,,30.00,30.00,USD,AWS,,",
        f"acct-1,{march},{day},Credit,,One-Time,Promotional credit,,,-12.00,-12.00,USD,AWS,,",
        f"acct-1,{march},{day},Purchase,,One-Time,Reservation refund,{reservation},Reservation,-1200.00,0,"
        "USD,AWS,Compute,",
        f"acct-1,{march},{day},Tax,,Recurring,Sales tax refund,,,-3.00,-3.00,USD,AWS,,",
        f"acct-1,{march},2026-02-15T00:00:00Z,2026-02-16T00:00:00Z,Usage,Correction,Usage-Based,Re-rated,,,"
        "-20.00,-20.00,USD,AWS,Storage,",
    ]
    path = tmp_path / "focus_refunds.csv"
    path.write_text("\n".join([header, *rows]) + "\n")
    assert import_file(path).rejected == 0
    (bill,) = invoice(client_as("finance"), "from=2026-03&to=2026-04")["invoices"]
    assert [(line["line"], line["billed_cost"], line["effective_cost"]) for line in bill["lines"]] == [
        ("usage", "300.00", "300.00"),
        ("tax", "30.00", "30.00"),
        ("credit", "-12.00", "-12.00"),
        ("refund", "-1203.00", "-3.00"),  # the reservation's -1,200.00 and the tax's -3.00
        ("correction", "-20.00", "-20.00"),
    ]
    assert bill["billed_total"] == "-905.00"  # 300 + 30 - 12 - 1200 - 3 - 20
