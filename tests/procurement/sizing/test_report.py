"""size_workload: the output contract, verdicts, compatibility gates and remedies."""

import json

import pytest

from procurement.sizing import FEASIBLE_VERDICTS, gpu_by_slug, load_bundled_gpus, size_workload, verdict_for
from procurement.sizing.gpus import collective_bandwidth_gbps
from procurement.sizing.memory import MEMORY_KEYS
from tests.procurement.sizing.helpers import LLAMA3_8B, spec

THROUGHPUT_KEYS = {
    "training_tokens_per_second",
    "training_hours",
    "decode_tokens_per_second_per_stream",
    "decode_tokens_per_second_total",
    "time_to_first_token_seconds",
    "communication_share",
}


def _candidate(report, slug, gpus=1):
    return next(c for c in report["candidates"] if c["gpu"] == slug and c["gpus"] == gpus)


def test_it_loads_the_37_bundled_gpus_with_usable_memory():
    gpus = load_bundled_gpus()
    # 29 shared datasheets + A40, A800, GH200, V100 PCIe + RTX 4080, 4070 Ti SUPER, 4060 Ti 16GB, 3060
    # (pricing/data/SOURCES.md); 33 -> 37: the four GeForce 12 / 16 GB cards
    assert len(gpus) == 37
    # The H100 SXM's driver-reported 81,559 MiB (Vast catalog GpuInfo) is its real capacity: 79.65 GiB.
    h100 = gpu_by_slug("h100-sxm5-80gb")
    assert h100.capacity_gib == pytest.approx(81559 / 1024)
    assert h100.usable_memory_gib == pytest.approx(81559 / 1024 - 0.6)
    # Without a driver figure (T4), the datasheet's 16 GB (10^9 bytes) is the conservative fallback.
    t4 = gpu_by_slug("t4")
    assert t4.capacity_gib == pytest.approx(16e9 / 2**30)


def test_a_70b_bf16_model_fits_one_h200_once_real_capacity_is_used():
    # 70.55e9 params x 2 bytes = 131.4 GiB of weights: over the H200's decimal 141 GB (131.3 GiB) but
    # inside its real 143,771 MiB (140.4 GiB); vLLM serves Llama-3-70B bf16 on one H200 with short contexts.
    h200 = gpu_by_slug("h200-sxm-141gb")
    assert h200.capacity_gib == pytest.approx(140.4, abs=0.05)
    assert 70553706496 * 2 / 2**30 < h200.usable_memory_gib


@pytest.mark.parametrize(
    ("task", "extra"),
    [
        ("pretrain", {}),
        ("full_finetune", {}),
        ("lora", {}),
        ("qlora", {}),
        ("inference", {}),
        ("full_finetune", {"model": {"preset": "yolo-small"}}),
        ("lora", {"model": {"preset": "sd15"}}),
        ("inference", {"model": {"preset": "sdxl"}}),
    ],
)
def test_it_returns_the_output_contract_for_every_task_kind(task, extra):
    report = size_workload(spec(task=task, training_tokens=1e9, **extra), load_bundled_gpus(), range(1, 9))
    json.dumps(report)  # plain JSON
    assert set(MEMORY_KEYS) <= set(report["memory"])
    assert THROUGHPUT_KEYS <= set(report["throughput"])
    assert len(report["candidates"]) == 37 * 8  # 33 * 8 -> 37 * 8: four GeForce cards added
    for candidate in report["candidates"]:
        assert {"gpu", "gpus", "verdict", "memory_utilization", "throughput", "warnings"} <= set(candidate)
        # Issue 3's verdict contract is exactly these four; why a card is ruled out is in `blocked_by`.
        assert candidate["verdict"] in ("fits", "tight", "oversized", "does_not_fit")
        assert candidate["blocked_by"] in (None, "precision", "memory", "plan")
        assert (candidate["blocked_by"] is None) == (candidate["verdict"] != "does_not_fit")
    assert {"vcpus_per_node", "ram_gib_per_node", "disk_gb_per_node"} <= set(report["host"])
    assert all({"key", "value", "unit", "source"} <= set(a) for a in report["assumptions"])


