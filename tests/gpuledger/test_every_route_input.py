"""Every input a 4xx, never a 500 (issue 31, finding 3): a property test that throws the values an
outside tester got 500s with (dates at year 1 and 9999, lone surrogates, NUL bytes, over-long names,
1e-400, empty bodies, deeply nested YAML and JSON) at every route of the URL conf, as an admin (who
reaches every route), in the query, a form body and a JSON body, and asserts no 5xx.

Django's own admin (admin/) and the schema pages are left out: schemathesis covers the API schema, and
the admin is Django's. Bounded: a fixed number of examples on SQLite (tests/settings.py)."""

from __future__ import annotations

import json
from urllib.parse import quote

import pytest
from django.urls import URLPattern, URLResolver, get_resolver
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.procurement.costing.conftest import h100  # noqa: F401  (the GPU row a study resolves)

DEEP_JSON = "[" * 5000 + "]" * 5000
DEEP_YAML = "a:\n" + "".join(" " * depth + "b:\n" for depth in range(1, 400))
HOSTILE = [
    "0001-01-01",
    "9999-12-31",
    "0001-01-01T00:00:00Z",
    "\ud800",
    "a\udfffb",
    "x\x00y",
    "n" * 20_000,
    "1e-400",
    "1.0e-400",
    "1e400",
    "-1e400",
    "NaN",
    "",
    "-1",
    DEEP_JSON,
    DEEP_YAML,
    "{name: [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]}",
]
FIELDS = [
    "start",
    "end",
    "from",
    "to",
    "as_of",
    "month",
    "team",
    "project",
    "provider",
    "name",
    "spec",
    "document",
    "text",
    "yaml",
    "study",
    "workload",
    "gpu",
    "currency",
    "hours",
    "utilization",
    "price",
    "quantity",
    "limit",
    "offset",
    "table",
    "allocation",
    "webhook_url",
    "model",
    "task",
    "server_price",
    "horizon_months",
]
SKIPPED_PREFIXES = ("admin/", "api/schema/", "api/docs/", "accounts/logout/")


def _routes(resolver=None, prefix: str = "") -> list[str]:
    """Every route as a path, with 1 for each path parameter (an object that may or may not exist)."""
    found = []
    for entry in (resolver or get_resolver()).url_patterns:
        pattern = prefix + str(entry.pattern)
        if isinstance(entry, URLResolver):
            found += _routes(entry, pattern)
        elif isinstance(entry, URLPattern) and not pattern.startswith(SKIPPED_PREFIXES):
            path = pattern
            for converter in ("<int:pk>", "<int:subject_id>", "<int:workload_id>", "<int:token_id>"):
                path = path.replace(converter, "1")
            path = path.replace("<slug:slug>", "h100").replace("<str:fmt>", "csv")
            found.append("/" + path.lstrip("^").rstrip("$"))
    return sorted(set(found))


ROUTES = _routes()


def test_the_routes_cover_the_url_conf():
    assert len(ROUTES) > 50 and "/billing/review.csv" in ROUTES and "/api/capacity-plans/" in ROUTES
    assert not [route for route in ROUTES if "<" in route]  # every path parameter was filled in


@pytest.fixture
def admin_client(client_as):
    client = client_as("admin")
    client.raise_request_exception = False  # a 500 is an answer to count, not an exception to stop on
    return client


