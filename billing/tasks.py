"""Billing's background work: after an import, a worker builds the review's month snapshots of every
month with spend rows (the import made the stored ones stale, and its own months may have none), so
the next review, of any month, reads snapshots rather than every row (spend_snapshot.py)."""

from __future__ import annotations

import logging

from celery import shared_task
from django.db import connection, transaction

from billing.storage.spend_snapshot import refresh_stale_snapshots

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


@shared_task(name="billing.check_spend_after_import", acks_late=True)
def check_spend_after_import(import_id: int) -> dict:
    """Idempotent: each (import, month) is checked once (SpendCheck), each budget threshold alerts once
    (BudgetAlert); an import deleted meanwhile has no months left to check."""
    from billing.finance.budget_service import spend_check_import

    return {"checked": spend_check_import(import_id)}


def check_spend_after_commit(import_id: int) -> None:
    """Queue the re-check of the import's months once its transaction has committed (every database:
    eager in embedded mode)."""
    transaction.on_commit(lambda: _queue_check(import_id))


def _queue_check(import_id: int) -> None:
    try:
        check_spend_after_import.delay(import_id)
    except Exception:  # broker unreachable: the import stands; the review computes the same live
        logger.exception("could not queue the anomaly and budget check of import %s", import_id)
