"""The stored recommendation page reads its workload and saved answer from a per-workload cache
(procurement/workload_heads.py): a repeated page asks the database for neither, every write through
the app shows on the next request, and who may see the workload is decided on every request by
visible_to's rule."""

from __future__ import annotations

import itertools

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from gpuledger.accounts.teams import can_see, visible_to
from procurement.models import Recommendation, Workload
from procurement.services.recompute import recommendation_recompute
from procurement.workload_heads import workload_head
from tests.procurement.costing.test_recommendations import WORKLOAD, _raise_price

pytestmark = pytest.mark.django_db


def save_answer(client, **workload) -> int:
    response = client.post(
        "/api/recommendations/",
        {"workload": WORKLOAD | workload, "top": 3, "save": True},
        content_type="application/json",
    )
    assert response.status_code == 201, response.content
    return response.json()["workload_id"]


def page_of(workload_id: int) -> str:
    return f"/workloads/{workload_id}/recommendations/"


def test_a_repeated_page_asks_the_database_for_neither_workload_nor_answer(engineer_client, bundled_catalog):
    workload_id = save_answer(engineer_client)
    first = engineer_client.get(page_of(workload_id))
    with CaptureQueriesContext(connection) as queries:
        again = engineer_client.get(page_of(workload_id))
    assert again.status_code == 200 and b"Saved answer, computed" in again.content
    tables = " ".join(q["sql"] for q in queries.captured_queries)
    assert "procurement_workload" not in tables and "procurement_recommendation" not in tables
    assert again.content.count(b"<tr>") == first.content.count(b"<tr>")


def test_an_edited_workload_a_renamed_team_and_a_new_answer_show_on_the_next_request(
    engineer_client, bundled_catalog, django_capture_on_commit_callbacks
):
    workload_id = save_answer(engineer_client)
    engineer_client.get(page_of(workload_id))  # cached now
    workload = Workload.objects.get(pk=workload_id)
    workload.name = "renamed-after-caching"
    workload.save()
    assert b"renamed-after-caching" in engineer_client.get(page_of(workload_id)).content
    workload.team.name = "Team After Rename"
    workload.team.save()
    assert b"Team After Rename" in engineer_client.get(page_of(workload_id)).content
    # a recompute stores its answer with bulk_create, which sends no signal
    before = workload_head(workload_id).answer.pk
    _raise_price(Recommendation.objects.get(workload_id=workload_id).results[0])
    with django_capture_on_commit_callbacks(execute=True):
        assert recommendation_recompute(workload_id)["created"] is True
    newest = Recommendation.objects.filter(workload_id=workload_id).latest("computed_at")
    assert workload_head(workload_id).answer.pk == newest.pk != before
    page = engineer_client.get(page_of(workload_id)).content.decode()
    assert f"computed {newest.computed_at:%Y-%m-%d %H:%M}" in page


def test_who_may_see_a_cached_workload_is_decided_on_every_request(client_as, bundled_catalog):
    owner = client_as("engineer", team="research")
    workload_id = save_answer(owner)
    assert owner.get(page_of(workload_id)).status_code == 200  # cached now
    outsider = client_as("engineer", team="vision")
    assert outsider.get(page_of(workload_id)).status_code == 404
    viewer = client_as("viewer", team="research")
    assert viewer.get(page_of(workload_id)).status_code == 403  # the page is for engineers
    from gpuledger.accounts.models import Team

    research = Team.objects.get(slug="research")
    research.members.add(outsider.user)
    assert outsider.get(page_of(workload_id)).status_code == 200
    research.members.remove(outsider.user)
    assert outsider.get(page_of(workload_id)).status_code == 404
    Workload.objects.get(pk=workload_id).delete()
    assert owner.get(page_of(workload_id)).status_code == 404


def test_a_rerun_works_on_the_stored_workload(engineer_client, bundled_catalog):
    workload_id = save_answer(engineer_client)
    engineer_client.get(page_of(workload_id))
    response = engineer_client.post(page_of(workload_id), {"top": "2", "save": "1"})
    assert response.status_code == 302
    assert Recommendation.objects.filter(workload_id=workload_id).latest("computed_at").parameters["top"] == 2
    assert workload_head(workload_id).answer.parameters["top"] == 2  # the stored answer dropped the entry


def test_can_see_is_visible_to_for_every_kind_of_user_and_workload(user_with_role, team_named):
    research, vision = team_named("research"), team_named("vision")
    users = [
        user_with_role("admin"),
        user_with_role("engineer", team=research),
        user_with_role("engineer", team=vision),
        user_with_role("engineer"),
        user_with_role("viewer", team=research),
        user_with_role("finance"),
    ]
    spec = {**WORKLOAD, "name": "w"}
    workloads = [
        Workload.objects.create(name="team", task="qlora", spec=spec, team=research, owner=users[2]),
        Workload.objects.create(name="own", task="qlora", spec=spec, team=None, owner=users[3]),
        Workload.objects.create(name="orphan", task="qlora", spec=spec, team=None, owner=None),
    ]
    for user, workload in itertools.product(users, workloads):
        expected = visible_to(Workload.objects.all(), user).filter(pk=workload.pk).exists()
        assert can_see(user, team_id=workload.team_id, owner_id=workload.owner_id) is expected, (
            user,
            workload,
        )
    # every outcome occurs: the matrix is not all one answer
    outcomes = {
        can_see(u, team_id=w.team_id, owner_id=w.owner_id) for u, w in itertools.product(users, workloads)
    }
    assert outcomes == {True, False}
