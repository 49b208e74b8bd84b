"""The tie note: when the first row leads the next row on another GPU by less than the model's stated speed
error, the order of the two is not the engine's to decide, and the answer says so on the first row.

Why (aud51n, stop 51): DeiT-B 300 epochs ranked a 4060 Ti first at 69.96 USD against an L4's 77.25 (+10.4%),
while the vision-classifier training class's 90th-percentile held-out speed error is 20.7%
(procurement/data/reference/accuracy_classes.json) and the 4060 Ti's peak is derived: a ranking that reads as
a verdict was a coin toss. The error stated is the row's own ``accuracy.throughput`` (the class the row
already carries): its 90th-percentile absolute error where the class has held-out cases, its target otherwise.
Model assumption: the job's cost moves one for one with its hours, and the two rows' speed errors are not
known to cancel across two GPU models (on one GPU model they do: rows of the same card are ordered by price
alone, so no note). Where the first row's speed rests on derived peak figures the note says that too; the
derived-peak warning itself stays the row's own (shapes.estimated_speed), one way per concern. The next GPU
model is read from every priced configuration, not from the rows shown, so `--top 1` says the same as `--top 10`;
it is the cheapest one that fits and costs at least the first row's (a cheaper row ranked below for a doubt its own
row states, a tight fit or an assumed link, is not a speed question).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from procurement.sizing import GpuSpec

TIE_PREFIX = "within the model's error"


def stated_speed_error(row: dict[str, Any]) -> float | None:
    """The row's stated speed error: its accuracy class's 90th-percentile absolute error, else its target."""
    throughput = (row.get("accuracy") or {}).get("throughput") or {}
    error = throughput.get("p90_abs_error")
    return float(error) if error is not None else throughput.get("target")


def next_gpu_model(config_gpu: np.ndarray, total_cost: np.ndarray, usable: np.ndarray, first: int):
    """(GPU slug, cost) of the cheapest usable configuration on another GPU model costing at least
    configuration ``first``'s, or None. ``config_gpu``: each configuration's GPU slug; ``usable``: selected and
    fitting."""
    floor = total_cost[first]
    others = usable & (config_gpu != config_gpu[first]) & ~np.isnan(total_cost) & (total_cost >= floor)
    if not others.any():
        return None
    index = np.flatnonzero(others)[np.argmin(total_cost[others])]
    return str(config_gpu[index]), float(total_cost[index])


def tie_note(
    first: dict[str, Any], first_cost: float, second: tuple[str, float] | None, gpus: Mapping[str, GpuSpec]
) -> str | None:
    """The sentence for the first row, or None: when the next GPU model costs less than (1 + the stated error)
    times the first row."""
    error = stated_speed_error(first)
    if second is None or error is None or not first_cost > 0:
        return None
    second_gpu, second_cost = second
    gap = second_cost / first_cost - 1.0
    if gap > error:
        return None
    derived = ""
    gpu = gpus.get(first["gpu"])
    if gpu is not None and gpu.throughput_estimated:
        derived = f"; {first['gpu']}'s speed rests on derived peak figures"
    return (
        f"{TIE_PREFIX}: {first['gpu']} and {second_gpu} are a tie at ±{error:.0%} "
        f"({second_gpu} costs {gap:.1%} more{derived}); measure both before choosing on cost"
    )
