"""Savings opportunities by re-pricing the actual GPU usage, in a stated order, no hour counted twice.

Each kind works on the share of each spend row that the earlier kinds left unclaimed:
1. spot: on-demand rows of interruptible work (tag `interruptible=true`, configurable) re-priced at the
   catalog's spot price for the same provider, instance type and region, times (1 + the cost engine's
   spot overhead: checkpoints and lost work, procurement/costing/spot.py);
2. commitment: for on-demand usage left, a commitment sized to the utilization floor (the fewest
   instances running at the same time in any hour of the period, from each line's charge period and
   instance-hours; a key of daily or coarser lines only: the fewest instance-hours / 24 of any day, said so;
   procurement/costing/commitments.py), at the catalog's 1-year commitment price for the type and region
   (the cheapest stored one, pricing/commitment_prices.py), else the committed rate this bill already pays
   for the same instance type in the same region, else across its regions (said so); `commitment_prices`
   says per instance type and region which one, with the stored price's id, source and date;
3. cheaper GPU: a resource linked to a stored workload (tag `workload`) whose ranking found a cheaper
   configuration, re-priced by the ratio of the two job costs (the ranking engine's totals);
4. idle: GPU-hours under 10% utilization, at the row's own cost per GPU-hour.
Amounts are in the review currency; `hours_affected` counts GPU-hours. Each saving lists under `prices`
the catalog prices it used, with their observation date and quality (observed, snapshot, quoted).

Speed (benchmarks/review_bench.py): a million rows go through as numpy arrays by position. What is
summed over rows runs as review_sql's SAVINGS_* statements in DuckDB (frame_sql.py, sav45): exact integer
sums per price key, per resource, per day, per value of an idle GPU-hour. The exact Decimal arithmetic
then runs once per group of rows that share every input of the formula (a price key, a resource, a row
cost and GPU-hours, the share left unclaimed), never once per row, so the result is the row-by-row one
(tests/billing/reference/ keeps that implementation and test_review_speedup.py compares them; the pandas
version these statements replaced is savings_pandas.py there, test_savings_sql.py compares them).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal

import numpy as np
import pandas as pd
import pyarrow as pa

from billing.storage import review_sql
from billing.storage.frame_sql import FrameSql
from procurement.costing.commitments import cheapest_commitment_mix
from procurement.costing.values import round_money

MICRO = 1_000_000
HOURS_PER_DAY = 24
DAY_NS = review_sql.DAY_NS
# the columns SAVINGS_BY_KEY reads
KEY_SUMS = (
    "line",
    "provider",
    "instance_type",
    "region",
    "instance_hours_micros",
    "effective_micros",
    "gpu_hours_micros",
    "gpus_per_instance",
)


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
    sql: FrameSql | None = None  # where review_sql's SAVINGS_* statements sum the rows a step reads

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

    def summed(self, statement: str, params: dict | None = None) -> list[tuple]:
        """`statement` (review_sql.SAVINGS_*) over the rows last registered as `savings_rows`."""
        assert self.sql is not None  # noqa: S101 (register comes first)
        return self.sql.rows(statement, params)

    def register(self, mask: np.ndarray, names: tuple[str, ...], **extra: np.ndarray) -> _Rows:
        """The masked rows' columns `names` as `savings_rows` (an Arrow table: text categories stay
        dictionaries, read as VARCHAR); `line` is a row's position, `share_left` its share unclaimed,
        `extra` more columns (arrays over all rows)."""
        positions = np.flatnonzero(mask)
        arrays = {
            "line": lambda: positions.astype(np.int64),
            "share_left": lambda: 1 - self.claimed[positions],
            "instance_hours_micros": lambda: self.instance_hours[positions],
            "effective_micros": lambda: self.effective[positions],
            "gpu_hours_micros": lambda: self.gpu_hours[positions],
            "start_ns": lambda: self.start_ns[positions],
            "end_ns": lambda: self.end_ns[positions],
        }
        columns = {}
        for name in names:
            if name in extra:
                columns[name] = pa.array(extra[name][positions])
            elif name in arrays:
                columns[name] = pa.array(arrays[name]())
            else:  # a column of the frame: provider, instance type, region, resource, GPUs per instance
                columns[name] = pa.array(self.frame[name].array[positions], from_pandas=True)
        if self.sql is None:
            self.sql = FrameSql()
        self.sql.connection.register("savings_rows", pa.table(columns))
        return self

    def key_positions(self, mask: np.ndarray) -> dict[tuple, np.ndarray]:
        """The masked rows' positions per (provider, instance type, region) (a row's key, no sum): the
        columns' codes combined into one integer per row."""
        positions = np.flatnonzero(mask)
        combined = np.zeros(len(positions), dtype=np.int64)
        names = []
        for column in ("provider", "instance_type", "region"):
            codes, uniques = pd.factorize(self.frame[column].array[positions])
            combined = combined * (len(uniques) + 1) + codes + 1  # a missing value (-1) is code 0
            names.append([None, *(str(u) for u in uniques)])
        keys, inverse = np.unique(combined, return_inverse=True)
        order = np.argsort(inverse, kind="stable")
        bounds = np.cumsum(np.bincount(inverse, minlength=len(keys)))[:-1]
        found = {}
        for value, rows in zip(keys.tolist(), np.split(positions[order], bounds), strict=True):
            key = []
            for labels in reversed(names):
                value, code = divmod(value, len(labels))
                key.append(labels[code])
            found[tuple(reversed(key))] = rows
        return found


