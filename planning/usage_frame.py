"""The spend review's engine frame (billing/review.py REVIEW_COLUMNS) as demand.py's UsageRows: the
scope's GPU usage rows and unused commitments, with the charge periods of every row of the bill as
covered intervals. No ORM: history.py reads the frame, benchmarks build one."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import fields, replace
from decimal import Decimal

import numpy as np
import pandas as pd
import pyarrow as pa

from billing.review.engine import scope_masks
from planning.engine.demand import UsageRows
from planning.engine.errors import PlanInputError

HOUR_NS = 3600 * 10**9
MICRO = 1_000_000


def gpu_matches(slugs: np.ndarray, gpu: str) -> np.ndarray:
    """Which of `slugs` a GPU slug or family selects: the slug itself, or slugs it prefixes at a dash
    ("h100" selects h100-sxm5-80gb and h100-pcie-80gb, not h200-sxm-141gb; "l40" is not "l40s")."""
    slugs = np.asarray(slugs, dtype=object).astype(str)
    if not gpu:
        return np.ones(len(slugs), dtype=bool)
    return (slugs == gpu) | np.char.startswith(slugs, gpu + "-")


def usage_rows_from_frame(
    frame: pd.DataFrame,
    *,
    gpu: str = "",
    teams: tuple[str, ...] = (),
    currency: str = "USD",
    fx_to_currency: Mapping[str, Decimal] | None = None,
) -> UsageRows:
    """`frame`'s rows of `gpu` (slug or family; "" every GPU) as UsageRows, effective cost in
    `currency` (`fx_to_currency`: units of `currency` per unit of each other currency; a missing one
    is PlanInputError("currency")). No GPU usage row: PlanInputError naming gpu (when the GPU filter
    emptied it), team (when `teams` scoped the frame) or from. `frame` holds only rows the caller may
    see (teams are filtered in the read)."""
    return usage_rows_from_frames(
        [frame], gpu=gpu, teams=teams, currency=currency, fx_rates=lambda: fx_to_currency or {}
    )


def usage_rows_from_frames(
    frames: Iterable[pd.DataFrame],
    *,
    gpu: str = "",
    teams: tuple[str, ...] = (),
    currency: str = "USD",
    fx_rates: Callable[[], Mapping[str, Decimal]] = dict,
    by_resource: bool = True,
) -> UsageRows:
    """usage_rows_from_frame over a scope read in parts (a month each), so only one part's frame is in
    memory at a time; `fx_rates` is called only when a row is in another currency. `by_resource`
    False sums each part's rows the plan does not tell apart (collapsed): a year of a large fleet's
    hourly rows becomes a few rows an hour."""
    parts, any_gpu_rows, any_chosen = [], False, False
    for frame in frames:
        if not len(frame):
            continue
        gpu_usage, unused = scope_masks(frame)
        selected = _gpu_selected(frame["gpu"], gpu)
        any_gpu_rows |= bool(gpu_usage.any())
        any_chosen |= bool((gpu_usage & selected).any())
        needs_rates = bool(frame["currency"].astype(object).ne(currency).any())
        part = _part_rows(
            frame, (gpu_usage | unused) & selected, unused, currency, fx_rates() if needs_rates else {}
        )
        parts.append(part if by_resource else collapsed(part))
        del frame, gpu_usage, unused, selected
    if not any_chosen:
        raise _no_rows(gpu=gpu, teams=teams, any_gpu_rows=any_gpu_rows)
    return concatenated(parts)


def usage_rows_from_series(
    tables: Iterable[pa.Table], *, gpu: str = "", teams: tuple[str, ...] = (), currency: str = "USD"
) -> UsageRows:
    """usage_rows_from_frames(by_resource=False) from the sums DuckDB made of each part's bill lines
    (billing/storage/demand_sql.SERIES: a row per COLLAPSE_KEYS combination, its cost already in
    `currency`), so the lines themselves never reach Python. Same errors: a missing FX rate of a chosen
    row is PlanInputError("currency"), no GPU usage row is PlanInputError naming gpu, team or from."""
    parts, any_gpu_rows, any_chosen = [], False, False
    for table in tables:
        if not table.num_rows:
            continue
        column = {name: table.column(name).to_numpy(zero_copy_only=False) for name in table.column_names}
        kind = column["kind"].astype(np.int64)
        selected = gpu_matches(column["gpu"], gpu)
        any_gpu_rows |= bool((kind == 1).any())
        any_chosen |= bool(((kind == 1) & selected).any())
        chosen = (kind != 0) & selected
        missing = sorted({code for code in column["missing_currency"][chosen] if code is not None})
        if missing:
            raise PlanInputError("currency", f"no stored FX rate from {missing[0]} to {currency}")
        start_hour, end_hour = column["start_hour"].astype(np.int64), column["end_hour"].astype(np.int64)
        covered_start, covered_end = _distinct_periods(start_hour, end_hour)
        count = int(chosen.sum())
        parts.append(
            UsageRows(
                start_hour=start_hour[chosen],
                end_hour=end_hour[chosen],
                gpu_hours=column["gpu_hours_micros"][chosen].astype(np.int64) / MICRO,
                interruptible=column["interruptible"][chosen].astype(bool),
                resource_id=column["resource_id"][chosen].astype(object)
                if "resource_id" in column
                else np.full(count, "", dtype=object),
                gpu_model=column["gpu"][chosen].astype(object),
                team=column["team"][chosen].astype(object),
                pricing_category=column["pricing_category"][chosen].astype(object),
                effective_cost_micros=column["effective_micros"][chosen].astype(np.int64),
                unused_commitment=kind[chosen] == 2,
                currency=currency,
                covered_start_hour=covered_start,
                covered_end_hour=covered_end,
                provider=column["provider"][chosen].astype(object),
                instance_type=column["instance_type"][chosen].astype(object),
                region=column["region"][chosen].astype(object),
                gpus_per_instance=column["gpus_per_instance"][chosen].astype(np.float64),
                commitment_id=column["commitment_id"][chosen].astype(object),
                commitment_end_hour=column["commitment_end_hour"][chosen].astype(np.int64),
            )
        )
    if not any_chosen:
        raise _no_rows(gpu=gpu, teams=teams, any_gpu_rows=any_gpu_rows)
    return concatenated(parts)


def _part_rows(
    frame: pd.DataFrame,
    chosen: np.ndarray,
    unused: np.ndarray,
    currency: str,
    fx_to_currency: Mapping[str, Decimal],
) -> UsageRows:
    everything = bool(chosen.all())

    def rows(name: str) -> pd.Series:  # one column of the chosen rows at a time: no copy of the frame
        return frame[name] if everything else frame[name][chosen]

    bill_start, bill_end = _distinct_periods(
        hours_of(frame["charge_period_start"], round_up=False),
        hours_of(frame["charge_period_end"], round_up=True),
    )
    return UsageRows(
        start_hour=hours_of(rows("charge_period_start"), round_up=False),
        end_hour=hours_of(rows("charge_period_end"), round_up=True),
        gpu_hours=rows("gpu_hours_micros").to_numpy(np.int64) / MICRO,
        interruptible=rows("interruptible").to_numpy(bool),
        resource_id=_text(rows("resource_id")),
        gpu_model=_text(rows("gpu")),
        team=_text(rows("team")),
        pricing_category=_text(rows("pricing_category")),
        effective_cost_micros=_converted_micros(
            rows("effective_micros"), rows("currency"), currency, fx_to_currency
        ),
        unused_commitment=unused[chosen],
        currency=currency,
        covered_start_hour=bill_start,
        covered_end_hour=bill_end,
        provider=_text(rows("provider")) if "provider" in frame else None,
        **_what_ran(frame, rows),
    )


def concatenated(parts: list[UsageRows]) -> UsageRows:
    """The parts' rows in order, one UsageRows; the bill's covered intervals once each."""
    if len(parts) == 1:
        return parts[0]
    joined = {}
    for field in fields(UsageRows):
        values = [getattr(part, field.name) for part in parts]
        if field.name == "currency":
            joined[field.name] = values[0]
        elif any(value is None for value in values):
            joined[field.name] = None
        else:
            joined[field.name] = np.concatenate(values)
    joined["covered_start_hour"], joined["covered_end_hour"] = _distinct_periods(
        joined["covered_start_hour"], joined["covered_end_hour"]
    )
    return UsageRows(**joined)


# What the plan tells rows apart by (demand.py, fleets.py, in_force.py): everything else it sums
COLLAPSE_KEYS = (
    "start_hour",
    "end_hour",
    "interruptible",
    "unused_commitment",
    "gpu_model",
    "team",  # not planned by, but kept: a team's scope is seen to hold its teams' rows only
    "pricing_category",
    "provider",
    "instance_type",
    "region",
    "gpus_per_instance",
    "commitment_id",
    "commitment_end_hour",
)


def collapsed(usage: UsageRows) -> UsageRows:
    """`usage` with the rows that share every COLLAPSE_KEYS column summed (GPU-hours and cost), the
    resource dropped (""). The plan gives the same result: demand spreads each row's GPU-hours evenly
    over its charge period, the fleets' peaks and the commitments' GPUs do the same, and cost is summed,
    all linear in rows of one period; rows of cost without GPU-hours are summed apart. Only a plan without utilization samples may collapse: the busy
    series reads each resource's rows (demand.py _busy)."""
    if not len(usage):
        return usage
    keys = {name: getattr(usage, name) for name in COLLAPSE_KEYS if getattr(usage, name) is not None}
    texts = {}
    frame = {}
    for name, values in keys.items():
        if values.dtype == object:
            frame[name], texts[name] = pd.factorize(values)
        else:
            frame[name] = values
    # a row of cost without GPU-hours (a one-off correction: demand.status_quo leaves it out of the
    # projected rate) is never summed into a usage row, or the status quo would count it again
    cost_only = (usage.gpu_hours == 0) & (usage.effective_cost_micros != 0)
    frame = pd.DataFrame(
        frame | {"cost_only": cost_only, "gpu_hours": usage.gpu_hours, "cost": usage.effective_cost_micros}
    )
    summed = frame.groupby([*keys, "cost_only"], sort=False, dropna=False).sum()
    del frame
    level = summed.index.get_level_values
    built = {
        name: np.asarray(texts[name], dtype=object)[level(name).to_numpy()]
        if name in texts
        else level(name).to_numpy()
        for name in keys
    }
    count = len(summed)
    return replace(
        usage,
        **built,
        gpu_hours=summed["gpu_hours"].to_numpy(np.float64),
        effective_cost_micros=summed["cost"].to_numpy(np.int64),
        resource_id=np.full(count, "", dtype=object),
    )


