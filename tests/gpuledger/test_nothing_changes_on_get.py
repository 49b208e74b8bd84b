"""Nothing changes on GET (issue 31, finding 4): every GET route of the URL conf, opened by every role
that may open it, leaves every table as it was. A report page or download computes its report; only
"Keep this report" (a POST) stores a snapshot. The one store a GET may fill is a sign-in's session."""

from __future__ import annotations

import pytest
from django.apps import apps
from django.test import Client
from django.urls import reverse

from procurement.models import ReportSnapshot
from tests.gpuledger.test_authorization_matrix import (  # noqa: F401  (world: the fixture)
    ROLES,
    RULES,
    all_routes,
    is_admin_site,
    world,
)

pytestmark = pytest.mark.django_db
CACHES = {"sessions.Session"}  # a sign-in touches its session


def table_counts() -> dict[str, int]:
    return {
        model._meta.label: model.objects.count()
        for model in apps.get_models()
        if model._meta.label not in CACHES and not model._meta.proxy
    }


def test_no_get_route_writes_a_row(world):  # noqa: F811
    users, objects = world
    clients = {}
    for role in ROLES:
        clients[role] = Client()
        if users.get(role) is not None:
            clients[role].force_login(users[role])
    before = table_counts()
    opened = 0
    for name, route in all_routes():
        rule = RULES.get(name)
        if is_admin_site(name, route) or rule is None or rule.method != "get":
            continue
        kwargs = {}
        for key in rule.kwargs:
            kwargs |= objects[key]
        url = reverse(name, kwargs=kwargs or None)
        for role in ROLES:
            if rule.expect[role] == 200:
                clients[role].get(
                    url, {"start": "2025-01-01", "end": "2025-02-01"} if "spend" in name else {}
                )
                opened += 1
    assert opened > 60
    after = table_counts()
    assert {label: (before[label], after[label]) for label in before if before[label] != after[label]} == {}


def test_a_spend_report_for_a_new_period_is_computed_and_kept_only_on_post(client_as):
    client = client_as("finance")
    for start, end in (("2024-01-01", "2024-02-01"), ("2024-02-01", "2024-03-01")):
        assert client.get("/reports/spend_review/", {"start": start, "end": end}).status_code == 200
        for fmt in ("csv", "xlsx", "html"):
            download = client.get(f"/reports/spend_review/download/{fmt}/", {"start": start, "end": end})
            assert download.status_code == 200
    assert ReportSnapshot.objects.count() == 0
    kept = client.post("/reports/spend_review/?start=2024-01-01&end=2024-02-01")
    assert kept.status_code == 200 and ReportSnapshot.objects.count() == 1
