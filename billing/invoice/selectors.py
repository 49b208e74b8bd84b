"""The invoice view's read (invoice/lines.py): spend rows grouped by provider, billing period, charge month,
currency, charge category and correction flag; a few hundred groups, never the rows. DuckDB groups them
over the files of the billing periods asked only (storage/billing_periods.py: the datasets are partitioned
by charge month, and a billing period may bill rows of any earlier charge month), review_sql.INVOICE_GROUPS."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

from billing.storage import review_sql
from billing.storage.billing_periods import billing_period_files
from billing.storage.duckdb_review import dataset_query
from billing.storage.import_datasets import ImportDatasets


def _utc(day: dt.date) -> dt.datetime:
    return dt.datetime.combine(day, dt.time(), tzinfo=dt.UTC)


def invoice_groups(start: dt.date, end: dt.date) -> list[dict]:
    """The groups of the billing periods starting in [start, end) (first days of months)."""
    store = ImportDatasets()
    found = dataset_query(
        store,
        billing_period_files(
            start, end, store
        ),  # the files with rows billed in [start, end), any charge month
        review_sql.INVOICE_GROUPS,
        params={"start": _utc(start), "end": _utc(end)},
    )
    names = ("provider", "billing_period", "charge_month", "currency", "charge_category")
    return [
        dict(zip(names, row[:5], strict=True))
        | {
            "is_correction": bool(row[5]),
            "is_refund": bool(row[6]),
            "billed": _decimal(row[7]),
            "effective": _decimal(row[8]),
            "rows": int(row[9]),
        }
        for row in found
    ]


def _decimal(micros: int | None) -> Decimal | None:
    """A sum of micro-units as NUMERIC(20, 6) sums it (6 decimals; None where every value was NULL)."""
    return None if micros is None else Decimal(int(micros)).scaleb(-6)
