"""Issue 26, judged from outside (third round, branch x26): published runs no earlier test used.

Each test is one case an outside GPU engineer chose from a published run, with its source and the hand
computation beside it. The specs go through the service `manage.py recommend` uses
(``workload_spec_parse`` -> ``ranking_options_parse`` -> ``recommendation_compute``), through
``size_spec_document`` as `manage.py size` does, or through the sizing page's form. Tolerances: 15% for
throughput, 10% for memory, unless the source's own spread is larger (said where so). Disagreements are
strict xfails with the measured gap and the likely cause.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from procurement.api.sizing import size_spec_document
from procurement.services.recommendations import (
    ranking_options_parse,
    recommendation_compute,
    workload_spec_parse,
)

TOP = 5
GIB = 2**30
GEFORCE = {"rtx-3090", "rtx-4090", "rtx-5090"}
TWENTY_FOUR_GB = ("rtx-4090", "rtx-3090", "a10g", "l4", "a10")


def ranked(spec: dict, top: int = TOP, **options) -> list[dict]:
    """The top rows, ranked the way `manage.py recommend` ranks them."""
    parsed = ranking_options_parse({"top": top} | options)
    return recommendation_compute(spec=workload_spec_parse(copy.deepcopy(spec)), options=parsed).as_report()[
        "results"
    ]


def candidate(spec: dict, gpu: str, count: int, calibrate: bool = False) -> dict:
    report = size_spec_document(copy.deepcopy(spec), [gpu], calibrate=calibrate)
    return next(c for c in report["candidates"] if c["gpu"] == gpu and c["gpus"] == count)


def describe(rows: list[dict]) -> str:
    return "; ".join(
        f"{r['provider']} {r['instance_type']} {r['pricing_model']} {r['instances']}x{r['gpus_per_instance']} "
        f"{r['gpu']} ZeRO-{r['plan']['zero_stage']} TP {r['plan']['tensor_parallel']} "
        f"PP {r['plan']['pipeline_parallel']} {r['hours']:.2f} h {r['total_cost']}"
        for r in rows
    )


# --- 1. Guanaco 33B: QLoRA on one 24 GB card (QLoRA paper) -------------------------------------------------
# Dettmers et al. 2023, arXiv:2305.14314 (QLoRA) trains Guanaco 33B on a single 24 GB consumer GPU (the
# paper's Guanaco section, paraphrased). Corroborated by axolotl-ai-cloud/axolotl
# examples/archived/yi-34B-chat/README.md @1377ccc3e46bdc1c8b01a9c23da57446b85aa1d5 ("possible to finetune a
# 34B model on a GPU with 24GB of VRAM", QLoRA on an RTX 4090 "using 97% of available memory"). Recipe: artidoro/qlora scripts/finetune_guanaco_33b.sh @0b46ca80a0bb57b255e59bd0e19b190e51751d82
# (r 64 on all linear layers, NF4 + double quantization, bf16, gradient checkpointing, paged AdamW 8-bit,
# target 512 + source 16 tokens; qlora.py casts the LoRA layers to bf16 under --bf16, hence
# master_weights_fp32: false). LLaMA-33B: 60 layers x 6656, 52 heads, intermediate 17,920, vocab 32,000.
# By hand: NF4 weights 32.5e9 x 4.127 bits = 15.6 GiB + 16-bit embeddings/head 2 x 32,000 x 6,656 x 2 B =
# 0.8 GiB; adapters 64 x (4 x 13,312 + 3 x 24,576) x 60 = 488M, bf16 weights + grads + 8-bit states 2.7 GiB;
# the peak lies between 16.4 GiB and the 24 GB card (22.35 GiB). At batch 1 x 528 tokens.
GUANACO_33B = {
    "name": "guanaco-33b-qlora",
    "task": "qlora",
    "model": {
        "name": "llama-33b",
        "num_layers": 60,
        "hidden_size": 6656,
        "num_attention_heads": 52,
        "intermediate_size": 17920,
        "vocab_size": 32000,
    },
    "lora": {"rank": 64, "targets": "all-linear"},
    "micro_batch_size": 1,
    "seq_len": 528,
    "gradient_checkpointing": "full",
    "optimizer": "paged_adamw_8bit",
    "master_weights_fp32": False,
    "parallelism": {"gpus": 1},
    "training_tokens": 1875 * 16 * 528,
}


@pytest.mark.django_db
def test_guanaco_33b_qlora_fits_one_24gb_card_shown_tight_with_its_margin(bundled_catalog):
    # Classes 3 (one GPU as stated), 6 (tight fits shown with their margin) and 7 (memory).
    params = 60 * (4 * 6656**2 + 3 * 6656 * 17920) + 2 * 32000 * 6656
    floor = (params - 2 * 32000 * 6656) * 4.127 / 8 / GIB + 2 * 32000 * 6656 * 2 / GIB
    assert 16.2 < floor < 16.6
    rows = ranked(GUANACO_33B)
    assert rows and all(row["gpus"] == 1 for row in rows), describe(rows)
    # a 24 GB one-card row is in the default top five (product: L4 g6.xlarge spot at #2, 7.42 USD)
    small = [row for row in rows if row["gpu"] in TWENTY_FOUR_GB]
    assert small, describe(rows)
    for row in small:
        assert floor <= row["memory_per_gpu_gib"] <= 24e9 / GIB  # product 21.1 GiB
        assert row["tight"] and row["memory_margin"]["margin_gib"] > 0
        assert any("tight" in w for w in row["warnings"] + row["reasons"])
    # rank 1 by hand: compute = effective price x hours (product: g6e.2xlarge spot, 0.295691 x 9.018 h = 2.67)
    first = rows[0]
    compute = float(first["effective_price_per_hour"]) * first["instances"] * first["hours"]
    assert float(first["cost_breakdown"]["compute"]) == pytest.approx(compute, abs=0.01)


# --- 2. Answer.AI FSDP + QLoRA: Llama 2 70B on two 24 GB gaming cards ----------------------------------------
# https://www.answer.ai/posts/2024-03-06-fsdp-qlora ("an open source system, based on FSDP and QLoRA, that can
# train a 70b model on two 24GB GPUs", RTX 3090 or 4090). Spec: 2 GPUs, FSDP, NF4, checkpointing, 512 tokens.
# Expected: rows keep 2 GPUs and FSDP (class 3); a 24 GB GeForce pair fits (peak under 22.35 GiB a card:
# NF4 weights 68.7e9 x 4.127 / 8 / 2 = 16.5 GiB + half the 16-bit embeddings/head 0.5 GiB); and every
# GeForce pair says its FSDP gathers go through host memory (no peer-to-peer since the 40 series, class 4).
ANSWERAI_70B = {
    "name": "answerai-70b-fsdp-qlora",
    "task": "qlora",
    "model": {"preset": "llama-2-70b"},
    "lora": {"rank": 64, "targets": "all-linear"},
    "micro_batch_size": 1,
    "seq_len": 512,
    "gradient_checkpointing": "full",
    "master_weights_fp32": False,
    "parallelism": {"gpus": 2, "zero_stage": "fsdp"},
    "training_tokens": 1e7,
}


@pytest.mark.django_db
def test_answerai_70b_fsdp_qlora_keeps_two_gpus_and_flags_geforce_pcie(bundled_catalog):
    rows = ranked(ANSWERAI_70B)
    assert rows and all(r["gpus"] == 2 and r["plan"]["zero_stage"] == 3 for r in rows), describe(rows)
    geforce = ranked(ANSWERAI_70B, gpus=sorted(GEFORCE))
    assert geforce, "no GeForce pair"
    for row in geforce:
        # a 24 GB GeForce card holds 24 GiB (24,576 MiB); product 22.97 GiB, tight
        assert row["gpus"] == 2 and row["memory_per_gpu_gib"] <= 24.0
        text = " ".join(row["warnings"] + [row["interconnect"]["summary"]]).lower()
        if row["gpu"] in {"rtx-4090", "rtx-5090"}:
            assert "without peer-to-peer" in text and "host" in text, describe([row])


# --- 3. nanoGPT: GPT-2 124M on one 8 x A100 40GB node, about 4 days (karpathy/nanoGPT README) ---------------
# karpathy/nanoGPT README.md ("reproduces GPT-2 (124M) on OpenWebText, running on a single 8XA100 40GB node
# in about 4 days of training"); config/train_gpt2.py: batch 12 x 1024 tokens x 5 accumulation x 8 GPUs =
# 491,520 tokens an iteration, 600,000 iterations = 294.9e9 tokens. 4 days = 96 h, i.e. 853k tokens/s,
# 27% of the A100's 312 TFLOPS at the engine's own 7.98e8 FLOPs a token. "About 4 days" is +-half a day, so
# 20%. Product: 51.4 h (MFU 0.51) until mfu26, now 65.3 h (-32%); see the xfail (stop 41: unexplained).
NANOGPT = {
    "name": "nanogpt-gpt2-124m",
    "task": "pretrain",
    "model": {
        "name": "gpt2-124m",
        "num_layers": 12,
        "hidden_size": 768,
        "num_attention_heads": 12,
        "intermediate_size": 3072,
        "vocab_size": 50304,
        "gated_mlp": False,
        "tie_word_embeddings": True,
    },
    "micro_batch_size": 12,
    "seq_len": 1024,
    "gradient_accumulation_steps": 5,
    "parallelism": {"gpus": 8},
    "training_tokens": 600_000 * 491_520,
}


# Stop 41, the publisher's run re-read (karpathy/nanoGPT): the "about 4 days" (README, d2705bd9, 2023-01-31) is one
# 8-GPU iteration of 491,520 tokens in about 576 ms. karpathy/nanoGPT issue #110 (2023-02-02) measured it: 8 x A100,
# PyTorch 2.0 nightly, the default train.py of the day (038ce894: batch 12 x 1,024, gradient_accumulation_steps 5
# a rank, bf16, compile True, bias False, dropout 0 so model.py takes scaled_dot_product_attention, flash, since
# ae06d0b1): "time 562 ms" an iteration, which the author answered "looks pretty good": 600,000 x 0.562 s = 93.7 h.
# config/train_gpt2.py's own header says "wait ~5 days" (120 h). With evaluation every 1,000 iterations (200 x 2
# forward batches, +2.7%) the measured iteration gives 96.2 h. The spec has what the run ran (bf16 and flash
# attention, the defaults; the 0.5M-token batch); torch.compile has no field for a language model, and compile
# makes the run faster, not slower, so no unstated setting accounts for the gap.
#
# fms26 (stop 41): the same model on the same card and sequence under another published stack. llm-foundry's MPT
# benchmark table (mosaicml/llm-foundry scripts/train/benchmarking/README.md @c90b9b31, "A100 40GB" section) has
# "125m | 1024 | 8 | a100_40gb | 40.89 | ... | 52 | 3 | ... | 148289 | ... | bf16 | PURE | FULL_SHARD": d 768, 12
# layers, 12 heads, vocabulary 50,368, 8 x A100 40GB, sequence 1,024: 148,289 tokens/s/GPU. The engine gives
# 156,916 for the nanoGPT spec (+5.8%), nanoGPT's measured iteration 491,520 / 8 / 0.562 s = 109,324 (0.737 of
# MPT's on the identical model, card and length). So neither the card (the 40GB's 1.555 TB/s and clocks are in
# that row) nor the width term's memory-bound share (which gives MPT's row +5.8%) is the gap: any small-model term
# that took the engine to nanoGPT's rate would put it 26% under MPT's. What differs is the software: MPT ran (llm-foundry
# @300cc5c58, 2023-05-03, where the row first appears in this repository) flash-attn's fused cross-entropy
# (llmfoundry/models/mosaic_gpt/mosaic_gpt.py line 510, loss_fn default 'fused_crossentropy'), low-precision
# LayerNorm and triton flash attention (scripts/train/benchmarking/submit_benchmarks.py: low_precision_layernorm
# True, attn_impl default 'triton'), micro-batch 52 x 1,024; nanoGPT @038ce894 ran F.cross_entropy under bf16
# autocast (an fp32 op: 50,304 logits a token upcast), its own
# LayerNorm and new_gelu through a January-2023 torch.compile, SDPA, micro-batch 12 x 1,024 under DDP. Bound, not
# a split: an eager fp32 cross-entropy moves about 46 bytes a logit (bf16 logits, fp32 copy, log-softmax passes,
# fp32 gradient, bf16 cast) = 2.3 MB a token, 91 ms of the 562 ms iteration at 1.555 TB/s for 61,440 tokens a
# GPU, against about 16 ms for the fused loss (8 bytes a logit): at most 75 of the 148 ms per iteration between the
# two stacks (562 vs 61,440 / 148,289 = 414 ms), and how much of that the compiler fused is not published.
# cls45b: the stack the published figures ran, from the repository's history (karpathy/nanoGPT). The README line
# ("about 4 days", written at d2705bd9, 2023-01-31) and issue #110's 562 ms (2023-02-02) both predate 77e7e04c
# (2023-02-04 16:06 UTC). fixb45 (aud45b's note): the README restated the figure after the padding: 23a8e701
# (2023-02-05 19:31 UTC, "revamp the readme") added "This will run for about 4 days using PyTorch Distributed Data
# Parallel (DDP)", 27.4 h after 77e7e04c, when a padded 600,000-iteration run could not have finished (>= 70 h even
# at 25% less time): a restatement of the pre-padding figure, not a new measurement (the number stands unchanged
# in README.md through 3adf61e1, 2025-11-12). 77e7e04c: "padding 50257 -> 50304 vocab_size, the nerest multiple of 64. the biggest deal smallest
# optimization i've made in recent past, about 25% faster. this is because the last layer is a major latency
# bottleneck consuming about 40% of latency due to the very high channel count." Its diff changes train.py's default
# for a dataset without meta.pkl (OpenWebText) from vocab_size = 50257 to 50304: the run the figures time had an
# odd output dimension, so the tied lm_head's three GEMMs ([12,288 x 768] x [768 x 50,257] forward, and both
# backward products) and the logits' rows (50,257 bf16, 100,514 bytes: not 16-byte aligned) missed cuBLAS's aligned
# tensor-core paths (NVIDIA's Matrix Multiplication Background User's Guide, docs.nvidia.com/deeplearning/performance/
# dl-performance-matrix-multiplication, sec. 2.2 "Tensor Core Requirements" and its Figure 2, cuBLAS 10.1 / 11.0 on
# dimensions that are and are not multiples of 8; NVIDIA/cutlass issue #75: tensor-core kernels "require 128b aligned
# memory accesses", cuBLAS's documented tensorop restriction). This spec, written from the later code, states 50,304. Sized by the author's
# "about 25% faster" (bench.py @77e7e04c: batch 12 x 1,024, bf16, compile, the train.py micro-batch), two readings:
# as 1.25x the rate, 562 ms / 1.25 = 449.6 ms an iteration, 600,000 x 0.4496 s = 74.9 h (+2.7% evaluation: 77.0 h),
# against which the product's 65.3 h is -15.2%; as 25% less time, 421.5 ms, 72.1 h, -9.5%. The residual is
# bracketed at -9.5..-15.2%, on the edge of the 15% speed tolerance, not inside it (aud45b); the same padding puts nanoGPT at 491,520 / 8 / 0.450 = 136.5k tokens/s/GPU, 0.92 of
# MPT's 148,289 on the aligned 50,368 vocabulary (0.737 unpadded). Stating the run's vocab_size 50,257 does not
# move the product (65.24 h): it prices a GEMM by its FLOPs at the width ceiling and has no alignment term.
# (Also after the measurement: e170e408, 2023-02-03, the fused AdamW; 3fd4c0c5, 2023-02-04, the batch prefetch,
# "about 1ms": small at 124M parameters, not sized.)
NANOGPT_AS_RUN = copy.deepcopy(NANOGPT)
NANOGPT_AS_RUN["model"]["vocab_size"] = 50257  # nanoGPT @038ce894 train.py: GPT-2's 50,257 for OpenWebText


@pytest.mark.xfail(
    strict=True,
    reason="UNEXPLAINED (withdrawn by audx48b: (b) fails: the author's 'about 25% faster' read two ways gives "
    "-9.5% (25% less time) and -15.2% (1.25x the rate, the usual reading), a bracket whose common end is outside "
    "15%, as the reason itself says; and the published 96 h is, by the reason's own account, a carried-over "
    "figure, not a padded run's measurement): "
    "EXPLAINED: (cls45b) the published 4 days and issue #110's 562 ms an iteration ran nanoGPT before "
    "karpathy/nanoGPT@77e7e04c padded the vocabulary 50,257 -> 50,304 ('about 25% faster ... the last layer is a "
    "major latency bottleneck consuming about 40% of latency'): an odd output dimension, whose lm_head GEMMs and "
    "logits rows (100,514 bytes, not 16-byte aligned) miss cuBLAS's aligned tensor-core kernels. Size: the "
    "author's 'about 25% faster' read as 25% less time puts the padded run at 421.5 ms an iteration, 72.1 h with "
    "evaluation, and the product's 65.3 h at -9.5%; read as 1.25x the rate, 449.6 ms, 77.0 h, -15.2%. Of the -32%, "
    "the padding is 17-23 points; the residual, nanoGPT's January-2023 stack against llm-foundry's fused loss and "
    "layernorm, is -9.5..-15.2%, on the edge of the 15% speed tolerance (0.2 points outside it on the rate "
    "reading), not inside it. EXPLAINED still holds, at the edge (fixb45): the mechanism is in the source and sized "
    "from the author's own measurement, and the residual is the size and sign of a padded PyTorch GPT-2 124M on 8 "
    "A100s that passes (build-nanogpt, 137.5k tokens/s/GPU, product +14.1%: "
    "test_padded_nanogpt_family_rate_on_8_a100), so what is left is the engine's tolerance on this stack, not an "
    "unknown; on the rate reading this row alone would stay outside 15%. The README's 'about 4 days' was restated "
    "after the padding (karpathy/nanoGPT@23a8e701, 2023-02-05, 27.4 h after 77e7e04c: 'This will run for about 4 "
    "days using PyTorch Distributed Data Parallel (DDP)'), a carried-over figure, not a new measurement: a padded "
    "run takes >= 70 h. Spec: vocab_size 50,257 can be stated "
    "and changes nothing (65.24 h; test_nanogpt_stated_vocabulary_does_not_move_the_product): the engine prices a "
    "GEMM by its FLOPs and has no dimension-alignment term, and no field can state a kernel's alignment penalty. "
    "History: nanoGPT GPT-2 124M on 8 x A100 40GB: engine 65.3 h against about 96 h (-32%; 93.7 h at the 562 ms an "
    "iteration nanoGPT issue #110 measured with the same train.py, compile, flash attention and bf16). "
    "EXPLAINED in size, not in mechanism (fms26): the gap is nanoGPT's January-2023 software stack, not the card "
    "or the model's memory-bound work. llm-foundry's MPT table (@c90b9b31) measured the same 125M shape on 8 x "
    "A100 40GB at sequence 1,024: 148,289 tokens/s/GPU; the engine gives 156,916 (+5.8%), nanoGPT ran 109,324 "
    "(0.737 of MPT's on the identical model, card and length), so a small-model term large enough to reach nanoGPT "
    "would put MPT's row 26% low. The stacks differ in the loss (MPT @300cc5c58: flash-attn fused cross-entropy; nanoGPT: "
    "F.cross_entropy upcast to fp32 under autocast, at most 75 of the 148 ms an iteration between them if the "
    "compiler fused none of it), layernorm kernels and micro-batch (52 vs 12 sequences); the split among them "
    "needs an A100 profile of this run, which is not published. Checked and not the cause: evaluation (about "
    "3%), the DDP all-reduce (under 1%), the batch (stated). "
    "t44: rechecked at 65.3 h (-32%), unchanged. Spec: not expressible; the gap is nanoGPT's January-2023 "
    "stack against llm-foundry's on the same shape and card (test_nanogpt_gap_is_the_stack_not_the_card), and "
    "training_stack has no value for it, none sized.",
)
@pytest.mark.django_db
def test_nanogpt_gpt2_124m_hours_on_8_a100_40gb(bundled_catalog):
    rows = ranked(NANOGPT, top=20, gpus=["a100-sxm4-40gb"], pricing_models=["on_demand"], instance_counts=[1])
    rows = [r for r in rows if r["gpus"] == 8 and r["plan"]["zero_stage"] == 0]
    assert rows
    assert rows[0]["hours"] == pytest.approx(96, rel=0.20)


# llm-foundry @c90b9b31 scripts/train/benchmarking/README.md, "A100 40GB" table, row "125m | 1024 | 8 | a100_40gb":
# 148,289 tokens/s/GPU (MFU 40.89 in MPT's count).
MPT_125M_A100_40GB_SEQ1024 = 148289
NANOGPT_ISSUE_110 = 491_520 / 8 / 0.562  # tokens/s/GPU at the 562 ms an iteration


@pytest.mark.django_db
def test_nanogpt_stated_vocabulary_does_not_move_the_product(bundled_catalog):
    """cls45b: the run's own vocabulary (50,257, before nanoGPT@77e7e04c padded it to 50,304) is statable and the
    product gives the same hours either way (65.24 against 65.26 h): it has no GEMM alignment term, which is why the
    xfail above stays EXPLAINED rather than FIXED."""
    tokens = NANOGPT["training_tokens"]
    as_run = candidate(NANOGPT_AS_RUN, "a100-sxm4-40gb", 8)["throughput"]["training_tokens_per_second"]
    padded = candidate(NANOGPT, "a100-sxm4-40gb", 8)["throughput"]["training_tokens_per_second"]
    assert tokens / as_run / 3600 == pytest.approx(65.24, abs=0.01)
    assert tokens / padded / 3600 == pytest.approx(65.26, abs=0.01)
    # the author's "about 25% faster" on issue #110's 562 ms, over 600,000 iterations plus 2.7% evaluation
    assert 600_000 * 0.562 / 1.25 * 1.027 / 3600 == pytest.approx(77.0, abs=0.1)
    assert tokens / padded / 3600 / 77.0 - 1 == pytest.approx(-0.152, abs=0.002)


@pytest.mark.django_db
def test_nanogpt_gap_is_the_stack_not_the_card(bundled_catalog):
    """The xfail's claim: on the nanoGPT spec the engine is within 6% of MPT's measured 125M on the same card and
    sequence length, and nanoGPT's stack ran at 0.737 of MPT's there."""
    row = candidate(NANOGPT, "a100-sxm4-40gb", 8)
    engine = row["throughput"]["training_tokens_per_second"] / 8
    assert engine / MPT_125M_A100_40GB_SEQ1024 == pytest.approx(1.058, abs=0.002)
    assert NANOGPT_ISSUE_110 / MPT_125M_A100_40GB_SEQ1024 == pytest.approx(0.737, abs=0.001)
    # a term reaching nanoGPT's rate would put MPT's row this far low
    assert NANOGPT_ISSUE_110 / MPT_125M_A100_40GB_SEQ1024 - 1 == pytest.approx(-0.263, abs=0.001)


# --- 4. NeMo pretraining throughput on H100, FP8 (NVIDIA NeMo 24.12 performance summary) ---------------------
# docs.nvidia.com/nemo-framework/user-guide/24.12/nemotoolkit/performance/performance_summary.html,
# "Pretraining" (FP8, H100), micro-batch 1, tokens/s/GPU:
#   LLAMA2-7B   8 GPUs, GBS 128, 4096, TP 1 PP 1:                 16,934
#   LLAMA2-13B 16 GPUs, GBS 128, 4096, TP 1 PP 4 (VP 10):          8,715
#   LLAMA2-70B 64 GPUs, GBS 128, 4096, TP 4 PP 4 (VP 20):          1,728
#   LLAMA3-8B   8 GPUs, GBS 128, 8192, TP 1 PP 1 CP 2:            12,273
#   LLAMA3-70B 64 GPUs, GBS 128, 8192, TP 4 PP 4 CP 2 (VP 5):      1,524
# The runs are stated as published (par26: parallelism.virtual_pipeline and context_parallel; before, the
# spec could state neither). Selective recomputation, ZeRO-1 (Megatron's distributed optimizer). Product
# (calibrate off) in the comments of NEMO_PRETRAIN. The new fields' model fits no constant on these rows:
# the bubble (p - 1) / (v m), v times the pipeline sends hidden under compute as Megatron does only under
# interleaving, the K/V ring of CP and activations / cp are the published schedules' own arithmetic
# (procurement/sizing/assumptions.py, INTERLEAVED_PIPELINE, CONTEXT_PARALLEL_KV_PASSES).
def nemo_spec(
    preset: str, gpus: int, seq: int, tp: int, pp: int, tokens: float = 1e10, cp: int = 1, vp: int = 1
) -> dict:
    data_parallel = gpus // (tp * pp * cp)
    parallelism = {"gpus": gpus, "zero_stage": 1, "tensor_parallel": tp, "pipeline_parallel": pp}
    parallelism |= {"context_parallel": cp} if cp > 1 else {}
    parallelism |= {"virtual_pipeline": vp} if vp > 1 else {}
    return {
        "task": "pretrain",
        "model": {"preset": preset},
        "precision": "fp8",
        "micro_batch_size": 1,
        "seq_len": seq,
        "gradient_checkpointing": "selective",
        "parallelism": parallelism,
        "gradient_accumulation_steps": 128 // data_parallel,
        "training_tokens": tokens,
    }


NEMO_PRETRAIN = {
    # name: ((preset, gpus, seq, tp, pp), {cp, vp}, published tokens/s/GPU)   product, error
    # (before par26, stated without VP and CP: 18,134 +7.1%; 8,689 -0.3%; 1,401 -18.9%; 14,492 +18.1%;
    # 1,340 -12.1%). fp826 (bf16 attention core and output layer, fp8 linears at 0.425, fitted on these rows but
    # llama3_8b): 17,648 +4.2%; 9,347 +7.3%; 1,591 -7.9%; 13,097 +6.7%; 1,457 -4.4%.
    "llama2_7b": (("llama-2-7b", 8, 4096, 1, 1), {}, 16_934),  # 18,134, +7.1%
    "llama2_13b": (("llama-2-13b", 16, 4096, 1, 4), {"vp": 10}, 8_715),  # 9,434, +8.3%
    # was a strict xfail at 1,401 (-18.9%): a bubble of (4 - 1) / 32 = 9.4% without the interleaving;
    # now 0.47% and the 20-fold sends (21.5 GB a GPU a step) hidden under compute: 1,564, -9.5%
    "llama2_70b": (("llama-2-70b", 64, 4096, 4, 4), {"vp": 20}, 1_728),
    # comm26: the CP 2 ring hides under the attention steps (Transformer Engine's p2p ring): 8B 14,266 -> 14,492
    # (+18.1%), 70B 1,477 -> 1,483 (-2.7%)
    "llama3_8b": (("llama-3.1-8b", 8, 8192, 1, 1), {"cp": 2}, 12_273),  # 14,266, +16.2%
    "llama3_70b": (("llama-3-70b", 64, 8192, 4, 4), {"cp": 2, "vp": 5}, 1_524),  # 1,477, -3.1%
}
# Was a strict xfail: "Llama 3 8B FP8 at 8k on 8 H100 (CP 2): engine 14,266 tokens/s/GPU against NeMo's 12,273
# (+16.2%; +18.1% before CP could be stated) ... old26: the cause is the precision split, not CP: Megatron-Core runs
# dot-product attention in bf16 (fp8_dot_product_attention off by default) and its output layer is not a TE module,
# 17.6% of this run's FLOPs". Now 13,097 (+6.7%) (fp826): sizing/fp8_split.py runs the attention core and the output
# layer at the bf16 peak, the fp8 linears at mfu_fp8_linears_hopper 0.425, refitted with it on this table's other
# four rows (7B +4.2%, 13B +7.3%, 2-70B -7.9%, 3-70B -4.4%: fitted, so those four are not independent checks), this
# row held out.


def nemo_row(run: str) -> dict:
    (preset, gpus, seq, tp, pp), split, _ = NEMO_PRETRAIN[run]
    return candidate(nemo_spec(preset, gpus, seq, tp, pp, **split), "h100-sxm5-80gb", gpus)


@pytest.mark.parametrize(
    "run",
    [
        "llama2_7b",
        "llama2_13b",
        "llama2_70b",
        "llama3_8b",
        "llama3_70b",
    ],
)
@pytest.mark.django_db
def test_nemo_fp8_pretraining_on_h100_within_15_percent(run, bundled_catalog):
    (_, gpus, _, tp, pp), split, published = NEMO_PRETRAIN[run]
    row = nemo_row(run)
    plan = row["plan"]
    assert (plan["tensor_parallel"], plan["pipeline_parallel"]) == (tp, pp)
    assert (plan["context_parallel"], plan["virtual_pipeline"]) == (split.get("cp", 1), split.get("vp", 1))
    assert row["throughput"]["training_tokens_per_second"] / gpus == pytest.approx(published, rel=0.15)


@pytest.mark.django_db
def test_nemo_interleaving_cuts_the_bubble_by_the_chunks(bundled_catalog):
    # Narayanan et al. 2021 sec. 2.2.2: Llama 2 70B's 1F1B bubble on PP 4 with 128 / (64 / 16) = 32
    # micro-batches is (4 - 1) / 32 = 9.375% of compute, and 9.375% / 20 = 0.469% with VP 20 (by hand).
    assert nemo_row("llama2_70b")["throughput"]["pipeline_bubble"] == pytest.approx(3 / 32 / 20, rel=1e-3)
    assert nemo_row("llama2_7b")["throughput"]["pipeline_bubble"] == 0.0


@pytest.mark.django_db
def test_nemo_8k_over_4k_speed_ratio_pays_for_attention(bundled_catalog):
    # Class 2, from one published table and one software version: Llama 3 8B at 8k over Llama 2 7B at 4k on
    # 8 H100 FP8, 12,273 / 16,934 = 0.725 (bigger vocabulary and 8k attention). Engine: 14,266 / 18,134 =
    # 0.787 (+8.5%; 0.799 before CP 2 was stated), within 15%. Without the attention term the ratio would be
    # about 6 x 6.74e9 / (6 x 8.03e9) = 0.84 from the parameters alone.
    speed = {
        run: nemo_row(run)["throughput"]["training_tokens_per_second"] for run in ("llama2_7b", "llama3_8b")
    }
    assert speed["llama3_8b"] / speed["llama2_7b"] == pytest.approx(12_273 / 16_934, rel=0.15), speed


# --- 5. NeMo's Llama 3 70B plan ranked: 64 GPUs, TP 4, PP 4, across nodes on InfiniBand -----------------------
@pytest.mark.django_db
def test_llama3_70b_nemo_plan_ranks_as_stated_across_nodes_on_a_cluster_fabric(bundled_catalog):
    # Classes 3 and 4: the stated 64 GPUs, TP 4, PP 4, ZeRO-1 are kept, every row spans 8 nodes over a
    # cluster fabric (InfiniBand / GPUDirect RDMA), and the first row's compute cost is price x nodes x hours.
    rows = ranked(nemo_spec("llama-3-70b", 64, 8192, 4, 4))
    assert rows
    for row in rows:
        plan = row["plan"]
        assert (row["gpus"], plan["tensor_parallel"], plan["pipeline_parallel"], plan["zero_stage"]) == (
            64,
            4,
            4,
            1,
        ), describe([row])
        assert row["instances"] == 8 and row["interconnect"]["fabric"], describe([row])
        assert any(w in row["interconnect"]["summary"] for w in ("InfiniBand", "RDMA")), row["interconnect"]
    first = rows[0]  # product: nebius 8 x gpu-b200-sxm_8gpu on demand, 14.6 h, 6,596.90 USD
    compute = float(first["effective_price_per_hour"]) * first["instances"] * first["hours"]
    assert float(first["cost_breakdown"]["compute"]) == pytest.approx(compute, rel=0.01)


@pytest.mark.django_db
def test_llama2_70b_nemo_plan_on_h100_spans_nodes_over_documented_fabrics(bundled_catalog):
    # Class 4 on the card NeMo used: the Llama 2 70B plan (64 H100, TP 4 in the node, PP 4 and data parallel
    # across 8 nodes) ranks only hosts with a cluster fabric, each citing the provider's documentation, and a
    # faster fabric shows a smaller communication share and fewer hours (product: Nebius InfiniBand
    # 3,200 Gb/s, 20% of the step, 30.4 h, 7,156 USD first; GCP A3 GPUDirect-TCPX 800 Gb/s, 34%, 32.1 h).
    rows = ranked(nemo_spec("llama-2-70b", 64, 4096, 4, 4), gpus=["h100-sxm5-80gb"])
    assert rows
    for row in rows:
        link = row["interconnect"]
        assert row["instances"] == 8 and link["fabric"] and link["source"].startswith("https://"), link
        assert row["plan"]["tensor_parallel"] == 4 and row["plan"]["pipeline_parallel"] == 4
    first = rows[0]
    assert "InfiniBand" in first["interconnect"]["fabric"], describe(rows)
    slower = [row for row in rows if "InfiniBand" not in row["interconnect"]["fabric"]]
    assert all(
        row["interconnect"]["communication_share"] > first["interconnect"]["communication_share"]
        for row in slower
    )
    assert all(row["hours"] > first["hours"] for row in slower)
    compute = float(first["effective_price_per_hour"]) * first["instances"] * first["hours"]
    assert float(first["cost_breakdown"]["compute"]) == pytest.approx(compute, rel=0.01)


# Was a strict xfail: stated without CP (the spec had no field), the plan put 83.9 GiB a GPU (the whole 8k
# sequence's activations on each GPU) and no H100 row ranked. NeMo's own plan, CP 2 and VP 5 stated: the
# activations halve (each CP rank keeps 4,096 tokens) and grow by 1 + 3 / 20 for the interleaving
# (Korthikanti et al. 2022 sec. 4.2.3): 61.4 GiB (product), under the H100's 80 GB.
@pytest.mark.django_db
def test_llama3_70b_nemo_plan_has_an_h100_row(bundled_catalog):
    rows = ranked(nemo_spec("llama-3-70b", 64, 8192, 4, 4, cp=2, vp=5), gpus=["h100-sxm5-80gb"])
    assert rows
    for row in rows:  # the stated degrees are a contract: every row keeps them
        plan = row["plan"]
        assert (plan["tensor_parallel"], plan["pipeline_parallel"]) == (4, 4), describe([row])
        assert (plan["context_parallel"], plan["virtual_pipeline"], plan["expert_parallel"]) == (2, 5, 1)
        assert row["gpus"] == 64 and row["memory_per_gpu_gib"] <= 80e9 / GIB, describe([row])
        # TP 4 x CP 2 fills an 8-GPU node: the K/V ring stays on its NVLink; the stages cross the fabric
        carried = {item["collective"]: item["over"] for item in row["interconnect"]["carried"]}
        assert carried["CP K/V ring"] == row["interconnect"]["node_link"], carried
        assert carried["pipeline send"] == row["interconnect"]["fabric"], carried


# --- 6. DeepSeek-V3: 180K H800 GPU-hours per trillion tokens (DeepSeek-V3 technical report) ------------------
# arXiv:2412.19437, section 1 and 3.1: "each trillion tokens requires only 180K H800 GPU hours" on a cluster
# of 2,048 H800 (8 a node, NVLink in the node, InfiniBand across); FP8 mixed precision; 16-way pipeline
# (DualPipe), 64-way expert parallelism over 8 nodes, ZeRO-1; 14.8T tokens in 2.664M GPU-hours. 1e12 tokens /
# (180,000 h x 3,600) = 1,543 tokens/s per GPU. The H800 is the H100 with NVLink cut to 400 GB/s (same FP8
# TFLOPS, same 80 GB), so the H100 stands in for it. Sequence 4,096; batch 15,360 sequences.
DEEPSEEK_V3 = {
    "task": "pretrain",
    "model": {"preset": "deepseek-v3"},
    "precision": "fp8",
    "micro_batch_size": 1,
    "seq_len": 4096,
    "gradient_checkpointing": "selective",
    # DeepSeek-V3 technical report (arXiv:2412.19437), sec. 3.2.3: "Recomputation of RMSNorm and MLA
    # Up-Projection. We recompute all RMSNorm operations and MLA up-projections during back-propagation, thereby
    # eliminating the need to persistently store their output activations." In Megatron-Core's names
    # (transformer_config.py recompute_modules): layernorm and mla_up_proj (mla26).
    "recompute_modules": ["layernorm", "mla_up_proj"],
    "parallelism": {"gpus": 2048, "zero_stage": 1, "pipeline_parallel": 16, "expert_parallel": 64},
    "gradient_accumulation_steps": 15360 // 128,
    "training_tokens": 1e12,
}


# DeepSeek's run as the report states it (STATED, issue 26 stop 41): DualPipe overlaps the expert all-to-alls with
# computation (sec. 3.2.1, parallelism.expert_overlap: dualpipe) and its dispatch sends a token over InfiniBand at
# most once a node to at most 4 nodes (sec. 3.2.2, expert_dispatch: deepep).
DEEPSEEK_V3_AS_RUN = DEEPSEEK_V3 | {
    "parallelism": DEEPSEEK_V3["parallelism"] | {"expert_overlap": "dualpipe", "expert_dispatch": "deepep"}
}


# Was a strict xfail: "DeepSeek-V3 on 2,048 H100-class GPUs, EP 64 stated (par26): engine 641 tokens/s/GPU against
# the report's 1,543 (-58%) ... DeepSeek's DualPipe hides them under computation (sec. 3.2.1), dispatches in FP8 and
# sends a token to at most 4 nodes: none of it can be stated". moe27 made them statable and this test's spec did
# not state them (784.7, -49.1% at stop 41). Now 1,378.6 (-10.7%) because the spec states the report's own
# overlap and dispatch (DEEPSEEK_V3_AS_RUN). The unstated spec's gap is its exposed all-to-alls, checked below:
# 17.88 s of its 39.15 s step; without them the same step gives 1,444 tokens/s/GPU (-6.4%).
# moe26: the MoE cost per routed element (assumptions.MOE_ROUTED_BYTES) slows the compute, as foreseen above
# ("37B active parameters at the dense 40% efficiency are then too fast"): 504 tokens/s/GPU (-67%, was -58%)
# while the all-to-alls stay fully exposed; DualPipe's overlap is still not modelled.
# moe27: 557 (-63.9%) with the refit MoE cost; this spec states no overlap, so the all-to-alls stay on the
# critical path as Megatron-Core runs them by default. DeepSeek's DualPipe and dispatch can now be stated:
# see the next test.
# moe26 (stop 38): 536 (-65.2%) with Hopper FP8's cost per local expert (assumptions.
# MOE_HOPPER_FP8_EXPERT_SECONDS; EP 64 leaves 4 local experts: 58 layers x 4 x 1.1 ms / 4,096 tokens = 62 us a
# token). The cause of the gap stays the exposed all-to-alls this spec states (no overlap).
# mla26: 533.5 (-65.4%): the spec now states sec. 3.2.3's recomputation, whose MLA up-projections (6.65 GFLOP a
# token) run again in backward.
# hfp826: 537 (-65.2%): Hopper FP8 costs 200 ns per routed token copy (58 layers x top-8 = 92.8 us a token)
# instead of 1.1 ms per local expert and micro-batch (62 us); the exposed all-to-alls remain the cause.
# moe26b: 811.0 (-47.4%): the size report's H100 fabric is 400 Gb/s a GPU (assumptions.NETWORK_BANDWIDTH_HOPPER,
# was 200), halving the exposed all-to-alls (35.76 -> 17.88 s a step); the cause stays their exposure.
@pytest.mark.django_db
def test_deepseek_v3_tokens_per_gpu_match_the_report(bundled_catalog):
    published = 1e12 / 180_000 / 3600
    row = candidate(DEEPSEEK_V3_AS_RUN, "h100-sxm5-80gb", 2048)
    assert row["throughput"]["training_tokens_per_second"] / 2048 == pytest.approx(published, rel=0.15)
    # unstated, the all-to-alls sit on the critical path (Megatron-Core's default); taking out exactly their
    # exposed seconds brings the same step within 15% of the report
    plain = candidate(DEEPSEEK_V3, "h100-sxm5-80gb", 2048)["throughput"]
    tokens_a_step = plain["training_tokens_per_second"] * plain["step_seconds"]
    hidden = tokens_a_step / (plain["step_seconds"] - plain["expert_parallel_exposed_seconds"]) / 2048
    assert plain["training_tokens_per_second"] / 2048 < published * 0.85
    assert hidden == pytest.approx(published, rel=0.15)


# moe27: DeepSeek's own communication can now be stated: DualPipe (parallelism.expert_overlap: dualpipe, sec.
# 3.2.1) and its dispatch (expert_dispatch: deepep, sec. 3.2.2 and 3.3.2: one InfiniBand copy per node, at
# most 4 nodes a token by the model's n_group 8 / topk_group 4, FP8 dispatch). The all-to-alls fall from
# 35.76 s to 35.76 x 0.5 x 0.75 = 13.41 s a step, under the step's 18.67 s of compute: all hidden; step
# 19.38 s, 1,586 tokens/s/GPU (+2.7%). DualPipe alone: 842 (-45.4%; 17.1 s exposed); deepep alone: 937
# (-39.3%). moe26 (stop 38): 1,427 (-7.5%) with Hopper FP8's cost per local expert (4 of EP 64, 62 us a token;
# assumptions.MOE_HOPPER_FP8_EXPERT_SECONDS), a check on that fit, which used none of DeepSeek's figures.
# moebf26: 1,509.5 (-2.2%; -8.8% just before): the fixed MoE cost is 2 ms a layer + 0.25 ms a local expert, 3 ms
# for EP 64's 4 local experts instead of 6 ms (assumptions.MOE_LOCAL_EXPERT_SECONDS), none of it fitted here.
# hfp826: 1,435 (-7.0%): Hopper FP8's cost is 200 ns per routed token copy, 92.8 us a token (was 62 us), fitted
# on Qwen3-235B-A22B H100 rows, none of DeepSeek's figures.
# moe26b: 1,536.1 (-0.5%): the all-to-alls were already hidden; the 400 Gb/s H100 fabric (assumptions.
# NETWORK_BANDWIDTH_HOPPER) shortens the pipeline and data-parallel sends across nodes.
# stop 41: 1,378.6 (-10.7%) on the merged tree; the same spec is now the report case above.
@pytest.mark.django_db
def test_deepseek_v3_with_dualpipe_and_its_dispatch_matches_the_report(bundled_catalog):
    stated = {"expert_overlap": "dualpipe", "expert_dispatch": "deepep"}
    spec = DEEPSEEK_V3 | {"parallelism": DEEPSEEK_V3["parallelism"] | stated}
    row = candidate(spec, "h100-sxm5-80gb", 2048)
    assert row["throughput"]["training_tokens_per_second"] / 2048 == pytest.approx(
        1e12 / 180_000 / 3600, rel=0.15
    )


@pytest.mark.django_db
def test_deepseek_v3_expert_parallel_shards_the_experts(bundled_catalog):
    # By hand: 58 MoE layers x 256 experts x 3 x 7,168 x 2,048 = 653.9e9 routed parameters of the published
    # 671e9 (97.45%); PP 16 in bf16 holds 671e9 x 2 / 16 B = 78.1 GiB of weights a GPU, and EP 64 keeps the
    # dense 2.55% whole and 1 / 64 of the experts: 78.1 x (0.0255 + 0.9745 / 64) = 3.18 GiB.
    routed = 58 * 256 * 3 * 7168 * 2048 / 671e9
    alone = candidate(
        DEEPSEEK_V3 | {"parallelism": {"gpus": 2048, "zero_stage": 1, "pipeline_parallel": 16}},
        "h100-sxm5-80gb",
        2048,
    )
    row = candidate(DEEPSEEK_V3, "h100-sxm5-80gb", 2048)
    assert alone["memory"]["weights_gib"] == pytest.approx(671e9 * 2 / 16 / GIB, rel=0.01)
    assert row["memory"]["weights_gib"] == pytest.approx(
        alone["memory"]["weights_gib"] * (1 - routed + routed / 64), rel=0.01
    )
    assert row["plan"]["expert_parallel"] == 64
    # ZeRO-1 already shards the optimizer over the 128 data-parallel ranks: EP leaves it where it was
    assert row["memory"]["optimizer_states_gib"] == pytest.approx(alone["memory"]["optimizer_states_gib"])
    # the all-to-alls are costed: 4 per MoE layer per micro-batch on the critical path
    assert row["throughput"]["expert_parallel_seconds"] > 0 == alone["throughput"]["expert_parallel_seconds"]


# Was a strict xfail: "DeepSeek-V3's own plan (PP 16, EP 64, ZeRO-1) ran on 80 GB cards. With EP 64 stated
# (par26) each GPU keeps 4 of the 256 experts of its layers: weights 78.1 -> 3.2 GiB, gradients likewise, and the
# plan 266.6 -> 109.2 GiB a GPU, still does_not_fit: the 16 micro-batches in flight on the first stage keep 93.4 GiB
# of activations. DeepSeek recomputes RMSNorm and the MLA up-projections in backward (sec. 3.2.3) and caches
# activations in FP8 (sec. 3.3.3), which the activation model (Korthikanti et al.'s 16-bit per-layer tensors) does
# not. Class 7 memory" (moe26: 101.2 GiB with fp8 linear inputs).
# Now 58.7 GiB a GPU (activations 45.3 GiB), fits the 80 GB card: mla26 counts the MLA layer as Megatron-Core runs
# it (V and the attention output 128 wide, not 192; the latents and up-projection inputs kept: 368,640 -> 342,144
# B a token and layer, 101.2 -> 94.7 GiB), and the spec states sec. 3.2.3's recomputation (recompute_modules
# [layernorm, mla_up_proj]): the two norm outputs, Q, K, V and the up-projections' inputs leave, 342,144 ->
# 194,688 B (tests/procurement/sizing/test_recompute_modules.py by hand). The up-projections' forward runs again
# in backward: +6.65 GFLOP a token, 536 -> 533 tokens/s/GPU in the throughput case above.
@pytest.mark.django_db
def test_deepseek_v3_plan_fits_80gb_cards(bundled_catalog):
    row = candidate(DEEPSEEK_V3, "h100-sxm5-80gb", 2048)
    assert row["verdict"] != "does_not_fit", row["memory"]
    # the stated recomputation is what fits it: without it the plan keeps 342,144 B a token and layer, 94.7 GiB
    unstated = candidate({**DEEPSEEK_V3, "recompute_modules": ["core_attn"]}, "h100-sxm5-80gb", 2048)
    assert unstated["verdict"] == "does_not_fit"


# --- 7. TensorRT-LLM's published Llama 2 70B latency and throughput (NVIDIA/TensorRT-LLM docs) ---------------
# NVIDIA/TensorRT-LLM docs/source/performance.md @77d24b5fa178f11ed7fafdd9833b7245e075f721.
# "Low Latency" (TensorRT-LLM v0.5, batch 1, first-token latency at 2,048 input tokens), LLaMA 70B at TP 4:
# A100 FP16 377 ms, H100 FP8 109 ms. "Peak Throughput" (v0.6.1, static batching, out tokens/s per GPU):
# H100 FP8 LLaMA 70B TP 4, batch 480, 128 in / 2,048 out: 1,486; H100 FP8 LLaMA 7B TP 1, batch 768,
# 128 / 128: 19,694; A100 FP16 LLaMA 70B TP 4, batch 240, 128 / 2,048: 525. The 70B is Llama 2 70B.
SIZING_FORM = {
    "source": "fields",
    "name": "trtllm-llama2-70b-tp4",
    "task": "inference",
    "preset": "llama-2-70b",
    "micro_batch_size": "1",
    "seq_len": "2048",
    "gradient_checkpointing": "none",
    "training_tokens": "",
    "lora_rank": "16",
    "zero_stage": "0",
    "gpus": "4",
    "tensor_parallel": "4",
    "pipeline_parallel": "1",
    "concurrency": "1",
    # prompt + output; the form keeps the default 256 output tokens, so the prompt is TensorRT-LLM's 2,048
    "context_len": "2304",
    "resolution_px": "",
    "steps": "",
    "train_steps": "",
}
TRTLLM_TTFT = {("fp16", "a100-sxm4-80gb"): 0.377, ("fp8", "h100-sxm5-80gb"): 0.109}


def sized_on_the_page(client, precision: str, gpu: str) -> dict:
    page = client.post("/size/", SIZING_FORM | {"precision": precision})
    assert page.status_code == 200 and page.context["errors"] == []
    return next(c for c in page.context["report"]["candidates"] if c["gpu"] == gpu and c["gpus"] == 4)


@pytest.mark.django_db
def test_sizing_page_splits_llama2_70b_over_four_gpus_at_tp4(bundled_catalog, client_as):
    # Class 8: the page's tensor-parallel field shards the 68.98e9 parameters four ways: 2 B x 68.98e9 / 4 =
    # 32.1 GiB a GPU in fp16 and half that in fp8; each card can run it (TensorRT-LLM ran both).
    client = client_as("engineer")
    for (precision, gpu), bytes_per_param in zip(TRTLLM_TTFT, (2, 1), strict=True):
        row = sized_on_the_page(client, precision, gpu)
        assert row["plan"]["tensor_parallel"] == 4
        assert row["memory"]["weights_gib"] == pytest.approx(68.98e9 * bytes_per_param / 4 / GIB, rel=0.02)
        assert row["verdict"] != "does_not_fit"


@pytest.mark.parametrize(
    ("precision", "gpu"),
    [
        # Were strict xfails at 465 ms (+23%) and 76 ms (-30%): prefill ran at one 50% of the precision's
        # dense peak, so FP8 got 2x BF16. Now (serve26) prefill efficiency is per precision, fitted on
        # OTHER rows (TensorRT-LLM v0.9.0's 7B first tokens: A100 FP16 0.69, H100 FP8 0.47 of the FP8
        # peak), and the page prices the TP 4 all-reduces over NVLink: 371 ms (-1.5%) and 103 ms (-5.5%).
        ("fp16", "a100-sxm4-80gb"),
        ("fp8", "h100-sxm5-80gb"),
    ],
)
@pytest.mark.django_db
def test_sizing_page_ttft_of_llama2_70b_at_tp4_matches_tensorrt_llm(
    precision, gpu, bundled_catalog, client_as
):
    row = sized_on_the_page(client_as("engineer"), precision, gpu)
    ttft = row["throughput"]["time_to_first_token_seconds"]
    assert ttft == pytest.approx(TRTLLM_TTFT[(precision, gpu)], rel=0.15)


TRTLLM_PEAK = {
    # name: (preset, precision, gpu, tp, batch, input, output, published out tok/s/GPU)   product, error
    "h100_fp8_70b_tp4": ("llama-2-70b", "fp8", "h100-sxm5-80gb", 4, 480, 128, 2048, 1486),  # 3,097, +108%
    "h100_fp8_7b": ("llama-2-7b", "fp8", "h100-sxm5-80gb", 1, 768, 128, 128, 19_694),  # 19,811, +0.6%
    "a100_fp16_70b_tp4": ("llama-2-70b", "fp16", "a100-sxm4-80gb", 4, 240, 128, 2048, 525),  # 928, +77%
}
# Before serve26 the three were 5,912 (+298%), 39,790 (+102%) and 1,045 (+99%): the decode step took the
# larger of its reads and its FLOPs, so at hundreds of streams the KV-cache reads were hidden under the
# GEMMs, and no request's prefill was paid for. Now the step adds the GEMMs, each stream's attention over
# its KV cache and the TP all-reduces, and every request's prompt is prefilled once per output_tokens steps.
# Stop 41, re-read: v0.6.1 did have an XQA kernel: the same performance.md's Llama2-70b throughput commands export
# TRTLLM_ENABLE_XQA=1 ("These kernels are currently experimental and not enabled by default"), so "predates XQA"
# was wrong. What the publisher's own later table shows instead: TensorRT-LLM v0.9.0's performance.md ("All data
# was generated using version 0.9.0"; tests/procurement/sizing/test_serving_published.py, TRT9) measured the SAME
# shape on the same card, H100 FP8 Llama 2 70B TP 4, 128 in / 2,048 out, at batch 512: 2,725 tokens/s/GPU, 1.83x
# v0.6.1's 1,486 at batch 480 (the batch alone is at most 512 / 480 = 1.07x). The jump is in GQA decode attention:
# the same two tables' 2,048/2,048 Llama 2 70B TP 2 row went 547 -> 1,011 (1.85x) while the MHA Llama 7B rows
# did not move (128/2,048: 6,818 -> 6,944; 2,048/2,048: 2,740 -> 2,826, 1.02-1.03x).
# fix46s (aud46s): the XQA blog (docs/source/blogs/XQA-kernel.md, "included in the v0.8 releases") is not the
# release record and is no longer cited for it. The record, read with git in the octoml/TensorRT-LLM-release
# mirror: the v0.6.1 tree (NVIDIA release commit 0268914, tensorrt_llm/version.py "0.6.1") has no XQA at all and
# decodes with masked MHA, one thread block a query head (cpp/tensorrt_llm/kernels/decoderMaskedMultiheadAttention/
# decoderMaskedMultiheadAttentionLaunch.h:190 grid{num_heads, batch_size, 1}; decoderMaskedMultiheadAttention
# Template.h:1383-1386 hi_kv = hi / qhead_per_kv); XQA shipped in v0.7.0 (59f41c06, 2023-12-20) behind the env var
# TRTLLM_ENABLE_XQA (gptAttentionCommon.cpp:1271, off unless "1"). The "updated for v0.6.1" table first appears in
# that v0.7.0 commit, same figures, with no XQA export in its recipes; the 77d24b5f copy above adds
# `export TRTLLM_ENABLE_XQA=1` (the "Stop 41" reading) beside unchanged figures. The recipes of both copies build
# the 70B at --max_batch_size 64 and run batch 64, so neither is the run behind batch 480 / 240: what decides
# whether these rows ran without XQA is the table's own "v0.6.1" label against a tree with no XQA code, no record of
# the runs' environment (test_outside_v061_gqa_stop46.py [WHICH]). Nor is the 1.83-1.85x all decode attention: the
# Falcon 180B H100 TP 8 128/2,048 row, a group no XQA build takes, moved 724 -> 837 (1.156x) between the same
# tables, leaving 1.59-1.60x for the 70B rows' attention against the 1.91-2.01x the product puts between shared
# and per-query-head reads.
# The v0.8.0 release's performance.md ("All data was generated using version 0.8.0") has the same H100 row at batch
# 512, 2,718, and the A100 FP16 70B TP 4 128/2,048 row at batch 128, 595 (v0.6.1: 525 at batch 240).
PEAK_70B_H100_V061 = pytest.mark.xfail(
    strict=True,
    reason="UNEXPLAINED in part (sign proven by code) (fix46s; serve46's EXPLAINED rejected by aud46s: its (a) "
    "cited the XQA blog's 'v0.8' and its (b) read the whole step to v0.9.0 as XQA): H100 FP8 Llama 2 70B TP 4, "
    "batch 480, 128/2,048, TensorRT-LLM v0.6.1: engine 3,077.1 tokens/s/GPU against 1,486 (+107.1%; the 3,097 "
    "below is an older figure). Sign: the table is v0.6.1 by its own label (first published in the v0.7.0 commit "
    "59f41c06 with no TRTLLM_ENABLE_XQA export; the later 77d24b5f copy's export stands beside the same figures, "
    "its recipes at batch 64 not these runs), and the v0.6.1 tree (0268914, version.py 0.6.1) has no XQA: masked "
    "MHA, one thread block a query head (decoderMaskedMultiheadAttentionLaunch.h:190; ...Template.h:1383-1386 "
    "hi_kv = hi / qhead_per_kv), each KV head's cache worked through by 8 blocks where the engine reads it once "
    "(XQA's sharing, first shipped in 0.7.0 behind TRTLLM_ENABLE_XQA, gptAttentionCommon.cpp:1271): the engine "
    "must be fast here. Size not proven: fixa45's per-query-head term at 3.7 TB/s (two v0.9.0 A100 Mistral rows; "
    "test_outside_xqa_stop45.py) gives 1,532.3 (+3.1%) and the same table's TP 2 2,048/2,048 row 546.7 (-0.1%), but "
    "on the held-out pre-XQA 70B rows of the v0.5.0 table (same code, TP 4, batch 64, x/2,048; "
    "test_outside_serving_audit_stop46.py) it reads +32.4% (H100 FP8 128 in, this card and shape at batch 64), "
    "+25.1% (H100 2,048 in), +25.9% / +14.5% (A100), three outside 15%, and on the never-XQA Falcon 180B H100 row "
    "-2.7% (v0.6.1) / -15.8% (v0.9.0): a +-20-30% spread across releases. From the rows: of the 1.83x to v0.9.0's "
    "2,725 (batch 512), 1.156x also moved the Falcon path (724 -> 837), leaving 1.59x against the engine's 2.01x "
    "between shared and per-query-head reads. (c) a spec would have to state the serving engine's release or "
    "whether its decode attention shares a KV head across the group: no field does. Earlier reason (serve46, "
    "EXPLAINED): (a) from the XQA blog, (b) the term's +3.1% and the 1.83x step read as XQA. History: EXPLAINED in "
    "part by the "
    "publisher's software version: the same "
    "publisher's v0.9.0 table measured this card and shape (TP 4, 128/2,048, batch 512) at 2,725, 1.83x, and "
    "between the two tables only the GQA long-output rows moved (70B TP 2 2,048/2,048: 547 -> 1,011, 1.85x; MHA "
    "7B rows 1.02-1.03x): GQA decode attention got faster. Against that v0.9.0 row the engine is now +14.5% "
    "(3,120; tests/procurement/sizing/test_serving_published.py PEAK, within 15% since serve42 priced each TP "
    "all-reduce at NCCL's own ring cost), and 3,097 / (1,486 x 1.834) = 1.136: the version accounts for the "
    "gap to within tolerance. The test compares with the v0.6.1 figure, so it stays a strict xfail",
)
PEAK_70B_A100_V061 = pytest.mark.xfail(
    strict=True,
    reason="UNEXPLAINED in part (fix46s; serve46's EXPLAINED rejected by aud46s: +15.6% left with the term is "
    "outside tolerance, as the same table's Falcon 180B A100 row is UNEXPLAINED in part at +30.3%): A100 FP16 Llama "
    "2 70B TP 4, batch 240, 128/2,048, TensorRT-LLM v0.6.1: engine 912.5 tokens/s/GPU against 525 (+73.8%; the 928 "
    "below is an older figure). The sign, as the H100 row of the same table (PEAK_70B_H100_V061): v0.6.1 by the "
    "table's own label, a tree (0268914) with no XQA whose masked MHA walks each KV head's cache once a query head "
    "(decoderMaskedMultiheadAttentionLaunch.h:190, ...Template.h:1383-1386), where the engine reads it once a group "
    "(XQA, first shipped in 0.7.0 behind TRTLLM_ENABLE_XQA). Sized in part: fixa45's term at 3.7 TB/s (no v0.6.1 row "
    "fitted) gives 607.0 (+15.6%), 58 of the 74 points; the +15.6% leftover is outside tolerance and not sized (the "
    "A100 decode residual the v0.9.0 table shows with XQA too, A100 TP 8 batch 512 +19.6%, test_serving_published.py; "
    "v0.8.0 TP 4 batch 128 595, ours 793.9, +33.4%), and the term itself spreads +-20-30% across releases on pre-XQA "
    "rows (v0.5.0 A100 FP16 70B TP 4 batch 64 128/2,048: +25.9% with it; test_outside_serving_audit_stop46.py); the "
    "rate this row implies, 2.81 TB/s, is the lowest of the held-out long rows (test_outside_v061_gqa_stop46.py). "
    "No field states the serving engine's release or its decode attention's KV sharing. Earlier reason (serve46, "
    "EXPLAINED): the XQA blog's 'v0.8' for (a) and the term's +15.6% for (b). History: UNEXPLAINED, in part the "
    "software version: the publisher's v0.8.0 "
    'table ("All data was generated using version 0.8.0") has this card, TP and shape at batch 128: 595, faster '
    "than v0.6.1's 525 at nearly twice the batch (the engine gives batch 240 1.15x batch 128, so about 1.30x of "
    "version); against that row the engine is still +35.6% (807; its step 38.2 ms + 1.4 ms of prefill against the "
    "published 53.8 ms), the decode-heavy residual test_serving_published.py tracks as a strict xfail (A100 TP 8 "
    "batch 512: +20.6%). Checked (serve42): NCCL's own ring cost for the all-reduces (LL128, 2 MB a call: 5.7 ms "
    "a step) leaves 14 ms, 88 us more per call than NCCL's model, which no protocol's latency reaches. serve43: "
    "engine 928 unchanged. TensorRT-LLM's custom all-reduce does not supply it: its two-shot kernel measured on "
    "4 A100s (sgl-project/sglang#2688) takes 45.5 us at 1,048,576 elements, within 6 us of the engine's 39.7 us "
    "for the 2.1 MB call (LL128 14 + 6 x 1.9 + 13.1 / 0.92), under 1 ms a step. A per-layer decode cost of the "
    "context phase's 110 us (context_phase_fixed_seconds_per_layer) would put the batch-128 v0.8.0 row at +9.5% "
    "and this one at 1.53x, but breaks the one-GPU H100 7B batch-120 row (-6.0% -> -21.1%): not applied. cls45d "
    "(stop 45): engine 928 unchanged; at batch 240 a decode all-reduce is 240 x 8,192 x 2 B = 3.9 MB, which the "
    "v0.9.0-era plugin (allreducePlugin.cpp @b57221b7, AUTO) runs as its TWOSHOT P2P kernel (TP 4, over 1 MB, under "
    "the 8 MB workspace), the kernel sglang#2688 measured no slower than NCCL's model above; whether v0.6.1's "
    "engines had that plugin is not stated, and either way the 14 ms is not the all-reduce. UNEXPLAINED",
)


@pytest.mark.parametrize(
    "run",
    [
        pytest.param("h100_fp8_70b_tp4", marks=PEAK_70B_H100_V061),
        "h100_fp8_7b",  # was a strict xfail at 39,790 (+102%)
        pytest.param("a100_fp16_70b_tp4", marks=PEAK_70B_A100_V061),
    ],
)
@pytest.mark.django_db
def test_large_batch_serving_throughput_matches_tensorrt_llm(run, bundled_catalog):
    preset, precision, gpu, tp, batch, prompt, output, published = TRTLLM_PEAK[run]
    spec = {
        "task": "inference",
        "model": {"preset": preset},
        "precision": precision,
        "parallelism": {"gpus": tp, "tensor_parallel": tp},
        "inference": {
            "concurrency": batch,
            "context_len": prompt + output,
            "output_tokens": output,
            "kv_cache_dtype": "fp8" if precision == "fp8" else "fp16",
        },
    }
    row = candidate(spec, gpu, tp)
    assert row["throughput"]["decode_tokens_per_second_total"] / tp == pytest.approx(published, rel=0.15)


# --- 8. A deadline met on wall clock: Llama 3 8B at NeMo's speed, 50B tokens on 8 GPUs, spot ----------------
# The workload of case 4 (NeMo's Llama 3 8B FP8 run, here with full recomputation so that it fits 80 GB
# without context parallelism) for 50B tokens on the stated 8 GPUs. The deadline is set halfway between the
# cheapest spot row's compute hours and its wall-clock P90 (read from the rows, so the premise survives speed
# changes): spot alone is late there at P90. Class 1: every top-five row meets the deadline on wall clock at
# the default 0.9 probability, a spot row as spot-with-fallback with its expected and worst-case cost, and
# each row shows compute hours and wall-clock P50/P90 side by side.
LLAMA3_8B_50B = nemo_spec("llama-3.1-8b", 8, 8192, 1, 1, tokens=5e10) | {"gradient_checkpointing": "full"}
# The same run with a trainer that saves synchronously (host.checkpoint: sync): the 112 GB checkpoint
# (8.03e9 x 14 B) at 0.5 GB/s blocks 3.75 min every 15 min, +25% wall clock, so spot alone is late at a
# deadline between compute and its P90 (by default the 8-GPU run saves asynchronously: +0.15%, below).
LLAMA3_8B_50B_SYNC = LLAMA3_8B_50B | {"host": {"checkpoint": "sync"}}


@pytest.mark.django_db
def test_llama3_8b_deadline_between_compute_and_spot_p90_is_met_on_wall_clock(bundled_catalog):
    alone = ranked(LLAMA3_8B_50B_SYNC, pricing_models=["spot"])
    assert alone
    cheapest_spot = alone[0]
    compute, late = alone[0]["hours"], alone[0]["wall_clock"]["hours_at_probability"]
    assert late > compute * 1.02, alone[0]["wall_clock"]  # product: 70.2 h compute, 87.7 h at P90 (B200)
    deadline = round((compute + late) / 2, 2)
    rows = ranked(LLAMA3_8B_50B_SYNC, deadline_hours=deadline)
    assert rows, f"nothing meets {deadline} h"
    # the cheapest spot offer gets its spot-with-fallback plan even where its provider sells that shape only
    # on spot (Verda's 8 x B200: the plan falls back on another provider's on-demand offer), and a plan
    # ranks only when its expected cost is under the cheapest on-demand offer of the shape alone
    first = rows[0]
    assert (first["provider"], first["instance_type"]) == (
        cheapest_spot["provider"],
        cheapest_spot["instance_type"],
    ), describe(rows)
    assert first["ranked_as"] == "spot_with_fallback", describe(rows)
    plan = first["spot"]["deadline_plan"]
    assert float(plan["expected_cost"]) < float(plan["on_demand_only_cost"]), plan
    on_demand = ranked(LLAMA3_8B_50B_SYNC, top=50, pricing_models=["on_demand"], gpus=[first["gpu"]])
    same_shape = [float(r["price_per_hour"]) for r in on_demand if r["gpus"] == first["gpus"]]
    assert float(plan["on_demand_price_per_hour"]) == min(same_shape), plan
    for row in rows:
        wall = row["wall_clock"]
        assert wall["compute_hours"] == pytest.approx(row["hours"], abs=1e-3)
        assert wall["compute_hours"] <= wall["p50_hours"] <= wall["p90_hours"]
        assert row["hours"] <= deadline and row["gpus"] == 8, describe([row])
        if row["pricing_model"] == "spot" and wall["hours_at_probability"] > deadline:
            plan = row["spot"]["deadline_plan"]
            assert plan["available"] and plan["meets_target"], plan
            assert plan["expected_cost"] and plan["worst_case_cost"], plan


# --- 9. Accelerators at measured speed for one 8-GPU job ---------------------------------------------------
@pytest.mark.django_db
def test_llama3_8b_best_card_is_rentable_and_other_accelerators_say_where_their_speed_comes_from(
    bundled_catalog,
):
    # Class 5: for one 8-GPU pretraining job the best card is one a user can rent as an 8-GPU host (not a
    # GB200, which comes as part of an NVL72 rack); a non-NVIDIA accelerator's speed names its measured
    # source, and one without a published training measurement (Gaudi 3) is not ranked above the H100.
    gpus = ["h100-sxm5-80gb", "mi300x", "gaudi3", "gb200", "b200"]
    report = size_spec_document(copy.deepcopy(LLAMA3_8B_50B), gpus, calibrate=False)
    assert report["throughput"]["gpu"] != "gb200"
    speed = {c["gpu"]: c for c in report["candidates"] if c["gpus"] == 8}
    h100 = speed["h100-sxm5-80gb"]["throughput"]["training_tokens_per_second"]
    assert speed["gaudi3"]["throughput"]["training_tokens_per_second"] <= h100
    assert "measured" in speed["mi300x"]["speed_basis"] and "MLPerf" in speed["mi300x"]["speed_basis"]
    rows = ranked(LLAMA3_8B_50B, top=8, gpus=gpus)
    assert rows and rows[0]["gpu"] != "gb200", describe(rows)


# --- 10. torchtune's Llama 2 7B LoRA memory on RTX 4090s (pytorch/torchtune README, pre-release table) ---------
# pytorch/torchtune README.md @a95c6b931dd12a014780ded1581ea504aa4e0129 ("Update resource requirements (#551)", the
# commit that published the table): LoRA Llama-7B, "Peak memory per GPU is as reported by
# torch.cuda.max_memory_allocated()" (allocated, not reserved), 1 x RTX 4090 (lora_finetune_single_device.yaml)
# 17.18 GB; 2 x RTX 4090 (lora_finetune_distributed.yaml, FSDP) 14.17 GB; both "estimated on A100 GPUs with GPU
# memory artificially limited" by torch.cuda.set_per_process_memory_fraction. The configs at that commit: r 8 on
# q/v, batch 2, bf16 throughout (adapters too: master_weights_fp32 false), AdamW, alpaca-cleaned; activation
# checkpointing on the single device, OFF in the distributed config (enable_activation_checkpointing: False). FSDP1
# FULL_SHARD, each TransformerDecoderLayer wrapped. "GB" is read as either GiB or 1e9 B, so the published figure
# spans 16.0-17.18 GiB (1 GPU) and 13.2-14.17 GiB (2 GPUs); 10% either side of that span.
#
# The sequence length the peak was taken at, from the recipes themselves (STATED, issue 26 stop 41): neither config
# truncates (torchtune/datasets/_alpaca.py @a95c6b93 has no max_seq_len) and padded_collate pads a batch of 2 to its
# longer sample, so a step holds 2 x (the longer sample) tokens; both recipes log the peak every 100 steps with
# utils.memory_stats_log(reset_stats=True) (_log_peak_memory_every_n_steps = 100), so a printed peak is the
# longest of 200 shuffled samples. alpaca_cleaned_5k_llama2_lengths.json holds the token lengths of the first
# 5,000 alpaca-cleaned rows in torchtune's template with the Llama 2 tokenizer: the longest of 200 draws has median
# 666 tokens (p10 606, p90 763; test below). The spec states 666. Before, it stated 2,048 (docs/validation.md's
# torchtune rows), which is the epoch's far tail, not the logged window.
# Basis (issue 26 stop 41, like for like): memory_stats_log (torchtune/utils/memory.py @a95c6b93) prints
# torch.cuda.max_memory_allocated() / 1e9, i.e. tensors alone, in units of 1e9 bytes: 17.18 GB = 16.00 GiB and
# 14.17 GB = 13.20 GiB. The tests compare the engine's tensors (weights + gradients + optimizer states +
# activations of its breakdown, without the CUDA context and the allocator's slack) with those, 10% either side.
#
# The recipes' loss (STATED): the model returns `self.output(h).float()` (torchtune/modules/transformer.py
# @a95c6b93), train() keeps the shifted fp32 copy `logits = logits[..., :-1, :].contiguous()` alive through
# `loss.backward()` and runs eager nn.CrossEntropyLoss on its transpose: cross_entropy: torchtune, 16 bytes x V a
# token at log-softmax's backward (the held logits, the saved log-softmax, nll_loss's gradient, the input
# gradient). Measured with torchtune's own modules at a95c6b93 (benchmarks/torchtune_memory_trace.py: CPU, bf16,
# the allocator trace of one recipe step, Llama 2 7B widths, 2 layers, 2 x 128 tokens): peak above the weights
# 787,888 B a token without checkpointing = blocks' saved tensors 2 x 131,750 + final norm's fp32 input 16,384 +
# 16 x 32,000 x 127 / 128;
# 540,812 with checkpointing = 2 layer inputs 2 x 8,192 + 16,384 + 508,000.
#
# The recipes' norms (STATED): torchtune's RMSNorm saves its fp32 upcast (`x_fp32 = x.float()`,
# torchtune/modules/rms_norm.py @a95c6b93), 4 bytes an element where a fused norm keeps 2: fp32_norm_inputs,
# measured 139,944 B a token for a layer past the first against the 16-bit count's 123,392 (+2 x 2 x 4,096);
# +0.65 GiB on 2 GPUs at 2 x 666 tokens.
#
# What the engine still leaves out, measured the same way (2 GPUs, at the loss's backward, 2 x 666 tokens): the
# final norm's fp32 input (4 x 4,096 B a token, 0.020 GiB) cancels layer 0's first norm, which the engine counts
# as much and which reads the frozen embedding and saves nothing (measured 123,556 B a token for layer 0); FSDP1
# leaves the root unit (embeddings and output, 2 x 32,000 x
# 4,096 x 2 B = 0.488 GiB; lora_fsdp_wrap_policy wraps only the decoder layers and the adapters) unsharded from
# forward into backward (torch/distributed/fsdp/_runtime_utils.py _post_forward_reshard: "Do not free the root's
# parameters in the post-forward for FULL_SHARD"), where the engine holds one decoder layer's gather (0.377 GiB):
# +0.111; and each layer's fp32 RoPE cache (4,096 x 64 x 2 x 4 B, 32 of them) 0.063 GiB. 12.85 + 0.17 = 13.03
# GiB, -1.3% of 13.20 (test below).
#
# 1 GPU, UNEXPLAINED: with checkpointing the same composition gives 13.62 GiB (weights 12.56, RoPE 0.06, adapter
# state 0.02, the 32 checkpointed layer inputs, the final norm and the loss 0.98), the engine 13.72 (-14.3%);
# about 2.4 GiB of the 16.00 is not found. Not the window's length (with checkpointing the peak moves 0.79 MB a
# token: 2 x 2,300 tokens would be needed, longer than any of the 5,000 rows, max 1,583), not checkpointing
# left off (that needs 2 x 361 tokens, below every logged window's p10 of 606), not an allocation leaked at init
# (measured: building the model allocates exactly its parameters and buffers, and the recipe resets the peak
# after init).
TORCHTUNE_LORA_4090 = {1: 17.18, 2: 14.17}
TORCHTUNE_CHECKPOINTING = {1: "full", 2: "none"}
TORCHTUNE_WINDOW_TOKENS = 666
ALPACA_LENGTHS = json.loads((Path(__file__).parent / "alpaca_cleaned_5k_llama2_lengths.json").read_text())[
    "lengths"
]


def longest_of(draws: int, quantile: float) -> int:
    """The quantile of the longest of `draws` samples drawn from the lengths: P(max <= x) = F(x) ** draws."""
    ordered = sorted(ALPACA_LENGTHS)
    share = quantile ** (1 / draws)
    return next(length for rank, length in enumerate(ordered, 1) if rank / len(ordered) >= share)


def test_torchtune_logged_peak_window_holds_about_666_tokens_a_sample():
    # The recipes reset the peak every 100 steps of batch 2: the longest of 200 samples sets it.
    assert len(ALPACA_LENGTHS) == 5000
    assert (longest_of(200, 0.1), longest_of(200, 0.5), longest_of(200, 0.9)) == (606, 666, 763)
    assert longest_of(200, 0.5) == TORCHTUNE_WINDOW_TOKENS
    assert max(ALPACA_LENGTHS) < 2048  # 2,048 a sample is longer than any of the 5,000 rows


def torchtune_spec(gpus: int, seq_len: int = TORCHTUNE_WINDOW_TOKENS) -> dict:
    return {
        "task": "lora",
        "model": {"preset": "llama-2-7b"},
        "precision": "bf16",
        "master_weights_fp32": False,
        "lora": {"rank": 8, "targets": ["q_proj", "v_proj"]},
        "micro_batch_size": 2,
        "seq_len": seq_len,
        "gradient_checkpointing": TORCHTUNE_CHECKPOINTING[gpus],
        "cross_entropy": "torchtune",
        "fp32_norm_inputs": True,
        "parallelism": {"gpus": gpus, "zero_stage": 3 if gpus > 1 else 0},
        "training_tokens": 1e7,
    }


def tensors_gib(memory: dict) -> float:
    """The engine's tensors alone: what max_memory_allocated counts (no CUDA context, no allocator slack)."""
    parts = ("weights_gib", "gradients_gib", "optimizer_states_gib", "activations_gib", "kv_cache_gib")
    return sum(memory[key] for key in parts)


