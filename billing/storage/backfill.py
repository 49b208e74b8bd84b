"""Datasets for the imports stored before datasets existed (issue 28, item 1): each such import's
SpendRecord rows written as its Parquet dataset (datasets.py), so readers need not fall back to the
rows. Idempotent: an import that has files is never written again. Cost Explorer pulls are left out: a
later pull deletes the rows an earlier one stored (store.pull_cost_explorer), which an immutable
dataset would keep (import_datasets.covers_stored_rows reads them from the database).
"""

from __future__ import annotations

import datetime as dt

import numpy as np
import pandas as pd
from django.conf import settings
from django.db import transaction
from django.db.models import Exists, OuterRef

from billing.models import BillingImport, BillingImportFile, SpendRecord
from billing.storage.datasets import MICRO_COLUMNS, TEXT_COLUMNS, TIME_COLUMNS, DatasetWriter, dataset_frame

CHUNK_ROWS = 100_000
READ = [
    "row_key",
    "source_row",
    *TIME_COLUMNS,
    *(name for name in TEXT_COLUMNS if name != "gpu"),
    "gpu__slug",
    "is_correction",
    "is_refund",
    "commitment_gpu_scope",
    *MICRO_COLUMNS,
]


def imports_without_dataset():
    """The imports with stored rows and no dataset, oldest first (Cost Explorer pulls excepted)."""
    return (
        BillingImport.objects.filter(files__isnull=True)
        .exclude(source_format="cost_explorer")
        .filter(Exists(SpendRecord.objects.filter(billing_import=OuterRef("pk"))))
        .order_by("pk")
    )


def backfill_import(billing_import: BillingImport, chunk_rows: int = CHUNK_ROWS) -> int:
    """Write `billing_import`'s stored rows as its dataset and record its files; the rows written."""
    dataset = DatasetWriter(settings.BILLING_DATASET_DIR)
    written = 0
    try:
        rows = SpendRecord.objects.filter(billing_import=billing_import).order_by("row_key").values(*READ)
        chunk = []
        for row in rows.iterator(chunk_size=chunk_rows):
            chunk.append(row)
            if len(chunk) == chunk_rows:
                written += _write(dataset, chunk)
                chunk = []
        written += _write(dataset, chunk)
        with transaction.atomic():
            if BillingImportFile.objects.select_for_update().filter(billing_import=billing_import).exists():
                dataset.abandon()  # another run backfilled it meanwhile
                return 0
            files = dataset.finish(f"import={billing_import.pk}")
            BillingImportFile.objects.bulk_create(
                BillingImportFile(
                    billing_import=billing_import,
                    path=f.path,
                    month=dt.date.fromisoformat(f.month + "-01"),
                    rows=f.rows,
                    size_bytes=f.size_bytes,
                )
                for f in files
            )
    except BaseException:
        dataset.abandon()
        raise
    return written


def _write(dataset: DatasetWriter, chunk: list[dict]) -> int:
    if not chunk:
        return 0
    frame = pd.DataFrame(chunk).rename(columns={"gpu__slug": "gpu_slug"})
    frame["gpu_slug"] = frame["gpu_slug"].fillna("")
    keys = frame.pop("row_key")
    # the row key's 16 bytes, big-endian, as the two lanes datasets.py stores (keys.key_bytes' order)
    lanes = np.array([(key.int >> 64, key.int & (2**64 - 1)) for key in keys], dtype=np.uint64)
    dataset.write(dataset_frame(frame, lanes))
    return len(frame)
