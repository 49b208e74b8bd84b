"""Result rows: the JSON contract of one ranked configuration, with its reasons in words."""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from procurement.costing.values import round_money, round_price
from procurement.ranking.breakdown import explain_costs
from procurement.ranking.configurations import Configurations
from procurement.ranking.interconnect_rows import interconnect_row
from procurement.ranking.offers import PreparedOffers
from procurement.ranking.options import (
    COMMITTED_MODELS,
    COMMUNICATION_WARNING_SHARE,
    GPU_ONLY_REASON,
    NO_FABRIC_REASON,
    PLAN_NAMES,
    RankingOptions,
)
from procurement.ranking.shapes import Shapes
from procurement.ranking.spot_details import spot_details

PLAN_LABELS = {
    "data_parallel": "data parallel",
    "zero3_fsdp": "ZeRO-3/FSDP",
    "tensor_parallel": "tensor parallel within the instance",
}


def describe(
    index: int,
    prepared: PreparedOffers,
    shapes: Shapes,
    configs: Configurations,
    spec,
    options,
    front,
    now,
    *,
    simulate_spot: bool = False,
    price_histories: Mapping[int, Any] | None = None,
) -> dict[str, Any]:
    """One result row as the JSON contract, with the reasons in words; spot rows add a ``spot`` object
    (with the seeded simulation's P50/P90 when ``simulate_spot``, on ``price_histories[offer_id]`` when
    there is one)."""
    offer, shape = prepared.row(int(configs.offer[index])), int(configs.shape[index])
    fits = bool(configs.fits[index])
    total = configs.total_cost[index]
    observed_at = offer["observed_at"] = prepared.observed_at(int(configs.offer[index]))
    plan = PLAN_NAMES[int(shapes.plan[shape])]
    money = _money(total, options) if fits and math.isfinite(total) else None
    row = {
        "provider": offer["provider"],
        "instance_type": offer["instance_type"],
        "region": offer["region"],
        "zone": offer["zone"],
        "gpu": offer["gpu"],
        "gpus": int(shapes.total_gpus[shape]),
        "gpus_per_instance": int(offer["gpu_per_instance"]),
        "instances": int(shapes.instances[shape]),
        "plan": {
            "name": plan,
            "zero_stage": int(shapes.zero[shape]),
            "tensor_parallel": int(shapes.tensor_parallel[shape]),
        },
        "pricing_model": offer["pricing_model"],
        "payment_option": offer["payment_option"],
        "price_per_hour": _price(configs.price_per_hour(index), options),
        "effective_price_per_hour": _price(configs.effective_price_per_hour(index), options),
        "hours": _rounded(configs.hours[index], 3),
        "total_cost": money,
        "currency": options.currency,
        "price_observed_at": observed_at.isoformat(),
        "price_age_days": max(0, (now - observed_at).days),
        "stale": bool(offer["stale"]),
        "price_stale_after_hours": _rounded(offer["stale_after_hours"], 1),
        "gpu_only_price": bool(offer["gpu_only"]),
        "observation_id": _optional_int(offer["observation_id"]),
        "basis": "measured" if shapes.measured[shape] else "estimated",
        "fits": fits,
        "pareto": fits and (shape, float(total)) in front,
        "memory_per_gpu_gib": _rounded(shapes.total_gib[shape], 2),
        "required_per_gpu_gib": _rounded(shapes.required_gib[shape], 2),
        "reasons": reasons_for(index, offer, shapes, configs, spec, options, plan, now - observed_at),
        "interconnect": interconnect_row(shapes, shape, spec, offer["instance_type"]),
    }
    row |= explain_costs(index, prepared, shapes, configs, spec, options, money)
    if offer["pricing_model"] == "spot":
        row["spot"] = spot_details(
            offer, price_per_hour_usd=configs.price_per_hour(index), hours=float(configs.hours[index]),
            instances=row["instances"], spec=spec, options=options, simulate=simulate_spot and fits,
            price_history_usd=(price_histories or {}).get(offer.get("offer_id")),
        )  # fmt: skip
    return row


def _optional_int(value) -> int | None:
    return None if value is None or (isinstance(value, float) and math.isnan(value)) else int(value)


def _money(value: float, options: RankingOptions) -> str:
    """A USD float as money in the requested currency: converted exactly in Decimal, rounded once."""
    return str(round_money(Decimal(repr(float(value))) * options.fx_rate_from_usd, options.currency))


def _price(value: float, options: RankingOptions) -> str:
    return str(round_price(Decimal(repr(value)) * options.fx_rate_from_usd))


def _rounded(value: float, digits: int) -> float | None:
    return round(float(value), digits) if math.isfinite(value) else None


def reasons_for(index, offer, shapes: Shapes, configs, spec, options, plan, age) -> list[str]:
    shape = int(configs.shape[index])
    reasons = [_memory_reason(shapes, shape, spec)]
    if shapes.incompatible[int(shapes.kind[shape])]:
        reasons.append("incompatible: " + shapes.incompatible[int(shapes.kind[shape])])
    if shapes.no_fabric[shape]:
        reasons.append(NO_FABRIC_REASON.format(instance_type=offer["instance_type"]))
    elif not math.isfinite(shapes.hours[shape]):
        reasons.append("speed not estimated for this GPU and plan")
    reasons.append(_hours_reason(shapes, shape, spec, plan, options))
    reasons.extend(_pricing_reasons(index, offer, configs, shapes, shape, spec, options))
    reasons.extend(_offer_reasons(offer, shapes, shape))
    link = shapes.links[int(shapes.link[shape])]
    if not link.stated and int(offer["gpu_per_instance"]) > 1:
        reasons.append(
            f"GPU link within {offer['instance_type']} not stated by the catalog: {link.node_name} assumed"
        )
    reasons.append(f"price observed {age.days} days ago ({offer['observed_at']:%Y-%m-%d})")
    reasons.append(stale_reason(offer, age))
    if options.currency != "USD":
        reasons.append(f"money converted from USD at {options.fx_rate_from_usd} {options.currency} per USD")
    return [reason for reason in reasons if reason]


