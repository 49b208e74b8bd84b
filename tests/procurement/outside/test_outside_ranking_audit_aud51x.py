"""aud51x (stop 51): outside audit of the RANKING, issue 26's done-criterion afresh, as a GPU engineer choosing
hardware for a team. Mechanics as aud51r's module: each spec stated with docs/workload-spec.md's fields only, ranked
through the service `manage.py recommend` runs (x26b `ranked`), the top five judged with the stop-48 `row_problems`
(row 1 fits with its margin shown, no rack-scale part first, no consumer card split for serving, the stated GPU
count kept in training, no host-RAM reason on row 1, every row's compute = its price x hours x instances to the cent
and its total = compute + setup + storage + reruns). Speeds are read off the rows filtered to the publisher's card.
Sources no test used (tests/ grepped for "nim/benchmarking", "406.77", "EasyContext", "10240 tokens", "370k":
none; the model names llama-3.3-70b / llama-2-7b are used elsewhere, Llama-3.2-1B is not):

  [NIM33] docs.nvidia.com/nim/benchmarking/llm/1.0.0/performance (read 2026-12-07), "Llama-3.3-70b-instruct Results",
          "Version: 1.8.0", "2 x H100 80G", "fp8 TP2", "5000 Input Tokens / 500 Output Tokens": "| 1 | 406.77 |
          18.58 | 51.67 |", "| 25 | 688.69 | 38.75 | 623.4 |" (concurrency, TTFT ms, ITL ms, throughput tokens/s).
          Production serving; the latency targets (TTFT 1 s, TPOT 50 ms) are ours, a team's SLO, not NVIDIA's.
  [L32]   Meta's Llama 3.2 model card (huggingface.co/meta-llama/Llama-3.2-1B README, "Hardware and Software"):
          "Training utilized a cumulative of 916k GPU hours of computation on H100-80GB (TDP of 700W)", "| Llama 3.2
          1B | 370k | - | 700 | 107 | 0 |" (training GPU hours), "Up to 9T tokens"; the card also says logits of
          Llama 3.1 8B and 70B were token-level targets (distillation) and that 1B was pruned from 8B. Shape from the
          HF config.json (16 layers, hidden 2,048, 32 / 8 heads of 64, MLP 8,192, vocabulary 128,256, tied). The GPU
          count (512) and the 45-day deadline are ours: the card states neither; seq 8,192 and micro-batch 4 assumed.
  [EC]    jzhang38/EasyContext @1729d4f3 README.md "Speed": "The throughput is measured on 8 A100s with Llama-7B for
          the first 5 training steps", "| 64K, data parallel | 10240 tokens/s |", "|128K, ring attention | 4266
          tokens/s |"; techniques: "Deepspeed zero3 offload", "Flash attention", "Activation checkpointing", "full
          finetuning, full attention". Stated: ZeRO-3 with offload optimizer_and_params (pin_memory true: ec64k, from zero3_offload.json), full checkpointing, CP 8 for
          ring attention (the spec's context_parallel). A100 80GB assumed (the README says "A100").
  The LoRA single-card case has NO published figure (none found in the time: tests/ already hold LitGPT, Unsloth,
  torchtune and PEFT method_comparison rows; Raschka's Lightning LoRA-insights rows were not re-found in the time): its rows are judged on checks (1) and (3) only; a gap, not a pass.
Bars: LLM memory 10%, LLM speed 15%. A miss is a strict xfail "UNEXPLAINED (aud51x): ...".
"""

from __future__ import annotations

import pytest

from tests.procurement.outside.test_outside_ranking_audit_stop48 import LLM_SPEED, err, row_problems
from tests.procurement.outside.test_outside_recommendations_x26b import ranked

A100, H100 = "a100-sxm4-80gb", "h100-sxm5-80gb"


# --- specs, as the publishers ran them ---------------------------------------------------------------------------
def nim33(concurrency: int) -> dict:
    return {
        "task": "inference",
        "model": {"preset": "llama-3.3-70b"},
        "precision": "fp8",
        "parallelism": {"gpus": 2, "tensor_parallel": 2},
        "inference": {
            "concurrency": concurrency,
            "context_len": 5000 + 500,
            "output_tokens": 500,
            "ttft_ms": 1000,
            "tpot_ms": 50,
            # prefmix: the page's "Concurrency" rows are a closed loop (each finished request replaced at once):
            # its throughput is a closed loop's identity, 25 x 500 / (0.68869 + 499 x 0.03875 s) = 624 against the
            # published 623.4 (inference.traffic, procurement/sizing/serving_load.py)
            "traffic": "closed_loop",
            # fix51j (aud51j FIX LIST item 2): the page does not state the KV cache dtype; fp8 is the one that fits
            # its own 50-stream row on an 80 GB card (the product's memory: bf16 96.2 GiB a GPU, fp8 69.7;
            # test_outside_serving_load_audit_aud51j.test_kv_dtype_decides_the_25_stream_pass), so fp8 is stated
            # here as the like-for-like cache (inferred, not read)
            "kv_cache_dtype": "fp8",
        },
    }


