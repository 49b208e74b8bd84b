"""Load the beat schedule in code (scheduler/schedule.py) into django-celery-beat without undoing admin edits.

The code is the source of truth for which jobs exist and for what a deploy changes; the admin for what a
person changed since. So a sync
- creates a job that has no periodic task (a new job, or one deleted in the admin: disable a job
  instead of deleting it to stop it for good);
- writes a field (task, interval, kwargs, description) only when its value *in code* changed since the
  last sync, which is remembered per job in SyncedScheduleJob; every other field keeps what the admin set
  (a changed period, disabled job, other kwargs);
- for a job with a periodic task but no record (first sync after this rule came in), records the code
  and changes nothing;
- with ``reset=True``, writes every field from code and enables the job.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from django.db import transaction
from django_celery_beat.models import IntervalSchedule, PeriodicTask

from scheduler.models import SyncedScheduleJob
from scheduler.schedule import SCHEDULE, ScheduledJob

CREATED, UPDATED, KEPT, ADOPTED, RESET = "created", "updated from code", "kept", "adopted", "reset to code"


@dataclass
class JobSync:
    name: str
    action: str  # one of CREATED, UPDATED, KEPT, ADOPTED, RESET
    fields: list[str] = field(default_factory=list)  # the fields written, for UPDATED and RESET
    differs_from_code: list[str] = field(default_factory=list)  # fields left as the admin set them


def code_definition(job: ScheduledJob) -> dict[str, Any]:
    return {
        "task": job.task,
        "every_seconds": job.every_seconds,
        "kwargs": job.kwargs,
        "description": job.description,
    }


@transaction.atomic
def beat_schedule_sync(
    *, reset: bool = False, schedule: tuple[ScheduledJob, ...] = SCHEDULE
) -> list[JobSync]:
    """Sync every job of `schedule`; what happened to each, in schedule order."""
    return [_sync_job(job, reset=reset) for job in schedule]


def jobs_not_in_code(schedule: tuple[ScheduledJob, ...] = SCHEDULE) -> list[str]:
    """Periodic tasks a sync once created whose job the code no longer declares (left as they are)."""
    names = {job.name for job in schedule}
    synced = SyncedScheduleJob.objects.exclude(name__in=names).values_list("name", flat=True)
    return sorted(PeriodicTask.objects.filter(name__in=list(synced)).values_list("name", flat=True))


def _sync_job(job: ScheduledJob, *, reset: bool) -> JobSync:
    definition = code_definition(job)
    task = PeriodicTask.objects.filter(name=job.name).first()
    record = SyncedScheduleJob.objects.filter(name=job.name).first()
    if task is None:
        task = PeriodicTask(name=job.name)
        _write(task, definition, list(definition))
        outcome = JobSync(job.name, CREATED)
    elif reset:
        written = _write(task, definition, list(definition), enable=True)
        outcome = JobSync(job.name, RESET, fields=written)
    elif record is None:
        outcome = JobSync(job.name, ADOPTED)
    else:
        changed_in_code = [name for name, value in definition.items() if record.definition.get(name) != value]
        written = _write(task, definition, changed_in_code)
        outcome = JobSync(job.name, UPDATED if written else KEPT, fields=written)
    outcome.differs_from_code = _differences(task, definition)
    SyncedScheduleJob.objects.update_or_create(name=job.name, defaults={"definition": definition})
    return outcome


def _write(
    task: PeriodicTask, definition: dict[str, Any], names: list[str], *, enable: bool = False
) -> list[str]:
    """Set the named fields from the code definition; save only when a value changed. Returns those."""
    written = [name for name in names if _current(task, name) != definition[name]]
    if enable and not task.enabled:
        task.enabled = True
        written.append("enabled")
    for name in written:
        if name == "every_seconds":
            task.interval = _interval(definition[name])
            task.crontab = task.solar = task.clocked = None  # a task has exactly one kind of schedule
        elif name == "kwargs":
            task.kwargs = json.dumps(definition[name])
        elif name != "enabled":
            setattr(task, name, definition[name])
    if written or task.pk is None:
        task.save()
    return written


def _current(task: PeriodicTask, name: str) -> Any:
    """The periodic task's value of a code field, in the code's terms (None when it has no such value)."""
    if name == "every_seconds":
        if task.interval_id is None or task.crontab_id or task.solar_id or task.clocked_id:
            return None
        return task.interval.every * _SECONDS_PER_PERIOD[task.interval.period]
    if name == "kwargs":
        try:
            return json.loads(task.kwargs or "{}")
        except json.JSONDecodeError:
            return None
    return getattr(task, name)


def _differences(task: PeriodicTask, definition: dict[str, Any]) -> list[str]:
    return [name for name, value in definition.items() if _current(task, name) != value]


def _interval(every_seconds: int) -> IntervalSchedule:
    interval, _ = IntervalSchedule.objects.get_or_create(every=every_seconds, period=IntervalSchedule.SECONDS)
    return interval


_SECONDS_PER_PERIOD = {
    IntervalSchedule.DAYS: 86400,
    IntervalSchedule.HOURS: 3600,
    IntervalSchedule.MINUTES: 60,
    IntervalSchedule.SECONDS: 1,
    IntervalSchedule.MICROSECONDS: 1e-6,
}
