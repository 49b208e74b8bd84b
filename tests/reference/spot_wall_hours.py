"""The one-input spot wall-clock loop and quantiles as they were before the batched run (issue 26,
"Speed"): the reference that ``simulate_wall_hours_many`` and ``deadline.wall_clocks`` must equal exactly."""

from __future__ import annotations

import numpy as np

from procurement.costing.spot_simulation import SpotSimulationInput, simulate_wall_hours


def wall_hours_one_by_one(specs: list[SpotSimulationInput]) -> list[np.ndarray]:
    """Each input on its own generator, ``rng.exponential(1 / rate, active)`` per round."""
    return [simulate_wall_hours(spec) for spec in specs]


def quantiles_one_by_one(walls: list[np.ndarray], probability: float) -> list[tuple[float, ...]]:
    return [tuple(float(q) for q in np.percentile(wall, [50, 90, 100.0 * probability])) for wall in walls]


def spot_job_on_its_own_generator(spec: SpotSimulationInput) -> tuple[np.ndarray, np.ndarray]:
    """Wall-clock hours and interruptions per trial, drawn round by round on ``default_rng(seed)`` as
    ``simulate_spot_job`` drew them before it read the seed's shared stream (no price history)."""
    from procurement.costing.spot_simulation import _simulate_wall_hours

    return _simulate_wall_hours(spec, np.random.default_rng(spec.seed))
