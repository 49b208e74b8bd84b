"""Commitment prices are stored observations with their upfront fee, hourly part and kind: idempotently,
from any source, each kind with its own "current" price."""

from __future__ import annotations

import dataclasses
from decimal import Decimal
from io import StringIO

import pytest
from django.core.management import call_command
from hypothesis import given
from hypothesis import strategies as st

from pricing.commitment_prices import cheapest_commitment_price, current_commitment_prices
from pricing.ingest import ingest_price_records
from pricing.models import Offer, PriceObservation
from pricing.providers.records import PriceRecord, SourceRowError
from pricing.selectors import offer_frame
from tests.pricing.commitment_fixtures import OBSERVED, P5, p5_records, store_p5_prices

pytestmark = pytest.mark.django_db


def _stored_rows():
    return set(
        PriceObservation.objects.filter(pricing_model__startswith="reserved").values_list(
            "pricing_model",
            "payment_option",
            "commitment_kind",
            "amount_per_hour",
            "upfront_amount",
            "recurring_per_hour",
        )
    )


def _it_stores_commitments_idempotently():
    first = ingest_price_records(p5_records())
    again = ingest_price_records(p5_records())
    assert (first.inserted, again.inserted, again.unchanged) == (8, 0, 8)
    assert _stored_rows() == {
        ("reserved_1y", "partial_upfront", "standard", Decimal("29.698630"), Decimal(120000), Decimal(16)),
        ("reserved_1y", "no_upfront", "standard", Decimal(34), Decimal(0), Decimal(34)),
        ("reserved_3y", "all_upfront", "standard", Decimal("19.025875"), Decimal(500000), Decimal(0)),
        ("reserved_1y", "no_upfront", "convertible", Decimal(38), Decimal(0), Decimal(38)),
    }
    on_demand = PriceObservation.objects.get(pricing_model="on_demand")
    assert (on_demand.commitment_kind, on_demand.upfront_amount, on_demand.recurring_per_hour) == (
        "",
        None,
        None,
    )


def test_it_stores_commitments_idempotently():
    _it_stores_commitments_idempotently()


def test_it_stores_commitments_idempotently_through_copy_on_postgresql(require_postgres):
    # the binary COPY, then the staging table's ON CONFLICT on the new natural key
    _it_stores_commitments_idempotently()


def test_each_kind_keeps_its_own_current_price():
    store_p5_prices()
    frame = offer_frame(gpu_mapped_only=False)  # no catalog loaded: "H100" maps to no GPU model here
    one_year_no_upfront = frame[
        (frame["pricing_model"] == "reserved_1y") & (frame["payment_option"] == "no_upfront")
    ]
    # standard and convertible are both current: neither hides the other
    assert dict(
        zip(one_year_no_upfront["commitment_kind"], one_year_no_upfront["price_per_hour"], strict=True)
    ) == {"standard": Decimal(34), "convertible": Decimal(38)}
    assert len(current_commitment_prices()) == 6


def test_a_record_without_its_hourly_part_gets_effective_minus_the_spread_fee():
    """An Azure reservation or a GCP commitment (market-live's readers) comes with the effective price and
    the fee only: recurring = effective - fee / term hours. 3 years all upfront: 19.025875 - 500000/26280
    = 19.025875 - 19.025875 = 0."""
    record = PriceRecord(
        P5,
        "eastus",
        "",
        "reserved_3y",
        Decimal("19.025875"),
        "USD",
        OBSERVED,
        "azure:retail-prices",
        payment_option="all_upfront",
        upfront_fee=Decimal(500000),
    )
    partial = dataclasses.replace(
        record,
        pricing_model="reserved_1y",
        price_per_hour=Decimal("29.698630"),
        payment_option="partial_upfront",
        upfront_fee=Decimal(120000),
    )
    ingest_price_records([record, partial])
    stored = dict(PriceObservation.objects.values_list("pricing_model", "recurring_per_hour"))
    # 29.698630 - 120000 / 8760 = 29.698630 - 13.698630 = 16.000000
    assert stored == {"reserved_3y": Decimal(0), "reserved_1y": Decimal(16)}


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"pricing_model": "on_demand"}, "upfront_fee"),  # a fee on a price that binds for no term
        ({"upfront_fee": Decimal(-1)}, "upfront_fee"),
        ({"recurring_per_hour": Decimal(31)}, "recurring_per_hour"),  # above the effective 29.698630
    ],
)
def test_a_bad_commitment_row_stops_the_batch_naming_the_field(change, field):
    good = p5_records()[2]
    with pytest.raises(SourceRowError, match=f"column '{field}'"):
        ingest_price_records([p5_records()[0], dataclasses.replace(good, **change)])
    assert not PriceObservation.objects.exists()


