"""Why a ranking returned nothing: the top reasons, each with how many configurations it excluded.

An empty table says nothing a person can act on. When no configuration is feasible, every valid
configuration (offer x instance count x plan) is given the first gate it fails, in the order the
ranking applies them, and the reasons are counted (vectorized over the configurations).
"""

from __future__ import annotations

from collections import Counter

import numpy as np

from procurement.ranking.contract import enforced, pipeline_degree
from procurement.ranking.options import MAX_INSTANCES, RankingOptions
from procurement.ranking.splits import mlp_split_unit, mlp_widths, serving_stage_tensor_parallel

TOP_REASONS = 5


def why_empty(prepared, shapes, configs, options: RankingOptions, spec, offers_seen: int) -> list[dict]:
    """[{"reason": ..., "count": ...}], most frequent first (at most TOP_REASONS). ``configs`` must be
    priced with include_infeasible (every valid configuration present)."""
    if not len(prepared.offer_kind):
        return [{"reason": _no_offers_reason(options), "count": offers_seen}]
    shape, offer = configs.shape, configs.offer
    if not shape.size:  # no offer has a plan at all: the gate that rules out the plans closest to running
        return [{"reason": _no_plan_reason(spec, shapes, options), "count": len(prepared.offer_kind)}]
    columns = prepared.columns
    kind = shapes.kind[shape]
    incompatible = np.array([bool(text) for text in shapes.incompatible], dtype=bool)[kind]
    # the ranking's own fit (shapes.runnable): a peak over the card; a peak inside it but not inside the
    # headroom is a tight row that ranks, so a later gate is what stops it
    memory = shapes.total_gib[shape] > shapes.capacity_gib[shape]
    no_fabric = shapes.no_fabric[shape]  # several instances of a type with no cluster interconnect
    speed = ~np.isfinite(shapes.hours[shape])
    gpu_only = columns["gpu_only"][offer]
    spot = configs.spot_refused
    no_saving = spot & columns["spot_no_saving"][offer]
    host = configs.host_blocked
    deadline = (
        configs.hours > options.deadline_hours
        if options.deadline_hours is not None
        else np.zeros(shape.shape, bool)
    )
    budget = (
        configs.total_cost > options.budget_usd if options.budget is not None else np.zeros(shape.shape, bool)
    )
    gates = [
        (incompatible, "the GPU cannot run this precision or has no throughput figure"),
        (memory, "does not fit in GPU memory"),
        (no_fabric, "no cluster interconnect: several instances of a type with no fabric"),
        (speed, "speed not estimated for this GPU and plan"),
        (gpu_only, "GPU-only price (host VM billed separately, not in the catalog)"),
        (no_saving, "spot at or above on-demand: saves nothing"),
        (spot & ~no_saving, _spot_reason(spec, options)),
        (host, "host RAM too small for the state the plan offloads"),
        (
            deadline,
            f"finishes after the {options.deadline_hours:g} h deadline" if options.deadline_hours else "",
        ),
        (
            budget,
            f"costs more than the budget of {options.budget:g} {options.currency}" if options.budget else "",
        ),
    ]
    assigned = np.zeros(shape.shape, dtype=bool)
    counts: Counter[str] = Counter()
    for mask, reason in gates:
        first = mask & ~assigned
        if reason and first.any():
            counts[reason] += int(first.sum())
        assigned |= mask
    return [{"reason": reason, "count": count} for reason, count in counts.most_common(TOP_REASONS)]


# The plan gates (ranking/shapes.py, ranking/contract.py) in the order a stated plan meets them: the GPU count,
# a plan with the stated ZeRO stage and TP degree, then what the instances must offer that plan. "duplicate"
# (a partial TP plan of the stated degree, the whole-instance plan's twin) is never the cause.
PLAN_GATE_ORDER = (
    "gpus",
    "plan",
    "serving_zero",
    "serving_partial",
    "image_tp",
    "tp_heads",
    "tp_mlp",
    "zero_one_gpu",
    "tiles",
    "global_batch",
    "tp_instance",
    "tp_link",
)


