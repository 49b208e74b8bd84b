"""Bills of known fleets, one row per instance-hour, and an independent brute force of their plan.

The week (168 hours from 2026-11-01 00:00 UTC) of:
- H100 SXM, AWS p5.48xlarge us-east-1 (8 GPUs, NVLink, EFA): instance p5-a every hour on reservation
  "ri-p5" (8 GPUs at 33.024 USD an instance-hour, the demo bills' p5 reserved rate), its term ending
  2027-12-06; p5-b every hour and p5-c hours 0-11 of each day on demand at 55.04 (6.88 a GPU-hour).
- H100 SXM, GCP a3-highgpu-1g us-central1 (1 GPU): h1-a and h1-b every hour on demand at 11.06
  (a 1-GPU fleet next to the 8-GPU one: two fleets, never pooled).
- L4, AWS g6.xlarge us-east-1 (1 GPU, 0.8048 an hour): three instances every hour, two more
  interruptible in hours 8-15 (a second GPU model).

The brute force prices every hour of the week directly (no load-duration curve, no screening, no
search), for every owned server count, 3-year level and 1-year level up to one unit past the peak.
"""

from __future__ import annotations

import itertools

import numpy as np

from planning.engine.demand import UsageRows, hour_index

START = hour_index(__import__("datetime").date(2026, 11, 1))
HOURS = 168
RI_END = hour_index(__import__("datetime").date(2027, 12, 6))  # 400 days after the week ends


def _instance(
    name,
    provider,
    region,
    instance_type,
    gpu,
    gpus,
    rate,
    hours,
    *,
    category="on_demand",
    commitment="",
    interruptible=False,
):
    return [
        dict(
            start_hour=START + h,
            end_hour=START + h + 1,
            gpu_hours=gpus,
            resource_id=name,
            gpu_model=gpu,
            provider=provider,
            region=region,
            instance_type=instance_type,
            gpus_per_instance=gpus,
            pricing_category=category,
            effective_cost_micros=int(round(rate * 1_000_000)),
            commitment_id=commitment,
            commitment_end_hour=RI_END if commitment else -1,
            interruptible=interruptible,
        )
        for h in hours
    ]


def known_bills() -> UsageRows:
    every = range(HOURS)
    mornings = [h for h in every if h % 24 < 12]
    shifts = [h for h in every if 8 <= h % 24 < 16]
    rows = (
        _instance(
            "p5-a",
            "aws",
            "us-east-1",
            "p5.48xlarge",
            "h100-sxm5-80gb",
            8,
            33.024,
            every,
            category="committed",
            commitment="ri-p5",
        )
        + _instance("p5-b", "aws", "us-east-1", "p5.48xlarge", "h100-sxm5-80gb", 8, 55.04, every)
        + _instance("p5-c", "aws", "us-east-1", "p5.48xlarge", "h100-sxm5-80gb", 8, 55.04, mornings)
        + _instance("h1-a", "gcp", "us-central1", "a3-highgpu-1g", "h100-sxm5-80gb", 1, 11.06, every)
        + _instance("h1-b", "gcp", "us-central1", "a3-highgpu-1g", "h100-sxm5-80gb", 1, 11.06, every)
        + [
            row
            for i in range(3)
            for row in _instance(f"l4-{i}", "aws", "us-east-1", "g6.xlarge", "l4", 1, 0.8048, every)
        ]
        + [
            row
            for i in range(2)
            for row in _instance(
                f"l4-s{i}", "aws", "us-east-1", "g6.xlarge", "l4", 1, 0.8048, shifts, interruptible=True
            )
        ]
    )
    columns = {key: [row[key] for row in rows] for key in rows[0]}
    return UsageRows.of(**columns)


