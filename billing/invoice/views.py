"""/billing/invoice/: the invoice view (invoice/lines.py), finance and admin only (an invoice is the whole
account's: a team's granted spend never reaches it). `?from=YYYY-MM&to=YYYY-MM` (to exclusive; default
the twelve billing periods up to this month); `&format=json` for the same as JSON."""

from __future__ import annotations

import datetime as dt

from django.http import JsonResponse
from django.shortcuts import render

from billing.finance.budget_fields import parse_month
from billing.invoice.lines import invoice_view
from billing.invoice.selectors import invoice_groups
from billing.review.engine import ReviewInputError
from gpuledger.api_errors import input_error_body
from gpuledger.roles import ADMIN, FINANCE, role_required

MAX_MONTHS = 37


def _next_month(month: dt.date) -> dt.date:
    return (month + dt.timedelta(days=32)).replace(day=1)


def _month(query, name: str) -> dt.date | None:
    if not query.get(name):
        return None
    try:
        return parse_month(query[name])
    except ReviewInputError as error:
        raise ReviewInputError(name, error.message) from None


def _period(query) -> tuple[dt.date, dt.date]:
    this_month = dt.datetime.now(dt.UTC).date().replace(day=1)
    end = _month(query, "to") or _next_month(this_month)
    start = _month(query, "from") or (end - dt.timedelta(days=365)).replace(day=1)
    if end <= start:
        raise ReviewInputError("to", f"must be after from ({start:%Y-%m})")
    if (end - start).days > MAX_MONTHS * 31:
        raise ReviewInputError("to", "an invoice view covers at most three years")
    return start, end


@role_required(FINANCE, ADMIN)
def invoice_page(request):
    as_json = request.GET.get("format") == "json"
    try:
        start, end = _period(request.GET)
    except ReviewInputError as error:
        if as_json:
            return JsonResponse(input_error_body(error), status=400)
        return render(request, "billing/invoice.html", {"error": str(error)}, status=400)
    view = invoice_view(invoice_groups(start, end)) | {"from": f"{start:%Y-%m}", "to": f"{end:%Y-%m}"}
    if as_json:
        return JsonResponse(view)
    return render(request, "billing/invoice.html", {"view": view})
