"""Capacity plans end to end, for the command, the API, the page and the report: load the scope's bills,
build the demand (planning.engine.demand), price the options (plan_prices, stored FX rates), lay
the plan (planning.engine.plan), and keep the result with the inputs and prices it used.

Bad input raises PlanInputError or CostInputError naming the field before anything is stored; a
stored plan is recomputed after a price refresh (recompute task and command) into a new row linked to
the one it replaces, so the page shows the previous total beside the current one.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

from django.core.exceptions import PermissionDenied
from django.db import IntegrityError, transaction
from django.http import Http404
from django.utils import timezone

from billing.access import spend_scope
from planning import models
from planning.engine.errors import PlanInputError
from planning.history import (
    PlanScope,
    plan_rows,
    plan_scope_for_user,
    plan_utilization_rows,
)
from planning.services.plan_compute import plan_result
from planning.services.plan_requests import PlanRequest, plan_request_parse
from procurement.costing.values import CostInputError
from procurement.services.currency import usd_conversion


@dataclass(frozen=True)
class ComputedPlan:
    request: PlanRequest
    result: dict[str, Any]

    @property
    def prices_used(self) -> list[dict[str, Any]]:
        return self.result["prices"]

    @property
    def fingerprint(self) -> str:
        """Hash of the inputs, the prices (by value and observation) and the result: an unchanged
        recomputation adds no row. A price that only grows stale does not count."""
        prices = [{k: v for k, v in price.items() if k != "stale"} for price in self.prices_used]
        result = {k: v for k, v in self.result.items() if k not in ("generated_at", "prices")}
        payload = json.dumps([self.request.as_inputs(), prices, result], sort_keys=True, default=str)
        return hashlib.sha256(payload.encode()).hexdigest()


def plan_currency(request: PlanRequest) -> tuple[str, str]:
    """(currency, the field that set it): the request's, else the study's, else USD. A study in another
    currency than the one asked is refused: its money fields are in its own."""
    study_currency = (request.study or {}).get("currency")
    if study_currency is not None and not isinstance(study_currency, str):
        raise PlanInputError("study.currency", f"must be an ISO 4217 code, got {str(study_currency)[:20]!r}")
    if request.currency and study_currency and study_currency.upper() != request.currency:
        raise PlanInputError(
            "currency", f"the study is in {study_currency}: ask for {study_currency} or leave currency out"
        )
    if request.currency:
        return request.currency, "currency"
    if study_currency:
        return study_currency.upper(), "study.currency"
    return "USD", "currency"


def _check_fx(currency: str, field: str) -> None:
    try:
        usd_conversion(currency, field=field)
    except CostInputError as error:
        if "FX" not in error.message:
            raise  # not a currency code at all
        message = (
            f"no FX rate stored between USD and {currency}; add one (admin: FX rates) to plan in {currency}"
        )
        raise CostInputError(field, message) from None


def capacity_plan_compute(request: PlanRequest, *, user=None) -> ComputedPlan:
    """The plan for a checked request. ``user``: the scope is narrowed to what they may read
    (plan_scope_for_user: PermissionDenied outside it); None runs as an operator (every team)."""
    currency, currency_field = plan_currency(request)
    _check_fx(currency, currency_field)
    scope = PlanScope(start=request.start, end=request.end, teams=request.teams, gpu=request.gpu)
    if user is not None:
        scope = plan_scope_for_user(user, scope)
    usage = plan_rows(scope, currency=currency)
    utilization = plan_utilization_rows(scope, usage)
    result = plan_result(
        request=request, scope=scope, usage=usage, utilization=utilization, currency=currency
    )
    resolved = PlanRequest(**{**request.__dict__, "teams": scope.teams})
    return ComputedPlan(request=resolved, result=result | {"generated_at": timezone.now().isoformat()})


def capacity_plan_preview(*, body: object, user=None) -> dict[str, Any]:
    """The plan for a request body, stored nowhere."""
    return capacity_plan_compute(plan_request_parse(body), user=user).result


def capacity_plan_create(*, body: object, user=None) -> models.CapacityPlan:
    """Compute first, store only a valid plan: bad input raises before anything is written. Saving the
    same plan twice (the same inputs, prices and result: its fingerprint), one after the other or at
    once, is one save: the second returns the stored plan (``plan.created`` says which)."""
    computed = capacity_plan_compute(plan_request_parse(body), user=user)
    owner = user if getattr(user, "is_authenticated", False) else None
    plan = _saved(computed.fingerprint)
    if plan is not None:
        return plan
    try:
        with transaction.atomic():  # a savepoint: a concurrent save of the same plan loses the race here
            plan = _store(computed, owner=owner)
    except IntegrityError:  # the unique fingerprint of a first version (models.CapacityPlan.Meta)
        plan = _saved(computed.fingerprint)
        if plan is None:
            raise
        plan.created = False
        return plan
    plan.created = True
    return plan


def _saved(fingerprint: str) -> models.CapacityPlan | None:
    plan = models.CapacityPlan.objects.filter(fingerprint=fingerprint, previous__isnull=True).first()
    if plan is not None:
        plan.created = False
    return plan


def _store(
    computed: ComputedPlan, *, owner, previous: models.CapacityPlan | None = None
) -> models.CapacityPlan:
    result = computed.result
    return models.CapacityPlan.objects.create(
        name=computed.request.name or result["name"],
        owner=owner,
        scope_teams=list(computed.request.teams),
        inputs=computed.request.as_inputs(),
        prices_used=computed.prices_used,
        result=result,
        fingerprint=computed.fingerprint,
        previous=previous,
    )


def capacity_plan_recompute(plan_id: int) -> dict[str, Any]:
    """Re-price a stored plan with its stored inputs; a changed result adds a new row linked to the one
    it replaces (exactly once: the row is locked and checked for a successor before writing)."""
    plan = models.CapacityPlan.objects.filter(pk=plan_id, next_version__isnull=True).first()
    if plan is None:
        return {"plan_id": plan_id, "skipped": "gone or superseded"}
    try:
        computed = capacity_plan_compute(plan_request_parse(plan.inputs))
    except (PlanInputError, CostInputError) as error:  # e.g. no current price for the GPU any more
        return {"plan_id": plan_id, "skipped": str(error)}
    if computed.fingerprint == plan.fingerprint:
        return {"plan_id": plan_id, "created": False}
    with transaction.atomic():
        locked = models.CapacityPlan.objects.select_for_update().filter(pk=plan_id).values_list("pk").first()
        if locked is None or models.CapacityPlan.objects.filter(previous_id=plan_id).exists():
            return {"plan_id": plan_id, "skipped": "gone or superseded"}
        new = _store(computed, owner=plan.owner, previous=plan)
        new.name = plan.name
        new.save(update_fields=["name"])
    return {
        "plan_id": new.pk,
        "created": True,
        "previous_total": plan.result.get("total_cost"),
        "total": new.result.get("total_cost"),
    }


def capacity_plan_targets() -> list[int]:
    """Current stored plans (not superseded), for the recompute after a price refresh."""
    return sorted(models.CapacityPlan.objects.filter(next_version__isnull=True).values_list("pk", flat=True))


def _visible_ids(user, queryset) -> list[int] | None:
    """None: every plan (finance, admin); else the plans whose spend teams the user's grant covers."""
    scope = spend_scope(user)
    if scope is None:
        raise PermissionDenied
    if scope.everything:
        return None
    granted = set(scope.teams)
    return [pk for pk, teams in queryset.values_list("pk", "scope_teams") if teams and set(teams) <= granted]


