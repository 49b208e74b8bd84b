"""Reference copy of the savings as they stood at 3b0be897 (billing/review/savings.py): the vectorized
pandas/numpy version whose sums (per provider, instance type and region, per resource, per idle value,
instance-hours per day as float sums in a pinned order) sav45 moved into review_sql's SAVINGS_*
statements. Copied verbatim below this docstring; kept only to compare the SQL version against
(tests/billing/test_savings_sql.py). Not app code.

The docstring it had:

Savings opportunities by re-pricing the actual GPU usage, in a stated order, no hour counted twice.

Each kind works on the share of each spend row that the earlier kinds left unclaimed:
1. spot: on-demand rows of interruptible work (tag `interruptible=true`, configurable) re-priced at the
   catalog's spot price for the same provider, instance type and region, times (1 + the cost engine's
   spot overhead: checkpoints and lost work, procurement/costing/spot.py);
2. commitment: for on-demand usage left, a commitment sized to the utilization floor (the fewest
   instances running on any day of the period, procurement/costing/commitments.py), at the catalog's
   1-year commitment price for the type and region (the cheapest stored one, pricing/commitment_prices.py),
   else the committed rate this bill already pays for the same instance type; `commitment_prices` says
   per instance type and region which one, with the stored price's id, source and date;
3. cheaper GPU: a resource linked to a stored workload (tag `workload`) whose ranking found a cheaper
   configuration, re-priced by the ratio of the two job costs (the ranking engine's totals);
4. idle: GPU-hours under 10% utilization, at the row's own cost per GPU-hour.
Amounts are in the review currency; `hours_affected` counts GPU-hours. Each saving lists under `prices`
the catalog prices it used, with their observation date and quality (observed, snapshot, quoted).

Speed (benchmarks/review_bench.py): a million rows go through as numpy arrays by position. The exact
Decimal arithmetic runs once per group of rows that share every input of the formula (a price key, a
resource, a row cost and GPU-hours, the share left unclaimed), never once per row; the sums inside a
group are exact integer micro-units, so the result is the row-by-row one (tests/billing/reference/ keeps
that implementation and test_review_speedup.py compares them).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal

import numpy as np
import pandas as pd

from procurement.costing.commitments import cheapest_commitment_mix
from procurement.costing.values import round_money

MICRO = 1_000_000
HOURS_PER_DAY = 24
DAY_NS = 86_400 * 10**9


@dataclass(frozen=True)
class CheaperGpu:
    cost_ratio: Decimal  # cheapest configuration's job cost / the current configuration's job cost
    target: str  # e.g. "aws p4de.24xlarge x1 (a100-sxm4-80gb)"


@dataclass(frozen=True)
class PriceUsed:
    """One catalog price a saving used: what for, when it was observed and what kind of evidence it is."""

    label: str  # "aws p5.48xlarge us-east-1 spot use1-az2"
    observed_at: str | None  # ISO 8601
    quality: str  # pricing/price_quality.py: observed, snapshot, quoted, illustrative
    source: str
    pricing_model: str = ""
    stale_after_hours: float | None = None  # its freshness limit (pricing/selectors.py price_staleness)
    price_id: int | None = None  # the stored observation (PriceObservation id)

    def as_dict(self) -> dict:
        return {
            "label": self.label,
            "observed_at": self.observed_at,
            "quality": self.quality,
            "source": self.source,
            "pricing_model": self.pricing_model,
            "stale_after_hours": self.stale_after_hours,
            "price_id": self.price_id,
        }


@dataclass(frozen=True)
class PriceContext:
    """Prices per instance-hour in the review currency, keyed (provider, instance type, region)."""

    spot: dict[tuple[str, str, str], Decimal] = field(default_factory=dict)
    committed: dict[tuple[str, str, str], Decimal] = field(default_factory=dict)
    spot_overhead: Decimal = Decimal("0")  # fraction added to the spot price (checkpoints, lost work)
    spot_assumptions: tuple[str, ...] = ()
    cheaper_gpu: dict[str, CheaperGpu] = field(default_factory=dict)  # resource id -> option
    # the observations behind each price of `spot` and `committed` (same keys)
    spot_sources: dict[tuple[str, str, str], tuple[PriceUsed, ...]] = field(default_factory=dict)
    committed_sources: dict[tuple[str, str, str], tuple[PriceUsed, ...]] = field(default_factory=dict)


def _amount(value: Decimal, currency: str) -> str:
    return str(round_money(value, currency))


def _gpu_hours(micros: Decimal) -> str:
    return str((micros / MICRO).quantize(Decimal("0.01")))


def _prices(used: list[PriceUsed]) -> list[dict]:
    """Each price once, in label order (several groups can share one observation)."""
    unique = {(p.label, p.observed_at, p.source): p for p in used}
    return [unique[key].as_dict() for key in sorted(unique, key=lambda k: (k[0], k[1] or "", k[2]))]


@dataclass
class _Rows:
    """The GPU usage rows as plain arrays by position (one conversion, then no index alignment)."""

    frame: pd.DataFrame
    on_demand: np.ndarray  # pricing category on_demand (bool per row)
    committed: np.ndarray  # pricing category committed
    start_ns: np.ndarray  # charge period start and end, int64 nanoseconds since the epoch (UTC)
    end_ns: np.ndarray
    instance_hours: np.ndarray
    effective: np.ndarray
    gpu_hours: np.ndarray
    claimed: np.ndarray  # share of each row already claimed by an earlier saving (0..1)

    @classmethod
    def of(cls, gpu: pd.DataFrame) -> _Rows:
        return cls(
            frame=gpu,
            on_demand=(gpu["pricing_category"] == "on_demand").to_numpy(bool),
            committed=(gpu["pricing_category"] == "committed").to_numpy(bool),
            start_ns=_ns(gpu["charge_period_start"]),
            end_ns=_ns(gpu["charge_period_end"]),
            instance_hours=gpu["instance_hours_micros"].to_numpy(np.int64),
            effective=gpu["effective_micros"].to_numpy(np.int64),
            gpu_hours=gpu["gpu_hours_micros"].to_numpy(np.int64),
            claimed=np.zeros(len(gpu)),
        )

    def key_groups(self, mask: np.ndarray) -> tuple[pd.DataFrame, np.ndarray]:
        """(provider, instance type, region) of the masked rows: the distinct keys in sorted order and each
        masked row's group number in them."""
        keys = self.frame.loc[mask, ["provider", "instance_type", "region"]]
        grouped = keys.groupby(["provider", "instance_type", "region"], observed=True, sort=True)
        return grouped.size().index.to_frame(index=False), grouped.ngroup().to_numpy()


