"""Two refreshes or two recomputations racing, as separate processes on real PostgreSQL and Redis: one
refresh runs and the other skips on the lock; racing recomputations converge on one stored result."""

from __future__ import annotations

import subprocess
import sys

from tests.faults.prices import DUPLICATE_PRICES, PRICE_ROWS, ROWS, finished, outcome, price_file
from tests.faults.services import ROOT, driver, driver_popen, wait_for

WORKLOADS = 4


def test_of_two_racing_refreshes_of_one_region_one_runs_and_the_other_skips(deployment):
    prices, folder = price_file(deployment.folder), deployment.folder
    pause, go, log = folder / "paused", folder / "go", folder / "first.log"
    env = deployment.env()
    before = deployment.count(PRICE_ROWS)
    first = driver_popen(env, log, "refresh", str(prices), "--pause-file", str(pause), "--go-file", str(go))
    wait_for(lambda: pause.exists() or first.poll() is not None, 90, "the first refresh to reach half-way")
    second = driver(env, "refresh", str(prices))  # the first holds the lock, mid-transaction
    go.touch()
    returncode, result = finished(first, log)

    assert second.returncode == 0, second.stdout + second.stderr
    assert outcome(second.stdout)["status"] == "skipped"
    assert returncode == 0 and result["status"] == "succeeded" and result["rows_inserted"] == ROWS, result
    assert deployment.count(PRICE_ROWS) == before + ROWS
    assert deployment.sql(DUPLICATE_PRICES) == [(0,)]
    assert deployment.sql(
        "SELECT status, count(*) FROM scheduler_pricerefresh WHERE source = 'faults-csv' GROUP BY status ORDER BY status"
    ) == [("skipped", 1), ("succeeded", 1)]


def _recompute(env, log):
    return subprocess.Popen(
        [sys.executable, "manage.py", "recompute", "--all"],
        cwd=ROOT,
        env=env,
        stdout=log.open("w"),
        stderr=subprocess.STDOUT,
    )


def test_two_racing_recompute_all_store_one_result_and_one_set_of_events_per_workload(deployment):
    env, folder = deployment.env(), deployment.folder
    made = driver(env, "stored", str(WORKLOADS))
    assert made.returncode == 0, made.stdout + made.stderr
    runs = [_recompute(env, folder / f"recompute-{n}.log") for n in (1, 2)]
    for run in runs:
        run.wait(timeout=300)
    assert [run.returncode for run in runs] == [0, 0], [
        (folder / f"recompute-{n}.log").read_text() for n in (1, 2)
    ]

    # the stored one and exactly one recomputed one per workload, whoever stored it
    assert (
        deployment.sql(
            "SELECT count(*) FROM procurement_recommendation GROUP BY workload_id HAVING count(*) <> 2"
        )
        == []
    )
    assert deployment.count("procurement_recommendation") == 2 * WORKLOADS
    events = deployment.count("procurement_changeevent")
    assert events >= WORKLOADS  # the price rise changed each workload's answer
    assert (
        deployment.sql(
            "SELECT count(*) FROM procurement_changeevent GROUP BY workload_id, kind HAVING count(*) > 1"
        )
        == []
    )
    assert deployment.count("procurement_notificationoutbox") == events  # one outbox row per event
