"""An uploaded billing file to a temporary path the importer can read (suffix kept for detection)."""

from __future__ import annotations

import tempfile
from contextlib import contextmanager
from pathlib import Path

MAX_UPLOAD_BYTES = 1024 * 1024 * 1024  # 1 GiB: a month of a large CUR export, gzipped


class UploadTooLarge(ValueError):
    pass


@contextmanager
def uploaded_path(upload):
    if upload.size > MAX_UPLOAD_BYTES:
        raise UploadTooLarge(
            f"{upload.name}: over {MAX_UPLOAD_BYTES // 2**20} MiB; import it with manage.py import_billing"
        )
    name = Path(upload.name).name
    with tempfile.TemporaryDirectory(prefix="billing-") as folder:
        path = Path(folder) / name
        with open(path, "wb") as handle:
            for block in upload.chunks():
                handle.write(block)
        yield path


def without_folder(errors: list[str], path: Path) -> list[str]:
    """Errors name the uploaded file as the user knows it, not the temporary folder it sat in."""
    prefix = f"{path.parent}/"
    return [error.replace(prefix, "") for error in errors]
