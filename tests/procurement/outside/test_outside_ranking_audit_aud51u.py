"""aud51u (stop 51): outside audit of the RANKING for TRAINING workloads (issue 26's done-criterion format; serving is
a second auditor's). Sources no test used (tests/ grepped for each source and figure: "GLM-130B", "PaLM-pytorch/issues/13",
"ColossalAI/issues/4342", "64.101", "CELOSS_PARALLEL_SIZE", "4 * 42GiB", "43s/it": none).

  [GLM]   lucidrains/PaLM-pytorch issue #13, quoting the GLM-130B release: "GLM-130B was pre-trained over 400 billion
          tokens on a cluster of 96 NVIDIA DGX-A100 (8x40G) GPU nodes between May 6 and July 3, 2022": 768 A100 40GB,
          58 days (1,392 h, the deadline), 400e9 / (768 x 1,392 x 3,600) = 103.9 tokens/s/GPU wall-clock (restarts
          included). Shape and plan from the GLM-130B paper (arXiv:2210.02414 sec. 2-3, read from memory, not opened
          in this session: 70 layers, hidden 12,288, 96 heads, GeGLU FFN 32,768, vocabulary 150,528, seq 2,048,
          TP 4 x PP 8). A100 SXM4 40GB is the DGX-A100 40G part.
  [CAI]   hpcaitech/ColossalAI issue #4342 (Hap-Zhang, 2023-07-27): "llama 7B with A800 80G*8 ... when i use zero3
          with batch size 8, i can get throughout 64.101samples/sec in deepspeed(The seq len is 512 too)". LLaMA-7B's
          shape is llama-2-7b's (32 x 4,096, 11,008, vocabulary 32,000). No A800 in the catalog: the A100 SXM4 80GB
          (same GA100, NVLink 400 vs 600 GB/s). 64.101 x 512 / 8 = 4,102 tokens/s/GPU. Token count stated as one
          Alpaca-sized epoch (52,002 samples), not in the source: only the rate is judged.
  [SWIFT] modelscope/ms-swift examples (sequence-parallel LoRA, the file find_string id 320441766): "# Env: 4 * A100",
          "# Max Length: 256000", "# GPU Memory: 4 * 42GiB, Training Speed 43s/it", `--model Qwen/Qwen2.5-7B-Instruct
          --train_type lora --torch_dtype bfloat16 --per_device_train_batch_size 1 --gradient_accumulation_steps 2
          --packing true --max_length 256000 --use_liger_kernel true --deepspeed zero3_offload --attn_impl flash_attn
          --sequence_parallel_size 4` (SEQUENCE_PARALLEL_IMPL=ring_attention). One iteration = 2 x 256,000 tokens over
          the 4 GPUs: 512,000 / 43 = 11,907 tokens/s. Qwen2.5-7B config.json: 28 layers, hidden 3,584, 28 / 4 KV heads
          of 128, intermediate 18,944, vocabulary 152,064, untied. The A100's memory size is unstated: 80GB taken.
  [DS4036] deepspeedai/DeepSpeed issue #4036 (Hap-Zhang, 2023-07-25), the same user and figure as [CAI]: "I trained a
          llama 7B model with deepspeed zero3 in A100 80G * 8, and training script is
          https://github.com/tatsu-lab/stanford_alpaca/blob/main/train.py. I set batch size 8 and gradient checkpoint
          is true, the throughout is 64.101samples/sec." and "when i set batch size 64 and gradient checkpoint is
          true, the throughout drops to 46.86 samples/sec." (zero3, stop 51; "issues/4036" and "46.86" grepped in
          tests/ first: none). So [CAI] ran with full recomputation, on A100 80GB, through tatsu-lab/stanford_alpaca
          train.py @761dc5bf, which pads each micro-batch to its longest sample: _tokenize_fn (lines 90-96,
          truncation at model_max_length, 512 by default, line 59) and DataCollatorForSupervisedDataset (lines
          163-167, pad_sequence): "seq len 512" is the cap, not the rows' length. Eager attention: requirements.txt
          pins transformers>=4.28.1 and every release to July 2023 (<= 4.31) runs LLaMA's attention as matmul +
          softmax (SDPA / flash_attention_2 came in 4.34-4.36): stated flash_attention false.
  [SPOT]  [CAI]'s run as a spot job: 3 epochs of 52,002 samples of 512 tokens, deadline 2 h (published pace: 156,006 /
          64.101 = 2,434 s = 0.68 h), --deadline-probability 0.9.
QLoRA on a consumer card: no source with both a published memory and speed on an RTX 3090/4090 was found within
the session's budget (lit-llama #100, alpaca-lora #47, alpaca_lora_4bit #7 give one figure or none); not judged.
"""

