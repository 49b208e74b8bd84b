"""Capacity plan pages: the stored plans and a form (pre-filled with the last six months, the demo
billing's period), and one plan with its charts. Spend data: finance, admin and granted engineers
(billing.access.spend_page); thin shells over planning.services.capacity_plans."""

from __future__ import annotations

import datetime as dt

from django.core.exceptions import PermissionDenied
from django.shortcuts import redirect, render

from billing.access import spend_page
from billing.demo import default_start
from planning.engine.errors import PlanInputError
from planning.services.capacity_plans import (
    capacity_plan_create,
    capacity_plan_preview,
    plan_visible_or_404,
    plans_visible_to,
)
from planning.services.plan_default_prices import default_price_sentence
from planning.services.plan_requests import LOOKBACKS
from planning.views.plan_charts import cost_by_year_svg, load_duration_svg, sensitivity_svg
from procurement.costing.documents import load_document_text
from procurement.costing.values import CostInputError

FORM_FIELDS = (
    "from",
    "to",
    "teams",
    "gpu",
    "horizon_months",
    "growth",
    "scenario",
    "trials",
    "currency",
    "name",
    "providers",
    "market",
    "lookback_days",
)


def split_recommendation(result: dict) -> tuple[str, list[dict]]:
    """The plan's headline (the money, the savings) apart from each fleet's own advice, which the stored
    recommendation runs on after it: the page shows the headline and a list, not one paragraph."""
    text = result.get("recommendation") or ""
    advice = [
        {"fleet": fleet["fleet"], "text": (fleet.get("plan") or {}).get("recommendation")}
        for fleet in result.get("fleets") or []
        if (fleet.get("plan") or {}).get("recommendation")
    ]
    starts = [text.find(f" {item['fleet']}: ") for item in advice]
    if not advice or min(starts) <= 0:
        return text, []
    return text[: min(starts)], advice


def plan_display(result: dict) -> dict:
    """What the templates show of a plan result: the charts as SVG, the rest as stored."""
    sensitivity = result.get("sensitivity") or {}
    demand = result.get("demand") or {}
    fleets = result.get("fleets") or []
    headline, fleet_advice = split_recommendation(result)
    return {
        "result": result,
        "headline": headline,
        "fleet_advice": fleet_advice,
        # beside the saving: the part that rests on owned servers priced by default (plan_default_prices)
        "default_price_rests": bool(default_price_sentence(result)),
        # one chart a fleet: each has its own curve and layers (GPU-hours of different fleets do not stack)
        "fleet_charts": [
            {
                "fleet": fleet["fleet"],
                "need": fleet.get("need", ""),
                "svg": load_duration_svg(
                    (fleet.get("demand") or {}).get("load_duration_curve") or [],
                    [layer for layer in result.get("layers") or [] if layer.get("fleet") == fleet["fleet"]],
                    title=fleet["fleet"],
                ),
            }
            for fleet in fleets
        ],
        "ldc_svg": load_duration_svg(demand.get("load_duration_curve") or [], result.get("layers") or []),
        "cost_by_year_svg": cost_by_year_svg(
            result.get("layers") or [],
            result.get("status_quo_by_year") or [],
            currency=result.get("currency", ""),
        ),
        "tornado_svg": sensitivity_svg(
            sensitivity.get("rows") or [],
            base=float(sensitivity.get("base") or 0),
            currency=result.get("currency", ""),
        )
        if sensitivity.get("rows")
        else "",
    }


def _form_defaults(today: dt.date) -> dict:
    end = today.replace(day=1)  # the six whole months before this one: the demo billing's period
    start = default_start(6, today)
    return {
        "from": start.isoformat(),
        "to": end.isoformat(),
        "horizon_months": 36,
        "growth": "0",
        "scenario": "base",
        "trials": 1000,
        "teams": "",
        "gpu": "",
        "currency": "",
        "name": "",
        "study": "",
        "providers": "",
        "market": "bills",
        "lookback_days": "",
    }


def _body(form: dict) -> dict:
    body = {key: form[key] for key in FORM_FIELDS if form.get(key) not in (None, "")}
    body["teams"] = [team.strip() for team in str(form.get("teams", "")).split(",") if team.strip()]
    body["providers"] = [name.strip() for name in str(form.get("providers", "")).split(",") if name.strip()]
    if body.get("lookback_days"):  # the lookback replaces the period's start
        body.pop("from", None)
    for key in ("horizon_months", "trials"):
        if key in body:
            try:
                body[key] = int(body[key])
            except ValueError:
                raise PlanInputError(key, f"must be a whole number, got {str(body[key])[:20]!r}") from None
    if form.get("study", "").strip():
        study = load_document_text(form["study"], "study")
        if not isinstance(study, dict):
            raise PlanInputError("study", "must be a TCO study (docs/tco-spec.md)")
        body["study"] = study
    return body


@spend_page
def plan_list_page(request):
    """GET: the stored plans, and the form; with no plan stored yet, the plan of the form's default
    period is shown (computed, not stored), so the page opens with a plan. POST: compute; "save" stores."""
    form, error, preview = _form_defaults(dt.date.today()), None, None
    plans = list(plans_visible_to(request.user)[:100])
    if request.method == "POST":
        form = form | {key: request.POST.get(key, "") for key in (*FORM_FIELDS, "study")}
    if request.method == "POST" or not plans:
        try:
            body = _body(form)
            if request.method == "POST" and request.POST.get("save"):
                return redirect("plan-detail", pk=capacity_plan_create(body=body, user=request.user).pk)
            preview = capacity_plan_preview(body=body, user=request.user)
        except (PlanInputError, CostInputError) as problem:
            error = f"{problem.field}: {problem.message}" if request.method == "POST" or plans else ""
            error = error or f"No plan for the default period yet ({problem.field}: {problem.message})."
        except PermissionDenied as denied:
            error = f"teams: {denied}"
    context = {"plans": plans, "form": form, "error": error, "lookbacks": LOOKBACKS}
    if preview is not None:
        context |= plan_display(preview) | {"preview": True}
    return render(request, "planning/plan_list.html", context)


@spend_page
def plan_detail_page(request, pk: int):
    plan = plan_visible_or_404(request.user, pk)
    context = plan_display(plan.result) | {"plan": plan, "previous": plan.previous}
    return render(request, "planning/plan_detail.html", context)
