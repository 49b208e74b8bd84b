"""Every size a request can set is bounded, and hostile input is a 400 (or a clean CLI error) naming
the field, never a 500, a traceback or a whole input echoed back (issue 9)."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from procurement.costing.documents import DocumentSyntaxError, load_document_text
from procurement.costing.values import CostInputError
from procurement.models import Recommendation, TcoStudy, Workload
from procurement.services.recommendations import ranking_options_parse
from tests.procurement.costing.tco_fixtures import study_document

WORKLOAD = {"name": "q", "task": "qlora", "model": {"preset": "llama-3.1-8b"}, "training_tokens": 1e9}


def _nothing_stored() -> bool:
    return not (Workload.objects.exists() or Recommendation.objects.exists() or TcoStudy.objects.exists())


def _post(client, url: str, body, **extra):
    data = body if isinstance(body, str | bytes) else json.dumps(body)
    return client.post(url, data, content_type="application/json", **extra)


@pytest.mark.parametrize(
    ("options", "field", "message"),
    [
        ({"top": 1e9}, "top", "must be at most 500, got 1000000000"),
        ({"top": 501}, "top", "must be at most 500, got 501"),
        (
            {"instance_counts": list(range(1, 66))},
            "instance_counts",
            "must be a list of at most 64 whole numbers",
        ),
        # restated (glm, stop 51): the bound was 64 instances ("must be at most 64, got 65"), which dropped
        # GLM-130B's 96 DGX-A100 nodes; now 2,048 (Llama 3 405B's 16,384 H100 = 2,048 nodes of 8)
        (
            {"instance_counts": [1, 2049]},
            "instance_counts[1]",
            "must be at most 2,048 instances (the bound a ranking row may use: Llama 3 405B's 2,048 nodes of 8 "
            "GPUs), got 2049",
        ),
        ({"instance_counts": "1,2"}, "instance_counts", "must be a list of at most 64 whole numbers"),
        ({"deadline_hours": 1e9}, "deadline_hours", "must be at most 87600 (ten years)"),
        ({"budget": 1e308}, "budget", "is too large ('1e+308'; at most 1e+15)"),
    ],
)
def test_ranking_options_are_bounded(options, field, message):
    with pytest.raises(CostInputError) as caught:
        ranking_options_parse(options)
    assert (caught.value.field, caught.value.message) == (field, message)


def test_the_largest_allowed_ranking_options_are_accepted():
    options = ranking_options_parse({"top": 500, "instance_counts": [*range(1, 64), 2048]})
    assert options.top == 500 and options.instance_counts[-1] == 2048


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"horizon_months": 60_000}, "horizon_months"),
        ({"buy__servers": 10**9}, "buy.servers"),
        ({"buy__gpus_per_server": 1000}, "buy.gpus_per_server"),
        ({"buy__server_price": "1e308"}, "buy.server_price"),
    ],
)
def test_a_tco_study_with_an_unbounded_size_is_a_400_naming_the_field(client_as, h100, changes, field):
    response = _post(client_as("engineer"), "/api/tco/", study_document(**changes))
    assert response.status_code == 400 and response.json()["errors"][0]["path"] == field
    assert _nothing_stored()


def test_a_horizon_of_360_months_is_accepted_by_the_parser():
    from procurement.costing.tco_spec import MAX_HORIZON_MONTHS

    assert MAX_HORIZON_MONTHS == 360  # 30 years (issue 9)


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"workload_id": "abc"}, "workload_id"),
        ({"workload_id": 1.5}, "workload_id"),
        ({"workload_id": 10**30}, "workload_id"),
        ({"workload_id": True}, "workload_id"),
        ({"workload": WORKLOAD, "top": 1e9}, "top"),
        ({"workload": WORKLOAD, "budget": 1e308}, "budget"),
    ],
)
def test_bad_recommendation_requests_are_400s_naming_the_field(client_as, body, field):
    response = _post(client_as("engineer"), "/api/recommendations/", body)
    assert response.status_code == 400 and response.json()["errors"][0]["path"] == field
    assert _nothing_stored()


@pytest.mark.django_db
def test_json_nested_100000_deep_is_a_400_not_a_500(client_as):
    response = _post(client_as("engineer"), "/api/recommendations/", "[" * 100_000 + "]" * 100_000)
    assert response.status_code == 400
    assert "nested deeper than 32 levels (line 1, column 33)" in response.json()["errors"][0]["message"]


@pytest.mark.django_db
def test_a_body_over_one_megabyte_is_refused(client_as):
    body = json.dumps({"workload": WORKLOAD, "pad": "x" * (1024 * 1024)})
    response = _post(client_as("engineer"), "/api/recommendations/", body)
    assert response.status_code in (400, 413)  # Django's own limit (400) or the API parser's (413)
    assert len(response.content) < 500 and _nothing_stored()  # the input is not echoed back


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("query", "field"),
    [
        ("limit=1e20", "limit"),
        ("limit=100000000000000000000", "limit"),
        ("limit=1001", "limit"),
        ("limit=0", "limit"),
        ("limit=-1", "limit"),
        ("offset=100000000000000000000", "offset"),
        ("offset=1.5", "offset"),
    ],
)
def test_bad_or_huge_offer_page_parameters_are_a_400_naming_them(client_as, query, field):
    # /api/offers/ pages a plain list (gpuledger/pagination.py ListBodyPage): out of range is refused
    response = client_as("viewer").get(f"/api/offers/?{query}")
    assert response.status_code == 400
    assert [error["path"] for error in response.json()["errors"]] == [field]


def test_a_page_limit_is_capped_at_1000_and_a_huge_offset_at_a_billion(rf):
    from rest_framework.request import Request

    from gpuledger.pagination import BoundedLimitOffsetPagination

    paginator = BoundedLimitOffsetPagination()
    request = Request(rf.get("/api/x/?limit=100000000000000000000&offset=100000000000000000000"))
    assert (paginator.get_limit(request), paginator.get_offset(request)) == (1000, 10**9)


@pytest.mark.django_db
def test_a_nul_byte_in_a_query_parameter_is_a_400_naming_it(client_as):
    response = client_as("viewer").get("/api/offers/?provider=aw%00s")
    assert response.status_code == 400 and response.json()["errors"][0]["path"] == "provider"


def test_yaml_aliases_are_refused_naming_their_place():
    bomb = 'a: &a ["x","x","x","x","x","x","x","x","x"]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: [*b,*b,*b]\n'
    with pytest.raises(DocumentSyntaxError) as caught:
        load_document_text(bomb, "study.yaml")
    assert caught.value.field == "study.yaml, line 2, column 8"
    assert "aliases" in caught.value.message


def test_deep_yaml_and_json_documents_are_syntax_errors():
    with pytest.raises(DocumentSyntaxError, match="nested deeper than 32 levels"):
        load_document_text("a: " + "[" * 50 + "]" * 50, "study.yaml")
    with pytest.raises(DocumentSyntaxError, match="nested deeper than 32 levels"):
        load_document_text("[" * 10_000 + "]" * 10_000, "study.yaml")
    with pytest.raises(DocumentSyntaxError) as caught:
        load_document_text('{"a": ' + "[" * 100_000 + "]" * 100_000 + "}", "study.json")
    assert caught.value.field == "study.json, line 1, column 38"


@pytest.mark.parametrize(
    ("flag", "value", "message"),
    [
        ("--hours", "1e30", "--hours: is too large ('1e30'; at most 1e+15)"),
        ("--hours", "2000000", "--hours: must be at most 1,000,000 (about 114 years), got 2.000e+6"),
        ("--price-per-hour", "1e308", "--price-per-hour: is too large ('1e308'; at most 1e+15)"),
    ],
)
def test_job_cost_with_absurd_numbers_is_a_clean_error_naming_the_flag(flag, value, message):
    args = {"--hours": "10", "--price-per-hour": "2"} | {flag: value}
    with pytest.raises(CommandError) as caught:
        call_command(
            "job_cost", *[x for pair in args.items() for x in pair], "--currency", "USD", stdout=StringIO()
        )
    assert str(caught.value) == message


def test_a_workload_spec_number_of_1e308_is_an_error_naming_the_field():
    from procurement.services.recommendations import WorkloadSpecInputError, workload_spec_parse

    with pytest.raises(WorkloadSpecInputError) as caught:
        workload_spec_parse(WORKLOAD | {"training_tokens": 1e308})
    assert caught.value.field == "training_tokens" and "must be <= 1e+15" in caught.value.message
