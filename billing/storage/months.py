"""Billing months as the store partitions them: months since 1970 of a charge period start, their
'YYYY-MM' labels and bounds. In storage because the Parquet store partitions by them and the review
(billing.review.fx_months, selectors) reads them: one way, storage below review."""

from __future__ import annotations

import datetime as dt

import numpy as np
import pandas as pd


def month_codes(starts: pd.Series) -> np.ndarray:
    """Months since 1970 of each charge period start (UTC)."""
    nanos = pd.DatetimeIndex(starts).as_unit("ns").asi8.astype("datetime64[ns]")
    return nanos.astype("datetime64[M]").astype(np.int64)


def month_label(code: int) -> str:
    return f"{1970 + code // 12:04d}-{code % 12 + 1:02d}"


def month_bounds(label: str) -> tuple[dt.date, dt.date]:
    """[first day, first day of the next month) of a 'YYYY-MM' label."""
    first = dt.date.fromisoformat(f"{label}-01")
    return first, (first + dt.timedelta(days=32)).replace(day=1)


def months_between(start: dt.date, end: dt.date) -> list[str]:
    """The labels of every month [start, end) touches."""
    labels, month = [], start.replace(day=1)
    while month < end:
        labels.append(f"{month:%Y-%m}")
        month = (month + dt.timedelta(days=32)).replace(day=1)
    return labels
