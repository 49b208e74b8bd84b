"""Load test: gunicorn on loopback with production settings, PostgreSQL and Redis, driven by a bounded
closed-loop client (benchmarks/load/client.py) over the pages and API calls issue 9 names.

    make load                                   # long form: 10, 50 and 100 users, 20 s per level
    .venv/bin/python benchmarks/load/run.py --short   # CI: 2 and 5 users, 3 s per level

Needs DATABASE_URL (PostgreSQL) and REDIS_URL; the run makes its own empty database beside it (the name +
"_load", dropped after) and seeds it as `make run` does (bundled catalog, demo users, demo billing). gunicorn runs with DEBUG off, HTTPS redirect
off (plain loopback HTTP), and the API rate limit raised so that the limiter (still consulted on
every request) does not turn load into 429s. Any response outside 2xx, a timeout or a refused
connection is an error: the run exits 1. Latency targets (issue 9: p99 under 250 ms at 50 users for
stored pages, under 1 s for a fresh ranking) are reported as PASS/MISS and never fail the run: the
machine under test is shared. Figures go to stdout and, as JSON, to --output.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import re
import secrets
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(Path(__file__).resolve().parent))

from client import LevelResult, Request, Scenario, json_request, run_level  # noqa: E402
from session import sign_in  # noqa: E402

PYTHON = sys.executable
STORED_P99_TARGET_MS = 250.0
COMPUTED_P99_TARGET_MS = 1000.0
TARGET_USERS = 50
REVIEW_PERIOD = "from=2026-05-01&to=2026-11-01"  # the demo billing file's months (Makefile `run`)
REVIEW_PAGE_PERIOD = "start=2026-05-01&end=2026-11-01"  # the same months in the page's filter form
WORKLOAD = {
    "name": "load-test-llama-8b-qlora",
    "task": "qlora",
    "model": {"preset": "llama-3.1-8b"},
    "seq_len": 2048,
    "lora": {"rank": 16, "targets": "all-linear"},
    "training_tokens": 2.0e8,
}


def main() -> int:
    args = _arguments()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # stop gunicorn on the way out (finally)
    if not os.environ.get("DATABASE_URL", "").startswith("postgres") or not os.environ.get("REDIS_URL"):
        print("load test: set DATABASE_URL (postgres://...) and REDIS_URL (redis://...)", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="gpuledger-load-") as folder, _fresh_database() as database_url:
        env = {**_server_env(Path(folder)), "DATABASE_URL": database_url}
        _seed(env, Path(folder))
        _collect_static(env)
        tokens = {role: _token(env, role) for role in ("viewer", "engineer", "finance")}
        port = args.port or _free_port()
        server = _start_gunicorn(env, port, args.workers)
        try:
            base = f"http://127.0.0.1:{port}"
            _wait_healthy(base)
            passwords = json.loads((Path(folder) / "demo-users.json").read_text())
            sessions = {
                role: sign_in(base, role, passwords[role]) for role in ("viewer", "engineer", "finance")
            }
            scenarios = _scenarios(base, tokens, sessions)
            results = _run(base, scenarios, args)
        finally:
            server.terminate()
            server.wait(timeout=30)
    return _report(results, args)


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--short", action="store_true", help="CI form: 2 and 5 users, 3 s per level")
    parser.add_argument("--users", default=None, help="comma-separated user counts (default 10,50,100)")
    parser.add_argument("--seconds", type=float, default=None, help="seconds per level (default 20)")
    parser.add_argument("--max-requests", type=int, default=20_000, help="request budget per level")
    parser.add_argument("--workers", type=int, default=3, help="gunicorn workers (infra/Dockerfile: 3)")
    parser.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (default: a free one)")
    parser.add_argument("--only", default="", help="comma-separated scenario names (default: all)")
    parser.add_argument("--output", type=Path, default=None, help="write the figures as JSON here")
    args = parser.parse_args()
    users = args.users or ("2,5" if args.short else "10,50,100")
    args.levels = [int(n) for n in users.split(",")]
    if not all(1 <= n <= 500 for n in args.levels):
        parser.error("--users: each count must be from 1 to 500")
    args.seconds = args.seconds or (3.0 if args.short else 20.0)
    if not 0 < args.seconds <= 600 or not 1 <= args.max_requests <= 1_000_000:
        parser.error("--seconds must be in (0, 600] and --max-requests in [1, 1,000,000]")
    return args


@contextmanager
def _fresh_database() -> Iterator[str]:
    """A database of the run's own beside DATABASE_URL's (its name + "_load"), made empty and dropped after:
    the run seeds a fresh catalog and bill into a fresh dataset folder, and a database an earlier run or a
    developer left behind (its imports pointing at another folder's files) never decides what it measures."""
    import psycopg

    url = urllib.parse.urlsplit(os.environ["DATABASE_URL"])
    name = f"{url.path.lstrip('/') or 'gpuledger'}_load"
    admin = url._replace(path="/postgres").geturl()

    def _admin(statement: str) -> None:
        with psycopg.connect(admin, autocommit=True) as connection:
            connection.execute(statement)

    _admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    _admin(f'CREATE DATABASE "{name}"')
    try:
        yield url._replace(path=f"/{name}").geturl()
    finally:
        _admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def _server_env(folder: Path) -> dict[str, str]:
    return {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "gpuledger.settings.production",
        "DEBUG": "0",
        "SECRET_KEY": secrets.token_urlsafe(40),
        "ALLOWED_HOSTS": "127.0.0.1",
        "SECURE_SSL_REDIRECT": "0",  # plain HTTP on loopback; production terminates TLS in front
        # DRF's limiter keeps each user's request times of the window in the cache: a 1-second window keeps
        # that list as short as production's default (1,200 a minute) at the most, where a minute-long one
        # grows to every request of the last minute (tens of thousands) and measures its own pickling
        "GPULEDGER_API_RATE_USER": "1000000/second",
        "GPULEDGER_VAR_DIR": str(folder),
        "LOG_LEVEL": "WARNING",
        "PYTHONUNBUFFERED": "1",
    }


def _manage(env: dict, *arguments: str) -> str:
    done = subprocess.run(
        [PYTHON, "manage.py", *arguments], cwd=ROOT, env=env, capture_output=True, text=True, timeout=900
    )
    if done.returncode != 0:
        raise SystemExit(
            f"manage.py {' '.join(arguments)} failed:\n{done.stdout[-2000:]}{done.stderr[-2000:]}"
        )
    return done.stdout


def _seed(env: dict, folder: Path) -> None:
    """As `make run` seeds (DEBUG on for that, as there: demo_users refuses to run in production)."""
    started = time.monotonic()
    env = {**env, "DJANGO_SETTINGS_MODULE": "gpuledger.settings.local", "DEBUG": "1"}
    _manage(env, "migrate", "--no-input")
    _manage(env, "load_catalog")
    _manage(env, "demo_users", "--url", "http://127.0.0.1")
    billing, utilization = folder / "demo_billing.csv", folder / "demo_billing_utilization.csv"
    _manage(env, "make_demo_billing", "--output", str(billing))
    _manage(env, "import_billing", str(billing), str(utilization), "--no-progress")
    print(f"seeded in {time.monotonic() - started:.0f} s", flush=True)


def _collect_static(env: dict) -> None:
    # production settings serve hashed static files (whitenoise's manifest): collect them first
    _manage(env, "collectstatic", "--no-input", "--verbosity", "0")


def _token(env: dict, role: str) -> str:
    output = _manage(
        env, "api_token", "create", role, "--name", f"load test {dt.datetime.now():%Y-%m-%d %H:%M:%S}"
    )
    match = re.search(r": (\S+)\n", output)
    if not match:
        raise SystemExit(f"api_token create {role}: no secret in {output!r}")
    return match.group(1)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _start_gunicorn(env: dict, port: int, workers: int) -> subprocess.Popen:
    command = [
        str(Path(PYTHON).parent / "gunicorn"),
        "gpuledger.wsgi",
        "--bind",
        f"127.0.0.1:{port}",
        "--workers",
        str(workers),
        "--timeout",
        "60",
        "--log-level",
        "warning",
    ]
    return subprocess.Popen(command, cwd=ROOT, env=env)


def _wait_healthy(base: str, timeout_s: float = 60.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"{base}/healthz", timeout=5) as response:
                if response.status == 200:
                    return
        except OSError:
            time.sleep(0.5)
    raise SystemExit(f"gunicorn did not answer {base}/healthz within {timeout_s:.0f} s")


def _wait_idle(base: str, limit_s: float = 300.0) -> None:
    """Wait until gunicorn has worked off the requests a level left queued (a client that timed out does
    not take its request back): /healthz waits in the same queue, so a quick answer means an idle server.
    Without this a level after an overloaded one measures its predecessor's backlog."""
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        started = time.monotonic()
        try:
            with urllib.request.urlopen(f"{base}/healthz", timeout=limit_s) as response:
                response.read()
        except OSError:
            time.sleep(1)
            continue
        if time.monotonic() - started < 1.0:
            return
    raise SystemExit(f"gunicorn still busy {limit_s:.0f} s after a level ended")


def _scenarios(base: str, tokens: dict, sessions: dict) -> list[Scenario]:
    def bearer(role: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {tokens[role]}", "Accept": "application/json"}

    saved = _save_recommendation(base, bearer("engineer"))
    total = _offer_count(base, bearer("viewer"))
    pages = max(1, min(total, 10_000) // 100)

    def get(path: str, headers: dict) -> Callable[[int], Request]:
        return lambda n: Request("GET", path, headers)

    computed = json_request(
        "POST", "/api/recommendations/", {"workload_id": saved["workload_id"]}, bearer("engineer")
    )
    return [
        # the users walk the first pages of the offer list (100 rows each)
        Scenario(
            "offer list API",
            "stored",
            lambda n: Request("GET", f"/api/offers/?limit=100&offset={(n % pages) * 100}", bearer("viewer")),
        ),
        Scenario("catalog page /", "stored", get("/", sessions["viewer"])),
        Scenario(
            "stored recommendation page",
            "stored",
            get(f"/workloads/{saved['workload_id']}/recommendations/", sessions["engineer"]),
        ),
        Scenario("computed recommendation API", "computed", lambda n: computed),
        Scenario("dashboard (finance)", "stored", get("/dashboard/", sessions["finance"])),
        Scenario(
            "spend review API",
            "stored",
            get(f"/api/billing/spend-review/?{REVIEW_PERIOD}", bearer("finance")),
        ),
        Scenario("spend review page", "stored", get(f"/billing/?{REVIEW_PAGE_PERIOD}", sessions["finance"])),
    ]


def _save_recommendation(base: str, headers: dict) -> dict:
    body = json.dumps({"workload": WORKLOAD, "save": True}).encode()
    request = urllib.request.Request(
        f"{base}/api/recommendations/", data=body, headers={**headers, "Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=120) as response:
        answer = json.loads(response.read())
    if not answer.get("id") or not answer.get("results"):
        raise SystemExit(f"saving the load test's recommendation failed: {str(answer)[:300]}")
    return answer


def _offer_count(base: str, headers: dict) -> int:
    request = urllib.request.Request(f"{base}/api/offers/?limit=1", headers=headers)
    with urllib.request.urlopen(request, timeout=60) as response:
        return int(response.headers["X-Total-Count"])


def _run(base: str, scenarios: list[Scenario], args) -> list[LevelResult]:
    chosen = {name.strip() for name in args.only.split(",") if name.strip()}
    results = []
    print(f"machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f} before the run", flush=True)
    for scenario in scenarios:
        if chosen and scenario.name not in chosen:
            continue
        run_level(base, scenario, users=1, seconds=1.0, max_requests=2)  # warm the workers' imports
        for users in args.levels:
            result = run_level(
                base, scenario, users=users, seconds=args.seconds, max_requests=args.max_requests
            )
            results.append(result)
            print(_line(result), flush=True)
            _wait_idle(base)
    print(f"load average {os.getloadavg()[0]:.2f} after the run", flush=True)
    return results


def _line(result: LevelResult) -> str:
    def ms(p: float) -> str:
        value = result.percentile_ms(p)
        return "-" if value is None else f"{value:,.0f}"

    return (
        f"{result.scenario:<30} {result.users:>4} users  {result.rate_per_s:>7.1f} req/s  "
        f"p50 {ms(50):>6} ms  p95 {ms(95):>6} ms  p99 {ms(99):>6} ms  "
        f"{result.requests:>6} requests  {result.errors} errors"
    )


def _targets(results: list[LevelResult]) -> list[str]:
    lines = []
    for result in results:
        if result.users != TARGET_USERS:
            continue
        target = COMPUTED_P99_TARGET_MS if result.kind == "computed" else STORED_P99_TARGET_MS
        p99 = result.percentile_ms(99)
        verdict = "PASS" if p99 is not None and p99 < target and not result.errors else "MISS"
        shown = "-" if p99 is None else f"{p99:,.0f}"
        lines.append(
            f"{verdict}  {result.scenario}: p99 {shown} ms at {TARGET_USERS} users (target < {target:,.0f} ms)"
        )
    return lines or [
        f"targets: not measured (they are set at {TARGET_USERS} users; this run used other levels)"
    ]


def markdown_table(results: list[LevelResult]) -> str:
    """The figures as the table in docs/performance.md."""
    lines = [
        "| endpoint | users | req/s | p50 ms | p95 ms | p99 ms | requests | errors |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in results:
        p = [r.percentile_ms(q) for q in (50, 95, 99)]
        shown = ["-" if v is None else f"{v:,.0f}" for v in p]
        lines.append(
            f"| {r.scenario} | {r.users} | {r.rate_per_s:.1f} | {' | '.join(shown)} | {r.requests:,} | {r.errors} |"
        )
    return "\n".join(lines)


def _report(results: list[LevelResult], args) -> int:
    errors = sum(result.errors for result in results)
    print(markdown_table(results))
    print("\n".join(_targets(results)))
    for result in results:
        for sample in result.error_samples:
            print(f"error: {result.scenario}, {result.users} users: {sample}")
    if args.output:
        args.output.parent.mkdir(parents=True, exist_ok=True)
        figures = {
            "when": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
            "cpus": os.cpu_count(),
            "workers": args.workers,
            "seconds_per_level": args.seconds,
            "levels": [result.as_dict() for result in results],
        }
        args.output.write_text(json.dumps(figures, indent=2))
    print(f"{'FAIL' if errors else 'OK'}: {sum(r.requests for r in results):,} requests, {errors} errors")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
