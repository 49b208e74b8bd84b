"""Each import's daily summary (models.DailySpend, issue 28, item 1): written from one DuckDB GROUP BY over
the dataset files the import records (duckdb_review.daily_spend_sums), by the post-import task
(billing.tasks.check_spend_after_import) once the import has committed, before the budget and anomaly
check that reads it; written whole in one transaction (an import has all of its summary or none, and
readers fall back to the files for a month whose imports are not all summarized). A restated month's rows go with its
files (imports/scheduled.replace_imports) and a deleted import's with it (CASCADE).

On PostgreSQL the rows go in by one binary COPY (the ORM's bulk_create built a model instance a row and
sent its values as arrays: 11,520 rows of a 1M-line bench bill in about 0.5 s of the task's 0.9 s,
2026-12-06); elsewhere by bulk_create.

Idempotent: an import's summary is replaced whole each time it is written (the backfill command,
`manage.py daily_spend_backfill`, writes it for imports made before the table existed).
"""

from __future__ import annotations

from decimal import Decimal

from django.db import connection, transaction

from billing.models import BillingImport, DailySpend
from billing.storage import review_sql
from billing.storage.duckdb_review import daily_spend_sums
from billing.storage.import_datasets import ImportDatasets


def _decimal(micros) -> Decimal:
    return Decimal(int(micros)).scaleb(-6)


def daily_spend_record(billing_import: BillingImport) -> int:
    """The import's DailySpend rows, from the files it records (its own dataset, or the earlier import's
    it recorded again: the same file imported twice); replaces any it had. The rows written."""
    root = ImportDatasets().root
    paths = billing_import.files.order_by("path").values_list("path", flat=True)
    sums = daily_spend_sums([str(file) for file in (root / path for path in paths) if file.is_file()])
    with transaction.atomic():
        DailySpend.objects.filter(billing_import=billing_import).delete()
        if connection.vendor == "postgresql":
            _copy_rows(billing_import.pk, sums)
        else:
            _create_rows(billing_import, sums)
    return len(sums)


# DailySpend's columns in daily_spend_sums' order, then the import; their PostgreSQL types for a binary COPY
COPY_FIELDS = (
    "day",
    *review_sql.DAILY_SPEND_KEYS,
    "scope",
    "billed_cost",
    "effective_cost",
    "gpu_hours",
    "rows",
    "billing_import",
)
COPY_TYPES = (
    "date",
    *["text"] * (len(review_sql.DAILY_SPEND_KEYS) + 1),
    "numeric",
    "numeric",
    "numeric",
    "int8",
    "int8",
)


def _copy_rows(import_id: int, sums: list[tuple]) -> None:
    """`sums` (daily_spend_sums) as DailySpend rows of the import, by one binary COPY."""
    meta = DailySpend._meta
    column = {field.name: field.column for field in meta.concrete_fields}
    columns = ", ".join(connection.ops.quote_name(column[name]) for name in COPY_FIELDS)
    sql = f"COPY {connection.ops.quote_name(meta.db_table)} ({columns}) FROM STDIN (FORMAT BINARY)"
    with connection.cursor() as cursor, connection.wrap_database_errors, cursor.cursor.copy(sql) as copy:
        copy.set_types(COPY_TYPES)
        for day, *values, billed, effective, hours, count in sums:
            copy.write_row(
                (day, *values, _decimal(billed), _decimal(effective), _decimal(hours), count, import_id)
            )


def _create_rows(billing_import: BillingImport, sums: list[tuple]) -> None:
    keys = review_sql.DAILY_SPEND_KEYS
    rows = [
        DailySpend(
            billing_import=billing_import,
            day=day,
            scope=scope,
            billed_cost=_decimal(billed),
            effective_cost=_decimal(effective),
            gpu_hours=_decimal(hours),
            rows=count,
            **dict(zip(keys, values, strict=True)),
        )
        for day, *values, scope, billed, effective, hours, count in sums
    ]
    DailySpend.objects.bulk_create(rows, batch_size=5000)


def daily_spend_backfill(*, only_missing: bool = True) -> tuple[int, int]:
    """(imports written, rows written): every import with recorded files and (by default) no summary yet.
    Files not on disk are left out of the GROUP BY's list, as every reader leaves them out."""
    imports = BillingImport.objects.filter(files__isnull=False).distinct().order_by("pk")
    if only_missing:
        imports = imports.filter(daily_spend__isnull=True)
    written = rows = 0
    for billing_import in imports.iterator():
        rows += daily_spend_record(billing_import)
        written += 1
    return written, rows
