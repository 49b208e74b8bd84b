"""Issue 26, outside audit at stop 44 (aud44l): qlora44's QLoRA unpacking as a time a micro-batch.

Cases of my own choosing that no test of the project had (grep of tests/ for litgpt / resource-tables and for the
Qwen-14B Q-LoRA row: none), sized the way `manage.py size` sizes them (`size_spec_document`, calibration off).
Tolerances: LLM speed 15%, memory 10%. Misses are strict xfails with published, ours, error and diagnosis.

Sources:
  [QWEN]   QwenLM/Qwen @2df8e8ac450fa185c421a08b0090ef81826caa6e README.md "Profiling of Memory and Speed" (the
           table the project reads at @03cd81f5): one A100-SXM4-80G, CUDA 11.8, PyTorch 2.0, FlashAttention 2,
           batch 1, gradient accumulation 8; Q-LoRA is the Int4 (GPTQ) model through finetune.py's
           GPTQConfig(bits=4, disable_exllama=True). Row "14B | Q-LoRA | 1 | 1": 18.7G / 5.3s/it, 18.4G / 6.3s/it,
           18.9G / 8.2s/it, 19.9G / 11.8s/it, 23.0G / 20.1s/it, 27.9G / 38.3s/it at 256 ... 8,192 tokens. The
           project tests the 7B and 72B Q-LoRA rows and the 14B LoRA row, never the 14B Q-LoRA row; qlora44 fitted
           nothing on it, so it is held out of the change.
  [LITGPT] Lightning-AI/litgpt @4839345a97a0a90bc5f2361664b04d665c9a0e89 tutorials/resource-tables.md "Finetuning
           with LoRA on 1 GPU" (LitGPT commit 8641822, 1 x A100-SXM4-40GB, PyTorch 2.1.0, bitsandbytes 0.41.1,
           --precision bf16-true, finetune/lora.py, micro-batch 1, Alpaca: longest example 1,304 Llama 2 tokens;
           4,194,304 trainable = rank 8 on q and v, 32 layers x 2 x 8 x (4,096 + 4,096)). "Max GPU RAM" is
           torch.cuda.max_memory_allocated / 1e9 (GB), reached at the longest example; "Time 1k iterations" is
           1,000 micro-batches. Rows: "7 B | Llama 2 | None | 1 | 4,194,304 | 21.30 GB | 2.36 min", "7 B | Llama 2 |
           bnb.nf4-dq | 1 | 4,194,304 | 13.84 GB | 3.83 min", "13 B | Llama 2 | None | 1 | 6,553,600 | 38.12 GB |
           3.19 min", "13 B | Llama 2 | bnb.nf4-dq | 1 | 6,553,600 | 22.55 GB | 6.55 min".
"""

from __future__ import annotations

import pytest

from procurement.api.sizing import size_spec_document
from tests.procurement.outside.test_outside_audit_stop43l import (
    MODELS,
    published_tokens_per_second,
    tokens_per_second,
)
from tests.procurement.outside.test_outside_recommendations import candidate, qwen_lora_spec

A100_40 = "a100-sxm4-40gb"
A100_80 = "a100-sxm4-80gb"
GIB = 1024**3

