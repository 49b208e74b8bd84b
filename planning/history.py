"""The capacity plan's reads: a scope's stored spend and utilization rows as demand.py's inputs, and
who may plan which scope. The only ORM code of the demand side; demand.py gets plain arrays.

Spend rows are read as the spend review reads them (billing/review/selectors.py): DuckDB over the
imports' Parquet datasets, a granted engineer's teams in the query's WHERE clause (other teams' rows
are never read into Python). Unlike the review, only [from, to) is read, not the period before it too. A plan's rows are the review's GPU
usage rows and unused commitments (billing/review.py scope_masks), charged in [from, to) as the
review counts them (by ChargePeriodStart)."""

from __future__ import annotations

import datetime as dt
import functools
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd
import pyarrow as pa
from django.core.exceptions import PermissionDenied
from django.db import connection

from billing.access import spend_scope
from billing.imports.records import tag_mapping
from billing.models import GpuUtilization
from billing.review.selectors import dataset_rows, review_fx, sampled_resources
from billing.storage.datasets import TEXT_LIMITS
from billing.storage.demand_sql import demand_series
from billing.storage.import_datasets import ImportDatasets
from planning.engine.demand import (
    DemandHistory,
    UsageRows,
    UtilizationRows,
    demand_history,
    hour_index,
    validate_period,
)
from planning.engine.errors import PlanInputError
from planning.usage_frame import gpu_matches, hours_of, usage_rows_from_frames, usage_rows_from_series
from pricing.providers.currencies import currency_problem

MAX_SCOPE_TEAMS = 100  # a request names at most this many teams
TEAM_LENGTH = TEXT_LIMITS["team"]  # the longest team a bill line keeps
GPU_PATTERN = re.compile(r"[a-z0-9][a-z0-9-]{0,49}")  # a GpuModel slug, or a family prefix of one
# Up to this many resources are named in the utilization query; more are filtered after the read
MAX_RESOURCES_IN_QUERY = 500
# The review's columns a plan reads (usage_frame.py, review.scope_masks, and what ran: fleets.py)
PLAN_COLUMNS = (
    "charge_period_start",
    "charge_period_end",
    "charge_category",
    "commitment_status",
    "provider",
    "resource_id",
    "gpu",
    "pricing_category",
    "team",
    "currency",
    "effective_micros",
    "gpu_hours_micros",
    "interruptible",
    "region",
    "instance_type",
    "gpus_per_instance",
    "commitment_discount_id",
    "commitment_end",
)


@dataclass(frozen=True)
class PlanScope:
    """The spend a plan reads: rows charged in [start, end) (dates, UTC), of `teams` (the bills' team
    names as the bills tag them; empty: every team the user may see) and of `gpu`: a GPU slug
    ("h100-sxm5-80gb"), or a family that prefixes slugs at a dash ("h100" is h100-sxm5-80gb,
    h100-pcie-80gb, h100-nvl-94gb; not h200). Empty: every GPU. Bad values raise PlanInputError
    naming from, to, team or gpu."""

    start: dt.date
    end: dt.date  # exclusive
    teams: tuple[str, ...] = ()
    gpu: str = ""

    def __post_init__(self):
        for name, value in (("from", self.start), ("to", self.end)):
            if not isinstance(value, dt.date) or isinstance(value, dt.datetime):
                raise PlanInputError(name, f"must be a date (YYYY-MM-DD), got {value!r}")
        if self.end <= self.start:
            raise PlanInputError("to", f"must be after from ({self.start}), got {self.end}")
        validate_period(self.start_hour, self.end_hour)
        teams = self.teams
        if isinstance(teams, str) or not all(isinstance(t, str) and 0 < len(t) <= TEAM_LENGTH for t in teams):
            raise PlanInputError("team", f"a list of team names of 1-{TEAM_LENGTH} characters")
        if len(teams) > MAX_SCOPE_TEAMS:
            raise PlanInputError("team", f"at most {MAX_SCOPE_TEAMS} teams, got {len(teams)}")
        object.__setattr__(self, "teams", tuple(sorted(set(teams))))
        if not isinstance(self.gpu, str) or (self.gpu and not GPU_PATTERN.fullmatch(self.gpu)):
            raise PlanInputError("gpu", f"a GPU slug or family (e.g. h100-sxm5-80gb, h100), got {self.gpu!r}")

    @property
    def start_hour(self) -> int:
        """The period's first hour as demand.py's hour index."""
        return hour_index(self.start)

    @property
    def end_hour(self) -> int:
        return hour_index(self.end)

    def matches_gpu(self, slugs: np.ndarray) -> np.ndarray:
        """Which of `slugs` the scope's GPU (slug or family) selects."""
        return gpu_matches(slugs, self.gpu)


