"""Which links an instance type's GPUs talk over: the node link (NVLink, AMD Infinity Fabric or PCIe) and
the cluster fabric.

The facts are data, one row per instance-family pattern with its source (procurement/data/interconnects.csv,
docs/cost-model.md "Interconnects"); this module only reads and matches them. Rules are tried in file
order and the first whose provider and glob pattern match the instance type wins. An instance type no
rule names, or a rule that states PCIe without a figure, gets PCIe x16 at the GPU's datasheet generation:
a host link nobody states is PCIe until a source says otherwise, unless the GPU itself is made only as a
module on a scale-up baseboard (``MODULE_ONLY_LINKS``: MI300X, MI325X, B200), whose link the part's own
datasheet states. A rule without a fabric means the
instance is a single host: several of them cannot run one training job (no cluster interconnect).
"""

from __future__ import annotations

import csv
import fnmatch
import math
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from gpuledger.errors import LocatedInputError
from procurement.sizing import GpuSpec

BUNDLED_INTERCONNECTS_CSV = Path(__file__).resolve().parents[1] / "data" / "interconnects.csv"
COLUMNS = (
    "provider",
    "instance_type_pattern",
    "node_link",
    "node_link_name",
    "node_gbps_per_direction",
    "node_link_basis",
    "fabric",
    "fabric_gbits_per_instance",
    "source_url",
    "note",
)
BASES = ("stated", "assumed")  # the source states the node link, or the rule assumes PCIe for lack of one
NODE_LINKS = ("nvlink", "infinity_fabric", "pcie")
# links joining every GPU of the host at their stated rate (NVSwitch; Infinity Fabric's fully connected mesh of
# an 8-GPU MI300X/MI325X platform): training tensor parallelism runs over them, as over NVLink
SCALE_UP_LINKS = ("nvlink", "infinity_fabric")
UNSTATED_SOURCE = "no interconnect rule names this instance type: PCIe assumed (docs/cost-model.md)"
CDNA3_WHITE_PAPER = "https://www.amd.com/content/dam/amd/en/documents/instinct-tech-docs/white-papers/amd-cdna-3-white-paper.pdf"
HGX_PAGE = "https://www.nvidia.com/en-us/data-center/hgx/"
# GPUs made only as a module on a scale-up baseboard, never as a PCIe card: an offer whose catalog names no
# link (no rule, or a provider-wide rule that assumes PCIe) still runs over the baseboard's link, so the
# part's datasheet states it (aud50b, issue 26 class 4: runpod 8x_MI300X_SECURE was sized on PCIe 5.0).
#   MI300X / MI325X: OAM modules; "these seven high-bandwidth and low-latency AMD Infinity Fabric links ...
#     form a fully connected 8-GPU system", "896 GB/s peak aggregate peer-to-peer" (CDNA 3 white paper):
#     7 x 64 GB/s each way = 448 GB/s a GPU, as the Azure ND MI300X v5 row of interconnects.csv.
#   B200: made only as an HGX/SXM module (NVLink 5, 1,800 GB/s = 900 each way), as the B200 rows there.
# Not here: H100 SXM and H200, whose slugs also receive providers' bare "H100" / "H200" names while PCIe
# (H100 PCIe, H100 NVL, H200 NVL) parts exist; GB200 (rack-scale, its own rules); MI250X (its 8-GPU
# platforms are not a full mesh); Gaudi 3 (a PCIe card variant exists).
MODULE_ONLY_LINKS = {
    "mi300x": ("infinity_fabric", "Infinity Fabric, 7 x 64 GB/s each way", 448.0, CDNA3_WHITE_PAPER),
    "mi325x": ("infinity_fabric", "Infinity Fabric, 7 x 64 GB/s each way", 448.0, CDNA3_WHITE_PAPER),
    "b200": ("nvlink", "NVLink 5 (NVSwitch) 1800 GB/s", 900.0, HGX_PAGE),
}


class InterconnectTableError(LocatedInputError):
    """A bad row of the interconnect table, named by file:line and column."""


