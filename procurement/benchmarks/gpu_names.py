"""Driver-reported GPU names (what `nvidia-smi` and `torch.cuda.get_device_name()` print) to catalog slugs.

Only exact names map; anything else is rejected at import rather than guessed. Names as the NVIDIA
driver reports them (seen in the SkyPilot/Vast catalogs' GpuInfo and NVIDIA's nvidia-smi output).
"""

from __future__ import annotations

DRIVER_NAMES = {
    "nvidia h200": "h200-sxm-141gb",
    "nvidia h100 80gb hbm3": "h100-sxm5-80gb",
    "nvidia h100 pcie": "h100-pcie-80gb",
    "nvidia h100 nvl": "h100-nvl-94gb",
    "nvidia a100-sxm4-80gb": "a100-sxm4-80gb",
    "nvidia a100-sxm4-40gb": "a100-sxm4-40gb",
    "nvidia a100 80gb pcie": "a100-pcie-80gb",
    "nvidia a100-pcie-40gb": "a100-pcie-40gb",
    "nvidia l40s": "l40s",
    "nvidia l40": "l40",
    "nvidia l4": "l4",
    "nvidia a10g": "a10g",
    "nvidia a10": "a10",
    "tesla t4": "t4",
    "nvidia b200": "b200",
    "nvidia geforce rtx 4090": "rtx-4090",
    "nvidia geforce rtx 3090": "rtx-3090",
    "nvidia geforce rtx 5090": "rtx-5090",
    "nvidia rtx a6000": "rtx-a6000",
    "nvidia rtx 6000 ada generation": "rtx-6000-ada",
}


def slug_for_driver_name(name: str) -> str | None:
    return DRIVER_NAMES.get(" ".join(name.lower().split()))