def plan_scope_for_user(user, scope: PlanScope) -> PlanScope:
    """`scope` as `user` may read it: finance and admin any scope (unchanged); an engineer only the
    teams their spend grants cover (billing/access.py): no teams asked means all of theirs, a team
    outside them is PermissionDenied; viewers and engineers without a grant: PermissionDenied."""
    allowed = spend_scope(user)
    if allowed is None:
        raise PermissionDenied(
            "Capacity plans read spend data: finance or admin role, or an admin's spend grant to your team."
        )
    if allowed.everything:
        return scope
    if not scope.teams:
        return replace(scope, teams=allowed.teams)
    outside = [team for team in scope.teams if team not in allowed.teams]
    if outside:
        raise PermissionDenied(
            f"team {outside[0]!r}: your spend access covers team {', '.join(allowed.teams)} only"
        )
    return scope


def scope_spend_frame(scope: PlanScope) -> pd.DataFrame:
    """Every stored row charged in the scope's period, of its teams, as the review's columns the plan
    reads (PLAN_COLUMNS: a million rows' whole review frame would cost some 500 MiB)."""
    return spend_frame_between(scope.start, scope.end, scope.teams)


def spend_frame_between(start: dt.date, end: dt.date, teams: tuple[str, ...]) -> pd.DataFrame:
    """The plan's one reader of spend rows: those charged in [start, end) of `teams` (empty: every
    team), as PLAN_COLUMNS of the review's engine frame, as the review reads them: DuckDB over the
    imports' Parquet datasets, the team scope in the SQL."""
    return dataset_rows(start, end, teams, PLAN_COLUMNS)


def monthly_spend_frames(scope: PlanScope) -> Iterator[pd.DataFrame]:
    """The scope's spend frame a calendar month at a time (the datasets' partition), so a year of millions
    of rows is never in memory at once."""
    for start, end in scope_months(scope):
        yield spend_frame_between(start, end, scope.teams)


def monthly_demand_series(scope: PlanScope, currency: str, sampled: Sequence[str] = ()) -> Iterator[pa.Table]:
    """The scope's bill lines summed by what a plan tells apart (billing/storage/demand_sql.SERIES), a
    calendar month at a time, the team scope in the SQL, cost converted into `currency` on each line;
    the `sampled` resources' lines summed per resource (the busy series reads them)."""
    rates = review_fx(currency)
    interruptible = tag_mapping().interruptible
    for start, end in scope_months(scope):
        yield demand_series(
            ImportDatasets(),
            start,
            end,
            scope.teams,
            interruptible_tag=interruptible,
            currency=currency,
            fx_to_currency=rates,
            sampled=sampled,
        )


def scope_months(scope: PlanScope) -> Iterator[tuple[dt.date, dt.date]]:
    """The scope's period cut at calendar months (the datasets' partition)."""
    start = scope.start
    while start < scope.end:
        following = (start.replace(day=1) + dt.timedelta(days=32)).replace(day=1)
        end = min(following, scope.end)
        yield start, end
        start = end


