"""The scheduled import from where billing exports land (issue 28, item 3): each enabled
BillingExportSource's newest delivery of every month is imported exactly once.

- A delivery is known by its manifest's executionId / assemblyId (BillingExportDelivery, unique per
  source): a second run finds every delivery known and imports nothing.
- A later delivery of a month already imported (AWS refreshes the open month daily and restates closed
  ones) replaces it in one transaction: the earlier delivery's imports and their rows are deleted and the
  new files imported, or, on any error, nothing changes. The new delivery is flagged `restated`.
- A bad file or manifest is the source's `last_error` (shown on /status/); the other sources still run.
"""

from __future__ import annotations

import datetime as dt
import logging
import tempfile
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from django.db import transaction
from django.utils import timezone

from billing.imports.importer import import_file
from billing.imports.records import BillingFileError
from billing.imports.s3_exports import Delivery, ExportManifestError, latest_deliveries
from billing.models import (
    BillingExportDelivery,
    BillingExportSource,
    BillingImport,
    BillingImportFile,
    DailySpend,
)

logger = logging.getLogger(__name__)


@dataclass
class SourceRun:
    source: str
    imported: list[str] = field(default_factory=list)  # "YYYY-MM delivery-id"
    restated: list[str] = field(default_factory=list)
    known: int = 0
    error: str = ""

    def as_dict(self) -> dict:
        return {
            "source": self.source,
            "imported": self.imported,
            "restated": self.restated,
            "known": self.known,
            **({"error": self.error} if self.error else {}),
        }


def export_sources_sync(*, s3=None) -> dict:
    """Every enabled source once; off (nothing read) while none is enabled."""
    sources = list(BillingExportSource.objects.filter(enabled=True).values_list("pk", flat=True))
    if not sources:
        return {"off": "no enabled billing export source (admin: Billing export sources)"}
    client = s3 or _s3_client()
    return {"sources": [export_source_sync(source_id=pk, s3=client).as_dict() for pk in sources]}


def export_source_sync(*, source_id: int, s3) -> SourceRun:
    source = BillingExportSource.objects.get(pk=source_id)
    run = SourceRun(source.name)
    try:
        deliveries = latest_deliveries(s3, source.bucket, source.prefix)
        known = set(source.deliveries.values_list("delivery_id", flat=True))
        for delivery in deliveries:
            if delivery.delivery_id in known:
                run.known += 1
                continue
            restated = _import_delivery(source, delivery, s3)
            label = f"{delivery.month:%Y-%m} {delivery.delivery_id}"
            run.imported.append(label)
            if restated:
                run.restated.append(label)
    except (ExportManifestError, BillingFileError) as error:
        run.error = str(error)
    except Exception as error:  # S3 unreachable, access denied: recorded for /status/, then raised
        _record_check(source, f"{type(error).__name__}: {error}")
        raise
    _record_check(source, run.error)
    return run


def _import_delivery(source: BillingExportSource, delivery: Delivery, s3) -> bool:
    """Download the delivery's files, then replace its month in one transaction; True when restated."""
    with tempfile.TemporaryDirectory(prefix="gpuledger-export-") as folder:
        paths = []
        for number, key in enumerate(delivery.data_keys):
            path = Path(folder) / f"{number:05d}-{PurePosixPath(key).name}"
            s3.download_file(source.bucket, key, str(path))
            paths.append(path)
        with transaction.atomic():
            BillingExportSource.objects.select_for_update().get(pk=source.pk)  # one run per source at a time
            if source.deliveries.filter(delivery_id=delivery.delivery_id).exists():
                return False  # another run imported it meanwhile
            earlier = list(source.deliveries.filter(billing_month=delivery.month, replaced=False))
            replace_imports(BillingImport.objects.filter(export_deliveries__in=earlier))
            BillingExportDelivery.objects.filter(pk__in=[old.pk for old in earlier]).update(replaced=True)
            results = [
                import_file(path, fmt=source.export_format, provider=source.provider) for path in paths
            ]
            if earlier:
                BillingImport.objects.filter(pk__in=[pk for r in results for pk in r.imports]).update(
                    restated=True
                )
            record = BillingExportDelivery.objects.create(
                source=source,
                delivery_id=delivery.delivery_id,
                billing_month=delivery.month,
                manifest_key=delivery.manifest_key,
                rows=sum(result.rows_seen for result in results),
                restated=bool(earlier),
            )
            record.imports.set([pk for result in results for pk in result.imports])
    logger.info("imported %s %s of %s", source.name, delivery.month, delivery.delivery_id)
    return bool(earlier)


def replace_imports(imports, months=None) -> set[int]:
    """Take out what a restatement replaces, in the caller's transaction (a scheduled delivery's month,
    `import_billing --restate`'s months): the `imports`' dataset files of `months` (all: None) are no
    longer recorded, and an import left without files is deleted; their files go once the transaction
    commits (apps.py). The ids of the imports touched."""
    files = BillingImportFile.objects.filter(billing_import__in=imports)
    if months is None:
        touched = set(imports.values_list("pk", flat=True))
        BillingImport.objects.filter(pk__in=touched).delete()  # their files' records go with them (CASCADE)
        return touched
    files = files.filter(month__in=months)
    touched = set(files.values_list("billing_import_id", flat=True))
    files.delete()
    for month in months:  # their daily summary of those months goes with the files (models.DailySpend)
        following = (month.replace(day=1) + dt.timedelta(days=32)).replace(day=1)
        DailySpend.objects.filter(billing_import__in=touched, day__gte=month, day__lt=following).delete()
    BillingImport.objects.filter(pk__in=touched, files__isnull=True).delete()
    return touched


def _record_check(source: BillingExportSource, error: str) -> None:
    BillingExportSource.objects.filter(pk=source.pk).update(last_checked_at=timezone.now(), last_error=error)


def _s3_client():
    import boto3

    return boto3.client("s3")
