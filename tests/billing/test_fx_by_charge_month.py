"""A bill in another currency never breaks a page or a review (issue 28, item 4).

The project's own EUR fixture (tests/billing/fixtures/azure_focus_export.csv: ND96isr H100 v5 1 h
EUR 90.00, 8 GPU-hours, and storage EUR 10.00, charged in May 2026) imported beside the AWS fixture
(p5.48xlarge 2 h 110.08 + g6e.xlarge spot 0.92 = 111.00 USD GPU, 17 GPU-hours; EBS 4.00 + tax 1.20 =
5.20 USD non-GPU). Before issue 28, with no stored EUR rate, /billing/ answered 400 and every
spend_review of May failed with "currency: no stored FX rate from EUR to USD" (reproduced first).
Now the EUR rows are left out with a warning naming the bill and the month, and the AWS review stands.

Rates by charge month (fx_months.py): each row converts at the newest rate dated on or before its
charge month's last day. Hand computations in each test.
"""

from __future__ import annotations

import datetime as dt
import json
from decimal import Decimal
from io import StringIO
from pathlib import Path

import pandas as pd
import pytest
from django.core.management import call_command
from hypothesis import given, settings
from hypothesis import strategies as st

from billing.imports.importer import import_file
from billing.review.engine import ReviewRequest, _converted
from billing.review.fx_months import rates_by_month
from billing.review.service import _build_review, make_request
from pricing.models import FxRate, GpuModel, InstanceType, Provider
from tests.billing.catalog import make_catalog

pytestmark = pytest.mark.django_db
FIXTURES = Path(__file__).parent / "fixtures"
MAY = {"start": dt.date(2026, 5, 1), "end": dt.date(2026, 6, 1)}


@pytest.fixture
def catalog():
    make_catalog()
    h100 = GpuModel.objects.get(slug="h100-sxm5-80gb")
    provider, _ = Provider.objects.get_or_create(slug="azure", defaults={"name": "azure"})
    InstanceType.objects.create(
        provider=provider, name="Standard_ND96isr_H100_v5", gpu=h100, gpu_name="h100", gpu_count=8
    )


def rate(day: str, value: str, currency: str = "EUR") -> None:
    FxRate.objects.create(currency=currency, base="USD", rate=value, as_of=day, source="test")


def june_copy(tmp_path) -> Path:
    """The EUR fixture moved one month on (June 2026), as a second bill."""
    text = (FIXTURES / "azure_focus_export.csv").read_text()
    text = text.replace("2026-06-01", "2026-07-01").replace("2026-05-01", "2026-06-01")
    path = tmp_path / "azure_june.csv"
    path.write_text(text)
    return path


def test_without_a_rate_the_page_and_the_command_stand_and_warn(catalog, client_as):
    import_file(FIXTURES / "azure_focus_export.csv")
    import_file(FIXTURES / "aws_focus_export.csv")
    page = client_as("finance").get("/billing/?start=2026-05-01&end=2026-06-01")
    assert page.status_code == 200
    text = page.content.decode()
    assert "azure_focus_export.csv: no stored FX rate from EUR to USD for 2026-05" in text
    assert "2 EUR row(s) (100.00 EUR billed) are left out" in text

    out = StringIO()
    call_command("spend_review", "--from", "2026-05-01", "--to", "2026-06-01", "--format", "json", stdout=out)
    review = json.loads(out.getvalue())
    assert (review["totals"]["effective_cost"], review["totals"]["gpu_hours"]) == ("111.00", "17.00")
    assert review["non_gpu_cost"] == "5.20"
    assert {p["provider"] for p in review["by_provider"]} == {"aws"}
    assert review["fx_missing"] == [
        {"currency": "EUR", "month": "2026-05", "rows": 2, "billed_cost": "100.00"}
    ]
    assert len(review["warnings"]) == 1 and review["warnings"][0].startswith("azure_focus_export.csv: ")

    table = StringIO()
    call_command("spend_review", "--from", "2026-05-01", "--to", "2026-06-01", stdout=table)
    assert table.getvalue().startswith("warning: azure_focus_export.csv: no stored FX rate from EUR")


def test_a_month_without_eur_rows_has_no_warning(catalog):
    import_file(FIXTURES / "azure_focus_export.csv")
    # July 2026: its previous period (June) and its months have no EUR row either
    review = _build_review(make_request(start=dt.date(2026, 7, 1), end=dt.date(2026, 8, 1)))
    assert review["warnings"] == [] and review["fx_missing"] == []


