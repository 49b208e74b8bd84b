"""Formula injection (issue 31, finding 1): every CSV and XLSX the product emits goes through the one
writer (gpuledger.spreadsheet), and on every export a billing tag that a spreadsheet would run reaches
it as text. The rule is OWASP's (https://owasp.org/www-community/attacks/CSV_Injection): no cell, and
no cell a ``,``/``;``/quote inside a field would start, begins with = + - @ TAB CR; the escape is a
single quote before it."""

from __future__ import annotations

import csv
import io
import json
import re
import zipfile
from decimal import Decimal
from io import StringIO
from pathlib import Path

import openpyxl
import pytest
from django.core.management import call_command
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuledger.spreadsheet import FORMULA_TRIGGERS, csv_cell, csv_text
from tests.billing.catalog import make_catalog

ROOT = Path(__file__).resolve().parents[2]
HEADER = "ChargePeriodStart,ChargePeriodEnd,ChargeCategory,BilledCost,EffectiveCost,BillingCurrency,ProviderName,ConsumedQuantity,ConsumedUnit,x_UsageType,Tags"
HOSTILE = {
    "team": '=HYPERLINK("http://evil.example","click")',
    "project": "+cmd|' /C calc'!A0",
    "account": "@SUM(1+1)*cmd",
}
SPLIT_HOSTILE = 'research;=1+2,"-3+4'  # a cell a ; or , splitting reader starts inside the field
QUERY = "start=2026-05-01&end=2026-06-01"


def _unsafe(cell: str) -> bool:
    """A cell a spreadsheet would run: starts with a trigger, or has one right after a separator."""
    if re.fullmatch(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?", cell):
        return False  # a plain number cannot run
    return bool(re.search(r"(^|[,;\"|\t\n\r])[=+\-@\t\r]", cell))


def test_the_escape_is_owasps_quote_before_every_cell_start():
    assert csv_text('=HYPERLINK("x")') == '\'=HYPERLINK("x")'
    assert csv_text("a;=1+2") == "a;'=1+2"
    assert csv_text('x",=1') == "x\",'=1"
    assert csv_text("\t=1") == "'\t'=1"
    assert csv_text("-12.50") == "-12.50" and csv_cell(Decimal("-3.25")) == Decimal("-3.25")
    assert csv_text("ml-research") == "ml-research"  # a dash inside a word starts no cell
    assert csv_text("'=already text") == "'=already text"


@settings(max_examples=200)
@given(st.text(alphabet=st.sampled_from(list("ab1.,;\"|'=+-@\t\r\n ")), max_size=20))
def test_no_escaped_text_starts_a_cell_with_a_trigger(text):
    escaped = csv_text(text)
    assert not _unsafe(escaped) or re.fullmatch(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?", text)
    assert escaped.replace("'", "") == text.replace("'", "")  # only quotes are added, nothing lost


def test_every_csv_and_xlsx_writer_is_the_shared_one():
    """No product module writes CSV or spreadsheet cells on its own (the demo bill generator writes an
    input file for import, not an export)."""
    allowed = {"gpuledger/spreadsheet.py", "billing/demo.py"}
    offenders = []
    for package in ("billing", "gpuledger", "procurement", "pricing", "scheduler"):
        for path in (ROOT / package).rglob("*.py"):
            relative = path.relative_to(ROOT).as_posix()
            if relative in allowed or "/migrations/" in relative:
                continue
            text = path.read_text()
            if re.search(r"csv\.(writer|DictWriter)\(|\.to_csv\(|\.to_excel\(|xlsxwriter", text):
                offenders.append(relative)
            if re.search(r"^\s*(import|from) openpyxl", text, re.M) and not relative.endswith(
                "render/xlsx.py"
            ):
                offenders.append(relative)
    assert offenders == []


def _bill(tmp_path) -> None:
    make_catalog()
    rows = []
    for team in (HOSTILE["team"], SPLIT_HOSTILE):
        tags = json.dumps({"team": team, "project": HOSTILE["project"]}).replace('"', '""')
        rows.append(
            f"2026-05-01T00:00:00Z,2026-05-02T00:00:00Z,Usage,19.3152,19.3152,USD,AWS,24,Hours,"
            f'USE1-BoxUsage:g6.xlarge,"{tags}"'
        )
    bill = tmp_path / "bill.csv"
    bill.write_text(HEADER + "\n" + "\n".join(rows) + "\n")
    call_command("import_billing", str(bill), "--format", "focus", "--no-progress", stdout=StringIO())


def _csv_cells(content: bytes) -> list[str]:
    return [cell for row in csv.reader(io.StringIO(content.decode(), newline="")) for cell in row]


def _assert_csv_safe(content: bytes, name: str) -> None:
    cells = _csv_cells(content)
    assert any(HOSTILE["team"] in cell for cell in cells), name  # the name is there, as text
    assert [cell for cell in cells if _unsafe(cell)] == [], name


@pytest.mark.django_db
def test_every_spend_export_writes_tag_names_as_text(tmp_path, client_as):
    _bill(tmp_path)
    client = client_as("finance")
    review_csv = client.get(f"/billing/review.csv?{QUERY}")
    assert review_csv.status_code == 200
    _assert_csv_safe(review_csv.content, "/billing/review.csv")

    archive = zipfile.ZipFile(io.BytesIO(client.get(f"/reports/spend_review/download/csv/?{QUERY}").content))
    for name in archive.namelist():
        cells = _csv_cells(archive.read(name))
        assert [cell for cell in cells if _unsafe(cell)] == [], name
    by_team = _csv_cells(archive.read("by_team.csv"))
    assert "'" + HOSTILE["team"] in by_team and "research;'=1+2,\"'-3+4" in by_team

    workbook = openpyxl.load_workbook(
        io.BytesIO(client.get(f"/reports/spend_review/download/xlsx/?{QUERY}").content)
    )
    texts = [
        cell for sheet in workbook for row in sheet.iter_rows() for cell in row if isinstance(cell.value, str)
    ]
    hostile = [cell for cell in texts if cell.value.startswith(FORMULA_TRIGGERS)]
    assert any(cell.value == HOSTILE["team"] for cell in hostile)
    # every formula-like text is a string cell with Excel's quote prefix, except the totals the
    # report writes itself (=SUM over its own cells)
    for cell in hostile:
        if cell.data_type == "f":
            assert re.fullmatch(r"=SUM\([A-Z]+\d+:[A-Z]+\d+\)", cell.value), cell.value
        else:
            assert (cell.data_type, cell.quotePrefix) == ("s", True), cell.value
