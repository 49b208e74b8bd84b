"""The rent-or-buy report: one data object, the same totals in every format, reproducible."""

import io
import zipfile
from decimal import Decimal

import openpyxl
import pypdf
import pytest
from django.core.management import CommandError, call_command

from procurement.models import ReportSnapshot
from procurement.reports.model import Report
from procurement.reports.registry import report_kinds
from procurement.reports.render import render
from procurement.services.reports import report_snapshot_create, snapshot_report
from tests.procurement.reports.conftest import NOW

D = Decimal


def _report(study) -> Report:
    return snapshot_report(report_snapshot_create(kind="rent_or_buy", subject_id=study.pk, now=NOW))


def _summary(report: Report) -> dict:
    return {item.label: item for item in report.summary}


def test_it_registers_both_report_kinds():
    kinds = report_kinds()
    assert {"spot", "rent_or_buy"} <= set(kinds)
    assert kinds["rent_or_buy"].roles == ("engineer", "admin")
    assert kinds["spot"].roles == ("engineer", "admin")


def test_the_summary_states_each_headline_on_its_basis(stored_study):
    # the docs' example at 80%: buy 477,211.79 cash / 464,060.05 NPV; rent 0.8 x 628,617.60 = 502,894.08
    # cash / 447,622.27 NPV; cash break-even utilization 0.759145, NPV one 0.829378 -> rent
    report = _report(stored_study)
    summary = _summary(report)
    assert summary["Recommendation"].value == "rent"
    assert summary["Recommendation"].note == "decided on present value at 8.0% a year"
    assert summary["Buy: total over 36 months"].value == "477211.79"
    assert summary["Buy: total over 36 months"].note == "cash, undiscounted"
    assert summary["Rent (on_demand): total over 36 months"].value == "502894.08"
    assert summary["Buy: NPV"].value == "464060.05"
    assert summary["Rent: NPV"].value == "447622.27"
    assert summary["NPV advantage of buying"].value == "-16437.78"
    assert summary["Break-even utilization (cash)"].value == "0.759145"
    assert summary["Break-even utilization (present value)"].value == "0.829378"
    assert summary["Break-even month (cash)"].value == "month 36"
    assert "only because the residual value (60,000.00 USD)" in summary["Break-even month (cash)"].note
    assert summary["Break-even month (present value)"].value == "never"
    assert report.verdict.startswith(
        "Recommendation: RENT (present value at 8.0% a year): at 80% utilization"
    )
    assert report.currency == "USD"
    assert report.price_dates[0].quality == "typed in the study" and not report.stale


def test_the_assumptions_say_where_each_value_comes_from(stored_study):
    assumptions = {item.name: item for item in _report(stored_study).assumptions}
    assert assumptions["buy.pue"].value == "1.58" and assumptions["buy.pue"].source == "stated in the study"
    assert assumptions["utilization"].value == "0.8"


def test_the_xlsx_has_typed_numbers_sum_formulas_charts_and_an_assumptions_sheet(stored_study):
    content, content_type, extension = render(_report(stored_study), "xlsx")
    assert extension == "xlsx" and content_type.startswith("application/vnd.openxmlformats")
    workbook = openpyxl.load_workbook(io.BytesIO(content))
    flows = workbook["cash_flows"]
    # header on row 2, months 0..36 on rows 3..39, totals on row 40 as formulas
    assert flows["B40"].value == "=SUM(B3:B39)" and flows["C40"].value == "=SUM(C3:C39)"
    assert (
        isinstance(flows["B4"].value, float)
        and not isinstance(flows["B3"].value, str)
        and flows["B3"].number_format == "#,##0.00"
    )
    assert flows["B3"].value == 305000.0  # month 0: the purchase
    total = sum(D(str(flows.cell(row, 2).value)) for row in range(3, 40))
    assert total.quantize(D("0.01")) == D("477211.79")  # what the formula evaluates to: the buy total
    summary = {row[0]: row[1] for row in workbook["Summary"].iter_rows(min_row=9, values_only=True) if row[0]}
    assert summary["Buy: NPV"] == pytest.approx(464060.05)
    assert summary["Break-even utilization (present value)"] == pytest.approx(0.829378)
    assert len(workbook["fig_cumulative_cost"]._charts) == 1
    assert len(workbook["fig_tornado"]._charts) == 1
    sources = [row[2] for row in workbook["Assumptions"].iter_rows(min_row=2, values_only=True)]
    assert "stated in the study" in sources


