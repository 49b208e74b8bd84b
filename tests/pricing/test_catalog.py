"""The bundled catalog: real datasheets and prices, idempotent loading, all-or-nothing on bad files."""

import shutil
from decimal import Decimal
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from pricing.catalog import DATA_DIR, CatalogError, catalog_load
from pricing.choices import PricingModel
from pricing.models import GpuModel, InstanceType, Offer, PriceObservation, UnmappedGpuName
from procurement.models import ModelArchitecture

pytestmark = pytest.mark.django_db


def test_it_loads_all_37_datasheet_gpus_and_14_architectures(bundled_catalog):
    # 29 from /work/shared/data/gpu_specs.csv + A40, A800 80GB PCIe, GH200 96GB, V100 PCIe 16GB (SOURCES.md);
    # 33 -> 37: 4 GeForce 12 / 16 GB cards added
    assert GpuModel.objects.count() == 37
    assert ModelArchitecture.objects.count() == 14
    h100 = GpuModel.objects.get(slug="h100-sxm5-80gb")
    # NVIDIA H100 datasheet (gpu_specs.csv source_url): 80 GB HBM3, 3.35 TB/s, 989.5 dense BF16 TFLOPS (1979 sparse halved), 700 W.
    assert (h100.memory_gb, h100.memory_bandwidth_gbps, h100.tdp_w) == (Decimal(80), Decimal(3350), 700)
    assert h100.bf16_tflops == Decimal("989.5")
    assert GpuModel.objects.get(slug="a10g").tdp_w is None  # no public datasheet: missing, not 0


def test_it_maps_provider_names_and_reports_unmapped_ones(bundled_catalog):
    # SkyPilot's aws p5 rows name the GPU "H100": the H100 SXM5 part (AWS p5 docs).
    p5 = InstanceType.objects.get(provider__slug="aws", name="p5.48xlarge")
    assert (p5.gpu.slug, p5.gpu_count) == ("h100-sxm5-80gb", 8)
    # Lambda uses one name for two parts; the instance name decides.
    assert (
        InstanceType.objects.get(provider__slug="lambda", name="gpu_1x_h100_pcie").gpu.slug
        == "h100-pcie-80gb"
    )
    assert (
        InstanceType.objects.get(provider__slug="lambda", name="gpu_8x_h100_sxm5").gpu.slug
        == "h100-sxm5-80gb"
    )
    unmapped = set(UnmappedGpuName.objects.values_list("provider__slug", "name"))
    assert ("aws", "Trainium2") in unmapped
    assert ("cudo", "A100") not in unmapped
    # GH200, A800, A40 and the Cudo/Vast V100 rows are mapped (pricing/data/gpu_aliases.csv)
    for provider, name in [
        ("lambda", "GH200"),
        ("cudo", "A800"),
        ("cudo", "A40"),
        ("vast", "A40"),
        ("cudo", "V100"),
        ("vast", "V100"),
    ]:
        assert (provider, name) not in unmapped
    assert InstanceType.objects.get(provider__slug="lambda", name="gpu_1x_gh200").gpu.slug == "gh200-96gb"
    assert InstanceType.objects.get(provider__slug="vast", name="8x-Tesla_V100-32-65536").gpu.slug == (
        "v100-pcie-16gb"
    )
    assert bundled_catalog.prices.unmapped_gpu_names["aws:Inferentia2"] > 0


def test_it_never_stores_an_empty_or_zero_price_as_free(bundled_catalog):
    assert not PriceObservation.objects.filter(amount_per_hour__lte=0).exists()
    # Vast writes SpotPrice 0.00 for "no spot price": no Vast spot observation may exist.
    assert not PriceObservation.objects.filter(
        offer__region__provider__slug="vast", pricing_model="spot"
    ).exists()
    # p5e rows have no on-demand price in the SkyPilot snapshot (shared/STACK.md).
    assert not PriceObservation.objects.filter(
        offer__instance_type__name="p5e.48xlarge", pricing_model=PricingModel.ON_DEMAND
    ).exists()


