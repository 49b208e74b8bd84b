"""Store one billing file's normalized rows as the import's Parquet dataset: all or nothing, in chunks.

Each chunk is enriched (catalog, tags, hours), checked against the stored fields' bounds (checks.py),
keyed (keys.py) and written to the import's immutable dataset (datasets.py), which is moved into place
and recorded (BillingImportFile) when the whole file is read; a bad cell in the last chunk leaves
nothing of the file behind. Bill lines are not PostgreSQL rows (issue 28, item 1): PostgreSQL keeps
the import and its files. The rows another
import already brought in are counted `unchanged` (by row key; readers count each key once) and the
rest `inserted`. Mixed billing currencies need a stored FX rate for every currency but the base, since
a review can only add them up converted.
"""

from __future__ import annotations

import datetime as dt
import hashlib
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import Future
from contextlib import contextmanager
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path

import numpy as np
import pandas as pd
from django.db import transaction
from django.db.models import Q

from billing.imports.arrow_memory import return_freed_heap
from billing.imports.checks import check_stored_bounds
from billing.imports.enrich import CatalogEntry, enrich
from billing.imports.gpu_identity import gcp_accelerator_aliases
from billing.imports.records import MAX_ROWS_PER_FILE, BillingFileError, blocks, tag_mapping
from billing.models import BillingImport, BillingImportFile
from billing.storage.datasets import (
    QUANTITY_COLUMN,
    QUANTITY_LIMIT,
    DatasetWriter,
    MicrosOutOfRange,
    dataset_frame,
    keyed,
    month_order,
)
from billing.storage.duckdb_review import count_new_rows
from billing.storage.import_datasets import ImportDatasets
from billing.storage.keys import OccurrenceCounter, content_lanes, export_part, numbered_lanes
from billing.storage.location import dataset_root
from billing.tasks import check_spend_after_commit
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
    # lines for people of what was kept but not as written (a team tag whose value is an object,
    # imports/tag_formats.TagNotes): the file is imported all the same; stored on its BillingImport
    warnings: list[str] = field(default_factory=list)

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
        self.warnings += other.warnings


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


# BillingImport.warnings is bounded: the importer names at most 20 values a file and counts the rest in
# one line (tag_formats.MAX_TAG_NOTES); a line is cut at MAX_WARNING_CHARS (a tag value may be long)
MAX_WARNINGS = 21
MAX_WARNING_CHARS = 500


def stored_warnings(lines: Iterable[str], *, location: str = "", file_name: str = "") -> list[str]:
    """The warnings as an import stores them: naming the file as its import does (`file_name`, not the
    `location` it was read from: a spool or download folder), at most MAX_WARNINGS lines (the last one
    counting those left out) of at most MAX_WARNING_CHARS characters each."""
    named = [
        file_name + line[len(location) :]
        if location and file_name and line.startswith(f"{location}:")
        else line
        for line in lines
    ]
    if len(named) > MAX_WARNINGS:
        named = named[: MAX_WARNINGS - 1] + [f"{len(named) - MAX_WARNINGS + 1} more warnings not stored"]
    return [line if len(line) <= MAX_WARNING_CHARS else line[: MAX_WARNING_CHARS - 1] + "…" for line in named]


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in blocks(handle):
            digest.update(block)
    return digest.hexdigest()


