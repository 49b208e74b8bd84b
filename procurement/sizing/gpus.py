"""GPU datasheet records for the sizing engine, and the bundled catalog loader.

`GpuSpec` mirrors the columns of `pricing/data/gpu_specs.csv` (and the fields of the Django
`GpuModel`), so the web side can build one from a database row with the same names. Derived
facts the engine needs (architecture generation, usable memory, link bandwidth) live here too.
"""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass
from functools import cached_property, lru_cache
from pathlib import Path

from procurement.sizing.assumptions import (
    ACHIEVED_BANDWIDTH,
    COMM_EFFICIENCY,
    CUDA_CONTEXT_GIB,
    GB,
    GIB,
    GPUS_PER_NODE,
    MEASURED_DECODE_READ_FRACTIONS,
    MFU_DATACENTER,
    MFU_WORKSTATION,
    NETWORK_BANDWIDTH,
    NETWORK_BANDWIDTH_HOPPER,
)

BUNDLED_GPU_CSV = Path(__file__).resolve().parents[2] / "pricing" / "data" / "gpu_specs.csv"

# NVIDIA compute generations, oldest first; used for the bf16/fp8/fp4/flash-attention gates.
_GENERATIONS = (
    ("volta", 70),
    ("turing", 75),
    ("ampere", 80),
    ("ada", 89),
    ("hopper", 90),
    ("blackwell", 100),
)
HOPPER_GENERATION = dict(_GENERATIONS)["hopper"]
# PCIe x16 bandwidth per direction in GB/s by generation.
_PCIE_GBPS = {3: 16.0, 4: 32.0, 5: 64.0, 6: 128.0}
# A rack-scale NVLink domain named in the datasheet's interconnect column: "NVLink 5 (NVL72 NVLink Switch)" joins
# the 72 GPUs of a GB200 NVL72 (or GB300 NVL72) rack through its NVLink Switch trays, every GPU at its full NVLink 5
# rate (1.8 TB/s), where an HGX/DGX host joins 8 (NVIDIA's GB200 NVL72 page, the catalog row's source; cross-check
# https://aiwiki.ai/wiki/nvidia_gb200_nvl72: "joined into one NVLink domain", "1.8 TB/s per GPU").
NVLINK_DOMAIN_SOURCE = "https://www.nvidia.com/en-us/data-center/gb200-nvl72/"
_RACK_DOMAIN = re.compile(r"\bNVL(\d+)\b")


def nvlink_domain_gpus(interconnect: str) -> int:
    """GPUs one scale-up domain joins, from the datasheet's interconnect text: the rack's count where it names an
    NVL<n> domain (GB200/GB300 NVL72: 72), else one HGX/DGX node (GPUS_PER_NODE, 8). The one source of the size:
    the collectives of a group within it price at the node link (NVLink), beyond it at the fabric's rate."""
    found = _RACK_DOMAIN.search(interconnect or "")
    return int(found.group(1)) if found else int(GPUS_PER_NODE.value)


