"""The pandas reference's commitment step (savings_pandas._commitment, billing/review/savings.py at
3b0be897) with fixf45's two rule changes made on purpose, in plain Python over the rows, for
tests/billing/test_savings_sql.py to compare the SQL version against. Not app code. Each change is marked
"fixf45:"; everything else is the verbatim step:

1. the floor: a key with a line shorter than a day is counted per hour (each line's instance-hours spread
   evenly over the hours its charge period touches, in 1e-18 hours floored per line and hour, summed per
   hour, floored to instances after the same 1e-9-hour slack, the minimum over the period's hours, an hour
   without usage 0) in a Python loop over lines and hours; a key whose lines are all a day or longer keeps
   the verbatim daily profile (savings_pandas._daily_instances, its floats). The saving commits the floor
   for every hour of the period (cheapest_commitment_mix over one period of the period's hours: the same
   amount as the daily profile's floor_total, which depends on the floor and the hours only).
2. the bill's committed rate: the key's own region's, else the instance type's across its regions.
The assumption texts are the product's (savings._grain_note, savings._commitment_choice): the wording is
checked by the product's own tests, the figures here.
"""

from __future__ import annotations

from decimal import Decimal

import numpy as np
import pandas as pd

from billing.review.savings import _commitment_choice, _grain_note
from procurement.costing.commitments import cheapest_commitment_mix
from tests.billing.reference import savings_pandas as ref

HOUR_NS = 3_600 * 10**9
UNIT = 10**18  # an hour in 1e-18 hours
SLACK = 10**9  # 1e-9 hours


def hourly_floor(start_ns, end_ns, instance_hours, first_hour: int, last_hour: int) -> int:
    """The fewest instances running in any hour of [first_hour, last_hour), by a loop over lines and hours."""
    per_hour = dict.fromkeys(range(first_hour, last_hour), 0)
    for start, end, micros in zip(start_ns.tolist(), end_ns.tolist(), instance_hours.tolist(), strict=True):
        first = start // HOUR_NS
        covered = 1 if end <= (first + 1) * HOUR_NS else -(-end // HOUR_NS) - first
        for hour in range(first, first + covered):
            if hour in per_hour:
                per_hour[hour] += int(micros) * 10**12 // covered
    return min((units + SLACK) // UNIT for units in per_hour.values())


def grain(start_ns: np.ndarray, end_ns: np.ndarray) -> str:
    span = end_ns - start_ns
    if (span >= ref.DAY_NS).all():
        return "daily"
    return "spread" if (span > HOUR_NS).any() else "hourly"


def committed_rates(rows) -> tuple[dict, dict]:
    """fixf45: the committed rate per (provider, instance type, region) and per (provider, instance type)."""
    mask = rows.committed & (rows.instance_hours > 0)
    used = rows.frame.loc[
        mask, ["provider", "instance_type", "region", "effective_micros", "instance_hours_micros"]
    ]
    rates = []
    for keys in (["provider", "instance_type", "region"], ["provider", "instance_type"]):
        sums = used.groupby(keys, observed=True)[["effective_micros", "instance_hours_micros"]].sum()
        rates.append(
            {
                key: Decimal(int(e)) / Decimal(int(h))
                for key, e, h in zip(
                    sums.index, sums["effective_micros"], sums["instance_hours_micros"], strict=True
                )
            }
        )
    return rates[0], rates[1]


def _commitment(rows, *, request, prices, currency, **_):
    mask = rows.on_demand & (rows.instance_hours > 0) & (rows.claimed < 1.0)
    if not mask.any():
        return None
    by_region, by_type = committed_rates(rows)  # fixf45
    keys, group_of = rows.key_groups(mask)
    positions_of = np.split(
        np.flatnonzero(mask)[np.argsort(group_of, kind="stable")], np.cumsum(np.bincount(group_of))[:-1]
    )
    first_day = pd.Timestamp(request.start, tz="UTC").as_unit("ns").value // ref.DAY_NS
    last_day = pd.Timestamp(request.end, tz="UTC").as_unit("ns").value // ref.DAY_NS
    period_hours = Decimal(24 * int(last_day - first_day))
    amount, gpu_hours, groups, sources, used, chosen, notes = Decimal(0), Decimal(0), 0, set(), [], [], []
    for (provider, itype, region), positions in zip(
        keys.itertuples(index=False, name=None), positions_of, strict=True
    ):
        key = (provider, itype, region)
        committed, source, across = prices.committed.get(key), ref.STORED_COMMITMENT, False
        if committed is None:  # fixf45: the region's own committed rate, else the type's across regions
            committed, source = by_region.get(key), ref.BILLED_COMMITMENT
        if committed is None:
            committed, across = by_type.get((provider, itype)), True
        if committed is None:
            continue
        choice = _commitment_choice(key, committed, source, prices, across_regions=across)
        left = 1 - rows.claimed[positions]
        od_hours = Decimal(int((rows.instance_hours[positions] * left).sum())) / ref.MICRO
        od_rate = Decimal(int((rows.effective[positions] * left).sum())) / ref.MICRO / od_hours
        starts, ends, hours = rows.start_ns[positions], rows.end_ns[positions], rows.instance_hours[positions]
        kind = grain(starts, ends)
        if kind == "daily":  # the verbatim daily profile
            daily = ref._daily_instances(starts, ends, hours, request.start, request.end)
            floor = min(int(v + 1e-9) // ref.HOURS_PER_DAY for v in daily)
        else:  # fixf45: the hourly floor
            floor = hourly_floor(starts, ends, hours, int(first_day) * 24, int(last_day) * 24)
        if floor == 0 or committed >= od_rate:
            continue
        mix = cheapest_commitment_mix(
            demand_gpus=[floor],
            period_hours=period_hours,
            committed_per_gpu_hour=committed,
            on_demand_per_gpu_hour=od_rate,
        )
        saved = mix.all_burst_cost - mix.floor_total
        if saved <= 0:
            continue
        covered_instance_hours = Decimal(mix.floor_gpus) * period_hours
        gpus_per_instance = Decimal(str(rows.frame["gpus_per_instance"].iat[positions[0]]))
        amount += saved
        gpu_hours += covered_instance_hours * gpus_per_instance * ref.MICRO
        share = float(covered_instance_hours / od_hours)
        rows.claimed[positions] = rows.claimed[positions] + (1 - rows.claimed[positions]) * share
        groups += 1
        sources.add(source)
        used += prices.committed_sources.get(key, ())
        chosen.append(choice)
        notes += _grain_note(key, kind)
    if not groups:
        return None
    return {
        "kind": "commitment",
        "amount": ref._amount(amount, currency),
        "hours_affected": ref._gpu_hours(gpu_hours),
        "confidence": "high" if sources == {ref.STORED_COMMITMENT} else "medium",
        "assumptions": [  # fixf45: the product's wording of the hourly floor
            "commit to the utilization floor: the fewest instances running at the same time in any hour of "
            "the period (each line's instance-hours spread evenly over the hours of its charge period; an "
            "hour without usage counts as 0)",
            f"commitment price: {' / '.join(sorted(sources))}",
            "the hours above the floor stay on demand; the usage continues for the commitment's term",
            *(choice["note"] for choice in chosen),
            *notes,
        ],
        "prices": ref._prices(used),
        "commitment_prices": chosen,
    }