# --- 1. Qwen-14B Q-LoRA (GPTQ int4, eager AutoGPTQ unpacking) on one A100 80GB [QWEN] -------------------------------
# Stated as run: weight_quantization int4 (qlora44's GPTQ path), the README's LoRA settings (rank 64 on every linear,
# full recomputation, 1 x 8 micro-batches). By hand: Qwen-14B block linears 40 x (4 x 5,120^2 + 3 x 5,120 x 13,696)
# = 12.61e9; unpacking 2 passes x 16.5 B x 12.61e9 = 416 GB a micro-batch / (0.70 x 2,039 GB/s) = 0.292 s, 2.33 s a
# step of 8, the same at every length. The README's 14B Q-LoRA minus LoRA step is 3.8 / 3.4 / 3.1 / 2.3 s at 1k / 2k /
# 4k / 8k: falling with length, where a per-micro-batch unpacking is flat.
QWEN_14B_QLORA_STEPS = {1024: 8.2, 2048: 11.8, 8192: 38.3}  # s/it, [QWEN] row "14B | Q-LoRA"
# Was a strict xfail [1024] (aud44l, UNEXPLAINED: "at 1k the unpacking would need 0.47 s a micro-batch, 0.43 of the
# peak bandwidth against the 0.70 charged"): 1,208.1 tokens/s against 999.0 (+20.9%; step 6.78 s). Now 934.3 (-6.5%;
# step 8.77 s) because AutoGPTQ's eager unpacking runs at the rate optimum's prefill table measures for it at the
# README's library version on the same card (lora46: huggingface/optimum @0963862 tests/benchmark/README.md,
# Llama-2-13B on one A100-SXM4-80GB, autogptq-cuda-old minus fp16 = 271.75 ms for 16.5 B x 12.688e9 weights = 0.378
# of 2,039 GB/s; assumptions.GPTQ_EAGER_UNPACK_BANDWIDTH): 0.540 s a micro-batch, 4.32 s a step (was 2.33 s).
QWEN_14B_QLORA_MISSES: dict[int, str] = {}


@pytest.mark.parametrize(
    "seq",
    [
        pytest.param(seq, marks=pytest.mark.xfail(strict=True, reason=QWEN_14B_QLORA_MISSES[seq]))
        if seq in QWEN_14B_QLORA_MISSES
        else seq
        for seq in QWEN_14B_QLORA_STEPS
    ],
)
@pytest.mark.django_db
def test_qwen_14b_gptq_qlora_on_one_a100_at_the_readmes_speed(seq, bundled_catalog):
    # Passing: 2k published 1,388.5 tokens/s (11.8 s), ours 1,403.3 (+1.1%); 8k published 1,711.1 (38.3 s), ours
    # 1,482.6 (-13.4%: the 14B LoRA 8k row is -14% too, the width gap qlora44's notes name). 4k (20.1 s, 1,630.2)
    # is -7.7%, not asserted to keep the case count. Before lora46: 2k 1,435.6 (+3.4%), 8k 1,522.9 (-11.0%). lora46
    # (the GPTQ unpacking at optimum's measured 0.378, 4.32 s a step): 2k 1,222.8 (-11.9%), 8k 1,455.7 (-14.9%: at
    # the edge, the 14B LoRA 8k row's own -11.7% width gap plus a README Q-LoRA minus LoRA that falls to 2.3 s at 8k
    # against 3.8 s at 1k, which the flat per-pass unpacking does not model), 4k 1,411.9 (-13.4%, not asserted).
    spec = qwen_lora_spec(MODELS["14b"], seq, 1, qlora=True) | {
        "task": "qlora",
        "weight_quantization": "int4",
    }
    published = published_tokens_per_second(seq, QWEN_14B_QLORA_STEPS[seq])
    assert tokens_per_second(spec) == pytest.approx(published, rel=0.15)


# --- 2. LitGPT Llama 2 QLoRA (bitsandbytes NF4, double quantization) on one A100 40GB [LITGPT] -------------------------
def litgpt_lora(preset: str, seq: int, quantized: bool) -> dict:
    """LitGPT finetune/lora.py at 8641822: bf16-true (bf16 adapters and AdamW states), micro-batch 1, rank 8 on q
    and v with lora_dropout 0.05, no activation checkpointing on one device, 128 / 1 accumulation; bnb.nf4-dq is nf4 with double
    quantization (the engine's default)."""
    spec = {
        "task": "qlora" if quantized else "lora",
        "model": {"preset": preset},
        "precision": "bf16",
        "master_weights_fp32": False,
        "seq_len": seq,
        "micro_batch_size": 1,
        "gradient_checkpointing": "none",
        "lora": {"rank": 8, "targets": ["q_proj", "v_proj"], "dropout": 0.05},
        "gradient_accumulation_steps": 128,
        "training_tokens": 1e7,
    }
    return spec | ({"weight_quantization": "nf4"} if quantized else {})


