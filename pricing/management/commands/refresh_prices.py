"""python manage.py refresh_prices --source aws --regions us-east-1,us-west-2

Runs the same refresh code as the Celery beat tasks, here and now, one (source, region) after the
other, with a progress bar. Each run is recorded as a PriceRefresh row like a scheduled one.

On a machine without internet access, `--source aws-spot-advisor --file spot-advisor-data.json` reads a
saved copy of the advisor instead of downloading it (dated by the date in its name, else by the day the
file was written).
"""

from __future__ import annotations

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from pricing.sources.refresh import refresh_run
from pricing.sources.registry import GLOBAL_REGION, Source, expand_sources, spot_advisor_file_source

FILE_SOURCE = "aws-spot-advisor"


class Command(BaseCommand):
    help = (
        "Refresh prices from a source (aws, aws-spot, aws-on-demand, aws-savings-plans, aws-spot-advisor,"
        " vast-market, azure-retail, gcp-billing, lambda-cloud) by hand."
    )

    def add_arguments(self, parser):
        parser.add_argument("--source", required=True, help="aws (all AWS sources) or one source name.")
        parser.add_argument(
            "--regions", default="", help="Comma-separated regions; default: the configured ones."
        )
        parser.add_argument("--no-progress", action="store_true", help="No progress bar (logs, CI).")
        parser.add_argument(
            "--file",
            type=Path,
            help=f"With --source {FILE_SOURCE} only: read this saved spot-advisor-data.json, no download.",
        )

    def handle(self, *args, source, regions, no_progress, file, **options):
        if file is not None:
            self._refresh_from_file(source, file, no_progress)
            return
        try:
            chosen = expand_sources(source)
        except ValueError as error:
            raise CommandError(str(error)) from None
        requested = [r.strip() for r in regions.split(",") if r.strip()]
        failures = 0
        for item in chosen:
            if not item.enabled():  # by hand as on schedule: a source that is off does not run
                self.stdout.write(self.style.ERROR(f"{item.name}: {item.off_reason}"))
                failures += 1
                continue
            # The spot advisor is one file for all regions; other sources run region by region.
            for region in item.regions() if item.kind == "spot_advisory" else requested or item.regions():
                failures += self._refresh(item.name, region, no_progress)
        if failures:
            raise CommandError(
                f"{failures} refresh(es) failed; see the lines above and the PriceRefresh rows."
            )

    def _refresh_from_file(self, source: str, file: Path, no_progress: bool) -> None:
        if source != FILE_SOURCE:
            raise CommandError(f"--file goes with --source {FILE_SOURCE} only (got --source {source})")
        if not file.is_file():
            raise CommandError(f"{file}: no such file")
        if self._refresh(spot_advisor_file_source(file), GLOBAL_REGION, no_progress):
            raise CommandError("The refresh failed; see the line above and its PriceRefresh row.")

    def _refresh(self, source: str | Source, region: str, no_progress: bool) -> int:
        name = source.name if isinstance(source, Source) else source
        label = f"{name} {region}".strip()

        def progress(rows):
            return tqdm(rows, desc=label, unit=" rows", disable=no_progress, file=self.stderr._out)

        try:
            refresh = refresh_run(source, region, progress=progress)
        except Exception as error:
            self.stdout.write(self.style.ERROR(f"{label}: failed: {type(error).__name__}: {error}"))
            return 1
        self.stdout.write(
            f"{label}: {refresh.status}: {refresh.rows_inserted} inserted, {refresh.rows_unchanged} unchanged, "
            f"{refresh.rows_rejected} rejected, {refresh.rows_suspect} held back as suspect"
            + (f" ({refresh.error})" if refresh.error else "")
        )
        return 0
