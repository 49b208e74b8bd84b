"""Commitments in force: the reservations and savings plans the bills show, as supply already bought
(docs/capacity-plan.md, "Commitments in force"). Plain numpy over UsageRows; no ORM.

For each commitment id of a fleet's rows:
- used GPU-hours and cost: its used rows (the review's committed usage);
- unused GPU-hours: its unused rows' cost at the commitment's own rate (the bills charge unused hours at
  the committed rate: an unused row carries cost, not hours);
- rate = used cost / used GPU-hours, per GPU-hour;
- GPUs = its committed GPU-hours (used + unused) of the history's last 7 days / 168 h: what is in force
  now, not the average of a history in which it may have grown;
- end: the export's end of term (CUR reservation/EndTime, savings plan end) where given. Without one the
  plan assumes it runs through the horizon and says so, as a renewal to decide ("end not in the bills").

The plan counts its GPUs through each whole month it covers (PlanInputs.in_force.gpus_by_month) and its
payments (GPUs x rate x 730 h a month) until it ends; one that ends inside the horizon is listed as a
renewal, and the plan may renew it from the month it ends (coefficients.Periods, the renewal layer).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

import numpy as np

from planning.engine.demand import UsageRows
from planning.engine.plan_model import CommitmentsInForce
from procurement.costing.values import HOURS_PER_MONTH

RECENT_HOURS = 168  # the window whose committed GPUs say what is in force now
MICRO = 1_000_000


@dataclass(frozen=True)
class Commitment:
    commitment_id: str
    gpus: float
    rate_per_gpu_hour: float
    used_gpu_hours: float
    unused_gpu_hours: float
    end_hour: int | None  # None: not in the bills

    def end_text(self) -> str:
        if self.end_hour is None:
            return "not in the bills"
        return (dt.datetime(1970, 1, 1, tzinfo=dt.UTC) + dt.timedelta(hours=self.end_hour)).date().isoformat()


def commitments_of(usage: UsageRows, *, end_hour: int) -> list[Commitment]:
    """The commitments of ``usage``'s rows (commitment id set), largest first."""
    ids = usage.commitment_id
    if ids is None:
        return []
    ends = usage.commitment_end_hour
    found = []
    for commitment_id in sorted(set(ids.tolist()) - {""}):
        rows = ids == commitment_id
        used, unused = rows & ~usage.unused_commitment, rows & usage.unused_commitment
        used_hours = float(usage.gpu_hours[used].sum())
        if used_hours <= 0:
            continue  # no rate to read the unused cost with: nothing says how many GPUs it holds
        rate = float(usage.effective_cost_micros[used].sum()) / MICRO / used_hours
        committed = usage.gpu_hours * used + usage.effective_cost_micros / MICRO / rate * unused
        gpus = _recent_mean(usage, committed, rows, end_hour)
        known_ends = ends[rows][ends[rows] >= 0] if ends is not None else np.zeros(0)
        found.append(
            Commitment(
                commitment_id,
                round(gpus, 3),
                round(rate, 6),
                used_hours,
                float((usage.effective_cost_micros[unused] / MICRO / rate).sum()),
                int(known_ends.max()) if known_ends.size else None,
            )
        )
    return sorted(found, key=lambda item: (-item.gpus, item.commitment_id))


def _recent_mean(usage: UsageRows, committed: np.ndarray, rows: np.ndarray, end_hour: int) -> float:
    """Mean committed GPUs over the last RECENT_HOURS before ``end_hour`` (rows spread evenly)."""
    start = end_hour - RECENT_HOURS
    starts, ends = usage.start_hour[rows], np.maximum(usage.end_hour[rows], usage.start_hour[rows] + 1)
    overlap = np.clip(np.minimum(ends, end_hour) - np.maximum(starts, start), 0, None)
    return float((committed[rows] * overlap / (ends - starts)).sum() / RECENT_HOURS)


