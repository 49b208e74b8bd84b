"""The worker's task for an uploaded billing file (uploads.py). A module of its own, listed in
CELERY_IMPORTS: billing's tasks.py is imported by the store that an import runs, so it cannot import
the importer back."""

from __future__ import annotations

from pathlib import Path

from celery import shared_task

from billing.imports.uploads import import_spooled


@shared_task(name="billing.import_upload")
def import_upload_task(path: str, fmt: str | None, provider: str, user_id: int | None) -> dict:
    """Not acks_late: a file that kills the worker must not come back to kill the next one; a rerun of
    the same file is harmless anyway (an import is idempotent by the file's checksum, and a spooled
    file is removed once read)."""
    return import_spooled(Path(path), fmt=fmt, provider=provider, user_id=user_id)
