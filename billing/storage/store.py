"""Write one billing file's normalized rows as SpendRecords: idempotent, all or nothing, in chunks.

Each chunk is enriched (catalog, tags, hours), checked against the stored fields' bounds (checks.py),
keyed (keys.py) and written (spend_writer.py: binary COPY on PostgreSQL, sent while the next chunk
is prepared); the whole file runs in one transaction, so a bad cell in the last chunk leaves nothing
of the file behind. Every chunk is also written to the import's immutable Parquet dataset
(datasets.py), moved into place and recorded (BillingImportFile) when the whole file is read. Mixed billing currencies need a stored FX rate for every currency but the base,
since a review can only add them up converted.
"""

from __future__ import annotations

import datetime as dt
import hashlib
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path

import pandas as pd
from django.conf import settings
from django.db import transaction

from billing.imports.checks import check_stored_bounds
from billing.imports.enrich import CatalogEntry, enrich
from billing.imports.gpu_identity import gcp_accelerator_aliases
from billing.imports.records import MAX_ROWS_PER_FILE, BillingFileError, tag_mapping
from billing.models import BillingImport, BillingImportFile, SpendRecord
from billing.storage.datasets import DatasetWriter, MicrosOutOfRange, dataset_frame
from billing.storage.keys import OccurrenceCounter, row_key_lanes, row_keys
from billing.storage.legacy_keys import LegacyRows
from billing.storage.spend_writer import SpendWriter
from billing.tasks import check_spend_after_commit, refresh_snapshots_after_commit
from pricing.fx import fx_rates
from pricing.models import GpuAlias, InstanceType


@dataclass
class ImportResult:
    inserted: int = 0
    unchanged: int = 0
    rejected: int = 0
    rows_seen: int = 0
    unmapped: Counter = field(default_factory=Counter)
    errors: list[str] = field(default_factory=list)
    imports: list[int] = field(default_factory=list)

    def line(self) -> str:
        return f"inserted {self.inserted}, unchanged {self.unchanged}, rejected {self.rejected}"

    def add(self, other: ImportResult) -> None:
        self.inserted += other.inserted
        self.unchanged += other.unchanged
        self.rejected += other.rejected
        self.rows_seen += other.rows_seen
        self.unmapped.update(other.unmapped)
        self.errors += other.errors
        self.imports += other.imports


def catalog_entries() -> dict[tuple[str, str], CatalogEntry]:
    """(provider slug, instance type) -> (GPU id, slug, GPUs per instance) for every GPU-mapped type."""
    rows = InstanceType.objects.filter(gpu__isnull=False).values_list(
        "provider__slug", "name", "gpu_id", "gpu__slug", "gpu_count"
    )
    entries = {(provider, name): (gpu_id, slug, count) for provider, name, gpu_id, slug, count in rows}
    return gcp_gpu_entries() | entries


def gcp_gpu_entries() -> dict[tuple[str, str], CatalogEntry]:
    """Google Cloud's per-GPU usage rows (gpu_identity.py): ("gcp", accelerator type) -> its GPU, one
    per "instance", through the catalog's Google Cloud GPU aliases (provider-wide ones only)."""
    aliases = gcp_accelerator_aliases()
    found = GpuAlias.objects.filter(
        provider__slug="gcp", alias__in=set(aliases.values()), instance_type_contains=""
    ).values_list("alias", "gpu_id", "gpu__slug")
    by_alias = {alias: (gpu_id, slug) for alias, gpu_id, slug in found}
    return {
        ("gcp", accelerator): (*by_alias[alias], Decimal(1))
        for accelerator, alias in aliases.items()
        if alias in by_alias
    }


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def store_chunks(
    chunks: Iterable[pd.DataFrame],
    *,
    file_name: str,
    source_format: str,
    provider: str = "",
    sha256: str | Callable[[], str] = "",
    user=None,
    progress: Callable[[int], None] | None = None,
    location: str = "",
    source_columns: Mapping[str, str] | None = None,
) -> ImportResult:
    """Store every chunk or none (raises BillingFileError, nothing written). `source_columns` names
    the file's column of each normalized one, for errors found after normalizing; `sha256` may be a
    function that gives the checksum (computed meanwhile, elsewhere)."""
    result = ImportResult()
    catalog, tags = catalog_entries(), tag_mapping()
    convertible = set(fx_rates(base="USD"))
    currencies_seen: dict[str, int] = {}
    seen = OccurrenceCounter()
    file, source_columns = location or file_name, source_columns or {}
    checksum = sha256 if callable(sha256) else (lambda: sha256)
    with transaction.atomic():
        billing_import = BillingImport.objects.create(
            source_format=source_format,
            file_name=file_name[:500],
            provider=provider,
            imported_by=user if getattr(user, "is_authenticated", False) else None,
        )
        legacy = LegacyRows.find(source_format=source_format, checksum=checksum)
        dataset = DatasetWriter(settings.BILLING_DATASET_DIR)
        with _abandoned_on_error(dataset), SpendWriter(billing_import.pk) as writer:
            for chunk in chunks:
                _check_currency_mix(chunk, currencies_seen, convertible, file)
                rows = enrich(chunk, catalog=catalog, tags=tags, unmapped=result.unmapped)
                check_stored_bounds(rows, file=file, source_columns=source_columns)
                lanes = row_key_lanes(rows, seen)
                _write_dataset(dataset, rows, lanes)
                result.rows_seen += len(rows)
                if legacy:
                    writer.settle()  # the database is the legacy lookup's now
                    rows, lanes = legacy.claim(rows, lanes, file=file, source_columns=source_columns)
                writer.write(rows, lanes)
                if result.rows_seen > MAX_ROWS_PER_FILE:
                    raise BillingFileError(
                        file, f"over {MAX_ROWS_PER_FILE:,} rows in one file; split the export"
                    )
                if progress:
                    progress(len(chunk))
        if legacy:
            legacy.finish()
        result.inserted, result.unchanged = writer.inserted, result.rows_seen - writer.inserted
        billing_import.rows_seen, billing_import.file_sha256 = result.rows_seen, checksum()
        billing_import.inserted, billing_import.unchanged = result.inserted, result.unchanged
        billing_import.unmapped_instance_types = dict(result.unmapped.most_common())
        billing_import.save()
        _record_dataset(billing_import, dataset)
        refresh_snapshots_after_commit()
        check_spend_after_commit(billing_import.pk)
    result.imports.append(billing_import.pk)
    return result


