"""A measured benchmark in place of the estimate, scaled across GPU counts with the communication model.

A run of the same model shape, method and precision on the same GPU model at k GPUs gives the hours of
an n-GPU plan as (docs/cost-model.md, "Measured speeds"):

    hours(n) = measured hours at k x modelled hours(n) / modelled hours(k)

i.e. the measured step is scaled by the ratio of the modelled step times of the same plan at n and at k
GPUs: the compute share shrinks as k/n and the modelled collectives of n replace those of k. A run at
the plan's own count (k = n) is used as measured. Of several counts, the nearest to n (on a log scale)
is used; a plan whose tensor-parallel group does not fit in k GPUs cannot be scaled from it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np


def nearest_measured_count(measured: Mapping[tuple[str, int], float], slug: str, gpus: int) -> int | None:
    """The measured GPU count for this GPU model nearest to ``gpus`` (on a log scale; ties: the smaller),
    or None when the model has no measurement."""
    counts = [count for (measured_slug, count) in measured if measured_slug == slug and count > 0]
    if not counts:
        return None
    return min(counts, key=lambda count: (abs(math.log(gpus / count)), count))


def measured_counts(
    measured: Mapping[tuple[str, int], float], slugs: np.ndarray, totals: np.ndarray
) -> np.ndarray:
    """Per row, the measured count to scale from (NaN where the row's GPU model has none)."""
    chosen = np.full(np.shape(totals), np.nan)
    pairs = {(str(slug), int(total)) for slug, total in zip(np.ravel(slugs), np.ravel(totals), strict=True)}
    for slug, total in pairs:
        count = nearest_measured_count(measured, slug, total)
        if count is not None:
            chosen[(slugs == slug) & (totals == total)] = count
    return chosen


def scaled_hours(measured_hours, modelled_hours_n, modelled_hours_k, same_count) -> np.ndarray:
    """Measured hours at k scaled to n by the modelled ratio; exactly the measurement where k = n."""
    with np.errstate(invalid="ignore", divide="ignore"):
        ratio = np.where(same_count, 1.0, np.asarray(modelled_hours_n) / np.asarray(modelled_hours_k))
    return np.asarray(measured_hours) * ratio