from __future__ import annotations

import pytest

from tests.procurement.outside.test_outside_ranking_audit_stop48 import (
    LLM_MEMORY,
    LLM_SPEED,
    err,
    row_problems,
)
from tests.procurement.outside.test_outside_recommendations_x26b import ranked

GIB = 2.0**30
A100_40, A100_80 = "a100-sxm4-40gb", "a100-sxm4-80gb"

GLM130B = {
    "name": "glm-130b",
    "num_layers": 70,
    "hidden_size": 12288,
    "num_attention_heads": 96,
    "intermediate_size": 32768,
    "vocab_size": 150528,
    "gated_mlp": True,
}
# The run's own training script (glm, stop 51): XiaoqingNLP/LargeScale configs/wudao/wudao-130B.sh @066ee8cc, the
# GLM-130B pretraining config (TP_SIZE=4, PP_SIZE=8, 70 x 12,288, FFN_HIDDEN=$((NHIDDEN * 8 / 3)) = 32,768,
# SEQ_LEN=2048, ZERO_STAGE=1): MICRO_BATCH_SIZE=1, GLOBAL_BATCH_SIZE=4224 "# 176 * 24" (24 data-parallel ranks
# = 768 / (4 x 8), so 176 micro-batches a step), --fp16, --checkpoint-activations (full recomputation). aud51u's
# spec left these at their defaults (1 micro-batch a step: a PP 8 bubble of 7/1, bf16, no recomputation).
GLM = {
    "task": "pretrain",
    "model": GLM130B,
    "precision": "fp16",
    "seq_len": 2048,
    "micro_batch_size": 1,
    "gradient_accumulation_steps": 176,
    "gradient_checkpointing": "full",
    "parallelism": {"gpus": 768, "tensor_parallel": 4, "pipeline_parallel": 8, "zero_stage": 1},
    "training_tokens": 400e9,
}
GLM_DEADLINE_H = 58 * 24
PUB_GLM_TPS_GPU = 400e9 / (768 * GLM_DEADLINE_H * 3600)

CAI = {
    "task": "full_finetune",
    "model": {"preset": "llama-2-7b"},
    "precision": "bf16",
    "seq_len": 512,
    "micro_batch_size": 8,
    "parallelism": {"gpus": 8, "zero_stage": 3},
    "training_tokens": 52002 * 512,
}
PUB_CAI_TPS_GPU = 64.101 * 512 / 8
# [DS4036] as run (zero3): the mean padded length of a micro-batch is the expected longest of its samples. By hand
# (not in the suite: no tokenizer in the venv): Alpaca records formatted by train.py's PROMPT_DICT + output, bos and
# eos, tokenized with the LLaMA sentencepiece model (karpathy/llama2.c@350e04fe tokenizer.model, the 32,000-piece
# LLaMA vocabulary), capped at 512; E[max of b] by 20,000 draws with replacement. Samples: 1,807 records of
# wushihong615/LLM-backdoor-detection@f25cdeca alpaca_data.json (Alpaca with a few injected records; no full copy
# of the 52,002 was reachable): mean 123.1 tokens, E[max of 8] 226.8, E[max of 64] 362.3; the first 102 records of
# the original (tinh1115/alpaca-lora@b6ff70fa): mean 136.3, 263.1, 373.2. Check: stanford_alpaca issue #8 gives
# "about 6.6M tokens" for the set, 6.6e6 / 52,002 = 126.9 a record (the 1,807 sample -3.0%, the 102 +7.4%).
DS4036_PADDED_TOKENS = {8: 227, 64: 362}
PUB_DS4036_SAMPLES_S = {8: 64.101, 64: 46.86}


