"""Why a ranking returned nothing: the top reasons, each with how many configurations it excluded.

An empty table says nothing a person can act on. When no configuration is feasible, every valid
configuration (offer x instance count x plan) is given the first gate it fails, in the order the
ranking applies them, and the reasons are counted (vectorized over the configurations).
"""

from __future__ import annotations

from collections import Counter

import numpy as np

from procurement.ranking.contract import enforced
from procurement.ranking.options import RankingOptions

TOP_REASONS = 5


def why_empty(prepared, shapes, configs, options: RankingOptions, spec, offers_seen: int) -> list[dict]:
    """[{"reason": ..., "count": ...}], most frequent first (at most TOP_REASONS). ``configs`` must be
    priced with include_infeasible (every valid configuration present)."""
    if not len(prepared.offer_kind):
        return [{"reason": _no_offers_reason(options), "count": offers_seen}]
    shape, offer = configs.shape, configs.offer
    if not shape.size and spec.parallelism.stated and enforced(spec, options):
        return [{"reason": _stated_plan_reason(spec), "count": len(prepared.offer_kind)}]
    columns = prepared.columns
    kind = shapes.kind[shape]
    incompatible = np.array([bool(text) for text in shapes.incompatible], dtype=bool)[kind]
    memory = shapes.required_gib[shape] > shapes.capacity_gib[shape]
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


def _stated_plan_reason(spec) -> str:
    """No offer can run the plan the spec states (the contract, ranking/contract.py): say which fields."""
    par = spec.parallelism
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
        if name in par.stated and (spec.is_training or name in ("gpus", "tensor_parallel"))
    ]
    text = f"no offer can run the stated parallelism ({', '.join(fields)})"
    if "tensor_parallel" in par.stated and par.tensor_parallel > 1:
        text += f": tensor parallel {par.tensor_parallel} needs an instance whose GPU count it divides" + (
            " with NVLink or Infinity Fabric between them" if spec.is_training else ""
        )
    return text + "; gpus: auto or explore_parallelism ranks other plans, saying what differs"


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
