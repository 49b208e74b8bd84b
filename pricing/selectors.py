"""Reads of the catalog and current prices, shaped for the engines and the pages.

`offer_frame()` is the one place that turns stored prices into the pandas table the ranking engine
and reports work on: one row per offer × pricing model × payment option, newest published price.
Besides the exact Decimal columns it carries float copies (``*_float``, converted once here so that
every ranking does not pay for it) and a ``stale`` flag (docs/provider-prices.md, "Stale prices").
"""

from __future__ import annotations

import datetime as dt

import numpy as np
import pandas as pd
from django.conf import settings
from django.db.models import F, Window
from django.db.models.functions import RowNumber
from django.utils import timezone

from pricing.choices import PriceStatus, PricingModel
from pricing.fx import MissingFxRate, fx_rates
from pricing.models import PriceObservation
from pricing.price_quality import ILLUSTRATIVE, price_qualities
from pricing.sources.registry import expand_sources
from pricing.spot_sanity import SANITY_COLUMNS, spot_sanity
from scheduler.freshness import stale_after_for
from scheduler.schedule import SCHEDULE

OFFER_FRAME_COLUMNS = [
    "observation_id",
    "offer_id",
    "provider",
    "provider_name",
    "region",
    "zone",
    "instance_type",
    "gpu",
    "gpu_count",
    "vcpus",
    "memory_gib",
    "pricing_model",
    "payment_option",
    "price_per_hour",
    "currency",
    "price_per_hour_usd",
    "price_per_gpu_hour_usd",
    "observed_at",
    "source",
    "host_priced_separately",
    "commitment_kind",
    "host_figures_lower_bound",
]
# Added after the columns above (same rows): float copies of the Decimal columns, and freshness.
FLOAT_COLUMNS = ("gpu_count", "vcpus", "memory_gib", "price_per_hour_usd", "price_per_gpu_hour_usd")
FRESHNESS_COLUMNS = ("refresh_source", "scheduled", "stale_after_hours", "stale")
# Then the price quality (pricing/price_quality.py) and the spot sanity figures (pricing/spot_sanity.py).
QUALITY_COLUMNS = ("price_quality", *SANITY_COLUMNS)

# The sources the beat schedule refreshes: their prices are stale after twice their period.
SCHEDULED_PRICE_SOURCES = frozenset(
    source.name
    for job in SCHEDULE
    if job.task == "pricing.refresh_prices" and "source" in job.kwargs
    for source in expand_sources(job.kwargs["source"])
)
DEFAULT_SNAPSHOT_STALE_DAYS = 90


# What "the current price of an offer" means, said once for every reader: the newest published observation
# per CURRENT_KEY, of an offer still listed (a marketplace offer its source no longer lists, ``gone_at``
# set, has no current price). current_price_observations() is the selector; current_price_count() counts
# its rows without the window; pricing/offer_table.py is its fast SQL form for the ranking, built from
# the same key (tests/pricing/test_current_price.py holds all three to the same answer).
CURRENT_KEY = ("offer_id", "pricing_model", "payment_option", "commitment_kind")


def listed_published_prices(**filters):
    """Every published observation of an offer still listed: what the current price is chosen from."""
    return PriceObservation.objects.filter(
        status=PriceStatus.PUBLISHED, offer__gone_at__isnull=True, **filters
    )


def current_price_observations(**filters):
    """The current price of every offer × pricing model × payment option × commitment kind (CURRENT_KEY)
    matching ``filters``: the newest of listed_published_prices()."""
    newest_first = Window(
        RowNumber(), partition_by=[F(name) for name in CURRENT_KEY], order_by=F("observed_at").desc()
    )
    return listed_published_prices(**filters).annotate(recency=newest_first).filter(recency=1)


def current_price_count(**filters) -> int:
    """How many current prices match: a COUNT of distinct CURRENT_KEYs in SQL, the number of rows
    current_price_observations(**filters) has (one per key), without ranking every observation."""
    return listed_published_prices(**filters).values(*CURRENT_KEY).distinct().count()


