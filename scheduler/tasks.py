"""Celery tasks of the scheduler app: housekeeping of the refresh bookkeeping."""

from __future__ import annotations

from celery import shared_task


@shared_task(name="scheduler.close_orphaned_refreshes", acks_late=True)
def close_orphaned_refreshes() -> dict:
    """Mark refresh rows a crashed worker left 'running' as failed (idempotent: a rerun closes nothing)."""
    from scheduler.orphans import orphaned_refreshes_close

    return {"closed": orphaned_refreshes_close()}
