"""Issue 5's bad-input rules, each through the command line and the API: a clear error naming the field
(or the flag a person typed), and nothing stored.

Rules: negative hours, negative prices, utilization outside 0-1, a horizon of 0, an unknown offer or GPU
model (and unknown provider/region filters), a currency without an FX rate.
"""

import re
from io import StringIO

import pytest
import yaml
from django.core.management import CommandError, call_command

from procurement.models import Recommendation, TcoStudy, Workload
from tests.procurement.costing.tco_fixtures import study_document

WORKLOAD = {"name": "q", "task": "qlora", "model": {"preset": "llama-3.1-8b"}, "training_tokens": 1e9}
P5 = {"provider": "aws", "instance_type": "p5.48xlarge", "region": "us-east-1"}


def _run(*args) -> str:
    out = StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


def _file(tmp_path, document, name="input.yaml") -> str:
    path = tmp_path / name
    path.write_text(yaml.safe_dump(document))
    return str(path)


def _nothing_stored() -> bool:
    return not (Workload.objects.exists() or Recommendation.objects.exists() or TcoStudy.objects.exists())


def _tco_cli_error(tmp_path, document, match: str) -> None:
    with pytest.raises(CommandError, match=match):
        _run("tco", _file(tmp_path, document), "--save")
    assert _nothing_stored()


def _one_shape(body: dict) -> dict:
    """Every API error is {"errors": [{"path", "message"}]} and nothing else (gpuledger/api_errors.py);
    the first entry, for the checks of path and message below."""
    assert set(body) == {"errors"}, body
    return body["errors"][0]


def _tco_api_error(engineer_client, document) -> dict:
    response = engineer_client.post("/api/tco/", document, content_type="application/json")
    assert response.status_code == 400 and _nothing_stored()
    return _one_shape(response.json())


def _recommend_cli_error(tmp_path, match: str, *args) -> None:
    with pytest.raises(CommandError, match=match):
        _run("recommend", _file(tmp_path, WORKLOAD), "--format", "json", "--save", *args)
    assert _nothing_stored()


def _recommend_api_error(engineer_client, **options) -> dict:
    body = {"workload": WORKLOAD} | options
    response = engineer_client.post("/api/recommendations/", body, content_type="application/json")
    assert response.status_code == 400 and _nothing_stored()
    return _one_shape(response.json())


# --- negative hours ------------------------------------------------------------------------------------


def test_it_refuses_negative_hours_on_the_command_line(tmp_path, db):
    with pytest.raises(CommandError, match="--hours: must not be negative, got -1"):
        _run("job_cost", "--price-per-hour", "2", "--hours", "-1", "--currency", "USD")
    _recommend_cli_error(tmp_path, "--deadline-hours: must not be negative, got -5", "--deadline-hours", "-5")


def test_it_refuses_negative_hours_through_the_api(engineer_client, db):
    assert _recommend_api_error(engineer_client, deadline_hours=-5) == {
        "path": "deadline_hours",
        "message": "must not be negative, got -5",
    }


# --- negative prices -----------------------------------------------------------------------------------


def test_it_refuses_negative_prices_on_the_command_line(tmp_path, h100):
    with pytest.raises(CommandError, match="--price-per-hour: must not be negative, got -2"):
        _run("job_cost", "--price-per-hour", "-2", "--hours", "1", "--currency", "USD")
    with pytest.raises(CommandError, match="--on-demand: must be greater than 0, got -1"):
        _run("commitments", "--on-demand", "-1", "--reserved-effective", "1", "--utilization-profile", "1")
    document = study_document(rent__price_per_gpu_hour="-1")
    _tco_cli_error(tmp_path, document, r"rent\.price_per_gpu_hour: must be greater than 0, got -1")
    _tco_cli_error(tmp_path, study_document(buy__server_price="-300000"), r"buy\.server_price: must not be")


def test_it_refuses_negative_prices_through_the_api(engineer_client, h100):
    body = _tco_api_error(engineer_client, study_document(rent__price_per_gpu_hour="-1"))
    assert body == {"path": "rent.price_per_gpu_hour", "message": "must be greater than 0, got -1"}
    assert (
        _tco_api_error(engineer_client, study_document(buy__server_price="-1"))["path"] == "buy.server_price"
    )