@pytest.mark.parametrize(
    ("total", "required", "capacity", "verdict"),
    [
        (50, 60, 74.5, "fits"),
        (70, 84, 74.5, "tight"),
        (60, 75, 74.5, "tight"),
        (30, 36, 74.5, "oversized"),
        (80, 96, 74.5, "does_not_fit"),
        (float("nan"), float("nan"), 74.5, "does_not_fit"),
    ],
)
def test_it_assigns_verdicts_by_utilization(total, required, capacity, verdict):
    # Guides: over 90% of the card is tight, under 50% oversized; headroom that does not fit is tight.
    assert verdict_for(total, required, capacity) == verdict


def test_it_rules_out_bf16_on_turing_and_volta_with_the_fp16_remedy():
    report = size_workload(
        spec(task="inference", model=dict(LLAMA3_8B)),
        [gpu_by_slug("t4"), gpu_by_slug("v100-sxm2-32gb"), gpu_by_slug("l4")],
    )
    t4, v100, l4 = report["candidates"]
    assert (t4["verdict"], t4["blocked_by"]) == ("does_not_fit", "precision")
    assert "Turing" in t4["errors"][0]
    assert t4["remedies"][0] == "use fp16 (Turing has no BF16) or an Ampere-or-later card"
    assert v100["remedies"][0] == "use fp16 (Volta has no BF16) or an Ampere-or-later card"
    assert l4["blocked_by"] is None and l4["verdict"] in FEASIBLE_VERDICTS
    # An incompatible card still reports its real memory use, and no speed for a precision it lacks.
    assert t4["memory_utilization"] == pytest.approx(t4["total_per_gpu_gib"] / t4["capacity_gib"], abs=1e-3)
    assert t4["throughput"]["decode_tokens_per_second_per_stream"] is None


def test_it_chains_memory_remedies_after_the_precision_fix():
    # 8B weights in fp16 are 15 GiB: over a 16 GB T4 (14.9 GiB) even after switching to fp16, so the
    # remedy continues with the inference ladder of the fp16 spec.
    report = size_workload(spec(task="inference", model=dict(LLAMA3_8B)), [gpu_by_slug("t4")])
    (t4,) = report["candidates"]
    fixed = size_workload(
        spec(task="inference", model=dict(LLAMA3_8B), precision="fp16"), [gpu_by_slug("t4")]
    )["candidates"][0]
    assert fixed["verdict"] == "does_not_fit" and fixed["blocked_by"] == "memory" and fixed["remedies"]
    assert t4["remedies"] == [t4["remedies"][0], *fixed["remedies"]]
    assert t4["memory_after_remedy_gib"] == fixed["memory_after_remedy_gib"]


def test_it_gates_fp8_to_ada_or_hopper_and_fp4_to_blackwell():
    fp8 = size_workload(
        spec(task="inference", precision="fp8"),
        [gpu_by_slug("a100-sxm4-80gb"), gpu_by_slug("h100-sxm5-80gb")],
    )
    a100, h100 = fp8["candidates"]
    assert [a100["blocked_by"], h100["blocked_by"]] == ["precision", None]
    assert a100["verdict"] == "does_not_fit" and h100["verdict"] in FEASIBLE_VERDICTS
    assert a100["remedy"] == "use bf16 (Ampere has no FP8) or an Ada, Hopper or later card"
    # The fix's footprint: 7B (6.74e9 params) in bf16 is over twice the fp8 weights.
    assert a100["memory_after_remedy_gib"] > 2 * 6.74e9 / 2**30
    fp4 = size_workload(
        spec(task="inference", precision="fp4"), [gpu_by_slug("h100-sxm5-80gb"), gpu_by_slug("b200")]
    )
    hopper, blackwell = fp4["candidates"]
    assert [hopper["blocked_by"], blackwell["blocked_by"]] == ["precision", None]
    assert hopper["remedy"] == "use fp8 (Hopper has no FP4) or a Blackwell card"


