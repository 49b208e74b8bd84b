"""The GPU spend review: breakdowns, trends, unused commitments, idle time and savings (plain pandas).

Input is a frame of spend rows (REVIEW_COLUMNS, money and hours as exact integer micro-units, so that
a million rows add up exactly and fast) plus the prices the savings need, built by the caller from
the catalog. No ORM here. Definitions (docs/billing.md):
- GPU spend: usage rows whose instance type maps to a GPU, plus unused commitments (Unused rows of a
  GPU instance type or of no instance type). Totals and cost per GPU-hour cover exactly these; every
  other row (storage, network, tax, support, non-GPU compute, credits) is `non_gpu_cost`, except usage the
  bill cannot tell GPU from non-GPU (gpu_scope.py), `undetermined_cost`, beside both. Purchases of
  upfront commitments have EffectiveCost 0 (the usage rows amortize them), so they are not counted twice.
- effective cost per GPU-hour = GPU effective cost (unused commitments included) / GPU-hours used.
- `--to` is exclusive; a row belongs to the period its ChargePeriodStart falls in. Corrections are deltas
  in the charge period they correct and add up with it.
Savings (savings.py) are applied in order spot, commitment, cheaper GPU, idle, each to the hours the
earlier ones did not claim, so no hour is counted twice.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from decimal import Decimal

import numpy as np
import pandas as pd

from billing.choices import AllocationRule
from billing.input_errors import ReviewInputError  # noqa: F401 (raised here, imported from here)
from billing.review.commitment_attribution import TO_GPU, UNATTRIBUTED, attributed, period_codes_of
from billing.review.commitment_coverage import commitments_section
from billing.review.fx_months import groups_by_currency_month, missing_rates, rate_of
from billing.review.gpu_scope import undetermined_mask
from billing.review.savings import PriceContext, savings_opportunities
from billing.storage import allocation_sql, review_sql
from billing.storage.allocation_frames import samples_table
from billing.storage.frame_sql import FrameSql
from pricing.providers.currencies import currency_problem
from procurement.costing.values import round_money

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
IDLE_UTILIZATION_PCT = allocation_sql.IDLE_UTILIZATION_PCT


@dataclass(frozen=True)
class ReviewRequest:
    start: dt.date
    end: dt.date  # exclusive
    team: str = ""
    project: str = ""
    provider: str = ""
    currency: str = "USD"
    fx_to_currency: dict[str, Decimal] = field(default_factory=dict)  # currency -> units of `currency`
    # "YYYY-MM" -> fx_to_currency of that charge month (fx_months.py); empty: fx_to_currency every month
    fx_months: dict[str, dict[str, Decimal]] = field(default_factory=dict)
    # set for an engineer's granted access (billing/access.py): only these teams' rows count
    allowed_teams: tuple[str, ...] = ()
    allocation: str = ""  # showback rule (allocation.py); "" for the default, proportional

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
        if self.allocation and self.allocation not in AllocationRule.values:
            raise ReviewInputError(
                "allocation",
                f"unknown rule {self.allocation!r}; use one of {', '.join(AllocationRule.values)}",
            )

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
    if request.allowed_teams:
        frame = frame[frame["team"].isin(request.allowed_teams)]
    for column in ("team", "project", "provider"):
        wanted = getattr(request, column)
        if wanted:
            frame = frame[frame[column] == wanted]
    return frame


# Sums are exact in int64 micro-units up to 9.2e18 (9.2 trillion in money, or in hours). A bill never
# comes near it, but a hostile file can (the import allows 1e14 a row): refuse rather than wrap around.
EXACT_SUM_LIMIT = 2.0**62
EXACT_COLUMNS = (
    "billed_micros",
    "effective_micros",
    "list_micros",
    "instance_hours_micros",
    "gpu_hours_micros",
)


def _exact(frame: pd.DataFrame) -> pd.DataFrame:
    """`frame`, once the absolute values of each summed column add up to less than EXACT_SUM_LIMIT (so
    every sum of its rows is exact); else a ReviewInputError naming the column."""
    for column in EXACT_COLUMNS:
        if column in frame and np.abs(frame[column].to_numpy(dtype=float)).sum() >= EXACT_SUM_LIMIT:
            name = column.removesuffix("_micros")
            raise ReviewInputError(
                name,
                "the stored rows of this period add up beyond 4.6 trillion, where exact sums stop; "
                "narrow the period or check the imported file for a wrong amount",
            )
    return frame


def _converted(frame: pd.DataFrame, request: ReviewRequest) -> pd.DataFrame:
    """Money into the report currency at each row's charge-month rate (fx_months.py). Rows of a month
    without a rate are left out (the review warns of them: fx_months.missing_rates), never converted 1:1."""
    other = (frame["currency"] != request.currency).to_numpy(bool)
    if not other.any():
        return frame  # its rows are some of the review's, whose sums spend_review checked (_exact)
    keep = np.ones(len(frame), dtype=bool)
    money_columns = [c for c in ("billed_micros", "effective_micros", "list_micros") if c in frame]
    converted = {column: frame[column].to_numpy(np.int64).copy() for column in money_columns}
    for (currency, month), positions in groups_by_currency_month(frame, other).items():
        rate = rate_of(request, currency, month)
        if rate is None:
            keep[positions] = False
            continue
        for column in money_columns:
            values = [int((Decimal(int(v)) * rate).to_integral_value()) for v in converted[column][positions]]
            if values and max(map(abs, values)) >= EXACT_SUM_LIMIT:
                raise ReviewInputError(
                    column.removesuffix("_micros"),
                    f"a {currency} amount is beyond 4.6 trillion {request.currency}, where exact sums stop",
                )
            converted[column][positions] = values
    frame = frame.assign(**converted, currency=request.currency)
    return _exact(frame[keep] if not keep.all() else frame)


def fx_missing(frame: pd.DataFrame, request: ReviewRequest) -> list[dict]:
    """The review's `fx_missing`: each (currency, month) of `frame` with no stored rate, its rows and what
    they billed in their own currency (left out of every sum; the service names the bills)."""
    return [
        {
            "currency": entry["currency"],
            "month": entry["month"],
            "rows": entry["rows"],
            "billed_cost": money(entry["billed_micros"], entry["currency"]),
        }
        for entry in missing_rates(frame, request)
    ]


def scope_masks(frame: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """(GPU usage, unused commitments attributed to GPU) as boolean arrays, of a frame that went through
    commitment_attribution.attributed (without it: unused rows of a GPU instance type only)."""
    unused = (frame["commitment_status"] == "unused").to_numpy(bool)
    has_gpu = (frame["gpu"] != "").to_numpy(bool)
    gpu_usage = (frame["charge_category"] == "usage").to_numpy(bool) & has_gpu & ~unused
    unused_gpu = unused & (frame[TO_GPU].to_numpy(bool) if TO_GPU in frame else has_gpu)
    return gpu_usage, unused_gpu


def unattributed_mask(frame: pd.DataFrame) -> np.ndarray:
    """Unused commitment cost that is neither GPU nor non-GPU spend (commitment_attribution.py)."""
    if UNATTRIBUTED not in frame:
        return np.zeros(len(frame), dtype=bool)
    return (frame["commitment_status"] == "unused").to_numpy(bool) & frame[UNATTRIBUTED].to_numpy(bool)


def with_attribution(frame: pd.DataFrame, request: ReviewRequest) -> pd.DataFrame:
    """The rows with their unused commitments attributed, each period of the review on its own."""
    starts = pd.DatetimeIndex(frame["charge_period_start"]).as_unit("ns").asi8
    bounds = [
        tuple(pd.Timestamp(day, tz="UTC").as_unit("ns").value for day in pair)
        for pair in ((request.start, request.end), request.previous)
    ]
    return attributed(frame, period_codes_of(starts, bounds))


def undetermined_rows_mask(frame: pd.DataFrame) -> np.ndarray:
    """Usage the bill cannot tell GPU from non-GPU (gpu_scope.py); never an unused commitment (those are
    attributed: commitment_attribution.py)."""
    return undetermined_mask(frame) & (frame["commitment_status"] != "unused").to_numpy(bool)


def split_scope(frame: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """(GPU usage, unused commitments attributed to GPU, non-GPU spend: everything else but unattributed
    commitments and undetermined usage)."""
    gpu_usage, unused_gpu = scope_masks(frame)
    beside = unattributed_mask(frame) | undetermined_rows_mask(frame)
    return frame[gpu_usage], frame[unused_gpu], frame[~gpu_usage & ~unused_gpu & ~beside]


def _breakdowns(current: FrameSql, previous: FrameSql | None, currency: str) -> dict[str, list[dict]]:
    """Each breakdown of the period's GPU spend (`current`'s relation `spend`) by review_sql.BREAKDOWN,
    with the effective cost of the same label in the period before (`previous`'s, None without rows)
    but by month, and each month's effective cost by pricing category (review_sql.MONTH_CATEGORIES)."""
    found: dict[str, list[dict]] = {}
    for name, key in BREAKDOWNS.items():
        sql = review_sql.BREAKDOWN.format(label=review_sql.LABELS[key], key=review_sql.KEYS[key], gpu="true")
        before = None
        if previous is not None and key != "month":
            before = {label: effective for label, effective, _, _ in previous.rows(sql)}
        entries = []
        for label, effective, gpu_hours, billed in current.rows(sql):
            entry = {
                key: str(label),
                "effective_cost": money(effective, currency),
                "gpu_hours": hours(gpu_hours),
                "billed_cost": money(billed, currency),
                "effective_cost_per_gpu_hour": _per_hour(effective, gpu_hours),
            }
            if before is not None:
                entry["previous_effective_cost"] = money(before.get(label, 0), currency)
            entries.append(entry)
        found[name] = entries
    by_category: dict[str, dict[str, str]] = {}
    for month, category, effective in current.rows(review_sql.MONTH_CATEGORIES):
        by_category.setdefault(month, {})[category] = money(effective, currency)
    for entry in found["by_month"]:
        entry["effective_cost_by_pricing_category"] = by_category.get(entry["month"], {})
    return found


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


def text_category(values) -> pd.Categorical:
    """Text as a category with sorted categories (the order groupby lists them in), None as ""."""
    if isinstance(values, pd.Series) and values.dtype == "category":
        return values.array
    codes, names = pd.factorize(values, sort=True)  # one hash pass; only the distinct names are sorted
    if (codes < 0).any():
        codes, names = pd.factorize(pd.Series(values, dtype=object).fillna(""), sort=True)
    return pd.Categorical.from_codes(codes, categories=np.asarray(names, dtype=object))


def categorized(frame: pd.DataFrame) -> pd.DataFrame:
    """Text columns as categories: a few distinct values over up to millions of rows filter and group
    several times faster as integer codes than as strings (selectors.spend_frame builds them so)."""
    todo = {
        column: text_category(frame[column]) for column in TEXT_COLUMNS if frame[column].dtype != "category"
    }
    return frame.assign(**todo) if todo else frame  # copy-on-write: the other columns are not copied


SUM_COLUMNS = ["billed_micros", "effective_micros", "list_micros", "gpu_hours_micros"]
# what the totals and breakdowns read of the GPU spend rows (review_sql's sums over them, frame_sql.py)
SPEND_COLUMNS = [
    "charge_period_start",
    "charge_category",
    "commitment_status",
    "team",
    "project",
    "provider",
    "gpu",
    "pricing_category",
    "currency",
    "billed_micros",
    "effective_micros",
    "list_micros",
    "gpu_hours_micros",
]
# what the totals, the idle join and the savings read of the GPU usage rows
GPU_COLUMNS = [
    "charge_period_start",
    "charge_period_end",
    "provider",
    "region",
    "resource_id",
    "instance_type",
    "gpus_per_instance",
    "pricing_category",
    "currency",
    "billed_micros",
    "effective_micros",
    "list_micros",
    "instance_hours_micros",
    "gpu_hours_micros",
    "interruptible",
]


def _effective(rows: pd.DataFrame) -> int:
    """The effective micro-units of `rows` (review_sql.ALL_EFFECTIVE)."""
    if rows.empty:
        return 0
    with FrameSql() as sql:
        return int(sql.register("spend", rows).rows(review_sql.ALL_EFFECTIVE)[0][0] or 0)


def _period_mask(starts: np.ndarray, start: dt.date, end: dt.date) -> np.ndarray:
    begin, finish = (pd.Timestamp(day, tz="UTC").as_unit("ns").value for day in (start, end))
    return (starts >= begin) & (starts < finish)


def spend_review(
    records: pd.DataFrame,
    request: ReviewRequest,
    *,
    prices: PriceContext | None = None,
    utilization: pd.DataFrame | None = None,
) -> dict:
    """The review as the JSON contract (docs/billing.md); money as decimal strings in `request.currency`.

    Speed (benchmarks/review_bench.py): the masks of period and scope are computed once over the whole
    frame, and each subset is taken once, with only the columns its step reads."""
    currency = request.currency
    records = _exact(categorized(_filtered(records, request)))  # then every sum of some of its rows is exact
    records = with_attribution(records, request)  # may split an unused row in two: amounts add up as before
    starts = pd.DatetimeIndex(records["charge_period_start"]).as_unit("ns").asi8
    in_period, in_previous = (
        _period_mask(starts, request.start, request.end),
        _period_mask(starts, *request.previous),
    )
    gpu_usage, unused_gpu = scope_masks(records)
    unattributed = unattributed_mask(records)
    undetermined = undetermined_rows_mask(records)
    spend = SUM_COLUMNS + ["currency", "charge_period_start"]  # the charge month picks the FX rate
    gpu = _converted(records.loc[in_period & gpu_usage, GPU_COLUMNS], request)
    non_gpu = ~gpu_usage & ~unused_gpu & ~unattributed & ~undetermined
    other = _converted(records.loc[in_period & non_gpu, spend], request)
    undetermined_spend = _converted(records.loc[in_period & undetermined, spend + UNDETERMINED_KEYS], request)
    unattributed_rows = _converted(records.loc[in_period & unattributed, spend], request)
    # the GPU spend (usage and unused commitments attributed to GPU) in the review currency, summed by
    # review_sql's statements in DuckDB (frame_sql.py), the same SQL as over the bill's Parquet
    current = FrameSql().register(
        "spend", _converted(records.loc[in_period & (gpu_usage | unused_gpu), SPEND_COLUMNS], request)
    )
    previous_rows = records.loc[in_previous & (gpu_usage | unused_gpu), SPEND_COLUMNS]
    previous = (
        FrameSql().register("spend", _converted(previous_rows, request)) if len(previous_rows) else None
    )
    try:
        used, unused = (
            [int(value or 0) for value in current.rows(review_sql.GPU_SUMS.format(gpu=scope))[0]]
            for scope in (review_sql.GPU_USAGE, review_sql.UNUSED)
        )
        breakdowns = _breakdowns(current, previous, currency)
        coverage = pd.DataFrame(
            current.rows(review_sql.COVERAGE_HOURS),
            columns=["month", "team", "pricing_category", "gpu_hours_micros"],
        )
    finally:
        current.close()
        if previous is not None:
            previous.close()
    effective = used[1] + unused[1]
    gpu_hours = used[3]
    totals = {
        "billed_cost": money(used[0] + unused[0], currency),
        "effective_cost": money(effective, currency),
        "list_cost": money(used[2] + unused[2], currency),
        "gpu_hours": hours(gpu_hours),
        "effective_cost_per_gpu_hour": _per_hour(effective, gpu_hours),
    }
    review = {"currency": currency, "totals": totals}
    # rows of a month without an FX rate are left out of every sum above and below, and named here
    counted = ["currency", "charge_period_start", "billed_micros"] + [
        c for c in ["row_count"] if c in records
    ]
    review["fx_missing"] = fx_missing(records.loc[in_period | in_previous, counted], request)
    review |= breakdowns
    review["unused_commitment_cost"] = money(unused[1], currency)
    has_utilization = utilization is not None and not utilization.empty
    idle, idle_total = idle_gpu_hours(gpu, utilization) if has_utilization else (None, None)
    review["idle_gpu_hours"] = hours(idle_total) if idle_total is not None else None
    review["non_gpu_cost"] = money(_effective(other), currency)
    review["unattributed_commitment_cost"] = money(_effective(unattributed_rows), currency)
    review["undetermined_cost"] = money(_effective(undetermined_spend), currency)
    review["undetermined"] = _undetermined_lines(undetermined_spend, currency)
    review["commitments"] = _commitments(records, in_period, gpu_usage, coverage, request)
    review["savings"] = savings_opportunities(
        gpu, request=request, prices=prices or PriceContext(), idle_micros=idle, currency=currency
    )
    return review


UNDETERMINED_KEYS = ["provider", "instance_type", "service_category"]


def _undetermined_lines(rows: pd.DataFrame, currency: str) -> list[dict]:
    """The undetermined spend by provider, instance type and service category, largest first
    (review_sql.UNDETERMINED_LINES)."""
    if rows.empty:
        return []
    with FrameSql() as sql:
        found = sql.register("spend", rows).rows(review_sql.UNDETERMINED_LINES)
    return [
        {
            "provider": provider,
            "instance_type": instance_type,
            "service_category": service,
            "effective_cost": money(effective, currency),
            "billed_cost": money(billed, currency),
        }
        for provider, instance_type, service, effective, billed in found
    ]


COMMITMENT_READ = [
    "charge_period_start",
    "commitment_status",
    "commitment_discount_id",
    "commitment_type",
    "commitment_family",
    "commitment_gpu_scope",
    "commitment_end",
    "team",
    "gpu",
    "instance_type",
    TO_GPU,
    UNATTRIBUTED,
    "gpu_hours_micros",
    *SUM_COLUMNS[:3],
    "currency",
]


def _commitments(records, in_period: np.ndarray, gpu_usage: np.ndarray, cube: pd.DataFrame, request) -> dict:
    """The `commitments` section (commitment_coverage.py): the period's rows of a commitment (an id or
    a status), in the review currency, and for coverage the period's GPU-hours by month, team and
    pricing category (`cube`: review_sql.COVERAGE_HOURS)."""
    named = (records["commitment_status"] != "").to_numpy(bool) | (
        records["commitment_discount_id"] != ""
    ).to_numpy(bool)
    mask = in_period & named
    return commitments_section(
        _converted(records.loc[mask, COMMITMENT_READ], request),
        cube,
        gpu_flags=gpu_usage[mask],
        as_of=request.end,
        money=lambda micros: money(micros, request.currency),
        hours=hours,
    )


def idle_gpu_hours(gpu: pd.DataFrame, utilization: pd.DataFrame) -> tuple[pd.Series, int]:
    """Micro GPU-hours under IDLE_UTILIZATION_PCT per spend row: the hourly GPU samples of its resource
    in its charge period [start, end), capped at the row's GPU-hours (a row cannot idle more than it ran);
    and their sum. allocation_sql.ROW_IDLE_HOURS in DuckDB: the showback's own join of lines to samples
    (IDLE_JOIN), one way to join, counting the idle samples beside the mean; kept as a temp table, whose
    rows are listed (IDLE_HOURS_ROWS) and summed (IDLE_HOURS_TOTAL) in SQL."""
    result = np.zeros(len(gpu), dtype=np.int64)
    total = 0
    if not gpu.empty and not utilization.empty:
        lines = pd.DataFrame(
            {
                "line": np.arange(len(gpu), dtype=np.int64),
                "resource_id": gpu["resource_id"].astype(object).fillna("").astype(str).to_numpy(),
                "charge_period_start": gpu["charge_period_start"].to_numpy(),
                "charge_period_end": gpu["charge_period_end"].to_numpy(),
                "charge_category": "usage",  # every row of `gpu` is GPU usage (scope_masks)
                "gpu": "gpu",
                "commitment_status": "",
                "gpu_hours_micros": gpu["gpu_hours_micros"].to_numpy(np.int64),
            }
        )
        with FrameSql() as sql:
            # a sample without a resource matches no line (as the lookup by resource it replaced)
            sampled = utilization[utilization["resource_id"].notna()]
            sql.register("spend_lines", lines).connection.register("samples", samples_table(sampled))
            sql.rows(allocation_sql.ROW_IDLE_HOURS_KEPT.format(rows="spend_lines", samples="samples"))
            try:
                found = sql.rows(allocation_sql.IDLE_HOURS_ROWS)
                total = int(sql.rows(allocation_sql.IDLE_HOURS_TOTAL)[0][0])
            finally:
                sql.rows(allocation_sql.ROW_IDLE_HOURS_DROP)
        if found:
            positions, idle = zip(*found, strict=True)
            result[list(positions)] = idle
    return pd.Series(result, index=gpu.index, dtype=np.int64), total


def non_gpu_breakdown(records: pd.DataFrame, request: ReviewRequest) -> list[dict]:
    """What the non-GPU spend is (shown beside GPU spend, never in cost per GPU-hour): effective cost by
    charge category and, for usage, by service category (storage, network, compute without a GPU...),
    summed by review_sql.NON_GPU_BREAKDOWN in DuckDB (frame_sql.py)."""
    period = _converted(_in_period(_filtered(records, request), request.start, request.end), request)
    _, _, other = split_scope(with_attribution(period, request))
    if other.empty:
        return []
    with FrameSql() as sql:
        sums = sql.register("spend", other[["charge_category", "service_category", "effective_micros"]]).rows(
            review_sql.NON_GPU_BREAKDOWN
        )
    return [{"charge": str(name), "effective_cost": money(value, request.currency)} for name, value in sums]
