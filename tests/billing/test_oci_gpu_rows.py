"""OCI GPU shapes in OCI's FOCUS reports (issue 28, item 4): GPU rows with their GPU-hours.

OCI prices a GPU shape per GPU per hour (its price list's unit "GPU Per Hour"); its FOCUS reports count
compute the same way ("OCPU Hours" / "OCPU Per Hour": FinOps Foundation's FOCUS 1.0 sample, Oracle rows,
tests/billing/outside/data/focus10_sample_maxjahn.csv.gz). A row in GPU-hours gives the GPU-hours itself
and its instance-hours are those over the shape's GPUs. The catalog loads OCI's shapes under the provider
"oci" (pricing/catalog.py, skypilot/oci/vms.gpu.csv: BM.GPU.H100.8 8 x H100, VM.GPU.A10.1 1 x A10) while
the bill names its provider "Oracle". Amounts are illustrative, chosen so the hand sums are short.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest

from billing.imports.gpu_identity import oci_gpu_shape
from billing.imports.importer import import_file
from billing.review import selectors
from billing.review.service import _build_review, make_request
from pricing.models import GpuModel, InstanceType, Provider
from tests.billing.catalog import make_catalog

pytestmark = pytest.mark.django_db
MAY = {"start": dt.date(2026, 5, 1), "end": dt.date(2026, 6, 1)}
HEADER = (
    "BillingAccountId,ChargePeriodStart,ChargePeriodEnd,ChargeCategory,ChargeDescription,BilledCost,"
    "EffectiveCost,BillingCurrency,ProviderName,RegionId,ServiceCategory,ResourceId,ResourceType,SkuId,"
    "SkuPriceDetails,ConsumedQuantity,ConsumedUnit,Tags"
)


def row(cost, description, quantity, unit, *, service="Compute", resource_type="instance", details=""):
    return (
        f"20209880,2026-05-01T00:00:00Z,2026-05-01T02:00:00Z,Usage,{description},{cost},{cost},USD,Oracle,"
        f"us-sanjose-1,{service},ocid1.instance.oc1.example,{resource_type},B98415,{details},{quantity},"
        f'{unit},"{{""team"": ""ml""}}"'
    )


@pytest.fixture
def oci_catalog():
    make_catalog()
    oci = Provider.objects.create(slug="oci", name="OCI")
    h100 = GpuModel.objects.get(slug="h100-sxm5-80gb")
    a10 = GpuModel.objects.create(
        slug="a10",
        name="NVIDIA A10",
        vendor="NVIDIA",
        architecture="x",
        memory_gb=24,
        memory_bandwidth_gbps=600,
    )
    InstanceType.objects.create(provider=oci, name="BM.GPU.H100.8", gpu=h100, gpu_name="H100", gpu_count=8)
    InstanceType.objects.create(provider=oci, name="VM.GPU.A10.1", gpu=a10, gpu_name="A10", gpu_count=1)


def test_oci_gpu_hour_rows_are_gpu_rows_with_their_gpu_hours(oci_catalog, tmp_path):
    path = tmp_path / "oci_focus.csv"
    lines = [
        # BM.GPU.H100.8 for 2 hours: 16 GPU-hours, 160.00 (named in SkuPriceDetails)
        row(
            "160.00",
            "Compute - GPU - H100",
            "16",
            "GPU Hours",
            details='"{""InstanceType"": ""BM.GPU.H100.8""}"',
        ),
        # VM.GPU.A10.1 for 3 hours: 3 GPU-hours, 6.00 (the shape in ResourceType)
        row("6.00", "Compute - GPU - A10", "3", "GPU Per Hour", resource_type="VM.GPU.A10.1"),
        # a GPU shape the catalog lacks: undetermined 32.00
        row("32.00", "Compute - GPU - A100", "8", "GPU Hours", resource_type="BM.GPU.A100-v2.8"),
        # GPU-hours of no named shape: the bill cannot tell the GPU, undetermined 7.00
        row("7.00", "Compute - GPU - L40S", "4", "GPU Hours"),
        # storage: non-GPU 4.00
        row("4.00", "Block Volume - Performance Units", "10", "GB Months", service="Storage"),
    ]
    path.write_text("\n".join([HEADER, *lines]) + "\n")
    assert import_file(path).rejected == 0
    review = _build_review(make_request(**MAY))
    # GPU: 160 + 6 = 166.00 over 16 + 3 = 19 GPU-hours; undetermined 32 + 7 = 39.00; non-GPU 4.00
    assert (review["totals"]["effective_cost"], review["totals"]["gpu_hours"]) == ("166.00", "19.00")
    assert {g["gpu"]: g["gpu_hours"] for g in review["by_gpu"]} == {"h100-sxm5-80gb": "16.00", "a10": "3.00"}
    assert (review["undetermined_cost"], review["non_gpu_cost"]) == ("39.00", "4.00")
    assert [(u["instance_type"], u["effective_cost"]) for u in review["undetermined"]] == [
        ("BM.GPU.A100-v2.8", "32.00"),
        ("", "7.00"),
    ]
    frame = selectors.dataset_rows(
        MAY["start"], MAY["end"], columns=["instance_type", "instance_hours_micros", "gpu_hours_micros"]
    )
    hours = {
        str(t): (Decimal(int(h)) / 10**6, Decimal(int(g)) / 10**6)
        for t, h, g in frame.itertuples(index=False)
        if str(t)
    }
    assert hours["BM.GPU.H100.8"] == (Decimal(2), Decimal(16))  # 16 GPU-hours over 8 GPUs: 2 instance-hours
    assert hours["VM.GPU.A10.1"] == (Decimal(3), Decimal(3))


@pytest.mark.parametrize(
    ("value", "shape"),
    [
        ("BM.GPU.H100.8", "BM.GPU.H100.8"),
        ("BM.GPU.A100-v2.8", "BM.GPU.A100-v2.8"),
        (" VM.GPU.A10.1 ", "VM.GPU.A10.1"),
        ("BM.GPU4.8", "BM.GPU4.8"),
        ("VM.Standard.E5.Flex", ""),
        ("instance", ""),
        ("BM.GPU.H100", ""),  # no GPU count: not a shape name
    ],
)
def test_oci_gpu_shapes(value, shape):
    assert oci_gpu_shape(value) == shape
