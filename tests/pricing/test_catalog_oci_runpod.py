"""OCI and RunPod from their public SkyPilot catalog snapshots (skypilot-org/skypilot-catalog,
pricing/data/skypilot/PROVENANCE.md). OCI is bundled whole for its GPU rows (catalogs/v8/oci/vms.csv, every
region; the CPU-only VM.Standard rows left out, as for AWS and GCP); RunPod whole (catalogs/v7/runpod/vms.csv,
schema v7: v8's file was too large to read whole, so its prices are older). Each loads as a snapshot, its
prices are the rows' own, names are mapped by a stated alias or reported, host figures are as given; both
leave the landing page's "not refreshed yet" list.
"""

import csv
import hashlib
from decimal import Decimal

import pytest

from pricing.catalog import DATA_DIR, SKYPILOT_FILES
from pricing.choices import PricingModel
from pricing.models import InstanceType, PriceObservation, UnmappedGpuName
from pricing.sources.status import providers_not_refreshed
from procurement.ranking.interconnects import resolve
from procurement.sizing import gpu_by_slug

pytestmark = pytest.mark.django_db

# data/skypilot/PROVENANCE.md
SHA256 = {
    "oci": "25b1817e9b001f93e22565e187640e1eaa85aef242df00bfb0324c4e681403f3",
    "runpod": "6b14c34275ad56bfd119426b16d9fc36ed8a37f8f457ad713487a4ca21f6ff01",
}
OCI_FILE = DATA_DIR / "skypilot" / "oci" / "vms.gpu.csv"
RUNPOD_FILE = DATA_DIR / "skypilot" / "runpod" / "vms.v7.csv"


def _prices(provider, model):
    return PriceObservation.objects.filter(offer__instance_type__provider__slug=provider, pricing_model=model)


def _price(provider, instance_type, region, model=PricingModel.ON_DEMAND):
    return (
        _prices(provider, model)
        .filter(offer__instance_type__name=instance_type, offer__region__code=region)
        .values_list("amount_per_hour", flat=True)
        .distinct()
        .get()
    )


def _rows(path):
    with path.open(newline="") as handle:
        return list(csv.DictReader(handle))


def _oci_rows():
    return _rows(OCI_FILE)


@pytest.mark.parametrize("cloud", sorted(SHA256))
def test_the_bundled_file_is_recorded_in_the_provenance(cloud):
    path = DATA_DIR / SKYPILOT_FILES[cloud]
    assert hashlib.sha256(path.read_bytes()).hexdigest() == SHA256[cloud]
    assert SHA256[cloud] in (DATA_DIR / "skypilot" / "PROVENANCE.md").read_text()


def test_the_oci_file_is_every_gpu_row_of_every_region_as_counted_by_hand():
    # Counted while rebuilding it from the 28 index pages (PROVENANCE.md): each of the 54 availability
    # domains of the 44 regions lists the same 21 GPU shapes (48 CPU-only VM.Standard.E4/E5.Flex rows before
    # them, left out): 54 x 21 = 1,134 rows. Frankfurt, London, Ashburn, Chicago and Phoenix have 3 ADs each,
    # the 39 other regions one: 39 + 5 x 3 = 54.
    raw = OCI_FILE.read_bytes()
    assert raw.count(b"\r\n") == raw.count(b"\n") == 1 + 1134  # CRLF, as the source (csv.writer)
    rows = _oci_rows()
    assert len(rows) == 1134 and all(len(row) == 10 and None not in row for row in rows)
    assert all(row["AcceleratorName"] for row in rows)
    assert not any(row["InstanceType"].startswith("VM.Standard") for row in rows)
    zones = {(row["Region"], row["AvailabilityZone"]) for row in rows}
    assert (len({row["Region"] for row in rows}), len(zones)) == (44, 54)
    assert len({row["InstanceType"] for row in rows}) == 21
    # only VM.GPU2.1 and VM.GPU3.1/2/4 carry a SpotPrice (preemptible): 4 x 54 = 216 rows
    spot = {row["InstanceType"] for row in rows if row["SpotPrice"]}
    assert spot == {"VM.GPU2.1", "VM.GPU3.1", "VM.GPU3.2", "VM.GPU3.4"}
    assert sum(1 for row in rows if row["SpotPrice"]) == 216


