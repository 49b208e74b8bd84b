"""Reads for showback, budgets and anomalies: spend rows of any period as the review's engine frame
(DuckDB over the imports' datasets, the granted teams' rows only for an engineer, exactly as the review
reads them: selectors.spend_frame), budgets, an anomaly's rows and the newest charge day."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from types import SimpleNamespace

import numpy as np
import pandas as pd
from django.db.models import Q, Sum

from billing.models import BillingImportFile, Budget, DailySpend
from billing.review import selectors
from billing.review.engine import UNTAGGED
from billing.storage import review_sql
from billing.storage.allocation_frames import TeamSum
from billing.storage.duckdb_allocation import dataset_team_sums
from billing.storage.duckdb_review import dataset_query
from billing.storage.import_datasets import ImportDatasets, readable_files


def _utc(day: dt.date) -> dt.datetime:
    return dt.datetime.combine(day, dt.time(), tzinfo=dt.UTC)


def rows_frame(start: dt.date, end: dt.date, allowed_teams: tuple[str, ...] = ()) -> pd.DataFrame:
    """REVIEW_COLUMNS of the rows charged in [start, end) (of `allowed_teams` only, when given), grouped
    as the review's own frame is (selectors.spend_frame): budgets and anomalies sum teams' days."""
    return selectors.dataset_rows(start, end, allowed_teams, grouped=True, per_resource=False)


def anomaly_driver_rows(days: list[dt.date], allowed_teams: tuple[str, ...] = ()) -> pd.DataFrame:
    """The rows of `days` per resource (what drove an anomaly: its top rows), each day read on its own
    so that a review's few anomaly days are read, not its whole period at the resource grain."""
    frames = [
        selectors.dataset_rows(day, day + dt.timedelta(days=1), allowed_teams, grouped=True) for day in days
    ]
    return pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]


def allocation_sums(request, utilization: pd.DataFrame | None) -> list[TeamSum]:
    """The showback's sums (allocation_sql.TEAM_SUMS) of the review period's bill lines, in SQL over the
    imports' datasets: the granted teams and the review's team, project and provider filters in the
    WHERE clause, the utilization samples (`utilization`, the period's) joined in the query."""
    filters = {"team": request.team, "project": request.project, "provider": request.provider}
    return dataset_team_sums(
        ImportDatasets(),
        request.start,
        request.end,
        utilization,
        allowed_teams=request.allowed_teams,
        filters=filters,
    )


def utilization_between(start: dt.date, end: dt.date) -> pd.DataFrame:
    return selectors.utilization_frame(SimpleNamespace(start=start, end=end))


def data_through(month: dt.date, next_month: dt.date) -> dt.date:
    """The day after the newest charge day stored for the month (any team: it says how far the bill
    reaches, not what a team spent), or the month's first day when it has no rows."""
    params = {"start": _utc(month), "end": _utc(next_month)}
    found = dataset_query(
        ImportDatasets(), readable_files(month, next_month), review_sql.NEWEST_CHARGE, params=params
    )
    newest = found[0][0] if found else None
    return newest.astimezone(dt.UTC).date() + dt.timedelta(days=1) if newest else month


def budgets_of(months: list[dt.date], teams: tuple[str, ...] = ()) -> list[Budget]:
    found = Budget.objects.filter(month__in=months)
    if teams:
        found = found.filter(team__in=teams)
    return list(found.order_by("month", "team"))


