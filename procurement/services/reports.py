"""Build a report from stored inputs and keep its data object; re-render a kept one.

Thin Django shell around ``procurement.reports``: the kind's ``load`` reads the stored inputs, its
``build`` (plain Python) makes the data object. Viewing a report computes it (report_build) and stores
nothing; keeping it (a POST, the command) stores its JSON in a ``ReportSnapshot`` once per distinct
content (the same inputs kept twice add no row).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json

from django.utils import timezone

from procurement import models
from procurement.reports.model import Report
from procurement.reports.registry import ReportInputError, ReportPeriod, report_kind


def _fingerprint(data: dict) -> str:
    content = {key: value for key, value in data.items() if key != "generated_at"}
    return hashlib.sha256(json.dumps(content, sort_keys=True, default=str).encode()).hexdigest()


def report_build(
    *,
    kind: str,
    subject_id: int | None = None,
    period: ReportPeriod | None = None,
    now: dt.datetime | None = None,
) -> tuple[Report, int | None]:
    """(the report, its subject id), computed and stored nowhere: what a page shows on GET. Raises
    ReportInputError (naming ``kind``, ``id`` or ``from``). A kind ``by_period`` takes ``period``; every
    other kind takes ``subject_id``."""
    report_type = report_kind(kind)
    if report_type.by_period:
        if period is None:
            raise ReportInputError("from", f"{kind} reports on a period: give from and to")
        subject_id = period.subject_id
        inputs = report_type.load(period)
    else:
        inputs = report_type.load(subject_id)
    return report_type.build(inputs, now or timezone.now()), subject_id


def report_snapshot_create(
    *,
    kind: str,
    subject_id: int | None = None,
    period: ReportPeriod | None = None,
    user=None,
    now: dt.datetime | None = None,
) -> models.ReportSnapshot:
    """The report kept, once per distinct content (an explicit action: a POST, the command). Raises
    ReportInputError before anything is stored."""
    report, subject_id = report_build(kind=kind, subject_id=subject_id, period=period, now=now)
    data = report.to_dict()
    fingerprint = _fingerprint(data)
    existing = models.ReportSnapshot.objects.filter(
        kind=kind, subject_id=subject_id, fingerprint=fingerprint
    ).first()
    if existing is not None:
        return existing
    return models.ReportSnapshot.objects.create(
        kind=kind,
        subject_id=subject_id,
        title=report.title[:300],
        data=data,
        fingerprint=fingerprint,
        created_by=user if getattr(user, "is_authenticated", False) else None,
    )


def snapshot_report(snapshot: models.ReportSnapshot) -> Report:
    return Report.from_dict(snapshot.data)
