"""Spot price statistics per offer over a time window, computed column-wise with pandas.

A spot price holds from the moment it is observed until the next observation (AWS records only
changes), so every statistic is weighted by how long each price was in effect, not by how many
rows happened to be recorded. The price in effect when the window opens is the last one observed
before it. Statistics are floats inside the engine and Decimal (6 places) at its edge.

This module is plain Python: no ORM. ``pricing.selectors`` (or the API view) turns stored
observations into the input frame.

Input frame columns: ``series`` (usually an offer id: one zone), ``observed_at`` (tz-aware),
``price_per_hour`` (float or Decimal). Output: one row per series, columns ``STAT_COLUMNS``.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from decimal import Decimal

import numpy as np
import pandas as pd

STAT_COLUMNS = [
    "current",
    "mean",
    "median",
    "p95",
    "min",
    "max",
    "cv",
    "mean_discount",
    "share_below",
    "observations",
    "hours",
]
SECONDS_PER_HOUR = 3600.0


def spot_statistics(
    observations: pd.DataFrame,
    *,
    window_start: dt.datetime,
    window_end: dt.datetime,
    on_demand_per_hour: Mapping[object, float | Decimal] | None = None,
    below_price: float | Decimal | None = None,
) -> pd.DataFrame:
    """Time-weighted statistics per series over [window_start, window_end).

    mean_discount is 1 − mean ÷ on-demand (a fraction; NaN without an on-demand price);
    share_below is the fraction of the window the price was strictly below `below_price`.
    """
    if _utc(window_end) <= _utc(window_start):
        raise ValueError(f"window_end {window_end} must be after window_start {window_start}")
    segments = _segments(observations, window_start, window_end)
    if segments.empty:
        return pd.DataFrame(columns=STAT_COLUMNS, index=pd.Index([], name="series"))
    stats = _weighted_moments(segments)
    stats["median"] = _weighted_quantile(segments, 0.5)
    stats["p95"] = _weighted_quantile(segments, 0.95)
    stats["mean_discount"] = _mean_discount(stats, on_demand_per_hour)
    stats["share_below"] = _share_below(segments, below_price)
    return stats[STAT_COLUMNS]


def _segments(observations: pd.DataFrame, start: dt.datetime, end: dt.datetime) -> pd.DataFrame:
    """One row per (series, price period) clipped to the window, with its duration in seconds."""
    start_ts, end_ts = _utc(start), _utc(end)
    frame = pd.DataFrame(
        {
            "series": observations["series"].to_numpy(),
            "at": pd.to_datetime(observations["observed_at"], utc=True).array,
            "price": observations["price_per_hour"].astype("float64").to_numpy(),
        }
    )
    frame = frame[frame["at"] < end_ts].sort_values(["series", "at"], kind="stable")
    # Keep the window's rows plus, per series, the last price observed before the window opens.
    before = frame["at"] <= start_ts
    carried_in = frame[before].groupby("series", sort=False).tail(1).index
    frame = frame[~before | frame.index.isin(carried_in)]
    next_at = frame.groupby("series", sort=False)["at"].shift(-1)
    seg_start = frame["at"].clip(lower=start_ts)
    seconds = (next_at.fillna(end_ts) - seg_start).dt.total_seconds()
    frame = frame.assign(seconds=seconds)
    return frame[frame["seconds"] > 0]


def _weighted_moments(segments: pd.DataFrame) -> pd.DataFrame:
    weighted = segments.assign(pw=segments["price"] * segments["seconds"])
    grouped = weighted.groupby("series", sort=True)
    total = grouped["seconds"].sum()
    mean = grouped["pw"].sum() / total
    deviation = segments["price"].to_numpy() - mean.reindex(segments["series"]).to_numpy()
    variance = (weighted.assign(d2=deviation**2 * segments["seconds"].to_numpy())).groupby("series")[
        "d2"
    ].sum() / total
    return pd.DataFrame(
        {
            "current": grouped["price"].last(),
            "mean": mean,
            "min": grouped["price"].min(),
            "max": grouped["price"].max(),
            "cv": np.sqrt(variance) / mean,
            "observations": grouped["price"].size(),
            "hours": total / SECONDS_PER_HOUR,
        }
    ).rename_axis("series")


def _weighted_quantile(segments: pd.DataFrame, q: float) -> pd.Series:
    """The lowest price such that the price was at or below it for at least q of the time."""
    ordered = segments.sort_values(["series", "price"], kind="stable")
    grouped = ordered.groupby("series", sort=True)["seconds"]
    reached = grouped.cumsum() >= q * grouped.transform("sum") * (1 - 1e-12)
    return ordered[reached].groupby("series", sort=True)["price"].first()


def _mean_discount(stats: pd.DataFrame, on_demand: Mapping[object, float | Decimal] | None) -> pd.Series:
    if not on_demand:
        return pd.Series(np.nan, index=stats.index)
    reference = pd.Series({key: float(value) for key, value in on_demand.items()}, dtype="float64")
    return 1 - stats["mean"] / reference.reindex(stats.index)


def _share_below(segments: pd.DataFrame, below_price: float | Decimal | None) -> pd.Series:
    grouped_total = segments.groupby("series", sort=True)["seconds"].sum()
    if below_price is None:
        return pd.Series(np.nan, index=grouped_total.index)
    below = segments["seconds"].where(segments["price"] < float(below_price), 0.0)
    return below.groupby(segments["series"], sort=True).sum() / grouped_total


def _utc(moment: dt.datetime) -> pd.Timestamp:
    if moment.tzinfo is None:
        raise ValueError(f"{moment} has no time zone; pass an aware datetime (UTC)")
    return pd.Timestamp(moment).tz_convert("UTC")


def statistics_as_decimals(row: Mapping[str, float]) -> dict[str, Decimal | int | None]:
    """One statistics row for a report or API: prices to 6 places, fractions to 4, counts as ints."""
    places = {"cv": 4, "mean_discount": 4, "share_below": 4, "hours": 2}
    result: dict[str, Decimal | int | None] = {}
    for column in STAT_COLUMNS:
        value = row.get(column)
        if value is None or (isinstance(value, float) and np.isnan(value)):
            result[column] = None
        elif column == "observations":
            result[column] = int(value)
        else:
            result[column] = Decimal(repr(float(value))).quantize(Decimal(1).scaleb(-places.get(column, 6)))
    return result
