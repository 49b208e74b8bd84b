"""/plans/ in Chromium: a finance user opens the page over `make run`'s demo bills and reads the plan
(the charts drawn, the layers table, money formatted for people), under the strict CSP."""

from __future__ import annotations

import pytest

from tests.billing.catalog import import_demo_files
from tests.browser.test_pages import assert_no_reprs

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_finance_opens_the_plan_of_the_demo_period(signed_in_page, bundled_catalog, tmp_path, snap):
    import_demo_files(tmp_path)
    page = signed_in_page("finance")
    page.goto("/plans/")
    assert page.locator("h1").inner_text() == "Capacity plan"
    assert "Capacity plan" in page.locator("header nav").inner_text()
    assert page.locator("#plan-ldc svg polygon").count() >= 1  # the layers shaded under the curve
    assert page.locator("#plan-cost-by-year svg").count() == 1
    assert page.locator("#plan-layers tbody tr").count() >= 1
    summary = page.locator("#plan-summary").inner_text()
    assert " USD" in summary and "," in summary  # money with thousands separators and its currency
    assert_no_reprs(page)
    snap(page, "capacity-plan")
    # on a phone each figure of the summary is on screen, under its label (x30: the sticky label column
    # filled the 390 px and the figures were off to the right, to be scrolled to)
    page.set_viewport_size({"width": 390, "height": 844})
    edges = page.evaluate(
        "Array.from(document.querySelectorAll('#plan-summary td.num')).map(e => e.getBoundingClientRect().right)"
    )
    assert edges and max(edges) <= 390, edges
    page.set_viewport_size({"width": 1400, "height": 900})
