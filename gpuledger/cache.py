"""Django's Redis cache, degraded to this process's memory while Redis is unreachable.

Pages and the API read the cache on every request (sign-in throttling, API rate counts, the prepared
offer table). With the plain RedisCache a Redis outage turns each of those reads into a 500, so an
outage of the cache takes the whole site down. Here every operation that fails with a Redis error is
done on a per-process local-memory cache instead, and logged (once a minute per process): throttling
keeps counting per process, cached values are rebuilt, and nothing is lost that the database holds.
When Redis answers again the next operation uses it. Short socket timeouts keep a Redis that hangs
(rather than refusing) from hanging requests.
"""

from __future__ import annotations

import logging
import time

from django.core.cache.backends.locmem import LocMemCache
from django.core.cache.backends.redis import RedisCache, RedisCacheClient
from redis.exceptions import RedisError

logger = logging.getLogger(__name__)
WARN_EVERY_S = 60
DEGRADED_OPERATIONS = (
    "add",
    "get",
    "set",
    "touch",
    "delete",
    "get_many",
    "has_key",
    "incr",
    "set_many",
    "delete_many",
    "clear",
)


class ReusedClientRedisCacheClient(RedisCacheClient):
    """Django's client makes a new redis.Redis object (and its table of response callbacks) for every
    cache operation: about 0.15 ms each, three or more per request (rate limit, session, cached reads),
    a measurable share of a cached page. One client per connection pool does the same; redis-py's
    clients are thread-safe and take a connection from the pool per command."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._clients = {}

    def get_client(self, key=None, *, write=False):
        pool = self._get_connection_pool(write)
        client = self._clients.get(id(pool))
        if client is None:
            client = self._clients[id(pool)] = self._client(connection_pool=pool)
        return client


class ResilientRedisCache(RedisCache):
    def __init__(self, server, params):
        super().__init__(server, params)
        self._class = ReusedClientRedisCacheClient
        self._fallback = LocMemCache(
            "gpuledger-redis-fallback",
            {"TIMEOUT": params.get("TIMEOUT", 300), "OPTIONS": {"MAX_ENTRIES": 2000}},
        )
        self._warned_at = float("-inf")

    def _degraded(self, operation: str, error: RedisError):
        now = time.monotonic()
        if now - self._warned_at > WARN_EVERY_S:
            self._warned_at = now
            logger.warning("Redis cache unreachable (%s: %s): using this process's memory", operation, error)
        return self._fallback


def _with_fallback(operation: str):
    redis_method = getattr(RedisCache, operation)

    def method(self, *args, **kwargs):
        try:
            return redis_method(self, *args, **kwargs)
        except RedisError as error:
            return getattr(self._degraded(operation, error), operation)(*args, **kwargs)

    method.__name__ = operation
    method.__doc__ = redis_method.__doc__
    return method


for _operation in DEGRADED_OPERATIONS:
    setattr(ResilientRedisCache, _operation, _with_fallback(_operation))