def _no_plan_reason(spec, shapes, options: RankingOptions) -> str:
    """Why no shape is a plan: the gate that stops the shapes that pass the most gates (in PLAN_GATE_ORDER),
    in words with what the offers lack, so the reason is the real one (not the NVLink a plan already has)."""
    gates = shapes.plan_gates
    depth = np.zeros(np.shape(shapes.kind), dtype=int)
    alive = np.ones(np.shape(shapes.kind), dtype=bool)
    for index, name in enumerate(PLAN_GATE_ORDER):
        alive = alive & gates.get(name, True)
        depth = np.where(alive, index + 1, depth)
    deepest = int(depth.max()) if depth.size else 0
    closest = depth == deepest
    cause = (
        _gate_text(PLAN_GATE_ORDER[deepest], spec, shapes, closest)
        if deepest < len(PLAN_GATE_ORDER)
        else "every plan repeats another"
    )
    par = spec.parallelism
    if not (par.stated and enforced(spec, options)):
        return f"no parallelism plan runs on these offers: {cause}"
    fields = [
        f"{name} {getattr(par, name)}"
        for name in (
            "gpus",
            "zero_stage",
            "tensor_parallel",
            "pipeline_parallel",
            "virtual_pipeline",
            "context_parallel",
            "expert_parallel",
        )
        if name in par.stated
        and (spec.is_training or name in ("gpus", "tensor_parallel", "pipeline_parallel"))
    ]
    return (
        f"no offer can run the stated parallelism ({', '.join(fields)}): {cause}"
        "; gpus: auto or explore_parallelism ranks other plans, saying what differs"
    )