def litgpt_row(preset: str, seq: int, quantized: bool) -> dict:
    report = size_spec_document(litgpt_lora(preset, seq, quantized), [A100_40], calibrate=False)
    return candidate(report, A100_40, 1)


def seconds_a_micro_batch(preset: str, seq: int, quantized: bool) -> float:
    return seq / litgpt_row(preset, seq, quantized)["throughput"]["training_tokens_per_second"]


# qlora49: the 4-bit path's memory, counted from the run's code (nothing fitted on LitGPT's rows). Three terms:
#  1. bitsandbytes 0.41.1 (18e827d6 "Version 0.41.1." bitsandbytes/autograd/_functions.py line 523) MatMul4Bit.forward
#     keeps `ctx.tensors = (A, B)`: every 4-bit linear's input, a ctx attribute backward never frees (fixed upstream
#     in 0.43.2, 9e753741). Inputs nobody else saves, a layer and token: attention input d, attention output d, MLP
#     input d (fc_1 and fc_2 share it), MLP projection input f, 2 B each: (3 d + f) x 2 x layers x 1,304 =
#     1.944 GB (13B: 3.044).
#  2. The LM head is 4-bit too: litgpt 8641822 lit_gpt/lora.py GPT.__init__ builds lm_head = LoRALinear(..),
#     whose `self.linear = torch.nn.Linear(..)` (line 119) is built under fabric.init_module, where Lightning
#     @71aed751 (litgpt's requirements.txt pin) bitsandbytes.py init_context replaces torch.nn.Linear by _Linear4bit;
#     the engine keeps it 16-bit: 32,000 x d x (2 - 0.516) B = -0.195 GB (13B -0.243).
#  3. Its unpacked copies, at the peak: Lightning's _Linear4bit._quantize_weight (bitsandbytes.py line 221) casts to
#     torch.half before quantize_4bit, so quant_state's dtype is fp16 and dequantize_4bit (functional.py, out =
#     torch.empty(shape, dtype=dtype)) writes an fp16 weight that MatMul4Bit's `.to(A.dtype)` (lines 516 and 547)
#     copies to bf16: 2 + 2 B a weight alive at once, the largest being the LM head's 32,000 x d (0.524 GB; 13B 0.655),
#     unpacked in the LM head's backward, the first op of the backward, when every saved tensor is alive.
# With the engine's 5% allocator slack on the tensors: 9.611 -> 11.835 GiB = 12.71 GB (-8.2%); 13B 15.744 -> 19.124
# GiB = 20.53 GB against 22.55 (-8.9%). relabelB48's retained-graph candidate (the previous micro-batch's 4-bit
# inputs, held by `loss` until the next forward's loss is bound, lines 216-220) adds 0 to one micro-batch's inputs:
# at most +6.6% (13B +5.2%), so the whole bracket is inside the bar.
# bnb49 (issue 26 item 7): the three terms above are now the product's, stated by the user (spec `quantization`,
# procurement/sizing/bnb_memory.py): bnb_version "0.41.1" (the table's release: the saved inputs before 0.43.2, the
# fp16-stored weights before 0.43.0) and lm_head_4bit (Lightning's plugin quantizes every nn.Linear). The defaults
# (current bitsandbytes, 16-bit head) add nothing, so every other QLoRA case is unchanged.
LITGPT_BNB = {
    "bnb_version": "0.41.1",
    "lm_head_4bit": True,
}  # [LITGPT] "Bitsandbytes 0.41.1", Lightning @71aed751
NF4_MEMORY_GB = {"llama-2-7b": 13.84, "llama-2-13b": 22.55}  # [LITGPT] the bnb.nf4-dq rows' Max GPU RAM


def litgpt_nf4_memory_gb(preset: str) -> float:
    spec = litgpt_lora(preset, 1304, True) | {"quantization": LITGPT_BNB}
    report = size_spec_document(spec, [A100_40], calibrate=False)
    return candidate(report, A100_40, 1)["memory"]["total_per_gpu_gib"] * GIB / 1e9


