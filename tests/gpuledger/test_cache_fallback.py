"""The Redis cache degrades to per-process memory while Redis is unreachable, so a Redis outage slows
nothing down to a 500 (sign-in throttling, API rate counts and cached tables keep working)."""

from __future__ import annotations

import pytest
from django.core.cache.backends.redis import RedisCache

from gpuledger import cache as cache_module
from gpuledger.cache import ResilientRedisCache

CLOSED_PORT_URL = "redis://127.0.0.1:1/0"  # nothing listens on port 1: refused at once


@pytest.fixture
def unreachable():
    return ResilientRedisCache(CLOSED_PORT_URL, {"OPTIONS": {"socket_connect_timeout": 1}})


def test_the_plain_redis_cache_fails_while_redis_is_down():
    import redis

    with pytest.raises(redis.ConnectionError):
        RedisCache(CLOSED_PORT_URL, {}).get("k")


def test_every_operation_falls_back_to_local_memory(unreachable):
    assert unreachable.get("missing", "default") == "default"
    assert unreachable.add("k", 1, timeout=60) is True
    assert unreachable.add("k", 2, timeout=60) is False  # add is still add-if-absent
    assert unreachable.incr("k") == 2
    unreachable.set("other", {"a": 1})
    assert unreachable.get_many(["k", "other"]) == {"k": 2, "other": {"a": 1}}
    assert unreachable.has_key("other")
    unreachable.delete("other")
    assert unreachable.get("other") is None
    with pytest.raises(ValueError):
        unreachable.incr("never-set")  # the same contract as Redis's and local memory's incr


def test_the_fallback_is_logged_not_raised(unreachable, monkeypatch):
    # The logger itself is watched, not the root handlers: a test that starts an in-process Celery
    # worker earlier in the session reconfigures root logging, and caplog then sees nothing.
    warnings = []
    monkeypatch.setattr(
        cache_module.logger, "warning", lambda message, *args: warnings.append(message % args)
    )
    unreachable.get("k")
    unreachable.get("k")
    assert len(warnings) == 1 and "Redis cache unreachable" in warnings[0]  # once a minute