PUB_NIM33 = {1: (406.77, 18.58), 25: (688.69, 38.75)}  # TTFT ms, ITL ms
LLAMA32_1B = {
    "name": "Llama-3.2-1B",
    "num_layers": 16,
    "hidden_size": 2048,
    "num_attention_heads": 32,
    "num_key_value_heads": 8,
    "head_dim": 64,
    "intermediate_size": 8192,
    "vocab_size": 128256,
    "tie_word_embeddings": True,
}
L32 = {
    "task": "pretrain",
    "model": LLAMA32_1B,
    "precision": "bf16",
    "seq_len": 8192,
    "micro_batch_size": 4,
    "training_tokens": 9e12,
    "parallelism": {"gpus": 512},
}
L32_DEADLINE_H = 45 * 24
PUB_L32_GPU_HOURS = 370_000
EC64 = {
    "task": "full_finetune",
    "model": {"preset": "llama-2-7b"},
    "precision": "bf16",
    "seq_len": 65536,
    "micro_batch_size": 1,
    "gradient_checkpointing": "full",
    "training_tokens": 1e9,  # any count: speed is read as tokens / hours
    # ec64k: pin_memory true for both offloads, as the run's config states (accelerate_configs/zero3_offload.json
    # @1729d4f3 lines 28-35, loaded by single_node.yaml line 4); DeepSpeed's default is false
    "parallelism": {
        "gpus": 8,
        "zero_stage": 3,
        "offload": "optimizer_and_params",
        "offload_pin_memory": True,
    },
}
EC128_RING = EC64 | {"seq_len": 131072, "parallelism": EC64["parallelism"] | {"context_parallel": 8}}
EC_SPOT_DEADLINE_H = 120  # ours: the 128K job must finish inside five days, on spot
LORA_1CARD = {
    "task": "lora",
    "model": {"preset": "llama-3.1-8b"},
    "precision": "bf16",
    "seq_len": 2048,
    "micro_batch_size": 4,
    "gradient_checkpointing": "full",
    "training_tokens": 52_000 * 3 * 512,
    "lora": {"rank": 16, "targets": ["q_proj", "k_proj", "v_proj", "o_proj"]},
}


def top5(spec: dict, **options) -> list[dict]:
    rows = ranked(spec, 5, **options)
    assert len(rows) == 5
    return rows


def tokens_per_second(spec: dict, row: dict) -> float:
    return spec["training_tokens"] / (row["hours"] * 3600)


# --- [NIM33] Llama 3.3 70B fp8 TP 2 on 2 x H100, 5,000 in / 500 out ----------------------------------------------
@pytest.mark.django_db
def test_nim33_concurrency1_ttft_and_itl(bundled_catalog):
    """[NIM33] concurrency 1: TTFT 406.77 ms, ITL 18.58 ms. Ours (row on H100 SXM, TP 2): 439.3 ms (+8.0%) and
    18.39 ms (-1.0%) at the bf16 cache; fix51j states fp8 (nim33): 439.3 ms and 18.21 ms (+2.0% per-stream speed)."""
    s = ranked(nim33(1), 1, gpus=[H100])[0]["serving"]
    assert abs(err(s["time_to_first_token_ms"], PUB_NIM33[1][0])) < LLM_SPEED
    assert abs(err(PUB_NIM33[1][1] / s["time_per_output_token_ms"], 1.0)) < LLM_SPEED


R_NIM25_TTFT = (
    "UNEXPLAINED (aud51x, prefmix): [NIM33] concurrency 25, 5,000 in / 500 out, fp8 TP 2 on 2 x H100 (NIM 1.8.0): "
    "published TTFT 688.69 ms; ours 439.3 ms (-36.2%) before prefmix, 474.7 ms (-31.1%) under inference.traffic "
    "closed_loop: the lone prefill (439.3) plus the mixed step running when the request arrives (35.4). fix51j (fp8 "
    "cache stated, the step mix of a token budget: 24 of a reply's 499 steps carry a whole 5,000-token prompt, the "
    "rest decode-only): 489.2 ms (-29.0%), the mean step (43.1) plus the request's own prompt step beside 25 decodes "
    "(446.1). The other "
    "200 ms look like prompts queued behind prompts, which the steady-state model leaves out: at 25 x 439 ms of "
    "prefill work per 18.1 s cycle the prefill share is 0.61, and a prompt that finds another one prefilling waits "
    "for it. Sized two ways, neither pinned: a random-arrival (M/D/1) wait, 0.61 x 439 / (2 x 0.39) = 343 ms, gives "
    "818 ms (+19%); one prompt a step (a TensorRT-LLM 8,192-token budget fits one 5,000-token prompt), each arrival "
    "waiting for the previous one's, about 2 x 460 = 920 ms (+34%). The published 1.69x of the 1-stream TTFT lies "
    "between the no-queue 1.08x and these. NVIDIA's DLI NIM sweep (the prefmix NOTES entry) shows a third regime: "
    "genai-perf starts every client at once with fixed reply lengths, and its TTFT at 25 streams is about 15x the "
    "1-stream one (prompts prefilled as a bunch). Which regime a run is in is the harness's, not located in NIM's "
    "source (not public). The row meets the stated 1 s target either way."
)


