"""A row's ``interconnect``: which link carried which collective, and the sentence a person reads.

Reads the per-shape collectives the sizing engine computed (procurement/sizing/throughput.py) for the
returned rows only; bytes are what each GPU sends per step. ``communication_share`` is all the traffic,
hidden under compute or not, against compute plus traffic; ``exposed_communication_share`` the seconds it
adds to the step, over the step (what costs time: the summary states it first, communication_text).
"""

from __future__ import annotations

import math
from typing import Any

from procurement.ranking.interconnects import Interconnect
from procurement.ranking.shapes import Shapes
from procurement.sizing.communication_text import communication_phrase

GB = 1e9
TRAINING_KEYS = (
    "tensor_parallel_seconds",
    "tensor_parallel_bytes_per_step",
    "gradient_seconds_node",
    "gradient_seconds_fabric",
    "gradient_bytes_per_step",
    "gather_seconds_node",
    "gather_seconds_fabric",
    "gather_bytes_per_step",
    "pipeline_seconds",
    "pipeline_on_fabric",
    "pipeline_bytes_per_step",
    "context_parallel_seconds",
    "context_parallel_bytes_per_step",
    "context_parallel_on_fabric",
    "expert_parallel_seconds",
    "expert_parallel_bytes_per_step",
    "expert_parallel_on_node",
    "expert_parallel_on_fabric",
)


def _links_label(link: Interconnect, node_s: float, fabric_s: float) -> str:
    names = [
        name for name, seconds in ((link.node_name, node_s), (link.fabric_name, fabric_s)) if seconds > 0
    ]
    return " and ".join(names)


def _carried(name: str, gigabytes: float, seconds: float, over: str) -> dict[str, Any]:
    return {
        "collective": name,
        "gb_per_step": round(gigabytes, 3),
        "seconds_per_step": round(seconds, 6),
        "over": over,
    }


def gradient_collective(zero: int) -> str:
    """The name of the data-parallel gradient traffic the engine counts (throughput.py: 2 x gradient bytes once
    a step below ZeRO-3; a reduce-scatter each micro-batch under ZeRO-3/FSDP, its all-gathers listed apart).
    Under ZeRO-1/2 those 2 x bytes are not an all-reduce: DeepSpeed reduce-scatters the gradients to the rank
    that owns each partition and all-gathers the updated parameters after the optimizer step (ZeRO paper,
    arXiv:1910.02054 section 7.2.1, the same 2 x volume as the all-reduce; stage 1 partition-aware since
    deepspeed.ai/2020/03/17/reduce-scatter.html). DDP (ZeRO 0) runs the all-reduce."""
    if zero >= 3:
        return "gradient reduce-scatter"
    if zero >= 1:
        return f"ZeRO-{zero} gradient reduce-scatter and parameter all-gather"
    return "gradient all-reduce"


def _training_collectives(shapes: Shapes, shape: int, link: Interconnect, zero: int) -> list[dict[str, Any]]:
    comm = {key: float(shapes.communication[key][shape]) for key in TRAINING_KEYS}
    carried = []
    tp_s = comm["tensor_parallel_seconds"]
    if tp_s > 0:
        carried.append(
            _carried("TP all-reduce", comm["tensor_parallel_bytes_per_step"] / GB, tp_s, link.node_name)
        )
    grad_node, grad_fabric = comm["gradient_seconds_node"], comm["gradient_seconds_fabric"]
    if grad_node + grad_fabric > 0:
        name = gradient_collective(zero)
        over = _links_label(link, grad_node, grad_fabric)
        carried.append(_carried(name, comm["gradient_bytes_per_step"] / GB, grad_node + grad_fabric, over))
    gather_node, gather_fabric = comm["gather_seconds_node"], comm["gather_seconds_fabric"]
    if gather_node + gather_fabric > 0:
        over = _links_label(link, gather_node, gather_fabric)
        seconds = gather_node + gather_fabric
        carried.append(_carried("FSDP all-gather", comm["gather_bytes_per_step"] / GB, seconds, over))
    if comm["pipeline_seconds"] > 0:
        over = link.fabric_name if comm["pipeline_on_fabric"] else link.node_name
        carried.append(
            _carried("pipeline send", comm["pipeline_bytes_per_step"] / GB, comm["pipeline_seconds"], over)
        )
    if comm["context_parallel_seconds"] > 0:
        over = link.fabric_name if comm["context_parallel_on_fabric"] else link.node_name
        seconds = comm["context_parallel_seconds"]
        carried.append(_carried("CP K/V ring", comm["context_parallel_bytes_per_step"] / GB, seconds, over))
    if comm["expert_parallel_seconds"] > 0:
        over = " and ".join(
            name
            for name, used in (
                (link.node_name, comm["expert_parallel_on_node"]),
                (link.fabric_name, comm["expert_parallel_on_fabric"]),
            )
            if used
        )
        seconds = comm["expert_parallel_seconds"]
        carried.append(_carried("EP all-to-all", comm["expert_parallel_bytes_per_step"] / GB, seconds, over))
    return carried