def offer_frame(*, gpu_mapped_only: bool = True, now: dt.datetime | None = None, **filters) -> pd.DataFrame:
    """Current prices as a DataFrame: OFFER_FRAME_COLUMNS (amounts stay Decimal), then the float copies
    ``<column>_float`` of FLOAT_COLUMNS (NaN where missing), then FRESHNESS_COLUMNS as of ``now``.
    ``host_priced_separately`` marks a price that covers the GPUs only (the host VM is billed on top).

    Prices in a currency without a stored FX rate keep NaN in the USD columns rather than
    guessing a rate; callers that need USD for every row check `price_per_hour_usd.isna()`.
    """
    if gpu_mapped_only:
        filters["offer__instance_type__gpu__isnull"] = False
    rows = current_price_observations(**filters).values_list(
        "id",
        "offer_id",
        "offer__instance_type__provider__slug",
        "offer__instance_type__provider__name",
        "offer__region__code",
        "offer__zone",
        "offer__instance_type__name",
        "offer__instance_type__gpu__slug",
        "offer__instance_type__gpu_count",
        "offer__instance_type__vcpus",
        "offer__instance_type__memory_gib",
        "pricing_model",
        "payment_option",
        "amount_per_hour",
        "currency",
        "observed_at",
        "source",
        "offer__instance_type__host_priced_separately",
        "refresh__source",
        "commitment_kind",
        "offer__instance_type__host_figures_lower_bound",
    )
    rates = fx_rates(base="USD")
    records, refresh_sources = [], []
    for row in rows:  # the selected fields in OFFER_FRAME_COLUMNS order, with USD inserted after currency
        amount, currency, count = row[13], row[14], row[8]
        usd = amount * rates[currency] if currency in rates else None
        per_gpu = usd / count if usd is not None else None
        records.append((*row[:15], usd, per_gpu, *row[15:18], row[19], row[20]))
        refresh_sources.append(row[18] or "")
    frame = pd.DataFrame.from_records(records, columns=OFFER_FRAME_COLUMNS)
    for column in FLOAT_COLUMNS:
        frame[f"{column}_float"] = decimals_to_floats(frame[column])
    frame["refresh_source"] = pd.Series(refresh_sources, index=frame.index, dtype=object)
    frame = with_staleness(frame, now or timezone.now())
    return with_quality(frame)


def with_quality(frame: pd.DataFrame) -> pd.DataFrame:
    """Add QUALITY_COLUMNS: each price's quality and each spot quote's sanity check against its sibling
    zones and on-demand (vectorized, once per read of the catalog)."""
    frame["price_quality"] = price_qualities(frame["source"])
    sanity = spot_sanity(frame)
    for column in SANITY_COLUMNS:
        frame[column] = sanity[column]
    return frame


def decimals_to_floats(values: pd.Series) -> np.ndarray:
    """Decimal (or None) objects to float64, NaN for missing. ``float(Decimal)`` rounds correctly, so a
    6-decimal price converted back with ``round(x, 6)`` is the stored Decimal again."""
    return np.fromiter(
        (np.nan if value is None else float(value) for value in values), dtype=float, count=len(values)
    )


def snapshot_stale_after() -> dt.timedelta:
    """How old a price from a snapshot (bundled catalog, imported file) may get before it is stale."""
    days = getattr(settings, "GPULEDGER_SNAPSHOT_STALE_DAYS", DEFAULT_SNAPSHOT_STALE_DAYS)
    return dt.timedelta(days=days)


