"""Reads for the spend review: the bill lines (DuckDB over the imports' Parquet datasets) and utilization
as engine frames, and the prices the savings need from the catalog. The only ORM code of the review;
the engine gets plain frames."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from decimal import Decimal
from pathlib import Path
from statistics import median

import pandas as pd

from billing.imports.records import tag_mapping
from billing.models import BillingImportFile, GpuUtilization, SpendGrant
from billing.review.engine import ReviewRequest
from billing.review.fx_months import rates_by_month
from billing.review.savings import CheaperGpu, PriceContext, PriceUsed
from billing.storage import review_sql
from billing.storage.duckdb_review import FRAME_COLUMNS, dataset_query, engine_rows
from billing.storage.import_datasets import ImportDatasets, readable_files
from billing.storage.months import month_bounds, months_between
from pricing.choices import PricingModel
from pricing.fx import fx_rates
from pricing.models import FxRate
from pricing.price_quality import ILLUSTRATIVE, price_quality
from pricing.selectors import current_price_observations, price_staleness
from procurement.costing.spot import band_interruption_rate_per_hour, spot_economics

# The cost engine's spot defaults (procurement/ranking/options.py): a one-minute checkpoint write and a
# six-minute restart; the interruption rate of Spot Advisor band 2 (10-15% a month) where the review
# does not know the instance's own band.
SPOT_CHECKPOINT_WRITE_HOURS = Decimal(1) / 60
SPOT_RESTART_HOURS = Decimal("0.1")
SPOT_BAND = 2
COMMITTED_MODELS = (PricingModel.RESERVED_1Y, PricingModel.SAVINGS_PLAN_1Y)


def dataset_rows(
    start: dt.date,
    end: dt.date,
    teams: Sequence[str] = (),
    columns: Sequence[str] = FRAME_COLUMNS,
    *,
    grouped: bool = False,
    per_resource: bool = True,
    sampled: Sequence[str] = (),
) -> pd.DataFrame:
    """The engine frame of the rows charged in [start, end) (of `teams` only, when given) read by DuckDB
    from the imports' Parquet datasets, the team scope in the SQL (`grouped`, `per_resource`:
    duckdb_review.engine_rows)."""
    interruptible = tag_mapping().interruptible
    return engine_rows(
        ImportDatasets(),
        start,
        end,
        teams,
        interruptible_tag=interruptible,
        columns=columns,
        grouped=grouped,
        per_resource=per_resource,
        sampled=sampled,
    )


def spend_frame(request: ReviewRequest) -> pd.DataFrame:
    """Spend rows of the review period and the period before it (for trends), as REVIEW_COLUMNS."""
    start, _ = request.previous
    # pre-aggregated in DuckDB to a row per team x GPU x category x day... (the resource id only where
    # the review reads one: review_sql.REVIEW_RESOURCE), however many lines and resources the bill
    # has, except the lines of resources with utilization samples in the period: idle hours are capped
    # per bill line (engine.py); idle is judged in the review period only (utilization_frame)
    sampled = sampled_resources(request.start, request.end)
    if "" in sampled:  # samples without a resource id match every line without one: per line only
        return dataset_rows(start, request.end, request.allowed_teams)
    return dataset_rows(
        start, request.end, request.allowed_teams, grouped=True, per_resource=False, sampled=sampled
    )


def sampled_resources(start: dt.date, end: dt.date) -> list[str]:
    """The resource ids with a GPU utilization sample in [start, end) (a fleet's GPU resources, not its
    bill lines)."""
    found = GpuUtilization.objects.filter(
        hour__gte=dt.datetime.combine(start, dt.time(), tzinfo=dt.UTC),
        hour__lt=dt.datetime.combine(end, dt.time(), tzinfo=dt.UTC),
    )
    return list(found.values_list("resource_id", flat=True).distinct())


def utilization_frame(request: ReviewRequest) -> pd.DataFrame:
    rows = GpuUtilization.objects.filter(
        hour__gte=dt.datetime.combine(request.start, dt.time(), tzinfo=dt.UTC),
        hour__lt=dt.datetime.combine(request.end, dt.time(), tzinfo=dt.UTC),
    ).values_list("resource_id", "gpu_index", "hour", "utilization_pct")
    frame = pd.DataFrame.from_records(
        list(rows), columns=["resource_id", "gpu_index", "hour", "utilization_pct"]
    )
    if frame.empty:
        return frame
    frame["hour"] = pd.to_datetime(frame["hour"], utc=True)
    frame["utilization_pct"] = frame["utilization_pct"].astype(float)
    return frame


def spot_overhead() -> tuple[Decimal, tuple[str, ...]]:
    economics = spot_economics(
        spot_price_per_hour=Decimal(1),
        rate_per_hour=band_interruption_rate_per_hour(SPOT_BAND),
        checkpoint_write_hours=SPOT_CHECKPOINT_WRITE_HOURS,
        restart_hours=SPOT_RESTART_HOURS,
    )
    return economics.overhead, (
        "interruption rate of Spot Advisor band 10-15% a month; checkpoint write 1 minute every "
        f"{economics.interval_hours * 60:.0f} minutes, restart 6 minutes",
    )


def price_context(frame: pd.DataFrame, currency: str = "USD") -> PriceContext:
    """Catalog prices for the (provider, instance type, region) triples the review rows use."""
    triples = frame[["provider", "instance_type", "region"]].drop_duplicates()  # a few, of up to millions
    keys = (
        set(zip(*(triples[c].astype(object) for c in triples.columns), strict=True)) if len(frame) else set()
    )
    keys = {key for key in keys if key[1]}
    providers = {k[0] for k in keys}
    names = {k[1] for k in keys}
    rates = fx_rates(base="USD")
    spot_prices: dict[tuple, list[Decimal]] = {}
    committed: dict[tuple, Decimal] = {}
    observations = current_price_observations(
        offer__instance_type__provider__slug__in=providers,
        offer__instance_type__name__in=names,
        pricing_model__in=[PricingModel.SPOT, *COMMITTED_MODELS],
    ).values_list(
        "offer__instance_type__provider__slug",
        "offer__instance_type__name",
        "offer__region__code",
        "pricing_model",
        "amount_per_hour",
        "currency",
        "offer__zone",
        "observed_at",
        "source",
        "refresh__source",
        "id",
        "payment_option",
        "commitment_kind",
    )
    spot_sources: dict[tuple, list[PriceUsed]] = {}
    committed_sources: dict[tuple, PriceUsed] = {}
    for (
        provider,
        name,
        region,
        model,
        amount,
        price_currency,
        zone,
        observed_at,
        source,
        refresh,
        price_id,
        payment,
        kind,
    ) in observations:
        key = (provider, name, region)
        if key not in keys or price_currency not in rates:
            continue
        quality = price_quality(source)
        if model != PricingModel.SPOT and quality == ILLUSTRATIVE:
            continue  # a made-up commitment price never decides a finance figure
        usd = amount * rates[price_currency]
        value = usd if currency == "USD" else usd / rates.get(currency, Decimal(1))
        described = (provider, name, region, zone, str(model), payment, kind)
        used = PriceUsed(
            label=" ".join(part for part in described if part),
            observed_at=observed_at.isoformat() if observed_at else None,
            quality=quality,
            source=source,
            pricing_model=str(model),
            price_id=price_id,
            stale_after_hours=price_staleness(model, refresh, observed_at, observed_at)[1]
            if observed_at
            else None,
        )
        if model == PricingModel.SPOT:
            spot_prices.setdefault(key, []).append(value)
            spot_sources.setdefault(key, []).append(used)  # every zone's price goes into the median
        elif key not in committed or value < committed[key]:
            committed[key], committed_sources[key] = value, used  # the cheapest commitment is the one used
    overhead, assumptions = spot_overhead()
    return PriceContext(
        spot={key: Decimal(median(values)) for key, values in spot_prices.items()},
        committed=committed,
        spot_overhead=overhead,
        spot_assumptions=assumptions,
        cheaper_gpu=cheaper_gpu_options(frame),
        spot_sources={key: tuple(values) for key, values in spot_sources.items()},
        committed_sources={key: (used,) for key, used in committed_sources.items()},
    )


def cheaper_gpu_options(frame: pd.DataFrame) -> dict[str, CheaperGpu]:
    """Resources tagged `workload=<stored workload name>`: the latest stored ranking's cheapest row against
    the row of the resource's own instance type (same provider), as a job-cost ratio. The workload is the
    one of that name of the row's own team (the team whose spend the bills tag with the row's team, as
    grants spell it: SpendGrant.spend_label), else one stored without a team; never another team's,
    since two teams may well name their workloads alike. A resource tagged with different teams or
    workloads gets no option (which one it runs is unknown)."""
    if frame.empty:
        return {}
    # a line without a resource id is no resource (and the review's frame blanks the ids it does not read)
    linked = frame[(frame["workload"] != "") & (frame["resource_id"] != "")][
        ["resource_id", "workload", "team", "provider", "instance_type"]
    ].drop_duplicates()
    links = linked[["resource_id", "workload", "team"]].drop_duplicates()["resource_id"].value_counts()
    linked = linked[linked["resource_id"].isin(set(links[links == 1].index))]
    workloads = _workloads_by_team(set(linked["workload"].astype(object)))
    options = {}
    for row in linked.itertuples(index=False):
        workload = workloads.get((row.workload, row.team)) or workloads.get((row.workload, None))
        option = _cheaper_option(workload, row.provider, row.instance_type)
        if option is not None:
            options[row.resource_id] = option
    return options


def _workloads_by_team(names: set[str]) -> dict[tuple[str, str | None], object]:
    """(workload name, spend team label or None for no team) -> the latest updated such workload."""
    from procurement.models import Workload

    found = {}
    for workload in Workload.objects.filter(name__in=names).select_related("team").order_by("updated_at"):
        found[(workload.name, _spend_label(workload.team))] = workload
    return found


def _spend_label(team) -> str | None:
    """The team's name as bills tag it: its grant's spend team, else its slug (None: no team)."""
    if team is None:
        return None
    grant = SpendGrant.objects.filter(team=team).first()
    return grant.spend_label if grant else team.slug


def _cheaper_option(workload, provider: str, instance_type: str) -> CheaperGpu | None:
    latest = workload.recommendations.first() if workload else None
    results = [r for r in (latest.results if latest else []) if r.get("total_cost")]
    if not results:
        return None
    cheapest = min(results, key=lambda r: Decimal(r["total_cost"]))
    current = [
        r
        for r in results
        if r.get("provider") == provider
        and r.get("instance_type") == instance_type
        and r.get("pricing_model") == "on_demand"
    ]
    if not current:
        return None
    ratio = Decimal(cheapest["total_cost"]) / min(Decimal(r["total_cost"]) for r in current)
    if ratio >= 1:
        return None
    target = f"{cheapest['provider']} {cheapest['instance_type']} x{cheapest.get('instances', 1)} ({cheapest['gpu']}, {cheapest['pricing_model']})"
    return CheaperGpu(cost_ratio=ratio, target=target)


def fx_history() -> dict[str, list[tuple[dt.date, Decimal]]]:
    """Every stored rate into USD, by currency, oldest first. Read per call, not cached: a few dozen rows,
    no slower than a cached read with its price-version check (benchmarks/cache_bench.py, 1.3x)."""
    history: dict[str, list[tuple[dt.date, Decimal]]] = {}
    for code, day, rate in (
        FxRate.objects.filter(base="USD")
        .order_by("currency", "as_of")
        .values_list("currency", "as_of", "rate")
    ):
        history.setdefault(code, []).append((day, rate))
    return history


def review_fx_months(currency: str, start: dt.date, end: dt.date) -> dict[str, dict[str, Decimal]]:
    """fx_months.rates_by_month of every month [start, end) touches."""
    return rates_by_month(fx_history(), currency, months_between(start, end))


def bills_of(currency: str, month: str, allowed_teams: Sequence[str] = ()) -> list[str]:
    """The file names of the imports with rows in `currency` charged in `month` ('YYYY-MM'), of the
    granted teams only when given (a warning never names another team's bill)."""
    start, end = month_bounds(month)
    first, following = (dt.datetime.combine(day, dt.time(), tzinfo=dt.UTC) for day in (start, end))
    datasets = ImportDatasets()
    found = dataset_query(
        datasets,
        readable_files(start, end),
        review_sql.FILES_WITH_CURRENCY,
        allowed_teams=allowed_teams,
        params={"currency": currency, "start": first, "end": following},
    )
    paths = [str(Path(name).relative_to(datasets.root)) for (name,) in found]
    recorded = BillingImportFile.objects.filter(path__in=paths)
    return sorted(set(recorded.values_list("billing_import__file_name", flat=True)))


def charge_range(teams: Sequence[str] = ()) -> tuple[dt.datetime, dt.datetime] | None:
    """The first and last charge start stored (of `teams` only, when given); None without rows."""
    found = dataset_query(ImportDatasets(), readable_files(), review_sql.CHARGE_RANGE, allowed_teams=teams)
    first, last = found[0] if found else (None, None)
    return None if last is None else (first, last)


def month_with_rows(
    start: dt.date, end: dt.date, teams: Sequence[str] = ()
) -> tuple[bool, dt.datetime | None]:
    """Whether any row (of `teams` only, when given) is charged in [start, end), and the newest charge
    start stored (None without rows)."""
    first, following = (dt.datetime.combine(day, dt.time(), tzinfo=dt.UTC) for day in (start, end))
    found = dataset_query(
        ImportDatasets(),
        readable_files(),
        review_sql.MONTH_HAS_ROWS,
        allowed_teams=teams,
        params={"start": first, "end": following},
    )
    newest, in_month = found[0] if found else (None, False)
    return bool(in_month), newest


def review_fx(currency: str) -> dict[str, Decimal]:
    """Units of `currency` one unit of each stored currency buys, through USD. Every review request
    reads them, cached ones included (they are part of its key); one small query, which a cache did not
    beat (benchmarks/cache_bench.py: the cached read 0.3-1.2x the query's speed)."""
    rates = fx_rates(base="USD")
    if currency not in rates:
        return {}
    return {code: rate / rates[currency] for code, rate in rates.items()}
