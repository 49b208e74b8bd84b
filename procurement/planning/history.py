"""The capacity plan's reads: a scope's stored spend and utilization rows as demand.py's inputs, and
who may plan which scope. The only ORM code of the demand side; demand.py gets plain arrays.

Spend rows are read by the spend review's own fastest path (procurement/billing/selectors.py): on
PostgreSQL each month's columnar snapshot for every team's rows, the COPY stream for a granted
engineer's teams; on SQLite the fetched rows. A plan's rows are the review's GPU usage rows and unused
commitments (billing/review.py scope_masks), charged in [from, to) as the review counts them."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from procurement.planning.demand import UsageRows, UtilizationRows

MAX_SCOPE_TEAMS = 100  # a request names at most this many teams


@dataclass(frozen=True)
class PlanScope:
    """The spend a plan reads: rows charged in [start, end) (dates, UTC), of `teams` (the bills' team
    names, SpendRecord.team; empty: every team the user may see) and of `gpu`: a GPU slug
    ("h100-sxm5-80gb"), or a family that prefixes slugs at a dash ("h100" is h100-sxm5-80gb,
    h100-pcie-80gb, h100-nvl-94gb; not h200). Empty: every GPU."""

    start: dt.date
    end: dt.date  # exclusive
    teams: tuple[str, ...] = ()
    gpu: str = ""

    @property
    def start_hour(self) -> int:
        """The period's first hour as demand.py's hour index."""
        raise NotImplementedError

    @property
    def end_hour(self) -> int:
        raise NotImplementedError


def plan_scope_for_user(user, scope: PlanScope) -> PlanScope:
    """`scope` as `user` may read it: finance and admin any scope (unchanged); an engineer only the
    teams their spend grants cover (billing/access.py): no teams asked means all of theirs, a team
    outside them is PermissionDenied; viewers and engineers without a grant: PermissionDenied.
    Also validates the scope (PlanInputError naming from, to, team or gpu)."""
    raise NotImplementedError


def plan_usage_rows(scope: PlanScope, *, currency: str = "USD") -> UsageRows:
    """The scope's GPU usage and unused-commitment rows, effective cost converted into `currency` through
    the stored FX rates (PlanInputError("currency") when one is missing), and the charge periods of
    every other row of the scope's bill as covered intervals. PlanInputError naming gpu, team or from
    when the scope holds no GPU usage rows. Call plan_scope_for_user first: this reads what it is given."""
    raise NotImplementedError


def plan_utilization_rows(scope: PlanScope, usage: UsageRows) -> UtilizationRows:
    """Stored hourly utilization in the scope's period, of the resources `usage` holds (so a scope
    never reaches another team's machines), averaged over each resource's GPUs per hour, as 0..1."""
    raise NotImplementedError
