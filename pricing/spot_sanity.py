"""Spot sanity: each spot quote checked against its sibling zones and its on-demand price (pandas, no ORM).

A spot quote is compared with the other zones of the same provider, instance type and region (its
siblings) and with the regional on-demand price. Two patterns in real catalogs are not prices a job
can count on (docs/cost-model.md, "Spot sanity"):

- a quote at exactly 10% of on-demand (61 AWS rows of the bundled SkyPilot snapshot): a catalog
  placeholder, not a market price;
- a quote far below its siblings *and* deeply discounted (the p6-b200 Atlanta Local Zone at 88.6% off
  while its sibling zone is at 21 $/h): a thin local market that a whole job will not get.

Such a quote is flagged ``outlier`` and ranked at a robust price: the median of its sibling zones'
quotes (placeholders left out), or the on-demand price when it has no sibling to check against
(no saving is assumed rather than guessed). A spot quote at or above on-demand saves nothing
(``no_saving``); one strictly above its own on-demand price is also an outlier (``above_on_demand``):
a spot market is never dearer than the same offer on demand, so the pair is suspect (RunPod's v7
snapshot prices 1x L40S at 0.86 spot and 0.43 on demand, likely swapped columns) and is flagged, not
trusted. AWS Local Zones (zone ids like ``use1-atl2-az1``) must be opted into before use
(``local_zone``).

Every step is a vectorized pandas/numpy expression over the whole table: no Python loop over offers.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

# gpuledger assumptions (docs/cost-model.md, "Spot sanity"), fitted on the bundled AWS snapshot: at
# these thresholds 121 spot quotes of its 2,274 AWS rows are flagged (61 placeholders + 60 thin local
# markets; 88 of them on GPU-mapped offers).
PLACEHOLDER_RATIO = 0.10  # spot / on-demand of a catalog placeholder
PLACEHOLDER_TOLERANCE = 1e-4  # the catalog rounds prices to 4 decimals
SIBLING_FRACTION = 2.0 / 3.0  # a third or more below the sibling zones' median ...
DEEP_DISCOUNT = 0.80  # ... and at least 80% below on-demand
# AWS Local Zone ids carry a metro code between the region code and the zone number (use1-atl2-az1);
# ordinary zone ids do not (use1-az6). AWS: "Local Zones are not enabled by default; opt in first".
LOCAL_ZONE_PATTERN = r"^[a-z]+[0-9]+-[a-z]+[0-9]+-az[0-9]+$"
LOCAL_ZONE_PROVIDERS = ("aws",)

SANITY_COLUMNS = (
    "on_demand_usd",  # the regional on-demand price of the same instance type (NaN if none)
    "sibling_median_usd",  # median spot quote of the other zones (placeholders left out; NaN if none)
    "spot_outlier",  # bool
    "spot_outlier_kind",  # "placeholder" | "below_siblings" | "above_on_demand" | ""
    "robust_price_usd",  # what an outlier is ranked at; the quote itself otherwise
    "spot_no_saving",  # spot at or above on-demand
    "local_zone",  # an opt-in AWS Local Zone
)


def _prices(frame: pd.DataFrame) -> np.ndarray:
    if "price_per_hour_usd_float" in frame:
        return frame["price_per_hour_usd_float"].to_numpy(dtype=float)
    values = frame["price_per_hour_usd"]
    return np.array([np.nan if v is None else float(v) for v in values], dtype=float)


def spot_sanity(frame: pd.DataFrame) -> pd.DataFrame:
    """SANITY_COLUMNS for every row of an offer table (offer_frame()'s columns), same index. Rows that
    are not spot get NaN/False/"" and their own price as the robust price."""
    price = _prices(frame)
    count = len(frame)
    spot = frame["pricing_model"].to_numpy(dtype=object) == "spot"
    group = _group_codes(frame)
    on_demand = _on_demand_per_group(frame, group, price)
    reference = on_demand[group] if count else np.zeros(0)
    ratio = np.divide(price, reference, out=np.full(count, np.nan), where=reference > 0)
    placeholder = spot & (np.abs(ratio - PLACEHOLDER_RATIO) <= PLACEHOLDER_TOLERANCE)
    market = spot & ~placeholder & np.isfinite(price)
    siblings = _leave_one_out_median(price, group, market)
    market_median = _group_median(price, group, market)
    siblings = np.where(placeholder, market_median, siblings)
    below = market & (price < SIBLING_FRACTION * siblings) & (ratio <= 1.0 - DEEP_DISCOUNT)
    above = market & (ratio > 1.0)  # NaN ratio (no on-demand) compares False
    fallback = np.where(np.isfinite(siblings), siblings, reference)
    robust = np.where((placeholder | below) & np.isfinite(fallback), fallback, price)
    outlier = placeholder | below | above  # an above-on-demand quote keeps its own (dear) price
    kind = np.where(
        placeholder, "placeholder", np.where(below, "below_siblings", np.where(above, "above_on_demand", ""))
    )
    local = _local_zones(frame)
    return pd.DataFrame(
        {
            "on_demand_usd": np.where(spot, reference, np.nan),
            "sibling_median_usd": np.where(spot, siblings, np.nan),
            "spot_outlier": outlier,
            "spot_outlier_kind": kind.astype(object),
            "robust_price_usd": robust,
            "spot_no_saving": spot & (price >= reference),
            "local_zone": local,
        },
        index=frame.index,
    )


def _codes(values: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """A text column factorized (object ndarray: hashed about twice as fast as pandas' string array)."""
    codes, names = pd.factorize(values.to_numpy(dtype=object))  # None/NaN: code -1
    return codes.astype(np.int64), np.asarray(names, dtype=object)


def _group_codes(frame: pd.DataFrame) -> np.ndarray:
    """One code per (provider, instance type, region): the siblings of a spot quote share it. Each column
    is factorized on its own and the integer codes combined, then factorized once more (no tuples)."""
    combined = np.zeros(len(frame), dtype=np.int64)
    for column in ("provider", "instance_type", "region"):
        codes, names = _codes(frame[column])
        combined = combined * (len(names) + 1) + (codes + 1)  # missing (-1) becomes its own code 0
    return pd.factorize(combined)[0].astype(np.int64)


def _local_zones(frame: pd.DataFrame) -> np.ndarray:
    """AWS Local Zone ids, matched once per distinct zone name rather than per row."""
    codes, names = _codes(frame["zone"])
    matched = pd.Series(names, dtype=object).astype(str).str.match(LOCAL_ZONE_PATTERN).to_numpy(dtype=bool)
    local = np.append(matched, False)[codes]  # code -1 (no zone) takes the trailing False
    return local & frame["provider"].isin(LOCAL_ZONE_PROVIDERS).to_numpy(dtype=bool)


def _on_demand_per_group(frame: pd.DataFrame, group: np.ndarray, price: np.ndarray) -> np.ndarray:
    """The lowest on-demand price (no payment option) per group; NaN where a group has none."""
    size = int(group.max()) + 1 if group.size else 0
    best = np.full(size, np.inf)
    model = frame["pricing_model"].to_numpy(dtype=object)
    payment = frame["payment_option"].to_numpy(dtype=object)
    mask = (model == "on_demand") & ((payment == "") | pd.isna(payment)) & np.isfinite(price)
    np.minimum.at(best, group[mask], price[mask])
    return np.where(np.isfinite(best), best, np.nan)


def _group_median(values: np.ndarray, group: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Per row: the median of ``values[mask]`` over the row's group (NaN where the group has none)."""
    size = int(group.max()) + 1 if group.size else 0
    medians = pd.Series(values[mask]).groupby(group[mask]).median()
    table = np.full(size, np.nan)
    table[medians.index.to_numpy(dtype=np.int64)] = medians.to_numpy(dtype=float)
    return table[group] if group.size else np.zeros(0)


def _leave_one_out_median(values: np.ndarray, group: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Per masked row: the median of the *other* masked rows of its group (NaN for a row alone).

    Sorted by (group, value), a row of rank r in a group of n sees the n-1 others; their median sits
    at positions (m-1)//2 and m//2 of that shorter list (m = n-1), i.e. one further on past rank r.
    """
    result = np.full(values.shape, np.nan)
    rows = np.flatnonzero(mask)
    if not rows.size:
        return result
    order = rows[np.lexsort((values[rows], group[rows]))]
    sorted_group, sorted_values = group[order], values[order]
    starts = np.flatnonzero(np.r_[True, sorted_group[1:] != sorted_group[:-1]])
    sizes = np.diff(np.r_[starts, order.size])
    start = np.repeat(starts, sizes)
    n = np.repeat(sizes, sizes)
    rank = np.arange(order.size) - start
    others = n - 1
    low, high = (others - 1) // 2, others // 2
    low = low + (low >= rank)
    high = high + (high >= rank)
    alone = others == 0
    low_at = np.where(alone, 0, start + low)
    high_at = np.where(alone, 0, start + high)
    median = (sorted_values[low_at] + sorted_values[high_at]) / 2.0
    result[order] = np.where(alone, np.nan, median)
    return result


def outlier_warning(row: dict, currency_rate: float = 1.0, currency: str = "USD") -> str:
    """The sentence a ranked outlier row carries."""
    listed = float(row["price_usd_listed"]) * currency_rate
    robust = float(row["robust_price_usd"]) * currency_rate
    on_demand = float(row["on_demand_usd"])
    off = f" ({1 - float(row['price_usd_listed']) / on_demand:.1%} below on-demand)" if on_demand > 0 else ""
    if row["spot_outlier_kind"] == "above_on_demand":
        return (
            f"outlier: spot quote {listed:.4f} {currency}/h is above this offer's on-demand price "
            f"{on_demand * currency_rate:.4f} {currency}/h; a spot market is never dearer, so the source's "
            "two prices are suspect (possibly swapped)"
        )
    if row["spot_outlier_kind"] == "placeholder":
        what = f"spot quote {listed:.4f} {currency}/h is exactly 10% of on-demand, a catalog placeholder"
    else:
        what = f"spot quote {listed:.4f} {currency}/h{off} is far below its sibling zones"
    basis = (
        "the sibling zones' median" if np.isfinite(row["sibling_median_usd"]) else "on-demand (no sibling)"
    )
    return f"outlier: {what}; ranked at {robust:.4f} {currency}/h, {basis}"
