"""Reads of the catalog and current prices, shaped for the engines and the pages.

`offer_frame()` is the one place that turns stored prices into the pandas table the ranking engine
and reports work on: one row per offer × pricing model × payment option, newest published price.
"""

from __future__ import annotations

from decimal import Decimal

import pandas as pd
from django.db.models import F, Window
from django.db.models.functions import RowNumber

from pricing.choices import PriceStatus, PricingModel
from pricing.fx import MissingFxRate, fx_rates
from pricing.models import GpuModel, PriceObservation

OFFER_FRAME_COLUMNS = [
    "observation_id", "offer_id", "provider", "provider_name", "region", "zone", "instance_type",
    "gpu", "gpu_count", "vcpus", "memory_gib", "pricing_model", "payment_option",
    "price_per_hour", "currency", "price_per_hour_usd", "price_per_gpu_hour_usd", "observed_at", "source",
]  # fmt: skip


def current_price_observations(**filters):
    """Newest published observation per offer × pricing model × payment option."""
    newest_first = Window(
        RowNumber(),
        partition_by=[F("offer_id"), F("pricing_model"), F("payment_option")],
        order_by=F("observed_at").desc(),
    )
    return (
        PriceObservation.objects.filter(status=PriceStatus.PUBLISHED, **filters)
        .annotate(recency=newest_first)
        .filter(recency=1)
    )


def offer_frame(*, gpu_mapped_only: bool = True, **filters) -> pd.DataFrame:
    """Current prices as a DataFrame (OFFER_FRAME_COLUMNS); amounts stay Decimal.

    Prices in a currency without a stored FX rate keep NaN in the USD columns rather than
    guessing a rate; callers that need USD for every row check `price_per_hour_usd.isna()`.
    """
    if gpu_mapped_only:
        filters["offer__instance_type__gpu__isnull"] = False
    rows = current_price_observations(**filters).values_list(
        "id", "offer_id", "offer__instance_type__provider__slug", "offer__instance_type__provider__name",
        "offer__region__code", "offer__zone", "offer__instance_type__name", "offer__instance_type__gpu__slug",
        "offer__instance_type__gpu_count", "offer__instance_type__vcpus", "offer__instance_type__memory_gib",
        "pricing_model", "payment_option", "amount_per_hour", "currency", "observed_at", "source",
    )  # fmt: skip
    rates = fx_rates(base="USD")
    records = []
    for (obs_id, offer_id, prov, prov_name, region, zone, itype, gpu, count, vcpus, mem,
         model, payment, amount, currency, observed_at, source) in rows:  # fmt: skip
        usd = amount * rates[currency] if currency in rates else None
        per_gpu = usd / count if usd is not None else None
        records.append((obs_id, offer_id, prov, prov_name, region, zone, itype, gpu, count, vcpus, mem,
                        model, payment, amount, currency, usd, per_gpu, observed_at, source))  # fmt: skip
    return pd.DataFrame.from_records(records, columns=OFFER_FRAME_COLUMNS)


def gpu_catalog_rows() -> list[dict]:
    """The landing page table: every GPU with its cheapest current on-demand and spot GPU-hour (USD)."""
    frame = offer_frame()
    cheapest = {}
    if not frame.empty:
        priced = frame[frame["price_per_gpu_hour_usd"].notna()]
        for model in (PricingModel.ON_DEMAND, PricingModel.SPOT):
            subset = priced[priced["pricing_model"] == model]
            if subset.empty:
                continue
            best = subset.loc[
                subset.groupby("gpu")["price_per_gpu_hour_usd"].apply(lambda s: s.astype(float).idxmin())
            ]
            for row in best.itertuples():
                cheapest[(row.gpu, model)] = row
    return [_catalog_row(gpu, cheapest) for gpu in GpuModel.objects.all()]


def _catalog_row(gpu: GpuModel, cheapest: dict) -> dict:
    on_demand = cheapest.get((gpu.slug, PricingModel.ON_DEMAND))
    spot = cheapest.get((gpu.slug, PricingModel.SPOT))
    per_gb = None
    if on_demand is not None:
        per_gb = (on_demand.price_per_gpu_hour_usd / gpu.memory_gb).quantize(Decimal("0.000001"))
    return {"gpu": gpu, "on_demand": on_demand, "spot": spot, "on_demand_per_gb": per_gb}


__all__ = ["MissingFxRate", "current_price_observations", "offer_frame", "gpu_catalog_rows"]