@pytest.mark.django_db
def test_nim33_concurrency25_itl(bundled_catalog):
    """[NIM33] concurrency 25: ITL 38.75 ms. Before prefmix ours 27.37 ms (+41.6% per-stream speed: the decode step
    alone). Under inference.traffic closed_loop the step carries the other 24 streams' prompts, 24 x 5,000 / 500 =
    240 tokens (hand check in tests/procurement/sizing/test_serving_load_prefmix.py): 35.4 ms (+9.5%) at the bf16
    cache, 30.81 ms (+25.8%) at fp8. fix51j: fp8 stated, and the prompts fall on the steps as an unfilled 8,192-token
    budget puts them (24 whole-prompt steps of 499, the rest decode-only): 43.14 ms (-10.2% per-stream speed)."""
    s = ranked(nim33(25), 1, gpus=[H100])[0]["serving"]
    assert abs(err(PUB_NIM33[25][1] / s["time_per_output_token_ms"], 1.0)) < LLM_SPEED


@pytest.mark.django_db
def test_nim33_concurrency25_throughput(bundled_catalog):
    """[NIM33] concurrency 25: throughput 623.4 output tokens/s (= 25 x 500 / (0.689 + 499 x 0.03875 s), genai-perf's
    own identity). Before prefmix ours 508.3 (-18.5%, not asserted by aud51x); closed_loop 689.2 (+10.6%) at the bf16
    cache, 788.9 (+26.5%) at fp8; fix51j's step mix at fp8: 567.7 (-8.9%)."""
    s = ranked(nim33(25), 1, gpus=[H100])[0]["serving"]
    assert abs(err(s["tokens_per_second"], 623.4)) < LLM_SPEED


@pytest.mark.django_db
@pytest.mark.xfail(strict=True, reason=R_NIM25_TTFT)
def test_nim33_concurrency25_ttft(bundled_catalog):
    """[NIM33] concurrency 25: TTFT 688.69 ms; ours 474.7 ms (closed_loop), 489.2 ms (fix51j: fp8, step mix)."""
    s = ranked(nim33(25), 1, gpus=[H100])[0]["serving"]
    assert abs(err(s["time_to_first_token_ms"], PUB_NIM33[25][0])) < LLM_SPEED


@pytest.mark.django_db
@pytest.mark.parametrize("concurrency", [1, 25])
def test_nim33_ranking_rows(bundled_catalog, concurrency):
    """A month of one replica, no card named: row 1 runpod 2 x H100 PCIe $3,535.65 (host known; hostdoubt, was
    vast 2 x H100 SXM $2,769.15 with its host unknown), then vast 2 x H100 SXM, hyperstack 2 x H100 PCIe and cudo
    2 x H100 SXM (link assumed), each saying why it is below row 1. Every row TP 2 (stated),
    fp8, datacenter cards, meets both targets; each rebuilds to the cent."""
    spec = nim33(concurrency)
    rows = top5(spec)
    assert row_problems(rows, spec) == []
    assert all(r["gpus"] == 2 for r in rows)
    for r in rows:
        assert (
            r["serving"]["time_to_first_token_ms"] <= 1000 and r["serving"]["time_per_output_token_ms"] <= 50
        )