def test_the_runpod_file_is_the_whole_v7_snapshot_as_counted_by_hand():
    # Counted while rebuilding it from the 11 index pages (PROVENANCE.md): 169,061 characters (the index's
    # total_chars), CRLF. 80 GPU instance types (20 GPU names x 1/2/4/8 GPUs) over the same 25 zones of 8
    # countries (its Region column), except 8x_RTXA6000_SECURE (11 rows: no US zone) and 2x_B200_SECURE (39: its
    # 14 US rows are written twice): 78 x 25 + 11 + 39 = 2,000 GPU rows; 30 CPU-only cpu3*/cpu5* types x 25 = 750
    raw = RUNPOD_FILE.read_bytes()
    assert len(raw) == 169061 and raw.count(b"\r\n") == raw.count(b"\n") == 1 + 2750
    rows = _rows(RUNPOD_FILE)
    assert len(rows) == 2750 and all(len(row) == 10 and None not in row for row in rows)
    gpu = [row for row in rows if row["AcceleratorName"]]
    assert (len(gpu), len(rows) - len(gpu)) == (2000, 750)
    assert len({row["InstanceType"] for row in gpu}) == 80 and len({r["AcceleratorName"] for r in gpu}) == 20
    assert len({(row["Region"], row["AvailabilityZone"]) for row in rows}) == 25
    assert sum(1 for row in gpu if row["InstanceType"] == "8x_RTXA6000_SECURE") == 11
    assert sum(1 for row in gpu if row["InstanceType"] == "2x_B200_SECURE") == 39
    # 32 types carry a SpotPrice (A100-80GB, H100-SXM, H200-SXM, L40, L40S, RTX4090, RTXA4500, RTXA6000)
    assert len({row["InstanceType"] for row in gpu if row["SpotPrice"]}) == 32


def test_every_row_loads_as_a_snapshot(bundled_catalog):
    # OCI: on demand is regional, so one price per (shape, region): 21 x 44 = 924; preemptible per AD:
    # 4 x 54 = 216 (hand counts above). RunPod: on demand is one price per (type, country): 80 x 8 - 1 = 639
    # (8x_RTXA6000 has no US row); spot one per zone: 32 x 25 - 14 = 786 (8x_RTXA6000 again). Its 750 CPU-only
    # rows are skipped, and the repeated 2x_B200 US rows (no spot price) add nothing.
    counts = {c: (_prices(c, "on_demand").count(), _prices(c, "spot").count()) for c in SHA256}
    assert counts == {"oci": (924, 216), "runpod": (639, 786)}
    runpod = [row for row in _rows(RUNPOD_FILE) if row["AcceleratorName"]]
    assert len({(r["InstanceType"], r["Region"]) for r in runpod}) == 639
    assert (
        len({(r["InstanceType"], r["Region"], r["AvailabilityZone"]) for r in runpod if r["SpotPrice"]})
        == 786
    )
    rows = _oci_rows()
    assert len({(r["InstanceType"], r["Region"]) for r in rows}) == 924
    assert (
        len({(r["InstanceType"], r["Region"], r["AvailabilityZone"]) for r in rows if r["SpotPrice"]}) == 216
    )
    assert {p.source for c in SHA256 for p in _prices(c, "on_demand")} == {
        "skypilot:oci/vms.gpu.csv",
        "skypilot:runpod/vms.v7.csv",  # the catalog's schema version stays on every offer
    }


