"""Spend answers are not cached (issue 31, finding 6): every spend page, API answer and export (every
route whose rule is finance-only or spend-granted in the authorization matrix, and the billing exports)
carries Cache-Control: no-store, for the roles that reach it; static files do not."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from tests.gpuledger.test_authorization_matrix import (  # noqa: F401  (world: the fixture)
    FINANCE_PAGE,
    RULES,
    all_routes,
    is_admin_site,
    world,
)

pytestmark = pytest.mark.django_db
EXPORTS = [
    "/billing/review.csv",
    "/billing/review.json",
    "/billing/review.html",
    "/api/billing/spend-review/?from=2026-05-01&to=2026-06-01",
]


def _is_spend(name: str, rule) -> bool:
    finance_only = rule.expect.get("finance") in (200, 400) and rule.expect.get("engineer") == 403
    return rule.expect == FINANCE_PAGE or finance_only  # 400: a spend API asked without its period


def test_every_spend_answer_and_export_is_no_store(world):  # noqa: F811
    users, objects = world
    client = Client()
    client.force_login(users["finance"])
    checked = []
    for name, route in all_routes():
        rule = RULES.get(name)
        if is_admin_site(name, route) or rule is None or rule.method != "get" or not _is_spend(name, rule):
            continue
        kwargs = {}
        for key in rule.kwargs:
            kwargs |= objects[key]
        checked.append(reverse(name, kwargs=kwargs or None))
    assert {"/billing/", "/api/billing/spend-review/"} <= set(checked) and len(checked) >= 12, checked
    for url in checked + EXPORTS:
        response = client.get(url)
        assert response.status_code < 500, url  # an error answer about spend is not kept either
        assert "no-store" in response.get("Cache-Control", ""), url


def test_static_files_keep_their_own_headers(client):
    response = client.get("/static/does-not-exist.css")
    assert "no-store" not in response.get("Cache-Control", "") or response.status_code == 404
