"""A price is stale when older than twice its refresh period (spot hourly, list prices daily)."""

import datetime as dt

from scheduler.freshness import is_stale, stale_after

NOW = dt.datetime(2026, 11, 30, 12, tzinfo=dt.UTC)


def test_it_marks_spot_stale_after_two_hours_and_list_prices_after_two_days():
    assert stale_after("spot") == dt.timedelta(hours=2)
    assert stale_after("on_demand") == stale_after("reserved_3y") == dt.timedelta(days=2)
    assert not is_stale("spot", NOW - dt.timedelta(hours=2), NOW)
    assert is_stale("spot", NOW - dt.timedelta(hours=2, seconds=1), NOW)
    assert not is_stale("on_demand", NOW - dt.timedelta(hours=47), NOW)
    assert is_stale("reserved_1y", NOW - dt.timedelta(days=3), NOW)