def savings_opportunities(
    gpu: pd.DataFrame, *, request, prices: PriceContext, idle_micros, currency: str
) -> list[dict]:
    rows = _Rows.of(gpu)
    idle = None if idle_micros is None else np.asarray(idle_micros, dtype=np.int64)
    results = []
    try:
        for step in (_spot, _commitment, _cheaper_gpu, _idle):
            found = step(rows, request=request, prices=prices, idle_micros=idle, currency=currency)
            if found:
                results.append(found)
    finally:
        if rows.sql is not None:
            rows.sql.close()
    return results


def _spot(rows: _Rows, *, prices, currency, **_):
    interruptible = rows.frame["interruptible"].to_numpy(bool)
    mask = rows.on_demand & interruptible & (rows.instance_hours > 0)
    if not mask.any():
        return None
    amount, gpu_hours, priced, used = Decimal(0), Decimal(0), [], []
    factor = 1 + prices.spot_overhead
    # per (provider, instance type, region): one spot price, so the sums re-price the group exactly
    for *key, instance_hours, effective, hours, _ in rows.register(mask, KEY_SUMS).summed(
        review_sql.SAVINGS_BY_KEY
    ):
        key = tuple(key)
        spot = prices.spot.get(key)
        if spot is None:
            continue
        spot_cost = Decimal(int(instance_hours)) / MICRO * spot * factor
        actual = Decimal(int(effective)) / MICRO
        if spot_cost >= actual:
            continue
        amount += actual - spot_cost
        gpu_hours += Decimal(int(hours))
        priced.append(key)
        used += prices.spot_sources.get(key, ())
    if not priced:
        return None
    positions = rows.key_positions(mask)
    rows.claimed[np.concatenate([positions[key] for key in priced])] = 1.0
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


HOURLY, SPREAD, DAILY = "hourly", "spread", "daily"  # the grain of a key's lines (_floors)