def stale_reason(offer: Mapping[str, Any], age: dt.timedelta) -> str:
    """Why a price is stale (docs/provider-prices.md, "Stale prices"); "" when it is not."""
    if not offer["stale"]:
        return ""
    hours = age.total_seconds() / 3600.0
    old = f"{int(hours // 24)} days" if hours >= 48 else f"{hours:.0f} hours"
    if offer["scheduled"]:
        return f"stale: price is {old} old, older than twice its refresh schedule"
    limit_days = offer["stale_after_hours"] / 24.0
    return f"stale: price is {old} old, a snapshot past the {limit_days:g}-day limit (no refresh schedule)"


def _memory_reason(shapes: Shapes, shape: int, spec) -> str:
    required, capacity = shapes.required_gib[shape], shapes.capacity_gib[shape]
    if not math.isfinite(required):
        return "not a valid plan for this GPU count"
    verb = "fits" if required <= capacity else "does not fit"
    return (
        f"{verb}: needs {required:.1f} GiB per GPU with {spec.headroom:.0%} headroom "
        f"(peak {shapes.total_gib[shape]:.1f}) on a {capacity:.1f} GiB card"
    )


def _hours_reason(shapes: Shapes, shape: int, spec, plan: str, options) -> str:
    label = PLAN_LABELS[plan]
    if not spec.is_training:
        return f"{options.serving_hours:g} h of serving priced ({label})"
    if shapes.measured[shape]:
        return (
            f"measured: hours from a benchmark of this GPU at {int(shapes.total_gpus[shape])} GPUs ({label})"
        )
    share = shapes.communication_share[shape]
    text = f"estimated: {label}, communication {share:.0%} of step time" if math.isfinite(share) else ""
    if text and shapes.total_gpus[shape] > 1:
        link = shapes.links[int(shapes.link[shape])]
        over = link.node_name + (f" within the instance, {link.fabric_name} between instances"
                                 if shapes.instances[shape] > 1 else "")  # fmt: skip
        text += f" (over {over})"
    if math.isfinite(share) and share > COMMUNICATION_WARNING_SHARE:
        text += " (over 30%: adding GPUs stops scaling linearly)"
    return text


def _pricing_reasons(index, offer, configs, shapes, shape, spec, options) -> list[str]:
    model = offer["pricing_model"]
    if model in COMMITTED_MODELS:
        return [f"{model}: effective hourly rate, assumes the commitment is kept busy by other work"]
    if model != "spot":
        return []
    if configs.spot_refused[index]:
        if not spec.is_training:
            return ["spot unsuitable: online inference drops live requests when an instance is reclaimed"]
        if not options.can_checkpoint:
            return ["spot unsuitable: the job cannot checkpoint"]
        return ["spot unsuitable: reclaiming one instance stalls the others; keep the job on one instance"]
    overhead = configs.effective_price_per_hour(index) / configs.price_per_hour(index) - 1.0
    band = int(offer["band"])
    source = "advisor band" if offer["band_known"] else "assumed band (no advisor data)"
    return [f"spot: +{overhead:.2%} checkpoint/interruption overhead at {source} {band}"]


def _offer_reasons(offer, shapes: Shapes, shape: int) -> list[str]:
    """What the offer itself allows: a whole instance, and a host with the RAM and vCPUs the shape needs
    (procurement/sizing/host.py's rules). A figure the catalog does not know is said, not assumed."""
    if offer["gpu_only"]:
        return [GPU_ONLY_REASON]
    reasons = []
    ram, ram_needed = float(offer["memory_gib"]), float(shapes.host_ram_gib[shape])
    vcpus, vcpus_needed = float(offer["vcpus"]), float(shapes.host_vcpus[shape])
    per_instance = int(offer["gpu_per_instance"])
    if not math.isnan(ram) and ram < ram_needed:
        offloaded = float(shapes.offloaded_per_gpu_gib[shape]) * per_instance
        parts = f"{ram_needed - offloaded:.1f} GiB of GPU memory" + (
            f" + {offloaded:.1f} GiB offloaded" if offloaded else ""
        )
        reasons.append(
            f"host RAM too small: {ram:g} GiB on the instance, needs {ram_needed:.1f} GiB ({parts})"
        )
    if not math.isnan(vcpus) and vcpus < vcpus_needed:
        reasons.append(
            f"too few vCPUs: {vcpus:g} on the instance, needs {vcpus_needed:g} "
            f"({vcpus_needed / per_instance:g} per GPU for {per_instance} GPU{'s' if per_instance > 1 else ''})"
        )
    unknown = [name for name, value in (("RAM", ram), ("vCPUs", vcpus)) if math.isnan(value)]
    if unknown:
        reasons.append(f"host {' and '.join(unknown)} unknown for this offer: not checked")
    return reasons
