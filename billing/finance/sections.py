"""The review's showback, budget and anomaly sections (JSON), from the engines allocation.py,
budgets.py and anomalies.py over the rows finance/selectors.py reads. Django side, thin."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from urllib.parse import urlencode

import numpy as np
import pandas as pd
from django.urls import reverse

from billing.choices import SpendScope
from billing.finance import anomalies
from billing.finance import selectors as finance_selectors
from billing.finance.allocation import DEFAULT_RULE, AllocationError, allocate, per_team_frame
from billing.finance.budgets import FORECAST_METHOD, budget_status
from billing.models import BudgetAlert
from billing.review.engine import (
    MICRO,
    UNTAGGED,
    ReviewInputError,
    ReviewRequest,
    _converted,
    _filtered,
    _in_period,
    hours,
    money,
    scope_masks,
    unattributed_mask,
    with_attribution,
)
from billing.review.fx_months import rate_of
from billing.review.selectors import review_fx, review_fx_months
from billing.storage import review_sql
from billing.storage.allocation_frames import TeamSum
from billing.storage.frame_sql import FrameSql
from procurement.costing.values import round_money

# the budgets' burn: GPU usage and the unused commitments of GPU instance types (gpu_rows on rows read
# without commitment attribution), as the daily summary scopes them
BUDGET_SCOPES = [SpendScope.GPU.value, SpendScope.GPU_UNUSED_COMMITMENT.value]
MAX_ANOMALIES = 100  # the largest by size; `found` says how many there were
MAX_BUDGET_MONTHS = 37  # a review covers at most three years
RULE_TEXT = {
    "proportional": "shared and idle GPU cost allocated in proportion to each team's GPU-hours",
    "even": "shared and idle GPU cost split evenly across the teams in scope",
    "unallocated": "shared and idle GPU cost left unallocated, as its own line",
}
ANOMALY_METHOD = (
    "daily GPU spend not fixed by a commitment (its used and unused hours are left out; an unused commitment "
    "is one finding) "
    f"per team and service against the median of the previous {anomalies.WINDOW_DAYS} days; "
    f"an anomaly departs from it by more than {anomalies.K} × 1.4826 × MAD (MAD = 0: 1.253314 × the mean "
    f"absolute deviation) and by at least {anomalies.MIN_AMOUNT_MICROS // MICRO} in the review currency; a "
    f"series is judged after {anomalies.MIN_BASELINE_DAYS} days of history"
)


def gpu_rows(frame: pd.DataFrame, request: ReviewRequest) -> pd.DataFrame:
    """The GPU spend rows (usage and unused commitments, as the review counts them) in the review currency."""
    usage, unused = scope_masks(frame)
    return _converted(frame[usage | unused], request)


def next_month(month: dt.date) -> dt.date:
    return (month.replace(day=1) + dt.timedelta(days=32)).replace(day=1)


def allocation_section(request: ReviewRequest, utilization: pd.DataFrame | None) -> dict:
    """The `allocation` section: the per-team sums from SQL over the bill (finance_selectors.allocation_sums,
    the team scope and the filters in its WHERE), converted, then the rule applied to them."""
    per_team = per_team_frame(
        converted_team_sums(finance_selectors.allocation_sums(request, utilization), request)
    )
    rule, note = request.allocation or DEFAULT_RULE, ""
    try:
        result = allocate(per_team, rule)
    except AllocationError as error:
        if request.allocation:  # asked for by name: the caller hears why
            raise ReviewInputError(error.field, error.message) from None
        result, note = allocate(per_team, "unallocated"), f"{error.message}; left unallocated"
    currency = request.currency
    teams = [
        {
            "team": line.team,
            "direct_cost": money(line.direct_micros, currency),
            "own_idle_cost": money(line.own_idle_micros, currency),
            "allocated_shared_cost": money(line.shared_micros, currency),
            "allocated_idle_cost": money(line.idle_micros, currency),
            "showback_cost": money(line.showback_micros, currency),
            "gpu_hours": hours(line.gpu_hours_micros),
        }
        for line in result.teams
    ]
    return {
        "rule": result.rule,
        "rule_description": RULE_TEXT[result.rule],
        "note": note,
        "shared_cost": money(result.shared_pool_micros, currency),
        "idle_cost": money(result.idle_pool_micros, currency),
        "unallocated_cost": money(result.unallocated_micros, currency),
        "teams": teams,
    }


def converted_team_sums(sums: list[TeamSum], request: ReviewRequest) -> list[TeamSum]:
    """The lines of allocation_sql.TEAM_SUMS in the review currency: each line's effective and idle cost
    at its charge month's rate, rounded to the micro-unit (half to even, as engine._converted rounds);
    a line of a month without a rate is left out, as the review leaves its rows out (and warns)."""
    found = []
    for team, currency, month, effective, idle, gpu_hours in sums:
        rate = rate_of(request, currency, month)
        if rate is None:
            continue
        if rate != 1:
            effective, idle = (
                int((Decimal(value) * rate).to_integral_value()) for value in (effective, idle)
            )
        found.append((team, request.currency, month, effective, idle, gpu_hours))
    return found


def under_commitment(rows: pd.DataFrame) -> np.ndarray:
    """Rows whose cost a commitment fixes (its used and unused hours, committed pricing): a day of them
    is not spend that swings, so no anomaly; an unused commitment is one finding (unused_commitments)."""
    status = rows["commitment_status"].astype(object)
    committed = (rows["pricing_category"].astype(object) == "committed").to_numpy(bool)
    return status.isin(["used", "unused"]).to_numpy(bool) | committed


def _anomaly_rows(frame: pd.DataFrame, request: ReviewRequest) -> pd.DataFrame:
    rows = gpu_rows(_filtered(frame, request), request)
    rows = rows[~under_commitment(rows)]
    starts = pd.DatetimeIndex(rows["charge_period_start"]).tz_convert("UTC").tz_localize(None)
    team = rows["team"].astype(object)
    service = rows["service_category"].astype(object)
    return pd.DataFrame(
        {
            "day": starts.floor("D"),
            "team": team.where(team != "", UNTAGGED).to_numpy(),
            "provider": rows["provider"].astype(object).to_numpy(),
            "service": service.where(service != "", "other").to_numpy(),
            "effective_micros": rows["effective_micros"].to_numpy(np.int64),
            "resource_id": rows["resource_id"].astype(object).to_numpy(),
            "instance_type": rows["instance_type"].astype(object).to_numpy(),
            "region": rows["region"].astype(object).to_numpy(),
            "pricing_category": rows["pricing_category"].astype(object).to_numpy(),
            "gpu_hours_micros": rows["gpu_hours_micros"].to_numpy(np.int64),
        }
    )


def _rows(start: dt.date, end: dt.date, request: ReviewRequest, read: pd.DataFrame | None) -> pd.DataFrame:
    """The rows of [start, end): from `read` (the review's own frame, rows of [request.previous start,
    request.end) in its scope) when it covers them, else read again."""
    if read is not None and request.previous[0] <= start and end <= request.end:
        return _in_period(read, start, end)
    return finance_selectors.rows_frame(start, end, request.allowed_teams)


def _summary_anomaly_rows(summary: pd.DataFrame, request: ReviewRequest) -> pd.DataFrame:
    """_anomaly_rows' series from the daily summary (models.DailySpend): GPU usage not under a commitment,
    per team, provider, service and day, in the review currency."""
    gpu = (summary["scope"] == SpendScope.GPU).to_numpy(bool)
    picked = summary[gpu & ~under_commitment(summary)]
    rows = _converted(_filtered(picked, request), request)
    team, service = rows["team"].astype(object), rows["service_category"].astype(object)
    return pd.DataFrame(
        {
            "day": pd.DatetimeIndex(rows["charge_period_start"]).tz_convert("UTC").tz_localize(None),
            "team": team.where(team != "", UNTAGGED).to_numpy(),
            "provider": rows["provider"].astype(object).to_numpy(),
            "service": service.where(service != "", "other").to_numpy(),
            "effective_micros": rows["effective_micros"].to_numpy(np.int64),
        }
    )


def _anomaly_series(start: dt.date, request: ReviewRequest, read: pd.DataFrame | None) -> pd.DataFrame:
    """The rows of the anomaly series of [start, request.end): from the daily summary where it holds the
    period (a review filtered by project reads the files: the summary has no project), else as read."""
    if not request.project:
        summary = finance_selectors.daily_spend_frame(start, request.end, request.allowed_teams)
        if summary is not None:
            return _summary_anomaly_rows(summary, request)
    return _anomaly_rows(_rows(start, request.end, request, read), request)


def anomalies_between(request: ReviewRequest, read: pd.DataFrame | None = None) -> dict:
    """Anomalies of the days in [start, end), read with the WINDOW_DAYS before for their baseline."""
    baseline_start = request.start - dt.timedelta(days=anomalies.WINDOW_DAYS)
    rows = _anomaly_series(baseline_start, request, read)
    found = anomalies.detect(rows, check_from=request.start, check_to=request.end)
    shown = found.reindex(found["excess_micros"].abs().sort_values(ascending=False).index)[:MAX_ANOMALIES]
    granted = bool(request.allowed_teams)
    days = sorted({day.date() for day in shown["day"]})
    # the frame read sums teams' days (no resource): the top rows of each anomaly's day are read apart
    drivers = (
        _anomaly_rows(finance_selectors.anomaly_driver_rows(days, request.allowed_teams), request)
        if days
        else rows
    )
    items = [
        _anomaly(item, drivers, request.currency, granted)
        for item in shown.sort_values(["day", "team"]).itertuples()
    ]
    period_rows = _rows(request.start, request.end, request, read)
    return {
        "method": ANOMALY_METHOD,
        "found": len(found),
        "items": items,
        "unused_commitments": unused_commitments(period_rows, request),
        "unused_non_gpu_commitments": unused_commitments(period_rows, request, coverage="non_gpu"),
        "unused_undetermined_commitments": unused_commitments(period_rows, request, coverage="undetermined"),
    }


# A commitment the bill does not say is GPU or not (commitment_attribution.py: no instance type or family
# to tell, and no usage of its own to attribute by): its unused cost is one finding of its own, labelled.
COVERAGE_UNDETERMINED = "coverage undetermined"
# what a finding reads of an unused row (the charge month picks its FX rate)
UNUSED_READ = ["charge_period_start", "commitment_discount_id", "currency", "effective_micros"]


def unused_commitments(frame: pd.DataFrame, request: ReviewRequest, *, coverage: str = "gpu") -> list[dict]:
    """One finding per commitment with unused cost in the period (issue 28: not one anomaly a day): the
    days it went unused, the first and last of them and the unused cost, largest first. `coverage` picks
    which unused cost: "gpu" (attributed to GPU spend, as the review does), "non_gpu" (a commitment of
    instance types without a GPU, commitment_attribution.py's rule 2) or "undetermined" (the review's
    unattributed commitment cost: the bill cannot tell; each finding says so in `coverage`). None of them
    is ever a daily anomaly (anomalies read GPU spend not fixed by a commitment)."""
    rows = unused_rows(frame, request, coverage=coverage)
    if rows.empty:
        return []
    with FrameSql() as sql:  # review_sql.UNUSED_FINDINGS: the sums by commitment in DuckDB
        found = sql.register("spend", rows).rows(review_sql.UNUSED_FINDINGS)
    label = {"coverage": COVERAGE_UNDETERMINED} if coverage == "undetermined" else {}
    return [
        {
            "commitment_id": name or "(no commitment id in the bill)",
            "days_unused": int(days),
            "first_day": first.isoformat(),
            "last_day": last.isoformat(),
            "unused_cost": money(int(micros), request.currency),
            **label,
        }
        for name, days, first, last, micros in found
    ]


def unused_rows(frame: pd.DataFrame, request: ReviewRequest, *, coverage: str = "gpu") -> pd.DataFrame:
    """The rows unused_commitments sums by review_sql.UNUSED_FINDINGS (the relation `spend`): the period's
    unused rows of one coverage in the request's scope, attributed and converted at each charge month's rate
    (UNUSED_READ columns). The Spark test feeds these same rows (test_spark_review.py)."""
    period = with_attribution(_filtered(_in_period(frame, request.start, request.end), request), request)
    return _converted(period.loc[_unused_of(period, coverage), UNUSED_READ], request)


def _unused_of(period: pd.DataFrame, coverage: str) -> np.ndarray:
    """The unused rows of one coverage: the three never overlap, and together they are every unused row."""
    to_gpu = scope_masks(period)[1]
    undetermined = unattributed_mask(period)
    if coverage == "gpu":
        return to_gpu
    if coverage == "undetermined":
        return undetermined
    if coverage != "non_gpu":
        raise ValueError(f"unknown commitment coverage {coverage!r}")
    return (period["commitment_status"] == "unused").to_numpy(bool) & ~to_gpu & ~undetermined


def _anomaly(item, rows: pd.DataFrame, currency: str, granted: bool) -> dict:
    baseline, excess = int(round(item.baseline_micros)), int(round(item.excess_micros))
    drivers = anomalies.top_rows(
        rows,
        item,
        [
            "resource_id",
            "instance_type",
            "region",
            "pricing_category",
            "effective_micros",
            "gpu_hours_micros",
        ],
    )
    day = item.day.date()
    query = {"day": day.isoformat(), "team": item.team, "provider": item.provider, "service": item.service}
    return {
        "day": day.isoformat(),
        "team": item.team,
        "provider": item.provider,
        "service": item.service,
        "amount": money(item.effective_micros, currency),
        "baseline": money(baseline, currency),
        "excess": money(excess, currency),
        "direction": "spike" if excess > 0 else "drop",
        "excess_pct": str((Decimal(excess) / baseline * 100).quantize(Decimal("0.1")))
        if baseline > 0
        else None,
        "mad": money(int(round(item.mad_micros)), currency),
        "score": f"{abs(excess) / item.scale_micros:.1f}" if item.scale_micros > 0 else None,
        "top_rows": [
            {
                "resource_id": r.resource_id,
                "instance_type": r.instance_type,
                "region": r.region,
                "pricing_category": r.pricing_category,
                "effective_cost": money(r.effective_micros, currency),
                "gpu_hours": hours(r.gpu_hours_micros),
            }
            for r in drivers.itertuples()
        ],
        # the rows page is finance and admin only: a granted engineer's review gets no link to it
        "rows_link": None if granted else f"{reverse('billing-spend-rows')}?{urlencode(query)}",
    }


def budget_months(start: dt.date, end: dt.date) -> list[dt.date]:
    months, month = [], start.replace(day=1)
    while month < end and len(months) < MAX_BUDGET_MONTHS:
        months.append(month)
        month = next_month(month)
    return months


def budget_states(
    months: list[dt.date],
    teams: tuple[str, ...] = (),
    *,
    review: ReviewRequest | None = None,
    read: pd.DataFrame | None = None,
) -> list[dict]:
    """Every budget of `months` (of `teams` only, when given) with its burn, forecast and overrun date.
    `review` and `read`: a review request of the same teams and the rows it read, used where they cover
    a month."""
    budgets = finance_selectors.budgets_of(months, teams)
    states = []
    for month in sorted({budget.month for budget in budgets}):
        following = next_month(month)
        scope = review.allowed_teams if review is not None else teams
        summary = finance_selectors.daily_spend_frame(month, following, scope)
        if summary is not None:  # the daily summary holds the month: its GPU rows (gpu_rows' scope)
            frame = summary[summary["scope"].isin(BUDGET_SCOPES).to_numpy(bool)]
        elif review is not None:
            frame = _rows(month, following, review, read)
        else:
            frame = finance_selectors.rows_frame(month, following, teams)
        through = finance_selectors.data_through(month, following)
        of_month = [budget for budget in budgets if budget.month == month]
        for currency in sorted({budget.currency for budget in of_month}):
            request = ReviewRequest(
                start=month,
                end=following,
                currency=currency,
                fx_to_currency=review_fx(currency),
                fx_months=review_fx_months(currency, month, following),
            )
            daily = _daily_by_team(
                _converted(frame, request) if summary is not None else gpu_rows(frame, request)
            )
            states += [
                _budget_state(b, daily.get(b.team, {}), through) for b in of_month if b.currency == currency
            ]
    return states


def _daily_by_team(rows: pd.DataFrame) -> dict[str, dict[dt.date, Decimal]]:
    """The burn per team and charge day (UTC) of `rows` (converted, in the budget's currency), summed in
    DuckDB (review_sql.BUDGET_DAILY)."""
    if rows.empty:
        return {}
    columns = rows[["team", "charge_period_start", "effective_micros"]]
    with FrameSql() as sql:
        found = sql.register("budget_rows", columns).rows(review_sql.BUDGET_DAILY)
    by_team: dict[str, dict[dt.date, Decimal]] = {}
    for team, day, micros in found:
        by_team.setdefault(team, {})[day] = Decimal(int(micros)) / MICRO
    return by_team


def _budget_state(budget, daily: dict[dt.date, Decimal], through: dt.date) -> dict:
    status = budget_status(amount=budget.amount, month=budget.month, daily_spend=daily, data_through=through)
    currency = budget.currency
    sent = sorted(BudgetAlert.objects.filter(budget=budget).values_list("threshold_pct", flat=True))
    return {
        "id": budget.pk,
        "team": budget.team,
        "month": f"{budget.month:%Y-%m}",
        "currency": currency,
        "amount": _decimal_money(budget.amount, currency),
        "burn": _decimal_money(status.burn, currency),
        "burn_pct": _text(status.burn_pct),
        "forecast": _decimal_money(status.forecast, currency),
        "forecast_pct": _text(status.forecast_pct),
        "forecast_method": FORECAST_METHOD,
        "days_so_far": status.days_so_far,
        "days_in_month": status.days_in_month,
        "data_through": through.isoformat(),
        "overrun_date": status.overrun_date.isoformat() if status.overrun_date else None,
        "state": status.state,
        "thresholds_crossed": list(status.thresholds_crossed),
        "alerts_sent": sent,
    }


def _decimal_money(value: Decimal, currency: str) -> str:
    return str(round_money(value, currency))


def _text(value) -> str | None:
    return None if value is None else str(value)


def finance_review(frame: pd.DataFrame, request: ReviewRequest, utilization: pd.DataFrame | None) -> dict:
    """The keys the review gains (docs/billing.md): `allocation`, `budgets`, `anomalies`."""
    months = budget_months(request.start, request.end)
    return {
        "allocation": allocation_section(request, utilization),
        "budgets": [
            state
            for state in budget_states(months, request.allowed_teams, review=request, read=frame)
            if not request.team or state["team"] == request.team
        ],
        "anomalies": anomalies_between(request, frame),
    }
