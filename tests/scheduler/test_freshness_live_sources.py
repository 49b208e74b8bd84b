"""Prices of the live sources beyond AWS go stale by their own schedule, not by AWS spot's."""

import datetime as dt

from scheduler.freshness import stale_after_for


def test_each_live_source_is_stale_after_twice_its_own_period():
    # scheduler/schedule.py: azure-retail and gcp-billing daily, lambda-cloud every 6 hours
    assert stale_after_for("azure-retail", "spot") == dt.timedelta(days=2)
    assert stale_after_for("gcp-billing", "reserved_1y") == dt.timedelta(days=2)
    assert stale_after_for("lambda-cloud", "on_demand") == dt.timedelta(hours=12)


def test_aws_and_unscheduled_sources_keep_the_per_model_rule():
    assert stale_after_for("aws-spot", "spot") == dt.timedelta(hours=2)
    assert stale_after_for("aws-on-demand", "on_demand") == dt.timedelta(days=2)
    assert stale_after_for(None, "spot") == dt.timedelta(hours=2)
