"""Issue 26, class 4: links as they are. GeForce cards since the 40 series cannot talk peer to peer over PCIe
(NVIDIA's driver disables it; tinygrad's patched kernel modules, github.com/tinygrad/open-gpu-kernel-modules,
exist to turn it back on for the RTX 4090), so their collectives are staged through host memory: each
transfer crosses PCIe twice, half the link rate. Nebius's 8-GPU B200 hosts carry 8 x ConnectX-7 InfiniBand
NDR 400 Gb/s (Nebius's MLPerf Inference v6.0 system description), so they form multi-node plans."""

import pandas as pd
import pytest

from procurement.ranking import RankingOptions, rank_workload
from procurement.ranking.interconnects import resolve
from procurement.sizing import gpu_by_slug, parse_workload_spec
from tests.procurement.test_ranking import GPUS, NOW, _offer


@pytest.mark.parametrize(
    ("gpu", "p2p", "gbps"),
    [
        ("rtx-4090", False, 16.0),  # PCIe 4.0 x16 32 GB/s per direction, host-staged: 16
        ("rtx-5090", False, 32.0),  # PCIe 5.0 x16 64 GB/s, host-staged: 32
        ("rtx-3090", True, 32.0),  # Ampere GeForce keeps peer-to-peer
        ("l40s", True, 32.0),  # a data-center PCIe card
    ],
)
def test_geforce_since_the_40_series_has_no_peer_to_peer(gpu, p2p, gbps):
    link = resolve("vast", "8x-test", gpu_by_slug(gpu))
    assert (link.node_link, link.peer_to_peer, link.node_gbps_per_direction) == ("pcie", p2p, gbps)
    assert ("without peer-to-peer" in link.node_name) is not p2p


SERVE_70B = parse_workload_spec(
    {
        "name": "s",
        "task": "inference",
        "model": {"preset": "llama-3.1-70b"},
        "inference": {"concurrency": 8, "context_len": 4096, "output_tokens": 256},
    }
)


def test_serving_split_over_consumer_cards_is_flagged_and_costed_host_staged():
    offers = pd.DataFrame(
        [
            _offer("vast", "8x-RTX_5090", "rtx-5090", 8, "on_demand", 3.2, vcpus=64, ram=512),
            _offer("vast", "8x-L40S", "l40s", 8, "on_demand", 6.0, vcpus=64, ram=512),
        ]
    )
    rows = rank_workload(SERVE_70B, offers, GPUS, RankingOptions(top=None), now=NOW).results
    geforce = next(r for r in rows if r["gpu"] == "rtx-5090" and r["plan"]["tensor_parallel"] == 8)
    assert any(
        w.startswith("tensor parallel over 8 GPUs runs over PCIe without peer-to-peer")
        for w in geforce["warnings"]
    )
    assert any(w.startswith("production serving split over 8 consumer cards") for w in geforce["warnings"])
    l40s = next(r for r in rows if r["gpu"] == "l40s" and r["plan"]["tensor_parallel"] == 8)
    assert not [w for w in l40s["warnings"] if "peer-to-peer" in w or "consumer cards" in w]


def test_nebius_b200_hosts_form_multi_node_plans_over_infiniband():
    pretrain = parse_workload_spec(
        {
            "name": "p",
            "task": "pretrain",
            "model": {"preset": "llama-3.1-8b"},
            "training_tokens": 1e10,
            "parallelism": {"gpus": 16},
        }
    )
    offers = pd.DataFrame(
        [
            _offer(
                "nebius",
                "gpu-b200-sxm_8gpu-160vcpu-1792gb",
                "b200",
                8,
                "on_demand",
                44.0,
                vcpus=160,
                ram=1792,
            ),
        ]
    )
    rows = rank_workload(pretrain, offers, GPUS, RankingOptions(top=None), now=NOW).results
    assert rows and all(r["instances"] == 2 and r["gpus"] == 16 and r["fits"] for r in rows)
    assert any("InfiniBand 3200 Gb/s between instances" in " ".join(r["reasons"]) for r in rows)


def test_the_vectorized_link_lookup_is_the_rule_tables_answer_for_every_offer():
    # issue 26 "Speed": offer-table preparation groups offers by (provider, instance type, GPU), matches each
    # group's rule once and resolves each (rule, GPU) pair once; every offer must still get what ``resolve``
    # gives it alone, including an offer without an instance type and a repeated group
    from procurement.ranking import prepare

    offers = pd.DataFrame(
        [
            _offer("nebius", "gpu-b200-sxm_8gpu-160vcpu-1792gb", "b200", 8, "on_demand", 44.0),
            _offer("vast", "8x-RTX_5090", "rtx-5090", 8, "on_demand", 3.2),
            _offer("aws", "p5.48xlarge", "h100-sxm5-80gb", 8, "on_demand", 55.04),
            _offer("vast", "8x-RTX_4090", "rtx-4090", 8, "on_demand", 2.6),
            _offer("aws", "p5.48xlarge", "h100-sxm5-80gb", 8, "spot", 30.0, band=1),
            _offer("vast", "", "rtx-3090", 2, "on_demand", 0.4),
        ]
    )
    prepared = prepare(offers, GPUS, RankingOptions())
    assert len(prepared.positions) == len(offers)
    for index, position in enumerate(prepared.positions):
        row = offers.iloc[int(position)]
        link = prepared.links[int(prepared.kinds["link"][prepared.offer_kind[index]])]
        assert link == resolve(row["provider"], row["instance_type"], GPUS[row["gpu"]])
    assert len(set(prepared.links)) == len(prepared.links)  # each distinct link once
