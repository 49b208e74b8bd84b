"""The study file: defaults, resolved GPU figures and offer prices, and errors named by field path."""

from decimal import Decimal

import pytest

from procurement.costing.tco_spec import OfferRef, RentPrice, parse_tco_study
from procurement.costing.values import CostInputError
from tests.procurement.costing.tco_fixtures import GPUS, study_document

D = Decimal


def _parse(document, **kwargs):
    return parse_tco_study(document, gpu_lookup=GPUS.get, **kwargs)


def _field_of_error(document, **kwargs):
    with pytest.raises(CostInputError) as error:
        _parse(document, **kwargs)
    return error.value.field


def test_it_takes_tdp_from_the_gpu_catalog():
    assert _parse(study_document()).buy.gpu_tdp_w == D(700)  # gpu_specs.csv: H100 SXM5 TDP 700 W


def test_it_prices_a_server_from_the_gpu_list_price_and_the_uplift_when_none_is_given():
    # 8 x 33800 (gpu_specs.csv list price) x (1 + 0.30 uplift) = 351520
    study = _parse(study_document(buy__server_price=None))
    assert study.buy.server_price == D("351520.00")


def test_it_fills_documented_defaults():
    minimal = {
        "currency": "USD",
        "utilization": "0.8",
        "buy": {"gpu": "h100-sxm5-80gb"},
        "rent": {"price_per_gpu_hour": 3},
    }
    study = _parse(minimal)
    assert (study.horizon_months, study.discount_rate_annual, study.rent.pricing_model) == (
        36,
        D("0.08"),
        "on_demand",
    )
    assert (study.buy.pue, study.buy.colocation_per_kw_month, study.buy.depreciation_years) == (
        D("1.58"),
        D(184),
        5,
    )
    assert study.buy.server_overhead_kw == D("4.600")  # 8 GPU slots x 0.575 kW


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"horizon_months": 0}, "horizon_months"),
        ({"utilization": "1.2"}, "utilization"),
        ({"utilization": "0"}, "utilization"),
        ({"buy__average_load": "1.5"}, "buy.average_load"),
        ({"buy__server_price": "-1"}, "buy.server_price"),
        ({"buy__pue": "0.9"}, "buy.pue"),
        ({"buy__servers": "1.5"}, "buy.servers"),
        ({"buy__gpu": "h999"}, "buy.gpu"),
        ({"buy__sever_price": "1"}, "buy.sever_price"),
        ({"rent__price_per_gpu_hour": "-2"}, "rent.price_per_gpu_hour"),
        ({"rent__pricing_model": "lease"}, "rent.pricing_model"),
        ({"rent__price_per_gpu_hour": None}, "rent.price_per_gpu_hour"),
        ({"currency": "dollars"}, "currency"),
        ({"buy": None}, "buy"),
        ({"currency": "EUR", "buy__electricity_per_kwh": None}, "buy.electricity_per_kwh"),
    ],
)
def test_it_names_the_field_of_a_bad_value(changes, field):
    assert _field_of_error(study_document(**changes)) == field


def test_it_suggests_the_field_a_typo_meant():
    with pytest.raises(CostInputError, match="did you mean 'server_price'"):
        _parse(study_document(buy__sever_price="1"))


def _offer_document(model="on_demand"):
    offer = {"provider": "aws", "instance_type": "p5.48xlarge", "region": "us-east-1"}
    return study_document(rent__price_per_gpu_hour=None, rent__offer=offer, rent__pricing_model=model)


def _lookup(offer: OfferRef, model: str):
    prices = {"on_demand": D("6.88"), "spot": D("2.50")}
    if offer.instance_type != "p5.48xlarge" or model not in prices:
        return None
    return RentPrice(prices[model], "USD", "2026-11-01T00:00:00+00:00", "skypilot:aws/vms.gpu.csv")


def test_it_resolves_an_offer_and_keeps_the_price_timestamp():
    rent = _parse(_offer_document(), offer_lookup=_lookup).rent
    assert (rent.price_per_gpu_hour, rent.price_observed_at) == (D("6.88"), "2026-11-01T00:00:00+00:00")


def test_it_converts_an_offer_price_with_an_explicit_fx_rate():
    document = _offer_document() | {"currency": "EUR"}
    document["buy"] |= {
        "electricity_per_kwh": "0.2",
        "colocation_per_kw_month": "170",
        "fte_cost_per_year": "90000",
    }
    rent = _parse(document, offer_lookup=_lookup, fx_rates={("USD", "EUR"): D("0.9")}).rent
    assert rent.price_per_gpu_hour == D("6.192")  # 6.88 USD x 0.9


def test_it_refuses_a_currency_without_an_fx_rate():
    document = _offer_document() | {"currency": "EUR"}
    document["buy"] |= {
        "electricity_per_kwh": "0.2",
        "colocation_per_kw_month": "170",
        "fte_cost_per_year": "90000",
    }
    with pytest.raises(
        CostInputError, match=r"no FX rate from USD to EUR \(needed for rent.offer\)"
    ) as error:
        _parse(document, offer_lookup=_lookup)
    assert error.value.field == "currency"


def test_it_refuses_an_offer_without_a_current_price():
    with pytest.raises(CostInputError, match="no current reserved_3y price") as error:
        _parse(_offer_document("reserved_3y"), offer_lookup=_lookup)
    assert error.value.field == "rent.offer"


def test_it_keeps_the_resolved_inputs_as_plain_json():
    document = _offer_document("spot_mix")
    document["rent"]["spot_fraction"] = "0.5"
    stored = _parse(document, offer_lookup=_lookup).as_dict()
    assert stored["rent"]["spot_price_per_gpu_hour"] == "2.50"
    assert stored["rent"]["offer"] == {
        "provider": "aws",
        "instance_type": "p5.48xlarge",
        "region": "us-east-1",
    }
    assert stored["buy"]["gpu_tdp_w"] == "700"
