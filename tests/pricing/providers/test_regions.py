"""The documented region lists the bad-data rule "region" checks (pricing/providers/regions.py)."""

import csv
from pathlib import Path

import pytest

from pricing.providers.regions import KNOWN_REGIONS, region_known

SKYPILOT = Path(__file__).resolve().parents[3] / "pricing/data/skypilot"


@pytest.mark.parametrize(
    ("provider", "file"),
    [
        ("aws", "aws/vms.gpu.csv"),
        ("gcp", "gcp/vms.gpu.csv"),
        ("gcp", "gcp/vms.hosts.csv"),
        ("lambda", "lambda/vms.csv"),
    ],
)
def test_every_region_of_the_bundled_catalog_is_a_known_region(provider, file):
    with (SKYPILOT / file).open(newline="", encoding="utf-8-sig") as handle:
        regions = {row["Region"] for row in csv.DictReader(handle)}
    assert regions and regions <= KNOWN_REGIONS[provider]


def test_a_made_up_region_is_unknown_and_unlisted_providers_are_not_checked():
    assert not region_known("azure", "marsnorth") and region_known("azure", "eastus")
    assert region_known("vast", "anywhere")
