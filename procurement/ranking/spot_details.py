"""The ``spot`` object of a ranked spot row: where its interruption rate comes from, the checkpoint
interval and overhead, the verdict in words, and (for the first few feasible spot rows) the seeded
Monte Carlo's P50/P90 completion time and cost.

The simulated rows' spot price histories are read once per ranking (``price_histories``) through the
``options.spot_price_history`` reader the Django side provides; with at least a day of hourly history a
row's simulation prices each trial on a block-bootstrapped path of it, and ``price_paths`` says so.

The closed-form figures come from ``procurement.costing.spot`` in Decimal, the simulation from
``procurement.costing.spot_simulation``, the checkpoint write and restart times from ``spot_inputs`` and,
for a training job with a deadline, the spot-with-on-demand-fallback plan from
``procurement.costing.spot_fallback``; formulas in docs/cost-model.md ("Spot", "Spot timing",
"Deadline-aware spot plan", "Ranking").
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Mapping, Sequence
from decimal import Decimal
from functools import lru_cache
from typing import Any, TypeGuard

import numpy as np

from procurement.costing.spot import (
    BAND_LABELS,
    SpotEconomics,
    SpotJobTraits,
    band_interruption_rate_per_hour,
    interval_rule,
    reclaim_exposure_text,
    spot_economics,
    spot_verdict,
)
from procurement.costing.spot_fallback import FallbackInput, deadline_plan
from procurement.costing.spot_simulation import (
    BLOCK_HOURS,
    MIN_HISTORY_HOURS,
    SpotSimulationInput,
    simulate_spot_job,
)
from procurement.costing.values import round_money, round_price
from procurement.ranking.options import ADVISOR_STALE_DAYS, RankingOptions
from procurement.ranking.spot_inputs import job_spot_timing

RATE_QUANTUM = Decimal("1E-9")
# Memo size of the per-row figures below (closed form, simulations). A recompute's spot rows are keyed by
# offer price x band x the job's checkpoint timing x instances: 2,000 bench workloads asked for ~5,200
# distinct closed forms and ~3,100 simulations, so 4,096 entries evicted what the next workload wanted
# (25% misses at 1,000 workloads). Each entry is a small dict (~1-2 KB): at most ~30 MB per memo.
ROW_MEMO_SIZE = 16384
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


def price_histories(
    offer_ids: Sequence[int | float | None], options: RankingOptions
) -> Mapping[int, np.ndarray]:
    """Hourly USD spot price histories of the simulated rows' offers, in one call of the reader (none
    without a reader, or for rows whose offer table has no ``offer_id``)."""
    wanted = sorted({int(offer_id) for offer_id in offer_ids if known_offer_id(offer_id)})
    if options.spot_price_history is None or not wanted:
        return {}
    return {
        int(key): np.asarray(value, dtype=float) for key, value in options.spot_price_history(wanted).items()
    }


def known_offer_id(value: int | float | None) -> TypeGuard[int | float]:
    """An offer id the table holds: not None, not NaN (pandas reads a column with gaps as floats)."""
    return value is not None and value == value


def price_paths_text(history_hours: int) -> str:
    if history_hours >= MIN_HISTORY_HOURS:
        return f"resampled from {history_hours} hours of history"
    if history_hours:
        return f"current price only ({history_hours} hours of history, under {MIN_HISTORY_HOURS})"
    return "current price only (no history)"


def spot_details(
    offer: dict[str, Any],
    *,
    price_per_hour_usd: float,
    hours: float,
    instances: int,
    spec,
    options: RankingOptions,
    simulate: bool,
    price_history_usd: np.ndarray | None = None,
    now: dt.datetime | None = None,
    on_demand_price_usd: float | None = None,
) -> dict[str, Any]:
    """The spot object of one row (prices per instance-hour in USD inside, ``options.currency`` out).
    ``price_paths`` says what the simulation priced its hours on (None when it did not run);
    ``deadline_plan`` is the spot-with-on-demand-fallback plan of a training job with a deadline
    (``on_demand_price_usd``: the same instance type's on-demand price in the same region)."""
    band, known = int(offer["band"]), bool(offer["band_known"])
    observed_at = _date_text(offer.get("interruption_observed_at")) if known else None
    timing = job_spot_timing(spec, options)
    write, restart = timing.checkpoint_write_hours, timing.restart_hours
    details, economics = _closed_form(
        band,
        known,
        observed_at,
        float(price_per_hour_usd),
        write,
        restart,
        not spec.is_training,
        options.can_checkpoint,
        instances,
    )
    stale = advisor_stale(observed_at, now)
    details = details | {
        "why": list(details["why"]),
        "simulation": None,
        "price_paths": None,
        "timing": timing.as_dict(),
        "advisor_stale": stale,
        "warnings": _warnings(known, observed_at, stale),
        "deadline_plan": None,
        "interval_rule": f"{details['interval_rule']}; {timing.mode_text()}",  # sync or async save
    }
    if not (simulate and details["verdict"] == "suitable"):
        return details
    history = np.asarray(price_history_usd if price_history_usd is not None else (), dtype=float)
    details["simulation"] = dict(
        _simulated(economics, float(hours), instances, write, restart, options, history.tobytes())
    )
    if not known:  # no advisor data: the band is a guess, so the bad case is read at the worst band
        simulation, worst = (
            details["simulation"],
            _widened_p90(economics, float(hours), instances, write, restart, options, history.tobytes()),
        )
        simulation["p90_hours"] = max(simulation["p90_hours"], worst["p90_hours"])
        simulation["p90_cost"] = str(max(Decimal(simulation["p90_cost"]), Decimal(worst["p90_cost"])))
        simulation["p90_basis"] = worst["p90_basis"]
    details["price_paths"] = price_paths_text(details["simulation"]["history_hours"] or history.size)
    if spec.is_training and options.deadline_hours is not None:
        details["deadline_plan"] = deadline_plan_details(
            economics,
            float(hours),
            instances,
            write,
            restart,
            options,
            on_demand_price_usd,
            deadline_hours=options.deadline_hours,
        )
    return details


def advisor_stale(observed_at: str | None, now: dt.datetime | None) -> bool:
    """An advisor band observed more than ADVISOR_STALE_DAYS before ``now`` is flagged."""
    if observed_at is None or now is None:
        return False
    return _stale_on(observed_at, now.date())


@lru_cache(maxsize=1024)
def _stale_on(observed_at: str, today: dt.date) -> bool:
    """Per (snapshot date, day): every spot row of a recompute asks with one of a few snapshot dates."""
    try:
        observed = dt.date.fromisoformat(observed_at[:10])
    except ValueError:
        return False
    return (today - observed).days > ADVISOR_STALE_DAYS


def _warnings(known: bool, observed_at: str | None, stale: bool) -> list[str]:
    if not known:
        return ["assumed band: no Spot Advisor data for this offer; a simulated P90 is read at the >20% band"]
    if stale:
        return [
            f"Spot Advisor band observed {observed_at}, over a year ago: interruption rates may have changed"
        ]
    return []


def _widened_p90(economics, hours, instances, write, restart, options, history_bytes) -> dict[str, Any]:
    """P90 hours and cost simulated at the worst band (>20%) for a row whose band is assumed."""
    worst = len(BAND_LABELS) - 1
    at_worst = _simulated(
        _at_band(economics, worst, write, restart), hours, instances, write, restart, options, history_bytes
    )
    return {
        "p90_hours": at_worst["p90_hours"],
        "p90_cost": at_worst["p90_cost"],
        "p90_basis": f"assumed band: P90 simulated at the {BAND_LABELS[worst]} band (the worst case)",
    }


@lru_cache(maxsize=ROW_MEMO_SIZE)
def _at_band(economics: SpotEconomics, band: int, write: float, restart: float) -> SpotEconomics:
    """The row's economics (its price and checkpoint interval) at another band's interruption rate."""
    return spot_economics(
        spot_price_per_hour=economics.spot_price_per_hour,
        rate_per_hour=band_interruption_rate_per_hour(band),
        checkpoint_write_hours=_exact(write),
        restart_hours=_exact(restart),
        checkpoint_interval_hours=economics.interval_hours,
        instances=economics.instances,
    )


def deadline_plan_details(
    economics: SpotEconomics,
    hours: float,
    instances: int,
    write: float,
    restart: float,
    options: RankingOptions,
    on_demand_price_usd: float | None,
    *,
    deadline_hours: float,
) -> dict[str, Any]:
    """ "spot with on-demand fallback: expected cost, P(meets deadline)" (costing/spot_fallback.py)."""
    deadline = float(deadline_hours)
    if on_demand_price_usd is None or not math.isfinite(on_demand_price_usd):
        return {
            "available": False,
            "why": "no on-demand price for this instance type in this region to fall back on",
        }
    plan = deadline_plan(
        FallbackInput(
            work_hours=hours,
            deadline_hours=deadline,
            rate_per_hour=float(economics.rate_per_hour),
            interval_hours=float(economics.interval_hours),
            checkpoint_write_hours=write,
            restart_hours=restart,
            spot_price_per_hour=float(economics.spot_price_per_hour),
            on_demand_price_per_hour=float(on_demand_price_usd),
            instances=instances,
            probability=options.deadline_probability,
            trials=options.spot_simulation_trials,
            seed=options.spot_simulation_seed,
        )
    )
    rate, currency = options.fx_rate_from_usd, options.currency
    expected = round_money(_exact(plan.expected_cost) * rate, currency)
    probability = round(plan.p_meets_deadline, 4)
    return {
        "available": True,
        "deadline_hours": deadline,
        "target_probability": options.deadline_probability,
        "meets_target": plan.meets_target,
        "expected_cost": str(expected),
        "p90_cost": str(round_money(_exact(plan.p90_cost) * rate, currency)),
        "worst_case_cost": str(round_money(_exact(plan.worst_cost) * rate, currency)),
        "p_meets_deadline": probability,
        "reserve_segments": plan.reserve_fraction,
        "expected_spot_hours": round(plan.expected_spot_hours, 3),
        "expected_on_demand_hours": round(plan.expected_on_demand_hours, 3),
        "switched_share": round(plan.switched_share, 4),
        "on_demand_only_cost": str(round_money(_exact(plan.on_demand_only_cost) * rate, currency)),
        "on_demand_price_per_hour": str(round_price(_exact(on_demand_price_usd) * rate)),
        "text": f"spot with on-demand fallback: expected cost {expected} {currency}, worst case "
        f"{round_money(_exact(plan.worst_cost) * rate, currency)} {currency}, P(meets deadline) {probability:.1%}",
    }


@lru_cache(maxsize=ROW_MEMO_SIZE)
def _closed_form(
    band: int,
    known: bool,
    observed_at: str | None,
    price_usd: float,
    write_hours: float,
    restart_hours: float,
    online_inference: bool,
    can_checkpoint: bool,
    instances: int,
) -> tuple[dict[str, Any], SpotEconomics]:
    """Everything but the simulation; the same cheap offers top most rankings, so it is memoized (the
    returned dict is copied by the caller before it is changed)."""
    per_instance = band_interruption_rate_per_hour(band)
    write, restart = _exact(write_hours), _exact(restart_hours)
    economics = spot_economics(
        spot_price_per_hour=_exact(price_usd),
        rate_per_hour=per_instance,
        checkpoint_write_hours=write,
        restart_hours=restart,
        instances=instances,
    )
    rate = economics.rate_per_hour  # the job's: instances x the per-instance rate
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
        "interruption_rate_per_instance_hour": str(per_instance.quantize(RATE_QUANTUM)),
        "instances": instances,
        "reclaim_exposure": reclaim_exposure_text(per_instance, instances) or None,
        "mean_hours_between_interruptions": str((1 / rate).quantize(Decimal("0.1"))) if rate else None,
        "checkpoint_write_minutes": round(float(write * 60), 3),
        "restart_hours": round(float(restart), 4),
        "optimal_interval_hours": _optional_float(economics.optimal_interval_hours, 3),
        "checkpoint_interval_minutes": float((economics.interval_hours * 60).quantize(Decimal("0.1"))),
        "interval_rule": interval_rule(economics.optimal_interval_hours, economics.interval_hours),
        "overhead": str(economics.overhead.quantize(RATIO_QUANTUM)),
        "verdict": "suitable" if verdict.suitable else "unsuitable",
        "why": tuple(verdict.reasons),
    }
    return details, economics