def test_the_cheapest_commitment_is_the_lowest_effective_price_of_the_term():
    store_p5_prices()
    one_year = cheapest_commitment_price(instance_type="p5.48xlarge", region="us-east-1", term_years=1)
    assert (one_year.pricing_model, one_year.payment_option, one_year.effective_per_hour) == (
        "reserved_1y",
        "partial_upfront",
        Decimal("29.698630"),
    )
    no_upfront = cheapest_commitment_price(
        instance_type="p5.48xlarge", region="us-east-1", term_years=1, payment_option="no_upfront"
    )
    assert (no_upfront.commitment_kind, no_upfront.effective_per_hour) == ("ec2_instance_sp", Decimal("33.5"))
    assert cheapest_commitment_price(instance_type="p5.48xlarge", region="eu-west-1") is None


def test_the_offer_page_shows_every_price_side_by_side_with_savings(viewer_client):
    offer = store_p5_prices()
    html = viewer_client.get(f"/offers/{offer.pk}/").content.decode()
    table = html.split('id="price-comparison"', 1)[1].split("</table>", 1)[0]
    rows = [row for row in table.split("<tr")[2:]]
    assert len(rows) == 8  # on-demand, spot in one zone, six commitments
    assert "On-demand" in rows[0] and "Spot" in rows[1] and "use1-az4" in rows[1]
    partial = next(row for row in rows if "Partial upfront" in row)
    # 1 - 29.698630 / 55.04 = 0.460417 -> 46.0%; per GPU 29.698630 / 8 = 3.7123
    assert "46.0%" in partial and "3.7123" in partial and "120,000.00 USD" in partial and "16.00" in partial
    three_year = next(row for row in rows if "Reserved 3 years" in row)
    assert "65.4%" in three_year  # 1 - 19.025875 / 55.04 = 0.654326
    assert "60.9%" in rows[1]  # spot: 1 - 21.5 / 55.04 = 0.609375
    assert "Convertible reservation" in table and "Compute Savings Plan" in table
    assert "EC2 Instance Savings Plan" in table and "observed" in partial


def test_the_spot_zone_offer_page_shows_its_regions_prices(viewer_client):
    store_p5_prices()
    zone = Offer.objects.get(zone="use1-az4")
    html = viewer_client.get(f"/offers/{zone.pk}/").content.decode()
    assert "Partial upfront" in html and "46.0%" in html


def test_the_demo_commitments_load_once_labelled_illustrative_beside_the_bundled_catalog(bundled_catalog):
    out = StringIO()
    call_command("load_demo_commitments", stdout=out)
    call_command("load_demo_commitments", stdout=out)
    assert (
        "14 commitment prices, 14 new" in out.getvalue()
        and "14 commitment prices, 0 new, 14 unchanged" in out.getvalue()
    )
    partial = PriceObservation.objects.get(
        offer__instance_type__name="p5.48xlarge",
        pricing_model="reserved_1y",
        payment_option="partial_upfront",
    )
    # 18.35 + 160,700 / 8,760 = 18.35 + 18.344749 = 36.694749
    assert (partial.amount_per_hour, partial.upfront_amount) == (Decimal("36.694749"), Decimal(160700))
    assert partial.source == "illustrative:aws_commitments_illustrative.json"
    frame = offer_frame()
    assert set(frame.loc[frame["pricing_model"] != "on_demand", "price_quality"]) >= {"illustrative"}
    # never picked on its own: the cheapest commitment lookup skips made-up prices
    assert cheapest_commitment_price(instance_type="p5.48xlarge", region="us-east-1") is None


@given(
    hourly=st.decimals(min_value=0, max_value=200, places=4),
    upfront=st.decimals(min_value=0, max_value=2_000_000, places=2),
    model=st.sampled_from(["reserved_1y", "reserved_3y", "savings_plan_1y", "savings_plan_3y"]),
)
def test_the_derived_hourly_part_gives_back_the_effective_price(hourly, upfront, model):
    """recurring = effective - upfront / term hours, so recurring + upfront / term hours is the effective
    price again, to the stored 6 decimals (plus the quantization of each part)."""
    from pricing.ingest import _commitment_parts

    hours = {"reserved_1y": 8760, "savings_plan_1y": 8760}.get(model, 26280)
    effective = (hourly + upfront / hours).quantize(Decimal("0.000001"))
    if effective <= 0:
        return
    record = PriceRecord(
        P5,
        "us-east-1",
        "",
        model,
        effective,
        "USD",
        OBSERVED,
        "test",
        payment_option="all_upfront",
        upfront_fee=upfront,
    )
    stored_upfront, recurring = _commitment_parts(record)
    assert stored_upfront == upfront
    assert abs(recurring + upfront / hours - effective) <= Decimal("0.000001")
    assert 0 <= recurring <= effective
