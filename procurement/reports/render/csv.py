"""The report as CSV: one table per file; several tables (plus the summary, assumptions and prices)
as a zip of one CSV each. Numbers are plain decimals (no separators) so that they read back as
numbers; formula-like text is prefixed with a quote (``procurement.reports.safety``)."""

from __future__ import annotations

import csv
import io
import zipfile
from typing import Any

from procurement.reports.model import Report, Table
from procurement.reports.safety import csv_text


def _cell(value: Any, column_type: str) -> str:
    if value is None:
        return ""
    return str(value) if column_type not in ("text", "date") else csv_text(str(value))


def table_csv(table: Table) -> bytes:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\r\n")
    writer.writerow([csv_text(column.label) for column in table.columns])
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
    writer = csv.writer(buffer, lineterminator="\r\n")
    writer.writerow(header)
    writer.writerows([[csv_text("" if value is None else str(value)) for value in row] for row in rows])
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
        writer = csv.writer(summary, lineterminator="\r\n")
        writer.writerow(["figure", "value", "basis"])
        for item in report.summary:
            writer.writerow([csv_text(item.label), _cell(item.value, item.type), csv_text(item.note)])
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
