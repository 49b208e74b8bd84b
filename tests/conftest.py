"""Shared fixtures: service checks, the bundled catalog, and an in-process Celery worker on Redis."""

from __future__ import annotations

import os

import pytest
from django.conf import settings
from django.db import connection

REQUIRE_SERVICES = os.environ.get("REQUIRE_SERVICES") == "1"


def pytest_report_header(config):
    db = settings.DATABASES["default"]
    broker = settings.REDIS_URL or "none (eager Celery)"
    return [f"database: {db['ENGINE'].rsplit('.', 1)[-1]} {db.get('HOST') or db['NAME']}", f"redis: {broker}"]


def pytest_sessionstart(session):
    # Printed into the CI log: the vendor the suite actually runs on.
    print(
        f"\n[gpuledger] tests run on database vendor: {connection.vendor}; REDIS_URL set: {bool(settings.REDIS_URL)}"
    )


def require_service(name: str, available: bool) -> None:
    """Skip a test that needs a missing service, or fail it when REQUIRE_SERVICES=1 (CI)."""
    if available:
        return
    message = f"{name} is not configured or not reachable"
    if REQUIRE_SERVICES:
        pytest.fail(f"{message}, and REQUIRE_SERVICES=1")
    pytest.skip(message)


@pytest.fixture
def require_postgres():
    require_service("PostgreSQL (DATABASE_URL)", connection.vendor == "postgresql")


@pytest.fixture
def require_redis():
    available = False
    if settings.REDIS_URL:
        import redis

        try:
            available = bool(redis.Redis.from_url(settings.REDIS_URL, socket_connect_timeout=2).ping())
        except redis.RedisError:
            available = False
    require_service("Redis (REDIS_URL)", available)


@pytest.fixture(autouse=True)
def eager_celery():
    """Tasks run in-process unless a test asks for the real broker (`redis_worker`).

    With REDIS_URL set (CI) the app would otherwise publish to Redis with no worker to answer, and a
    test calling `.get()` would wait forever.
    """
    from gpuledger.celery import app

    before = app.conf.task_always_eager
    app.conf.task_always_eager = True
    yield
    app.conf.task_always_eager = before


@pytest.fixture
def bundled_catalog(db):
    """The real bundled catalog, loaded through the same service as `manage.py load_catalog`."""
    from pricing.catalog import catalog_load
    from procurement.architectures import architectures_load

    report = catalog_load()
    architectures_load()
    return report


@pytest.fixture
def redis_worker(require_redis):
    """An in-process Celery worker consuming from the real Redis broker (needs transactional db tests)."""
    import celery.contrib.testing.tasks  # noqa: F401  (registers celery.ping for the start check)
    from celery.contrib.testing.worker import start_worker

    from gpuledger.celery import app

    app.conf.task_always_eager = False
    try:
        with start_worker(app, pool="solo", perform_ping_check=True, shutdown_timeout=30) as worker:
            yield worker
    finally:
        app.conf.task_always_eager = True  # back to the suite's default (see eager_celery)


# and the cached reads (a review, a price read, a page fragment), whose keys carry data versions that a
# rolled-back test database can repeat (an empty one's, say)
THROTTLE_KEY_PATTERNS = (
    "*gpuledger:login-failures:*", "*throttle_*", "*spend-review:*", "*price-read:*", "*template.cache.*",
    "*gpuledger:user-fact:*", "*gpuledger:workload-head:*",
)  # fmt: skip


@pytest.fixture(autouse=True)
def fresh_throttles():
    """Sign-in failures, API rate counts and cached reads live in the cache: each test starts with none."""
    throttles_clear()


def throttles_clear() -> None:
    """The in-memory caches are cleared; on Redis only those keys go (the same db may hold other state)."""
    from django.core.cache import cache, caches

    caches["local"].clear()  # each process's rendered fragments (settings.CACHES["local"])

    backend = settings.CACHES["default"]["BACKEND"]
    if "LocMemCache" in backend:
        cache.clear()
    elif "RedisCache" in backend:
        import redis

        try:
            client = cache._cache.get_client(write=True)
            for pattern in THROTTLE_KEY_PATTERNS:
                keys = list(client.scan_iter(match=pattern))
                if keys:
                    client.delete(*keys)
        except redis.RedisError:
            pass  # Redis down: the tests that need it skip or fail on their own


@pytest.fixture
def team_named(db):
    """`team_named("research")`: the team with that slug, created on first use."""
    from gpuledger.accounts.models import Team

    def get(slug: str):
        return Team.objects.get_or_create(slug=slug, defaults={"name": slug.title()})[0]

    return get


@pytest.fixture
def user_with_role(db, team_named):
    """Make a signed-in-able user holding one role (a group named after it); `role=None` for no role.
    `team=` (a Team or a slug) puts the user in that team."""
    from django.contrib.auth import get_user_model
    from django.contrib.auth.models import Group

    made = iter(range(1, 10_000))

    def make(role: str | None, *, username: str | None = None, team=None, **fields):
        user = get_user_model().objects.create_user(
            username=username or f"{role or 'norole'}-{next(made)}", password="pw", **fields
        )
        if role:
            user.groups.add(Group.objects.get_or_create(name=role)[0])
        if team is not None:
            (team_named(team) if isinstance(team, str) else team).members.add(user)
        return user

    return make


@pytest.fixture
def client_as(user_with_role):
    """`client_as("engineer", team="research")`: a test client signed in as a new user with that role
    (and team); `client_as(...).user` is that user. Each call is its own client, so one test can act
    as several people at once."""
    from django.test import Client

    def sign_in(role: str | None, **fields):
        user = user_with_role(role, **fields)
        signed_in = Client()
        signed_in.force_login(user)
        signed_in.user = user
        return signed_in

    return sign_in


@pytest.fixture
def viewer_client(client_as):
    """The test client signed in as a viewer (catalog, prices, spot history, status)."""
    return client_as("viewer")


@pytest.fixture
def engineer_client(client_as):
    """The test client signed in as an engineer of team `research` (workloads, sizing, studies)."""
    return client_as("engineer", team="research")
