"""The bill lines an import stored, as the readers read them (DuckDB over the imports' Parquet datasets:
each row key once, each day's latest Cost Explorer pull), under the import's column names: amounts and hours
as Decimal, `gpu` as the GPU's slug ("" for none), `tags` as a dict. For tests that check what was
stored; bill lines are not PostgreSQL rows (issue 28, item 1)."""

from __future__ import annotations

import json
from decimal import Decimal
from types import SimpleNamespace

import duckdb

from billing.models import BillingImportFile
from billing.storage.datasets import MICRO_COLUMNS, QUANTITY_COLUMN, QUANTITY_MICROS_COLUMN
from billing.storage.duckdb_review import _bill, _pulls, repeated_rows_filter
from billing.storage.import_datasets import ImportDatasets, readable_files

STORED_NAMES = {micros: stored for stored, micros in MICRO_COLUMNS.items()}


def stored_rows(*, imports: list[int] | None = None, **equal) -> list[SimpleNamespace]:
    """Every stored row (of the datasets `imports` wrote, when given) whose fields equal `equal`, in
    source row order."""
    datasets = ImportDatasets()
    if imports is None:
        files = readable_files()
    else:
        paths = BillingImportFile.objects.filter(billing_import_id__in=imports).values_list("path", flat=True)
        files = sorted({str(datasets.root / path) for path in paths})
    if not files:
        return []
    params = {"files": files, **_pulls(datasets, files)}
    connection = duckdb.connect()
    unique = repeated_rows_filter(connection, params, "true") if datasets.may_repeat_rows(files) else ""
    sql = f"SELECT * FROM {_bill(params)} AS bill_rows WHERE true {unique}"  # noqa: S608 (fixed SQL)
    table = connection.sql(sql, params=params).to_arrow_table()
    rows = [_row(values) for values in table.to_pylist()]
    rows = [row for row in rows if all(getattr(row, name) == value for name, value in equal.items())]
    return sorted(rows, key=lambda row: (row.source_row, row.charge_period_start))


def stored_row(**equal) -> SimpleNamespace:
    """The one stored row whose fields equal `equal` (AssertionError unless exactly one)."""
    (row,) = stored_rows(**equal)
    return row


def _row(values: dict) -> SimpleNamespace:
    for micros, stored in STORED_NAMES.items():
        value = values.pop(micros)
        values[stored] = None if value is None else Decimal(value).scaleb(-6)
    # a dataset written before fix28 holds the quantity as int64 micro-units, a later one as decimal(38, 6)
    legacy, quantity = values.pop(QUANTITY_MICROS_COLUMN, None), values.get(QUANTITY_COLUMN)
    values[QUANTITY_COLUMN] = (
        Decimal(legacy).scaleb(-6) if quantity is None and legacy is not None else quantity
    )
    values["tags"] = json.loads(values["tags"] or "{}")
    return SimpleNamespace(**values)
