"""Change events and their notifications: e-mail and/or webhook to the owner, once per event."""

from __future__ import annotations

import json
import urllib.request
from typing import Any

from django.core.mail import send_mail
from django.db import transaction
from django.utils import timezone

from procurement import models


def change_event_create(
    *, kind: str, before: dict, after: dict, workload=None, tco_study=None
) -> models.ChangeEvent:
    event = models.ChangeEvent(kind=kind, workload=workload, tco_study=tco_study, before=before, after=after)
    return change_events_create([event])[0]


def change_events_create(events: list[models.ChangeEvent]) -> list[models.ChangeEvent]:
    """Store events in one insert; once committed, notify their owners (one task per chunk of events)."""
    if not events:
        return []
    created = models.ChangeEvent.objects.bulk_create(events)
    event_ids = [event.pk for event in created]
    transaction.on_commit(lambda: _enqueue_notifications(event_ids))
    return created


def _enqueue_notifications(event_ids: list[int]) -> None:
    from procurement.tasks import enqueue_notifications

    enqueue_notifications(event_ids)


def change_event_notify(event_id: int) -> str:
    """Notify one event's owner ("sent", "no target", or "skipped" when already sent or gone)."""
    outcomes = change_events_notify([event_id])
    return next(iter(outcomes), "skipped")


def change_events_notify(event_ids: list[int]) -> dict[str, int]:
    """E-mail and/or webhook the owners of a chunk of events, each once: one conditional update claims
    every unsent event of the chunk, so a retried or duplicated task sends nothing twice. If a send fails,
    the events not sent yet are released for the task's retry before the error propagates.

    ``notified_at`` ends up stamped only on events actually sent: an event whose workload or study has no
    e-mail or webhook is released again ("no target"), so nobody reads "notified" for nothing sent."""
    events = _claim(event_ids)
    outcomes: dict[str, int] = {}
    unsent: list[int] = []
    for position, event in enumerate(events):
        try:
            outcome = _send(event)
        except Exception:
            _release(unsent + [e.pk for e in events[position:]])
            raise
        if outcome == "no target":
            unsent.append(event.pk)
        outcomes[outcome] = outcomes.get(outcome, 0) + 1
    _release(unsent)
    return outcomes


def _release(event_ids: list[int]) -> None:
    if event_ids:
        models.ChangeEvent.objects.filter(pk__in=event_ids).update(notified_at=None)


def change_event_has_target(event: models.ChangeEvent) -> bool:
    """Is an e-mail address or webhook configured for this event's workload or study (owner included)?"""
    return any(_notification_targets(event))


def _claim(event_ids: list[int]) -> list[models.ChangeEvent]:
    claimed_at = timezone.now()  # the claim's mark: a concurrent claim writes another instant
    models.ChangeEvent.objects.filter(pk__in=event_ids, notified_at__isnull=True).update(
        notified_at=claimed_at
    )
    claimed = models.ChangeEvent.objects.filter(pk__in=event_ids, notified_at=claimed_at)
    return list(claimed.select_related("workload__owner", "tco_study__owner").order_by("pk"))


def _send(event: models.ChangeEvent) -> str:
    subject = f"gpuledger: {event.get_kind_display()}"
    body = json.dumps(
        {"kind": event.kind, "before": event.before, "after": event.after}, indent=2, default=str
    )
    email, webhook = _notification_targets(event)
    if email:
        send_mail(subject, body, None, [email])
    if webhook:
        _post_webhook(
            webhook, {"subject": subject, "kind": event.kind, "before": event.before, "after": event.after}
        )
    return "sent" if email or webhook else "no target"


def _notification_targets(event: models.ChangeEvent) -> tuple[str, str]:
    if event.workload is not None:
        owner_email = event.workload.owner.email if event.workload.owner else ""
        return event.workload.notify_email or owner_email, event.workload.notify_webhook
    owner = event.tco_study.owner if event.tco_study else None
    return (owner.email if owner else ""), ""


def _post_webhook(url: str, payload: dict[str, Any]) -> None:
    request = urllib.request.Request(  # noqa: S310  (an owner-configured http(s) URL, validated by URLField)
        url, data=json.dumps(payload, default=str).encode(), headers={"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=10):  # noqa: S310
        pass