# Each card's L2 cache in bytes, from its architecture whitepaper (KB = 1,024 B); a card not listed has no opened
# source (None: the L2-residency terms of the image engine are left out there, today's behaviour).
# GA100: "NVIDIA A100 Tensor Core GPU Architecture" whitepaper (2020), Table 3: A100 L2 Cache Size 40960 KB.
# GH100: "NVIDIA H100 Tensor Core GPU Architecture" whitepaper (2022), Table 3: H100 SXM5 and H100 PCIe 50 MB.
# AD102: "NVIDIA Ada GPU Architecture" whitepaper (2022), Table 1: RTX 4090 73728 KB (72 MB), full AD102 98304 KB,
# taken for the L40S / L40 (AD102 parts whose NVIDIA datasheets state no L2: unverified).
# GA102: "NVIDIA Ampere GA102 GPU Architecture" whitepaper (2020), Table 1: 6144 KB (RTX 3090; taken for the GA102
# RTX A6000, A40, A10 / A10G). TU104: "NVIDIA Turing GPU Architecture" whitepaper (2018): 4096 KB (T4).
# GV100: "NVIDIA Tesla V100 GPU Architecture" whitepaper (2017): 6144 KB.
# fix51l (aud51m2 FIX LIST 1), every one UNVERIFIED (no NVIDIA whitepaper table for the part was opened):
# RTX 6000 Ada: an AD102 part (142 of 144 SMs, as the L40S), taken at the Ada whitepaper's full AD102 98304 KB.
# L4: AD104 (60 SMs, the full die), 48 MB: third-party spec databases (fpsbench.com's L4 page, TechPowerUp-derived:
#   "L2 Cache 48 MB"; the 2022 per-die table reported by hardware.info / allcore.be: AD104 192-bit 48 MB, 16 MB a
#   64-bit memory controller). NVIDIA's L4 datasheet states no L2.
# RTX 5090: GB202, 96 MB (98304 KB) as HardwareLuxx reported it (via hwlegend.tech / herosweb.com, Jan 2025).
# B200 / GB200: 126 MB over the two dies, Chips and Cheese's B200 article (measured on a Verda 8 x B200 host, as
#   summarised by besthub.dev; the article's own figure not read): taken as 126 MiB; partitioned per die, so the
#   all-or-nothing rule overstates what one kernel's walk may hold even more than on the A100 / H100.
# cards (GeForce, 12 / 16 GB): RTX 4080 (AD103, 16 GB): the Ada whitepaper's appendix table, 65536 KB. UNVERIFIED (no
#   NVIDIA table for the part; third-party spec databases, TechPowerUp-derived): RTX 4070 Ti SUPER (AD103 cut) 48 MB,
#   RTX 4060 Ti 16GB (AD106) 32 MB, RTX 3060 12GB (GA106) 3 MB (3072 KB).
# Left out (None, not charged; the speed note says so): H20 (no figure found), AMD MI250X / MI300X / MI325X (their
# 'Infinity Cache' is a memory-side last level beyond a per-XCD 4 MB L2: not the level this rule reads), Gaudi.
_KB = 1024
L2_CACHE_BYTES_BY_SLUG = {
    **dict.fromkeys(
        ("a100-sxm4-40gb", "a100-pcie-40gb", "a100-sxm4-80gb", "a100-pcie-80gb", "a800-pcie-80gb"),
        40960 * _KB,
    ),
    **dict.fromkeys(("h100-sxm5-80gb", "h100-pcie-80gb"), 51200 * _KB),
    # the same GH100 die, whose datasheets state no L2: taken as the H100's (unverified)
    **dict.fromkeys(("h100-nvl-94gb", "h200-sxm-141gb", "gh200-96gb"), 51200 * _KB),
    **dict.fromkeys(("l40s", "l40"), 98304 * _KB),
    "rtx-4090": 73728 * _KB,
    "rtx-4080": 65536 * _KB,
    "rtx-4070-ti-super": 49152 * _KB,
    "rtx-4060-ti-16gb": 32768 * _KB,
    "rtx-3060": 3072 * _KB,
    **dict.fromkeys(("rtx-3090", "rtx-a6000", "a40", "a10", "a10g"), 6144 * _KB),
    "t4": 4096 * _KB,
    "rtx-6000-ada": 98304 * _KB,
    "l4": 49152 * _KB,
    "rtx-5090": 98304 * _KB,
    **dict.fromkeys(("b200", "gb200"), 126 * 1024 * _KB),
    **dict.fromkeys(("v100-sxm2-16gb", "v100-sxm2-32gb", "v100-pcie-16gb"), 6144 * _KB),
}