def plan_usage_rows(
    scope: PlanScope, *, currency: str = "USD", by_resource: bool = True, sampled: Sequence[str] = ()
) -> UsageRows:
    """The scope's GPU usage and unused-commitment rows, effective cost converted into `currency` through
    the stored FX rates (PlanInputError("currency") when one is missing), and the charge periods of
    every other row of the scope's bill as covered intervals. PlanInputError naming gpu, team or from
    when the scope holds no GPU usage rows. Read a month at a time; `by_resource` False sums the rows
    the plan does not tell apart in DuckDB (billing/storage/demand_sql.SERIES: what usage_frame.collapsed
    does in pandas), so the lines never reach Python; the `sampled` resources' rows (with utilization
    samples: plan_sampled_resources) keep their resource id. True reads every line (the reference the
    SQL is tested against). Call plan_scope_for_user first: this reads what it is given."""
    problem = currency_problem(currency) if isinstance(currency, str) else "must be a currency code"
    if problem:
        raise PlanInputError("currency", problem)
    try:
        if not by_resource:  # summed in DuckDB: the month's bill lines never reach Python
            return usage_rows_from_series(
                monthly_demand_series(scope, currency, sampled),
                gpu=scope.gpu,
                teams=scope.teams,
                currency=currency,
            )
        return usage_rows_from_frames(
            monthly_spend_frames(scope),
            gpu=scope.gpu,
            teams=scope.teams,
            currency=currency,
            fx_rates=functools.cache(lambda: review_fx(currency)),
            by_resource=by_resource,
        )
    except PlanInputError as error:
        if error.field == "currency":
            raise
        raise PlanInputError(error.field, f"{error.message}: charged {scope.start} to {scope.end}") from None


def plan_sampled_resources(scope: PlanScope) -> list[str]:
    """The resources with a utilization sample in the scope's period (of any team: the scope's lines
    pick theirs in the SQL): the plan reads these resources' rows by resource, every other row summed."""
    return sampled_resources(scope.start, scope.end)


def plan_rows(scope: PlanScope, *, currency: str = "USD") -> UsageRows:
    """The plan's read of the scope: its bill lines summed in DuckDB (demand_sql.SERIES), by resource
    only for the resources with utilization samples (the busy series, demand.py _busy)."""
    return plan_usage_rows(scope, currency=currency, by_resource=False, sampled=plan_sampled_resources(scope))


UTILIZATION_SQL = """
SELECT resource_id, hour, AVG(utilization_pct) FROM {table}
WHERE hour >= %s AND hour < %s{resources} GROUP BY resource_id, hour
"""


def plan_utilization_rows(scope: PlanScope, usage: UsageRows) -> UtilizationRows:
    """Stored hourly utilization in the scope's period, of the resources `usage` holds (so a scope
    never reaches another team's machines), averaged over each resource's GPUs per hour, as 0..1."""
    resources = sorted(set(usage.resource_id.tolist()) - {""})
    if not resources:
        return UtilizationRows.of(resource_id=[], hour=[], utilization=[])
    params = [
        connection.ops.adapt_datetimefield_value(dt.datetime.combine(day, dt.time(), tzinfo=dt.UTC))
        for day in (scope.start, scope.end)
    ]
    named = len(resources) <= MAX_RESOURCES_IN_QUERY
    clause = " AND resource_id IN (" + ", ".join(["%s"] * len(resources)) + ")" if named else ""
    table = connection.ops.quote_name(GpuUtilization._meta.db_table)
    with connection.cursor() as cursor:
        cursor.execute(
            UTILIZATION_SQL.format(table=table, resources=clause), params + (resources if named else [])
        )
        found = cursor.fetchall()
    if not found:
        return UtilizationRows.of(resource_id=[], hour=[], utilization=[])
    ids, hours, percents = (list(column) for column in zip(*found, strict=True))
    keep = pd.Series(ids, dtype=object).isin(resources).to_numpy()  # by hashing, not sorting strings
    stamps = pd.to_datetime(pd.Series(hours, dtype=object), utc=True, format="ISO8601")
    return UtilizationRows(
        resource_id=np.asarray(ids, dtype=object)[keep],
        hour=hours_of(stamps, round_up=False)[keep],
        utilization=np.asarray([float(p) for p in percents], dtype=np.float64)[keep] / 100,
    )


def scope_demand(
    scope: PlanScope, *, currency: str = "USD", series: str = "auto"
) -> tuple[DemandHistory, UsageRows]:
    """One call for a plan: the scope's rows, its utilization, and their DemandHistory."""
    usage = plan_rows(scope, currency=currency)
    utilization = plan_utilization_rows(scope, usage)
    history = demand_history(
        usage, start_hour=scope.start_hour, end_hour=scope.end_hour, utilization=utilization, series=series
    )
    return history, usage
