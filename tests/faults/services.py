"""Private PostgreSQL and Redis instances for the fault tests, and the app processes pointed at them.

The fault tests stop, kill and restart services. They never touch the shared PostgreSQL (5432) or Redis
(6379) other engineers and CI jobs use: each test session starts its own PostgreSQL cluster (initdb in a
temporary folder, on a free port) and each test its own `redis-server` (no persistence, like production's
cache-and-broker use). The app under test runs as real processes (gunicorn, a Celery worker,
`manage.py`, `tests/faults/driver.py`) with DATABASE_URL and REDIS_URL pointing at them, exactly as a
deployment configures it.
"""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
START_TIMEOUT_S = 60


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_for(predicate: Callable[[], bool], timeout_s: float, what: str, *, every_s: float = 0.2) -> None:
    deadline = time.monotonic() + timeout_s
    while not predicate():
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out after {timeout_s:.0f} s waiting for {what}")
        time.sleep(every_s)


def _port_open(port: int) -> bool:
    with socket.socket() as sock:
        sock.settimeout(0.5)
        return sock.connect_ex(("127.0.0.1", port)) == 0


def postgres_bin_dir() -> Path | None:
    """The newest Debian PostgreSQL server binaries (initdb and pg_ctl of the same version)."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(Path(p).parts[-3]))
    return Path(found[-1]).parent if found else None


def redis_binary() -> str | None:
    return shutil.which("redis-server")


class PrivateRedis:
    """`redis-server --port <free> --save ''`, started and stopped by the test (a restart is empty)."""

    def __init__(self, folder: Path):
        self.folder, self.port = folder, free_port()
        self.process: subprocess.Popen | None = None

    def url(self, db: int = 0) -> str:
        return f"redis://127.0.0.1:{self.port}/{db}"

    def start(self) -> None:
        command = [
            redis_binary(),
            "--port",
            str(self.port),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
            "--dir",
            str(self.folder),
        ]
        log = (self.folder / "redis.log").open("a")
        self.process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
        wait_for(lambda: _port_open(self.port), START_TIMEOUT_S, f"redis-server on port {self.port}")

    def stop(self) -> None:
        if self.process and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=30)
        self.process = None
        wait_for(lambda: not _port_open(self.port), 10, f"redis on port {self.port} to close")


class PrivatePostgres:
    """A throwaway cluster: initdb (trust auth, fsync off) in a temporary folder, served on a free port.

    PostgreSQL refuses to run as root, so as root the server runs as the `postgres` system user, which
    owns the folder."""

    def __init__(self, folder: Path):
        self.bin = postgres_bin_dir()
        self.folder, self.data, self.port = folder, folder / "data", free_port()
        self.log = folder / "postgres.log"

    def _as_owner(self, *command: str) -> list[str]:
        return ["runuser", "-u", "postgres", "--", *command] if os.geteuid() == 0 else list(command)

    def _run(self, *command: str) -> None:
        done = subprocess.run(self._as_owner(*command), capture_output=True, text=True, timeout=120)
        if done.returncode:
            raise RuntimeError(f"{' '.join(command)} failed: {done.stdout}{done.stderr}{self._log_tail()}")

    def _log_tail(self) -> str:
        return self.log.read_text()[-2000:] if self.log.exists() else ""

    def init(self) -> None:
        if os.geteuid() == 0:
            shutil.chown(self.folder, "postgres", "postgres")
        self._run(
            str(self.bin / "initdb"),
            "-D",
            str(self.data),
            "-U",
            "postgres",
            "-A",
            "trust",
            "-E",
            "UTF8",
            "--no-sync",
        )

    def start(self) -> None:
        options = f"-p {self.port} -c listen_addresses=127.0.0.1 -k {self.folder} -c fsync=off"
        options += " -c synchronous_commit=off -c full_page_writes=off"
        self._run(
            str(self.bin / "pg_ctl"),
            "-D",
            str(self.data),
            "-l",
            str(self.log),
            "-o",
            options,
            "-w",
            "-t",
            str(START_TIMEOUT_S),
            "start",
        )

    def stop(self) -> None:
        # fast: active sessions are disconnected and their transactions rolled back, as in a failover
        self._run(str(self.bin / "pg_ctl"), "-D", str(self.data), "-m", "fast", "-w", "stop")

    def restart(self) -> None:
        self.stop()
        self.start()

    def url(self, name: str) -> str:
        return f"postgres://postgres@127.0.0.1:{self.port}/{name}"

    def connect(self, name: str):
        import psycopg

        return psycopg.connect(self.url(name), autocommit=True)

    def execute(self, name: str, sql: str, params: tuple = ()) -> list[tuple]:
        with self.connect(name) as conn:
            cursor = conn.execute(sql, params)
            return cursor.fetchall() if cursor.description else []


def app_env(database_url: str, redis_url: str, **extra: str) -> dict[str, str]:
    """The environment of a deployment on these instances (test settings: throwaway secret key)."""
    env = {k: v for k, v in os.environ.items() if k not in {"DATABASE_URL", "REDIS_URL", "DEBUG"}}
    return env | {
        "DJANGO_SETTINGS_MODULE": "tests.settings",
        "DATABASE_URL": database_url,
        "REDIS_URL": redis_url,
        "EMAIL_BACKEND": "django.core.mail.backends.console.EmailBackend",
        "PYTHONUNBUFFERED": "1",
        **extra,
    }


def manage(env: dict[str, str], *args: str, timeout_s: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout_s,
    )


def driver(env: dict[str, str], *args: str, timeout_s: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "tests.faults.driver", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout_s,
    )


def driver_popen(env: dict[str, str], log: Path, *args: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "tests.faults.driver", *args],
        cwd=ROOT,
        env=env,
        stdout=log.open("w"),
        stderr=subprocess.STDOUT,
    )


def celery_worker(env: dict[str, str], log: Path, name: str) -> subprocess.Popen:
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
    worker = subprocess.Popen(command, cwd=ROOT, env=env, stdout=log.open("w"), stderr=subprocess.STDOUT)
    wait_for(lambda: "ready." in log.read_text() or worker.poll() is not None, 120, f"worker {name} to start")
    if worker.poll() is not None:
        raise RuntimeError(f"worker {name} exited: {log.read_text()[-2000:]}")
    return worker


def gunicorn(env: dict[str, str], log: Path) -> tuple[subprocess.Popen, str]:
    """The web app as production runs it (one gunicorn worker); returns the process and its base URL."""
    port = free_port()
    command = [
        sys.executable,
        "-m",
        "gunicorn",
        "gpuledger.wsgi",
        "--bind",
        f"127.0.0.1:{port}",
        "--workers",
        "1",
        "--timeout",
        "60",
        "--control-socket",
        str(log.parent / "gunicorn.ctl"),
    ]
    server = subprocess.Popen(command, cwd=ROOT, env=env, stdout=log.open("w"), stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"

    def healthy() -> bool:
        if server.poll() is not None:
            raise RuntimeError(f"gunicorn exited: {log.read_text()[-2000:]}")
        try:
            with urllib.request.urlopen(f"{base}/healthz", timeout=30):  # the first request imports a lot
                return True
        except OSError:  # refused while it binds, URLError, a timeout on a loaded machine
            return False

    wait_for(healthy, 90, "gunicorn to answer /healthz", every_s=0.5)
    return server, base


def stop_process(process: subprocess.Popen | None, *, timeout_s: float = 30) -> None:
    if process is None or process.poll() is not None:
        return
    process.terminate()
    try:
        process.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=10)
