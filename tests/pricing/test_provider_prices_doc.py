"""The example in docs/provider-prices.md imports into a freshly loaded catalog, and the name-mapping rules
the doc states hold: slugs always, aliases per provider, a few global aliases, mapping added in the admin."""

from __future__ import annotations

import re
from decimal import Decimal
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from pricing.catalog import catalog_load
from pricing.models import GpuAlias, GpuModel, InstanceType, PriceObservation, Provider, UnmappedGpuName

pytestmark = pytest.mark.django_db

DOC = Path(__file__).resolve().parents[2] / "docs" / "provider-prices.md"
HEADER = "provider,region,instance_type,gpu_model,gpu_count,vcpus,memory_gib,pricing_model,price_per_hour,currency,observed_at"


def doc_example() -> str:
    """The ```csv block under '### Example' in the doc."""
    section = DOC.read_text(encoding="utf-8").split("### Example", 1)[1]
    match = re.search(r"```csv\n(.*?)```", section, re.DOTALL)
    assert match, "docs/provider-prices.md: no ```csv block under '### Example'"
    return match.group(1)


def run(path: Path) -> str:
    out = StringIO()
    call_command("import_prices", str(path), stdout=out)
    return out.getvalue()


def test_the_documented_example_imports_into_a_fresh_catalog_with_every_name_mapped(
    bundled_catalog, tmp_path
):
    example = doc_example()
    assert example.splitlines()[0] == HEADER
    path = tmp_path / "prices.csv"
    path.write_text(example)
    output = run(path)
    rows = len(example.splitlines()) - 1
    assert f"{path}: {rows} inserted, 0 unchanged, 0 rejected\n" in output
    assert "unmapped" not in output
    names = {line.split(",")[2] for line in example.splitlines()[1:]}
    types = InstanceType.objects.filter(name__in=names)
    assert types.count() == len(names) and not types.filter(gpu__isnull=True).exists()
    assert not UnmappedGpuName.objects.filter(
        provider__slug__in=["autodl", "examplecloud", "internal"]
    ).exists()
    # H100-SXM (a global alias) is the SXM5 part; the second AutoDL row names RTX4090, the first the slug.
    assert types.get(name="h100-sxm-x8").gpu.slug == "h100-sxm5-80gb"
    assert set(types.filter(provider__slug="autodl").values_list("gpu__slug", flat=True)) == {"rtx-4090"}
    assert f"{path}: 0 inserted, {rows} unchanged, 0 rejected\n" in run(path)


def test_the_documented_eur_message_is_the_one_the_import_gives(bundled_catalog, tmp_path):
    lines = doc_example().splitlines()
    lines[-1] = lines[-1].replace(",USD,", ",EUR,")
    path = tmp_path / "prices.csv"
    path.write_text("\n".join(lines) + "\n")
    documented = (
        f"{path.name}:6: column 'currency': unknown currency 'EUR': no FX rate for it (accepted: CNY, USD)"
    )
    assert documented.split(":", 1)[1] in DOC.read_text(encoding="utf-8")
    with pytest.raises(CommandError, match=re.escape(documented)):
        run(path)
    assert not PriceObservation.objects.filter(offer__instance_type__provider__slug="examplecloud").exists()


def test_an_alias_of_one_provider_does_not_map_another_providers_name(bundled_catalog, tmp_path):
    # Cudo's "A100" alias is pattern-bound, AutoDL's "A100-80GB" is the PCIe card: neither is global.
    path = tmp_path / "prices.csv"
    path.write_text(f"{HEADER}\nnewcloud,r1,a100-x1,A100-80GB,1,8,64,on_demand,1.20,USD,2025-06-01\n")
    assert "unmapped accelerator newcloud:A100-80GB (1 instance types)" in run(path)
    assert InstanceType.objects.get(provider__slug="newcloud").gpu is None


def test_an_alias_added_in_the_admin_maps_the_name_on_the_next_import(bundled_catalog, tmp_path):
    path = tmp_path / "prices.csv"
    path.write_text(f"{HEADER}\nnewcloud,r1,a100-x1,A100-80GB,1,8,64,on_demand,1.20,USD,2025-06-01\n")
    run(path)
    assert UnmappedGpuName.objects.filter(provider__slug="newcloud", name="A100-80GB").exists()
    GpuAlias.objects.create(  # what the admin's "GPU aliases → Add" form saves
        provider=Provider.objects.get(slug="newcloud"),
        alias="A100-80GB",
        gpu=GpuModel.objects.get(slug="a100-sxm4-80gb"),
        note="newcloud docs: SXM4 80 GB",
    )
    assert f"{path}: 0 inserted, 1 unchanged, 0 rejected\n" in run(path)
    assert InstanceType.objects.get(provider__slug="newcloud").gpu.slug == "a100-sxm4-80gb"
    assert not UnmappedGpuName.objects.filter(provider__slug="newcloud").exists()
    assert PriceObservation.objects.get(
        offer__instance_type__provider__slug="newcloud"
    ).amount_per_hour == Decimal("1.20")


def test_global_aliases_load_once_and_a_second_load_changes_nothing(bundled_catalog):
    # pricing/data/gpu_aliases.csv: 7 rows with an empty provider column.
    assert set(GpuAlias.objects.filter(provider__isnull=True).values_list("alias", flat=True)) == {
        "H100-SXM",
        "H100-PCIE",
        "RTX3090",
        "RTX4090",
        "RTX5090",
        "RTXA6000",
        "RTX6000-Ada",
    }
    assert bundled_catalog.changes["gpu_aliases"].created == GpuAlias.objects.count()
    again = catalog_load()
    assert again.changes["gpu_aliases"].changed == 0 and again.total_changes == 0
