"""Issue 26 done-criterion, training half, run afresh from outside (aud50a, stop 50): five published training /
fine-tuning runs that no test in tests/ used before (grepped for each model, source and figure: "xtuner", "2771",
"stablelm-3b-4e1t" / "StableLM-3B-4E1T", "PaddlePaddle" BERT rows "120" / "876", "19.73": none; BERT-large SQuAD
itself is in cases.json as a V100 case from another source, and Alpaca token lengths are reused from
alpaca_cleaned_5k_llama2_lengths.json), stated as the publisher ran them with only docs/workload-spec.md's fields,
ranked through the service `manage.py recommend SPEC --format json --top 5` runs (`ranked`) and sized on the
publisher's own GPU (`size_spec_document`, calibration off), judged with aud48r's stop-48 helpers (`judge`,
`candidate`, `err`, `tokens_per_gpu`, `row_problems`) as the stop-49 module does:

  (1) row 1 sensible (stated GPU count / ZeRO honoured, fits with its margin shown, host sized, no rack-scale part,
      a deadline met on wall clock at the stated probability: every top-five row is checked here);
  (2) published vs ours within 15% (LLM speed / hours) and 10% (memory where published);
  (3) every row's cost rebuilt by hand to the cent (price x hours x instances; total = the sum of its parts).

A miss is a strict xfail "UNEXPLAINED (aud50a): published X, ours Y (+Z%); lead: ...".

Sources (verbatim where quoted):
  [XT8K]   InternLM/xtuner @e973224e48b5e5ce7cfbf24a01a77b3c5e0c8162 xtuner/configs/llama/llama3_8b/README.md "Full
           parameter fine-tune Llama3 8B in 8k context only requires 2 * A100-80G", Speed table: "| Llama3 8B | 8k |
           8 | ZeRO-3 | 1 | 2771.2 | 205.1 |" (sequence length, GPU number, ZeRO, sequence parallel, tokens per second
           (a GPU), TFLOPs). The row's TFLOPs column is xtuner's ThroughputHook, which the repository's speed-benchmark
           configs carry and the README's named recipe (llama3_8b_instruct_full_alpaca_e3.py, max_length 2048,
           use_varlen_attn False, no ThroughputHook) does not: the benchmark family @10bf0839
           (xtuner/configs/llama_speed_benchmark/llama2_7b/llama2_7b_full_alpaca_enzh_8k_sp1.py) packs Alpaca en+zh
           to max_length 8192 with "use_varlen_attn = True", batch_size 1 a device, SupervisedFinetune (activation
           checkpointing on by default). So a packed 8k row whose samples attend within themselves: stated as
           packed_sample_tokens = sum L^2 / sum L of Alpaca, 312 from alpaca_cleaned_5k_llama2_lengths.json (Llama 2
           tokenizer, Alpaca template; a proxy: the run's tokenizer and the zh half are not measured), full
           recomputation, ZeRO-3 on 8 A100 80GB. The deadline is the buyer's: 1e9 tokens in 14 h at P90 (the
           published rate needs 1e9 / (2,771.2 x 8) s = 12.53 h on its own 8 cards).
  [HUB8B]  Lightning-AI/litgpt @e54939861b6f35ddd945c2e95cfc7abac0fba75a config_hub/finetune/README.md ("All experiments
           were conducted using bfloat-16 precision on the Alpaca2k dataset"): "| llama-3-8b/lora.yaml | llama-3-8b | 2
           | 512 | 1 | 1xA10G | 14.79 min | $0.4 | 19.73 GB |"; its config (config_hub/finetune/llama-3-8b/lora.yaml,
           stored @3352a7aa): precision bf16-true, lora_r 32, lora_dropout 0.05, lora_query and lora_value only,
           micro_batch_size 1, global_batch_size 8, max_seq_length 512. aud49b's siblings of this table (Llama 2 7B,
           Mistral 7B, StableLM alpha LoRA / QLoRA) are test_outside_bnb_audit_stop49.py's; this row is not. Memory
           only: the runtime needs Alpaca2k's token count, which the table does not give.
  [SLM3B]  huggingface.co/stabilityai/stablelm-3b-4e1t (model card): "StableLM-3B-4E1T was trained on the Stability AI
           cluster across 256 NVIDIA A100 40GB GPUs (AWS P4d instances). Training began on August 23, 2023, and took
           approximately 30 days to complete."; "pre-trained on 1 trillion tokens ... for 4 epochs"; "We use a fork of
           gpt-neox ..., train under 2D parallelism (Data and Tensor Parallel) with ZeRO-1 ..., and rely on
           flash-attention". Config Stability-AI/StableLM @8a9fb3d2ac780d6730049532a88dfc7dc0578d41
           configs/stablelm-3b-4e1t.yml: "model-parallel-size": 1, "pipe-parallel-size": 1, 32 layers, hidden 2560,
           32 heads, seq 4096, gated SiLU MLP ("mlp_multiple_of": 256: 6,912, the HF config's intermediate_size),
           untied, "train_micro_batch_size_per_gpu": 4, "checkpoint-activations": true, ZeRO "stage": 1,
           "955_000 iters ~= 4.0T tokens at bs=4M", bf16. 4e12 / (30 x 86,400 x 256) = 6,028 tokens/s a GPU.
           The cluster deadline stated: 720 h (30 days).
  [BERTSQ] NVIDIA/DeepLearningExamples @8cdaba13eb6cc5dedb045bf1fb590400ad65ed07 PaddlePaddle/LanguageModeling/BERT/
           README.md, "Fine-tuning NVIDIA DGX A100 (8x A100 80GB)", SQuAD: "| 1 | 32 and 32 | 83 | 120 | 1.45 |" and
           "| 8 | 32 and 32 | 629 | 876 | 1.39 |" (GPUs, batch / GPU, TF32 and mixed-precision sequences/s); accuracy
           table "| 8 | 32 | 91.13 | 91.11 | 0.078 | 0.056 | 1.39 |" (time to train, hours, TF32 / mixed); the
           benchmark call "bash scripts/run_squad.sh ... 2 32 4.6e-5 0.2 amp 8 ..." (2 epochs, batch 32, AMP);
           PaddlePaddle 22.12 NGC container; max_seq_length 384 (the inference table's "384"). BERT-large
           (procurement/sizing/validation.py BERT_LARGE). SQuAD v1.1 at 384 / stride 128 is 88,641 training features
           (tests/procurement/outside/cases.json); 2 epochs = 177,282 sequences, 177,282 / 876 = 202 s = 0.0562 h,
           the accuracy table's 0.056 h. The 1-GPU row is stated as a spot fine-tune with a buyer's deadline:
           2 epochs in 1 h at P90, spot only (published on its own card: 177,282 / 120 = 0.410 h).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from procurement.sizing.assumptions import MFU_PRETRAIN_AMPERE, RECOMPUTE_FORWARD_TIME_SHARE
from procurement.sizing.gpus import gpu_by_slug, hierarchical_links
from procurement.sizing.memory import memory_breakdown_scalar
from procurement.sizing.spec import parse_workload_spec
from procurement.sizing.throughput import costed_flops_per_token, training_throughput
from procurement.sizing.validation import BERT_LARGE
from tests.procurement.outside.test_outside_ranking_audit_stop48 import (
    LLM_MEMORY,
    LLM_SPEED,
    candidate,
    err,
    judge,
    tokens_per_gpu,
)
from tests.procurement.outside.test_outside_recommendations_x26b import ranked

GIB = 2.0**30

# Alpaca's sum L^2 / sum L (Llama 2 tokenizer, Alpaca template, first 5,000 alpaca-cleaned rows): 311.98 tokens
ALPACA_LENGTHS = json.loads((Path(__file__).parent / "alpaca_cleaned_5k_llama2_lengths.json").read_text())[
    "lengths"
]
ALPACA_PACKED = round(sum(n * n for n in ALPACA_LENGTHS) / sum(ALPACA_LENGTHS))

XT8K = {
    "task": "full_finetune",
    "model": {"preset": "llama-3-8b"},
    "seq_len": 8192,
    "micro_batch_size": 1,
    "packed_sample_tokens": ALPACA_PACKED,
    "gradient_checkpointing": "full",
    "parallelism": {"gpus": 8, "zero_stage": 3},
    "training_tokens": 1e9,
}
XT8K_DEADLINE = {"deadline_hours": 14, "deadline_probability": 0.9}

HUB8B = {
    "task": "lora",
    "model": {"preset": "llama-3-8b"},
    "precision": "bf16",
    "master_weights_fp32": False,  # bf16-true
    "seq_len": 512,
    "micro_batch_size": 1,
    "gradient_accumulation_steps": 8,
    "gradient_checkpointing": "none",
    "lora": {"rank": 32, "targets": ["q_proj", "v_proj"], "dropout": 0.05},
    "parallelism": {"gpus": 1},
    "training_tokens": 1e7,
}

STABLELM_3B = {
    "name": "stablelm-3b-4e1t",
    "num_layers": 32,
    "hidden_size": 2560,
    "num_attention_heads": 32,
    "intermediate_size": 6912,
    "vocab_size": 50304,  # the NeoX tokenizer's 50,257 padded as gpt-neox pads (HF config: 50,304)
    "gated_mlp": True,
}
SLM3B = {
    "task": "pretrain",
    "model": STABLELM_3B,
    "seq_len": 4096,
    "micro_batch_size": 4,
    "gradient_checkpointing": "full",
    "parallelism": {"gpus": 256, "zero_stage": 1},
    "training_tokens": 4e12,
    # the card: "We use a fork of gpt-neox"; neox, stop 50: the stack's own A100 rate
    # (test_outside_gpt_neox_stack_stop50.py)
    "training_stack": "gpt_neox",
}
SLM3B_PUBLISHED = 4e12 / (30 * 86400 * 256)


def bert_squad(gpus: int) -> dict:
    """[BERTSQ] BERT-large SQuAD v1.1 fine-tune, AMP (fp16 with fp32 master weights), batch 32 of 384 a GPU, 2 epochs.
    flash_attention false: Paddle's fused multi-head attention materialises the scores. mixed_precision half_model
    (fix50e): Paddle 22.08's fused_attention op runs whole in the AMP dtype (fmha_ref.h, 40 B a score element) and
    DeepLearningExamples' PyTorch run_squad.py is apex O2 (44 B); the engine's half_model count is the latter."""
    return {
        "task": "full_finetune",
        "model": dict(BERT_LARGE),
        "precision": "fp16",
        "mixed_precision": "half_model",
        "micro_batch_size": 32,
        "seq_len": 384,
        "flash_attention": False,
        "parallelism": {"gpus": gpus},
        "training_tokens": 2 * 88641 * 384,
    }


BERT1 = bert_squad(1)
BERT8 = bert_squad(8)
BERT1_SPOT = {"deadline_hours": 1, "deadline_probability": 0.9, "pricing_models": ["spot"]}


def deadline_problems(rows: list[dict], hours: float) -> list[str]:
    """Every top-five row must meet the deadline on wall clock at the stated probability (issue 26 class 1)."""
    out = []
    for i, r in enumerate(rows, 1):
        wall = (r.get("wall_clock") or {}).get("hours_at_probability")
        if wall is None or wall > hours:
            out.append(f"row {i} ({r['provider']} {r['instance_type']}) {wall} h at P90 against {hours} h")
    return out


def stated_plan_problems(rows: list[dict], spec: dict) -> list[str]:
    """Stated gpus / zero_stage kept on every row (issue 26 class 3)."""
    par = spec["parallelism"]
    out = []
    for i, r in enumerate(rows, 1):
        if r["gpus"] != par["gpus"]:
            out.append(f"row {i} runs {r['gpus']} GPUs, stated {par['gpus']}")
        if "zero_stage" in par and r["plan"]["zero_stage"] != par["zero_stage"]:
            out.append(f"row {i} runs ZeRO {r['plan']['zero_stage']}, stated {par['zero_stage']}")
    return out


# --- [XT8K] full fine-tune with a deadline ----------------------------------------------------------------------


@pytest.mark.django_db
def test_xtuner_llama3_8b_full_ft_8k_8_a100_zero3_with_a_deadline(bundled_catalog):
    """[XT8K] 2,771.2 tokens/s a GPU: ours 2,486.6 (-10.3%) stated as the benchmark family runs (packed 8k rows,
    varlen attention, samples of ~312 tokens). Ranked with 14 h at P90 for 1e9 tokens: every row keeps 8 GPUs and
    ZeRO-3, meets the deadline, and rebuilds to the cent (row 1 verda B200 x8 spot, ~2 h)."""
    c = candidate(XT8K, "a100-sxm4-80gb")
    problems = judge(XT8K, [("A100 tokens/s/GPU", tokens_per_gpu(c), 2771.2, LLM_SPEED)], **XT8K_DEADLINE)
    rows = ranked(XT8K, 5, **XT8K_DEADLINE)
    problems += deadline_problems(rows, 14) + stated_plan_problems(rows, XT8K)
    assert not problems, problems


@pytest.mark.django_db
def test_xtuner_row_is_the_varlen_reading_not_a_fitted_length(bundled_catalog):
    """[XT8K] the landing does not hang on the proxy length: any sample length from 200 to 500 tokens reads within
    15% (-10.1..-10.6%); without varlen (attention over the whole packed 8k row, the README's named recipe's
    use_varlen_attn False) the engine reads 2,185 (-21.1%), so the varlen statement is what lands the row."""
    assert ALPACA_PACKED == 312
    for length in (200, 312, 500):
        ours = tokens_per_gpu(candidate(XT8K | {"packed_sample_tokens": length}, "a100-sxm4-80gb"))
        assert abs(err(ours, 2771.2)) <= LLM_SPEED
    dense = {k: v for k, v in XT8K.items() if k != "packed_sample_tokens"}
    ours_dense = tokens_per_gpu(candidate(dense, "a100-sxm4-80gb"))
    assert err(ours_dense, 2771.2) == pytest.approx(-0.211, abs=0.005)


# --- [HUB8B] LoRA, one A10G ---------------------------------------------------------------------------------------


@pytest.mark.django_db
def test_litgpt_llama3_8b_lora_a10g_peak_memory(bundled_catalog):
    """[HUB8B] peak 19.73 GB (torch max_memory_allocated / 1e9): ours 20.15 GB (+2.1%), aud49b's convention
    (total_per_gpu_gib x 2^30 / 1e9). Ranked: row 1 an L40S (AWS g6e.2xlarge spot), the L4 rows that fit only
    without the 20% headroom ('tight', margin shown) below it (issue 26 class 6); every row rebuilds to the cent."""
    ours_gb = memory_breakdown_scalar(parse_workload_spec(HUB8B))["total_per_gpu_gib"] * GIB / 1e9
    problems = judge(HUB8B, [("A10G peak memory GB", ours_gb, 19.73, LLM_MEMORY)])
    rows = ranked(HUB8B, 5)
    first_tight = next((i for i, r in enumerate(rows) if r["reasons"][0].startswith("tight")), len(rows))
    if first_tight == 0:
        problems.append("row 1 is a tight fit")
    for r in rows[first_tight:]:
        if not r["reasons"][0].startswith("tight") or "margin" not in r["reasons"][0]:
            problems.append(
                f"a comfortable row below a tight one, or a tight row without its margin: {r['reasons'][0]}"
            )
    assert not problems, problems


@pytest.mark.django_db
def test_litgpt_lora_rows_with_a_short_host_rank_below_the_same_card_on_a_sized_host(bundled_catalog):
    """[HUB8B] FIXED (fix50a, stop 50): AWS g6.xlarge L4 spot (16 GiB host: 'host RAM too small: 16 GiB on the
    instance, needs 18.5 GiB', and tight) ranked above the same L4 on g6.2xlarge (32 GiB, tight only) for
    $1.83-1.85 against $1.92-1.93, because ranked_order ORed every doubt into one flag and ordered the doubted rows
    by cost. Doubted rows now go by how many doubts they carry, then cost: the tight-only L4 rows come first."""
    rows = ranked(HUB8B, 5)
    short = [i for i, r in enumerate(rows) if any(x.startswith("host RAM too small") for x in r["reasons"])]
    sized = [
        i
        for i, r in enumerate(rows)
        if i not in short and r["gpu"] in {rows[j]["gpu"] for j in short} and r["reasons"][0][:5] == "tight"
    ]
    assert not short or not sized or min(sized) < min(short), [
        (r["instance_type"], r["total_cost"], r["reasons"][0][:40]) for r in rows
    ]


# --- [SLM3B] pretraining on a 256-GPU cluster with a deadline ----------------------------------------------------


@pytest.mark.django_db
def test_stablelm_3b_4e1t_pretrain_256_a100_40gb_30_days(bundled_catalog):
    """[SLM3B] FIXED (neox, stop 50): 6,028 tokens/s a GPU published; ours 7,946.6 (+31.8%) unstated, now 6,570
    (+9.0%) stated on its stack, training_stack gpt_neox: 0.524 / (1 + 621 / 2,560) = 0.422 of the peak, the
    GPT-NeoX A100 rate fitted on Llemma 7B's published hours (held out here). Ranked with 720 h: every row keeps 256
    GPUs and ZeRO-1, meets the deadline at P90 and rebuilds to the cent."""
    c = candidate(SLM3B, "a100-sxm4-40gb")
    problems = judge(
        SLM3B, [("A100-40GB tokens/s/GPU", tokens_per_gpu(c), SLM3B_PUBLISHED, LLM_SPEED)], deadline_hours=720
    )
    rows = ranked(SLM3B, 5, deadline_hours=720)
    problems += deadline_problems(rows, 720) + stated_plan_problems(rows, SLM3B)
    assert not problems, problems


@pytest.mark.django_db
def test_stablelm_rows_keep_the_cluster_plan_and_meet_720_hours(bundled_catalog):
    """[SLM3B] the ranking half alone passes: 256 GPUs and ZeRO-1 on every row, each within 720 h, every cost
    rebuilt (the speed miss above is the engine's rate, not the ranking)."""
    rows = ranked(SLM3B, 5, deadline_hours=720)
    problems = (
        judge(SLM3B, [], deadline_hours=720)
        + deadline_problems(rows, 720)
        + stated_plan_problems(rows, SLM3B)
    )
    assert not problems, problems


# --- [BERTSQ] BERT-large SQuAD fine-tuning: one A100 as a spot job with a deadline, and the 8-GPU DGX row ----------


@pytest.mark.django_db
def test_paddle_bert_large_squad_one_a100_as_a_spot_job_with_a_deadline(bundled_catalog):
    """[BERTSQ] 120 sequences/s published, ours 157.2 (+31.0%) before fix50a, 116.5 (-2.9%) at fix50a's 56 B
    (diffusers' count, an overcount for this stack: aud50e), 123.35 (+2.8%) at the half_model count (fix50e: 44 B a
    score element, 6.50 MB a token, 4.55 us at 0.70 x 2,039 GB/s beside 16.57 us of GEMMs at 0.40; Paddle's own op
    moves 40 B: 125.8, +4.8%). Passes, but not on a fully explained step: the same README's fused-attention A/B
    (test_outside_eager_training_audit_aud50e.py R_AB) shows attention at 2.4-5.7% of the step where this term
    is 21.5%, so part of what lands here is the term covering the engine's A100 GEMM-rate miss on a d-1,024
    encoder (R_FMHA: +27.8% with attention fused). Ranking with a 1 h deadline at P90, spot only: every row meets
    it and rebuilds to the cent."""
    c = candidate(BERT1, "a100-sxm4-80gb")
    seq_s = c["throughput"]["training_tokens_per_second"] / 384
    problems = judge(BERT1, [("A100 sequences/s", seq_s, 120.0, LLM_SPEED)], **BERT1_SPOT)
    rows = ranked(BERT1, 5, **BERT1_SPOT)
    problems += deadline_problems(rows, 1) + stated_plan_problems(rows, BERT1)
    problems += [f"row {i} is not spot" for i, r in enumerate(rows, 1) if r["pricing_model"] != "spot"]
    assert not problems, problems


@pytest.mark.django_db
def test_paddle_bert_spot_rows_meet_the_deadline_on_our_own_rate(bundled_catalog):
    """[BERTSQ] the ranking half of the spot case alone: spot rows only, one GPU, each within 1 h at P90 on the
    engine's rate, costs rebuilt (the rate itself is the strict xfail above)."""
    rows = ranked(BERT1, 5, **BERT1_SPOT)
    problems = judge(BERT1, [], **BERT1_SPOT) + deadline_problems(rows, 1) + stated_plan_problems(rows, BERT1)
    assert rows and all(r["pricing_model"] == "spot" for r in rows)
    assert not problems, problems


@pytest.mark.django_db
def test_paddle_bert_large_squad_dgx_a100_time_to_train(bundled_catalog):
    """[BERTSQ] 876 sequences/s on 8 A100s published, ours 1,257.6 (+43.6%) before fix50a, 932.1 (+6.4%) at its
    56 B, 986.8 (+12.6%) at the half_model 44 B (fix50e); 2 epochs 0.056 h published, ours 0.0499 h (-10.9%). The
    eager scores' bytes as above (the same caveat: R_AB, R_FMHA); the data-parallel all-reduce is priced (fp16
    gradients of 335M over NVLink) and hidden under the backward (COMM_OVERLAP), so ours scales 8.00x against the
    published 7.30x (the PyTorch row's 7.66x: a residual of 4-9% the engine does not hold)."""
    t = candidate(BERT8, "a100-sxm4-80gb")["throughput"]
    problems = judge(
        BERT8,
        [
            ("DGX A100 sequences/s", t["training_tokens_per_second"] / 384, 876.0, LLM_SPEED),
            ("DGX A100 hours, 2 epochs", t["training_hours"], 0.056, LLM_SPEED),
        ],
    )
    problems += stated_plan_problems(ranked(BERT8, 5), BERT8)
    assert not problems, problems


# --- held out for the eager-score term (fix50a): the same SQuAD fine-tune on DeepLearningExamples' PyTorch stack ----
# [BERTPT] NVIDIA/DeepLearningExamples PyTorch/LanguageModeling/BERT/README.md (the pytorch:21.11-py3 revision),
# "Fine-tuning NVIDIA DGX A100 (8x A100 80GB)", SQuAD: "| 1 | 32 and 32 | 61.5 | 110.5 | 1.79 | 1.00 | 1.00 |" and
# "| 8 | 32 and 32 | 469.8 | 846.7 | 1.80 | 7.63 | 7.66 |" (GPUs, batch / GPU, TF32 and mixed-precision
# sequences/s); run_squad.py's max_seq_length 384; modeling.py BertSelfAttention is eager (matmul, / sqrt(d), +
# mask, F.softmax, dropout, matmul) under apex O2 (run_squad.py): 44 B a score element, the half_model count.
R_BERTPT8 = (
    "UNEXPLAINED (fix50e, stop 50): published 846.7 sequences/s (DeepLearningExamples PyTorch BERT README, DGX "
    "A100 80GB, SQuAD, 8 GPUs, batch 32 of 384, apex O2), ours 986.8 (+16.5%) at the run's code count (44 B a score "
    "element, mixed_precision half_model); 1,257.6 (+48.5%) before fix50a, 932.1 (+10.1%) at fix50a's 56 B, which "
    "aud50e showed is diffusers' count, not this stack's. Sized partial causes: the engine's A100 rate for a "
    "d-1,024 encoder (the 1-GPU row reads +11.6%; the Paddle cuDNN fused-attention rows, no eager term, +27.8% / "
    "+35.4%: implied 0.313 of peak against MFU_DATACENTER's 0.40) and the 8-GPU scaling, 8.00x ours against the "
    "README's 846.7 / 110.5 = 7.66x (4.4 points the engine's hidden all-reduce does not hold). A uniform eager "
    "elementwise term (the image engine's 2 x saved x 3 passes) lands the A100 rows but takes the held-out V100 "
    "rows out (-23.5%): not the cause (test_eager_elementwise_hypothesis_fails_the_v100_rows in "
    "test_outside_eager_training_audit_aud50e.py). Lead: an Ampere width factor for narrow models in "
    "mfu._fitted_mfu (MPT's A100 rows), and the 8-GPU step cost."
)


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("gpus", "published"),
    [(1, 110.5), pytest.param(8, 846.7, marks=pytest.mark.xfail(strict=True, reason=R_BERTPT8))],
)
def test_pytorch_bert_large_squad_a100_rows_are_held_out_for_the_eager_score_term(
    bundled_catalog, gpus, published
):
    """[BERTPT] 110.5 / 846.7 sequences/s: ours 157.2 (+42.3%) / 1,257.6 (+48.5%) before fix50a, 116.5 (+5.4%) /
    932.1 (+10.1%) at its 56 B, 123.35 (+11.6%) / 986.8 (+16.5%, R_BERTPT8) at the run's own 44 B (fix50e)."""
    spec = bert_squad(gpus)
    ours = candidate(spec, "a100-sxm4-80gb")["throughput"]["training_tokens_per_second"] / 384
    assert ours == pytest.approx({1: 123.35, 8: 986.8}[gpus], rel=0.002)
    assert abs(err(ours, published)) <= LLM_SPEED, (ours, published)


def test_bert_dgx_a100_data_parallel_all_reduce_is_priced_and_hidden():
    """[BERTSQ] fix list item 2 (fix50a): the 8-GPU all-reduce is counted. fp16 gradients of 335,141,888 weights
    (2 B), a ring of 8: 2 x 7/8 x 670.3 MB = 1.173 GB a step over NVLink at 600 / 2 x 0.80 = 240 GB/s = 4.89 ms, plus
    26 bucket calls' latency 1.46 ms: 6.34 ms, 2.4% of the 0.2594 s step (0.2747 s at fix50a's 56 B), under the backward (COMM_OVERLAP 0.67 of
    the compute), so ours scales 8.00x. Fully exposed it would be 7.81x: the published 7.30x (Paddle) / 7.66x
    (PyTorch) lose more than the all-reduce can, a per-step cost of the 8-GPU runs the engine does not hold."""
    spec = parse_workload_spec(BERT8)
    gpu = gpu_by_slug("a100-sxm4-80gb")
    link = hierarchical_links(gpu, 8)
    rows = training_throughput(
        spec,
        peak_tflops=312.0,
        gpu_counts=8,
        interconnect_gbps=link["interconnect_gbps"],
        gpus_per_node=link["gpus_per_node"],
        fabric_gbps=link["fabric_gbps"],
        mfu=0.4,
        memory_bandwidth_gbps=2039.0,
    )
    assert link["interconnect_gbps"] == pytest.approx(240.0)
    assert float(rows["gradient_bytes_per_step"]) == pytest.approx(2 * 7 / 8 * 335141888 * 2, rel=1e-9)
    assert float(rows["gradient_seconds_node"]) == pytest.approx(2 * 7 / 8 * 335141888 * 2 / 240e9, rel=1e-9)
    dp = float(rows["gradient_seconds_node"] + rows["gradient_latency_seconds"])
    assert dp == pytest.approx(6.34e-3, rel=0.01)
    assert float(rows["exposed_communication_seconds"]) == 0.0
    assert 8 / (1 + dp / float(rows["step_seconds"])) == pytest.approx(7.81, abs=0.01)


# [PYTHIA1B] of test_outside_ranking_audit_stop49.py, stated as its config runs (EleutherAI/pythia
# @b14d5af9ae1809046209c079852e8891dca4678f models/1B/pythia-1b.yml: "checkpoint-activations": true, ZeRO "stage": 1,
# "train_micro_batch_size_per_gpu": 16 "(trained on 64 gpus)", fp16); 299,892,736,000 tokens in 3 days on 64 A100 40GB.
PYTHIA1B_NEOX = {
    "task": "pretrain",
    "model": {
        "name": "pythia-1b",
        "num_layers": 16,
        "hidden_size": 2048,
        "num_attention_heads": 8,
        "intermediate_size": 8192,
        "vocab_size": 50304,
        "gated_mlp": False,
    },
    "precision": "fp16",
    "seq_len": 2048,
    "micro_batch_size": 16,
    "gradient_checkpointing": "full",
    "parallelism": {"gpus": 64, "zero_stage": 1},
    "training_tokens": 299892736000,
}
PYTHIA1B_PUBLISHED = 299892736000 / (3 * 86400 * 64)


def test_gpt_neox_a100_runs_share_one_rate_below_the_llama_fit():
    """[SLM3B] / [PYTHIA1B] the sized cause fix50a labelled both rows EXPLAINED with (FIXED since by training_stack
    gpt_neox, test_outside_gpt_neox_stack_stop50.py): each GPT-NeoX A100 run's rate, in the engine's own count (the
    step's FLOPs with the recomputed forward at RECOMPUTE_FORWARD_TIME_SHARE, as the engine charges it on these
    data-parallel plans, whose communication it hides), predicts the other within 3.3%, and both sit near 0.74 of
    MFU_PRETRAIN_AMPERE. Hand: Pythia-1B 5.853e9 + 0.35 x 1.745e9 = 6.464e9 FLOPs a token, x 18,076 / 312e12 =
    0.3745; StableLM-3B 18.012e9 + 0.35 x 5.747e9 = 20.024e9, x 6,028 / 312e12 = 0.3868."""
    share = RECOMPUTE_FORWARD_TIME_SHARE.value
    pythia = float(costed_flops_per_token(parse_workload_spec(PYTHIA1B_NEOX), share))
    stablelm = float(costed_flops_per_token(parse_workload_spec(SLM3B), share))
    assert (pythia, stablelm) == (pytest.approx(6.464e9, rel=1e-3), pytest.approx(20.024e9, rel=1e-3))
    rate_pythia = PYTHIA1B_PUBLISHED * pythia / 312e12
    rate_stablelm = SLM3B_PUBLISHED * stablelm / 312e12
    assert (rate_pythia, rate_stablelm) == (pytest.approx(0.3745, abs=5e-4), pytest.approx(0.3868, abs=5e-4))
    stablelm_at_pythia_rate = rate_pythia * 312e12 / stablelm
    pythia_at_stablelm_rate = rate_stablelm * 312e12 / pythia
    assert err(stablelm_at_pythia_rate, SLM3B_PUBLISHED) == pytest.approx(-0.032, abs=0.002)
    assert err(pythia_at_stablelm_rate, PYTHIA1B_PUBLISHED) == pytest.approx(0.033, abs=0.002)
    # the engine's own rate for both: MFU_PRETRAIN_AMPERE, which reads StableLM-3B at 7,947 (+31.8%)
    assert MFU_PRETRAIN_AMPERE.value * 312e12 / stablelm == pytest.approx(7946.6, rel=1e-3)
    assert rate_pythia / MFU_PRETRAIN_AMPERE.value == pytest.approx(0.734, abs=0.002)