@pytest.mark.django_db
@settings(max_examples=400, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
@given(
    route=st.sampled_from(ROUTES),
    how=st.sampled_from(["query", "form", "json", "empty"]),
    data=st.dictionaries(
        st.sampled_from(FIELDS), st.sampled_from(HOSTILE) | st.text(max_size=30), min_size=1, max_size=4
    ),
)
def test_no_route_answers_hostile_input_with_a_5xx(admin_client, route, how, data):
    _assert_no_5xx(admin_client, route, how, data)


# The finding's probes, each a 500 before (issue 31): a period at either end of the calendar on every
# finance endpoint, deeply nested YAML in the sizing and workload forms, an empty POST to the TCO forms.
FINANCE_PERIODS = [
    ("/api/billing/spend-review/", "from", "to"),
    ("/api/billing/anomalies/", "from", "to"),
    ("/api/billing/spend-rows/", "from", "to"),
    ("/billing/", "start", "end"),
    ("/billing/review.csv", "start", "end"),
    ("/billing/review.json", "start", "end"),
    ("/billing/review.html", "start", "end"),
    ("/billing/spend-rows/", "start", "end"),
    ("/reports/spend_review/", "start", "end"),
    ("/reports/spend_review/download/csv/", "start", "end"),
]
EDGES = [("0001-01-01", "0001-02-01"), ("9999-12-01", "9999-12-31"), ("0001-01-01", "9999-12-31")]


@pytest.mark.django_db
@pytest.mark.parametrize("route,first,last", FINANCE_PERIODS)
@pytest.mark.parametrize("start,end", EDGES)
def test_a_period_at_the_ends_of_the_calendar_is_a_400_naming_the_field(
    admin_client, route, first, last, start, end
):
    response = admin_client.get(route, {first: start, last: end})
    assert response.status_code == 400, (route, response.content[:200])
    assert first.encode() in response.content


@pytest.mark.django_db
@pytest.mark.parametrize("route", ["/size/", "/workloads/new/"])
@pytest.mark.parametrize("text", [DEEP_JSON, DEEP_YAML], ids=["json", "yaml"])
def test_a_deeply_nested_spec_in_a_form_is_an_error_next_to_the_field(admin_client, route, text):
    response = admin_client.post(route, {"source": "spec", "spec": text})
    assert response.status_code < 500 and b"nested deeper than 32 levels" in response.content, route


@pytest.mark.django_db
@pytest.mark.parametrize(
    "route", ["/api/size/", "/api/tco/", "/api/recommendations/", "/api/capacity-plans/"]
)
def test_a_deeply_nested_api_body_is_a_400(admin_client, route):
    response = admin_client.post(route, DEEP_JSON, content_type="application/json")
    assert response.status_code == 400 and b"nested deeper than 32 levels" in response.content, route
    spec = {"name": "deep", "spec": DEEP_YAML, "document": DEEP_YAML}
    assert 400 <= admin_client.post(route, spec, content_type="application/json").status_code < 500, route


@pytest.mark.django_db
@pytest.mark.parametrize(
    "route", ["/tco/new/", "/size/", "/workloads/new/", "/billing/upload/", "/billing/budgets/"]
)
def test_an_empty_post_to_a_form_is_not_a_5xx(admin_client, route):
    assert admin_client.post(route).status_code < 500


def _assert_no_5xx(admin_client, route: str, how: str, data: dict) -> None:
    # as a browser or curl sends them: UTF-8, a lone surrogate as its three bytes (what "surrogatepass" writes)
    encoded = "&".join(
        f"{field}={quote(value.encode('utf-8', 'surrogatepass'))}" for field, value in data.items()
    )
    if how == "query":
        response = admin_client.get(f"{route}?{encoded}")
    elif how == "form":
        response = admin_client.post(route, encoded, content_type="application/x-www-form-urlencoded")
    elif how == "json":
        body = json.dumps(data).replace('"1e-400"', "1e-400").replace('"1e400"', "1e400")  # as numbers
        response = admin_client.post(route, body, content_type="application/json")
    else:
        response = admin_client.post(route)
    assert response.status_code < 500, (route, how, repr(data)[:160], response.content[:300])


# Study, workload and plan bodies that are valid but for one value: each a 400 naming the field (the
# over-long name was a 500 on PostgreSQL, the others deep in the engines).
LONG_NAME = "n" * 20_000
BAD_NAMES = [
    (LONG_NAME, "at most 200 characters"),
    ("a\ud800b", "lone UTF-16 surrogate"),
    ("x\x00y", "NUL byte"),
]


def _bodies() -> dict[str, tuple[dict, str]]:
    from tests.procurement.costing.tco_fixtures import study_document
    from tests.procurement.costing.test_recommendations import WORKLOAD

    return {
        "/api/recommendations/": ({"workload": WORKLOAD, "save": True}, "workload.name"),
        "/api/tco/": (study_document(), "name"),
        "/api/size/": (dict(WORKLOAD), "name"),
    }


@pytest.mark.django_db
@pytest.mark.parametrize("route", ["/api/recommendations/", "/api/tco/", "/api/size/"])
@pytest.mark.parametrize("name,message", BAD_NAMES, ids=["long", "surrogate", "nul"])
@pytest.mark.usefixtures("h100")
def test_a_bad_name_in_a_study_or_workload_body_is_a_400_naming_it(admin_client, route, name, message):
    body, field = _bodies()[route]
    if field == "workload.name":
        body = body | {"workload": body["workload"] | {"name": name}}
    else:
        body = body | {"name": name}
    response = admin_client.post(route, json.dumps(body, default=str), content_type="application/json")
    assert response.status_code == 400, response.content[:300]
    assert (
        response.json()["errors"][0]["path"] == field and message in response.json()["errors"][0]["message"]
    )


@pytest.mark.django_db
@pytest.mark.parametrize("literal", ["1e-400", "1.0e-400", "1e400"])
@pytest.mark.usefixtures("h100")
def test_a_number_out_of_range_in_a_body_is_a_400_naming_it(admin_client, literal):
    body, _ = _bodies()["/api/tco/"]
    text = json.dumps(body | {"utilization": "PLACEHOLDER"}, default=str).replace('"PLACEHOLDER"', literal)
    response = admin_client.post("/api/tco/", text, content_type="application/json")
    assert response.status_code == 400 and response.json()["errors"][0]["path"] == "utilization", (
        response.content[:300]
    )


@pytest.mark.django_db
def test_a_long_name_in_a_form_is_a_400(admin_client):
    form = f"name={LONG_NAME}&action=save"  # as the browser sends the page's form
    response = admin_client.post("/tco/new/", form, content_type="application/x-www-form-urlencoded")
    assert response.status_code == 400 and b"at most 200 characters" in response.content
