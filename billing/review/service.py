"""The spend review end to end for the shells (command, page, API): read, price, review."""

from __future__ import annotations

import datetime as dt

from billing.finance import anomalies
from billing.finance.sections import finance_review
from billing.review import selectors
from billing.review.cache import cached_review
from billing.review.engine import ReviewRequest, non_gpu_breakdown, spend_review
from billing.review.fx_months import missing_rate_warning
from billing.review.report import review_report_data
from billing.storage.import_datasets import ImportDatasets


def build_review(request: ReviewRequest) -> dict:
    """The review's JSON (cached per request and data version: review/cache.py)."""
    return cached_review("review", request, lambda: _build_review(request))


def _build_review(request: ReviewRequest) -> dict:
    return _review_of(selectors.spend_frame(request), request)


def _review_of(frame, request: ReviewRequest) -> dict:
    """The review of the request's spend rows `frame`: priced, with finance's sections and the warnings."""
    utilization = selectors.utilization_frame(request)
    review = spend_review(
        frame,
        request,
        # prices for every triple seen (the previous period's are harmless)
        prices=selectors.price_context(frame, request.currency),
        utilization=utilization,
    )
    review |= finance_review(frame, request, utilization)  # showback, budgets, anomalies
    return with_warnings(review, request)


def with_warnings(review: dict, request: ReviewRequest) -> dict:
    """The review's `warnings` (lines for people): each missing FX rate, naming its bills and month; each
    bill whose stored dataset file is gone from disk (the review is read without its rows)."""
    warnings = [
        missing_rate_warning(
            entry,
            request.currency,
            selectors.bills_of(entry["currency"], entry["month"], request.allowed_teams),
        )
        for entry in review.get("fx_missing", [])
    ]
    start, _ = request.previous
    missing = ImportDatasets().missing_bills(start, request.end)
    if request.allowed_teams:  # a granted engineer: no bill names (a bill holds other teams' lines too)
        missing = [("a bill", month) for month in dict.fromkeys(month for _, month in missing)]
    warnings += [
        f"{name}, {month:%Y-%m}: its stored data file is missing on this server, so this review leaves its "
        "rows out; import the bill again to restore them"
        for name, month in missing
    ]
    return review | {"warnings": warnings}


def make_request(
    *, start, end, team="", project="", provider="", currency="USD", scope=None, allocation=""
) -> ReviewRequest:
    """`scope` (access.SpendScope) limits the teams for an engineer's granted access; None: every team
    (the caller has already checked finance or admin, or runs as a command)."""
    allowed = () if scope is None else scope.teams
    team = team if scope is None else scope.team_filter(team)
    return ReviewRequest(
        start=start,
        end=end,
        team=team,
        project=project,
        provider=provider,
        currency=currency,
        fx_to_currency=selectors.review_fx(currency),
        allowed_teams=allowed,
        allocation=allocation,
        fx_months=fx_months_of(currency, start, end),
    )


def fx_months_of(currency: str, start, end) -> dict:
    """The charge-month rates a review of [start, end) converts with: its months, the period before (the
    trends) and the anomaly baseline's window before that."""
    length = end - start
    earliest = start - length - dt.timedelta(days=anomalies.WINDOW_DAYS)
    return selectors.review_fx_months(currency, earliest, end)


def build_report(request: ReviewRequest) -> dict:
    """The review as the report data object (review/report.py), with the non-GPU spend broken down
    (cached as build_review is)."""
    return cached_review("report", request, lambda: _build_report(request))


def _build_report(request: ReviewRequest) -> dict:
    frame = selectors.spend_frame(request)
    review = _review_of(frame, request)
    filters = {"team": request.team, "project": request.project, "provider": request.provider}
    return review_report_data(
        review,
        start=request.start,
        end=request.end,
        filters=filters,
        non_gpu=non_gpu_breakdown(frame, request),
    )
