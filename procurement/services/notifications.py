"""Change events and their notifications: e-mail and/or webhook to the owner, once per event."""

from __future__ import annotations

import datetime as dt
import json
import logging
import secrets
from typing import Any

from django.core.mail import send_mail
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from procurement import models
from procurement.choices import ChangeKind
from procurement.models import NotificationState
from procurement.signals import change_events_pending
from procurement.webhooks import WebhookRefused, post_webhook

logger = logging.getLogger(__name__)
SWEEP_MAX_EVENTS = 5000  # per sweep run; the next run takes the rest


def change_event_create(
    *, kind: str, before: dict, after: dict, workload=None, tco_study=None
) -> models.ChangeEvent:
    event = models.ChangeEvent(kind=kind, workload=workload, tco_study=tco_study, before=before, after=after)
    return change_events_create([event])[0]


def change_events_create(events: list[models.ChangeEvent]) -> list[models.ChangeEvent]:
    """Store events and their outbox rows in one transaction; once committed, queue their notification
    (one task per chunk). If the broker is down then, the rows stay pending and the sweep sends them."""
    if not events:
        return []
    with transaction.atomic():
        created = models.ChangeEvent.objects.bulk_create(events)
        models.NotificationOutbox.objects.bulk_create(
            models.NotificationOutbox(event=event) for event in created
        )
    event_ids = [event.pk for event in created]
    transaction.on_commit(lambda: _enqueue_notifications(event_ids))
    return created


def _enqueue_notifications(event_ids: list[int]) -> None:
    try:
        change_events_pending.send(sender=change_events_create, event_ids=event_ids)
    except Exception:  # broker unreachable: the outbox rows are stored; notifications_sweep sends them
        logger.exception("could not queue the notification of %d change events", len(event_ids))


def change_event_notify(event_id: int) -> str:
    """Notify one event's owner ("sent", "no target", or "skipped" when already sent or gone)."""
    outcomes = change_events_notify([event_id])
    return next(iter(outcomes), "skipped")


def change_events_notify(event_ids: list[int]) -> dict[str, int]:
    """E-mail and/or webhook the owners of a chunk of events, each once: one conditional update claims
    every pending outbox row of the chunk, so a retried, duplicated or redelivered task sends nothing
    twice. If a send fails, the rows not sent yet are put back to pending before the error propagates.

    ``notified_at`` ends up stamped only on events actually sent: an event whose workload or study has no
    e-mail or webhook is marked "no target" in the outbox, so nobody reads "notified" for nothing sent."""
    _ensure_outbox(event_ids)
    token, events = _claim(event_ids)
    outcomes: dict[str, int] = {}
    no_target: list[int] = []  # nothing was sent for these: marked together, one update for the chunk
    for position, event in enumerate(events):
        try:
            outcome = _send(event)
        except Exception as error:
            _mark_no_target(no_target, token)
            _release([e.pk for e in events[position:]], token, error)
            raise
        if outcome == "sent":  # marked at once: a crash before its mark is the one send that can repeat
            _mark_done(event.pk, token, outcome)
        else:
            no_target.append(event.pk)
        outcomes[outcome] = outcomes.get(outcome, 0) + 1
    _mark_no_target(no_target, token)
    return outcomes


def _mark_no_target(event_ids: list[int], token: str) -> None:
    if event_ids:
        models.NotificationOutbox.objects.filter(event_id__in=event_ids, claim_token=token).update(
            state=NotificationState.NO_TARGET, sent_at=None
        )


def _ensure_outbox(event_ids: list[int]) -> None:
    """Events stored before the outbox existed (or by hand) get their row: pending, or sent if stamped."""
    have = set(
        models.NotificationOutbox.objects.filter(event_id__in=event_ids).values_list("event_id", flat=True)
    )
    missing = models.ChangeEvent.objects.filter(pk__in=set(event_ids) - have).values_list("pk", "notified_at")
    models.NotificationOutbox.objects.bulk_create(
        [
            models.NotificationOutbox(
                event_id=pk, state=NotificationState.SENT if sent else NotificationState.PENDING, sent_at=sent
            )
            for pk, sent in missing
        ],
        ignore_conflicts=True,  # a concurrent sender added it first
    )


