"""Showback: the GPU cost no team carries, allocated to teams by a chosen rule (no ORM).

The per-team sums are SQL (storage/allocation_sql.py, run by DuckDB over the bill or over frames in
memory), and so are their lines added up per team and the idle pool (TEAM_TOTALS, IDLE_POOL); this module
applies the rule to the few team lines.

Two pools are allocated (docs/billing.md, "Allocation"):
- **shared**: GPU spend (usage and unused commitments, as the review counts it) of rows with no team tag;
- **idle**: the idle part of the tagged GPU usage rows, effective cost × (1 − mean utilization) over the
  utilization samples of the row's resource within its charge period; rows of resources without samples
  have no idle part (they are not judged, as the review's idle hours are not).
A team's *direct* cost is its tagged GPU cost less its idle part. Rules:
- `proportional`: each pool in proportion to the teams' GPU-hours in the period (their use);
- `even`: each pool split evenly across the teams in scope;
- `unallocated`: both pools stay as their own line.
Amounts are integer micro-units apportioned by largest remainder, so the lines add up to the pools exactly
(direct + shared + idle = the review's GPU effective cost, to the micro-unit).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from billing.choices import AllocationRule
from billing.storage import allocation_sql
from billing.storage.allocation_frames import TeamSum, frame_row_idle, frame_team_sums
from billing.storage.frame_sql import FrameSql
from gpuledger.errors import InputError

RULES = tuple(AllocationRule.values)  # proportional, even, unallocated
DEFAULT_RULE = "proportional"
UNALLOCATED = "(unallocated)"
SUMS = ("effective_micros", "idle_micros", "gpu_hours_micros")


class AllocationError(InputError):
    """A bad showback rule or split, naming its field."""


@dataclass(frozen=True)
class TeamAllocation:
    team: str
    direct_micros: int
    own_idle_micros: int  # the team's own idle cost, part of the idle pool
    shared_micros: int  # its share of the shared pool
    idle_micros: int  # its share of the idle pool
    gpu_hours_micros: int

    @property
    def showback_micros(self) -> int:
        return self.direct_micros + self.shared_micros + self.idle_micros


@dataclass(frozen=True)
class Allocation:
    rule: str
    shared_pool_micros: int
    idle_pool_micros: int
    teams: tuple[TeamAllocation, ...]
    unallocated_micros: int  # the pools left as their own line (rule `unallocated`, or nothing to allocate)


def check_rule(rule: str) -> str:
    if rule not in RULES:
        raise AllocationError("allocation", f"unknown rule {rule!r}; use one of {', '.join(RULES)}")
    return rule


def _lines(rows: pd.DataFrame, *, unused: bool) -> pd.DataFrame:
    """allocation_sql.ALLOCATION_READ of GPU usage rows (`unused`: unused commitments) already picked by
    scope: their scope columns set to say so, whatever the frame has."""
    columns = {name: rows[name] for name in ("charge_period_start", "charge_period_end", "effective_micros")}
    for name in ("resource_id", "team", "currency"):
        columns[name] = rows[name].astype(object) if name in rows else ""
    columns["gpu_hours_micros"] = rows["gpu_hours_micros"] if "gpu_hours_micros" in rows else 0
    scope = {"charge_category": "usage", "gpu": "gpu", "commitment_status": "unused" if unused else ""}
    return pd.DataFrame(columns | scope, index=rows.index)


def idle_micros_per_row(gpu: pd.DataFrame, utilization: pd.DataFrame | None) -> np.ndarray:
    """Effective cost × (1 − mean utilization of the resource's samples in the row's [start, end)) per
    GPU usage row; 0 for rows of resources without samples (allocation_sql.ROW_IDLE, in DuckDB)."""
    if gpu.empty:
        return np.zeros(0, dtype=np.int64)
    return frame_row_idle(_lines(gpu, unused=False), utilization)


def team_usage(
    gpu_usage: pd.DataFrame, unused: pd.DataFrame, utilization: pd.DataFrame | None
) -> pd.DataFrame:
    """Per team label ("" for untagged): effective cost, idle cost and GPU-hours, in micro-units, of
    frames in memory (allocation_sql.TEAM_SUMS in DuckDB; the review reads its sums straight from the
    bill: duckdb_allocation.dataset_team_sums)."""
    lines = pd.concat([_lines(gpu_usage, unused=False), _lines(unused, unused=True)], ignore_index=True)
    return per_team_frame(frame_team_sums(lines, utilization))


def per_team_frame(sums: Iterable[TeamSum]) -> pd.DataFrame:
    """TEAM_SUMS' lines (team, currency, month, effective, idle, GPU-hours), already in one currency,
    added up per team in DuckDB (allocation_sql.TEAM_TOTALS): allocate()'s input, indexed by team, sorted."""
    lines = [
        (team, effective, idle, gpu_hours) for team, _currency, _month, effective, idle, gpu_hours in sums
    ]
    found = []
    if lines:
        columns = list(zip(*lines, strict=True))
        table = pd.DataFrame(
            {
                "team": pd.Series(columns[0], dtype=object),
                **{name: np.array(columns[i + 1], dtype=np.int64) for i, name in enumerate(SUMS)},
            }
        )
        with FrameSql() as sql:
            found = sql.register("team_lines", table).rows(allocation_sql.TEAM_TOTALS)
    return pd.DataFrame(
        [[int(value) for value in row[1:]] for row in found],
        columns=list(SUMS),
        index=pd.Index([row[0] for row in found], name="team"),
        dtype=np.int64,
    )


