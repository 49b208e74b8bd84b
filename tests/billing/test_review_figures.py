"""The spend review page and the spend review report draw one set of figures (billing/review/figures.py):
the same titles, units and numbers, so the page and the PDF say the same thing (issue 25)."""

from __future__ import annotations

import datetime as dt

import pytest

from billing.review.report import review_report_data
from billing.review.service import build_review, make_request
from procurement.reports.kinds import spend_review
from procurement.reports.render.figures import figure_svg
from tests.billing.test_access_and_pages import upload

pytestmark = pytest.mark.django_db
START, END = dt.date(2026, 5, 1), dt.date(2026, 6, 1)


def test_the_page_draws_the_reports_own_figures(client_as):
    client = client_as("finance")
    assert b"inserted 1" in client.post("/billing/upload/", {"file": upload()}, follow=True).content
    review = build_review(make_request(start=START, end=END))
    page = {f["id"]: f for f in review_report_data(review, start=START, end=END)["figures"]}
    inputs = {"start": START.isoformat(), "end": END.isoformat(), "filters": {}, "review": review}
    report = spend_review.build_report(inputs, dt.datetime(2026, 6, 2, tzinfo=dt.UTC))
    in_report = {f.key: f for section in report.sections for f in section.figures}
    shared = set(spend_review.FIGURE_KEYS.values())
    assert shared <= set(page) and shared <= set(in_report)
    for key in shared:
        assert page[key]["title"] == in_report[key].title
        assert page[key]["svg"] == figure_svg(in_report[key], review["currency"])
    # the units once differed ("USD/GPU-h" on the page, "USD/GPU-hour" in the report)
    assert in_report["cost_per_gpu_hour"].y_label == "USD/GPU-hour"