def with_staleness(frame: pd.DataFrame, now: dt.datetime) -> pd.DataFrame:
    """Add FRESHNESS_COLUMNS. A price refreshed by a scheduled source is stale when older than twice that
    schedule (``scheduler.freshness.is_stale``, per pricing model); a snapshot has no schedule, so it is
    stale only past ``snapshot_stale_after()``."""
    scheduled = frame["refresh_source"].isin(SCHEDULED_PRICE_SOURCES).to_numpy(dtype=bool)
    pairs = pd.MultiIndex.from_arrays([frame["refresh_source"].fillna(""), frame["pricing_model"]])
    codes, distinct = pairs.factorize()  # a handful of (source, model) pairs, however many rows
    hours = np.array([stale_after_for(*pair) / dt.timedelta(hours=1) for pair in distinct], dtype=float)
    schedule_hours = hours[codes] if len(frame) else np.zeros(0)
    snapshot_hours = snapshot_stale_after() / dt.timedelta(hours=1)
    frame["scheduled"] = scheduled
    frame["stale_after_hours"] = np.where(scheduled, schedule_hours, snapshot_hours)
    observed = pd.to_datetime(frame["observed_at"], utc=True)
    age_hours = (pd.Timestamp(now) - observed).dt.total_seconds().to_numpy(dtype=float) / 3600.0
    frame["stale"] = age_hours > frame["stale_after_hours"].to_numpy(dtype=float)  # is_stale: age > limit
    return frame


def next_staleness_change(frame: pd.DataFrame) -> dt.datetime | None:
    """When the first price of a frame with FRESHNESS_COLUMNS that is fresh now turns stale (None when
    none is fresh: a stale price never turns fresh with time): until then its flags are those of now."""
    fresh = ~frame["stale"].astype(bool) if len(frame) else pd.Series(dtype=bool)
    if not fresh.any():
        return None
    observed = pd.to_datetime(frame.loc[fresh, "observed_at"], utc=True)
    limits = pd.to_timedelta(frame.loc[fresh, "stale_after_hours"].astype(float), unit="h")
    # stale means older than the limit: at observed + limit exactly a price is still fresh
    return (observed + limits).min().to_pydatetime() + dt.timedelta(microseconds=1)


def price_staleness(
    pricing_model: str, refresh_source: str | None, observed_at: dt.datetime, now: dt.datetime
) -> tuple[bool, float]:
    """One price's (stale, limit in hours), by the rule of ``with_staleness`` (for reports that read a
    single observation rather than the offer table, e.g. a TCO study's rent price)."""
    if (refresh_source or "") in SCHEDULED_PRICE_SOURCES:
        limit = stale_after_for(refresh_source, pricing_model)
    else:
        limit = snapshot_stale_after()
    return now - observed_at > limit, limit / dt.timedelta(hours=1)


def cheapest_in_frame(frame: pd.DataFrame) -> dict:
    """{(gpu slug, pricing model): row} of the cheapest usable on-demand and spot GPU-hour in an offer
    table, whole-instance prices preferred over GPU-only ones."""
    cheapest = {}
    if not frame.empty:
        # illustrative prices are not prices, and a spot outlier is not a price a job gets (labelled
        # and explained where the offer itself is shown)
        usable = (frame["price_quality"] != ILLUSTRATIVE) & ~frame["spot_outlier"].astype(bool)
        priced = frame[frame["price_per_gpu_hour_usd"].notna() & usable]
        for model in (PricingModel.ON_DEMAND, PricingModel.SPOT):
            subset = priced[priced["pricing_model"] == model]
            gpu_only = subset["host_priced_separately"].astype(bool)
            for part in (subset[gpu_only], subset[~gpu_only]):  # whole-instance prices overwrite GPU-only
                for row in _cheapest_per_gpu(part).itertuples():
                    cheapest[(row.gpu, model)] = row
    return cheapest


def _cheapest_per_gpu(prices: pd.DataFrame) -> pd.DataFrame:
    if prices.empty:
        return prices
    return prices.loc[prices.groupby("gpu")["price_per_gpu_hour_usd_float"].idxmin()]


__all__ = [
    "CURRENT_KEY",
    "MissingFxRate",
    "current_price_count",
    "current_price_observations",
    "offer_frame",
    "price_staleness",
    "with_staleness",
]