def _gate_text(name: str, spec, shapes, closest) -> str:
    """The gate ``name`` in words, with what the shapes that reach it (``closest``) have."""
    par = spec.parallelism
    per_instance = _listed(shapes.per_instance[closest])
    totals = _listed(shapes.grid_total[closest])
    tp = _listed(shapes.tensor_parallel[closest])
    if name == "gpus":
        text = (
            f"no offer makes {par.gpus} GPUs (instances of {per_instance} GPUs at the instance counts "
            f"tried, {_listed(shapes.grid_total[closest] / shapes.per_instance[closest])})"
        )
        largest = int(np.nanmax(shapes.per_instance)) if np.size(shapes.per_instance) else 0
        if largest and -(-par.gpus // largest) > MAX_INSTANCES:
            text += (
                f": {par.gpus:,} GPUs need more than the {MAX_INSTANCES:,} instances a row may use, even on "
                f"instances of {largest}"
            )
        return text
    if name == "plan":
        parts = [f"ZeRO-{par.zero_stage}"] if spec.is_training and "zero_stage" in par.stated else []
        parts += [f"tensor parallel {par.tensor_parallel}"] if "tensor_parallel" in par.stated else []
        if not spec.is_training and "pipeline_parallel" in par.stated:
            stage = serving_stage_tensor_parallel(spec)
            parts += [
                f"pipeline parallel {par.pipeline_parallel} (parallelism.pipeline_parallel: a serving pipeline "
                f"runs TP {stage} x PP {par.pipeline_parallel} over one instance of "
                f"{stage * par.pipeline_parallel} GPUs)"
            ]
        return "the ranking has no plan with " + " and ".join(parts)
    if name == "serving_zero":
        return "ZeRO-3/FSDP is a training plan (serving has no optimizer state to shard)"
    if name == "serving_partial":
        return "partial tensor-parallel plans are training plans (a serving replica is its TP group)"
    if name == "image_tp":
        return "image presets run data parallel only"
    if name == "tp_heads":
        model = spec.model
        return (
            f"tensor parallel {tp} does not split the model's {model.num_attention_heads} attention heads "
            f"({model.num_key_value_heads or model.num_attention_heads} KV heads) evenly"
        )
    if name == "tp_mlp":
        return tp_mlp_text(spec, tp)
    if name == "zero_one_gpu":
        return "ZeRO-3/FSDP shards over more than one GPU"
    if name == "tiles":
        return (
            f"{totals} GPUs do not hold whole tensor x pipeline x context-parallel groups ({tp} x "
            f"{int(pipeline_degree(spec))} x {par.context_parallel}) with whole expert-parallel groups of "
            f"{par.expert_parallel} in each stage's GPUs"
        )
    if name == "global_batch":
        return (
            f"{totals} GPUs at tensor x pipeline x context parallel {tp} x {int(pipeline_degree(spec))} x "
            f"{par.context_parallel} do not split the stated global batch of {spec.global_batch_size:,} sequences "
            f"into whole micro-batches of micro_batch_size {spec.micro_batch_size} over their data-parallel ranks "
            "(Megatron-LM asserts global / (micro x data-parallel ranks) is whole)"
        )
    if name == "tp_instance":
        return (
            f"tensor parallel {tp} needs an instance whose GPU count it divides"
            + (" with NVLink or Infinity Fabric between them" if spec.is_training else "")
            + f": the offers of {totals} GPUs have {per_instance} GPU{'s' if per_instance != '1' else ''} per instance"
        )
    links = sorted({shapes.links[int(i)].node_name for i in shapes.link[closest]})
    return (
        f"tensor parallel {tp} needs NVLink or Infinity Fabric between an instance's GPUs to train: the "
        f"{per_instance}-GPU instances that hold its groups have {'; '.join(links)} only"
    )


def tp_mlp_text(spec, tp: str) -> str:
    """Why tensor parallel ``tp`` does not split the MLP (splits.tensor_parallel_splits_mlp)."""
    widths = " and ".join(f"{width:,}" for width in mlp_widths(spec))
    unit, grouped, why = mlp_split_unit(spec)
    text = f"tensor parallel {tp} does not split the MLP's width ({widths})"
    if unit > 1:
        text += f" into whole {why} a rank ({' and '.join(f'{w:,}' for w in grouped)} / TP must be a multiple of {unit})"
    if spec.weight_quantization == "int4" and grouped:
        text += "; " + padded_checkpoint_text(max(grouped), unit)
    return text


# [QWEN-PAD] Qwen's int4 checkpoints of the 72B width pad the MLP so that vLLM loads them at TP 2, 4 and 8: Hugging
# Face Qwen/Qwen2-VL-72B-Instruct-AWQ commit 688e28d, -GPTQ-Int4 commit 288c348 ("pad intermediate_size to 29696
# to make sure quantized model can use 8 tensor-parallel in vllm"), Qwen2-72B-Instruct-AWQ discussion 3. Not every
# int4 checkpoint is padded (vllm#5675: a self-quantized Qwen2-72B AWQ at 29,568 fails TP 2), so the spec's width
# is the checkpoint's; a padded one is stated as model.intermediate_size.
PADDED_TP = 8  # the largest TP degree of one instance the padding is for (Qwen's "8 tensor-parallel")


def padded_checkpoint_text(width: int, unit: int) -> str:
    """What a checkpoint padded to whole groups at TP 2, 4 and 8 would be, and how to state it."""
    step = unit * PADDED_TP
    padded = -(-width // step) * step
    return (
        f"a checkpoint padded to {padded:,} (whole groups at TP 2, 4 and 8, as Qwen pads its int4 72B releases "
        f"from 29,568 to 29,696) runs it: state model.intermediate_size {padded}"
    )


def _listed(values) -> str:
    """Distinct whole numbers, in order, as text: "1, 2 or 8"."""
    numbers = [str(int(v)) for v in sorted({float(v) for v in np.ravel(values) if np.isfinite(v)})]
    return " or ".join([", ".join(numbers[:-1]), numbers[-1]]) if len(numbers) > 1 else "".join(numbers)


def _spot_reason(spec, options: RankingOptions) -> str:
    if not spec.is_training:
        return "spot refused for serving (a reclaimed instance drops live requests)"
    if not options.can_checkpoint:
        return "spot refused: the job cannot checkpoint"
    return "spot refused: a checkpoint write takes 15 min or more, the guides' whole interval"


def _no_offers_reason(options: RankingOptions) -> str:
    filters = [
        f"{name} {', '.join(values)}"
        for name, values in (
            ("providers", options.providers),
            ("regions", options.regions),
            ("GPUs", options.gpus),
            ("pricing models", options.pricing_models),
        )
        if values
    ]
    illustrative = (
        "" if options.include_illustrative else "; illustrative prices are left out unless asked for"
    )
    return f"no priced offer of a known GPU matches the filters ({'; '.join(filters)}){illustrative}"
