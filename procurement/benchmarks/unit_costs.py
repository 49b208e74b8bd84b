"""Unit costs of a measured run: what one step, one million tokens or samples cost at an hourly price.

cost per 1M tokens = price per hour / (tokens per second x 3600) x 1,000,000. Decimal in, Decimal out,
6 decimals (the product's hourly precision); rounding for people happens at the edge.
"""

from __future__ import annotations

from decimal import Decimal

SIX = Decimal("0.000001")


def unit_costs(
    *,
    price_per_hour: Decimal,
    tokens_per_second: float,
    step_seconds: float,
    samples_per_step: float | None = None,
) -> dict:
    per_second = price_per_hour / Decimal(3600)
    tokens = Decimal(str(tokens_per_second))
    step = Decimal(str(step_seconds))
    costs = {
        "per_million_tokens": (per_second / tokens * Decimal(1_000_000)).quantize(SIX),
        "per_step": (per_second * step).quantize(SIX),
    }
    if samples_per_step:
        samples_per_second = Decimal(str(samples_per_step)) / step
        costs["per_million_samples"] = (per_second / samples_per_second * Decimal(1_000_000)).quantize(SIX)
    return costs
