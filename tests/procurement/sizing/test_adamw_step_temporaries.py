"""optstep (issue 26, aud49z fix list 2 and 5): one count for torch AdamW's state-sized step temporaries.

Read in the PyPI wheels (macosx arm64; torch/optim is the same Python on every platform), torch/optim/adamw.py:
- 1.13.1 (torch-1.13.1-cp310-none-macosx_11_0_arm64.whl, sha256 0122806b...): line 209 `foreach = False` when
  unstated (the for-loop); _multi_tensor_adamw lines 418-420 `exp_avg_sq_sqrt = torch._foreach_sqrt(exp_avg_sqs)`,
  `denom = torch._foreach_add(exp_avg_sq_sqrt, eps)`; no `fused` argument.
- 2.0.1 (torch-2.0.1-cp311-none-macosx_11_0_arm64.whl, sha256 25aa43ca...): _multi_tensor_adamw lines 564-568, the
  same two out-of-place tensors, both alive at `torch._foreach_addcdiv_(device_params, device_exp_avgs, denom,
  step_size)`; _fused_adamw: one in-place `torch._fused_adamw_` kernel.
- 2.1.0 (torch-2.1.0-cp311-none-macosx_11_0_arm64.whl, sha256 3cd1dedf...): lines 599-603,
  `exp_avg_sq_sqrt = torch._foreach_sqrt(...)`, `torch._foreach_div_`, `torch._foreach_add_(exp_avg_sq_sqrt, eps)`,
  `torch._foreach_addcdiv_(..., exp_avg_sq_sqrt, step_size)`: one.
So foreach holds 2 state-sized tensors before 2.1 and 1 from 2.1; fused 0.
"""

from __future__ import annotations

import numpy as np
import pytest

from procurement.api import spec_schemas
from procurement.sizing import WorkloadSpecError, bytes_model, parse_workload_spec
from procurement.sizing.assumptions import FRAGMENTATION_FRACTION, GIB
from procurement.sizing.documents import spec_from_knobs
from procurement.sizing.memory import memory_breakdown_scalar
from tests.procurement.outside.test_outside_audit_stop43l import MODELS
from tests.procurement.outside.test_outside_recommendations import qwen_lora_spec

V, D = 151_936, 4_096  # Qwen-7B vocabulary and width (test_outside_audit_stop43l.MODELS)
PARAMS = 3212749824  # Llama-3.2-3B (tied embeddings), as test_zero_grad.py
PEFT_FT = {
    "task": "full_finetune",
    "model": {"preset": "llama-3.2-3b"},
    "micro_batch_size": 4,
    "seq_len": 210,
    "cross_entropy": "huggingface",
    "master_weights_fp32": False,
    "parallelism": {"gpus": 1},
    "training_tokens": 4198051,
    "zero_grad": "set_to_none",
}


def _emb(**top) -> dict:
    data = qwen_lora_spec(MODELS["7b"], 256, 1) | top
    data["lora"] = data["lora"] | {"modules_to_save": ["wte", "lm_head"]}
    return data


def _memory(data: dict) -> dict:
    return memory_breakdown_scalar(parse_workload_spec(data), 1)


@pytest.mark.parametrize(
    ("stated", "states"),
    [
        ({}, 1.0),  # current: 2.1 or later
        ({"torch_version": "2.1.0"}, 1.0),
        ({"torch_version": "2.7.1"}, 1.0),
        ({"torch_version": "2.0"}, 2.0),
        ({"torch_version": "2.0.1"}, 2.0),
        # the for-loop default: no whole-state temporaries, the largest parameter's (fix50o; was 2.0)
        ({"torch_version": "1.13.1"}, 0.0),
        ({"optimizer_impl": "fused"}, 0.0),
        ({"optimizer_impl": "fused", "torch_version": "2.0.1"}, 0.0),
        ({"optimizer": "adamw_8bit"}, 0.0),
    ],
)
def test_the_count_follows_the_release_and_the_kernel(stated, states):
    spec = parse_workload_spec(PEFT_FT | stated)
    assert bytes_model.adamw_step_temporary_states(spec) == states


def test_the_qwen_readme_rows_state_torch_2_0_and_keep_their_figure():
    """[QWEN-EMB] "Pytorch 2.0": after the activations, 2 x 2 B x 2 tables = 4.979e9 B, as fix49e landed it."""
    assert qwen_lora_spec(MODELS["7b"], 256, 1)["torch_version"] == "2.0"
    after = bytes_model.saved_module_peak_bytes(parse_workload_spec(_emb()))[1]
    assert after == pytest.approx(2 * 2.0 * 2 * V * D, rel=1e-12)


