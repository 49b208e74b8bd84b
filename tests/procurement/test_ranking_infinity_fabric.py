"""AMD Infinity Fabric as a node link (issue 26 class 4, issue 32 item 3): an 8 x MI300X host whose provider
states the platform ranks on its stated rate and trains with tensor parallelism; one no page states stays
PCIe assumed, without training tensor parallelism.

Sources: AMD CDNA 3 white paper (amd.com/content/dam/amd/en/documents/instinct-tech-docs/white-papers/
amd-cdna-3-white-paper.pdf): the MI300X and MI325X "use these seven high-bandwidth and low-latency AMD
Infinity Fabric links to form a fully connected 8-GPU system", "896 GB/s peak aggregate peer-to-peer (P2P)":
7 links x 128 GB/s both ways, 64 GB/s each way per link, 448 GB/s per GPU each way. Microsoft's ND MI300X v5
page (learn.microsoft.com/en-us/azure/virtual-machines/sizes/gpu-accelerated/nd-mi300x-v5-series): "eight
AMD Instinct MI300X GPUs", "Each GPU features Infinity Fabric links for communication within the VM",
"3.2Tb/s of interconnect bandwidth per VM"."""

from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from procurement.ranking import RankingOptions, rank_workload
from procurement.ranking.interconnects import CDNA3_WHITE_PAPER, UNSTATED_SOURCE, bundled_rules, resolve
from procurement.ranking.shapes import mesh_share
from procurement.sizing import parse_workload_spec
from tests.procurement.test_ranking import GPUS, NOW, _offer
from tests.procurement.test_ranking_interconnects import FULL_7B, _rows
from tests.reference.ranking_loop import rank_workload_loop

TP4_7B = parse_workload_spec(
    {
        "name": "f7",
        "task": "full_finetune",
        "model": {"preset": "mistral-7b"},
        "training_tokens": 1e9,
        "parallelism": {"gpus": 8, "tensor_parallel": 4},
    }
)
AZURE = "Standard_ND96isr_MI300X_v5"
# illustrative prices: the links are under test
OFFERS = pd.DataFrame(
    [
        _offer("azure", AZURE, "mi300x", 8, "on_demand", 48.0, region="eastus", vcpus=96, ram=1850),
        _offer("oci", "BM.GPU.MI300X.8", "mi300x", 8, "on_demand", 48.0, region="us-chicago-1", vcpus=112),
    ]
)


def _rank(spec=FULL_7B):
    options = RankingOptions(top=None, include_infeasible=True)
    return rank_workload(spec, OFFERS, GPUS, options, now=NOW).results


def test_azure_mi300x_host_resolves_to_its_stated_infinity_fabric_and_infiniband():
    link = resolve("azure", AZURE, GPUS["mi300x"])
    assert (link.node_link, link.node_name, link.node_gbps_per_direction) == (
        "infinity_fabric",
        "Infinity Fabric, 7 x 64 GB/s each way",
        448.0,  # 7 links x 64 GB/s each way
    )
    assert (link.stated, link.scale_up, link.mesh, link.peer_to_peer, link.nvlink) == (
        True,
        True,
        True,
        True,
        False,
    )
    assert link.fabric_name == "InfiniBand 3200 Gb/s"  # 8 x 400 Gb/s, one per GPU
    assert link.source_url.startswith("https://learn.microsoft.com/")


@pytest.mark.parametrize(
    ("provider", "instance_type"),
    [("oci", "BM.GPU.MI300X.8"), ("runpod", "8x_MI300X_SECURE"), ("hotaisle", "bm-mi300x-8")],
)
def test_mi300x_hosts_no_page_states_run_over_the_oam_baseboards_infinity_fabric(provider, instance_type):
    # aud50b (stop 50): the MI300X is made only as an OAM module on AMD's 8-GPU Infinity Fabric baseboard (the
    # white paper above), so a host whose catalog states no link cannot be PCIe: the part states its link
    link = resolve(provider, instance_type, GPUS["mi300x"])
    assert (link.node_link, link.node_name, link.node_gbps_per_direction) == (
        "infinity_fabric",
        "Infinity Fabric, 7 x 64 GB/s each way",
        448.0,
    )
    assert (link.stated, link.scale_up, link.mesh, link.has_fabric) == (True, True, True, False)
    assert link.source_url == CDNA3_WHITE_PAPER


def test_a_pcie_or_ambiguous_part_no_page_states_stays_pcie_assumed():
    # H200 (an H200 NVL PCIe card exists, and vast's bare "H200" maps to the SXM slug) and the H100 PCIe keep
    # the PCIe default; B200, made only as an HGX module, takes its NVLink 5 baseboard
    assert resolve("hotaisle", "x-8", GPUS["h200-sxm-141gb"]).source_url == UNSTATED_SOURCE
    assert resolve("hotaisle", "x-8", GPUS["h100-pcie-80gb"]).node_link == "pcie"
    b200 = resolve("hotaisle", "x-8", GPUS["b200"])
    assert (b200.node_link, b200.node_gbps_per_direction, b200.stated) == ("nvlink", 900.0, True)


