"""POST /api/tco/ and GET /api/tco/<id>/: the same numbers as the CLI, errors by field, nothing stored."""

import json
from io import StringIO

import yaml
from django.core.management import call_command

from procurement.models import TcoStudy
from tests.procurement.costing.tco_fixtures import study_document


def test_it_stores_a_study_and_returns_the_report(engineer_client, h100):
    response = engineer_client.post("/api/tco/", study_document(), content_type="application/json")
    assert response.status_code == 201
    body = response.json()
    assert (body["buy"]["total"], body["recommendation"]) == ("477211.79", "buy")
    stored = TcoStudy.objects.get(pk=body["id"])
    assert stored.fingerprint and stored.result["rent"]["npv"] == body["rent"]["npv"]
    assert engineer_client.get(f"/api/tco/{body['id']}/").json()["buy"]["npv"] == body["buy"]["npv"]


def test_it_names_the_field_of_a_bad_value_and_stores_nothing(engineer_client, h100):
    response = engineer_client.post(
        "/api/tco/", study_document(utilization="1.2"), content_type="application/json"
    )
    assert response.status_code == 400
    message = "must be greater than 0 and at most 1, got 1.2"
    assert response.json() == {"errors": [{"path": "utilization", "message": message}]}
    assert TcoStudy.objects.count() == 0


def test_it_refuses_an_unknown_gpu(engineer_client, h100):
    response = engineer_client.post(
        "/api/tco/", study_document(buy__gpu="h999"), content_type="application/json"
    )
    assert response.json()["errors"][0]["path"] == "buy.gpu"


def test_it_agrees_with_the_command_line(engineer_client, h100, tmp_path):
    path = tmp_path / "study.yaml"
    path.write_text(yaml.safe_dump(study_document(utilization="0.6")))
    out = StringIO()
    call_command("tco", str(path), "--format", "json", stdout=out)
    from_cli = json.loads(out.getvalue())
    from_api = engineer_client.post(
        "/api/tco/", study_document(utilization="0.6"), content_type="application/json"
    ).json()
    for key in (
        "buy",
        "rent",
        "break_even_month",
        "break_even_utilization",
        "recommendation",
        "monthly",
        "sensitivity",
    ):
        assert from_api[key] == from_cli[key], key


def test_it_answers_404_for_a_missing_study(engineer_client, db):
    assert engineer_client.get("/api/tco/999/").status_code == 404
