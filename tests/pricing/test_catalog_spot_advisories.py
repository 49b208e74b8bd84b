"""The bundled Spot Advisor snapshot loads with the catalog, so spot rankings use real interruption bands."""

from __future__ import annotations

import datetime as dt
import json
import shutil

import pytest

from pricing.catalog import DATA_DIR, CatalogError, catalog_load
from pricing.models import SpotAdvisory

pytestmark = pytest.mark.django_db

SNAPSHOT_NAME = "spot-advisor-data-2022-07-23.json"
# The advisor rows of the 2022-07-23 snapshot whose instance type is priced in the bundled AWS SkyPilot
# catalog (pricing/data/skypilot/aws/vms.gpu.csv): 375 (region, type) pairs, counted with a script over
# both files. The other Linux rows of the snapshot (6,726 in all) are not loaded.
BUNDLED_ADVISORIES = 375


def test_it_loads_the_bundled_snapshot_dated_by_its_file_name(bundled_catalog):
    assert SpotAdvisory.objects.count() == BUNDLED_ADVISORIES
    assert bundled_catalog.changes["spot_advisories"].created == BUNDLED_ADVISORIES
    # spot-advisor-data-2022-07-23.json: spot_advisor.us-east-1.Linux."p4d.24xlarge" = {"r": 0, "s": 70},
    # us-west-2 = {"r": 4, "s": 70}; ranges: index 0 "<5%", index 4 ">20%".
    east = SpotAdvisory.objects.get(region_code="us-east-1", instance_type_name="p4d.24xlarge")
    west = SpotAdvisory.objects.get(region_code="us-west-2", instance_type_name="p4d.24xlarge")
    assert (east.interruption_band, east.interruption_label, east.savings_pct) == (0, "<5%", 70)
    assert (west.interruption_band, west.interruption_label) == (4, ">20%")
    assert east.observed_at == dt.datetime(2022, 7, 23, tzinfo=dt.UTC)
    assert east.source == f"spot-advisor:{SNAPSHOT_NAME}" and east.provider.slug == "aws"


def test_it_loads_only_instance_types_the_catalog_prices(bundled_catalog):
    from pricing.models import InstanceType

    aws_types = set(InstanceType.objects.filter(provider__slug="aws").values_list("name", flat=True))
    advised = set(SpotAdvisory.objects.values_list("instance_type_name", flat=True))
    assert advised <= aws_types and "c5.large" not in advised


def test_a_second_load_writes_no_advisory(bundled_catalog):
    report = catalog_load()
    assert report.changes["spot_advisories"].changed == 0
    assert report.changes["spot_advisories"].unchanged == BUNDLED_ADVISORIES


def test_spot_rows_of_the_ranking_get_advisor_bands(bundled_catalog):
    from procurement.selectors import ranking_offer_frame

    frame = ranking_offer_frame()
    spot = frame[(frame["provider"] == "aws") & (frame["pricing_model"] == "spot")]
    p4d_east = spot[(spot["instance_type"] == "p4d.24xlarge") & (spot["region"] == "us-east-1")]
    assert len(p4d_east) > 0 and set(p4d_east["interruption_band"]) == {0.0}
    # A row has a band exactly when the 2022 snapshot lists its (region, type); types launched after
    # July 2022 (p5, g6, g6e ...) and regions it lacks keep the ranking's assumed band.
    advised = set(SpotAdvisory.objects.values_list("region_code", "instance_type_name"))
    listed = [
        (region, name) in advised for region, name in zip(spot["region"], spot["instance_type"], strict=True)
    ]
    assert list(spot["interruption_band"].notna()) == listed
    assert sum(listed) > 0


@pytest.fixture
def data_copy(tmp_path):
    target = tmp_path / "data"
    shutil.copytree(DATA_DIR, target)
    return target


def test_a_bad_row_of_a_snapshot_is_refused_and_every_other_band_loads(db, data_copy):
    path = data_copy / "spot_advisor" / SNAPSHOT_NAME
    data = json.loads(path.read_text())
    data["spot_advisor"]["us-east-1"]["Linux"]["p4d.24xlarge"]["r"] = 9
    path.write_text(json.dumps(data))
    report = catalog_load(data_dir=data_copy)
    assert report.spot_advisory_refusals.counts == {"out_of_range": 1}
    assert (
        "spot_advisor.us-east-1.Linux.p4d.24xlarge.r"
        in report.spot_advisory_refusals.examples["out_of_range"][0]
    )
    assert not SpotAdvisory.objects.filter(
        region_code="us-east-1", instance_type_name="p4d.24xlarge"
    ).exists()
    assert SpotAdvisory.objects.filter(region_code="us-west-2", instance_type_name="p4d.24xlarge").exists()
    assert SpotAdvisory.objects.filter(region_code="us-east-1", instance_type_name="p3.2xlarge").exists()


def test_a_snapshot_without_a_date_in_its_name_is_refused(db, data_copy):
    folder = data_copy / "spot_advisor"
    (folder / SNAPSHOT_NAME).rename(folder / "spot-advisor-data-latest.json")
    with pytest.raises(CatalogError, match="must carry the snapshot date"):
        catalog_load(data_dir=data_copy)
    assert not SpotAdvisory.objects.exists()
