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

from procurement.sizing.memory import memory_breakdown_scalar
from procurement.sizing.spec import parse_workload_spec
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
}
SLM3B_PUBLISHED = 4e12 / (30 * 86400 * 256)


def bert_squad(gpus: int) -> dict:
    """[BERTSQ] BERT-large SQuAD v1.1 fine-tune, AMP (fp16 with fp32 master weights), batch 32 of 384 a GPU, 2 epochs.
    flash_attention false: Paddle's fused multi-head attention materialises the scores (a memory term only here)."""
    return {
        "task": "full_finetune",
        "model": dict(BERT_LARGE),
        "precision": "fp16",
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

R_SLM3B = (
    "UNEXPLAINED (aud50a): published 6,028 tokens/s a GPU (StableLM-3B-4E1T card: 4T tokens, 256 A100 40GB, "
    "'approximately 30 days'), ours {ours:,.0f} ({e:+.1%}) stated as its config runs (model-parallel-size 1, ZeRO-1, "
    "micro-batch 4 of 4,096, activation checkpointing). Rows (32 x 8 B200 / H100 / H200 at 256 GPUs, ZeRO-1, fit, "
    "96-218 h against the 720 h deadline) rebuild to the cent. In the engine's own count (23.76e9 FLOPs a token, "
    "recomputation included) the published run is 0.459 of the 312 TFLOPS peak, ours 0.605. Lead 1: the card says "
    "'2D parallelism (Data and Tensor Parallel)' while the linked config says model-parallel-size 1; stated at TP 2 "
    "(no source gives the degree) the engine reads 6,330 (+5.0%): a TP degree published for the run would decide it. "
    "Lead 2: procurement/sizing/mfu.py _fitted_mfu runs every dense A100 NVSwitch pretrain at MFU_PRETRAIN_AMPERE "
    "0.51 (LLaMA-1's 2,048-GPU fit); the same stack (GPT-NeoX fork, ZeRO-1, flash-attention, A100) in Pythia-1B "
    "(R_PYTHIA1B, stop 49) misses the same way (ours +50.4%); the card's 30 days is rounded and may hold "
    "restarts the tokens do not."
)


@pytest.mark.django_db
@pytest.mark.xfail(strict=True, reason=R_SLM3B.format(ours=7946.6, e=err(7946.6, SLM3B_PUBLISHED)))
def test_stablelm_3b_4e1t_pretrain_256_a100_40gb_30_days(bundled_catalog):
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

R_BERT = (
    "UNEXPLAINED (aud50a): published {pub} mixed-precision sequences/s a GPU (DeepLearningExamples PaddlePaddle BERT, "
    "SQuAD, batch 32 of 384, A100 80GB, {gpus}), ours 157.2 ({e:+.1%}; 2 epochs {ours_h:.4f} h vs {pub_h:.4f} h). "
    "The engine runs this 2.07 GFLOP-a-token encoder at its A100 efficiency 0.40; the published 1-GPU row implies "
    "0.305 (120 x 384 x 2.067e9 / 312e12) and the 8-GPU row 0.278 a GPU (weak scaling 7.30, ours 8.00). Ruled out: "
    "flash_attention (stated false as Paddle's fused attention runs: memory only, speed unchanged); the fp32-master "
    "AdamW step the engine does not count is ~28 B x 335M = 9.4 GB a step, ~7 ms of a 267 ms published step (3%), "
    "not the 63 ms gap. {extra}Lead: procurement/sizing/mfu.py _fitted_mfu gives an A100 full fine-tune of any "
    "width gpu.default_mfu (MFU_DATACENTER 0.40, read off LLaMA-65B / Llama 3 405B end-to-end runs); no width "
    "factor applies off Hopper, so a d-1,024 encoder at 12,288 tokens a step runs at a 65B's rate. An Ampere rate for "
    "narrow models (a held-out A100 BERT-large / small-GPT fine-tune table, e.g. NVIDIA's PyTorch BERT SQuAD rows) "
    "would size it."
)
R_BERT1 = R_BERT.format(
    pub=120,
    gpus="one GPU",
    e=err(157.2, 120),
    ours_h=0.3133,
    pub_h=177282 / 120 / 3600,
    extra=(
        "Ranking with a 1 h deadline at P90, spot only: every row meets it (row 1 AWS g6e.2xlarge L40S spot, 0.311 h "
        "at P90, fits 26.2 GiB of 45.0 with its margin shown) and rebuilds to the cent; at the published A100 "
        "efficiency the L40S rows would take ~0.41 h, still inside the deadline, so the miss does not flip the "
        "answer here. "
    ),
)
R_BERT8 = R_BERT.format(
    pub="876 / 8 = 109.5",
    gpus="8 GPUs, DGX A100",
    e=err(157.2, 876 / 8),
    ours_h=0.0392,
    pub_h=0.056,
    extra=(
        "Rows (row 1 RunPod 8 x RTX A6000 spot, then 8 x L4 ZeRO-3 rows that fit only without the headroom, margin 0.7 GiB shown, below it; 8 GPUs kept) rebuild to the cent. "
    ),
)


@pytest.mark.django_db
@pytest.mark.xfail(strict=True, reason=R_BERT1)
def test_paddle_bert_large_squad_one_a100_as_a_spot_job_with_a_deadline(bundled_catalog):
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
@pytest.mark.xfail(strict=True, reason=R_BERT8)
def test_paddle_bert_large_squad_dgx_a100_time_to_train(bundled_catalog):
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
