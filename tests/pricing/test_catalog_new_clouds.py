"""Nebius, Hyperstack and Verda from the bundled SkyPilot catalogs: names mapped or reported, host figures,
prices as snapshots, interconnects with sources, spot sanity, and the landing page and API showing them.

Every figure below is read off the bundled files (pricing/data/skypilot/<cloud>/vms.csv), line named.
"""

import hashlib
import math
from decimal import Decimal
from io import StringIO

import pytest
from django.core.management import call_command

from pricing.catalog import DATA_DIR
from pricing.choices import PricingModel
from pricing.models import InstanceType, PriceObservation, Provider, UnmappedGpuName
from pricing.selectors import offer_frame, with_quality
from procurement.ranking.interconnects import resolve
from procurement.sizing import gpu_by_slug

pytestmark = pytest.mark.django_db

NEW_CLOUDS = ("nebius", "hyperstack", "verda")
# data/skypilot/PROVENANCE.md, the same as /work/shared/data/skypilot-catalog/PROVENANCE.md
SHA256 = {
    "nebius": "eb3007fb983a2fcb7ea17f2cab3c4c40eb0b10813cb851d7e1bc1ec0dc608564",
    "hyperstack": "9e522845d942f383e93b239731033c6e9ff4c67a7d01722fc5b1e032f9740a22",
    "verda": "05edb56cef6e749ac5bdf926c4947264a2229f1dbeffc58065ff04fa969926fd",
}


def _prices(provider, model=None):
    rows = PriceObservation.objects.filter(offer__instance_type__provider__slug=provider)
    return rows.filter(pricing_model=model) if model else rows


def _price(provider, instance_type, region, model=PricingModel.ON_DEMAND):
    return (
        _prices(provider, model)
        .get(offer__instance_type__name=instance_type, offer__region__code=region)
        .amount_per_hour
    )


@pytest.mark.parametrize("cloud", NEW_CLOUDS)
def test_the_bundled_file_is_the_shared_file_unchanged(cloud):
    path = DATA_DIR / "skypilot" / cloud / "vms.csv"
    assert hashlib.sha256(path.read_bytes()).hexdigest() == SHA256[cloud]
    assert SHA256[cloud] in (DATA_DIR / "skypilot" / "PROVENANCE.md").read_text()


def test_each_new_cloud_loads_every_priced_gpu_row_as_a_snapshot(bundled_catalog):
    # Nebius: 21 GPU rows, all with an on-demand price, 8 with spot (H100 x2, H200 x6; L40S and B200 none)
    # Hyperstack: 25 GPU rows, on-demand only. Verda: 22 GPU rows, 5 spot-only (empty Price: lines 3, 6, 7, 8,
    # 21) and 6 without spot (lines 9, 10, 16, 17, 22, 23): 17 on-demand + 16 spot.
    counts = {
        cloud: (_prices(cloud, "on_demand").count(), _prices(cloud, "spot").count()) for cloud in NEW_CLOUDS
    }
    assert counts == {"nebius": (21, 8), "hyperstack": (25, 0), "verda": (17, 16)}
    sources = set(
        PriceObservation.objects.filter(offer__instance_type__provider__slug__in=NEW_CLOUDS).values_list(
            "source", flat=True
        )
    )
    assert sources == {f"skypilot:{cloud}/vms.csv" for cloud in NEW_CLOUDS}
    frame = with_quality(
        offer_frame(gpu_mapped_only=False, offer__instance_type__provider__slug__in=NEW_CLOUDS)
    )
    assert set(frame["price_quality"]) == {"snapshot"} and set(frame["provider"]) == set(NEW_CLOUDS)
    assert set(Provider.objects.filter(slug__in=NEW_CLOUDS).values_list("kind", flat=True)) == {"neocloud"}


