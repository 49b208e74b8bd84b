"""`manage.py import_billing FILE... [--format focus|cur|azure|utilization] [--provider NAME] [--restate]`."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from billing.imports.importer import FORMAT_NAMES, import_files
from billing.imports.restate import import_restating
from billing.models import BillingImport


class Command(BaseCommand):
    help = (
        "Import billing exports (FOCUS, AWS CUR 2.0, Azure cost details) or GPU utilization; each file all "
        "or nothing."
    )

    def add_arguments(self, parser):
        parser.add_argument("files", nargs="+")
        parser.add_argument(
            "--format",
            choices=list(FORMAT_NAMES),
            default=None,
            help="default: detected",
        )
        parser.add_argument(
            "--provider", default="", help="provider name where the file has none (FOCUS ProviderName)"
        )
        parser.add_argument("--no-progress", action="store_true")
        parser.add_argument(
            "--restate",
            action="store_true",
            help="replace the charge months each file holds where an earlier import of the same billing "
            "source (provider and billing account) has them (default: both kept)",
        )

    def handle(self, *args, **options):
        bars = []

        def progress_factory(total: int, name: str):
            bar = tqdm(total=total, desc=name, unit="rows", file=self.stderr._out)
            bars.append(bar)
            return bar.update

        result = import_files(
            options["files"],
            fmt=options["format"],
            provider=options["provider"],
            # a bar needs the file's rows counted first: a pass over the file only when it is shown
            progress_factory=None if options["no_progress"] else progress_factory,
            import_one=import_restating if options["restate"] else None,
        )
        for bar in bars:
            bar.close()
        for name, rows in result.unmapped.most_common():
            self.stderr.write(
                f"unmapped instance type {name} ({rows} rows): kept without a GPU; map it in the catalog"
            )
        for warning in result.warnings:
            self.stderr.write(f"warning: {warning}")
        self.stdout.write(result.line())
        for restated in BillingImport.objects.filter(pk__in=result.imports, restated=True):
            self.stdout.write(f"restated: {restated.file_name} replaced the earlier import of its months")
        if result.errors:
            raise CommandError("\n".join(result.errors))
