"""Like-for-like fleets: the scope's GPU usage split into what ran, so each part is planned only with
supply that can run it (docs/capacity-plan.md, "Like for like").

A fleet is the usage rows of one (GPU model, provider, region, instance type) of the bills; rows
without an instance type group by GPUs per instance instead. Each fleet has its own demand curve and
layers and is priced at its own provider, region and instance type by default. Its *need* is what an
offer must have to take its work over (``serves``):

- the same GPU model (a substitute only where the caller states one at a measured speed ratio);
- at least the GPUs per instance the bills' resources had (8-GPU jobs do not fit a 1-GPU VM);
- the same intra-node link class: ``nvlink`` (SXM/OAM modules, 2+ GPUs: NVLink/NVSwitch or Infinity
  Fabric), ``pcie`` (PCIe cards, 2+ GPUs) or ``single`` (one GPU: no peer, any host with the GPU will do);
- a cluster fabric (EFA, InfiniBand, GPUDirect-TCPX) where the bills show fabric instance types of the
  fleet running together (two or more instances in one hour);
- never a marketplace listing (a short-lived single host) for a plan of 12 months or more.

Plain numpy/pandas over UsageRows; no ORM.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from planning.engine.demand import UsageRows

LINK_NVLINK, LINK_PCIE, LINK_SINGLE = "nvlink", "pcie", "single"
# Form factors whose GPUs talk over a module interconnect (NVLink/NVSwitch, Infinity Fabric) inside a
# host: the catalog's GpuModel.form_factor (pricing/data), e.g. "SXM5", "OAM", "GB200 Superchip".
MODULE_FORM_FACTORS = ("sxm", "oam", "superchip", "hgx")
# GPU instance types with a cluster fabric between hosts. Sources: AWS "Elastic Fabric Adapter,
# supported instance types" (docs.aws.amazon.com/AWSEC2/latest/UserGuide/efa.html#efa-instance-types);
# Google Cloud "GPU machine types: A3, A4" (GPUDirect-TCPX/TCPXO/RDMA); Azure "ND-series" (InfiniBand).
FABRIC_INSTANCE_TYPES = frozenset(
    {
        "p4d.24xlarge",
        "p4de.24xlarge",
        "p5.48xlarge",
        "p5e.48xlarge",
        "p5en.48xlarge",
        "p6-b200.48xlarge",
        "a3-highgpu-8g",
        "a3-megagpu-8g",
        "a3-ultragpu-8g",
        "a4-highgpu-8g",
        "Standard_ND96asr_v4",
        "Standard_ND96amsr_A100_v4",
        "Standard_ND96isr_H100_v5",
        "Standard_ND96isr_H200_v5",
    }
)
LONG_LAYER_MONTHS = 12  # the issue: marketplace listings never price a layer of 12 months or more


def link_class(form_factor: str, gpus_per_instance: float) -> str:
    """The intra-node link class of an instance of ``gpus_per_instance`` GPUs of a form factor."""
    if not gpus_per_instance or gpus_per_instance < 2:
        return LINK_SINGLE
    text = (form_factor or "").lower()
    return LINK_NVLINK if any(word in text for word in MODULE_FORM_FACTORS) else LINK_PCIE


def has_fabric(instance_type: str) -> bool:
    return instance_type in FABRIC_INSTANCE_TYPES


@dataclass(frozen=True)
class Need:
    """What an offer must have to run a fleet's work."""

    gpu_model: str
    gpus_per_instance: float
    link: str
    fabric: bool

    def text(self) -> str:
        fabric = ", cluster fabric" if self.fabric else ""
        return f"{self.gpu_model}, at least {self.gpus_per_instance:g} GPUs per instance, {self.link} link{fabric}"


@dataclass(frozen=True)
class Offer:
    """A supply offer as like-for-like needs it."""

    gpu_model: str
    gpus_per_instance: float
    link: str
    fabric: bool
    marketplace: bool = False


def serves(offer: Offer, need: Need, *, horizon_months: int, substitutes: dict | None = None) -> str:
    """ "" when ``offer`` can run ``need``'s work over the horizon, else why not (shown to the user).
    ``substitutes``: {gpu model: speed ratio} the caller states (measured) for ``need``'s model."""
    if offer.gpu_model != need.gpu_model and offer.gpu_model not in (substitutes or {}):
        return f"another GPU model ({offer.gpu_model}, no substitute stated)"
    if offer.gpus_per_instance + 1e-9 < need.gpus_per_instance:
        return f"{offer.gpus_per_instance:g} GPUs per instance, the bills' ran {need.gpus_per_instance:g}"
    if need.link != LINK_SINGLE and offer.link != need.link:
        return f"{offer.link} link, the bills' instances had {need.link}"
    if need.fabric and not offer.fabric:
        return "no cluster fabric, the bills show instances running together on one"
    if offer.marketplace and horizon_months >= LONG_LAYER_MONTHS:
        return f"a marketplace listing (short-lived single host) cannot price a {horizon_months}-month plan"
    return ""


