"""Rent-or-buy studies in the browser from a form of fields: preview, save, edit, duplicate, delete,
and every error at once beside its field."""

from decimal import Decimal

import pytest

from procurement.models import TcoStudy
from procurement.services.tco import study_errors
from procurement.tco_form import initial_from_document, parse_number, show_number
from tests.procurement.costing.tco_fixtures import study_document

# The docs' worked example typed as a person would: separators in money, percentages for shares.
FORM = {
    "name": "one 8xH100 server, 3 years",
    "currency": "USD",
    "utilization": "80",
    "horizon_months": "36",
    "discount_rate_annual": "8",
    "gpu": "h100-sxm5-80gb",
    "servers": "1",
    "gpus_per_server": "8",
    "server_price": "300,000",
    "install_cost": "5,000",
    "server_overhead_kw": "4.6",
    "average_load": "70",
    "pue": "1.58",
    "electricity_per_kwh": "0.10",
    "colocation_per_kw_month": "184",
    "maintenance_pct_per_year": "10",
    "ops_fte": "0.1",
    "fte_cost_per_year": "150,000",
    "residual_pct": "20",
    "depreciation_years": "5",
    "pricing_model": "on_demand",
    "price_per_gpu_hour": "2.99",
}


def test_it_reads_separators_and_percentages():
    assert parse_number("300,000") == 300000
    assert parse_number("80", percent=True) == parse_number("80%", percent=True) == Decimal("0.8")
    with pytest.raises(ValueError, match="enter a number"):
        parse_number("lots")
    assert show_number("300000", "money") == "300,000"
    assert show_number("0.8", "percent") == "80"


def test_it_previews_without_saving_then_saves(client_as, h100):
    client = client_as("engineer")
    preview = client.post("/tco/new/", FORM | {"action": "preview"})
    assert preview.status_code == 200 and TcoStudy.objects.count() == 0
    html = preview.content.decode()
    # the worked example at 80%: buy 477,211.79 cash, rent 0.8 x 628,617.60 = 502,894.08
    assert "Preview (not saved yet)" in html and "477,211.79" in html and "502,894.08" in html
    saved = client.post("/tco/new/", FORM | {"action": "save"})
    study = TcoStudy.objects.get()
    assert saved.status_code == 302 and saved.url == f"/tco/{study.pk}/"
    assert study.result["buy"]["total"] == "477211.79" and study.spec["utilization"] == "0.8"
    page = client.get(saved.url).content.decode()
    assert "80.0%" in page and "82.9%" in page  # utilization and the NPV break-even as percentages


def test_it_lists_every_error_at_once_beside_its_field(client_as, h100):
    bad = FORM | {
        "utilization": "150",
        "pue": "0.9",
        "horizon_months": "0",
        "price_per_gpu_hour": "0",
        "average_load": "abc",
        "action": "preview",
    }
    response = client_as("engineer").post("/tco/new/", bad)
    errors = response.context["form"].errors
    assert set(errors) == {"utilization", "pue", "horizon_months", "price_per_gpu_hour", "average_load"}
    assert errors["price_per_gpu_hour"] == ["must be greater than 0, got 0"]
    assert errors["average_load"] == ["enter a number, got 'abc'"]
    assert errors["utilization"] == [
        "must be greater than 0% and at most 100%, got 150%"
    ]  # in the form's units
    html = response.content.decode()
    assert "5 fields to fix" in html and 'id="error-pue"' in html
    assert '<a href="#id_utilization">Utilization</a>' in html
    assert TcoStudy.objects.count() == 0


def test_the_engine_reports_every_error_of_a_document(h100):
    # four refused values in one document: all four come back, not just the first
    document = study_document(
        utilization="0", buy__pue="0.5", buy__residual_pct="2", rent__price_per_gpu_hour="0"
    )
    fields = sorted(error.field for error in study_errors(document))
    assert fields == ["buy.pue", "buy.residual_pct", "rent.price_per_gpu_hour", "utilization"]
    assert study_errors(study_document()) == []


