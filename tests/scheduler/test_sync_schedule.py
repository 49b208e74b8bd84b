"""sync_schedule: creates missing jobs, keeps admin edits, writes only what the code changed, --reset."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import call_command
from django_celery_beat.models import CrontabSchedule, IntervalSchedule, PeriodicTask

from scheduler.beat_sync import ADOPTED, CREATED, KEPT, RESET, UPDATED, beat_schedule_sync
from scheduler.models import SyncedScheduleJob
from scheduler.schedule import DAY, HOUR, SCHEDULE, ScheduledJob

pytestmark = pytest.mark.django_db

SPOT = ScheduledJob(
    "aws spot prices", "pricing.refresh_prices", HOUR, {"source": "aws-spot"}, "Spot prices move hourly."
)
ADVISOR = ScheduledJob(
    "aws spot advisor", "pricing.refresh_prices", DAY, {"source": "aws-spot-advisor"}, "Daily."
)
CODE = (SPOT, ADVISOR)


def task(name: str = SPOT.name) -> PeriodicTask:
    return PeriodicTask.objects.select_related("interval").get(name=name)


def every_seconds(periodic: PeriodicTask) -> int:
    assert periodic.interval.period == IntervalSchedule.SECONDS
    return periodic.interval.every


def admin_edit(name: str = SPOT.name, **values) -> None:
    """What saving the periodic task's admin form does."""
    periodic = task(name)
    for key, value in values.items():
        setattr(periodic, key, value)
    periodic.save()


def actions(outcomes) -> dict[str, str]:
    return {o.name: o.action for o in outcomes}


def test_it_creates_missing_jobs_from_code_and_a_rerun_writes_nothing():
    assert actions(beat_schedule_sync(schedule=CODE)) == {SPOT.name: CREATED, ADVISOR.name: CREATED}
    spot = task()
    assert (spot.task, every_seconds(spot), json.loads(spot.kwargs), spot.description, spot.enabled) == (
        "pricing.refresh_prices",
        3600,
        {"source": "aws-spot"},
        "Spot prices move hourly.",
        True,
    )
    changed_before = spot.date_changed
    assert actions(beat_schedule_sync(schedule=CODE)) == {SPOT.name: KEPT, ADVISOR.name: KEPT}
    assert task().date_changed == changed_before  # not saved again


def test_it_keeps_admin_edits_while_the_code_is_unchanged():
    beat_schedule_sync(schedule=CODE)
    two_hours, _ = IntervalSchedule.objects.get_or_create(every=2, period=IntervalSchedule.HOURS)
    admin_edit(
        interval=two_hours, kwargs=json.dumps({"source": "aws-spot", "regions": ["us-east-1"]}), enabled=False
    )
    (spot, advisor) = beat_schedule_sync(schedule=CODE)
    assert (spot.action, spot.differs_from_code) == (KEPT, ["every_seconds", "kwargs"])
    assert (advisor.action, advisor.differs_from_code) == (KEPT, [])
    kept = task()
    assert (kept.interval.every, kept.interval.period, kept.enabled) == (2, IntervalSchedule.HOURS, False)
    assert json.loads(kept.kwargs)["regions"] == ["us-east-1"]


def test_it_writes_only_the_fields_the_code_changed_since_the_last_sync():
    beat_schedule_sync(schedule=CODE)
    admin_edit(kwargs=json.dumps({"source": "aws-spot", "regions": ["us-east-1"]}), enabled=False)
    every_30_min = ScheduledJob(SPOT.name, SPOT.task, 30 * 60, SPOT.kwargs, SPOT.description)
    (spot, advisor) = beat_schedule_sync(schedule=(every_30_min, ADVISOR))
    assert (spot.action, spot.fields, spot.differs_from_code) == (UPDATED, ["every_seconds"], ["kwargs"])
    assert advisor.action == KEPT
    updated = task()
    assert every_seconds(updated) == 1800  # the code's change
    assert json.loads(updated.kwargs)["regions"] == ["us-east-1"] and not updated.enabled  # the admin's
    assert SyncedScheduleJob.objects.get(name=SPOT.name).definition["every_seconds"] == 1800
    assert actions(beat_schedule_sync(schedule=(every_30_min, ADVISOR)))[SPOT.name] == KEPT