def _claim(event_ids: list[int]) -> tuple[str, list[models.ChangeEvent]]:
    token = secrets.token_hex(16)  # this claim's mark: a concurrent claim writes another
    models.NotificationOutbox.objects.filter(event_id__in=event_ids, state=NotificationState.PENDING).update(
        state=NotificationState.SENDING,
        claim_token=token,
        claimed_at=timezone.now(),
        attempts=F("attempts") + 1,
    )
    claimed = models.ChangeEvent.objects.filter(
        outbox__claim_token=token, outbox__state=NotificationState.SENDING
    )
    return token, list(claimed.select_related("workload__owner", "tco_study__owner").order_by("pk"))


def _mark_done(event_id: int, token: str, outcome: str) -> None:
    now = timezone.now()
    state = NotificationState.SENT if outcome == "sent" else NotificationState.NO_TARGET
    with transaction.atomic():
        models.NotificationOutbox.objects.filter(event_id=event_id, claim_token=token).update(
            state=state, sent_at=now if outcome == "sent" else None
        )
        if outcome == "sent":
            models.ChangeEvent.objects.filter(pk=event_id).update(notified_at=now)


def _release(event_ids: list[int], token: str, error: BaseException) -> None:
    if event_ids:
        models.NotificationOutbox.objects.filter(event_id__in=event_ids, claim_token=token).update(
            state=NotificationState.PENDING,
            claim_token="",
            last_error=f"{type(error).__name__}: {error}"[:500],
        )


def notifications_sweep(*, now=None, pending_after_s: int = 60, stale_claim_s: int) -> dict[str, int]:
    """Put back rows whose sender died after claiming them (claimed longer ago than `stale_claim_s`, the
    notification task's time limit), then queue every row pending for over `pending_after_s` (its task
    was lost, e.g. to a broker outage). A crash between a send and its mark can repeat that one send:
    e-mail gives no way to make that window exactly-once."""
    now = now or timezone.now()
    stale = models.NotificationOutbox.objects.filter(
        state=NotificationState.SENDING, claimed_at__lt=now - dt.timedelta(seconds=stale_claim_s)
    ).update(state=NotificationState.PENDING, claim_token="")
    pending = list(
        models.NotificationOutbox.objects.filter(
            state=NotificationState.PENDING, created_at__lt=now - dt.timedelta(seconds=pending_after_s)
        )
        .order_by("event_id")
        .values_list("event_id", flat=True)[:SWEEP_MAX_EVENTS]
    )
    if pending:
        change_events_pending.send(sender=notifications_sweep, event_ids=pending)
    return {"released": stale, "queued": len(pending)}


def change_event_has_target(event: models.ChangeEvent) -> bool:
    """Is an e-mail address or webhook configured for this event's workload or study (owner included)?"""
    return any(_notification_targets(event))


def _send(event: models.ChangeEvent) -> str:
    email, webhook = _notification_targets(event)
    if not (email or webhook):  # most recomputed workloads have no target: no message is built for them
        return "no target"
    subject = f"gpuledger: {event.get_kind_display()}"
    if email:
        body = json.dumps(
            {"kind": event.kind, "before": event.before, "after": event.after}, indent=2, default=str
        )
        send_mail(subject, body, None, [address.strip() for address in email.split(",")])
    if webhook:
        payload = {"subject": subject, "kind": event.kind, "before": event.before, "after": event.after}
        try:
            _post_webhook(webhook, payload)
        except WebhookRefused as refused:  # logged and skipped, never retried
            logger.warning("webhook %s refused: %s", webhook[:200], refused)
            webhook = ""
    return "sent" if email or webhook else "no target"


def _notification_targets(event: models.ChangeEvent) -> tuple[str, str]:
    if event.kind == ChangeKind.BUDGET_FORECAST:  # a billing budget: its recipients travel with the event
        return ", ".join(event.after.get("notify_email", [])), ""
    if event.workload is not None:
        owner_email = event.workload.owner.email if event.workload.owner else ""
        return event.workload.notify_email or owner_email, event.workload.notify_webhook
    owner = event.tco_study.owner if event.tco_study else None
    return (owner.email if owner else ""), ""


def _post_webhook(url: str, payload: dict[str, Any]) -> None:
    """Raises WebhookRefused for a target that is not (or no longer resolves to) a public https address
    (procurement.webhooks), OSError for a network failure (the event is retried)."""
    post_webhook(url, payload)
