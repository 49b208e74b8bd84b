"""GET /healthz: is this process able to reach its database (and broker, when one is configured)?"""

import functools

from django.conf import settings
from django.contrib.auth.decorators import login_not_required
from django.db import connection
from django.http import JsonResponse


@login_not_required  # load balancers probe it without signing in
def healthz(request):
    checks = {"database": _database_ok()}
    if settings.REDIS_URL:
        checks["redis"] = _redis_ok()
    status = 200 if all(checks.values()) else 503
    return JsonResponse(
        {"ok": status == 200, "checks": checks, "database_vendor": connection.vendor}, status=status
    )


def _database_ok() -> bool:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
        return True
    except Exception:  # any failure means "not healthy"; the reason is in the server log
        return False


def _redis_ok() -> bool:
    import redis

    try:
        return bool(_redis_client().ping())
    except redis.RedisError:
        return False


@functools.cache
def _redis_client():
    """One client (and its connection pool) per process: a load balancer probes often, and a new TCP
    connection per probe was a measurable share of a small server's CPU. A broken pooled connection is
    dropped by redis-py and the next ping reconnects, so an outage and its end still show."""
    import redis

    return redis.Redis.from_url(settings.REDIS_URL, socket_connect_timeout=2, socket_timeout=2)
