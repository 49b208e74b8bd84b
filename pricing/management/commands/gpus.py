"""python manage.py gpus: list the GPU model slugs the CLI and API accept, and who sells each."""

from django.core.management.base import BaseCommand

from pricing.models import GpuModel, InstanceType


class Command(BaseCommand):
    help = "List GPU model slugs and names, each with the providers whose loaded catalog offers it."
    # A query, not a deployment step: the system checks load every view (the URLconf), about half of a
    # bare run; `manage.py check` and migrate/runserver still run them (issue 30, benchmarks/cli_bench.py).
    requires_system_checks: list[str] = []

    def handle(self, *args, **options):
        sellers = _providers_by_gpu()
        for slug, name, memory_gb in GpuModel.objects.values_list("slug", "name", "memory_gb"):
            providers = ", ".join(sellers.get(slug, [])) or "no offer loaded"
            self.stdout.write(f"{slug:18} {name} ({memory_gb.normalize():f} GB)  [{providers}]")


def _providers_by_gpu() -> dict[str, list[str]]:
    """GPU slug → the provider slugs with an instance type carrying it, sorted (one query)."""
    pairs = (
        InstanceType.objects.filter(gpu__isnull=False).values_list("gpu__slug", "provider__slug").distinct()
    )
    sellers: dict[str, set[str]] = {}
    for gpu, provider in pairs:
        sellers.setdefault(gpu, set()).add(provider)
    return {gpu: sorted(providers) for gpu, providers in sellers.items()}
