"""Notifications through an outbox: nothing lost to a broker outage, nothing sent twice."""

from __future__ import annotations

import datetime as dt

import pytest
from django.conf import settings
from django.core import mail
from django.utils import timezone

from gpuledger.celery import app
from procurement.choices import ChangeKind
from procurement.models import ChangeEvent, NotificationOutbox, Workload
from procurement.services.notifications import change_events_create, change_events_notify, notifications_sweep
from procurement.tasks import sweep_notifications
from scheduler.schedule import SCHEDULE

SPEC = {"name": "q", "task": "qlora", "model": {"preset": "llama-3.1-8b"}, "training_tokens": 1e9}


def _create_events(count: int, django_capture_on_commit_callbacks) -> list[ChangeEvent]:
    workload = Workload.objects.create(name="q", task="qlora", spec=SPEC, notify_email="owner@example.com")
    with django_capture_on_commit_callbacks(execute=True):
        return change_events_create(
            [
                ChangeEvent(kind=ChangeKind.CHEAPEST_OPTION, workload=workload, before={}, after={})
                for _ in range(count)
            ]
        )


def _age_outbox(seconds: int) -> None:
    NotificationOutbox.objects.update(created_at=timezone.now() - dt.timedelta(seconds=seconds))


@pytest.mark.django_db
def test_a_broker_outage_when_events_are_stored_loses_no_notification(
    monkeypatch, django_capture_on_commit_callbacks
):
    def broker_down(chunk):
        raise ConnectionError("Error 111 connecting to redis:6379. Connection refused.")

    monkeypatch.setattr("procurement.tasks.notify_change_events.delay", broker_down)
    events = _create_events(3, django_capture_on_commit_callbacks)  # the recompute itself does not fail
    assert list(NotificationOutbox.objects.values_list("state", flat=True)) == ["pending"] * 3
    assert len(mail.outbox) == 0
    monkeypatch.undo()  # the broker is back: the beat sweep queues what is pending (eager here)
    _age_outbox(120)
    assert sweep_notifications.delay().get() == {"released": 0, "queued": 3}
    assert len(mail.outbox) == 3
    assert set(NotificationOutbox.objects.values_list("state", flat=True)) == {"sent"}
    assert all(event.notified_at for event in ChangeEvent.objects.filter(pk__in=[e.pk for e in events]))
    assert sweep_notifications.delay().get() == {"released": 0, "queued": 0}
    assert len(mail.outbox) == 3  # exactly once


@pytest.mark.django_db
def test_a_sender_that_died_after_claiming_is_put_back_and_the_event_sent_once(
    django_capture_on_commit_callbacks, monkeypatch
):
    monkeypatch.setattr("procurement.tasks.notify_change_events.delay", lambda chunk: None)  # lost task
    (event,) = _create_events(1, django_capture_on_commit_callbacks)
    NotificationOutbox.objects.update(state="sending", claim_token="dead", claimed_at=timezone.now())
    assert change_events_notify([event.pk]) == {}  # a redelivered task: the claim is someone else's
    recent = notifications_sweep(stale_claim_s=900)
    assert recent["released"] == 0  # a claim younger than the task time limit may still be alive
    NotificationOutbox.objects.update(claimed_at=timezone.now() - dt.timedelta(hours=1))
    _age_outbox(3600)
    monkeypatch.undo()
    assert notifications_sweep(stale_claim_s=900) == {"released": 1, "queued": 1}
    assert len(mail.outbox) == 1
    outbox = NotificationOutbox.objects.get()
    assert (outbox.state, outbox.attempts) == ("sent", 1)


@pytest.mark.django_db
def test_a_freshly_pending_event_is_left_to_its_own_task(django_capture_on_commit_callbacks, monkeypatch):
    monkeypatch.setattr("procurement.tasks.notify_change_events.delay", lambda chunk: None)
    _create_events(1, django_capture_on_commit_callbacks)
    assert notifications_sweep(stale_claim_s=900) == {"released": 0, "queued": 0}


def test_the_sweep_runs_on_the_beat_schedule():
    app.autodiscover_tasks(force=True)  # what a worker does at start-up
    job = next(job for job in SCHEDULE if job.task == "procurement.sweep_notifications")
    assert job.every_seconds <= 10 * 60
    assert (
        "procurement.sweep_notifications" in app.tasks and "scheduler.close_orphaned_refreshes" in app.tasks
    )


def test_the_broker_redelivers_an_unacked_task_soon_after_its_time_limit():
    app.autodiscover_tasks(force=True)  # what a worker does at start-up
    visibility = settings.CELERY_BROKER_TRANSPORT_OPTIONS["visibility_timeout"]
    assert visibility < 3600  # kombu's default hour is what left a killed task undelivered
    ours = {name: task for name, task in app.tasks.items() if not name.startswith("celery.")}
    for name, task in ours.items():
        assert (task.time_limit or settings.CELERY_TASK_TIME_LIMIT) < visibility, name
    late = {
        "pricing.load_bundled_catalog",
        "procurement.recompute_all",
        "procurement.notify_change_events",
        "procurement.notify_change_event",
        "procurement.recompute_recommendations",
        "procurement.recompute_tco_studies",
        "pricing.refresh_source_region",
    }
    assert {name for name in late if not ours[name].acks_late} == set()
    assert settings.CELERY_TASK_REJECT_ON_WORKER_LOST is True


@pytest.mark.django_db
def test_the_outbox_is_listed_read_only_in_the_admin(admin_client, django_capture_on_commit_callbacks):
    _create_events(1, django_capture_on_commit_callbacks)
    page = admin_client.get("/admin/procurement/notificationoutbox/")
    assert page.status_code == 200 and "Sent" in page.content.decode()
    assert admin_client.get("/admin/procurement/notificationoutbox/add/").status_code == 403
