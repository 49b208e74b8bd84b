"""python manage.py gpus: list the GPU model slugs the CLI and API accept."""

from django.core.management.base import BaseCommand

from pricing.models import GpuModel


class Command(BaseCommand):
    help = "List GPU model slugs and names."

    def handle(self, *args, **options):
        for slug, name, memory_gb in GpuModel.objects.values_list("slug", "name", "memory_gb"):
            self.stdout.write(f"{slug:18} {name} ({memory_gb.normalize():f} GB)")
