"""python manage.py load_catalog: load the bundled catalog (idempotent; a second run changes nothing)."""

from django.core.management.base import BaseCommand, CommandError
from django.db import transaction
from django.utils import timezone

from pricing.catalog import DATA_DIR, CatalogError, CatalogLoadReport, catalog_load
from pricing.price_checks import Refusals
from pricing.sources.status import without_server_paths
from procurement.architectures import ArchitectureFileError, architectures_load
from scheduler.models import PriceRefresh, RefreshStatus


class Command(BaseCommand):
    help = "Load the bundled GPU datasheets, model architectures, FX/storage rates and price snapshots."

    def handle(self, *args, **options):
        try:
            with transaction.atomic():
                report = catalog_load(progress=lambda step: self.stderr.write(f"… {step}"))
                report.changes["model_architectures"] = architectures_load()
        except (CatalogError, ArchitectureFileError) as exc:
            raise CommandError(f"{exc}\nNothing was changed.") from exc
        for name, count in report.changes.items():
            self.stdout.write(
                f"{name:22} created {count.created:6}  updated {count.updated:6}  unchanged {count.unchanged:6}"
            )
        prices = report.prices
        self.stdout.write(
            f"{'prices':22} inserted {prices.inserted:5}  unchanged {prices.unchanged:6}  "
            f"(catalog rows created {prices.catalog.created}, updated {prices.catalog.updated})"
        )
        if prices.unmapped_gpu_names:
            names = ", ".join(f"{name} ({n})" for name, n in sorted(prices.unmapped_gpu_names.items()))
            self.stdout.write(
                f"Unmapped accelerator names (stored without a GPU model; map them in the admin): {names}"
            )
        for reason, entry in report.price_refusals.as_json().items():
            self.stdout.write(f"prices refused ({reason}): {entry['count']}, e.g. {entry['examples'][0]}")
        for reason, entry in report.spot_advisory_refusals.as_json().items():
            self.stdout.write(
                f"spot advisories refused ({reason}): {entry['count']}, e.g. {entry['examples'][0]}"
            )
        _record_refusals(report)
        total = report.total_changes + report.changes["model_architectures"].changed
        if total == 0:
            self.stdout.write(self.style.SUCCESS("Catalog already up to date: 0 changes."))
        else:
            self.stdout.write(self.style.SUCCESS(f"Catalog loaded: {total} changes."))


def _record_refusals(report: CatalogLoadReport) -> None:
    """A load that refused rows (a snapshot row without a Region, an advisor band out of range) leaves a
    run named "catalog" with each reason and its examples, so /status/ shows them beside the refreshes."""
    refused = Refusals()
    for refusals in (report.price_refusals, report.spot_advisory_refusals):
        for reason, count in refusals.counts.items():
            examples = [
                without_server_paths(example.replace(f"{DATA_DIR}/", ""))  # skypilot/seeweb/vms.csv:50: ...
                for example in refusals.examples.get(reason, [])
            ]
            refused.refuse_many(reason, count, examples)
    if not refused.total:
        return
    PriceRefresh.objects.create(
        source="catalog",
        status=RefreshStatus.SUCCEEDED,
        finished_at=timezone.now(),
        rows_seen=report.prices.seen + refused.total if report.prices else refused.total,
        rows_inserted=report.prices.inserted if report.prices else 0,
        rows_unchanged=report.prices.unchanged if report.prices else 0,
        rows_rejected=refused.total,
        rows_refused=refused.total,
        refused_reasons=refused.as_json(),
    )
