"""Redis stopped (cache, broker, locks all gone at once): pages and the API still serve, a refresh started
then records its failure, and work queued meanwhile (change-event notifications in the outbox) runs once
Redis is back, exactly once, through a worker that lived through the outage."""

from __future__ import annotations

from tests.faults.conftest import ADMIN_PASSWORD, ADMIN_USER
from tests.faults.http import Browser
from tests.faults.prices import DUPLICATE_PRICES, PRICE_ROWS, ROWS, finished, outcome, price_file
from tests.faults.services import (
    celery_worker,
    driver,
    driver_popen,
    gunicorn,
    manage,
    stop_process,
    wait_for,
)

PAGES = (
    "/",
    "/status/",
    "/benchmarks/",
    "/api/",
    "/api/offers/",
    "/api/gpus/",
    "/api/offers/?gpu=h100-sxm5-80gb",
)
SWEEP = "from procurement.tasks import sweep_notifications as t; print(t.delay().id)"  # what beat sends


def _outbox(deployment) -> list[tuple[str, int]]:
    return deployment.sql("SELECT state, attempts FROM procurement_notificationoutbox ORDER BY id")


def _assert_pages_serve(browser: Browser) -> None:
    for path in PAGES:
        status, body = browser.request(path)
        assert status == 200, (path, status, body[:500])


def test_with_redis_stopped_pages_serve_refreshes_fail_on_record_and_queued_work_runs_when_it_returns(
    deployment,
):
    env, folder = deployment.env(), deployment.folder
    worker = celery_worker(env, folder / "worker.log", "faults")
    server = None
    try:
        server, base = gunicorn(env, folder / "web.log")
        signed_in = Browser(base)
        assert signed_in.sign_in(ADMIN_USER, ADMIN_PASSWORD) == 302
        _assert_pages_serve(signed_in)
        prices_before = deployment.count(PRICE_ROWS)

        deployment.redis.stop()
        _assert_pages_serve(signed_in)
        assert Browser(base).sign_in(ADMIN_USER, ADMIN_PASSWORD) == 302  # login throttling needs no Redis

        refresh = driver(env, "refresh", str(price_file(folder)))
        assert refresh.returncode == 1, refresh.stdout + refresh.stderr
        assert "redis" in outcome(refresh.stdout)["failed"].lower()
        [(status, error)] = deployment.sql(
            "SELECT status, error FROM scheduler_pricerefresh WHERE source = 'faults-csv'"
        )
        assert status == "failed" and "Redis" in error, error
        assert deployment.count(PRICE_ROWS) == prices_before

        events = driver(env, "events", "3")  # e.g. a recompute's change events: stored, not queued
        assert events.returncode == 0, events.stdout + events.stderr
        assert _outbox(deployment) == [("pending", 0)] * 3

        deployment.redis.start()  # back, empty (no persistence): nothing was queued in it anyway
        # the beat's sweep (every 5 min) once the events are older than its one-minute grace
        deployment.sql("UPDATE procurement_notificationoutbox SET created_at = now() - interval '5 minutes'")
        swept = manage(env, "shell", "-c", SWEEP)
        assert swept.returncode == 0, swept.stdout + swept.stderr
        # the worker that lived through the outage reconnects (Celery retries the broker with back-off)
        wait_for(
            lambda: {s for s, _ in _outbox(deployment)} == {"sent"}, 180, "the worker to send the events"
        )
        assert _outbox(deployment) == [("sent", 1)] * 3  # each claimed and sent once
        assert deployment.sql("SELECT count(*) FROM procurement_changeevent WHERE notified_at IS NULL") == [
            (0,)
        ]
        _assert_pages_serve(signed_in)
    finally:
        stop_process(server)
        stop_process(worker)


def test_a_refresh_running_when_redis_stops_completes_and_stores_each_price_once(deployment):
    """The lock is only needed to start: a run that holds it when Redis goes away finishes (its data is in
    PostgreSQL), and the lost release is no error (the lock expires on its own)."""
    prices, folder = price_file(deployment.folder), deployment.folder
    pause, go, log = folder / "paused", folder / "go", folder / "refresh.log"
    before = deployment.count(PRICE_ROWS)
    run = driver_popen(
        deployment.env(), log, "refresh", str(prices), "--pause-file", str(pause), "--go-file", str(go)
    )
    wait_for(lambda: pause.exists() or run.poll() is not None, 90, "the refresh to reach half-way")
    assert run.poll() is None, log.read_text()
    deployment.redis.stop()
    go.touch()
    returncode, result = finished(run, log)
    assert returncode == 0, result
    assert result["status"] == "succeeded" and result["rows_inserted"] == ROWS
    assert deployment.count(PRICE_ROWS) == before + ROWS
    assert deployment.sql(DUPLICATE_PRICES) == [(0,)]
    assert deployment.sql("SELECT status FROM scheduler_pricerefresh WHERE source = 'faults-csv'") == [
        ("succeeded",)
    ]
