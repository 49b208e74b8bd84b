"""Fixtures of the fault suite: a private PostgreSQL cluster per session (one migrated template database
with the bundled catalog and a superuser, copied for each test) and a private Redis per test.

Without the server binaries these tests skip, or fail with REQUIRE_SERVICES=1 (CI: `make faults`)."""

from __future__ import annotations

import itertools
import os
import pwd
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import require_service
from tests.faults.services import (
    PrivatePostgres,
    PrivateRedis,
    app_env,
    manage,
    postgres_bin_dir,
    redis_binary,
)

TEMPLATE = "faults_template"
ADMIN_USER, ADMIN_PASSWORD = "faults-admin", "faults-admin-password"
_databases = itertools.count(1)


FAULT_TEST_TIMEOUT_S = 600  # the suite default is 300 s; a loaded CI machine starts processes slowly


def pytest_collection_modifyitems(items):
    here = Path(__file__).parent
    for item in items:
        if here in Path(item.fspath).parents:
            item.add_marker(pytest.mark.faults)
            item.add_marker(pytest.mark.timeout(FAULT_TEST_TIMEOUT_S))


def _postgres_runnable() -> bool:
    if postgres_bin_dir() is None:
        return False
    if os.geteuid() != 0:
        return True
    try:
        pwd.getpwnam("postgres")
    except KeyError:
        return False
    return shutil.which("runuser") is not None


@pytest.fixture(scope="session")
def pg_cluster():
    require_service("PostgreSQL server binaries (initdb, pg_ctl, a postgres user)", _postgres_runnable())
    folder = Path(tempfile.mkdtemp(prefix="gpuledger-faults-pg-"))
    cluster = PrivatePostgres(folder)
    try:
        cluster.init()
        cluster.start()
        cluster.execute("postgres", f"CREATE DATABASE {TEMPLATE}")
        env = app_env(cluster.url(TEMPLATE), "", DJANGO_SUPERUSER_PASSWORD=ADMIN_PASSWORD)
        for step in (
            ("migrate", "--no-input"),
            ("load_catalog",),
            ("createsuperuser", "--no-input", "--username", ADMIN_USER, "--email", "admin@example.com"),
        ):
            done = manage(env, *step, timeout_s=300)
            assert done.returncode == 0, f"manage.py {' '.join(step)}: {done.stdout}{done.stderr}"
        yield cluster
    finally:
        try:
            cluster.stop()
        except Exception:  # noqa: BLE001 (already stopped by a failed test: nothing left to stop)
            pass
        shutil.rmtree(folder, ignore_errors=True)


@dataclass
class Deployment:
    """One test's database (a copy of the template) and Redis, and the app environment pointing at them."""

    postgres: PrivatePostgres
    redis: PrivateRedis
    database: str
    folder: Path

    def env(self, **extra: str) -> dict[str, str]:
        return app_env(self.postgres.url(self.database), self.redis.url(), **extra)

    def sql(self, query: str, params: tuple = ()) -> list[tuple]:
        return self.postgres.execute(self.database, query, params)

    def count(self, table: str) -> int:
        return self.sql(f"SELECT count(*) FROM {table}")[0][0]  # noqa: S608 (table names from the tests)


@pytest.fixture
def deployment(pg_cluster, tmp_path):
    require_service("redis-server", redis_binary() is not None)
    try:
        pg_cluster.execute("postgres", "SELECT 1")
    except Exception:  # noqa: BLE001 (a failed test left it stopped)
        pg_cluster.start()
    database = f"faults_{next(_databases)}"
    pg_cluster.execute("postgres", f"CREATE DATABASE {database} TEMPLATE {TEMPLATE}")
    redis = PrivateRedis(tmp_path)
    redis.start()
    try:
        yield Deployment(pg_cluster, redis, database, tmp_path)
    finally:
        for log in sorted(tmp_path.glob("*.log")):  # shown with a failure's captured output
            print(f"----- {log.name} (last 3000 characters)\n{log.read_text(errors='replace')[-3000:]}")
        redis.stop()
        pg_cluster.execute("postgres", f"DROP DATABASE IF EXISTS {database} WITH (FORCE)")
