"""`manage.py make_demo_billing [--seed N] [--months 6] [--start YYYY-MM] --output FILE`."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from billing.demo import CREDIT, write_demo

MAX_MONTHS = 36


class Command(BaseCommand):
    help = (
        "Write a demo FOCUS 1.2 billing file and a matching GPU utilization file (<output>_utilization.csv)."
    )

    def add_arguments(self, parser):
        parser.add_argument("--seed", type=int, default=7)
        parser.add_argument("--months", type=int, default=6)
        parser.add_argument(
            "--start", default="", help="first month, YYYY-MM (default: --months before this one)"
        )
        parser.add_argument("--output", required=True)

    def handle(self, *args, **options):
        months = options["months"]
        if not 1 <= months <= MAX_MONTHS:
            raise CommandError(f"--months must be 1..{MAX_MONTHS}, got {months}")
        start = None
        if options["start"]:
            try:
                start = dt.datetime.strptime(options["start"], "%Y-%m").date()
            except ValueError:
                raise CommandError(f"--start must be YYYY-MM, got {options['start']!r}") from None
        path, util, rows = write_demo(
            Path(options["output"]), seed=options["seed"], months=months, start=start
        )
        self.stdout.write(
            f"wrote {rows} FOCUS rows to {path} and utilization to {util} (columns: {CREDIT} 1.2)"
        )