@pytest.mark.django_db
def test_nim33_cheaper_second_row_says_why_it_is_second(bundled_catalog):
    """Row 2 (vast 2 x H100 SXM, $2,769.15) is $766.50 cheaper than row 1 (runpod 2 x H100 PCIe, $3,535.65): by
    design (configurations.ranked_order: a doubted row goes below the first undoubted one), and the row says why:
    its host is not known (one host doubt). cudo's 2 x H100 SXM ($2,751.34, the cheapest) has two, each "ranked
    below": its 16 GiB host misses the 16.3 GiB serving rule by 0.3 GiB and its GPU link is assumed (PCIe 5.0).
    Was (aud51x): row 1 vast, row 2 cudo; hostdoubt counts the unknown host (R_HOST)."""
    rows = ranked(nim33(1), 10)
    second = rows[1]
    assert [r for r in second["reasons"] if "ranked below the first row" in r] == [
        "the host's figures are not known, so the serving host rule is not checked: one host doubt, as a host below "
        "the rule; ranked below the first row whose host is known and meets it"
    ]
    cudo = next(r for r in rows if r["instance_type"] == "sapphire-rapids-h100_2x8v16gb")
    assert sum("ranked below the first row" in reason for reason in cudo["reasons"]) == 2


R_HOST = (
    "UNEXPLAINED (aud51x): [NIM33] row 1 (vast 2x-H100_SXM-32-65536, production 70B serving) says 'host RAM and "
    "vCPUs unknown for this offer: not checked' and is ranked first, ahead of cudo's row whose host IS known and "
    "is demoted for being 0.3 GiB under a rule of thumb (16 against 16.3 GiB, itself 'assumed: carried from a "
    "diffusers + accelerate training measurement'). Located in the product, deliberately: "
    "pricing/providers/skypilot_csv.py PROVIDERS_WITH_PLACEHOLDER_HOST reads Vast's 32 vCPUs / 64 GiB as unknown "
    "(placeholders), and configurations.ranked_order counts host_doubt only for a known host below its rule. An "
    "unknown host is thereby treated as a host that meets the rule: check (1)'s 'host sized' fails on row 1 of "
    "both NIM workloads (and on aud51r's LLMFIT row 1 alike, lium / vast rows)."
)


@pytest.mark.django_db
@pytest.mark.parametrize("concurrency", [1, 25])
def test_nim33_row1_host_is_sized(bundled_catalog, concurrency):
    """FIXED (hostdoubt, stop 52; was R_HOST): an unknown host is one host doubt for production serving
    (configurations.host_unknown), compared like for like with a known host below its rule. Row 1 is now runpod
    2x_H100_SECURE ($3,535.65: host known, meets the rule, link documented); the vast row ($2,769.15) is shown
    right below it, saying its host is not known; cudo's 16 GiB host (two doubts: 0.3 GiB under 16.3, link
    assumed) says which rule it misses and by how much."""
    rows = top5(nim33(concurrency))
    first, second = rows[0], rows[1]
    assert not any("unknown for this offer" in w for w in first["warnings"])
    assert not any("ranked below" in reason for reason in first["reasons"])
    assert second["provider"] == "vast" and any(
        "host's figures are not known" in r for r in second["reasons"]
    )
    if concurrency == 25:
        # fix51j (stop 52): at 25 streams, fp8 cache, closed loop under an 8,192-token budget, only 25 offers meet
        # the 1 s / 50 ms targets and no cudo or hyperstack TP 2 row is among them: there is no cudo row to read.
        assert not any(r["provider"] == "cudo" for r in ranked(nim33(concurrency), 80))
        return
    cudo = next(
        r for r in ranked(nim33(concurrency), 10) if r["instance_type"] == "sapphire-rapids-h100_2x8v16gb"
    )
    assert any("misses the RAM its stack holds by 0.3 GiB (16 of 16.3 GiB" in r for r in cudo["reasons"])


# --- [L32] Llama 3.2 1B pretraining, 9T tokens, 512 GPUs, 45-day deadline ----------------------------------------
@pytest.mark.django_db
def test_l32_ranking_rows_keep_512_gpus_and_meet_the_deadline(bundled_catalog):
    """Deadline 1,080 h at P90 wall-clock: row 1 nebius 64 x 8 B200 51.59 h $179,764.82 (plain data parallel,
    83.62 GiB a card, 95.44 margin; no zero_stage stated, so plans are explored), then the same offer under
    ZeRO-3/FSDP (64.84 GiB, identical hours and cost: the FSDP traffic hides under compute),
    nebius 64 x 8 H100 117.31 h, 64 x 8 H200. 512 GPUs kept; wall-clock P90 under the deadline; rows rebuild."""
    rows = top5(L32, deadline_hours=L32_DEADLINE_H)
    assert row_problems(rows, L32) == []
    assert all(r["gpus"] == 512 for r in rows)
    assert all(r["wall_clock"]["hours_at_probability"] <= L32_DEADLINE_H for r in rows)


