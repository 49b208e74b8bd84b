"""Every cache of non-price data goes stale one way: a bump of a data version it names, made in the
writer's transaction (gpuledger/data_versions.py, gpuledger/versioned_cache.py). For each cache: a write
to its data makes the next read fresh, and a write to other data keeps the cached entry."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest
from django.contrib.auth.models import Group
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext

from billing.models import BillingImport, Budget, SpendGrant
from gpuledger.accounts.models import Team
from gpuledger.data_versions import bump_version, versions_key
from gpuledger.roles import user_roles
from pricing.price_version import price_version_bump
from procurement.models import Recommendation, Workload
from procurement.workload_heads import workload_head

pytestmark = pytest.mark.django_db
SPEC = {
    "name": "w",
    "task": "qlora",
    "model": {"preset": "llama-3.1-8b"},
    "seq_len": 2048,
    "training_tokens": 1e8,
}


def new_import() -> BillingImport:
    return BillingImport.objects.create(source_format="focus", file_name="bill.csv")


def new_budget() -> Budget:
    return Budget.objects.create(
        team="research", month=dt.date(2026, 11, 1), amount=Decimal(100), currency="USD"
    )


def new_workload(**fields) -> Workload:
    return Workload.objects.create(name="w", task="qlora", spec=SPEC, **fields)


WRITES = {
    "billing": [new_import, new_budget],
    "workloads": [new_workload],
    "access": [
        lambda: Team.objects.create(name="Vision", slug="vision"),
        lambda: Group.objects.get_or_create(name="finance")[0].user_set.add(_someone()),
    ],
    "price": [price_version_bump],
}


def _someone():
    from django.contrib.auth import get_user_model

    return get_user_model().objects.create_user(f"u{get_user_model().objects.count()}")


@pytest.mark.parametrize("kind", sorted(WRITES))
def test_a_write_bumps_its_own_version_and_no_other(kind):
    for write in WRITES[kind]:
        before = {name: versions_key([name]) for name in WRITES}
        write()
        after = {name: versions_key([name]) for name in WRITES}
        assert [name for name in WRITES if before[name] != after[name]] == [kind], write


def test_a_bump_rolled_back_with_its_write_leaves_the_version():
    before = versions_key(["billing"])
    with pytest.raises(RuntimeError), transaction.atomic():
        new_import()
        raise RuntimeError("the import fails")
    assert versions_key(["billing"]) == before


def test_a_login_does_not_bump_the_access_version(client, user_with_role):
    user = user_with_role("viewer")
    user.set_password("pw-for-test-0")
    user.save()
    before = versions_key(["access"])
    assert client.login(username=user.username, password="pw-for-test-0")  # saves last_login only
    assert versions_key(["access"]) == before


def role_queries(user) -> int:
    from django.contrib.auth import get_user_model

    fresh = get_user_model().objects.get(pk=user.pk)  # as a request loads it
    with CaptureQueriesContext(connection) as queries:
        assert "finance" in user_roles(fresh)
    return len([q for q in queries.captured_queries if "auth_group" in q["sql"]])


def test_user_facts_are_read_anew_after_an_access_write_only(user_with_role):
    finance = user_with_role("finance")
    role_queries(finance)  # cached now
    new_import(), new_budget(), new_workload(), price_version_bump()
    assert role_queries(finance) == 0  # unrelated writes: from the cache
    Team.objects.create(name="Vision", slug="vision")
    assert role_queries(finance) == 1  # an access write: read anew (in any process: the key changed)
    assert role_queries(finance) == 0


def head_queries(workload_id: int) -> int:
    with CaptureQueriesContext(connection) as queries:
        workload_head(workload_id)
    return len([q for q in queries.captured_queries if "procurement_workload" in q["sql"]])


def test_a_workload_head_is_read_anew_after_a_workload_or_name_write_only(user_with_role):
    workload = new_workload(owner=user_with_role("engineer"))
    head_queries(workload.pk)  # cached now
    new_import(), new_budget(), price_version_bump()
    assert head_queries(workload.pk) == 0
    workload.owner.username = "renamed-owner"  # the page shows the owner's name
    workload.owner.save()
    assert head_queries(workload.pk) == 1
    assert workload_head(workload.pk).owner.username == "renamed-owner"
    Recommendation.objects.bulk_create(
        [Recommendation(workload=workload, parameters={}, spec=SPEC, results=[], fingerprint="f")]
    )
    bump_version("workloads")  # as the recompute does after its bulk_create
    assert workload_head(workload.pk).answer is not None


def test_the_spend_review_is_built_anew_after_billing_workload_or_price_writes_only(
    monkeypatch, user_with_role
):
    from billing.review import service

    builds = []
    monkeypatch.setattr(
        service, "_build_review", lambda request: builds.append(request) or {"n": len(builds)}
    )
    request = service.make_request(start=dt.date(2026, 11, 1), end=dt.date(2026, 12, 1))

    def built() -> int:
        return service.build_review(request)["n"]

    assert built() == 1
    Team.objects.create(name="Vision", slug="vision")
    SpendGrant.objects.create(team=Team.objects.get(slug="vision"), granted_by=user_with_role("admin"))
    assert built() == 1  # access writes: the review is keyed by the request's teams, not by who holds them
    for n, write in enumerate((new_import, new_budget, new_workload, price_version_bump), start=2):
        write()
        assert built() == n, write
        assert built() == n


def test_an_answer_deleted_in_the_admin_shows_on_the_next_read(rf, user_with_role):
    """Answers have no delete receiver (a workload's cascade would load them all): the admin bumps."""
    from django.contrib import admin

    workload = new_workload()
    answer = Recommendation.objects.create(
        workload=workload, parameters={}, spec=SPEC, results=[], fingerprint="f"
    )
    assert workload_head(workload.pk).answer.pk == answer.pk  # cached now
    request = rf.post("/admin/")
    request.user = user_with_role("admin")
    admin.site._registry[Recommendation].delete_model(request, answer)
    assert workload_head(workload.pk).answer is None


def test_the_key_names_a_database_that_sqlite_names_by_a_path(monkeypatch):
    # the embedded default (gpuledger.settings.local) names its SQLite file by a Path: the README's
    # `spend_review` command failed with "expected str instance, PosixPath found" (found at integration)
    from pathlib import Path

    monkeypatch.setitem(connection.settings_dict, "NAME", Path("/tmp/gpuledger.sqlite3"))
    assert versions_key(["billing"]).startswith("/tmp/gpuledger.sqlite3:billing=")
