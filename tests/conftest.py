"""Shared fixtures: service checks, the bundled catalog, and an in-process Celery worker on Redis."""

from __future__ import annotations

import os

import pytest
from django.conf import settings
from django.db import connection
from hypothesis import HealthCheck
from hypothesis import settings as hypothesis_settings

# `--accuracy-ledger PATH`: the outside accuracy ledger (tests/accuracy_ledger.py).
pytest_plugins = ["tests.accuracy_ledger"]

REQUIRE_SERVICES = os.environ.get("REQUIRE_SERVICES") == "1"

# CI runs the property tests derandomized (the same examples every run, so a red CI is reproducible) and
# without per-example deadlines (two xdist workers share two cores, so one example's time is noise).
hypothesis_settings.register_profile(
    "ci",
    derandomize=True,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
hypothesis_settings.register_profile("dev", deadline=None)
hypothesis_settings.load_profile(
    os.environ.get("HYPOTHESIS_PROFILE") or ("ci" if os.environ.get("CI") else "dev")
)


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


def catalog_load_now():
    """The real bundled catalog, loaded through the same service as `manage.py load_catalog`."""
    from pricing.catalog import catalog_load
    from procurement.architectures import architectures_load

    report = catalog_load()
    architectures_load()
    return report


@pytest.fixture
def bundled_catalog(request, db):
    """The bundled catalog, loaded once per test session (per xdist worker) for the tests that roll back.

    Loading it takes about 4 s, and about 200 tests ask for it. The non-transactional ones run last
    (`pytest_collection_modifyitems`) inside one outer transaction that holds the catalog
    (`shared_catalog`): each test's own atomic block is then a savepoint under it, so each still rolls
    back on its own. Transactional tests (flushed after each test) load it themselves, as before.
    """
    if not is_transactional_test(request.node) and shared_catalog.report is not None:
        return shared_catalog.report
    return catalog_load_now()


class SharedCatalog:
    """One open transaction holding the loaded catalog, rolled back at the end of the session."""

    def __init__(self):
        self.atomic = None
        self.report = None

    def open(self) -> None:
        from django.db import transaction

        self.atomic = transaction.atomic()
        self.atomic.__enter__()
        self.report = catalog_load_now()

    def close(self) -> None:
        if self.atomic is None:
            return
        from django.db import transaction

        transaction.set_rollback(True)
        self.atomic.__exit__(None, None, None)
        self.atomic = self.report = None


shared_catalog = SharedCatalog()
TRANSACTIONAL_FIXTURES = {
    "transactional_db",
    "live_server",
    "django_db_reset_sequences",
    "django_db_serialized_rollback",
}


def is_transactional_test(item) -> bool:
    if TRANSACTIONAL_FIXTURES & set(getattr(item, "fixturenames", ())):
        return True
    marker = item.get_closest_marker("django_db")
    if marker is None:
        return False
    flags = ("transaction", "reset_sequences", "serialized_rollback")
    return bool(marker.args and marker.args[0]) or any(marker.kwargs.get(flag) for flag in flags)


def uses_shared_catalog(item) -> bool:
    return "bundled_catalog" in getattr(item, "fixturenames", ()) and not is_transactional_test(item)


@pytest.fixture(scope="session")
def shared_catalog_session(django_db_setup, django_db_blocker):
    """Opens the shared catalog transaction before the first test that uses it (session fixtures are set up
    before a test's own atomic block), and rolls it back before the test databases go."""
    with django_db_blocker.unblock():
        shared_catalog.open()
    yield shared_catalog
    with django_db_blocker.unblock():
        shared_catalog.close()


SLOW_PATHS = ("tests/browser/", "tests/gpuledger/test_api_schemathesis.py")


def pytest_collection_modifyitems(config, items):
    """Browser, schemathesis and PDF tests are marked `slow` (they still run in `make test`; `-m "not slow"`
    leaves them out of a quick local run). Tests that share the catalog run last, each with the shared
    transaction set up first."""
    for item in items:
        path = item.nodeid.replace("\\", "/")
        if path.startswith(SLOW_PATHS) or "pdf" in item.name.lower():
            item.add_marker(pytest.mark.slow)
    shared = [item for item in items if uses_shared_catalog(item)]
    if not shared:
        return
    ids = {id(item) for item in shared}
    items[:] = [item for item in items if id(item) not in ids] + shared
    for item in shared:
        if "shared_catalog_session" not in item.fixturenames:  # parametrized items share one list
            item.fixturenames.insert(0, "shared_catalog_session")


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    """A test that does not share the catalog never runs inside its transaction (a reordering such as
    `--lf` can put one after the shared tests): the transaction is rolled back first, and any later
    sharing test loads the catalog itself."""
    if shared_catalog.atomic is None or uses_shared_catalog(item):
        return
    from pytest_django.plugin import blocking_manager_key

    with item.config.stash[blocking_manager_key].unblock():
        shared_catalog.close()


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
    "*gpuledger:login-failures:*",
    "*throttle_*",
    "*spend-review:*",
    "*price-read:*",
    "*template.cache.*",
    "*gpuledger:user-fact:*",
    "*gpuledger:workload-head:*",
)


@pytest.fixture(autouse=True)
def fresh_throttles():
    """Sign-in failures, API rate counts and cached reads live in the cache: each test starts with none."""
    throttles_clear()


def throttles_clear() -> None:
    """The in-memory caches are cleared; on Redis only those keys go (the same db may hold other state).
    The ranking contexts go too: tests that share the catalog start from the same price version."""
    from django.core.cache import cache, caches

    from procurement import offer_cache

    offer_cache.cache_clear()

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
