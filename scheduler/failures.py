"""How many runs of a (source, region) failed in a row: the PriceRefresh bookkeeping the refresh and the
orphan sweep both keep."""

from __future__ import annotations

from scheduler.models import PriceRefresh, RefreshStatus


def failures_before(source: str, region: str) -> int:
    """How many runs of (source, region) failed in a row before now (skipped runs do not count)."""
    last = (
        PriceRefresh.objects.filter(source=source, region=region)
        .exclude(status__in=[RefreshStatus.SKIPPED, RefreshStatus.RUNNING])
        .order_by("-started_at", "-pk")
        .first()
    )
    return last.failures_in_a_row if last is not None and last.status == RefreshStatus.FAILED else 0