def test_a_code_interval_replaces_a_crontab_set_in_the_admin():
    beat_schedule_sync(schedule=CODE)
    nightly = CrontabSchedule.objects.create(minute="0", hour="3")
    admin_edit(interval=None, crontab=nightly)
    assert actions(beat_schedule_sync(schedule=CODE))[SPOT.name] == KEPT
    assert task().crontab == nightly
    every_2h = ScheduledJob(SPOT.name, SPOT.task, 2 * HOUR, SPOT.kwargs, SPOT.description)
    beat_schedule_sync(schedule=(every_2h, ADVISOR))
    assert task().crontab is None and every_seconds(task()) == 7200


def test_reset_writes_every_field_from_code_and_enables_the_job():
    beat_schedule_sync(schedule=CODE)
    admin_edit(kwargs=json.dumps({"source": "aws"}), description="edited", enabled=False)
    (spot, advisor) = beat_schedule_sync(schedule=CODE, reset=True)
    assert (spot.action, sorted(spot.fields), spot.differs_from_code) == (
        RESET,
        ["description", "enabled", "kwargs"],
        [],
    )
    assert (advisor.action, advisor.fields) == (RESET, [])
    reset = task()
    assert (json.loads(reset.kwargs), reset.description, reset.enabled) == (
        SPOT.kwargs,
        SPOT.description,
        True,
    )


def test_it_recreates_a_job_deleted_in_the_admin():
    beat_schedule_sync(schedule=CODE)
    PeriodicTask.objects.filter(name=ADVISOR.name).delete()
    assert actions(beat_schedule_sync(schedule=CODE)) == {SPOT.name: KEPT, ADVISOR.name: CREATED}
    assert json.loads(task(ADVISOR.name).kwargs) == ADVISOR.kwargs


def test_it_adopts_a_job_an_earlier_sync_wrote_without_a_record_and_follows_later_code_changes():
    # Before this rule, sync_schedule wrote jobs and kept no record of the code; an admin edit since is kept.
    beat_schedule_sync(schedule=CODE)
    SyncedScheduleJob.objects.all().delete()
    admin_edit(description="edited in the admin")
    (spot, _) = beat_schedule_sync(schedule=CODE)
    assert (spot.action, spot.differs_from_code) == (ADOPTED, ["description"])
    assert task().description == "edited in the admin"
    renamed_task = ScheduledJob(
        SPOT.name, "pricing.refresh_source_region", HOUR, SPOT.kwargs, SPOT.description
    )
    (spot, _) = beat_schedule_sync(schedule=(renamed_task, ADVISOR))
    assert (spot.action, spot.fields) == (UPDATED, ["task"])
    assert (task().task, task().description) == ("pricing.refresh_source_region", "edited in the admin")


def test_the_command_reports_each_job_and_keeps_edits_unless_reset():
    out = StringIO()
    call_command("sync_schedule", stdout=out)
    assert f"Beat schedule: {len(SCHEDULE)} jobs: {len(SCHEDULE)} created." in out.getvalue()
    admin_edit(SCHEDULE[0].name, description="edited")
    out = StringIO()
    call_command("sync_schedule", stdout=out)
    text = out.getvalue()
    assert (
        f"{SCHEDULE[0].name}: kept; kept as set in the admin: description (--reset to use the code's)" in text
    )
    assert f"Beat schedule: {len(SCHEDULE)} jobs: {len(SCHEDULE)} kept." in text
    assert task(SCHEDULE[0].name).description == "edited"
    out = StringIO()
    call_command("sync_schedule", "--reset", stdout=out)
    assert f"{SCHEDULE[0].name}: reset to code (description)" in out.getvalue()
    assert task(SCHEDULE[0].name).description == SCHEDULE[0].description


def test_the_command_names_a_synced_job_the_code_no_longer_declares():
    call_command("sync_schedule", stdout=StringIO())
    retired = SCHEDULE[0].name
    SyncedScheduleJob.objects.filter(name=retired).update(name="aws spot prices (old)")
    PeriodicTask.objects.filter(name=retired).update(name="aws spot prices (old)")
    out = StringIO()
    call_command("sync_schedule", stdout=out)
    assert "aws spot prices (old): no longer in scheduler/schedule.py; left as it is" in out.getvalue()
    assert PeriodicTask.objects.filter(name="aws spot prices (old)").exists()
