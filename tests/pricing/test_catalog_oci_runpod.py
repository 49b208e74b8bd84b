"""OCI and RunPod from their public SkyPilot catalog snapshots (skypilot-org/skypilot-catalog
catalogs/v8/<cloud>/vms.csv, pricing/data/skypilot/PROVENANCE.md). OCI is bundled whole for its GPU rows
(every region; the CPU-only VM.Standard rows left out, as for AWS and GCP); RunPod only as an EXCERPT (one
complete block of rows). Each loads as a snapshot, its prices are the rows' own, names are mapped by a
stated alias or reported, host figures are as given; OCI leaves the landing page's "not refreshed yet"
list, RunPod stays on it, marked as an excerpt.
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
    "runpod": "47beec5f8412b4c77b2621229ac929b321cd563aa1076b42b2918313dfc93640",
}
OCI_FILE = DATA_DIR / "skypilot" / "oci" / "vms.gpu.csv"


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


def _oci_rows():
    with OCI_FILE.open(newline="") as handle:
        return list(csv.DictReader(handle))


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


def test_every_row_loads_as_a_snapshot(bundled_catalog):
    # OCI: on demand is regional, so one price per (shape, region): 21 x 44 = 924; preemptible per AD:
    # 4 x 54 = 216 (hand counts above). RunPod: 48 rows of 1x_A100-80GB_SECURE, one per availability zone in
    # 14 countries (its Region column); on demand is one price per region, spot one per zone (as for AWS).
    counts = {c: (_prices(c, "on_demand").count(), _prices(c, "spot").count()) for c in SHA256}
    assert counts == {"oci": (924, 216), "runpod": (14, 48)}
    rows = _oci_rows()
    assert len({(r["InstanceType"], r["Region"]) for r in rows}) == 924
    assert (
        len({(r["InstanceType"], r["Region"], r["AvailabilityZone"]) for r in rows if r["SpotPrice"]}) == 216
    )
    assert {p.source for c in SHA256 for p in _prices(c, "on_demand")} == {
        "skypilot:oci/vms.gpu.csv",
        "skypilot:runpod/vms.excerpt.csv",
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
    # runpod/vms.excerpt.csv line 2 (catalog line 2):
    # 1x_A100-80GB_SECURE,A100-80GB,1.0,8.0,117.0,IN,1.39,1.39,AP-IN-1,"{...}"  (SpotPrice before Price)
    assert _price("runpod", "1x_A100-80GB_SECURE", "IN") == Decimal("1.390000")
    # line 49: ...,US,1.39,1.39,US-WA-1,...: the same 1.39 $/h in every one of the 25 US zones
    assert _price("runpod", "1x_A100-80GB_SECURE", "US") == Decimal("1.390000")
    assert _price("runpod", "1x_A100-80GB_SECURE", "US", PricingModel.SPOT) == Decimal("1.390000")


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
    # OCI does not state the A100's or V100's form factor, and H200/B300/GB300/MI355X/RTX PRO have no model
    assert slug("oci", "BM.GPU4.8") is None and slug("oci", "BM.GPU.A100-v2.8") is None
    reported = set(UnmappedGpuName.objects.filter(provider__slug="oci").values_list("name", flat=True))
    assert reported == {"A100", "A100-80GB", "B300", "GB300", "H200", "MI355X", "P100", "RTXPRO6000", "V100"}


def test_host_figures_are_as_given(bundled_catalog):
    # oci line 8: 224 vCPUs, 2048 GiB (the same in every region); runpod line 2: 8.0 vCPUs, 117.0 GiB
    h100 = InstanceType.objects.get(provider__slug="oci", name="BM.GPU.H100.8")
    assert (h100.gpu_count, h100.vcpus, h100.memory_gib) == (8, Decimal(224), Decimal(2048))
    a100 = InstanceType.objects.get(provider__slug="runpod", name="1x_A100-80GB_SECURE")
    assert (a100.gpu_count, a100.vcpus, a100.memory_gib) == (1, Decimal(8), Decimal(117))


@pytest.mark.parametrize("instance_type", ["BM.GPU.H100.8", "BM.GPU.B200.8"])
def test_oci_nvlink_rules_from_oracles_mlperf_descriptions_apply(instance_type):
    gpu = "h100-sxm5-80gb" if "H100" in instance_type else "b200"
    resolved = resolve("oci", instance_type, gpu_by_slug(gpu))
    assert (resolved.node_link, resolved.stated) == ("nvlink", True)
    assert "mlcommons/training_results" in resolved.source_url and "Oracle/systems" in resolved.source_url


def test_oci_leaves_the_not_refreshed_list_and_runpod_stays_on_it_as_an_excerpt(
    bundled_catalog, viewer_client
):
    rows = {row["provider"]: row for row in providers_not_refreshed()}
    # OCI's GPU offers of every region are bundled: it has offers without a refresh. RunPod's excerpt (one
    # type) is not its offers: the hint to turn on its gpuhunt source stays, marked as an excerpt
    assert "oci" not in rows
    assert rows["runpod"]["excerpt"]
    assert "only an excerpt of its public snapshot is bundled" in viewer_client.get("/").content.decode()
    listed = set(rows)
    # no public snapshot is bundled for these
    assert {"cloudrift", "crusoe", "digitalocean", "hotaisle", "vultr"} <= listed