def _what_ran(frame: pd.DataFrame, rows) -> dict:
    """The columns fleets.py plans like for like with, where the frame has them."""
    found = {}
    for column, name in (
        ("instance_type", "instance_type"),
        ("region", "region"),
        ("commitment_discount_id", "commitment_id"),
    ):
        if column in frame:
            found[name] = _text(rows(column).astype(object).fillna(""))
    if "gpus_per_instance" in frame:
        found["gpus_per_instance"] = pd.to_numeric(rows("gpus_per_instance"), errors="coerce").to_numpy(
            np.float64
        )
    if "commitment_end" in frame:
        ends = pd.to_datetime(rows("commitment_end"), utc=True)
        known = ends.notna().to_numpy()
        hours = np.full(len(ends), -1, dtype=np.int64)
        if known.any():
            hours[known] = hours_of(ends[known], round_up=True)
        found["commitment_end_hour"] = hours
    return found


def hours_of(values: pd.Series, *, round_up: bool) -> np.ndarray:
    """UTC hour indexes: the start floored to its hour, the end rounded up."""
    ns = pd.DatetimeIndex(values).as_unit("ns").asi8
    return -(-ns // HOUR_NS) if round_up else ns // HOUR_NS


def _text(values: pd.Series) -> np.ndarray:
    return np.asarray(values.astype(object), dtype=object)


def _gpu_selected(column: pd.Series, gpu: str) -> np.ndarray:
    """The rows of `gpu`, matched once per distinct slug where the column is a category."""
    if not gpu:
        return np.ones(len(column), dtype=bool)
    if column.dtype != "category":
        return gpu_matches(column.to_numpy(dtype=object), gpu)
    codes = column.cat.codes.to_numpy()
    chosen = gpu_matches(np.asarray(column.cat.categories, dtype=object), gpu)
    return (codes >= 0) & chosen[np.maximum(codes, 0)]


def _distinct_periods(starts: np.ndarray, ends: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct charge periods (a few a day, of up to millions of rows), as one int64 key each:
    start hour x 2^24 + length in hours (under 2^24: three years are 26,352 hours)."""
    lengths = np.clip(ends - starts, 1, 2**24 - 1)
    keys = np.unique(starts * 2**24 + lengths)
    return keys >> 24, (keys >> 24) + (keys & (2**24 - 1))


def _converted_micros(
    effective_micros: pd.Series, currencies: pd.Series, currency: str, fx_to_currency: Mapping[str, Decimal]
) -> np.ndarray:
    """Effective cost in micro-units of `currency`, rounded to the micro-unit once per row in float64: a
    plan's money is an estimate, not a ledger (the review converts row by row in Decimal for its exact
    totals)."""
    micros = effective_micros.to_numpy(np.int64).copy()
    currencies = currencies.astype(object).to_numpy()
    for code in sorted(set(currencies.tolist()) - {currency}):
        rate = fx_to_currency.get(code)
        if rate is None:
            raise PlanInputError("currency", f"no stored FX rate from {code} to {currency}")
        chosen = currencies == code
        micros[chosen] = np.rint(micros[chosen] * float(Decimal(rate))).astype(np.int64)
    return micros


def _no_rows(*, gpu: str, teams: tuple[str, ...], any_gpu_rows: bool) -> PlanInputError:
    if gpu and any_gpu_rows:
        return PlanInputError("gpu", f"no GPU usage rows of {gpu!r} in the period")
    if teams:
        return PlanInputError("team", f"no GPU usage rows of team {', '.join(teams)} in the period")
    return PlanInputError("from", "no GPU usage rows in the period")