def _summary(carried: list[dict[str, Any]], share: float, exposed: float, unit: str) -> str:
    if not carried:
        return "one GPU: no collectives"
    parts = [
        f"{item['collective']} {_gigabytes(item['gb_per_step'])}/{unit} over {item['over']}"
        for item in carried
    ]
    text = "; ".join(parts)
    phrase = communication_phrase(exposed, share)
    return f"{text}: {phrase}" if phrase else text


def _gigabytes(value: float) -> str:
    return f"{value:.3g} GB" if value < 100 else f"{value:,.0f} GB"


# Built rows by everything they read (the link, the shape's collectives, its share): the same links and
# plans top most rankings of a recompute, so most rows are a lookup and a copy. Bounded: full, start over.
_ROWS: dict[tuple, dict[str, Any]] = {}
ROWS_KEPT = 8192


def interconnect_row(shapes: Shapes, shape: int, spec, instance_type: str) -> dict[str, Any]:
    """The ``interconnect`` object of one ranked row (a fresh copy of a memoized one: callers may change it)."""
    link: Interconnect = shapes.links[int(shapes.link[shape])]
    share = float(shapes.communication_share[shape])
    if shapes.no_fabric[shape]:
        key: tuple = (link, instance_type)
    elif spec.is_training:
        communication = shapes.communication
        # a list, not a generator: one call instead of one resumption per key (12 per row)
        figures = [float(communication[name][shape]) for name in TRAINING_KEYS]
        key = (link, share, _exposed(shapes, shape), int(shapes.zero[shape]), *figures)
    else:
        key = (link, share, None, float(shapes.communication["tensor_parallel_seconds"][shape]))
    row = _ROWS.get(key)
    if row is None:
        if len(_ROWS) >= ROWS_KEPT:
            _ROWS.clear()
        row = _ROWS[key] = _interconnect_row(shapes, shape, spec, instance_type)
    return row | {"carried": [dict(item) for item in row["carried"]]}


def _interconnect_row(shapes: Shapes, shape: int, spec, instance_type: str) -> dict[str, Any]:
    link: Interconnect = shapes.links[int(shapes.link[shape])]
    share = float(shapes.communication_share[shape])
    row: dict[str, Any] = {
        "node_link": link.node_name,
        "node_link_type": link.node_link,
        "fabric": link.fabric_name or None,
        "stated": link.stated,
        "source": link.source_url,
    }
    if shapes.no_fabric[shape]:
        return row | {
            "carried": [],
            "communication_share": None,
            "exposed_communication_share": None,
            "summary": f"no cluster interconnect for {instance_type}",
        }
    if spec.is_training:
        carried = _training_collectives(shapes, shape, link, int(shapes.zero[shape]))
        unit = "step"
    else:
        tp_s = float(shapes.communication["tensor_parallel_seconds"][shape])
        pipeline = 1 if shapes.pipeline is None else int(shapes.pipeline[shape])
        # a serving pipeline's stage-to-stage sends (splits.serving_pipeline_plans), else the TP all-reduces
        tensor_parallel = int(shapes.tensor_parallel[shape])
        what = "pipeline send" if pipeline > 1 else "TP all-reduce"
        if pipeline > 1 and tensor_parallel > 1:  # each stage a TP group (a stated TP x PP serving plan)
            what = "TP all-reduce and pipeline send"
        carried = [_carried(what, math.nan, tp_s, link.node_name)] if tp_s > 0 else []
        for item in carried:
            item["gb_per_step"] = None
        unit = "decode step"
    share_value = share if math.isfinite(share) else None
    if spec.is_training or carried:
        exposed = _exposed(shapes, shape)
        summary = (
            _summary(carried, share, exposed, unit) if spec.is_training else _serving_summary(carried, share)
        )
    else:
        exposed, summary = math.nan, "one GPU per replica: no collectives"
    if not spec.is_training:
        exposed = share  # a decode step's all-reduces run between its kernels: none hides
    exposed_value = exposed if math.isfinite(exposed) else None
    return row | {
        "carried": carried,
        "communication_share": _rounded(share_value),
        "exposed_communication_share": _rounded(exposed_value),
        "summary": summary,
    }


def _exposed(shapes: Shapes, shape: int) -> float:
    """The shape's exposed_communication_share (training; NaN where the engine gives none)."""
    exposed = shapes.communication.get("exposed_communication_share")
    return math.nan if exposed is None else float(exposed[shape])


def _serving_summary(carried: list[dict[str, Any]], share: float) -> str:
    over = carried[0]["over"]
    if carried[0]["collective"] == "pipeline send":
        return f"pipeline sends (one a stage boundary per decode step) over {over}: {share:.0%} of decode step time"
    if carried[0]["collective"] == "TP all-reduce and pipeline send":
        return (
            f"TP all-reduces within each stage (2 per layer) and pipeline sends (one a stage boundary) per decode "
            f"step over {over}: {share:.0%} of decode step time"
        )
    return f"TP all-reduces (2 per layer per decode step) over {over}: {share:.0%} of decode step time"


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 4)