def ds4036(batch: int) -> dict:
    padded = DS4036_PADDED_TOKENS[batch]
    return CAI | {
        "seq_len": padded,
        "max_seq_len": 512,
        "micro_batch_size": batch,
        "gradient_checkpointing": "full",
        "flash_attention": False,
        "training_tokens": 52002 * padded,
    }


QWEN25_7B = {
    "name": "Qwen2.5-7B",
    "num_layers": 28,
    "hidden_size": 3584,
    "num_attention_heads": 28,
    "num_key_value_heads": 4,
    "head_dim": 128,
    "intermediate_size": 18944,
    "vocab_size": 152064,
    "tie_word_embeddings": False,
}
SWIFT = {
    "task": "lora",
    "model": QWEN25_7B,
    "precision": "bf16",
    "seq_len": 256000,
    "micro_batch_size": 1,
    "gradient_accumulation_steps": 2,
    "gradient_checkpointing": "full",
    "cross_entropy": "fused",
    "lora": {"rank": 8, "targets": "all-linear"},
    "parallelism": {"gpus": 4, "zero_stage": 3, "offload": "optimizer_and_params", "context_parallel": 4},
    "training_tokens": 512000 * 100,
}
PUB_SWIFT_TPS = 512000 / 43
PUB_SWIFT_GIB = 42.0

SPOT = CAI | {"training_tokens": 3 * 52002 * 512}
SPOT_DEADLINE_H = 2.0


def on(spec: dict, gpu: str) -> dict:
    return ranked(spec, 1, gpus=[gpu])[0]


def tokens_per_gpu(spec: dict, row: dict) -> float:
    return spec["training_tokens"] / (row["hours"] * 3600 * row["gpus"])


# Was a strict xfail (UNEXPLAINED, aud51u: no ranked row at all). Cause (glm, stop 51): the contract added the
# instance counts that make a stated GPU count only up to 64 instances (ranking/contract.instance_counts_for), so
# 96 nodes of 8 were never tried, and the empty answer said only "no offer makes 768 GPUs". Fixed at the class:
# ranking.options.MAX_INSTANCES = 2,048 (published clusters, 48 to 2,048 nodes) bounds both that and requested
# instance_counts. Before -> after: no row -> 5 rows; on A100 40GB, AWS p4d.24xlarge 96 x 8 (NVSwitch inside,
# EFA 400 Gb/s between), TP 4 x PP 8 ZeRO-1, peak 19.64 GiB a GPU of 40 (the run fit; so does ours), 1,034.2 h.
@pytest.mark.django_db
def test_glm130b_pretrain_on_its_cluster_is_ranked_within_its_deadline(bundled_catalog):
    rows = ranked(GLM, 5, deadline_hours=GLM_DEADLINE_H)
    assert rows and not row_problems(rows, GLM)
    # stop 51 (inst16, a2net): GCP a2-megagpu-16g 48 x 16 A100 40GB (100 Gb/s gVNIC) now ranks first by cost; like
    # for like with the run's DGX-A100 nodes of 8 is the 96 x 8 row, which the test reads (it was the first row).
    rows = ranked(GLM, 10, deadline_hours=GLM_DEADLINE_H, gpus=[A100_40])
    assert all(row["gpus"] == 768 for row in rows)
    row = next(row for row in rows if row["gpus_per_instance"] == 8)
    assert (row["instances"], row["gpus_per_instance"], row["gpus"]) == (96, 8, 768)
    plan = row["plan"]
    assert (plan["tensor_parallel"], plan["pipeline_parallel"], plan["zero_stage"]) == (4, 8, 1)
    assert row["fits"] and row["memory_per_gpu_gib"] <= 40.0 and row["hours"] <= GLM_DEADLINE_H


