"""How long a checkpoint write and a restart take, from the job's sizes and the storage's speed.

A spot job's overhead is set by two durations (``spot.py``): C, the checkpoint write, and R, the
restart after a reclaim. Both grow with the job: a 7B full fine-tune writes weights plus optimizer
state (about 100 GB), a QLoRA run a few hundred MB of adapters. So they are derived here, never a
fixed minute for every job:

    W = checkpoint GB / min(writers x storage write GB/s, aggregate cap)   the write to storage
    C = W                                   synchronous save: the training loop waits for the whole write
    C = checkpoint GB / GPUs / host copy GB/s               asynchronous save (below): the loop waits only
                                                             for each GPU's shard to reach host memory
    R = provisioning + image GB / image pull GB/s + (model GB + dataset GB + checkpoint GB) / storage read GB/s
        (+ W with an asynchronous save: the checkpoint in flight when a reclaim comes is lost too)

Asynchronous save: PyTorch Distributed Checkpoint ``async_save`` (since PyTorch 2.3; recipe
"Asynchronous Saving with Distributed Checkpoint (DCP)", docs.pytorch.org/tutorials/recipes/
distributed_async_checkpoint_recipe.html: the state is first copied into CPU buffers, then written by a
background process while training goes on), Megatron-LM ``--async-save`` and NeMo's asynchronous
distributed checkpoint (NVIDIA/NeMo PR 9028, May 2024; the NVIDIA Resiliency Extension's async_ckpt, which
"preloads tensors to CPU with pinned memcpy"). Each rank saves its own shard (ZeRO/FSDP/Megatron
distributed checkpoints), so the copies run in parallel over every GPU's own host link. The storage write W
still bounds how often one can save: the next save waits for the previous one (interval >= W, spot.py).

Writers: a distributed checkpoint (PyTorch DCP, Megatron dist-checkpointing) writes one file per rank, so a
job over N instances writes N shards at once, each instance to its own volume at the storage rate: W is the
checkpoint over N x that rate (GPT-3 175B on 16 nodes: 2.45 TB / (16 x 0.5 GB/s) = 5.1 min, not 82 min; the
Llama 3 paper, arXiv:2407.21783 sec. 3.3.4: "Checkpoints save each GPU's model state, ranging from 1 MB to
4 GB per GPU"). A shared file system (Lustre, NFS, an object store bucket) bounds the sum instead:
``aggregate_write_gb_per_s`` caps N x rate when it is the bound; None means each instance writes its own
volume (no shared cap). The restore reads the shards back the same way.

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
# Device-to-host copy of a GPU's checkpoint shard, GB/s per GPU. PCIe 4.0 x16 carries 32 GB/s a direction
# (PCI-SIG; 5.0: 64 GB/s) and pinned copies reach about 25 GB/s of it; DCP's default stager copies into
# pageable CPU memory, which is slower. 10 GB/s is a gpuledger assumption on the low side.
DEFAULT_HOST_COPY_GB_PER_S = 10.0


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
    asynchronous: bool = False  # the save only blocks for the device-to-host copy (module doc)
    gpus: int = 1  # ranks saving their shards in parallel
    host_copy_gb_per_s: float = DEFAULT_HOST_COPY_GB_PER_S
    writers: int = 1  # instances writing (and reading back) their own shards in parallel (module doc)
    aggregate_write_gb_per_s: float | None = None  # a shared file system's total rate; None: no shared cap

    def parallel_gb_per_s(self, per_instance_gb_per_s: float) -> float:
        """The job's storage rate: every writer at the per-instance rate, capped by a shared file system."""
        total = self.writers * per_instance_gb_per_s
        if self.aggregate_write_gb_per_s is not None:
            total = min(total, self.aggregate_write_gb_per_s)
        return total


@dataclass(frozen=True)
class SpotTiming:
    checkpoint_write_hours: float  # C: what the training loop blocks for at each checkpoint
    restart_hours: float
    restart_parts_hours: dict[
        str, float
    ]  # provisioning, image_pull, model_load, data_load, checkpoint_restore (+ checkpoint_in_flight: async)
    checkpoint_gb: float
    derived: bool = True  # False when the user gave C and R directly
    background_write_hours: float = 0.0  # W of an asynchronous save (overlaps training); 0 when synchronous
    mode: str = "sync"  # "sync" or "async"

    def mode_text(self) -> str:
        """How a checkpoint blocks the loop, in words (shown with the row's interval rule)."""
        return self._mode_text

    @cached_property
    def _mode_text(self) -> str:  # once per timing: every spot row of a ranking shows it
        blocking = f"{self.checkpoint_write_hours * 3600.0:.3g} s"
        if self.mode != "async":
            return f"synchronous checkpoint: the loop waits {blocking} for the whole write"
        return (
            f"asynchronous checkpoint: the loop waits {blocking} for each GPU's shard to reach host memory; "
            f"the {self.background_write_hours * 60.0:.3g}-min write to storage overlaps training (the next "
            "checkpoint waits for it), and a reclaim during it loses that checkpoint too"
        )

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
            "checkpoint_mode": self.mode,
            "background_write_minutes": round(self.background_write_hours * 60.0, 3),
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
    host_copy = _positive(spec.host_copy_gb_per_s, "host_copy_gb_per_s")
    if not (isinstance(spec.gpus, int) and spec.gpus >= 1):
        raise CostInputError("gpus", f"must be a whole number >= 1, got {spec.gpus!r}")
    if not (isinstance(spec.writers, int) and spec.writers >= 1):
        raise CostInputError("writers", f"must be a whole number >= 1, got {spec.writers!r}")
    if spec.aggregate_write_gb_per_s is not None:
        _positive(spec.aggregate_write_gb_per_s, "aggregate_write_gb_per_s")
    write, read = spec.parallel_gb_per_s(write), spec.parallel_gb_per_s(read)
    for name in ("checkpoint_gb", "image_gb", "model_load_gb", "dataset_gb", "provisioning_hours"):
        _not_negative(getattr(spec, name), name)
    parts = {
        "provisioning": spec.provisioning_hours,
        "image_pull": spec.image_gb / pull / SECONDS_PER_HOUR,
        "model_load": spec.model_load_gb / read / SECONDS_PER_HOUR,
        "data_load": spec.dataset_gb / read / SECONDS_PER_HOUR,
        "checkpoint_restore": spec.checkpoint_gb / read / SECONDS_PER_HOUR,
    }
    storage_write = spec.checkpoint_gb / write / SECONDS_PER_HOUR
    if not spec.asynchronous:
        return SpotTiming(
            checkpoint_write_hours=storage_write,
            restart_hours=sum(parts.values()),
            restart_parts_hours=parts,
            checkpoint_gb=spec.checkpoint_gb,
        )
    # A reclaim while the background write runs loses that checkpoint: the last durable one is a write
    # older, so the lost work is (time since the last save) + W, on average tau / 2 + W, counted with R.
    parts["checkpoint_in_flight"] = storage_write
    return SpotTiming(
        checkpoint_write_hours=spec.checkpoint_gb / spec.gpus / host_copy / SECONDS_PER_HOUR,
        restart_hours=sum(parts.values()),
        restart_parts_hours=parts,
        checkpoint_gb=spec.checkpoint_gb,
        background_write_hours=storage_write,
        mode="async",
    )
