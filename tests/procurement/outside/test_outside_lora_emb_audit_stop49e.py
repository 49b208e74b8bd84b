"""aud49e (stop 49): outside audit of lemb49's lora.modules_to_save, the Qwen README's LoRA (emb) rows.

Source of every published figure: [QWEN-EMB] QwenLM/Qwen README.md "Profiling of Memory and Speed" (one
A100-SXM4-80G, CUDA 11.8, "Pytorch 2.0", flash attention 2, batch 1 x 8 accumulation; "LoRA (emb) refers to
training the embedding and output layer"; finetune.py modules_to_save ['wte', 'lm_head'] for base models). The
7B / 14B rows as at @e6f2a7a / @e8e15962 (lemb49's source); the Qwen-1.8B rows were added to the same table with the
1.8B release (the stored README_JA.md copy read here: "LoRA (emb) 13.7G / 1.0s/it, 14.0G / 1.0s/it, 14.0G /
1.1s/it, 15.1G / 1.8s/it, 19.7G / 3.4s/it, 27.7G / 7.0s/it" and LoRA "6.7G / 1.0s/it ... 21.8G / 6.8s/it").

1. Memory (the brief's cases): the README's LoRA (emb) memory column at 7B / 14B x 256 / 512, read as GiB, against
   the engine's total_per_gpu_gib, bar 10%.
2. Held out (rows lemb49 did not land or look at): the 7B / 14B LoRA (emb) speeds at 1k-8k and the 1.8B LoRA (emb)
   speeds, bar 15% (the bar of the sibling LoRA rows, test_outside_audit_stop43l.py).
"""

from __future__ import annotations

import pytest

from procurement.sizing import bytes_model
from procurement.sizing.memory import memory_breakdown_scalar
from procurement.sizing.spec import parse_workload_spec
from tests.procurement.outside.test_outside_audit_stop43l import (
    MODELS,
    published_tokens_per_second,
    tokens_per_second,
)
from tests.procurement.outside.test_outside_recommendations import qwen_lora_spec

GIB = 1024**3
EMB = {"modules_to_save": ["wte", "lm_head"]}

# [QWEN-EMB] LoRA (emb) memory, verbatim ("51.2" has no unit in the README; read as the column's G)
QWEN_EMB_MEMORY = {("7b", 256): 33.7, ("7b", 512): 34.1, ("14b", 256): 51.2, ("14b", 512): 51.1}


def _emb_spec(size: str, seq: int) -> dict:
    spec = qwen_lora_spec(MODELS[size], seq, 1)
    spec["lora"] = spec["lora"] | EMB
    return spec


def _total_gib(spec: dict) -> float:
    return memory_breakdown_scalar(parse_workload_spec(spec), 1)["total_per_gpu_gib"]


# fix49e: FIXED. The lead below landed as the engine's modules_to_save peak (bytes_model.saved_module_peak_bytes,
# memory._saved_module_peak): torch 2.0's _multi_tensor_adamw (optstep: read in the PyPI 2.0.1 wheel, torch/optim/
# adamw.py lines 564-568, `exp_avg_sq_sqrt = torch._foreach_sqrt(device_exp_avg_sqs)` then `denom =
# torch._foreach_add(exp_avg_sq_sqrt, eps)`, both out of place and alive together until `_foreach_addcdiv_`; 2.1.0
# adds eps in place, one tensor; the specs state the README's torch_version 2.0, bytes_model.adamw_step_temporary_states)
# holds two state-sized tensors at the step: 2 x 2 B a bf16 copy parameter once the activations are freed, larger
# here than the embedding backward's second V x d buffer (2 B, one table) and the output copy's fresh gradient beside
# the activations (2 B, one table). A count from code, nothing fitted on these rows. Before -> after (GiB, total):
# 7B 256 27.93 -> 32.55 (-17.1% -> -3.4%), 7B 512 28.19 -> 32.55 (-17.3% -> -4.5%), 14B 256 44.28 -> 50.07
# (-13.5% -> -2.2%), 14B 512 44.59 -> 50.07 (-12.7% -> -2.0%): the peak replaces the short rows' activations
# (0.24 - 0.58 GiB), so 256 and 512 tokens give one figure, as the README's 33.7 / 34.1 and 51.2 / 51.1 nearly do.
MEMORY_OURS = {("7b", 256): 32.55, ("7b", 512): 32.55, ("14b", 256): 50.07, ("14b", 512): 50.07}


@pytest.mark.parametrize(("size", "seq"), list(QWEN_EMB_MEMORY))
def test_qwen_lora_emb_memory_on_one_a100(size, seq):
    """[QWEN-EMB] LoRA (emb) memory: 7B 33.7 / 34.1 G, 14B 51.2 / 51.1 G at 256 / 512 tokens; bar 10%."""
    ours = _total_gib(_emb_spec(size, seq))
    assert ours == pytest.approx(MEMORY_OURS[(size, seq)], abs=0.01)  # the figure NOTES records
    assert abs(ours / QWEN_EMB_MEMORY[(size, seq)] - 1.0) <= 0.10, ours