@dataclass(frozen=True)
class GpuSpec:
    slug: str
    name: str
    architecture: str
    memory_gb: float
    memory_bandwidth_gbps: float
    fp32_tflops: float | None = None
    tf32_tflops_dense: float | None = None
    fp16_tflops_dense: float | None = None
    bf16_tflops_dense: float | None = None
    fp8_tflops_dense: float | None = None
    int8_tops_dense: float | None = None
    fp4_tflops_dense: float | None = None
    tdp_w: float | None = None
    interconnect: str = ""
    nvlink_bandwidth_gbps: float | None = None
    pcie_gen: int | None = None
    ecc: bool | None = None
    mig: int = 0
    approx_list_price_usd: float | None = None
    vendor: str = ""
    memory_capacity_mib: float | None = None  # what the driver reports, where a source gives it
    # Set when the peak figures are derived rather than published (the datasheet row's notes start with
    # ESTIMATED_THROUGHPUT_MARKER, e.g. the AWS-only A10G): rows that use them say so.
    throughput_estimated: str = ""
    memory_type: str = (
        ""  # the datasheet's memory technology (gpu_specs.csv memory_type: "HBM2e", "GDDR6X", ...)
    )

    @cached_property
    def capacity_gib(self) -> float:
        """The card's real capacity in GiB: the driver-reported total where known, else datasheet GB in GiB.

        HBM cards sold as "80 GB" hold 80 GiB (A100) or 79.6 GiB (H100 SXM: 81,559 MiB); converting the
        datasheet's decimal GB would understate them by 7%. GDDR cards' "24 GB" is 24 GiB too, but where
        no driver figure is bundled the decimal conversion is the conservative fallback.
        """
        if self.memory_capacity_mib:
            return self.memory_capacity_mib / 1024
        return self.memory_gb * GB / GIB

    @cached_property
    def usable_memory_gib(self) -> float:
        return self.capacity_gib - CUDA_CONTEXT_GIB

    @cached_property
    def is_nvidia(self) -> bool:
        return self.vendor.upper().startswith("NVIDIA") or self.name.upper().startswith("NVIDIA")

    @cached_property
    def generation(self) -> int | None:
        """NVIDIA compute generation (70 Volta ... 100 Blackwell); None for other vendors."""
        if not self.is_nvidia:
            return None
        arch = self.architecture.lower()
        return next((rank for word, rank in _GENERATIONS if word in arch), None)

    @cached_property
    def is_consumer(self) -> bool:
        """GeForce-class card: no ECC and no MIG (an unknown ECC counts only for GeForce names)."""
        no_ecc = self.ecc is False or (self.ecc is None and "geforce" in self.name.lower())
        return no_ecc and self.mig == 0

    @cached_property
    def has_nvlink_switch(self) -> bool:
        """All-to-all high-bandwidth fabric across a node (NVSwitch, Infinity Fabric, Gaudi RoCE)."""
        text = self.interconnect.lower()
        if not self.nvlink_bandwidth_gbps or "none" in text or "bridge" in text:
            return False
        return True

    @cached_property
    def bridge_gpus(self) -> int:
        """GPUs an NVLink bridge joins (2 or 4); 0 without a bridge."""
        text = self.interconnect.lower()
        if "bridge" not in text or not self.nvlink_bandwidth_gbps:
            return 0
        return 4 if "4" in text.split("bridge", 1)[1] else 2

    @property
    def pcie_bandwidth_gbps(self) -> float:
        return _PCIE_GBPS.get(self.pcie_gen or 4, 32.0)

    @cached_property
    def default_mfu(self) -> float:
        datacenter = (
            (self.generation or 0) in (80, 90, 100) and not self.is_consumer and self.has_nvlink_switch
        )
        return MFU_DATACENTER.value if datacenter else MFU_WORKSTATION.value

    def dense_tflops(self, precision: str) -> float | None:
        """Dense tensor peak for a compute precision (fp32 uses the non-tensor FP32 figure)."""
        column = {
            "fp32": self.fp32_tflops,
            "fp16": self.fp16_tflops_dense,
            "bf16": self.bf16_tflops_dense,
            "fp8": self.fp8_tflops_dense,
            "fp4": self.fp4_tflops_dense,
        }[precision]
        return column

    def supports_precision(self, precision: str) -> bool:
        gen = self.generation
        if gen is None:  # non-NVIDIA: trust the datasheet columns
            return precision in ("fp32", "fp16") or self.dense_tflops(precision) is not None
        minimum = {"fp32": 0, "fp16": 0, "bf16": 80, "fp8": 89, "fp4": 100}[precision]
        return gen >= minimum

    def supports_flash_attention(self) -> bool:
        gen = self.generation
        return gen is None or gen >= 80

    @property
    def decode_read_fraction(self) -> float:
        """The share of the datasheet bandwidth a language model's decode and serving reads reach on this card: the
        card's own measured figure where one is bundled (MEASURED_DECODE_READ_FRACTIONS: the RTX 4090, calm's fp16
        rows), achieved_bandwidth_fraction (gpt-fast's A100) on every other card. Not set by memory type: llama.cpp
        reads the GDDR6X RTX 3090 at 0.73-0.76 of its datasheet (aud51b)."""
        measured = MEASURED_DECODE_READ_FRACTIONS.get(self.slug)
        return measured.value if measured is not None else ACHIEVED_BANDWIDTH.value

    @property
    def l2_cache_bytes(self) -> float | None:
        """The card's L2 cache in bytes (L2_CACHE_BYTES_BY_SLUG, from its architecture whitepaper); None where
        no source was opened."""
        found = L2_CACHE_BYTES_BY_SLUG.get(self.slug)
        return None if found is None else float(found)

    @cached_property
    def nvlink_domain_gpus(self) -> int:
        """GPUs sharing this part's node link (nvlink_domain_gpus): 72 on a GB200 NVL72 rack, 8 on an HGX host."""
        return nvlink_domain_gpus(self.interconnect)

    def interconnect_bandwidth_gbps(self, gpu_count: int) -> float:
        """Per-GPU, per-direction bandwidth a ring collective across `gpu_count` GPUs sees."""
        return collective_bandwidth_gbps(self, gpu_count)


