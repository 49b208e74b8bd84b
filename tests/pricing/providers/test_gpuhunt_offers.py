"""gpuhunt items into price records, on recorded items in gpuhunt's own catalog format (its v2 CSV columns,
gpuhunt/_internal/storage.py CATALOG_V2_FIELDS). No public snapshot of gpuhunt's RunPod catalog was found:
the rows of recorded/gpuhunt_runpod.csv were written by hand in that format (prices set by hand, shaped
like RunPod's list), so the figures below check the reading, not the market."""

from __future__ import annotations

import csv
import datetime as dt
from decimal import Decimal
from pathlib import Path
from types import SimpleNamespace

import pytest

from pricing.price_checks import UNREADABLE, Refusals
from pricing.providers.gpuhunt_offers import GPUHUNT_PROVIDERS, OURS, GpuhuntReadStats, gpuhunt_price_records

RECORDED = Path(__file__).parent / "recorded" / "gpuhunt_runpod.csv"
DAY = dt.datetime(2026, 12, 4, tzinfo=dt.UTC)


def recorded_items(path: Path = RECORDED) -> list[SimpleNamespace]:
    """The rows as gpuhunt's CatalogItem carries them (attribute names of the v2 columns)."""
    with path.open(newline="") as handle:
        return [
            SimpleNamespace(**{**row, "spot": row["spot"] == "True", "gpu_count": int(row["gpu_count"])})
            for row in csv.DictReader(handle)
        ]


def read(items):
    refusals, stats = Refusals(), GpuhuntReadStats()
    records = list(
        gpuhunt_price_records(items, provider="runpod", observed_at=DAY, refusals=refusals, stats=stats)
    )
    return records, refusals, stats


def test_it_reads_on_demand_and_spot_prices_with_host_specs():
    records, refusals, stats = read(recorded_items())
    got = [(r.instance.name, r.region, r.pricing_model, r.price_per_hour) for r in records]
    assert got == [
        ("NVIDIA H100 80GB HBM3", "CA-MTL-1", "on_demand", Decimal("2.690000")),
        ("NVIDIA H100 80GB HBM3", "CA-MTL-1", "spot", Decimal("1.750000")),
        ("8x NVIDIA H100 80GB HBM3", "EU-RO-1", "on_demand", Decimal("21.520000")),
        ("NVIDIA GeForce RTX 4090", "EU-RO-1", "on_demand", Decimal("0.690000")),
    ]
    eight = records[2].instance
    assert (eight.provider, eight.gpu_name, eight.gpu_count, eight.vcpus, eight.memory_gib) == (
        "runpod", "H100", Decimal(8), Decimal(128), Decimal(1000))  # fmt: skip
    assert eight.interconnect == ""  # gpuhunt does not say: unknown, never assumed NVLink
    assert {r.source for r in records} == {"gpuhunt:runpod"} and {r.zone for r in records} == {""}
    assert stats.skipped_reasons == {"no GPU": 1}  # the CPU-only cpu3c-2-4
    assert refusals.counts == {UNREADABLE: 1}  # the A40 row priced "abc": refused, the rest lands
    assert "gpuhunt:runpod item 6: price 'abc' is not a number" in refusals.examples[UNREADABLE][0]


@pytest.mark.parametrize("bad", [{"instance_name": ""}, {"location": ""}, {"gpu_count": -1}])
def test_a_row_without_name_location_or_with_a_negative_gpu_count_is_refused(bad):
    item = vars(recorded_items()[0]) | bad
    records, refusals, _ = read([SimpleNamespace(**item)])
    assert records == [] and refusals.counts == {UNREADABLE: 1}


def test_providers_with_a_module_of_ours_are_never_read_through_gpuhunt():
    assert not set(GPUHUNT_PROVIDERS) & set(OURS)
    assert {
        "oci",
        "runpod",
        "vultr",
        "crusoe",
        "digitalocean",
        "cloudrift",
        "hotaisle",
        "jarvislabs",
        "seeweb",
    } <= set(GPUHUNT_PROVIDERS)