# --- utilization outside 0-1 ---------------------------------------------------------------------------


@pytest.mark.parametrize("utilization", ["1.2", "0", "-0.1"])
def test_it_refuses_a_utilization_outside_0_to_1_on_the_command_line(tmp_path, h100, utilization):
    document = study_document(utilization=utilization)
    _tco_cli_error(
        tmp_path, document, f"utilization: must be greater than 0 and at most 1, got {utilization}"
    )


@pytest.mark.parametrize("utilization", ["1.2", "0", "-0.1"])
def test_it_refuses_a_utilization_outside_0_to_1_through_the_api(engineer_client, h100, utilization):
    assert _tco_api_error(engineer_client, study_document(utilization=utilization))["path"] == "utilization"


def test_it_refuses_shares_outside_0_to_1_in_the_job_audit():
    # the rerun budget is a share of compute (0.2 = 20%); 1.5 is a typo, not a 150% budget
    with pytest.raises(CommandError, match="--rerun-fraction: must be between 0 and 1, got 1.5"):
        _run(
            "job_cost",
            "--price-per-hour",
            "2",
            "--hours",
            "1",
            "--rerun-fraction",
            "1.5",
            "--currency",
            "USD",
        )


# --- a horizon of 0 ------------------------------------------------------------------------------------


def test_it_refuses_a_horizon_of_0_on_the_command_line_and_through_the_api(tmp_path, engineer_client, h100):
    match = "horizon_months: must be a whole number of at least 1, got 0"
    _tco_cli_error(tmp_path, study_document(horizon_months=0), match)
    assert _tco_api_error(engineer_client, study_document(horizon_months=0)) == {
        "path": "horizon_months",
        "message": "must be a whole number of at least 1, got 0",
    }


# --- unknown offer, GPU model, provider, region --------------------------------------------------------


def _rent_from(offer):
    return study_document(rent__price_per_gpu_hour=None, rent__offer=offer)


def test_it_names_an_unknown_offer_on_the_command_line(tmp_path, bundled_catalog):
    unknown_type = _rent_from(P5 | {"instance_type": "p9.48xlarge"})
    _tco_cli_error(
        tmp_path,
        unknown_type,
        r"rent\.offer\.instance_type: unknown offer aws/p9\.48xlarge/us-east-1: aws has no instance type 'p9\.48xlarge'",
    )
    _tco_cli_error(tmp_path, _rent_from(P5 | {"provider": "awz"}), r"rent\.offer\.provider: unknown offer")
    _tco_cli_error(tmp_path, _rent_from(P5 | {"region": "mars-1"}), "aws has no region 'mars-1'")
    # A real offer without a price of the asked model is a different error, and says so
    reserved = study_document(
        rent__price_per_gpu_hour=None, rent__offer=P5, rent__pricing_model="reserved_3y"
    )
    _tco_cli_error(tmp_path, reserved, "rent.offer: no current reserved_3y price for offer aws/p5.48xlarge")


def test_it_names_an_unknown_offer_through_the_api(engineer_client, bundled_catalog):
    body = _tco_api_error(engineer_client, _rent_from(P5 | {"instance_type": "p9.48xlarge"}))
    assert body["path"] == "rent.offer.instance_type" and body["message"].startswith("unknown offer")


def test_it_names_an_unknown_gpu_model_on_the_command_line(tmp_path, bundled_catalog):
    _tco_cli_error(tmp_path, study_document(buy__gpu="h999"), r"buy\.gpu: unknown GPU model 'h999'")
    _recommend_cli_error(tmp_path, "--gpu: unknown GPU model 'h100-sxm-80gb'", "--gpu", "h100-sxm-80gb")


def test_it_names_an_unknown_gpu_model_through_the_api(engineer_client, bundled_catalog):
    assert _tco_api_error(engineer_client, study_document(buy__gpu="h999"))["path"] == "buy.gpu"
    body = _recommend_api_error(engineer_client, gpus=["h100-sxm-80gb"])
    assert body == {
        "path": "gpus",
        "message": "unknown GPU model 'h100-sxm-80gb' (did you mean 'h100-sxm5-80gb'?)",
    }


