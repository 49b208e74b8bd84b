"""`manage.py spend_review --from YYYY-MM-DD --to YYYY-MM-DD [--team T] [--allocation RULE] [--format json|table]`
(--to exclusive)."""

from __future__ import annotations

import datetime as dt
import json

from django.core.management.base import BaseCommand, CommandError

from billing.review.engine import ReviewInputError
from billing.review.report import review_table_text
from billing.review.service import build_review, make_request
from gpuledger.input_bounds import year_problem


def _date(text: str, option: str) -> dt.date:
    try:
        day = dt.date.fromisoformat(text)
    except ValueError:
        raise CommandError(f"{option} must be YYYY-MM-DD, got {text!r}") from None
    problem = year_problem(day.year)  # the API's bound: 2300 overflowed the review's timestamps
    if problem:
        raise CommandError(f"{option}: {problem}")
    return day


class Command(BaseCommand):
    help = "GPU spend review for a period: breakdowns, unused commitments, idle GPU-hours and savings."
    # A query, not a deployment step: the system checks load every view (the URLconf), about half of a
    # bare run; `manage.py check` and migrate/runserver still run them (issue 30, benchmarks/cli_bench.py).
    requires_system_checks: list[str] = []

    def add_arguments(self, parser):
        parser.add_argument("--from", dest="start", required=True)
        parser.add_argument("--to", dest="end", required=True, help="exclusive")
        parser.add_argument("--team", default="")
        parser.add_argument("--project", default="")
        parser.add_argument("--provider", default="")
        parser.add_argument("--currency", default="USD")
        parser.add_argument("--format", choices=["json", "table"], default="table")
        parser.add_argument(
            "--allocation",
            default="",
            metavar="RULE",
            help="showback of shared and idle GPU cost: proportional (default), even or unallocated",
        )

    def handle(self, *args, **options):
        try:
            request = make_request(
                start=_date(options["start"], "--from"),
                end=_date(options["end"], "--to"),
                team=options["team"],
                project=options["project"],
                provider=options["provider"],
                currency=options["currency"],
                allocation=options["allocation"],
            )
            review = build_review(request)
        except ReviewInputError as error:
            raise CommandError(str(error)) from None
        if options["format"] == "json":
            self.stdout.write(json.dumps(review, indent=2))
        else:
            self.stdout.write(review_table_text(review))
