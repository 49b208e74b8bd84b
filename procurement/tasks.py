"""Celery tasks of the procurement app: recompute stored decisions after price changes, notify owners.

Thin wrappers over procurement.services. ``recompute_all`` fans out by id in chunks so several
workers share a large portfolio; each chunk reads the offer table once. Recomputing is idempotent
(unchanged prices add no row; racing runs store one result: services/recompute.py), and notifying is
exactly once per event (the outbox claim), so every task here acks late: a worker killed mid-task
has its task redelivered rather than lost. It runs after every successful price refresh
(``recompute_soon``, called by pricing.sources.refresh) and nightly (scheduler/schedule.py).
"""

from __future__ import annotations

import logging

from celery import group, shared_task
from django.core.cache import cache
from django.dispatch import receiver

from procurement.signals import change_events_pending

RECOMPUTE_CHUNK = 500  # one read of the offer table (~0.1 s) per chunk; 20 tasks for 10,000 workloads
NOTIFY_CHUNK = 100
RECOMPUTE_DEBOUNCE_S = 60
RECOMPUTE_PENDING_KEY = "procurement:recompute-all-pending"

logger = logging.getLogger(__name__)


def _chunks(ids: list[int], size: int = RECOMPUTE_CHUNK) -> list[list[int]]:
    return [ids[start : start + size] for start in range(0, len(ids), size)]


def recompute_soon() -> bool:
    """Queue one ``recompute_all`` a minute from now unless one is already pending, so the refreshes of
    several regions that finish together cause one recomputation, not one each. Returns whether it queued."""
    if not cache.add(RECOMPUTE_PENDING_KEY, True, timeout=RECOMPUTE_DEBOUNCE_S * 5):
        return False
    try:
        recompute_all.apply_async(countdown=RECOMPUTE_DEBOUNCE_S)
    except Exception:  # the prices are stored either way; the nightly recompute catches up
        cache.delete(RECOMPUTE_PENDING_KEY)
        logger.exception("could not queue the recomputation after a price refresh")
        return False
    return True


@shared_task(name="procurement.recompute_all", acks_late=True)
def recompute_all() -> dict:
    """Queue one task per chunk of stored recommendations and TCO studies."""
    from planning.services.capacity_plans import capacity_plan_targets
    from procurement.services.recompute import recompute_targets

    cache.delete(RECOMPUTE_PENDING_KEY)  # a refresh finishing from now on needs another run
    workload_ids, study_ids = recompute_targets()
    jobs = [recompute_recommendations.si(chunk) for chunk in _chunks(workload_ids)]
    jobs += [recompute_tco_studies.si(chunk) for chunk in _chunks(study_ids)]
    jobs += [recompute_capacity_plans.si(chunk) for chunk in _chunks(capacity_plan_targets())]
    if jobs:
        group(jobs).apply_async()
    return {"workloads": len(workload_ids), "tco_studies": len(study_ids), "tasks": len(jobs)}


@shared_task(name="procurement.recompute_recommendations", acks_late=True)
def recompute_recommendations(workload_ids: list[int]) -> dict:
    from procurement.services.recommendations import RankingContext
    from procurement.services.recompute import recommendations_recompute_chunk

    context = RankingContext.current()  # one read of the offer table for the whole chunk
    results = recommendations_recompute_chunk(workload_ids, context=context)
    return {"recomputed": len(results), "created": sum(1 for r in results if r.get("created"))}


@shared_task(name="procurement.recompute_tco_studies", acks_late=True)
def recompute_tco_studies(study_ids: list[int]) -> dict:
    from procurement.services.recompute import tco_study_recompute

    results = [tco_study_recompute(study_id) for study_id in study_ids]
    return {"recomputed": len(results), "created": sum(1 for r in results if r.get("created"))}


@shared_task(name="procurement.recompute_capacity_plans", acks_late=True)
def recompute_capacity_plans(plan_ids: list[int]) -> dict:
    from planning.services.capacity_plans import capacity_plan_recompute

    results = [capacity_plan_recompute(plan_id) for plan_id in plan_ids]
    return {"recomputed": len(results), "created": sum(1 for r in results if r.get("created"))}


def enqueue_notifications(event_ids: list[int]) -> None:
    """One notification task per chunk of change events (not one per event)."""
    for chunk in _chunks(sorted(event_ids), NOTIFY_CHUNK):
        notify_change_events.delay(chunk)


# Both notification tasks retry on OSError (mail, network): backoff from 60 s doubling to a 30-minute cap, jittered, 5 retries
NOTIFY_TASK_OPTIONS = {
    "acks_late": True,  # idempotent: the outbox claim makes a redelivered task send nothing twice
    "autoretry_for": (OSError,),
    "retry_backoff": 60,
    "retry_backoff_max": 30 * 60,
    "retry_jitter": True,
    "max_retries": 5,
}


@receiver(change_events_pending, dispatch_uid="procurement.tasks.enqueue_notifications")
def _change_events_pending(sender, event_ids: list[int], **kwargs) -> None:
    enqueue_notifications(event_ids)


@shared_task(name="procurement.notify_change_events", **NOTIFY_TASK_OPTIONS)
def notify_change_events(event_ids: list[int]) -> dict:
    """Notify the owners of a chunk of events; a retry skips the ones already sent (conditional update)."""
    from procurement.services.notifications import change_events_notify

    return change_events_notify(event_ids)


@shared_task(name="procurement.notify_change_event", **NOTIFY_TASK_OPTIONS)
def notify_change_event(event_id: int) -> str:
    from procurement.services.notifications import change_event_notify

    return change_event_notify(event_id)


# Over the notification tasks' time limit (settings.CELERY_TASK_TIME_LIMIT): a claim older than this is dead.
NOTIFY_SWEEP_STALE_CLAIM_S = 15 * 60


@shared_task(name="procurement.sweep_notifications", acks_late=True)
def sweep_notifications() -> dict:
    """Queue the change events whose notification was never queued or whose sender died (beat, 5 min)."""
    from django.conf import settings

    from procurement.services.notifications import notifications_sweep

    return notifications_sweep(stale_claim_s=max(NOTIFY_SWEEP_STALE_CLAIM_S, settings.CELERY_TASK_TIME_LIMIT))
