"""The report as an Excel workbook (openpyxl).

Numbers are written as numbers with number formats (never as text), a table's totals row is a SUM
formula over its cells, every figure gets its data on its own sheet and a native Excel chart beside
it, and the assumptions and price dates have their own sheets. Text that Excel would run as a
formula is written as a string cell with a quote prefix by the product's one spreadsheet writer
(``gpuledger.spreadsheet``).
"""

from __future__ import annotations

import io
import re
from decimal import Decimal
from typing import Any

from openpyxl import Workbook
from openpyxl.chart import BarChart, LineChart, Reference
from openpyxl.styles import Font
from openpyxl.utils import get_column_letter
from openpyxl.worksheet.worksheet import Worksheet

from gpuledger.spreadsheet import xlsx_text
from procurement.reports.format import as_decimal
from procurement.reports.model import Figure, Report, Series, Table, waterfall_bars

NUMBER_FORMATS = {
    "money": "#,##0.00",
    "price": "#,##0.000000",
    "number": "#,##0.00",
    "integer": "#,##0",
    "percent": "0.0%",
}
BOLD = Font(bold=True)


write_text = xlsx_text  # the name the sheets below (and their tests) use


def write_typed(cell, value: Any, column_type: str) -> None:
    if column_type in ("text", "date") or value is None:
        write_text(cell, value)
        return
    number = as_decimal(value)
    if number is None:  # a number column holding words ("never"): keep the words, as text
        write_text(cell, value)
        return
    cell.value = (
        int(number) if column_type == "integer" and number == number.to_integral_value() else float(number)
    )
    cell.number_format = NUMBER_FORMATS[column_type]


class _SheetNames:
    def __init__(self) -> None:
        self.used: set[str] = set()

    def __call__(self, wanted: str) -> str:
        base = re.sub(r"[\[\]:*?/\\]", "_", wanted)[:28] or "sheet"
        name, n = base, 2
        while name.lower() in self.used:
            name, n = f"{base[:26]}_{n}", n + 1
        self.used.add(name.lower())
        return name


def render_xlsx(report: Report) -> bytes:
    workbook = Workbook()
    names = _SheetNames()
    summary = workbook.active
    summary.title = names("Summary")
    _summary_sheet(summary, report)
    for table in report.tables():
        _table_sheet(workbook.create_sheet(names(table.key)), table)
    for figure in report.figures():
        _figure_sheet(workbook.create_sheet(names(f"fig_{figure.key}")), figure)
    _assumptions_sheet(workbook.create_sheet(names("Assumptions")), report)
    _prices_sheet(workbook.create_sheet(names("Prices")), report)
    buffer = io.BytesIO()
    workbook.save(buffer)
    return buffer.getvalue()


def _summary_sheet(sheet: Worksheet, report: Report) -> None:
    write_text(sheet["A1"], report.title)
    sheet["A1"].font = Font(bold=True, size=14)
    for row, (label, value) in enumerate(
        (
            ("Subject", report.subject),
            ("Currency", report.currency),
            ("Built (UTC)", report.generated_at),
            ("Verdict", report.verdict),
            ("Stale prices", "yes" if report.stale else "no"),
        ),
        start=2,
    ):
        write_text(sheet.cell(row, 1), label)
        write_text(sheet.cell(row, 2), value)
    start = 8
    for index, heading in enumerate(("Figure", "Value", "Basis")):
        write_text(sheet.cell(start, index + 1), heading)
        sheet.cell(start, index + 1).font = BOLD
    for offset, item in enumerate(report.summary, start=1):
        write_text(sheet.cell(start + offset, 1), item.label)
        write_typed(sheet.cell(start + offset, 2), item.value, item.type)
        write_text(sheet.cell(start + offset, 3), item.note)
    for offset, note in enumerate(report.notes, start=len(report.summary) + 2):
        write_text(sheet.cell(start + offset, 1), note)
    _widths(sheet, (38, 22, 60))


def _table_sheet(sheet: Worksheet, table: Table) -> None:
    write_text(sheet["A1"], table.title)
    sheet["A1"].font = BOLD
    header = 2
    for index, column in enumerate(table.columns, start=1):
        write_text(sheet.cell(header, index), column.label)
        sheet.cell(header, index).font = BOLD
    for row_index, row in enumerate(table.rows, start=header + 1):
        for index, column in enumerate(table.columns, start=1):
            write_typed(sheet.cell(row_index, index), row.get(column.key), column.type)
    if table.has_totals and table.rows:
        total_row = header + len(table.rows) + 1
        write_text(sheet.cell(total_row, 1), "Total")
        sheet.cell(total_row, 1).font = BOLD
        for index, column in enumerate(table.columns, start=1):
            if column.total:
                letter = get_column_letter(index)
                cell = sheet.cell(total_row, index)
                cell.value = f"=SUM({letter}{header + 1}:{letter}{total_row - 1})"
                cell.number_format = NUMBER_FORMATS.get(column.type, "General")
                cell.font = BOLD
    if table.note:
        write_text(sheet.cell(header + len(table.rows) + 3, 1), table.note)
    _widths(sheet, [max(12, min(40, len(column.label) + 4)) for column in table.columns])