def torchtune_tensors(gpus: int, tokens: int = TORCHTUNE_WINDOW_TOKENS) -> float:
    return tensors_gib(candidate(torchtune_spec(gpus, tokens), "rtx-4090", gpus)["memory"])


def allocated_gib(gpus: int) -> float:
    return TORCHTUNE_LORA_4090[gpus] * 1e9 / GIB  # memory_stats_log: max_memory_allocated() / 1e9


@pytest.mark.parametrize(
    "gpus",
    [
        pytest.param(
            1,
            marks=pytest.mark.xfail(
                strict=True,
                reason="UNEXPLAINED: like for like, tensors 13.72 GiB against max_memory_allocated 17.18e9 B = "
                "16.00 GiB (-14.3%; 13.22, -17.4%, before the recipe's loss and norms were stated). torchtune's own modules "
                "at a95c6b93, measured, compose 13.62 GiB (checkpointed layer inputs, final norm, 16 x V loss, "
                "RoPE caches); about 2.4 GiB is not found: not the window (would need 2 x 2,300 tokens, longer "
                "than any alpaca-cleaned row of the 5,000), not checkpointing off (2 x 361 tokens, below the "
                "logged windows' p10), not an init leak (measured none). lora43 re-read the recipe at a95c6b93: "
                "lora_finetune_single_device.yaml sets enable_activation_checkpointing True, no offloading, no "
                "torch.compile (neither the config nor the recipe has one), the model built on the GPU in bf16; "
                "memory_stats_log prints peak allocated, reserved and active (active_bytes.all.peak) side by side, "
                "and the README's own note says 'based on GPU peak memory reserved' (line 41) and 'as reported by "
                "torch.cuda.max_memory_allocated()' (line 52). Read as reserved, the engine's tensors plus its 5% "
                "allocator slack are 14.40 GiB (-10.0%) and the 2-GPU row 13.50 GiB (+2.2%); the README does not say "
                "which line it copied, so neither basis is stated. relabelB48 (stop 48): the label's form only (was "
                "'UNEXPLAINED, like for like'), figure unchanged; best lead: which memory_stats_log line the README "
                "copied (reserved puts the row at -10.0%, the edge of 10%)",
            ),
        ),
        # Was a strict xfail: "engine 23.93 GiB a GPU at 2 x 2,048 tokens against torchtune's 14.17 GB (13.2-14.17
        # GiB): +69% to +81%". Then 12.91 GiB (-2.2% of 13.2 GiB) because the spec states the tokens the logged
        # peak was taken at (2 x 666, comment above): without checkpointing the activations follow the batch's
        # length, and 2,048 was no batch in the logged window (ex26d).
        # That pass compared another basis: the engine's total (12.91 GiB, context and slack included) against the
        # allocated figure; like for like its tensors were 11.73 GiB (-11.1% of 13.20 GiB). Now 12.86 GiB (-2.6%)
        # because the spec states the recipe's loss (cross_entropy: torchtune, 16 bytes x V a token at the
        # backward, +0.48 GiB) and its eager norms (fp32_norm_inputs, +0.65 GiB), both measured (comment above).
        # The rest (-2.6%) is FSDP1's unsharded root and the RoPE caches
        # (test_torchtune_2gpu_gap_is_fsdp_root_and_rope).
        2,
    ],
)
@pytest.mark.django_db
def test_torchtune_llama2_7b_lora_memory_on_rtx_4090(gpus, bundled_catalog):
    tensors = torchtune_tensors(gpus)
    assert tensors == pytest.approx(allocated_gib(gpus), rel=0.10), tensors