def in_force_inputs(
    commitments: list[Commitment], *, history_end_hour: int, horizon_months: int
) -> CommitmentsInForce | None:
    """The engine's CommitmentsInForce: GPUs through each whole plan year, payments month by month.
    Plan month m (1..H) runs from the history's end + (m - 1) x 730 h."""
    if not commitments:
        return None
    years = -(-horizon_months // 12)
    year_end_month = np.minimum(12 * (np.arange(years) + 1), horizon_months)
    gpus_by_year = np.zeros(years)
    gpus_by_month = np.zeros(horizon_months + 1)
    monthly = np.zeros(horizon_months + 1)
    month_start = history_end_hour + (np.arange(horizon_months + 1) - 1) * HOURS_PER_MONTH_FLOAT
    for item in commitments:
        if item.end_hour is None:
            through_year, paid = np.ones(years, bool), np.ones(horizon_months + 1, bool)
        else:
            through_year = history_end_hour + year_end_month * HOURS_PER_MONTH_FLOAT <= item.end_hour
            paid = month_start < item.end_hour
        paid[0] = False
        gpus_by_year += np.where(through_year, item.gpus, 0.0)
        # in force through the whole month: the month it ends is planned without it (a renewal starts then)
        through_month = (
            paid if item.end_hour is None else month_start + HOURS_PER_MONTH_FLOAT <= item.end_hour
        )
        gpus_by_month += np.where(through_month & paid, item.gpus, 0.0)
        # a month cut by the end pays its share of the month
        share = np.clip((item.end_hour - month_start) / HOURS_PER_MONTH_FLOAT, 0, 1) if item.end_hour else 1.0
        monthly += np.where(paid, item.gpus * item.rate_per_gpu_hour * HOURS_PER_MONTH_FLOAT * share, 0.0)
    names = ", ".join(
        f"{item.commitment_id} ({item.gpus:g} GPUs, ends {item.end_text()})" for item in commitments
    )
    return CommitmentsInForce(
        gpus_by_year, monthly, source=f"in force in the bills: {names}", gpus_by_month=gpus_by_month
    )


HOURS_PER_MONTH_FLOAT = float(HOURS_PER_MONTH)


def renewals(commitments: list[Commitment], *, history_end_hour: int, horizon_months: int) -> list[dict]:
    """The commitments that end inside the horizon (or whose end the bills do not give): to decide."""
    horizon_end = history_end_hour + horizon_months * HOURS_PER_MONTH_FLOAT
    found = []
    for item in commitments:
        if item.end_hour is not None and item.end_hour > horizon_end:
            continue
        month: int | None = None
        if item.end_hour is None:
            decide = (
                "end not in the bills: assumed in force through the horizon; give its end (CUR "
                "reservation/EndTime) to plan its renewal"
            )
        else:
            month = max(1, int(-(-(item.end_hour - history_end_hour) // HOURS_PER_MONTH_FLOAT)))
            decide = _decide(item, item.end_hour, history_end_hour, month)
        found.append(
            {
                "commitment_id": item.commitment_id,
                "gpus": item.gpus,
                "ends": item.end_text(),
                "plan_month": month,
                "rate_per_gpu_hour": f"{item.rate_per_gpu_hour:.6f}",
                "decide": decide,
            }
        )
    return found


def _decide(item: Commitment, end_hour: int, history_end_hour: int, end_month: int) -> str:
    """What to decide about a commitment ending inside the horizon, and what the plan already did: it
    counts a commitment through the whole months it covers, and from the month it ends its GPUs are
    the plan's renewal layer (a commitment signed that month) or the market's, whichever is cheaper."""
    return (
        f"renew, or let it end: the plan counts its {item.gpus:g} GPUs through month {end_month - 1} and "
        f"takes them from month {end_month}, the month it ends (the plan's renewal layer, a commitment "
        "signed that month, where cheaper than the market); no GPU is bought twice while it runs"
    )
