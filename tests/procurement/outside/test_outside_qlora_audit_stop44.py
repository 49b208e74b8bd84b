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


NF4_MEMORY = (
    "UNEXPLAINED: [LITGPT] Llama 2 7B bnb.nf4-dq, 1,304 tokens: published 13.84 GB; ours 10.32 GB (9.61 GiB, -25.4%). The same "
    "table's bf16 LoRA row passes (21.30 GB against ours 20.41, -4.2%; 13B 38.12 against 36.68, -3.8%) while both "
    "NF4 rows miss alike (13B: 22.55 against 16.90, -25.1%), so the gap is the 4-bit path's. Cause located, in part: "
    "bitsandbytes before 0.43.2 saved every 4-bit linear's input for a backward that never reads it (MatMul4Bit."
    "forward ctx.tensors = (A, B); fixed by bitsandbytes-foundation/bitsandbytes 9e753741 'fix QLoRA mem bug: "
    "delete useless buffered activation', 2024-07-16). Inputs nobody else saves, a layer and token: attention "
    "input d (the adapter reads dropout(x)), attention output d, MLP input d, down-projection input f, 2 B each: "
    "(3 x 4,096 + 11,008) x 2 x 32 x 1,304 = 1.95 GB, to 12.3 GB (-11%); the other ~1.6 GB unsized. EXPLAINED in part (a library version no spec field states); "
    "not qlora44's change, which moved no memory. relabelB48 (stop 48): UNEXPLAINED, not 'EXPLAINED in part' "
    "(explain-rules has no partial label, and the sized part leaves -11%, outside 10%). A second candidate from the "
    "same sources, for cls45e's activation-like residual: bitsandbytes 0.41.1 (18e827d6 bitsandbytes/autograd/"
    "_functions.py lines 522-523) keeps A as a Python attribute (ctx.tensors = (A, B)), not through "
    "ctx.save_for_backward, so backward never frees it: it lives as long as the graph; litgpt 8641822 "
    "finetune/lora.py lines 216-220 keep logits and loss bound until the next micro-batch's forward returns, so the "
    "previous micro-batch's 4-bit inputs stay allocated through the next forward and backward. Size: 0 to the "
    "longest example's own 4-bit inputs (1.95 GB, 2.05 with the 5% slack): 12.37-14.42 GB against 13.84 (13B: "
    "3.05 GB, 20.1-23.3 GB against 22.55); both brackets hold the published figure, and both rows ask the same "
    "companion (with the engine's 4.08 / 6.31 MB a token of other activations: a ~1,240-token micro-batch next to "
    "the 1,304-token one, 7B 1,236, 13B 1,253; ~1,080 both if the bf16 rows' own -4% is shared). Not sized: "
    "iteration 0 is the longest example (line 212, get_batch) and the rest are random Alpaca draws, whose order is "
    "not published (nor how many examples reach ~1,240 tokens; only the longest, 1,304, is). (c) would need a spec field for the bitsandbytes "
    "release (before 0.43.2, 9e753741) and a retained-graph term; not landed without a point size"
)


@pytest.mark.xfail(strict=True, reason=NF4_MEMORY)
@pytest.mark.django_db
def test_litgpt_llama2_7b_nf4_qlora_memory_within_10_percent(bundled_catalog):
    ours_gb = litgpt_row("llama-2-7b", 1304, True)["memory"]["total_per_gpu_gib"] * GIB / 1e9
    assert ours_gb == pytest.approx(13.84, rel=0.10)  # [LITGPT] 7 B | Llama 2 | bnb.nf4-dq | 13.84 GB


