"""Billing's background work: after an import, a worker checks the months it brought rows into against
the budgets and for anomalies (finance/budget_service.py)."""

from __future__ import annotations

import logging

from celery import shared_task
from django.db import transaction

logger = logging.getLogger(__name__)


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
