"""Issue 26, stop 48 (accel48): is Gaudi 2's in-box all-to-all mesh the cause of the Llama 3.1 8B at 8k miss?

Intel's Gaudi 2 Megatron-DeepSpeed fp8 rows (test_outside_recommendations.py GAUDI2_INTEL_RUNS and
GAUDI2_INTEL_RUNS_1_19) run Llama 3.1 8B on TP 4, Llama 3.1 70B on TP 8 and Llama 2 13B on TP 2 (HabanaAI/
Megatron-DeepSpeed @891d6db README.md: HL_TP=4 / 8 / 2; scripts/run_llama.sh: SEQ_PARALLEL 1, no TP overlap flag),
and the engine leaves every tensor-parallel collective on the critical path. The product prices a Gaudi 2
tensor-parallel group of any size at the card's whole 300 GB/s a direction (pricing/data/gpu_specs.csv
nvlink_bandwidth_gbps 600, halved) x COMM_EFFICIENCY.

Source of the mesh: [HABNET] docs.habana.ai/en/latest/Management_and_Monitoring/Network_Configuration/index.html:
"21 scale-up ports and three scale-out ports ... used to connect to seven other accelerators inside a single box
in an All2All manner, essentially using 21/7=3 scale-up ports for each connection inside the box" (stated for the
Gaudi 3 at 200 Gb/s; the page's note: "Gaudi 2 network architecture is similar to Gaudi 3 except that the network
links operate at 100Gbps ... 21*12.5 GB/s = 262.5 GB/s unidirectional" scale-up, 3 x 12.5 GB/s scale-out). A group of n cards
in one box reaches its n - 1 peers over 3 (n - 1) ports only: 37.5 (n - 1) GB/s a direction on the Gaudi 2.

The check below prices the tensor-parallel group on that mesh (everything else as shipped, the fitted 0.45 kept)
and pins the trade-off it gives: it lands the 8B at 8k in both software rounds and keeps the 3.1 70B inside,
but sends the TP 2 Llama 2 13B row out of tolerance. Under the mesh a TP group's collective seconds per FLOP no
longer depend on its size (bandwidth and per-card work both scale with the group), so the 13B (d 5,120) and the
8B (d 4,096) get about the same TP share, while the shipped engine is already +10.6% / +8.5% on the 13B and
+19.5% / +15.9% on the 8B: the mesh charges the 13B about as much as the 8B needs, which the 13B's figures do not
allow. Not landed: a located, sized lead that a
passing row contradicts (UNEXPLAINED, NOTES-issue26.md stop 48).
"""

from __future__ import annotations

import pytest

from procurement.api.sizing import size_spec_document
from procurement.sizing import report as report_module
from procurement.sizing.assumptions import COMM_EFFICIENCY
from procurement.sizing.gpus import collective_bandwidth_gbps, gpu_by_slug
from tests.procurement.outside.test_outside_recommendations import (
    GAUDI2_INTEL_RUNS,
    GAUDI2_INTEL_RUNS_1_19,
    candidate,
    gaudi2_intel_plan,
)

GAUDI2_PORT_GBPS = 12.5  # one 100 GbE port, a direction
GAUDI2_PORTS_PER_PEER = 3  # [HABNET]: 21 scale-up ports over 7 peers


def mesh_gbps(gpu, gpu_count: int) -> float:
    """A Gaudi 2 group inside one box on its all-to-all mesh; every other part as the product prices it."""
    if gpu.slug != "gaudi2" or gpu_count <= 1 or gpu_count > 8:
        return collective_bandwidth_gbps(gpu, gpu_count)
    return GAUDI2_PORTS_PER_PEER * (gpu_count - 1) * GAUDI2_PORT_GBPS * COMM_EFFICIENCY.value


def gaudi2_speed(plan) -> float:
    report = size_spec_document(gaudi2_intel_plan(*plan), ["gaudi2"], calibrate=False)
    return candidate(report, "gaudi2", plan[1])["throughput"]["training_tokens_per_second"]


def test_the_product_prices_every_gaudi2_tensor_parallel_group_at_the_whole_card_link():
    gaudi2 = gpu_by_slug("gaudi2")
    links = {n: collective_bandwidth_gbps(gaudi2, n) for n in (2, 4, 8)}
    assert links == pytest.approx({n: 300.0 * COMM_EFFICIENCY.value for n in (2, 4, 8)})
    # on the mesh: 30, 90 and 210 GB/s at COMM_EFFICIENCY 0.8
    assert [mesh_gbps(gaudi2, n) for n in (2, 4, 8)] == pytest.approx([30.0, 90.0, 210.0])


@pytest.mark.django_db
def test_gaudi2_mesh_lands_the_8b_at_8k_but_takes_the_tp2_13b_out(monkeypatch, bundled_catalog):
    monkeypatch.setattr(report_module, "collective_bandwidth_gbps", mesh_gbps)
    runs = {("1.18", name): (plan, published) for name, (plan, published) in GAUDI2_INTEL_RUNS.items()} | {
        ("1.19", name): (plan, published) for name, (plan, published) in GAUDI2_INTEL_RUNS_1_19.items()
    }
    runs[("1.18", "llama31_8b_8_hpu_8k")] = (GAUDI2_INTEL_RUNS_1_19["llama31_8b_8_hpu_8k"][0], 36_309)
    error = {key: gaudi2_speed(plan) / published - 1.0 for key, (plan, published) in runs.items()}
    # the 8B at 8k (TP 4): -3.4% (1.18, 36,309) and -6.3% (1.19, 37,440); shipped +19.5% / +15.9% (strict xfails)
    assert error[("1.18", "llama31_8b_8_hpu_8k")] == pytest.approx(-0.034, abs=0.01)
    assert error[("1.19", "llama31_8b_8_hpu_8k")] == pytest.approx(-0.063, abs=0.01)
    # the 3.1 70B (TP 8, 262.5 GB/s on the mesh): -8.9% / -8.2% (shipped -6.4% / -5.6%)
    assert error[("1.18", "llama31_70b_64_hpu_8k")] == pytest.approx(-0.089, abs=0.01)
    assert error[("1.19", "llama31_70b_64_hpu_8k")] == pytest.approx(-0.082, abs=0.01)
    # the 13B (TP 2, 37.5 GB/s to its one peer): -20.1% / -21.6% (shipped +10.6% / +8.5%, passing)
    assert error[("1.18", "llama2_13b_16_hpu")] == pytest.approx(-0.201, abs=0.01)
    assert error[("1.19", "llama2_13b_16_hpu")] == pytest.approx(-0.216, abs=0.01)
    assert (
        abs(error[("1.18", "llama2_13b_16_hpu")]) > 0.15 and abs(error[("1.19", "llama2_13b_16_hpu")]) > 0.15
    )
