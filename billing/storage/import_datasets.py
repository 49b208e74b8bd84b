"""The imports' Parquet datasets as one store to read (storage/datasets.py writes them).

A reader asks for the files of the months a period touches; they are listed from PostgreSQL's records
of the imports still stored (a deleted import's files are never read), each path once. The same rows
brought in by two files carry the same row key, and `keyed` tells the SQL to count each key once
(duckdb_review.py), as SpendRecord stores it once.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from django.conf import settings

from billing.models import BillingImportFile


class ImportDatasets:
    keyed = True

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