def savings_opportunities(
    gpu: pd.DataFrame, *, request, prices: PriceContext, idle_micros, currency: str
) -> list[dict]:
    rows = _Rows.of(gpu)
    idle = None if idle_micros is None else np.asarray(idle_micros, dtype=np.int64)
    results = []
    for step in (_spot, _commitment, _cheaper_gpu, _idle):
        found = step(rows, request=request, prices=prices, idle_micros=idle, currency=currency)
        if found:
            results.append(found)
    return results


def _spot(rows: _Rows, *, prices, currency, **_):
    interruptible = rows.frame["interruptible"].to_numpy(bool)
    mask = rows.on_demand & interruptible & (rows.instance_hours > 0)
    if not mask.any():
        return None
    keys, group_of = rows.key_groups(mask)
    count = len(keys)
    sums = {  # exact integer sums per key (bincount's float64 would round past 2**53 micro-units)
        name: _group_sums(values[mask], group_of, count)
        for name, values in (("ih", rows.instance_hours), ("eff", rows.effective), ("gh", rows.gpu_hours))
    }
    amount, gpu_hours, priced, used = Decimal(0), Decimal(0), np.zeros(count, bool), []
    factor = 1 + prices.spot_overhead
    # per (provider, instance type, region): one spot price, so the sums re-price the group exactly
    for number, key in enumerate(keys.itertuples(index=False, name=None)):
        spot = prices.spot.get(key)
        if spot is None:
            continue
        spot_cost = Decimal(sums["ih"][number]) / MICRO * spot * factor
        actual = Decimal(sums["eff"][number]) / MICRO
        if spot_cost >= actual:
            continue
        amount += actual - spot_cost
        gpu_hours += Decimal(sums["gh"][number])
        priced[number] = True
        used += prices.spot_sources.get(key, ())
    if not priced.any():
        return None
    positions = np.flatnonzero(mask)[priced[group_of]]
    rows.claimed[positions] = 1.0
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
        "prices": _prices(used),
    }


def _group_sums(values: np.ndarray, group_of: np.ndarray, count: int) -> list[int]:
    """Exact sum of int64 values per group number (0..count-1), as Python ints."""
    order = np.argsort(group_of, kind="stable")
    bounds = np.searchsorted(group_of[order], np.arange(count + 1))
    cumulative = np.concatenate([[0], np.cumsum(values[order], dtype=np.int64)])
    return [int(cumulative[bounds[i + 1]] - cumulative[bounds[i]]) for i in range(count)]


