"""The two GPU datasheet figures the TCO needs (TDP and list price), read from the bundled CSV.

The Django shell looks GPUs up in ``pricing.models.GpuModel``; this reader serves the engine's own
tests, the docs' worked example and any caller without a database. Prices in the CSV are USD.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path

BUNDLED_GPU_SPECS = Path(__file__).resolve().parents[2] / "pricing" / "data" / "gpu_specs.csv"


@dataclass(frozen=True)
class GpuEconomics:
    slug: str
    tdp_w: Decimal
    list_price: Decimal | None  # None where no reliable price is published
    currency: str = "USD"


def gpu_economics_from_csv(path: Path = BUNDLED_GPU_SPECS) -> dict[str, GpuEconomics]:
    with path.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    return {row["slug"]: _row_to_gpu(row) for row in rows if row.get("tdp_w")}


def _row_to_gpu(row: dict[str, str]) -> GpuEconomics:
    price = row.get("approx_list_price_usd", "").strip()
    return GpuEconomics(
        slug=row["slug"],
        tdp_w=Decimal(row["tdp_w"]),
        list_price=Decimal(price) if price else None,
    )