@pytest.mark.parametrize(
    "quantile",
    [
        # Was a strict xfail (this branch, once compared like for like): "at the window's p10 (2 x 606 tokens) the
        # tensors are 11.70 GiB, -11.3% of 13.20 GiB". Now 12.30 GiB (-6.8%) because the spec states the recipe's
        # fp32 norm inputs (+0.59 GiB at 606 tokens, measured; comment above the spec).
        0.1,
        # 2 x 763 tokens: 13.75 GiB of tensors, +4.2% of 13.20 GiB
        0.9,
    ],
)
@pytest.mark.django_db
def test_torchtune_2gpu_peak_stays_in_the_span_over_the_logged_windows(quantile, bundled_catalog):
    # Over the p10-p90 of the logged windows' longest sample the 2-GPU tensors stay within 10% of 13.20 GiB.
    tokens = longest_of(200, quantile)
    tensors = torchtune_tensors(2, tokens)
    assert tensors == pytest.approx(allocated_gib(2), rel=0.10), (tokens, tensors)


@pytest.mark.django_db
def test_torchtune_2gpu_gap_is_fsdp_root_and_rope(bundled_catalog):
    # The explanation's arithmetic, 2 x 666 tokens on 2 GPUs, at the loss's backward (comment above the spec).
    tokens, h, vocab = 2 * TORCHTUNE_WINDOW_TOKENS, 4096, 32000
    # the final norm's fp32 input, less layer 0's first norm (it reads the frozen embedding and saves nothing)
    norms = 4 * h * tokens - 4 * h * tokens
    # embeddings + output unsharded in FSDP1's root, less the engine's one-layer gather
    root = 2 * vocab * h * 2 - 405_018_666
    rope = 32 * 4096 * 64 * 2 * 4
    explained = torchtune_tensors(2) + (norms + root + rope) / GIB
    assert explained == pytest.approx(allocated_gib(2), rel=0.015), explained
    assert torchtune_tensors(2) < allocated_gib(2) * 0.98  # without them, short by more than 2%


