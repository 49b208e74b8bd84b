"""The spend review end to end for the shells (command, page, API): read, price, review."""

from __future__ import annotations

from procurement.billing import selectors
from procurement.billing.review import ReviewRequest, spend_review


def build_review(request: ReviewRequest) -> dict:
    frame = selectors.spend_frame(request)
    period_rows = frame  # prices for every triple seen (the previous period's are harmless)
    return spend_review(
        frame,
        request,
        prices=selectors.price_context(period_rows, request.currency),
        utilization=selectors.utilization_frame(request),
    )


def make_request(*, start, end, team="", project="", provider="", currency="USD") -> ReviewRequest:
    return ReviewRequest(
        start=start, end=end, team=team, project=project, provider=provider, currency=currency,
        fx_to_currency=selectors.review_fx(currency),
    )  # fmt: skip
