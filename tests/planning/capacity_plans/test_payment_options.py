"""Issue 27 item 6 through the API: stored commitment prices reach the plan with their upfront fee and
their payment options; the plan takes the option of lowest NPV, shows each, and states how.

The bill: two p5.48xlarge running all of September 2026 (16 H100 GPUs, flat), at AWS's on-demand list
price 55.04 USD/h (pricing/data/skypilot/aws/vms.gpu.csv line 2177). Three 3-year standard reservations
of p5.48xlarge us-east-1 are stored as an AWS price reader would (an observed source), one per payment
option the AWS docs name (No, Partial, All Upfront: docs.aws.amazon.com/AWSEC2/latest/UserGuide/
reserved-instances-payment-options...). The rates are round figures the test states, not AWS's: the test
checks the cash timing and the choice, by hand.
- no upfront: 27.00 USD an instance-hour (3.375 a GPU-hour), nothing at signing;
- partial upfront: 315,360.00 at signing (39,420 a GPU) and 12.00 an hour (1.50 a GPU-hour): effective
  12.00 + 315,360 / 26,280 = 24.00 (3.00 a GPU-hour);
- all upfront: 604,440.00 at signing (75,555 a GPU): effective 23.00 (2.875 a GPU-hour), the cheapest
  effective price, which the plan took before this change, paid evenly over 36 months.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from io import StringIO

import pytest

from pricing.models import Offer, PriceObservation
from tests.planning.outside import capacity_plan_bills as bills

pytestmark = pytest.mark.django_db

D = Decimal
NO_OWNING = {"gpu": "h100-sxm5-80gb", "server_price": "5000000"}  # a server no one would buy
STUDY = {
    "name": "payment options",
    "discount_rate_annual": "0.08",
    "tax_rate": "0.21",
    "buy": NO_OWNING,
    "rent": {"pricing_model": "on_demand", "price_per_gpu_hour": "6.88"},
}


def annuity(payment: float, rate_annual: float, months: int) -> float:
    monthly = (1 + rate_annual) ** (1 / 12) - 1
    return payment * (1 - (1 + monthly) ** -months) / monthly


def _store_reservations() -> None:
    offer = Offer.objects.get(
        instance_type__provider__slug="aws",
        instance_type__name="p5.48xlarge",
        region__code="us-east-1",
        zone="",
    )
    observed = dt.datetime(2026, 10, 1, tzinfo=dt.UTC)
    for payment, effective, upfront, recurring in (
        ("no_upfront", "27.00", None, "27.00"),
        ("partial_upfront", "24.00", "315360.00", "12.00"),
        ("all_upfront", "23.00", "604440.00", "0"),
    ):
        PriceObservation.objects.create(
            offer=offer,
            pricing_model="reserved_3y",
            payment_option=payment,
            commitment_kind="standard",
            amount_per_hour=D(effective),
            upfront_amount=None if upfront is None else D(upfront),
            recurring_per_hour=D(recurring),
            currency="USD",
            observed_at=observed,
            source="aws:pricing-api (test)",
        )


def test_the_plan_pays_the_partial_upfront_at_signing_and_shows_every_option(
    bundled_catalog, tmp_path, client_as
):
    _store_reservations()
    bills.import_bill(tmp_path, bills.p5(2))
    response = client_as("finance").post(
        "/api/capacity-plans/", bills.PERIOD | {"trials": 20, "study": STUDY}, content_type="application/json"
    )
    assert response.status_code == 200, response.content
    plan = response.json()
    layers = {layer["kind"]: layer for layer in plan["layers"]}
    assert layers["committed_3y"]["gpus"] == 16
    (section,) = [item for item in plan["payment_options"] if item["kind"] == "committed_3y"]
    # at 8% a year, per GPU: no upfront 2,463.75 a month = 78,946.76; partial 39,420 + 1,095 a month
    # = 74,507.45; all upfront 75,555.00: partial wins although all upfront has the lowest effective price
    assert section["chosen"] == "partial_upfront"
    options = {option["payment_option"]: option for option in section["options"]}
    assert float(options["no_upfront"]["npv"]) == pytest.approx(16 * annuity(2463.75, 0.08, 36), abs=0.01)
    assert float(options["partial_upfront"]["npv"]) == pytest.approx(
        16 * (39420 + annuity(1095, 0.08, 36)), abs=0.01
    )
    assert options["all_upfront"]["npv"] == "1208880.00"  # 16 x 75,555, paid now
    # cash by year of the chosen option: 16 x 39,420 = 630,720 at signing + 12 x 17,520; then 210,240 a year
    assert options["partial_upfront"]["cash_by_year"] == ["840960.00", "210240.00", "210240.00"]
    assert options["partial_upfront"]["upfront_cash_month_0"] == "630720.00"
    assert options["partial_upfront"]["total"] == "1261440.00"  # = 16 x 3.00 x 26,280
    # the layer is the chosen option's cash, and the plan's year 1 carries the fee
    assert layers["committed_3y"]["cost_by_year"] == ["840960.00", "210240.00", "210240.00"]
    assert float(plan["npv"]) == pytest.approx(16 * (39420 + annuity(1095, 0.08, 36)), abs=0.05)
    # paying everything upfront is worth it only below the rate its saving implies: 2,463.75 - 0 a month
    # for 36 months against 75,555 now: 11.2684% a year by the annuity formula (bisection by hand)
    assert float(options["all_upfront"]["implied_rate_vs_no_upfront"]) == pytest.approx(0.112684, abs=2e-6)
    # after tax at 21% (no owned servers: every layer is rent, deducted when paid)
    assert plan["after_tax"]["tax_rate"] == "0.21"
    assert D(plan["after_tax"]["total_cost"]) == (D(plan["total_cost"]) * D("0.79")).quantize(D("0.01"))
    assert plan["owned_tranches"] == []
    names = {item["name"] for item in plan["assumptions"]}
    assert {"commitment payment options", "owned tranches", "after-tax NPV", "lead_time_months"} <= names
    stored = {price["kind"]: price for price in plan["prices"]}
    assert stored["committed_3y"]["payment_option"] == "all_upfront"  # the cheapest effective, found first
    assert D(stored["committed_3y"]["upfront_per_gpu"]) == D("75555")  # 604,440 / 8 GPUs
    assert {price["payment_option"] for price in stored["committed_3y"]["alternatives"]} == {
        "no_upfront",
        "partial_upfront",
    }


def test_a_lead_time_out_of_range_is_refused_naming_the_field(client_as):
    response = client_as("finance").post(
        "/api/capacity-plans/", bills.PERIOD | {"lead_time_months": 30}, content_type="application/json"
    )
    assert response.status_code == 400
    assert "lead_time_months" in response.content.decode()


def test_the_page_and_the_pdf_show_the_options_the_tranches_and_the_tax(bundled_catalog, tmp_path, client_as):
    """The stored plan's page and PDF carry the same figures as its JSON (to the cent)."""
    import pypdf
    from django.core.management import call_command

    _store_reservations()
    bills.import_bill(tmp_path, bills.p5(2))
    client = client_as("finance")
    response = client.post(
        "/api/capacity-plans/",
        bills.PERIOD | {"trials": 20, "study": STUDY, "save": True},
        content_type="application/json",
    )
    assert response.status_code == 201, response.content
    plan = response.json()
    page = client.get(f"/plans/{plan['id']}/").content.decode()
    assert 'id="plan-payment-options"' in page and "630,720.00 USD" in page
    after = plan["after_tax"]
    assert f"{D(after['npv']):,.2f} USD" in page
    path = tmp_path / "plan.pdf"
    call_command(
        "report",
        "capacity_plan",
        "--id",
        str(plan["id"]),
        "--format",
        "pdf",
        "--output",
        str(path),
        stdout=StringIO(),
    )
    text = "\n".join(page.extract_text() for page in pypdf.PdfReader(path).pages)
    assert "Commitment payment options" in text and "partial_upfront (chosen)" in text
    assert "630,720.00" in text and f"{D(after['npv']):,.2f}" in text


def test_the_command_takes_a_lead_time_and_names_its_flag_when_bad(bundled_catalog, tmp_path):
    import json

    from django.core.management import CommandError, call_command

    bills.import_bill(tmp_path, bills.p5(2))
    args = ["capacity_plan", "--from", "2026-09-01", "--to", "2026-09-29", "--trials", "20"]
    with pytest.raises(CommandError, match="--lead-time-months"):
        call_command(*args, "--lead-time-months", "25", stdout=StringIO(), stderr=StringIO())
    out = StringIO()
    call_command(*args, "--lead-time-months", "6", "--format", "json", stdout=out, stderr=StringIO())
    plan = json.loads(out.getvalue())
    assert {"name": "lead_time_months", "value": "6", "source": "asked"} in plan["assumptions"]
