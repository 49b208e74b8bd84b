"""Azure GPU VM sizes: the GPU model, GPU count, vCPUs and memory of each size the price reader maps.

The Retail Prices API names a size (``armSkuName``, e.g. ``Standard_ND96isr_H100_v5``) but says nothing
about what it holds, so the figures come from Azure's size pages, one per series (Microsoft Learn,
``learn.microsoft.com/azure/virtual-machines/sizes/gpu-accelerated/<series>``, read 2026-12). A size
not listed here is refused by the reader (reason ``size``) rather than guessed; add it with its page.

GPU names are the ones pricing/data/gpu_aliases.csv maps for provider ``azure``. NVadsA10 v5 sizes
carry a share of one A10 (1/6, 1/3, 1/2: Azure's partitioned GPU); NVv3's Tesla M60 has no datasheet
entry here, so those sizes are stored with no GPU model and listed as unmapped, as every source does.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

SIZES_PAGE = "https://learn.microsoft.com/azure/virtual-machines/sizes/gpu-accelerated/"


@dataclass(frozen=True)
class AzureSize:
    gpu_name: str
    gpu_count: Decimal
    vcpus: int
    memory_gib: int
    series_page: str  # the size page under SIZES_PAGE
    interconnect: str = ""


def _series(page: str, gpu: str, rows: list[tuple[str, str, int, int]], interconnect: str = "") -> dict:
    return {
        f"Standard_{name}": AzureSize(gpu, Decimal(count), vcpus, memory, page, interconnect)
        for name, count, vcpus, memory in rows
    }


# (size without "Standard_", GPUs, vCPUs, memory GiB) per series, as each page's size table lists them.
AZURE_GPU_SIZES: dict[str, AzureSize] = {
    # NCv3: Tesla V100 PCIe 16 GB
    **_series(
        "ncv3-series",
        "V100",
        [
            ("NC6s_v3", "1", 6, 112),
            ("NC12s_v3", "2", 12, 224),
            ("NC24s_v3", "4", 24, 448),
            ("NC24rs_v3", "4", 24, 448),
        ],
    ),
    # NCasT4_v3: NVIDIA T4 16 GB
    **_series(
        "ncast4v3-series",
        "T4",
        [
            ("NC4as_T4_v3", "1", 4, 28),
            ("NC8as_T4_v3", "1", 8, 56),
            ("NC16as_T4_v3", "1", 16, 110),
            ("NC64as_T4_v3", "4", 64, 440),
        ],
    ),
    # NC A100 v4: A100 80 GB PCIe
    **_series(
        "nca100v4-series",
        "A100-80GB-PCIE",
        [
            ("NC24ads_A100_v4", "1", 24, 220),
            ("NC48ads_A100_v4", "2", 48, 440),
            ("NC96ads_A100_v4", "4", 96, 880),
        ],
    ),
    # NCads H100 v5: H100 NVL 94 GB (PCIe, NVLink bridge between pairs)
    **_series(
        "ncadsh100v5-series",
        "H100-NVL",
        [("NC40ads_H100_v5", "1", 40, 320), ("NC80adis_H100_v5", "2", 80, 640)],
    ),
    # NDv2: 8 x V100 SXM2 32 GB with NVLink
    **_series("ndv2-series", "V100-32GB", [("ND40rs_v2", "8", 40, 672)], "NVLink 2"),
    # ND A100 v4: 8 x A100 40 GB SXM4, NVSwitch; NDm A100 v4: 8 x A100 80 GB SXM4
    **_series("nda100v4-series", "A100", [("ND96asr_v4", "8", 96, 900)], "NVLink 3 (NVSwitch)"),
    **_series("ndma100v4-series", "A100-80GB", [("ND96amsr_A100_v4", "8", 96, 1900)], "NVLink 3 (NVSwitch)"),
    # ND H100 v5: 8 x H100 SXM5 80 GB; ND H200 v5: 8 x H200 141 GB; ND MI300X v5: 8 x MI300X
    **_series("ndh100v5-series", "H100", [("ND96isr_H100_v5", "8", 96, 1900)], "NVLink 4 (NVSwitch)"),
    **_series("ndh200v5-series", "H200", [("ND96isr_H200_v5", "8", 96, 1850)], "NVLink 4 (NVSwitch)"),
    **_series("ndmi300xv5-series", "MI300X", [("ND96isr_MI300X_v5", "8", 96, 1850)], "Infinity Fabric"),
    # NVadsA10 v5: a share of one A10 24 GB, up to two whole A10s
    **_series(
        "nvadsa10v5-series",
        "A10",
        [
            ("NV6ads_A10_v5", "0.166667", 6, 55),
            ("NV12ads_A10_v5", "0.333333", 12, 110),
            ("NV18ads_A10_v5", "0.5", 18, 220),
            ("NV36ads_A10_v5", "1", 36, 440),
            ("NV36adms_A10_v5", "1", 36, 880),
            ("NV72ads_A10_v5", "2", 72, 880),
        ],
    ),
    # NVv3: Tesla M60 (no datasheet entry: stored unmapped)
    **_series(
        "nvv3-series",
        "M60",
        [("NV12s_v3", "1", 12, 112), ("NV24s_v3", "2", 24, 224), ("NV48s_v3", "4", 48, 448)],
    ),
}

GPU_FAMILY_PREFIXES = ("Standard_NC", "Standard_ND", "Standard_NV")


def is_gpu_family(arm_sku_name: str) -> bool:
    """True for the NC, ND and NV families (Azure's GPU-accelerated sizes)."""
    return arm_sku_name.startswith(GPU_FAMILY_PREFIXES)
