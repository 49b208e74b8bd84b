"""A returned row's job cost split into compute, setup, storage and reruns, and its unit costs.

Ranking prices every configuration as one total (configurations.py); only the top N rows that are
returned need the parts, so they are recomputed here with the same formulas for those rows alone
(docs/cost-model.md, "Job cost"): compute = P x H x N, setup = P x S x N, reruns = F x compute,
storage = G x R x M, with P the (spot-effective) price per instance-hour in the row's currency.

One rule for H, the compute and the reruns: H is the row's ``hours``, the compute hours bought (the GPU
step's, or the host loader's where that is slower); the reruns are F of that compute, the compute bought
(a spot row's expected reclaim overhead is in P, a spot-with-fallback row's compute is its plan's expected
cost). The wall-clock P50/P90 (``wall_clock``) decide deadlines and price nothing.

Each part is priced in Decimal on the figures the row shows (``cost_basis``: P to 6 decimals in the row's
currency, H, S, G and M to 6 decimals, F) and rounded half-up once; ``total_cost`` is the sum of the rounded
parts, so a reader rebuilds every part and the total to the cent from the row alone (aud48r, stop 48: with
hours shown to 3 decimals and a rounding remainder moved into compute, phi-2's row 1 showed $60,248.04 for
23.60 x 212.74 h x 12 = $60,247.97, and a $1.21 spot job's compute $0.02 for 0.095210 x 0.36 h = $0.034). The
ranking orders on the float total (configurations.py); the shown total differs from it by rounding only.
"""

from __future__ import annotations

import math
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from procurement.costing.values import round_money, round_price, round_quantity
from procurement.ranking.configurations import Configurations
from procurement.ranking.offers import PreparedOffers
from procurement.ranking.options import HOURS_PER_MONTH, RankingOptions
from procurement.ranking.shapes import Shapes
from procurement.sizing import WorkloadSpec

MILLION = 1_000_000.0


def priced_parts(
    index: int,
    prepared: PreparedOffers,
    shapes: Shapes,
    configs: Configurations,
    options: RankingOptions,
    compute_usd: float | None = None,
) -> tuple[dict[str, Decimal], dict[str, dict[str, Any]]]:
    """compute, setup, storage, reruns of one configuration in ``options.currency``, each rounded once from
    the figures the row shows (``cost_basis``), and those figures; ``compute_usd`` replaces the compute of a
    spot row ranked as its spot-with-fallback plan (the plan's expected cost)."""
    offer, shape = int(configs.offer[index]), int(configs.shape[index])
    rate, currency = options.fx_rate_from_usd, options.currency
    # the row's effective_price_per_hour and hours, as shown: P (in the row's currency, 6 decimals) and H
    # (configs.hours: the shape's, or the host loader's where it is slower), the hours the total bought
    price = round_price(Decimal(repr(configs.effective_price_per_hour(index))) * rate)
    hours, instances = round_quantity(configs.hours[index]), int(shapes.instances[shape])
    setup_hours = round_quantity(options.setup_hours)
    # storage is held for the shape's hours (configurations.py prices it so) plus setup, then the tail
    held = float(shapes.hours[shape]) + options.setup_hours
    months = round_quantity(held / HOURS_PER_MONTH + options.storage_tail_months)
    gb = round_quantity(options.storage_gb)
    storage_rate = round_price(Decimal(repr(float(prepared.columns["storage_rate"][offer]))) * rate)
    fraction = round_quantity(options.rerun_fraction)
    if compute_usd is None:
        compute = round_money(price * hours * instances, currency)
        compute_basis: dict[str, Any] = {
            "price_per_hour": str(price),
            "hours": str(hours),
            "instances": instances,
            "text": f"{price} x {hours} h x {instances}",
        }
        if bool(prepared.columns["is_spot"][offer]):
            compute_basis["text"] += _spot_price_text(price, configs.price_per_hour(index), rate)
    else:
        compute = round_money(Decimal(repr(float(compute_usd))) * rate, currency)
        compute_basis = {"text": "the expected cost of the spot-with-fallback plan (spot.fallback)"}
    parts = {
        "compute": compute,
        "setup": round_money(price * setup_hours * instances, currency),
        "storage": round_money(gb * storage_rate * months, currency),
        "reruns": round_money(fraction * compute, currency),
    }
    basis = {
        "compute": compute_basis,
        "setup": {
            "price_per_hour": str(price),
            "hours": str(setup_hours),
            "instances": instances,
            "text": f"{price} x {setup_hours} h of setup (install and data preparation, billed) x {instances}",
        },
        "storage": {
            "gb": str(gb),
            "rate_per_gb_month": str(storage_rate),
            "months": str(months),
            "text": f"{gb} GB x {storage_rate} a GB-month x {months} months (the run and setup, "
            f"{held:.6f} h at 730 h a month, + {options.storage_tail_months:.6f} months kept after it)",
        },
        "reruns": {
            "fraction": str(fraction),
            "text": f"{fraction} x compute {compute} (failed runs and tuning experiments)",
        },
    }
    return parts, basis


def _spot_price_text(effective: Decimal, ranked_usd: float, rate: Decimal) -> str:
    """Where a spot row's effective price comes from: the spot price it ranks at times one plus the expected
    reclaim overhead (checkpoint writes, lost work and restarts: configurations.spot_overhead_by_band)."""
    ranked = round_price(Decimal(repr(float(ranked_usd))) * rate)
    if not ranked:
        return ""
    # the overhead as the 6-decimal ratio (aud48r2: 2 decimals of a percent rebuilt P only to ~1e-5 relative):
    # 4 decimals of a percent, and the multiplier itself, so the words alone rebuild the effective price
    overhead = (effective / ranked - 1).quantize(Decimal("0.000001"), ROUND_HALF_UP)
    return (
        f" (the effective price: the spot price {ranked} x (1 + {overhead * 100:.4f}% expected reclaim overhead, "
        f"checkpoint writes, lost work and restarts) = {ranked} x {1 + overhead})"
    )


def cost_breakdown(parts: dict[str, Decimal]) -> dict[str, str]:
    """The parts as decimal strings, and their sum, the row's ``total_cost`` (the costing module's rule,
    costing.job.JobCostBreakdown.as_report: the total is the sum of the rounded parts)."""
    total = parts["compute"] + parts["setup"] + parts["storage"] + parts["reruns"]
    return {name: str(amount) for name, amount in parts.items()} | {"total": str(total)}


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
    """``total_cost`` (the sum of the parts), ``cost_breakdown``, ``cost_basis`` (what each part is priced on)
    and ``unit_costs`` for a feasible row; nothing for a row without a total (``total_cost``: any stand-in
    that says the row has one)."""
    if total_cost is None:
        return {}
    parts, basis = priced_parts(index, prepared, shapes, configs, options, compute_usd)
    breakdown = cost_breakdown(parts)
    total_cost = breakdown["total"]
    units = unit_costs(index, shapes, configs, spec, total_cost, options)
    if "per_thousand_images" in units:
        # A short generation job's total can be mostly the storage kept after it (an outside practitioner
        # found storage 73% of a 1,000-SDXL-image row): the compute-only figure sits beside the total's.
        share = Decimal(breakdown["compute"]) / Decimal(total_cost) if Decimal(total_cost) else Decimal(0)
        units["per_thousand_images_compute"] = str(round_price(Decimal(units["per_thousand_images"]) * share))
    return {"total_cost": total_cost, "cost_breakdown": breakdown, "cost_basis": basis, "unit_costs": units}
