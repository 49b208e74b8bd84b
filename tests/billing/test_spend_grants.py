"""Engineers see their team's spend only when an admin grants it (issue 8: "engineers see their team's
spend only if the admin grants it"), and then only their own team's: on /billing/, its exports, the API
and the dashboard. Viewers never; other teams' engineers never; finance and admin always (all teams).

Statuses by caller, in the style of tests/gpuledger/test_authorization_matrix.py, before and after a
grant made on the admin site, then after the admin revokes it."""

from __future__ import annotations

import json
import re

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from billing.models import SpendGrant
from tests.billing.catalog import make_catalog

pytestmark = pytest.mark.django_db

HEADER = "ChargePeriodStart,ChargePeriodEnd,ChargeCategory,BilledCost,EffectiveCost,BillingCurrency,ProviderName,RegionId,ConsumedQuantity,ConsumedUnit,x_UsageType,Tags"
# research: 24 g6.xlarge hours at 0.8048 = 19.3152; platform: 10 hours = 8.048
BILL = f"""{HEADER}
2026-05-01T00:00:00Z,2026-05-02T00:00:00Z,Usage,19.3152,19.3152,USD,AWS,us-east-1,24,Hours,USE1-BoxUsage:g6.xlarge,"{{""team"": ""research""}}"
2026-05-01T00:00:00Z,2026-05-02T00:00:00Z,Usage,8.048,8.048,USD,AWS,us-east-1,10,Hours,USE1-BoxUsage:g6.xlarge,"{{""team"": ""platform""}}"
"""
PERIOD = "from=2026-05-01&to=2026-06-01"
SPEND_GETS = [
    "/billing/",
    "/billing/review.csv",
    "/billing/review.json",
    "/billing/review.html",
    f"/api/billing/spend-review/?{PERIOD}",
]
CALLERS = ("viewer", "engineer", "other_team_engineer", "engineer_without_team", "finance", "admin")
NO_GRANT = dict.fromkeys(CALLERS, 403) | {"finance": 200, "admin": 200}
RESEARCH_GRANTED = NO_GRANT | {"engineer": 200}


@pytest.fixture
def world(user_with_role, team_named):
    make_catalog()
    research, platform = team_named("research"), team_named("platform")
    users = {
        "viewer": user_with_role("viewer", team=research),
        "engineer": user_with_role("engineer", team=research),
        "other_team_engineer": user_with_role("engineer", team=platform),
        "engineer_without_team": user_with_role("engineer"),
        "finance": user_with_role("finance", team=research),
        "admin": user_with_role("admin", team=platform),
    }
    clients = {}
    for name, user in users.items():
        clients[name] = Client()
        clients[name].force_login(user)
    upload = SimpleUploadedFile("bill.csv", BILL.encode(), content_type="text/csv")
    response = clients["finance"].post("/api/billing/imports/", {"file": upload, "format": "focus"})
    assert response.status_code == 201, response.content
    return users, clients, research


def statuses(clients) -> dict[str, dict[str, int]]:
    return {url: {name: clients[name].get(url).status_code for name in CALLERS} for url in SPEND_GETS}


def grant_on_admin_site(client, team, spend_team=""):
    return client.post("/admin/billing/spendgrant/add/", {"team": team.pk, "spend_team": spend_team})


def test_without_a_grant_spend_is_finance_and_admin_only(world):
    _, clients, _ = world
    assert statuses(clients) == dict.fromkeys(SPEND_GETS, NO_GRANT)


def test_only_the_admin_can_grant_and_the_grant_records_who(world):
    users, clients, research = world
    for name in ("engineer", "finance", "viewer"):
        response = grant_on_admin_site(clients[name], research)
        assert response.status_code == 302 and "/login" in response["Location"]  # the admin site refuses
    assert not SpendGrant.objects.exists()
    response = grant_on_admin_site(clients["admin"], research)
    assert response.status_code == 302, response.content
    grant = SpendGrant.objects.get()
    assert (grant.team, grant.granted_by, grant.spend_label) == (research, users["admin"], "research")