def _optional_float(value: Decimal | None, digits: int) -> float | None:
    return None if value is None else round(float(value), digits)


def _simulated(economics, hours, instances, write, restart, options, history_bytes) -> dict[str, Any]:
    """_simulation at the options' trials, seed and currency (passed as plain values: it is memoized)."""
    return _simulation(
        economics,
        hours,
        instances,
        write,
        restart,
        options.spot_simulation_trials,
        options.spot_simulation_seed,
        options.fx_rate_from_usd,
        options.currency,
        history_bytes,
    )


@lru_cache(maxsize=ROW_MEMO_SIZE)
def _simulation(
    economics: SpotEconomics,
    hours: float,
    instances: int,
    write_hours: float,
    restart_hours: float,
    trials: int,
    seed: int,
    rate: Decimal,
    currency: str,
    history_bytes: bytes,
) -> dict[str, Any]:
    """P50/P90 of the spot compute: the job's hours with checkpoint writes, lost work and restarts, on
    resampled paths of the offer's price history (``history_bytes``: float64 USD per instance-hour) or,
    with under a day of it, at the current spot price; setup, reruns and storage are not in it. Keyed by
    the history's bytes so the memo stays hashable."""
    history = np.frombuffer(history_bytes, dtype=np.float64)
    result = simulate_spot_job(
        SpotSimulationInput(
            work_hours=_exact(hours),
            rate_per_hour=economics.rate_per_hour,
            interval_hours=economics.interval_hours,
            checkpoint_write_hours=_exact(write_hours),
            restart_hours=_exact(restart_hours),
            spot_price_per_hour=economics.spot_price_per_hour,
            instances=instances,
            price_history_per_hour=history,
            trials=trials,
            seed=seed,
        )
    )
    current = f"current spot price {round_price(economics.spot_price_per_hour * rate)} {currency}/h"
    priced_at = (
        f"spot price paths resampled in {BLOCK_HOURS}-hour blocks from {result.history_hours} hours of "
        f"history ({current})"
        if result.history_hours
        else current
    )
    return {
        "p50_hours": round(float(result.p50_hours), 3),
        "p90_hours": round(float(result.p90_hours), 3),
        "p50_cost": str(round_money(result.p50_cost * rate, currency)),
        "p90_cost": str(round_money(result.p90_cost * rate, currency)),
        "mean_interruptions": round(float(result.mean_interruptions), 4),
        "trials": result.trials,
        "seed": result.seed,
        "history_hours": result.history_hours,
        "priced_at": priced_at,
        "p90_basis": "simulated at the row's band",
        "covers": "compute on spot (checkpoint writes, lost work and restarts included); not setup, "
        "reruns or storage",
    }