def store_chunks(
    chunks: Iterable[pd.DataFrame],
    *,
    file_name: str,
    source_format: str,
    provider: str = "",
    sha256: str | Callable[[], str] | Future = "",
    user=None,
    progress: Callable[[int], None] | None = None,
    location: str = "",
    source_columns: Mapping[str, str] | None = None,
    part: str = "",
    warnings: Callable[[], list[str]] | None = None,
    file_bytes: int | None = None,
) -> ImportResult:
    """Store every chunk or none (raises BillingFileError, nothing written). `source_columns` names
    the file's column of each normalized one, for errors found after normalizing; `sha256` may be a
    function that gives the checksum (computed meanwhile, elsewhere). `part` is the export part the rows
    come from (keys.export_part of the file's name), part of each row key. Given as a string, a file
    imported before (same checksum, format, provider and part, its dataset on disk) is not read at all
    (_known_file); so too given as a Future being computed where an import of the same format and
    provider with a dataset may be the same file (_may_be_known: the same size `file_bytes`, or a size
    not on record). Otherwise no checksum can match and the whole file is read, normalized and written
    while the checksum is computed (_checksum_errors_first). `warnings` gives the import's warnings once
    every chunk is read; they are stored on the import (stored_warnings), and a file imported before
    keeps the first import's."""
    if isinstance(sha256, Future) and _may_be_known(source_format, provider, file_bytes):
        sha256 = sha256.result()  # this file may be one of them: known before a line of it is read
    known = _known_file(sha256, source_format, provider, part) if isinstance(sha256, str) else None
    if known is not None:
        _stop(chunks)
        return _store_known(known, file_name=file_name, user=user, progress=progress)
    result = ImportResult()
    catalog, tags = catalog_entries(), tag_mapping()
    convertible = set(fx_rates(base="USD"))
    currencies_seen: dict[str, int] = {}
    seen = OccurrenceCounter()
    file, source_columns = location or file_name, source_columns or {}
    checksum = _checksum(sha256)
    with transaction.atomic():
        billing_import = BillingImport.objects.create(
            source_format=source_format,
            file_name=file_name[:500],
            file_bytes=file_bytes,
            provider=provider,
            imported_by=user if getattr(user, "is_authenticated", False) else None,
        )
        dataset = DatasetWriter(dataset_root())
        with _abandoned_on_error(dataset), _closed_on_error(chunks), _checksum_errors_first(sha256):
            for chunk in chunks:
                _check_currency_mix(chunk, currencies_seen, convertible, file)
                rows = enrich(chunk, catalog=catalog, tags=tags, unmapped=result.unmapped)
                check_stored_bounds(rows, file=file, source_columns=source_columns)
                _write_dataset(dataset, rows, content_lanes(rows, part), seen, file, source_columns)
                result.rows_seen += len(rows)
                if result.rows_seen > MAX_ROWS_PER_FILE:
                    raise BillingFileError(
                        file, f"over {MAX_ROWS_PER_FILE:,} rows in one file; split the export"
                    )
                if progress:
                    progress(len(chunk))
                return_freed_heap()  # the peak stays flat as the file grows (arrow_memory.py)
            dataset.wait()  # the last chunk's keys; an error of the writer's is raised here
            # computed meanwhile: a byte that is not UTF-8 is raised here, and the dataset abandoned
            billing_import.file_sha256 = checksum()
        _record_dataset(billing_import, dataset, part)
        result.inserted = new_rows(billing_import.pk)
        result.unchanged = result.rows_seen - result.inserted
        billing_import.rows_seen = result.rows_seen
        billing_import.inserted, billing_import.unchanged = result.inserted, result.unchanged
        billing_import.unmapped_instance_types = dict(result.unmapped.most_common())
        result.warnings = list(warnings()) if warnings else []
        billing_import.warnings = stored_warnings(result.warnings, location=file, file_name=file_name[:500])
        billing_import.save()
        check_spend_after_commit(billing_import.pk)
    result.imports.append(billing_import.pk)
    return result


def _known_file(sha256: str, source_format: str, provider: str, part: str = "") -> BillingImport | None:
    """The earliest import of the same file (checksum, format and provider given) as the same export part
    (its rows' keys hold the part: the same bytes as another part are other charges) whose dataset is
    recorded and every file of it still on disk: a re-import records that dataset without reading the
    file again (issue 28: at 5M rows reading and rewriting it only to find the checksum took 46 s)."""
    if not sha256:
        return None
    candidates = (
        BillingImport.objects.filter(file_sha256=sha256, source_format=source_format, provider=provider)
        .filter(files__isnull=False)
        .distinct()
        .order_by("pk")
    )
    earlier = _of_part(candidates, part)
    if earlier is None:
        return None
    root = ImportDatasets().root
    return earlier if all((root / f.path).is_file() for f in earlier.files.all()) else None