R_L32 = (
    "UNEXPLAINED (aud51x; distill): [L32] Llama 3.2 1B, 9T tokens on H100-80GB: the card's 370k training GPU hours "
    "against ours 512 x 117.31 h = 60,063 ({e:+.1%}). The card's figure implies ~5% MFU for a 1.24B model (6 x 1.24e9 x "
    "9e12 = 6.7e22 FLOPs over 370k x 989e12 x 3,600 = 1.32e24). distill: the spec now has a teacher "
    "(`distillation`), but the card's own table puts the teacher's work in a separate column, 'Logit Generation "
    "Time (GPU Hours)': '-' for 1B and 3B, 86k in the Total row (meta-llama/llama-models "
    "models/llama3_2/MODEL_CARD.md, stored @4a9ff6ae; 830k + 86k = the 916k cumulative): the logits were "
    "generated once, apart, so the 370k is the student's training on stored logits, `mode: precomputed`, which "
    "prices the row unchanged (test_l32_precomputed_logits_leave_the_student_row). Stated online with the 8B "
    "teacher it reads 178,078 (-51.9%), with the 70B 1,067,893 (+188.6%): neither is the card's run. Pruning from "
    "8B (the card's words) is a one-off forward-only importance pass (Minitron, arXiv 2407.14679: 1,024 "
    "calibration samples), no measurable share of 370k. Cause of the -83.8% not located."
)


@pytest.mark.django_db
@pytest.mark.xfail(strict=True, reason=R_L32.format(e=60063 / 370000 - 1))
def test_l32_h100_gpu_hours(bundled_catalog):
    row = ranked(L32, 1, gpus=[H100])[0]
    assert abs(err(row["hours"] * row["gpus"], PUB_L32_GPU_HOURS)) < LLM_SPEED


# --- distill (aud51x FIX LIST item 3): [L32] with a teacher; the 3B sibling ---------------------------------------
# The card (meta-llama/llama-models models/llama3_2/MODEL_CARD.md @4a9ff6ae, "Training Energy Use"): "| Llama 3.2
# 1B | 370k | - | 700 | 107 | 0 |", "| Llama 3.2 3B | 460k | - | 700 | 133 | 0 |", "| Total | 830k | 86k | ...",
# columns "Training Time (GPU hours) | Logit Generation Time (GPU Hours)"; "Training Data": "we incorporated logits
# from the Llama 3.1 8B and 70B models into the pretraining stage ... Knowledge distillation was used after
# pruning". Which teacher covered which tokens is not stated. Llama 3.2 3B shape from the bundled preset
# (config.json: 28 layers, hidden 3,072, 24 / 8 heads of 128, MLP 8,192, tied; 3,212,749,824 parameters).
TEACHER_8B_ONLINE = {"teacher": "llama-3.1-8b"}
TEACHER_8B_STORED = {"teacher": "llama-3.1-8b", "mode": "precomputed", "top_k": 100}  # top-k 100: assumed
L32_3B = L32 | {"model": {"preset": "llama-3.2-3b"}}
PUB_L32_3B_GPU_HOURS = 460_000
PUB_L32_LOGIT_GPU_HOURS = 86_000


def gpu_hours(spec: dict) -> float:
    row = ranked(spec, 1, gpus=[H100])[0]
    return row["hours"] * row["gpus"]


R_L32_ONLINE = (
    "UNEXPLAINED (distill): [L32] stated with an online Llama 3.1 8B teacher (bf16, a forward a student token on "
    "the same GPUs): 60,063 -> 178,078 GPU hours (-83.8% -> {e:+.1%}; a token 9.03e9 -> 26.18e9 FLOPs, 2.90x; plan "
    "TP 2 to hold the teacher's 14.96 GiB and its 23.5 GiB of logits at micro-batch 4). Not the card's run: its "
    "separate 86k 'Logit Generation Time' says the logits were precomputed (R_L32); a 70B online teacher would "
    "read 1,067,893 (+188.6%), so no single online teacher lands it, and the card does not say which teacher "
    "covered which tokens."
)


@pytest.mark.django_db
@pytest.mark.xfail(strict=True, reason=R_L32_ONLINE.format(e=178078 / 370000 - 1))
def test_l32_h100_gpu_hours_online_8b_teacher(bundled_catalog):
    hours = gpu_hours(L32 | {"distillation": TEACHER_8B_ONLINE})
    assert hours == pytest.approx(178_078, rel=1e-4)  # before the bar: the figure the reason quotes
    assert abs(err(hours, PUB_L32_GPU_HOURS)) < LLM_SPEED


@pytest.mark.django_db
def test_l32_precomputed_logits_leave_the_student_row(bundled_catalog):
    """Stored top-k logits add no FLOPs and 100 x 12 B a token of memory (39 MB at 4 x 8,192): the row is the
    student's, 60,063 GPU hours, to the hour."""
    assert gpu_hours(L32 | {"distillation": TEACHER_8B_STORED}) == pytest.approx(gpu_hours(L32), rel=1e-9)


