"""The user's spec is a contract (issue 26, class 3).

The parallelism a spec states (``parallelism.gpus``, ``zero_stage``, ``tensor_parallel``,
``pipeline_parallel``; ``ParallelismSpec.stated`` records which the document gave) is honoured: without
``gpus: auto`` or the explicit ``explore_parallelism`` option, only shapes that match every stated field are
valid. The plans themselves take the stated figures: a stated ZeRO-1 or ZeRO-2 replaces the unsharded
data-parallel plans' stage 0 (the ranking's own plans are 0, 3 and tensor parallel), a stated ZeRO-3/FSDP with a stated
tensor-parallel degree the tensor-parallel plans' (FSDP x TP: ``stated_zero``), a stated tensor-parallel
degree is the degree of the tensor-parallel plan (TP groups of that size inside an instance whose GPU count
it divides), a stated pipeline degree is passed to the memory and speed models. The virtual-pipeline, context- and expert-parallel
degrees (1 unless stated) are every row's, exploring or not: a shape ranks only when its GPUs hold whole
tensor x pipeline x context groups and each stage's ranks whole expert-parallel groups. When exploring, every shape
is ranked and each row says what differs from the spec (``differences``): the partial tensor-parallel plans
(TP 2, 4 or 8 groups inside a larger instance) are such rows where they differ from a stated degree, and
the engine's own choice where the spec leaves the degree open.

Serving states GPUs per replica (the tensor-parallel group); a stated ZeRO stage is a training contract. A
stated serving ``pipeline_parallel: n`` is honoured (the replica is a pipeline over an instance of n x t GPUs,
vLLM's ``--pipeline-parallel-size``: ranking/splits.serving_pipeline_plans), each stage a TP group of t: the stated
``tensor_parallel``, else the stated ``gpus`` over n where they divide, else 1 (splits.serving_stage_tensor_parallel).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

import numpy as np

from procurement.ranking.options import MAX_INSTANCES, RankingOptions
from procurement.sizing.expert_layout import expert_groups_tile


def enforced(spec, options: RankingOptions) -> bool:
    """Rows must match the stated fields: unless the spec says ``gpus: auto`` or the request explores."""
    return not (options.explore_parallelism or spec.parallelism.gpus_auto)


def pipeline_degree(spec) -> float:
    par = spec.parallelism
    return float(par.pipeline_parallel) if spec.is_training and "pipeline_parallel" in par.stated else 1.0


def split_degrees(spec) -> dict[str, int]:
    """The virtual-pipeline, context- and expert-parallel degrees every row of the spec runs (a row's plan)."""
    par = spec.parallelism
    return {
        "virtual_pipeline": par.virtual_pipeline,
        "context_parallel": par.context_parallel,
        "expert_parallel": par.expert_parallel,
    }


def contract_grid(spec, grid, options: RankingOptions):
    """The grid with the spec's stated plan figures and, when enforced, only the matching shapes valid; each
    rule is a named gate (``grid.gates``) so that an empty ranking can say which one left it empty."""
    par, stated = spec.parallelism, spec.parallelism.stated
    if not stated:
        return grid
    tensor_parallel, gates = grid.tensor_parallel, dict(grid.gates)
    zero = stated_zero(spec, grid)
    if spec.is_training and "zero_stage" in stated and par.zero_stage >= 3:
        # the stated ZeRO-3/FSDP is a plan on one GPU too (DeepSpeed ZeRO-3 with offload on a single card)
        gates["zero_one_gpu"] = np.ones(np.shape(zero), dtype=bool)
    serving_pipeline = serving_pipelines(spec, grid)
    if "tensor_parallel" in stated and par.tensor_parallel > 1:
        # the plan that takes the stated degree (not a serving pipeline: TP 1 by definition)
        whole = grid.uses_tp & (grid.partial_tp == 0) & (serving_pipeline <= 1)
        tensor_parallel = np.where(whole, float(par.tensor_parallel), grid.tensor_parallel)
        gates["tp_instance"] = gates["tp_instance"] & (
            ~whole | (grid.per_instance % par.tensor_parallel == 0)
        )
        gates["duplicate"] = grid.partial_tp != par.tensor_parallel  # the same groups as the plan above
    pipeline = pipeline_degree(spec)
    tiles = split_tiles(spec, grid.total, tensor_parallel, pipeline)
    if pipeline > 1:
        tiles = tiles & (grid.total % (tensor_parallel * pipeline) == 0)
    gates["tiles"] = tiles
    if enforced(spec, options):
        gates["gpus"] = matches_gpus(spec, grid.total)
        gates["plan"] = matches(spec, grid.total, zero, tensor_parallel, serving_pipeline)
    valid = all_gates(gates, np.shape(zero))
    return replace(grid, zero=zero, tensor_parallel=tensor_parallel, valid=valid, gates=gates)


def all_gates(gates, shape) -> np.ndarray:
    """Per shape: every gate passes (a plan the ranking can run)."""
    valid = np.ones(shape, dtype=bool)
    for passes in gates.values():
        valid = valid & passes
    return valid


def stated_zero(spec, grid) -> np.ndarray:
    """The plans' ZeRO stages with a stated stage taken: ZeRO-1 or ZeRO-2 replaces every unsharded plan's
    stage 0. A stated ZeRO-3/FSDP with a stated tensor-parallel degree replaces the tensor-parallel plans'
    (FSDP over the data-parallel group of the tp x pp groups: torchtitan's 2D plan); without one it is
    1D FSDP, the ``zero3_fsdp`` plan, as ``size`` sizes it (tensor parallel 1)."""
    par = spec.parallelism
    if not spec.is_training or "zero_stage" not in par.stated or par.zero_stage == 0:
        return grid.zero
    if par.zero_stage < 3:
        return np.where(grid.zero == 0, float(par.zero_stage), grid.zero)
    if "tensor_parallel" not in par.stated or par.tensor_parallel == 1:
        return grid.zero
    return np.where(grid.uses_tp, float(par.zero_stage), grid.zero)


def split_tiles(spec, total, tensor_parallel, pipeline) -> np.ndarray:
    """Per shape: the GPUs hold whole tp x pp x cp groups and each stage's data x context ranks whole EP
    groups; at the spec's own tensor-parallel degree the EP groups may span the tp ranks instead
    (sizing/expert_layout.py: the plan a user states with expert TP 1), not at a degree the ranking
    explores. All true without context or expert parallelism."""
    par = spec.parallelism
    model_parallel = tensor_parallel * pipeline
    keep = np.ones(np.shape(total), dtype=bool)
    if not spec.is_training:
        return keep
    if par.context_parallel > 1:
        keep &= np.mod(total, model_parallel * par.context_parallel) == 0
    if par.expert_parallel > 1:
        over_data = np.mod(total / model_parallel, par.expert_parallel) == 0
        stated = (tensor_parallel == par.tensor_parallel) & expert_groups_tile(
            total, pipeline, par.expert_parallel
        )
        keep &= over_data | stated
    return keep


def matches_gpus(spec, total) -> np.ndarray:
    """Per shape: the stated GPU count (per replica for serving) holds."""
    par = spec.parallelism
    keep = np.ones(np.shape(total), dtype=bool)
    return keep & (total == par.gpus) if "gpus" in par.stated else keep


def serving_pipelines(spec, grid) -> np.ndarray:
    """Per shape: a serving plan's pipeline degree (1 but for a serving pipeline plan, shapes.with_serving_
    pipelines); 1 for training (its stated degree is every plan's, ``pipeline_degree``)."""
    if spec.is_training or grid.pipeline is None:
        return np.ones(np.shape(grid.total))
    return np.asarray(grid.pipeline, dtype=float)


def matches(spec, total, zero, tensor_parallel, serving_pipeline=1.0) -> np.ndarray:
    """Per shape: the stated ZeRO stage, tensor-parallel degree and (serving) pipeline degree hold (the GPU
    count: ``matches_gpus``)."""
    par, stated = spec.parallelism, spec.parallelism.stated
    keep = np.ones(np.shape(total), dtype=bool)
    if not spec.is_training and "pipeline_parallel" in stated:
        keep &= serving_pipeline == par.pipeline_parallel
    if spec.is_training and "zero_stage" in stated:
        keep &= zero == par.zero_stage
    if "tensor_parallel" in stated:
        keep &= tensor_parallel == par.tensor_parallel
    return keep


def differences(
    spec, gpus_per_replica: int, zero: int, tensor_parallel: int, pipeline_parallel: int | None = None
) -> list[str]:
    """What a row's plan changes from the stated parallelism, in words (empty when it matches); a serving
    row's ``pipeline_parallel`` is compared with a stated one."""
    par, stated = spec.parallelism, spec.parallelism.stated
    found = []
    if "gpus" in stated and gpus_per_replica != par.gpus:
        found.append(f"{gpus_per_replica} GPU{'s' if gpus_per_replica != 1 else ''} (spec: {par.gpus})")
    if spec.is_training and "zero_stage" in stated and zero != par.zero_stage:
        found.append(f"ZeRO-{zero} (spec: ZeRO-{par.zero_stage})")
    if "tensor_parallel" in stated and tensor_parallel != par.tensor_parallel:
        found.append(f"tensor parallel {tensor_parallel} (spec: {par.tensor_parallel})")
    stated_pipeline = not spec.is_training and "pipeline_parallel" in stated and pipeline_parallel is not None
    if stated_pipeline and pipeline_parallel != par.pipeline_parallel:
        found.append(f"pipeline parallel {pipeline_parallel} (spec: {par.pipeline_parallel})")
    return found


def instance_counts_for(spec, options: RankingOptions, sizes: Iterable[int]) -> tuple[int, ...]:
    """The instance counts to try: the requested ones plus those that make a stated GPU count on instances
    of every size the catalog sells (``sizes``: the offers' GPUs per instance, ``PreparedOffers.kinds``) that
    divides it, at most MAX_INSTANCES instances (64 GPUs stated on 1, 8 and 16-GPU offers: 64, 8 and 4
    instances). Before stop 51 (inst16) only instances of 1, 2, 4 or 8 GPUs were tried, so GCP's
    a2-megagpu-16g (16 x A100 40GB) never made a stated count. One count per distinct size that divides."""
    par = spec.parallelism
    if not spec.is_training or "gpus" not in par.stated or not enforced(spec, options):
        return options.instance_counts
    extra = {
        par.gpus // size
        for size in {int(size) for size in sizes}
        if size > 0 and par.gpus % size == 0 and par.gpus // size <= MAX_INSTANCES
    }
    return tuple(sorted(set(options.instance_counts) | extra))