@pytest.mark.django_db
def test_litgpt_llama2_7b_nf4_qlora_memory_within_10_percent(bundled_catalog):
    # Was a strict xfail (qlora49 EXPLAINED: 10.32 GB, -25.4%: the terms above, no spec field for them). FIXED by
    # bnb49: stated with the run's stack, 12.71 GB (-8.2%): saved inputs 1.944 GB, LM head 4-bit -0.195 GB, its
    # fp16 + bf16 copies 0.524 GB, x 1.05 fragmentation (9.61 -> 11.83 GiB). Unstated, still 10.32 GB.
    assert litgpt_nf4_memory_gb("llama-2-7b") == pytest.approx(NF4_MEMORY_GB["llama-2-7b"], rel=0.10)


@pytest.mark.django_db
def test_litgpt_llama2_13b_nf4_qlora_memory_within_10_percent(bundled_catalog):
    # bnb49, the same table's 13B row (qlora49 counted it, 16.90 GB unstated, -25.1%): saved inputs (3 x 5,120 +
    # 13,824) x 2 B x 40 x 1,304 = 3.044 GB, LM head 32,000 x 5,120 x (2 - 0.516) B = -0.243 GB, its copies 4 B x
    # 32,000 x 5,120 = 0.655 GB, x 1.05: 20.53 GB (-8.9%).
    assert litgpt_nf4_memory_gb("llama-2-13b") == pytest.approx(NF4_MEMORY_GB["llama-2-13b"], rel=0.10)