def test_the_pdf_opens_with_the_one_page_summary(stored_study):
    content, content_type, _ = render(_report(stored_study), "pdf")
    assert content.startswith(b"%PDF") and content_type == "application/pdf"
    pages = pypdf.PdfReader(io.BytesIO(content)).pages
    first = pages[0].extract_text()
    assert "Rent or buy: one 8xH100 server, 3 years" in first
    assert "477,211.79" in first and "464,060.05" in first and "82.9%" in first
    rest = " ".join(page.extract_text() for page in pages[1:])
    assert "Cash flows by month" in rest and "Assumptions" in rest


def test_the_csv_zip_has_one_table_per_file_with_the_same_totals(stored_study):
    content, content_type, extension = render(_report(stored_study), "csv")
    assert (content_type, extension) == ("application/zip", "zip")
    archive = zipfile.ZipFile(io.BytesIO(content))
    assert {"summary.csv", "cash_flows.csv", "sensitivity.csv", "assumptions.csv", "prices.csv"} <= set(
        archive.namelist()
    )
    last = archive.read("cash_flows.csv").decode().strip().splitlines()[-1].split(",")
    assert [D(last[1]), D(last[2])] == [D("477211.79"), D("502894.08")]


def test_a_stored_report_shows_the_same_numbers_after_the_study_changes(stored_study):
    snapshot = report_snapshot_create(kind="rent_or_buy", subject_id=stored_study.pk, now=NOW)
    before = render(snapshot_report(snapshot), "csv")[0]
    stored_study.result = stored_study.result | {"buy": stored_study.result["buy"] | {"total": "1.00"}}
    stored_study.save()
    snapshot.refresh_from_db()
    assert render(snapshot_report(snapshot), "csv")[0] == before
    assert _summary(snapshot_report(snapshot))["Buy: total over 36 months"].value == "477211.79"
    # the same inputs viewed again add no snapshot; changed inputs add one
    assert report_snapshot_create(kind="rent_or_buy", subject_id=stored_study.pk, now=NOW).pk != snapshot.pk
    assert ReportSnapshot.objects.count() == 2


def test_the_same_inputs_reuse_their_snapshot(stored_study):
    first = report_snapshot_create(kind="rent_or_buy", subject_id=stored_study.pk, now=NOW)
    again = report_snapshot_create(kind="rent_or_buy", subject_id=stored_study.pk, now=NOW)
    assert first.pk == again.pk


def test_the_command_writes_each_format(stored_study, tmp_path):
    for fmt in ("pdf", "xlsx", "csv", "html"):
        output = tmp_path / f"report.{fmt}"
        call_command(
            "report", "rent_or_buy", "--id", str(stored_study.pk), "--format", fmt, "--output", str(output)
        )
        assert output.stat().st_size > 0
    assert (tmp_path / "report.pdf").read_bytes().startswith(b"%PDF")
    assert "477,211.79" in (tmp_path / "report.html").read_text()


def test_the_command_names_the_bad_input(db, tmp_path):
    with pytest.raises(CommandError, match=r"--id: no TCO study 999"):
        call_command("report", "rent_or_buy", "--id", "999", "--output", str(tmp_path / "x.pdf"))
    with pytest.raises(CommandError, match=r"kind: unknown report 'spend'"):
        call_command("report", "spend", "--id", "1", "--output", str(tmp_path / "x.pdf"))
    assert ReportSnapshot.objects.count() == 0


def test_a_kind_from_another_module_is_one_registration_away(db, tmp_path):
    import datetime as dt

    from procurement.reports import registry
    from procurement.reports.model import Headline
    from procurement.reports.registry import ReportKind, register

    def build(inputs, now: dt.datetime) -> Report:
        return Report(
            kind="demo",
            title="Demo",
            subject=f"period {inputs['id']}",
            currency="EUR",
            generated_at=now.isoformat(),
            summary=[Headline("spend", "1234.5", "money")],
            sections=[],
            assumptions=[],
            price_dates=[],
        )

    register(ReportKind("demo", "Demo", ("finance", "admin"), "period", lambda pk: {"id": pk}, build))
    try:
        assert {"spot", "rent_or_buy", "demo"} <= set(report_kinds())
        output = tmp_path / "demo.csv"
        call_command("report", "demo", "--id", "7", "--format", "csv", "--output", str(output))
        assert "spend,1234.5" in zipfile.ZipFile(output).read("summary.csv").decode()
    finally:
        registry._KINDS.pop("demo")
