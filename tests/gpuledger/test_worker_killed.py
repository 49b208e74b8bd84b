"""kill -9 of a real Celery worker mid-task: the broker redelivers the task (soon after the visibility
timeout, which settings derive from the task time limit) and the data ends up there exactly once.

Real services only (PostgreSQL and Redis, REQUIRE_SERVICES=1 in CI): two worker processes in turn on
the test database, with a short time limit so the visibility timeout is a minute, not twenty.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from django.db import connection

from pricing.models import PriceObservation, Provider

ROOT = Path(__file__).resolve().parents[2]
TIME_LIMIT_S, MARGIN_S = 60, 1  # visibility timeout: 61 s
RECEIVED = "Task pricing.load_bundled_catalog["


def _worker(log: Path, name: str) -> subprocess.Popen:
    db = connection.settings_dict
    env = os.environ | {
        "DJANGO_SETTINGS_MODULE": "tests.settings",
        "DATABASE_URL": f"postgres://{db['USER']}@{db['HOST']}:{db['PORT'] or 5432}/{db['NAME']}",
        "CELERY_TASK_TIME_LIMIT": str(TIME_LIMIT_S),
        "CELERY_TASK_SOFT_TIME_LIMIT": str(TIME_LIMIT_S - 10),
        "CELERY_VISIBILITY_MARGIN_S": str(MARGIN_S),
    }
    command = [
        sys.executable,
        "-m",
        "celery",
        "-A",
        "gpuledger",
        "worker",
        "--pool=solo",
        "-n",
        f"{name}@%h",
        "--without-gossip",
        "--without-mingle",
        "--loglevel=INFO",
    ]
    return subprocess.Popen(command, cwd=ROOT, env=env, stdout=log.open("w"), stderr=subprocess.STDOUT)


def _wait_for(predicate, timeout_s: float, what: str) -> None:
    deadline = time.monotonic() + timeout_s
    while not predicate():
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting for {what}")
        time.sleep(0.5)


@pytest.mark.django_db(transaction=True)
def test_a_task_whose_worker_is_killed_is_redelivered_and_applied_once(
    require_postgres, require_redis, tmp_path
):
    import redis
    from django.conf import settings

    from gpuledger.celery import app
    from pricing.tasks import load_bundled_catalog

    app.conf.task_always_eager = False  # through the broker (the autouse fixture puts it back)
    redis.Redis.from_url(settings.REDIS_URL).flushdb()  # this engineer's own db index: no stale tasks
    first_log, second_log = tmp_path / "first.log", tmp_path / "second.log"
    first = _worker(first_log, "first")
    try:
        _wait_for(lambda: "ready." in first_log.read_text(), 120, "the first worker to start")
        result = load_bundled_catalog.apply_async()
        _wait_for(
            lambda: "load_bundled_catalog" in first_log.read_text(), 60, "the first worker to take the task"
        )
        # mid-task: the catalog is one transaction, still open. Kill soon after the worker takes it: on a
        # quiet machine the whole load commits in a few seconds (a kill before it starts is redelivered too)
        time.sleep(0.3)
        first.send_signal(signal.SIGKILL)
        first.wait(timeout=30)
    finally:
        if first.poll() is None:
            first.kill()
    assert not Provider.objects.exists(), (
        "the first worker finished before it was killed: nothing to redeliver"
    )
    second = _worker(second_log, "second")
    try:
        summary = result.get(timeout=TIME_LIMIT_S + MARGIN_S + 150)  # same task id: the redelivered run
    finally:
        second.send_signal(signal.SIGTERM)
        second.wait(timeout=60)
    assert RECEIVED in second_log.read_text()
    assert summary["prices_inserted"] == PriceObservation.objects.count() > 1000  # one run's rows, once
    rerun = load_bundled_catalog.apply()  # in-process: idempotent, a further delivery changes nothing
    assert rerun.get()["total_changes"] == 0