# The unpacking's own time, isolated: the NF4 row minus the bf16 row of the same table, same data, same script
# (3.83 - 2.36 min and 6.55 - 3.19 min over 1,000 micro-batches). qlora44 charges 2 passes (no recomputation) x
# 2.5 B x 6.476e9 (13B: 12.69e9) block weights at 0.70 x 1,555 GB/s: 29.7 ms (58.3 ms) a micro-batch, whatever
# the length (ours at 512 tokens; 1,304 gives the same). fix46l: at bitsandbytes' measured 0.364 of the bandwidth
# (assumptions.BNB_NF4_UNPACK_BANDWIDTH, fitted on optimum @3ffebf99's bitsandbytes 0.41.1 prefill rows only; these
# two rows held out): 57.2 ms (112.1 ms), still short.
# qlora49: a third copy per call, located at the run's versions. Lightning @71aed751 (litgpt 8641822's requirements.txt
# pin) bitsandbytes.py _Linear4bit._quantize_weight (line 221) quantizes `weight.contiguous().to(device="cuda",
# dtype=torch.half)`, so quant_state's dtype is fp16 (bitsandbytes 0.41.1 Params4bit.cuda does the same, line 156,
# `.half()`, until 0.43.0); dequantize_4bit writes fp16 (functional.py `out = torch.empty(shape, dtype=dtype)`) and
# MatMul4Bit (18e827d6 _functions.py lines 516 / 547) casts it `.to(A.dtype)`, bf16 under bf16-true: read 2 + write 2
# B a weight, forward and backward, on every 4-bit weight, the LM head's included (lit_gpt/lora.py's lm_head is a
# torch.nn.Linear that init_context makes 4-bit; the engine keeps it 16-bit). optimum's 0.364 was measured with fp16
# compute (no cast), so it does not hold this. Counted at the engine's streaming 0.70 (assumptions.ACHIEVED_BANDWIDTH)
# of 1,555 GB/s, nothing fitted on these rows: 2 x 4 B x (block weights + 32,000 x d) = 48.6 ms (13B 94.5 ms) plus the
# LM head's own unpacking at 0.364, 1.2 ms (1.4 ms).
# aud49q / bnb49: litgpt 8641822 finetune/lora.py line 216 calls `model(input_ids, lm_head_chunk_size=128)` and
# lit_gpt/lora.py line 502 applies lm_head per 128-token chunk, so the 4-bit head is unpacked and cast ceil(T / 128)
# times a pass, not once: a chunk 2 x 4 B x V d at 0.70 + 2 x 2.5 B x V d at 0.364 of 1,555 GB/s (7B 2.12 ms,
# 13B 2.65 ms). The time is not charged (bnb49 prices the stated stack's memory only): the same cast count
# overshoots the same table's other nf4-dq rows (test_outside_qlora_fp16copy_audit_stop49).
NF4_SPEED = {
    "llama-2-7b": (
        88.2,
        "UNEXPLAINED: [LITGPT] bnb.nf4-dq minus bf16 LoRA, 7B: published 88.2 ms a micro-batch (3.83 - 2.36 min over "
        "1,000); ours 57.2 ms (-35%; 2 passes x 2.5 B x 6.476e9 block weights at optimum @3ffebf99's measured 0.364 of "
        "1,555 GB/s, assumptions.BNB_NF4_UNPACK_BANDWIDTH). qlora49 located a term the engine leaves out: Lightning "
        "@71aed751 bitsandbytes.py line 221 quantizes from torch.half, so bitsandbytes 0.41.1's dequantize_4bit returns "
        "fp16 and MatMul4Bit's .to(A.dtype) (18e827d6 _functions.py 516 / 547) casts every 4-bit weight to bf16, "
        "forward and backward, the LM head included (4-bit in litgpt 8641822): 2 x 4 B x 6.607e9 at 0.70 = 48.6 ms + "
        "the LM head's unpacking 1.2 ms -> 106.9 ms (+21.2%), over the bar. Counted as the run's code runs it, the "
        "head is unpacked and cast once a 128-token chunk (finetune/lora.py line 216 lm_head_chunk_size=128, "
        "lit_gpt/lora.py line 502; aud49q): 2.12 ms a chunk, 4 chunks at the engine's 512 tokens -> 113.3 ms "
        "(+28.4%), 11 at the longest 1,304 -> 128.1 ms (+45.2%), further over. The same cast count overshoots every "
        "sibling nf4-dq row of the table (phi-1.5 +95%, StableLM Alpha 3B +47%, this row +21%, 13B +3%; aud49q): how "
        "much of the cast's GPU work shows in this eager, host-synchronised step is unsized (the bf16 row's 141.6 ms "
        "a micro-batch is above the engine's bf16 step at 512 tokens, 110.2 ms, and 256, 75.6 ms: a host-bound step "
        "hiding GPU work is the candidate; the run's length distribution and host time a micro-batch are not "
        "published). Earlier: fixl44's host kernels (3 a double-quantized call) leave the nf4 host floor under the "
        "GPU's work; 0.41's two torch.cuda.set_device a ctypes call have no measured cost. bnb49 prices the stated "
        "stack's memory only (quantization.bnb_version / lm_head_4bit), not this time. Best lead: a per-micro-batch "
        "trace of this run (host vs GPU time)",
    ),
    "llama-2-13b": (
        201.6,
        "UNEXPLAINED: [LITGPT] bnb.nf4-dq minus bf16 LoRA, 13B: published 201.6 ms a micro-batch (6.55 - 3.19 min over "
        "1,000); ours 112.1 ms (-44%; 2 passes x 2.5 B x 12.69e9 block weights at optimum's measured 0.364 of 1,555 "
        "GB/s). Located (qlora49, re-read by aud49q): Lightning @71aed751 bitsandbytes.py line 221 quantizes from "
        "torch.half, so bitsandbytes 0.41.1's dequantize_4bit returns fp16 and MatMul4Bit's .to(A.dtype) (18e827d6 "
        "_functions.py 516 / 547) writes a bf16 copy of every 4-bit weight, forward and backward, the LM head's "
        "included (lit_gpt/lora.py lm_head's torch.nn.Linear under init_context, bitsandbytes.py 130). Counted at "
        "the engine's streaming 0.70: 2 x 4 B x (12.69e9 + 32,000 x 5,120) = 94.5 ms + the head's unpacking 1.4 ms "
        "-> 208.0 ms (+3.2%). Withdrawn as EXPLAINED (aud49q): the same count from the same code on the same "
        "table's four nf4-dq rows gives phi-1.5 +95%, StableLM Alpha 3B +47%, Llama 2 7B +21%, this row +3%: a size "
        "that lands one row and misses every sibling is not (b). Counted as the run's code runs it, the head is "
        "unpacked and cast once a 128-token chunk (finetune/lora.py line 216 lm_head_chunk_size=128, lit_gpt/lora.py "
        "line 502): 2.65 ms a chunk, 4 at 512 tokens -> 216.0 ms (+7.1%), 11 at the longest 1,304 -> 234.5 ms "
        "(+16.3%). The cast is real GPU work; how much of it shows in a host-synchronised eager step is unsized, and "
        "the overshoot shrinking with model size points at a host-bound step hiding it. bnb49 prices the stated "
        "stack's memory only, not this time. Best lead: a per-micro-batch trace of these runs (host vs GPU time)",
    ),
}