# Class 1, checkpoint overhead. Was a strict xfail: P50 = P90 = 87.7 h for 70.2 h of compute (+25%), a
# 3.75-min synchronous write every 15 min. An 8-GPU full training run saves asynchronously by default
# (PyTorch DCP async_save, Megatron-LM --async-save, NeMo async checkpointing; costing/spot_timing.py): the
# loop blocks for each GPU's 14 GB shard (112 GB / 8) copied to host memory at 10 GB/s = 1.4 s, every
# 15 min: 280 x 1.4 s = 0.11 h, +0.16% (product: P50 70.356 h for 70.247 h). The storage write (3.75 min)
# overlaps training; a reclaim during it costs that checkpoint (counted with the restart).
@pytest.mark.django_db
def test_llama3_8b_spot_checkpoint_overhead_stays_small(bundled_catalog):
    rows = ranked(LLAMA3_8B_50B, pricing_models=["spot"])
    assert rows
    wall = rows[0]["wall_clock"]
    assert wall["p50_hours"] <= wall["compute_hours"] * 1.10, (wall, rows[0]["spot"]["interval_rule"])
    assert rows[0]["spot"]["timing"]["checkpoint_mode"] == "async", rows[0]["spot"]["timing"]
    assert "asynchronous checkpoint" in rows[0]["spot"]["interval_rule"]
    # stated synchronous, the same row pays the whole write again: 25% (3.75 of every 15 minutes)
    sync = ranked(LLAMA3_8B_50B_SYNC, pricing_models=["spot"])[0]["wall_clock"]
    assert sync["p50_hours"] == pytest.approx(sync["compute_hours"] * 1.25, rel=0.01), sync
