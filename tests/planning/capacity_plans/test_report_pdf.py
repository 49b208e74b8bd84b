"""The capacity plan's PDF as a CFO reads it (issue 27 item 7): page 1 carries the recommendation, its
money and the two charts (the load-duration curve with the layers, the cost by year against the status
quo), and every money figure printed anywhere in it is a figure of the plan's JSON, to the cent."""

from __future__ import annotations

import io
import re
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from io import StringIO

from django.core.management import call_command
from pypdf import PdfReader

from tests.planning.capacity_plans.conftest import PERIOD

# 1,234.56: two decimals, as money is printed; not inside a name (p5.48xlarge)
MONEY = re.compile(r"(?<![\w.,])-?\d{1,3}(?:,\d{3})*\.\d{2}(?![\w])")
CENT = Decimal("0.01")


def _pdf(client, tmp_path) -> tuple[dict, PdfReader]:
    plan = client.post(
        "/api/capacity-plans/", PERIOD | {"trials": 200, "save": True}, content_type="application/json"
    ).json()
    path = tmp_path / "plan.pdf"
    call_command(
        "report",
        "capacity_plan",
        "--id",
        str(plan["id"]),
        "--format",
        "pdf",
        "--output",
        str(path),
        stderr=StringIO(),
    )
    return plan, PdfReader(io.BytesIO(path.read_bytes()))


def _amounts(value) -> set[str]:
    """Every number in the JSON, as the PDF prints money: rounded half up to the cent, thousands marked."""
    if isinstance(value, dict):
        return set().union(*(_amounts(item) for item in value.values())) if value else set()
    if isinstance(value, list):
        return set().union(*(_amounts(item) for item in value)) if value else set()
    if isinstance(value, bool) or value is None:
        return set()
    if isinstance(value, str) and MONEY.search(value):  # the JSON's own sentences (recommendation, notes)
        return set(MONEY.findall(value))
    try:
        amount = Decimal(str(value)).quantize(CENT, rounding=ROUND_HALF_UP)
    except (InvalidOperation, ValueError):
        return set()
    return {f"{amount:,.2f}"}


def test_page_one_shows_the_money_and_both_charts(demo_bills, client_as, tmp_path):
    plan, reader = _pdf(client_as("finance"), tmp_path)
    first = reader.pages[0].extract_text()
    # the charts' own words (an SVG's title is not printed): the layers' levels, the years' bars
    assert "At a glance" in first and "share of covered hours" in first
    assert "Commitments in force: up to 18 GPUs" in first and "Owned servers: up to 34 GPUs" in first
    assert "Year 1: plan" in first and "Year 3: status quo" in first
    # one line points to the warnings, which follow the charts: the money and the charts keep page 1
    assert "6 warnings" in first and "no study for" not in first
    for figure in ("total_cost", "status_quo_cost", "savings_vs_status_quo"):
        assert f"{Decimal(plan[figure]):,.2f}" in first, figure


def test_every_money_figure_in_the_pdf_is_the_jsons_to_the_cent(demo_bills, client_as, tmp_path):
    plan, reader = _pdf(client_as("finance"), tmp_path)
    text = "\n".join(page.extract_text() for page in reader.pages)
    printed = set(MONEY.findall(text))
    assert len(printed) > 20  # the headline, the layers, the fleets, the commitments and the prices
    assert printed - _amounts(plan) == set()