def plans_visible_to(user):
    """The current stored plans ``user`` may read, newest first."""
    current = models.CapacityPlan.objects.filter(next_version__isnull=True)
    ids = _visible_ids(user, current)
    return current if ids is None else current.filter(pk__in=ids)


def plan_visible_or_404(user, pk: int) -> models.CapacityPlan:
    """A stored plan ``user`` may read; another scope's plan is "not found", as another team's object."""
    plans = models.CapacityPlan.objects.filter(pk=pk)
    ids = _visible_ids(user, plans)
    plan = plans.select_related("previous").first() if ids is None or pk in ids else None
    if plan is None:
        raise Http404("No such plan.")
    return plan


def stored_plan_body(plan: models.CapacityPlan, *, summary: bool = False) -> dict[str, Any]:
    """The API's body of a stored plan (a list shows its headline figures only)."""
    head = {
        "id": plan.pk,
        "name": plan.name,
        "created_at": plan.created_at.isoformat(),
        "previous_id": plan.previous_id,
        "scope_teams": plan.scope_teams,
    }
    if summary:
        keys = (
            "currency",
            "scope",
            "recommendation",
            "total_cost",
            "npv",
            "p90_total_cost",
            "status_quo_cost",
            "savings_vs_status_quo",
            "break_even_month",
        )
        return head | {key: plan.result.get(key) for key in keys}
    return plan.result | head | {"inputs": plan.inputs, "prices_used": plan.prices_used}
