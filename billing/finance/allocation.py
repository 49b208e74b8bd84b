"""Showback: the GPU cost no team carries, allocated to teams by a chosen rule (plain pandas, no ORM).

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

from dataclasses import dataclass

import numpy as np
import pandas as pd

from billing.choices import AllocationRule
from billing.review.engine import text_category
from gpuledger.errors import InputError

RULES = tuple(AllocationRule.values)  # proportional, even, unallocated
DEFAULT_RULE = "proportional"
UNALLOCATED = "(unallocated)"


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


def mean_utilization_per_row(gpu: pd.DataFrame, utilization: pd.DataFrame | None) -> np.ndarray:
    """Each row's mean utilization (0-100) over its resource's samples in [start, end); NaN where there
    are none. Only the rows of resources with samples are searched: twice each, in the samples sorted by
    (resource, time) with running sums, instead of joining every row to every sample of its resource."""
    result = np.full(len(gpu), np.nan)
    if utilization is None or utilization.empty or gpu.empty:
        return result
    rows = text_category(gpu["resource_id"])
    names, row_codes = rows.categories, rows.codes.astype(np.int64)
    sample_codes = pd.Index(names).get_indexer(utilization["resource_id"].astype(object)).astype(np.int64)
    known = sample_codes >= 0
    sample_ns = pd.DatetimeIndex(utilization["hour"]).as_unit("ns").asi8[known]
    sample_codes, values = sample_codes[known], utilization["utilization_pct"].to_numpy(float)[known]
    sampled = np.zeros(len(names), dtype=bool)
    sampled[sample_codes] = True
    positions = np.flatnonzero((row_codes >= 0) & sampled[np.maximum(row_codes, 0)])
    row_codes = row_codes[positions]
    row_start = pd.DatetimeIndex(gpu["charge_period_start"]).as_unit("ns").asi8[positions]
    row_end = pd.DatetimeIndex(gpu["charge_period_end"]).as_unit("ns").asi8[positions]
    times = np.unique(np.concatenate([sample_ns, row_start, row_end]))
    width = len(times) + 1
    keys = sample_codes * width + np.searchsorted(times, sample_ns)
    order = np.argsort(keys, kind="stable")
    keys, running = keys[order], np.concatenate([[0.0], np.cumsum(values[order])])
    first = np.searchsorted(keys, row_codes * width + np.searchsorted(times, row_start), side="left")
    past = np.searchsorted(keys, row_codes * width + np.searchsorted(times, row_end), side="left")
    counts = past - first
    hit = counts > 0
    result[positions[hit]] = (running[past[hit]] - running[first[hit]]) / counts[hit]
    return result


def idle_micros_per_row(gpu: pd.DataFrame, utilization: pd.DataFrame | None) -> np.ndarray:
    """Effective cost × (1 − mean utilization) per row; 0 for rows of resources without samples."""
    mean = mean_utilization_per_row(gpu, utilization)
    cost = gpu["effective_micros"].to_numpy(np.int64)
    idle_share = np.where(np.isnan(mean), 0.0, 1.0 - np.clip(mean, 0, 100) / 100)
    return np.rint(cost * idle_share).astype(np.int64)


def team_usage(
    gpu_usage: pd.DataFrame, unused: pd.DataFrame, utilization: pd.DataFrame | None
) -> pd.DataFrame:
    """Per team label ("" for untagged): effective cost, idle cost and GPU-hours, in micro-units."""
    usage = pd.DataFrame(
        {
            "team": gpu_usage["team"].astype(object).to_numpy(),
            "effective_micros": gpu_usage["effective_micros"].to_numpy(np.int64),
            "idle_micros": idle_micros_per_row(gpu_usage, utilization),
            "gpu_hours_micros": gpu_usage["gpu_hours_micros"].to_numpy(np.int64),
        }
    )
    commitments = pd.DataFrame(
        {
            "team": unused["team"].astype(object).to_numpy(),
            "effective_micros": unused["effective_micros"].to_numpy(np.int64),
            "idle_micros": np.zeros(len(unused), np.int64),
            "gpu_hours_micros": np.zeros(len(unused), np.int64),
        }
    )
    both = pd.concat([usage, commitments], ignore_index=True) if len(commitments) else usage
    return both.groupby("team", sort=True)[["effective_micros", "idle_micros", "gpu_hours_micros"]].sum()


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
    idle = int(tagged["idle_micros"].sum())
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
