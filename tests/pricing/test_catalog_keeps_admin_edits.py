"""`load_catalog` at a deploy keeps the GPU datasheets and storage rates an admin edited (as it keeps FX
rates), and two different bundled rows for one GPU or one storage rate are an error naming both lines."""

from __future__ import annotations

from decimal import Decimal
from io import StringIO

import pytest
from django.core.management import call_command
from django.forms.models import model_to_dict

from pricing.catalog import DATA_DIR, CatalogError, _load_gpu_models, _load_storage_rates
from pricing.models import GpuModel, Provider, StorageRate

pytestmark = pytest.mark.django_db


def _load_catalog() -> str:
    out = StringIO()
    call_command("load_catalog", stdout=out)
    return out.getvalue()


def test_a_deploy_keeps_a_storage_rate_and_a_datasheet_an_admin_edited(admin_client):
    _load_catalog()
    rate = StorageRate.objects.get(provider__slug="aws", storage_class="block_ssd", region=None)
    form = model_to_dict(rate) | {"price_per_gb_month": "0.095000", "source": "our negotiated EBS rate"}
    form = {k: ("" if v is None else v) for k, v in form.items() if k != "observed_at"}
    form |= {"observed_at_0": rate.observed_at.date().isoformat(), "observed_at_1": "00:00:00"}
    response = admin_client.post(f"/admin/pricing/storagerate/{rate.pk}/change/", form)
    assert response.status_code == 302, response.content[:2000]
    rate.refresh_from_db()
    assert rate.edited_at is not None and rate.price_per_gb_month == Decimal("0.095")

    # a datasheet correction (the ORM edit the admin's save_model makes; its form is tested below)
    gpu = GpuModel.objects.get(slug="h100-sxm5-80gb")
    gpu.memory_bandwidth_gbps, gpu.notes = Decimal("3352"), "measured by us"
    gpu.save()
    GpuModel.objects.filter(pk=gpu.pk).update(edited_at=rate.edited_at)
    untouched = GpuModel.objects.get(slug="a100-sxm4-80gb")
    untouched.memory_bandwidth_gbps = Decimal("1")  # changed without the admin: the bundle puts it back
    untouched.save()

    _load_catalog()  # the next deploy

    rate.refresh_from_db()
    assert (rate.price_per_gb_month, rate.source) == (Decimal("0.095"), "our negotiated EBS rate")
    gpu.refresh_from_db()
    assert (gpu.memory_bandwidth_gbps, gpu.notes) == (Decimal("3352"), "measured by us")
    untouched.refresh_from_db()
    assert untouched.memory_bandwidth_gbps == Decimal("2039")  # NVIDIA A100 datasheet, 80 GB SXM4
    other = StorageRate.objects.get(provider__slug="aws", storage_class="object", region=None)
    assert other.edited_at is None and other.price_per_gb_month == Decimal("0.023")


def test_saving_a_datasheet_in_the_admin_marks_it_edited(admin_client):
    _load_gpu_models(DATA_DIR / "gpu_specs.csv")
    gpu = GpuModel.objects.get(slug="t4")
    form = {k: ("" if v is None else v) for k, v in model_to_dict(gpu).items()}
    form |= {"ecc": "true" if gpu.ecc else "false" if gpu.ecc is False else "unknown", "tdp_w": "75"}
    response = admin_client.post(f"/admin/pricing/gpumodel/{gpu.pk}/change/", form)
    assert response.status_code == 302, response.content[:3000]
    gpu.refresh_from_db()
    assert gpu.tdp_w == 75 and gpu.edited_at is not None
    count = _load_gpu_models(DATA_DIR / "gpu_specs.csv")
    gpu.refresh_from_db()
    assert gpu.tdp_w == 75
    assert count.changed == 0 and count.unchanged == GpuModel.objects.count()


def _storage_file(tmp_path, *rows: str):
    path = tmp_path / "storage_rates.csv"
    header = "provider,region,storage_class,price_per_gb_month,currency,observed_at,source\n"
    path.write_text(header + "".join(f"{row}\n" for row in rows))
    return path


def test_two_different_bundled_storage_rates_for_one_class_are_an_error(tmp_path):
    Provider.objects.create(slug="aws", name="AWS", kind="cloud", default_currency="USD")
    path = _storage_file(
        tmp_path,
        "aws,,object,0.023,USD,2026-11-30T00:00:00Z,s3",
        "aws,,object,0.023,USD,2026-11-30T00:00:00Z,s3",  # a repeat is harmless
        "aws,,object,0.030,USD,2026-11-30T00:00:00Z,s3",
    )
    with pytest.raises(CatalogError) as caught:
        _load_storage_rates(path)
    assert str(caught.value) == (
        f"{path}:4: column 'price_per_gb_month': Decimal('0.030') contradicts Decimal('0.023') for the same"
        " provider_id, storage_class, region_id at line 2"
    )
    assert not StorageRate.objects.exists()


def test_two_different_bundled_datasheets_for_one_slug_are_an_error(tmp_path):
    lines = (DATA_DIR / "gpu_specs.csv").read_text().splitlines()
    t4 = next(line for line in lines if line.startswith("t4,"))
    path = tmp_path / "gpu_specs.csv"
    path.write_text("\n".join([lines[0], t4, t4.replace(",70,", ",75,", 1)]) + "\n")
    with pytest.raises(CatalogError) as caught:
        _load_gpu_models(path)
    assert str(caught.value) == f"{path}:3: column 'tdp_w': 75 contradicts 70 for the same slug at line 2"
    assert not GpuModel.objects.exists()