def _floors(rows: _Rows, first_day: int, last_day: int) -> dict[tuple, tuple[int, str]]:
    """Per (provider, instance type, region) of the rows registered, the utilization floor of days
    [first_day, last_day) (days since the epoch) and the grain it was counted at:
    - HOURLY (every line within an hour) or SPREAD (some line longer than an hour, shorter ones too): the
      fewest instances running in any hour (review_sql.SAVINGS_HOURLY_FLOOR; a line's instance-hours
      spread evenly over its hours, an hour without usage 0);
    - DAILY (every line a day or longer: the bill gives no hours): the fewest instances a day, a day's
      instance-hours / 24 (review_sql.SAVINGS_DAILY_INSTANCES; 0 on a day without rows).
    A key without usage in the period has no entry (floor 0)."""
    grain = {}
    for provider, itype, region, lines, daily, longer in rows.summed(review_sql.SAVINGS_LINE_GRAIN):
        grain[(provider, itype, region)] = DAILY if daily == lines else SPREAD if longer else HOURLY
    hours = {"first_hour": first_day * HOURS_PER_DAY, "last_hour": last_day * HOURS_PER_DAY}
    floors = {}
    if set(grain.values()) - {DAILY}:  # a key with hours (the statement reads only such keys)
        floors = {
            (provider, itype, region): (int(floor), grain[(provider, itype, region)])
            for provider, itype, region, floor, _ in rows.summed(review_sql.SAVINGS_HOURLY_FLOOR, hours)
        }
    if DAILY in grain.values():
        days: dict[tuple, list[int]] = {}
        for provider, itype, region, day, instances in rows.summed(
            review_sql.SAVINGS_DAILY_INSTANCES, {"first_day": first_day, "last_day": last_day}
        ):
            if grain[(provider, itype, region)] == DAILY:
                per_day = days.setdefault((provider, itype, region), [0] * (last_day - first_day))
                per_day[int(day - first_day)] = int(instances)
        floors |= {key: (min(per_day), DAILY) for key, per_day in days.items()}
    return floors


def _grain_note(key: tuple[str, str, str], grain: str) -> list[str]:
    """What the floor of `key` is, where it is not a count of instances running in each hour."""
    label = " ".join(key)
    if grain == DAILY:
        return [
            f"{label}: the bill has only daily (or longer) lines, so the floor is the fewest instance-hours "
            "/ 24 of any day: a daily average, not a count of instances running at the same time"
        ]
    if grain == SPREAD:
        return [
            f"{label}: lines longer than an hour are spread evenly over their hours: within such a line an "
            "average, not a count of instances running at the same time"
        ]
    return []


def _ns(values: pd.Series) -> np.ndarray:
    """UTC timestamps as int64 nanoseconds since the epoch, whatever unit the column is stored in."""
    return pd.DatetimeIndex(values).as_unit("ns").asi8


def _observed_committed_rates(rows: _Rows) -> dict[tuple, Decimal]:
    """The committed rate the bill pays per (provider, instance type, region), and per (provider, instance
    type) across all its regions (the fallback for a region without committed usage)."""
    mask = rows.committed & (rows.instance_hours > 0)
    if not mask.any():
        return {}
    rates = {}
    for provider, itype, region, across, e, h in rows.register(
        mask, ("provider", "instance_type", "region", "effective_micros", "instance_hours_micros")
    ).summed(review_sql.SAVINGS_COMMITTED_RATES):
        if across or region is not None:
            key = (provider, itype) if across else (provider, itype, region)
            rates[key] = Decimal(int(e)) / Decimal(int(h))
    return rates


