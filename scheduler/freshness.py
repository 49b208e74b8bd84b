"""When a price is stale: older than twice the schedule that refreshes it.

Spot prices are refreshed hourly, list prices (on-demand, reserved, savings plans) daily
(scheduler/schedule.py), so a spot price is stale after 2 hours and a list price after 2 days. The
API and every report that shows a price mark it stale with this one rule. Prices that no schedule
refreshes (the bundled snapshot, imported files) go stale after GPULEDGER_SNAPSHOT_STALE_DAYS instead
(pricing.selectors.with_staleness).
"""

from __future__ import annotations

import datetime as dt

from scheduler.schedule import SCHEDULE

# Which scheduled source keeps each pricing model fresh.
SOURCE_OF_PRICING_MODEL = {
    "spot": "aws-spot",
    "on_demand": "aws-on-demand",
    "reserved_1y": "aws-on-demand",
    "reserved_3y": "aws-on-demand",
    "savings_plan_1y": "aws-savings-plans",
    "savings_plan_3y": "aws-savings-plans",
}


def stale_after(pricing_model: str) -> dt.timedelta:
    """Twice the refresh period of the source that keeps `pricing_model` fresh."""
    source = SOURCE_OF_PRICING_MODEL.get(pricing_model, "aws-on-demand")
    period_s = next(job.every_seconds for job in SCHEDULE if job.kwargs.get("source") == source)
    return dt.timedelta(seconds=2 * period_s)


def stale_after_for(refresh_source: str | None, pricing_model: str) -> dt.timedelta:
    """Twice the period of the scheduled source that wrote the price (azure-retail, gcp-billing and
    lambda-cloud each have their own); `stale_after(pricing_model)` for the AWS sources and the rest."""
    period_s = next(
        (
            job.every_seconds
            for job in SCHEDULE
            if refresh_source and _scheduled_by(job.kwargs.get("source"), refresh_source)
        ),
        None,
    )
    if period_s is None or refresh_source in SOURCE_OF_PRICING_MODEL.values():
        return stale_after(pricing_model)
    return dt.timedelta(seconds=2 * period_s)


def _scheduled_by(job_source: str | None, refresh_source: str) -> bool:
    """A job's source is the refresh's source, or the group of sources named "<group>-..." (gpuhunt)."""
    return bool(job_source) and (refresh_source == job_source or refresh_source.startswith(f"{job_source}-"))


def is_stale(pricing_model: str, observed_at: dt.datetime, now: dt.datetime) -> bool:
    return now - observed_at > stale_after(pricing_model)
