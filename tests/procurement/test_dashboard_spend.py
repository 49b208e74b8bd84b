"""The dashboard's spend panel: finance and admin see one month's GPU spend (this month, or the latest
with data), its top savings and price freshness; engineers never see spend there, viewers not the page."""

from __future__ import annotations

import datetime as dt
import json
from decimal import Decimal
from io import StringIO

import pytest
from django.core.management import call_command

from gpuledger.templatetags.formatting import money
from pricing.models import PriceObservation
from procurement.spend_summary import finance_summary, spend_month
from tests.billing.catalog import import_demo_billing

pytestmark = pytest.mark.django_db
NOW = dt.datetime(2026, 8, 15, 12, tzinfo=dt.UTC)  # after the demo's last month (June 2026)


@pytest.fixture
def demo(tmp_path):
    import_demo_billing(tmp_path, months=2)


def june_review() -> dict:
    out = StringIO()
    call_command("spend_review", "--from", "2026-06-01", "--to", "2026-07-01", "--format", "json", stdout=out)
    return json.loads(out.getvalue())


def test_without_spend_this_month_it_takes_the_latest_month_with_data(demo):
    assert spend_month(dt.date(2026, 8, 15)) == (dt.date(2026, 6, 1), dt.date(2026, 7, 1))
    assert spend_month(dt.date(2026, 5, 20)) == (
        dt.date(2026, 5, 1),
        dt.date(2026, 6, 1),
    )  # this month has rows


def test_no_spend_at_all_says_so(db):
    assert spend_month(dt.date(2026, 8, 15)) is None
    assert finance_summary(NOW)["month"] is None


def test_the_summary_is_the_months_review_with_its_three_largest_savings(demo):
    summary, review = finance_summary(NOW), june_review()
    assert summary["month"] == dt.date(2026, 6, 1) and not summary["is_current_month"]
    assert summary["totals"] == review["totals"]
    by_amount = sorted((Decimal(s["amount"]) for s in review["savings"]), reverse=True)[:3]
    assert [Decimal(s["amount"]) for s in summary["top_savings"]] == by_amount
    assert len(summary["top_savings"]) == min(3, len(review["savings"]))


def test_price_freshness_counts_current_and_stale_prices(demo):
    freshness = finance_summary(NOW)["price_freshness"]
    assert freshness["prices"] > 0
    newest = max(PriceObservation.objects.values_list("observed_at", flat=True))
    assert freshness["newest"] == newest
    assert 0 <= freshness["stale"] <= freshness["prices"]


@pytest.mark.parametrize("role", ["finance", "admin"])
def test_finance_and_admin_see_the_spend_panel(demo, client_as, role):
    page = client_as(role).get("/dashboard/").content.decode()
    assert 'id="finance-spend"' in page and 'id="price-freshness"' in page
    assert 'id="top-savings"' in page


def test_the_panel_shows_the_latest_months_total(demo, client_as):
    # with the real clock: the panel shows the month finance_summary picks, and its total
    summary = finance_summary()
    page = client_as("finance").get("/dashboard/").content.decode()
    assert money(summary["totals"]["effective_cost"], summary["currency"]) in page  # "98,744.49 USD"
    assert summary["month"].strftime("%Y-%m") in page


def test_engineers_do_not_see_spend_and_viewers_not_the_page(demo, client_as):
    page = client_as("engineer").get("/dashboard/")
    assert page.status_code == 200
    assert b'id="finance-spend"' not in page.content and b"GPU spend" not in page.content
    assert client_as("viewer").get("/dashboard/").status_code == 403


def test_the_price_count_has_thousands_separators(demo, client_as, monkeypatch):
    # x30: a new user read "Prices: 5457 current" beside "30,116 GPU-hours" (issue 30, item 5); the bundled
    # catalog holds thousands of prices (6,655 rows after load_catalog), the demo here only three
    import procurement.spend_summary

    counted = {"prices": 5457, "stale": 1200, "newest": None}
    monkeypatch.setattr(procurement.spend_summary, "price_freshness", lambda now=None: counted)
    page = client_as("finance").get("/dashboard/").content.decode()
    assert "Prices: 5,457 current, 1,200 stale" in page
