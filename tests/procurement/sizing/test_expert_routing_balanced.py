"""parallelism.expert_routing balanced and expert_overlap shared_experts (e26c, issue 26): the hand counts the
AutoModel cases of tests/procurement/outside/test_outside_recommendations_x26d.py rest on."""

from __future__ import annotations

import pytest

from procurement.sizing.spec import WorkloadSpecError, parse_workload_spec
from procurement.sizing.throughput import (
    balanced_destinations,
    node_copy_share,
    shared_expert_flops_share,
)


def moe_spec(preset: str, ep: int, **parallelism) -> dict:
    return {
        "task": "pretrain",
        "model": {"preset": preset},
        "precision": "bf16",
        "micro_batch_size": 1,
        "seq_len": 4096,
        "gradient_checkpointing": "full",
        "parallelism": {"gpus": ep, "zero_stage": "fsdp", "expert_parallel": ep, "expert_dispatch": "deepep"}
        | parallelism,
        "training_tokens": 1e9,
    }


def test_balanced_gate_blocks_by_hand():
    # FakeBalancedGate: token i -> experts 8i .. 8i + 7 (mod 256); EP 64 holds 4 a GPU, 32 a node
    assert balanced_destinations(256, 8, 64) == 2.0  # two GPUs
    assert balanced_destinations(256, 8, 8) == 1.0  # one node
    assert balanced_destinations(128, 8, 8) == 1.0  # Qwen3-30B-A3B under EP 8: 16 a GPU, one GPU
    assert balanced_destinations(128, 4, 64) == 2.0  # GPT-OSS 120B under EP 64: 2 a GPU
    # blocks that straddle destinations: 6 experts from 6i (mod 16) over 4 ranks of 4 always touch 2 ranks;
    # 3 from 3i (mod 16) over 4: the 16 starts cover every residue; a block stays on one rank when it starts
    # at 0 or 1 within the rank's 4 (8 of 16 starts), else it touches 2
    assert balanced_destinations(16, 6, 4) == 2.0
    assert balanced_destinations(16, 3, 4) == pytest.approx((8 * 1 + 8 * 2) / 16)


def test_balanced_routing_sends_one_copy_a_node_against_a_learned_routers_4():
    # the learned router's 8 experts reach 8 (1 - (7 / 8)^8) = 5.25 of 8 nodes, capped at 4 by DeepSeek-V3's
    # group-limited routing (4 of 8 groups); the balanced block sits on one node
    learned = parse_workload_spec(moe_spec("deepseek-v3", 64))
    balanced = parse_workload_spec(moe_spec("deepseek-v3", 64, expert_routing="balanced"))
    assert float(node_copy_share(learned, 8)) * 8 == pytest.approx(4.0)
    assert float(node_copy_share(balanced, 8)) * 8 == pytest.approx(1.0)


def test_shared_expert_share_of_deepseek_v3_by_hand():
    # one shared expert of 2,048 on 58 MoE layers, 4 passes under full recomputation, over 340.27e9 FLOPs a token
    # (moe42: 349.54e9 before; 8 x (37e9 active - the two 129,280 x 7,168 tables) + the output layer 6 x 0.927e9,
    # no FLOPs for the input embedding lookup, + attention 53.54e9). mla42: MLA's attention core is 192 wide in
    # Q K^T and 128 in A V (v_head_dim), d_attn 128 x 160 = 20,480 not 24,576: 4 passes x 4 x 61 x 2,048 x 4,096
    # = 8.19e9 less, attention 45.35e9, total 332.08e9. moe43: the preset's multi-token prediction module (tests/
    # procurement/sizing/test_mtp.py): its block 8 x 585,304,064, projection and output head 6 x (2 x 7,168^2 +
    # 129,280 x 7,168), one layer's attention 4 x 4 x 2,048 x 20,480: 11.53e9 more, 343.61e9; its shared expert
    # makes 59 MoE layers
    spec = parse_workload_spec(moe_spec("deepseek-v3", 64, expert_overlap="shared_experts"))
    share = shared_expert_flops_share(spec)
    table = 129_280 * 7_168
    total = 8 * (37e9 - 2 * table) + 6 * table + 53.54e9 - 4 * 4 * 61 * 2048 * (24576 - 20480)
    assert total == pytest.approx(332.08e9, rel=1e-3)
    total += 8 * 585_304_064 + 6 * (2 * 7168**2 + table) + 4 * 4 * 2048 * 20480
    assert total == pytest.approx(343.61e9, rel=1e-3)
    assert share == pytest.approx(4 * 2 * 3 * 7168 * 2048 * 59 / total, rel=0.01)
    assert shared_expert_flops_share(parse_workload_spec(moe_spec("qwen3-30b-a3b", 8))) == 0.0


def test_expert_routing_needs_expert_parallelism():
    spec = moe_spec("deepseek-v3", 64, expert_routing="balanced")
    spec["parallelism"] = {"gpus": 8, "expert_routing": "balanced"}
    with pytest.raises(WorkloadSpecError):
        parse_workload_spec(spec)
