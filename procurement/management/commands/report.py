"""python manage.py report KIND --id N --format pdf|xlsx|csv|html --output FILE
python manage.py report spend_review --from YYYY-MM-DD --to YYYY-MM-DD [--team T] --format ... --output FILE

KIND is a report kind (``spot``: a workload id; ``rent_or_buy``: a TCO study id; ``spend_review``: a
period, ``--to`` exclusive; see procurement.reports). The report's data object is stored as a ReportSnapshot (an unchanged one is
reused), so ``--snapshot ID`` re-renders exactly the same numbers later.
"""

import datetime as dt
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from gpuledger.input_bounds import year_problem
from procurement import models
from procurement.reports.registry import ReportInputError, ReportPeriod, report_kind, report_kind_names
from procurement.reports.render import FORMATS, render
from procurement.services.reports import report_snapshot_create, snapshot_report


class Command(BaseCommand):
    help = (
        "Render a report (spot: workload id; rent_or_buy: TCO study id; spend_review: --from/--to period) "
        "as PDF, XLSX, CSV or HTML."
    )
    # A query, not a deployment step: the system checks load every view (the URLconf), about half of a
    # bare run; `manage.py check` and migrate/runserver still run them (issue 30, benchmarks/cli_bench.py).
    requires_system_checks: list[str] = []

    def add_arguments(self, parser):
        parser.add_argument("kind", help="report kind: " + ", ".join(report_kind_names()))
        parser.add_argument("--id", type=int, help="the subject: a workload id (spot) or a TCO study id")
        parser.add_argument(
            "--from", dest="start", help="a period kind (spend_review): first day, YYYY-MM-DD"
        )
        parser.add_argument("--to", dest="end", help="a period kind: the day after the last (exclusive)")
        for name in ("team", "project", "provider"):
            parser.add_argument(f"--{name}", default="", help=f"a period kind: only this {name}")
        parser.add_argument(
            "--allocation",
            default="",
            metavar="RULE",
            help="spend_review: showback rule, proportional (default), even or unallocated",
        )
        parser.add_argument("--snapshot", type=int, help="re-render a stored report snapshot instead")
        parser.add_argument("--format", choices=sorted(FORMATS), default="pdf")
        parser.add_argument("--output", required=True, help="file to write")

    def handle(self, *args, **options):
        try:
            kind = report_kind(options["kind"])
            if options["snapshot"] is not None:
                snapshot = models.ReportSnapshot.objects.filter(
                    pk=options["snapshot"], kind=kind.name
                ).first()
                if snapshot is None:
                    raise ReportInputError(
                        "--snapshot", f"no {kind.name} report snapshot {options['snapshot']}"
                    )
            elif kind.by_period:
                snapshot = report_snapshot_create(kind=kind.name, period=_period(options))
            elif options["id"] is None:
                raise ReportInputError("--id", f"is required: the {kind.subject} to report on")
            else:
                snapshot = report_snapshot_create(kind=kind.name, subject_id=options["id"])
        except ReportInputError as error:
            field = {"id": "--id", "from": "--from", "to": "--to"}.get(error.field, error.field)
            raise CommandError(f"{field}: {error.message}") from None
        content, _content_type, extension = render(snapshot_report(snapshot), options["format"])
        output = Path(options["output"])
        output.write_bytes(content)
        self.stderr.write(f"wrote {output} ({len(content):,} bytes, {extension}; snapshot {snapshot.pk})")


def _date(text: str | None, field: str) -> dt.date:
    if not text:
        raise ReportInputError(field, "is required for a report on a period (YYYY-MM-DD)")
    try:
        day = dt.date.fromisoformat(text)
    except ValueError:
        raise ReportInputError(field, f"must be YYYY-MM-DD, got {text!r}") from None
    problem = year_problem(day.year)  # the API's bound (gpuledger.input_bounds)
    if problem:
        raise ReportInputError(field, problem)
    return day


def _period(options: dict) -> ReportPeriod:
    return ReportPeriod(
        start=_date(options["start"], "from"),
        end=_date(options["end"], "to"),
        team=options["team"],
        project=options["project"],
        provider=options["provider"],
        allocation=options["allocation"],
    )
