"""Finance pages for budgets and the spend rows behind an anomaly.

/billing/budgets/: finance and admin read and edit every budget; an engineer of a team an admin granted
its spend reads that team's budgets only (access.py). /billing/spend-rows/: finance and admin only."""

from __future__ import annotations

import datetime as dt

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.shortcuts import redirect, render

from billing.access import spend_page
from billing.finance.budget_service import budget_save, parse_month
from billing.finance.charts import budget_chart
from billing.finance.sections import budget_states
from billing.finance.selectors import spend_rows
from billing.forms import BudgetForm, SpendRowsForm
from billing.review.engine import ReviewInputError
from gpuledger.roles import ADMIN, FINANCE, role_required


def _month(text: str | None) -> dt.date:
    return parse_month(text) if text else dt.date.today().replace(day=1)


@spend_page
def budgets_page(request):
    scope = request.spend_scope
    form = BudgetForm(request.POST or None) if scope.everything else None
    if request.method == "POST":
        if not scope.everything:
            raise PermissionDenied("budgets are edited by finance and admin")
        if form.is_valid():
            try:
                budget = budget_save(**form.cleaned_data, user=request.user)
            except ReviewInputError as error:
                form.add_error(error.field if error.field in form.fields else None, error.message)
            else:
                messages.success(request, f"Budget saved: {budget}")
                return redirect(f"{request.path}?month={budget.month:%Y-%m}")
    error = None
    try:
        month = _month(request.GET.get("month"))
        states = budget_states([month], scope.teams)
    except ReviewInputError as problem:
        month, states, error = dt.date.today().replace(day=1), [], str(problem)
    context = {
        "form": form,
        "month": month,
        "states": states,
        "error": error,
        "chart": budget_chart(states),
        "spend_teams": scope.teams,
    }
    bad = error or (form is not None and form.errors)
    return render(request, "billing/budgets.html", context, status=400 if bad else 200)


@role_required(FINANCE, ADMIN)
def spend_rows_page(request):
    form = SpendRowsForm(request.GET)
    rows = None
    if form.is_valid() and form.cleaned_data.get("day"):
        data = form.cleaned_data
        rows = spend_rows(
            day=data["day"],
            team=data["team"],
            provider=data["provider"],
            service=data["service"],
            limit=data.get("limit") or 100,
        )
    return render(
        request, "billing/spend_rows.html", {"form": form, "rows": rows}, status=400 if form.errors else 200
    )
