"""A returned row's job cost split into compute, setup, storage and reruns, and its unit costs.

Ranking prices every configuration as one total (configurations.py); only the top N rows that are
returned need the parts, so they are recomputed here with the same formulas for those rows alone
(docs/cost-model.md, "Job cost"): compute = P x H x N, setup = P x S x N, reruns = F x compute,
storage = G x R x M, with P the (spot-effective) price per instance-hour in USD.

One rule for H, the compute and the reruns: H is the row's ``hours``, the compute hours bought (the GPU
step's, or the host loader's where that is slower); the reruns are F of that compute, the compute bought
(a spot row's expected reclaim overhead is in P, a spot-with-fallback row's compute is its plan's expected
cost). The wall-clock P50/P90 (``wall_clock``) decide deadlines and price nothing.

Each part is converted to the row's currency in Decimal and rounded half-up once; the rounding
remainder (at most a cent or two) goes to compute, so the parts add up exactly to ``total_cost``.
"""

from __future__ import annotations

import math
from decimal import Decimal
from typing import Any

from procurement.costing.values import round_money, round_price
from procurement.ranking.configurations import Configurations
from procurement.ranking.offers import PreparedOffers
from procurement.ranking.options import HOURS_PER_MONTH, RankingOptions
from procurement.ranking.shapes import Shapes
from procurement.sizing import WorkloadSpec

MILLION = 1_000_000.0


def cost_parts_usd(
    index: int,
    prepared: PreparedOffers,
    shapes: Shapes,
    configs: Configurations,
    options: RankingOptions,
    compute_usd: float | None = None,
) -> dict[str, float]:
    """compute, setup, storage, reruns of one configuration in USD (floats, unrounded); ``compute_usd``
    replaces the compute of a spot row ranked as its spot-with-fallback plan (the plan's expected cost)."""
    offer, shape = int(configs.offer[index]), int(configs.shape[index])
    price = configs.effective_price_per_hour(index)
    # the row's hours (configs.hours: the shape's, or the host loader's where it is slower), the hours the
    # total bought; storage is held for the shape's hours, as configurations.py prices it
    hours, instances = float(configs.hours[index]), int(shapes.instances[shape])
    held = float(shapes.hours[shape])
    months = (held + options.setup_hours) / HOURS_PER_MONTH + options.storage_tail_months
    compute = price * hours * instances if compute_usd is None else compute_usd
    return {
        "compute": compute,
        "setup": price * options.setup_hours * instances,
        "storage": options.storage_gb * float(prepared.columns["storage_rate"][offer]) * months,
        "reruns": compute * options.rerun_fraction,
    }


def cost_breakdown(parts_usd: dict[str, float], total_cost: str, options: RankingOptions) -> dict[str, str]:
    """The parts as decimal strings in ``options.currency`` that sum exactly to ``total_cost``."""
    rate, currency = options.fx_rate_from_usd, options.currency  # read once for the four parts
    # the four parts unrolled (a row's breakdown is built 20 times a ranking): the same Decimal steps as
    # one comprehension over the names, in the names' order
    compute = round_money(Decimal(repr(float(parts_usd["compute"]))) * rate, currency)
    setup = round_money(Decimal(repr(float(parts_usd["setup"]))) * rate, currency)
    storage = round_money(Decimal(repr(float(parts_usd["storage"]))) * rate, currency)
    reruns = round_money(Decimal(repr(float(parts_usd["reruns"]))) * rate, currency)
    compute += Decimal(total_cost) - (
        Decimal(0) + compute + setup + storage + reruns
    )  # the rounding remainder
    return {
        "compute": str(compute),
        "setup": str(setup),
        "storage": str(storage),
        "reruns": str(reruns),
        "total": total_cost,
    }


def unit_costs(
    index: int, shapes: Shapes, configs: Configurations, spec: WorkloadSpec, total_cost: str, options
) -> dict[str, str]:
    """Cost per GPU-hour of the run, per 1M training tokens (training) or per 1M generated tokens
    (serving, at the configuration's decode throughput for the priced hours). The spec has no epoch
    count, so ``per_epoch`` is left out rather than guessed."""
    shape = int(configs.shape[index])
    total, hours = Decimal(total_cost), float(configs.hours[index])
    units: dict[str, float] = {"per_gpu_hour": float(shapes.total_gpus[shape]) * hours}
    if spec.model.image_arch is not None:  # images are the unit (a 'token' of the image path is one image)
        units |= _image_units(spec, float(shapes.generated_tokens_per_second[shape]) * hours * 3600.0)
    elif spec.is_training and spec.training_tokens:
        units["per_million_training_tokens"] = float(spec.training_tokens) / MILLION
    elif not spec.is_training:
        generated = float(shapes.generated_tokens_per_second[shape]) * hours * 3600.0
        units["per_million_generated_tokens"] = generated / MILLION
    return {
        name: str(round_price(total / Decimal(repr(amount))))
        for name, amount in units.items()
        if math.isfinite(amount) and amount > 0
    }


def _image_units(spec: WorkloadSpec, generated_images: float) -> dict[str, float]:
    """Cost per 1,000 images generated (serving, at the configuration's images/s over the priced hours) or
    trained (per 1,000 instance images), per epoch when the spec counts epochs, and per training run."""
    if not spec.is_training:
        return {"per_thousand_images": generated_images / 1000.0}
    units = {"per_training_run": 1.0}
    if spec.training_tokens:
        units["per_thousand_training_images"] = float(spec.training_tokens) / 1000.0
    if spec.image.epochs:
        units["per_epoch"] = float(spec.image.epochs)
    return units


def explain_costs(
    index: int,
    prepared,
    shapes,
    configs,
    spec,
    options,
    total_cost: str | None,
    compute_usd: float | None = None,
) -> dict[str, Any]:
    """``cost_breakdown`` and ``unit_costs`` for a feasible row; nothing for a row without a total."""
    if total_cost is None:
        return {}
    parts = cost_parts_usd(index, prepared, shapes, configs, options, compute_usd)
    breakdown = cost_breakdown(parts, total_cost, options)
    units = unit_costs(index, shapes, configs, spec, total_cost, options)
    if "per_thousand_images" in units:
        # A short generation job's total can be mostly the storage kept after it (an outside practitioner
        # found storage 73% of a 1,000-SDXL-image row): the compute-only figure sits beside the total's.
        share = Decimal(breakdown["compute"]) / Decimal(total_cost) if Decimal(total_cost) else Decimal(0)
        units["per_thousand_images_compute"] = str(round_price(Decimal(units["per_thousand_images"]) * share))
    return {"cost_breakdown": breakdown, "unit_costs": units}
