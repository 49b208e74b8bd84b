"""python manage.py import_prices FILE [--format skypilot|generic] [--provider NAME]

Loads one provider price file, all or nothing: a malformed row stops the import with its file,
line and column and nothing from the file is stored. Prints rows inserted / unchanged / rejected.
The format is guessed from the header when --format is not given. See docs/provider-prices.md.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError
from django.utils import timezone

from pricing.ingest import ingest_price_records
from pricing.models import FxRate
from pricing.providers.generic_csv import GENERIC_HEADER, GenericReadStats, read_generic_csv
from pricing.providers.records import SourceRowError
from pricing.providers.skypilot_csv import SkyPilotReadStats, read_skypilot_csv
from scheduler.models import PriceRefresh, RefreshStatus


class Command(BaseCommand):
    help = "Import a provider price file (SkyPilot vms.csv or gpuledger's generic CSV), all or nothing."

    def add_arguments(self, parser):
        parser.add_argument("file", type=Path)
        parser.add_argument(
            "--format", choices=["skypilot", "generic"], help="Default: guessed from the header."
        )
        parser.add_argument(
            "--provider", help="Provider slug for a SkyPilot file (default: its folder name)."
        )
        parser.add_argument(
            "--observed-at", help="ISO 8601 time a SkyPilot snapshot was taken (default: the file's mtime)."
        )

    def handle(
        self, *args, file: Path, format: str | None, provider: str | None, observed_at: str | None, **options
    ):
        if not file.is_file():
            raise CommandError(f"{file}: no such file")
        file_format = format or _guess_format(file)
        refresh = PriceRefresh.objects.create(source=f"import:{file.name}"[:50], region="")
        try:
            records, rejected = self._records(file, file_format, provider, observed_at)
            result = ingest_price_records(records, refresh=refresh)
        except SourceRowError as error:
            _finish(refresh, RefreshStatus.FAILED, error=str(error))
            raise CommandError(f"{error}\nNothing from {file} was stored.") from None
        rejected_total = result.rejected + rejected()
        refresh.rows_seen, refresh.rows_inserted = result.seen + rejected(), result.inserted
        refresh.rows_unchanged, refresh.rows_rejected, refresh.rows_suspect = (
            result.unchanged,
            rejected_total,
            result.suspect,
        )
        _finish(refresh, RefreshStatus.SUCCEEDED)
        self.stdout.write(
            f"{file}: {result.inserted} inserted, {result.unchanged} unchanged, {rejected_total} rejected"
            + (f", {result.suspect} held back as suspect" if result.suspect else "")
        )
        for name, rows in sorted(result.unmapped_gpu_names.items()):
            self.stdout.write(f"  unmapped accelerator {name} ({rows} instance types): map it in the admin")

    def _records(self, file: Path, file_format: str, provider: str | None, observed_at: str | None):
        if file_format == "generic":
            stats = GenericReadStats()
            accepted = frozenset(FxRate.objects.values_list("currency", flat=True)) | {"USD"}
            return read_generic_csv(file, stats=stats, accepted_currencies=accepted), lambda: stats.rejected
        stats = SkyPilotReadStats()
        snapshot = _snapshot_time(file, observed_at)
        records = read_skypilot_csv(
            file, provider=provider or file.parent.name, observed_at=snapshot, stats=stats
        )
        return records, lambda: 0  # SkyPilot's empty prices are "no price", not rejections


def _guess_format(file: Path) -> str:
    with file.open(encoding="utf-8-sig") as handle:
        header = handle.readline().strip()
    return "generic" if header == ",".join(GENERIC_HEADER) else "skypilot"


def _snapshot_time(file: Path, observed_at: str | None) -> dt.datetime:
    if observed_at is None:
        return dt.datetime.fromtimestamp(file.stat().st_mtime, tz=dt.UTC).replace(microsecond=0)
    try:
        value = dt.datetime.fromisoformat(observed_at)
    except ValueError:
        raise CommandError(f"--observed-at {observed_at!r} is not an ISO 8601 time") from None
    return value if value.tzinfo else value.replace(tzinfo=dt.UTC)


def _finish(refresh: PriceRefresh, status: str, *, error: str = "") -> None:
    refresh.status, refresh.error, refresh.finished_at = status, error, timezone.now()
    refresh.save()
