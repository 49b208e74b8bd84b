"""Sign-in throttling (failures per user name and client address, in the cache) and API rate limits.

After LOGIN_FAILURE_LIMIT failed sign-ins for one user name from one address within LOGIN_WINDOW, every
further attempt is refused (even with the right password) until the window has passed: a password
cannot be guessed faster than that, and the right password after 20 wrong ones does not get in.
"""

from __future__ import annotations

import hashlib

from django.conf import settings
from django.core.cache import cache
from rest_framework.throttling import AnonRateThrottle, UserRateThrottle

LOGIN_FAILURE_LIMIT = getattr(settings, "GPULEDGER_LOGIN_FAILURE_LIMIT", 5)
LOGIN_WINDOW_SECONDS = getattr(settings, "GPULEDGER_LOGIN_WINDOW_SECONDS", 15 * 60)


def client_address(request) -> str:
    # REMOTE_ADDR only: X-Forwarded-For is set by the client unless a trusted proxy rewrites it.
    return (request.META.get("REMOTE_ADDR") if request is not None else None) or "unknown"


def _key(username: str, address: str) -> str:
    digest = hashlib.sha256(f"{(username or '').strip().lower()}\0{address}".encode()).hexdigest()
    return f"gpuledger:login-failures:{digest}"


def login_failures(username: str, request) -> int:
    return int(cache.get(_key(username, client_address(request)), 0))


def login_blocked(username: str, request) -> bool:
    return login_failures(username, request) >= LOGIN_FAILURE_LIMIT


def login_failure_record(username: str, request) -> int:
    """Count one failure; the window starts at the first failure and is not extended by later ones."""
    key = _key(username, client_address(request))
    if cache.add(key, 1, timeout=LOGIN_WINDOW_SECONDS):
        return 1
    try:
        return cache.incr(key)
    except ValueError:  # expired between add and incr
        cache.add(key, 1, timeout=LOGIN_WINDOW_SECONDS)
        return 1


def login_failures_clear(username: str, request) -> None:
    cache.delete(_key(username, client_address(request)))


def blocked_message() -> str:
    minutes = LOGIN_WINDOW_SECONDS // 60
    return (
        f"Too many failed sign-ins for this user from your address: try again in {minutes} minutes "
        f"({LOGIN_FAILURE_LIMIT} failures are allowed per {minutes} minutes)."
    )


class UserApiRateThrottle(UserRateThrottle):
    """Requests per signed-in user (rate `user` in REST_FRAMEWORK DEFAULT_THROTTLE_RATES)."""

    scope = "user"


class AnonApiRateThrottle(AnonRateThrottle):
    """Requests per address for callers without a user; every API view needs a role, so this only
    matters for a view that someone opens to anonymous callers later."""

    scope = "anon"
