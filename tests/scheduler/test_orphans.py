"""The sweeper closes refresh rows a crashed worker left 'running', and only those."""

from __future__ import annotations

import datetime as dt

import pytest
from django.utils import timezone

from scheduler.locks import refresh_lock
from scheduler.models import PriceRefresh, RefreshStatus
from scheduler.orphans import orphan_after
from scheduler.schedule import SCHEDULE
from scheduler.tasks import close_orphaned_refreshes

pytestmark = pytest.mark.django_db


def running(source: str, age: dt.timedelta, region: str = "us-east-1") -> PriceRefresh:
    refresh = PriceRefresh.objects.create(source=source, region=region)
    PriceRefresh.objects.filter(pk=refresh.pk).update(started_at=timezone.now() - age)
    return refresh


def test_it_marks_an_old_running_row_failed_and_leaves_recent_and_locked_ones():
    orphan = running("aws-spot", orphan_after() + dt.timedelta(minutes=1))
    recent = running("aws-spot", dt.timedelta(minutes=5), region="us-west-2")
    locked = running("aws-on-demand", orphan_after() * 3)
    finished = running("aws-spot", orphan_after() * 3, region="eu-west-1")
    PriceRefresh.objects.filter(pk=finished.pk).update(status=RefreshStatus.SUCCEEDED)
    with refresh_lock("aws-on-demand", "us-east-1", ttl_s=60):  # still held: its run is alive
        assert close_orphaned_refreshes.delay().get() == {"closed": [orphan.pk]}
    statuses = dict(PriceRefresh.objects.values_list("pk", "status"))
    assert statuses == {
        orphan.pk: "failed",
        recent.pk: "running",
        locked.pk: "running",
        finished.pk: "succeeded",
    }
    orphan.refresh_from_db()
    assert orphan.finished_at is not None and orphan.error.startswith("Orphaned:")
    assert close_orphaned_refreshes.delay().get() == {"closed": [locked.pk]}  # once the lock is gone
    assert close_orphaned_refreshes.delay().get() == {"closed": []}  # idempotent


def test_the_sweeper_is_in_the_beat_schedule():
    job = next(job for job in SCHEDULE if job.task == "scheduler.close_orphaned_refreshes")
    assert job.every_seconds <= orphan_after().total_seconds()
