"""An uploaded billing file goes to the worker: the web process only copies it to the spool folder (no
decompressing, no parsing) and queues ``billing.import_upload``, which bounds the file (bounds.py),
imports it and removes it. A decompression bomb or a huge bill then costs a worker, never a web
process (issue 31).

The web request waits up to BILLING_UPLOAD_WAIT_S for the worker's answer so that a normal file still
answers with its counts at once; a longer import answers "queued" (the page and the API say so) and
appears in the list of imports when done. The spool folder (BILLING_SPOOL_DIR) must be shared by the
web and worker processes (one host, or a shared volume).
"""

from __future__ import annotations

import shutil
import tempfile
import uuid
from collections import Counter
from pathlib import Path

from django.conf import settings

from gpuledger.errors import InputError
from gpuledger.upload_size import MAX_UPLOAD_BYTES  # a larger request is refused before it is read


class UploadTooLarge(InputError):
    """An upload over MAX_UPLOAD_BYTES, named by the form's `file` field."""

    def __init__(self, message: str):
        super().__init__("file", message, text=message)


def spool_dir() -> Path:
    folder = (
        getattr(settings, "BILLING_SPOOL_DIR", "") or Path(tempfile.gettempdir()) / "gpuledger-billing-spool"
    )
    return Path(folder)


def spool_upload(upload) -> Path:
    """The upload copied to a folder of its own in the spool (its name kept: detection reads the suffix)."""
    if upload.size > MAX_UPLOAD_BYTES:
        raise UploadTooLarge(
            f"{upload.name}: over {MAX_UPLOAD_BYTES // 2**20} MiB; import it with manage.py import_billing"
        )
    folder = spool_dir() / uuid.uuid4().hex
    folder.mkdir(parents=True)
    path = folder / (Path(upload.name).name or "upload")
    with open(path, "wb") as handle:
        for block in upload.chunks():
            handle.write(block)
    return path


def import_spooled(path: Path, *, fmt: str | None, provider: str, user_id: int | None) -> dict:
    """The worker's side: import the spooled file, remove it, answer in JSON (file names as uploaded)."""
    from django.contrib.auth import get_user_model

    from billing.imports.importer import import_files
    from billing.storage.store import ImportResult

    user = get_user_model().objects.filter(pk=user_id).first() if user_id else None
    try:
        if not path.exists():  # a redelivered task whose file is gone: the first run imported it
            return result_json(ImportResult(errors=[f"{path.name}: already imported or removed"]))
        result = import_files([path], fmt=fmt, provider=provider, user=user)
        result.errors = without_folder(result.errors, path)
        result.warnings = without_folder(result.warnings, path)
        return result_json(result)
    finally:
        shutil.rmtree(path.parent, ignore_errors=True)


def result_json(result) -> dict:
    return {
        "inserted": result.inserted,
        "unchanged": result.unchanged,
        "rejected": result.rejected,
        "imports": result.imports,
        "unmapped": dict(result.unmapped),
        "errors": result.errors,
        "warnings": result.warnings,
    }


def result_from_json(answer: dict):
    from billing.storage.store import ImportResult

    return ImportResult(
        inserted=answer["inserted"],
        unchanged=answer["unchanged"],
        rejected=answer["rejected"],
        imports=answer["imports"],
        unmapped=Counter(answer["unmapped"]),
        errors=answer["errors"],
        warnings=answer.get("warnings", []),  # an answer of a worker from before warnings: none
    )


def without_folder(errors: list[str], path: Path) -> list[str]:
    """Errors name the uploaded file as the user knows it, not the spool folder it sat in."""
    prefix = f"{path.parent}/"
    return [error.replace(prefix, "") for error in errors]
