"""Reference copy of the finance sums sav45b moved from pandas into SQL, as they stood at 49f6d6ac:
billing/finance/sections.py `_daily_by_team` (the budgets' burn per team and day), billing/finance/
anomalies.py `daily_series` (the anomaly series per team, provider, service and day, dense) and
billing/finance/allocation.py `per_team_frame`, `allocate` and `_weights` (the showback's team lines added
up per team, and the idle pool summed over the tagged teams). Copied verbatim below this docstring but for
the names (a `pandas_` prefix) and the imports; kept only to compare the SQL versions against
(tests/billing/test_finance_sql_moves.py). Not app code.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from decimal import Decimal

import numpy as np
import pandas as pd

from billing.finance.allocation import (
    SUMS,
    Allocation,
    AllocationError,
    TeamAllocation,
    apportion,
    check_rule,
)
from billing.finance.anomalies import SERIES_KEYS
from billing.review.engine import MICRO
from billing.storage.allocation_frames import TeamSum


def pandas_daily_by_team(rows: pd.DataFrame) -> dict[str, dict[dt.date, Decimal]]:
    if rows.empty:
        return {}
    days = pd.DatetimeIndex(rows["charge_period_start"]).tz_convert("UTC").date
    sums = rows.groupby([rows["team"].astype(object).to_numpy(), days])["effective_micros"].sum()
    found: dict[str, dict[dt.date, Decimal]] = {}
    for (team, day), micros in sums.items():
        found.setdefault(team, {})[day] = Decimal(int(micros)) / MICRO
    return found


def pandas_daily_series(rows: pd.DataFrame) -> pd.DataFrame:
    """Rows with columns `day` (datetime64 day), SERIES_KEYS and `effective_micros` -> one row per series
    and day, dense from the series' first day to the last day of the rows, 0 where nothing was spent."""
    if rows.empty:
        return pd.DataFrame(columns=[*SERIES_KEYS, "day", "effective_micros"])
    sums = (
        rows.groupby([*SERIES_KEYS, "day"], sort=True, observed=True)["effective_micros"].sum().reset_index()
    )
    last = sums["day"].max()
    parts = []
    for key, group in sums.groupby(SERIES_KEYS, sort=True, observed=True):
        days = pd.date_range(group["day"].min(), last, freq="D")
        dense = group.set_index("day")["effective_micros"].reindex(days, fill_value=0)
        parts.append(
            pd.DataFrame(
                {
                    **dict(zip(SERIES_KEYS, key, strict=True)),
                    "day": days,
                    "effective_micros": dense.to_numpy(),
                }
            )
        )
    return pd.concat(parts, ignore_index=True)


def pandas_per_team_frame(sums: Iterable[TeamSum]) -> pd.DataFrame:
    """TEAM_SUMS' lines (team, currency, month, effective, idle, GPU-hours), already in one currency,
    added up per team: allocate()'s input, indexed by team, sorted."""
    totals: dict[str, list[int]] = {}
    for team, _currency, _month, effective, idle, gpu_hours in sums:
        line = totals.setdefault(team, [0, 0, 0])
        line[0], line[1], line[2] = line[0] + effective, line[1] + idle, line[2] + gpu_hours
    names = sorted(totals)
    frame = pd.DataFrame(
        [totals[name] for name in names],
        columns=list(SUMS),
        index=pd.Index(names, name="team"),
        dtype=np.int64,
    )
    return frame


def pandas_allocate(per_team: pd.DataFrame, rule: str, *, teams: tuple[str, ...] | None = None) -> Allocation:
    """`per_team` is team_usage()'s frame. `teams` is the scope `even` splits across (default: the tagged
    teams of the rows). A rule that has to allocate a non-zero pool to no team is an AllocationError."""
    check_rule(rule)
    tagged = per_team[per_team.index != ""]
    shared = int(per_team.loc[""]["effective_micros"]) if "" in per_team.index else 0
    idle = int(tagged["idle_micros"].sum())
    scope = tuple(teams) if teams is not None else tuple(tagged.index)
    weights = pandas_weights(rule, tagged, scope) if rule != "unallocated" and (shared or idle) else None
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


def pandas_weights(rule: str, tagged: pd.DataFrame, scope: tuple[str, ...]) -> dict[str, int]:
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