@pytest.mark.parametrize(
    "preset",
    [
        pytest.param(
            preset,
            marks=pytest.mark.xfail(strict=True, reason=NF4_SPEED[preset][1]),
        )
        for preset in NF4_SPEED
    ],
)
@pytest.mark.django_db
def test_litgpt_nf4_unpacking_time_a_micro_batch_within_15_percent(preset, bundled_catalog):
    ours_ms = 1000 * (seconds_a_micro_batch(preset, 512, True) - seconds_a_micro_batch(preset, 512, False))
    assert ours_ms == pytest.approx(NF4_SPEED[preset][0], rel=0.15)


# --- Defect pinned (not a published case): GPTQ int4 without recomputation --------------------------------------------
# qlora_dequant.py charges `int4` one unpacking pass without recomputation because "torch.matmul(x, weight), whose
# backward uses the saved fp16 weight" (AutoGPTQ qlinear_cuda_old.py @c80855e2 QuantLinear.forward, eager branch:
# `out = torch.matmul(x, weight)`, x requiring grad, so autograd keeps `weight`). That saved 16-bit copy of every
# frozen linear lives from the forward to the backward: 2 B x 6.476e9 = 12.1 GiB on a 7B. The engine's memory did
# not count it before fixl44: Qwen-7B at 2k, no recomputation, int4 19.96 GiB against nf4 19.87 GiB (the 4.25 /
# 4.127 bits only). The time took the saved copy's benefit (1 pass, not 2) and the memory left out its cost.


@pytest.mark.django_db
def test_gptq_int4_without_recomputation_holds_the_unpacked_weights(bundled_catalog):
    # Was a strict xfail: qlora44 defect, the 16-bit copy AutoGPTQ's torch.matmul(x, weight) keeps for the backward
    # uncounted (int4 19.96 GiB against nf4 19.87 at 2k) while the time takes its one-pass benefit. Now
    # int4 32.63 GiB against nf4 19.87 (+12.76 GiB: the copy 12.06 GiB = 2 B x 6,476,005,376 block weights, plus the
    # flat fragmentation fraction on it) because fixl44 counts it as memory's own line, dequantized_weights_gib
    # (qlora_dequant.saved_copy_bytes: every block's without full recomputation, the largest block's under it,
    # 0.38 GiB on this 7B at 2k: 11.35 GiB against 10.95 before).
    def total_gib(quantization: str) -> float:
        spec = qwen_lora_spec(MODELS["7b"], 2048, 1, qlora=True) | {
            "task": "qlora",
            "weight_quantization": quantization,
            "gradient_checkpointing": "none",
        }
        report = size_spec_document(spec, [A100_80], calibrate=False)
        return candidate(report, A100_80, 1)["memory"]["total_per_gpu_gib"]

    block_linears_7b = 6_476_005_376
    assert total_gib("int4") - total_gib("nf4") >= 0.9 * 2 * block_linears_7b / GIB