def test_on_current_torch_the_copies_step_holds_one_state():
    """torch >= 2.1: 1 x 2 B x 2 tables = 2.489e9 B (still above the embedding backward's 1 table x 2 B); the total
    drops by the other state, 2 x V x D x 2 B = 2.318 GiB, x 1.05 fragmentation = 2.434 GiB (aud49z's "Qwen-7B
    2.3 GiB" over-charge, before fragmentation). fused: only the embedding backward's buffer is left, 1.245e9 B."""
    current = _emb(torch_version="current")
    assert bytes_model.saved_module_peak_bytes(parse_workload_spec(current))[1] == pytest.approx(
        2.0 * 2 * V * D
    )
    drop = _memory(_emb())["total_per_gpu_gib"] - _memory(current)["total_per_gpu_gib"]
    assert drop == pytest.approx(2 * V * D * 2.0 * (1 + FRAGMENTATION_FRACTION) / GIB, rel=1e-9)
    assert drop == pytest.approx(2.434, abs=0.001)
    fused = parse_workload_spec(_emb(optimizer_impl="fused"))
    assert bytes_model.saved_module_peak_bytes(fused)[1] == pytest.approx(2.0 * V * D)


def test_the_freed_gradient_step_phase_counts_the_same_states():
    """PEFT harness full fine-tune at 210 tokens (test_zero_grad.py): the step phase is weights + states +
    gradients + n bf16 states: n = 1 (current, 10 B a parameter, optmem48's 31.42 GiB with fragmentation), 2 on
    torch 2.0 (12 B), and fused 0: the backward's end, weights + states + gradients (8 B) against the start,
    activations + the head gradient, whichever is larger."""
    gib = PARAMS / GIB * (1 + FRAGMENTATION_FRACTION)
    current, old = _memory(PEFT_FT), _memory(PEFT_FT | {"torch_version": "2.0.1"})
    step = {
        k: m["weights_gib"] + m["gradients_gib"] + m["optimizer_states_gib"] + m["activations_gib"]
        for k, m in (("current", current), ("old", old))
    }
    assert step["current"] * (1 + FRAGMENTATION_FRACTION) == pytest.approx(10 * gib)
    assert step["old"] * (1 + FRAGMENTATION_FRACTION) == pytest.approx(12 * gib)
    fused = _memory(PEFT_FT | {"optimizer_impl": "fused"})
    head_first = fused["activations_gib"] + 128256 * 3072 * 2 / GIB
    expected = PARAMS * 6 / GIB + max(head_first, PARAMS * 2 / GIB)
    tensors = (
        fused["weights_gib"]
        + fused["gradients_gib"]
        + fused["optimizer_states_gib"]
        + fused["activations_gib"]
    )
    assert tensors == pytest.approx(expected)


def test_in_place_does_not_read_it_and_zero_stage_1_reads_it_at_deepspeed_s_step():
    """The gradients held (in_place): no change. ZeRO-1 on one rank, restated by zstep (stop 51): was "no change"
    (both sized the backward's sum, 2 B x P of gradients); DeepSpeed's step is now counted (memory.
    _gradients_at_zero_step_peak, stage_1_and_2.py@v0.12.3 lines 1758-1788) and it steps the wrapped client torch
    AdamW over the fp32 gradient partition, so the temporaries count there. By hand, P = 3,212,749,824, one rank:
    torch 2.0.1 foreach, fp32 gradient 4 B + two fp32 temporaries 8 B = 12 B x P = 35.90 GiB; fused, the cast's
    2 + 2 + 4 = 8 B x P = 23.94 GiB (gradients + activations, the step's share over weights and states)."""
    held = {k: v for k, v in PEFT_FT.items() if k != "zero_grad"}
    assert _memory(held | {"torch_version": "2.0.1"}) == _memory(held | {"optimizer_impl": "fused"})
    zero1 = PEFT_FT | {"parallelism": {"gpus": 1, "zero_stage": 1}}
    foreach, fused = _memory(zero1 | {"torch_version": "2.0.1"}), _memory(zero1 | {"optimizer_impl": "fused"})
    assert foreach["gradients_gib"] + foreach["activations_gib"] == pytest.approx(12 * PARAMS / GIB, rel=1e-9)
    assert fused["gradients_gib"] + fused["activations_gib"] == pytest.approx(8 * PARAMS / GIB, rel=1e-9)


