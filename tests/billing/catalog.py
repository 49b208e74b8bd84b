"""A small catalog for billing tests: the demo's instance types, with hand-set spot prices."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

from pricing.models import GpuModel, InstanceType, Offer, PriceObservation, Provider, Region

GPUS = {
    "h100-sxm5-80gb": ("NVIDIA H100 SXM5 80GB", "80", "3350"),
    "a100-sxm4-40gb": ("NVIDIA A100 SXM4 40GB", "40", "1555"),
    "l40s": ("NVIDIA L40S", "48", "864"),
    "l4": ("NVIDIA L4", "24", "300"),
}
TYPES = [
    ("aws", "p5.48xlarge", "h100-sxm5-80gb", 8),
    ("aws", "p4d.24xlarge", "a100-sxm4-40gb", 8),
    ("aws", "g6e.12xlarge", "l40s", 4),
    ("aws", "g6e.xlarge", "l40s", 1),
    ("aws", "g6.xlarge", "l4", 1),
    ("lambda", "gpu_8x_h100_sxm5", "h100-sxm5-80gb", 8),
]
# p5.48xlarge spot in three us-east-1 zones; the review takes the median, 20.00 USD per instance-hour.
P5_SPOT_BY_ZONE = {"use1-az1": Decimal("18.00"), "use1-az2": Decimal("20.00"), "use1-az4": Decimal("25.00")}


def make_catalog() -> None:
    providers = {slug: Provider.objects.create(slug=slug, name=slug.upper()) for slug in ("aws", "lambda")}
    gpus = {
        slug: GpuModel.objects.create(
            slug=slug,
            name=name,
            vendor="NVIDIA",
            architecture="x",
            memory_gb=Decimal(mem),
            memory_bandwidth_gbps=Decimal(bw),
        )
        for slug, (name, mem, bw) in GPUS.items()
    }
    types = {}
    for provider, name, gpu, count in TYPES:
        types[name] = InstanceType.objects.create(
            provider=providers[provider], name=name, gpu=gpus[gpu], gpu_name=gpu, gpu_count=count
        )
    region = Region.objects.create(provider=providers["aws"], code="us-east-1")
    for zone, price in P5_SPOT_BY_ZONE.items():
        offer = Offer.objects.create(instance_type=types["p5.48xlarge"], region=region, zone=zone)
        PriceObservation.objects.create(
            offer=offer,
            pricing_model="spot",
            amount_per_hour=price,
            currency="USD",
            observed_at=dt.datetime(2026, 11, 1, tzinfo=dt.UTC),
            source="test",
        )


def import_demo_billing(tmp_path, *, months: int):
    """The small catalog, then `make_demo_billing` (seed 3, from May 2026) and `import_billing` of its FOCUS
    and utilization files, as `make run` does; returns the FOCUS file's path."""
    make_catalog()
    return import_demo_files(tmp_path, months=months)


def import_demo_files(tmp_path, *, months: int | None = None):
    """`make_demo_billing` and `import_billing` of its FOCUS and utilization files over the catalog
    stored now: seed 3 from May 2026 for `months` months, or (None) the command's own defaults, the
    six months before this one, as `make run` does. Returns the FOCUS file's path."""
    from io import StringIO

    from django.core.management import call_command

    path = tmp_path / "demo.csv"
    period = [] if months is None else ["--seed", "3", "--start", "2026-05", "--months", str(months)]
    call_command("make_demo_billing", *period, "--output", str(path), stdout=StringIO())
    call_command(
        "import_billing",
        str(path),
        str(tmp_path / "demo_utilization.csv"),
        "--no-progress",
        stdout=StringIO(),
    )
    return path
