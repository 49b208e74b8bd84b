"""Replay recorded price-API answers in place of the network (pricing.providers.http_api.Transport)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from pricing.providers.http_api import HttpAnswer
from pricing.providers.retry import RetryPolicy

RECORDED = Path(__file__).parent / "recorded"


def recorded(name: str) -> bytes:
    return (RECORDED / name).read_bytes()


def ok(name: str) -> HttpAnswer:
    return HttpAnswer(200, recorded(name), {"Content-Type": "application/json; charset=utf-8"})


def throttled(retry_after: str = "7") -> HttpAnswer:
    body = b'{"error": {"code": 429, "message": "Too many requests", "status": "RESOURCE_EXHAUSTED"}}'
    return HttpAnswer(429, body, {"Retry-After": retry_after, "Content-Type": "application/json"})


def error_page(status: int = 503) -> HttpAnswer:
    return HttpAnswer(status, recorded("error_503.html"), {"Content-Type": "text/html"})


class FakeHttp:
    """Answers each request with the next recorded answer and remembers what was asked."""

    def __init__(self, *answers: HttpAnswer):
        self.answers = list(answers)
        self.calls: list[tuple[str, dict[str, str]]] = []

    def __call__(self, url: str, headers: Mapping[str, str]) -> HttpAnswer:
        self.calls.append((url, dict(headers)))
        if not self.answers:
            raise AssertionError(f"an unexpected request: {url}")
        return self.answers.pop(0)


def no_wait_policy(sleeps: list[float] | None = None, max_retries: int = 3) -> RetryPolicy:
    """Backoff of 1, 2, 4 s at half jitter, recorded instead of slept."""
    recorded_sleeps = sleeps if sleeps is not None else []
    return RetryPolicy(
        max_retries=max_retries, base_delay_s=1, sleep=recorded_sleeps.append, random_fraction=lambda: 0.5
    )
