"""The imports' Parquet datasets as one store to read (storage/datasets.py writes them).

A reader asks for the files of the months a period touches; they are listed from PostgreSQL's records
of the imports still stored (a deleted import's files are never read), each path once. The same rows
brought in by two files carry the same row key, and `may_repeat_rows` tells the SQL to count each key
once (duckdb_review.py). Cost Explorer pulls revise earlier days: of those, each day's rows are read
from the latest pull only (`pulls`, review_sql.LATEST_PULLS).
"""

from __future__ import annotations

import datetime as dt
import logging
from pathlib import Path

from django.db.models import Max

from billing.models import BillingImportFile
from billing.storage.location import S3Object, S3Root, dataset_root, relative_to_root

logger = logging.getLogger(__name__)


class ImportDatasets:
    def __init__(self, root: Path | S3Root | None = None):
        self.root = root or dataset_root()  # a folder, or an S3 prefix (location.py)

    def recorded(self, start: dt.date, end: dt.date) -> list[Path | S3Object]:
        """The recorded files of the charge months [start, end) touches."""
        first = start.replace(day=1)
        paths = (
            BillingImportFile.objects.filter(month__gte=first, month__lt=end)
            .order_by("path")
            .values_list("path", flat=True)
            .distinct()
        )
        return [self.root / path for path in paths]

    def files(self, start: dt.date, end: dt.date) -> list[Path | S3Object]:
        """The recorded files of [start, end) that are on disk. One not there (a dataset folder moved,
        cleaned or never shared: another machine's BILLING_DATASET_DIR) is left out and the log says
        which; a page never fails on it."""
        return self.on_disk(self.recorded(start, end))

    def on_disk(self, paths: list[Path | S3Object]) -> list[Path | S3Object]:
        """Those of `paths` that are there; the log names the rest (files())."""
        found, gone = [], []
        for path in paths:
            (found if path.is_file() else gone).append(path)
        if gone:
            logger.warning(
                "billing datasets: %d recorded file(s) missing under %s (first: %s); read without them",
                len(gone),
                self.root,
                gone[0],
            )
        return found

    def missing_bills(self, start: dt.date, end: dt.date) -> list[tuple[str, dt.date]]:
        """(bill file name, charge month) of each recorded dataset file of [start, end) not on disk, for
        the review's warnings: a review read without them must say so, not just log it."""
        first = start.replace(day=1)
        records = (
            BillingImportFile.objects.filter(month__gte=first, month__lt=end)
            .order_by("month", "billing_import__file_name")
            .values_list("path", "billing_import__file_name", "month")
        )
        seen: dict[str, tuple[str, dt.date]] = {}
        for path, name, month in records:
            if path not in seen and not (self.root / path).is_file():
                seen[path] = (name, month)
        return list(dict.fromkeys(seen.values()))

    def pulls(self, files: list[str]) -> list[str]:
        """The Cost Explorer pulls' files among `files`, oldest pull first (a file two pulls recorded, the
        same pull made twice, ranks as the later one): review_sql.LATEST_PULLS reads only the latest
        pull's rows of each charge day."""
        by_path = {relative_to_root(self.root, name): name for name in files}
        ranked = (
            BillingImportFile.objects.filter(path__in=by_path, billing_import__source_format="cost_explorer")
            .values("path")
            .annotate(latest=Max("billing_import_id"))
            .order_by("latest", "path")
        )
        return [by_path[row["path"]] for row in ranked]

    @staticmethod
    def may_repeat_rows(files: list[Path]) -> bool:
        """Whether the same rows may be in two of `files`: only files of two imports' datasets can (an
        import's own rows each have their own key), and only then is each key counted once
        (review_sql.UNIQUE_ROWS: the repeated keys found first, each read from its first import)."""
        return len({Path(path).parent.parent for path in files}) > 1


def readable_files(start: dt.date = dt.date.min, end: dt.date = dt.date.max) -> list[str]:
    """The files on disk of the charge months [start, end) touches (every file by default), as DuckDB
    reads them."""
    return [str(path) for path in ImportDatasets().files(start, end)]
