"""The invoice view's read (invoice/lines.py): spend rows grouped in the database by provider, billing period,
charge month, currency, charge category and correction flag; a few hundred groups, never the rows."""

from __future__ import annotations

import datetime as dt

from django.db.models import Count, Sum
from django.db.models.functions import Coalesce, TruncMonth

from billing.models import SpendRecord


def _utc(day: dt.date) -> dt.datetime:
    return dt.datetime.combine(day, dt.time(), tzinfo=dt.UTC)


def invoice_groups(start: dt.date, end: dt.date) -> list[dict]:
    """The groups of the billing periods starting in [start, end) (first days of months)."""
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