# The unpacking's own time, isolated: the NF4 row minus the bf16 row of the same table, same data, same script
# (3.83 - 2.36 min and 6.55 - 3.19 min over 1,000 micro-batches). qlora44 charges 2 passes (no recomputation) x
# 2.5 B x 6.476e9 (13B: 12.69e9) block weights at 0.70 x 1,555 GB/s: 29.7 ms (58.3 ms) a micro-batch, whatever
# the length (ours at 512 tokens; 1,304 gives the same). fix46l: at bitsandbytes' measured 0.364 of the bandwidth
# (assumptions.BNB_NF4_UNPACK_BANDWIDTH, fitted on optimum @3ffebf99's bitsandbytes 0.41.1 prefill rows only; these
# two rows held out): 57.2 ms (112.1 ms), still short.
NF4_SPEED = {
    "llama-2-7b": (88.2, "7B: published 88.2 ms a micro-batch; ours 57.2 ms (-35%; 29.7 ms, -66%, at 0.70)"),
    "llama-2-13b": (
        201.6,
        "13B: published 201.6 ms a micro-batch; ours 112.1 ms (-44%; 58.3 ms, -71%, at 0.70)",
    ),
}
NF4_SPEED_WHY = (
    "UNEXPLAINED: [LITGPT] bnb.nf4-dq minus bf16 LoRA, {row}. Per 4-bit linear call (7B: 161 linears x 2 passes = 322 calls) the "
    "published gap is 274 us against ~94 us of HBM traffic at 0.70 (fix46l: ~178 us at the 0.364 optimum @3ffebf99's "
    "bitsandbytes 0.41.1 prefill rows measure for dequantize_4bit on an A100, 42.79 ms a pass on Llama-2-13B; "
    "assumptions.BNB_NF4_UNPACK_BANDWIDTH): bitsandbytes 0.41.1's dequantize_4bit (read at "
    "tag 0.41.0, functional.py) wraps each ctypes kernel in pre_call / post_call (torch.cuda.set_device twice) and "
    "dequantizes the absmax blocks in a second ctypes call plus an add (nf4-dq over nf4 is +0.15 min, 28 us a "
    "call: launch-bound), so at Alpaca's short examples the host's Python a call, not the bandwidth, sets the "
    "cost; that the gap grows 2.3x from 7B to 13B (weights 1.9x, calls 1.25x) says the GPU traffic runs below "
    "0.70 as well. Current bitsandbytes (torch custom ops, a fused gemm_4bit below 1,536 rows) is another cost. "
    "fixl44 counts bitsandbytes' kernels a call in the eager host floor (a double-quantized dequantize_4bit is 3: "
    "the absmax blocks' dequantize_blockwise, the + offset, the 4-bit kernel; read at bitsandbytes 18e827d6 "
    "'Version 0.41.1.' and the 0.49.2 tag; was 1), forward and backward: the 7B's nf4 host floor 69.1 -> 86.1 ms a "
    "micro-batch (13B 86.4 -> 107.7) stays under its GPU work, 139.9 ms (13B 271.9), so no figure moves; even "
    "host-bound, the counted kernels put nf4 25.5 ms (13B 31.9) over the bf16 LoRA floor, under a third of the "
    "published gap. UNEXPLAINED by a sized term: 0.41's host work a ctypes call without a kernel (two "
    "torch.cuda.set_device) has no measured cost and the spec states no bitsandbytes version. fix46l's measured "
    "rate closes half of each gap (7B 29.7 -> 57.2 ms, 13B 58.3 -> 112.1); the rest, 31 / 90 ms a micro-batch, "
    "grows faster than the weights (1.9x) and the calls (1.25x) from 7B to 13B, so it is not the host's per-call "
    "cost alone either: UNEXPLAINED. relabelB48 (stop 48): label set, figure unchanged. Not the retained 4-bit "
    "inputs (NF4_MEMORY: memory, no kernel). Best lead: a measured per-call time of bitsandbytes 0.41.1's "
    "dequantize_4bit at Alpaca's few hundred tokens on an A100 (host Python with two torch.cuda.set_device a "
    "ctypes call, three kernels under nf4-dq); no source publishes one"
)


@pytest.mark.parametrize(
    "preset",
    [
        pytest.param(
            preset,
            marks=pytest.mark.xfail(strict=True, reason=NF4_SPEED_WHY.format(row=NF4_SPEED[preset][1])),
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
