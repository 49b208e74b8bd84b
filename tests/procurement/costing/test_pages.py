"""The TCO pages as a person uses them: paste a study, read the report with its charts."""

import yaml

from procurement.models import TcoStudy
from tests.procurement.costing.tco_fixtures import study_document


def test_it_shows_the_form_with_an_example(client, db):
    response = client.get("/tco/")
    assert response.status_code == 200
    assert "h100-sxm5-80gb" in response.content.decode()


def test_it_stores_a_pasted_study_and_shows_curves_and_tornado(client, h100):
    response = client.post("/tco/", {"study": yaml.safe_dump(study_document())})
    study = TcoStudy.objects.get()
    assert response.status_code == 302 and response.url == f"/tco/{study.pk}/"
    html = client.get(response.url).content.decode()
    assert "477,211.79" in html and "628,617.60" in html  # money with thousands separators
    assert "Cumulative cash cost: buy vs rent" in html  # the line chart's title
    assert "Sensitivity: each driver -20% / +20%" in html  # the tornado chart's title
    assert html.count("<svg") == 2


def test_it_shows_the_error_and_stores_nothing(client, h100):
    response = client.post("/tco/", {"study": yaml.safe_dump(study_document(horizon_months=0))})
    assert response.status_code == 200
    assert "horizon_months: must be a whole number of at least 1" in response.content.decode()
    assert TcoStudy.objects.count() == 0


def test_it_reports_a_syntax_error_with_line_and_column(client, db):
    response = client.post("/tco/", {"study": "buy:\n  servers: 1\n    gpu: x\n"})
    assert "study, line 3, column" in response.content.decode()


def test_it_shows_a_workloads_ranked_table_with_a_cost_time_scatter(client, bundled_catalog):
    workload = {"name": "w", "task": "qlora", "model": {"preset": "llama-3.1-8b"}, "training_tokens": 1e9}
    created = client.post(
        "/api/recommendations/", {"workload": workload, "top": 5}, content_type="application/json"
    )
    workload_id = created.json()["workload_id"]
    response = client.get(f"/workloads/{workload_id}/recommendations/")
    assert response.status_code == 200
    html = response.content.decode()
    assert "Cost versus time" in html and html.count("<svg") == 1
    assert created.json()["results"][0]["total_cost"] in html