@dataclass(frozen=True)
class InterconnectRule:
    provider: str  # "*" matches every provider
    pattern: str  # glob over the instance type name
    node_link: str  # nvlink | infinity_fabric | pcie
    node_link_name: str
    node_gbps_per_direction: float | None  # None: from the GPU's PCIe generation
    node_link_basis: str  # stated | assumed
    fabric: str  # "" when the instance has no cluster interconnect
    fabric_gbits_per_instance: float | None
    source_url: str

    def matches(self, provider: str, instance_type: str) -> bool:
        return self.provider in ("*", provider) and fnmatch.fnmatchcase(instance_type, self.pattern)


@dataclass(frozen=True)
class Interconnect:
    """The links one instance type's GPUs use, resolved for one GPU model."""

    node_link: str  # nvlink | infinity_fabric | pcie
    node_name: (
        str  # "NVLink 4 (NVSwitch) 900 GB/s", "Infinity Fabric, 7 x 64 GB/s each way", "PCIe 4.0 x16 32 GB/s"
    )
    node_gbps_per_direction: float  # raw link rate per GPU per direction (before collective efficiency)
    fabric: str  # "EFA", "GPUDirect-TCPX" ...; "" for a single host
    fabric_gbits_per_instance: float  # 0.0 without a fabric
    source_url: str
    stated: bool  # a source states the node link (False: PCIe assumed, by a rule or the default)
    # the GPUs can read each other's memory over PCIe; False for GeForce cards since the 40 series, whose
    # transfers are staged through host memory (``peer_to_peer``)
    peer_to_peer: bool = True

    @property
    def nvlink(self) -> bool:
        return self.node_link == "nvlink"

    @property
    def mesh(self) -> bool:
        """Point-to-point links to every other GPU, no switch (Infinity Fabric): a group of k of the host's n
        GPUs drives k - 1 of each GPU's n - 1 links (``shapes.mesh_share``), where NVSwitch gives any group
        the whole rate."""
        return self.node_link == "infinity_fabric"

    @property
    def scale_up(self) -> bool:
        """The GPUs share a scale-up link (NVLink or Infinity Fabric): training tensor parallelism runs on it."""
        return self.node_link in SCALE_UP_LINKS

    @property
    def has_fabric(self) -> bool:
        return bool(self.fabric) and self.fabric_gbits_per_instance > 0

    @property
    def fabric_name(self) -> str:
        return f"{self.fabric} {self.fabric_gbits_per_instance:g} Gb/s" if self.has_fabric else ""

    @property
    def fabric_gbytes_per_instance(self) -> float:
        """Fabric rate per instance in GB/s (Gb/s / 8), one direction."""
        return self.fabric_gbits_per_instance / 8.0


def _number(text: str, location: str, column: str) -> float | None:
    text = text.strip()
    if not text:
        return None
    try:
        value = float(text)
    except ValueError:
        raise InterconnectTableError(f"{location}: {column}: not a number: {text!r}") from None
    if not math.isfinite(value) or value <= 0:
        raise InterconnectTableError(f"{location}: {column}: must be a positive number, got {text!r}")
    return value


