"""Close the PriceRefresh rows a crashed worker (kill -9, OOM, a lost machine) left "running".

A live run cannot outlast its task's hard time limit, and a refresh holds its (source, region) lock for
as long as it runs. So a row still "running" after twice the longest limit, whose lock nobody holds, is
an orphan: it is marked failed with the reason, so /status/ stops showing it as in progress. A command
run (`import_prices`, no time limit) gets the same allowance; no real import comes near it.
"""

from __future__ import annotations

import datetime as dt
import logging

from django.conf import settings
from django.utils import timezone

from scheduler.failures import failures_before
from scheduler.limits import REFRESH_TIME_LIMIT_S
from scheduler.locks import refresh_lock_held
from scheduler.models import PriceRefresh, RefreshStatus

log = logging.getLogger(__name__)


def orphan_after() -> dt.timedelta:
    return dt.timedelta(seconds=2 * max(REFRESH_TIME_LIMIT_S, settings.CELERY_TASK_TIME_LIMIT))


def orphaned_refreshes_close(*, now: dt.datetime | None = None) -> list[int]:
    """Mark orphaned running rows failed (a conditional update: a run finishing meanwhile wins);
    returns their ids."""
    now = now or timezone.now()
    cutoff = now - orphan_after()
    candidates = PriceRefresh.objects.filter(status=RefreshStatus.RUNNING, started_at__lt=cutoff)
    closed = []
    for refresh_id, source, region in candidates.values_list("pk", "source", "region"):
        if refresh_lock_held(source, region):
            continue
        message = (
            f"Orphaned: still 'running' after {orphan_after()} with no lock held; the worker that ran it "
            "died (closed by the sweeper)."
        )
        updated = PriceRefresh.objects.filter(pk=refresh_id, status=RefreshStatus.RUNNING).update(
            status=RefreshStatus.FAILED,
            finished_at=now,
            error=message,
            failures_in_a_row=failures_before(source, region) + 1,  # an orphan is a failure too
        )
        if updated:
            closed.append(refresh_id)
            log.warning(
                "price run %d closed as orphaned: source=%s region=%s", refresh_id, source, region or "-"
            )
    return closed
