"""Spend anomalies: a team's daily GPU spend per service against a robust baseline (numpy, no ORM; the
series' daily sums in DuckDB, review_sql.ANOMALY_DAILY).

Each day is compared with the previous WINDOW_DAYS days of the same series (team, provider, service
category), days without spend counted as 0 from the series' first day with spend on:
    baseline = median of the window; MAD = median |x − baseline|;
    anomaly when |x − baseline| > K × 1.4826 × MAD and |x − baseline| ≥ the minimum amount.
1.4826 × MAD estimates the standard deviation of normal data (Rousseeuw & Croux 1993), and K = 3.5 is
Iglewicz & Hoaglin's cut-off for the modified z-score (NIST/SEMATECH e-Handbook, section 1.3.5.17).
When MAD = 0 (more than half the window is one value, e.g. a steady reserved fleet), the scale is the
mean absolute deviation × 1.253314 instead (IBM's rule for the modified z-score); when that is 0 too
(a flat window), any departure of at least the minimum amount is an anomaly. A series is judged only
once it has MIN_BASELINE_DAYS of history, so a new team's first days are not flagged.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd
from numpy.lib.stride_tricks import sliding_window_view

from billing.storage import review_sql
from billing.storage.frame_sql import FrameSql

WINDOW_DAYS = 28
MIN_BASELINE_DAYS = 14
K = 3.5
MAD_TO_SIGMA = 1.4826
MEAN_AD_TO_SIGMA = 1.253314
MIN_AMOUNT_MICROS = 10 * 1_000_000  # 10 units of the review currency: smaller swings are noise
SERIES_KEYS = ["team", "provider", "service"]
TOP_ROWS = 5


@dataclass(frozen=True)
class Baseline:
    median: np.ndarray
    mad: np.ndarray
    scale: np.ndarray  # the robust standard deviation the deviation is measured in
    judged: np.ndarray  # enough history


def rolling_baseline(
    values: np.ndarray, window: int = WINDOW_DAYS, min_days: int = MIN_BASELINE_DAYS
) -> Baseline:
    """Day i's baseline from days [i − window, i) (fewer at the start), all days at once."""
    padded = np.concatenate([np.full(window, np.nan), values.astype(float)])
    windows = sliding_window_view(padded, window)[: len(values)]  # row i: the `window` days before day i
    judged = np.sum(~np.isnan(windows), axis=1) >= min_days
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN windows at a series' start
        median = np.nanmedian(windows, axis=1)
        deviations = np.abs(windows - median[:, None])
        mad = np.nanmedian(deviations, axis=1)
        mean_ad = np.nanmean(deviations, axis=1)
    scale = np.where(mad > 0, MAD_TO_SIGMA * mad, MEAN_AD_TO_SIGMA * mean_ad)
    return Baseline(median, mad, np.nan_to_num(scale), judged)


def flags(values: np.ndarray, *, k: float = K, min_amount: float = MIN_AMOUNT_MICROS) -> np.ndarray:
    """Which days of one dense daily series are anomalies."""
    return _hits(values, rolling_baseline(values), k, min_amount)


def _hits(values: np.ndarray, baseline: Baseline, k: float, min_amount: float) -> np.ndarray:
    deviation = np.abs(values - baseline.median)
    return baseline.judged & (deviation > k * baseline.scale) & (deviation >= min_amount)


def daily_series(rows: pd.DataFrame) -> pd.DataFrame:
    """Rows with columns `day` (datetime64 day), SERIES_KEYS and `effective_micros` -> one row per series
    and day, dense from the series' first day to the last day of the rows, 0 where nothing was spent:
    summed and filled in DuckDB (review_sql.ANOMALY_DAILY)."""
    if rows.empty:
        return pd.DataFrame(columns=[*SERIES_KEYS, "day", "effective_micros"])
    with FrameSql() as sql:
        found = sql.register("anomaly_rows", rows[[*SERIES_KEYS, "day", "effective_micros"]]).rows(
            review_sql.ANOMALY_DAILY
        )
    keys = list(zip(*found, strict=True)) if found else [()] * 5
    return pd.DataFrame(
        {
            **{name: list(keys[i]) for i, name in enumerate(SERIES_KEYS)},  # text as pandas infers it
            "day": pd.DatetimeIndex(keys[3]).as_unit(pd.DatetimeIndex(rows["day"]).unit),  # the rows' unit
            "effective_micros": np.array(keys[4], dtype=np.int64),
        }
    )


def detect(
    rows: pd.DataFrame, *, check_from, check_to, k: float = K, min_amount: int = MIN_AMOUNT_MICROS
) -> pd.DataFrame:
    """Anomalous (series, day) with day in [check_from, check_to) (dates), from `rows` that reach back
    WINDOW_DAYS before `check_from`. Columns: SERIES_KEYS, day, effective_micros, baseline_micros,
    mad_micros, scale_micros, excess_micros (x − baseline)."""
    dense = daily_series(rows)
    found = []
    begin, finish = pd.Timestamp(check_from), pd.Timestamp(check_to)
    for _, series in dense.groupby(SERIES_KEYS, sort=True, observed=True):
        values = series["effective_micros"].to_numpy(np.int64)
        baseline = rolling_baseline(values)
        deviation = values - baseline.median
        hit = _hits(values, baseline, k, min_amount)
        hit &= ((series["day"] >= begin) & (series["day"] < finish)).to_numpy()
        if hit.any():
            found.append(
                series[hit].assign(
                    baseline_micros=baseline.median[hit],
                    mad_micros=baseline.mad[hit],
                    scale_micros=baseline.scale[hit],
                    excess_micros=deviation[hit],
                )
            )
    if not found:
        return pd.DataFrame(
            columns=[
                *SERIES_KEYS,
                "day",
                "effective_micros",
                "baseline_micros",
                "mad_micros",
                "scale_micros",
                "excess_micros",
            ]
        )
    return pd.concat(found, ignore_index=True).sort_values(["day", *SERIES_KEYS], ignore_index=True)


def top_rows(rows: pd.DataFrame, anomaly, columns: list[str], count: int = TOP_ROWS) -> pd.DataFrame:
    """The rows of one anomaly's series and day with the largest cost (what drove it)."""
    mask = rows["day"] == anomaly.day
    for key in SERIES_KEYS:
        mask &= rows[key] == getattr(anomaly, key)
    return rows.loc[mask, columns].nlargest(count, "effective_micros")