def test_an_8_x_mi300x_host_offers_tp_8_with_the_all_reduce_at_the_stated_rate():
    rows = _rank()
    tp8 = _rows(rows, AZURE, instances=1, plan="tensor_parallel")
    assert len(tp8) == 1 and tp8[0]["fits"]
    link = tp8[0]["interconnect"]
    assert (link["node_link"], link["node_link_type"]) == (
        "Infinity Fabric, 7 x 64 GB/s each way",
        "infinity_fabric",
    )
    carried = next(item for item in link["carried"] if item["collective"] == "TP all-reduce")
    # Hand computation, Mistral-7B full fine-tune (seq 2048, micro-batch 1, hidden 4096, 32 layers, no
    # accumulation, no full recomputation): a 16-bit activation message is 2048 x 4096 x 2 = 16,777,216 B;
    # 4 all-reduces per layer x 32 layers = 128 calls; a ring all-reduce over 8 GPUs sends 2 x 7/8 of it:
    # 128 x 1.75 x 16,777,216 = 3,758,096,384 B per GPU per step. Rate: 448 GB/s x 0.8 (nccl-tests bus
    # bandwidth) = 358.4 GB/s; 3.758096384e9 / 358.4e9 = 0.0104857 s, + 128 x 20 us latency = 0.0130457 s.
    assert carried["gb_per_step"] == pytest.approx(3.758, abs=1e-3)
    assert carried["seconds_per_step"] == pytest.approx(3.758096384e9 / 358.4e9 + 128 * 20e-6, abs=2e-6)
    assert carried["over"] == "Infinity Fabric, 7 x 64 GB/s each way"


def test_a_partial_tp_group_drives_only_its_share_of_the_mesh():
    # TP 4 of 8 on the mesh: each GPU reaches its 3 group peers over 3 of its 7 links, 3 x 64 = 192 GB/s each
    # way (x 0.8 = 153.6 GB/s); all-reduce bytes 128 x 2 x 3/4 x 16,777,216 = 3,221,225,472 B
    tp4 = [
        row for row in _rank(TP4_7B) if row["instance_type"] == AZURE and row["plan"]["tensor_parallel"] == 4
    ]
    assert tp4
    carried = next(
        item for item in tp4[0]["interconnect"]["carried"] if item["collective"] == "TP all-reduce"
    )
    assert carried["seconds_per_step"] == pytest.approx(3.221225472e9 / 153.6e9 + 128 * 20e-6, abs=2e-6)


def test_mesh_share_counts_links_and_leaves_switched_links_whole():
    share = mesh_share(
        np.array([1, 2, 4, 8, 8]), np.array([8, 8, 8, 8, 8]), np.array([True, True, True, True, False])
    )
    assert share.tolist() == pytest.approx([1 / 7, 1 / 7, 3 / 7, 1.0, 1.0])


def test_the_mi300x_host_no_page_states_trains_tp_8_over_its_baseboard_like_the_stated_one():
    # before aud50b it trained data parallel only (PCIe assumed); the OAM baseboard gives it Azure's link
    rows = _rank()
    oci, azure = (_rows(rows, t, instances=1, plan="tensor_parallel") for t in ("BM.GPU.MI300X.8", AZURE))
    assert len(oci) == 1 and oci[0]["interconnect"]["node_link_type"] == "infinity_fabric"
    assert oci[0]["hours"] == pytest.approx(azure[0]["hours"])


def test_a_two_gpu_slice_of_the_mesh_drives_one_of_its_seven_links():
    # runpod 2x / 4x_MI300X pods are slices of the 8-GPU baseboard: a pair talks over its one 64 GB/s link
    assert mesh_share(np.array([2, 4]), np.array([2, 4]), np.array([True, True])).tolist() == pytest.approx(
        [1 / 7, 3 / 7]
    )


def test_it_matches_the_per_offer_loop_on_the_mesh():
    # the scalar reference (tests/reference/ranking_loop.py) shares the mesh by the same count of links. An
    # H100 host stands in, as if its link were the mesh (a what-if rule): the loop has no measured-speed
    # ratio, which the MI300X carries (procurement/data/measured_speed.csv)
    mesh = replace(bundled_rules()[-1], provider="aws", pattern="p5.48xlarge")
    assert mesh.node_link == "infinity_fabric"
    offers = pd.DataFrame(
        [_offer("aws", "p5.48xlarge", "h100-sxm5-80gb", 8, "on_demand", 55.04, vcpus=192, ram=2048)]
    )
    # both train TP 8 over the mesh (the loop's TP gate reads Interconnect.scale_up); the partial groups'
    # shares are checked by hand above (the ranking drops partial plans slower than TP 8 here)
    options = RankingOptions(top=None, interconnect_rules=(mesh,))
    vectorized = rank_workload(FULL_7B, offers, GPUS, options, now=NOW).results
    loop = rank_workload_loop(FULL_7B, offers, GPUS, options)
    assert {r["interconnect"]["node_link_type"] for r in vectorized} == {"infinity_fabric"}
    assert "tensor_parallel" in {r["plan"]["name"] for r in vectorized}
    assert [(float(r["total_cost"]), r["hours"], r["instances"], r["plan"]["name"]) for r in vectorized] == [
        (round(total, 2), round(hours, 6), instances, plan) for total, hours, _, instances, plan in loop
    ]
