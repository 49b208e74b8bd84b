"""The invoice view's read (invoice/lines.py): spend rows grouped by provider, billing period, charge month,
currency, charge category and correction flag; a few hundred groups, never the rows. DuckDB groups them
over the imports' datasets (review_sql.INVOICE_GROUPS), the database only while those lack rows it holds."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

from django.db.models import Count, Sum
from django.db.models.functions import Coalesce, TruncMonth

from billing.models import SpendRecord
from billing.storage import review_sql
from billing.storage.duckdb_review import dataset_query
from billing.storage.import_datasets import ImportDatasets, readable_files


def _utc(day: dt.date) -> dt.datetime:
    return dt.datetime.combine(day, dt.time(), tzinfo=dt.UTC)


def invoice_groups(start: dt.date, end: dt.date) -> list[dict]:
    """The groups of the billing periods starting in [start, end) (first days of months)."""
    files = readable_files()  # a billing period may bill rows charged in any earlier month
    if files is not None:
        return _dataset_groups(files, start, end)
    rows = (
        SpendRecord.objects.annotate(
            period=TruncMonth(Coalesce("billing_period_start", "charge_period_start"), tzinfo=dt.UTC),
            charge_month=TruncMonth("charge_period_start", tzinfo=dt.UTC),
        )
        .filter(period__gte=_utc(start), period__lt=_utc(end))
        .values(
            "provider", "period", "charge_month", "currency", "charge_category", "is_correction", "is_refund"
        )
        .annotate(billed=Sum("billed_cost"), effective=Sum("effective_cost"), rows=Count("*"))
    )
    return [
        {
            "provider": row["provider"],
            "billing_period": f"{row['period']:%Y-%m}",
            "charge_month": f"{row['charge_month']:%Y-%m}",
            "currency": row["currency"],
            "charge_category": row["charge_category"],
            "is_correction": row["is_correction"],
            "is_refund": row["is_refund"],
            "billed": row["billed"],
            "effective": row["effective"],
            "rows": row["rows"],
        }
        for row in rows
    ]


def _decimal(micros: int | None) -> Decimal | None:
    """A sum of micro-units as NUMERIC(20, 6) sums it (6 decimals; None where every value was NULL)."""
    return None if micros is None else Decimal(int(micros)).scaleb(-6)


def _dataset_groups(files: list[str], start: dt.date, end: dt.date) -> list[dict]:
    found = dataset_query(
        files,
        review_sql.INVOICE_GROUPS,
        may_repeat_rows=ImportDatasets.may_repeat_rows(files),
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
