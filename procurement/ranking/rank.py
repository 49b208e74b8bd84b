"""rank_workload: every configuration of the offer table for a workload, ranked by total job cost."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd

from procurement.ranking.collapse import collapsed_order
from procurement.ranking.configurations import (
    configure,
    doubt_levels,
    infeasible_order,
    pareto_shapes,
    ranked_order,
)
from procurement.ranking.contract import instance_counts_for
from procurement.ranking.deadline import apply_deadline, cheapest_on_demand_same_shape, spot_wall_clocks
from procurement.ranking.empty import why_empty
from procurement.ranking.offers import PreparedOffers, prepare
from procurement.ranking.options import RankingOptions
from procurement.ranking.rows import NO_KNOWN_HOST_TEXT, describe
from procurement.ranking.serving import serving_options
from procurement.ranking.shapes import build_shapes
from procurement.ranking.spot_details import price_histories
from procurement.ranking.ties import Second, next_gpu_model, tie_note
from procurement.sizing import GpuSpec, WorkloadSpec


@dataclass(frozen=True)
class Ranking:
    results: list[dict[str, Any]]
    considered: int  # configurations priced
    feasible: int
    # When nothing is feasible: the top reasons, [{"reason", "count"}] (procurement/ranking/empty.py).
    why_empty: list[dict[str, Any]] = field(default_factory=list)

    def as_report(self) -> dict[str, Any]:
        return {
            "results": self.results,
            "considered": self.considered,
            "feasible": self.feasible,
            "why_empty": self.why_empty,
        }


def rank_workload(
    spec: WorkloadSpec,
    offers: pd.DataFrame | None,
    gpus: Mapping[str, GpuSpec],
    options: RankingOptions | None = None,
    *,
    now: pd.Timestamp | None = None,
    prepared: PreparedOffers | None = None,
) -> Ranking:
    """Every configuration of ``offers`` for ``spec``, ranked by total job cost (ascending).

    ``prepared`` (from ``prepare(offers, gpus, options)``) skips re-reading the offer table when many
    workloads with the same filters are ranked in a row.
    """
    options = serving_options(spec, options or RankingOptions())
    if spec.is_training and not spec.training_tokens:
        raise ValueError(
            "training_tokens: required to rank a training workload by job cost"
            + (
                " (image presets: image.train_steps, or image.epochs with image.dataset_images)"
                if spec.model.is_image
                else ""
            )
        )
    prepared = prepared or prepare(offers, gpus, options)  # ``prepare`` does not read instance_counts
    # a stated GPU count is made of every instance size the offers carry (contract.instance_counts_for)
    sizes = prepared.kinds["gpus_per_instance"].to_numpy()
    options = replace(options, instance_counts=instance_counts_for(spec, options, sizes))
    if not len(prepared.offer_kind):
        seen = len(offers) if offers is not None else len(prepared.positions)
        return Ranking(
            results=[],
            considered=0,
            feasible=0,
            why_empty=why_empty(prepared, None, None, options, spec, seen),
        )
    shapes = build_shapes(spec, prepared.grid(gpus, options.instance_counts), options)
    configs = configure(prepared, shapes, options, spec)
    configs, deadline_view = apply_deadline(configs, prepared, shapes.instances, spec, options)
    # identical rows (same offer, price, plan, cost and hours in several regions) are one row by default,
    # training too (issue 26: three identical Nebius H200 rows filled a top five)
    collapse_rows = options.collapse_identical if options.collapse_identical is not None else True
    also_in: dict[int, list[str]] = {}
    if collapse_rows:
        order, also_in = collapsed_order(configs, prepared, options.top)
        if options.include_infeasible:
            order = np.concatenate([order, infeasible_order(configs, options.top)])
    else:
        order = ranked_order(configs, options.top, options.include_infeasible)
    # the front trades cost against time for training, against throughput (more is better) for serving
    front = pareto_shapes(configs, shapes.hours if spec.is_training else -shapes.generated_tokens_per_second)
    now = pd.Timestamp(now or pd.Timestamp.now(tz="UTC")).to_pydatetime()
    simulated = _simulated_spot_rows(order, prepared, configs, options) | (
        set(deadline_view.fallback_config) & {int(i) for i in order}
    )  # a row ranked as the spot-with-fallback plan always shows that plan
    histories = price_histories(
        [prepared.row(int(configs.offer[i])).get("offer_id") for i in simulated], options
    )  # one read for every simulated row
    context = (prepared, shapes, configs, spec, options, front, now)
    on_demand = (
        on_demand_prices(offers, prepared, configs, simulated) if options.deadline_hours is not None else {}
    )
    if options.deadline_hours is not None and simulated:  # fall back on the cheapest of the same shape
        same_shape = cheapest_on_demand_same_shape(
            configs, prepared, np.array(sorted(simulated), dtype=np.int64), len(shapes.instances)
        )
        for index, od_index in same_shape.items():
            on_demand[index] = float(configs.offer_price_per_hour[configs.offer[od_index]])
        # the same instance type in the same region (read from the whole table) where no same-shape
        # on-demand row is ranked
        fallback_offers = {index: prepared.row(int(configs.offer[index])) for index in on_demand}
        fallback_offers |= {index: prepared.row(int(configs.offer[od])) for index, od in same_shape.items()}
    else:
        fallback_offers = {}
    walls = (  # every spot row's wall-clock quantiles in one vectorized simulation, handed to its row
        spot_wall_clocks(_spot_rows_to_time(order, prepared, configs), configs, prepared, spec, options)
        if spec.is_training
        else {}
    )
    rows = [
        describe(
            int(i),
            *context,
            simulate_spot=int(i) in simulated,
            price_histories=histories,
            on_demand_prices=on_demand,
            deadline_view=deadline_view,
            fallback_offers=fallback_offers,
            spot_walls=walls,
        )
        for i in order
    ]
    if collapse_rows:
        for index, row in zip(order.tolist(), rows, strict=True):
            add_also_in(row, also_in.get(int(index), []))
    _add_tie_note(rows, order, prepared, shapes, configs, spec, gpus)
    if configs.host_unknown_everywhere and rows:  # said once, not on every row (audhd, stop 52)
        rows[0]["reasons"].append(NO_KNOWN_HOST_TEXT)
    feasible = int(configs.fits.sum())
    reasons = []
    if not feasible or not any(row["fits"] for row in rows):
        everything = (
            configs
            if options.include_infeasible
            else configure(prepared, shapes, replace(options, include_infeasible=True), spec)
        )
        reasons = why_empty(prepared, shapes, everything, options, spec, len(prepared.offer_kind))
    return Ranking(results=rows, considered=configs.considered, feasible=feasible, why_empty=reasons)


def _add_tie_note(
    rows: list[dict[str, Any]], order, prepared: PreparedOffers, shapes, configs, spec, gpus
) -> None:
    """The first fitting row's lead over a like-for-like configuration on another GPU model, said where it is
    within the model's speed error (ranking/ties.py), read from every priced configuration so the top N does not
    change it."""
    first = next((n for n, row in enumerate(rows) if row["fits"] and row["total_cost"] is not None), None)
    if first is None:
        return
    config_gpu = prepared.kinds["gpu"].to_numpy()[prepared.offer_kind[configs.offer]]
    index = int(order[first])
    is_spot = prepared.columns["is_spot"][configs.offer]
    same = is_spot == is_spot[index]
    stated = spec.parallelism.stated
    if stated:  # the plan shape the spec states (exploring may rank others): like for like
        same &= (shapes.plan[configs.shape] == shapes.plan[configs.shape[index]]) & (
            shapes.tensor_parallel[configs.shape] == shapes.tensor_parallel[configs.shape[index]]
        )
        if spec.is_training and "gpus" in stated:
            same &= shapes.total_gpus[configs.shape] == shapes.total_gpus[configs.shape[index]]
    levels = doubt_levels(configs)
    chosen = next_gpu_model(
        config_gpu, configs.total_cost, configs.selected & configs.fits, index, levels, same
    )
    second = None
    if chosen is not None:
        full = ranked_order(configs, None)
        place = np.flatnonzero(full == chosen)
        offer = prepared.row(int(configs.offer[chosen]))
        instances = int(shapes.instances[configs.shape[chosen]])
        second = Second(
            gpu=str(config_gpu[chosen]),
            cost=float(configs.total_cost[chosen]),
            provider=str(offer.get("provider", "")),
            instance_type=str(offer.get("instance_type", "")),
            instances=instances,
            gpus_per_instance=int(shapes.total_gpus[configs.shape[chosen]]) // max(instances, 1),
            pricing_model="spot" if is_spot[chosen] else "on demand",
            rank=int(place[0]) + 1 if place.size else None,
        )
    note = tie_note(rows[first], float(configs.total_cost[index]), second, gpus)
    if note is not None:
        rows[first]["warnings"] = [*rows[first]["warnings"], note]


def _spot_rows_to_time(order, prepared: PreparedOffers, configs) -> list[int]:
    """The ranked rows whose wall clock is simulated (feasible spot rows with finite hours)."""
    rows = order[configs.fits[order] & prepared.columns["is_spot"][configs.offer[order]]]
    return [int(i) for i in rows if np.isfinite(configs.hours[i])]


def _simulated_spot_rows(order, prepared: PreparedOffers, configs, options: RankingOptions) -> set[int]:
    """The first ``spot_simulation_rows`` feasible spot rows of the ranking get the Monte Carlo."""
    spot = [int(i) for i in order if configs.fits[i] and prepared.columns["is_spot"][configs.offer[i]]]
    return set(spot[: options.spot_simulation_rows])


def on_demand_prices(
    offers: pd.DataFrame | None, prepared: PreparedOffers, configs, rows
) -> dict[int, float]:
    """Per spot row: the on-demand USD price of the same instance type in the same region (the deadline
    plan's fallback), read from the whole offer table (the ranked one may hold spot prices only): the
    first on-demand row, in table order, with a price. Each distinct (provider, type, region) is looked up
    once by vectorized column comparisons; only the matching rows' prices are read (the table is never
    copied: that copy, per row, cost more on 100,000 offers than the rest of the ranking)."""
    found: dict[int, float] = {}
    if offers is None or not len(rows):
        return found
    # ``prepared`` comes from ``prepare(offers, ...)`` (rank_workload's contract): its text columns are
    # the offer table's, row for row. A table of another length cannot be that one: search its own columns.
    text = prepared.text
    if len(text["instance_type"]) != len(offers):
        text = {
            name: offers[name].to_numpy(dtype=object)
            for name in ("instance_type", "pricing_model", "provider", "region")
        }
    prices: dict[tuple[str, str, str], float | None] = {}
    for index in rows:
        position = int(prepared.positions[int(configs.offer[index])])
        key = tuple(prepared.text[name][position] for name in ("provider", "instance_type", "region"))
        if key not in prices:
            prices[key] = _first_on_demand_price(offers, text, *key)
        price = prices[key]
        if price is not None:
            found[int(index)] = price
    return found


def _first_on_demand_price(offers: pd.DataFrame, text: dict, provider, instance_type, region) -> float | None:
    """One comparison over the prepared instance-type column (an object array of the whole table, no
    pandas), the other keys on its matches only, then the matches' prices."""
    same_type = np.flatnonzero(text["instance_type"] == instance_type)
    match = (
        (text["pricing_model"][same_type] == "on_demand")
        & (text["provider"][same_type] == provider)
        & (text["region"][same_type] == region)
    )
    candidates = pd.to_numeric(offers["price_per_hour_usd"].iloc[same_type[match]], errors="coerce").dropna()
    return float(candidates.iloc[0]) if len(candidates) else None


def add_also_in(row: dict[str, Any], places: list[str]) -> None:
    """``also_in`` (the other regions selling the same offer at the same price) and its reason."""
    row["also_in"] = places
    if places:
        count = len(places)
        row["reasons"].append(f"also in {count} region{'s' if count > 1 else ''}: {', '.join(places)}")