R_GLM = (
    "UNEXPLAINED (glm): [GLM] on its own card (A100 40GB, 96 x 8, TP 4 x PP 8, ZeRO-1, fp16, full recomputation, "
    "176 micro-batches a step from the run's script) ours is 1,034.2 h = 794,254 GPU-hours against the published "
    "58 days, 768 x 1,392 = 1,069,056 (-25.7%; 139.9 vs 103.9 tokens/s/GPU). The published figure is the "
    "calendar window (May 6 to July 3, 2022), restarts, loss-spike rollbacks and evaluation included; ours is "
    "compute time. Partly sized: ours runs at (6 x 130e9 + 12 x 70 x 2,048 x 12,288) x 139.9 / 312e12 = 35.9% "
    "MFU, against the paper's reported 32.5% MFU (arXiv:2210.02414 sec. 3, recalled, not opened this session): "
    "at 32.5% ours would be 1,142.6 h, ~30% of the 358 h gap; the rest (249 h, 18% of the window: downtime) is "
    "not sized from a log. "
    "The batch ramp (--rampup-batch-size 192 24 over 2.5% of samples) adds ~0.2% (7/m averaged over m 8..176)."
)


# The GPU-hours against the published run at the auditor's bar (15%): before, not judged (no row); after -25.7%.
@pytest.mark.django_db
@pytest.mark.xfail(strict=True, reason=R_GLM)
def test_glm130b_gpu_hours_on_its_cluster_match_the_published_run(bundled_catalog):
    rows = ranked(GLM, 10, deadline_hours=GLM_DEADLINE_H, gpus=[A100_40])
    row = next(row for row in rows if row["gpus_per_instance"] == 8)  # like for like: the run's nodes of 8
    assert abs(err(row["gpus"] * row["hours"], 768 * GLM_DEADLINE_H)) <= LLM_SPEED


@pytest.mark.django_db
def test_deepspeed_zero3_llama7b_top5_honours_the_contract_and_rebuilds(bundled_catalog):
    rows = ranked(CAI, 5)
    assert len(rows) == 5 and not row_problems(rows, CAI)
    assert all(r["gpus"] == 8 and r["plan"]["zero_stage"] == 3 for r in rows)
    assert all(r["plan"]["tensor_parallel"] == 1 and r["plan"]["pipeline_parallel"] == 1 for r in rows)


def ds4036_samples_per_second(batch: int) -> float:
    spec = ds4036(batch)
    return tokens_per_gpu(spec, on(spec, A100_80)) * 8 / spec["seq_len"]


