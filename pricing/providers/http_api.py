"""GET a JSON document from a provider's price API, retrying throttling and server errors.

The price APIs that are not AWS (Azure Retail Prices, GCP Cloud Billing Catalog, Lambda Cloud) answer
plain HTTPS GETs with JSON. Retried: 429 (waiting at least what its Retry-After header asks), any 5xx
(an HTML error page included) and a dropped connection, with the backoff and jitter of
``retry.RetryPolicy``; when the attempts run out, ``TransientSourceError`` (the Celery task retries the
whole refresh later). Not retried: any other status (bad key, bad filter: a later try gets the same
answer) and a 200 whose body is not a JSON object.

The transport is passed in, so tests replay recorded answers and never reach the network. Request
headers may carry a credential: they are sent and never written into an error message or a log.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from pricing.providers.retry import RetryPolicy, TransientSourceError

TIMEOUT_S = 60
MAX_RETRY_AFTER_S = 300.0  # a Retry-After longer than this fails the attempt: the task retries later
BODY_SHOWN_CHARS = 80


@dataclass(frozen=True)
class HttpAnswer:
    status: int
    body: bytes
    headers: Mapping[str, str] = field(default_factory=dict)


Transport = Callable[[str, Mapping[str, str]], HttpAnswer]


class HttpSourceError(RuntimeError):
    """The API refused the request in a way a retry cannot fix, or answered with something not JSON."""


def urllib_transport(url: str, headers: Mapping[str, str]) -> HttpAnswer:
    """One HTTPS GET; an HTTP error status is an answer, a dropped connection raises ConnectionError."""
    request = urllib.request.Request(url, headers=dict(headers))  # noqa: S310 (https URLs built in code)
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT_S) as response:  # noqa: S310
            return HttpAnswer(response.status, response.read(), dict(response.headers))
    except urllib.error.HTTPError as error:
        return HttpAnswer(error.code, error.read() or b"", dict(error.headers or {}))
    except (urllib.error.URLError, TimeoutError) as error:
        raise ConnectionError(f"{type(error).__name__}: {getattr(error, 'reason', error)}") from None


def get_json(
    url: str,
    *,
    transport: Transport,
    policy: RetryPolicy,
    what: str,
    headers: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """The JSON object at `url`; `what` names the request in errors (never the URL: it may hold a key)."""
    retry_number = 0
    while True:
        try:
            answer = transport(url, headers or {})
        except ConnectionError as error:
            answer, problem = None, f"connection failed: {error}"
        else:
            if answer.status == 200:
                return _json_object(answer.body, what)
            problem = f"HTTP {answer.status}: {_shown(answer.body)}"
            if not _retryable(answer.status):
                raise HttpSourceError(f"{what}: {problem}")
        if retry_number >= policy.max_retries:
            raise TransientSourceError(f"{what}: still failing after {retry_number} retries: {problem}")
        policy.sleep(_wait_s(answer, policy, retry_number, what))
        retry_number += 1


def _retryable(status: int) -> bool:
    return status == 429 or 500 <= status <= 599


def _wait_s(answer: HttpAnswer | None, policy: RetryPolicy, retry_number: int, what: str) -> float:
    """The backoff delay, or the server's Retry-After (seconds) when it asks for longer."""
    delay = policy.delay_s(retry_number)
    raw = _header(answer.headers, "Retry-After") if answer is not None else None
    if raw is None:
        return delay
    try:
        asked = float(raw)
    except ValueError:  # an HTTP date: not worth parsing, back off as usual
        return delay
    if asked > MAX_RETRY_AFTER_S:
        raise TransientSourceError(
            f"{what}: throttled, Retry-After {asked:g} s exceeds {MAX_RETRY_AFTER_S:g} s"
        )
    return max(delay, asked)


def _header(headers: Mapping[str, str], name: str) -> str | None:
    for key, value in headers.items():
        if key.lower() == name.lower():
            return value
    return None


def _json_object(body: bytes, what: str) -> dict[str, Any]:
    try:
        document = json.loads(body, parse_float=Decimal)  # prices stay exact decimals
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise HttpSourceError(f"{what}: the answer is not JSON: {_shown(body)}") from None
    if not isinstance(document, dict):
        raise HttpSourceError(f"{what}: the answer is JSON but not an object")
    return document


def _shown(body: bytes) -> str:
    text = body[:BODY_SHOWN_CHARS].decode("utf-8", "replace").replace("\n", " ").strip()
    return repr(text) + ("…" if len(body) > BODY_SHOWN_CHARS else "")
