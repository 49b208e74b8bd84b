"""The tie note: when the first row leads a like-for-like configuration on another GPU model by less than the
model's error on such a comparison, the order of the two is not the engine's to decide, and the answer says so.

Why (aud51n, stop 51): DeiT-B 300 epochs ranked a 4060 Ti first at 69.96 USD against an L4's 77.25 (+10.4%); a
ranking that reads as a verdict can be a coin toss. What is compared (audtie's FIX LIST, stop 52):

- Like for like: the comparison is the cheapest configuration on another GPU model that fits, costs at least the
  first row's, has no more doubts than the first row (configurations.doubt_levels: a tight fit, an assumed link,
  host doubts, a consumer split, spot on several instances, counted as ranked_order counts them), the same
  pricing model, and, where the spec states its parallelism, the same plan, tensor-parallel degree and (training)
  GPU count. A row ranked below for a doubt, or a spot discount against an on-demand price, is not a speed
  question (audtie: a tight L40S at rank 91, a two-instance spot p5 at rank 168, a spot B200 against an on-demand
  L40S were named).
- The error: not the class's pooled 90th percentile, which holds errors common to both cards of one workload
  (framework, batch, latency model) that cancel in a ranking. A cross-card error from same-source pairs is the
  right figure, but the ledger (procurement/data/reference/outside_accuracy.json) keys each signed error by test
  id, with no card, so no same-source pair can be formed from it: the class's median absolute held-out error is
  quoted, and said to be that. Model assumption: the cross-card error of two rows is no larger than the class's
  typical (median) single-case error, since the errors both cards share cancel.
- At least MIN_HELD_OUT_CASES held-out cases, else no note: with n cases the sample's range holds the class's true
  median with probability 1 - 2 x 0.5^n (distribution-free order statistics: 0.875 at n = 4, 0.9375 at n = 5), so 5
  is the fewest whose median is a figure at 90% confidence.
- The sentence names the second configuration (provider, instance, instances x GPUs, pricing model, its rank in the
  list) so a buyer can find it, and says which rows' speed rests on derived peak figures.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from procurement.sizing import GpuSpec

TIE_PREFIX = "within the model's error"
MIN_HELD_OUT_CASES = 5  # 1 - 2 x 0.5^5 = 0.9375 >= 0.90; n = 4 gives 0.875 (module docstring)


@dataclass(frozen=True)
class Second:
    """The configuration the first row is compared with, as the sentence names it."""

    gpu: str
    cost: float
    provider: str = ""
    instance_type: str = ""
    instances: int = 1
    gpus_per_instance: int = 1
    pricing_model: str = ""
    rank: int | None = None  # its place in the full ranking, from 1


def stated_speed_error(row: dict[str, Any]) -> tuple[float, int] | None:
    """(error, held-out cases): the row's accuracy class's median absolute speed error, or None under
    MIN_HELD_OUT_CASES cases."""
    throughput = (row.get("accuracy") or {}).get("throughput") or {}
    cases = int(throughput.get("cases") or 0)
    error = throughput.get("median_abs_error")
    if error is None or cases < MIN_HELD_OUT_CASES:
        return None
    return float(error), cases


def next_gpu_model(
    config_gpu: np.ndarray,
    total_cost: np.ndarray,
    usable: np.ndarray,
    first: int,
    levels: np.ndarray | None = None,
    same: np.ndarray | None = None,
) -> int | None:
    """Index of the cheapest usable configuration on another GPU model costing at least configuration
    ``first``'s, on the first's doubt level or above (``levels``: configurations.doubt_levels) and like it where
    ``same`` says (pricing model, stated plan), or None. ``usable``: selected and fitting."""
    floor = total_cost[first]
    others = usable & (config_gpu != config_gpu[first]) & ~np.isnan(total_cost) & (total_cost >= floor)
    if levels is not None:
        others &= levels <= levels[first]
    if same is not None:
        others &= same
    if not others.any():
        return None
    return int(np.flatnonzero(others)[np.argmin(total_cost[others])])


def _where(second: Second) -> str:
    rank = f", rank {second.rank} in the list" if second.rank is not None else ""
    return (
        f"{second.provider} {second.instance_type}, {second.instances} x {second.gpus_per_instance} "
        f"{second.gpu}, {second.pricing_model}{rank}"
    ).strip(", ")


def tie_note(
    first: dict[str, Any], first_cost: float, second: Second | None, gpus: Mapping[str, GpuSpec]
) -> str | None:
    """The sentence for the first row, or None: when the second costs less than (1 + the error) times the first."""
    stated = stated_speed_error(first)
    if second is None or stated is None or not first_cost > 0:
        return None
    error, cases = stated
    gap = second.cost / first_cost - 1.0
    if gap > error:
        return None
    derived = [
        slug for slug in (first["gpu"], second.gpu) if getattr(gpus.get(slug), "throughput_estimated", "")
    ]
    derived_text = f"; speed of {' and '.join(derived)} rests on derived peak figures" if derived else ""
    return (
        f"{TIE_PREFIX}: {first['gpu']} and {second.gpu} are a tie at ±{error:.0%} "
        f"({second.gpu} costs {gap:.1%} more: {_where(second)}{derived_text}); ±{error:.0%} is the median "
        f"absolute speed error of {cases} held-out cases of this workload class (no same-source cross-card pairs "
        f"are in the ledger); measure both before choosing on cost"
    )


def answer_tie_note(results: list[dict[str, Any]]) -> str | None:
    """The tie note of an answer (on its first fitting row), for the places a user reads a table: the text
    table under the first row, the page above the table, the spot report's verdict."""
    for row in results:
        for warning in row.get("warnings") or ():
            if str(warning).startswith(TIE_PREFIX):
                return str(warning)
    return None