def test_the_landed_peak_is_the_count_from_code():
    """The activations key now holds max(activations, 4 B x copies) on these rows: 7B 2 x 151,936 x 4,096 x 4 B =
    4.637 GiB, 14B 2 x 152,064 x 5,120 x 4 B = 5.801 GiB (Qwen-7B / Qwen-14B vocabulary and width as
    test_outside_audit_stop43l.MODELS states them)."""
    for size, expected in (("7b", 2 * 151_936 * 4_096 * 4.0), ("14b", 2 * 152_064 * 5_120 * 4.0)):
        spec = parse_workload_spec(_emb_spec(size, 256))
        assert bytes_model.saved_module_params(spec) * 4.0 == pytest.approx(expected, rel=1e-12)
        got = memory_breakdown_scalar(spec, 1)["activations_gib"] * GIB
        assert got == pytest.approx(expected, rel=1e-9)


# Held-out speeds. Published s/it, verbatim. Ours recorded at the audit (tokens/s error, + = ours faster); optstep
# (the output copy's weight-gradient GEMM at the width ceiling's e, aud49e fix list 4) after the arrow; fix50o (the
# GEMM at the A100 SXM's measured matmul rate, 0.869: stas00/ml-engineering @b9e29720 MAMF table) after the second.
HELD_OUT_STEPS = {
    ("7b", 1024): 2.9,  # ours step 2.571 s, +12.8% -> 2.547 s, +13.9% -> 2.539 s, +14.2%
    ("7b", 2048): 5.3,  # 5.178, +2.4% -> 5.129, +3.3% -> 5.114, +3.6%
    ("7b", 4096): 10.3,  # 10.753, -4.2% -> 10.655, -3.3% -> 10.625, -3.1%
    ("7b", 8192): 21.7,  # 23.341, -7.0% -> 23.145, -6.2% -> 23.086, -6.0%
    ("14b", 1024): 4.6,  # 4.638, -0.8% -> 4.610, -0.2% -> 4.601, -0.0%
    ("14b", 2048): 8.6,  # 9.354, -8.1% -> 9.297, -7.5% -> 9.279, -7.3%
    ("14b", 4096): 17.2,  # 19.334, -11.0% -> 19.220, -10.5% -> 19.183, -10.3%
    ("14b", 8192): 36.3,  # 41.483, -12.5% -> 41.256, -12.0% -> 41.182, -11.9%
    ("1.8b", 256): 1.0,  # 0.930, +7.5%
    ("1.8b", 512): 1.0,  # 0.930, +7.5%
    ("1.8b", 1024): 1.1,  # 0.930, +18.3%
    ("1.8b", 2048): 1.8,  # 1.399, +28.7% -> 1.374, +31.0% -> 1.369, +31.5%
    ("1.8b", 4096): 3.4,  # 2.845, +19.5% -> 2.778, +22.4% -> 2.763, +23.1%
    ("1.8b", 8192): 7.0,  # 6.463, +8.3% -> 6.328, +10.6% -> 6.299, +11.1%
}
_18B_INHERITED = (
    "UNEXPLAINED (aud49e, held out): [QWEN-EMB] Qwen-1.8B LoRA (emb) {seq} tokens {step} s/it; ours {ours} "
    "({gap}). The sibling LoRA row of the same length is a strict xfail already (test_outside_audit_stop43l.py "
    "QWEN_1_8B_MISSES[{seq}], UNEXPLAINED: the host / GPU overlap near the crossover and the narrow-width compute); "
    "the copies' own share is small: ours LoRA (emb) / LoRA step {ratio_ours} against the "
    "README's {ratio_pub}. Not the copies' pricing; lead: the sibling's."
)
HELD_OUT_MISSES = {
    ("1.8b", 1024): _18B_INHERITED.format(
        seq=1024, step=1.1, ours="0.930 s a step", gap="+18.3%", ratio_ours="1.022", ratio_pub="1.1 / 1.1"
    ),
    ("1.8b", 2048): _18B_INHERITED.format(
        seq=2048, step=1.8, ours="1.369 s", gap="+31.5%", ratio_ours="1.070", ratio_pub="1.8 / 1.7"
    ),
    ("1.8b", 4096): _18B_INHERITED.format(
        seq=4096, step=3.4, ours="2.763 s", gap="+23.1%", ratio_ours="1.044", ratio_pub="3.4 / 3.3"
    ),
}


@pytest.mark.parametrize(
    ("size", "seq"),
    [
        pytest.param(*key, marks=pytest.mark.xfail(strict=True, reason=HELD_OUT_MISSES[key]))
        if key in HELD_OUT_MISSES
        else key
        for key in HELD_OUT_STEPS
    ],
)
@pytest.mark.django_db
def test_qwen_lora_emb_held_out_speeds_on_one_a100(size, seq, bundled_catalog):
    """[QWEN-EMB] LoRA (emb) rows lemb49 did not use, stated as run (fp32 adapters, modules_to_save wte / lm_head)."""
    ours = tokens_per_second(_emb_spec(size, seq))
    gap = ours / published_tokens_per_second(seq, HELD_OUT_STEPS[(size, seq)]) - 1.0
    assert abs(gap) <= 0.15, (ours, gap)


def test_tied_tables_take_two_copies_as_peft_makes_them():
    """A tied model (one table for input and output) with both names: PEFT's ModulesToSaveWrapper deep-copies each
    wrapped module separately, so the tie is broken and two V x d copies train (huggingface/peft issue #2777:
    'results in an untied layer'). The engine counts 2 x V x d, as PEFT builds it (Qwen2-0.5B-like shape)."""
    data = qwen_lora_spec(MODELS["1.8b"] | {"tie_word_embeddings": True}, 256, 1)
    data["lora"] = data["lora"] | EMB
    spec = parse_workload_spec(data)
    assert spec.model.tie_word_embeddings
    assert bytes_model.saved_module_params(spec) == 2 * 151_936 * 2_048
