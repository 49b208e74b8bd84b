"""A bounded closed-loop HTTP load client (standard library only: threads and http.client).

Each simulated user is a thread with its own keep-alive connection that sends one request, waits for
the answer, and sends the next (no think time), until the level's time is up or its request budget is
spent. Every request has a timeout; a timeout, a refused connection or any status outside 2xx counts
as an error. Latency is measured from just before the request is sent to the last byte of the body.

Percentiles are nearest-rank: the p-th percentile of n sorted samples is sample ceil(p/100 * n)
(NIST/SEMATECH e-Handbook of Statistical Methods, 7.2.6.2; the "nearest rank" method).
"""

from __future__ import annotations

import http.client
import json
import math
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from urllib.parse import urlsplit

REQUEST_TIMEOUT_S = 30.0


@dataclass(frozen=True)
class Request:
    method: str
    path: str
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes | None = None


@dataclass(frozen=True)
class Scenario:
    """One endpoint as users call it. ``request(n)`` gives a user's n-th request (so a scenario can walk
    pages); ``kind`` is "stored" (a read of stored data) or "computed" (a fresh ranking): the two have
    different latency targets."""

    name: str
    kind: str
    request: Callable[[int], Request]


@dataclass
class LevelResult:
    scenario: str
    kind: str
    users: int
    seconds: float
    latencies_s: list[float]
    statuses: Counter
    errors: int
    error_samples: list[str]
    failed_without_status: int = 0  # timeouts and connection errors: no status, no latency sample

    @property
    def requests(self) -> int:
        return len(self.latencies_s) + self.failed_without_status

    @property
    def rate_per_s(self) -> float:
        return self.requests / self.seconds if self.seconds > 0 else 0.0

    def percentile_ms(self, p: float) -> float | None:
        return percentile(self.latencies_s, p) * 1000 if self.latencies_s else None

    def as_dict(self) -> dict:
        return {
            "scenario": self.scenario,
            "kind": self.kind,
            "users": self.users,
            "seconds": round(self.seconds, 2),
            "requests": self.requests,
            "requests_per_s": round(self.rate_per_s, 1),
            "errors": self.errors,
            "statuses": {str(k): v for k, v in sorted(self.statuses.items())},
            **{f"p{p}_ms": _rounded(self.percentile_ms(p)) for p in (50, 95, 99)},
            "error_samples": self.error_samples,
        }


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 1)


def percentile(samples: list[float], p: float) -> float:
    """Nearest-rank percentile (see the module docstring): p=50 of [1, 2, 3, 4] is 2, p=99 is 4."""
    if not samples:
        raise ValueError("no samples")
    ordered = sorted(samples)
    rank = max(1, math.ceil(p / 100 * len(ordered)))
    return ordered[rank - 1]


class _User(threading.Thread):
    def __init__(self, base_url: str, scenario: Scenario, budget: _Budget, start: threading.Event):
        super().__init__(daemon=True)
        self.url = urlsplit(base_url)
        self.scenario, self.budget, self.start_event = scenario, budget, start
        self.deadline = math.inf  # set by run_level once every user is connected
        self.latencies: list[float] = []
        self.statuses: Counter = Counter()
        self.errors, self.no_status = 0, 0
        self.samples: list[str] = []

    def run(self) -> None:
        connection = self._connect()
        self.start_event.wait()
        n = 0
        while time.monotonic() < self.deadline and self.budget.take():
            request = self.scenario.request(n)
            n += 1
            started = time.perf_counter()
            try:
                connection.request(request.method, request.path, body=request.body, headers=request.headers)
                response = connection.getresponse()
                body = response.read()
            except (OSError, http.client.HTTPException) as error:
                self.no_status += 1
                self._error(f"{request.method} {request.path}: {type(error).__name__}: {error}")
                connection.close()
                connection = self._connect()
                continue
            self.latencies.append(time.perf_counter() - started)
            self.statuses[response.status] += 1
            if not 200 <= response.status < 300:
                self._error(f"{request.method} {request.path}: {response.status} {body[:200]!r}")
            if response.getheader("Connection", "").lower() == "close":
                connection.close()
                connection = self._connect()
        connection.close()

    def _connect(self) -> http.client.HTTPConnection:
        return http.client.HTTPConnection(self.url.hostname, self.url.port, timeout=REQUEST_TIMEOUT_S)

    def _error(self, text: str) -> None:
        self.errors += 1
        if len(self.samples) < 3:
            self.samples.append(text[:300])


class _Budget:
    """At most ``limit`` requests across all users of a level (a bound on the run, whatever the speed)."""

    def __init__(self, limit: int):
        self.left, self.lock = limit, threading.Lock()

    def take(self) -> bool:
        with self.lock:
            if self.left <= 0:
                return False
            self.left -= 1
            return True


def run_level(
    base_url: str, scenario: Scenario, *, users: int, seconds: float, max_requests: int
) -> LevelResult:
    """``users`` concurrent users on one scenario for ``seconds`` (or ``max_requests`` in all)."""
    start = threading.Event()
    budget = _Budget(max_requests)
    threads = [_User(base_url, scenario, budget, start) for _ in range(users)]
    for thread in threads:
        thread.start()
    began = time.monotonic()
    for thread in threads:
        thread.deadline = began + seconds
    start.set()  # every user starts at once
    for thread in threads:
        thread.join(timeout=seconds + REQUEST_TIMEOUT_S + 5)
    elapsed = time.monotonic() - began
    statuses: Counter = Counter()
    for thread in threads:
        statuses.update(thread.statuses)
    return LevelResult(
        scenario=scenario.name,
        kind=scenario.kind,
        users=users,
        seconds=elapsed,
        latencies_s=[latency for thread in threads for latency in thread.latencies],
        statuses=statuses,
        errors=sum(thread.errors for thread in threads),
        error_samples=[sample for thread in threads for sample in thread.samples][:5],
        failed_without_status=sum(thread.no_status for thread in threads),
    )


def json_request(method: str, path: str, payload: dict, headers: dict[str, str]) -> Request:
    body = json.dumps(payload).encode()
    return Request(method, path, {**headers, "Content-Type": "application/json"}, body)