DS4036_LEFT = (
    "Fit of both rows to t = a + tokens / r a micro-batch (accumulation 1 assumed, HF Trainer's default; the "
    "issue states only the batch): published 0.998 s for 8 x 227 tokens "
    "and 10.926 s for 64 x 362: r = 2,151 tokens/s a GPU, a = 0.15 s (at the 102-record lengths 263 / 373: "
    "2,193, 0.04 s); ours runs 2,713 / 2,650 tokens/s a GPU, +23-26% on the marginal rate, so a per-micro-batch "
    "cost is not the main part (0.04-0.15 s of the 0.33 s B8 gap, 2-7% of the 2.18 s B64 gap). Located, not "
    "sized: DeepSpeed ZeRO-3 prefetches only on a complete module trace (partitioned_param_coordinator.py@v0.10.0 "
    "lines 308-309, @v0.14.2 322-323; the run's version, July 2023, is unstated); without it every submodule's "
    "all-gather blocks (fetch_sub_module), 3 a micro-batch under recomputation, 3 x 0.049 s = 0.15 s at the "
    "engine's A100 gather rate: at most the fitted a. Unlocated: the per-token 21-26% (2023 eager LLaMA's fp32 "
    "upcasts and RoPE copies; HF Trainer's torch AdamW step each micro-batch at accumulation 1 is counted). The "
    "bar is missed at both tokenised samples, so the label does not hang on the padding estimate."
)
R_DS4036_B8 = (
    "UNEXPLAINED (zero3): [DS4036] / [CAI] LLaMA-7B, DeepSpeed ZeRO-3, 8 x A100 80GB, batch 8, recomputation, "
    "Alpaca padded to each micro-batch's longest (227 tokens on average, see DS4036_PADDED_TOKENS): published "
    "64.101 samples/s, ours 95.61 (+49.2%; at 263 tokens 82.01, +27.9%). Before, aud51u stated 512-token rows "
    "without recomputation and read 3,116 against 4,102 tokens/s a GPU (48.69 samples/s, -24.0%): the -24% "
    "was the spec (the cap read as the length), not ZeRO-3's pricing. " + DS4036_LEFT
)
R_DS4036_B64 = (
    "UNEXPLAINED (zero3): [DS4036] the sibling, batch 64 (362 padded tokens on average): published 46.86 "
    "samples/s, ours 58.57 (+25.0%; at 373 tokens 56.74, +21.1%). Padding sizes the issue's question (why batch "
    "64 is slower in samples/s): ours 95.61 / 58.57 = 1.63x (1.45x at the 102-record lengths) against the "
    "published 1.37x. " + DS4036_LEFT
)


@pytest.mark.django_db
@pytest.mark.xfail(strict=True, reason=R_DS4036_B8)
def test_deepspeed_zero3_llama7b_batch8_alpaca_speed_as_run(bundled_catalog):
    assert abs(err(ds4036_samples_per_second(8), PUB_DS4036_SAMPLES_S[8])) <= LLM_SPEED


@pytest.mark.django_db
@pytest.mark.xfail(strict=True, reason=R_DS4036_B64)
def test_deepspeed_zero3_llama7b_batch64_alpaca_speed_as_run(bundled_catalog):
    assert abs(err(ds4036_samples_per_second(64), PUB_DS4036_SAMPLES_S[64])) <= LLM_SPEED


@pytest.mark.django_db
def test_deepspeed_zero3_alpaca_rows_pin_their_figures(bundled_catalog):
    """zero3: the figures the two strict xfails quote (A100 SXM4 80GB), and the padding's direction: batch 64 reads
    fewer samples a second than batch 8, as [DS4036] published (64.101 -> 46.86)."""
    b8, b64 = ds4036_samples_per_second(8), ds4036_samples_per_second(64)
    assert b8 == pytest.approx(95.61, rel=0.01)
    assert b64 == pytest.approx(58.57, rel=0.01)
    assert b64 < b8


R_SWIFT_MEM = (
    "UNEXPLAINED (aud51u; offl sized 21%): [SWIFT] Qwen2.5-7B LoRA at 256,000 tokens, 4 A100, ZeRO-3 offload, "
    "ring-attention sequence parallel 4 (stated as context_parallel 4), Liger loss: published 42 GiB a GPU, ours "
    "27.88 (-33.6%; unchanged by offl). Config read (ms-swift swift/llm/ds_config/zero3_offload.json@7258e11b and "
    "@401737e2): offload_param cpu, offload_optimizer none (the adapters' state stays on the GPU: 20M x 16 B / 4 = "
    "0.07 GiB), stage3_max_live_parameters 1e9, stage3_max_reuse_distance 1e9, prefetch bucket auto (HF: 0.9 x "
    "3,584^2 = 11.6M). Sized from code, upper bounds against the 14.1 GiB gap: live gathered parameters up to 1e9 x "
    "2 B = 1.86 GiB against our one-table gather buffer 1.02 (+0.84); Liger's fused linear cross entropy "
    "(liger_kernel/ops/fused_linear_cross_entropy.py: chunk next_pow2(ceil(64,000 / ceil(152,064 / 3,584))) = "
    "2,048 tokens x 152,064 x 2 B = 0.58 GiB of logits, plus grad_input 64,000 x 3,584 x 2 B = 0.43): <= 1.0; the "
    "ring's K/V blocks in flight (2 x 64,000 x 4 x 128 x 2 x 2 B = 0.24) and fp32 dK/dV accumulators (0.24): "
    "<= 0.5; total <= 2.9 GiB, ~21% of the gap. Not located: the other ~11 GiB (PEFT's lora_dropout input copies "
    "at 64k tokens a rank, the caching allocator's reserve at 2.4 GB MLP tensors; the published figure is "
    "presumably nvidia-smi's, not max_memory_allocated)."
)


