"""Issue 26, outside audit at stop 49 (aud49q) of qlora49 (the LitGPT NF4 rows relabelled EXPLAINED).

Held-out cases: the rows of the SAME LitGPT table qlora49 read only for Llama 2 (same LitGPT commit, script, card,
bitsandbytes release, so the mechanisms qlora49 located apply unchanged), never tested by the project (grep of tests/
for "stablelm" / "phi-1.5" / "6.19 GB" / "3.72 GB": none).

Source [LITGPT]: Lightning-AI/litgpt @4839345a97a0a90bc5f2361664b04d665c9a0e89 tutorials/resource-tables.md
"Finetuning with LoRA on 1 GPU": LitGPT commit 8641822, 1 x A100-SXM4-40GB, PyTorch 2.1.0+cu121, Bitsandbytes 0.41.1,
--precision bf16-true, finetune/lora.py, micro-batch 1, Alpaca (longest example: phi-1.5 1,044 tokens, StableLM Alpha
1,034). Rows: "1.3 B | phi-1.5 | None | 1 | 1,572,864 | 4.82 GB | 1.62 min", "1.3 B | phi-1.5 | bnb.nf4-dq | 1 |
1,572,864 | 3.72 GB | 1.87 min", "3 B | StableLM Alpha | None | 1 | 2,097,152 | 9.69 GB | 1.24 min", "3 B | StableLM
Alpha | bnb.nf4-dq | 1 | 2,097,152 | 6.19 GB | 1.87 min".
Shapes from litgpt 8641822 lit_gpt/config.py: stablelm-base-alpha-3b (Config defaults: 16 layers, n_embd 4,096, 32
heads, GptNeoxMLP 4 x 4,096, vocab padded to 50,688, parallel residual, separate norms); phi-1_5 (24 layers, n_embd
2,048, 32 heads, GptNeoxMLP 8,192, padded vocab 51,200, shared_attention_norm=True).

qlora49's count, applied unchanged (nothing fitted here): memory + 1.05 x [saved 4-bit inputs (3d + f; 2d + f where
the attention and MLP share the norm) x 2 B x layers x T - V d (2 - 0.516) B (LM head 4-bit) + 4 V d B (its fp16 +
bf16 unpacked copies)]; time + 2 x 4 B x (block weights + V d) / (0.70 x 1,555 GB/s) + 2 x 2.5 B x V d / (0.364 x
1,555 GB/s).
"""

from __future__ import annotations

import pytest

from procurement.api.sizing import size_spec_document
from tests.procurement.outside.test_outside_recommendations import candidate

A100_40 = "a100-sxm4-40gb"
GIB = 1024**3

SHAPES = {
    "stablelm-alpha-3b": {
        "num_layers": 16,
        "hidden_size": 4096,
        "num_attention_heads": 32,
        "intermediate_size": 16384,
        "vocab_size": 50688,
        "gated_mlp": False,
    },
    "phi-1.5": {
        "num_layers": 24,
        "hidden_size": 2048,
        "num_attention_heads": 32,
        "intermediate_size": 8192,
        "vocab_size": 51200,
        "gated_mlp": False,
    },
}
LONGEST = {"stablelm-alpha-3b": 1034, "phi-1.5": 1044}


def spec(model: str, seq: int, quantized: bool) -> dict:
    """finetune/lora.py at 8641822 as the table ran it (the same recipe as test_outside_qlora_audit_stop44's
    litgpt_lora): bf16-true, micro-batch 1, rank 8 on q and v, dropout 0.05, no checkpointing; nf4 is double-quantized
    (the engine's default, bnb.nf4-dq)."""
    out = {
        "task": "qlora" if quantized else "lora",
        "model": SHAPES[model],
        "precision": "bf16",
        "master_weights_fp32": False,
        "seq_len": seq,
        "micro_batch_size": 1,
        "gradient_checkpointing": "none",
        "lora": {"rank": 8, "targets": ["q_proj", "v_proj"], "dropout": 0.05},
        "gradient_accumulation_steps": 128,
        "training_tokens": 1e7,
    }
    return out | ({"weight_quantization": "nf4"} if quantized else {})


# bnb49: the run's stack, stated with the spec's quantization fields (procurement/sizing/bnb_memory.py): [LITGPT]
# "Bitsandbytes 0.41.1"; Lightning @71aed751's init_context makes lm_head 4-bit (bitsandbytes.py line 130).
LITGPT_BNB = {"bnb_version": "0.41.1", "lm_head_4bit": True}


def row(model: str, seq: int, quantized: bool, stack: dict | None = None) -> dict:
    document = spec(model, seq, quantized) | ({"quantization": stack} if stack else {})
    return candidate(size_spec_document(document, [A100_40], calibrate=False), A100_40, 1)


def memory_gb(model: str, quantized: bool, stack: dict | None = None) -> float:
    return row(model, LONGEST[model], quantized, stack)["memory"]["total_per_gpu_gib"] * GIB / 1e9


def micro_batch_ms(model: str, quantized: bool) -> float:
    return 1000 * 512 / row(model, 512, quantized)["throughput"]["training_tokens_per_second"]


# --- bf16 siblings: the engine's LoRA baseline holds on both models (so an nf4 miss is the 4-bit path's) ------------
BF16_MEMORY = {"stablelm-alpha-3b": 9.69, "phi-1.5": 4.82}  # [LITGPT] "None" rows


@pytest.mark.parametrize("model", list(BF16_MEMORY))
@pytest.mark.django_db
def test_litgpt_bf16_lora_memory_siblings(model, bundled_catalog):
    # ours: StableLM 10.08 GB (+4.0%), phi-1.5 5.04 GB (+4.6%); the Llama 2 rows: -4.2% / -3.8%.
    assert memory_gb(model, False) == pytest.approx(BF16_MEMORY[model], rel=0.10)