@pytest.mark.parametrize(
    ("change", "path", "message"),
    [
        ({"torch_version": "2.x"}, "torch_version", "a torch release such as"),
        ({"optimizer_impl": "apex"}, "optimizer_impl", "foreach, fused"),
        ({"optimizer_impl": "fused", "optimizer": "adamw_8bit"}, "optimizer_impl", "needs optimizer adamw"),
        ({"optimizer_impl": "fused", "torch_version": "1.13.1"}, "optimizer_impl", "has no fused AdamW"),
        ({"optimizer_impl": "deepspeed_fused"}, "optimizer_impl", "set parallelism.zero_stage 1-3"),
        (
            {"optimizer_impl": "deepspeed_fused", "parallelism": {"gpus": 2, "zero_stage": 2}},
            "optimizer_impl",
            "needs master_weights_fp32 true",
        ),
    ],
)
def test_clear_errors(change, path, message):
    with pytest.raises(WorkloadSpecError) as caught:
        parse_workload_spec(PEFT_FT | change)
    assert any(error.path == path and message in error.message for error in caught.value.errors)


def test_schema_and_form_carry_the_fields():
    fields = spec_schemas.WorkloadSpecSerializer().fields
    assert set(fields["optimizer_impl"].choices) == {"foreach", "fused", "deepspeed_fused"}
    assert "torch_version" in fields
    knobs = {
        "task": "full_finetune",
        "preset": "llama-3.2-3b",
        "optimizer_impl": "fused",
        "torch_version": "2.0.1",
    }
    document = spec_from_knobs(knobs)
    assert (document["optimizer_impl"], document["torch_version"]) == ("fused", "2.0.1")
    plain = spec_from_knobs(knobs | {"optimizer_impl": "foreach", "torch_version": "current"})
    assert "optimizer_impl" not in plain and "torch_version" not in plain


def test_the_set_to_none_max_rule_is_zero_stage_0_only_per_plan():
    """aud49z fix 3 (memory._gradients_at_freed_peak, 9dd8d31f): one GPU at ZeRO 0 drops the gradients to the head's
    (128,256 x 3,072 x 2 B at 768 tokens, test_zero_grad.py); the same GPU at ZeRO-1 is DeepSpeed's optimizer (its
    ipg gradient buckets and a flattened fp32 partition stepped by its own Adam), so the set_to_none rule does not
    apply. Restated by zstep (stop 51): was gradients 2 B x P = 5.98 GiB (the backward's sum); DeepSpeed's step now
    counts (memory._gradients_at_zero_step_peak: 16-bit partition 2 + flat copy 2 + fp32 copy 4 = 8 B x P / dp, dp
    1, torch >= 2.1 foreach's 4 + 4 no larger), 8 x 3,212,749,824 B = 23.94 GiB as gradients + activations."""
    from procurement.sizing.memory import memory_breakdown_gib

    spec = parse_workload_spec(PEFT_FT | {"max_seq_len": 768})
    arrays = memory_breakdown_gib(spec, [1, 1], zero_stage=[0, 1])
    assert arrays["gradients_gib"][0] == pytest.approx(128256 * 3072 * 2 / GIB)
    at_step = arrays["gradients_gib"][1] + arrays["activations_gib"][1]
    assert at_step == pytest.approx(8 * PARAMS / GIB, rel=1e-9)


def test_a_fused_adamw_step_reads_and_writes_7_accesses_on_zero_stage_0():
    """optimizer_step: torch._fused_adamw_ reads param, grad, exp_avg, exp_avg_sq and writes the three states (7),
    + clipping 3 = 10 accesses a parameter, against foreach's 20 + 3. The PEFT full fine-tune, pure bf16 on one L40S
    (864 GB/s): 23 x 2 B x 3,212,749,824 = 147.8 GB = 0.244 s at 0.70 (optimizer_step's docstring) -> 10 x ... =
    64.3 GB = 0.106 s. Under ZeRO the stated kernel holds too (fix50o: FSDP steps torch's AdamW on each rank's
    shard, pytorch/torchtitan PR #355 / #881; DeepSpeed without an optimizer block wraps the client's torch AdamW):
    fused 10 on the rank's half (was 23, DeepSpeed's assumed), foreach 23; DeepSpeed's own FusedAdam
    (deepspeed_fused) 7 + its ZeRO wrapper's 5.5 = 12.5 (optimizer_step.DEEPSPEED_ZERO_WRAPPER_ACCESSES)."""
    from procurement.sizing import optimizer_step
    from procurement.sizing.assumptions import ACHIEVED_BANDWIDTH

    bandwidth = 864e9
    gradient_bytes = PARAMS * 2.0
    foreach = optimizer_step.seconds_per_step(parse_workload_spec(PEFT_FT), gradient_bytes, 1.0, bandwidth)
    fused_spec = parse_workload_spec(PEFT_FT | {"optimizer_impl": "fused"})
    fused = optimizer_step.seconds_per_step(fused_spec, gradient_bytes, 1.0, bandwidth)
    rate = ACHIEVED_BANDWIDTH.value * bandwidth
    assert float(foreach) == pytest.approx(23.0 * gradient_bytes / rate) == pytest.approx(0.244, abs=0.001)
    assert float(fused) == pytest.approx(10.0 * gradient_bytes / rate) == pytest.approx(0.106, abs=0.001)
    plans = optimizer_step.seconds_per_step(
        fused_spec, gradient_bytes, np.array([1.0, 0.5]), bandwidth, [0, 2]
    )
    assert plans == pytest.approx([10.0 * gradient_bytes / rate, 10.0 * gradient_bytes * 0.5 / rate])
    foreach_plans = optimizer_step.seconds_per_step(
        parse_workload_spec(PEFT_FT), gradient_bytes, np.array([1.0, 0.5]), bandwidth, [0, 2]
    )
    assert foreach_plans == pytest.approx([23.0 * gradient_bytes / rate, 23.0 * gradient_bytes * 0.5 / rate])


