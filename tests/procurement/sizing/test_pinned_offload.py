"""DeepSpeed offload priced as seconds a step (pinned_offload.py; ec64k, fix51e), checked by hand on
jzhang38/EasyContext@1729d4f3's config (accelerate_configs/zero3_offload.json: ZeRO-3, offload_optimizer and
offload_param to the CPU with pin_memory true; Llama-2-7B, 8 A100 on one node, batch 1, full checkpointing).

fix51e: every offload is priced so (the flat +50% of the compute is retired); pin_memory sets the copies' rate
(31.5 GB/s pinned, 10.0 GB/s pageable: NVIDIA bandwidthTest on a DGX A100, gengwg/gpu@f1ce2499
nvda_gpu_benchmark.md); the CPU step runs at 14.32e6 parameters a core-second x the rank's host cores
(parallelism.offload_cpu_cores_per_rank; unstated: 12, assumed), no faster than 48 B a parameter of the node at
409.6 GB/s."""

from __future__ import annotations

import pytest

from procurement.sizing import gpu_by_slug, parse_workload_spec, size_workload
from procurement.sizing.assumptions import CPU_ADAM_PARAMS_PER_CORE_SECOND
from procurement.sizing.report import _throughput_rows
from procurement.sizing.spec import WorkloadSpecError

P = 6_738_415_616  # Llama-2-7B parameters (the preset's count; HF config: 32 layers, 4,096 hidden, 11,008 MLP)


def _spec(**parallelism):
    par = {"gpus": 8, "zero_stage": 3, "offload": "optimizer_and_params"} | parallelism
    return parse_workload_spec(
        {
            "task": "full_finetune",
            "model": {"preset": "llama-2-7b"},
            "precision": "bf16",
            "seq_len": 65536,
            "micro_batch_size": 1,
            "gradient_checkpointing": "full",
            "training_tokens": 1e9,
            "parallelism": par,
        }
    )


def _step_seconds(spec) -> float:
    rows = _throughput_rows(spec, [gpu_by_slug("a100-sxm4-80gb")], [spec.parallelism])
    return float(rows["step_seconds"][0])


RATE = 14.32e6  # parameters a host core steps a second (assumptions.CPU_ADAM_PARAMS_PER_CORE_SECOND)


def test_the_per_core_rate_is_set_on_deepspeed_pr_7474s_bound_row_by_hand():
    """deepspeedai/DeepSpeed PR #7474 (delock, 2025-08-08): Qwen2.5-3B, ZeRO-2 optimizer offload (pinned, the ZeRO
    offload tutorial's config), 2 A100-40GB, a host with 128 CPU cores; with --bind_cores_to_rank 2,383.16 ms a step.
    --bind_cores_to_rank gives each local rank physical cores // local ranks and OMP_NUM_THREADS to match
    (deepspeedai/DeepSpeed@5b6ec473 deepspeed/utils/numa.py get_numactl_cmd, main): 128 // 2 = 64 cores a rank.
    Less the engine's no-offload step of the same spec (307.6 ms, test_outside_offload_audit_aud51e) and the pinned
    ZeRO-2 copies (8 B x P / 2 at 31.5 GB/s = 391.9 ms), 1,683.7 ms step P / 2 = 1,542,969,344 parameters on 64
    cores: 14.32e6 a core-second. Held out: [ZF]'s rows, [PR735], EasyContext's, [CYFZ2] (tests/procurement/outside)."""
    p_3b = 3_085_938_688
    host_s = 2.38316 - 0.3076 - 8 * p_3b / 2 / 31.5e9
    assert host_s == pytest.approx(1.6837, abs=1e-4)
    assert p_3b / 2 / host_s / 64 == pytest.approx(CPU_ADAM_PARAMS_PER_CORE_SECOND.value, rel=1e-3)


def test_pinned_offload_costs_its_seconds_a_step_not_half_the_compute():
    compute = _step_seconds(_spec(offload="none"))
    pinned = _step_seconds(_spec(offload_pin_memory=True))
    # By hand, a rank's partition P / 8 (one node, 8 ranks), accumulation 1:
    # gradients into the pinned buffer (stage3.py@v0.14.0 lines 499-503, 1418-1467): 2 B x P / 8 over 31.5 GB/s;
    # parameters fetched for forward, recomputed forward and backward: 3 x 2 B x P / 8 over 31.5 GB/s;
    # the rank's CPU step, P / 8 on the assumed 12 cores (4.90 s; the 48 B x P / 409.6 GB/s floor is 0.79 s)
    by_hand = 2 * P / 8 / 31.5e9 + 3 * 2 * P / 8 / 31.5e9 + P / 8 / (12 * RATE)
    assert by_hand == pytest.approx(0.2139 + 4.9016, abs=1e-3)
    assert pinned - compute == pytest.approx(by_hand, rel=1e-6)


def test_stated_cores_scale_the_cpu_step_down_to_the_memory_floor():
    compute = _step_seconds(_spec(offload="none"))
    copies = 2 * P / 8 / 31.5e9 + 3 * 2 * P / 8 / 31.5e9
    at_32 = _step_seconds(_spec(offload_pin_memory=True, offload_cpu_cores_per_rank=32))
    assert at_32 - compute == pytest.approx(copies + P / 8 / (32 * RATE), rel=1e-6)  # 1.838 s of CPU step
    # 512 cores a rank would step P / 8 in 0.115 s: the node's memory (48 B x P at 409.6 GB/s, 0.790 s) binds
    at_512 = _step_seconds(_spec(offload_pin_memory=True, offload_cpu_cores_per_rank=512))
    assert at_512 - compute == pytest.approx(copies + 48 * P / 409.6e9, rel=1e-6)


