"""Price ages for reports: days between an ISO 8601 timestamp and the report's build time."""

from __future__ import annotations

import datetime as dt


def parse_time(value: str | None) -> dt.datetime | None:
    if not value:
        return None
    try:
        parsed = dt.datetime.fromisoformat(value)
    except (TypeError, ValueError):
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=dt.UTC)


def age_days(observed: str | None, now: dt.datetime) -> int | None:
    parsed = parse_time(observed)
    return None if parsed is None else max(0, (now - parsed).days)


def stale_by_now(observed: str | None, limit_hours: float | None, now: dt.datetime) -> bool:
    """Has the price aged past its limit since it was stored (docs/provider-prices.md, stale prices)?"""
    parsed = parse_time(observed)
    if parsed is None or limit_hours is None:
        return False
    return now - parsed > dt.timedelta(hours=float(limit_hours))
