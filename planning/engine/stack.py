"""The demand a capacity stack serves: GPU-hours above any level of a (scaled) load-duration curve.

With the samples sorted, the GPU-hours of demand above a level x are sum(max(d - x, 0)) x hours per
sample: one ``searchsorted`` and a suffix sum, for any number of levels and growth scales at once (no
Python loop over hours). Demand grown by g has g x sum(max(d - x / g, 0)) above x.

Firm demand is stacked below interruptible demand: in every hour the lowest x GPUs of the stack serve
firm demand first, so the firm GPU-hours above x are those of the firm series alone, and the
interruptible ones above x are the total's minus the firm's.

Commitments in force (bought before the plan: a reservation or savings plan the bills show) sit below
everything the plan buys: ``base`` is their GPUs in each plan year, and every level the plan sets is
counted above it (the demand above level x is the demand above base + x). ``gpu_hours`` stays the
whole demand, so shares and the status quo count the GPU-hours the commitments serve too.
"""

from __future__ import annotations

import numpy as np

HOURS_PER_YEAR = 8760.0


class _Above:
    """sum(max(v - x, 0)) over the values, for an array of levels x."""

    def __init__(self, values: np.ndarray):
        self.sorted = np.sort(values)
        self.size = values.size
        # suffix[i] = sum of sorted[i:]; the extra 0 is the sum past the end
        self.suffix = np.concatenate([np.cumsum(self.sorted[::-1])[::-1], [0.0]])

    def sum_above(self, level: np.ndarray) -> np.ndarray:
        index = np.searchsorted(self.sorted, level, side="right")
        return np.maximum(self.suffix[index] - level * (self.size - index), 0.0)


class LoadCurve:
    """A representative year of demand samples (each stands for 8760 / n hours), firm and interruptible."""

    def __init__(self, firm_gpus: np.ndarray, interruptible_gpus: np.ndarray, base: np.ndarray | None = None):
        # GPUs in force in each plan year below the plan's stack (0: none); the last axis is the year
        self.base = np.float64(0.0) if base is None else np.asarray(base, dtype=np.float64)
        self.firm = np.asarray(firm_gpus, dtype=np.float64)
        self.interruptible = np.asarray(interruptible_gpus, dtype=np.float64)
        self.total = self.firm + self.interruptible
        self.hours_per_sample = HOURS_PER_YEAR / self.total.size
        self._firm = _Above(self.firm)
        self._total = _Above(self.total)
        self.peak = float(self.total.max()) if self.total.size else 0.0
        self.firm_peak = float(self.firm.max()) if self.firm.size else 0.0

    def total_above(self, level, scale) -> np.ndarray:
        """GPU-hours a year of all demand above ``level`` GPUs, the demand grown by ``scale`` (> 0)."""
        return self._raw_total_above(np.asarray(level, dtype=np.float64) + self.base, scale)

    def _raw_total_above(self, level, scale) -> np.ndarray:
        level, scale = np.broadcast_arrays(
            np.asarray(level, dtype=np.float64), np.asarray(scale, dtype=np.float64)
        )
        return scale * self._total.sum_above(level / scale) * self.hours_per_sample

    def firm_above(self, level, scale) -> np.ndarray:
        """GPU-hours a year of firm demand above ``level`` (firm stacked at the bottom)."""
        level, scale = np.broadcast_arrays(
            np.asarray(level, dtype=np.float64) + self.base, np.asarray(scale, dtype=np.float64)
        )
        return scale * self._firm.sum_above(level / scale) * self.hours_per_sample

    def gpu_hours(self, scale) -> np.ndarray:
        """All the demand's GPU-hours in a year at ``scale`` (the part commitments in force serve too)."""
        return self._raw_total_above(0.0, scale)

    def in_force_hours(self, scale) -> np.ndarray:
        """GPU-hours a year the commitments in force serve (0 without any)."""
        return self.gpu_hours(scale) - self.total_above(0.0, scale)

    def peak_above(self, level: float, scale: float, part: str = "total", year: int = 0) -> float:
        """The most GPUs of ``part`` (total, firm or interruptible) above ``level`` (above the
        commitments in force of plan ``year``) in any hour: the size of a market layer. One pass."""
        base = np.atleast_1d(self.base)
        level = level + float(base[min(year, base.size - 1)])
        total = np.maximum(scale * self.total - level, 0.0)
        firm = np.maximum(scale * self.firm - level, 0.0)
        band = {"total": total, "firm": firm, "interruptible": total - firm}[part]
        return float(band.max(initial=0.0))
