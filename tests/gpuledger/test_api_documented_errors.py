"""What the schemathesis suite (test_api_schemathesis.py) found, one test each: answers the schema did not
document, and error bodies that broke their documented shape."""

import pytest

from tests.gpuledger.api_fuzz import openapi_document

pytestmark = pytest.mark.django_db


def assert_one_shape(response, status: int, path: str | None = None) -> dict:
    assert response.status_code == status
    assert response["Content-Type"].startswith("application/json")
    body = response.json()
    assert set(body) == {"errors"}, body  # the one shape and nothing beside it (the old keys are gone)
    assert body["errors"] and set(body["errors"][0]) == {"path", "message"}
    if path is not None:
        assert body["errors"][0]["path"] == path
    return body["errors"][0]


@pytest.mark.parametrize("url", ["/api/gpus/not%20a%20slug/", "/api/tco/abc/", "/api/no-such-resource/"])
def test_an_api_address_no_route_matches_is_a_json_404(client_as, url):
    assert_one_shape(client_as("engineer").get(url), 404, "(root)")


def test_a_page_address_no_route_matches_keeps_the_html_404(client_as):
    response = client_as("viewer").get("/no-such-page/")
    assert response.status_code == 404 and response["Content-Type"].startswith("text/html")


def test_a_nul_byte_in_a_query_parameter_is_a_400_in_the_one_shape(client_as):
    body = assert_one_shape(client_as("viewer").get("/api/gpus/?vendor=NV%00IDIA"), 400, "vendor")
    assert "NUL byte" in body["message"]


def test_a_spend_review_400_names_the_field_in_the_one_shape(client_as):
    body = assert_one_shape(client_as("finance").get("/api/billing/spend-review/?from=2026-05-01"), 400, "to")
    assert body["message"] == "required, YYYY-MM-DD"


def test_a_recommendation_for_someone_elses_team_is_a_400_in_the_one_shape(client_as, bundled_catalog):
    response = client_as("engineer", team="research").post(
        "/api/recommendations/", {"team": "finance-team", "workload": {}}, content_type="application/json"
    )
    body = assert_one_shape(response, 400, "team")
    assert "not in a team" in body["message"]


def test_a_billing_import_400_has_the_one_shape(client_as):
    body = assert_one_shape(client_as("finance").post("/api/billing/imports/", {}), 400, "file")
    assert "No file was submitted" in body["message"]


@pytest.mark.parametrize("query", ["?format=not-a-format", ""])
def test_schema_view_errors_are_json_not_an_openapi_document(client, client_as, query):
    if query:
        response = client_as("viewer").get(f"/api/schema/{query}")
        assert_one_shape(response, 404, "(root)")
    else:  # anonymous: 401, rendered as JSON (was YAML, the schema view's first renderer)
        assert_one_shape(client.get("/api/schema/"), 401, "(root)")


def test_gpu_source_fields_are_documented_as_text_since_they_hold_several_urls(client_as, bundled_catalog):
    gpu = openapi_document()["components"]["schemas"]["GpuModel"]["properties"]
    for name in ("price_source_url", "source_url", "crosscheck_url"):
        assert gpu[name]["type"] == "string" and "format" not in gpu[name], name
    sources = [row["source_url"] for row in client_as("viewer").get("/api/gpus/?limit=100").json()["results"]]
    assert any(" ; " in source for source in sources)  # what `format: uri` could not describe


def test_every_operation_documents_the_errors_every_view_shares():
    paths = openapi_document()["paths"]
    for path, operations in paths.items():
        for method, operation in operations.items():
            codes = set(operation["responses"])
            assert {"400", "401", "403", "429"} <= codes, (method, path)
            if method == "post":
                assert {"413", "415"} <= codes, (method, path)
            if "{" in path:
                assert "404" in codes, (method, path)
            for code in ("401", "403", "429"):
                assert "application/json" in operation["responses"][code]["content"], (method, path, code)
    assert "404" in paths["/api/schema/"]["get"]["responses"]  # an unknown ?format=
