"""The SkyPilot catalog reader, on small hand-written snippets and on the bundled catalog files."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pricing.providers.records import SourceRowError
from pricing.providers.skypilot_csv import SkyPilotReadStats, read_skypilot_csv

OBSERVED_AT = dt.datetime(2025, 6, 1, tzinfo=dt.UTC)
BUNDLED = Path(__file__).resolve().parents[3] / "pricing" / "data" / "skypilot"

AWS_HEADER = "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,GpuInfo,Price,SpotPrice,Region,AvailabilityZone,Arch"
GCP_HEADER = "InstanceType,vCPUs,MemoryGiB,AcceleratorName,AcceleratorCount,GpuInfo,Region,AvailabilityZone,Price,SpotPrice"
VAST_HEADER = "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,GpuInfo,Price,SpotPrice,Region"
H100_INFO = "\"{'Gpus': [{'Name': 'H100', 'Count': 8, 'MemoryInfo': {'SizeInMiB': 81920}}], 'TotalGpuMemoryInMiB': 655360}\""


def write_catalog(tmp_path: Path, lines: list[str], *, folder: str = "aws", newline: str = "\n") -> Path:
    path = tmp_path / folder / "vms.csv"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(newline.join(lines).encode() + newline.encode())
    return path


def read(path: Path, provider: str = "aws", stats: SkyPilotReadStats | None = None):
    return list(read_skypilot_csv(path, provider=provider, observed_at=OBSERVED_AT, stats=stats))


def test_it_yields_on_demand_once_per_region_and_spot_per_zone(tmp_path):
    # Rows copied from the bundled AWS catalog's p5.48xlarge us-east-1 entries (prices as published there).
    path = write_catalog(
        tmp_path,
        [
            AWS_HEADER,
            f"p5.48xlarge,H100,8.0,192.0,2048.0,{H100_INFO},98.32,35.1234,us-east-1,use1-az4,x86_64",
            f"p5.48xlarge,H100,8.0,192.0,2048.0,{H100_INFO},98.32,36.5,us-east-1,use1-az6,x86_64",
        ],
    )
    records = read(path)
    on_demand = [r for r in records if r.pricing_model == "on_demand"]
    spot = [r for r in records if r.pricing_model == "spot"]
    assert [(r.region, r.zone, r.price_per_hour) for r in on_demand] == [("us-east-1", "", Decimal("98.32"))]
    assert [(r.zone, r.price_per_hour) for r in spot] == [
        ("use1-az4", Decimal("35.123400")),
        ("use1-az6", Decimal("36.500000")),
    ]
    instance = records[0].instance
    assert (instance.name, instance.gpu_name, instance.gpu_count) == ("p5.48xlarge", "H100", Decimal(8))
    assert (instance.vcpus, instance.memory_gib, instance.gpu_memory_gib) == (192, 2048, Decimal("80.00"))
    assert records[0].currency == "USD" and records[0].observed_at == OBSERVED_AT
    assert records[0].source == "skypilot:aws/vms.csv"
    assert records[0].location.endswith("vms.csv:2")


def test_it_names_gcp_gpu_only_rows_and_marks_the_host_as_priced_separately(tmp_path):
    # First A100 rows of the bundled GCP catalog: a GPU priced without its host VM.
    path = write_catalog(
        tmp_path,
        [
            GCP_HEADER,
            ",,,A100,1,{'Gpus': [{'MemoryInfo': {'SizeInMiB': 40960}}]},asia-northeast1,asia-northeast1-a,1.70586,1.2307",
            ",,,A100,8,{'Gpus': [{'MemoryInfo': {'SizeInMiB': 40960}}]},asia-northeast1,asia-northeast1-a,13.64686,9.8456",
        ],
        folder="gcp",
    )
    records = read(path, provider="gcp")
    names = sorted({r.instance.name for r in records})
    assert names == ["gcp-gpu-A100-x1", "gcp-gpu-A100-x8"]
    single = next(
        r for r in records if r.instance.name == "gcp-gpu-A100-x1" and r.pricing_model == "on_demand"
    )
    assert single.price_per_hour == Decimal("1.705860")
    assert single.instance.host_priced_separately is True
    assert single.instance.vcpus is None and single.instance.memory_gib is None
    assert single.instance.gpu_memory_gib == Decimal("40.00")


def test_it_skips_and_counts_tpu_and_cpu_only_rows(tmp_path):
    path = write_catalog(
        tmp_path,
        [
            GCP_HEADER,
            "n1-standard-8,8,30,,,,us-central1,us-central1-a,0.38,0.08",
            ",,,tpu-v2-8,1,tpu-v2-8,us-central1,us-central1-b,4.5,1.35",
            ",,,T4,1,{'Gpus': [{'MemoryInfo': {'SizeInMiB': 16384}}]},us-central1,us-central1-a,0.35,0.14",
        ],
        folder="gcp",
    )
    stats = SkyPilotReadStats()
    records = read(path, provider="gcp", stats=stats)
    assert {r.instance.gpu_name for r in records} == {"T4"}
    assert (stats.rows, stats.cpu_only_skipped, stats.tpu_skipped, stats.records) == (3, 1, 1, 2)


def test_it_treats_empty_and_zero_prices_as_missing_never_free(tmp_path):
    # Vast writes SpotPrice 0.00 when it has none; AWS p5e rows have an empty Price.
    vast = write_catalog(
        tmp_path,
        [
            VAST_HEADER,
            "1x-H200-32-65536,H200,1,32,64.0,\"{'Gpus': [{'Name': 'H200', 'Count': 1, 'MemoryInfo': "
            "{'SizeInMiB': 143771}}], 'TotalGpuMemoryInMiB': 143771}\",2.65,0.00,\"France, FR, EU\"",
        ],
        folder="vast",
        newline="\r\n",
    )
    aws = write_catalog(
        tmp_path,
        [AWS_HEADER, f"p5e.48xlarge,H200,8.0,192.0,2048.0,{H100_INFO},,41.5,us-east-2,use2-az1,x86_64"],
    )
    stats = SkyPilotReadStats()
    vast_records = read(vast, provider="vast", stats=stats)
    assert [(r.pricing_model, r.price_per_hour, r.region) for r in vast_records] == [
        ("on_demand", Decimal("2.65"), "France, FR, EU")
    ]
    assert stats.prices_missing == 1
    assert [(r.pricing_model, r.zone) for r in read(aws)] == [("spot", "use2-az1")]


def test_it_reads_per_gpu_memory_from_vast_totals(tmp_path):
    # Vast's 2x H200 row says 287542 MiB in the per-GPU slot: the total of two 143771 MiB cards.
    path = write_catalog(
        tmp_path,
        [
            VAST_HEADER,
            "2x-H200-32-65536,H200,2,32,64.0,\"{'Gpus': [{'Name': 'H200', 'Count': 2, 'MemoryInfo': "
            "{'SizeInMiB': 287542}}], 'TotalGpuMemoryInMiB': 287542}\",5.18,0.00,\"Michigan, US, NA\"",
        ],
        folder="vast",
    )
    (record,) = read(path, provider="vast")
    assert record.instance.gpu_memory_gib == Decimal("140.40")  # 143771 / 1024 = 140.401...
    # the 32 vCPUs / 64 GiB Vast writes on every row are a placeholder, not this host: unknown
    assert record.instance.vcpus is None and record.instance.memory_gib is None


def test_cudo_bundles_keep_their_host_figures(tmp_path):
    path = write_catalog(
        tmp_path,
        [
            "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,Price,Region,GpuInfo,SpotPrice",
            "epyc-genoa-a100-pcie_1x2v4gb,A100,1.0,2,4,1.5294,no-kristiansand-1,"
            "\"{'Gpus': [{'Name': 'A100', 'Count': '1.0', 'MemoryInfo': {'SizeInMiB': 81920}}]}\",",
        ],
        folder="cudo",
    )
    (record,) = read(path, provider="cudo")
    # a bundle is a VM of exactly that size, priced by it (1x2v4gb: 2 vCPUs, 4 GiB): known, not a placeholder
    assert (record.instance.vcpus, record.instance.memory_gib) == (2, 4)
    assert record.instance.gpu_memory_gib == Decimal("80.00")


def test_it_accepts_columns_in_any_order_and_crlf(tmp_path):
    lines = [
        "Region,Price,InstanceType,AcceleratorCount,AcceleratorName,MemoryGiB,vCPUs",
        "us-east-1,1.29,gpu_1x_a10,1,A10,200,30",
    ]
    path = write_catalog(tmp_path, lines, folder="lambda", newline="\r\n")
    (record,) = read(path, provider="lambda")
    assert (record.instance.name, record.region, record.price_per_hour) == (
        "gpu_1x_a10",
        "us-east-1",
        Decimal("1.29"),
    )
    assert record.instance.gpu_memory_gib is None


def test_it_names_a_missing_header_column(tmp_path):
    path = write_catalog(tmp_path, ["InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,Region"])
    with pytest.raises(SourceRowError) as error:
        read(path)
    assert (error.value.location, error.value.field) == (f"{path}:1", "Price")


def test_it_names_the_line_and_column_of_a_short_row(tmp_path):
    path = write_catalog(tmp_path, [AWS_HEADER, "g5.xlarge,A10G,1.0,4.0,16.0"])
    with pytest.raises(SourceRowError) as error:
        read(path)
    assert (error.value.location, error.value.field) == (f"{path}:2", "GpuInfo")


def test_it_names_the_line_and_column_of_a_non_numeric_price(tmp_path):
    path = write_catalog(
        tmp_path,
        [
            AWS_HEADER,
            "g5.xlarge,A10G,1.0,4.0,16.0,,1.006,0.4,us-east-1,use1-az1,x86_64",
            "g5.xlarge,A10G,1.0,4.0,16.0,,1.006,abc,us-east-1,use1-az2,x86_64",
        ],
    )
    with pytest.raises(SourceRowError, match="'abc' is not a number") as error:
        read(path)
    assert (error.value.location, error.value.field) == (f"{path}:3", "SpotPrice")


@pytest.mark.parametrize("cell", ["-1.0", "nan", "Infinity"])
def test_it_rejects_negative_and_non_finite_prices(tmp_path, cell):
    path = write_catalog(
        tmp_path, [AWS_HEADER, f"g5.xlarge,A10G,1.0,4.0,16.0,,{cell},,us-east-1,use1-az1,x86_64"]
    )
    with pytest.raises(SourceRowError) as error:
        read(path)
    assert error.value.field == "Price"


def test_it_rejects_an_on_demand_price_that_differs_between_zones_of_a_region(tmp_path):
    path = write_catalog(
        tmp_path,
        [
            AWS_HEADER,
            "g5.xlarge,A10G,1.0,4.0,16.0,,1.006,,us-east-1,use1-az1,x86_64",
            "g5.xlarge,A10G,1.0,4.0,16.0,,1.5,,us-east-1,use1-az2,x86_64",
        ],
    )
    with pytest.raises(SourceRowError, match="differs from 1.006000 on line 2") as error:
        read(path)
    assert (error.value.location, error.value.field) == (f"{path}:3", "Price")


def test_it_names_an_unreadable_gpu_info(tmp_path):
    path = write_catalog(
        tmp_path, [AWS_HEADER, "g5.xlarge,A10G,1.0,4.0,16.0,\"{'Gpus': [\",1.006,,us-east-1,a,x86_64"]
    )
    with pytest.raises(SourceRowError) as error:
        read(path)
    assert error.value.field == "GpuInfo"


RUNPOD_V7_HEADER = "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,GpuInfo,Region,SpotPrice,Price,AvailabilityZone"


def test_a_v7_gpu_info_naming_the_accelerator_states_no_memory_and_other_text_is_refused(tmp_path):
    # schema v7 (catalogs/v7/runpod/vms.csv line 2) writes only the accelerator's name in GpuInfo
    line = "1x_A100-80GB_SECURE,A100-80GB,1.0,8.0,80.0,{info},CA,1.19,1.64,CA-MTL-1"
    path = write_catalog(tmp_path, [RUNPOD_V7_HEADER, line.format(info="A100-80GB")], folder="runpod")
    records = read(path, provider="runpod")
    assert [(r.pricing_model, r.price_per_hour, r.zone) for r in records] == [
        ("on_demand", Decimal("1.64"), ""),
        ("spot", Decimal("1.19"), "CA-MTL-1"),
    ]
    assert records[0].instance.gpu_memory_gib is None  # not stated: the GPU model's datasheet gives it
    assert (records[0].instance.vcpus, records[0].instance.memory_gib) == (Decimal(8), Decimal(80))
    # a name that is not the row's accelerator is not a v7 GpuInfo: refused, never read as "no memory"
    path = write_catalog(tmp_path, [RUNPOD_V7_HEADER, line.format(info="A100-40GB")], folder="runpod")
    with pytest.raises(SourceRowError) as error:
        read(path, provider="runpod")
    assert error.value.field == "GpuInfo"


@given(cents=st.integers(min_value=1, max_value=10**9))
def test_it_round_trips_any_positive_six_place_price(tmp_path_factory, cents):
    price = Decimal(cents).scaleb(-6)
    path = write_catalog(
        tmp_path_factory.mktemp("prop"),
        [AWS_HEADER, f"g5.xlarge,A10G,1.0,4.0,16.0,,{price},,us-east-1,a,x86_64"],
    )
    (record,) = read(path)
    assert record.price_per_hour == price and record.price_per_hour > 0


@pytest.mark.parametrize(
    ("folder", "file_name", "rows", "tpu_skipped", "cpu_only_skipped", "on_demand", "spot"),
    [
        # rows and TPU counts as listed in pricing/data/skypilot/PROVENANCE.md (2,274 AWS rows; 2,403 GCP rows
        # of which 1,656 TPU); on-demand = distinct (instance type, region) pairs with a price.
        ("aws", "vms.gpu.csv", 2274, 0, 0, 880, 2174),
        ("gcp", "vms.gpu.csv", 2403, 1656, 0, 382, 741),
        ("lambda", "vms.csv", 408, 0, 34, 374, 0),
        ("vast", "vms.csv", 67, 0, 0, 67, 0),
        ("cudo", "vms.csv", 156, 0, 0, 156, 0),
    ],
)
def test_it_reads_every_bundled_catalog(
    folder, file_name, rows, tpu_skipped, cpu_only_skipped, on_demand, spot
):
    stats = SkyPilotReadStats()
    records = read(BUNDLED / folder / file_name, provider=folder, stats=stats)
    assert (stats.rows, stats.tpu_skipped, stats.cpu_only_skipped) == (rows, tpu_skipped, cpu_only_skipped)
    assert sum(r.pricing_model == "on_demand" for r in records) == on_demand
    assert sum(r.pricing_model == "spot" for r in records) == spot
    assert all(r.price_per_hour > 0 for r in records)


def test_it_reads_hyperstacks_gpu_info_with_json_null(tmp_path):
    # hyperstack/vms.csv line 2, as bundled: GpuInfo is a Python repr holding JSON's null
    line = (
        "n3-A100x1,A100-80G-PCIe,1,28,120.0,\"{'Gpus': [{'Name': 'A100-80G-PCIe', 'Manufacturer': null, "
        "'Count': 1, 'MemoryInfo': {'SizeInMiB': 81920}}], 'TotalGpuMemoryInMiB': 81920}\",1.35,CANADA-1,"
    )
    header = "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,GpuInfo,Price,Region,SpotPrice"
    path = write_catalog(tmp_path, [header, line], folder="hyperstack")
    stats = SkyPilotReadStats()
    (record,) = read(path, provider="hyperstack", stats=stats)
    assert (record.instance.gpu_memory_gib, record.instance.vcpus, record.instance.memory_gib) == (
        80,
        28,
        120,
    )
    assert (record.pricing_model, record.price_per_hour, stats.prices_missing) == (
        "on_demand",
        Decimal("1.35"),
        1,
    )


def test_it_reads_verdas_column_order_json_gpu_info_and_spot_only_rows(tmp_path):
    # verda/vms.csv lines 1-3, as bundled: an extra UpstreamCloudId column, JSON GpuInfo, and a spot-only row
    header = "InstanceType,UpstreamCloudId,vCPUs,MemoryGiB,AcceleratorName,AcceleratorCount,GpuInfo,Region,Price,SpotPrice"
    info = '"{""Gpus"": [{""Name"": ""B300"", ""Count"": 1, ""MemoryInfo"": {""SizeInMiB"": 268288}}], ""TotalGpuMemoryInMiB"": 268288}"'
    path = write_catalog(
        tmp_path,
        [
            header,
            f"1B300.30V,1B300.30V,30.0,275.0,B300,1.0,{info},FIN-03,6.99,2.447",
            f"2B300.60V,2B300.60V,60.0,550.0,B300,2.0,{info},FIN-03,,4.893",
        ],
        folder="verda",
        newline="\r\n",
    )
    records = read(path, provider="verda")
    assert [(r.instance.name, r.pricing_model, r.price_per_hour) for r in records] == [
        ("1B300.30V", "on_demand", Decimal("6.99")),
        ("1B300.30V", "spot", Decimal("2.447")),
        ("2B300.60V", "spot", Decimal("4.893")),  # the empty Price is no price, never a free on-demand
    ]
    assert records[0].instance.gpu_memory_gib == Decimal("262.00")  # 268288 MiB / 1024
    assert (records[0].instance.vcpus, records[0].instance.memory_gib) == (30, 275)


def test_an_instance_type_whose_rows_disagree_on_its_host_gets_the_smallest_figures_as_a_lower_bound():
    from pricing.providers.skypilot_csv import with_contradicting_hosts_at_smallest

    # hyperstack/vms.csv lines 12-13: n3-H100-SXM5x8 with 1800 GiB in CANADA-1 and 960 GiB in US-1
    records = list(read(BUNDLED / "hyperstack" / "vms.csv", provider="hyperstack"))
    fixed = with_contradicting_hosts_at_smallest(records)
    sxm = [r.instance for r in fixed if r.instance.name == "n3-H100-SXM5x8"]
    # the smallest of each figure, marked a lower bound (audhd / fix51hd: unknown demoted a host every region lists)
    assert len(sxm) == 2 and all(
        (i.vcpus, i.memory_gib, i.host_figures_lower_bound) == (192, 960, True) for i in sxm
    )
    others = [(r.instance.vcpus, r.instance.memory_gib) for r in fixed if r.instance.name == "n3-H100x8"]
    assert others == [(252, 1440)]  # rows that agree keep their figures
    assert not any(r.instance.host_figures_lower_bound for r in fixed if r.instance.name == "n3-H100x8")
    # lium/vms.csv lines 22-24: RTX4090_1x 12/63 (RO), 4/29 (RU), 24/63 (UA): vCPUs and RAM apart, RU's 4 and 29
    lium = with_contradicting_hosts_at_smallest(list(read(BUNDLED / "lium" / "vms.csv", provider="lium")))
    assert {(r.instance.vcpus, r.instance.memory_gib) for r in lium if r.instance.name == "RTX4090_1x"} == {
        (4, 29)
    }
    aws = list(read(BUNDLED / "aws" / "vms.gpu.csv"))
    assert with_contradicting_hosts_at_smallest(aws) is aws  # no AWS type contradicts itself: nothing changes


@pytest.mark.parametrize(
    ("cloud", "rows", "records", "cpu_only", "missing"),
    [("nebius", 61, 29, 40, 13), ("hyperstack", 25, 25, 0, 25), ("verda", 33, 33, 11, 11)],
)
def test_the_bundled_new_cloud_files_read_whole(cloud, rows, records, cpu_only, missing):
    # PROVENANCE.md: Nebius 61 rows (21 GPU), Hyperstack 25 (all GPU, no spot), Verda 33 (22 GPU)
    stats = SkyPilotReadStats()
    read(BUNDLED / cloud / "vms.csv", provider=cloud, stats=stats)
    assert (stats.rows, stats.records, stats.cpu_only_skipped, stats.prices_missing) == (
        rows,
        records,
        cpu_only,
        missing,
    )
