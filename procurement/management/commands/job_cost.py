"""python manage.py job_cost: audit one job's cost from its price, hours and extras.

compute = P·H·N, setup = P·S·N, reruns = F·compute, storage = G·R·M. An omitted flag is zero: the
planning defaults of docs/cost-model.md are not applied here, so the output is the typed formula.
"""

import json
from decimal import Decimal

from django.core.management.base import BaseCommand, CommandError

from procurement.costing.job import JobCostInput, job_cost
from procurement.costing.values import CostInputError, to_decimal

# Engine field -> the flag a person typed, so an error names what they can fix.
FLAGS = {
    "price_per_hour": "--price-per-hour",
    "hours": "--hours",
    "instances": "--instances",
    "setup_hours": "--setup-hours",
    "storage_gb": "--storage-gb",
    "storage_rate_per_gb_month": "--storage-rate",
    "storage_months": "--storage-months",
    "rerun_fraction": "--rerun-fraction",
    "currency": "--currency",
}
REPORT_KEYS = ("compute", "setup", "storage", "reruns", "total", "currency")


class Command(BaseCommand):
    help = "Price one job: compute, setup, storage and reruns, as decimal strings."
    # No system checks: they import every URL conf and view, most of a one-shot command's start-up
    # (issue 9); `manage.py check` runs them in CI and at deploy.
    requires_system_checks: list[str] = []

    def add_arguments(self, parser):
        parser.add_argument("--price-per-hour", required=True, help="P: price per instance-hour")
        parser.add_argument("--hours", required=True, help="H: wall-clock hours of the run")
        parser.add_argument("--instances", default="1", help="N: instances (default 1)")
        parser.add_argument(
            "--setup-hours", default="0", help="S: billed setup hours per instance (default 0)"
        )
        parser.add_argument("--storage-gb", default="0", help="G: stored GB (default 0)")
        parser.add_argument(
            "--storage-rate",
            dest="storage_rate_per_gb_month",
            default="0",
            help="R: price per GB-month (default 0)",
        )
        parser.add_argument("--storage-months", default="0", help="M: months the storage is held (default 0)")
        parser.add_argument(
            "--rerun-fraction", default="0", help="F: rerun budget as a share of compute (default 0)"
        )
        parser.add_argument("--currency", required=True, help="ISO 4217 code, e.g. USD")
        parser.add_argument("--format", choices=["json", "table"], default="table")

    def handle(self, *args, **options):
        try:
            breakdown = job_cost(self._job(options))
        except CostInputError as error:
            raise CommandError(f"{FLAGS.get(error.field, error.field)}: {error.message}") from None
        report = breakdown.as_report()
        if options["format"] == "json":
            self.stdout.write(json.dumps({key: report[key] for key in REPORT_KEYS}))
            return
        for key in REPORT_KEYS[:-1]:
            self.stdout.write(f"{key:<8} {report[key]:>16} {report['currency']}")

    def _job(self, options) -> JobCostInput:
        numbers: dict[str, Decimal] = {
            field: to_decimal(options[field], field)
            for field in FLAGS
            if field not in ("instances", "currency")
        }
        instances = to_decimal(options["instances"], "instances")
        if instances != instances.to_integral_value():
            raise CostInputError("instances", f"must be a whole number, got {options['instances']}")
        return JobCostInput(currency=options["currency"], instances=int(instances), **numbers)
