"""The imports' Parquet datasets as one store to read (storage/datasets.py writes them).

A reader asks for the files of the months a period touches; they are listed from PostgreSQL's records
of the imports still stored (a deleted import's files are never read), each path once. The same rows
brought in by two files carry the same row key, and `may_repeat_rows` tells the SQL to count each key
once (duckdb_review.py), as SpendRecord stores it once.
"""

from __future__ import annotations

import datetime as dt
import logging
from pathlib import Path

from django.conf import settings
from django.db.models import Exists, OuterRef

from billing.models import BillingImport, BillingImportFile, SpendRecord

logger = logging.getLogger(__name__)


class ImportDatasets:
    def __init__(self, root: Path | None = None):
        self.root = Path(root or settings.BILLING_DATASET_DIR)

    def files(self, start: dt.date, end: dt.date) -> list[Path]:
        """The recorded files of the charge months [start, end) touches."""
        first = start.replace(day=1)
        paths = (
            BillingImportFile.objects.filter(month__gte=first, month__lt=end)
            .order_by("path")
            .values_list("path", flat=True)
            .distinct()
        )
        return [self.root / path for path in paths]

    def missing(self, start: dt.date, end: dt.date) -> list[Path]:
        """The recorded files of [start, end) that are not on disk: a dataset folder moved, cleaned or
        never shared (another machine's BILLING_DATASET_DIR). Readers then read the stored rows instead,
        and the log says which files are gone; a page never fails on it."""
        gone = [path for path in self.files(start, end) if not path.is_file()]
        if gone:
            logger.warning(
                "billing datasets: %d recorded file(s) missing under %s (first: %s); reading the stored rows",
                len(gone),
                self.root,
                gone[0],
            )
        return gone

    @staticmethod
    def may_repeat_rows(files: list[Path]) -> bool:
        """Whether the same rows may be in two of `files`: only files of two imports' datasets can (an
        import's own rows each have their own key), and only then is each key counted once (a
        DISTINCT ON over every row read)."""
        return len({Path(path).parent.parent for path in files}) > 1


def readable_files(start: dt.date = dt.date.min, end: dt.date = dt.date.max) -> list[str] | None:
    """The recorded files of the charge months [start, end) touches (every file by default), as DuckDB
    reads them; None while a reader must read the stored rows instead: the datasets do not hold every
    stored row (covers_stored_rows), or a recorded file is gone from disk (ImportDatasets.missing)."""
    datasets = ImportDatasets()
    if not covers_stored_rows() or datasets.missing(start, end):
        return None
    return [str(path) for path in datasets.files(start, end)]


def covers_stored_rows() -> bool:
    """Whether the datasets hold every stored spend row, so a reader may read them instead of the rows:
    no import with stored rows lacks a dataset (imports made before datasets existed), and no Cost
    Explorer pull is stored (a pull that revises earlier days deletes the earlier pulls' rows, which
    their datasets still hold)."""
    without_dataset = BillingImport.objects.filter(files__isnull=True).filter(
        Exists(SpendRecord.objects.filter(billing_import=OuterRef("pk")))
    )
    return not (
        without_dataset.exists() or BillingImport.objects.filter(source_format="cost_explorer").exists()
    )
