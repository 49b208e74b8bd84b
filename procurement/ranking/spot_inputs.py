"""The spot checkpoint write time C and restart time R of one workload, from the sizing engine's sizes.

C = the resumable checkpoint (weights + optimizer state for full training, ``sizing.host.checkpoint_gb``;
the adapters and their optimizer state for LoRA/QLoRA) over the storage write bandwidth; R = provisioning + image pull + the
frozen base weights, the dataset and the checkpoint read back (``costing.spot_timing``). The options
``checkpoint_write_hours`` / ``restart_hours`` replace either figure when a person knows better.

How the trainer saves (``host.checkpoint`` of the spec): "sync" waits for the whole write; "async" waits
only for each GPU's shard to reach host memory while the write to storage overlaps training (PyTorch DCP
``async_save``, Megatron-LM ``--async-save``, NeMo's async distributed checkpoint; costing/spot_timing.py).
"auto" (the default) is async for full training on several GPUs, the distributed trainers that save
sharded checkpoints and offer async saving, and sync otherwise: one-GPU and adapter runs mostly save with
``torch.save``/``save_pretrained`` (Hugging Face Trainer, PEFT), which block for the write (an adapter's is
a second or less anyway).
"""

from __future__ import annotations

from dataclasses import replace

from procurement.costing.spot_timing import SpotTiming, SpotTimingInput, spot_timing
from procurement.ranking.options import RankingOptions
from procurement.sizing import WorkloadSpec
from procurement.sizing.assumptions import ENVIRONMENT_DISK, GB, GPUS_PER_NODE
from procurement.sizing.bytes_model import (
    adapter_bytes,
    adapter_params,
    optimizer_bytes_per_param,
    saved_module_bytes,
    saved_module_optimizer_bytes,
    saved_module_params,
)
from procurement.sizing.host import checkpoint_gb, dataset_gb
from procurement.sizing.verdict import identity_cache

# No checkpoint is written faster than about a second (serialization, fsync, the loop's barrier); the floor
# also keeps C / tau finite for serving, which never checkpoints (spot is refused for it).
MIN_CHECKPOINT_WRITE_HOURS = 1.0 / 3600.0


def resumable_checkpoint_gb(spec: WorkloadSpec) -> float:
    """What a restart needs to resume exactly: the trained weights and their optimizer state. Full training:
    the sizing engine's checkpoint (all weights + optimizer state); adapters: adapter weights + their
    optimizer state (the frozen base is reloaded from the model files, ``frozen_weights_gb``)."""
    if not spec.is_training:
        return 0.0
    if spec.uses_adapters:
        saved = saved_module_params(spec) * (saved_module_bytes(spec) + saved_module_optimizer_bytes(spec))
        return (adapter_params(spec) * (adapter_bytes(spec) + optimizer_bytes_per_param(spec)) + saved) / GB
    return checkpoint_gb(spec)


def frozen_weights_gb(spec: WorkloadSpec) -> float:
    """Weights a restart loads besides the checkpoint: the 16-bit base model of an adapter run (a full
    training checkpoint holds the weights itself, so nothing is loaded twice)."""
    return spec.model.params * 2.0 / GB if spec.uses_adapters else 0.0


def saves_asynchronously(spec: WorkloadSpec) -> bool:
    """The checkpoint mode of the spec, "auto" resolved (module doc)."""
    mode = spec.host.checkpoint
    if mode != "auto":
        return mode == "async"
    return spec.is_training and not spec.uses_adapters and spec.parallelism.gpus > 1


def checkpoint_writers(spec: WorkloadSpec) -> int:
    """Instances writing their own checkpoint shards in parallel (costing/spot_timing.py): the spec's GPUs
    over 8-GPU nodes (GPUS_PER_NODE). The timing is the spec's, not an offer's: rows of smaller instances
    have more writers, so this is the slower bound for them; ``gpus: auto`` counts 1 GPU, one writer."""
    gpus = max(1, int(spec.parallelism.gpus))
    per_node = int(GPUS_PER_NODE.value)
    return -(-gpus // per_node)


def job_spot_timing(spec: WorkloadSpec, options: RankingOptions) -> SpotTiming:
    """C and R for this spec under these options; memoized on the spec's identity (a ranking asks for it
    once per pass and once per returned spot row, and hashing a nested spec costs more than it saves)."""
    return _timing(
        spec,
        options.checkpoint_write_hours,
        options.restart_hours,
        options.storage_write_gb_per_s,
        options.storage_read_gb_per_s,
        options.provisioning_hours,
        options.image_pull_gb_per_s,
    )


@identity_cache
def _timing(
    spec, write_hours, restart_hours, write_gbps, read_gbps, provisioning_hours, pull_gbps
) -> SpotTiming:
    options = RankingOptions(
        checkpoint_write_hours=write_hours,
        restart_hours=restart_hours,
        storage_write_gb_per_s=write_gbps,
        storage_read_gb_per_s=read_gbps,
        provisioning_hours=provisioning_hours,
        image_pull_gb_per_s=pull_gbps,
    )
    timing = spot_timing(
        SpotTimingInput(
            checkpoint_gb=resumable_checkpoint_gb(spec),
            image_gb=ENVIRONMENT_DISK.value,
            model_load_gb=frozen_weights_gb(spec),
            dataset_gb=dataset_gb(spec) if spec.is_training else 0.0,
            storage_write_gb_per_s=options.storage_write_gb_per_s,
            storage_read_gb_per_s=options.storage_read_gb_per_s,
            provisioning_hours=options.provisioning_hours,
            image_pull_gb_per_s=options.image_pull_gb_per_s,
            asynchronous=saves_asynchronously(spec),
            # each rank copies its shard: the spec's GPU count (the rows of a stated count have it; with
            # ``gpus: auto`` the spec's count is 1, the slowest copy)
            gpus=max(1, int(spec.parallelism.gpus)),
            writers=checkpoint_writers(spec),
        )
    )
    timing = replace(
        timing, checkpoint_write_hours=max(timing.checkpoint_write_hours, MIN_CHECKPOINT_WRITE_HOURS)
    )
    if options.checkpoint_write_hours is not None:
        timing = replace(timing, checkpoint_write_hours=float(options.checkpoint_write_hours), derived=False)
    if options.restart_hours is not None:
        restart = float(options.restart_hours)
        timing = replace(timing, restart_hours=restart, restart_parts_hours={"given": restart}, derived=False)
    return timing
