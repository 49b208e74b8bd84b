"""aarch64 hosts where the catalog knows them, and the row warning that the image loader's rate is an x86 figure
there (fixrn2, audrn's FIX LIST item 4; procurement/sizing/host_arch.py)."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from procurement.sizing.host_arch import aarch64_host, aarch64_loader_warning
from tests.procurement.outside.test_outside_image_workloads_3 import _recommend

AWS_CSV = Path(__file__).resolve().parents[3] / "pricing/data/skypilot/aws/vms.gpu.csv"


def test_every_arm64_row_of_the_bundled_aws_catalog_is_marked_and_no_other():
    """The bundled SkyPilot AWS catalog's Arch column: arm64 rows (g5g.*, T4G on Graviton2) are aarch64 hosts,
    x86_64 rows are not."""
    with AWS_CSV.open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    arm = {r["InstanceType"] for r in rows if r["Arch"] == "arm64"}
    x86 = {r["InstanceType"] for r in rows if r["Arch"] != "arm64"}
    assert arm and all(name.startswith("g5g.") for name in arm)
    assert all(aarch64_host("aws", name, "t4g") == "AWS Graviton2" for name in arm)
    assert not any(aarch64_host("aws", name, "a100-sxm4-40gb") for name in x86)


def test_grace_superchips_are_aarch64_hosts_on_any_provider():
    assert aarch64_host("lambda", "gpu_1x_gh200", "gh200-96gb") == "NVIDIA Grace"
    assert aarch64_host("nebius", "gpu-gb200", "gb200") == "NVIDIA Grace"
    assert aarch64_host("lambda", "gpu_1x_h100_sxm5", "h100-sxm5-80gb") is None
    assert aarch64_host("gcp", "g5g.xlarge", "t4") is None  # the g5g family is AWS's


def test_the_warning_names_the_host_and_the_x86_rate():
    text = aarch64_loader_warning("AWS Graviton2", 25.2)
    assert "aarch64 (AWS Graviton2)" in text and "25.2 images/s a vCPU" in text and "x86" in text


@pytest.mark.django_db
def test_imagenet_resnet50_first_row_on_graviton_warns_its_loader_rate_is_x86(bundled_catalog, tmp_path):
    """audrn's recommend: 90 ImageNet epochs of ResNet-50, AMP, batch 256. The first row, AWS g5g spot (a T4G on a
    Graviton2 host), is capped by the loader at 10 x 25.2 images/s, an x86 rate: the row says so. An x86 row of
    the same ranking does not."""
    spec = {
        "task": "full_finetune",
        "model": {"preset": "resnet-50"},
        "precision": "fp16",
        "micro_batch_size": 256,
        "parallelism": {"gpus": 1},
        "image": {"epochs": 90, "dataset_images": 1_281_167},
    }
    rows = _recommend(tmp_path, spec, top=40)
    first = rows[0]
    assert first["instance_type"].startswith("g5g.")
    assert any("aarch64 (AWS Graviton2)" in w and "25.2" in w for w in first["warnings"])
    x86 = [r for r in rows if not aarch64_host(r["provider"], r["instance_type"], r["gpu"])]
    assert x86 and not any("aarch64" in w for r in x86 for w in r["warnings"])
    # the unstated layout is nchw (fixrn2): every row states the transposes' upper bound
    assert all(any("layout NCHW" in w and "upper bound" in w for w in r["warnings"]) for r in rows)