def test_oci_prices_are_the_rows_own(bundled_catalog):
    # oci/vms.gpu.csv line 8 (catalog line 56):
    # BM.GPU.H100.8,H100,8,224,2048,"{...}",80,,af-casablanca-1,AF-CASABLANCA-1-AD-1
    # 80 $/h for the 8-GPU host (10.00 $/GPU-hour)
    assert _price("oci", "BM.GPU.H100.8", "af-casablanca-1") == Decimal("80.000000")
    # line 12: BM.GPU.MI355X.8,MI355X,8,256,3072,"{...}",68.8,,af-casablanca-1,... = 8 x 8.60
    assert _price("oci", "BM.GPU.MI355X.8", "af-casablanca-1") == Decimal("68.800000")
    # line 19: VM.GPU2.1,P100,1,24,72,"{...}",1.275,0.6375,af-casablanca-1,... : preemptible is half
    assert _price("oci", "VM.GPU2.1", "af-casablanca-1") == Decimal("1.275000")
    assert _price("oci", "VM.GPU2.1", "af-casablanca-1", PricingModel.SPOT) == Decimal("0.637500")
    # line 17: VM.GPU.A10.1 at 2 $/h and line 2: BM.GPU.A10.4 at 8 $/h = 4 x 2: the A10 is priced per GPU
    assert _price("oci", "BM.GPU.A10.4", "af-casablanca-1") == 4 * _price(
        "oci", "VM.GPU.A10.1", "af-casablanca-1"
    )
    # the last line, 1135 (catalog line 3727): VM.GPU3.4,V100,4,48,360,"{...}",11.8,5.9,us-sanjose-1,US-SANJOSE-1-AD-1
    assert _price("oci", "VM.GPU3.4", "us-sanjose-1") == Decimal("11.800000")
    assert _price("oci", "VM.GPU3.4", "us-sanjose-1", PricingModel.SPOT) == Decimal("5.900000")


def test_a_region_with_three_ads_has_one_on_demand_price_and_a_preemptible_price_per_ad(bundled_catalog):
    # us-ashburn-1 lists BM.GPU.H100.8 at 80 in US-ASHBURN-AD-1, -2 and -3 (lines 932, 953, 974): one regional
    # on-demand price; VM.GPU3.1 (2.95, preemptible 1.475; lines 944, 965, 986) once per AD
    assert _price("oci", "BM.GPU.H100.8", "us-ashburn-1") == Decimal("80.000000")
    spot = _prices("oci", PricingModel.SPOT).filter(
        offer__instance_type__name="VM.GPU3.1", offer__region__code="us-ashburn-1"
    )
    assert spot.count() == 3 and set(spot.values_list("amount_per_hour", flat=True)) == {Decimal("1.475000")}


def test_runpod_prices_are_the_rows_own(bundled_catalog):
    # runpod/vms.v7.csv line 2 (header: ...,GpuInfo,Region,SpotPrice,Price,AvailabilityZone):
    # 1x_A100-80GB_SECURE,A100-80GB,1.0,8.0,80.0,A100-80GB,CA,1.19,1.64,CA-MTL-1
    assert _price("runpod", "1x_A100-80GB_SECURE", "CA") == Decimal("1.640000")
    spot = _prices("runpod", PricingModel.SPOT).filter(offer__instance_type__name="1x_A100-80GB_SECURE")
    assert spot.filter(offer__region__code="CA").count() == 3  # CA-MTL-1/2/3, each a zone of its own
    assert set(spot.values_list("amount_per_hour", flat=True)) == {Decimal("1.190000")}
    # line 1901: 8x_B200_SECURE,B200,8.0,288.0,1440.0,B200,US,,63.92,US-WA-1 (8 x 7.99, line 1812: 1x)
    assert (
        _price("runpod", "8x_B200_SECURE", "US")
        == Decimal("63.920000")
        == 8 * _price("runpod", "1x_B200_SECURE", "US")
    )
    # line 802: 1x_L40S_SECURE,...,CA,0.86,0.43,CA-MTL-1: SpotPrice above Price, kept as the source gives it
    assert _price("runpod", "1x_L40S_SECURE", "CA") == Decimal("0.430000")
    assert _price("runpod", "1x_L40S_SECURE", "CA", PricingModel.SPOT) == Decimal("0.860000")