def test_accumulation_adds_the_buffer_round_trip_each_micro_batch():
    one = _step_seconds(_spec(offload_pin_memory=True))
    two = parse_workload_spec(
        {
            "task": "full_finetune",
            "model": {"preset": "llama-2-7b"},
            "precision": "bf16",
            "seq_len": 65536,
            "micro_batch_size": 1,
            "gradient_accumulation_steps": 2,
            "gradient_checkpointing": "full",
            "training_tokens": 1e9,
            "parallelism": {
                "gpus": 8,
                "zero_stage": 3,
                "offload": "optimizer_and_params",
                "offload_pin_memory": True,
            },
        }
    )
    # a second micro-batch: its compute and parameter fetches again, plus the pinned gradient buffer's round trip
    # (partition_grads, dst on the CPU: to the GPU, add, copy back), 2 + 2 B; the host's step once a step
    compute = _step_seconds(_spec(offload="none"))
    extra = (2 + 2) * P / 8 / 31.5e9 + 3 * 2 * P / 8 / 31.5e9
    assert _step_seconds(two) - one == pytest.approx(compute + extra, rel=1e-6)


def test_unpinned_offload_moves_the_same_bytes_at_the_pageable_rate():
    """pin_memory false (DeepSpeed's default): the same copies at 10.0 GB/s, the same CPU step; never faster than
    pinned (aud51e's gate: stating pin_memory true used to make short-sequence rows slower)."""
    pinned = _step_seconds(_spec(offload_pin_memory=True))
    pageable = _step_seconds(_spec(offload_pin_memory=False))
    moved = 2 * P / 8 + 3 * 2 * P / 8
    assert pageable - pinned == pytest.approx(moved / 10.0e9 - moved / 31.5e9, rel=1e-6)
    assert pageable > pinned


def test_pin_memory_without_offload_is_refused_naming_the_field():
    with pytest.raises(WorkloadSpecError) as error:
        _spec(offload="none", zero_stage=3, offload_pin_memory=True)
    assert "parallelism.offload_pin_memory" in str(error.value)


@pytest.mark.parametrize(
    ("value", "offload", "words"),
    [
        (16, "none", "state parallelism.offload with it"),
        (0, "optimizer", "must be >= 1"),
        (513, "optimizer", "must be <= 512"),
        (2.5, "optimizer", "whole number"),
    ],
)
def test_cpu_cores_per_rank_is_bounded_and_refused_without_offload(value, offload, words):
    with pytest.raises(WorkloadSpecError) as error:
        _spec(offload=offload, offload_cpu_cores_per_rank=value)
    assert "parallelism.offload_cpu_cores_per_rank" in str(error.value)
    assert words in str(error.value)


def test_the_answer_states_the_cores_and_whether_they_are_assumed():
    gpu = [gpu_by_slug("a100-sxm4-80gb")]
    assumed = size_workload(_spec(), gpu)["workload"]["parallelism"]
    assert (assumed["offload_cpu_cores_per_rank"], assumed["offload_cpu_cores_source"]) == (12.0, "assumed")
    stated = size_workload(_spec(offload_cpu_cores_per_rank=64), gpu)["workload"]["parallelism"]
    assert (stated["offload_cpu_cores_per_rank"], stated["offload_cpu_cores_source"]) == (64.0, "stated")
    assert (
        "offload_cpu_cores_per_rank"
        not in size_workload(_spec(offload="none"), gpu)["workload"]["parallelism"]
    )


def test_zero2_optimizer_offload_moves_offl2s_bytes():
    """ZeRO-2, optimizer offload, accumulation 8 ([CYFZ2]'s shape, stated pinned here): offl2's stage_1_and_2.py
    @v0.14.2 bytes, (4 (A - 1) + 8) B = 36 B x P / 8 = 30.3 GB, 0.963 s at 31.5 GB/s; the CPU step on 12 cores
    4.90 s."""
    data = {
        "task": "full_finetune",
        "model": {"preset": "llama-2-7b"},
        "precision": "bf16",
        "seq_len": 4096,
        "micro_batch_size": 1,
        "gradient_accumulation_steps": 8,
        "gradient_checkpointing": "full",
        "training_tokens": 1e9,
        "parallelism": {"gpus": 8, "zero_stage": 2, "offload": "optimizer"},
    }
    gpu = gpu_by_slug("a100-sxm4-80gb")

    def compute(parallelism: dict) -> float:
        spec = parse_workload_spec(data | {"parallelism": data["parallelism"] | parallelism})
        return float(_throughput_rows(spec, [gpu], [spec.parallelism])["compute_seconds"][0])

    by_hand = (4 * 7 + 8) * P / 8 / 31.5e9 + P / 8 / (12 * RATE)
    assert by_hand == pytest.approx(0.9627 + 4.9016, abs=1e-3)
    assert compute({"offload_pin_memory": True}) - compute({"offload": "none"}) == pytest.approx(
        by_hand, rel=1e-6
    )
