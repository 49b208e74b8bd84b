"""parallelism.offload_pin_memory (ec64k): DeepSpeed offload priced as seconds a step (pinned_offload.py), checked
by hand on jzhang38/EasyContext@1729d4f3's config (accelerate_configs/zero3_offload.json: ZeRO-3, offload_optimizer
and offload_param to the CPU with pin_memory true; Llama-2-7B, 8 A100 on one node, batch 1, full checkpointing)."""

from __future__ import annotations

import pytest

from procurement.sizing import gpu_by_slug, parse_workload_spec
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


def test_pinned_offload_costs_its_seconds_a_step_not_half_the_compute():
    flat = _step_seconds(_spec())
    pinned = _step_seconds(_spec(offload_pin_memory=True))
    compute = flat / 1.5  # the flat rule: the compute x (1 + offload_step_overhead 0.5)
    # By hand, a rank's partition P / 8 (one node, 8 ranks), accumulation 1:
    # gradients into the pinned buffer (stage3.py@v0.14.0 lines 499-503, 1418-1467): 2 B x P / 8 over 31.5 GB/s;
    # parameters fetched for forward, recomputed forward and backward: 3 x 2 B x P / 8 over 31.5 GB/s;
    # the host's step, 48 B a parameter of all 8 ranks (P) at 409.6 GB/s.
    by_hand = 2 * P / 8 / 31.5e9 + 3 * 2 * P / 8 / 31.5e9 + 48 * P / 409.6e9
    assert by_hand == pytest.approx(1.0036, abs=1e-3)
    assert pinned - compute == pytest.approx(by_hand, rel=1e-6)
    assert flat - compute == pytest.approx(26.71, abs=0.01)  # what the flat share charged this 53.4 s step


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
    compute = _step_seconds(_spec()) / 1.5
    extra = (2 + 2) * P / 8 / 31.5e9 + 3 * 2 * P / 8 / 31.5e9
    assert _step_seconds(two) - one == pytest.approx(compute + extra, rel=1e-6)


def test_unpinned_offload_keeps_the_flat_share():
    assert _step_seconds(_spec(offload_pin_memory=False)) == pytest.approx(_step_seconds(_spec()))


def test_pin_memory_without_offload_is_refused_naming_the_field():
    with pytest.raises(WorkloadSpecError) as error:
        _spec(offload="none", zero_stage=3, offload_pin_memory=True)
    assert "parallelism.offload_pin_memory" in str(error.value)


def test_zero2_optimizer_offload_moves_offl2s_bytes():
    """ZeRO-2, optimizer offload, accumulation 8 ([CYFZ2]'s shape, stated pinned here): offl2's stage_1_and_2.py
    @v0.14.2 bytes, (4 (A - 1) + 8) B = 36 B x P / 8 = 30.3 GB, 0.963 s at 31.5 GB/s; the host step 0.790 s."""
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

    def compute(pinned: bool) -> float:
        spec = parse_workload_spec(
            data | {"parallelism": data["parallelism"] | {"offload_pin_memory": pinned}}
        )
        return float(_throughput_rows(spec, [gpu], [spec.parallelism])["compute_seconds"][0])

    by_hand = (4 * 7 + 8) * P / 8 / 31.5e9 + 48 * P / 409.6e9
    assert by_hand == pytest.approx(0.9627 + 0.7897, abs=1e-3)
    assert compute(True) - compute(False) / 1.5 == pytest.approx(by_hand, rel=1e-6)