def _daily_instances(
    start_ns: np.ndarray, end_ns: np.ndarray, instance_hours: np.ndarray, start, end
) -> np.ndarray:
    """Instance-hours per day of [start, end); a row longer than a day is spread evenly over its days."""
    first_day = pd.Timestamp(start, tz="UTC").as_unit("ns").value // DAY_NS
    days = (pd.Timestamp(end, tz="UTC").as_unit("ns").value // DAY_NS) - first_day
    day = start_ns // DAY_NS  # the UTC day each row starts on (floor to the day)
    one_day = end_ns <= (day + 1) * DAY_NS
    hours = instance_hours / MICRO
    # pandas' groupby sum (compensated), as the row-by-row version summed, so the floats are the same
    per_day = pd.Series(hours[one_day]).groupby(day[one_day]).sum()
    totals = per_day.reindex(np.arange(first_day, first_day + days), fill_value=0.0).to_numpy()
    if one_day.all():
        return totals
    # longer rows: hours / days covered onto each covered day, added in row order then day order (the
    # order the row-by-row version added them, so the float sums are the same)
    first = day[~one_day]
    covered = -(-end_ns[~one_day] // DAY_NS) - first  # days from the start's day to the end's day, ceiled
    share = hours[~one_day] / covered
    offsets = np.arange(covered.sum()) - np.repeat(np.cumsum(covered) - covered, covered)
    slot = np.repeat(first, covered) + offsets - first_day
    inside = (slot >= 0) & (slot < days)
    np.add.at(totals, slot[inside], np.repeat(share, covered)[inside])
    return totals


def _ns(values: pd.Series) -> np.ndarray:
    """UTC timestamps as int64 nanoseconds since the epoch, whatever unit the column is stored in."""
    return pd.DatetimeIndex(values).as_unit("ns").asi8


def _observed_committed_rates(rows: _Rows) -> dict[tuple[str, str], Decimal]:
    mask = rows.committed & (rows.instance_hours > 0)
    used = rows.frame.loc[mask, ["provider", "instance_type", "effective_micros", "instance_hours_micros"]]
    sums = used.groupby(["provider", "instance_type"], observed=True)[
        ["effective_micros", "instance_hours_micros"]
    ].sum()
    return {
        key: Decimal(int(e)) / Decimal(int(h))
        for key, e, h in zip(sums.index, sums["effective_micros"], sums["instance_hours_micros"], strict=True)
    }


def _commitment(rows: _Rows, *, request, prices, currency, **_):
    mask = rows.on_demand & (rows.instance_hours > 0) & (rows.claimed < 1.0)
    if not mask.any():
        return None
    observed = _observed_committed_rates(rows)
    keys, group_of = rows.key_groups(mask)
    positions_of = np.split(
        np.flatnonzero(mask)[np.argsort(group_of, kind="stable")], np.cumsum(np.bincount(group_of))[:-1]
    )
    amount, gpu_hours, groups, sources, used, chosen = Decimal(0), Decimal(0), 0, set(), [], []
    for (provider, itype, region), positions in zip(
        keys.itertuples(index=False, name=None), positions_of, strict=True
    ):
        committed = prices.committed.get((provider, itype, region))
        source = STORED_COMMITMENT
        if committed is None:
            committed, source = observed.get((provider, itype)), BILLED_COMMITMENT
        if committed is None:
            continue
        choice = _commitment_choice((provider, itype, region), committed, source, prices)
        left = 1 - rows.claimed[positions]
        od_hours = Decimal(int((rows.instance_hours[positions] * left).sum())) / MICRO
        od_rate = Decimal(int((rows.effective[positions] * left).sum())) / MICRO / od_hours
        daily = _daily_instances(
            rows.start_ns[positions],
            rows.end_ns[positions],
            rows.instance_hours[positions],
            request.start,
            request.end,
        )
        demand = [int(v + 1e-9) // HOURS_PER_DAY for v in daily]
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
        gpus_per_instance = Decimal(str(rows.frame["gpus_per_instance"].iat[positions[0]]))
        amount += saved
        gpu_hours += covered_instance_hours * gpus_per_instance * MICRO
        share = float(covered_instance_hours / od_hours)
        rows.claimed[positions] = rows.claimed[positions] + (1 - rows.claimed[positions]) * share
        groups += 1
        sources.add(source)
        used += prices.committed_sources.get((provider, itype, region), ())
        chosen.append(choice)
    if not groups:
        return None
    return {
        "kind": "commitment",
        "amount": _amount(amount, currency),
        "hours_affected": _gpu_hours(gpu_hours),
        "confidence": "high" if sources == {STORED_COMMITMENT} else "medium",
        "assumptions": [
            "commit to the utilization floor: the fewest instances that ran all day on every day of the period",
            f"commitment price: {' / '.join(sorted(sources))}",
            "the hours above the floor stay on demand; the usage continues for the commitment's term",
            *(choice["note"] for choice in chosen),
        ],
        "prices": _prices(used),
        "commitment_prices": chosen,
    }


STORED_COMMITMENT = "catalog 1-year commitment price"
BILLED_COMMITMENT = "the committed rate this bill already pays"


def _commitment_choice(key: tuple[str, str, str], rate: Decimal, source: str, prices: PriceContext) -> dict:
    """Which commitment price re-priced one (provider, instance type, region): the stored price (its id,
    source, date, quality), or, only where none is stored, the bill's own committed rate, saying so."""
    provider, itype, region = key
    stored = prices.committed_sources.get(key, ())
    price = stored[0] if stored and source == STORED_COMMITMENT else None
    rate_text = str(rate.quantize(Decimal("0.000001")))
    if price is not None:
        note = (
            f"{provider} {itype} {region}: stored commitment price #{price.price_id} ({price.label}, "
            f"{rate_text} an instance-hour, {price.quality}, observed {(price.observed_at or '')[:10]}, "
            f"{price.source})"
        )
    else:
        note = (
            f"{provider} {itype} {region}: no stored commitment price; the committed rate this bill already "
            f"pays for {itype}, {rate_text} an instance-hour"
        )
    return {
        "provider": provider,
        "instance_type": itype,
        "region": region,
        "basis": "stored" if price is not None else "billed_rate",
        "rate_per_instance_hour": rate_text,
        "price": price.as_dict() if price is not None else None,
        "note": note,
    }


def _exact_groups(columns: dict[str, np.ndarray], sums: dict[str, np.ndarray]) -> pd.DataFrame:
    """The distinct combinations of `columns` with the exact integer sums of `sums` over each, sorted.
    pandas' groupby sums int64 exactly; Python ints come out of `.tolist()`."""
    frame = pd.DataFrame({**columns, **sums})
    return frame.groupby(list(columns), sort=True).sum().reset_index()


def _cheaper_gpu(rows: _Rows, *, prices, currency, **_):
    resource = rows.frame["resource_id"]
    options = prices.cheaper_gpu
    mask = resource.isin(list(options)).to_numpy() & (rows.instance_hours > 0)
    mask &= rows.claimed < 1.0  # a row claimed whole by an earlier saving has nothing left
    if not mask.any():
        return None
    ratios = {name: option.cost_ratio for name, option in options.items()}
    names = resource[mask].astype(object).to_numpy()
    improves = np.array([ratios[name] < 1 for name in pd.unique(names)])
    mask[mask] = improves[pd.factorize(names, sort=False)[0]]
    if not mask.any():
        return None
    positions = np.flatnonzero(mask)
    groups = _exact_groups(
        {"resource": resource.astype(object).to_numpy()[positions], "left": 1 - rows.claimed[positions]},
        {"effective": rows.effective[positions], "gpu_hours": rows.gpu_hours[positions]},
    )
    amount, gpu_hours = Decimal(0), Decimal(0)
    for name, left, effective, hours in zip(
        groups["resource"].tolist(),
        groups["left"].tolist(),
        groups["effective"].tolist(),
        groups["gpu_hours"].tolist(),
        strict=True,
    ):
        share = Decimal(str(left))
        amount += Decimal(effective) / MICRO * share * (1 - options[name].cost_ratio)
        gpu_hours += Decimal(hours) * share
    rows.claimed[positions] = 1.0
    targets = {options[name].target for name in pd.unique(groups["resource"])}
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
        "prices": [],  # priced by the stored ranking (its own report lists its price dates)
    }


def _idle(rows: _Rows, *, idle_micros, currency, **_):
    if idle_micros is None:
        return None
    mask = (idle_micros > 0) & (rows.gpu_hours > 0) & (rows.claimed < 1.0)
    if not mask.any():
        return None
    # rows with the same cost, GPU-hours and share left have the same value per idle GPU-hour
    groups = _exact_groups(
        {
            "effective": rows.effective[mask],
            "gpu_hours": rows.gpu_hours[mask],
            "left": 1 - rows.claimed[mask],
        },
        {"idle": idle_micros[mask]},
    )
    amount, gpu_hours = Decimal(0), Decimal(0)
    for effective, hours, left, idle_sum in zip(
        groups["effective"].tolist(),
        groups["gpu_hours"].tolist(),
        groups["left"].tolist(),
        groups["idle"].tolist(),
        strict=True,
    ):
        idle = Decimal(idle_sum) * Decimal(str(left))
        amount += idle * (Decimal(effective) / Decimal(hours)) / MICRO
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
        "prices": [],  # valued at the bill's own cost, no catalog price
    }