def test_it_names_unknown_provider_and_region_filters_on_the_command_line(tmp_path, bundled_catalog):
    _recommend_cli_error(tmp_path, "--provider: unknown provider 'awz'", "--provider", "awz")
    _recommend_cli_error(tmp_path, "--region: unknown region 'us-east-9'", "--region", "us-east-9")


def test_it_names_unknown_provider_and_region_filters_through_the_api(engineer_client, bundled_catalog):
    # before: 201 and an empty Recommendation stored; now a 400 naming the field, nothing stored
    assert _recommend_api_error(engineer_client, providers=["awz"]) == {
        "path": "providers",
        "message": "unknown provider 'awz' (did you mean 'aws'?)",
    }
    assert _recommend_api_error(engineer_client, regions=["us-east-9"])["path"] == "regions"
    body = _recommend_api_error(engineer_client, providers=["lambda"], regions=["eu-central-1"])
    assert body["path"] == "regions" and "not to the providers asked for" in body["message"]
    ok = engineer_client.post(
        "/api/recommendations/",
        {"workload": WORKLOAD, "providers": ["aws"], "regions": ["us-east-1"], "top": 2},
        content_type="application/json",
    )
    assert ok.status_code == 201 and {row["provider"] for row in ok.json()["results"]} == {"aws"}


# --- a currency without an FX rate ---------------------------------------------------------------------


def test_it_names_a_currency_without_an_fx_rate_on_the_command_line(tmp_path, bundled_catalog):
    with pytest.raises(CommandError, match="--currency: unknown currency 'XYZ': not an ISO 4217 code"):
        _run("job_cost", "--price-per-hour", "2", "--hours", "1", "--currency", "XYZ")
    _recommend_cli_error(tmp_path, "--currency: no FX rate stored for EUR", "--currency", "EUR")
    euro_study = _rent_from(P5) | {"currency": "EUR"}
    _tco_cli_error(tmp_path, euro_study, r"currency: no FX rate from USD to EUR \(needed for rent.offer\)")


def test_it_names_a_currency_without_an_fx_rate_through_the_api(engineer_client, bundled_catalog):
    assert _recommend_api_error(engineer_client, currency="EUR")["path"] == "currency"
    assert _recommend_api_error(engineer_client, currency="XYZ") == {
        "path": "currency",
        "message": "unknown currency 'XYZ': not an ISO 4217 code",
    }
    body = _tco_api_error(engineer_client, _rent_from(P5) | {"currency": "EUR"})
    assert body == {"path": "currency", "message": "no FX rate from USD to EUR (needed for rent.offer)"}


def test_it_refuses_an_include_infeasible_that_is_not_a_boolean(engineer_client, db):
    assert _recommend_api_error(engineer_client, include_infeasible="yes") == {
        "path": "include_infeasible",
        "message": "must be true or false, got 'yes'",
    }


def _yen_study_priced_from_the_gpu_list_price() -> dict:
    """A JPY study without a server price: the H100's USD list price must be converted, and no rate is stored."""
    document = study_document(currency="JPY")
    del document["buy"]["server_price"]
    return document


def test_it_names_the_currency_not_the_gpu_when_no_fx_rate_is_stored(tmp_path, engineer_client, h100):
    expected = "no FX rate from USD to JPY (needed for buy.gpu)"
    assert _tco_api_error(engineer_client, _yen_study_priced_from_the_gpu_list_price()) == {
        "path": "currency",
        "message": expected,
    }
    _tco_cli_error(
        tmp_path, _yen_study_priced_from_the_gpu_list_price(), rf"^currency: {re.escape(expected)}$"
    )


def test_the_tco_api_lists_every_error_of_a_study_at_once(engineer_client, h100):
    # three bad fields: each named in "errors" (nothing stored)
    document = study_document(horizon_months=0, utilization="1.5", buy__server_price="-1")
    response = engineer_client.post("/api/tco/", document, content_type="application/json")
    assert response.status_code == 400
    paths = {item["path"] for item in response.json()["errors"]}
    assert {"horizon_months", "utilization", "buy.server_price"} <= paths
    assert set(response.json()) == {"errors"}
