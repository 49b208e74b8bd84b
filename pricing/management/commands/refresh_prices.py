"""python manage.py refresh_prices --source aws --regions us-east-1,us-west-2

Runs the same refresh code as the Celery beat tasks, here and now, one (source, region) after the
other, with a progress bar. Each run is recorded as a PriceRefresh row like a scheduled one.
"""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from scheduler.refresh import refresh_run
from scheduler.sources import expand_sources


class Command(BaseCommand):
    help = "Refresh prices from a source (aws, aws-spot, aws-on-demand, aws-spot-advisor) by hand."

    def add_arguments(self, parser):
        parser.add_argument("--source", required=True, help="aws (all AWS sources) or one source name.")
        parser.add_argument(
            "--regions", default="", help="Comma-separated regions; default: the configured ones."
        )
        parser.add_argument("--no-progress", action="store_true", help="No progress bar (logs, CI).")

    def handle(self, *args, source, regions, no_progress, **options):
        try:
            chosen = expand_sources(source)
        except ValueError as error:
            raise CommandError(str(error)) from None
        requested = [r.strip() for r in regions.split(",") if r.strip()]
        failures = 0
        for item in chosen:
            # The spot advisor is one file for all regions; other sources run region by region.
            for region in item.regions() if item.kind == "spot_advisory" else requested or item.regions():
                failures += self._refresh(item.name, region, no_progress)
        if failures:
            raise CommandError(
                f"{failures} refresh(es) failed; see the lines above and the PriceRefresh rows."
            )

    def _refresh(self, source: str, region: str, no_progress: bool) -> int:
        label = f"{source} {region}".strip()

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
