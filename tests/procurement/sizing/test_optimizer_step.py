"""peft48 (issue 26): the once-a-step passes of torch's foreach AdamW and clip_grad_norm_ on pure-16-bit runs."""

from __future__ import annotations

import pytest

from procurement.sizing import optimizer_step
from procurement.sizing.spec import parse_workload_spec
from procurement.sizing.throughput import training_throughput

L40S_BYTES_PER_S = 864e9
LLAMA32_3B_PARAMS = 3_212_749_824


def _peft_full_finetune(**fields):
    """huggingface/peft method_comparison/MetaMathQA's full fine-tune: pure bf16 AdamW, batch 4 of ~210 tokens."""
    return parse_workload_spec(
        {
            "task": "full_finetune",
            "model": {"preset": "llama-3.2-3b"},
            "micro_batch_size": 4,
            "seq_len": 210,
            "master_weights_fp32": False,
            "training_tokens": 4198051,
        }
        | fields
    )


def test_twenty_three_accesses_of_each_bf16_parameter_at_the_achieved_bandwidth():
    spec = _peft_full_finetune()
    seconds = optimizer_step.seconds_per_step(spec, LLAMA32_3B_PARAMS * 2.0, 1.0, L40S_BYTES_PER_S)
    assert float(seconds) == pytest.approx(23 * 2 * LLAMA32_3B_PARAMS / (0.70 * L40S_BYTES_PER_S))
    assert float(seconds) == pytest.approx(0.244, abs=0.001)


@pytest.mark.parametrize(
    "fields",
    [
        # mixed precision: often a fused AdamW (apex, DeepSpeed, transformers' adamw_torch_fused)
        {"master_weights_fp32": True},
        {"optimizer": "paged_adamw_8bit"},
        {"training_stack": "megatron"},
        {"training_stack": "llm_c"},  # counted in llm_c_efficiency already
    ],
)
def test_other_stacks_and_optimizers_pay_nothing_here(fields):
    spec = _peft_full_finetune(**fields)
    assert float(optimizer_step.seconds_per_step(spec, 6.4e9, 1.0, L40S_BYTES_PER_S)) == 0.0


def test_no_bandwidth_on_file_pays_nothing():
    spec = _peft_full_finetune()
    assert float(optimizer_step.seconds_per_step(spec, 6.4e9, 1.0, float("inf"))) == 0.0


def test_the_metamathqa_full_finetune_step_on_an_l40s_lands_within_15_percent():
    """2,310 tokens/s published (@0a179c1e results/full-finetuning--llama-3.2-3B-lr_0.00001.json); 6,537 before,
    at the L40S's 362 dense bf16 TFLOPS and the workstation MFU 0.35."""
    spec = _peft_full_finetune(cross_entropy="huggingface")
    common = {"peak_tflops": 362.05, "gpu_counts": 1, "interconnect_gbps": 32.0, "mfu": 0.35}
    before = training_throughput(spec, **common)
    after = training_throughput(spec, **common, memory_bandwidth_gbps=864.0)
    assert float(before["training_tokens_per_second"]) == pytest.approx(6537, rel=0.005)
    assert float(after["optimizer_step_seconds"]) == pytest.approx(0.244, abs=0.002)
    assert float(after["training_tokens_per_second"]) / 2310.0 - 1 == pytest.approx(-0.025, abs=0.01)
