"""Reads of the procurement app: the ranking engine's inputs (current offer table with spot bands, storage
rates, GPU datasheets) and the dashboard (recent change events, stored workloads, TCO studies)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from django.db.models import OuterRef, Q, Subquery

from gpuledger.accounts.teams import visible_to
from pricing.choices import StorageClass
from pricing.fx import fx_rates
from pricing.models import GpuModel, SpotAdvisory, StorageRate
from pricing.offer_table import offer_table
from pricing.selectors import offer_frame
from pricing.spot_sanity import _group_codes as place_codes  # one code per (provider, type, region)
from procurement import models
from procurement.choices import ChangeKind
from procurement.sizing import GpuSpec
from procurement.sizing.gpus import gpu_spec_from_record


def ranking_gpus() -> dict[str, GpuSpec]:
    """Datasheet figures for sizing from the GpuModel rows: the product's truth, which a person may correct
    in the admin (the bundled CSV only seeds them)."""
    return {row.slug: gpu_spec_from_record(row) for row in GpuModel.objects.all()}


def spot_bands() -> dict[tuple[str, str, str], int]:
    """Newest Spot Advisor band per (provider, region, instance type)."""
    rows = SpotAdvisory.objects.order_by("observed_at").values_list(
        "provider__slug", "region_code", "instance_type_name", "interruption_band"
    )
    return {(provider, region, instance): band for provider, region, instance, band in rows}


def ranking_offer_frame(**filters) -> pd.DataFrame:
    """pricing.selectors.offer_frame() plus ``interruption_band`` (NaN where the advisor has no data)."""
    frame = offer_frame(**filters)
    bands = spot_bands()
    keys = zip(frame["provider"], frame["region"], frame["instance_type"], strict=True)
    frame["interruption_band"] = pd.array([bands.get(key) for key in keys], dtype="Float64").astype(float)
    return frame


def ranking_offer_table() -> pd.DataFrame:
    """The offer table the ranking context caches (procurement/offer_cache.py): pricing.offer_table's fast
    read (float money, no freshness columns), plus ``interruption_band`` and ``interruption_observed_at``
    (the Spot Advisor snapshot's date), looked up once per distinct (provider, region, instance type)."""
    frame = offer_table()
    newest: dict[tuple[str, str, str], tuple[int, str]] = {}
    rows = SpotAdvisory.objects.order_by("observed_at").values_list(
        "provider__slug", "region_code", "instance_type_name", "interruption_band", "observed_at"
    )
    for provider, region, instance, band, observed_at in rows:
        newest[(provider, region, instance)] = (band, observed_at.date().isoformat())
    codes = place_codes(frame)
    _, first = np.unique(codes, return_index=True)  # one row per code, in code order
    columns = [frame[name].to_numpy(dtype=object)[first] for name in ("provider", "region", "instance_type")]
    found = [newest.get(key, (None, None)) for key in zip(*columns, strict=True)]
    bands = np.array([np.nan if band is None else float(band) for band, _ in found] + [np.nan])
    dates = np.array([date for _, date in found] + [None], dtype=object)
    frame["interruption_band"] = bands[codes]
    frame["interruption_observed_at"] = pd.Series(dates[codes], dtype=object, index=frame.index)
    return frame


def block_storage_rates_usd() -> dict[str, float]:
    """Provider -> all-region block SSD price per GB-month in USD (the disk a job's files live on)."""
    return {provider: usd for provider, (usd, _source) in block_storage_rates_with_sources().items()}


ASSUMED_RATE_PREFIX = "assumed"  # a storage rate whose source starts so is a stated default, not a price


def block_storage_rates_with_sources() -> dict[str, tuple[float, str]]:
    """Provider -> (block SSD price per GB-month in USD, its source); block SSD preferred over other classes."""
    rates = fx_rates(base="USD")
    result: dict[str, tuple[float, str]] = {}
    rows = StorageRate.objects.filter(region__isnull=True).select_related("provider")
    for row in rows.order_by("storage_class"):
        if row.currency not in rates:
            continue
        usd = row.price_per_gb_month * rates[row.currency]
        preferred = row.storage_class == StorageClass.BLOCK_SSD
        if preferred or row.provider.slug not in result:
            result[row.provider.slug] = (float(usd), row.source)
    return result


def assumed_storage_providers(rates: dict[str, tuple[float, str]] | None = None) -> frozenset[str]:
    """Providers whose storage rate is a stated default ("assumed: ..." in its source); ``rates`` from
    block_storage_rates_with_sources(), read here when not given."""
    rates = block_storage_rates_with_sources() if rates is None else rates
    return frozenset(
        provider
        for provider, (_usd, source) in rates.items()
        if source.strip().lower().startswith(ASSUMED_RATE_PREFIX)
    )


# --- Dashboard ----------------------------------------------------------------------------------------


def visible_workloads(user=None):
    """Every workload, or those `user` may see (their teams'; an admin sees all)."""
    return models.Workload.objects.all() if user is None else visible_to(models.Workload.objects, user)


def visible_studies(user=None):
    return models.TcoStudy.objects.all() if user is None else visible_to(models.TcoStudy.objects, user)


def recent_change_events(*, limit: int = 50, user=None) -> list[dict[str, Any]]:
    """The newest change events with what changed in words (before -> after) and whether the owner was told;
    with `user`, only events about workloads and studies that user may see."""
    events = models.ChangeEvent.objects.select_related("workload", "tco_study").order_by("-created_at", "-pk")
    if user is not None:
        events = events.filter(
            Q(workload__in=visible_workloads(user)) | Q(tco_study__in=visible_studies(user))
        )
    return [
        {
            "event": event,
            "subject": event.workload or event.tco_study,
            "before": change_side_text(event.kind, event.before),
            "after": change_side_text(event.kind, event.after),
        }
        for event in events[:limit]
    ]


def change_side_text(kind: str, side: dict[str, Any]) -> str:
    """One side of a change event as a short phrase (the stored JSON keeps every figure)."""
    if kind == ChangeKind.RENT_OR_BUY:
        return side.get("recommendation") or "none"
    if kind == ChangeKind.SPOT_VERDICT:
        if not side.get("spot_usable"):
            return "spot unusable"
        return "spot usable: " + option_text(side.get("cheapest_spot") or {})
    return option_text(side)


def option_text(option: dict[str, Any]) -> str:
    if not option:
        return "no feasible option"
    return (
        f"{option.get('instances')} x {option.get('provider')} {option.get('instance_type')} "
        f"{option.get('region')} {option.get('pricing_model')}: {option.get('total_cost')}"
    )


def workloads_with_latest_option(*, limit: int = 200, user=None) -> list[dict[str, Any]]:
    """Stored workloads, each with its newest recommendation's date and cheapest feasible row. Only that
    first row is read from the database (results are ranked feasible-first, cheapest first; stored on its
    own as ``first_result``, procurement/json_fields.py)."""
    newest = models.Recommendation.objects.filter(workload=OuterRef("pk")).order_by("-computed_at", "-pk")
    workloads = visible_workloads(user).annotate(latest_id=Subquery(newest.values("pk")[:1])).order_by("name")
    workloads = list(workloads[:limit])
    latest = {
        row["pk"]: row
        for row in models.Recommendation.objects.filter(
            pk__in=[w.latest_id for w in workloads if w.latest_id]
        ).values("pk", "computed_at", "first_result", "parameters")
    }
    return [_workload_row(workload, latest.get(workload.latest_id)) for workload in workloads]


def _workload_row(workload: models.Workload, latest: dict[str, Any] | None) -> dict[str, Any]:
    first = latest["first_result"] if latest else None
    cheapest = first if first and first.get("fits") else None
    return {
        "workload": workload,
        "computed_at": latest["computed_at"] if latest else None,
        "currency": (latest["parameters"] or {}).get("currency", "USD") if latest else None,
        "cheapest": cheapest,
    }


def current_tco_studies(*, limit: int = 100, user=None) -> list[models.TcoStudy]:
    """The current version of every TCO study (a recomputation links the new row to the one it replaced)."""
    return list(visible_studies(user).filter(next_version__isnull=True).order_by("-computed_at")[:limit])
