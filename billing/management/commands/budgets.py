"""`manage.py budgets [--month YYYY-MM] [--team T] [--format json|table]`: the month's GPU budgets and their
state (burn, forecast to month end by linear run-rate, overrun date); `--check` also sends the 80% and
100% e-mails not sent yet (each once per budget, as the worker does after an import)."""

from __future__ import annotations

import datetime as dt
import json

from django.core.management.base import BaseCommand, CommandError

from billing.finance.budget_service import budget_alerts_check, parse_month
from billing.finance.sections import budget_states
from billing.review.engine import ReviewInputError


class Command(BaseCommand):
    help = "List GPU budgets of a month with burn, forecast, overrun date and state."
    # A query, not a deployment step: the system checks load every view (the URLconf), about half of a
    # bare run; `manage.py check` and migrate/runserver still run them (issue 30, benchmarks/cli_bench.py).
    requires_system_checks: list[str] = []

    def add_arguments(self, parser):
        parser.add_argument("--month", default="", help="YYYY-MM (default: this month)")
        parser.add_argument("--team", default="")
        parser.add_argument("--format", choices=["json", "table"], default="table")
        parser.add_argument("--check", action="store_true", help="send the threshold e-mails not sent yet")

    def handle(self, *args, **options):
        try:
            month = parse_month(options["month"]) if options["month"] else dt.date.today().replace(day=1)
            if options["check"]:
                for alert in budget_alerts_check(month):
                    self.stderr.write(f"e-mail queued: {alert}")
            states = budget_states([month], (options["team"],) if options["team"] else ())
        except ReviewInputError as error:
            raise CommandError(str(error)) from None
        if options["format"] == "json":
            self.stdout.write(json.dumps({"month": f"{month:%Y-%m}", "budgets": states}, indent=2))
            return
        if not states:
            self.stdout.write(f"no budget for {month:%Y-%m}")
        for s in states:
            self.stdout.write(
                f"{s['team']:<20} {s['month']} budget {s['amount']:>14} {s['currency']}  burn {s['burn']:>14} "
                f"({s['burn_pct'] or 'n/a'}%)  forecast {s['forecast']:>14} ({s['forecast_pct'] or 'n/a'}%)  "
                f"days {s['days_so_far']}/{s['days_in_month']}  overrun {s['overrun_date'] or '-'}  {s['state']}"
            )
        self.stdout.write(f"forecast: {states[0]['forecast_method']}" if states else "")
