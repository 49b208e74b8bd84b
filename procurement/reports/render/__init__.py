"""Renderers: each turns the stored report data (a ``Report``) into one format, reading nothing else.

Each renderer's module is imported when its format is asked for: a PDF needs no openpyxl, a workbook no
WeasyPrint (issue 30, benchmarks/cli_bench.py).
"""

from importlib import import_module

FORMATS = {
    "html": ("text/html; charset=utf-8", "html"),
    "pdf": ("application/pdf", "pdf"),
    "xlsx": ("application/vnd.openxmlformats-officedocument.spreadsheetml.sheet", "xlsx"),
    "csv": ("text/csv; charset=utf-8", "csv"),  # a zip (application/zip) when there are several tables
}
# name -> the module under procurement.reports.render that defines it
_LAZY = {
    "render_csv": "csv",
    "render_html_document": "html",
    "report_context": "html",
    "render_pdf": "pdf",
    "render_xlsx": "xlsx",
}


def __getattr__(name: str):
    if name in _LAZY:
        return getattr(import_module(f"{__name__}.{_LAZY[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def render(report, fmt: str) -> tuple[bytes, str, str]:
    """(content, content type, file extension) of the report in ``fmt``."""
    if fmt == "html":
        return __getattr__("render_html_document")(report).encode(), *FORMATS["html"]
    if fmt == "pdf":
        return __getattr__("render_pdf")(report), *FORMATS["pdf"]
    if fmt == "xlsx":
        return __getattr__("render_xlsx")(report), *FORMATS["xlsx"]
    if fmt == "csv":
        content, is_zip = __getattr__("render_csv")(report)
        return (content, "application/zip", "zip") if is_zip else (content, *FORMATS["csv"])
    raise ValueError(f"unknown format {fmt!r}; one of {', '.join(FORMATS)}")


__all__ = ["FORMATS", "render", *_LAZY]
