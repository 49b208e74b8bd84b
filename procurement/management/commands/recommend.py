"""python manage.py recommend FILE: rank every offer x instance count x plan for a workload spec."""

import json

from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from procurement.choices import Deployment
from procurement.costing.documents import load_document_file
from procurement.costing.values import CostInputError
from procurement.ranking.ties import TIE_PREFIX
from procurement.services.recommendations import (
    WorkloadSpecInputError,
    ranking_options_parse,
    recommendation_compute,
    recommendation_create,
    workload_create_from_spec,
    workload_spec_parse,
)

# Option field -> the flag a person typed, so an error names what they can fix.
FLAGS = {
    "deadline_hours": "--deadline-hours",
    "budget": "--budget",
    "top": "--top",
    "providers": "--provider",
    "regions": "--region",
    "gpus": "--gpu",
    "currency": "--currency",
    "storage_retention_days": "--storage-retention-days",
}
# Spot timing and the deadline plan (docs/cost-model.md, "Spot timing"): option field -> flag
SPOT_FLAGS = {
    "checkpoint_write_hours": "--checkpoint-write-hours",
    "restart_hours": "--restart-hours",
    "storage_write_gb_per_s": "--storage-write-gb-per-s",
    "deadline_probability": "--deadline-probability",
}
FLAGS |= SPOT_FLAGS


BAD_INPUT = 2  # the exit status of `size` for an invalid spec: scripts can tell bad input from a crash


class Command(BaseCommand):
    help = "Rank configurations for a workload spec (YAML or JSON) by total job cost."
    # No system checks: they import every URL conf and view, most of a one-shot command's start-up
    # (issue 9); `manage.py check` runs them in CI and at deploy.
    requires_system_checks: list[str] = []

    def add_arguments(self, parser):
        parser.add_argument("file", help="workload spec, YAML or JSON (docs/workload-spec.md)")
        parser.add_argument("--format", choices=["json", "table"], default="table")
        parser.add_argument("--deadline-hours", type=str, help="only configurations finishing within H hours")
        parser.add_argument(
            "--budget", type=str, help="only configurations costing at most this (in --currency)"
        )
        parser.add_argument("--top", type=str, default="20", help="how many results (default 20)")
        parser.add_argument(
            "--provider", action="append", dest="providers", help="repeatable provider filter"
        )
        parser.add_argument("--region", action="append", dest="regions", help="repeatable region filter")
        parser.add_argument(
            "--gpu",
            action="append",
            dest="gpus",
            help="repeatable GPU model filter (slug, e.g. h100-sxm5-80gb)",
        )
        parser.add_argument(
            "--include-infeasible",
            action="store_true",
            help="also list the best configurations that do not fit, each with fits: false and why",
        )
        parser.add_argument(
            "--include-illustrative",
            action="store_true",
            help="also rank illustrative (made-up demo) prices, labelled as such",
        )
        parser.add_argument(
            "--rank-outliers-at-quote",
            action="store_true",
            help="rank flagged spot outliers at their raw quote instead of the sibling zones' median",
        )
        parser.add_argument(
            "--explore-parallelism",
            action="store_true",
            help="also rank GPU counts and plans other than the spec's stated parallelism, each saying what differs",
        )
        parser.add_argument(
            "--deployment",
            choices=Deployment.values,
            default=None,
            help="production (default): a serving replica split over consumer cards ranks below the first row "
            "that is not one; development: ranked by cost like any row",
        )
        parser.add_argument(
            "--every-region",
            action="store_true",
            help="keep one row per region even where price, hours and spot band are the same (collapse_identical: false)",
        )
        parser.add_argument(
            "--no-calibration",
            action="store_true",
            help="ignore the factors fitted from stored benchmarks (uncalibrated estimates)",
        )
        parser.add_argument(
            "--storage-retention-days", type=str, help="days the disk is kept after the run (default 7)"
        )
        parser.add_argument(
            "--currency", help="ISO 4217 code of the results (default USD), converted through stored FX rates"
        )
        parser.add_argument("--save", action="store_true", help="store the workload and a Recommendation row")
        for field, flag in SPOT_FLAGS.items():
            if field == "deadline_probability":
                parser.add_argument(
                    flag,
                    dest=field,
                    type=str,
                    help="meet --deadline-hours on wall-clock time with this probability (default 0.9): a spot "
                    "row's reclaims, checkpoint writes and restarts count",
                )
                continue
            parser.add_argument(flag, dest=field, type=str, help=f"spot: {field} (default derived; see docs)")

    def handle(self, *args, **options):
        parameters = {
            key: options[key]
            for key in (
                "deadline_hours",
                "budget",
                "top",
                "providers",
                "regions",
                "gpus",
                "currency",
                "storage_retention_days",
                *SPOT_FLAGS,
            )
            if options[key] is not None
        }
        for flag in (
            "include_infeasible",
            "include_illustrative",
            "rank_outliers_at_quote",
            "explore_parallelism",
        ):
            if options[flag]:
                parameters[flag] = True
        if options["deployment"]:
            parameters["deployment"] = options["deployment"]
        if options["no_calibration"]:
            parameters["calibrate"] = False
        if options["every_region"]:
            parameters["collapse_identical"] = False
        try:
            document = load_document_file(options["file"])
            report = self._report(document, parameters, options["save"])
        except WorkloadSpecInputError as error:
            raise CommandError(
                f"{options['file']}: invalid workload spec\n" + "\n".join(error.lines()), returncode=BAD_INPUT
            ) from None
        except CostInputError as error:
            raise CommandError(f"{FLAGS.get(error.field, error.field)}: {error.message}") from None
        if options["format"] == "json":
            self.stdout.write(json.dumps(report, indent=2))
        else:
            self.stdout.write(render_table(report))

    def _report(self, document, parameters, save: bool) -> dict:
        if save:
            with transaction.atomic():  # bad options store no workload either
                workload = workload_create_from_spec(document=document)
                row, _ = recommendation_create(workload=workload, parameters=parameters)
            return {
                "results": row.results,
                "workload_id": workload.pk,
                "recommendation_id": row.pk,
                "why_empty": row.why_empty,
            }
        spec = workload_spec_parse(document)
        ranking = recommendation_compute(spec=spec, options=ranking_options_parse(parameters))
        return ranking.as_report()