def collective_bandwidth_gbps(gpu: GpuSpec, gpu_count: int) -> float:
    """Effective per-GPU collective bandwidth (GB/s): NVLink within the part's NVLink domain (a node of 8, or a
    GB200 NVL72 rack of 72: GpuSpec.nvlink_domain_gpus), PCIe or network otherwise.

    Datasheet NVLink figures are bidirectional totals, so a ring sees half of them per direction.
    """
    if gpu_count <= 1:
        return float("inf")
    if gpu_count > gpu.nvlink_domain_gpus:
        link = network_bandwidth_gbps(gpu)
    elif gpu.has_nvlink_switch or (gpu.bridge_gpus and gpu_count <= gpu.bridge_gpus):
        link = (gpu.nvlink_bandwidth_gbps or 0.0) / 2
    else:
        link = gpu.pcie_bandwidth_gbps
    return link * COMM_EFFICIENCY.value


def tensor_parallel_over_nvlink(gpu: GpuSpec, gpu_count: int) -> bool:
    """The tensor-parallel group of ``gpu_count`` GPUs shares NVLink (a switch, or a bridge spanning the group):
    the link collective_bandwidth_gbps prices; False where its all-reduces ring over PCIe, whose per-step
    latency NCCL prices higher (assumptions.PCIE_HOP_LATENCY). Groups beyond a node (the part's NVLink domain):
    NVLink inside it."""
    if gpu_count <= 1 or gpu_count > gpu.nvlink_domain_gpus:
        return True
    return bool(gpu.has_nvlink_switch or (gpu.bridge_gpus and gpu_count <= gpu.bridge_gpus))


def network_bandwidth_gbps(gpu: GpuSpec) -> float:
    """Per-GPU bandwidth (GB/s) between nodes where no instance type is known: NETWORK_BANDWIDTH_HOPPER
    for NVSwitch Hopper and later parts (one 400 Gb/s NIC a GPU), NETWORK_BANDWIDTH otherwise."""
    if (gpu.generation or 0) >= HOPPER_GENERATION and gpu.has_nvlink_switch:
        return NETWORK_BANDWIDTH_HOPPER.value
    return NETWORK_BANDWIDTH.value


def hierarchical_links(gpu: GpuSpec, gpu_count: int) -> dict[str, float]:
    """The `size` report's links for ``gpu_count`` GPUs of ``gpu``, where no instance type is known:
    ``gpus_per_node`` up to the part's NVLink domain (GpuSpec.nvlink_domain_gpus: 8 on an HGX host, 72 in a
    GB200 NVL72 rack), the node link of that many GPUs and network_bandwidth_gbps per GPU between domains, both
    at COMM_EFFICIENCY (the same hierarchical model the ranking uses per instance). Every collective (TP, the
    expert all-to-all, FSDP/DP, pipeline sends) within the domain prices at NVLink, beyond it at the fabric."""
    per_node = min(gpu_count, gpu.nvlink_domain_gpus)
    return {
        "gpus_per_node": float(per_node),
        "interconnect_gbps": collective_bandwidth_gbps(gpu, per_node),
        "fabric_gbps": network_bandwidth_gbps(gpu) * COMM_EFFICIENCY.value,
    }


def _number(text: str) -> float | None:
    text = text.strip()
    return float(text) if text else None


ESTIMATED_THROUGHPUT_MARKER = "estimated throughput:"


def _estimated_note(notes: str | None) -> str:
    """The row's note when it marks its throughput as derived ("Estimated throughput: ..."), else ""."""
    text = (notes or "").strip()
    if not text.lower().startswith(ESTIMATED_THROUGHPUT_MARKER):
        return ""
    return text.split(";")[0].rstrip(".")


