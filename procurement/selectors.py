"""Reads for the ranking engine: the current offer table with spot bands, storage rates and GPU specs."""

from __future__ import annotations

import pandas as pd

from pricing.choices import StorageClass
from pricing.fx import fx_rates
from pricing.models import SpotAdvisory, StorageRate
from pricing.selectors import offer_frame
from procurement.sizing import GpuSpec, load_bundled_gpus


def ranking_gpus() -> dict[str, GpuSpec]:
    """Datasheet figures for sizing: the bundled catalog the sizing engine reads (same as GpuModel's)."""
    return {gpu.slug: gpu for gpu in load_bundled_gpus()}


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


def block_storage_rates_usd() -> dict[str, float]:
    """Provider -> all-region block SSD price per GB-month in USD (the disk a job's files live on)."""
    rates = fx_rates(base="USD")
    result: dict[str, float] = {}
    rows = StorageRate.objects.filter(region__isnull=True).select_related("provider")
    for row in rows.order_by("storage_class"):
        if row.currency not in rates:
            continue
        usd = row.price_per_gb_month * rates[row.currency]
        preferred = row.storage_class == StorageClass.BLOCK_SSD
        if preferred or row.provider.slug not in result:
            result[row.provider.slug] = float(usd)
    return result
