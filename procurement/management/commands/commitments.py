"""python manage.py commitments: is a reserved/savings-plan commitment worth it for a demand profile?

Effective hourly (given, or recurring + upfront / term hours), discount and break-even utilization
u* = effective / on-demand, and the cheapest committed level for the profile with the rest bought on
demand (or on spot, when cheaper). Formulas: docs/cost-model.md, "Commitments".
"""

import json
from decimal import Decimal

from django.core.management.base import BaseCommand, CommandError

from procurement.costing.commitments import commitment_report, effective_hourly
from procurement.costing.values import CostInputError, non_negative, positive, to_decimal

# Engine field -> the flag a person typed, so an error names what they can fix.
FLAGS = {
    "on_demand_per_gpu_hour": "--on-demand",
    "committed_per_gpu_hour": "--reserved-effective",
    "recurring_per_hour": "--reserved-recurring",
    "upfront": "--reserved-upfront",
    "term_years": "--term-years",
    "spot_per_gpu_hour": "--spot",
    "period_hours": "--period-hours",
    "demand_gpus": "--utilization-profile",
    "currency": "--currency",
}


class Command(BaseCommand):
    help = "Price a commitment against a demand profile: break-even utilization and the cheapest mix."

    def add_arguments(self, parser):
        parser.add_argument("--on-demand", required=True, help="on-demand price per GPU-hour")
        parser.add_argument("--reserved-effective", help="the commitment's effective price per GPU-hour")
        parser.add_argument("--reserved-recurring", help="or: its recurring price per GPU-hour ...")
        parser.add_argument("--reserved-upfront", help="... its upfront payment per GPU ...")
        parser.add_argument("--term-years", help="... and its term in years (1 or 3)")
        parser.add_argument(
            "--utilization-profile",
            required=True,
            help="GPUs in use in each period, comma-separated, e.g. 2,2,4,4,4,6,2,2",
        )
        parser.add_argument(
            "--period-hours", default="730", help="hours in one period of the profile (default 730: a month)"
        )
        parser.add_argument("--spot", help="effective spot price per GPU-hour, if bursts may run on spot")
        parser.add_argument("--currency", default="USD", help="ISO 4217 code of the prices (default USD)")
        parser.add_argument("--format", choices=["json", "table"], default="table")

    def handle(self, *args, **options):
        try:
            report = commitment_report(
                on_demand_per_gpu_hour=positive(options["on_demand"], "on_demand_per_gpu_hour"),
                committed_per_gpu_hour=self._committed(options),
                demand_gpus=_profile(options["utilization_profile"]),
                period_hours=positive(options["period_hours"], "period_hours"),
                currency=options["currency"],
                spot_per_gpu_hour=(
                    None if options["spot"] is None else non_negative(options["spot"], "spot_per_gpu_hour")
                ),
            )
        except CostInputError as error:
            raise CommandError(f"{_flag(error.field)}: {error.message}") from None
        if options["format"] == "json":
            self.stdout.write(json.dumps(report, indent=2))
        else:
            self.stdout.write(render_table(report))

    def _committed(self, options) -> Decimal:
        parts = (options["reserved_recurring"], options["reserved_upfront"], options["term_years"])
        if options["reserved_effective"] is not None:
            if any(part is not None for part in parts):
                raise CostInputError(
                    "committed_per_gpu_hour", "give either the effective price or recurring/upfront/term"
                )
            return non_negative(options["reserved_effective"], "committed_per_gpu_hour")
        if any(part is None for part in parts):
            raise CostInputError(
                "committed_per_gpu_hour",
                "is required (or all of --reserved-recurring, --reserved-upfront and --term-years)",
            )
        return effective_hourly(
            recurring_per_hour=to_decimal(parts[0], "recurring_per_hour"),
            upfront=to_decimal(parts[1], "upfront"),
            term_years=_term_years(parts[2]),
        )


def _term_years(value: str) -> int:
    years = to_decimal(value, "term_years")
    if years not in (1, 3):
        raise CostInputError("term_years", f"must be 1 or 3, got {value}")
    return int(years)


def _profile(text: str) -> list[int]:
    demand = []
    for index, part in enumerate(text.split(",")):
        number = to_decimal(part, f"demand_gpus[{index}]")
        if number < 0 or number != number.to_integral_value():
            raise CostInputError(
                f"demand_gpus[{index}]", f"must be a whole number of GPUs >= 0, got {part!r}"
            )
        demand.append(int(number))
    return demand


def _flag(field: str) -> str:
    name, _, index = field.partition("[")
    return FLAGS.get(name, name) + (f" (entry {int(index.rstrip(']')) + 1})" if index else "")


def render_table(report: dict) -> str:
    currency, cheapest, profile = report["currency"], report["cheapest"], report["profile"]
    return "\n".join([
        f"commitment {report['committed_per_gpu_hour']} vs on-demand {report['on_demand_per_gpu_hour']} "
        f"{currency} per GPU-hour: discount {float(report['discount']):.1%}, "
        f"break-even utilization {float(report['break_even_utilization']):.1%}",
        f"profile: {profile['periods']} periods of {profile['period_hours']} h, {profile['floor_gpus']} to "
        f"{profile['peak_gpus']} GPUs, {profile['gpu_hours']} GPU-hours; bursts at {report['burst_pricing']} "
        f"{report['burst_price_per_gpu_hour']}",
        f"cheapest: commit to {cheapest['committed_gpus']} GPUs: committed {cheapest['committed_cost']} + "
        f"burst {cheapest['burst_cost']} = {cheapest['total']} {currency}",
        f"floor ({report['floor']['committed_gpus']} GPUs): {report['floor']['total']} {currency}; "
        f"no commitment: {report['all_on_demand']} {currency}",
        report["advice"],
    ])  # fmt: skip
