"""python manage.py load_catalog: load the bundled catalog (idempotent; a second run changes nothing)."""

from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from pricing.catalog import CatalogError, catalog_load
from procurement.architectures import ArchitectureFileError, architectures_load


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
        total = report.total_changes + report.changes["model_architectures"].changed
        if total == 0:
            self.stdout.write(self.style.SUCCESS("Catalog already up to date: 0 changes."))
        else:
            self.stdout.write(self.style.SUCCESS(f"Catalog loaded: {total} changes."))
