"""The engineer's journey in the browser, team isolation, and saved decisions that a query never replaces."""

from __future__ import annotations

import pytest
import yaml

from procurement.models import Recommendation, TcoStudy, Workload
from procurement.services.recompute import recommendation_recompute
from procurement.services.tco import tco_study_create
from procurement.views.costing import EXAMPLE_STUDY
from tests.procurement.costing.test_recommendations import WORKLOAD, _raise_price

pytestmark = pytest.mark.django_db


@pytest.fixture
def owner_client(client_as):
    return client_as("engineer", team="research")


def _saved(client, **options) -> dict:
    body = {"workload": WORKLOAD, "top": 5, "save": True} | options
    response = client.post("/api/recommendations/", body, content_type="application/json")
    assert response.status_code == 201, response.content
    return response.json()


def test_find_offers_from_the_sizing_page_saves_the_workload_and_opens_its_ranking(
    owner_client, bundled_catalog
):
    sized = owner_client.post("/size/", {"spec": yaml.safe_dump(WORKLOAD)}).content.decode()
    assert 'id="find-offers-form"' in sized and 'action="/workloads/new/"' in sized
    response = owner_client.post(
        "/workloads/new/", {"source": "yaml", "find_offers": "1", "spec": yaml.safe_dump(WORKLOAD)}
    )
    workload = Workload.objects.get()
    assert response.status_code == 302 and response.url == f"/workloads/{workload.pk}/recommendations/"
    assert workload.owner == owner_client.user and workload.team.slug == "research"
    saved = Recommendation.objects.get(workload=workload)
    assert saved.saved_by == owner_client.user and saved.parameters == {} and saved.spec == workload.spec
    page = owner_client.get(response.url).content.decode()
    first_offer = saved.results[0]["offer_id"]
    assert f'href="/offers/{first_offer}/"' in page  # each offer links to its page (spot history, zones)
    assert 'id="ranked-spec"' in page and "llama-3.1-8b" in page and 'id="rerun-form"' in page
    assert owner_client.get(f"/offers/{first_offer}/").status_code == 200


def test_a_workload_is_created_from_the_form_listed_edited_duplicated_and_deleted(
    owner_client, bundled_catalog
):
    form = {
        "source": "fields",
        "name": "from the form",
        "task": "inference",
        "preset": "llama-3.1-8b",
        "precision": "bf16",
        "gpus": "1",
        "concurrency": "8",
        "context_len": "4096",
    }
    assert owner_client.post("/workloads/new/", form).status_code == 302
    workload = Workload.objects.get()
    assert (workload.name, workload.task, workload.spec["inference"]["concurrency"]) == (
        "from the form",
        "inference",
        8,
    )
    assert "from the form" in owner_client.get("/workloads/").content.decode()

    edited = dict(workload.spec) | {"name": "renamed"}
    assert (
        owner_client.post(f"/workloads/{workload.pk}/edit/", {"spec": yaml.safe_dump(edited)}).status_code
        == 302
    )
    workload.refresh_from_db()
    assert workload.name == "renamed"

    bad = owner_client.post(
        f"/workloads/{workload.pk}/edit/", {"spec": "task: cooking\nmodel: {preset: nope}\n"}
    )
    errors = bad.content.decode()
    assert bad.status_code == 200 and errors.count("<li><code>") >= 2  # every bad field at once
    workload.refresh_from_db()
    assert workload.name == "renamed"  # a bad edit changes nothing

    copied = owner_client.post(f"/workloads/{workload.pk}/duplicate/")
    copy = Workload.objects.exclude(pk=workload.pk).get()
    assert copied.url == f"/workloads/{copy.pk}/edit/" and copy.name == "copy of renamed"
    assert copy.spec["name"] == "copy of renamed" and copy.team == workload.team

    assert "Delete renamed?" in owner_client.get(f"/workloads/{workload.pk}/delete/").content.decode()
    owner_client.post(f"/workloads/{workload.pk}/delete/")
    assert list(Workload.objects.values_list("name", flat=True)) == ["copy of renamed"]


def test_the_create_page_starts_on_a_preset_and_lists_every_bad_field(owner_client, bundled_catalog):
    page = owner_client.get("/workloads/new/", {"preset": "sdxl"}).content.decode()
    assert "sdxl" in page and 'id="spec-form"' in page
    bad = owner_client.post(
        "/workloads/new/", {"source": "yaml", "spec": "task: qlora\nmodel: {preset: nope}\nseq_len: -1\n"}
    )
    assert bad.content.decode().count("<li><code>") >= 2 and not Workload.objects.exists()
    syntax = owner_client.post("/workloads/new/", {"source": "yaml", "spec": "task: [\n"})
    assert "spec:2:1" in syntax.content.decode() or "spec:1:" in syntax.content.decode()


