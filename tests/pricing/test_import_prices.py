"""manage.py import_prices: all or nothing per file, counts printed, errors naming file/line/column."""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
from decimal import Decimal
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from pricing.models import FxRate, PriceObservation, SpotAdvisory
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


# --- AWS Spot Advisor snapshots (--format spot-advisor) ----------------------------------------------

ADVISOR_SNAPSHOT = (
    Path(__file__).resolve().parents[2] / "pricing/data/spot_advisor/spot-advisor-data-2022-07-23.json"
)
# Linux entries of that snapshot over its 21 regions, counted with a script
# (sum(len(r["Linux"]) for r in data["spot_advisor"].values())).
ADVISOR_LINUX_ROWS = 6726
RANGES = [
    {"index": 0, "label": "<5%"},
    {"index": 1, "label": "5-10%"},
    {"index": 2, "label": "10-15%"},
    {"index": 3, "label": "15-20%"},
    {"index": 4, "label": ">20%"},
]


def advisor_file(tmp_path: Path, name: str, linux: dict) -> Path:
    path = tmp_path / name
    path.write_text(json.dumps({"ranges": RANGES, "spot_advisor": {"us-east-1": {"Linux": linux}}}))
    return path


def test_it_imports_a_spot_advisor_snapshot_dated_by_its_name_and_reruns_unchanged(tmp_path):
    path = tmp_path / ADVISOR_SNAPSHOT.name
    shutil.copyfile(ADVISOR_SNAPSHOT, path)
    expected = (
        f"{path}: {ADVISOR_LINUX_ROWS} inserted, 0 unchanged, 0 rejected (spot advisories as of 2022-07-23)"
    )
    assert expected in run(path, "--format", "spot-advisor")
    assert f"{path}: 0 inserted, {ADVISOR_LINUX_ROWS} unchanged, 0 rejected" in run(path)  # .json: guessed
    assert SpotAdvisory.objects.count() == ADVISOR_LINUX_ROWS
    # The snapshot: spot_advisor.us-east-1.Linux."g5.xlarge" = {"r": 0, "s": 70}.
    g5 = SpotAdvisory.objects.get(region_code="us-east-1", instance_type_name="g5.xlarge")
    assert (g5.interruption_label, g5.savings_pct, g5.provider.slug) == ("<5%", 70, "aws")
    assert set(SpotAdvisory.objects.values_list("observed_at", flat=True)) == {
        dt.datetime(2022, 7, 23, tzinfo=dt.UTC)
    }
    refresh = PriceRefresh.objects.filter(source=f"import:{path.name}").order_by("pk").first()
    assert (refresh.status, refresh.rows_seen, refresh.rows_inserted) == (
        "succeeded",
        ADVISOR_LINUX_ROWS,
        ADVISOR_LINUX_ROWS,
    )


def test_a_bad_entry_of_a_snapshot_is_refused_and_the_rest_lands(tmp_path):
    path = advisor_file(
        tmp_path,
        "advisor-2026-11-30.json",
        {"g5.xlarge": {"r": 0, "s": 70}, "p4d.24xlarge": {"r": 7, "s": 60}},
    )
    out = run(path)
    assert "1 inserted, 0 unchanged, 1 rejected" in out
    assert "refused (out_of_range): 1" in out and "spot_advisor.us-east-1.Linux.p4d.24xlarge.r" in out
    assert list(SpotAdvisory.objects.values_list("instance_type_name", flat=True)) == ["g5.xlarge"]
    refresh = PriceRefresh.objects.get()
    assert (refresh.status, refresh.rows_seen, refresh.rows_refused) == ("succeeded", 2, 1)
    assert refresh.refused_reasons["out_of_range"]["count"] == 1


def test_it_dates_an_unnamed_snapshot_by_observed_at_or_the_day_it_was_written(tmp_path):
    path = advisor_file(tmp_path, "spot-advisor-data.json", {"g5.xlarge": {"r": 1, "s": 65}})
    written = dt.datetime(2026, 11, 29, 17, 45, tzinfo=dt.UTC).timestamp()
    os.utime(path, (written, written))
    assert "(spot advisories as of 2026-11-29)" in run(path)
    assert "1 inserted" in run(path, "--observed-at", "2026-11-30")
    assert sorted(SpotAdvisory.objects.values_list("observed_at", flat=True)) == [
        dt.datetime(2026, 11, 29, tzinfo=dt.UTC),
        dt.datetime(2026, 11, 30, tzinfo=dt.UTC),
    ]


def test_it_refuses_a_non_aws_provider_for_a_spot_advisor_file(tmp_path):
    path = advisor_file(tmp_path, "advisor-2026-11-30.json", {"g5.xlarge": {"r": 0, "s": 70}})
    with pytest.raises(CommandError, match="describes AWS only"):
        run(path, "--provider", "gcp")
    assert not SpotAdvisory.objects.exists()