R_L32_LOGITS = (
    "UNEXPLAINED (distill): [L32] the card's 'Logit Generation Time' 86k GPU hours (Total row, 1B and 3B together) "
    "against ours {ours:,.0f} for one Llama 3.1 8B forward over the 1B's 9T tokens (include_logit_generation, priced "
    "on the training fleet at its MFU: 174,242 - 60,063) ({e:+.1%}). By hand the 86k is 9e12 x 17.16e9 = 1.54e23 "
    "FLOPs over 86k x 989e12 x 3,600 = 3.06e23, 50% MFU for an 8B forward over 9T tokens; a 70B forward (1.43e11 a "
    "token) over all 9T tokens would need 4.2x the 86k at 100%, so the 70B covered a fraction of the tokens. Which "
    "teacher, which tokens and what batch are not stated: not sized."
)


@pytest.mark.django_db
@pytest.mark.xfail(strict=True, reason=R_L32_LOGITS.format(ours=114179, e=114179 / 86000 - 1))
def test_l32_logit_generation_gpu_hours(bundled_catalog):
    generated = gpu_hours(L32 | {"distillation": TEACHER_8B_STORED | {"include_logit_generation": True}})
    ours = generated - gpu_hours(L32)
    assert ours == pytest.approx(114_179, rel=1e-3)
    assert abs(err(ours, PUB_L32_LOGIT_GPU_HOURS)) < LLM_SPEED


R_L32_3B = (
    "UNEXPLAINED (distill): [L32] sibling, Llama 3.2 3B on the same 9T-token spec: the card's 460k against ours "
    "{ours:,.0f} ({e:+.1%}; {what}). The 1B and 3B miss by different shares (-83.8% / -62.9% alone), the 1B's "
    "implied MFU 5% against the 3B's 10% (6 x 3.21e9 x 9e12 / (460k x 989e12 x 3,600)): no one per-token "
    "mechanism (a teacher forward adds the same 17.2e9 FLOPs to both) closes both; the run's batch, sequence "
    "lengths and token counts per model are not published ('up to 9T')."
)


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("distillation", "ours"),
    [
        pytest.param(
            None,
            170_634,
            marks=pytest.mark.xfail(
                strict=True,
                reason=R_L32_3B.format(ours=170634, e=170634 / 460000 - 1, what="the student alone"),
            ),
            id="alone",
        ),
        pytest.param(
            TEACHER_8B_ONLINE,
            273_761,
            marks=pytest.mark.xfail(
                strict=True,
                reason=R_L32_3B.format(ours=273761, e=273761 / 460000 - 1, what="an online 8B teacher, TP 4"),
            ),
            id="online-8b",
        ),
    ],
)
def test_l32_3b_h100_gpu_hours(bundled_catalog, distillation, ours):
    spec = L32_3B if distillation is None else L32_3B | {"distillation": distillation}
    hours = gpu_hours(spec)
    assert hours == pytest.approx(ours, rel=1e-4)
    assert abs(err(hours, PUB_L32_3B_GPU_HOURS)) < LLM_SPEED