def _commitment(rows: _Rows, *, request, prices, currency, **_):
    mask = rows.on_demand & (rows.instance_hours > 0) & (rows.claimed < 1.0)
    if not mask.any():
        return None
    observed = _observed_committed_rates(rows)
    # only spot runs before, claiming a row whole or not at all: every row read here is unclaimed (its
    # share left is 1), so the on-demand hours and cost are the rows' exact integer sums
    if (rows.claimed[mask] > 0).any():
        raise RuntimeError("the commitment saving sums whole rows: a row partly claimed before it")
    sums = rows.register(mask, (*KEY_SUMS, "start_ns", "end_ns")).summed(review_sql.SAVINGS_BY_KEY)
    first_day = int(pd.Timestamp(request.start, tz="UTC").as_unit("ns").value // DAY_NS)
    last_day = int(pd.Timestamp(request.end, tz="UTC").as_unit("ns").value // DAY_NS)
    floors = _floors(rows, first_day, last_day)  # over the same rows
    period_hours = Decimal(HOURS_PER_DAY * (last_day - first_day))
    positions_of = rows.key_positions(mask)
    amount, gpu_hours, groups, sources, used, chosen, grains = Decimal(0), Decimal(0), 0, set(), [], [], []
    for provider, itype, region, instance_hours, effective, _, gpus_per_instance in sums:
        key = (provider, itype, region)
        committed, source, across = prices.committed.get(key), STORED_COMMITMENT, False
        if committed is None:
            committed, source = observed.get(key), BILLED_COMMITMENT
        if committed is None:
            committed, across = observed.get((provider, itype)), True
        if committed is None:
            continue
        choice = _commitment_choice(key, committed, source, prices, across_regions=across)
        od_hours = Decimal(int(instance_hours)) / MICRO
        od_rate = Decimal(int(effective)) / MICRO / od_hours
        floor, grain = floors.get(key, (0, HOURLY))  # none listed: no hour of the period had rows
        if floor == 0 or committed >= od_rate:
            continue
        # committing `floor` instances for every hour of the period against buying them on demand: the
        # saving depends on the floor and the period's hours only (the usage above it stays on demand)
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
        positions = positions_of[(provider, itype, region)]
        amount += saved
        gpu_hours += covered_instance_hours * Decimal(str(gpus_per_instance)) * MICRO
        share = float(covered_instance_hours / od_hours)
        rows.claimed[positions] = rows.claimed[positions] + (1 - rows.claimed[positions]) * share
        groups += 1
        sources.add(source)
        used += prices.committed_sources.get((provider, itype, region), ())
        chosen.append(choice)
        grains += _grain_note(key, grain)
    if not groups:
        return None
    return {
        "kind": "commitment",
        "amount": _amount(amount, currency),
        "hours_affected": _gpu_hours(gpu_hours),
        "confidence": "high" if sources == {STORED_COMMITMENT} else "medium",
        "assumptions": [
            "commit to the utilization floor: the fewest instances running at the same time in any hour of "
            "the period (each line's instance-hours spread evenly over the hours of its charge period; an "
            "hour without usage counts as 0)",
            f"commitment price: {' / '.join(sorted(sources))}",
            "the hours above the floor stay on demand; the usage continues for the commitment's term",
            *(choice["note"] for choice in chosen),
            *grains,
        ],
        "prices": _prices(used),
        "commitment_prices": chosen,
    }


STORED_COMMITMENT = "catalog 1-year commitment price"
BILLED_COMMITMENT = "the committed rate this bill already pays"


def _commitment_choice(
    key: tuple[str, str, str],
    rate: Decimal,
    source: str,
    prices: PriceContext,
    *,
    across_regions: bool = False,
) -> dict:
    """Which commitment price re-priced one (provider, instance type, region): the stored price (its id,
    source, date, quality), or, only where none is stored, the bill's own committed rate in that region,
    else (`across_regions`) across the instance type's regions, saying so."""
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
    elif across_regions:
        note = (
            f"{provider} {itype} {region}: no stored commitment price and no committed usage in {region}; "
            f"the committed rate this bill already pays for {itype} across its regions, {rate_text} an "
            "instance-hour"
        )
    else:
        note = (
            f"{provider} {itype} {region}: no stored commitment price; the committed rate this bill already "
            f"pays for {itype} in {region}, {rate_text} an instance-hour"
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
    amount, gpu_hours, names = Decimal(0), Decimal(0), set()
    for name, left, effective, hours in rows.register(
        mask, ("resource_id", "share_left", "effective_micros", "gpu_hours_micros")
    ).summed(review_sql.SAVINGS_BY_RESOURCE):
        share = Decimal(str(left))
        amount += Decimal(int(effective)) / MICRO * share * (1 - options[name].cost_ratio)
        gpu_hours += Decimal(int(hours)) * share
        names.add(name)
    rows.claimed[mask] = 1.0
    targets = {options[name].target for name in names}
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
    amount, gpu_hours = Decimal(0), Decimal(0)
    columns = ("effective_micros", "gpu_hours_micros", "share_left", "idle_micros")
    for effective, hours, left, idle_sum in rows.register(mask, columns, idle_micros=idle_micros).summed(
        review_sql.SAVINGS_IDLE
    ):
        idle = Decimal(int(idle_sum)) * Decimal(str(left))
        amount += idle * (Decimal(int(effective)) / Decimal(int(hours))) / MICRO
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
