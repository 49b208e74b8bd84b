"""Commitment prices from a JSON file: each row an instance type in a region with its term, kind, payment
option, upfront fee and hourly part (pricing/data/providers/aws_commitments_illustrative.json is the
bundled demo one). The effective hourly price is hourly + upfront ÷ term hours (8760 a year), as AWS
states it. The rows' source is ``illustrative:<file name>`` unless the caller names another: the bundled
file's prices are made up, so they are labelled, never ranked and never decide a spend-review saving.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path

from pricing.providers.cells import PRICE_QUANTUM, required_decimal
from pricing.providers.records import InstanceTypeRecord, PriceRecord, SourceRowError
from pricing.providers.vocabulary import (
    ALL_UPFRONT,
    COMPUTE_SAVINGS_PLAN,
    CONVERTIBLE_RESERVATION,
    INSTANCE_SAVINGS_PLAN,
    NO_UPFRONT,
    PARTIAL_UPFRONT,
    STANDARD_RESERVATION,
    TERM_HOURS,
)

KINDS = {STANDARD_RESERVATION, CONVERTIBLE_RESERVATION, COMPUTE_SAVINGS_PLAN, INSTANCE_SAVINGS_PLAN, ""}
PAYMENTS = {NO_UPFRONT, PARTIAL_UPFRONT, ALL_UPFRONT}
MAX_ROWS = 10_000


def read_commitment_file(path: Path, *, provider: str = "aws", source: str = "") -> Iterator[PriceRecord]:
    document = json.loads(path.read_text(encoding="utf-8"))
    source = source or f"illustrative:{path.name}"
    observed_at = dt.datetime.fromisoformat(document["observed_at"])
    rows = document.get("prices") or []
    if len(rows) > MAX_ROWS:
        raise SourceRowError(path.name, "prices", f"{len(rows)} rows (at most {MAX_ROWS})")
    for number, row in enumerate(rows, start=1):
        yield _record(
            row,
            f"{path.name} prices[{number}]",
            provider,
            document.get("currency", "USD"),
            observed_at,
            source,
        )


def _record(row: dict, location: str, provider: str, currency: str, observed_at, source: str) -> PriceRecord:
    model = row.get("pricing_model")
    if model not in TERM_HOURS:
        raise SourceRowError(location, "pricing_model", f"{model!r} is not a commitment term")
    if row.get("payment_option") not in PAYMENTS:
        raise SourceRowError(
            location, "payment_option", f"{row.get('payment_option')!r} is not a payment option"
        )
    if row.get("commitment_kind", "") not in KINDS:
        raise SourceRowError(location, "commitment_kind", f"{row.get('commitment_kind')!r} is not a kind")
    upfront = required_decimal(row.get("upfront"), location=location, field="upfront")
    hourly = required_decimal(row.get("hourly"), location=location, field="hourly")
    instance = InstanceTypeRecord(
        provider=provider,
        name=row["instance_type"],
        gpu_name=row["gpu_name"],
        gpu_count=Decimal(row["gpu_count"]),
    )
    return PriceRecord(
        instance=instance,
        region=row["region"],
        zone="",
        pricing_model=model,
        price_per_hour=(hourly + upfront / TERM_HOURS[model]).quantize(PRICE_QUANTUM),
        currency=currency,
        observed_at=observed_at,
        source=source,
        location=location,
        payment_option=row["payment_option"],
        upfront_fee=upfront,
        commitment_kind=row.get("commitment_kind", ""),
        recurring_per_hour=hourly,
    )
