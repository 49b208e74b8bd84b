"""Facts about a user that every request reads (their roles, their teams, the spend their teams were
granted), cached so that a page does not ask the database for them again on every request.

Each fact is cached under its own key per user (`register_fact` names the ones other apps add), keyed
by the access version (gpuledger/data_versions.py): any change to users, groups, teams, their members
or spend grants bumps it in the writer's transaction, so the next read, in any process, Redis up or
down, computes the facts anew. Whether a user is active or a superuser is read from the user row
itself, which Django loads on every request, never from here.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.core.cache import cache

from gpuledger.data_versions import versions_key
from gpuledger.versioned_cache import KEEP_SECONDS

DEPENDS_ON = ("access",)
_FACTS: set[str] = {"roles", "team_ids"}


def register_fact(name: str) -> None:
    """Another app's per-user fact (AppConfig.ready), read with the others in one round trip."""
    _FACTS.add(name)


def _key(name: str, user_id: int, version: str) -> str:
    return f"gpuledger:user-fact:{name}:{user_id}:{version}"


def user_fact(user, name: str, compute: Callable[[Any], Any]) -> Any:
    """The cached value of fact `name` for `user`, computed (from the database) when missing.
    `compute` must return something picklable and not None (an empty tuple for nothing)."""
    if name not in _FACTS:
        raise KeyError(f"unregistered user fact {name!r}: register_fact it where its app is ready")
    version = versions_key(DEPENDS_ON)
    key = _key(name, user.pk, version)
    value = _prefetched(user, name, version)
    if value is _UNREAD:
        value = cache.get(key)
    if value is None:
        value = compute(user)
        cache.set(key, value, KEEP_SECONDS)
    return value


_UNREAD = object()  # not in this user's prefetch: ask the cache


def _prefetched(user, name: str, version: str) -> Any:
    """The fact as read with all of the user's facts in one round trip (MGET) when the first of them was
    asked for on this user object (one request: Django loads the user anew for each): None when that
    read just found it missing, _UNREAD when the prefetch cannot tell (made earlier). Each
    prefetched value serves one call, and only at the access version it was read at (a view that
    changed a role, or a test, reads the fact again)."""
    state = getattr(user, "_gpuledger_fact_prefetch", None)
    if state is None or state[0] != version:
        keys = {fact: _key(fact, user.pk, version) for fact in sorted(_FACTS)}
        found = cache.get_many(list(keys.values()))
        state = (version, {fact: found[key] for fact, key in keys.items() if key in found})
        user._gpuledger_fact_prefetch = state
        return state[1].pop(name, None)
    return state[1].pop(name, _UNREAD)