# --- [EC] Llama-2-7B full fine-tune at 64K / 128K on 8 A100 ------------------------------------------------------
# ec64k: aud51x's 64K miss was the flat offload_step_overhead (+50% of the step's compute: 26.7 s on a 53.4 s step,
# the README's whole 64K step being 51.2 s). Stated as run (pin_memory true) the engine prices DeepSpeed 0.14's
# offload by its mechanisms, seconds a step (procurement/sizing/pinned_offload.py): 1.00 s here. Published / ours,
# A100 SXM4 80GB, before (flat) -> after (pinned), and the run's hardware-FLOPs MFU (training_flops_per_token x
# published tokens/s / (8 x 312 TFLOPS)):
#   64K data parallel    10,240 / 6,543 (-36.1%) -> 9,633 (-5.9%)   published MFU 49.8%
#   64K ring (CP 8)       7,816 / 6,543 (-16.3%) -> 8,532 (+9.2%)   38.0%
#   128K ring (CP 8)      4,266 / 4,179 (-2.0%)  -> 5,981 (+40.2%)  32.5%
#   512K ring (CP 8)      2,133 / 1,348 (-36.8%) -> 2,014 (-5.6%)   50.4%
#   700K ring (CP 8)      1,603 / 1,010 (-37.0%) -> 1,512 (-5.7%)   50.5%
# The flat share landed one row of five (128K); the per-step mechanisms land four. The 128K row is the table's own
# outlier: 32.5% against 50% at 64K DP, 512K and 700K, with the same code, config and CP 8.
# fix51e: the CPU step is now priced at 14.32e6 parameters a core-second x the rank's host cores (set on DeepSpeed
# PR #7474, tests/procurement/sizing/test_pinned_offload.py), not at the memory-bandwidth floor (0.79 s). [EC] states
# no host CPU, so the rows take the assumed 12 cores a rank: 4.90 s a step. ec64k -> fix51e:
#   64K DP 9,633 (-5.9%) -> 8,957 (-12.5%); 64K ring 8,532 (+9.2%) -> 5,557 (-28.9%, now a strict xfail);
#   128K ring 5,981 (+40.2%) -> 5,036 (+18.1%, still a strict xfail); 512K 2,014 (-5.6%) -> 1,982 (-7.1%);
#   700K 1,512 (-5.7%) -> 1,499 (-6.5%). The 64K ring row lands at >= 20 cores a rank (a DGX A100's 256 vCPUs / 8
#   = 32: -4.0%); [ZF]'s stated 64 give +7.4%. Not fitted per row (test_outside_offload_audit_aud51e.py).
# fix51e2: the Adam kernel at the ZeRO-Offload paper's rate (81.06e6 a physical core-second) on the row's offer's
# own vCPUs / 2 (row 1, aws p4de.24xlarge: 96 / 8 / 2 = 6, the assumption too): 1.73 s a step. fix51e -> fix51e2:
#   64K DP 8,957 (-12.5%) -> 9,469 (-7.5%); 64K ring 5,557 (-28.9%) -> 7,600 (-2.8%, FIXED, xfail removed);
#   128K ring 5,036 (+18.1%) -> 5,735 (+34.4%, strict xfail kept); 512K 1,982 (-7.1%) -> 2,006 (-5.9%);
#   700K 1,499 (-6.5%) -> 1,509 (-5.9%).
EC_SEQ = {
    "64k_ring": 65536,
    "512k_ring": 512000,
    "700k_ring": 700000,
}  # train_scripts/...-1M-Llama-2-7B.sh: 512000
PUB_EC = {"64k_ring": 7816, "512k_ring": 2133, "700k_ring": 1603}


def ec_ring(seq_len: int) -> dict:
    return EC128_RING | {"seq_len": seq_len}


def ec_speed(spec: dict) -> float:
    return tokens_per_second(spec, ranked(spec, 1, gpus=[A100])[0])


@pytest.mark.django_db
def test_ec_64k_data_parallel_a100(bundled_catalog):
    """[EC] 64K data parallel: published 10,240 tokens/s; ours 9,469 (-7.5%; fix51e 8,957, -12.5%; ec64k 9,633,
    -5.9%; -36.1% under the flat offload share). The step: 53.42 s of compute + 1.95 s of offload (0.21 s of copies
    and the CPU step on 6 physical cores, 1.73 s, by hand in tests/procurement/sizing/test_pinned_offload.py)."""
    ours = ec_speed(EC64)
    assert abs(err(ours, 10240)) < LLM_SPEED, f"ours {ours:,.0f}"


R_EC128 = (
    "UNEXPLAINED (ec64k; restated by fix51e, fix51e2): [EC] 128K ring attention (CP 8) on 8 A100: published 4,266 "
    "tokens/s, ours {ours:,.0f} ({e:+.1%}; ec64k 5,981, +40.2%, with the CPU step at the memory floor; fix51e "
    "5,036, +18.1%, on the assumed 12 cores a rank, 4.90 s; fix51e2 on p4de's 6 physical cores a rank at the "
    "ZeRO-Offload paper's rate, 1.73 s). It landed (-2.0%) only under the flat offload share (+50% of the step), which put four of the "
    "README's five rows 16-37% slow; priced by DeepSpeed's offload mechanisms as the run's config states "
    "(pin_memory true, 1.00 s a step) the 64K DP, 64K ring, 512K and 700K rows land (-5.9%, +9.2%, -5.6%, -5.7%) "
    "and this row is fast. Sized from the README itself: its hardware-FLOPs MFU is 32.5% against 49.8% (64K DP), "
    "50.4% (512K) and 50.5% (700K) with the same train.py, zero3_offload.json and zigzag ring at CP 8, so 10.9 s of "
    "its 30.7 s step (19.8 s at 50.4%) are not in the 512K / 700K rows' rate. Not located: the README gives 'the first 5 training "
    "steps, so expect some variance'; no per-step log; the 64K ring row's own excess over DP is 2.0 s a sequence, "
    "not 10.9. Lead: rerun train.py at 128K and 256K with zigzag_ring_attn and read the per-step times past step 5."
)


@pytest.mark.django_db
@pytest.mark.xfail(strict=True, reason=R_EC128.format(ours=5735, e=5735 / 4266 - 1))
def test_ec_128k_ring_attention_a100(bundled_catalog):
    """[EC] 128K ring attention (CP 8): published 4,266 tokens/s; ours 5,735 (+34.4%; fix51e 5,036, +18.1%; ec64k
    5,981, +40.2%; 4,179, -2.0%, flat share)."""
    ours = ec_speed(EC128_RING)
    assert abs(err(ours, 4266)) < LLM_SPEED, f"ours {ours:,.0f}"


