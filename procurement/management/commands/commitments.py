"""python manage.py commitments: is a reserved/savings-plan commitment worth it for a demand profile?

Effective hourly (given, or recurring + upfront / term hours, or a stored commitment price), discount
and break-even utilization u* = effective / on-demand, and the cheapest committed level for the profile
with the rest bought on demand (or on spot, when cheaper). Formulas: docs/cost-model.md, "Commitments".

A stored price instead of typed ones: `--offer ID` (an offer id, as in /offers/<id>/: the cheapest of its
current commitment prices, narrowed by --term-years, --payment-option, --commitment-kind), `--commitment-price
ID` (one stored price by its id, as the offer page and the spend review show it), or `--instance-type`
with `--region` (the cheapest current commitment of that type there). The on-demand price is then the
offer's own unless `--on-demand` is typed; the output says which prices were used
(procurement/services/commitments.py).
"""

import json

from django.core.management.base import BaseCommand, CommandError

from procurement.costing.values import CostInputError
from procurement.services.commitments import CommitmentInputs, commitment_analysis

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
    "offer": "--offer",
    "commitment_price": "--commitment-price",
    "instance_type": "--instance-type",
    "region": "--region",
    "payment_option": "--payment-option",
    "commitment_kind": "--commitment-kind",
}


class Command(BaseCommand):
    help = "Price a commitment against a demand profile: break-even utilization and the cheapest mix."
    # A query, not a deployment step: the system checks load every view (the URLconf), about half of a
    # bare run; `manage.py check` and migrate/runserver still run them (issue 30, benchmarks/cli_bench.py).
    requires_system_checks: list[str] = []

    def add_arguments(self, parser):
        parser.add_argument(
            "--on-demand", help="on-demand price per GPU-hour (default with a stored price: the offer's own)"
        )
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
        parser.add_argument(
            "--currency", default="", help="ISO 4217 code of the prices (default USD, or the stored price's)"
        )
        parser.add_argument("--offer", type=int, help="an offer id: its cheapest stored commitment price")
        parser.add_argument("--commitment-price", type=int, help="a stored commitment price by its id")
        parser.add_argument(
            "--instance-type", default="", help="with --region: the cheapest stored commitment"
        )
        parser.add_argument("--region", default="")
        parser.add_argument("--provider", default="", help="with --instance-type (default: any provider)")
        parser.add_argument("--payment-option", default="", help="no_upfront, partial_upfront or all_upfront")
        parser.add_argument(
            "--commitment-kind", default="", help="standard, convertible, compute_sp or ec2_instance_sp"
        )
        parser.add_argument("--format", choices=["json", "table"], default="table")

    def handle(self, *args, **options):
        inputs = CommitmentInputs(
            utilization_profile=options["utilization_profile"],
            period_hours=options["period_hours"],
            on_demand=options["on_demand"],
            reserved_effective=options["reserved_effective"],
            reserved_recurring=options["reserved_recurring"],
            reserved_upfront=options["reserved_upfront"],
            term_years=options["term_years"],
            spot=options["spot"],
            currency=options["currency"],
            offer=options["offer"],
            commitment_price=options["commitment_price"],
            instance_type=options["instance_type"],
            region=options["region"],
            provider=options["provider"],
            payment_option=options["payment_option"],
            commitment_kind=options["commitment_kind"],
        )
        try:
            report = commitment_analysis(inputs)
        except CostInputError as error:
            raise CommandError(f"{_flag(error.field)}: {error.message}") from None
        if options["format"] == "json":
            self.stdout.write(json.dumps(report, indent=2))
        else:
            self.stdout.write(render_table(report))


def _flag(field: str) -> str:
    name, _, index = field.partition("[")
    return FLAGS.get(name, name) + (f" (entry {int(index.rstrip(']')) + 1})" if index else "")


def render_table(report: dict) -> str:
    currency, cheapest, profile = report["currency"], report["cheapest"], report["profile"]
    return "\n".join(
        [
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
            *_prices_used_lines(report.get("prices_used") or {}),
        ]
    )


def _prices_used_lines(used: dict) -> list[str]:
    lines = []
    for role in ("commitment", "on_demand"):
        price = used.get(role)
        if isinstance(price, dict):
            upfront = f", upfront {price['upfront']}" if price.get("upfront") is not None else ""
            lines.append(
                f"{role.replace('_', '-')} price used: #{price['price_id']} {price['provider']} {price['instance_type']} "
                f"{price['region']} {price['pricing_model']} {price['payment_option']} {price['commitment_kind']} "
                f"{price['effective_per_hour']} {price['currency']}/h{upfront}; {price['quality']} "
                f"{price['observed_at'][:10]} from {price['source']}".replace("  ", " ")
            )
        elif price:
            lines.append(f"{role.replace('_', '-')} price: {price}")
    if used.get("per_gpu"):
        lines.append(used["per_gpu"])
    return lines
