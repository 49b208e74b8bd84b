"""`manage.py daily_spend_backfill [--all]`: write the daily summary (models.DailySpend) of the imports
made before it existed, from their dataset files; `--all` writes every import's again. Idempotent: an
import's summary is replaced whole, so a second run changes nothing."""

from __future__ import annotations

from django.core.management.base import BaseCommand

from billing.storage.daily_spend import daily_spend_backfill


class Command(BaseCommand):
    help = (
        "Write the daily team x GPU x scope spend summary of imports that have none (--all: of every import)."
    )

    def add_arguments(self, parser):
        parser.add_argument("--all", action="store_true", help="rewrite every import's summary")

    def handle(self, *args, **options):
        imports, rows = daily_spend_backfill(only_missing=not options["all"])
        self.stdout.write(f"daily spend: {rows} rows written for {imports} import(s)")
