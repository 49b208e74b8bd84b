"""Owned servers bought in tranches as demand grows, each paid a lead time before its demand arrives.

The plan's owned level is sized for the horizon (planner.py buys it at month 0, the TCO study's model).
With demand growing, the servers a year needs are those whose slice of the stack sees demand that year:
ceil(the busiest hour's GPUs above the commitments / GPUs per server), at most the plan's level, and
never fewer than the year before (a server bought is kept). The servers first needed in plan year y
(demand arriving in month 12y + 1) are bought ``lead_time_months`` before that month (at least one
month: the TCO study pays in month 0 for service from month 1), never before month 0.

Each tranche's cash is the TCO engine's buy side over the months it is held (``options.owned_option``
over the tranche's own horizon: purchase, colocation, maintenance, staff and energy per server, the
residual returned at the plan's horizon at the study's residual share), its purchase moved to the month
it is paid. The cost that follows use (energy above idle, failure cover) is the plan's, unchanged: the
same hours are served.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from planning.engine.errors import PlanInputError
from planning.engine.options import owned_option
from procurement.costing.tco_spec import TcoStudy

DEFAULT_LEAD_TIME_MONTHS = 3  # gpuledger assumption: order to racked GPU servers; give lead_time_months
MAX_LEAD_TIME_MONTHS = 24


@dataclass(frozen=True)
class Tranche:
    year: int  # the plan year (0 = the first) whose demand it serves
    servers: int
    paid_month: int
    in_service_month: int


def servers_needed_by_year(
    peak_gpus_by_year: Sequence[float], *, gpus_per_server: int, level: int
) -> list[int]:
    """Servers each plan year needs: its busiest hour above the commitments in whole servers, capped at
    the plan's level, never fewer than the year before."""
    needed, held = [], 0
    for peak in peak_gpus_by_year:
        held = max(held, min(level, math.ceil(max(peak, 0.0) / gpus_per_server - 1e-9)))
        needed.append(held)
    return needed


def tranche_schedule(servers_by_year: Sequence[int], *, lead_time_months: int) -> list[Tranche]:
    if isinstance(lead_time_months, bool) or not isinstance(lead_time_months, int):
        raise PlanInputError(
            "lead_time_months", f"must be a whole number of months, got {lead_time_months!r}"
        )
    if not 0 <= lead_time_months <= MAX_LEAD_TIME_MONTHS:
        raise PlanInputError(
            "lead_time_months", f"must be 0 to {MAX_LEAD_TIME_MONTHS}, got {lead_time_months}"
        )
    tranches, held = [], 0
    for year, servers in enumerate(servers_by_year):
        if servers > held:
            in_service = 12 * year + 1
            paid = max(0, in_service - max(lead_time_months, 1))
            tranches.append(Tranche(year, servers - held, paid, in_service))
            held = servers
    return tranches


def tranche_fixed_flows(study: TcoStudy, tranches: Sequence[Tranche], *, horizon_months: int) -> np.ndarray:
    """Months 0..H: each tranche's per-server buy flows over the months it is held, times its servers."""
    flows = np.zeros(horizon_months + 1)
    for tranche in tranches:
        held = horizon_months - tranche.in_service_month + 1
        if held < 1:
            continue
        per_server = owned_option(study, horizon_months=held).fixed_flows_per_server
        flows[tranche.paid_month] += tranche.servers * per_server[0]
        start = tranche.in_service_month
        flows[start : start + held] += tranche.servers * per_server[1:]
    return flows
