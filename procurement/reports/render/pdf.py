"""The report as PDF: the standalone HTML document laid out by WeasyPrint (A4, page numbers)."""

from __future__ import annotations

from procurement.reports.model import Report
from procurement.reports.render.html import render_html_document


def render_pdf(report: Report) -> bytes:
    from weasyprint import HTML  # imported here: it loads Pango, needed only when a PDF is asked for

    return HTML(string=render_html_document(report)).write_pdf()
