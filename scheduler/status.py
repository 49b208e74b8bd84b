"""Reads behind the /status/ page: recent refresh runs, the age of the newest price per source."""

from __future__ import annotations

import datetime as dt

from django.db.models import Count, Max
from django_celery_beat.models import PeriodicTask

from pricing.choices import PriceStatus
from pricing.models import PriceObservation
from scheduler.models import PriceRefresh

RECENT_RUNS = 50


def status_overview(*, now: dt.datetime) -> dict:
    sources = (
        PriceObservation.objects.values("source")
        .annotate(newest=Max("observed_at"), prices=Count("id"))
        .order_by("source")
    )
    return {
        "now": now,
        "runs": list(PriceRefresh.objects.all()[:RECENT_RUNS]),
        "sources": [{**row, "age": now - row["newest"]} for row in sources],
        "suspect_waiting": PriceObservation.objects.filter(status=PriceStatus.SUSPECT).count(),
        "schedule": list(PeriodicTask.objects.exclude(name__startswith="celery.").order_by("name")),
    }
