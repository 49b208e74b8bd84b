"""Hand an uploaded billing file to the worker and wait a while for its answer (uploads.py says why)."""

from __future__ import annotations

import logging

from celery.exceptions import TimeoutError as ResultTimeout
from django.conf import settings

from billing.imports.upload_tasks import import_upload_task
from billing.imports.uploads import result_from_json, spool_upload
from billing.storage.store import ImportResult

logger = logging.getLogger(__name__)
UPLOAD_WAIT_S = 30  # under gunicorn's 60 s timeout (infra/); a longer import answers "queued"


def import_upload(upload, *, fmt: str | None, provider: str, user) -> ImportResult | None:
    """The upload's import result from the worker, or None when it is still running after
    BILLING_UPLOAD_WAIT_S; raises UploadTooLarge before anything is queued."""
    path = spool_upload(upload)
    queued = import_upload_task.delay(str(path), fmt or None, provider, getattr(user, "pk", None))
    try:
        answer = queued.get(timeout=getattr(settings, "BILLING_UPLOAD_WAIT_S", UPLOAD_WAIT_S))
    except ResultTimeout:
        logger.info("billing import of %s still running in the worker", upload.name)
        return None
    return result_from_json(answer)
