"""The beat's task for billing exports landing in S3 (scheduled.py). A module of its own, listed in
CELERY_IMPORTS like upload_tasks.py: billing's tasks.py is imported by the store that an import runs, so it
cannot import the importer back."""

from __future__ import annotations

from celery import shared_task

from billing.imports.scheduled import export_sources_sync


@shared_task(name="billing.import_s3_exports", acks_late=True)
def import_s3_exports() -> dict:
    """Off (reads nothing) until a billing export source is enabled. Idempotent: a delivery is imported
    once (unique per source), so a redelivered or repeated run imports nothing new."""
    return export_sources_sync()
