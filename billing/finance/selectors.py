"""Reads for showback, budgets and anomalies: spend rows of any period as the review's engine frame
(month snapshots on PostgreSQL for every team's rows, the rows themselves for an engineer's granted
teams, exactly as the review reads them: selectors.spend_frame), budgets, and the newest charge day."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from types import SimpleNamespace

import pandas as pd
from django.db import connection
from django.db.models import Max

from billing.imports.records import tag_mapping
from billing.models import BillingImportFile, Budget, SpendRecord
from billing.review import selectors
from billing.review.engine import UNTAGGED, categorized
from billing.storage import review_sql
from billing.storage.duckdb_review import dataset_query
from billing.storage.import_datasets import ImportDatasets, readable_files
from billing.storage.spend_snapshot import snapshot_spend_frame


def _utc(day: dt.date) -> dt.datetime:
    return dt.datetime.combine(day, dt.time(), tzinfo=dt.UTC)


def rows_frame(start: dt.date, end: dt.date, allowed_teams: tuple[str, ...] = ()) -> pd.DataFrame:
    """REVIEW_COLUMNS of the rows charged in [start, end) (of `allowed_teams` only, when given)."""
    found = selectors.dataset_rows(start, end, allowed_teams)
    if found is not None:
        return found
    if connection.vendor == "postgresql" and not allowed_teams:
        frame = snapshot_spend_frame(start, end, interruptible_tag=tag_mapping().interruptible)
        return categorized(frame)
    params = [connection.ops.adapt_datetimefield_value(_utc(day)) for day in (start, end)]
    where = "WHERE r.charge_period_start >= %s AND r.charge_period_start < %s"
    if allowed_teams:  # other teams' rows never leave the database
        where += " AND r.team IN (" + ", ".join(["%s"] * len(allowed_teams)) + ")"
        params += list(allowed_teams)
    if connection.vendor == "postgresql":
        return selectors.copied_spend_frame(where, params)
    return selectors.fetched_spend_frame(where, params)


def utilization_between(start: dt.date, end: dt.date) -> pd.DataFrame:
    return selectors.utilization_frame(SimpleNamespace(start=start, end=end))


def data_through(month: dt.date, next_month: dt.date) -> dt.date:
    """The day after the newest charge day stored for the month (any team: it says how far the bill
    reaches, not what a team spent), or the month's first day when it has no rows."""
    files = readable_files(month, next_month)
    if files is not None:
        params = {"start": _utc(month), "end": _utc(next_month)}
        newest = dataset_query(files, review_sql.NEWEST_CHARGE, params=params)[:1]
        newest = newest[0][0] if newest else None
    else:
        newest = SpendRecord.objects.filter(
            charge_period_start__gte=_utc(month), charge_period_start__lt=_utc(next_month)
        ).aggregate(newest=Max("charge_period_start"))["newest"]
    return newest.astimezone(dt.UTC).date() + dt.timedelta(days=1) if newest else month


def budgets_of(months: list[dt.date], teams: tuple[str, ...] = ()) -> list[Budget]:
    found = Budget.objects.filter(month__in=months)
    if teams:
        found = found.filter(team__in=teams)
    return list(found.order_by("month", "team"))


def months_of_import(import_id: int) -> list[dt.date]:
    """The months an import brought rows into (the ones it may have changed): its own dataset's months
    (none where it re-imported a file and recorded the first import's dataset), or its stored rows'
    while it has no dataset."""
    files = BillingImportFile.objects.filter(billing_import_id=import_id)
    if files.exists():
        own = files.filter(path__startswith=f"import={import_id}/").values_list("month", flat=True)
        return sorted(set(own))
    starts = (
        SpendRecord.objects.filter(billing_import_id=import_id)
        .datetimes("charge_period_start", "month", tzinfo=dt.UTC)
        .order_by()
    )
    return sorted({start.date() for start in starts})


MAX_SPEND_ROWS = 500
SPEND_ROW_FIELDS = [
    "charge_period_start",
    "charge_period_end",
    "provider",
    "region",
    "resource_id",
    "instance_type",
    "gpu__slug",
    "pricing_category",
    "commitment_status",
    "team",
    "project",
    "service_category",
    "currency",
    "effective_cost",
    "billed_cost",
    "gpu_hours",
]


def spend_rows(
    *, day: dt.date, team: str = "", provider: str = "", service: str = "", limit: int = 100
) -> list[dict]:
    """The spend rows charged on `day` (an anomaly's "rows that drove it"), largest effective cost first.
    `team` "(untagged)" and `service` "other" are the anomaly labels of blank values."""
    limit = max(1, min(int(limit), MAX_SPEND_ROWS))
    following = day + dt.timedelta(days=1)
    files = readable_files(day, following)
    if files is not None:
        return _dataset_spend_rows(files, day, team=team, provider=provider, service=service, limit=limit)
    rows = SpendRecord.objects.filter(
        charge_period_start__gte=_utc(day), charge_period_start__lt=_utc(day + dt.timedelta(days=1))
    )
    if team:
        rows = rows.filter(team="" if team == UNTAGGED else team)
    if provider:
        rows = rows.filter(provider=provider)
    if service:
        rows = rows.filter(service_category="" if service == "other" else service)
    return list(rows.order_by("-effective_cost", "row_key").values(*SPEND_ROW_FIELDS)[:limit])


def _dataset_spend_rows(files: list[str], day: dt.date, *, limit: int, **asked: str) -> list[dict]:
    """spend_rows from the imports' datasets (review_sql.SPEND_ROWS), each value as the database gives it:
    amounts as NUMERIC(20, 6) Decimals, no GPU as None."""
    blank = {"team": UNTAGGED, "service": "other"}
    values = {name: ("" if value == blank.get(name) else value) for name, value in asked.items() if value}
    found = dataset_query(
        files,
        review_sql.SPEND_ROWS,
        may_repeat_rows=ImportDatasets.may_repeat_rows(files),
        params={"start": _utc(day), "end": _utc(day + dt.timedelta(days=1)), "limit": limit, **values},
        filters=" ".join(review_sql.SPEND_ROW_FILTERS[name] for name in values),
    )
    rows = []
    for row in found:
        record = dict(zip(SPEND_ROW_FIELDS, row[: len(SPEND_ROW_FIELDS)], strict=True))
        record["gpu__slug"] = record["gpu__slug"] or None
        for name in ("effective_cost", "billed_cost", "gpu_hours"):
            record[name] = None if record[name] is None else Decimal(int(record[name])).scaleb(-6)
        rows.append(record)
    return rows
