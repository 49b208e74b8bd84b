"""The ``spot`` object of a ranked spot row: where its interruption rate comes from, the checkpoint
interval and overhead, the verdict in words, and (for the first few feasible spot rows) the seeded
Monte Carlo's P50/P90 completion time and cost.

The closed-form figures come from ``procurement.costing.spot`` in Decimal, the simulation from
``procurement.costing.spot_simulation``; formulas in docs/cost-model.md ("Spot", "Ranking").
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from functools import lru_cache
from typing import Any

from procurement.costing.spot import (
    BAND_LABELS,
    SpotEconomics,
    SpotJobTraits,
    band_interruption_rate_per_hour,
    spot_economics,
    spot_verdict,
)
from procurement.costing.spot_simulation import SpotSimulationInput, simulate_spot_job
from procurement.costing.values import round_money, round_price
from procurement.ranking.options import RankingOptions

RATE_QUANTUM = Decimal("1E-9")
RATIO_QUANTUM = Decimal("0.000001")


def _exact(value: float) -> Decimal:
    return Decimal(repr(float(value)))


def interruption_source(band: int, known: bool, observed_at: object) -> str:
    label = BAND_LABELS[band]
    if not known:
        return f"assumed: band {label} a month (no Spot Advisor data for this offer)"
    date = _date_text(observed_at)
    return f"Spot Advisor band {label} of instances interrupted a month" + (
        f", snapshot {date}" if date else ""
    )


def _date_text(value: object) -> str | None:
    if value is None or value != value:  # None or NaN
        return None
    if isinstance(value, dt.datetime | dt.date):
        return value.isoformat()[:10]
    return str(value)[:10]


def spot_details(
    offer: dict[str, Any],
    *,
    price_per_hour_usd: float,
    hours: float,
    instances: int,
    spec,
    options: RankingOptions,
    simulate: bool,
) -> dict[str, Any]:
    """The spot object of one row (prices per instance-hour in USD inside, ``options.currency`` out)."""
    band, known = int(offer["band"]), bool(offer["band_known"])
    observed_at = _date_text(offer.get("interruption_observed_at")) if known else None
    details, economics = _closed_form(
        band, known, observed_at, float(price_per_hour_usd), options.checkpoint_write_hours,
        options.restart_hours, not spec.is_training, options.can_checkpoint, instances,
    )  # fmt: skip
    details = details | {"why": list(details["why"]), "simulation": None}
    if simulate and details["verdict"] == "suitable":
        details["simulation"] = dict(
            _simulation(economics, float(hours), instances, options.checkpoint_write_hours, options.restart_hours,
                        options.spot_simulation_trials, options.spot_simulation_seed, options.fx_rate_from_usd,
                        options.currency)
        )  # fmt: skip
    return details


@lru_cache(maxsize=4096)
def _closed_form(
    band: int, known: bool, observed_at: str | None, price_usd: float, write_hours: float,
    restart_hours: float, online_inference: bool, can_checkpoint: bool, instances: int,
) -> tuple[dict[str, Any], SpotEconomics]:  # fmt: skip
    """Everything but the simulation; the same cheap offers top most rankings, so it is memoized (the
    returned dict is copied by the caller before it is changed)."""
    rate = band_interruption_rate_per_hour(band)
    write, restart = _exact(write_hours), _exact(restart_hours)
    economics = spot_economics(
        spot_price_per_hour=_exact(price_usd), rate_per_hour=rate, checkpoint_write_hours=write,
        restart_hours=restart,
    )  # fmt: skip
    traits = SpotJobTraits(
        online_inference=online_inference, can_checkpoint=can_checkpoint, instances=instances
    )
    verdict = spot_verdict(traits, economics)
    details = {
        "interruption_band": BAND_LABELS[band],
        "interruption_source": "advisor" if known else "assumed",
        "advisor_observed_at": observed_at,
        "interruption_source_text": interruption_source(band, known, observed_at),
        "interruption_rate_per_hour": str(rate.quantize(RATE_QUANTUM)),
        "mean_hours_between_interruptions": str((1 / rate).quantize(Decimal("0.1"))) if rate else None,
        "checkpoint_write_minutes": float(write * 60),
        "restart_hours": float(restart),
        "optimal_interval_hours": _optional_float(economics.optimal_interval_hours, 3),
        "checkpoint_interval_minutes": float((economics.interval_hours * 60).quantize(Decimal("0.1"))),
        "overhead": str(economics.overhead.quantize(RATIO_QUANTUM)),
        "verdict": "suitable" if verdict.suitable else "unsuitable",
        "why": tuple(verdict.reasons),
    }
    return details, economics


def _optional_float(value: Decimal | None, digits: int) -> float | None:
    return None if value is None else round(float(value), digits)


@lru_cache(maxsize=4096)
def _simulation(
    economics: SpotEconomics, hours: float, instances: int, write_hours: float, restart_hours: float,
    trials: int, seed: int, rate: Decimal, currency: str,
) -> dict[str, Any]:  # fmt: skip
    """P50/P90 of the spot compute: the job's hours with checkpoint writes, lost work and restarts, at
    the current spot price (ranking has no price history); setup, reruns and storage are not in it."""
    result = simulate_spot_job(
        SpotSimulationInput(
            work_hours=_exact(hours),
            rate_per_hour=economics.rate_per_hour,
            interval_hours=economics.interval_hours,
            checkpoint_write_hours=_exact(write_hours),
            restart_hours=_exact(restart_hours),
            spot_price_per_hour=economics.spot_price_per_hour,
            instances=instances,
            trials=trials,
            seed=seed,
        )
    )
    return {
        "p50_hours": round(float(result.p50_hours), 3),
        "p90_hours": round(float(result.p90_hours), 3),
        "p50_cost": str(round_money(result.p50_cost * rate, currency)),
        "p90_cost": str(round_money(result.p90_cost * rate, currency)),
        "mean_interruptions": round(float(result.mean_interruptions), 4),
        "trials": result.trials,
        "seed": result.seed,
        "priced_at": f"current spot price {round_price(economics.spot_price_per_hour * rate)} {currency}/h",
        "covers": "compute on spot (checkpoint writes, lost work and restarts included); not setup, "
        "reruns or storage",
    }
