"""aud49m (stop 49): outside audit of maxlen's `max_seq_len` field (memory at the longest batch, speed at seq_len).

Held-out cases: runs of the PEFT method_comparison MetaMathQA harness that no test had, each on one L40S, pure bf16
AdamW, batch 4 of MetaMathQA samples bucketed by length (run.py BucketIterator, BUCKET_FACTOR 20) and padded to the
batch's longest (run.py: tokenizer.pad(batch)), train_config max_seq_length 768 (data.py CHAR_LIMIT 1300), mean
209.9 tokens (4,198,051 train tokens / 20,000 samples). The published figure is max_memory_reserved over the whole
run (utils.py init_accelerator; results JSON train_info cuda_memory_max / accelerator_memory_max), the longest
batch's. Stated as seq_len 210 (hours) + max_seq_len 768 (memory). Bar: LLM_MEMORY (10%).

Also pins three behaviours of the change the audit found (fixes 1 and 2 landed by fix49m; see NOTES-issue26.md aud49m).
"""

from __future__ import annotations

import pytest

from procurement.sizing.assumptions import CUDA_CONTEXT_GIB
from procurement.sizing.spec import WorkloadSpecError, parse_workload_spec
from procurement.sizing.verdict import remedy_ladder
from tests.procurement.outside.test_outside_ranking_audit_stop48 import (
    GIB,
    LLM_MEMORY,
    candidate,
    err,
    peft_run,
)

LONGEST = {"max_seq_len": 768}

# huggingface/peft method_comparison/MetaMathQA/results/lora--llama-3.2-3B-rank10-target-mlp.json @1948110c
# (created 2025-10-23, torch 2.9.0+cu128, transformers 4.57.1, NVIDIA L40S): r 10 on down/up/gate_proj, lora_alpha
# 20, max_seq_length 768, batch 4, accelerator_memory_max 24,712,839,168 B (23.02 GiB); reserved avg 12,694,032,954.
R10_MLP_MAX = 24712839168 / GIB
# .../results/lora--llama-3.2-3B-rank64-rslora.json @0a179c1e (created 2025-06-19, torch 2.7.1+cu126, transformers
# 4.52.4, NVIDIA L40S): r 64 on q/v_proj, use_rslora true, cuda_memory_max 22,538,092,544 B (20.99 GiB).
R64_RSLORA_MAX = 22538092544 / GIB
# .../results/full-finetuning--llama-3.2-3B-lr_0.00001.json @a99942694 (torch 2.9.0): cuda_memory_max
# 38,549,848,064 B (35.90 GiB), the rerun peft49 quoted (FT_RERUN_MAX) but no test compares the product's own total.
FT_TORCH29_MAX = 38549848064 / GIB


def _ours(spec: dict) -> float:
    return candidate(spec, "l40s")["memory"]["total_per_gpu_gib"] - CUDA_CONTEXT_GIB


R_R10 = (
    "UNEXPLAINED (aud49m, held out): LoRA r 10 on gate/up/down_proj, seq_len 210 + max_seq_len 768, ours 20.27 GiB vs "
    "accelerator_memory_max 23.02 GiB (-11.9%; at seq_len 210 alone far lower). Ruled out: the eval generation "
    "(batch 50, max_length 800: KV 50 x 800 x 112 KiB = 4.3 GiB over 6 GiB of weights, under the training peak); "
    "dropout (lora_dropout 0.0); compile / checkpointing (false). Lead: the row is torch 2.9.0 (the full fine-tune's "
    "max grew 34.68 -> 35.90 GiB, +3.5%, from torch 2.7.1 to 2.9.0 on the same harness), and the MLP targets keep "
    "the 8,192-wide down_proj input for the adapter; the r32 / r64 q/v rows at torch 2.9.0 (@a99942694) would "
    "separate the release from the targets."
)


@pytest.mark.django_db
@pytest.mark.xfail(strict=True, reason=R_R10)
def test_peft_lora_r10_mlp_targets_longest_batch(bundled_catalog):
    """Held out: LoRA r 10 on the MLP linears, memory at the 768-token batch."""
    spec = peft_run("lora", lora={"rank": 10, "targets": ["gate_proj", "up_proj", "down_proj"]}) | LONGEST
    assert abs(err(_ours(spec), R10_MLP_MAX)) < LLM_MEMORY


