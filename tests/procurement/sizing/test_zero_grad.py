"""zero_grad (zgrad, issue 26): whether a training loop frees its gradients between steps.

torch's Optimizer.zero_grad and Module.zero_grad zeroed the gradients in place by default before 2.0 and free them
(set_to_none) since: the 1.13.0 wheel (PyPI torch-1.13.0-cp310-manylinux1, torch/version.py git_version
7c98e70d44abc7a1aead68b6ea6c8adc8c554db5) has torch/optim/optimizer.py line 246 `def zero_grad(self, set_to_none: bool
= False)` (p.grad = None only under set_to_none, lines 271-272, else p.grad.zero_() line 279) and
torch/nn/modules/module.py line 1952 the same default; the 2.0.0 wheel (git c263bd43e8e8502d4726643bc6fd046f0130ac0e)
has optimizer.py line 435 `set_to_none: bool = True` and module.py line 2333 likewise (pytorch/pytorch PR #92731,
issue #92656).

Hand computation on the PEFT method_comparison harness's full fine-tune (huggingface/peft @5d602fdb
method_comparison/MetaMathQA; run.py calls optimizer.zero_grad() before each forward, one batch of 4 a step, torch
2.7.1): Llama-3.2-3B, 3,212,749,824 parameters, pure bf16 AdamW. With the gradients freed, the next forward runs
without them; backward frees each layer's saved tensors as it creates that layer's gradients, so the peak is weights
+ states + max(activations + the first gradient backward creates, gradients + the foreach AdamW step's temporary):
the first is the tied lm_head / embedding weight gradient, 128,256 x 3,072 x 2 B; the temporary is _foreach_sqrt of
exp_avg_sq (torch 2.13.0 @cf30153c torch/optim/adam.py line 790), one bf16 state, the gradients' size here.
"""

from __future__ import annotations

import pytest

from procurement.api import spec_schemas
from procurement.sizing import WorkloadSpecError, parse_workload_spec
from procurement.sizing.assumptions import CUDA_CONTEXT_GIB, FRAGMENTATION_FRACTION, GIB
from procurement.sizing.documents import spec_from_knobs
from procurement.sizing.memory import memory_breakdown_scalar

PARAMS = 3212749824  # Llama-3.2-3B (tied embeddings), the count optmem48's test pins
HEAD_GRADIENT_GIB = 128256 * 3072 * 2 / GIB  # vocab x hidden x bf16: 0.734 GiB
PEFT_FT = {
    "task": "full_finetune",
    "model": {"preset": "llama-3.2-3b"},
    "micro_batch_size": 4,
    "seq_len": 210,
    "cross_entropy": "huggingface",
    "master_weights_fp32": False,
    "parallelism": {"gpus": 1},
    "training_tokens": 4198051,
}
FREED = {"zero_grad": "set_to_none"}


def memory(spec: dict, gpus=None, **plan) -> dict:
    return memory_breakdown_scalar(parse_workload_spec(spec), gpus, **plan)


def tensors(m: dict) -> float:
    return m["weights_gib"] + m["gradients_gib"] + m["optimizer_states_gib"] + m["activations_gib"]


def test_in_place_is_the_default_and_moves_nothing():
    stated = memory(PEFT_FT | {"zero_grad": "in_place", "max_seq_len": 768})
    assert stated == memory(PEFT_FT | {"max_seq_len": 768})
    assert parse_workload_spec(PEFT_FT).zero_grad == "in_place"
    assert stated["gradients_gib"] == pytest.approx(PARAMS * 2 / GIB)  # held beside the activations: the sum


def test_the_longest_batch_peaks_in_backward_with_only_the_head_gradient():
    """768 tokens: activations 13.67 GiB + 0.73 exceed gradients + temporary (2 x 5.98): the backward's start."""
    held = memory(PEFT_FT | {"max_seq_len": 768})
    freed = memory(PEFT_FT | {"max_seq_len": 768} | FREED)
    assert freed["activations_gib"] == held["activations_gib"]
    assert freed["weights_gib"] == held["weights_gib"] == pytest.approx(PARAMS * 2 / GIB)  # 5.98
    # bf16 exp_avg + exp_avg_sq, 11.97
    assert freed["optimizer_states_gib"] == pytest.approx(PARAMS * 4 / GIB)
    assert freed["gradients_gib"] == pytest.approx(HEAD_GRADIENT_GIB)
    expected = (PARAMS * 6 / GIB + held["activations_gib"] + HEAD_GRADIENT_GIB) * (1 + FRAGMENTATION_FRACTION)
    assert freed["total_per_gpu_gib"] - CUDA_CONTEXT_GIB == pytest.approx(expected)
    assert expected == pytest.approx(33.97, abs=0.01)


