"""python manage.py tco FILE: buy versus rent for a study file (docs/tco-spec.md)."""

import json

from django.core.management.base import BaseCommand, CommandError

from gpuledger.templatetags.formatting import grouped
from procurement.costing.documents import load_document_file
from procurement.costing.values import CostInputError
from procurement.services.tco import tco_study_create, tco_study_evaluate


class Command(BaseCommand):
    help = "Compare buying servers with renting the same GPU-hours over a horizon (YAML or JSON study)."
    # A query, not a deployment step: the system checks load every view (the URLconf), about half of a
    # bare run; `manage.py check` and migrate/runserver still run them (issue 30, benchmarks/cli_bench.py).
    requires_system_checks: list[str] = []

    def add_arguments(self, parser):
        parser.add_argument("file", help="study file, YAML or JSON")
        parser.add_argument("--format", choices=["json", "table"], default="table")
        parser.add_argument(
            "--save", action="store_true", help="store the study and its result as a TcoStudy"
        )

    def handle(self, *args, **options):
        try:
            document = load_document_file(options["file"])
            if options["save"]:
                row = tco_study_create(document=document)
                report = row.result | {"id": row.pk}
            else:
                report = tco_study_evaluate(document=document).report
        except CostInputError as error:
            raise CommandError(str(error)) from None
        if options["format"] == "json":
            self.stdout.write(json.dumps(report, indent=2))
        else:
            self.stdout.write(render_table(report))


def _percent(value) -> str:
    """A share as people read it (issue 30): "0.314364" -> "31.4%"; missing -> ""."""
    return "" if value in (None, "") else f"{float(value) * 100:.1f}%"


def render_table(report: dict) -> str:
    """The study's answer: money with thousands separators (each amount keeps its decimals, a price per
    GPU-hour its six), shares as percentages."""
    currency = report["currency"]
    lines = [
        f"{report['name']}: {report['horizon_months']} months at {_percent(report['utilization'])} utilization ({currency})"
    ]
    lines.append(f"{'':28}{'buy':>16}{'rent':>16}")
    for label, key in (
        ("total (cash)", "total"),
        ("NPV", "npv"),
        ("cost per used GPU-hour", "cost_per_used_gpu_hour"),
    ):
        lines.append(f"{label:28}{grouped(report['buy'][key]):>16}{grouped(report['rent'][key]):>16}")
    rent = report["rent"]
    price = f"rent price: {rent['price_per_gpu_hour']} {currency} per GPU-hour ({rent['pricing_model']}"
    if rent.get("price_observed_at"):
        price += f", observed {rent['price_observed_at']}"
    lines.append(
        price + (", STALE: older than its refresh schedule allows)" if rent.get("price_stale") else ")")
    )
    lines.append(f"break-even month: {report['break_even_month'] or 'never'}")
    lines.append(f"break-even utilization: {_percent(report['break_even_utilization']) or 'n/a'}")
    if "npv_break_even_utilization" in report:
        lines.append(f"break-even month (present value): {report['discounted_break_even_month'] or 'never'}")
        lines.append(
            f"break-even utilization (present value): {_percent(report['npv_break_even_utilization']) or 'n/a'}"
        )
        irr = f"{_percent(report['irr'])} a year" if report["irr"] else "none"
        lines.append(f"IRR of buying instead of renting: {irr}")
    for note in (report.get("break_even_month_note"), report.get("discounted_break_even_month_note")):
        if note:
            lines.append(f"note: {note}")
    if report.get("after_tax"):
        after_tax = report["after_tax"]
        lines.append(
            f"after {after_tax['tax_rate']} tax ({after_tax['depreciation_method']}): buy NPV "
            f"{grouped(after_tax['buy']['npv'])}, rent NPV {grouped(after_tax['rent']['npv'])} -> {after_tax['recommendation'].upper()}"
        )
    lines.append(f"recommendation: {report['recommendation'].upper()} ({report['recommendation_reason']})")
    lines.append(
        f"sensitivity of {report['sensitivity']['metric']} (base {grouped(report['sensitivity']['base'])}):"
    )
    for row in report["sensitivity"]["rows"]:
        lines.append(
            f"  {row['driver']:<16} -20%: {grouped(row['low']):>14}   +20%: {grouped(row['high']):>14}"
        )
    return "\n".join(lines)
