"""The HTTP JSON getter of the non-AWS price APIs: what it retries, what it waits, what it never says."""

from __future__ import annotations

from decimal import Decimal

import pytest

from pricing.providers.http_api import HttpAnswer, HttpSourceError, get_json
from pricing.providers.retry import TransientSourceError
from tests.pricing.providers.fake_http import FakeHttp, error_page, no_wait_policy, ok, throttled

URL = "https://example.invalid/prices?page=1"


def test_it_waits_what_retry_after_asks_then_reads_the_page():
    sleeps: list[float] = []
    http = FakeHttp(throttled("7"), ok("lambda_empty.json"))
    assert get_json(URL, transport=http, policy=no_wait_policy(sleeps), what="prices") == {"data": {}}
    # backoff for the first retry is 0.5 s (1 s ceiling, half jitter); the server asked for 7 s
    assert sleeps == [7.0] and len(http.calls) == 2


def test_it_backs_off_on_an_html_error_page_and_gives_up_as_transient():
    sleeps: list[float] = []
    http = FakeHttp(*[error_page(503)] * 4)
    with pytest.raises(TransientSourceError, match=r"after 3 retries: HTTP 503: '<!DOCTYPE html>"):
        get_json(URL, transport=http, policy=no_wait_policy(sleeps), what="prices")
    assert sleeps == [0.5, 1.0, 2.0]  # 1, 2, 4 s ceilings at half jitter


def test_it_does_not_retry_a_refused_key_and_never_repeats_the_credential():
    http = FakeHttp(HttpAnswer(403, b'{"error": "API key not valid"}'))
    with pytest.raises(HttpSourceError, match="prices: HTTP 403") as raised:
        get_json(
            URL, transport=http, policy=no_wait_policy(), what="prices", headers={"X-Goog-Api-Key": "s3cret"}
        )
    assert "s3cret" not in str(raised.value) and len(http.calls) == 1


def test_it_refuses_a_200_that_is_not_json():
    http = FakeHttp(HttpAnswer(200, b"<html><body>maintenance</body></html>"))
    with pytest.raises(HttpSourceError, match="not JSON"):
        get_json(URL, transport=http, policy=no_wait_policy(), what="prices")


def test_it_keeps_prices_as_exact_decimals():
    http = FakeHttp(HttpAnswer(200, b'{"retailPrice": 98.32}'))
    assert get_json(URL, transport=http, policy=no_wait_policy(), what="p")["retailPrice"] == Decimal("98.32")


def test_a_retry_after_beyond_the_cap_fails_the_attempt_for_a_later_task_retry():
    with pytest.raises(TransientSourceError, match="Retry-After 3600"):
        get_json(URL, transport=FakeHttp(throttled("3600")), policy=no_wait_policy(), what="prices")
