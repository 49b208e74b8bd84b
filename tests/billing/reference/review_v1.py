"""Reference copy of the review engine before the vectorization of issue 8 (commit c074555 of
billing/review/engine.py): kept to prove the fast engine gives identical output. Not app code."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from decimal import Decimal

import numpy as np
import pandas as pd

from billing.review.savings import PriceContext
from pricing.providers.currencies import currency_problem
from procurement.costing.values import round_money
from tests.billing.reference.savings_v1 import savings_opportunities

MICRO = 1_000_000
REVIEW_COLUMNS = [
    "charge_period_start",
    "charge_period_end",
    "charge_category",
    "provider",
    "region",
    "resource_id",
    "instance_type",
    "gpu",
    "gpus_per_instance",
    "pricing_category",
    "commitment_status",
    "team",
    "project",
    "currency",
    "billed_micros",
    "effective_micros",
    "list_micros",
    "instance_hours_micros",
    "gpu_hours_micros",
    "interruptible",
    "workload",
    "service_category",
]
BREAKDOWNS = {
    "by_month": "month",
    "by_team": "team",
    "by_project": "project",
    "by_provider": "provider",
    "by_gpu": "gpu",
    "by_pricing_category": "pricing_category",
}
UNTAGGED = "(untagged)"
IDLE_UTILIZATION_PCT = 10


class ReviewInputError(ValueError):
    def __init__(self, field: str, message: str):
        self.field, self.message = field, message
        super().__init__(f"{field}: {message}")


@dataclass(frozen=True)
class ReviewRequest:
    start: dt.date
    end: dt.date  # exclusive
    team: str = ""
    project: str = ""
    provider: str = ""
    currency: str = "USD"
    fx_to_currency: dict[str, Decimal] = field(default_factory=dict)  # currency -> units of `currency`

    def __post_init__(self):
        problem = (
            currency_problem(self.currency) if isinstance(self.currency, str) else "must be a currency code"
        )
        if problem:
            raise ReviewInputError("currency", problem)
        if self.end <= self.start:
            raise ReviewInputError("to", f"must be after from ({self.start}), got {self.end}")
        if (self.end - self.start).days > 3 * 366:
            raise ReviewInputError("to", "a review covers at most three years")

    @property
    def previous(self) -> tuple[dt.date, dt.date]:
        """The period of the same length just before (for trends)."""
        length = self.end - self.start
        return self.start - length, self.start


def money(micros: int, currency: str) -> str:
    return str(round_money(Decimal(int(micros)) / MICRO, currency))


def hours(micros: int) -> str:
    return str((Decimal(int(micros)) / MICRO).quantize(Decimal("0.01")))


def empty_frame() -> pd.DataFrame:
    """No spend rows, with the column types real rows have (so every step works on it unchanged)."""
    types = {name: object for name in REVIEW_COLUMNS}
    types.update(dict.fromkeys(("charge_period_start", "charge_period_end"), "datetime64[ns, UTC]"))
    types.update(dict.fromkeys([c for c in REVIEW_COLUMNS if c.endswith("_micros")], np.int64))
    types.update(interruptible=bool, gpus_per_instance=float)
    return pd.DataFrame({name: pd.Series(dtype=kind) for name, kind in types.items()})


def _in_period(frame: pd.DataFrame, start: dt.date, end: dt.date) -> pd.DataFrame:
    begin, finish = pd.Timestamp(start, tz="UTC"), pd.Timestamp(end, tz="UTC")
    starts = frame["charge_period_start"]
    return frame[(starts >= begin) & (starts < finish)]


def _filtered(frame: pd.DataFrame, request: ReviewRequest) -> pd.DataFrame:
    for column in ("team", "project", "provider"):
        wanted = getattr(request, column)
        if wanted:
            frame = frame[frame[column] == wanted]
    return frame


def _converted(frame: pd.DataFrame, request: ReviewRequest) -> pd.DataFrame:
    """Money into the report currency through the stored rates; a missing rate names the currency."""
    other = frame["currency"] != request.currency
    if not other.any():
        return frame
    frame = frame.copy()
    for currency in pd.unique(frame.loc[other, "currency"]):
        rate = request.fx_to_currency.get(currency)
        if rate is None:
            raise ReviewInputError("currency", f"no stored FX rate from {currency} to {request.currency}")
        rows = frame["currency"] == currency
        for column in ("billed_micros", "effective_micros", "list_micros"):
            frame.loc[rows, column] = [
                int((Decimal(int(v)) * rate).to_integral_value()) for v in frame.loc[rows, column]
            ]
    frame["currency"] = request.currency
    return frame


def split_scope(frame: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """(GPU usage, unused commitments, everything else)."""
    unused = frame["commitment_status"] == "unused"
    has_gpu = frame["gpu"] != ""
    gpu_usage = (frame["charge_category"] == "usage") & has_gpu & ~unused
    unused_gpu = unused & (has_gpu | (frame["instance_type"] == ""))
    return frame[gpu_usage], frame[unused_gpu], frame[~gpu_usage & ~unused_gpu]


def _breakdown(gpu: pd.DataFrame, previous: pd.DataFrame, key: str, currency: str) -> list[dict]:
    if gpu.empty:
        return []
    current = gpu.groupby(key, sort=True, observed=True)[
        ["billed_micros", "effective_micros", "gpu_hours_micros"]
    ].sum()
    before = (
        previous.groupby(key, observed=True)["effective_micros"].sum()
        if not previous.empty and key != "month"
        else None
    )
    entries = []
    for name, row in current.iterrows():
        entry = {
            key: str(name),
            "effective_cost": money(row["effective_micros"], currency),
            "gpu_hours": hours(row["gpu_hours_micros"]),
            "billed_cost": money(row["billed_micros"], currency),
            "effective_cost_per_gpu_hour": _per_hour(row["effective_micros"], row["gpu_hours_micros"]),
        }
        if before is not None:
            entry["previous_effective_cost"] = money(before.get(name, 0), currency)
        entries.append(entry)
    return entries


def _split_months_by_category(by_month: list[dict], frame: pd.DataFrame, currency: str) -> None:
    """Each month's effective cost per pricing category (the stacked chart of the report)."""
    if frame.empty:
        return
    split = frame.groupby(["month", "pricing_category"], observed=True)["effective_micros"].sum()
    for entry in by_month:
        parts = split.get(entry["month"])
        entry["effective_cost_by_pricing_category"] = (
            {category: money(value, currency) for category, value in parts.items()}
            if parts is not None
            else {}
        )


