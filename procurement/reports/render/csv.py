"""The report as CSV: one table per file; several tables (plus the summary, assumptions and prices)
as a zip of one CSV each. Numbers are plain decimals (no separators) so that they read back as
numbers; every cell goes through the product's one spreadsheet writer (``gpuledger.spreadsheet``),
which prefixes formula-like text with a quote."""

from __future__ import annotations

import io
import zipfile
from typing import Any

from gpuledger.spreadsheet import csv_writer
from procurement.reports.model import Report, Table


def _cell(value: Any, column_type: str) -> str:
    # text columns are text even when they look like numbers; the writer quotes what could run
    return "" if value is None else str(value)


def table_csv(table: Table) -> bytes:
    buffer = io.StringIO()
    writer = csv_writer(buffer, lineterminator="\r\n")
    writer.writerow([column.label for column in table.columns])
    for row in table.rows:
        writer.writerow([_cell(row.get(column.key), column.type) for column in table.columns])
    if table.has_totals and table.rows:
        sums = table.totals()
        writer.writerow(
            [
                sums.get(column.key, "Total" if index == 0 else "")
                for index, column in enumerate(table.columns)
            ]
        )
    return buffer.getvalue().encode("utf-8")


def _rows_csv(header: list[str], rows: list[list[Any]]) -> bytes:
    buffer = io.StringIO()
    writer = csv_writer(buffer, lineterminator="\r\n")
    writer.writerow(header)
    writer.writerows([["" if value is None else str(value) for value in row] for row in rows])
    return buffer.getvalue().encode("utf-8")


def render_csv(report: Report, table_key: str | None = None) -> tuple[bytes, bool]:
    """(content, is_zip): the one table asked for (or the only one) as CSV, else a zip of every table."""
    tables = report.tables()
    if table_key is not None:
        chosen = [table for table in tables if table.key == table_key]
        if not chosen:
            raise ValueError(f"no table {table_key!r}; one of {', '.join(t.key for t in tables)}")
        return table_csv(chosen[0]), False
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        summary = io.StringIO()
        writer = csv_writer(summary, lineterminator="\r\n")
        writer.writerow(["figure", "value", "basis"])
        for item in report.summary:
            writer.writerow([item.label, _cell(item.value, item.type), item.note])
        archive.writestr("summary.csv", summary.getvalue().encode("utf-8"))
        for table in tables:
            archive.writestr(f"{table.key}.csv", table_csv(table))
        archive.writestr(
            "assumptions.csv",
            _rows_csv(
                ["assumption", "value", "source"], [[a.name, a.value, a.source] for a in report.assumptions]
            ),
        )
        archive.writestr(
            "prices.csv",
            _rows_csv(
                ["price", "observed_at", "age_days", "quality", "stale", "source"],
                [
                    [p.label, p.observed_at, p.age_days, p.quality, p.stale, p.source]
                    for p in report.price_dates
                ],
            ),
        )
    return buffer.getvalue(), True
