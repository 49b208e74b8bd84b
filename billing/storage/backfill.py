"""Datasets for the imports stored as SpendRecord rows before bill lines stopped being PostgreSQL rows
(issue 28, item 1): each such import's rows written as its Parquet dataset (datasets.py), so no bill
line is lost. Run by migration 0010 and again by 0014 (for an import still without a dataset) before it
drops the table, always with the migration's historical models: the SpendRecord model exists only there.
Idempotent: an import that has files is never written again.

Cost Explorer pulls: a later pull deleted the earlier pulls' rows of the days it revised and kept the
unchanged ones under the earlier pull, so the stored rows of every pull together are the bill. They
are written as one dataset recorded for the newest pull, which the readers' latest-pull rule
(review_sql.LATEST_PULLS) then reads whole for those days.
"""

from __future__ import annotations

import datetime as dt

import numpy as np
import pandas as pd
from django.db import transaction
from django.db.models import Exists, OuterRef

from billing.storage.datasets import (
    MICRO_COLUMNS,
    QUANTITY_COLUMN,
    TEXT_COLUMNS,
    TIME_COLUMNS,
    DatasetWriter,
    dataset_frame,
)
from billing.storage.location import dataset_root

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
    QUANTITY_COLUMN,
]


def write_missing_datasets(apps) -> None:
    """Every import of the historical `apps` still held only as SpendRecord rows gets its dataset."""
    billing_import, record, file = (
        apps.get_model("billing", name) for name in ("BillingImport", "SpendRecord", "BillingImportFile")
    )
    for found in imports_without_dataset(billing_import, record):
        backfill_import(found, record, file)


def missing_dataset_files(apps) -> list[str]:
    """The recorded files of the imports held as SpendRecord rows that are not in the dataset folder (or
    S3 prefix) this process reads: what dropping the table would lose."""
    record, file = (apps.get_model("billing", name) for name in ("SpendRecord", "BillingImportFile"))
    paths = (
        file.objects.filter(Exists(record.objects.filter(billing_import=OuterRef("billing_import"))))
        .order_by("path")
        .values_list("path", flat=True)
        .distinct()
    )
    root = dataset_root()
    return [path for path in paths if not (root / path).is_file()]


def imports_without_dataset(import_model, record_model):
    """The imports with stored rows and no dataset, oldest first; of Cost Explorer pulls, only the
    newest (it gets every pull's rows)."""
    stored = import_model.objects.filter(files__isnull=True).filter(
        Exists(record_model.objects.filter(billing_import=OuterRef("pk")))
    )
    found = list(stored.exclude(source_format="cost_explorer").order_by("pk"))
    pulls = import_model.objects.filter(source_format="cost_explorer")
    newest = pulls.order_by("-pk").first()
    if newest is not None and not pulls.filter(files__isnull=False).exists():
        if record_model.objects.filter(billing_import__source_format="cost_explorer").exists():
            found.append(newest)
    return found


def backfill_import(billing_import, record_model, file_model, chunk_rows: int = CHUNK_ROWS) -> int:
    """Write `billing_import`'s stored rows (every pull's, for a Cost Explorer pull) as its dataset and
    record its files; the rows written."""
    dataset = DatasetWriter(dataset_root())
    written = 0
    if billing_import.source_format == "cost_explorer":
        records = record_model.objects.filter(billing_import__source_format="cost_explorer")
    else:
        records = record_model.objects.filter(billing_import=billing_import)
    try:
        chunk = []
        for row in records.order_by("row_key").values(*READ).iterator(chunk_size=chunk_rows):
            chunk.append(row)
            if len(chunk) == chunk_rows:
                written += _write(dataset, chunk)
                chunk = []
        written += _write(dataset, chunk)
        with transaction.atomic():
            if file_model.objects.select_for_update().filter(billing_import=billing_import).exists():
                dataset.abandon()  # another run backfilled it meanwhile
                return 0
            files = dataset.finish(f"import={billing_import.pk}")
            file_model.objects.bulk_create(
                file_model(
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