R_EC64_RING = (
    "FIXED (fix51e2: 7,600, -2.8%); was UNEXPLAINED (fix51e): [EC] 64K ring attention (CP 8) on 8 A100: published "
    "7,816 tokens/s, ours 5,557 (-28.9%; "
    "ec64k 8,532, +9.2%). fix51e prices the CPU Adam step at one per-core rate (14.32e6 parameters a core-second, "
    "DeepSpeed PR #7474) on the cores a rank gets; [EC] states no host CPU (README, single_node.yaml: 8 processes, no "
    "core binding), so the engine assumes 12 a rank: P / 8 / (12 x 14.32e6) = 4.90 s of a 11.79 s step. The row's "
    "8.39 s published step leaves its host's CPU step ~1.5 s: inside the bar at >= 20 cores a rank (32, a DGX "
    "A100's 256 vCPUs / 8: -4.0%). One rate holds [ZF] (64 cores stated) and this row only if [EC]'s host gave each "
    "rank >= 20 cores, which nothing published says; not fitted per row. Left: [EC]'s host CPU and OMP threads."
)


@pytest.mark.django_db
@pytest.mark.parametrize(
    "row",
    [
        pytest.param("512k_ring"),
        pytest.param("64k_ring"),  # fix51e2 FIXED (7,600, -2.8%); R_EC64_RING kept for the record
        pytest.param("700k_ring"),
    ],
)
def test_ec_readme_sibling_rows_a100(bundled_catalog, row):
    """[EC] README "Speed" rows no test used (ec64k): 64K ring 7,816, 512K ring 2,133, 700K ring 1,603 tokens/s
    (the 512K row's length from train_scripts/EasyContext-1M-Llama-2-7B.sh, --seq-length 512000); ours (fix51e2)
    7,600 (-2.8%), 2,006 (-5.9%), 1,509 (-5.9%); fix51e 5,557 (-28.9%), 1,982 (-7.1%), 1,499 (-6.5%); ec64k 8,532 (+9.2%), 2,014 (-5.6%), 1,512 (-5.7%); under the flat
    share -16.3%, -36.8%, -37.0%."""
    ours = ec_speed(ec_ring(EC_SEQ[row]))
    assert abs(err(ours, PUB_EC[row])) < LLM_SPEED, f"ours {ours:,.0f}"


@pytest.mark.django_db
def test_ec_64k_ranking_rows(bundled_catalog):
    """No card named: row 1 AWS p6-b200 spot 8 x B200 5.30 h $160.88 (35.84 GiB, 143.22 margin; P90 5.309 h), then
    B200 / H100 / H200 spot rows (aud51x's figures, before ec64k stated pin_memory: the rows are faster now; the
    assertions are structural). 8 GPUs and ZeRO-3 kept; rows rebuild."""
    rows = top5(EC64)
    assert row_problems(rows, EC64) == []
    assert all(r["gpus"] == 8 and r["plan"]["zero_stage"] == 3 for r in rows)


@pytest.mark.django_db
def test_ec_128k_spot_with_deadline(bundled_catalog):
    """Spot only, deadline 120 h at P90: row 1 AWS p6-b200 spot 8.30 h compute, P90 8.313 h, meets the deadline
    alone (aud51x's figures, before ec64k); every row's P90 wall-clock is inside the deadline and rebuilds to the
    cent."""
    rows = top5(EC128_RING, deadline_hours=EC_SPOT_DEADLINE_H, pricing_models=["spot"])
    assert row_problems(rows, EC128_RING) == []
    assert all(r["pricing_model"] == "spot" for r in rows)
    assert all(r["wall_clock"]["hours_at_probability"] <= EC_SPOT_DEADLINE_H for r in rows)
    assert all(r["wall_clock"]["p90_hours"] >= r["hours"] for r in rows)


# --- LoRA on one card (no published figure: checks (1) and (3) only) ---------------------------------------------
@pytest.mark.django_db
def test_lora_one_card_ranking_rows(bundled_catalog):
    """Llama 3.1 8B LoRA r16 on attention, 80M tokens: row 1 AWS g6e.2xlarge spot L40S 8.09 h $4.74 (23.78 GiB,
    21.21 margin), then verda H100 / B200 spot, vast RTX 6000 Ada. One card each; rows rebuild."""
    rows = top5(LORA_1CARD)
    assert row_problems(rows, LORA_1CARD) == []
    assert all(r["gpus"] == 1 for r in rows)
