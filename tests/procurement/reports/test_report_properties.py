"""Properties of the report framework: any text survives every export as text, the data object
round-trips through its stored JSON, and a table's printed totals are the sums of its cells."""

import csv
import io
import json
from decimal import Decimal

import openpyxl
from hypothesis import given, settings
from hypothesis import strategies as st

from procurement.reports.model import Column, Headline, Report, Section, Table
from procurement.reports.render.csv import table_csv
from procurement.reports.render.xlsx import render_xlsx, write_text
from procurement.reports.safety import csv_text

texts = st.text(
    alphabet=st.characters(blacklist_categories=("Cs", "Cc"), whitelist_characters="\t\r"), max_size=40
)
money = st.decimals(min_value=-(10**9), max_value=10**9, places=2, allow_nan=False, allow_infinity=False)


def _report(names: list[str], amounts: list[Decimal]) -> Report:
    rows = [{"name": name, "amount": str(amount)} for name, amount in zip(names, amounts, strict=False)]
    table = Table(
        "items", "Items", [Column("name", "Name"), Column("amount", "Amount", "money", total=True)], rows
    )
    return Report(
        kind="test",
        title="t",
        subject="s",
        currency="USD",
        generated_at="2026-12-01T00:00:00+00:00",
        summary=[Headline("n", "1", "integer")],
        sections=[Section("s", tables=[table])],
        assumptions=[],
        price_dates=[],
    )


@settings(max_examples=60)
@given(text=texts)
def test_any_text_is_written_to_xlsx_as_that_text(text):
    sheet = openpyxl.Workbook().active
    write_text(sheet["A1"], text)
    assert sheet["A1"].value == text and sheet["A1"].data_type == "s"


@settings(max_examples=40, deadline=None)
@given(names=st.lists(texts, min_size=1, max_size=5), amounts=st.lists(money, min_size=5, max_size=5))
def test_csv_keeps_numbers_and_quotes_formula_like_text(names, amounts):
    report = _report(names, amounts)
    rows = list(csv.reader(io.StringIO(table_csv(report.tables()[0]).decode(), newline="")))
    for name, row in zip(names, rows[1:], strict=False):
        assert row[0] == csv_text(
            name
        )  # the one writer's escape (tests/gpuledger/test_spreadsheet_exports.py)
        assert row[0] == name or row[0].replace("'", "") == name.replace("'", "")
    assert Decimal(rows[-1][1]) == sum(amounts[: len(names)], Decimal(0))  # the totals row


@settings(max_examples=20, deadline=None)
@given(names=st.lists(texts, min_size=1, max_size=4), amounts=st.lists(money, min_size=4, max_size=4))
def test_the_data_object_round_trips_and_xlsx_totals_are_formulas(names, amounts):
    report = _report(names, amounts)
    assert Report.from_dict(json.loads(json.dumps(report.to_dict()))) == report
    sheet = openpyxl.load_workbook(io.BytesIO(render_xlsx(report)))["items"]
    last = len(names) + 3
    assert sheet[f"B{last}"].value == f"=SUM(B3:B{last - 1})"
    assert all(isinstance(sheet[f"B{row}"].value, int | float) for row in range(3, last))