def _of_part(imports, part: str) -> BillingImport | None:
    """The first of `imports` (ordered) read from a file of the same export part: its rows' keys hold the
    part, so the same bytes as another part are other charges, not the same file again."""
    return next((i for i in imports.iterator() if export_part(i.file_name) == part), None)


def _store_known(
    earlier: BillingImport, *, file_name: str, user, progress: Callable[[int], None] | None
) -> ImportResult:
    """The same file again: a new import recording the earlier one's dataset, every row unchanged (the
    counts a full read would give: inserted 0, unchanged = the rows the file holds)."""
    result = ImportResult(rows_seen=earlier.rows_seen, unchanged=earlier.rows_seen)
    result.unmapped.update(earlier.unmapped_instance_types or {})
    result.warnings = list(earlier.warnings)  # the file was not read again: the first import's warnings
    with transaction.atomic():
        billing_import = BillingImport.objects.create(
            source_format=earlier.source_format,
            file_name=file_name[:500],
            provider=earlier.provider,
            imported_by=user if getattr(user, "is_authenticated", False) else None,
            file_sha256=earlier.file_sha256,
            file_bytes=earlier.file_bytes,
            rows_seen=result.rows_seen,
            inserted=0,
            unchanged=result.unchanged,
            unmapped_instance_types=dict(result.unmapped.most_common()),
            warnings=result.warnings,
        )
        BillingImportFile.objects.bulk_create(_earlier_files(earlier, billing_import))
        check_spend_after_commit(billing_import.pk)
    if progress:
        progress(result.rows_seen)
    result.imports.append(billing_import.pk)
    return result


def _write_dataset(
    dataset: DatasetWriter,
    rows: pd.DataFrame,
    lanes: list[np.ndarray],
    seen: OccurrenceCounter,
    file: str,
    source_columns: Mapping[str, str],
) -> None:
    """Every row of the chunk, as read, into the import's dataset. Its identical rows are numbered (keys.
    numbered_lanes) and its keys finished on the writer's thread, while this one prepares the next chunk
    (issue 28: at 5M rows the importing thread, 8 CPU s, was the import's critical path, and the
    numbering 1.7 s of it, with the writer's thread at 4); the writer takes the chunks in order, as the
    counter needs them. An amount beyond int64 micro-units (about 9.2 trillion) is refused naming its row
    and column: no exact sum could hold it; so is a quantity beyond the decimal(38, 6) it is kept in
    (cells.py refuses it first)."""
    order = month_order(rows)  # the table made in month order: the writer slices each month's rows
    try:
        table = dataset_frame(rows, None, order)
    except MicrosOutOfRange as error:
        beyond = (
            f"{QUANTITY_LIMIT:.0e}, what a stored quantity holds"
            if error.column == QUANTITY_COLUMN
            else "9.2 trillion, where exact sums stop"
        )
        raise BillingFileError(
            file,
            f"{error.value} is beyond {beyond}",
            row=int(rows["source_row"].iloc[error.position]),
            column=source_columns.get(error.column, error.column),
        ) from None
    dataset.write_made(lambda: keyed(table, numbered_lanes(lanes, seen), order))


def _may_be_known(source_format: str, provider: str, file_bytes: int | None) -> bool:
    """Whether an import of this format and provider with a dataset may be this file (_known_file): one of
    the same size, or one whose size is not on record (a pull, an import before stop 46), or any where this
    file's size is not given. A file of another size is not one of them, whatever its checksum."""
    earlier = BillingImport.objects.filter(
        source_format=source_format, provider=provider, files__isnull=False
    )
    if file_bytes is not None:
        earlier = earlier.filter(Q(file_bytes=file_bytes) | Q(file_bytes__isnull=True))
    return earlier.exists()


def _checksum(sha256: str | Callable[[], str] | Future) -> Callable[[], str]:
    if isinstance(sha256, Future):
        return sha256.result
    return sha256 if callable(sha256) else (lambda: sha256)