def render_table(report: dict) -> str:
    if not report["results"]:
        return render_empty(report)
    # the zone and the parallelism plan tell apart two rows of one instance type (x30: two "aws g6e.2xlarge
    # eu-south-2" rows at different prices were two zones; two "verda 2B200.60V" rows were DDP and FSDP)
    header = f"{'#':>3} {'provider':10} {'instance':24} {'region/zone':24} {'gpus':>22} {'plan':18} {'model':13} {'hours':>10} {'total':>12}  basis"
    lines = [header]
    for rank, row in enumerate(report["results"], start=1):
        gpus = f"{row['instances']}x{row['gpus_per_instance']} {row['gpu']}"
        where = "/".join(part for part in (row["region"], row.get("zone")) if part)
        marks = (" *" if row["pareto"] else "") + (" stale price" if row.get("stale") else "")
        lines.append(
            f"{rank:>3} {row['provider']:10} {row['instance_type']:24} {where:24} {gpus:>22} {plan_text(row.get('plan')):18} "
            f"{row['pricing_model']:13} {row['hours'] or 0:>10.2f} {row['total_cost'] or '-':>12}  "
            f"{row['basis']}{marks}"
        )
        ties = [warning for warning in row.get("warnings") or () if warning.startswith(TIE_PREFIX)]
        if ties:  # under the first row: the table is where a user reads the answer (audtie)
            lines.append(f"    {ties[0]}")
        if not row["fits"]:
            lines.append(f"    not feasible: {'; '.join(_blocking_reasons(row))}")
        if row.get("cost_breakdown"):
            lines.append(f"    {cost_line(row)}")
        if row.get("cost_basis"):
            lines.append(f"    {cost_basis_line(row['cost_basis'])}")
        if row.get("tight") and row.get("memory_margin"):
            margin = row["memory_margin"]
            lines.append(
                f"    tight: margin {margin['margin_gib']:g} GiB at the peak; {margin['headroom_that_fits']:.0%} "
                f"headroom fits ({margin['headroom_asked']:.0%} asked)"
            )
        if row.get("wall_clock"):
            lines.append(f"    {wall_clock_line(row)}")
        if row.get("spot"):
            lines.append(f"    {spot_line(row['spot'], row['currency'])}")
        if row.get("interconnect") and row["gpus"] > 1:
            lines.append(f"    links: {row['interconnect']['summary']}")
    currency = report["results"][0]["currency"] if report["results"] else "USD"
    lines.append(
        f"* on the cost-versus-time Pareto front; money in {currency}, observed dates in --format json"
    )
    return "\n".join(lines)