def idle_pool(per_team: pd.DataFrame) -> int:
    """The idle pool: the tagged teams' idle cost, summed in DuckDB (allocation_sql.IDLE_POOL)."""
    if per_team.empty:
        return 0
    teams = pd.DataFrame(
        {
            "team": pd.Series(per_team.index.astype(object), dtype=object),
            "idle_micros": per_team["idle_micros"].to_numpy(np.int64),
        }
    )
    with FrameSql() as sql:
        return int(sql.register("per_team", teams).rows(allocation_sql.IDLE_POOL)[0][0])


def apportion(amount: int, weights: list[int]) -> list[int]:
    """`amount` split in proportion to `weights` (non-negative, not all 0) by largest remainder: the
    parts add up to `amount` exactly; ties go to the earlier weight."""
    total = sum(weights)
    sign, magnitude = (-1 if amount < 0 else 1), abs(amount)
    floors = [magnitude * w // total for w in weights]
    remainders = [magnitude * w % total for w in weights]
    left = magnitude - sum(floors)
    for index in sorted(range(len(weights)), key=lambda i: (-remainders[i], i))[:left]:
        floors[index] += 1
    return [sign * part for part in floors]


def allocate(per_team: pd.DataFrame, rule: str, *, teams: tuple[str, ...] | None = None) -> Allocation:
    """`per_team` is team_usage()'s frame. `teams` is the scope `even` splits across (default: the tagged
    teams of the rows). A rule that has to allocate a non-zero pool to no team is an AllocationError."""
    check_rule(rule)
    tagged = per_team[per_team.index != ""]
    shared = int(per_team.loc[""]["effective_micros"]) if "" in per_team.index else 0
    idle = idle_pool(per_team)
    scope = tuple(teams) if teams is not None else tuple(tagged.index)
    weights = _weights(rule, tagged, scope) if rule != "unallocated" and (shared or idle) else None
    names = sorted(set(tagged.index) | set(scope))
    shared_parts = (
        dict(zip(weights, apportion(shared, list(weights.values())), strict=True)) if weights else {}
    )
    idle_parts = dict(zip(weights, apportion(idle, list(weights.values())), strict=True)) if weights else {}
    lines = []
    for name in names:
        row = tagged.loc[name] if name in tagged.index else None
        own_idle = int(row["idle_micros"]) if row is not None else 0
        lines.append(
            TeamAllocation(
                team=name,
                direct_micros=(int(row["effective_micros"]) - own_idle) if row is not None else 0,
                own_idle_micros=own_idle,
                shared_micros=shared_parts.get(name, 0),
                idle_micros=idle_parts.get(name, 0),
                gpu_hours_micros=int(row["gpu_hours_micros"]) if row is not None else 0,
            )
        )
    left = 0 if weights else shared + idle
    return Allocation(rule, shared, idle, tuple(lines), left)


def _weights(rule: str, tagged: pd.DataFrame, scope: tuple[str, ...]) -> dict[str, int]:
    if not scope:
        raise AllocationError(
            "allocation",
            f"rule {rule!r} names no team: no tagged team is in scope to allocate the shared "
            "and idle cost to; choose teams, or the rule 'unallocated'",
        )
    if rule == "even":
        return dict.fromkeys(sorted(scope), 1)
    hours = {
        name: max(int(tagged.loc[name]["gpu_hours_micros"]), 0) if name in tagged.index else 0
        for name in sorted(scope)
    }
    if not any(hours.values()):
        raise AllocationError(
            "allocation",
            "rule 'proportional' names no team: no team in scope used GPU-hours in the period; "
            "use 'even' or 'unallocated'",
        )
    return {name: weight for name, weight in hours.items() if weight}
