"""A lock per (source, region) so that two refreshes of the same prices never overlap.

With Redis configured the lock is a redis-py ``Lock`` (a random token plus a Lua compare-and-delete
on release, so one worker cannot release another's lock). Without ``REDIS_URL`` (development, eager
Celery) it falls back to Django's cache, whose ``add`` is atomic within one process. Every lock
expires on its own after ``ttl_s``, so a worker killed mid-run cannot block the next run forever:
callers pass the task's hard time limit.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from functools import lru_cache
from typing import Protocol

from django.conf import settings
from django.core.cache import cache

LOCK_PREFIX = "gpuledger:refresh-lock"


class LockUnavailable(RuntimeError):
    """The lock's store (Redis) cannot be reached: nobody can say whether another run holds the lock."""


class _Lock(Protocol):
    def acquire(self) -> bool: ...
    def release(self) -> None: ...


def refresh_lock_name(source: str, region: str) -> str:
    return f"{LOCK_PREFIX}:{source}:{region or '-'}"


@contextmanager
def refresh_lock(source: str, region: str, *, ttl_s: int) -> Iterator[bool]:
    """Hold the (source, region) lock for the block; yields False at once when another run holds it.
    Raises LockUnavailable, before the block runs, when Redis cannot be reached."""
    lock = _make_lock(refresh_lock_name(source, region), ttl_s)
    acquired = lock.acquire()  # a refresh never runs unlocked: two could then publish the same prices
    try:
        yield acquired
    finally:
        if acquired:
            lock.release()


def refresh_lock_held(source: str, region: str) -> bool:
    """Does a run hold the (source, region) lock right now? (The orphan sweeper asks before closing.)"""
    name = refresh_lock_name(source, region)
    redis_url = getattr(settings, "REDIS_URL", "")
    if redis_url:
        return bool(_redis_client(redis_url).exists(name))
    return cache.get(name) is not None


def _make_lock(name: str, ttl_s: int) -> _Lock:
    redis_url = getattr(settings, "REDIS_URL", "")
    if redis_url:
        return _RedisLock(_redis_client(redis_url), name, ttl_s)
    return _CacheLock(name, ttl_s)


@lru_cache(maxsize=4)
def _redis_client(url: str):
    import redis

    return redis.Redis.from_url(url)


class _RedisLock:
    def __init__(self, client, name: str, ttl_s: int):
        self._lock = client.lock(name, timeout=ttl_s, blocking=False)

    def acquire(self) -> bool:
        from redis.exceptions import RedisError

        try:
            return bool(self._lock.acquire(blocking=False))
        except RedisError as error:
            raise LockUnavailable(f"Redis (the refresh lock) is unreachable: {error}") from error

    def release(self) -> None:
        from redis.exceptions import LockError, RedisError

        try:
            self._lock.release()
        except LockError:
            pass  # it expired (the run outlived its TTL) and may now belong to another run: leave it
        except RedisError:
            pass  # Redis went away mid-run: the run is recorded either way and the lock expires on its own


class _CacheLock:
    def __init__(self, name: str, ttl_s: int):
        self._name, self._ttl_s, self._token = name, ttl_s, secrets.token_hex(16)

    def acquire(self) -> bool:
        return cache.add(self._name, self._token, timeout=self._ttl_s)

    def release(self) -> None:
        if cache.get(self._name) == self._token:
            cache.delete(self._name)
