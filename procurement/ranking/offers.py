"""The offer table reduced to numpy columns once, and reused by every workload ranked against it."""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import numpy as np
import pandas as pd

from pricing.price_quality import ILLUSTRATIVE, OBSERVED, price_qualities
from pricing.spot_sanity import spot_sanity
from procurement.ranking.interconnects import Interconnect, bundled_rules, resolve
from procurement.ranking.options import UNKNOWN_SPOT_BAND, RankingOptions
from procurement.ranking.shapes import ShapeGrid, shape_grid
from procurement.sizing import GpuSpec

EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)


def _kinds(
    gpu_codes: np.ndarray, gpu_names: np.ndarray, per_instance: np.ndarray, links: np.ndarray
) -> tuple[pd.DataFrame, np.ndarray]:
    """Unique (gpu, GPUs per instance, interconnect) triples, sorted, and each offer's index into them (a
    hash factorization, then a sort of the few unique keys only: no sort over every offer)."""
    pair = gpu_codes.astype(np.int64) * 1_000_000 + per_instance
    codes, keys = pd.factorize(pair * 10_000 + links.astype(np.int64))
    order = np.argsort(keys)
    rank = np.empty_like(order)
    rank[order] = np.arange(order.size)
    keys = keys[order]
    pair, link = keys // 10_000, keys % 10_000
    kinds = pd.DataFrame(
        {
            "gpu": np.asarray(gpu_names, dtype=object)[pair // 1_000_000],
            "gpus_per_instance": pair % 1_000_000,
            "link": link,
        }
    )
    return kinds, rank[codes]


@lru_cache(maxsize=65536)
def _rule_index(provider: str, instance_type: str, rules) -> int:
    """The first interconnect rule matching (provider, instance type), -1 for none: the glob matching that was
    most of the preparation (issue 26, "Speed"), memoized on plain strings across prepared tables."""
    table = bundled_rules() if rules is None else rules
    return next((i for i, rule in enumerate(table) if rule.matches(provider, instance_type)), -1)


def _interconnects(
    text: dict[str, _Codes], keep: np.ndarray, gpus: Mapping[str, GpuSpec], options: RankingOptions
) -> tuple[np.ndarray, list[Interconnect]]:
    """Each kept offer's index into the distinct interconnects (procurement/ranking/interconnects.py). Column
    operations throughout: offers are grouped by (provider, instance type, GPU) codes, each group takes its
    matching rule, and ``resolve`` runs once per distinct (rule, GPU) pair, not per offer or per group."""
    fields = ("provider", "instance_type", "gpu")
    sizes = [np.int64(text[name].names.size + 1) for name in fields]
    key = np.zeros(keep.size, dtype=np.int64)
    for name, size in zip(fields, sizes, strict=True):
        key = key * size + (text[name].codes[keep] + 1)
    group_of_offer, groups = pd.factorize(key)
    parts, value = [], np.asarray(groups, dtype=np.int64)
    for size in reversed(sizes):
        parts.append(value % size - 1)  # -1: missing, which indexes the trailing "" below
        value = value // size
    gpu_code, type_code, provider_code = parts
    providers = np.append(text["provider"].names, "")[provider_code]
    instance_types = np.append(text["instance_type"].names, "")[type_code]
    rules = options.interconnect_rules
    rule = np.fromiter(
        (_rule_index(str(p), str(t), rules) for p, t in zip(providers, instance_types, strict=True)),
        dtype=np.int64,
        count=groups.size,
    )
    _, first_group, pair_of_group = np.unique(
        rule * sizes[2] + gpu_code, return_index=True, return_inverse=True
    )
    order = np.argsort(first_group, kind="stable")  # pairs in first-appearance order, as offers meet them
    table = bundled_rules() if rules is None else rules
    links: list[Interconnect] = []
    ids: dict[Interconnect, int] = {}
    link_of_pair = np.empty(first_group.size, dtype=np.int64)
    for pair in order.tolist():
        group = int(first_group[pair])
        matched = (table[rule[group]],) if rule[group] >= 0 else ()
        link = resolve(
            str(providers[group]),
            str(instance_types[group]),
            gpus[text["gpu"].names[gpu_code[group]]],
            matched,
        )
        link_of_pair[pair] = ids.setdefault(link, len(ids))
        if link_of_pair[pair] == len(links):
            links.append(link)
    return link_of_pair[pair_of_group.reshape(-1)][group_of_offer], links


def _floats(values: pd.Series) -> np.ndarray:
    """Decimal/None object columns to float64 (NaN for missing) without pandas' slow generic parser."""
    if values.dtype.kind == "f":
        return values.to_numpy(dtype=float)
    return np.fromiter((math.nan if v is None else float(v) for v in values), dtype=float, count=len(values))


def _float_column(offers: pd.DataFrame, name: str) -> np.ndarray:
    """A numeric column as float64: offer_frame()'s ``<name>_float`` copy when present (converted once per
    read of the catalog), else converted here."""
    copy = f"{name}_float"
    return offers[copy].to_numpy(dtype=float) if copy in offers else _floats(offers[name])


DESCRIBE_COLUMNS = (
    "observed_at",
    "observation_id",
    "gpu_per_instance",
    "band",
    "band_known",
    "vcpus",
    "memory_gib",
    "stale",
    "scheduled",
    "stale_after_hours",
    "gpu_only",
    "host_lower_bound",
)
# Spot sanity and price quality (pricing/spot_sanity.py, pricing/price_quality.py), read for returned rows.
SANITY_DESCRIBE_COLUMNS = (
    "price_usd_listed",
    "on_demand_usd",
    "sibling_median_usd",
    "spot_outlier",
    "spot_outlier_kind",
    "robust_price_usd",
    "spot_no_saving",
    "local_zone",
    "price_quality",
    "storage_rate",
    "storage_rate_assumed",
)
TEXT_COLUMNS = ("provider", "instance_type", "region", "zone", "gpu", "pricing_model", "payment_option")
# Optional object columns, read only for returned rows; None where the table lacks them.
# interruption_observed_at: the Spot Advisor snapshot's date of the band; offer_id: the stored offer, whose
# spot price history the Monte Carlo resamples (spot_details).
# commitment_kind: which commitment product a reserved or savings-plan row is (pricing.choices.CommitmentKind).
OPTIONAL_TEXT_COLUMNS = ("interruption_observed_at", "offer_id", "commitment_kind")


@dataclass(frozen=True)
class PreparedOffers:
    """The offer table reduced to what ranking reads, as numpy columns; reusable across workloads that
    share the filters (a recompute chunk prepares it once). Text columns are read from the offer table
    only for the rows that are returned."""

    kinds: pd.DataFrame  # unique (gpu, gpus_per_instance, link)
    offer_kind: np.ndarray  # each offer's index into kinds
    links: list[Interconnect]  # kinds["link"] indexes this
    columns: dict[str, np.ndarray]
    text: dict[str, TextColumn | np.ndarray]  # TEXT_COLUMNS (+ optional ones) of the whole offer table
    positions: np.ndarray  # each offer's row position in ``text``
    _grids: dict[tuple, ShapeGrid] = field(default_factory=dict, compare=False, repr=False)
    _observed: dict[int, dt.datetime] = field(default_factory=dict, compare=False, repr=False)
    _observed_texts: dict[int, str] = field(default_factory=dict, compare=False, repr=False)
    _rows: dict[int, dict[str, Any]] = field(default_factory=dict, compare=False, repr=False)
    # per (checkpoint timing, instance counts): each offer's spot-effective price (ranking/configurations.py)
    _effective: dict[tuple, np.ndarray] = field(default_factory=dict, compare=False, repr=False)
    # per distinct set of what decides which configurations are priced: those configurations
    # (ranking/configurations.py, ``_priced_cells``)
    _cells: dict[tuple, Any] = field(default_factory=dict, compare=False, repr=False)
    # per offer: what rows of one group share (ranking/collapse.py, ``_offer_key``)
    _collapse_keys: dict[int, tuple] = field(default_factory=dict, compare=False, repr=False)

    def observed_at(self, index: int) -> dt.datetime:
        """The offer's price timestamp (aware, UTC); memoized, as the same cheap offers top most rankings."""
        if index not in self._observed:
            micros = int(self.columns["observed_at"][index].astype("datetime64[us]").astype(np.int64))
            self._observed[index] = EPOCH + dt.timedelta(microseconds=micros)
        return self._observed[index]

    def observed_text(self, index: int) -> str:
        """``observed_at(index).isoformat()``, memoized with it (every returned row shows it)."""
        if index not in self._observed_texts:
            self._observed_texts[index] = self.observed_at(index).isoformat()
        return self._observed_texts[index]

    def grid(self, gpus: Mapping[str, GpuSpec], instance_counts: Sequence[int]) -> ShapeGrid:
        """The shape grid for these instance counts, built on first use and kept for the next workload."""
        key = (tuple(instance_counts), id(gpus))
        if key not in self._grids:
            self._grids[key] = shape_grid(self.kinds, gpus, instance_counts, self.links)
        return self._grids[key]

    def row(self, index: int) -> dict[str, Any]:
        """The offer's columns as a new dict (callers add to it); read once per offer, as the same cheap
        offers top most rankings of a recompute."""
        if index not in self._rows:
            row = {name: self.columns[name][index] for name in DESCRIBE_COLUMNS + SANITY_DESCRIBE_COLUMNS}
            position = int(self.positions[index])
            texts = {name: self.text[name][position] for name in TEXT_COLUMNS + OPTIONAL_TEXT_COLUMNS}
            self._rows[index] = row | texts
        return dict(self._rows[index])


@dataclass(frozen=True)
class _Codes:
    """A text column factorized once: ``codes`` index ``names`` (-1 where missing)."""

    codes: np.ndarray
    names: np.ndarray

    @classmethod
    def of(cls, values: pd.Series) -> _Codes:
        # the column as stored: pandas factorizes its Arrow-backed str columns without building Python
        # strings per offer (issue 26, "Speed"); names keep their first-appearance order either way
        codes, names = pd.factorize(values)
        return cls(np.asarray(codes, dtype=np.int64), np.asarray(names.to_numpy(dtype=object), dtype=object))

    def isin(self, allowed) -> np.ndarray:
        return np.append(np.isin(self.names, list(allowed)), False)[self.codes]


class TextColumn:
    """A text column read by position without converting every offer to a Python object: the distinct
    values once, each offer's code into them. ``column[i]`` and ``column[positions]`` give what
    ``series.to_numpy(dtype=object)`` would at those positions (a column with missing values keeps that
    object array, so its missing markers stay exactly as pandas gives them)."""

    __slots__ = ("_codes", "_values")

    def __init__(self, codes: np.ndarray, values: np.ndarray):
        self._codes, self._values = codes, values

    @classmethod
    def of(cls, values: pd.Series, codes: _Codes | None = None) -> TextColumn:
        codes = codes or _Codes.of(values)
        if (codes.codes < 0).any():
            return cls(np.arange(len(values)), values.to_numpy(dtype=object))
        return cls(codes.codes, codes.names)

    def __getitem__(self, index):
        return self._values[self._codes[index]]

    def __eq__(self, value) -> np.ndarray:  # type: ignore[override]
        """Per offer: equal to ``value``? (as an object array's ``==``: compared once per distinct value)"""
        return np.asarray(self._values == value, dtype=bool)[self._codes]

    __hash__ = None  # type: ignore[assignment]  # compares per offer, like an array

    def __len__(self) -> int:
        return self._codes.size


def _rankable(
    offers: pd.DataFrame, text: dict[str, _Codes], gpus, options: RankingOptions, quality: np.ndarray
) -> np.ndarray:
    """Positions of offers that can be ranked: known GPU, whole GPUs, a USD price, requested model, filters;
    illustrative prices only when the request asks for them."""
    per_instance = _float_column(offers, "gpu_count")
    mask = text["gpu"].isin(gpus) & text["pricing_model"].isin(options.pricing_models)
    if not options.include_illustrative:
        mask &= quality != ILLUSTRATIVE
    mask &= ~np.isnan(_float_column(offers, "price_per_hour_usd"))
    mask &= (per_instance >= 1) & (per_instance == np.floor(per_instance))
    if options.providers:
        mask &= text["provider"].isin(options.providers)
    if options.regions:
        mask &= offers["region"].isin(list(options.regions)).to_numpy(dtype=bool)
    if options.gpus:
        mask &= text["gpu"].isin(options.gpus)
    return np.flatnonzero(mask)


def _utc_datetimes(values: pd.Series) -> np.ndarray:
    """Timestamps as naive UTC datetime64[ns] (a no-op conversion when offer_frame() typed them already)."""
    if isinstance(values.dtype, pd.DatetimeTZDtype):  # offer_frame()'s column: its UTC instants as they are
        return values.array.tz_convert(None).to_numpy().astype("datetime64[ns]")
    stamps = pd.to_datetime(values, utc=True)
    return stamps.dt.tz_localize(None).to_numpy(dtype="datetime64[ns]")


CODED_COLUMNS = ("gpu", "pricing_model", "provider", "instance_type")


def offer_columns(
    offers: pd.DataFrame,
    gpus: Mapping[str, GpuSpec],
    options: RankingOptions,
    text: dict[str, _Codes] | None = None,
) -> dict:
    """The rankable offers as numpy columns, in catalog order: DESCRIBE_COLUMNS, the priced ones, the GPU
    model as codes into ``gpu_names``, and ``position`` (the row in ``offers``). ``text``: CODED_COLUMNS
    already factorized (``prepare`` shares them with its text columns)."""
    text = text or {name: _Codes.of(offers[name]) for name in CODED_COLUMNS}
    quality = offer_price_qualities(offers)
    keep = _rankable(offers, text, gpus, options, quality)
    columns: dict[str, Any] = {
        "position": keep,
        "gpu_code": text["gpu"].codes[keep],
        "gpu_names": text["gpu"].names,
    }
    columns["observation_id"] = offers["observation_id"].to_numpy()[keep]
    columns["observed_at"] = _utc_datetimes(offers["observed_at"])[keep]
    columns["gpu_per_instance"] = _float_column(offers, "gpu_count")[keep].astype(np.int64)
    is_spot = text["pricing_model"].isin(("spot",))[keep]
    columns |= _spot_sanity_columns(offers, keep, options, is_spot)
    columns["price_quality"] = quality[keep]
    columns["link"], columns["link_table"] = _interconnects(text, keep, gpus, options)
    # GeForce cards (GpuSpec.is_consumer): a serving replica split over several of them is ordered as a doubt
    consumer = np.array([gpus[name].is_consumer if name in gpus else False for name in columns["gpu_names"]])
    columns["consumer"] = consumer[columns["gpu_code"]] if consumer.size else np.zeros(keep.size, dtype=bool)
    columns["vcpus"] = _float_column(offers, "vcpus")[keep]
    columns["memory_gib"] = _float_column(offers, "memory_gib")[keep]
    band = (
        offers["interruption_band"].to_numpy(dtype=float)[keep]
        if "interruption_band" in offers
        else np.full(keep.size, np.nan)
    )
    columns["band_known"] = ~np.isnan(band)
    columns["band"] = np.where(np.isnan(band), UNKNOWN_SPOT_BAND, band).astype(np.int64)
    columns["is_spot"] = is_spot
    columns["gpu_only"] = (
        offers["host_priced_separately"].to_numpy(dtype=bool)[keep]
        if "host_priced_separately" in offers
        else np.zeros(keep.size, dtype=bool)
    )
    # vCPUs / RAM the smallest the source lists for the type across regions (pricing/providers/skypilot_csv.py
    # with_contradicting_hosts_at_smallest): checked like any known host, the row says it is a lower bound
    columns["host_lower_bound"] = (
        offers["host_figures_lower_bound"].to_numpy(dtype=bool)[keep]
        if "host_figures_lower_bound" in offers
        else np.zeros(keep.size, dtype=bool)
    )
    provider = text["provider"]
    columns["storage_rate"] = _storage_rates(provider.codes[keep], provider.names, options)
    columns["storage_rate_assumed"] = _storage_assumed(provider.codes[keep], provider.names, options)
    columns |= _freshness(offers, keep)
    return columns


def _storage_rates(codes: np.ndarray, providers, options: RankingOptions) -> np.ndarray:
    """Per offer: its provider's storage rate (USD/GB-month); a provider without one is priced at the
    stated assumed default (docs/cost-model.md, "Storage"), never at zero."""
    rates, default = options.storage_rate_per_gb_month, options.assumed_storage_rate_per_gb_month
    per_provider = np.array([float(rates.get(name, default)) for name in providers] + [default])
    return per_provider[codes]  # code -1 (no provider) takes the trailing default


def _storage_assumed(codes: np.ndarray, providers, options: RankingOptions) -> np.ndarray:
    """Per offer: is its storage rate an assumed default rather than the provider's published rate?"""
    rates, assumed = options.storage_rate_per_gb_month, options.storage_rate_assumed
    per_provider = np.array([name not in rates or name in assumed for name in providers] + [True])
    return per_provider[codes]


def offer_price_qualities(offers: pd.DataFrame) -> np.ndarray:
    """Each offer's price quality: offer_frame()'s column, else read from its source, else "observed"
    (a synthetic table without sources)."""
    if "price_quality" in offers:
        return offers["price_quality"].to_numpy(dtype=object)
    if "source" in offers:
        return price_qualities(offers["source"])
    return np.full(len(offers), OBSERVED, dtype=object)


def _spot_sanity_columns(
    offers: pd.DataFrame, keep: np.ndarray, options: RankingOptions, is_spot: np.ndarray
) -> dict:
    """The listed price, the spot sanity figures, and ``price_usd``: the price ranked, which is the robust
    price for a flagged outlier unless the request ranks outliers at their quote."""
    sanity = offers if "spot_outlier" in offers else spot_sanity(offers)
    listed = _float_column(offers, "price_per_hour_usd")[keep]
    columns = {
        "price_usd_listed": listed,
        "on_demand_usd": sanity["on_demand_usd"].to_numpy(dtype=float)[keep],
        "sibling_median_usd": sanity["sibling_median_usd"].to_numpy(dtype=float)[keep],
        "spot_outlier": sanity["spot_outlier"].to_numpy(dtype=bool)[keep],
        "spot_outlier_kind": TextColumn.of(sanity["spot_outlier_kind"])[keep],
        "robust_price_usd": sanity["robust_price_usd"].to_numpy(dtype=float)[keep],
        "spot_no_saving": sanity["spot_no_saving"].to_numpy(dtype=bool)[keep],
        "local_zone": sanity["local_zone"].to_numpy(dtype=bool)[keep],
    }
    robust = columns["spot_outlier"] & ~options.rank_outliers_at_quote
    columns["price_usd"] = np.where(robust, columns["robust_price_usd"], listed)
    # spot that saves nothing at the price ranked (NaN on-demand compares False: not judged)
    columns["spot_no_saving"] = columns["spot_no_saving"] | (
        is_spot & (columns["price_usd"] >= columns["on_demand_usd"])
    )
    return columns


def _freshness(offers: pd.DataFrame, keep: np.ndarray) -> dict[str, np.ndarray]:
    """offer_frame()'s stale flags; a table without them (engine tests, synthetic catalogs) is not stale."""
    if "stale" not in offers:
        return {
            "stale": np.zeros(keep.size, dtype=bool),
            "scheduled": np.zeros(keep.size, dtype=bool),
            "stale_after_hours": np.full(keep.size, np.nan),
        }
    return {
        "stale": offers["stale"].to_numpy(dtype=bool)[keep],
        "scheduled": offers["scheduled"].to_numpy(dtype=bool)[keep],
        "stale_after_hours": offers["stale_after_hours"].to_numpy(dtype=float)[keep],
    }


def prepare_offers(
    offers: pd.DataFrame, gpus: Mapping[str, GpuSpec], options: RankingOptions
) -> pd.DataFrame:
    """The rankable offers as a DataFrame (the per-offer loop reads it row by row)."""
    columns = offer_columns(offers, gpus, options)
    positions = columns.pop("position")
    del columns["gpu_code"], columns["gpu_names"]
    links = columns.pop("link_table")
    columns["interconnect"] = np.array([links[i] for i in columns.pop("link")], dtype=object)
    columns["observed_at"] = pd.to_datetime(columns["observed_at"]).tz_localize("UTC")
    text = {name: offers[name].to_numpy(dtype=object)[positions] for name in TEXT_COLUMNS}
    text |= {name: _optional_text(offers, name)[positions] for name in OPTIONAL_TEXT_COLUMNS}
    return pd.DataFrame(text | columns)


def _optional_text(offers: pd.DataFrame, name: str) -> np.ndarray:
    if name in offers:
        return offers[name].to_numpy(dtype=object)
    return np.full(len(offers), None, dtype=object)


def prepare(offers: pd.DataFrame, gpus: Mapping[str, GpuSpec], options: RankingOptions) -> PreparedOffers:
    codes = {name: _Codes.of(offers[name]) for name in TEXT_COLUMNS}
    columns = offer_columns(offers, gpus, options, {name: codes[name] for name in CODED_COLUMNS})
    links = columns.pop("link_table")
    kinds, offer_kind = _kinds(
        columns["gpu_code"], columns["gpu_names"], columns["gpu_per_instance"], columns["link"]
    )
    # text columns stay codes: only the returned rows' values are ever read (PreparedOffers.row)
    text: dict[str, TextColumn | np.ndarray] = {
        name: TextColumn.of(offers[name], codes[name]) for name in TEXT_COLUMNS
    }
    text |= {
        name: TextColumn.of(offers[name]) if name in offers else np.full(len(offers), None, dtype=object)
        for name in OPTIONAL_TEXT_COLUMNS
    }
    return PreparedOffers(
        kinds=kinds,
        offer_kind=np.asarray(offer_kind, dtype=np.int64),
        links=links,
        columns=columns,
        text=text,
        positions=columns["position"],
    )
