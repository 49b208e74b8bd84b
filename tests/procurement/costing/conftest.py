"""Fixtures for the cost interfaces: one GPU model row without loading the whole catalog."""

from decimal import Decimal

import pytest


@pytest.fixture
def h100(db):
    from pricing.models import GpuModel

    # The bundled gpu_specs.csv row: TDP 700 W, approximate list price 33800 USD.
    return GpuModel.objects.create(
        slug="h100-sxm5-80gb",
        name="NVIDIA H100 SXM5 80GB",
        vendor="NVIDIA",
        architecture="Hopper",
        memory_gb=Decimal(80),
        memory_bandwidth_gbps=Decimal(3350),
        tdp_w=700,
        approx_list_price_usd=Decimal(33800),
    )
