"""DeepSpeed ZeRO-1/2's gradient reductions a step, where the run's DeepSpeed config is stated
(parallelism.reduce_bucket_size; docs/workload-spec.md).

DeepSpeed's ZeRO-1/2 optimizer reduces a parameter's gradient from its backward hook,
``reduce_ready_partitions_and_remove_grads``: "if self.partition_gradients or self.is_gradient_accumulation_boundary:
self.reduce_independent_p_g_buckets_and_remove_grads(param, i)" (deepspeed/runtime/zero/stage_1_and_2.py@v0.12.3
lines 1328-1330; @v0.14.2 line 1415). ZeRO-2 partitions gradients (``partition_gradients``, line 172), so it reduces
the whole gradient at EVERY micro-batch's backward; ZeRO-1 only in the accumulation boundary's. Each full bucket goes
to ``average_tensor``. What it sends depends on DeepSpeed's version (parallelism.multi_rank_bucket_allreduce):

- true (DeepSpeed's default from v0.12.4, PR #4695, commit 2afa1c7f: ``use_multi_rank_bucket_allreduce: bool = True``,
  zero/config.py@v0.14.2 line 111, passed in by engine.py@v0.14.2 line 1526): average_tensor (stage_1_and_2.py@v0.14.2
  line 1037) keys every slice of the bucket by its process group (line 1116) and hands it to
  ``allreduce_and_scatter`` (lines 1126-1130) -> ``allreduce_and_copy_with_multiple_ranks`` (lines 997-1007) ->
  ``allreduce_bucket(rank=None)`` -> ``dist.all_reduce`` (line 1500); each rank then keeps its own slice. A full
  all-reduce: each rank's gradient bytes x 2 (n - 1) / n.
- false (the only path through v0.12.3, which has no such key): each rank's slice goes to its owner
  (``dist.reduce(grad_slice, dst=dst_rank, ...)``, stage_1_and_2.py@v0.12.3 line 1044): a reduce-scatter's traffic,
  each rank's gradient bytes x (n - 1) / n.

Either way, under ``overlap_comm`` false it runs on ``get_accelerator().current_stream()`` (v0.12.3 line 962; v0.14.2
line 1043), the backward's own stream, and
waits on its handles before the backward goes on: nothing hides it. Under ``overlap_comm`` true it runs on
``self.reduction_stream`` beside the backward, which the engine prices as it prices the other overlapped data-parallel
traffic (under COMM_OVERLAP of the compute). After the optimizer step the updated 16-bit partitions are gathered
once (``all_gather_dp_groups``, lines 1802-1805): one all-gather of the same bytes a step, as before.

Where the bucket is not stated (0) the engine keeps its older rule, one all-reduce's traffic a step: the product
does not assume DeepSpeed behind a bare zero_stage (FSDP's SHARD_GRAD_OP and Megatron's distributed optimizer are
ZeRO-2 / ZeRO-1 too). No constant here: the traffic goes through the engine's ring model and links.
"""

from __future__ import annotations

import numpy as np

from procurement.sizing.spec import WorkloadSpec


def reductions_per_step(spec: WorkloadSpec, zero_stage) -> np.ndarray:
    """Gradient reductions a step, per row: gradient_accumulation_steps at ZeRO-2, one at ZeRO-1, where the
    DeepSpeed config is stated; 0 elsewhere (the caller's all-reduce rule holds)."""
    zero = np.asarray(zero_stage, dtype=float)
    if not spec.parallelism.reduce_bucket_size or not spec.is_training:
        return np.zeros_like(zero)
    accumulation = float(spec.gradient_accumulation_steps)
    return np.where(zero == 2.0, accumulation, np.where(zero == 1.0, 1.0, 0.0))


def reduction_factor(spec: WorkloadSpec) -> float:
    """Gradient bytes one reduction moves, in reduce-scatters of them: 2 under use_multi_rank_bucket_allreduce (an
    all-reduce, DeepSpeed >= 0.12.4's default), 1 without it (per-rank reduces, DeepSpeed <= 0.12.3)."""
    return 2.0 if spec.parallelism.multi_rank_bucket_allreduce else 1.0


def collective_factor(spec: WorkloadSpec, reductions) -> np.ndarray:
    """The step's gradient traffic in reduce-scatters of the gradient bytes: the reductions (reduction_factor each)
    and the parameters' all-gather after the step (one)."""
    return np.asarray(reductions, dtype=float) * reduction_factor(spec) + 1.0


def calls_per_step(spec: WorkloadSpec, reductions, gradient_bytes, grad_bytes_per_param: float) -> np.ndarray:
    """NCCL calls a step: a reduce a filled bucket (reduce_bucket_size elements) for each reduction, and the
    all-gather's as many again (allgather_bucket_size defaults to the same 5e8, zero/config.py@v0.12.3 line 116; reduce_scatter true, line 99)."""
    bucket_bytes = float(spec.parallelism.reduce_bucket_size or 1) * grad_bytes_per_param
    buckets = np.ceil(np.asarray(gradient_bytes, dtype=float) / bucket_bytes)
    return (np.asarray(reductions, dtype=float) + 1.0) * buckets


def exposed_seconds(spec: WorkloadSpec, reductions, gradient_seconds) -> np.ndarray:
    """The reductions' share of ``gradient_seconds`` (collective_factor: the reductions' bytes and the step's
    all-gather's) that runs on the backward's stream (overlap_comm false)."""
    reductions = np.asarray(reductions, dtype=float)
    if spec.parallelism.overlap_comm:
        return np.zeros_like(reductions * np.asarray(gradient_seconds, dtype=float))
    reduced = reductions * reduction_factor(spec)
    # A row without a fabric carries infinite gradient seconds; where it has no reduction (0 x inf) np.where drops
    # the NaN, so the warning it raises is noise.
    with np.errstate(invalid="ignore"):
        return np.where(reductions > 0, gradient_seconds * reduced / (reduced + 1.0), 0.0)
