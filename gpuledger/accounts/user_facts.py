"""Facts about a user that every request reads (their roles, their teams, the spend their teams were
granted), cached for a minute or until they change, so that a page does not ask the database for
them again on every request.

Each fact is cached under its own key per user (`register_fact` names the ones other apps add).
A change made through the ORM drops the facts of the users it touches at once and again when its
transaction commits (signals.py), so a request that read the old rows meanwhile cannot keep them.
A change that bypasses the signals (raw SQL, `QuerySet.update`) shows within TTL_S. During a Redis
outage the cache falls back to each process's own memory (gpuledger/cache.py), where a drop reaches
only the process that made the change: the others see it within TTL_S. Whether a user is active or a
superuser is read from the user row itself, which Django loads on every request, never from here.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from django.core.cache import cache
from django.db import transaction

TTL_S = 60
_FACTS: set[str] = {"roles", "team_ids"}


def register_fact(name: str) -> None:
    """Another app's per-user fact (AppConfig.ready), so that `forget` drops it too."""
    _FACTS.add(name)


def _key(name: str, user_id: int) -> str:
    return f"gpuledger:user-fact:{name}:{user_id}"


def user_fact(user, name: str, compute: Callable[[Any], Any]) -> Any:
    """The cached value of fact `name` for `user`, computed (from the database) when missing.
    `compute` must return something picklable and not None (an empty tuple for nothing)."""
    if name not in _FACTS:
        raise KeyError(f"unregistered user fact {name!r}: register_fact it so that changes drop it")
    key = _key(name, user.pk)
    value = _prefetched(user, name)
    if value is None:
        value = cache.get(key)
    if value is None:
        value = compute(user)
        cache.set(key, value, TTL_S)
    return value


def _prefetched(user, name: str) -> Any:
    """The fact as read with all of the user's facts in one round trip (MGET) when the first of them was
    asked for on this user object (one request: Django loads the user anew for each), or None. Each
    prefetched value serves one call; and none serves after a `forget` in this process since (a test,
    or a view that changed a role, reads the fact again as it did before)."""
    state = getattr(user, "_gpuledger_fact_prefetch", None)
    if state is None:
        keys = {fact: _key(fact, user.pk) for fact in sorted(_FACTS)}
        found = cache.get_many(list(keys.values()))
        state = (_forgets, {fact: found[key] for fact, key in keys.items() if key in found})
        user._gpuledger_fact_prefetch = state
    made_at, values = state
    if made_at != _forgets:
        return None
    return values.pop(name, None)


_forgets = 0  # forget() calls in this process


def forget(user_ids: Iterable[int | None]) -> None:
    """Drop every cached fact of these users, now and when the current transaction commits."""
    global _forgets
    _forgets += 1
    keys = [_key(name, int(pk)) for pk in set(user_ids) if pk is not None for name in sorted(_FACTS)]
    if keys:
        cache.delete_many(keys)
        transaction.on_commit(lambda: cache.delete_many(keys))
