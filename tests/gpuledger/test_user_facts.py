"""A user's roles, teams and spend grants are cached between requests (gpuledger/accounts/user_facts.py)
and every change made through the ORM shows on the very next request, whichever side of the relation
it was made from."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Group
from django.db import connection
from django.test.utils import CaptureQueriesContext

from billing.models import SpendGrant
from procurement.models import Workload

pytestmark = pytest.mark.django_db
SPEND = "/billing/"
SPEC = {
    "name": "w",
    "task": "qlora",
    "model": {"preset": "llama-3.1-8b"},
    "seq_len": 2048,
    "training_tokens": 1e8,
}


def status(client, path: str = SPEND) -> int:
    return client.get(path).status_code


def test_the_roles_are_read_once_then_from_the_cache(client_as):
    finance = client_as("finance")
    assert status(finance) == 200
    with CaptureQueriesContext(connection) as queries:
        assert status(finance) == 200
    assert not [q for q in queries.captured_queries if "auth_group" in q["sql"]]


@pytest.mark.parametrize(
    "how", ["user.groups.remove", "group.user_set.remove", "group.user_set.clear", "group.delete"]
)
def test_a_role_taken_away_is_gone_on_the_next_request(client_as, how):
    finance = client_as("finance")
    assert status(finance) == 200  # and now cached
    group = Group.objects.get(name="finance")
    {
        "user.groups.remove": lambda: finance.user.groups.remove(group),
        "group.user_set.remove": lambda: group.user_set.remove(finance.user),
        "group.user_set.clear": lambda: group.user_set.clear(),
        "group.delete": lambda: group.delete(),
    }[how]()
    assert status(finance) == 403


def test_a_role_given_shows_on_the_next_request(client_as):
    viewer = client_as("viewer")
    assert status(viewer) == 403
    Group.objects.get_or_create(name="finance")[0].user_set.add(viewer.user)
    assert status(viewer) == 200


def test_a_spend_grant_made_and_revoked_shows_at_once(client_as, user_with_role, team_named):
    engineer = client_as("engineer", team="research")
    assert status(engineer) == 403
    grant = SpendGrant.objects.create(team=team_named("research"), granted_by=user_with_role("admin"))
    assert status(engineer) == 200
    grant.delete()
    assert status(engineer) == 403


def test_deleting_a_granted_team_takes_its_spend_away_at_once(client_as, user_with_role, team_named):
    engineer = client_as("engineer", team="research")
    SpendGrant.objects.create(team=team_named("research"), granted_by=user_with_role("admin"))
    assert status(engineer) == 200
    team_named("research").delete()  # the grant goes with it (CASCADE)
    assert status(engineer) == 403


@pytest.fixture
def team_page(client_as, team_named):
    """(team research, an engineer of it, the edit page of its workload), the page seen once (cached)."""
    research = team_named("research")
    engineer = client_as("engineer", team=research)
    workload = Workload.objects.create(name="w", task="qlora", spec=SPEC, team=research)
    page = f"/workloads/{workload.pk}/edit/"
    assert status(engineer, page) == 200
    return research, engineer, page


def test_leaving_a_team_hides_its_workloads_on_the_next_request(team_page):
    research, engineer, page = team_page
    research.members.remove(engineer.user)
    assert status(engineer, page) == 404
    engineer.user.teams.add(research)
    assert status(engineer, page) == 200


def test_a_team_cleared_of_members_hides_its_workloads(team_page):
    research, engineer, page = team_page
    research.members.clear()
    assert status(engineer, page) == 404


def test_a_users_facts_come_in_one_round_trip_and_a_version_bump_is_not_outrun(client_as, monkeypatch):
    """The first fact asked for on a user object (one request) reads all of that user's facts with one
    MGET; after an access write since (the version bumped), the facts are read again at the new version,
    not taken from that prefetch."""
    from django.contrib.auth import get_user_model

    from billing.access import granted_teams
    from gpuledger.accounts import user_facts
    from gpuledger.accounts.teams import user_team_ids
    from gpuledger.data_versions import bump_version
    from gpuledger.roles import user_roles

    engineer = client_as("engineer")
    assert engineer.get("/workloads/").status_code == 200  # every fact of the engineer now cached
    granted_teams(engineer.user)
    reads = []
    for name in ("get", "get_many"):
        original = getattr(user_facts.cache, name)
        monkeypatch.setattr(
            user_facts.cache, name, lambda *a, _o=original, _n=name, **k: reads.append(_n) or _o(*a, **k)
        )
    user = get_user_model().objects.get(pk=engineer.user.pk)  # a fresh object, as each request loads
    user_roles(user), user_team_ids(user), granted_teams(user)
    assert reads == ["get_many"]
    bump_version("access")
    user = get_user_model().objects.get(pk=engineer.user.pk)
    user_roles(user), user_team_ids(user), granted_teams(user)  # computed and cached at the new version
    user = get_user_model().objects.get(pk=engineer.user.pk)
    user_roles(user)
    reads.clear()
    user_team_ids(user)  # from the prefetch made at this version
    assert reads == []
    bump_version("access")  # e.g. the request itself changed a grant: the prefetch is not used
    granted_teams(user)
    assert reads == ["get_many"]
