"""PostgreSQL restarted mid-refresh: the run fails cleanly (its row says why, no price of it is kept, no row
stays "running") and the rerun completes with every price once."""

from __future__ import annotations

from tests.faults.prices import DUPLICATE_PRICES, PRICE_ROWS, ROWS, finished, outcome, price_file
from tests.faults.services import driver, driver_popen, wait_for


def _refreshes(deployment) -> list[tuple[str, str]]:
    return deployment.sql(
        "SELECT status, error FROM scheduler_pricerefresh WHERE source = 'faults-csv' ORDER BY id"
    )


def test_a_refresh_whose_database_restarts_mid_run_fails_cleanly_and_the_rerun_completes_once(deployment):
    prices, folder = price_file(deployment.folder), deployment.folder
    pause, go, log = folder / "paused", folder / "go", folder / "refresh.log"
    env = deployment.env()
    before = deployment.count(PRICE_ROWS)
    run = driver_popen(env, log, "refresh", str(prices), "--pause-file", str(pause), "--go-file", str(go))
    wait_for(lambda: pause.exists() or run.poll() is not None, 90, "the refresh to reach half-way")
    assert run.poll() is None, log.read_text()
    assert [status for status, _ in _refreshes(deployment)] == ["running"]

    deployment.postgres.restart()  # fast shutdown: the run's session is cut, its transaction rolled back
    go.touch()
    returncode, result = finished(run, log)

    assert returncode == 1, result
    assert "connection" in result["failed"].lower() or "terminat" in result["failed"].lower(), result
    [(status, error)] = _refreshes(deployment)
    assert status == "failed"  # recorded on a new connection, not left "running" for the sweeper
    assert error.startswith("OperationalError") and len(error) < 4000, error
    assert deployment.count(PRICE_ROWS) == before  # none of the half-written rows were kept

    rerun = driver(env, "refresh", str(prices))
    assert rerun.returncode == 0, rerun.stdout + rerun.stderr
    assert outcome(rerun.stdout) | {"refresh_id": 0} == {
        "refresh_id": 0,
        "status": "succeeded",
        "rows_inserted": ROWS,
    }
    assert deployment.count(PRICE_ROWS) == before + ROWS
    assert deployment.sql(DUPLICATE_PRICES) == [(0,)]
    assert [status for status, _ in _refreshes(deployment)] == ["failed", "succeeded"]