@contextmanager
def _checksum_errors_first(sha256: str | Callable[[], str] | Future):
    """While a file no earlier import can be (_may_be_known) is read (parsed, normalized, the reader
    reading ahead) and stored, its checksum is computed on its own thread: the import no longer waits for
    the whole file to be hashed (issue 28: about a second at 5M CSV rows, with a core idle; stop 45 read
    only the first chunk meanwhile). An error of the checksum's pass (a byte that is not UTF-8, named by
    its line) is raised before one met reading or storing a chunk, as it was; where none is met,
    store_chunks raises it once every chunk is read. Should the same file be recorded meanwhile, it is
    still known before a row is recorded (_record_dataset keeps the earlier dataset, drops this one)."""
    try:
        yield
    except BillingFileError:
        if isinstance(sha256, Future):
            sha256.result()
        raise


def _stop(chunks: Iterable) -> None:
    """Stop reading a file begun (a known file, or an import that failed): its read-ahead thread ends."""
    close = getattr(chunks, "close", None)
    if close is not None:
        close()


@contextmanager
def _closed_on_error(chunks: Iterable):
    try:
        yield
    except BaseException:
        _stop(chunks)  # the read-ahead thread ends now, not when the reader is collected
        raise


@contextmanager
def _abandoned_on_error(dataset: DatasetWriter):
    try:
        yield dataset
    except BaseException:
        dataset.abandon()
        raise


def _record_dataset(billing_import: BillingImport, dataset: DatasetWriter, part: str = "") -> None:
    """The import's Parquet files in PostgreSQL. A file imported before (same checksum, format and export
    part, its dataset recorded and still on disk) keeps its first dataset: what was just written is
    dropped, nothing is added. Where the first dataset's files are gone (another BILLING_DATASET_DIR, a
    cleaned folder), the new one is kept (CI x35: a database reused with a fresh dataset folder pointed
    every review at missing files)."""
    candidates = (
        BillingImport.objects.filter(
            file_sha256=billing_import.file_sha256, source_format=billing_import.source_format
        )
        .exclude(file_sha256="")
        .exclude(pk=billing_import.pk)
        .filter(files__isnull=False)
        .distinct()
        .order_by("pk")
    )
    earlier = _of_part(candidates, part)
    if earlier is not None and all((dataset.root / f.path).is_file() for f in earlier.files.all()):
        dataset.abandon()
        files = _earlier_files(earlier, billing_import)
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


def new_rows(import_id: int) -> int:
    """The rows of the import's own dataset that no other recorded file of its months holds (by row key):
    the rows it brought in. None where it recorded an earlier import's dataset (the same file again)."""
    own = BillingImportFile.objects.filter(
        billing_import_id=import_id, path__startswith=f"import={import_id}/"
    )
    months = set(own.values_list("month", flat=True))
    others = (
        BillingImportFile.objects.filter(month__in=months)
        .exclude(path__startswith=f"import={import_id}/")
        .values_list("path", flat=True)
        .distinct()
    )
    root = ImportDatasets().root
    return count_new_rows(
        [str(root / path) for path in own.values_list("path", flat=True)],
        [str(root / path) for path in others if (root / path).is_file()],
    )


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
    """Store a Cost Explorer pull as its own dataset. Cost Explorer revises estimated days: the readers
    keep, for each charge day, only the latest pull's rows (review_sql.LATEST_PULLS), so a pull's days
    replace the earlier pulls' rows of the same days; its rows already stored by an earlier pull are
    counted unchanged."""
    from billing.imports.cost_explorer import normalized_rows

    frame = normalized_rows(list(page_iter), tag=tag)
    name = f"cost-explorer {start}..{end}" + (f" by tag {tag}" if tag else "")
    return store_chunks(
        [frame] if len(frame) else [], file_name=name, source_format="cost_explorer", provider="aws"
    )


def _earlier_files(earlier: BillingImport, billing_import: BillingImport) -> list[BillingImportFile]:
    """The earlier import's dataset files, recorded again for `billing_import` (the same file imported twice
    shares one dataset: nothing is written again)."""
    return [
        BillingImportFile(
            billing_import=billing_import, path=f.path, month=f.month, rows=f.rows, size_bytes=f.size_bytes
        )
        for f in earlier.files.all()
    ]