@dataclass(frozen=True)
class Fleet:
    """One like-for-like part of the scope's usage: its rows, what it ran on and what it cost."""

    gpu_model: str
    provider: str
    region: str
    instance_type: str
    gpus_per_instance: float
    need: Need
    rows: np.ndarray  # bool mask over the UsageRows (usage and unused commitments)
    effective_cost_micros: int
    gpu_hours: float
    running_together: int  # most instances of the fleet in one hour (from its GPUs / GPUs per instance)

    @property
    def key(self) -> str:
        where = "/".join(part for part in (self.provider, self.instance_type, self.region) if part)
        return f"{self.gpu_model} {where}" if where else self.gpu_model

    @property
    def offer(self) -> str:
        """The bills' own offer, as plan_prices names catalog offers: provider/instance_type/region."""
        return f"{self.provider}/{self.instance_type}/{self.region}"


def _column(usage: UsageRows, name: str, default) -> np.ndarray:
    value = getattr(usage, name)
    if value is None:
        return np.full(len(usage), default, dtype=object if isinstance(default, str) else np.float64)
    return value


def fleets_of(usage: UsageRows, form_factors: dict[str, str]) -> list[Fleet]:
    """The scope's fleets, most spend first (ties: most GPU-hours, then the key). ``form_factors``:
    GPU slug -> the catalog's form factor (for the link class)."""
    frame = pd.DataFrame(
        {
            "gpu": usage.gpu_model.astype(str),
            "provider": _column(usage, "provider", "").astype(str),
            "region": _column(usage, "region", "").astype(str),
            "instance_type": _column(usage, "instance_type", "").astype(str),
            "gpus": np.nan_to_num(_column(usage, "gpus_per_instance", np.nan).astype(np.float64), nan=0.0),
        }
    )
    # an unused-commitment row belongs to the fleet of its commitment's used rows (its own columns may be
    # empty): same commitment id, else the same GPU model and provider
    frame = _unused_rows_to_their_fleet(frame, usage)
    keys = ["gpu", "provider", "region", "instance_type", "gpus"]
    codes, uniques = pd.MultiIndex.from_frame(frame[keys]).factorize()
    fleets = []
    for code, (gpu, provider, region, instance_type, gpus) in enumerate(uniques):
        if not gpu:
            continue
        mask = codes == code
        used = mask & ~usage.unused_commitment
        if not used.any():
            continue
        hours = float(usage.gpu_hours[used].sum())
        together = _most_at_once(usage, used, gpus)
        need = Need(
            gpu,
            gpus or 1.0,
            link_class(form_factors.get(gpu, ""), gpus),
            has_fabric(instance_type) and together >= 2,
        )
        fleets.append(
            Fleet(
                gpu,
                provider,
                region,
                instance_type,
                gpus or 1.0,
                need,
                mask,
                int(usage.effective_cost_micros[mask].sum()),
                hours,
                together,
            )
        )
    fleets.sort(key=lambda fleet: (-fleet.effective_cost_micros, -fleet.gpu_hours, fleet.key))
    return fleets


def _unused_rows_to_their_fleet(frame: pd.DataFrame, usage: UsageRows) -> pd.DataFrame:
    """Unused-commitment rows take the columns of their commitment's first used row (vectorized: a
    month of hourly unused rows is thousands)."""
    unused = usage.unused_commitment
    if not unused.any():
        return frame
    ids = pd.Series(_column(usage, "commitment_id", "").astype(str), index=frame.index)
    used = frame[~unused & (ids != "").to_numpy()].assign(commitment=ids[~unused])
    first = used.drop_duplicates("commitment").set_index("commitment")
    targets = ids[unused]
    known = targets.isin(first.index).to_numpy()
    if not known.any():
        return frame
    rows = np.nonzero(unused)[0][known]
    for column in frame.columns:
        frame.iloc[rows, frame.columns.get_loc(column)] = first.loc[
            targets[known].to_numpy(), column
        ].to_numpy()
    return frame


def _most_at_once(usage: UsageRows, mask: np.ndarray, gpus_per_instance: float) -> int:
    """The most instances of a fleet in one hour: its GPUs in use per hour (rows spread evenly over their
    charge period, as demand.py does) over the GPUs per instance, rounded up."""
    starts, ends = usage.start_hour[mask], usage.end_hour[mask]
    if not starts.size:
        return 0
    lengths = np.maximum(ends - starts, 1)
    first = int(starts.min())
    delta = np.zeros(int((starts + lengths).max()) - first + 1)
    per_hour = usage.gpu_hours[mask] / lengths
    np.add.at(delta, starts - first, per_hour)
    np.add.at(delta, starts + lengths - first, -per_hour)
    peak = float(np.cumsum(delta).max())
    return int(math.ceil(peak / (gpus_per_instance or 1.0) - 1e-6))


def usage_of(usage: UsageRows, mask: np.ndarray) -> UsageRows:
    """The rows where ``mask`` holds (the bill's other covered intervals kept)."""
    from dataclasses import fields

    kept = {}
    for field in fields(usage):
        value = getattr(usage, field.name)
        if isinstance(value, np.ndarray) and field.name not in ("covered_start_hour", "covered_end_hour"):
            value = value[mask]
        kept[field.name] = value
    return UsageRows(**kept)