def read_rules(path: Path = BUNDLED_INTERCONNECTS_CSV) -> tuple[InterconnectRule, ...]:
    """Every rule of an interconnect table, in file order; a bad cell raises naming file:line and column."""
    with path.open(newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        missing = [name for name in COLUMNS if name not in (reader.fieldnames or ())]
        if missing:
            raise InterconnectTableError(f"{path}:1: missing columns {', '.join(missing)}")
        return tuple(_rule(row, f"{path}:{reader.line_num}") for row in reader)


def _rule(row: dict[str, str], location: str) -> InterconnectRule:
    node_link = row["node_link"].strip()
    if node_link not in NODE_LINKS:
        raise InterconnectTableError(f"{location}: node_link: must be one of {NODE_LINKS}, got {node_link!r}")
    node_gbps = _number(row["node_gbps_per_direction"], location, "node_gbps_per_direction")
    if node_link in SCALE_UP_LINKS and node_gbps is None:
        raise InterconnectTableError(
            f"{location}: node_gbps_per_direction: required for an {node_link} row (its stated rate)"
        )
    basis = row["node_link_basis"].strip()
    if basis not in BASES:
        raise InterconnectTableError(f"{location}: node_link_basis: must be one of {BASES}, got {basis!r}")
    fabric = row["fabric"].strip()
    fabric_gbits = _number(row["fabric_gbits_per_instance"], location, "fabric_gbits_per_instance")
    if bool(fabric) != (fabric_gbits is not None):
        raise InterconnectTableError(
            f"{location}: fabric_gbits_per_instance: give a fabric and its Gb/s together, or neither"
        )
    if not row["source_url"].strip():
        raise InterconnectTableError(f"{location}: source_url: every rule needs its source")
    return InterconnectRule(
        provider=row["provider"].strip() or "*",
        pattern=row["instance_type_pattern"].strip(),
        node_link=node_link,
        node_link_name=row["node_link_name"].strip(),
        node_gbps_per_direction=node_gbps,
        node_link_basis=basis,
        fabric=fabric,
        fabric_gbits_per_instance=fabric_gbits,
        source_url=row["source_url"].strip(),
    )


@lru_cache(maxsize=1)
def bundled_rules() -> tuple[InterconnectRule, ...]:
    return read_rules()


NO_P2P_SOURCE = "https://github.com/tinygrad/open-gpu-kernel-modules"
HOST_STAGED_FACTOR = 0.5  # each transfer crosses PCIe twice (GPU -> host memory -> GPU): half the link rate


def peer_to_peer(gpu: GpuSpec) -> bool:
    """GeForce cards since the 40 series (Ada, Blackwell) have PCIe peer-to-peer disabled by NVIDIA's driver
    (the stock driver reports no P2P between RTX 4090s; tinygrad's patched kernel modules exist to turn it
    back on: NO_P2P_SOURCE), so NCCL stages every transfer through host memory. Datacenter cards, and
    GeForce cards before the 40 series, keep it."""
    return not ("geforce" in gpu.name.lower() and (gpu.generation or 0) >= 89)


def _pcie(gpu: GpuSpec) -> tuple[str, float]:
    generation = gpu.pcie_gen or 4  # the datasheet's host interface; unknown: PCIe 4.0, the common case
    gbps = gpu.pcie_bandwidth_gbps
    if not peer_to_peer(gpu):
        staged = gbps * HOST_STAGED_FACTOR
        return f"PCIe {generation}.0 x16 without peer-to-peer (host-staged, {staged:g} GB/s)", staged
    return f"PCIe {generation}.0 x16 {gbps:g} GB/s", gbps


def resolve(
    provider: str, instance_type: str, gpu: GpuSpec, rules: tuple[InterconnectRule, ...] | None = None
) -> Interconnect:
    """The links of ``instance_type`` (on ``provider``) carrying ``gpu``: the first matching rule, else the
    baseboard link of a module-only part, else PCIe."""
    rules = bundled_rules() if rules is None else rules
    rule = next((rule for rule in rules if rule.matches(provider or "", instance_type or "")), None)
    module = MODULE_ONLY_LINKS.get(gpu.slug)
    if module is not None and (
        rule is None or (rule.node_link_basis == "assumed" and rule.node_link == "pcie")
    ):
        node_link, name, gbps, source = module
        fabric, fabric_gbits = (rule.fabric, rule.fabric_gbits_per_instance or 0.0) if rule else ("", 0.0)
        return Interconnect(node_link, name, gbps, fabric, fabric_gbits, source, stated=True)
    if rule is None:
        name, gbps = _pcie(gpu)
        return Interconnect(
            "pcie", name, gbps, "", 0.0, UNSTATED_SOURCE, stated=False, peer_to_peer=peer_to_peer(gpu)
        )
    if rule.node_gbps_per_direction is None:
        name, gbps = _pcie(gpu)
    else:
        name, gbps = rule.node_link_name, rule.node_gbps_per_direction
    return Interconnect(
        rule.node_link,
        name,
        gbps,
        rule.fabric,
        rule.fabric_gbits_per_instance or 0.0,
        rule.source_url,
        stated=rule.node_link_basis == "stated",
        peer_to_peer=rule.node_link in SCALE_UP_LINKS or peer_to_peer(gpu),
    )
