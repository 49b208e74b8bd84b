"""The spend review report (issue 8, section 3) over the demo billing file: the PDF, XLSX and CSV show
the totals ``manage.py spend_review --format json`` prints, text stays text, finance and admin only.

The JSON itself is checked against hand computations in tests/billing/test_demo_review.py; here every
download must agree with it (the figures come from the same engine, only drawn differently).
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import json
import zipfile
from decimal import Decimal
from io import StringIO

import openpyxl
import pypdf
import pytest
from django.core.management import CommandError, call_command

from billing.review.service import build_report, make_request
from procurement.models import ReportSnapshot
from procurement.reports.format import display
from procurement.reports.model import Table
from procurement.reports.registry import ReportPeriod, report_kind
from tests.billing.catalog import import_demo_billing, make_catalog

pytestmark = pytest.mark.django_db
PERIOD = ("--from", "2026-05-01", "--to", "2026-07-01")
QUERY = "start=2026-05-01&end=2026-07-01"
HEADER = "ChargePeriodStart,ChargePeriodEnd,ChargeCategory,BilledCost,EffectiveCost,BillingCurrency,ProviderName,ConsumedQuantity,ConsumedUnit,x_UsageType,Tags"
HOSTILE_TEAM = '=HYPERLINK("http://evil.example","click")'


@pytest.fixture
def demo(tmp_path):
    import_demo_billing(tmp_path, months=2)


def review_json(*extra) -> dict:
    out = StringIO()
    call_command("spend_review", *PERIOD, "--format", "json", *extra, stdout=out)
    return json.loads(out.getvalue())


def report_file(tmp_path, fmt: str, *extra) -> bytes:
    output = tmp_path / f"spend.{fmt}"
    call_command(
        "report", "spend_review", *PERIOD, *extra, "--format", fmt, "--output", str(output), stderr=StringIO()
    )
    return output.read_bytes()


def csv_rows(archive: zipfile.ZipFile, name: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO(archive.read(name).decode())))


def test_pdf_xlsx_and_csv_show_the_json_totals(demo, tmp_path):
    body = review_json()
    totals = body["totals"]
    assert Decimal(totals["effective_cost"]) > 0 and body["by_team"]  # the demo has spend to compare

    text = "".join(
        page.extract_text() for page in pypdf.PdfReader(io.BytesIO(report_file(tmp_path, "pdf"))).pages
    )
    for figure in (totals["effective_cost"], body["unused_commitment_cost"], body["non_gpu_cost"]):
        assert display(figure, "money") in text, figure
    assert display(totals["gpu_hours"], "number") in text
    for team in body["by_team"]:
        assert team["team"] in text and display(team["effective_cost"], "money") in text

    workbook = openpyxl.load_workbook(io.BytesIO(report_file(tmp_path, "xlsx")))
    values = {row[0]: row[1] for row in workbook["totals"].iter_rows(min_row=3, values_only=True)}
    assert Decimal(str(values["Effective cost"])) == Decimal(totals["effective_cost"])
    assert Decimal(str(values["GPU-hours"])) == Decimal(totals["gpu_hours"])
    by_team = workbook["by_team"]
    last = 2 + len(body["by_team"])
    assert by_team.cell(last + 1, 2).value == f"=SUM(B3:B{last})"  # the total is a formula over the cells
    cells = [Decimal(str(by_team.cell(row, 2).value)) for row in range(3, last + 1)]
    assert sum(cells) == sum(Decimal(t["effective_cost"]) for t in body["by_team"])
    # each team rounds to the cent on its own: the teams add up to the total within a cent each
    assert abs(sum(cells) - Decimal(totals["effective_cost"])) <= Decimal("0.01") * len(cells)
    assert {"by_month", "by_project", "by_provider", "by_gpu", "by_pricing_category", "savings"} <= set(
        workbook.sheetnames
    )
    assert workbook["fig_spend_by_month"]._charts and workbook["fig_savings_waterfall"]._charts

    archive = zipfile.ZipFile(io.BytesIO(report_file(tmp_path, "csv")))
    summary = {row[0]: row[1] for row in csv_rows(archive, "summary.csv")[1:]}
    assert summary["GPU spend (effective)"] == totals["effective_cost"]
    team_rows = csv_rows(archive, "by_team.csv")
    assert {row[0]: row[1] for row in team_rows[1:-1]} == {
        t["team"]: t["effective_cost"] for t in body["by_team"]
    }
    assert Decimal(team_rows[-1][1]) == sum(Decimal(t["effective_cost"]) for t in body["by_team"])


def test_the_month_table_splits_by_pricing_category_and_the_savings_carry_assumptions(demo, tmp_path):
    body = review_json()
    workbook = openpyxl.load_workbook(io.BytesIO(report_file(tmp_path, "xlsx")))
    months = workbook["by_month"]
    header = [cell.value for cell in months[2]]
    for row, month in enumerate(body["by_month"], start=3):
        for category, amount in month["effective_cost_by_pricing_category"].items():
            column = header.index(category.replace("_", " ")) + 1
            assert Decimal(str(months.cell(row, column).value)) == Decimal(amount)
    savings = workbook["savings"]
    for row, saving in enumerate(body["savings"], start=3):
        assert savings.cell(row, 1).value == saving["kind"]
        assert savings.cell(row, 5).value == "; ".join(saving["assumptions"])
    stated = [row[1] for row in workbook["Assumptions"].iter_rows(min_row=2, values_only=True)]
    assert all(text in stated for saving in body["savings"] for text in saving["assumptions"])


def test_a_team_filter_reports_that_team_only(demo, tmp_path):
    body = review_json("--team", "vision")
    archive = zipfile.ZipFile(io.BytesIO(report_file(tmp_path, "csv", "--team", "vision")))
    assert [row[0] for row in csv_rows(archive, "by_team.csv")[1:-1]] == ["vision"]
    summary = {row[0]: row[1] for row in csv_rows(archive, "summary.csv")[1:]}
    assert summary["GPU spend (effective)"] == body["totals"]["effective_cost"]


def test_a_formula_like_team_name_is_text_in_xlsx_and_csv(tmp_path):
    make_catalog()
    tags = json.dumps({"team": HOSTILE_TEAM}).replace('"', '""')
    row = f'2026-05-01T00:00:00Z,2026-05-02T00:00:00Z,Usage,19.3152,19.3152,USD,AWS,24,Hours,USE1-BoxUsage:g6.xlarge,"{tags}"'
    bill = tmp_path / "bill.csv"
    bill.write_text(f"{HEADER}\n{row}\n")
    call_command("import_billing", str(bill), "--format", "focus", "--no-progress", stdout=StringIO())
    assert review_json()["by_team"][0]["team"] == HOSTILE_TEAM  # the engine keeps the name as it came

    cell = openpyxl.load_workbook(io.BytesIO(report_file(tmp_path, "xlsx")))["by_team"]["A3"]
    assert (cell.value, cell.data_type, cell.quotePrefix) == (HOSTILE_TEAM, "s", True)
    archive = zipfile.ZipFile(io.BytesIO(report_file(tmp_path, "csv")))
    assert csv_rows(archive, "by_team.csv")[1][0] == "'" + HOSTILE_TEAM


def test_the_command_names_a_missing_or_bad_period(db, tmp_path):
    output = str(tmp_path / "x.pdf")
    with pytest.raises(CommandError, match="--from: is required"):
        call_command("report", "spend_review", "--to", "2026-07-01", "--output", output)
    with pytest.raises(CommandError, match="--to: must be YYYY-MM-DD"):
        call_command("report", "spend_review", "--from", "2026-05-01", "--to", "July", "--output", output)
    with pytest.raises(CommandError, match="--to: must be after from"):
        call_command(
            "report", "spend_review", "--from", "2026-05-01", "--to", "2026-05-01", "--output", output
        )
    assert not ReportSnapshot.objects.exists()


def test_the_finance_page_downloads_the_same_figures(demo, client_as):
    client = client_as("finance")
    page = client.get(f"/billing/?{QUERY}").content.decode()
    assert f"/reports/spend_review/download/pdf/?{QUERY}" in page.replace("&amp;", "&")
    body = review_json()
    response = client.get(f"/reports/spend_review/download/csv/?{QUERY}")
    assert response.status_code == 200 and response["Content-Type"] == "application/zip"
    summary = {
        row[0]: row[1] for row in csv_rows(zipfile.ZipFile(io.BytesIO(response.content)), "summary.csv")[1:]
    }
    assert summary["GPU spend (effective)"] == body["totals"]["effective_cost"]
    for fmt, starts in (("pdf", b"%PDF"), ("xlsx", b"PK")):
        download = client.get(f"/reports/spend_review/download/{fmt}/?{QUERY}")
        assert download.status_code == 200 and download.content.startswith(starts)
    report_page = client.get(f"/reports/spend_review/?{QUERY}")
    assert report_page.status_code == 200
    assert display(body["totals"]["effective_cost"], "money") in report_page.content.decode()
    # nothing changes on GET (issue 31): the page and its downloads compute the report, keeping is a POST
    assert not ReportSnapshot.objects.exists() and b"keep-report" in report_page.content
    for _ in range(2):
        kept = client.post(f"/reports/spend_review/?{QUERY}")
        assert kept.status_code == 200 and b"Snapshot #" in kept.content
    assert ReportSnapshot.objects.filter(kind="spend_review").count() == 1  # the same period, one snapshot


def test_a_bad_date_in_the_query_is_a_400_naming_the_field(db, client_as):
    response = client_as("finance").get("/reports/spend_review/download/pdf/?start=May")
    assert response.status_code == 400 and b"start" in response.content
    assert not ReportSnapshot.objects.exists()


def spend_urls() -> list[str]:
    call_command(
        "report", "spend_review", *PERIOD, "--format", "html", "--output", "/dev/null", stderr=StringIO()
    )
    snapshot = ReportSnapshot.objects.get(kind="spend_review")
    urls = [f"/reports/spend_review/?{QUERY}"]
    for fmt in ("pdf", "xlsx", "csv", "html"):
        urls += [
            f"/reports/spend_review/download/{fmt}/?{QUERY}",
            f"/reports/spend_review/snapshots/{snapshot.pk}/{fmt}/",
        ]
    return urls


@pytest.mark.parametrize("role", ["viewer", "engineer", None])
def test_viewer_and_engineer_get_403_on_the_page_and_every_download(db, client_as, role):
    client = client_as(role)
    for url in spend_urls():
        assert client.get(url).status_code == 403, url


def test_anonymous_is_sent_to_sign_in(db, client):
    for url in spend_urls():
        response = client.get(url)
        assert response.status_code == 302 and "/login" in response["Location"], url


@pytest.mark.parametrize("role", ["finance", "admin"])
def test_finance_and_admin_reach_the_page_and_every_download(db, client_as, role):
    client = client_as(role)
    for url in spend_urls():
        assert client.get(url).status_code == 200, url


def test_a_waterfall_hangs_each_step_from_the_level_the_steps_before_it_left():
    from procurement.reports.model import Figure, Series, waterfall_bars

    # 100 spent; a 30 saving, then a 20 saving, leave 50: the steps hang at 70 and 50
    figure = Figure(
        "w",
        "waterfall",
        "w",
        "step",
        "USD",
        [Series("spend", [("now", 100), ("a", 30), ("b", 20), ("after", 50)])],
    )
    assert waterfall_bars(figure) == [
        ("now", 0.0, 100.0),
        ("a", 70.0, 30.0),
        ("b", 50.0, 20.0),
        ("after", 0.0, 50.0),
    ]


def test_the_xlsx_waterfall_is_a_stacked_chart_over_an_invisible_base(demo, tmp_path):
    body = review_json()
    sheet = openpyxl.load_workbook(io.BytesIO(report_file(tmp_path, "xlsx")))["fig_savings_waterfall"]
    rows = list(sheet.iter_rows(min_row=1, values_only=True))
    assert rows[0][:3] == ("step", "base", "spend")
    total = float(body["totals"]["effective_cost"])
    first_saving = float(body["savings"][0]["amount"])
    assert rows[1][:3] == ("current spend", 0.0, total)
    assert rows[2][0] == body["savings"][0]["kind"]
    assert rows[2][1] == pytest.approx(total - first_saving) and rows[2][2] == pytest.approx(first_saving)
    chart = sheet._charts[0]
    assert chart.grouping == "stacked" and chart.series[0].graphicalProperties.noFill


@pytest.mark.parametrize("fmt", ["pdf", "xlsx", "csv", "html"])
def test_a_period_without_spend_still_renders(db, tmp_path, fmt):
    content = report_file(tmp_path, fmt)
    assert content.startswith({"pdf": b"%PDF", "xlsx": b"PK", "csv": b"PK", "html": b"<!"}[fmt])
    if fmt == "html":
        assert "0.00 USD of GPU spend" in content.decode()


def test_the_page_and_the_report_show_the_same_table_objects(demo):
    """One report model (issue 25): the spend review page's tables and the report's are the same
    ``Table`` values built once by review_tables, not one translated into the other."""
    start, end = dt.date(2026, 5, 1), dt.date(2026, 7, 1)
    page = {table.key: table for table in build_report(make_request(start=start, end=end))["tables"]}
    kind = report_kind("spend_review")
    report = kind.build(kind.load(ReportPeriod(start, end)), dt.datetime(2026, 12, 1, tzinfo=dt.UTC))
    shown = {table.key: table for table in report.tables()}
    assert all(isinstance(table, Table) for table in page.values())
    shared = ["by_team", "by_gpu", "savings", "commitment_utilization", "allocation", "budgets", "anomalies"]
    assert [shown[key] == page[key] for key in shared] == [True] * len(shared)
    # the report's own arrangements: the totals read as numbers; the months split by pricing category
    assert [c.type for c in shown["totals"].columns] == ["text", "number"]
    assert shown["totals"].rows == page["summary"].rows
    assert shown["by_month"].columns[: len(page["by_month"].columns)] == page["by_month"].columns