def test_a_grant_opens_the_team_its_own_spend_only(world):
    _, clients, research = world
    assert grant_on_admin_site(clients["admin"], research).status_code == 302
    assert statuses(clients) == dict.fromkeys(SPEND_GETS, RESEARCH_GRANTED)
    engineer = clients["engineer"]
    review = engineer.get(f"/api/billing/spend-review/?{PERIOD}").json()
    assert review["totals"]["effective_cost"] == "19.32"  # research only; all teams would be 27.36
    assert [row["team"] for row in review["by_team"]] == ["research"]
    assert (
        clients["finance"].get(f"/api/billing/spend-review/?{PERIOD}").json()["totals"]["effective_cost"]
        == "27.36"
    )
    # asking for another team is refused, on the API, the page and the exports
    assert engineer.get(f"/api/billing/spend-review/?{PERIOD}&team=platform").status_code == 403
    assert engineer.get("/billing/?start=2026-05-01&end=2026-06-01&team=platform").status_code == 403
    assert (
        engineer.get("/billing/review.csv?start=2026-05-01&end=2026-06-01&team=platform").status_code == 403
    )
    exported = engineer.get("/billing/review.csv?start=2026-05-01&end=2026-06-01").content.decode()
    assert "research" in exported and "platform" not in exported
    body = json.loads(engineer.get("/billing/review.json?start=2026-05-01&end=2026-06-01").content)
    assert body["review"]["totals"]["effective_cost"] == "19.32"
    page = engineer.get("/billing/?start=2026-05-01&end=2026-06-01").content.decode()
    assert 'id="spend-grant-note"' in page and "platform" not in page
    # uploads and the finance report downloads stay finance and admin only
    assert engineer.get("/billing/upload/").status_code == 403
    assert engineer.get("/reports/spend_review/").status_code in (403, 404)


def test_the_spend_team_can_differ_from_the_team_slug(world):
    """Bills tag the team as they like: the grant names the tag value; rows of other tags stay hidden."""
    _, clients, research = world
    grant_on_admin_site(clients["admin"], research, spend_team="platform")
    review = clients["engineer"].get(f"/api/billing/spend-review/?{PERIOD}").json()
    assert review["totals"]["effective_cost"] == "8.05"
    assert [row["team"] for row in review["by_team"]] == ["platform"]


def test_the_dashboard_shows_a_granted_engineer_their_team_only(world):
    _, clients, research = world
    assert 'id="finance-spend"' not in clients["engineer"].get("/dashboard/").content.decode()
    grant_on_admin_site(clients["admin"], research)
    page = clients["engineer"].get("/dashboard/").content.decode()
    assert 'id="finance-spend"' in page and "GPU spend of team research" in page
    assert "19.32" in page and "27.36" not in page
    assert 'id="finance-spend"' not in clients["other_team_engineer"].get("/dashboard/").content.decode()
    assert "27.36" in clients["finance"].get("/dashboard/").content.decode()


def test_revoking_the_grant_closes_the_spend_again(world):
    _, clients, research = world
    grant_on_admin_site(clients["admin"], research)
    grant = SpendGrant.objects.get()
    response = clients["admin"].post(f"/admin/billing/spendgrant/{grant.pk}/delete/", {"post": "yes"})
    assert response.status_code == 302
    assert statuses(clients) == dict.fromkeys(SPEND_GETS, NO_GRANT)


def nav_labels(client) -> list[str]:
    nav = re.search(
        r'<nav aria-label="Main">(.*?)</nav>', client.get("/status/").content.decode(), re.S
    ).group(1)
    return re.findall(r">([^<]+)</a>", nav)


def test_the_spend_link_is_shown_to_whoever_may_open_the_spend_pages(world):
    _, clients, research = world
    shown = {name: "Spend" in nav_labels(clients[name]) for name in CALLERS}
    assert shown == dict.fromkeys(CALLERS, False) | {"finance": True, "admin": True}
    grant_on_admin_site(clients["admin"], research)
    shown = {name: "Spend" in nav_labels(clients[name]) for name in CALLERS}
    assert shown == dict.fromkeys(CALLERS, False) | {"finance": True, "admin": True, "engineer": True}
    assert clients["engineer"].get("/billing/").status_code == 200  # the link leads somewhere it may go