def hourly_demand(usage: UsageRows, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(firm, interruptible) GPUs in each hour of the week, counted row by row (one row = one hour)."""
    firm, interruptible = np.zeros(HOURS), np.zeros(HOURS)
    for start, gpus, tagged in zip(
        usage.start_hour[mask], usage.gpu_hours[mask], usage.interruptible[mask], strict=True
    ):
        (interruptible if tagged else firm)[start - START] += gpus
    return firm, interruptible


def brute_force(
    firm,
    interruptible,
    *,
    in_force: float,
    in_force_cost: float,
    on_demand: float,
    spot: float | None,
    committed_1y: float | None,
    committed_3y: float | None,
    server_cost: float | None,
    gpus_per_server: int = 8,
) -> tuple[float, tuple]:
    """The cheapest 12-month plan by enumeration. Each hour of the week stands for 8760 / 168 hours of
    the year. Stack per hour: commitments in force, new commitments, owned servers, then the market
    (firm on demand, interruptible at the cheaper of spot and on-demand). A 3-year term in a 12-month
    plan is paid in full (36 months: a reservation cannot be walked out of). Money per GPU-hour."""
    demand = firm + interruptible
    peak = int(np.ceil(demand.max()))
    scale = 8760.0 / HOURS
    burst = on_demand if spot is None else min(spot, on_demand)
    best = (np.inf, ())
    servers = range(peak // gpus_per_server + 2) if server_cost is not None else [0]
    three = range(peak + 2) if committed_3y is not None else [0]
    one = range(peak + 2) if committed_1y is not None else [0]
    for owned, c3, c1 in itertools.product(servers, three, one):
        stack = in_force + c3 + c1 + owned * gpus_per_server
        firm_above = np.maximum(firm - stack, 0.0)
        all_above = np.maximum(demand - stack, 0.0)
        market = (on_demand * firm_above + burst * (all_above - firm_above)).sum() * scale
        cost = (
            market
            + in_force_cost
            + (c3 * committed_3y * 8760 * 3 if c3 else 0.0)
            + (c1 * committed_1y * 8760 if c1 else 0.0)
            + owned * (server_cost or 0.0)
        )
        if cost < best[0] - 1e-6:
            best = (cost, (owned, c3, c1))
    return best


def brute_force_years(
    firm,
    interruptible,
    *,
    in_force_by_year,
    in_force_cost: float,
    on_demand: float,
    committed_1y: float,
    committed_3y: float,
    server_cost: float,
    years: int,
    gpus_per_server: int = 8,
    renewal_from_year: int | None = None,
    renewal_max: int = 0,
) -> tuple[float, tuple]:
    """As brute_force, over whole plan years: owned servers and the 3-year level are held for the plan
    (a 3-year term paid in full: 36 months), the 1-year level is chosen per year; the commitments in
    force hold ``in_force_by_year[y]`` GPUs in year y. Given (owned, 3-year, renewed), the years' costs
    are independent, so each year's 1-year level is the cheapest of every level for that year. A renewal
    of 0..``renewal_max`` GPUs may start with year ``renewal_from_year`` (a commitment in force ending at a
    year's start): a 3-year term from then, paid in full. The result's levels: (owned, 3-year, 1-year by
    year, renewed)."""
    demand = firm + interruptible
    peak = int(np.ceil(demand.max()))
    scale = 8760.0 / HOURS
    best = (np.inf, ())
    renewals = range(renewal_max + 1) if renewal_from_year is not None else [0]
    for owned, c3, renewed in itertools.product(
        range(peak // gpus_per_server + 2), range(peak + 2), renewals
    ):
        total = in_force_cost + owned * server_cost + (c3 + renewed) * committed_3y * 8760 * 3
        chosen = []
        for year in range(years):
            year_best = (np.inf, 0)
            renewing = renewed if renewal_from_year is not None and year >= renewal_from_year else 0
            for c1 in range(peak + 2):
                stack = in_force_by_year[year] + c3 + renewing + c1 + owned * gpus_per_server
                all_above = np.maximum(demand - stack, 0.0)  # no spot here: every GPU-hour above on demand
                cost = (on_demand * all_above).sum() * scale + c1 * committed_1y * 8760
                if cost < year_best[0] - 1e-6:
                    year_best = (cost, c1)
            total += year_best[0]
            chosen.append(year_best[1])
        if total < best[0] - 1e-6:
            best = (total, (owned, c3, tuple(chosen), renewed))
    return best