def gpu_spec_from_row(row: dict[str, str]) -> GpuSpec:
    """Build a GpuSpec from one row of gpu_specs.csv (all values as strings)."""
    ecc_text = row.get("ecc", "").strip().lower()
    pcie = _number(row.get("pcie_gen", ""))
    mig = _number(row.get("mig", ""))
    return GpuSpec(
        slug=row["slug"],
        name=row.get("model", row["slug"]),
        architecture=row.get("architecture", ""),
        memory_gb=float(row["memory_gb"]),
        memory_bandwidth_gbps=float(row["memory_bandwidth_gbps"]),
        fp32_tflops=_number(row.get("fp32_tflops", "")),
        tf32_tflops_dense=_number(row.get("tf32_tflops_dense", "")),
        fp16_tflops_dense=_number(row.get("fp16_tflops_dense", "")),
        bf16_tflops_dense=_number(row.get("bf16_tflops_dense", "")),
        fp8_tflops_dense=_number(row.get("fp8_tflops_dense", "")),
        int8_tops_dense=_number(row.get("int8_tops_dense", "")),
        fp4_tflops_dense=_number(row.get("fp4_tflops_dense", "")),
        tdp_w=_number(row.get("tdp_w", "")),
        interconnect=row.get("interconnect", ""),
        nvlink_bandwidth_gbps=_number(row.get("nvlink_bandwidth_gbps", "")),
        pcie_gen=int(pcie) if pcie is not None else None,
        ecc={"yes": True, "no": False}.get(ecc_text),
        mig=int(mig) if mig is not None else 0,
        approx_list_price_usd=_number(row.get("approx_list_price_usd", "")),
        vendor=row.get("vendor", ""),
        memory_capacity_mib=_number(row.get("memory_capacity_mib", "")),
        throughput_estimated=_estimated_note(row.get("notes")),
        memory_type=row.get("memory_type", "") or "",
    )


def _optional_float(value) -> float | None:
    return None if value is None or value == "" else float(value)


# Record attribute -> GpuSpec field, where the database row (pricing.models.GpuModel) names differ.
_RECORD_ALIASES = {
    "tf32_tflops_dense": "tf32_tflops",
    "fp16_tflops_dense": "fp16_tflops",
    "bf16_tflops_dense": "bf16_tflops",
    "fp8_tflops_dense": "fp8_tflops",
    "int8_tops_dense": "int8_tops",
    "fp4_tflops_dense": "fp4_tflops",
    "mig": "mig_instances",
}
_OPTIONAL_FLOATS = (
    "fp32_tflops",
    "tf32_tflops_dense",
    "fp16_tflops_dense",
    "bf16_tflops_dense",
    "fp8_tflops_dense",
    "int8_tops_dense",
    "fp4_tflops_dense",
    "tdp_w",
    "nvlink_bandwidth_gbps",
    "approx_list_price_usd",
    "memory_capacity_mib",
)


def gpu_spec_from_record(record) -> GpuSpec:
    """Build a GpuSpec from any object with the datasheet attributes (e.g. a GpuModel row; Decimals ok)."""

    def read(field: str, default=None):
        if hasattr(record, field):
            return getattr(record, field)
        return getattr(record, _RECORD_ALIASES.get(field, field), default)

    return GpuSpec(
        slug=read("slug"),
        name=read("name", "") or read("model", ""),
        architecture=read("architecture", "") or "",
        memory_gb=float(read("memory_gb")),
        memory_bandwidth_gbps=float(read("memory_bandwidth_gbps")),
        interconnect=read("interconnect", "") or "",
        pcie_gen=read("pcie_gen"),
        ecc=read("ecc"),
        mig=int(read("mig", 0) or 0),
        vendor=read("vendor", "") or "",
        throughput_estimated=_estimated_note(read("notes", "")),
        memory_type=read("memory_type", "") or "",
        **{field: _optional_float(read(field)) for field in _OPTIONAL_FLOATS},
    )


@lru_cache(maxsize=1)
def _bundled() -> tuple[GpuSpec, ...]:
    with BUNDLED_GPU_CSV.open(newline="", encoding="utf-8") as handle:
        return tuple(gpu_spec_from_row(row) for row in csv.DictReader(handle))


def load_bundled_gpus() -> list[GpuSpec]:
    """The GPUs of the bundled datasheet CSV (37), in file order."""
    return list(_bundled())


def gpu_by_slug(slug: str) -> GpuSpec:
    for gpu in _bundled():
        if gpu.slug == slug:
            return gpu
    raise KeyError(f"unknown GPU slug {slug!r}")
