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
derived-peak warning itself stays the row's own (shapes.estimated_speed), one way per concern.
"""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from procurement.sizing import GpuSpec

TIE_PREFIX = "within the model's error"


def stated_speed_error(row: dict[str, Any]) -> float | None:
    """The row's stated speed error: its accuracy class's 90th-percentile absolute error, else its target."""
    throughput = (row.get("accuracy") or {}).get("throughput") or {}
    error = throughput.get("p90_abs_error")
    return float(error) if error is not None else throughput.get("target")


def tie_note(rows: list[dict[str, Any]], gpus: Mapping[str, GpuSpec]) -> str | None:
    """The sentence for the first row, or None: the first fitting row and the next fitting row on another GPU
    model, when the second costs less than (1 + the stated error) times the first."""
    fitting = [row for row in rows if row.get("fits") and row.get("total_cost") is not None]
    if not fitting:
        return None
    first = fitting[0]
    second = next((row for row in fitting[1:] if row["gpu"] != first["gpu"]), None)
    error = stated_speed_error(first)
    if second is None or error is None:
        return None
    first_cost, second_cost = Decimal(str(first["total_cost"])), Decimal(str(second["total_cost"]))
    if first_cost <= 0:
        return None
    gap = float(second_cost / first_cost) - 1.0
    if gap > error:
        return None
    derived = ""
    gpu = gpus.get(first["gpu"])
    if gpu is not None and gpu.throughput_estimated:
        derived = f"; {first['gpu']}'s speed rests on derived peak figures"
    more = f"{gap:.1%} more" if gap >= 0 else f"{-gap:.1%} less, ranked below for a doubt its row states"
    return (
        f"{TIE_PREFIX}: {first['gpu']} and {second['gpu']} are a tie at ±{error:.0%} "
        f"({second['gpu']} costs {more}{derived}); measure both before choosing on cost"
    )


def add_tie_note(rows: list[dict[str, Any]], gpus: Mapping[str, GpuSpec]) -> None:
    """Append the tie note to the first fitting row's warnings, where there is one."""
    note = tie_note(rows, gpus)
    if note is None:
        return
    first = next(row for row in rows if row.get("fits") and row.get("total_cost") is not None)
    first["warnings"] = [*first.get("warnings", []), note]
