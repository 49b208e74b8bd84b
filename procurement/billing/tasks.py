"""Billing's background work: after an import, a worker builds the review's month snapshots of every
month with spend rows (the import made the stored ones stale, and its own months may have none), so
the next review, of any month, reads snapshots rather than every row (spend_snapshot.py)."""

from __future__ import annotations

import logging

from celery import shared_task
from django.db import connection, transaction

from procurement.billing.spend_snapshot import refresh_stale_snapshots

logger = logging.getLogger(__name__)


@shared_task(name="billing.refresh_spend_snapshots", acks_late=True)
def refresh_spend_snapshots() -> dict:
    """Idempotent: a second run (a redelivery, two imports close together) finds nothing stale, or
    rebuilds the same months under the same key."""
    return {"months": [month.isoformat() for month in refresh_stale_snapshots()]}


def refresh_snapshots_after_commit() -> None:
    """Queue the rebuild once the import's transaction has committed (its rows are what it reads); only
    on PostgreSQL, the one database whose reviews read snapshots."""
    if connection.vendor == "postgresql":
        transaction.on_commit(_queue_refresh)


def _queue_refresh() -> None:
    try:
        refresh_spend_snapshots.delay()
    except Exception:  # broker unreachable: the import stands; the next review rebuilds what it reads
        logger.exception("could not queue the rebuild of the spend review's month snapshots")