def plan_text(plan: dict | None) -> str:
    """The parallelism plan in a few characters: "data_parallel", "data_parallel zero3", "tensor tp4", "zero3_fsdp"."""
    if not plan:
        return "-"
    name = str(plan.get("name", "-"))
    text = "tensor" if name.startswith("tensor_parallel") else name  # "tensor_parallel_2": "tensor tp2"
    if plan.get("zero_stage") and "zero" not in text:
        text += f" zero{plan['zero_stage']}"
    if (plan.get("tensor_parallel") or 1) > 1:
        text += f" tp{plan['tensor_parallel']}"
    return text


def wall_clock_line(row: dict) -> str:
    """Compute hours and wall-clock P50/P90 side by side, and the quantile the deadline is met at."""
    wall = row["wall_clock"]
    text = (
        f"time: compute {wall['compute_hours']:g} h; wall-clock P50 {wall['p50_hours']:g} h, "
        f"P90 {wall['p90_hours']:g} h"
    )
    if wall["probability"] not in (0.5, 0.9):
        text += f", P{wall['probability'] * 100:g} {wall['hours_at_probability']:g} h"
    if row.get("ranked_as") == "spot_with_fallback":
        plan = row["spot"]["deadline_plan"]
        text += (
            f"; ranked as spot with on-demand fallback: expected {plan['expected_cost']}, "
            f"worst case {plan['worst_case_cost']} {row['currency']}"
        )
    return text


def render_empty(report: dict) -> str:
    """Nothing ranked: say why (the top reasons with how many configurations each excluded)."""
    reasons = report.get("why_empty") or []
    lines = ["No feasible configuration." + (" Top reasons:" if reasons else "")]
    lines += [f"  {item['count']:>8,} x {item['reason']}" for item in reasons]
    return "\n".join(lines)


BLOCKING_PREFIXES = (
    "does not fit",
    "incompatible",
    "speed not",
    "spot unsuitable",
    "price covers the GPUs",
    "host RAM too small",
    "not a valid plan",
    "no cluster interconnect",
)


def _blocking_reasons(row: dict) -> list[str]:
    blocking = [r for r in row["reasons"] if r.startswith(BLOCKING_PREFIXES) and "not a limit" not in r]
    return blocking or row["reasons"][:1]


UNIT_LABELS = {
    "per_gpu_hour": "per GPU-hour",
    "per_million_training_tokens": "per 1M training tokens",
    "per_million_generated_tokens": "per 1M generated tokens",
    "per_epoch": "per epoch",
}


def cost_line(row: dict) -> str:
    """The row's total split into its parts, then its unit costs."""
    parts = row["cost_breakdown"]
    text = "cost: " + " + ".join(
        f"{name} {parts[name]}" for name in ("compute", "setup", "storage", "reruns")
    )
    units = [f"{UNIT_LABELS.get(name, name)} {value}" for name, value in row.get("unit_costs", {}).items()]
    return text + f" = {parts['total']} {row['currency']}" + (f"; {', '.join(units)}" if units else "")


def cost_basis_line(basis: dict) -> str:
    """What each part of the cost is priced on, so that the row's money can be rebuilt by hand."""
    return "priced on: " + "; ".join(
        f"{name} {basis[name]['text']}" for name in ("compute", "setup", "storage", "reruns") if name in basis
    )


def spot_line(spot: dict, currency: str) -> str:
    """One line of a spot row: rate and source, checkpoint interval, overhead, verdict, P50/P90."""
    text = (
        f"spot: {spot['interruption_source_text']}; checkpoint every {spot['checkpoint_interval_minutes']:g} min, "
        f"overhead {float(spot['overhead']):.2%}; {spot['verdict']}"
    )
    if spot.get("reclaim_exposure"):  # several instances: priced at instances x one instance's rate
        text += f"; {spot['instances']}-fold reclaim exposure ({spot['interruption_rate_per_hour']}/h for the job)"
    simulation = spot.get("simulation")
    if simulation:
        text += (
            f"; P50 {simulation['p50_hours']:g} h / {simulation['p50_cost']} {currency}, "
            f"P90 {simulation['p90_hours']:g} h / {simulation['p90_cost']} {currency} "
            f"({simulation['trials']} seeded trials)"
        )
    return text