def months_of_import(import_id: int) -> list[dt.date]:
    """The months an import brought rows into (the ones it may have changed): its own dataset's months,
    none where it re-imported a file and recorded the first import's dataset."""
    own = BillingImportFile.objects.filter(
        billing_import_id=import_id, path__startswith=f"import={import_id}/"
    )
    return sorted(set(own.values_list("month", flat=True)))


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
    blank = {"team": UNTAGGED, "service": "other"}
    asked = {"team": team, "provider": provider, "service": service}
    values = {name: ("" if value == blank.get(name) else value) for name, value in asked.items() if value}
    found = dataset_query(
        ImportDatasets(),
        readable_files(day, day + dt.timedelta(days=1)),
        review_sql.SPEND_ROWS,
        params={"start": _utc(day), "end": _utc(day + dt.timedelta(days=1)), "limit": limit, **values},
        where=review_sql.SPEND_ROWS_WHERE,
        filters=" ".join(review_sql.SPEND_ROW_FILTERS[name] for name in values),
    )
    rows = []
    for row in found:  # amounts as Decimals of 6 decimal places (the micro-units), no GPU None
        record = dict(zip(SPEND_ROW_FIELDS, row[: len(SPEND_ROW_FIELDS)], strict=True))
        record["gpu__slug"] = record["gpu__slug"] or None
        for name in ("effective_cost", "billed_cost", "gpu_hours"):
            record[name] = None if record[name] is None else Decimal(int(record[name])).scaleb(-6)
        rows.append(record)
    return rows


DAILY_SPEND_FIELDS = ["day", *review_sql.DAILY_SPEND_KEYS, "scope"]


def _summary_import(month: dt.date, following: dt.date, datasets: ImportDatasets) -> int | None:
    """The import whose DailySpend rows are the month's spend exactly as the dataset readers count it:
    every recorded file of the month is one import's dataset (no row key read from two datasets, no
    second Cost Explorer pull), all on disk, and summarized. None: read the files (`0`: nothing stored)."""
    records = list(BillingImportFile.objects.filter(month=month).values_list("billing_import_id", "path"))
    if not records:
        return 0
    if len({path.split("/", 1)[0] for _, path in records}) > 1:
        return None
    if len(datasets.files(month, following)) != len({path for _, path in records}):
        return None
    first = min(pk for pk, _ in records)
    summarized = DailySpend.objects.filter(billing_import_id=first, day__gte=month, day__lt=following)
    return first if summarized.exists() else None


def daily_spend_frame(
    start: dt.date, end: dt.date, allowed_teams: tuple[str, ...] = ()
) -> pd.DataFrame | None:
    """The DailySpend of [start, end) (of `allowed_teams` only, when given) summed per DAILY_SPEND_FIELDS
    by a PostgreSQL aggregate (the ORM's Sum: the summary is a PostgreSQL table), amounts as int64
    micro-units (`effective_micros`, `billed_micros`, `gpu_hours_micros`) and `charge_period_start` the
    day at 00:00 UTC (the charge month the review's FX conversion reads). None where a month of the
    period cannot be read from the summary (_summary_import): the caller reads the files."""
    datasets, match, month = ImportDatasets(), Q(pk__in=[]), start.replace(day=1)
    while month < end:
        following = (month + dt.timedelta(days=32)).replace(day=1)
        chosen = _summary_import(month, following, datasets)
        if chosen is None:
            return None
        if chosen:
            days = Q(day__gte=max(month, start), day__lt=min(following, end))
            match |= Q(billing_import_id=chosen) & days
        month = following
    found = DailySpend.objects.filter(match)
    if allowed_teams:
        found = found.filter(team__in=allowed_teams)
    sums = found.values(*DAILY_SPEND_FIELDS).annotate(
        billed=Sum("billed_cost"), effective=Sum("effective_cost"), hours=Sum("gpu_hours")
    )
    rows = list(sums.order_by(*DAILY_SPEND_FIELDS))
    frame = pd.DataFrame(rows, columns=[*DAILY_SPEND_FIELDS, "billed", "effective", "hours"])
    for name, micros in (
        ("billed", "billed_micros"),
        ("effective", "effective_micros"),
        ("hours", "gpu_hours_micros"),
    ):
        frame[micros] = np.array([int(value.scaleb(6)) for value in frame.pop(name)], dtype=np.int64)
    frame["charge_period_start"] = (
        pd.to_datetime(frame["day"]).dt.tz_localize("UTC").astype("datetime64[ns, UTC]")
    )
    return frame