# --- nf4-dq memory: qlora49's count, now the product's (bnb49), stated with the run's stack ------------------------
NF4_MEMORY = {"stablelm-alpha-3b": 6.19, "phi-1.5": 3.72}  # [LITGPT] bnb.nf4-dq rows
# Was a strict xfail (aud49q EXPLAINED: 5.06 GB, -18.2%, no spec field for the stack). FIXED by bnb49: 6.61 GB (+6.7%),
# bnb_memory's count, nothing fitted here: (3 x 4,096 + 16,384) x 2 B x 16 x 1,034 = 0.949 GB saved inputs, 50,688 x
# 4,096 LM head 4-bit -0.308 GB, its fp16 + bf16 copies +0.831 GB, x 1.05.
NF4_MEMORY_MISSES = {
    "phi-1.5": "EXPLAINED: [LITGPT] phi-1.5 bnb.nf4-dq, 1,044 tokens: published 3.72 GB; ours 3.16 GB (-15.1%) "
    "unstated, 4.19 GB (+12.7%) stated as run (quantization.bnb_version 0.41.1, lm_head_4bit; bnb49), the bf16 row "
    "passing (+4.6%). (a) phi-1_5's litgpt config sets shared_attention_norm=True (lit_gpt/config.py at 8641822, "
    "aud49q) and Block.forward feeds the attention's normed input to the MLP, `n_2 = n_1 if "
    "self.config.shared_attention_norm else self.norm_2(x)` (lit_gpt/model.py, stored id 15988295033, a litgpt-era "
    "copy): MatMul4Bit's saved input is one tensor for both, 2d + f a layer and token, where bnb_memory charges 3d + "
    "f. (b) counted from code, nothing fitted on the row: (2 x 2,048 + 8,192) x 2 B x 24 x 1,044 = 0.616 GB saved "
    "inputs (not 0.719), x 1.05: -0.108 GB -> 4.08 GB (+9.8%, inside at the edge). (c) no spec field states a "
    "shared attention norm (model has none; the engine's activations count separate norms for every model, as the "
    "passing bf16 rows do), so the product cannot charge it (bnb49)",
}


@pytest.mark.parametrize(
    "model",
    [
        pytest.param(m, marks=pytest.mark.xfail(strict=True, reason=NF4_MEMORY_MISSES[m]))
        if m in NF4_MEMORY_MISSES
        else m
        for m in NF4_MEMORY
    ],
)
@pytest.mark.django_db
def test_litgpt_nf4_dq_lora_memory_held_out(model, bundled_catalog):
    assert memory_gb(model, True, LITGPT_BNB) == pytest.approx(NF4_MEMORY[model], rel=0.10)


@pytest.mark.django_db
def test_litgpt_nf4_dq_memory_unstated_is_unchanged(bundled_catalog):
    # bnb49: the defaults (current bitsandbytes, 16-bit head) add nothing: ours before bnb49, StableLM 5.06 GB and
    # phi-1.5 3.16 GB (aud49q's figures above).
    assert memory_gb("stablelm-alpha-3b", True) == pytest.approx(5.064, abs=0.005)
    assert memory_gb("phi-1.5", True) == pytest.approx(3.162, abs=0.005)


# --- nf4-dq unpacking time (nf4-dq minus None over 1,000 micro-batches): qlora49's count overshoots both ---------------
NF4_SPEED = {
    "stablelm-alpha-3b": (
        37.8,
        "UNEXPLAINED: [LITGPT] StableLM Alpha 3B bnb.nf4-dq minus bf16 LoRA: published 37.8 ms a micro-batch (1.87 - "
        "1.24 min over 1,000); ours 28.5 ms (-24.6%; 2 x 2.5 B x 3.221e9 block weights at 0.364 of 1,555 GB/s). "
        "qlora49's fp16 -> bf16 cast count (2 x 4 B x (3.221e9 + 50,688 x 4,096) at 0.70 = 25.2 ms, LM head unpacking "
        "1.8 ms) gives 55.5 ms (+46.9%): the cast is in the code (Lightning @71aed751 bitsandbytes.py 221, "
        "bitsandbytes 18e827d6 _functions.py 516 / 547) but its time at the streaming rate does not show in this row. "
        "Best lead: a per-kernel trace of this run (host vs GPU time a micro-batch) (aud49q)",
    ),
    "phi-1.5": (
        15.0,
        "UNEXPLAINED: [LITGPT] phi-1.5 bnb.nf4-dq minus bf16 LoRA: published 15.0 ms a micro-batch (1.87 - 1.62 min); "
        "ours 18.7 ms (+24.7%). qlora49's cast count (2 x 4 B x (1.208e9 + 51,200 x 2,048) at 0.70 = 9.6 ms, LM head "
        "0.9 ms) gives 29.3 ms (+95%), the wrong way. Across the table's four nf4-dq rows the same count gives phi-1.5 "
        "+95%, StableLM 3B +47%, Llama 2 7B +21%, 13B +3%: the overshoot shrinks with size, a host-bound step hiding "
        "GPU work at the small models being the candidate, unsized (aud49q)",
    ),
}


@pytest.mark.parametrize(
    "model",
    [pytest.param(m, marks=pytest.mark.xfail(strict=True, reason=NF4_SPEED[m][1])) for m in NF4_SPEED],
)
@pytest.mark.django_db
def test_litgpt_nf4_dq_unpacking_time_held_out(model, bundled_catalog):
    ours_ms = micro_batch_ms(model, True) - micro_batch_ms(model, False)
    assert ours_ms == pytest.approx(NF4_SPEED[model][0], rel=0.15)