def test_names_are_mapped_by_a_stated_alias_or_reported_never_guessed(bundled_catalog):
    def slug(provider, name):
        model = InstanceType.objects.get(provider__slug=provider, name=name).gpu
        return model.slug if model else None

    assert slug("oci", "BM.GPU.H100.8") == "h100-sxm5-80gb"  # Oracle's MLPerf system description
    assert slug("oci", "BM.GPU.B200.8") == "b200"
    assert slug("oci", "VM.GPU.A10.2") == "a10"
    assert slug("oci", "BM.GPU.L40S.4") == "l40s"
    assert slug("oci", "BM.GPU.MI300X.8") == "mi300x"
    # SkyPilot's GPU_NAME_MAP: A100-80GB is RunPod's 'NVIDIA A100 80GB PCIe'; the row's GpuInfo says 'A100 PCIe'
    assert slug("runpod", "1x_A100-80GB_SECURE") == "a100-pcie-80gb"
    # the same map: H100 is 'NVIDIA H100 PCIe' (H100-SXM is 'NVIDIA H100 80GB HBM3'), H100-NVL 'NVIDIA H100 NVL'
    assert slug("runpod", "8x_H100_SECURE") == "h100-pcie-80gb"
    assert slug("runpod", "8x_H100-SXM_SECURE") == "h100-sxm5-80gb"
    assert slug("runpod", "1x_H100-NVL_SECURE") == "h100-nvl-94gb"
    assert slug("runpod", "1x_H200-SXM_SECURE") == "h200-sxm-141gb"
    # no datasheet bundled for the RTX A4000/A4500/A5000 and RTX 4000 Ada; the A100 SXM name is not in the map
    runpod = set(UnmappedGpuName.objects.filter(provider__slug="runpod").values_list("name", flat=True))
    assert runpod == {"A100-80GB-SXM", "RTX4000-Ada", "RTXA4000", "RTXA4500", "RTXA5000"}
    # OCI does not state the A100's or V100's form factor, and H200/B300/GB300/MI355X/RTX PRO have no model
    assert slug("oci", "BM.GPU4.8") is None and slug("oci", "BM.GPU.A100-v2.8") is None
    reported = set(UnmappedGpuName.objects.filter(provider__slug="oci").values_list("name", flat=True))
    assert reported == {"A100", "A100-80GB", "B300", "GB300", "H200", "MI355X", "P100", "RTXPRO6000", "V100"}


def test_host_figures_are_as_given(bundled_catalog):
    # oci line 8: 224 vCPUs, 2048 GiB (the same in every region); runpod line 2: 8.0 vCPUs, 80.0 GiB
    h100 = InstanceType.objects.get(provider__slug="oci", name="BM.GPU.H100.8")
    assert (h100.gpu_count, h100.vcpus, h100.memory_gib) == (8, Decimal(224), Decimal(2048))
    a100 = InstanceType.objects.get(provider__slug="runpod", name="1x_A100-80GB_SECURE")
    assert (a100.gpu_count, a100.vcpus, a100.memory_gib) == (1, Decimal(8), Decimal(80))
    # v7's GpuInfo is the accelerator's name only (no memory): the GPU memory is the datasheet's, not a guess
    assert a100.gpu_memory_gib is None


@pytest.mark.parametrize("instance_type", ["BM.GPU.H100.8", "BM.GPU.B200.8"])
def test_oci_nvlink_rules_from_oracles_mlperf_descriptions_apply(instance_type):
    gpu = "h100-sxm5-80gb" if "H100" in instance_type else "b200"
    resolved = resolve("oci", instance_type, gpu_by_slug(gpu))
    assert (resolved.node_link, resolved.stated) == ("nvlink", True)
    assert "mlcommons/training_results" in resolved.source_url and "Oracle/systems" in resolved.source_url


def test_oci_and_runpod_leave_the_not_refreshed_list(bundled_catalog, viewer_client):
    rows = {row["provider"]: row for row in providers_not_refreshed()}
    # their GPU offers are bundled: they have offers without a refresh
    assert "oci" not in rows and "runpod" not in rows
    listed = set(rows)
    # no public snapshot is bundled for these
    assert {"cloudrift", "crusoe", "digitalocean", "hotaisle", "vultr"} <= listed
