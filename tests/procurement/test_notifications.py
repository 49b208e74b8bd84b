"""Change-event notifications: one task per chunk of events, each event sent once, a failed send retried."""

import pytest
from django.core import mail

from procurement.choices import ChangeKind
from procurement.models import ChangeEvent, Workload
from procurement.services import notifications
from procurement.services.notifications import change_events_create, change_events_notify
from procurement.tasks import NOTIFY_CHUNK, enqueue_notifications

SPEC = {"name": "q", "task": "qlora", "model": {"preset": "llama-3.1-8b"}, "training_tokens": 1e9}


def _events(count: int, **workload_fields) -> list[ChangeEvent]:
    workload = Workload.objects.create(name="q", task="qlora", spec=SPEC, **workload_fields)
    return ChangeEvent.objects.bulk_create(
        ChangeEvent(kind=ChangeKind.CHEAPEST_OPTION, workload=workload, before={}, after={})
        for _ in range(count)
    )


@pytest.mark.django_db
def test_it_sends_each_event_once_however_often_the_chunk_runs():
    events = _events(3, notify_email="owner@example.com")
    ids = [event.pk for event in events]
    assert change_events_notify(ids) == {"sent": 3}
    assert change_events_notify(ids) == {}  # a duplicated or retried task: everything already claimed
    assert len(mail.outbox) == 3 and mail.outbox[0].to == ["owner@example.com"]
    assert not ChangeEvent.objects.filter(notified_at__isnull=True).exists()


@pytest.mark.django_db
def test_it_releases_the_unsent_events_when_a_send_fails(monkeypatch):
    events = _events(3, notify_webhook="https://hooks.example.com/gpuledger")
    calls = []

    def flaky_webhook(url, payload):
        calls.append(url)
        if len(calls) == 2:
            raise OSError("connection reset")

    monkeypatch.setattr(notifications, "_post_webhook", flaky_webhook)
    with pytest.raises(OSError):
        change_events_notify([event.pk for event in events])
    sent = ChangeEvent.objects.filter(notified_at__isnull=False).values_list("pk", flat=True)
    assert list(sent) == [events[0].pk]  # the retry sends the other two
    assert change_events_notify([event.pk for event in events]) == {"sent": 2}


@pytest.mark.django_db
def test_it_queues_one_notification_task_per_chunk_of_events(monkeypatch, django_capture_on_commit_callbacks):
    queued = []
    monkeypatch.setattr("procurement.tasks.notify_change_events.delay", queued.append)
    enqueue_notifications(list(range(1, 2 * NOTIFY_CHUNK + 2)))
    assert [len(chunk) for chunk in queued] == [NOTIFY_CHUNK, NOTIFY_CHUNK, 1]
    queued.clear()
    workload = Workload.objects.create(name="q", task="qlora", spec=SPEC)
    with django_capture_on_commit_callbacks(execute=True):
        created = change_events_create(
            [
                ChangeEvent(kind=ChangeKind.SPOT_VERDICT, workload=workload, before={}, after={})
                for _ in range(5)
            ]
        )
    assert queued == [[event.pk for event in created]]  # one insert, one task, after the commit


@pytest.mark.django_db
def test_it_stamps_only_events_actually_sent(client_as):
    silent = _events(2)  # no owner, e-mail or webhook
    told = _events(1, notify_email="owner@example.com")
    ids = [event.pk for event in silent + told]
    assert change_events_notify(ids) == {"no target": 2, "sent": 1}
    stamped = ChangeEvent.objects.filter(notified_at__isnull=False).values_list("pk", flat=True)
    assert list(stamped) == [told[0].pk] and len(mail.outbox) == 1
    html = client_as("admin").get("/dashboard/").content.decode()  # the events' workloads have no team
    assert html.count("no target configured") == 2 and "not yet" not in html


@pytest.mark.django_db
def test_events_without_a_target_are_marked_in_one_update_for_the_chunk(django_assert_max_num_queries):
    """A recompute records a change event per changed workload; most have no e-mail or webhook. Marking
    them is one update per chunk (issue 26, "Speed"), not one transaction per event."""
    from procurement.models import NotificationOutbox, NotificationState

    events = _events(40)
    NotificationOutbox.objects.bulk_create(NotificationOutbox(event=event) for event in events)
    with django_assert_max_num_queries(8):  # outbox check, claim, read, one mark: not 40 more
        assert change_events_notify([event.pk for event in events]) == {"no target": 40}
    states = set(NotificationOutbox.objects.values_list("state", flat=True))
    assert states == {NotificationState.NO_TARGET}
    assert not ChangeEvent.objects.filter(notified_at__isnull=False).exists()  # nothing was sent
