"""OCI and RunPod from EXCERPTS of their public SkyPilot catalog snapshots (skypilot-org/skypilot-catalog
catalogs/v8/<cloud>/vms.csv, pricing/data/skypilot/PROVENANCE.md): each excerpt loads as a snapshot, its
prices are the rows' own, names are mapped by a stated alias or reported, host figures are as given, and
both providers leave the landing page's "not refreshed yet" list.
"""

import hashlib
from decimal import Decimal

import pytest

from pricing.catalog import DATA_DIR
from pricing.choices import PricingModel
from pricing.models import InstanceType, PriceObservation, UnmappedGpuName
from pricing.sources.status import providers_not_refreshed
from procurement.ranking.interconnects import resolve
from procurement.sizing import gpu_by_slug

pytestmark = pytest.mark.django_db

# data/skypilot/PROVENANCE.md
SHA256 = {
    "oci": "9d0cc207d05e556485103a9d9675e8d122f7b0e6111b24f29503180e51b853a6",
    "runpod": "47beec5f8412b4c77b2621229ac929b321cd563aa1076b42b2918313dfc93640",
}


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


@pytest.mark.parametrize("cloud", sorted(SHA256))
def test_the_bundled_excerpt_is_recorded_in_the_provenance(cloud):
    path = DATA_DIR / "skypilot" / cloud / "vms.excerpt.csv"
    assert hashlib.sha256(path.read_bytes()).hexdigest() == SHA256[cloud]
    assert SHA256[cloud] in (DATA_DIR / "skypilot" / "PROVENANCE.md").read_text()


def test_every_excerpt_row_loads_as_a_snapshot(bundled_catalog):
    # OCI: 21 GPU rows of af-casablanca-1, each with a Price; only the 4 VM.GPU2.1 / VM.GPU3.<n> rows have a
    # SpotPrice (preemptible). RunPod: 48 rows of 1x_A100-80GB_SECURE, one per availability zone in 14
    # countries (its Region column); on demand is one price per region, spot one per zone (as for AWS).
    counts = {c: (_prices(c, "on_demand").count(), _prices(c, "spot").count()) for c in SHA256}
    assert counts == {"oci": (21, 4), "runpod": (14, 48)}
    assert {p.source for c in SHA256 for p in _prices(c, "on_demand")} == {
        f"skypilot:{c}/vms.excerpt.csv" for c in SHA256
    }


def test_oci_prices_are_the_rows_own(bundled_catalog):
    # oci/vms.excerpt.csv line 8 (catalog line 56):
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
    # oci line 8: 224 vCPUs, 2048 GiB; runpod line 2: 8.0 vCPUs, 117.0 GiB
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


def test_oci_and_runpod_stay_listed_as_not_refreshed_because_only_excerpts_are_bundled(
    bundled_catalog, viewer_client
):
    rows = {row["provider"]: row for row in providers_not_refreshed()}
    # an excerpt (one region of OCI, one RunPod type) is not the provider's offers: the hint to turn on
    # its gpuhunt source stays, marked as an excerpt
    assert rows["oci"]["excerpt"] and rows["runpod"]["excerpt"]
    assert "only an excerpt of its public snapshot is bundled" in viewer_client.get("/").content.decode()
    listed = set(rows)
    # no public snapshot is bundled for these
    assert {"cloudrift", "crusoe", "digitalocean", "hotaisle", "vultr"} <= listed
