"""Bad input to a capacity plan: a clear 400 (API) or CommandError (command) naming the field, and
nothing stored (issue 20, section 4). Each case goes through both shells."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from planning.models import CapacityPlan
from pricing.models import FxRate
from tests.planning.capacity_plans.conftest import PERIOD

pytestmark = pytest.mark.django_db
EUR_STUDY = {
    "name": "EUR quote",
    "currency": "EUR",
    "buy": {
        "server_price": 280000,
        "electricity_per_kwh": 0.2,
        "colocation_per_kw_month": 170,
        "fte_cost_per_year": 120000,
    },
}
# (API body change, the field the 400 names, the command's arguments, the flag its error names)
CASES = {
    "period under 7 days": ({"to": "2026-05-07"}, "to", ["--to", "2026-05-07"], "--to"),
    "growth over +50% a month": ({"growth": 0.51}, "growth", ["--growth", "0.51"], "--growth"),
    "growth under -50% a month": ({"growth": -0.6}, "growth", ["--growth", "-0.6"], "--growth"),
    "horizon over 120 months": (
        {"horizon_months": 121},
        "horizon_months",
        ["--horizon-months", "121"],
        "--horizon-months",
    ),
    "study in a currency without an FX rate": (
        {"study": EUR_STUDY},
        "study.currency",
        None,
        "study.currency",
    ),
    "team without GPU rows": ({"teams": ["nobody"]}, "team", ["--team", "nobody"], "--team"),
    "GPU model without rows": ({"gpu": "b200"}, "gpu", ["--gpu", "b200"], "--gpu"),
}


def _command(args: list[str]) -> None:
    call_command(
        "capacity_plan",
        "--from",
        PERIOD["from"],
        "--to",
        PERIOD["to"],
        *args,
        "--save",
        stdout=StringIO(),
        stderr=StringIO(),
    )


@pytest.mark.parametrize("case", list(CASES))
def test_the_api_names_the_field_and_stores_nothing(demo_bills, client_as, case):
    change, field, _, _ = CASES[case]
    response = client_as("finance").post(
        "/api/capacity-plans/", PERIOD | change | {"save": True}, content_type="application/json"
    )
    assert response.status_code == 400, response.content
    assert response.json()["errors"][0]["path"] == field
    assert CapacityPlan.objects.count() == 0


@pytest.mark.parametrize("case", list(CASES))
def test_the_command_names_the_flag_and_stores_nothing(demo_bills, tmp_path, case):
    _, _, args, flag = CASES[case]
    if args is None:  # the study comes from a file
        study = tmp_path / "study.yaml"
        study.write_text("name: EUR quote\ncurrency: EUR\nbuy:\n  server_price: 280000\n")
        args = ["--study", str(study)]
    with pytest.raises(CommandError) as raised:
        _command(args)
    assert str(raised.value).startswith(f"{flag}: "), str(raised.value)
    assert CapacityPlan.objects.count() == 0


def test_a_scope_with_no_gpu_rows_at_all_is_refused(bundled_catalog, client_as):
    """No bill imported: no GPU rows in the period."""
    response = client_as("finance").post(
        "/api/capacity-plans/", PERIOD | {"save": True}, content_type="application/json"
    )
    assert response.status_code == 400
    assert response.json()["errors"][0]["path"] == "from"
    with pytest.raises(CommandError, match=r"^--from: "):
        _command([])
    assert CapacityPlan.objects.count() == 0


def test_with_the_fx_rate_stored_the_eur_study_is_planned_in_eur(demo_bills, client_as):
    FxRate.objects.create(currency="EUR", base="USD", rate="1.08", as_of="2026-11-30", source="test rate")
    response = client_as("finance").post(
        "/api/capacity-plans/", PERIOD | {"study": EUR_STUDY}, content_type="application/json"
    )
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["currency"] == "EUR"
    on_demand = next(price for price in body["prices"] if price["kind"] == "on_demand")
    # the catalog's USD price per GPU-hour / 1.08 USD per EUR, 6 decimals
    from decimal import ROUND_HALF_EVEN, Decimal

    expected = (Decimal(on_demand["price_per_gpu_hour_usd"]) / Decimal("1.08")).quantize(
        Decimal("0.000001"), ROUND_HALF_EVEN
    )
    assert abs(Decimal(on_demand["price_per_gpu_hour"]) - expected) <= Decimal("0.000001")
