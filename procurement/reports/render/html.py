"""The report as HTML: the page's body (inside base.html) and a standalone document for the PDF."""

from __future__ import annotations

from typing import Any

from django.template.loader import render_to_string

from procurement.reports.format import display
from procurement.reports.model import Report, Table
from procurement.reports.render.figures import figure_svg


def _table_context(table: Table) -> dict[str, Any]:
    rows = [
        [
            {
                "text": display(row.get(column.key), column.type),
                "numeric": column.type not in ("text", "date"),
            }
            for column in table.columns
        ]
        for row in table.rows
    ]
    totals = None
    if table.has_totals and table.rows:
        sums = table.totals()
        totals = [
            {
                "text": display(sums[column.key], column.type) if column.key in sums else "",
                "numeric": column.key in sums,
            }
            for column in table.columns
        ]
        totals[0] = totals[0] if totals[0]["text"] else {"text": "Total", "numeric": False}
    return {"table": table, "rows": rows, "totals": totals}


def report_context(report: Report) -> dict[str, Any]:
    """What the templates need: every value already formatted, every figure already an SVG."""
    return {
        "report": report,
        "built_at": report.generated_at[:16].replace("T", " "),
        "summary": [
            {"label": item.label, "text": display(item.value, item.type, report.currency), "note": item.note}
            for item in report.summary
        ],
        "sections": [
            {
                "section": section,
                "tables": [_table_context(table) for table in section.tables if not table.data_only],
                "figures": [figure_svg(figure, report.currency) for figure in section.figures],
            }
            for section in report.sections
        ],
    }


def render_html_document(report: Report) -> str:
    """A self-contained HTML document (styles inline, charts inline SVG): the PDF's source and the
    ``--format html`` download."""
    return render_to_string("procurement/reports/document.html", report_context(report))
