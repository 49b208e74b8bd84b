"""Which dataset files hold rows of which billing periods (models.BillingFilePeriod), so that the invoice
view reads only the files of the billing periods asked (issue 28, item 1: "reading only the months it
needs").

The datasets are partitioned by charge month (storage/datasets.py): every reader but the invoice view asks
for charge days. A billing period's rows are not all charged in its own month: a correction to a closed
period is charged in the month it corrects and billed on a later invoice (FOCUS's closed-period
corrections), an Azure MCA billing period need not start on the 1st, and nothing bounds how late a
correction may land. So no rule on charge months picks a billing period's files honestly; the billing
periods of each file are recorded instead, once, from the file itself (one DuckDB pass over two columns),
by the post-import task, or on the first read for a file recorded without them.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable

from billing.models import BillingFilePeriod, BillingImportFile
from billing.storage import review_sql
from billing.storage.duckdb_review import _connection
from billing.storage.import_datasets import ImportDatasets
from billing.storage.location import relative_to_root


def index_files(records: Iterable[BillingImportFile], store: ImportDatasets | None = None) -> int:
    """Record the billing periods of each of `records` (BillingImportFile rows); a path another record
    already has them for (the same file imported twice) is copied, not read again; a file not on disk is
    left without (the readers leave it out too). The BillingFilePeriod rows written."""
    store = store or ImportDatasets()
    by_path: dict[str, list[int]] = {}
    for record in records:
        by_path.setdefault(record.path, []).append(record.pk)
    if not by_path:
        return 0
    periods: dict[str, set[dt.date]] = {}
    for path, period in BillingFilePeriod.objects.filter(file__path__in=by_path).values_list(
        "file__path", "billing_period"
    ):
        periods.setdefault(path, set()).add(period)
    unread = {str(store.root / path): path for path in by_path if path not in periods}
    on_disk = [name for name, path in unread.items() if (store.root / path).is_file()]
    if on_disk:
        connection = _connection()
        try:
            found = connection.execute(review_sql.FILE_BILLING_PERIODS, {"files": on_disk}).fetchall()
        finally:
            connection.close()
        for name, month in found:
            path = relative_to_root(store.root, name)  # DuckDB's name of it (an s3:// URL on S3)
            periods.setdefault(path, set()).add(dt.date.fromisoformat(f"{month}-01"))
    rows = [
        BillingFilePeriod(file_id=pk, billing_period=period)
        for path, pks in by_path.items()
        for pk in pks
        for period in sorted(periods.get(path, ()))
    ]
    BillingFilePeriod.objects.bulk_create(rows, ignore_conflicts=True)
    return len(rows)


def billing_period_files(start: dt.date, end: dt.date, store: ImportDatasets | None = None) -> list[str]:
    """The files on disk with rows of the billing periods starting in [start, end) (first days of
    months), as DuckDB reads them. Files recorded without their billing periods are indexed first; one
    that still has none (a file of no rows) is read, never silently dropped."""
    store = store or ImportDatasets()
    unindexed = BillingImportFile.objects.filter(billing_periods__isnull=True)
    if unindexed.exists():
        index_files(unindexed.only("pk", "path"), store)
    first = start.replace(day=1)
    asked = BillingImportFile.objects.filter(
        billing_periods__billing_period__gte=first, billing_periods__billing_period__lt=end
    )
    still = BillingImportFile.objects.filter(billing_periods__isnull=True)
    paths = sorted(set(asked.values_list("path", flat=True)) | set(still.values_list("path", flat=True)))
    return [str(path) for path in store.on_disk([store.root / path for path in paths])]