def _as_stacked_waterfall(figure: Figure) -> Figure:
    """A waterfall as Excel draws one: a stacked bar of an invisible base and the visible step."""
    bars = waterfall_bars(figure)
    return Figure(
        figure.key,
        "waterfall",
        figure.title,
        figure.x_label,
        figure.y_label,
        [
            Series("base", [(label, base) for label, base, _ in bars]),
            Series(figure.series[0].name, [(label, height) for label, _, height in bars]),
        ],
    )


def _figure_sheet(sheet: Worksheet, figure: Figure) -> None:
    """The figure's data as columns (x, then one column per series) and a native chart over them."""
    if figure.kind == "waterfall" and figure.series:
        figure = _as_stacked_waterfall(figure)
    write_text(sheet["A1"], figure.x_label)
    for index, series in enumerate(figure.series, start=2):
        write_text(sheet.cell(1, index), series.name)
    xs = [x for x, _ in figure.series[0].points] if figure.series else []
    for row, x in enumerate(xs, start=2):
        cell = sheet.cell(row, 1)
        if isinstance(x, int | float | Decimal):
            cell.value = float(x)
        else:
            write_text(cell, x)
        for index, series in enumerate(figure.series, start=2):
            value = series.points[row - 2][1] if row - 2 < len(series.points) else None
            sheet.cell(row, index).value = None if value is None else float(value)
            sheet.cell(row, index).number_format = "#,##0.00"
    if not xs:
        return
    chart = LineChart() if figure.kind == "line" else BarChart()
    if figure.kind == "tornado":
        chart.type = "bar"  # horizontal bars: one pair (low, high) per driver
        chart.overlap = 100
    if figure.kind in ("stacked_bar", "waterfall"):
        chart.grouping, chart.overlap = "stacked", 100
    chart.title = figure.title
    chart.x_axis.title = figure.x_label
    chart.y_axis.title = figure.y_label
    chart.height, chart.width = 9, 18
    last_row = len(xs) + 1
    chart.add_data(
        Reference(sheet, min_col=2, max_col=len(figure.series) + 1, min_row=1, max_row=last_row),
        titles_from_data=True,
    )
    chart.set_categories(Reference(sheet, min_col=1, min_row=2, max_row=last_row))
    if figure.kind == "waterfall":
        chart.series[0].graphicalProperties.noFill = True  # the base only lifts each step to its level
        chart.series[0].graphicalProperties.line.noFill = True
    sheet.add_chart(chart, f"{get_column_letter(len(figure.series) + 3)}2")


def _assumptions_sheet(sheet: Worksheet, report: Report) -> None:
    for index, heading in enumerate(("Assumption", "Value", "Source"), start=1):
        write_text(sheet.cell(1, index), heading)
        sheet.cell(1, index).font = BOLD
    for row, item in enumerate(report.assumptions, start=2):
        for index, value in enumerate((item.name, item.value, item.source), start=1):
            write_text(sheet.cell(row, index), value)
    _widths(sheet, (36, 24, 70))


def _prices_sheet(sheet: Worksheet, report: Report) -> None:
    headings = ("Price", "Observed", "Age (days)", "Quality", "Stale", "Source")
    for index, heading in enumerate(headings, start=1):
        write_text(sheet.cell(1, index), heading)
        sheet.cell(1, index).font = BOLD
    for row, price in enumerate(report.price_dates, start=2):
        write_text(sheet.cell(row, 1), price.label)
        write_text(sheet.cell(row, 2), price.observed_at)
        write_typed(sheet.cell(row, 3), price.age_days, "integer")
        write_text(sheet.cell(row, 4), price.quality)
        write_text(sheet.cell(row, 5), "yes" if price.stale else "no")
        write_text(sheet.cell(row, 6), price.source)
    _widths(sheet, (40, 28, 12, 18, 8, 50))


def _widths(sheet: Worksheet, widths) -> None:
    for index, width in enumerate(widths, start=1):
        sheet.column_dimensions[get_column_letter(index)].width = width