@pytest.mark.django_db
def test_peft_lora_r64_rslora_longest_batch(bundled_catalog):
    """Held out: LoRA r 64 (rsLoRA scaling only: no memory of its own) on q/v, memory at the 768-token batch.
    Ours 19.04 GiB vs 20.99 (-9.3%): inside the 10% bar, near its edge, the side peft49 saw on r64 / r32."""
    spec = peft_run("lora", lora={"rank": 64, "targets": ["q_proj", "v_proj"]}) | LONGEST
    assert abs(err(_ours(spec), R64_RSLORA_MAX)) < LLM_MEMORY


NOTE_FT29 = (
    "aud49m, held out; passes by a hair, the same mechanism as test_peft_full_finetune_llama32_3b_l40s): the torch 2.9.0 "
    "rerun of the PEFT full fine-tune, seq_len 210 + max_seq_len 768, ours 39.49 GiB vs 35.90 (+10.0%, just past "
    "the 10% bar). (a) huggingface/peft method_comparison/MetaMathQA run.py: optimizer.zero_grad() before each "
    "forward, set_to_none by default since torch 2.0, so the 768-token activations never sit beside the gradients; "
    "(b) the gradients are a count, 3.21B x 2 B = 5.98 GiB, not this row; without them 33.20 GiB, -7.5%; (c) no "
    "spec field states that a loop frees gradients before the forward (session zgrad is adding zero_grad)."
)


@pytest.mark.django_db
def test_peft_full_finetune_torch29_rerun_longest_batch(bundled_catalog):
    """Held out: passes at +9.99%, by a hair and for a known wrong reason (NOTE_FT29: the engine holds 5.98 GiB of
    gradients the loop frees); with zgrad's field it would read -7.5%. Without max_seq_len: -19.1%."""
    spec = peft_run("full_finetune", master_weights_fp32=False) | LONGEST
    assert abs(err(_ours(spec), FT_TORCH29_MAX)) < LLM_MEMORY


# --- behaviours of the change found by the audit (fixes 1 and 2 landed by fix49m; see NOTES) ---

BASE = {
    "task": "lora",
    "model": {"preset": "llama-3.1-8b"},
    "micro_batch_size": 4,
    "seq_len": 210,
    "parallelism": {"gpus": 1},
    "lora": {"rank": 16, "targets": ["q_proj", "v_proj"]},
}


def test_truncate_remedy_names_max_seq_len_and_does_not_pack():
    """aud49m fix 1 (fix49m): the truncate step caps max_seq_len at 2048 and leaves seq_len (the mean, 210), and its
    text names that field; it no longer suggests packing, which would raise the mean to 2048 (hours x9.8). Before:
    'seq_len 2048 (pack or truncate longer sequences)'. A spec of one length keeps that text."""
    spec = parse_workload_spec(BASE | {"max_seq_len": 8192, "flash_attention": False})
    step = next((s, text) for s, text in remedy_ladder(spec, True) if "2048" in text)
    assert step[0].seq_len == 210 and step[0].max_seq_len == 2048
    assert step[1] == "max_seq_len 2048 (truncate samples longer than 2,048 tokens)"
    long_mean = parse_workload_spec(BASE | {"seq_len": 4096, "max_seq_len": 8192, "flash_attention": False})
    step = next((s, text) for s, text in remedy_ladder(long_mean, True) if "2048" in text)
    assert (step[0].seq_len, step[0].max_seq_len) == (2048, 2048)
    assert step[1] == "seq_len and max_seq_len 2048 (truncate samples longer than 2,048 tokens)"
    one_length = parse_workload_spec(BASE | {"seq_len": 8192, "flash_attention": False})
    step = next((s, text) for s, text in remedy_ladder(one_length, True) if "2048" in text)
    assert step[1] == "seq_len 2048 (pack or truncate longer sequences)"


def test_packed_rows_refuse_a_longer_max_seq_len():
    """aud49m fix 2 (fix49m): packed rows are seq_len tokens each (packed_sample_tokens <= seq_len), so a longer
    max_seq_len is refused by name (before: accepted, memory sized at 8192 where every row holds 4096)."""
    packed = BASE | {"seq_len": 4096, "packed_sample_tokens": 512, "flash_attention": True}
    with pytest.raises(WorkloadSpecError, match="max_seq_len: packed rows"):
        parse_workload_spec(packed | {"max_seq_len": 8192})
    assert parse_workload_spec(packed | {"max_seq_len": 4096}).memory_seq_len == 4096


def test_refusal_names_the_field():
    with pytest.raises(WorkloadSpecError, match="max_seq_len: must be >= seq_len"):
        parse_workload_spec(BASE | {"max_seq_len": 100})