def test_the_named_rows_keep_their_catalog_prices(bundled_catalog):
    # nebius/vms.csv line 43: gpu-h100-sxm_8gpu-128vcpu-1600gb,H100,8,128,1600,23.60,eu-north1,...,10.00
    assert _price("nebius", "gpu-h100-sxm_8gpu-128vcpu-1600gb", "eu-north1") == Decimal("23.600000")
    assert _price("nebius", "gpu-h100-sxm_8gpu-128vcpu-1600gb", "eu-north1", "spot") == Decimal("10.000000")
    # hyperstack/vms.csv line 24: n3-RTX-A6000x2,RTX-A6000,2,60,116.0,...,1.0,CANADA-1,
    assert _price("hyperstack", "n3-RTX-A6000x2", "CANADA-1") == Decimal("1.000000")
    # verda/vms.csv line 3: 2B300.60V ... FIN-03,,4.893 (spot only: no on-demand row stored, never 0)
    assert _price("verda", "2B300.60V", "FIN-03", "spot") == Decimal("4.893000")
    assert not _prices("verda", "on_demand").filter(offer__instance_type__name="2B300.60V").exists()
    # verda/vms.csv line 13: 1H100.80S.32V ... FIN-02,2.29,0.8015
    assert _price("verda", "1H100.80S.32V", "FIN-02") == Decimal("2.290000")
    assert _price("verda", "1H100.80S.32V", "FIN-02", "spot") == Decimal("0.801500")


def test_gpu_names_map_with_a_reason_and_the_rest_are_reported(bundled_catalog):
    def gpu(provider, name):
        return InstanceType.objects.get(provider__slug=provider, name=name).gpu.slug

    assert gpu("nebius", "gpu-h100-sxm_8gpu-128vcpu-1600gb") == "h100-sxm5-80gb"
    assert gpu("nebius", "gpu-h200-sxm_1gpu-16vcpu-200gb") == "h200-sxm-141gb"
    assert gpu("nebius", "gpu-l40s-d_4gpu-128vcpu-768gb") == "l40s"
    assert gpu("nebius", "gpu-b200-sxm_8gpu-160vcpu-1792gb") == "b200"
    # Hyperstack's "PCIe-NVLink" rows hold 80 GB (81920 MiB) cards: the PCIe parts, not the 94 GB H100 NVL
    assert gpu("hyperstack", "n3-H100x8-NVLink") == "h100-pcie-80gb"
    assert gpu("hyperstack", "n3-A100x8-NVLink") == "a100-pcie-80gb"
    assert gpu("hyperstack", "n3-H100-SXM5x8") == "h100-sxm5-80gb"
    assert gpu("hyperstack", "n3-L40x1") == "l40" and gpu("hyperstack", "n3-RTX-A6000x8") == "rtx-a6000"
    assert (
        gpu("verda", "2H200.141S.88V") == "h200-sxm-141gb"
        and gpu("verda", "1RTX6000ADA.10V") == "rtx-6000-ada"
    )
    # No datasheet row for RTX A4000, B300 or RTX PRO 6000 (pricing/data/gpu_specs.csv): stored without a
    # GPU model and reported by load_catalog, never dropped
    unmapped = dict(
        UnmappedGpuName.objects.filter(provider__slug__in=NEW_CLOUDS).values_list("name", "rows_seen")
    )
    assert unmapped == {"RTX-A4000": 5, "B300": 3, "RTX-PRO-6000": 4}  # instance types per name
    assert bundled_catalog.prices.unmapped_gpu_names["verda:B300"] == 3
    assert InstanceType.objects.filter(provider__slug="hyperstack", gpu=None).count() == 5
    assert _prices("hyperstack").filter(offer__instance_type__name="n3-RTX-A4000x10").exists()


