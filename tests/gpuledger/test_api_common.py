"""What every API endpoint shares: the resource list at /api/, offline docs, one error shape."""

import pytest
from django.contrib.staticfiles import finders
from rest_framework import exceptions

from gpuledger.api_errors import EMPTY_BODY_MESSAGE, api_exception_handler, error_entries

pytestmark = pytest.mark.django_db


def test_the_api_root_lists_every_resource_with_its_methods(client_as):
    response = client_as("viewer").get("/api/")
    assert response.status_code == 200
    body = response.json()
    by_path = {r["path"]: r for r in body["resources"]}
    assert by_path["/api/size/"]["methods"] == ["POST"]
    assert by_path["/api/tco/{pk}/"]["methods"] == ["GET"]
    assert "/api/offers/{pk}/spot-history/" in by_path and "/api/gpus/{slug}/" in by_path
    assert by_path["/api/size/"]["description"].startswith("Size a workload")
    assert not any(path.startswith(("/api/docs", "/api/schema")) or path == "/api/" for path in by_path)
    assert (body["schema"], body["docs"]) == ("/api/schema/", "/api/docs/")


def test_the_api_root_needs_a_role(client_as, client):
    signed_in_without_role = client_as(None)
    assert signed_in_without_role.get("/api/").status_code == 403
    client.logout()
    anonymous = client.get("/api/")
    assert anonymous.status_code in (401, 403)  # 401 once token/session auth answers with a challenge
    assert anonymous.json()["errors"][0]["path"] == "(root)"


def test_the_docs_load_swagger_ui_from_this_server_not_a_cdn(client_as):
    html = client_as("viewer").get("/api/docs/").content.decode()
    for asset in ("swagger-ui-dist/swagger-ui-bundle.js", "swagger-ui-dist/swagger-ui.css"):
        assert f"/static/drf_spectacular_sidecar/{asset}" in html, asset
        assert finders.find(f"drf_spectacular_sidecar/{asset}"), asset  # shipped, so static serves it
    assert "cdn.jsdelivr.net" not in html and "unpkg.com" not in html and "@latest" not in html
    assert "<script>" not in html  # the start-up code is a script file too (the CSP allows no inline script)


@pytest.mark.parametrize(
    ("method", "url", "status"),
    [("get", "/api/tco/999999/", 404), ("get", "/api/size/", 405), ("delete", "/api/tco/", 405)],
)
def test_every_error_has_the_one_shape(client_as, method, url, status):
    response = getattr(client_as("engineer"), method)(url)
    assert response.status_code == status
    body = response.json()
    assert list(body["errors"][0]) == ["path", "message"] and body["errors"][0]["path"] == "(root)"
    assert set(body) == {"errors"}  # "detail" beside it was dropped (docs/CHANGELOG.md)


def test_malformed_json_names_the_problem_in_the_one_shape(client_as):
    response = client_as("engineer").post("/api/size/", "{not json", content_type="application/json")
    assert response.status_code == 400
    assert "JSON parse error" in response.json()["errors"][0]["message"]


@pytest.mark.parametrize("url", ["/api/size/", "/api/tco/", "/api/recommendations/"])
def test_an_empty_body_says_empty_file(client_as, url):
    response = client_as("engineer").post(url, "", content_type="application/json")
    assert response.status_code == 400
    assert response.json()["errors"] == [{"path": "(root)", "message": EMPTY_BODY_MESSAGE}]
    assert EMPTY_BODY_MESSAGE.startswith("empty file")


def test_a_validation_error_becomes_one_entry_per_field_with_dotted_paths():
    detail = {
        "budget": ["must be at least 0"],
        "workload": {"model": {"num_layers": ["required"]}},
        "gpus": [{}, {"slug": ["unknown"]}],
        "non_field_errors": ["give workload or workload_id"],
    }
    assert error_entries(exceptions.ValidationError(detail).detail) == [
        {"path": "budget", "message": "must be at least 0"},
        {"path": "workload.model.num_layers", "message": "required"},
        {"path": "gpus.1.slug", "message": "unknown"},
        {"path": "(root)", "message": "give workload or workload_id"},
    ]
    response = api_exception_handler(exceptions.ValidationError({"days": "0 is not a number of days"}), {})
    assert response.data == {"errors": [{"path": "days", "message": "0 is not a number of days"}]}
    response = api_exception_handler(exceptions.ValidationError(["bad"]), {})
    assert response.status_code == 400 and response.data == {"errors": [{"path": "(root)", "message": "bad"}]}


def test_the_schema_documents_the_error_shape_on_every_operation(client_as):
    import yaml

    schema = yaml.safe_load(client_as("viewer").get("/api/schema/").content)
    component = schema["components"]["schemas"]["ApiErrors"]
    assert component["required"] == ["errors"]
    assert set(component["properties"]["errors"]["items"]["properties"]) == {"path", "message"}
    for path, operations in schema["paths"].items():
        for method, operation in operations.items():
            for code in ("401", "403") + (("404",) if "{" in path else ()):
                content = operation["responses"][code]["content"]["application/json"]["schema"]
                assert content == {"$ref": "#/components/schemas/ApiErrors"}, (path, method, code)
            if method == "post":
                assert "400" in operation["responses"], path
