"""Retry a provider call on throttling and transient network errors, with backoff and jitter.

Only errors that a later attempt can fix are retried: API throttling and dropped or timed-out
connections. Anything else (bad credentials, a malformed response) fails at once. When the attempts
run out the error is re-raised as ``TransientSourceError`` so that the Celery task, which retries a
whole (source, region) later, can name exactly this class in ``autoretry_for``.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, TypeVar

from botocore.exceptions import (
    ClientError,
    ConnectionClosedError,
    ConnectTimeoutError,
    EndpointConnectionError,
    ReadTimeoutError,
)
from botocore.paginate import TokenEncoder

T = TypeVar("T")
_TOKENS = TokenEncoder()

THROTTLING_CODES = frozenset(
    {
        "Throttling",
        "ThrottlingException",
        "ThrottledException",
        "RequestLimitExceeded",
        "RequestThrottled",
        "RequestThrottledException",
        "TooManyRequestsException",
        "SlowDown",
    }
)
NETWORK_ERRORS = (EndpointConnectionError, ConnectionClosedError, ConnectTimeoutError, ReadTimeoutError)


class TransientSourceError(RuntimeError):
    """A source kept throttling or dropping the connection after every retry; try again later."""


class TransientHttpError(RuntimeError):
    """An HTTP source's answer a later attempt can get past: throttled (429), a gateway or server that is
    briefly down (500, 502, 503, 504), or a dropped or timed-out connection (pricing/providers/http_json.py)."""


@dataclass(frozen=True)
class RetryPolicy:
    """Exponential backoff with full jitter: attempt n waits uniform(0, min(cap, base * 2**n)) seconds."""

    max_retries: int = 5
    base_delay_s: float = 0.5
    max_delay_s: float = 20.0
    sleep: Callable[[float], None] = time.sleep
    random_fraction: Callable[[], float] = random.random

    def delay_s(self, retry_number: int) -> float:
        ceiling = min(self.max_delay_s, self.base_delay_s * 2**retry_number)
        return ceiling * self.random_fraction()


def is_transient(error: BaseException) -> bool:
    """True for throttling and network errors, which a later attempt can get past."""
    if isinstance(error, ClientError):
        return error.response.get("Error", {}).get("Code", "") in THROTTLING_CODES
    return isinstance(error, (*NETWORK_ERRORS, TransientHttpError))


def call_with_retry(call: Callable[[], T], policy: RetryPolicy, *, what: str) -> T:
    """Run `call`, retrying transient errors per `policy`; `what` names the call in the final error."""
    retry_number = 0
    while True:
        try:
            return call()
        except Exception as error:
            if not is_transient(error):
                raise
            if retry_number >= policy.max_retries:
                raise TransientSourceError(
                    f"{what}: still failing after {retry_number} retries: {error}"
                ) from error
            policy.sleep(policy.delay_s(retry_number))
            retry_number += 1


def pages_with_retry(
    client: Any, operation: str, policy: RetryPolicy, *, what: str, **params: Any
) -> Iterator[dict[str, Any]]:
    """The pages of a boto3 paginator, one request at a time, each retried on its own.

    A throttled page is fetched again from its own NextToken (the paginator's StartingToken), so a
    retry neither repeats the pages already yielded nor starts the listing over.
    """
    paginator = client.get_paginator(operation)
    next_token: str | None = None
    page_number = 0
    while True:
        page_number += 1
        config = {"StartingToken": _TOKENS.encode({"NextToken": next_token})} if next_token else {}

        def first_page(config: dict[str, str] = config) -> dict[str, Any]:
            return next(iter(paginator.paginate(**params, PaginationConfig=config)))

        page = call_with_retry(first_page, policy, what=f"{what} page {page_number}")
        yield page
        next_token = page.get("NextToken")
        if not next_token:
            return