def test_host_figures_are_the_rows_own_and_a_contradiction_is_unknown(bundled_catalog):
    def host(provider, name):
        it = InstanceType.objects.get(provider__slug=provider, name=name)
        return it.vcpus, it.memory_gib

    assert host("nebius", "gpu-l40s-a_1gpu-8vcpu-32gb") == (
        8,
        32,
    )  # a VM size priced by its size (1.5484 $/h)
    assert host("hyperstack", "n3-A100x1") == (28, 120)
    assert host("verda", "1B300.30V") == (30, 275)
    # hyperstack/vms.csv lines 12-13: n3-H100-SXM5x8 has 1800 GiB in CANADA-1 and 960 GiB in US-1: no one host, so
    # the smallest listed, a lower bound (fix51hd, after audhd)
    assert host("hyperstack", "n3-H100-SXM5x8") == (192, 960)


@pytest.mark.parametrize(
    ("provider", "instance_type", "gpu", "node", "gbps", "fabric", "source"),
    [
        # Nebius GPU clusters: 8-GPU H100/H200 hosts on InfiniBand, 3.2 Tbit/s per host (docs.nebius.com)
        (
            "nebius",
            "gpu-h100-sxm_8gpu-128vcpu-1600gb",
            "h100-sxm5-80gb",
            "nvlink",
            450.0,
            "InfiniBand 3200 Gb/s",
            "https://docs.nebius.com/compute/clusters/gpu",
        ),
        (
            "nebius",
            "gpu-h200-sxm_8gpu-128vcpu-1600gb",
            "h200-sxm-141gb",
            "nvlink",
            450.0,
            "InfiniBand 3200 Gb/s",
            "https://docs.nebius.com/compute/clusters/gpu",
        ),
        # B200: Nebius's own MLPerf Inference v6.0 system description states 8x ConnectX-7 IB NDR 400 Gb/s per
        # host (3.2 Tbit/s InfiniBand), so 8-GPU B200 hosts join multi-node plans too (issue 26)
        (
            "nebius",
            "gpu-b200-sxm_8gpu-160vcpu-1792gb",
            "b200",
            "nvlink",
            900.0,
            "InfiniBand 3200 Gb/s",
            "https://raw.githubusercontent.com/mlcommons/inference_results_v6.0/main/closed/Nebius/systems/nebius_b200_n1.json",
        ),
        (
            "nebius",
            "gpu-l40s-d_2gpu-64vcpu-384gb",
            "l40s",
            "pcie",
            32.0,
            "",
            "https://www.nvidia.com/en-us/data-center/l40s/",
        ),
        (
            "hyperstack",
            "n3-H100-SXM5x8",
            "h100-sxm5-80gb",
            "nvlink",
            450.0,
            "",
            "https://www.hyperstack.cloud/h100-sxm",
        ),
        # NVLink bridges pair cards: an 8-GPU collective still crosses PCIe 5.0 x16 (64 GB/s)
        (
            "hyperstack",
            "n3-H100x8-NVLink",
            "h100-pcie-80gb",
            "pcie",
            64.0,
            "",
            "https://www.nvidia.com/en-us/data-center/a100/",
        ),
        ("hyperstack", "n3-L40x8", "l40", "pcie", 32.0, "", "https://www.hyperstack.cloud/gpu-pricing"),
        ("verda", "8B200.240V", "b200", "nvlink", 900.0, "", "https://www.nvidia.com/en-us/data-center/hgx/"),
        ("verda", "2H200.141S.88V", "h200-sxm-141gb", "nvlink", 450.0, "", "https://verda.com/products"),
        ("verda", "4A100.88V", "a100-sxm4-80gb", "nvlink", 300.0, "", "https://verda.com/products"),
        ("verda", "2RTX6000ADA.20V", "rtx-6000-ada", "pcie", 32.0, "", "https://verda.com/products"),
    ],
)
def test_each_new_family_has_its_node_link_and_fabric_with_a_source(
    provider, instance_type, gpu, node, gbps, fabric, source
):
    link = resolve(provider, instance_type, gpu_by_slug(gpu))
    assert (link.node_link, link.node_gbps_per_direction, link.fabric_name, link.source_url) == (
        node,
        gbps,
        fabric,
        source,
    )
    # only the Nebius 8-GPU H100/H200/B200 hosts can join a multi-node plan: every other has no fabric
    assert link.has_fabric == (fabric != "")