def test_deepspeed_fused_adam_counts_its_kernel_and_zero_wrapper():
    """deepspeedai/DeepSpeed@edaa7221: csrc/adam/multi_tensor_adam.cu reads g, p, m, v (lines 84-87) and writes p, m,
    v (120-122): 7 fp32 accesses; stage_1_and_2.py step(): bf16 norm read 0.5 + bf16 -> fp32 gradient cast 1.5 +
    unscale mul_ 2 + fp32 -> bf16 copy-back 1.5 = 5.5 (in 4 B accesses). 12.5 in all."""
    from procurement.sizing import optimizer_step

    assert optimizer_step.DEEPSPEED_ZERO_WRAPPER_ACCESSES == pytest.approx(0.5 + 1.5 + 2.0 + 1.5)
    spec = parse_workload_spec(
        PEFT_FT
        | {
            "optimizer_impl": "deepspeed_fused",
            "master_weights_fp32": True,
            "parallelism": {"gpus": 2, "zero_stage": 2},
            "zero_grad": "in_place",
        }
    )
    assert optimizer_step.step_accesses(spec) == pytest.approx(12.5)
    assert bytes_model.adamw_step_temporary_states(spec) == 0.0


def test_torch_1_13_for_loop_holds_three_of_the_largest_parameter():
    """fix50o (aud50o case 6): torch 1.13.1 adamw.py line 209 `foreach = False`; _single_tensor_adamw line 316
    `denom = (exp_avg_sq.sqrt() / bias_correction2_sqrt).add_(eps)`: sqrt's tensor and the quotient alive together,
    plus the previous parameter's `denom` until reassigned: at most 3 x the largest. Llama-3.2-3B: the 128,256 x 3,072
    table (tied), 394.0M elements, x 3 x 2 B (pure bf16) = 2.203 GiB, where two whole states were 11.97 GiB."""
    spec = parse_workload_spec(PEFT_FT | {"torch_version": "1.13.1"})
    assert bytes_model.adamw_steps_for_loop(spec)
    assert bytes_model.largest_trainable_tensor_params(spec) == 128_256 * 3_072
    assert bytes_model.adamw_for_loop_temporary_params(spec) == 3 * 128_256 * 3_072
    loop, fused = (
        _memory(PEFT_FT | {"torch_version": "1.13.1"}),
        _memory(PEFT_FT | {"optimizer_impl": "fused"}),
    )
    assert 3 * 128_256 * 3_072 * 2 / GIB == pytest.approx(2.202, abs=0.001)
    # the step phase (gradients + temporaries) is this row's peak, as in aud50o's 2.0.1 check
    assert loop["gradients_gib"] - fused["gradients_gib"] == pytest.approx(
        3 * 128_256 * 3_072 * 2 / GIB, rel=1e-9
    )
    # 2.0 keeps its two whole states; a copy table under LoRA (emb) on 1.13: 3 tables, not 2 x both copies
    assert not bytes_model.adamw_steps_for_loop(parse_workload_spec(PEFT_FT | {"torch_version": "2.0.1"}))
    emb = parse_workload_spec(_emb(torch_version="1.13.1"))
    assert bytes_model.saved_module_peak_bytes(emb)[1] == pytest.approx(3.0 * V * D * 2.0)  # bf16 copies