def _per_hour(cost_micros: int, hour_micros: int) -> str | None:
    if hour_micros <= 0:
        return None
    return str((Decimal(int(cost_micros)) / Decimal(int(hour_micros))).quantize(Decimal("0.000001")))


TEXT_COLUMNS = (
    "charge_category",
    "provider",
    "region",
    "resource_id",
    "instance_type",
    "gpu",
    "pricing_category",
    "commitment_status",
    "team",
    "project",
    "currency",
    "workload",
    "service_category",
)


def categorized(frame: pd.DataFrame) -> pd.DataFrame:
    """Text columns as categories: a few distinct values over up to millions of rows filter and group
    several times faster as integer codes than as strings."""
    frame = frame.copy()
    for column in TEXT_COLUMNS:
        if frame[column].dtype != "category":
            frame[column] = frame[column].astype("category")
    return frame


def _relabel_empty(values: pd.Series, label: str) -> pd.Series:
    values = values if values.dtype == "category" else values.astype("category")
    if "" in values.cat.categories and label not in values.cat.categories:
        values = values.cat.rename_categories({"": label})
    return values


def _with_keys(frame: pd.DataFrame) -> pd.DataFrame:
    frame = frame.copy()
    starts = frame["charge_period_start"]
    codes = (starts.dt.year * 100 + starts.dt.month).astype("int64")  # formatting a million dates is slow
    labels = {code: f"{code // 100:04d}-{code % 100:02d}" for code in pd.unique(codes)}
    frame["month"] = codes.map(labels).astype("category")
    for column in ("team", "project"):
        frame[column] = _relabel_empty(frame[column], UNTAGGED)
    frame["gpu"] = _relabel_empty(frame["gpu"], "unknown")
    frame["pricing_category"] = _relabel_empty(frame["pricing_category"], "other")
    frame["provider"] = _relabel_empty(frame["provider"], "unknown")
    return frame


