"""Who may reach what: every route of the URL conf x {anonymous, viewer, engineer, finance, admin, an
engineer of another team} -> the expected status.

The routes come from the URL conf itself, so a new route without a rule in RULES fails
`test_every_route_has_a_rule`. Expected statuses: a page redirects anonymous users to sign in (302), an
API answers them 401; a signed-in user without the role gets 403; another team's object is 404 (its
existence is not revealed). POST-only API routes are posted an empty body: 400 means the caller got
past authorization to input validation.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field

import pytest
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver, reverse

from procurement import models
from procurement.reports.registry import ReportPeriod
from procurement.services.recommendations import recommendation_create, workload_create_from_spec
from procurement.services.reports import report_snapshot_create
from procurement.services.tco import tco_study_create
from procurement.views.costing import EXAMPLE_STUDY
from tests.planning.capacity_plans.stored import stored_plan

pytestmark = pytest.mark.django_db

ROLES = ("anonymous", "viewer", "engineer", "finance", "admin", "other_team_engineer")


@dataclass(frozen=True)
class Rule:
    expect: dict[str, int]
    method: str = "get"
    kwargs: tuple[str, ...] = ()  # names of fixture objects that fill the route's arguments
    data: dict = field(default_factory=dict)


def statuses(anonymous, viewer, engineer, finance, admin, other_team_engineer) -> dict[str, int]:
    return dict(zip(ROLES, (anonymous, viewer, engineer, finance, admin, other_team_engineer), strict=True))


VIEWER_PAGE = statuses(302, 200, 200, 200, 200, 200)
ENGINEER_PAGE = statuses(302, 403, 200, 403, 200, 200)
TEAM_OBJECT_PAGE = statuses(302, 403, 200, 403, 200, 404)
VIEWER_API = statuses(401, 200, 200, 200, 200, 200)
ENGINEER_API_POST = statuses(401, 403, 400, 403, 400, 400)
SIGNED_IN_PAGE = statuses(302, 200, 200, 200, 200, 200)
SIGNED_IN_POST = statuses(302, 302, 302, 302, 302, 302)
FINANCE_PAGE = statuses(302, 403, 403, 200, 200, 403)  # spend data: finance and admin only

RULES: dict[str, Rule] = {
    "healthz": Rule(statuses(200, 200, 200, 200, 200, 200)),
    # signed-in users are sent on from the login page
    "login": Rule(statuses(200, 302, 302, 302, 302, 302)),
    "logout": Rule(statuses(302, 302, 302, 302, 302, 302), method="post"),  # then to the login page
    "account": Rule(SIGNED_IN_PAGE),
    "account-token-create": Rule(SIGNED_IN_POST, method="post", data={"name": "matrix"}),
    "account-token-revoke": Rule(SIGNED_IN_POST, method="post", kwargs=("token_id",)),
    "catalog": Rule(VIEWER_PAGE),
    "offer": Rule(VIEWER_PAGE, kwargs=("offer",)),
    "status": Rule(VIEWER_PAGE),
    "dashboard": Rule(statuses(302, 403, 200, 200, 200, 200)),  # finance too: its spend panel
    "sizing": Rule(ENGINEER_PAGE),
    "tco-list": Rule(ENGINEER_PAGE),
    "tco-detail": Rule(TEAM_OBJECT_PAGE, kwargs=("study",)),
    "workloads": Rule(ENGINEER_PAGE),
    "workload-create": Rule(ENGINEER_PAGE),
    "recommendations": Rule(TEAM_OBJECT_PAGE, kwargs=("workload",)),
    "workload-edit": Rule(TEAM_OBJECT_PAGE, kwargs=("workload",)),
    "workload-delete": Rule(TEAM_OBJECT_PAGE, kwargs=("workload",)),  # GET: the confirmation page
    "workload-duplicate": Rule(statuses(302, 403, 302, 403, 302, 404), method="post", kwargs=("workload",)),
    "api-gpu-list": Rule(VIEWER_API),
    "api-gpu-detail": Rule(VIEWER_API, kwargs=("gpu",)),
    "api-offer-list": Rule(VIEWER_API),
    "api-offer-spot-history": Rule(VIEWER_API, kwargs=("offer",)),
    "api-tco-create": Rule(ENGINEER_API_POST, method="post"),
    "api-commitments": Rule(ENGINEER_API_POST, method="post"),
    "api-tco-detail": Rule(statuses(401, 403, 200, 403, 200, 404), kwargs=("study",)),
    "api-recommendation-create": Rule(ENGINEER_API_POST, method="post"),
    "api-size": Rule(ENGINEER_API_POST, method="post"),
    "api-schema": Rule(VIEWER_API),
    "api-docs": Rule(VIEWER_PAGE),  # an HTML page: anonymous visitors are sent to sign in
    "api-root": Rule(VIEWER_API),
    "api-benchmarks": Rule(statuses(401, 403, 200, 403, 200, 200)),
    "tco-new": Rule(ENGINEER_PAGE),
    "tco-edit": Rule(TEAM_OBJECT_PAGE, kwargs=("study",)),
    "tco-duplicate": Rule(TEAM_OBJECT_PAGE, kwargs=("study",)),
    "tco-delete": Rule(TEAM_OBJECT_PAGE, kwargs=("study",)),  # GET: the confirmation page
    "benchmark-list": Rule(ENGINEER_PAGE),
    "benchmark-calibration": Rule(ENGINEER_PAGE),
    # a run is its team's (issue 31); the calibration it feeds is shared
    "benchmark-detail": Rule(TEAM_OBJECT_PAGE, kwargs=("benchmark",)),
    "report-spot": Rule(TEAM_OBJECT_PAGE, kwargs=("workload_subject",)),
    "report-spot-download": Rule(TEAM_OBJECT_PAGE, kwargs=("spot_snapshot",)),
    "report-spot-live-download": Rule(TEAM_OBJECT_PAGE, kwargs=("workload_subject", "csv_format")),
    "report-rent_or_buy-live-download": Rule(TEAM_OBJECT_PAGE, kwargs=("study_subject", "csv_format")),
    "report-capacity_plan-live-download": Rule(FINANCE_PAGE, kwargs=("plan_subject", "csv_format")),
    "report-rent_or_buy": Rule(TEAM_OBJECT_PAGE, kwargs=("study_subject",)),
    "report-rent_or_buy-download": Rule(TEAM_OBJECT_PAGE, kwargs=("rent_snapshot",)),
    "report-spend_review": Rule(FINANCE_PAGE),
    "report-spend_review-period-download": Rule(FINANCE_PAGE, kwargs=("csv_format",)),
    "report-spend_review-download": Rule(FINANCE_PAGE, kwargs=("spend_snapshot",)),
    "billing-review": Rule(FINANCE_PAGE),
    "billing-review-export": Rule(FINANCE_PAGE, kwargs=("csv_format",)),
    "billing-upload": Rule(FINANCE_PAGE),
    "api-billing-spend-review": Rule(statuses(401, 403, 403, 400, 400, 403)),  # no period given: 400
    "api-billing-imports": Rule(statuses(401, 403, 403, 415, 415, 403), method="post"),  # a file upload only
    "billing-budgets": Rule(FINANCE_PAGE),  # granted engineers too: tests/billing/test_finance_surfaces.py
    "billing-spend-rows": Rule(FINANCE_PAGE),
    "billing-invoice": Rule(FINANCE_PAGE),  # issue 28: the whole account's invoices
    "api-billing-budgets": Rule(statuses(401, 403, 403, 200, 200, 403)),
    "api-billing-anomalies": Rule(statuses(401, 403, 403, 400, 400, 403)),  # no period given: 400
    "api-billing-spend-rows": Rule(statuses(401, 403, 403, 400, 400, 403)),  # no day given: 400
    # capacity plans read spend: finance and admin; an engineer only with a grant (tests/planning/capacity_plans)
    "plans": Rule(FINANCE_PAGE),
    "plan-detail": Rule(FINANCE_PAGE, kwargs=("plan",)),
    "api-capacity-plans": Rule(statuses(401, 403, 403, 200, 200, 403)),  # GET: the stored plans
    "api-capacity-plan-detail": Rule(statuses(401, 403, 403, 200, 200, 403), kwargs=("plan",)),
    "report-capacity_plan": Rule(FINANCE_PAGE, kwargs=("plan_subject",)),
    "report-capacity_plan-download": Rule(FINANCE_PAGE, kwargs=("plan_snapshot",)),
}
# The admin site: its index and every model's list are requested; its other routes (change, delete,
# history of one object) go through the same AdminSite.admin_view check, covered by this one rule.
ADMIN_SITE = statuses(302, 302, 302, 302, 200, 302)


def all_routes(patterns=None, prefix: str = "", namespace: str = "") -> list[tuple[str, str]]:
    """(route name, route pattern) of every route, with namespaces (`admin:index`)."""
    found = []
    for entry in get_resolver().url_patterns if patterns is None else patterns:
        if isinstance(entry, URLResolver):
            inner = f"{namespace}{entry.namespace}:" if entry.namespace else namespace
            found += all_routes(entry.url_patterns, prefix + str(entry.pattern), inner)
        elif isinstance(entry, URLPattern):
            name = f"{namespace}{entry.name}" if entry.name else f"(unnamed) {prefix}{entry.pattern}"
            found.append((name, prefix + str(entry.pattern)))
    return found


def is_admin_site(name: str, route: str) -> bool:
    return name.startswith("admin:") or route.startswith("admin/")


def test_every_route_has_a_rule():
    missing = [
        f"{name}  ({route})"
        for name, route in all_routes()
        if name not in RULES and not is_admin_site(name, route)
    ]
    assert not missing, "routes without an authorization rule in RULES:\n" + "\n".join(missing)


@pytest.fixture
def world(bundled_catalog, user_with_role, team_named):
    """Team research: an engineer who owns a workload and a study. Team platform: another engineer."""
    from django.contrib.auth.models import Group

    from gpuledger.accounts.tokens import token_create
    from pricing.models import GpuModel, Offer
    from procurement.costing.documents import load_document_text

    research, platform = team_named("research"), team_named("platform")
    users = {
        "viewer": user_with_role("viewer", team=research),
        "engineer": user_with_role("engineer", team=research),
        "finance": user_with_role("finance", team=research),
        "admin": user_with_role("admin", team=platform, is_staff=False),
        "other_team_engineer": user_with_role("engineer", team=platform),
    }
    Group.objects.get(name="admin")  # created by the migration, not by the fixture
    owner = users["engineer"]
    workload = workload_create_from_spec(
        document={"name": "matrix job", "task": "inference", "model": {"preset": "llama-3.1-8b"}},
        owner=owner,
        team=research,
    )
    study = tco_study_create(document=load_document_text(EXAMPLE_STUDY, "study"), owner=owner, team=research)
    token, _ = token_create(owner, "matrix")
    recommendation_create(workload=workload, parameters={"top": 3}, saved_by=owner)
    spot = report_snapshot_create(kind="spot", subject_id=workload.pk, user=owner)
    rent = report_snapshot_create(kind="rent_or_buy", subject_id=study.pk, user=owner)
    benchmark = models.BenchmarkResult.objects.create(
        gpu=GpuModel.objects.get(slug="h100-sxm5-80gb"),
        precision="bf16",
        measured_at=dt.datetime(2026, 11, 1, tzinfo=dt.UTC),
        source="matrix",
        task="inference",
        model_name="matrix run",
        owner=owner,
        team=research,
    )
    spend = report_snapshot_create(
        kind="spend_review", period=ReportPeriod(dt.date(2026, 5, 1), dt.date(2026, 6, 1))
    )  # no spend rows: an empty review is still a report
    plan = stored_plan()
    plan_report = report_snapshot_create(kind="capacity_plan", subject_id=plan.pk)
    objects = {
        "workload": {"workload_id": workload.pk},
        "study": {"pk": study.pk},
        "offer": {"pk": Offer.objects.order_by("pk").first().pk},
        "gpu": {"slug": GpuModel.objects.order_by("pk").first().slug},
        "token_id": {"token_id": token.pk},
        "csv_format": {"fmt": "csv"},
        "spend_snapshot": {"pk": spend.pk, "fmt": "csv"},
        "workload_subject": {"subject_id": workload.pk},
        "study_subject": {"subject_id": study.pk},
        "spot_snapshot": {"pk": spot.pk, "fmt": "csv"},
        "rent_snapshot": {"pk": rent.pk, "fmt": "csv"},
        "benchmark": {"pk": benchmark.pk},
        "plan": {"pk": plan.pk},
        "plan_subject": {"subject_id": plan.pk},
        "plan_snapshot": {"pk": plan_report.pk, "fmt": "csv"},
    }
    return users, objects


def request_status(user, name: str, rule: Rule, objects: dict) -> int:
    client = Client()
    if user is not None:
        client.force_login(user)
    kwargs = {}
    for key in rule.kwargs:
        kwargs |= objects[key]
    url = reverse(name, kwargs=kwargs or None)
    if rule.method == "post":
        is_api = url.startswith("/api/")
        response = (
            client.post(url, rule.data, content_type="application/json")
            if is_api
            else client.post(url, rule.data)
        )
    else:
        response = client.get(url)
    return response.status_code


def test_each_role_gets_the_expected_status_on_every_route(world):
    users, objects = world
    mismatches = []
    for name, route in all_routes():
        if is_admin_site(name, route):
            continue
        rule = RULES[name]
        for role in ROLES:
            got = request_status(users.get(role), name, rule, objects)
            if got != rule.expect[role]:
                mismatches.append(f"{name} as {role}: expected {rule.expect[role]}, got {got}")
    assert not mismatches, "\n".join(mismatches)


def test_the_admin_site_is_for_the_admin_role_only(world):
    users, objects = world
    admin_routes = [name for name, route in all_routes() if name.startswith("admin:")]
    listed = [name for name in admin_routes if name == "admin:index" or name.endswith("_changelist")]
    assert "admin:pricing_priceobservation_changelist" in listed
    mismatches = []
    for name in listed:
        for role in ROLES:
            got = request_status(users.get(role), name, Rule(ADMIN_SITE), objects)
            if got != ADMIN_SITE[role]:
                mismatches.append(f"{name} as {role}: expected {ADMIN_SITE[role]}, got {got}")
    assert not mismatches, "\n".join(mismatches)


def test_a_role_without_a_rule_would_be_caught():
    """The matrix covers exactly the six callers, so a rule missing one fails loudly, not silently."""
    assert all(set(rule.expect) == set(ROLES) for rule in RULES.values())
    assert models.Workload._meta.get_field("team").null  # rows stored before teams keep working


# Routes that are open on purpose, or need a signed-in user without any role (their own account).
OPEN_OR_ACCOUNT_ROUTES = {
    "healthz",
    "login",
    "logout",
    "account",
    "account-token-create",
    "account-token-revoke",
}


def test_every_page_and_api_view_names_the_roles_it_needs():
    """Beyond the statuses: each view states its roles explicitly (role_required on pages, a
    role_permission class on API views, SERVE_PERMISSIONS for the schema and docs), so no view relies on
    the sign-in middleware or DRF's IsAuthenticated fallback alone."""
    from django.conf import settings
    from django.urls import resolve

    unguarded = []
    for name, route in all_routes():
        if is_admin_site(name, route) or name in OPEN_OR_ACCOUNT_ROUTES:
            continue
        rule = RULES[name]
        kwargs = {key: 1 for key in ("pk", "workload_id", "token_id", "subject_id")} | {
            "slug": "x",
            "fmt": "csv",
        }
        path_kwargs = {
            key: value for key, value in kwargs.items() if f"<{key}>" in route or f":{key}>" in route
        }
        view = resolve(reverse(name, kwargs=path_kwargs or None)).func
        view_class = getattr(view, "cls", None) or getattr(view, "view_class", None)
        if view_class is not None and hasattr(view_class, "permission_classes"):
            if view_class.__module__.startswith("drf_spectacular"):
                roles = settings.SPECTACULAR_SETTINGS.get("SERVE_PERMISSIONS")
            else:
                roles = [getattr(cls, "required_roles", None) for cls in view_class.permission_classes]
            if not roles or not all(roles):
                unguarded.append(name)
        elif not getattr(view, "required_roles", None):
            unguarded.append(name)
        assert rule.expect["anonymous"] in (302, 401), name
    assert not unguarded, f"views without an explicit role: {unguarded}"
