"""The NVLink domain's size comes from the part (sizing/gpus.py nvlink_domain_gpus): a GB200 NVL72 rack joins 72
GPUs on NVLink 5 (1,800 GB/s a GPU, NVIDIA's GB200 NVL72 page), an HGX/DGX host 8 (aud43m, issue 26 item 4)."""

from __future__ import annotations

import pytest

from procurement.ranking.interconnects import resolve
from procurement.sizing.accelerators import rack_scale
from procurement.sizing.gpus import (
    collective_bandwidth_gbps,
    gpu_by_slug,
    hierarchical_links,
    nvlink_domain_gpus,
    tensor_parallel_over_nvlink,
)

GB200, H100, B200 = gpu_by_slug("gb200"), gpu_by_slug("h100-sxm5-80gb"), gpu_by_slug("b200")


def test_it_reads_the_domain_from_the_datasheet_interconnect():
    assert nvlink_domain_gpus("NVLink 5 (NVL72 NVLink Switch); NVLink-C2C to Grace") == 72
    assert nvlink_domain_gpus("NVLink 4.0 (NVSwitch)") == 8
    assert nvlink_domain_gpus("") == 8
    assert (GB200.nvlink_domain_gpus, H100.nvlink_domain_gpus, B200.nvlink_domain_gpus) == (72, 8, 8)


def test_it_prices_a_64_gpu_group_on_gb200_at_nvlink_and_on_hgx_at_the_fabric():
    # 1,800 GB/s bidirectional: 900 a direction x 0.8 collective efficiency = 720 GB/s; H100 beyond 8: 400 Gb/s x 0.8
    assert collective_bandwidth_gbps(GB200, 64) == pytest.approx(720.0)
    assert collective_bandwidth_gbps(GB200, 72) == pytest.approx(720.0)
    assert collective_bandwidth_gbps(GB200, 144) == pytest.approx(40.0)
    assert collective_bandwidth_gbps(H100, 16) == pytest.approx(40.0)
    assert tensor_parallel_over_nvlink(GB200, 16)


def test_it_makes_the_hierarchical_node_the_domain():
    assert hierarchical_links(GB200, 256) == {
        "gpus_per_node": 72.0,
        "interconnect_gbps": 720.0,
        "fabric_gbps": 40.0,
    }
    assert hierarchical_links(GB200, 16)["gpus_per_node"] == 16.0
    assert hierarchical_links(B200, 256) == {
        "gpus_per_node": 8.0,
        "interconnect_gbps": 720.0,
        "fabric_gbps": 40.0,
    }


def test_rack_scale_reads_the_same_domain():
    assert rack_scale(GB200) and not rack_scale(B200) and not rack_scale(H100)


def test_oci_gb200_trays_are_on_nvlink_not_pcie_assumed():
    # Was PCIe assumed (no rule named BM.GPU.GB200.4); Oracle's GPU memory fabric page states NVLink 72 hosts
    link = resolve("oci", "BM.GPU.GB200.4", GB200)
    assert (link.node_link, link.node_gbps_per_direction, link.stated, link.has_fabric) == (
        "nvlink",
        900.0,
        True,
        False,
    )