def test_each_month_converts_at_its_own_rate(catalog, tmp_path):
    # May's rate is the newest on or before 2026-05-31 (1.20 of 05-29, not 1.10 of 04-30); June's 1.30 of
    # 06-30; the 1.40 of 07-15 converts neither. GPU: 90 × 1.20 + 90 × 1.30 = 108.00 + 117.00 = 225.00 USD;
    # non-GPU: 10 × 1.20 + 10 × 1.30 = 25.00 USD
    for day, value in (
        ("2026-04-30", "1.10"),
        ("2026-05-29", "1.20"),
        ("2026-06-30", "1.30"),
        ("2026-07-15", "1.40"),
    ):
        rate(day, value)
    import_file(FIXTURES / "azure_focus_export.csv")
    import_file(june_copy(tmp_path))
    review = _build_review(make_request(start=dt.date(2026, 5, 1), end=dt.date(2026, 7, 1)))
    assert review["totals"]["effective_cost"] == "225.00" and review["non_gpu_cost"] == "25.00"
    assert {m["month"]: m["effective_cost"] for m in review["by_month"]} == {
        "2026-05": "108.00",
        "2026-06": "117.00",
    }
    assert review["warnings"] == []
    # in EUR: USD rows would need the USD->EUR rate of their month; EUR rows stay as billed
    in_euros = _build_review(make_request(start=dt.date(2026, 5, 1), end=dt.date(2026, 7, 1), currency="EUR"))
    assert in_euros["totals"]["effective_cost"] == "180.00"


def test_a_rate_stored_only_after_the_month_does_not_convert_it(catalog, tmp_path):
    # one EUR rate, dated 2026-06-15: June converts at it (90 × 1.25 = 112.50), May is named missing
    rate("2026-06-15", "1.25")
    import_file(FIXTURES / "azure_focus_export.csv")
    import_file(june_copy(tmp_path))
    review = _build_review(make_request(start=dt.date(2026, 5, 1), end=dt.date(2026, 7, 1)))
    assert review["totals"]["effective_cost"] == "112.50" and review["non_gpu_cost"] == "12.50"
    assert [(m["currency"], m["month"]) for m in review["fx_missing"]] == [("EUR", "2026-05")]
    assert review["warnings"][0].startswith(
        "azure_focus_export.csv: no stored FX rate from EUR to USD for 2026-05"
    )


def test_a_granted_engineer_hears_only_of_their_teams_bills(catalog, client_as, team_named, user_with_role):
    from billing.models import SpendGrant

    import_file(FIXTURES / "azure_focus_export.csv")  # team vision
    research = team_named("research")
    SpendGrant.objects.create(team=research, granted_by=user_with_role("admin"))
    engineer = client_as("engineer", team=research)
    response = engineer.get("/api/billing/spend-review/?from=2026-05-01&to=2026-06-01")
    assert response.status_code == 200
    assert response.json()["warnings"] == [] and response.json()["fx_missing"] == []


def test_rates_by_month_cross_through_usd():
    # 1 EUR = 1.10 USD and 1 GBP = 1.25 USD at May's end: 1 GBP = 1.25 / 1.10 EUR
    history = {
        "EUR": [(dt.date(2026, 5, 29), Decimal("1.10"))],
        "GBP": [(dt.date(2026, 4, 1), Decimal("1.25")), (dt.date(2026, 6, 1), Decimal("1.30"))],
    }
    may = rates_by_month(history, "EUR", ["2026-04", "2026-05"])
    assert may["2026-04"] == {}  # no EUR rate by April's end: nothing converts into EUR
    assert may["2026-05"]["GBP"] == Decimal("1.25") / Decimal("1.10") and may["2026-05"][
        "USD"
    ] == 1 / Decimal("1.10")


@settings(max_examples=40, deadline=None)
@given(
    amounts=st.lists(st.integers(min_value=-(10**9), max_value=10**12), min_size=1, max_size=12),
    months=st.lists(st.sampled_from(["2026-01", "2026-02", "2026-03"]), min_size=12, max_size=12),
    rates=st.dictionaries(
        st.sampled_from(["2026-01", "2026-02", "2026-03"]),
        st.decimals(min_value=Decimal("0.5"), max_value=Decimal("2"), places=4),
    ),
)
def test_conversion_is_each_rows_month_rate_and_drops_only_months_without_one(amounts, months, rates):
    starts = pd.to_datetime([f"{months[i]}-10T00:00:00Z" for i in range(len(amounts))], utc=True)
    frame = pd.DataFrame(
        {
            "charge_period_start": starts,
            "currency": ["EUR"] * len(amounts),
            "billed_micros": amounts,
            "effective_micros": amounts,
            "list_micros": amounts,
        }
    )
    request = ReviewRequest(
        start=dt.date(2026, 1, 1),
        end=dt.date(2026, 4, 1),
        fx_months={month: {"EUR": value, "USD": Decimal(1)} for month, value in rates.items()},
    )
    converted = _converted(frame, request)
    expected = [
        int((Decimal(a) * rates[m]).to_integral_value())
        for a, m in zip(amounts, months, strict=False)
        if m in rates
    ]
    assert converted["effective_micros"].tolist() == expected
    assert set(converted["currency"]) <= {"USD"}
