"""Backoff with jitter: bounded delays, transient errors only, a final error naming the call."""

from __future__ import annotations

import pytest
from botocore.exceptions import ClientError, EndpointConnectionError
from hypothesis import given
from hypothesis import strategies as st

from pricing.providers.retry import RetryPolicy, TransientSourceError, call_with_retry, is_transient


def client_error(code: str) -> ClientError:
    return ClientError({"Error": {"Code": code, "Message": code}}, "DescribeSpotPriceHistory")


@given(
    retry_number=st.integers(min_value=0, max_value=40),
    fraction=st.floats(min_value=0, max_value=1),
    base=st.floats(min_value=0.01, max_value=5),
    cap=st.floats(min_value=0.1, max_value=60),
)
def test_it_keeps_every_delay_between_zero_and_the_capped_exponential(retry_number, fraction, base, cap):
    policy = RetryPolicy(base_delay_s=base, max_delay_s=cap, random_fraction=lambda: fraction)
    delay = policy.delay_s(retry_number)
    assert 0 <= delay <= min(cap, base * 2**retry_number) + 1e-9


@pytest.mark.parametrize(
    ("error", "transient"),
    [
        (client_error("RequestLimitExceeded"), True),
        (client_error("ThrottlingException"), True),
        (client_error("Throttling"), True),
        (EndpointConnectionError(endpoint_url="https://ec2.us-east-1.amazonaws.com"), True),
        (client_error("AuthFailure"), False),
        (client_error("InvalidParameterValue"), False),
        (ValueError("bad"), False),
    ],
)
def test_it_treats_only_throttling_and_network_errors_as_transient(error, transient):
    assert is_transient(error) is transient


def test_it_retries_a_dropped_connection_then_returns():
    outcomes = [EndpointConnectionError(endpoint_url="https://pricing.us-east-1.amazonaws.com"), "ok"]
    sleeps: list[float] = []

    def call():
        outcome = outcomes.pop(0)
        if isinstance(outcome, Exception):
            raise outcome
        return outcome

    policy = RetryPolicy(max_retries=1, base_delay_s=2, sleep=sleeps.append, random_fraction=lambda: 0.25)
    assert call_with_retry(call, policy, what="pricing") == "ok"
    assert sleeps == [0.5]


def test_it_names_the_call_when_retries_run_out():
    policy = RetryPolicy(max_retries=0, sleep=lambda _: None)

    def call():
        raise client_error("RequestLimitExceeded")

    with pytest.raises(TransientSourceError, match="aws us-east-1 spot: still failing after 0 retries"):
        call_with_retry(call, policy, what="aws us-east-1 spot")
