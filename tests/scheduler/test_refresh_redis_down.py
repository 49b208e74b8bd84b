"""A refresh started while Redis (its lock) is unreachable does not run unlocked: it records a failed
PriceRefresh row saying why, and stores no price. (tests/faults/test_redis_stopped.py does the same
against a real Redis that is stopped.)"""

from __future__ import annotations

import pytest

from pricing.models import PriceObservation
from pricing.sources.refresh import refresh_run
from pricing.sources.registry import Fetch, Source
from scheduler.locks import LockUnavailable
from scheduler.models import PriceRefresh, RefreshStatus

CLOSED_PORT_URL = "redis://127.0.0.1:1/0"  # port 1: nothing listens, the connection is refused at once


def _never_fetched(region, now) -> Fetch:
    raise AssertionError("a refresh without its lock must not fetch")


@pytest.mark.django_db
def test_a_refresh_with_redis_unreachable_records_its_failure_and_stores_nothing(settings):
    settings.REDIS_URL = CLOSED_PORT_URL
    with pytest.raises(LockUnavailable, match="Redis"):
        refresh_run(Source("faults-csv", _never_fetched, lambda: ["r"]), "r")
    refresh = PriceRefresh.objects.get()
    assert (refresh.source, refresh.region, refresh.status) == ("faults-csv", "r", RefreshStatus.FAILED)
    assert refresh.error.startswith("LockUnavailable: Redis (the refresh lock) is unreachable: ")
    assert refresh.finished_at is not None
    assert not PriceObservation.objects.exists()