@pytest.mark.django_db
@pytest.mark.xfail(strict=True, reason=R_SWIFT_MEM)
def test_swift_lora_256k_memory_on_a100(bundled_catalog):
    row = on(SWIFT, A100_80)
    assert row["gpus"] == 4 and row["plan"]["context_parallel"] == 4
    assert abs(err(row["memory_per_gpu_gib"], PUB_SWIFT_GIB)) <= LLM_MEMORY


R_SWIFT_SPEED = (
    "UNEXPLAINED (aud51u; offl sized the offload, the rest located not sized): [SWIFT] the same run: published "
    "512,000 tokens / 43 s = 11,907 tokens/s on 4 A100, ours 2,307 (-80.6%; fix51e: 2,320, -80.5%, before the "
    "flat offload share was retired for per-step copies and the CPU step; the fetches now pageable, pin_memory "
    "unstated, at 10.0 GB/s). offl: "
    "1,554 -> 2,320 (-87.0% -> -80.5%): the flat +50% offload overhead then covered only the trainable share "
    "(DeepSpeed's offloaded optimizer holds requires_grad parameters only, stage3.py@v0.14.2 "
    "_get_trainable_parameter_groups; the run's zero3_offload.json offloads parameters, not the optimizer) plus "
    "the base's 16-bit weights fetched over PCIe (3 passes x 2 micro-batches x 15.2 GB / 4 ranks / 31.5 GB/s = "
    "0.73 s). Left: 83% of our step's FLOPs are causal attention over the whole 256,000-token row, but "
    "--packing true with flash_attn attends within each packed sample (LongAlpaca-12k); at packed_sample_tokens "
    "8,000 / 16,000 / 32,000 the step would be 42.8 / 48.5 / 60.0 s (+0.5% / -11% / -28%). Not stated: "
    "LongAlpaca-12k's sample lengths and whether ms-swift's ring_attention keeps packing boundaries are unread."
)


@pytest.mark.django_db
@pytest.mark.xfail(strict=True, reason=R_SWIFT_SPEED)
def test_swift_lora_256k_speed_on_a100(bundled_catalog):
    row = on(SWIFT, A100_80)
    assert abs(err(tokens_per_gpu(SWIFT, row) * 4, PUB_SWIFT_TPS)) <= LLM_SPEED


@pytest.mark.django_db
def test_swift_lora_256k_top5_keeps_the_plan_and_rebuilds(bundled_catalog):
    rows = ranked(SWIFT, 5)
    assert len(rows) == 5 and not row_problems(rows, SWIFT)
    assert all(
        r["gpus"] == 4 and r["plan"]["zero_stage"] == 3 and r["plan"]["context_parallel"] == 4 for r in rows
    )


@pytest.mark.django_db
def test_spot_zero3_rows_meet_the_deadline_at_p90_tight_fits_below_the_first_comfortable(bundled_catalog):
    rows = ranked(SPOT, 5, deadline_hours=SPOT_DEADLINE_H, deadline_probability=0.9, pricing_models=["spot"])
    assert len(rows) == 5 and not row_problems(rows, SPOT)
    for r in rows:
        assert r["wall_clock"]["p90_hours"] <= SPOT_DEADLINE_H
        assert r["wall_clock"]["probability"] == 0.9
    first = rows[0]["memory_margin"]
    assert first["headroom_that_fits"] >= first["headroom_asked"]
