"""Reference copy of the savings before the vectorization of issue 8 (commit c074555 of
billing/review/savings.py): row-by-row, kept only to compare the fast engine against. Not app code."""

from __future__ import annotations

from decimal import Decimal

import numpy as np
import pandas as pd

from billing.review.savings import CheaperGpu, PriceContext  # noqa: F401 (the same inputs)
from procurement.costing.commitments import cheapest_commitment_mix
from procurement.costing.values import round_money

MICRO = 1_000_000
HOURS_PER_DAY = 24


def _amount(value: Decimal, currency: str) -> str:
    return str(round_money(value, currency))


def _gpu_hours(micros: Decimal) -> str:
    return str((micros / MICRO).quantize(Decimal("0.01")))


def savings_opportunities(
    gpu: pd.DataFrame, *, request, prices: PriceContext, idle_micros, currency: str
) -> list[dict]:
    claimed = pd.Series(0.0, index=gpu.index)  # share of each row already claimed (0..1)
    results = []
    for step in (_spot, _commitment, _cheaper_gpu, _idle):
        found = step(gpu, claimed, request=request, prices=prices, idle_micros=idle_micros, currency=currency)
        if found:
            results.append(found)
    return results


def _row_fraction_left(claimed: pd.Series, index) -> pd.Series:
    return 1 - claimed.loc[index]


def _spot(gpu, claimed, *, prices, currency, **_):
    rows = gpu[
        (gpu["pricing_category"] == "on_demand") & gpu["interruptible"] & (gpu["instance_hours_micros"] > 0)
    ]
    amount, gpu_hours, priced = Decimal(0), Decimal(0), 0
    factor = 1 + prices.spot_overhead
    # per (provider, instance type, region): one spot price, so the sums re-price the group exactly
    for key, group in rows.groupby(["provider", "instance_type", "region"], observed=True):
        spot = prices.spot.get(key)
        if spot is None:
            continue
        sums = group[["instance_hours_micros", "effective_micros", "gpu_hours_micros"]].sum()
        spot_cost = Decimal(int(sums["instance_hours_micros"])) / MICRO * spot * factor
        actual = Decimal(int(sums["effective_micros"])) / MICRO
        if spot_cost >= actual:
            continue
        amount += actual - spot_cost
        gpu_hours += Decimal(int(sums["gpu_hours_micros"]))
        claimed.loc[group.index] = 1.0
        priced += 1
    if not priced:
        return None
    return {
        "kind": "spot",
        "amount": _amount(amount, currency),
        "hours_affected": _gpu_hours(gpu_hours),
        "confidence": "medium",
        "assumptions": [
            "on-demand rows tagged interruptible move to spot in the same provider, instance type and region",
            "spot price: the median of the catalog's current spot prices across the region's zones",
            f"spot overhead {prices.spot_overhead:.4f} of the spot price (checkpoints and lost work, "
            "procurement/costing/spot.py)",
            *prices.spot_assumptions,
            "interruptions may lengthen jobs beyond the modelled overhead",
        ],
    }


def _daily_instances(rows: pd.DataFrame, start, end) -> np.ndarray:
    """Instance-hours per day of [start, end); a row longer than a day is spread evenly over its days."""
    days = pd.date_range(
        pd.Timestamp(start, tz="UTC"), pd.Timestamp(end, tz="UTC"), freq="D", inclusive="left"
    )
    first = rows["charge_period_start"].dt.floor("D")
    one_day = rows["charge_period_end"] <= first + pd.Timedelta(days=1)
    hours = rows["instance_hours_micros"].astype(np.int64) / MICRO
    totals = hours[one_day].groupby(first[one_day]).sum().reindex(days, fill_value=0.0)
    for index in rows.index[~one_day]:
        covered = pd.date_range(
            first.loc[index], rows.at[index, "charge_period_end"].ceil("D"), freq="D", inclusive="left"
        )
        totals.loc[totals.index.intersection(covered)] += hours.loc[index] / len(covered)
    return totals.to_numpy()


def _observed_committed_rates(gpu: pd.DataFrame) -> dict[tuple[str, str], Decimal]:
    used = gpu[(gpu["pricing_category"] == "committed") & (gpu["instance_hours_micros"] > 0)]
    sums = used.groupby(["provider", "instance_type"], observed=True)[
        ["effective_micros", "instance_hours_micros"]
    ].sum()
    return {
        key: Decimal(int(r["effective_micros"])) / Decimal(int(r["instance_hours_micros"]))
        for key, r in sums.iterrows()
    }