def test_it_edits_a_study_in_place(client_as, h100):
    client = client_as("engineer")
    client.post("/tco/new/", FORM | {"action": "save"})
    study = TcoStudy.objects.get()
    form = client.get(f"/tco/{study.pk}/edit/").context["form"]
    assert form.initial["server_price"] == "300,000" and form.initial["utilization"] == "80"
    client.post(f"/tco/{study.pk}/edit/", FORM | {"utilization": "40", "action": "save"})
    study.refresh_from_db()
    assert TcoStudy.objects.count() == 1
    assert study.result["rent"]["total"] == "251447.04"  # 628,617.60 x 0.4
    assert study.result["recommendation"] == "rent"


def test_it_duplicates_and_deletes(client_as, h100):
    client = client_as("engineer")
    client.post("/tco/new/", FORM | {"action": "save"})
    original = TcoStudy.objects.get()
    copy_form = client.get(f"/tco/{original.pk}/duplicate/").context["form"]
    assert copy_form.initial["name"] == "one 8xH100 server, 3 years (copy)"
    client.post(f"/tco/{original.pk}/duplicate/", dict(copy_form.initial) | {"action": "save"})
    assert TcoStudy.objects.count() == 2
    assert client.get(f"/tco/{original.pk}/delete/").status_code == 200  # a confirmation first
    assert client.post(f"/tco/{original.pk}/delete/").status_code == 302
    assert list(TcoStudy.objects.values_list("name", flat=True)) == ["one 8xH100 server, 3 years (copy)"]


def test_a_viewer_cannot_create_or_delete(client_as, h100, client):
    assert client.get("/tco/new/").status_code == 302  # anonymous: to the login page
    viewer = client_as("viewer")
    assert viewer.post("/tco/new/", FORM | {"action": "save"}).status_code == 403
    assert TcoStudy.objects.count() == 0


def test_the_form_round_trips_a_document_with_optional_inputs():
    document = study_document(tax_rate="0.25", buy__financing={"kind": "loan", "rate_annual": "0.06"})
    initial = initial_from_document(document)
    assert (
        initial["tax_rate"] == "25"
        and initial["financing_kind"] == "loan"
        and initial["financing_rate"] == "6"
    )


def test_the_pasted_study_lists_every_error_too(client_as, h100):
    import yaml

    text = yaml.safe_dump(study_document(utilization="0", buy__pue="0.5", horizon_months=0))
    html = client_as("engineer").post("/tco/", {"study": text}).content.decode()
    assert "3 errors" in html
    assert "utilization: must be greater than 0" in html and "buy.pue:" in html and "horizon_months:" in html


def test_the_form_has_a_field_for_every_study_field():
    # editing through the form must not drop a field the study file can hold
    from procurement.costing import tco_spec
    from procurement.tco_form import BY_PATH

    leaves = set()
    for prefix, fields in (
        ("", tco_spec._STUDY_FIELDS),
        ("buy.", tco_spec._BUY_FIELDS),
        ("rent.", tco_spec._RENT_FIELDS),
    ):
        leaves |= {prefix + name for name in fields if name not in ("buy", "rent")}
    nested = {
        "rent.offer": tco_spec._OFFER_FIELDS,
        "buy.financing": tco_spec._FINANCING_FIELDS,
        "rent.reserved_alternative": tco_spec._RESERVED_FIELDS,
    }
    for parent, fields in nested.items():
        leaves.discard(parent)
        leaves |= {f"{parent}.{name}" for name in fields}
    assert leaves == set(BY_PATH)


def test_the_study_page_shows_the_optional_cfo_figures(client_as, h100):
    client = client_as("engineer")
    form = FORM | {
        "tax_rate": "25",
        "financing_kind": "loan",
        "financing_rate": "6",
        "financing_term": "36",
        "reserved_model": "reserved_3y",
        "reserved_price": "1.90",
        "action": "save",
    }
    response = client.post("/tco/new/", form)
    html = client.get(response.url).content.decode()
    assert "After tax" in html and "25.0%" in html and "straight_line" in html
    assert "loan over 36 months" in html
    assert "Reserved alternative" in html and "399,456.00" in html  # 8 x 730 x 1.90 x 36
