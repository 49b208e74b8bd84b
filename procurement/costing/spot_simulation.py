"""Seeded Monte Carlo of a checkpointing job on spot: P50 and P90 of completion time and cost.

The closed-form overhead in ``spot.py`` is an expectation; a finance reviewer also wants the bad
case. Interruptions arrive as a Poisson process (rate lambda per hour). The job runs segments of
``interval`` hours of work, each followed by a checkpoint write of ``C`` hours (none after the last);
an interruption loses the work since the last completed checkpoint and costs ``R`` hours of
restart. Where a spot price history exists, each trial prices its hours on a window of that
history starting at a random hour (a circular bootstrap of real price paths).

Simplifications, stated in docs/cost-model.md: no interruption during a restart, and the job is
billed for every wall-clock hour including checkpoint writes and restarts.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal

import numpy as np

from procurement.costing.values import CostInputError, non_negative, positive, positive_int

MAX_INTERRUPTION_ROUNDS = 10_000


@dataclass(frozen=True)
class SpotSimulationInput:
    work_hours: Decimal  # hours of useful work the job needs without interruptions
    rate_per_hour: Decimal
    interval_hours: Decimal
    checkpoint_write_hours: Decimal
    restart_hours: Decimal
    spot_price_per_hour: Decimal  # per instance-hour; used when there is no history
    instances: int = 1
    price_history_per_hour: Sequence[Decimal] = ()  # hourly spot prices, oldest first
    trials: int = 10_000
    seed: int = 0


@dataclass(frozen=True)
class SpotSimulationResult:
    p50_hours: Decimal
    p90_hours: Decimal
    p50_cost: Decimal
    p90_cost: Decimal
    mean_interruptions: Decimal
    trials: int
    seed: int


def simulate_spot_job(spec: SpotSimulationInput) -> SpotSimulationResult:
    _validate(spec)
    rng = np.random.default_rng(spec.seed)
    wall_hours, interruptions = _simulate_wall_hours(spec, rng)
    cost = _price_hours(spec, wall_hours, rng) * spec.instances
    (p50_hours, p90_hours), (p50_cost, p90_cost) = np.percentile([wall_hours, cost], [50, 90], axis=1).T
    return SpotSimulationResult(
        p50_hours=_decimal(p50_hours),
        p90_hours=_decimal(p90_hours),
        p50_cost=_decimal(p50_cost),
        p90_cost=_decimal(p90_cost),
        mean_interruptions=_decimal(interruptions.mean()),
        trials=spec.trials,
        seed=spec.seed,
    )


def _time_to_finish(remaining: np.ndarray, interval: float, write: float) -> np.ndarray:
    """Wall time to finish ``remaining`` work from a fresh start: work plus a checkpoint between segments."""
    segments = np.ceil(remaining / interval - 1e-12)
    return remaining + write * np.maximum(segments - 1, 0)


def _simulate_wall_hours(
    spec: SpotSimulationInput, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    interval, write = float(spec.interval_hours), float(spec.checkpoint_write_hours)
    restart, rate = float(spec.restart_hours), float(spec.rate_per_hour)
    remaining = np.full(spec.trials, float(spec.work_hours))
    wall = np.zeros(spec.trials)
    interruptions = np.zeros(spec.trials)
    active = np.arange(spec.trials)
    for _ in range(MAX_INTERRUPTION_ROUNDS):
        needed = _time_to_finish(remaining[active], interval, write)
        until_interruption = (
            rng.exponential(1 / rate, active.size) if rate > 0 else np.full(active.size, np.inf)
        )
        done = until_interruption >= needed
        wall[active[done]] += needed[done]
        hit = active[~done]
        elapsed = until_interruption[~done]
        saved = np.floor(elapsed / (interval + write)) * interval  # work behind the last completed checkpoint
        remaining[hit] -= saved
        wall[hit] += elapsed + restart
        interruptions[hit] += 1
        active = hit
        if active.size == 0:
            return wall, interruptions
    raise CostInputError(
        "interruption_rate_per_hour",
        f"some trials needed over {MAX_INTERRUPTION_ROUNDS} restarts: checkpoint more often or avoid spot",
    )


def _price_hours(spec: SpotSimulationInput, wall_hours: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    if not spec.price_history_per_hour:
        return wall_hours * float(spec.spot_price_per_hour)
    history = np.array([float(price) for price in spec.price_history_per_hour])
    windows = np.maximum(np.ceil(wall_hours).astype(np.int64), 1)
    tiled = np.tile(history, math.ceil((windows.max() + history.size) / history.size) + 1)
    cumulative = np.concatenate(([0.0], np.cumsum(tiled)))
    starts = rng.integers(0, history.size, wall_hours.size)
    mean_price = (cumulative[starts + windows] - cumulative[starts]) / windows
    return wall_hours * mean_price


def _decimal(value: float) -> Decimal:
    return Decimal(repr(float(value)))


def _validate(spec: SpotSimulationInput) -> None:
    positive(spec.work_hours, "work_hours")
    non_negative(spec.rate_per_hour, "interruption_rate_per_hour")
    positive(spec.interval_hours, "checkpoint_interval_hours")
    non_negative(spec.checkpoint_write_hours, "checkpoint_write_hours")
    non_negative(spec.restart_hours, "restart_hours")
    non_negative(spec.spot_price_per_hour, "spot_price_per_hour")
    positive_int(spec.instances, "instances")
    positive_int(spec.trials, "trials")
    for index, price in enumerate(spec.price_history_per_hour):
        non_negative(price, f"price_history_per_hour[{index}]")
