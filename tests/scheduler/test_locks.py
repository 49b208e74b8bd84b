"""One refresh per (source, region) at a time, through Redis or the cache fallback."""

from __future__ import annotations

import threading

import pytest
from django.core.cache import cache

from scheduler.locks import refresh_lock, refresh_lock_name


@pytest.fixture(params=["cache", "redis"])
def lock_backend(request, settings):
    """Run each lock test on the Django-cache fallback and, where configured, on Redis."""
    if request.param == "redis":
        request.getfixturevalue("require_redis")
    else:
        settings.REDIS_URL = ""
        cache.clear()
    yield request.param
    if request.param == "redis":
        import redis

        redis.Redis.from_url(settings.REDIS_URL).delete(refresh_lock_name("aws-spot", "us-east-1"))


def test_it_refuses_a_second_holder_of_the_same_source_and_region(lock_backend):
    with refresh_lock("aws-spot", "us-east-1", ttl_s=60) as first:
        with refresh_lock("aws-spot", "us-east-1", ttl_s=60) as second:
            assert (first, second) == (True, False)
        with refresh_lock("aws-spot", "us-west-2", ttl_s=60) as other_region:
            assert other_region is True
        with refresh_lock("aws-on-demand", "us-east-1", ttl_s=60) as other_source:
            assert other_source is True


def test_it_frees_the_lock_when_the_block_ends_even_on_error(lock_backend):
    with pytest.raises(RuntimeError), refresh_lock("aws-spot", "us-east-1", ttl_s=60):
        raise RuntimeError("refresh failed half-way")
    with refresh_lock("aws-spot", "us-east-1", ttl_s=60) as again:
        assert again is True


def test_it_lets_exactly_one_of_many_concurrent_threads_in(lock_backend):
    results: list[bool] = []
    inside = threading.Barrier(8)
    done = threading.Event()

    def contender():
        inside.wait()
        with refresh_lock("aws-spot", "us-east-1", ttl_s=60) as acquired:
            results.append(acquired)
            if acquired:
                done.wait(timeout=5)  # hold it while the others try

    threads = [threading.Thread(target=contender) for _ in range(8)]
    for thread in threads:
        thread.start()
    while len(results) < 8 and any(t.is_alive() for t in threads):
        if results.count(False) == 7:
            break
        threading.Event().wait(0.01)
    done.set()
    for thread in threads:
        thread.join(timeout=10)
    assert sorted(results) == [False] * 7 + [True]


def test_it_names_locks_by_source_and_region():
    assert refresh_lock_name("aws-spot", "eu-west-1") == "gpuledger:refresh-lock:aws-spot:eu-west-1"
    assert refresh_lock_name("catalog", "") == "gpuledger:refresh-lock:catalog:-"
