"""manage.py import_prices: all or nothing per file, counts printed, errors naming file/line/column."""

from __future__ import annotations

from decimal import Decimal
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from pricing.models import FxRate, PriceObservation
from scheduler.models import PriceRefresh

pytestmark = pytest.mark.django_db
HEADER = "provider,region,instance_type,gpu_model,gpu_count,vcpus,memory_gib,pricing_model,price_per_hour,currency,observed_at"
ROWS = [
    "examplecloud,us-central,h100-sxm-x8,H100-SXM,8,208,1800,on_demand,23.92,USD,2026-11-01",
    "examplecloud,us-central,h100-sxm-x8,H100-SXM,8,208,1800,reserved_1y,17.50,USD,2026-11-01",
    "examplecloud,us-central,h100-sxm-x1,H100-SXM,1,26,225,on_demand,0,USD,2026-11-01",
]


def write(tmp_path: Path, *rows: str) -> Path:
    path = tmp_path / "prices.csv"
    path.write_text("\n".join([HEADER, *rows]) + "\n")
    return path


def run(*args) -> str:
    out = StringIO()
    call_command("import_prices", *map(str, args), stdout=out)
    return out.getvalue()


def test_it_imports_a_generic_file_and_reports_the_rerun_as_unchanged(tmp_path):
    path = write(tmp_path, *ROWS)
    assert f"{path}: 2 inserted, 0 unchanged, 1 rejected\n" in run(path)
    assert f"{path}: 0 inserted, 2 unchanged, 1 rejected\n" in run(path)
    assert sorted(PriceObservation.objects.values_list("pricing_model", "amount_per_hour")) == [
        ("on_demand", Decimal("23.92")),
        ("reserved_1y", Decimal("17.50")),
    ]
    refresh = PriceRefresh.objects.filter(source="import:prices.csv").first()
    assert (refresh.status, refresh.rows_seen, refresh.rows_rejected) == ("succeeded", 3, 1)


def test_it_stores_nothing_from_a_file_with_a_bad_row(tmp_path):
    path = write(tmp_path, ROWS[0], ROWS[1].replace("17.50", "seventeen"))
    with pytest.raises(
        CommandError, match=rf"{path}:3: column 'price_per_hour': 'seventeen' is not a number"
    ):
        run(path)
    assert not PriceObservation.objects.exists()
    assert PriceRefresh.objects.get().status == "failed"


def test_it_rejects_a_currency_without_an_fx_rate_naming_it(tmp_path):
    path = write(tmp_path, "autodl,cn-beijing-b,rtx4090-1x,RTX4090,1,16,120,on_demand,1.98,CNY,2026-11-30")
    with pytest.raises(CommandError, match="unknown currency 'CNY'"):
        run(path)
    FxRate.objects.create(
        currency="CNY", base="USD", rate=Decimal("0.1404"), as_of="2026-11-30", source="test"
    )
    assert "1 inserted" in run(path)


def test_it_imports_a_skypilot_file_with_its_provider(tmp_path):
    folder = tmp_path / "lambda"
    folder.mkdir()
    path = folder / "vms.csv"
    path.write_text(
        "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,Price,Region,GpuInfo,SpotPrice\r\n"
        "gpu_1x_a10,A10,1.0,30.0,200.0,1.29,us-east-1,,\r\n"
        "cpu_4x_generalx,,,4.0,16.0,0.2,us-east-1,,\r\n"
    )
    output = run(path, "--format", "skypilot", "--observed-at", "2026-11-30T00:00:00Z")
    assert "1 inserted, 0 unchanged, 0 rejected" in output
    observation = PriceObservation.objects.select_related("offer__instance_type__provider").get()
    assert (observation.offer.instance_type.provider.slug, observation.amount_per_hour) == (
        "lambda",
        Decimal("1.29"),
    )
    assert observation.source == "skypilot:lambda/vms.csv"


def test_it_names_a_missing_file(tmp_path):
    with pytest.raises(CommandError, match="no such file"):
        run(tmp_path / "nope.csv")
