"""Import benchmark runner documents: `manage.py import_benchmark FILE... [--gpu SLUG] [--team SLUG]`.
A run imported without --team has no team: admins see it, engineers do not (the calibration pools it)."""

from __future__ import annotations

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from procurement.benchmarks.document import BenchmarkDocumentError
from procurement.services.benchmarks import benchmark_import


class Command(BaseCommand):
    help = "Import benchmark JSON documents (docs/benchmark-format.md); re-importing a file adds nothing."

    def add_arguments(self, parser):
        parser.add_argument("files", nargs="+", type=Path)
        parser.add_argument("--gpu", help="catalog GPU slug, when the driver's GPU name is not mapped")
        parser.add_argument("--team", help="the team the runs belong to (its engineers see them)")

    def handle(self, *args, files, gpu=None, team=None, **options):
        from gpuledger.accounts.models import Team

        owner_team = Team.objects.filter(slug=team).first() if team else None
        if team and owner_team is None:
            raise CommandError(f"--team: no team {team!r}")
        inserted = unchanged = 0
        for path in files:
            try:
                data = path.read_bytes()
            except OSError as error:
                raise CommandError(f"{path}: {error.strerror}") from None
            try:
                outcome = benchmark_import(data, source=path.name, gpu_slug=gpu, team=owner_team)
            except BenchmarkDocumentError as error:
                raise CommandError(str(error)) from None
            inserted, unchanged = inserted + outcome.created, unchanged + (not outcome.created)
            row = outcome.result
            costs = row.unit_costs.get("per_million_tokens")
            cost_text = f", {costs} {row.currency} per 1M tokens" if costs else ""
            self.stdout.write(
                f"{path.name}: benchmark {row.pk} ({'new' if outcome.created else 'already stored'}){cost_text}"
            )
        self.stdout.write(f"inserted {inserted}, unchanged {unchanged}")
