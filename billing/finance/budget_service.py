"""Budget writes, the forecast e-mails and the re-check after an import (Django side).

- `budget_save`: finance and admin set a team's budget for a month; bad input (a negative amount, a
  currency with no stored FX rate, a month that is not one) is a ReviewInputError naming the field and
  stores nothing. The month's budgets are then checked (a lowered budget may be crossed already).
- `budget_alerts_check`: every budget of a month whose forecast crossed 80% or 100% gets one BudgetAlert
  per threshold (a unique row) and, in the same transaction, one change event through the notification
  outbox (procurement/services/notifications.py), which e-mails it once. A re-check finds the row and
  sends nothing.
- `spend_check_import`: after an import, each month it brought rows into is re-checked once (a unique
  SpendCheck row per import and month): anomalies found and budgets, alerts included.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

from django.contrib.auth import get_user_model
from django.db import transaction

from billing.finance import sections as finance
from billing.finance import selectors as finance_selectors
from billing.finance.budget_fields import check_currency, parse_amount, parse_month
from billing.finance.budgets import month_closed
from billing.models import Budget, BudgetAlert, SpendCheck
from billing.review.engine import ReviewInputError
from billing.review.service import make_request
from procurement.choices import ChangeKind
from procurement.models import ChangeEvent
from procurement.services.notifications import change_events_create


def budget_save(*, team: str, month, amount, currency: str, notify_email: str = "", user=None) -> Budget:
    """Create or update the team's budget for the month (one per team and month)."""
    team = str(team or "").strip()
    if not team or len(team) > 100:
        raise ReviewInputError(
            "team", "required, at most 100 characters (the team as the bills' tag spells it)"
        )
    values = {
        "amount": parse_amount(amount),
        "currency": check_currency(currency),
        "notify_email": (notify_email or "").strip()[:254],
        "updated_by": user if getattr(user, "pk", None) else None,
    }
    budget, _ = Budget.objects.update_or_create(team=team, month=parse_month(month), defaults=values)
    budget_alerts_check(budget.month)  # a lowered budget the forecast now crosses alerts at once
    return budget


def _recipients(budget: Budget) -> list[str]:
    if budget.notify_email:
        return [budget.notify_email]
    users = get_user_model().objects.filter(is_active=True, groups__name="finance").exclude(email="")
    return sorted(set(users.values_list("email", flat=True)))


def today() -> dt.date:
    """The UTC date (one function, so that a test can set the clock)."""
    return dt.datetime.now(dt.UTC).date()


def budget_alerts_check(month: dt.date) -> list[BudgetAlert]:
    """One alert (and one e-mail) per threshold each budget of `month` crossed and has not alerted yet;
    none for a month already closed (a late bill or a correction to it forecasts nothing: the review
    still shows the month's burn against its budget)."""
    created = []
    if month_closed(month, today()):
        return created
    budgets = {budget.pk: budget for budget in finance_selectors.budgets_of([month])}
    for state in finance.budget_states([month]):
        budget = budgets[state["id"]]
        for threshold in state["thresholds_crossed"]:
            alert = _alert_once(budget, threshold, state)
            if alert is not None:
                created.append(alert)
    return created


def _alert_once(budget: Budget, threshold: int, state: dict) -> BudgetAlert | None:
    with transaction.atomic():
        alert, made = BudgetAlert.objects.get_or_create(
            budget=budget, threshold_pct=threshold, defaults={"forecast": Decimal(state["forecast"])}
        )
        if not made:
            return None
        after = {
            key: state[key]
            for key in (
                "team",
                "month",
                "amount",
                "currency",
                "burn",
                "forecast",
                "forecast_pct",
                "overrun_date",
                "forecast_method",
            )
        }
        after |= {"threshold_pct": threshold, "notify_email": _recipients(budget)}
        event = ChangeEvent(kind=ChangeKind.BUDGET_FORECAST, before={}, after=after)
        alert.event = change_events_create([event])[0]
        alert.save(update_fields=["event"])
    return alert


def spend_check_import(import_id: int) -> list[dict]:
    """Re-check each month the import brought rows into, once per import and month."""
    done = []
    for month in finance_selectors.months_of_import(import_id):
        with transaction.atomic():
            check, made = SpendCheck.objects.get_or_create(billing_import_id=import_id, month=month)
            if not made:
                continue
            check.result = _check_month(month)
            check.save(update_fields=["result"])
        done.append({"month": month.isoformat(), **check.result})
    return done


def _check_month(month: dt.date) -> dict:
    request = make_request(start=month, end=finance.next_month(month))  # with the month's FX rates
    found = finance.anomalies_between(request)
    alerts = budget_alerts_check(month)
    return {
        "anomalies": found["found"],
        "anomaly_days": sorted({(a["day"], a["team"], a["service"]) for a in found["items"]}),
        "alerts": [f"{a.budget.team} {a.threshold_pct}%" for a in alerts],
    }
