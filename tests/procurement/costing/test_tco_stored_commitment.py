"""The rent-or-buy study compares against a stored commitment of its offer as a third option, and says
which stored price it read (id, payment option, kind, upfront fee).

The worked example (tco_fixtures.py): one 8 x H100 server over 36 months at full use, so a commitment is
paid for 8 GPUs x 730 h x 36 months = 210,240 GPU-hours."""

from __future__ import annotations

import pytest

from procurement.costing.tco import run_tco, tco_report
from procurement.costing.tco_spec import parse_tco_study
from procurement.services.tco import OfferPriceRecorder
from tests.pricing.commitment_fixtures import price_id, store_p5_prices
from tests.procurement.costing.tco_fixtures import GPUS, study_document

pytestmark = pytest.mark.django_db
OFFER = {"provider": "aws", "instance_type": "p5.48xlarge", "region": "us-east-1"}


def reserved_section(reserved: dict) -> dict:
    document = study_document(rent__price_per_gpu_hour=None)
    document["rent"]["offer"] = OFFER
    document["rent"]["reserved_alternative"] = reserved
    study = parse_tco_study(document, gpu_lookup=GPUS.get, offer_lookup=OfferPriceRecorder())
    return tco_report(run_tco(study))["reserved_alternative"]


def test_it_compares_against_the_stored_three_year_commitment():
    store_p5_prices()
    reserved = reserved_section({"pricing_model": "reserved_3y"})
    # 500,000 upfront / 26,280 h = 19.025875 an instance-hour / 8 GPUs = 2.378234375 a GPU-hour
    assert reserved["price_per_gpu_hour"] == "2.378234"
    assert (
        reserved["total"] == "500000.00"
    )  # 210,240 GPU-hours x 2.378234375 = 499,999.99 to the cent: 500,000.00
    assert (reserved["price_id"], reserved["payment_option"], reserved["commitment_kind"]) == (
        price_id("reserved_3y", "all_upfront", "standard"),
        "all_upfront",
        "standard",
    )
    assert reserved["upfront_per_gpu"] == "62500.00"  # 500,000 / 8
    assert reserved["price_source"] == "aws:pricing.get_products"


def test_a_payment_option_picks_that_commitment():
    store_p5_prices()
    reserved = reserved_section({"pricing_model": "reserved_1y", "payment_option": "no_upfront"})
    # the standard 1-year no-upfront reservation at 34.00 / 8 = 4.25 (the convertible one costs 38.00)
    assert (reserved["price_per_gpu_hour"], reserved["total"]) == ("4.250000", "893520.00")  # 210,240 x 4.25
    assert reserved["commitment_kind"] == "standard"


def test_an_all_upfront_reservation_is_paid_at_signing_not_spread():
    """Issue 27: the 3-year all-upfront p5 reservation (500,000 an instance, 62,500 a GPU) is cash in month
    0, so its NPV is the fee itself (month 0 is not discounted); spread evenly over 36 months at the
    worked example's 8% a year it would have been worth less: sum of 500,000 / 36 / 1.08^(m / 12)."""
    store_p5_prices()
    reserved = reserved_section({"pricing_model": "reserved_3y"})
    assert (reserved["total"], reserved["npv"]) == ("500000.00", "500000.00")
    spread = sum(500_000 / 36 / 1.08 ** (month / 12) for month in range(1, 37))
    assert spread < 500_000 - 40_000  # 443,8xx: the even spreading understated the cost by some 56,000
    # a no-upfront reservation has nothing to pay at signing: the same every month
    no_upfront = reserved_section({"pricing_model": "reserved_1y", "payment_option": "no_upfront"})
    assert no_upfront["total"] == "893520.00"