def spend_review(
    records: pd.DataFrame,
    request: ReviewRequest,
    *,
    prices: PriceContext | None = None,
    utilization: pd.DataFrame | None = None,
) -> dict:
    """The review as the JSON contract (docs/billing.md); money as decimal strings in `request.currency`."""
    currency = request.currency
    records = categorized(_filtered(records, request))
    period = _converted(_in_period(records, request.start, request.end), request)
    before = _converted(_in_period(records, *request.previous), request)
    gpu, unused, other = split_scope(period)
    prev_gpu, prev_unused, _ = split_scope(before)
    gpu_and_unused = _with_keys(pd.concat([gpu, unused])) if len(gpu) + len(unused) else _with_keys(gpu)
    previous_all = pd.concat([prev_gpu, prev_unused]) if len(prev_gpu) + len(prev_unused) else prev_gpu
    previous_keyed = _with_keys(previous_all) if len(previous_all) else previous_all
    effective = int(gpu["effective_micros"].sum()) + int(unused["effective_micros"].sum())
    gpu_hours = int(gpu["gpu_hours_micros"].sum())
    totals = {
        "billed_cost": money(int(gpu["billed_micros"].sum()) + int(unused["billed_micros"].sum()), currency),
        "effective_cost": money(effective, currency),
        "list_cost": money(int(gpu["list_micros"].sum()) + int(unused["list_micros"].sum()), currency),
        "gpu_hours": hours(gpu_hours),
        "effective_cost_per_gpu_hour": _per_hour(effective, gpu_hours),
    }
    review = {"currency": currency, "totals": totals}
    for name, key in BREAKDOWNS.items():
        review[name] = _breakdown(gpu_and_unused, previous_keyed, key, currency)
    _split_months_by_category(review["by_month"], gpu_and_unused, currency)
    review["unused_commitment_cost"] = money(int(unused["effective_micros"].sum()), currency)
    has_utilization = utilization is not None and not utilization.empty
    idle = idle_gpu_hours_per_row(gpu, utilization) if has_utilization else None
    review["idle_gpu_hours"] = hours(int(idle.sum())) if idle is not None else None
    review["non_gpu_cost"] = money(int(other["effective_micros"].sum()), currency)
    review["savings"] = savings_opportunities(
        gpu, request=request, prices=prices or PriceContext(), idle_micros=idle, currency=currency
    )
    return review


def idle_gpu_hours_per_row(gpu: pd.DataFrame, utilization: pd.DataFrame) -> pd.Series:
    """Micro GPU-hours under IDLE_UTILIZATION_PCT per spend row: hourly GPU means joined by resource id
    and charge period, capped at the row's GPU-hours (a row cannot idle more than it ran)."""
    idle = utilization[utilization["utilization_pct"] < IDLE_UTILIZATION_PCT][["resource_id", "hour"]]
    result = pd.Series(0, index=gpu.index, dtype=np.int64)
    if idle.empty or gpu.empty:
        return result
    rows = gpu[["resource_id", "charge_period_start", "charge_period_end"]].reset_index()
    joined = rows.merge(idle, on="resource_id", how="inner")
    inside = (joined["hour"] >= joined["charge_period_start"]) & (
        joined["hour"] < joined["charge_period_end"]
    )
    counts = joined[inside].groupby("index").size() * MICRO
    result.loc[counts.index] = counts.to_numpy()
    return np.minimum(result, gpu["gpu_hours_micros"].astype(np.int64).clip(lower=0))


def non_gpu_breakdown(records: pd.DataFrame, request: ReviewRequest) -> list[dict]:
    """What the non-GPU spend is (shown beside GPU spend, never in cost per GPU-hour): effective cost by
    charge category and, for usage, by service category (storage, network, compute without a GPU...)."""
    period = _converted(_in_period(_filtered(records, request), request.start, request.end), request)
    _, _, other = split_scope(period)
    if other.empty:
        return []
    service = (
        other["service_category"]
        .astype(object)
        .where(other["service_category"].astype(object) != "", "other")
    )
    label = (
        other["charge_category"]
        .astype(object)
        .where(other["charge_category"].astype(object) != "usage", service)
    )
    sums = other["effective_micros"].groupby(label.to_numpy()).sum()
    return [
        {"charge": str(name), "effective_cost": money(value, request.currency)}
        for name, value in sums.items()
    ]