def test_it_keeps_the_real_catalog_price_of_a_known_row(bundled_catalog):
    # pricing/data/skypilot/lambda/vms.csv: gpu_1x_a10,A10,1.0,30.0,200.0,1.29,europe-central-1 (USD/h).
    row = PriceObservation.objects.filter(
        offer__instance_type__name="gpu_1x_a10",
        offer__region__code="europe-central-1",
        pricing_model=PricingModel.ON_DEMAND,
    ).first()
    assert row is not None and row.currency == "USD"
    assert row.amount_per_hour == Decimal("1.290000")
    assert row.source and row.observed_at.year == 2026


def test_it_loads_a_cny_priced_provider(bundled_catalog):
    prices = PriceObservation.objects.filter(offer__instance_type__provider__slug="autodl")
    assert prices.filter(currency="CNY").count() == 6
    rtx = prices.get(offer__instance_type__name="rtx4090-1x", offer__region__code="cn-beijing-b")
    assert rtx.amount_per_hour == Decimal("1.980000")


def test_it_changes_nothing_on_a_second_load(bundled_catalog):
    counts = (PriceObservation.objects.count(), Offer.objects.count(), InstanceType.objects.count())
    report = catalog_load()
    assert report.total_changes == 0
    assert (PriceObservation.objects.count(), Offer.objects.count(), InstanceType.objects.count()) == counts


def test_the_command_says_zero_changes_on_rerun(bundled_catalog):
    out = StringIO()
    call_command("load_catalog", stdout=out, stderr=StringIO())
    assert "0 changes" in out.getvalue()


@pytest.fixture
def broken_data_dir(tmp_path):
    target = tmp_path / "data"
    shutil.copytree(DATA_DIR, target)
    return target


def _break_line(path, line_number, transform):
    lines = path.read_text().splitlines(keepends=True)
    lines[line_number - 1] = transform(lines[line_number - 1])
    path.write_text("".join(lines))


def test_a_non_numeric_price_is_refused_naming_file_line_and_column_and_the_rest_loads(
    bundled_catalog, broken_data_dir
):
    """Issue 32, class 1 (outside review): one bad cell of a snapshot refuses its row, never the catalog."""
    lambda_csv = broken_data_dir / "skypilot" / "lambda" / "vms.csv"
    _break_line(lambda_csv, 75, lambda line: line.replace(",4.36,", ",abc,"))
    assert ",abc," in lambda_csv.read_text().splitlines()[74]  # the fixture really broke a price cell
    report = catalog_load(data_dir=broken_data_dir)
    # 1 broken Lambda cell + the 15 GPU rows of the bundled Seeweb snapshot that have no Region
    assert report.price_refusals.counts["unreadable"] == 16
    example = report.price_refusals.examples["unreadable"][0]  # Lambda is read before Seeweb
    assert "lambda/vms.csv:75" in example and "'Price'" in example
    assert report.prices.seen > 0  # the other rows of the Lambda file and every other file landed


def test_a_short_row_and_a_bad_currency_are_reported(db, broken_data_dir):
    _break_line(broken_data_dir / "gpu_specs.csv", 3, lambda line: "v100-sxm2-16gb,NVIDIA V100\n")
    with pytest.raises(CatalogError, match=r"gpu_specs.csv:3: column 'vendor'"):
        catalog_load(data_dir=broken_data_dir)
    assert GpuModel.objects.count() == 0  # the providers loaded before the bad row were rolled back too


def test_an_unknown_currency_is_rejected_naming_it(db, broken_data_dir):
    path = broken_data_dir / "providers" / "autodl_cny.csv"
    _break_line(path, 2, lambda line: line.replace(",CNY,", ",XYZ,"))
    with pytest.raises(CatalogError, match="XYZ"):
        catalog_load(data_dir=broken_data_dir)
    assert GpuModel.objects.count() == 0


def test_the_command_exits_with_the_error_and_nothing_changed(db, broken_data_dir, monkeypatch):
    _break_line(broken_data_dir / "fx_rates.csv", 2, lambda line: line.replace("0.13986", "-1"))
    monkeypatch.setattr("pricing.catalog.DATA_DIR", broken_data_dir)
    monkeypatch.setattr(
        "pricing.management.commands.load_catalog.catalog_load",
        lambda progress: catalog_load(data_dir=broken_data_dir, progress=progress),
    )
    with pytest.raises(CommandError, match=r"fx_rates.csv:2: column 'rate'.*\n.*Nothing was changed"):
        call_command("load_catalog", stdout=StringIO(), stderr=StringIO())
    assert GpuModel.objects.count() == 0