def test_a_viewer_cannot_create_a_workload(client_as, db):
    response = client_as("viewer").post(
        "/workloads/new/", {"source": "yaml", "spec": yaml.safe_dump(WORKLOAD)}
    )
    assert response.status_code == 403 and not Workload.objects.exists()
    api = client_as("viewer").post(
        "/api/recommendations/", {"workload": WORKLOAD}, content_type="application/json"
    )
    assert api.status_code == 403 and not Workload.objects.exists()


def test_an_engineer_of_another_team_neither_sees_nor_changes_the_teams_objects(
    owner_client, client_as, bundled_catalog
):
    created = _saved(owner_client)
    study = tco_study_create(
        document=yaml.safe_load(EXAMPLE_STUDY) | {"name": "team study"},
        owner=owner_client.user,
        team=Workload.objects.get().team,
    )
    other = client_as("engineer", team="platform")
    workload_id = created["workload_id"]
    for url in (
        f"/workloads/{workload_id}/recommendations/",
        f"/workloads/{workload_id}/edit/",
        f"/tco/{study.pk}/",
        f"/api/tco/{study.pk}/",
    ):
        assert other.get(url).status_code == 404, url
    assert other.post(f"/workloads/{workload_id}/delete/").status_code == 404
    assert Workload.objects.filter(pk=workload_id).exists()
    for url in ("/workloads/", "/dashboard/", "/tco/"):
        html = other.get(url).content.decode()
        assert "llama-3.1-8b-qlora" not in html and "team study" not in html, url
    refused = other.post(
        "/api/recommendations/", {"workload_id": workload_id, "save": True}, content_type="application/json"
    )
    assert refused.status_code == 400 and refused.json()["errors"][0]["path"] == "workload_id"
    assert Recommendation.objects.count() == 1
    # a teammate sees them
    teammate = client_as("engineer", team="research")
    assert "llama-3.1-8b-qlora" in teammate.get("/workloads/").content.decode()
    assert teammate.get(f"/tco/{study.pk}/").status_code == 200
    assert TcoStudy.objects.get().team.slug == "research"


def test_an_ad_hoc_query_never_replaces_the_saved_answer_and_recompute_keeps_the_owners_options(
    owner_client, client_as, bundled_catalog
):
    created = _saved(owner_client, top=5)
    workload_id, saved = created["workload_id"], Recommendation.objects.get()
    assert created["saved"] is True and created["options"] == {"top": 5} and created["id"] == saved.pk

    teammate = client_as("engineer", team="research")
    answer = teammate.post(
        "/api/recommendations/",
        {"workload_id": workload_id, "top": 3, "providers": ["aws"]},
        content_type="application/json",
    )
    assert answer.status_code == 200  # nothing stored: a query
    query = answer.json()
    assert (
        query["saved"] is False
        and query["id"] is None
        and query["options"] == {"top": 3, "providers": ["aws"]}
    )
    assert {row["provider"] for row in query["results"]} == {"aws"} and len(query["results"]) == 3
    assert list(Recommendation.objects.values_list("pk", flat=True)) == [saved.pk]  # untouched

    page = owner_client.get(f"/workloads/{workload_id}/recommendations/").content.decode()
    assert "Rows</th><td>5</td>" in page and "options saved by" in page

    _raise_price(saved.results[0])
    assert recommendation_recompute(workload_id)["created"] is True
    newest = Recommendation.objects.order_by("-pk").first()
    assert newest.parameters == {"top": 5} and newest.saved_by == owner_client.user  # the owner's options
    assert len(newest.results) == 5


def test_the_recommendation_page_reruns_without_storing_unless_asked_to_save(owner_client, bundled_catalog):
    workload_id = _saved(owner_client)["workload_id"]
    preview = owner_client.post(
        f"/workloads/{workload_id}/recommendations/", {"providers": "aws", "top": "2"}
    )
    html = preview.content.decode()
    assert preview.status_code == 200 and 'id="preview-note"' in html and "not saved" in html
    assert len(preview.context["rows"]) == 2 and {r["provider"] for r in preview.context["rows"]} == {"aws"}
    assert Recommendation.objects.count() == 1

    bad = owner_client.post(f"/workloads/{workload_id}/recommendations/", {"providers": "awz"})
    assert (
        "providers: unknown provider &#x27;awz&#x27;" in bad.content.decode()
        and Recommendation.objects.count() == 1
    )

    saved = owner_client.post(
        f"/workloads/{workload_id}/recommendations/", {"providers": "aws", "top": "2", "save": "1"}
    )
    assert saved.status_code == 302
    newest = Recommendation.objects.order_by("-pk").first()
    assert newest.parameters == {"providers": ["aws"], "top": 2} and newest.saved_by == owner_client.user
