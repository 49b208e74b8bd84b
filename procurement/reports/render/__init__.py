"""Renderers: each turns the stored report data (a ``Report``) into one format, reading nothing else."""

from procurement.reports.render.csv import render_csv
from procurement.reports.render.html import render_html_document, report_context
from procurement.reports.render.pdf import render_pdf
from procurement.reports.render.xlsx import render_xlsx

FORMATS = {
    "html": ("text/html; charset=utf-8", "html"),
    "pdf": ("application/pdf", "pdf"),
    "xlsx": ("application/vnd.openxmlformats-officedocument.spreadsheetml.sheet", "xlsx"),
    "csv": ("text/csv; charset=utf-8", "csv"),  # a zip (application/zip) when there are several tables
}


def render(report, fmt: str) -> tuple[bytes, str, str]:
    """(content, content type, file extension) of the report in ``fmt``."""
    if fmt == "html":
        return render_html_document(report).encode(), *FORMATS["html"]
    if fmt == "pdf":
        return render_pdf(report), *FORMATS["pdf"]
    if fmt == "xlsx":
        return render_xlsx(report), *FORMATS["xlsx"]
    if fmt == "csv":
        content, is_zip = render_csv(report)
        return (content, "application/zip", "zip") if is_zip else (content, *FORMATS["csv"])
    raise ValueError(f"unknown format {fmt!r}; one of {', '.join(FORMATS)}")


__all__ = [
    "FORMATS",
    "render",
    "render_csv",
    "render_html_document",
    "render_pdf",
    "render_xlsx",
    "report_context",
]