def test_it_headlines_a_card_that_can_run_the_spec():
    report = size_workload(spec(task="inference"), [gpu_by_slug("t4"), gpu_by_slug("a100-sxm4-80gb")])
    assert report["throughput"]["gpu"] == "a100-sxm4-80gb"


def test_it_headlines_the_fastest_feasible_card_not_the_first_listed():
    # Both cards run an 8B LoRA; the H100's 989 dense BF16 TFLOPS beat the A100's 312 (NVIDIA
    # datasheets), so the headline speed is the H100's even though the A100 is listed first.
    gpus = [gpu_by_slug("a100-sxm4-80gb"), gpu_by_slug("h100-sxm5-80gb")]
    report = size_workload(spec(task="lora"), gpus)
    a100, h100 = report["candidates"]
    assert a100["verdict"] in FEASIBLE_VERDICTS and h100["verdict"] in FEASIBLE_VERDICTS
    assert h100["throughput"]["training_tokens_per_second"] > a100["throughput"]["training_tokens_per_second"]
    assert report["throughput"]["gpu"] == "h100-sxm5-80gb"
    assert (
        report["throughput"]["training_tokens_per_second"] == h100["throughput"]["training_tokens_per_second"]
    )
    assert report["host"]["gpu"] == "h100-sxm5-80gb"
    serving = size_workload(spec(task="inference"), gpus)
    assert serving["throughput"]["gpu"] == "h100-sxm5-80gb"  # 3.35 TB/s HBM3 vs 2.04 TB/s HBM2e


def test_it_falls_back_to_eager_attention_before_ampere():
    workload = spec(precision="fp16", task="lora", seq_len=4096)
    report = size_workload(workload, [gpu_by_slug("v100-sxm2-32gb"), gpu_by_slug("a100-sxm4-80gb")])
    v100, a100 = report["candidates"]
    assert any("FlashAttention" in w for w in v100["warnings"])
    assert v100["memory"]["activations_gib"] > a100["memory"]["activations_gib"]


def test_it_warns_for_tensor_parallel_over_pcie_and_consumer_cards():
    workload = spec(parallelism={"gpus": 4, "tensor_parallel": 4}, training_tokens=2e10)
    report = size_workload(workload, [gpu_by_slug("rtx-4090"), gpu_by_slug("h100-sxm5-80gb")])
    rtx, h100 = report["candidates"]
    assert any("PCIe" in w for w in rtx["warnings"]) and any("consumer" in w for w in rtx["warnings"])
    assert not any("PCIe" in w for w in h100["warnings"])


def test_it_warns_when_communication_exceeds_30_percent():
    workload = spec(micro_batch_size=1, training_tokens=1e9, parallelism={"gpus": 8, "zero_stage": 3})
    report = size_workload(workload, [gpu_by_slug("l40s"), gpu_by_slug("h100-sxm5-80gb")])
    l40s, h100 = report["candidates"]
    assert l40s["throughput"]["communication_share"] > 0.3
    assert any("communication" in w for w in l40s["warnings"])
    assert h100["throughput"]["communication_share"] < l40s["throughput"]["communication_share"]


def test_it_uses_nvlink_within_a_node_and_the_network_beyond():
    h100, pcie = gpu_by_slug("h100-sxm5-80gb"), gpu_by_slug("a100-pcie-80gb")
    assert collective_bandwidth_gbps(h100, 8) == pytest.approx(900 / 2 * 0.8)
    # beyond a node: 400 Gb/s a GPU on NVSwitch Hopper (DGX H100's 8 x 400 Gb/s; moe26b, was 200), 200 on A100
    assert collective_bandwidth_gbps(h100, 16) == pytest.approx(50 * 0.8)
    assert collective_bandwidth_gbps(gpu_by_slug("a100-sxm4-80gb"), 16) == pytest.approx(25 * 0.8)
    assert collective_bandwidth_gbps(pcie, 2) == pytest.approx(600 / 2 * 0.8)  # NVLink bridge pair
    assert collective_bandwidth_gbps(pcie, 4) == pytest.approx(32 * 0.8)  # PCIe 4.0 x16


