"""Who may reach capacity plans (spend data, billing/access.py): finance and admin any
scope; an engineer only plans of the teams an admin granted them; viewers and engineers without a
grant none. Each role through the API, the page and the report."""

from __future__ import annotations

import pytest

from procurement.services.reports import report_snapshot_create
from tests.planning.capacity_plans.conftest import PERIOD
from tests.planning.capacity_plans.stored import stored_plan

pytestmark = pytest.mark.django_db


@pytest.fixture
def plans(team_named, grant):
    """A plan of team vision's spend, one of platform's, one of every team; research is granted vision."""
    grant(team_named("research"), "vision")
    return {
        "vision": stored_plan(scope_teams=["vision"], name="vision plan"),
        "platform": stored_plan(scope_teams=["platform"], name="platform plan"),
        "everything": stored_plan(name="whole company"),
    }


def _urls(plan) -> dict[str, str]:
    snapshot = report_snapshot_create(kind="capacity_plan", subject_id=plan.pk)
    return {
        "api": f"/api/capacity-plans/{plan.pk}/",
        "page": f"/plans/{plan.pk}/",
        "report": f"/reports/capacity_plan/{plan.pk}/",
        "download": f"/reports/capacity_plan/snapshots/{snapshot.pk}/pdf/",
    }


@pytest.mark.parametrize("role", ["finance", "admin"])
def test_finance_and_admin_reach_every_plan(plans, client_as, role):
    client = client_as(role)
    for plan in plans.values():
        for where, url in _urls(plan).items():
            assert client.get(url).status_code == 200, (role, where, plan.name)
    listed = {item["name"] for item in client.get("/api/capacity-plans/").json()["results"]}
    assert listed == {"vision plan", "platform plan", "whole company"}


def test_a_granted_engineer_reaches_their_teams_plans_only(plans, client_as, team_named):
    client = client_as("engineer", team=team_named("research"))
    for where, url in _urls(plans["vision"]).items():
        assert client.get(url).status_code == 200, where
    for name in ("platform", "everything"):  # another team's spend, or every team's: not found
        for where, url in _urls(plans[name]).items():
            assert client.get(url).status_code == 404, (name, where)
    listed = [item["name"] for item in client.get("/api/capacity-plans/").json()["results"]]
    assert listed == ["vision plan"]
    assert client.get("/plans/").status_code == 200


def test_a_granted_engineer_cannot_plan_another_team(plans, client_as, team_named, bundled_catalog):
    client = client_as("engineer", team=team_named("research"))
    response = client.post(
        "/api/capacity-plans/", PERIOD | {"teams": ["platform"]}, content_type="application/json"
    )
    assert response.status_code == 403
    assert response.json()["errors"][0]["path"] == "teams"


@pytest.mark.parametrize("role", ["viewer", "engineer"])
def test_viewers_and_ungranted_engineers_reach_nothing(plans, client_as, role):
    client = client_as(role)  # an engineer of a team without a spend grant
    for plan in plans.values():
        for where, url in _urls(plan).items():
            assert client.get(url).status_code == 403, (role, where)
    assert client.get("/plans/").status_code == 403
    assert client.get("/api/capacity-plans/").status_code == 403
    response = client.post("/api/capacity-plans/", PERIOD, content_type="application/json")
    assert response.status_code == 403


def test_anonymous_is_sent_to_sign_in(plans, client):
    plan = plans["vision"]
    assert client.get("/plans/").status_code == 302
    assert client.get(f"/plans/{plan.pk}/").status_code == 302
    assert client.get(f"/reports/capacity_plan/{plan.pk}/").status_code == 302
    assert client.get("/api/capacity-plans/").status_code == 401
