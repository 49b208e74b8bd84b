"""python manage.py import_prices FILE [--format skypilot|generic|spot-advisor] [--provider NAME]

Loads one provider price file (or an AWS Spot Advisor JSON snapshot), all or nothing: a malformed
row stops the import with its file, line and column and nothing from the file is stored. Prints rows
inserted / unchanged / rejected. The format is guessed when --format is not given (a .json file is a
Spot Advisor snapshot; a CSV by its header). See docs/provider-prices.md.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError
from django.utils import timezone

from pricing.ingest import FUTURE_ALLOWANCE, ingest_price_records, spot_advisories_upsert
from pricing.models import FxRate
from pricing.price_checks import Refusals
from pricing.providers.generic_csv import GENERIC_HEADER, GenericReadStats, read_generic_csv
from pricing.providers.records import SourceRowError
from pricing.providers.skypilot_csv import SkyPilotReadStats, read_skypilot_csv
from pricing.providers.spot_advisor import read_spot_advisor, snapshot_time
from pricing.refresh_changes import CoverageTap
from scheduler.models import PriceRefresh, RefreshStatus
from scheduler.run_log import refresh_logged


class Command(BaseCommand):
    help = (
        "Import a provider price file (SkyPilot vms.csv, gpuledger's generic CSV) or an AWS Spot Advisor "
        "JSON snapshot, all or nothing."
    )

    def add_arguments(self, parser):
        parser.add_argument("file", type=Path)
        parser.add_argument(
            "--format",
            choices=["skypilot", "generic", "spot-advisor"],
            help="Default: spot-advisor for a .json file, else guessed from the CSV header.",
        )
        parser.add_argument(
            "--provider",
            help="Provider slug for a SkyPilot file (default: its folder name); a Spot Advisor file is aws.",
        )
        parser.add_argument(
            "--observed-at",
            help="ISO 8601 time the snapshot was taken (SkyPilot default: the file's mtime; Spot Advisor "
            "default: the date in its name, e.g. spot-advisor-data-2022-07-23.json, else the day of its mtime).",
        )

    def handle(
        self, *args, file: Path, format: str | None, provider: str | None, observed_at: str | None, **options
    ):
        if not file.is_file():
            raise CommandError(f"{file}: no such file")
        if not file.read_bytes().strip():
            raise CommandError(f"{file}: empty file; nothing was stored")
        refresh = PriceRefresh.objects.create(source=f"import:{file.name}"[:50], region="")
        try:
            self._import(file, format, provider, observed_at, refresh)
        except CommandError as error:
            if refresh.status == RefreshStatus.RUNNING:
                _finish(refresh, RefreshStatus.FAILED, error=str(error))
            raise
        except SourceRowError as error:
            _finish(refresh, RefreshStatus.FAILED, error=str(error))
            raise CommandError(f"{error}\nNothing from {file} was stored.") from None
        except Exception as error:  # never a traceback, never a row left "running": say what and where
            message = f"{file}: {type(error).__name__}: {_first_line(error)}"
            _finish(refresh, RefreshStatus.FAILED, error=message)
            raise CommandError(f"{message}\nNothing from {file} was stored.") from None

    def _import(
        self,
        file: Path,
        format: str | None,
        provider: str | None,
        observed_at: str | None,
        refresh: PriceRefresh,
    ) -> None:
        file_format = format or _guess_format(file)
        if file_format == "spot-advisor":
            self._import_spot_advisor(file, provider, observed_at, refresh)
            return
        records, rejected = self._records(file, file_format, provider, observed_at)
        tap = CoverageTap()  # the providers the file priced, for the log line
        result = ingest_price_records(tap.tap(records), refresh=refresh)
        rejected_total = result.rejected + rejected()
        refresh.rows_seen, refresh.rows_inserted = result.seen + rejected(), result.inserted
        refresh.rows_unchanged, refresh.rows_rejected, refresh.rows_suspect = (
            result.unchanged,
            rejected_total,
            result.suspect,
        )
        _finish(refresh, RefreshStatus.SUCCEEDED, providers=tap.offers)
        self.stdout.write(
            f"{file}: {result.inserted} inserted, {result.unchanged} unchanged, {rejected_total} rejected"
            + (f", {result.suspect} held back as suspect" if result.suspect else "")
        )
        for name, rows in sorted(result.unmapped_gpu_names.items()):
            self.stdout.write(f"  unmapped accelerator {name} ({rows} instance types): map it in the admin")

    def _import_spot_advisor(
        self, file: Path, provider: str | None, observed_at: str | None, refresh: PriceRefresh
    ) -> None:
        """Every Linux band of the snapshot, dated by --observed-at, the file name, or its mtime."""
        if provider not in (None, "aws"):
            _finish(refresh, RefreshStatus.FAILED, error=f"--provider {provider!r} for a Spot Advisor file")
            raise CommandError(f"--provider {provider!r}: a Spot Advisor snapshot describes AWS only")
        snapshot = _snapshot_time(file, observed_at, default=snapshot_time(file))
        refusals = Refusals()
        count = spot_advisories_upsert(read_spot_advisor(file, observed_at=snapshot, refusals=refusals))
        refresh.rows_seen = count.created + count.updated + count.unchanged + refusals.total
        refresh.rows_inserted, refresh.rows_unchanged = count.changed, count.unchanged
        refresh.rows_rejected = refresh.rows_refused = refusals.total
        refresh.refused_reasons = refusals.as_json()
        _finish(refresh, RefreshStatus.SUCCEEDED, providers=["aws"])
        for reason, entry in refusals.as_json().items():
            self.stdout.write(f"  refused ({reason}): {entry['count']}, e.g. {entry['examples'][0]}")
        self.stdout.write(
            f"{file}: {count.created} inserted, {count.unchanged} unchanged, {refusals.total} rejected"
            + (f", {count.updated} updated" if count.updated else "")
            + f" (spot advisories as of {snapshot:%Y-%m-%d})"
        )

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
    if file.suffix.lower() == ".json":
        return "spot-advisor"
    with file.open("rb") as handle:  # the header only; the reader reports a bad byte where it is
        header = handle.readline(4096).decode("utf-8-sig", errors="replace").strip()
    return "generic" if header == ",".join(GENERIC_HEADER) else "skypilot"


def _first_line(error: BaseException, limit: int = 300) -> str:
    text = str(error).strip().splitlines()
    return (text[0] if text else "")[:limit]


def _snapshot_time(file: Path, observed_at: str | None, *, default: dt.datetime | None = None) -> dt.datetime:
    """--observed-at, else `default`, else the file's modification time."""
    if observed_at is None and default is not None:
        return default
    if observed_at is None:
        return dt.datetime.fromtimestamp(file.stat().st_mtime, tz=dt.UTC).replace(microsecond=0)
    try:
        value = dt.datetime.fromisoformat(observed_at)
    except ValueError:
        raise CommandError(f"--observed-at {observed_at[:40]!r} is not an ISO 8601 time") from None
    value = value if value.tzinfo else value.replace(tzinfo=dt.UTC)
    if value > timezone.now() + FUTURE_ALLOWANCE:
        raise CommandError(f"--observed-at {observed_at[:40]!r} is more than a day ahead of now")
    return value


def _finish(refresh: PriceRefresh, status: str, *, error: str = "", providers=()) -> None:
    refresh.status, refresh.error, refresh.finished_at = status, error, timezone.now()
    refresh.save()
    refresh_logged(refresh, providers=providers)