def _commitment(gpu, claimed, *, request, prices, currency, **_):
    on_demand = gpu[(gpu["pricing_category"] == "on_demand") & (gpu["instance_hours_micros"] > 0)]
    on_demand = on_demand[claimed.loc[on_demand.index] < 1.0]
    observed = _observed_committed_rates(gpu)
    amount, gpu_hours, groups, sources = Decimal(0), Decimal(0), 0, set()
    for (provider, itype, region), rows in on_demand.groupby(
        ["provider", "instance_type", "region"], observed=True
    ):
        committed = prices.committed.get((provider, itype, region))
        source = "catalog 1-year commitment price"
        if committed is None:
            committed, source = observed.get((provider, itype)), "the committed rate this bill already pays"
        if committed is None:
            continue
        left = _row_fraction_left(claimed, rows.index)
        od_hours = Decimal(int((rows["instance_hours_micros"] * left).sum())) / MICRO
        od_rate = Decimal(int((rows["effective_micros"] * left).sum())) / MICRO / od_hours
        demand = [int(v + 1e-9) // HOURS_PER_DAY for v in _daily_instances(rows, request.start, request.end)]
        if not demand or min(demand) == 0 or committed >= od_rate:
            continue
        mix = cheapest_commitment_mix(
            demand_gpus=demand,
            period_hours=Decimal(HOURS_PER_DAY),
            committed_per_gpu_hour=committed,
            on_demand_per_gpu_hour=od_rate,
        )
        saved = mix.all_burst_cost - mix.floor_total
        if saved <= 0:
            continue
        covered_instance_hours = Decimal(mix.floor_gpus * HOURS_PER_DAY * len(demand))
        gpus_per_instance = Decimal(str(rows["gpus_per_instance"].iloc[0]))
        amount += saved
        gpu_hours += covered_instance_hours * gpus_per_instance * MICRO
        share = float(covered_instance_hours / od_hours)
        claimed.loc[rows.index] = claimed.loc[rows.index] + (1 - claimed.loc[rows.index]) * share
        groups += 1
        sources.add(source)
    if not groups:
        return None
    return {
        "kind": "commitment",
        "amount": _amount(amount, currency),
        "hours_affected": _gpu_hours(gpu_hours),
        "confidence": "high" if sources == {"catalog 1-year commitment price"} else "medium",
        "assumptions": [
            "commit to the utilization floor: the fewest instances that ran all day on every day of the period",
            f"commitment price: {' / '.join(sorted(sources))}",
            "the hours above the floor stay on demand; the usage continues for the commitment's term",
        ],
    }


def _cheaper_gpu(gpu, claimed, *, prices, currency, **_):
    rows = gpu[gpu["resource_id"].isin(list(prices.cheaper_gpu)) & (gpu["instance_hours_micros"] > 0)]
    amount, gpu_hours, targets = Decimal(0), Decimal(0), set()
    for index, row in rows.iterrows():
        left = Decimal(str(1 - claimed.loc[index]))
        option = prices.cheaper_gpu[row["resource_id"]]
        if left <= 0 or option.cost_ratio >= 1:
            continue
        amount += Decimal(int(row["effective_micros"])) / MICRO * left * (1 - option.cost_ratio)
        gpu_hours += Decimal(int(row["gpu_hours_micros"])) * left
        claimed.loc[index] = 1.0
        targets.add(option.target)
    if not targets:
        return None
    return {
        "kind": "cheaper_gpu",
        "amount": _amount(amount, currency),
        "hours_affected": _gpu_hours(gpu_hours),
        "confidence": "low",
        "assumptions": [
            "resources tagged with a stored workload move to the cheapest configuration its latest ranking found: "
            + ", ".join(sorted(targets)),
            "cost scales by the ranking's job-cost ratio (speed and price of both configurations)",
        ],
    }


def _idle(gpu, claimed, *, idle_micros, currency, **_):
    if idle_micros is None:
        return None
    rows = gpu[(idle_micros > 0) & (gpu["gpu_hours_micros"] > 0)]
    amount, gpu_hours = Decimal(0), Decimal(0)
    for index, row in rows.iterrows():
        left = Decimal(str(1 - claimed.loc[index]))
        if left <= 0:
            continue
        idle = Decimal(int(idle_micros.loc[index])) * left
        per_gpu_hour = Decimal(int(row["effective_micros"])) / Decimal(int(row["gpu_hours_micros"]))
        amount += idle * per_gpu_hour / MICRO
        gpu_hours += idle
    if gpu_hours == 0:
        return None
    return {
        "kind": "idle",
        "amount": _amount(amount, currency),
        "hours_affected": _gpu_hours(gpu_hours),
        "confidence": "medium",
        "assumptions": [
            "GPU-hours whose mean utilization was under 10% could be released (stopped or scaled in)",
            "valued at the row's own effective cost per GPU-hour; hours claimed by earlier savings are left out",
            "only hours with utilization samples are judged; hours without samples are not counted idle",
        ],
    }