def test_it_offers_the_cheapest_remedy_in_the_guides_order():
    workload = spec(model=dict(LLAMA3_8B), micro_batch_size=8, seq_len=2048)
    report = size_workload(workload, [gpu_by_slug("a100-sxm4-80gb")])
    candidate = report["candidates"][0]
    assert candidate["verdict"] == "does_not_fit"
    actions = candidate["remedies"]
    assert actions[0].startswith("micro_batch_size 1 with gradient_accumulation_steps 8")
    assert candidate["memory_after_remedy_gib"] <= gpu_by_slug("a100-sxm4-80gb").capacity_gib
    order = ["micro_batch", "full gradient checkpointing", "8-bit", "LoRA", "QLoRA", "offload"]
    positions = [next(i for i, text in enumerate(order) if text in action) for action in actions]
    assert positions == sorted(positions)


def test_it_suggests_more_gpus_or_a_larger_card():
    workload = spec(task="inference", model={"preset": "llama-3-70b"})
    catalog = [gpu_by_slug(slug) for slug in ("a100-sxm4-80gb", "h200-sxm-141gb", "b200", "mi325x")]
    a100 = size_workload(workload, catalog)["candidates"][0]
    assert a100["verdict"] == "does_not_fit"
    assert a100["scale_out"]["gpus"] == 2 and "tensor parallel 2" in a100["scale_out"]["plan"]
    # 141 GB of bf16 weights + KV exceed the H200's 141e9 bytes (131.3 GiB); the B200 (180 GB) is the
    # smallest card that holds them (the MI325X is larger still).
    assert a100["larger_card"] == "b200"


def test_it_splits_inference_candidates_over_tensor_parallel_ranks():
    workload = spec(task="inference", model={"preset": "llama-3-70b"})
    report = size_workload(workload, [gpu_by_slug("h100-sxm5-80gb")], [1, 2, 4])
    one, two, four = report["candidates"]
    assert two["plan"]["tensor_parallel"] == 2 and four["plan"]["tensor_parallel"] == 4
    assert one["verdict"] == "does_not_fit" and two["verdict"] in ("fits", "tight")
    assert (
        four["throughput"]["decode_tokens_per_second_per_stream"]
        > two["throughput"]["decode_tokens_per_second_per_stream"]
    )


def test_it_marks_image_tiers_as_estimates():
    report = size_workload(spec(task="lora", model={"preset": "sdxl-tier"}), [gpu_by_slug("l4")])
    assert report["workload"]["image_tier"]["tier_range_gb"] == [16.0, 24.0]
    assert "tier estimate: benchmark recommended" in report["candidates"][0]["warnings"]


def test_it_sizes_host_cpu_ram_and_disk():
    workload = spec(training_tokens=1e10, parallelism={"gpus": 8, "zero_stage": 3, "offload": "optimizer"})
    report = size_workload(workload, [gpu_by_slug("h100-sxm5-80gb")])
    host = report["host"]
    assert host["vcpus_per_node"] == 32  # 4 per GPU
    memory = report["memory"]
    assert host["ram_gib_per_node"] >= 8 * 80e9 / 2**30 + memory["host_ram_gib"]
    disk = host["disk_breakdown_gb"]
    assert disk["dataset_gb"] == pytest.approx(40.0)  # 1e10 tokens x 4 bytes
    assert disk["checkpoints_gb"] == pytest.approx(2 * 6_738_415_616 * 14 / 1e9, rel=1e-3)
