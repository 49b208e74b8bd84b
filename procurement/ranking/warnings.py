"""Row warnings: what a person should know about a ranked row that does not make it infeasible.

Host RAM under what the training stack holds (or, where no stack is known, the rule of thumb RAM >= GPU
memory), vCPUs per GPU, an unknown host, a price's quality
(illustrative), a spot outlier ranked at a robust price, an AWS Local Zone that needs opt-in, a storage
rate that is an assumed default, and a GPU whose speed comes from derived (not datasheet) figures.
Each is a sentence in ``warnings`` (a list of strings); docs/cost-model.md ("Row warnings") lists them.
"""

from __future__ import annotations

import math
from typing import Any

from pricing.price_quality import ILLUSTRATIVE, ILLUSTRATIVE_LABEL
from pricing.spot_sanity import outlier_warning
from procurement.ranking.interconnect_rows import gradient_collective
from procurement.ranking.options import RankingOptions
from procurement.ranking.shapes import Shapes

LOCAL_ZONE_WARNING = (
    "AWS Local Zone {zone}: not enabled by default; opt the account into its zone group "
    "(aws ec2 modify-availability-zone-group) before launching there"
)


def host_texts(offer: dict[str, Any], shapes: Shapes, shape: int) -> tuple[list[str], list[str]]:
    """(blocking reasons, warnings) about the host: the guides' rules of thumb only warn; RAM a plan
    offloads to is a limit. A figure the catalog does not know is said, not assumed."""
    blocking, warnings = [], []
    ram, ram_needed = float(offer["memory_gib"]), float(shapes.host_ram_gib[shape])
    vcpus, vcpus_needed = float(offer["vcpus"]), float(shapes.host_vcpus[shape])
    per_instance = int(offer["gpu_per_instance"])
    offloaded = float(shapes.offloaded_per_gpu_gib[shape]) * per_instance
    stack_needed = (
        float(shapes.host_ram_stack_gib[shape]) if shapes.host_ram_stack_gib is not None else math.nan
    )
    lower_bound = bool(offer.get("host_lower_bound"))
    if not math.isnan(ram) and ram < ram_needed and offloaded > 0:
        parts = f"{ram_needed - offloaded:.1f} GiB of GPU memory + {offloaded:.1f} GiB offloaded"
        if (
            lower_bound
        ):  # the smallest listed host: another region's may hold it (configurations.host_ram_blocking)
            warnings.append(
                f"host RAM may be too small: the smallest of the provider's listed hosts has {ram:g} GiB, the plan "
                f"needs {ram_needed:.1f} GiB ({parts}); check this region's host"
            )
        else:
            blocking.append(
                f"host RAM too small: {ram:g} GiB on the instance, needs {ram_needed:.1f} GiB ({parts})"
            )
    elif not math.isnan(stack_needed):
        # the stack is known (sizing.host.stack_host_ram, aud44r; serving_host_ram, aud48r): what it holds, the card
        # rule unsaid
        if not math.isnan(ram) and ram < stack_needed:
            parts = shapes.host_ram_stack_parts
            if per_instance > 1:
                parts = f"{per_instance} processes, each {parts}"
            if offloaded > 0:
                parts += f", + {offloaded:.1f} GiB offloaded"
            warnings.append(
                f"host RAM too small: {ram:g} GiB on the instance, needs {stack_needed:.1f} GiB ({parts})"
                "; what the stack holds on the host at its peak, not a limit"
            )
    elif not math.isnan(ram) and ram < ram_needed:
        parts = f"{ram_needed:.1f} GiB of GPU memory"
        warnings.append(
            f"host RAM too small: {ram:g} GiB on the instance, needs {ram_needed:.1f} GiB ({parts})"
            "; a rule of thumb (loading weights and data goes through RAM), not a limit, and not used to order "
            "the rows: what this workload's stack holds on the host is not known"
        )
    if not math.isnan(vcpus) and vcpus < vcpus_needed:
        warnings.append(
            f"too few vCPUs: {vcpus:g} on the instance, needs {vcpus_needed:g} "
            f"({vcpus_needed / per_instance:g} per GPU for {per_instance} GPU{'s' if per_instance > 1 else ''})"
            "; a rule of thumb (data loading may starve the GPUs), not a limit"
        )
    unknown = [name for name, value in (("RAM", ram), ("vCPUs", vcpus)) if math.isnan(value)]
    if unknown:
        text = f"host {' and '.join(unknown)} unknown for this offer: not checked"
        if math.isnan(ram) and offloaded > 0:  # a limit for this plan (audhd): what the host must hold
            text += f"; the plan offloads to the CPU and needs {ram_needed:.1f} GiB of host RAM"
        warnings.append(text)
    return blocking, warnings


