"""The landing page's table: each GPU with its cheapest current on-demand and spot GPU-hour, and the
version its rendered table is cached under.

Above pricing/catalog_cheapest.py (which picks the candidates in SQL) and pricing/selectors.py (the
reads both build on): neither imports this module back.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from types import SimpleNamespace

import pandas as pd
from django.utils import timezone

from pricing.catalog_cheapest import cheapest_gpu_prices
from pricing.choices import PricingModel
from pricing.models import GpuModel
from pricing.price_cache import read_until_stale, until_stale_version
from pricing.selectors import next_staleness_change


def gpu_catalog_rows(*, now: dt.datetime | None = None, gpus=None) -> list[dict]:
    """The landing page table: every GPU (or those of ``gpus``) with its cheapest current on-demand and spot GPU-hour (USD).

    A whole-instance price is preferred: a GPU-only price (``host_priced_separately``, e.g. GCP, whose
    host VM is billed on top) would look cheaper than it is. It is shown only for a GPU that has no
    whole-instance price, and the row carries the flag so the page labels it "GPU only, host extra".
    The candidates are picked in SQL (pricing/catalog_cheapest.py): a bounded read at any catalog size.
    """
    if now is None:  # the page's read: the same answer until a price changes or turns stale
        cheapest = read_until_stale(CHEAPEST_READ, _cheapest_until_stale)
    else:
        cheapest = cheapest_gpu_prices(now=now)
    return [_catalog_row(gpu, cheapest) for gpu in (GpuModel.objects.all() if gpus is None else gpus)]


CHEAPEST_READ = "cheapest-gpu-prices"  # the landing page's read (pricing/price_cache.py)


def catalog_table_version() -> str:
    """What the landing page's rendered table of cheapest prices is keyed by: the cached read's price
    version and the moment it next changes (read, and so cached, first if it is not)."""
    version = until_stale_version(CHEAPEST_READ)
    if version is None:
        read_until_stale(CHEAPEST_READ, _cheapest_until_stale)
        version = until_stale_version(CHEAPEST_READ) or f"uncached:{timezone.now().isoformat()}"
    return version


def _cheapest_until_stale(now: dt.datetime) -> tuple[dict, dt.datetime | None]:
    cheapest = _picklable(cheapest_gpu_prices(now=now))
    rows = pd.DataFrame(
        [(row.observed_at, row.stale_after_hours, row.stale) for row in cheapest.values()],
        columns=["observed_at", "stale_after_hours", "stale"],
    )
    return cheapest, next_staleness_change(rows)


def _picklable(cheapest: dict) -> dict:
    """The rows as plain namespaces (itertuples' row class cannot be pickled into the cache); the same
    attributes, so the page reads them alike."""
    return {key: SimpleNamespace(**row._asdict()) for key, row in cheapest.items()}


def _catalog_row(gpu: GpuModel, cheapest: dict) -> dict:
    on_demand = cheapest.get((gpu.slug, PricingModel.ON_DEMAND))
    spot = cheapest.get((gpu.slug, PricingModel.SPOT))
    per_gb = None
    if on_demand is not None:
        per_gb = (on_demand.price_per_gpu_hour_usd / gpu.memory_gb).quantize(Decimal("0.000001"))
    return {"gpu": gpu, "on_demand": on_demand, "spot": spot, "on_demand_per_gb": per_gb}