def test_spot_quotes_pass_the_sanity_rules_and_spot_only_rows_have_no_reference(bundled_catalog):
    frame = with_quality(offer_frame(offer__instance_type__provider__slug__in=NEW_CLOUDS))
    spot = frame[frame["pricing_model"] == "spot"]
    assert not spot["spot_outlier"].any() and not spot["spot_no_saving"].any()
    nebius = spot[spot["provider"] == "nebius"]
    # Nebius spot is about 42% of on-demand: H100 1.25 / 2.95 = 0.4237, H200 1.45 / 3.50 = 0.4143
    ratios = (nebius["price_per_hour_usd_float"] / nebius["on_demand_usd"]).round(4)
    assert set(ratios) == {0.4237, 0.4143} and len(nebius) == 8
    # Verda's spot-only rows (2B300.60V, 2B200.60V, 4B200.120V, 8B200.240V, 8RTXPRO6000.240V; the last is
    # unmapped so not in this GPU-mapped frame) have no on-demand to compare with: NaN, ranked at the quote
    verda = spot[spot["provider"] == "verda"].set_index("instance_type")
    for name in ("2B200.60V", "4B200.120V", "8B200.240V"):
        assert math.isnan(verda.loc[name, "on_demand_usd"])
        assert verda.loc[name, "robust_price_usd"] == verda.loc[name, "price_per_hour_usd_float"]
    # where both exist Verda's spot is 35% of on-demand: 1H100.80S.32V 0.8015 / 2.29 = 0.35
    assert (
        round(
            verda.loc["1H100.80S.32V", "price_per_hour_usd_float"]
            / verda.loc["1H100.80S.32V", "on_demand_usd"],
            4,
        )
        == 0.35
    )


def test_the_landing_page_and_the_offer_api_show_the_new_providers(client_as, bundled_catalog):
    client = client_as("viewer")
    page = client.get("/").content.decode()
    # the cheapest on-demand L40 GPU-hour is Hyperstack's n3-L40x1 (1.0 $/h, hyperstack/vms.csv line 14): the
    # only L40 in the catalog
    assert "hyperstack · CANADA-1" in page
    rows = client.get("/api/offers/", {"provider": "nebius", "limit": 1000}).json()
    assert {row["provider"] for row in rows} == {"nebius"} and len(rows) == 29
    out = StringIO()
    call_command("gpus", stdout=out)
    lines = {line.split()[0]: line for line in out.getvalue().splitlines()}
    # H100 SXM5 is sold by AWS (p5), GCP (a3), Lambda, Cudo, Vast, Nebius, Hyperstack, Verda, JarvisLabs
    # (its pricing page: "H100 SXM"), Lium (lium/vms.csv: H100-SXM_8x, the generic H100-SXM alias), OCI
    # (oci/vms.gpu.csv: BM.GPU.H100.8, SXM5 in Oracle's MLPerf system description) and RunPod
    # (runpod/vms.v7.csv: 1x..8x_H100-SXM_SECURE, the generic alias)
    assert lines["h100-sxm5-80gb"].endswith(
        "[aws, cudo, gcp, hyperstack, jarvislabs, lambda, lium, nebius, oci, runpod, vast, verda]"
    )
    # L40: Hyperstack's n3-L40x1, since the Lium snapshot Lium's L40_4x (1.32 $/h for 4 GPUs) and RunPod's
    # 1x..8x_L40_SECURE (1.14 $/h a GPU, above Hyperstack's 1.0: Hyperstack stays the cheapest above)
    assert lines["l40"].endswith("[hyperstack, lium, runpod]")