def test_the_mean_batch_peaks_in_the_optimizer_step():
    """210 tokens: activations 3.74 GiB + 0.73 are under gradients + the sqrt temporary, 2 x 5.98 GiB: the step's
    phase, weights + states + gradients + one bf16 state (optmem48's 31.42 GiB with fragmentation)."""
    freed = memory(PEFT_FT | FREED)
    step_phase = PARAMS * (2 + 4 + 2 + 2) / GIB
    assert tensors(freed) == pytest.approx(step_phase)
    assert step_phase * (1 + FRAGMENTATION_FRACTION) == pytest.approx(31.42, abs=0.01)
    assert freed["gradients_gib"] == pytest.approx(2 * PARAMS * 2 / GIB - freed["activations_gib"])


@pytest.mark.parametrize(
    "change",
    [
        {"gradient_accumulation_steps": 2},  # kept across micro-batches
        {"parallelism": {"gpus": 2}},  # DDP's buckets: a persistent gradient-sized buffer
        {"parallelism": {"gpus": 2, "zero_stage": 1}},
        {"parallelism": {"gpus": 1, "zero_stage": 1}},  # DeepSpeed's own gradient buckets (aud49z fix 3)
        {"parallelism": {"gpus": 2, "zero_stage": 2}},  # reduce-scattered as produced
        {"parallelism": {"gpus": 2, "zero_stage": 3}},
        {"parallelism": {"gpus": 2, "pipeline_parallel": 2}, "gradient_accumulation_steps": 4},
        {"optimizer_in_backward": True},  # one layer's gradients at a time already
    ],
)
def test_the_sum_stays_where_the_gradients_persist(change):
    spec = PEFT_FT | {"max_seq_len": 768} | change
    assert memory(spec | FREED) == memory(spec)


def test_the_rule_is_per_plan_in_the_ranking_arrays():
    """One call over 1 and 2 GPUs: the single rank drops the gradients, the DDP pair keeps them."""
    spec = parse_workload_spec(PEFT_FT | {"max_seq_len": 768} | FREED)
    from procurement.sizing.memory import memory_breakdown_gib

    arrays = memory_breakdown_gib(spec, [1, 2], zero_stage=[0, 0])
    assert arrays["gradients_gib"][0] == pytest.approx(HEAD_GRADIENT_GIB)
    assert arrays["gradients_gib"][1] == pytest.approx(PARAMS * 2 / GIB)


def test_adapters_keep_their_gradients_beside_the_activations():
    """LoRA: all the adapters' gradients counted in the backward phase (conservative), i.e. the sum, while the
    activations exceed the adapters' step temporary."""
    lora = PEFT_FT | {
        "task": "lora",
        "lora": {"rank": 64, "targets": ["q_proj", "v_proj"]},
        "master_weights_fp32": True,
    }
    assert memory(lora | FREED) == memory(lora)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"zero_grad": "none"}, "in_place, set_to_none"),
        ({"training_stack": "megatron"}, "Megatron-Core keeps gradients"),
        ({"training_stack": "llm_c"}, "grads_memory"),
        ({"task": "inference"}, "needs a training task"),
    ],
)
def test_clear_errors(change, message):
    spec = PEFT_FT | FREED | change
    with pytest.raises(WorkloadSpecError) as caught:
        parse_workload_spec(spec)
    assert any(error.path == "zero_grad" and message in error.message for error in caught.value.errors)


def test_an_image_model_is_refused():
    with pytest.raises(WorkloadSpecError) as caught:
        parse_workload_spec({"task": "full_finetune", "model": {"preset": "yolov8n"}} | FREED)
    assert any(error.path == "zero_grad" for error in caught.value.errors)


def test_schema_and_form_carry_the_field():
    field = spec_schemas.WorkloadSpecSerializer().fields["zero_grad"]
    assert tuple(field.choices) == ("in_place", "set_to_none")
    knobs = {"task": "full_finetune", "preset": "llama-3.2-3b", "zero_grad": "set_to_none"}
    assert spec_from_knobs(knobs)["zero_grad"] == "set_to_none"
    assert "zero_grad" not in spec_from_knobs(knobs | {"zero_grad": "in_place"})
    assert "zero_grad" not in spec_from_knobs(knobs | {"task": "inference"})