def _write_dataset(dataset: DatasetWriter, rows: pd.DataFrame, lanes) -> None:
    """Every row of the file, as read, into the import's dataset. An amount beyond int64 micro-units
    leaves the import without one: readers then read every row from the database, where the review
    refuses that amount naming its column (review.stored_amount_too_large)."""
    if dataset.given_up:
        return
    try:
        dataset.write(dataset_frame(rows, lanes))
    except MicrosOutOfRange:
        dataset.give_up()


@contextmanager
def _abandoned_on_error(dataset: DatasetWriter):
    try:
        yield dataset
    except BaseException:
        dataset.abandon()
        raise


def _record_dataset(billing_import: BillingImport, dataset: DatasetWriter) -> None:
    """The import's Parquet files in PostgreSQL. A file imported before (same checksum and format, its
    dataset recorded and still on disk) keeps its first dataset: what was just written is dropped, nothing is
    added. Where the first dataset's files are gone (another BILLING_DATASET_DIR, a cleaned folder), the
    new one is kept (CI x35: a database reused with a fresh dataset folder pointed every review at missing
    files)."""
    earlier = (
        BillingImport.objects.filter(
            file_sha256=billing_import.file_sha256, source_format=billing_import.source_format
        )
        .exclude(file_sha256="")
        .exclude(pk=billing_import.pk)
        .filter(files__isnull=False)
        .order_by("pk")
        .first()
    )
    if earlier is not None and all((dataset.root / f.path).is_file() for f in earlier.files.all()):
        dataset.abandon()
        files = [
            BillingImportFile(
                billing_import=billing_import,
                path=f.path,
                month=f.month,
                rows=f.rows,
                size_bytes=f.size_bytes,
            )
            for f in earlier.files.all()
        ]
    else:
        files = [
            BillingImportFile(
                billing_import=billing_import,
                path=f.path,
                month=dt.date.fromisoformat(f.month + "-01"),
                rows=f.rows,
                size_bytes=f.size_bytes,
            )
            for f in dataset.finish(f"import={billing_import.pk}")
        ]
    BillingImportFile.objects.bulk_create(files)


def _check_currency_mix(chunk: pd.DataFrame, seen: dict[str, int], convertible: set[str], file: str) -> None:
    for currency in pd.unique(chunk["currency"]):
        if currency not in seen:
            seen[currency] = int(chunk.loc[chunk["currency"] == currency, "source_row"].iloc[0])
    if len(seen) > 1:
        for currency, row in seen.items():
            if currency not in convertible:
                raise BillingFileError(
                    file,
                    f"mixed billing currencies ({', '.join(sorted(seen))}) and no stored FX rate for "
                    f"{currency} -> USD; add one (admin: FX rates) before importing",
                    row=row,
                    column="BillingCurrency",
                )


def pull_cost_explorer(page_iter, *, start, end, tag: str = "") -> ImportResult:
    """Store a Cost Explorer pull, replacing the earlier pulls' rows of the same days (Cost Explorer
    revises estimated days); an unchanged row is kept and counted as unchanged."""
    from billing.imports.cost_explorer import normalized_rows

    frame = normalized_rows(list(page_iter), tag=tag)
    name = f"cost-explorer {start}..{end}" + (f" by tag {tag}" if tag else "")
    with transaction.atomic():
        keys = set(row_keys(frame).tolist()) if len(frame) else set()
        stale = SpendRecord.objects.filter(
            billing_import__source_format="cost_explorer",
            charge_period_start__gte=dt.datetime.combine(start, dt.time(), tzinfo=dt.UTC),
            charge_period_start__lt=dt.datetime.combine(end, dt.time(), tzinfo=dt.UTC),
        ).exclude(row_key__in=keys)
        stale.delete()
        return store_chunks(
            [frame] if len(frame) else [], file_name=name, source_format="cost_explorer", provider="aws"
        )
