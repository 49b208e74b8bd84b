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
# [QWEN-EMB] LoRA memory of the same rows (the sibling without trainable copies)
QWEN_LORA_MEMORY = {("7b", 256): 20.1, ("7b", 512): 20.4, ("14b", 256): 34.6, ("14b", 512): 35.1}


def _emb_spec(size: str, seq: int) -> dict:
    spec = qwen_lora_spec(MODELS[size], seq, 1)
    spec["lora"] = spec["lora"] | EMB
    return spec


def _total_gib(spec: dict) -> float:
    return memory_breakdown_scalar(parse_workload_spec(spec), 1)["total_per_gpu_gib"]


# The lead, a count from code (not a fitted size): torch 2.0's _multi_tensor_adamw (torch/optim/adamw.py of the
# 2.0 line, the stored copy read here: `exp_avg_sq_sqrt = torch._foreach_sqrt(device_exp_avg_sqs)` then
# `denom = torch._foreach_add(exp_avg_sq_sqrt, eps)`, both out of place and alive together until
# `_foreach_addcdiv_`) holds two state-sized tensors at the step's peak: 2 x 2 B a bf16 copy parameter. HF Trainer
# (transformers 4.32, Qwen's requirements) steps torch AdamW; the copies are the only large trainable set. Added
# to ours: 7B +4.64 GiB, 14B +5.80 GiB; and the README's own LoRA (emb) - LoRA deltas at 256 tokens (13.6 / 16.6 /
# 7.0 G for 7B / 14B / 1.8B) match 12 B a copy parameter (8 static + 4 transient: 13.91 / 17.40 / 6.96 GiB) better
# than the engine's 8 (+fragmentation: 9.74 / 12.18 / 4.87 GiB). Not landed here (no product code in an audit).
MEMORY_LEAD = (
    "lead: torch 2.0 foreach AdamW's two out-of-place state-sized transients (exp_avg_sq_sqrt and denom, "
    "torch/optim/adamw.py _multi_tensor_adamw of the 2.0 line, stored copy; not yet confirmed at the v2.0.1 tag) "
    "at the step's peak, 4 B a bf16 copy parameter, a count from code: +{lead:.2f} GiB would put this row at "
    "{landed:+.1f}%; the engine's memory model sums static tensors and has no optimizer-step peak rule, so the "
    "product could charge it (no (c)): a memory-peak change, not a label"
)


def _memory_reason(size: str, seq: int, ours: float, lora_ours: float) -> str:
    published = QWEN_EMB_MEMORY[(size, seq)]
    lead = bytes_model.saved_module_params(parse_workload_spec(_emb_spec(size, seq))) * 4.0 / GIB
    return (
        f"UNEXPLAINED (aud49e): [QWEN-EMB] {size.upper()} {seq} LoRA (emb) memory {published} G (read as GiB); ours "
        f"{ours:.2f} GiB ({(ours / published - 1) * 100:+.1f}%). The sibling LoRA row is ours {lora_ours:.2f} against "
        f"{QWEN_LORA_MEMORY[(size, seq)]} ({lora_ours / QWEN_LORA_MEMORY[(size, seq)] - 1:+.1%}); the copies add "
        f"{ours - lora_ours:.2f} GiB in ours (8 B a parameter + fragmentation) against "
        f"{published - QWEN_LORA_MEMORY[(size, seq)]:.1f} G in the README. Ruled out: the copies' dtype (bf16, "
        "deepcopy of the bf16 model; fp32 would be 16 B, over), fp32 optimizer states (HF Trainer without DeepSpeed: "
        "torch zeros_like in the parameter's dtype). "
        + MEMORY_LEAD.format(lead=lead, landed=(ours + lead) / published * 100 - 100)
    )


# ours (total_per_gpu_gib) at the time of the audit, recorded in each reason
MEMORY_OURS = {
    ("7b", 256): (27.93, 18.20),
    ("7b", 512): (28.19, 18.45),
    ("14b", 256): (44.28, 32.10),
    ("14b", 512): (44.59, 32.40),
}


@pytest.mark.parametrize(
    ("size", "seq"),
    [
        pytest.param(
            size,
            seq,
            marks=pytest.mark.xfail(strict=True, reason=_memory_reason(size, seq, *MEMORY_OURS[(size, seq)])),
        )
        for size, seq in QWEN_EMB_MEMORY
    ],
)
def test_qwen_lora_emb_memory_on_one_a100(size, seq):
    """[QWEN-EMB] LoRA (emb) memory: 7B 33.7 / 34.1 G, 14B 51.2 / 51.1 G at 256 / 512 tokens; bar 10%."""
    ours = _total_gib(_emb_spec(size, seq))
    assert ours == pytest.approx(MEMORY_OURS[(size, seq)][0], abs=0.01)  # the figure the reason records
    assert abs(ours / QWEN_EMB_MEMORY[(size, seq)] - 1.0) <= 0.10, ours


def test_the_memory_lead_is_a_count_from_code_and_lands_all_four():
    """Lead arithmetic only (not a label): + 4 B a copy parameter (two bf16 state-sized transients) puts each of the
    four rows inside 10% (7B 256: 27.93 + 4.64 = 32.57 against 33.7, -3.4%)."""
    for (size, seq), published in QWEN_EMB_MEMORY.items():
        spec = _emb_spec(size, seq)
        lead = bytes_model.saved_module_params(parse_workload_spec(spec)) * 4.0 / GIB
        assert abs((_total_gib(spec) + lead) / published - 1.0) <= 0.10, (size, seq)


# Held-out speeds. Published s/it, verbatim. Ours recorded at the audit (tokens/s error, + = ours faster).
HELD_OUT_STEPS = {
    ("7b", 1024): 2.9,  # ours step 2.571 s, +12.8%
    ("7b", 2048): 5.3,  # 5.178, +2.4%
    ("7b", 4096): 10.3,  # 10.753, -4.2%
    ("7b", 8192): 21.7,  # 23.341, -7.0%
    ("14b", 1024): 4.6,  # 4.638, -0.8%
    ("14b", 2048): 8.6,  # 9.354, -8.1%
    ("14b", 4096): 17.2,  # 19.334, -11.0%
    ("14b", 8192): 36.3,  # 41.483, -12.5%
    ("1.8b", 256): 1.0,  # 0.930, +7.5%
    ("1.8b", 512): 1.0,  # 0.930, +7.5%
    ("1.8b", 1024): 1.1,  # 0.930, +18.3%
    ("1.8b", 2048): 1.8,  # 1.399, +28.7%
    ("1.8b", 4096): 3.4,  # 2.845, +19.5%
    ("1.8b", 8192): 7.0,  # 6.463, +8.3%
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
        seq=2048, step=1.8, ours="1.399 s", gap="+28.7%", ratio_ours="1.094", ratio_pub="1.8 / 1.7"
    ),
    ("1.8b", 4096): _18B_INHERITED.format(
        seq=4096, step=3.4, ours="2.845 s", gap="+19.5%", ratio_ours="1.075", ratio_pub="3.4 / 3.3"
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
