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

from pricing.price_checks import AMBIGUOUS_GPU, UNREADABLE, Refusals
from pricing.providers.gpuhunt_offers import (
    GPUHUNT_PROVIDERS,
    OURS,
    GpuhuntReadStats,
    gpu_name_rules,
    gpuhunt_price_records,
)

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
        "runpod",
        "h100-sxm5-80gb",
        Decimal(8),
        Decimal(128),
        Decimal(1000),
    )
    # RunPod's GPU ID 'NVIDIA H100 80GB HBM3' settles gpuhunt's 'H100' to the SXM5 part (gpuhunt_gpu_names.csv)
    assert eight.interconnect == ""  # the link comes from procurement/data/interconnects.csv, not gpuhunt
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


def _item(**fields):
    """One item shaped like recorded_items()'s first row (a 1x H100 SXM RunPod pod), with `fields` changed."""
    return SimpleNamespace(**(vars(recorded_items()[0]) | fields))


def _read_as(provider, items):
    refusals, stats = Refusals(), GpuhuntReadStats()
    records = list(
        gpuhunt_price_records(items, provider=provider, observed_at=DAY, refusals=refusals, stats=stats)
    )
    return records, refusals


@pytest.mark.parametrize(
    ("provider", "gpu_name", "instance_name", "slug"),
    [
        # RunPod GPU IDs (docs.runpod.io/references/gpu-types): the ID names the form factor gpuhunt drops
        ("runpod", "H100", "NVIDIA H100 80GB HBM3", "h100-sxm5-80gb"),  # HBM3: the SXM5 part
        ("runpod", "H100", "NVIDIA H100 PCIe", "h100-pcie-80gb"),
        ("runpod", "H100NVL", "NVIDIA H100 NVL", "h100-nvl-94gb"),
        ("runpod", "A100", "NVIDIA A100-SXM4-80GB", "a100-sxm4-80gb"),
        ("runpod", "A100", "NVIDIA A100 80GB PCIe", "a100-pcie-80gb"),
        ("runpod", "V100", "Tesla V100-SXM2-32GB", "v100-sxm2-32gb"),
        # Crusoe instance types (docs.crusoecloud.com InfiniBand page) say SXM
        ("crusoe", "H100", "h100-80gb-sxm-ib.8x", "h100-sxm5-80gb"),
        ("crusoe", "A100", "a100-80gb-sxm-ib.8x", "a100-sxm4-80gb"),
        # Oracle's MLPerf system description: BM.GPU.H100.8 is 8x H100-SXM5-80GB
        ("oci", "H100", "BM.GPU.H100.8", "h100-sxm5-80gb"),
        # a name only one part carries is left to the alias table: gpuhunt's own name
        ("runpod", "RTX4090", "NVIDIA GeForce RTX 4090", "RTX4090"),
    ],
)
def test_an_ambiguous_gpuhunt_name_is_settled_by_the_instance_name(provider, gpu_name, instance_name, slug):
    records, refusals = _read_as(provider, [_item(gpu_name=gpu_name, instance_name=instance_name)])
    assert [r.instance.gpu_name for r in records] == [slug] and not refusals.counts


@pytest.mark.parametrize(
    ("provider", "gpu_name", "instance_name", "reason"),
    [
        (
            "runpod",
            "H100",
            "NVIDIA H100 Mystery",
            "gpuhunt names RunPod's H100 SXM and H100 PCIe both 'H100'",
        ),
        ("runpod", "V100", "Tesla V100-FHHL-16GB", "the V100 FHHL is a 150 W full-height half-length card"),
        ("crusoe", "A100", "a100-80gb.8x", "Crusoe sells the A100 80 GB as SXM and as PCIe"),
        ("oci", "A100", "BM.GPU4.8", "the form factor (SXM4 or PCIe) is not stated"),
        # no provider rule: the "*" fallback (Vultr's plan id names no form factor; gpuhunt vultr.py)
        (
            "vultr",
            "H100",
            "vbm-112c-2048gb-8-h100-gpu",
            "gpuhunt's 'H100' names the SXM5, PCIe and NVL parts",
        ),
    ],
)
def test_an_ambiguous_name_the_instance_cannot_settle_is_refused_with_its_reason(
    provider, gpu_name, instance_name, reason
):
    # another offer of the same provider, with a name one part carries, lands beside the refused row
    good = _item(gpu_name="L40S", instance_name="l40s-48gb.8x")
    records, refusals = _read_as(provider, [_item(gpu_name=gpu_name, instance_name=instance_name), good])
    assert len(records) == 1 and refusals.counts == {AMBIGUOUS_GPU: 1}
    assert reason in refusals.examples[AMBIGUOUS_GPU][0] and "item 1" in refusals.examples[AMBIGUOUS_GPU][0]


def test_every_settling_row_names_a_gpu_model_of_ours_and_every_rule_a_reason():
    with (Path(__file__).parents[3] / "pricing" / "data" / "gpu_specs.csv").open(newline="") as handle:
        slugs = {row["slug"] for row in csv.DictReader(handle)}
    rules = gpu_name_rules()
    assert rules and all(rule.reason for rule in rules)
    assert {rule.gpu_slug for rule in rules if rule.gpu_slug} <= slugs
    # each (provider, name) with settling rows ends with a refusing fallback: never a silent guess
    fallback = {rule.gpu_name for rule in rules if rule.provider == "*" and not rule.gpu_slug}
    assert fallback == {"H100", "A100", "V100", "H200"}
    for provider, name in {(rule.provider, rule.gpu_name) for rule in rules if rule.gpu_name != "H100NVL"}:
        assert any(
            not r.instance_name_contains and not r.gpu_slug
            for r in rules
            if (r.provider, r.gpu_name) == (provider, name)
        ), (provider, name)


def test_a_runpod_multi_gpu_pod_is_its_own_instance_type_and_contradicting_hosts_are_a_lower_bound():
    # gpuhunt names a RunPod pod by its GPU ID whatever the count (runpod.py instance_name=pod["id"]):
    # the 8-GPU pod becomes '8x <ID>'; other providers' names carry the count and are kept
    one = _item()
    eight = _item(gpu_count=8, cpu="128", memory="1000", price="21.52")
    other_region = _item(location="US-TX-3", cpu="24", memory="250")  # the 1x pod with another host there
    records, _ = _read_as("runpod", [one, eight, other_region])
    assert [r.instance.name for r in records] == [
        "NVIDIA H100 80GB HBM3",
        "8x NVIDIA H100 80GB HBM3",
        "NVIDIA H100 80GB HBM3",
    ]
    # the 1x pod: 16 vCPU/125 GB in CA-MTL-1 but 24/250 in US-TX-3: the smallest, a lower bound, as the SkyPilot
    # reader does
    assert [
        (r.instance.vcpus, r.instance.memory_gib, r.instance.host_figures_lower_bound) for r in records
    ] == [
        (Decimal(16), Decimal(125), True),
        (Decimal(128), Decimal(1000), False),
        (Decimal(16), Decimal(125), True),
    ]
    records, _ = _read_as("crusoe", [_item(instance_name="h100-80gb-sxm-ib.8x", gpu_count=8)])
    assert records[0].instance.name == "h100-80gb-sxm-ib.8x"
