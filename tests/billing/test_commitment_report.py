"""The commitments section (issue 22, section 4) on the API, the page's CSV/HTML downloads and the
report framework's PDF, XLSX and CSV: the numbers of the hand-checked savings-plan variant
(tests/billing/test_commitment_attribution.py: utilization 50.0%, coverage 75.0%, 711.99 unattributed),
finance and admin only."""

from __future__ import annotations

import csv
import io
import zipfile
from io import StringIO
from pathlib import Path

import openpyxl
import pypdf
import pytest
from django.core.management import call_command

from billing.imports.importer import import_file
from tests.billing.catalog import make_catalog

pytestmark = pytest.mark.django_db
FIXTURE = Path(__file__).parent / "fixtures" / "focus12_savings_plan_50pct_partly_gpu.csv"
PLAN = "arn:aws:savingsplans::123456789012:savingsplan/sp-0fixture50pct"
QUERY = "from=2026-02-01&to=2026-03-01"


@pytest.fixture
def plan():
    make_catalog()
    import_file(FIXTURE)


def test_the_api_carries_the_commitments_for_finance_and_admin_only(plan, client_as):
    for role in ("finance", "admin"):
        body = client_as(role).get(f"/api/billing/spend-review/?{QUERY}").json()
        assert body["unattributed_commitment_cost"] == "711.99"
        assert body["commitments"]["totals"]["utilization_pct"] == "50.0"
        assert body["commitments"]["totals"]["coverage_pct"] == "75.0"
        assert body["commitments"]["by_commitment"][0]["commitment_id"] == PLAN
    for role in ("viewer", "engineer"):
        assert client_as(role).get(f"/api/billing/spend-review/?{QUERY}").status_code == 403


def test_the_page_downloads_carry_the_commitment_tables(plan, client_as):
    client = client_as("finance")
    rows = list(
        csv.reader(
            io.StringIO(client.get("/billing/review.csv?start=2026-02-01&end=2026-03-01").content.decode())
        )
    )
    assert ["Unattributed commitments (beside, not included)", "711.99"] in rows
    assert ["Utilization (used / committed, %)", "50.0"] in rows
    at = rows.index(["table", "commitment_utilization", "Utilization and coverage by commitment"])
    assert rows[at + 2][:4] == [PLAN, "Savings Plan", "in proportion to its used cost on GPU rows", "949.32"]
    html = client.get("/billing/review.html?start=2026-02-01&end=2026-03-01").content
    assert (
        b"Commitments: utilization, coverage, expiring" in html and html.count(b"<svg") == 9
    )  # 4 spend, 2 commitments, 3 allocation/budgets/anomalies


def test_pdf_xlsx_and_csv_reports_show_the_commitments(plan, tmp_path):
    def report(fmt):
        output = tmp_path / f"r.{fmt}"
        call_command(
            "report",
            "spend_review",
            "--from",
            "2026-02-01",
            "--to",
            "2026-03-01",
            "--format",
            fmt,
            "--output",
            str(output),
            stderr=StringIO(),
        )
        return output.read_bytes()

    text = "".join(page.extract_text() for page in pypdf.PdfReader(io.BytesIO(report("pdf"))).pages)
    assert "Commitments: utilization, coverage, expiring" in text and "711.99" in text
    workbook = openpyxl.load_workbook(io.BytesIO(report("xlsx")))
    sheet = workbook["commitment_utilization"]
    header = [cell.value for cell in sheet[2]]
    assert sheet.cell(3, header.index("Utilization (%)") + 1).value in (50, 50.0, "50.0")
    assert sheet.cell(3, header.index("Coverage (%)") + 1).value in (75, 75.0, "75.0")
    assert workbook["fig_commitment_coverage"]._charts
    archive = zipfile.ZipFile(io.BytesIO(report("csv")))
    months = list(csv.reader(io.StringIO(archive.read("commitment_by_month.csv").decode())))
    assert months[1][0] == "2026-02" and "75.0" in months[1]
