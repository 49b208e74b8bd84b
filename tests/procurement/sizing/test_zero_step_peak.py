"""DeepSpeed ZeRO-1/2's optimizer-step peak (zstep, stop 51): the reported peak is max(backward, step).

Source: deepspeed/runtime/zero/stage_1_and_2.py@v0.12.3 (6ea44d02) DeepSpeedZeroOptimizer.step, lines 1758-1788:
per parameter group `self.flatten(self.averaged_gradients[i]).to(fp32)` holds the rank's 16-bit gradient partition
(2 B) + the flat 16-bit copy (2 B) + the fp32 copy (4 B) a partition parameter at once, after backward has freed the
activations and the ipg buckets (line 750). So the step holds weights + optimizer states + 8 B x P / dp, reported as
gradients_gib + activations_gib (the breakdown's sum is the peak).
"""

from __future__ import annotations

import pytest

from procurement.sizing import parse_workload_spec
from procurement.sizing.memory import memory_breakdown_scalar

GIB = 2.0**30
# Llama-2-7B's parameter count, the engine's llama-2-7b preset (HF config: 32 layers, 4096 hidden, 11008 MLP,
# 32000 vocabulary, untied head): 6,738,415,616.
LLAMA2_7B_PARAMS = 6_738_415_616


def _breakdown(*, gpus: int, zero_stage: int, seq_len: int = 512, **extra) -> dict:
    data = {
        "task": "full_finetune",
        "model": {"preset": "llama-2-7b"},
        "precision": "bf16",
        "seq_len": seq_len,
        "gradient_checkpointing": "full",
        "parallelism": {"gpus": gpus, "zero_stage": zero_stage},
    } | extra
    return memory_breakdown_scalar(parse_workload_spec(data), gpus)


def _at_peak_gib(parts: dict) -> float:
    return parts["gradients_gib"] + parts["activations_gib"]


def test_it_sizes_a_7b_full_finetune_zero2_on_8_gpus_at_its_step_by_hand():
    # By hand: 8 B x 6,738,415,616 / 8 ranks = 6,738,415,616 B = 6.2757 GiB at the step, against the backward's
    # 2 B x P / 8 = 1.5689 GiB of gradients + ~0.26 GiB of checkpointed activations (512 tokens): the step wins.
    parts = _breakdown(gpus=8, zero_stage=2)
    assert _at_peak_gib(parts) == pytest.approx(8 * LLAMA2_7B_PARAMS / 8 / GIB, rel=1e-9)
    assert _at_peak_gib(parts) == pytest.approx(6.2757, abs=1e-4)
    # weights (2 B x P, 12.5513 GiB) and states (12 B x P / 8, 9.4135 GiB) are the backward's, unchanged
    assert parts["weights_gib"] == pytest.approx(2 * LLAMA2_7B_PARAMS / GIB, rel=1e-9)
    assert parts["optimizer_states_gib"] == pytest.approx(12 * LLAMA2_7B_PARAMS / 8 / GIB, rel=1e-9)


def test_zero1_keeps_its_backward_peak_where_the_full_gradients_exceed_the_step():
    # By hand: ZeRO-1 holds the whole 16-bit gradients through backward, 2 B x P = 12.5513 GiB, over the step's
    # 8 B x P / 8 = 6.2757 GiB: the backward's sum stands (gradients 2 B x P exactly).
    parts = _breakdown(gpus=8, zero_stage=1)
    assert parts["gradients_gib"] == pytest.approx(2 * LLAMA2_7B_PARAMS / GIB, rel=1e-9)


def test_zero1_on_one_gpu_peaks_at_the_step():
    # By hand: 8 B x P / 1 = 53,907,324,928 B = 50.2051 GiB, over 2 B x P + activations (~12.8 GiB).
    parts = _breakdown(gpus=1, zero_stage=1)
    assert _at_peak_gib(parts) == pytest.approx(8 * LLAMA2_7B_PARAMS / GIB, rel=1e-9)


def test_torch_2_0_foreach_adamw_steps_over_two_fp32_temporaries():
    # By hand: DeepSpeed wrapping torch 2.0.1's foreach AdamW: the fp32 gradient (4 B) + two fp32 state-sized
    # temporaries (bytes_model.adamw_step_temporary_states: `_foreach_sqrt`, `_foreach_add`) = 12 B over the cast's 8:
    # 12 B x P / 8 = 9.4135 GiB.
    parts = _breakdown(gpus=8, zero_stage=2, torch_version="2.0.1")
    assert _at_peak_gib(parts) == pytest.approx(12 * LLAMA2_7B_PARAMS / 8 / GIB, rel=1e-9)


def test_long_activations_keep_the_backward_peak():
    # Without recomputation at 4096 tokens the activations (tens of GiB) + 2 B x P / 8 exceed the step's 6.28 GiB:
    # gradients_gib stays the sharded 2 B x P / 8 = 1.5689 GiB.
    parts = _breakdown(gpus=8, zero_stage=2, seq_len=4096, gradient_checkpointing="none")
    assert parts["activations_gib"] > 8 * LLAMA2_7B_PARAMS / 8 / GIB
    assert parts["gradients_gib"] == pytest.approx(2 * LLAMA2_7B_PARAMS / 8 / GIB, rel=1e-9)


@pytest.mark.parametrize(
    "extra",
    [
        {"training_stack": "megatron"},  # Megatron's distributed optimizer steps its own buffers
        {"parallelism": {"gpus": 8, "zero_stage": 2, "offload": "optimizer"}},  # the step runs on the host
        {"parallelism": {"gpus": 8, "zero_stage": 3}},  # ZeRO-3 is stage3.py, not this step
    ],
    ids=["megatron", "offload", "zero3"],
)
def test_it_leaves_plans_outside_deepspeed_zero_1_2_on_the_gpu_alone(extra):
    # By hand: the gradients are the sharded 2 B x P / 8 = 1.5689 GiB (offload: 0 on the GPU).
    parts = _breakdown(gpus=8, zero_stage=2, **extra)
    on_gpu = 0.0 if "offload" in extra.get("parallelism", {}) else 2 * LLAMA2_7B_PARAMS / 8 / GIB
    assert parts["gradients_gib"] == pytest.approx(on_gpu, rel=1e-9)
