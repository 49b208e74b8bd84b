"""Identical rows collapse: the same instance type at the same price and plan in several regions is one row.

A serving ranking otherwise fills its top 20 with one cheap instance type listed in six regions, and a
training ranking its top five with one Nebius H200 node in three (issue 26). The first (cheapest, then
catalog order) of each group is kept and says where else the same offer is sold: ``also_in`` (the other
regions, with their zone when the offer is zonal) and a reason "also in 5 regions". Rows join a group only
when their total cost and hours are the same to the cent and the microsecond-hour (and, for spot, the
advisor band, which sets the interruptions), so a region that costs more in all (its storage, a spot band)
keeps its own row and no cheaper row is ever folded into a dearer one.
"""

from __future__ import annotations

import math

import numpy as np

from procurement.ranking.configurations import Configurations, ranked_order
from procurement.ranking.offers import PreparedOffers

KEY_COLUMNS = ("provider", "instance_type", "pricing_model", "payment_option", "commitment_kind")


def _place(prepared: PreparedOffers, position: int) -> str:
    region, zone = prepared.text["region"][position], prepared.text["zone"][position]
    return f"{region}/{zone}" if zone else str(region)


def collapse(order: np.ndarray, prepared: PreparedOffers, configs: Configurations) -> tuple[list[int], dict]:
    """(kept row indices in order, kept index -> the other places of its group)."""
    kept: list[int] = []
    groups: dict[tuple, int] = {}
    also: dict[int, list[str]] = {}
    offers = configs.offer[order]
    # the row figures as Python numbers in one pass each (a numpy scalar per row and figure cost more than
    # the rest of the collapse); ``round`` is Python's on each, as before
    columns = zip(
        order.tolist(),
        offers.tolist(),
        configs.shape[order].tolist(),
        configs.total_cost[order].tolist(),
        configs.hours[order].tolist(),
        strict=True,
    )
    for index, offer, shape, cost, hours in columns:
        key = (
            _offer_key(prepared, offer),
            shape,
            round(cost, 2) if math.isfinite(cost) else None,  # total cost to the cent
            round(hours, 6) if math.isfinite(hours) else None,
        )
        if key in groups:
            first = groups[key]
            place = _place(prepared, int(prepared.positions[offer]))
            if place not in also[first]:
                also[first].append(place)
            continue
        groups[key] = index
        also[index] = []
        kept.append(index)
    return kept, also


def _offer_key(prepared: PreparedOffers, offer: int) -> tuple:
    """What a person compares of the offer itself: KEY_COLUMNS, the ranked USD price (to 1e-6) and a spot
    offer's advisor band (-1 for any other); built once per offer of the prepared table."""
    memo = prepared._collapse_keys
    key = memo.get(offer)
    if key is None:
        position = int(prepared.positions[offer])
        columns = prepared.columns
        band = int(columns["band"][offer]) if bool(columns["is_spot"][offer]) else -1
        key = memo[offer] = (
            *(prepared.text[name][position] for name in KEY_COLUMNS),
            round(float(columns["price_usd"][offer]), 6),
            band,
        )
    return key


def collapsed_order(
    configs: Configurations, prepared: PreparedOffers, top: int | None
) -> tuple[np.ndarray, dict]:
    """The feasible order with identical rows collapsed, ``top`` groups long: reads four times as many rows
    as asked for, and more only when duplicates filled them."""
    if top is None:
        kept, also = collapse(ranked_order(configs, None), prepared, configs)
    else:
        wide = top * 4
        while True:
            order = ranked_order(configs, wide)
            kept, also = collapse(order, prepared, configs)
            if len(kept) >= top or order.size < wide:
                break
            wide *= 4
        kept = kept[:top]
    return np.array(kept, dtype=np.int64), {index: also[index] for index in kept}
