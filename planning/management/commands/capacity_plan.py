"""python manage.py capacity_plan --from 2026-05-01 --to 2026-11-01 [--team T ...] [--gpu SLUG]
    --horizon-months 36 [--growth 0.02] [--study study.yaml] [--format json|table]

From the GPU usage the stored bills show to the cheapest mix of owned servers, 1- and 3-year
commitments, on-demand and spot (docs/capacity-plan.md). Runs as an operator: every team's spend.
"""

import json

from django.core.management.base import BaseCommand, CommandError

from planning.engine.errors import PlanInputError
from planning.services.capacity_plans import capacity_plan_create, capacity_plan_preview
from planning.services.plan_requests import (
    DEFAULT_HORIZON_MONTHS,
    DEFAULT_SEED,
    LOOKBACKS,
    MARKETS,
    SCENARIOS,
    SERIES,
)
from planning.services.plan_table import plan_table
from procurement.costing.documents import load_document_file
from procurement.costing.values import CostInputError

# Request field -> the flag a person typed, so an error names what they can fix.
FLAGS = {
    "from": "--from",
    "to": "--to",
    "teams": "--team",
    "team": "--team",
    "gpu": "--gpu",
    "horizon_months": "--horizon-months",
    "growth": "--growth",
    "scenario": "--scenario",
    "trials": "--trials",
    "seed": "--seed",
    "currency": "--currency",
    "series": "--series",
    "name": "--name",
    "providers": "--provider",
    "market": "--market",
    "lookback_days": "--lookback-days",
    "lead_time_months": "--lead-time-months",
}


class Command(BaseCommand):
    help = "Plan GPU capacity from the stored bills: owned servers, commitments, on-demand and spot."
    # A query, not a deployment step: the system checks load every view (the URLconf), about half of a
    # bare run; `manage.py check` and migrate/runserver still run them (issue 30, benchmarks/cli_bench.py).
    requires_system_checks: list[str] = []

    def add_arguments(self, parser):
        parser.add_argument(
            "--from", dest="start", help="first day of the history, YYYY-MM-DD (or --lookback-days)"
        )
        parser.add_argument(
            "--to",
            dest="end",
            help="the day after the last (exclusive); default with --lookback-days: the bills' end",
        )
        parser.add_argument(
            "--lookback-days",
            choices=LOOKBACKS,
            help="the history: the last 7, 30 or 60 days of the bills, or all",
        )
        parser.add_argument("--team", action="append", default=[], help="only this team's spend (repeatable)")
        parser.add_argument("--gpu", default="", help="GPU slug or family (h100); default the most used GPU")
        parser.add_argument("--horizon-months", type=int, default=DEFAULT_HORIZON_MONTHS, help="1 to 120")
        parser.add_argument(
            "--growth", default="0", help="monthly demand growth (0.02), or yearly multipliers (1.2,1.4,1.6)"
        )
        parser.add_argument(
            "--lead-time-months",
            type=int,
            help="months an owned server is paid before the demand it serves arrives (default 3; 0-24)",
        )
        parser.add_argument("--scenario", choices=SCENARIOS, default="base")
        parser.add_argument("--trials", type=int, help="growth trials for P50/P90 (default 1000)")
        parser.add_argument("--seed", type=int, default=DEFAULT_SEED, help="seed of the growth trials")
        parser.add_argument("--series", choices=SERIES, default="auto", help="billed or busy demand")
        parser.add_argument(
            "--study", help="TCO study file (docs/tco-spec.md): server purchase, finance terms"
        )
        parser.add_argument(
            "--provider",
            action="append",
            default=[],
            help="plan only the bills of this provider (repeatable); each fleet is priced at its own provider",
        )
        parser.add_argument(
            "--market",
            choices=MARKETS,
            default="bills",
            help="bills: the bills' own providers (default); move: also the move-provider scenario",
        )
        parser.add_argument("--currency", default="", help="ISO 4217 code (default the study's, else USD)")
        parser.add_argument("--name", default="", help="a name for the stored plan")
        parser.add_argument("--save", action="store_true", help="store the plan (CapacityPlan)")
        parser.add_argument("--format", choices=["json", "table"], default="table")

    def handle(self, *args, **options):
        try:
            body = self._body(options)
            if options["save"]:
                plan = capacity_plan_create(body=body)
                result = plan.result | {"id": plan.pk}
            else:
                result = capacity_plan_preview(body=body)
        except (PlanInputError, CostInputError) as error:
            raise CommandError(f"{FLAGS.get(error.field, error.field)}: {error.message}") from None
        for warning in result.get("warnings", []):
            self.stderr.write(f"warning: {warning}")
        if options["format"] == "json":
            self.stdout.write(json.dumps(result, indent=2))
        else:
            self.stdout.write(plan_table(result))

    def _body(self, options) -> dict:
        body = {
            "from": options["start"],
            "to": options["end"],
            "teams": options["team"],
            "gpu": options["gpu"],
            "horizon_months": options["horizon_months"],
            "growth": options["growth"],
            "scenario": options["scenario"],
            "seed": options["seed"],
            "series": options["series"],
            "currency": options["currency"],
            "name": options["name"],
            "providers": options["provider"],
            "market": options["market"],
        }
        if options["lookback_days"]:
            body["lookback_days"] = options["lookback_days"]
        if options["trials"] is not None:
            body["trials"] = options["trials"]
        if options["lead_time_months"] is not None:
            body["lead_time_months"] = options["lead_time_months"]
        # what the person typed (a value left at its default is labelled a default in the assumptions)
        defaults = {
            "teams": [],
            "gpu": "",
            "horizon_months": DEFAULT_HORIZON_MONTHS,
            "growth": "0",
            "scenario": "base",
            "seed": DEFAULT_SEED,
            "series": "auto",
            "currency": "",
            "name": "",
            "providers": [],
            "market": "bills",
        }
        body["stated"] = sorted(key for key in body if key not in defaults or body[key] != defaults[key])
        if options["study"]:
            body["stated"].append("study")
        if options["study"]:
            study = load_document_file(options["study"])
            if not isinstance(study, dict):
                raise CostInputError("--study", "must hold a TCO study (a mapping, docs/tco-spec.md)")
            body["study"] = study
        return body