def link_warnings(offer: dict[str, Any], shapes: Shapes, shape: int) -> list[str]:
    """Links as they are (issue 26): GPUs that talk over PCIe without peer-to-peer (GeForce RTX 40/50) stage
    every collective through host memory (costed at half the PCIe rate: ranking/interconnects.py), and
    production serving split over several consumer cards is flagged."""
    per_instance = int(offer["gpu_per_instance"])
    if per_instance < 2:
        return []
    link = shapes.links[int(shapes.link[shape])]
    found = []
    tensor_parallel = int(shapes.tensor_parallel[shape])
    pipeline = 1 if shapes.pipeline is None else int(shapes.pipeline[shape])
    split = tensor_parallel * pipeline
    if link.node_link == "pcie" and not link.peer_to_peer:
        what = (
            f"tensor parallel over {tensor_parallel} GPUs"
            if tensor_parallel > 1
            else f"the pipeline over {pipeline} GPUs"
            if pipeline > 1
            else "the " + gradient_collective(int(shapes.zero[shape]))
        )
        if shapes.unit_tokens_per_second is None or split > 1:
            found.append(
                f"{what} runs over PCIe without peer-to-peer ({offer['gpu']}: GeForce since the 40 series): "
                "every transfer is staged through host memory, costed at half the PCIe rate; tensor or "
                "pipeline parallelism scales poorly here"
            )
    serving_split = shapes.unit_tokens_per_second is not None and split > 1
    if serving_split and _consumer(offer["gpu"]):
        found.append(consumer_split_text(offer["gpu"], split, nvidia=_nvidia(offer["gpu"])))
    return found


def consumer_split_text(slug: str, gpus: int, *, nvidia: bool) -> str:
    """The consumer serving split's warning: no ECC for every consumer card; the GeForce driver licence's
    data-center clause only for NVIDIA's (it is NVIDIA's licence: an AMD Radeon card is not bound by it)."""
    licence = ", and NVIDIA's GeForce driver licence does not permit data-center deployment" if nvidia else ""
    return (
        f"production serving split over {gpus} consumer cards ({slug}): no ECC memory{licence}; prefer a "
        "data-center card that holds the model on fewer GPUs"
    )


def _nvidia(slug: str) -> bool:
    from procurement.sizing import gpu_by_slug

    try:
        return gpu_by_slug(slug).is_nvidia
    except KeyError:
        return False


def _consumer(slug: str) -> bool:
    from procurement.sizing import gpu_by_slug

    try:
        return gpu_by_slug(slug).is_consumer
    except KeyError:
        return False


def row_warnings(
    index: int,
    offer: dict[str, Any],
    shapes: Shapes,
    configs,
    options: RankingOptions,
    *,
    host: tuple[list[str], list[str]] | None = None,
) -> list[str]:
    """``host``: ``host_texts`` of the row when the caller has it already."""
    shape = int(configs.shape[index])
    warnings: list[str] = []
    if offer["price_quality"] == ILLUSTRATIVE:
        warnings.append(ILLUSTRATIVE_LABEL.replace("not ranked unless asked for", "ranked because asked for"))
    if not offer["gpu_only"]:
        warnings.extend((host or host_texts(offer, shapes, shape))[1])
    if offer["pricing_model"] == "spot" and offer["spot_outlier"]:
        text = outlier_warning(offer, float(options.fx_rate_from_usd), options.currency)
        if options.rank_outliers_at_quote:
            text = text.split("; ranked at")[0] + "; ranked at the quote, as asked"
        warnings.append(text)
    if offer["local_zone"]:
        warnings.append(LOCAL_ZONE_WARNING.format(zone=offer["zone"]))
    if offer["storage_rate_assumed"] and options.storage_gb:
        warnings.append(
            f"storage priced at an assumed {float(offer['storage_rate']):g} USD per GB-month: "
            f"the catalog has no published storage rate for {offer['provider']}"
        )
    warnings.extend(link_warnings(offer, shapes, shape))
    kind = int(shapes.kind[shape])
    estimated = shapes.estimated_speed[kind] if kind < len(shapes.estimated_speed) else ""
    if estimated:
        warnings.append(estimated)
    if offer["stale"]:
        warnings.append("stale price: older than its freshness limit")
    return warnings


def spot_sanity_details(
    spot: dict[str, Any], offer: dict[str, Any], options: RankingOptions
) -> dict[str, Any]:
    """The spot object with the sanity keys added: ``outlier`` (bool), the sibling median and the price
    ranked; a quote at or above on-demand is never "suitable" (it saves nothing)."""
    rate = float(options.fx_rate_from_usd)
    sibling = float(offer["sibling_median_usd"])
    on_demand = float(offer["on_demand_usd"])
    spot = spot | {
        "outlier": bool(offer["spot_outlier"]),
        "outlier_kind": str(offer["spot_outlier_kind"]) or None,
        "sibling_median_price_per_hour": round(sibling * rate, 6) if math.isfinite(sibling) else None,
        "on_demand_price_per_hour": round(on_demand * rate, 6) if math.isfinite(on_demand) else None,
        "local_zone": bool(offer["local_zone"]),
    }
    if offer["spot_no_saving"]:
        spot["verdict"] = "unsuitable"
        spot["why"] = [
            "the spot quote is at or above the on-demand price: it saves nothing",
            *[reason for reason in spot.get("why", []) if "saves" not in reason],
        ]
    return spot
