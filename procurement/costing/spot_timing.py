"""How long a checkpoint write and a restart take, from the job's sizes and the storage's speed.

A spot job's overhead is set by two durations (``spot.py``): C, the checkpoint write, and R, the
restart after a reclaim. Both grow with the job: a 7B full fine-tune writes weights plus optimizer
state (about 100 GB), a QLoRA run a few hundred MB of adapters. So they are derived here, never a
fixed minute for every job:

    C = checkpoint GB / storage write GB/s
    R = provisioning + image GB / image pull GB/s + (model GB + dataset GB + checkpoint GB) / storage read GB/s

Each default below has its source (docs/cost-model.md, "Spot timing"); every one is overridable.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from procurement.costing.values import CostInputError

SECONDS_PER_HOUR = 3600.0

# AWS EBS User Guide, "General Purpose SSD volumes": gp3 has a 125 MiB/s baseline and can be provisioned
# to 1,000 MiB/s; 0.5 GB/s is a gp3 volume provisioned halfway (local NVMe is faster, NFS often slower).
DEFAULT_STORAGE_WRITE_GB_PER_S = 0.5
DEFAULT_STORAGE_READ_GB_PER_S = 0.5  # the same volume read back on the new instance
# A fresh GPU instance from request to a running container: EC2 launch plus a Deep Learning AMI boot is
# a few minutes (AWS DLAMI docs; SkyPilot reports 2-5 min to provision a spot VM); 5 min assumed.
DEFAULT_PROVISIONING_HOURS = 5.0 / 60.0
# Container image pull and layer extraction from a registry in the same region: about 250 MB/s (ECR
# pulls are bounded by decompression, AWS Containers blog "Reducing container startup time").
DEFAULT_IMAGE_PULL_GB_PER_S = 0.25


@dataclass(frozen=True)
class SpotTimingInput:
    """Sizes in GB (datasheet 10^9 bytes) and bandwidths in GB/s; the defaults are documented above."""

    checkpoint_gb: float
    image_gb: float
    model_load_gb: float = 0.0  # weights not in the checkpoint (a LoRA run's frozen base model)
    dataset_gb: float = 0.0  # re-fetched onto the new instance's empty disk
    storage_write_gb_per_s: float = DEFAULT_STORAGE_WRITE_GB_PER_S
    storage_read_gb_per_s: float = DEFAULT_STORAGE_READ_GB_PER_S
    provisioning_hours: float = DEFAULT_PROVISIONING_HOURS
    image_pull_gb_per_s: float = DEFAULT_IMAGE_PULL_GB_PER_S


@dataclass(frozen=True)
class SpotTiming:
    checkpoint_write_hours: float
    restart_hours: float
    restart_parts_hours: dict[
        str, float
    ]  # provisioning, image_pull, model_load, data_load, checkpoint_restore
    checkpoint_gb: float
    derived: bool = True  # False when the user gave C and R directly

    def as_dict(self) -> dict:
        """A new dict each call (a ranking puts one in every spot row); rounded once per timing."""
        rounded = self._rounded
        return rounded | {"restart_parts_minutes": dict(rounded["restart_parts_minutes"])}

    @cached_property
    def _rounded(self) -> dict:
        return {
            "checkpoint_gb": round(self.checkpoint_gb, 6),
            "checkpoint_write_minutes": round(self.checkpoint_write_hours * 60.0, 3),
            "restart_minutes": round(self.restart_hours * 60.0, 3),
            "restart_parts_minutes": {k: round(v * 60.0, 3) for k, v in self.restart_parts_hours.items()},
            "basis": "derived from sizes and bandwidths" if self.derived else "given",
        }


def _positive(value: float, field: str) -> float:
    if not value > 0:
        raise CostInputError(field, f"must be > 0, got {value!r}")
    return value


def _not_negative(value: float, field: str) -> float:
    if not value >= 0:
        raise CostInputError(field, f"must not be negative, got {value!r}")
    return value


def spot_timing(spec: SpotTimingInput) -> SpotTiming:
    """C and R of one job; raises CostInputError naming the field for a bad size or bandwidth."""
    write = _positive(spec.storage_write_gb_per_s, "storage_write_gb_per_s")
    read = _positive(spec.storage_read_gb_per_s, "storage_read_gb_per_s")
    pull = _positive(spec.image_pull_gb_per_s, "image_pull_gb_per_s")
    for name in ("checkpoint_gb", "image_gb", "model_load_gb", "dataset_gb", "provisioning_hours"):
        _not_negative(getattr(spec, name), name)
    parts = {
        "provisioning": spec.provisioning_hours,
        "image_pull": spec.image_gb / pull / SECONDS_PER_HOUR,
        "model_load": spec.model_load_gb / read / SECONDS_PER_HOUR,
        "data_load": spec.dataset_gb / read / SECONDS_PER_HOUR,
        "checkpoint_restore": spec.checkpoint_gb / read / SECONDS_PER_HOUR,
    }
    return SpotTiming(
        checkpoint_write_hours=spec.checkpoint_gb / write / SECONDS_PER_HOUR,
        restart_hours=sum(parts.values()),
        restart_parts_hours=parts,
        checkpoint_gb=spec.checkpoint_gb,
    )
