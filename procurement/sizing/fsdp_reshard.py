"""FSDP's reshard_after_forward (parallelism.reshard_after_forward): what a stage keeps gathered, and the
collectives it saves.

FSDP2's ``fully_shard`` frees a layer's gathered parameters after its forward by default
(``reshard_after_forward=True``) and gathers them again for backward. torchtitan turns that off under
pipeline parallelism (FSDP_NO_RESHARD_GRAD_BYTES cites the source): each GPU then keeps its stage's
parameters gathered for the whole step, and PyTorch's pipelining defers FSDP's gradient reduce-scatter to the
step's last micro-batch, accumulating the unsharded gradients until then. Without pipeline parallelism the
gathered parameters live from a layer's forward to its backward (the whole model's at the turn of the step),
the gradients reduce-scatter per layer as usual, and backward skips its re-gather.

Only ZeRO-3/FSDP plans are affected; every other plan keeps the sharding memory.py gives it.
"""

from __future__ import annotations

import numpy as np

from procurement.sizing.assumptions import FSDP_NO_RESHARD_GRAD_BYTES


def keeps_gathered(spec, zero) -> np.ndarray:
    """Whether each plan holds its parameters gathered between forward and backward."""
    return (np.asarray(zero) >= 3) & (not spec.parallelism.reshard_after_forward)


def gathered_stage_bytes(spec, state, stage, tp, unsharded) -> tuple[np.ndarray, np.ndarray]:
    """(weights, gradients) a GPU holds at its peak when it keeps its stage gathered: the stage's weights
    whole (in their storage dtype: the all-gather's output), and the stage's gradients accumulated unsharded
    in the reduce dtype, which pipeline parallelism holds until the last micro-batch's reduce-scatter
    (without it the caller keeps the per-layer reduce-scatter). The ZeRO-3 shard of the fp32 master weights
    stays in the optimizer state (memory.py). ``unsharded``: the share of the state a tensor-parallel rank
    of a stage holds unsharded (memory.expert_share)."""
    share = stage * unsharded / tp
    weights = state.weight_bytes * share
    gradients = state.trainable_params * FSDP_NO_RESHARD_GRAD_BYTES.value * share
    return weights, gradients


def collective_factors(spec, sharded, pp) -> tuple[np.ndarray, np.ndarray]:
    """(gradient reduce-scatters, parameter all-gathers) of the stage's bytes per step under ZeRO-3/FSDP.
    Resharding after forward: one reduce-scatter and two all-gathers (forward, backward) per micro-batch.
    Keeping the stage gathered: no backward re-gather; under pipeline parallelism one all-gather (the first
    micro-batch's forward) and one reduce-scatter (the last micro-batch's backward) per step."""
    accumulation = float(spec.gradient_accumulation_steps)
    pp = np.asarray(pp, dtype=float)
    if spec.parallelism.reshard_after_forward:
        grad, gather = np.full_like(pp, accumulation), np.full_like(pp, 2.0 * accumulation)
    else:
        grad = np.where(pp > 1, 1.0, accumulation)
        gather = np.where(pp > 1, 1.0, accumulation)
    return np.where(sharded, grad, 2.0), np.where(sharded, gather, 0.0)
