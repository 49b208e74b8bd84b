"""`import_billing --restate`: a file that restates months already imported from the same billing source
replaces them (issue 28). Without it a second file of a month is kept beside the first (both counted,
each row key once); the scheduled S3 import replaces a month on its own (scheduled.py), and this reuses
its replacement (`replace_imports`).

A billing source is a (provider, billing account) pair of the rows: an earlier import of the same format
whose dataset holds rows of one of the new file's sources, in one of the charge months the new file
holds, loses those months; an earlier import left without a month is deleted. The import and the
replacement are one transaction: on any error nothing changes. The new import is flagged `restated`
when it replaced something.
"""

from __future__ import annotations

from pathlib import Path

from django.db import transaction

from billing.imports.importer import import_file
from billing.imports.scheduled import replace_imports
from billing.models import BillingImport, BillingImportFile
from billing.storage.duckdb_review import billing_sources
from billing.storage.import_datasets import ImportDatasets
from billing.storage.store import ImportResult, new_rows


def import_restating(path: Path, **options) -> ImportResult:
    """import_file(path, **options), replacing the months it restates (nothing to restate: imported as
    without --restate)."""
    with transaction.atomic():
        result = import_file(path, **options)
        new = BillingImport.objects.filter(pk__in=result.imports)
        files = BillingImportFile.objects.filter(billing_import__in=new)
        months = set(files.values_list("month", flat=True))
        root = ImportDatasets().root
        sources = set().union(*billing_sources([str(root / f.path) for f in files]).values())
        earlier = _same_sources(new, months, sources, root)
        if earlier:
            replace_imports(BillingImport.objects.filter(pk__in=earlier), months)
            for billing_import in new:  # the rows it brought in, now that the replaced ones are gone
                billing_import.restated = True
                billing_import.inserted = new_rows(billing_import.pk)
                billing_import.unchanged = billing_import.rows_seen - billing_import.inserted
                billing_import.save(update_fields=["restated", "inserted", "unchanged"])
            result.inserted = sum(i.inserted for i in new)
            result.unchanged = sum(i.unchanged for i in new)
    return result


def _same_sources(new, months: set, sources: set[tuple[str, str]], root) -> set[int]:
    """The earlier imports of the same format with rows of one of `sources` charged in one of `months`."""
    if not months or not sources:
        return set()
    formats = set(new.values_list("source_format", flat=True))
    candidates = (
        BillingImportFile.objects.filter(month__in=months, billing_import__source_format__in=formats)
        .exclude(billing_import__in=new)
        .values_list("billing_import_id", "path")
    )
    by_file: dict[str, set[int]] = {}
    for pk, path in candidates:
        by_file.setdefault(str(root / path), set()).add(pk)
    held = billing_sources(list(by_file))
    return {pk for name, pks in by_file.items() if held[name] & sources for pk in pks}
