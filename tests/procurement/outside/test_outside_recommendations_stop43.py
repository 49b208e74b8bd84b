"""Issue 26, judged from outside at stop 43 (rank43): seven workloads an outside GPU engineer brings, none of them
in an earlier test (checked by grep over tests/: no Qwen2.5-32B QLoRA, Llama 3.1 70B FP8 TP 2 serving, Mistral
7B at 32k, CodeLlama-34B, Phi-3-mini, Qwen-72B Int4 or Llama 3.1 8B 5B-token spot fine-tune case).

They go through the product's front doors: `workload_spec_parse` -> `ranking_options_parse` ->
`recommendation_compute` (what `manage.py recommend --format json` runs) and `size_spec_document` (what
`manage.py size` runs, calibration off), on the bundled catalog. Each test asserts what I expect of the first
row (or of the top five): card class, fit with margin, GPU count and plan as stated, links right for tensor
parallelism, cost arithmetic from the catalog row's price x hours (to the cent), the deadline met on P90
wall-clock, and numbers within the issue's tolerances (LLM speed 15%, memory 10%) where a published
measurement exists. A miss is a strict xfail with the numbers and the code that decides it.

Sources:
  [QWEN]   QwenLM/Qwen @03cd81f5e4da6ab60fc8f97f3b8aa1206fdb08a9 README.md "Inference Performance": "generating
           2048" tokens, batch 1, one A100-SXM4-80G, PyTorch 2.0.1, CUDA 11.8, Flash-Attention 2; Qwen-72B "Int4 |
           11.32 | 48.86GB" (speed in tokens/s "averaged over the encoded and generated tokens"; "The generation
           speed of the Int4/Int8 models ... is provided by the autogptq library").
  [QWEN25] Qwen/Qwen2.5-32B config.json (Hugging Face): 64 layers, hidden 5,120, 40 heads, 8 KV heads,
           intermediate 27,648, vocabulary 152,064, untied embeddings; the QLoRA recipe (NF4 + double quantization,
           4.127 bits a weight) is the QLoRA paper's (Dettmers et al. 2023, arXiv:2305.14314).
  [MIS]    mistralai/Mistral-7B-v0.1 config.json (Hugging Face): "sliding_window": 4096, max_position_embeddings
           32,768 (the bundled preset's own note says so: procurement/data/model_architectures.json,
           "HF config also has sliding_window=4096").
  [CL34]   codellama/CodeLlama-34b-hf config.json: 48 layers, hidden 8,192, 64 heads, 8 KV heads, intermediate
           22,016, vocabulary 32,000 (a 4k-context AWQ code assistant at batch 1, a common single-user setup).
  [PHI3]   microsoft/Phi-3-mini-4k-instruct config.json: 32 layers, hidden 3,072, 32 heads (no GQA), intermediate
           8,192, vocabulary 32,064.
  [L31]    meta-llama/Llama-3.1-70B and -8B (bundled presets). The 2 x H100 FP8 TP 2 serving plan is my own reading,
           not a published run: 70.6 GB of FP8 weights leave no room for a KV cache on one 80 GB card.
"""

from __future__ import annotations

import copy
from decimal import ROUND_HALF_UP, Decimal

import pytest

from procurement.api.sizing import size_spec_document
from procurement.services.recommendations import (
    ranking_options_parse,
    recommendation_compute,
    workload_spec_parse,
)
from tests.procurement.outside.test_outside_recommendations import assert_meets_deadline, flagged_for_links

GIB = 2**30
TOP = 5
CENT = Decimal("0.01")


def ranked(spec: dict, top: int = TOP, **options) -> list[dict]:
    """The top rows, ranked the way `manage.py recommend --format json` ranks them."""
    parsed = ranking_options_parse({"top": top} | options)
    return recommendation_compute(spec=workload_spec_parse(copy.deepcopy(spec)), options=parsed).as_report()[
        "results"
    ]


def sized(spec: dict, gpu: str) -> dict:
    """The spec sized the way `manage.py size --gpu GPU` sizes it (calibration off)."""
    return size_spec_document(copy.deepcopy(spec), [gpu], calibrate=False)


def describe(rows: list[dict]) -> str:
    return "; ".join(
        f"{r['provider']} {r['instance_type']} {r['pricing_model']} {r['instances']}x{r['gpus_per_instance']} "
        f"{r['gpu']} TP {r['plan']['tensor_parallel']} ZeRO-{r['plan']['zero_stage']} {r['hours']:.2f} h "
        f"{r['total_cost']} link {(r.get('interconnect') or {}).get('node_link')}"
        for r in rows
    )


def cents(value: float | Decimal) -> Decimal:
    return Decimal(str(value)).quantize(CENT, rounding=ROUND_HALF_UP)


def assert_cost_by_hand(row: dict) -> None:
    """Compute = the catalog row's effective price per instance-hour x instances x hours, to the cent; the total
    is the sum of its parts; the spot effective price is the quote plus the stated checkpoint overhead."""
    price = Decimal(row["effective_price_per_hour"])
    compute = cents(price * row["instances"] * Decimal(str(row["hours"])))
    assert abs(compute - Decimal(row["cost_breakdown"]["compute"])) <= CENT, (compute, row["cost_breakdown"])
    parts = sum(Decimal(row["cost_breakdown"][k]) for k in ("compute", "setup", "storage", "reruns"))
    assert parts == Decimal(row["total_cost"]) == Decimal(row["cost_breakdown"]["total"])
    if row["pricing_model"] == "spot":
        overhead = Decimal(row["spot"]["overhead"])
        quote = Decimal(row["price_per_hour"])
        # the overhead is shown to 6 decimals: allow its rounding (half a unit of the 6th decimal) on the quote
        slack = quote * Decimal("0.0000005") + Decimal("0.000001")
        assert abs(quote * (1 + overhead) - price) <= slack, (quote, overhead, price)
    else:
        assert Decimal(row["price_per_hour"]) == price


# --- 1. Llama 3.1 8B full fine-tune, 5B tokens, 8 GPUs ZeRO-3, spot, 24 h deadline ------------------------------
# A team's continued-pretraining style fine-tune (5e9 tokens, seq 4,096, micro-batch 2, full recomputation) that
# must finish in a day and wants spot. The spec states 8 GPUs and ZeRO-3: rows keep them (class 3), ZeRO-3 over
# NVLink (class 4), each spot row meets 24 h at P90 wall-clock with reclaims (class 1), and the cost of the first
# row is the catalog row's price x hours (here: AWS p5en.48xlarge spot 10.4392 USD/h an instance at 1,000 M
# tokens was 4.228 h, compute 44.21; the same arithmetic checked on this spec's first row).
FT8B_SPOT = {
    "name": "llama-3.1-8b-full-ft-5b-tokens",
    "task": "full_finetune",
    "model": {"preset": "llama-3.1-8b"},
    "micro_batch_size": 2,
    "seq_len": 4096,
    "gradient_checkpointing": "full",
    "parallelism": {"gpus": 8, "zero_stage": 3},
    "training_tokens": 5.0e9,
}


@pytest.mark.django_db
def test_ft8b_spot_rows_keep_8_gpus_zero3_on_nvlink_and_meet_24h_at_p90(bundled_catalog):
    rows = ranked(FT8B_SPOT, deadline_hours=24, pricing_models=["spot"])
    assert rows, "no spot row meets 24 h"
    assert all(r["gpus"] == 8 and r["plan"]["zero_stage"] == 3 for r in rows), describe(rows)
    assert all(r["pricing_model"] == "spot" for r in rows), describe(rows)
    # ZeRO-3 gathers 16 GB of weights a step: every top row's 8 GPUs talk over NVLink, not PCIe
    assert all(r["interconnect"]["node_link_type"] == "nvlink" for r in rows), describe(rows)
    for row in rows:
        assert_meets_deadline(row, 24.0)
        wall = row["wall_clock"]
        # compute hours and wall-clock P50/P90 side by side; wall-clock never shorter than compute
        assert wall["compute_hours"] == pytest.approx(row["hours"], abs=1e-3)
        assert wall["compute_hours"] <= wall["p50_hours"] <= wall["p90_hours"]


@pytest.mark.django_db
def test_ft8b_spot_first_row_cost_is_price_times_hours(bundled_catalog):
    rows = ranked(FT8B_SPOT, deadline_hours=24, pricing_models=["spot"])
    assert rows
    assert_cost_by_hand(rows[0])
    # The first row (verda 8B200.240V spot, 13.69 USD/h, 9.30 h) meets 24 h alone at P90 (9.31 h): no fallback
    # is needed. Where the deadline plan is priced, its expected cost is this row's spot compute.
    first = rows[0]
    assert first["wall_clock"]["meets_deadline_alone"], describe([first])
    plan = first["spot"]["deadline_plan"]
    if plan.get("available"):
        assert plan["meets_target"] and plan["expected_on_demand_hours"] == 0.0
        assert abs(Decimal(plan["expected_cost"]) - Decimal(first["cost_breakdown"]["compute"])) <= 2 * CENT


@pytest.mark.django_db
def test_ft8b_tokens_per_gpu_counts_attention_at_4k(bundled_catalog):
    # Class 2 by hand. Llama 3.1 8B: blocks 32 x (2 x 4096^2 + 2 x 4096 x 1024 + 3 x 4096 x 14336) = 6.98e9,
    # LM head 128,256 x 4,096 = 0.525e9 (the input embedding is a lookup, no FLOPs). Training 6 x (blocks + head),
    # full recomputation one more forward of the blocks (2 x blocks; the head is not recomputed). Causal
    # attention forward 2 x 2 x (s / 2) x h a layer = 2 s h, x 4 (forward, recompute, 2 x backward):
    # 8 x 32 x 4096 x 4096 = 4.29e9, +7.3% over the rest (the "about 7% at 4k").
    blocks = 32 * (2 * 4096**2 + 2 * 4096 * 1024 + 3 * 4096 * 14336)
    head = 128256 * 4096
    dense = 6 * (blocks + head) + 2 * blocks
    attention = 8 * 32 * 4096 * 4096
    assert attention / dense == pytest.approx(0.073, abs=0.002)
    flops = sized(FT8B_SPOT, "h100-sxm5-80gb")["throughput"]["flops_per_token"]
    assert flops == pytest.approx(dense + attention, rel=0.01), (flops, dense + attention)


# --- 2. Qwen2.5-32B QLoRA on one card -------------------------------------------------------------------------
# [QWEN25] shape; QLoRA rank 16 on all linear layers, seq 2,048, micro-batch 1, full checkpointing, 1 GPU stated.
# Hand: block linears 64 x (2 x 5120^2 + 2 x 5120 x 1024 + 3 x 5120 x 27648) = 31.21e9 at 4.127 bits = 14.99 GiB;
# embeddings and LM head 2 x 152,064 x 5,120 in bf16 = 2.90 GiB: the peak is above 17.9 GiB and, as a one-card
# job on a 48 GB card, well below 44.5 GiB.
QWEN25_32B = {
    "name": "qwen2.5-32b",
    "num_layers": 64,
    "hidden_size": 5120,
    "num_attention_heads": 40,
    "num_key_value_heads": 8,
    "intermediate_size": 27648,
    "vocab_size": 152064,
}
QLORA_32B = {
    "name": "qwen2.5-32b-qlora",
    "task": "qlora",
    "model": QWEN25_32B,
    "lora": {"rank": 16, "targets": "all-linear"},
    "micro_batch_size": 1,
    "seq_len": 2048,
    "gradient_checkpointing": "full",
    "parallelism": {"gpus": 1},
    "training_tokens": 2.0e7,
}


@pytest.mark.django_db
def test_qlora_32b_first_row_is_one_card_of_40gb_or_more_with_margin(bundled_catalog):
    rows = ranked(QLORA_32B)
    assert rows and all(r["gpus"] == 1 for r in rows), describe(rows)
    linears = 64 * (2 * 5120**2 + 2 * 5120 * 1024 + 3 * 5120 * 27648)
    floor_gib = (linears * 4.127 / 8 + 2 * 152064 * 5120 * 2) / GIB
    assert floor_gib == pytest.approx(17.89, abs=0.05)
    first = rows[0]
    assert floor_gib < first["memory_per_gpu_gib"] < 48e9 / GIB * 0.8
    assert first["fits"] and not first["tight"], describe(rows)
    assert first["memory_margin"]["capacity_gib"] >= 40, describe(rows)
    assert_cost_by_hand(first)


# --- 3. Llama 3.1 70B FP8 serving on 2 GPUs, tensor parallel 2, latency targets -----------------------------------
# [L31]: the user states gpus 2 and tensor_parallel 2; 16 streams of 2,048 tokens, FP8 KV cache, TTFT 2 s and 60 ms
# per output token. Hand memory a GPU: block linears (70.55e9 - 2 x 128,256 x 8,192) at 1 byte + embeddings in
# bf16, halved: 36.3e9 B = 33.8 GiB; KV 16 x 2,048 x 80 x 2 x 8 x 128 x 1 B / 2 = 2.5 GiB: 36.3 GiB before
# activations and the CUDA context.
SERVE_70B_FP8_TP2 = {
    "name": "llama-3.1-70b-fp8-tp2",
    "task": "inference",
    "model": {"preset": "llama-3.1-70b"},
    "precision": "fp8",
    "parallelism": {"gpus": 2, "tensor_parallel": 2},
    "inference": {
        "concurrency": 16,
        "context_len": 2048,
        "output_tokens": 256,
        "ttft_ms": 2000,
        "tpot_ms": 60,
        "kv_cache_dtype": "fp8",
    },
}


@pytest.mark.django_db
def test_serve_70b_fp8_rows_keep_2_gpus_tp2_and_the_memory_by_hand(bundled_catalog):
    rows = ranked(SERVE_70B_FP8_TP2)
    assert rows and all(r["gpus"] == 2 and r["plan"]["tensor_parallel"] == 2 for r in rows), describe(rows)
    embeddings = 2 * 128256 * 8192
    weights = ((70.55e9 - embeddings) * 1 + embeddings * 2) / 2
    kv = 16 * 2048 * 80 * 2 * 8 * 128 / 2
    hand_gib = (weights + kv) / GIB
    assert hand_gib == pytest.approx(36.3, abs=0.2)
    first = rows[0]
    # within 10% above weights + KV (activations and the CUDA context on top)
    assert hand_gib <= first["memory_per_gpu_gib"] <= hand_gib * 1.10, describe(rows)
    assert first["serving"]["time_per_output_token_ms"] <= 60
    assert first["serving"]["time_to_first_token_ms"] <= 2000
    # money: compute = price x 730 h; cost per million generated tokens = total / (tokens/s x 3600 x 730 / 1e6)
    assert_cost_by_hand(first)
    tokens_m = Decimal(str(first["serving"]["tokens_per_second"])) * 3600 * 730 / 1_000_000
    per_m = Decimal(first["total_cost"]) / tokens_m
    assert abs(per_m - Decimal(first["unit_costs"]["per_million_generated_tokens"])) <= Decimal("0.001")


@pytest.mark.django_db
# Was a strict xfail: first row cudo sapphire-rapids-h100_2x8v16gb (link 'not stated by the catalog: PCIe 5.0 x16
# 64 GB/s assumed', 2,751.34 USD a month), vast 2x-H100_SXM on NVLink 4 second (2,769.15, +0.6%). Now vast first and
# cudo second with its reason because a row whose GPUs talk over a link the catalog does not state ranks below the
# first row on a documented link, the tight-fit rule (fix43r: ranking/configurations.py, unstated_link).
# hostdoubt (stop 52): vast's row has a host nobody checked (its SkyPilot catalog's 32 vCPUs / 64 GiB are
# placeholders, read as unknown), one host doubt for production serving (configurations.host_unknown, aud51x), so
# the first row is runpod 2x_H100_SECURE (3,535.65 USD: H100 PCIe, link stated PCIe 5.0, host known and meeting
# the serving rule); vast's NVLink row (2,769.15) is right below it saying its host is not known, then the assumed
# links. Under deployment development (the host unchecked there) vast's NVLink row is first as before.
def test_serve_70b_fp8_tp2_first_row_runs_tp_over_a_stated_nvlink(bundled_catalog):
    rows = ranked(SERVE_70B_FP8_TP2)
    first = rows[0]
    assert first["interconnect"]["stated"], describe(rows[:2])
    assert not any("ranked below" in text for text in first["reasons"]), describe(rows[:1])
    nvlink = rows[1]
    assert nvlink["interconnect"]["node_link_type"] == "nvlink", describe(rows[:2])
    assert any("host's figures are not known" in text for text in nvlink["reasons"]), describe(rows[:2])
    # the cheaper row on the assumed link is still shown, below the first row, with why
    assumed = [r for r in rows if not r["interconnect"]["stated"]]
    assert assumed and rows.index(assumed[0]) == 2, describe(rows)
    assert any("ranked below the first row on a documented link" in text for text in assumed[0]["reasons"])
    development = ranked(SERVE_70B_FP8_TP2, deployment="development")[0]
    assert development["interconnect"]["node_link_type"] == "nvlink", describe([development])


@pytest.mark.django_db
def test_serve_70b_fp8_tp2_sized_per_gpu_on_the_sizing_path(bundled_catalog):
    # Class 8: `manage.py size` (the sizing page's engine) sizes each of the 2 GPUs with half the model, 38.7 GiB
    # against the 36.3 GiB of weights + KV by hand, not the whole 70B; a pair of 24 GB GeForce cards does not fit
    # and its TP over PCIe is warned about.
    report = size_spec_document(
        copy.deepcopy(SERVE_70B_FP8_TP2), ["h100-sxm5-80gb", "rtx-4090"], calibrate=False
    )
    by_gpu = {c["gpu"]: c for c in report["candidates"]}
    h100 = by_gpu["h100-sxm5-80gb"]
    assert h100["gpus"] == 2 and h100["plan"]["tensor_parallel"] == 2
    assert 36.3 <= h100["total_per_gpu_gib"] <= 36.3 * 1.10
    assert h100["verdict"] in {"fits", "oversized"}
    geforce = by_gpu["rtx-4090"]
    assert geforce["verdict"] == "does_not_fit"
    assert any("pcie" in w.lower() for w in geforce["warnings"]), geforce["warnings"]


# --- 4. Mistral 7B v0.1 LoRA at 32k context ------------------------------------------------------------------------
# [MIS]: Mistral-7B-v0.1 attends through a 4,096-token sliding window on every layer. Class 2 by hand: LoRA with
# full recomputation costs 4 attention forwards (forward, recompute, backward 2x) of 4 x h FLOPs a key a layer:
# 4 x 4 x 4096 x 32 = 2.097e6 FLOPs a token per attended key. A causal query over T tokens attends to T / 2 keys
# on average, with a window w to w - w^2 / 2T: 3,840 at T = 32,768, 2,048 at T = 4,096 (window inactive). So
# FLOPs a token at 32k exceed those at 4k by 2.097e6 x 1,792 = 3.76e9 with the window, and by 2.097e6 x 14,336 =
# 30.1e9 without it.
MISTRAL_LORA_32K = {
    "name": "mistral-7b-lora-32k",
    "task": "lora",
    "model": {"preset": "mistral-7b"},
    "lora": {"rank": 16, "targets": "all-linear"},
    "seq_len": 32768,
    "gradient_checkpointing": "full",
    "parallelism": {"gpus": 1},
    "training_tokens": 5.0e7,
}
PER_KEY = 4 * 4 * 4096 * 32


def flops_per_token(spec: dict) -> float:
    return sized(spec, "h100-sxm5-80gb")["throughput"]["flops_per_token"]


def extra_flops_32k_over_4k(model: dict) -> float:
    long = copy.deepcopy(MISTRAL_LORA_32K) | {"model": model}
    short = long | {"seq_len": 4096}
    return flops_per_token(long) - flops_per_token(short)


@pytest.mark.django_db
def test_mistral_32k_stated_window_counts_attention_by_hand(bundled_catalog):
    window = 4096 - 4096**2 / (2 * 32768)
    assert window == 3840
    extra = extra_flops_32k_over_4k({"preset": "mistral-7b", "sliding_window": 4096})
    assert extra == pytest.approx(PER_KEY * (window - 2048), rel=0.03)


@pytest.mark.django_db
def test_mistral_32k_without_window_counts_full_causal_attention(bundled_catalog):
    # a model without a window (Mistral 7B v0.2+ dropped it): the issue's ~70% attention share at 32k
    extra = extra_flops_32k_over_4k({"preset": "mistral-7b", "sliding_window": 0})
    assert extra == pytest.approx(PER_KEY * (16384 - 2048), rel=0.03)


@pytest.mark.django_db
# Was a strict xfail: the preset had no sliding_window, 77.0e9 FLOPs a token at 32k (30.1e9 over 4k, full causal).
# Now 50.7e9 (3.76e9 over 4k) because the preset carries the HF config's sliding_window 4096 on every layer, and
# the answer states the window as an assumption of the stack where it decides (fix43r).
def test_mistral_preset_at_32k_uses_the_v01_sliding_window(bundled_catalog):
    extra = extra_flops_32k_over_4k({"preset": "mistral-7b"})
    assert extra == pytest.approx(PER_KEY * (3840 - 2048), rel=0.03)
    notes = sized(MISTRAL_LORA_32K, "h100-sxm5-80gb")["workload"]["memory_assumptions"]
    assert any("sliding_window" in note and "torchtune" in note for note in notes), notes
    short = sized(MISTRAL_LORA_32K | {"seq_len": 4096}, "h100-sxm5-80gb")["workload"]["memory_assumptions"]
    assert not any("sliding_window" in note for note in short), short  # inside the window it decides nothing


# --- 5. CodeLlama-34B AWQ, one stream at 4k (no GPU count stated) ---------------------------------------------------
# [CL34] Hand memory: block linears 48 x (2 x 8192^2 + 2 x 8192 x 1024 + 3 x 8192 x 22016) = 33.22e9 at 4.25 bits
# = 16.44 GiB; embeddings and head in bf16 0.98 GiB; KV 4,096 x 48 x 2 x 1,024 x 2 B = 0.75 GiB: 18.2 GiB. A 24 GB
# card holds it only inside the 20% headroom; an expert signs one 48 GB card, or a 24 GB card knowingly tight, and
# accepts 2 consumer cards only flagged (no peer-to-peer, GeForce licence).
CODELLAMA_34B_AWQ = {
    "name": "codellama-34b-awq",
    "task": "inference",
    "model": {
        "name": "codellama-34b",
        "num_layers": 48,
        "hidden_size": 8192,
        "num_attention_heads": 64,
        "num_key_value_heads": 8,
        "intermediate_size": 22016,
        "vocab_size": 32000,
    },
    "weight_quantization": "int4",
    "inference": {"concurrency": 1, "context_len": 4096, "output_tokens": 256},
}


@pytest.mark.django_db
def test_codellama_34b_awq_memory_by_hand_and_the_tight_24gb_row_shown(bundled_catalog):
    linears = 48 * (2 * 8192**2 + 2 * 8192 * 1024 + 3 * 8192 * 22016)
    hand_gib = (linears * 4.25 / 8 + 2 * 32000 * 8192 * 2 + 4096 * 48 * 2 * 1024 * 2) / GIB
    assert hand_gib == pytest.approx(18.17, abs=0.05)
    # hostdoubt (stop 52): top 10, was top 5. The 24 GB rows cheaper than the first undoubted row are lium /
    # vast offers whose host is unknown: tight + host unknown is two doubts for production serving, so they
    # follow the one-doubt 48 GB rows (cudo A40s on 4 / 8 GiB hosts, vast RTX 6000 Ada, lium RTX 3090 tight
    # alone at row 7): rows 7-10 (configurations.ranked_order, fewer doubts first, aud50a).
    rows = ranked(CODELLAMA_34B_AWQ, 10)
    one_card = [r for r in rows if r["gpus"] == 1]
    assert one_card, describe(rows)
    for row in one_card:
        assert hand_gib <= row["memory_per_gpu_gib"] <= hand_gib * 1.15, describe([row])
    # the cheaper one-card 24 GB row is in the top five, tight, with its margin (class 6)
    tight = [r for r in one_card if r["tight"]]
    assert tight and all(any("margin" in reason for reason in r["reasons"]) for r in tight), describe(rows)
    # a first row split over consumer cards says so (class 4)
    first = rows[0]
    if first["gpus"] > 1 and first["gpu"].startswith("rtx-"):
        assert flagged_for_links(first), describe([first])
    assert_cost_by_hand(first)


# --- 6. Phi-3-mini full fine-tune on 4 GPUs, ZeRO-2 -------------------------------------------------------------
# [PHI3] shape; micro-batch 4 x 4,096, full checkpointing; the spec states 4 GPUs and ZeRO-2. Hand floor a GPU:
# bf16 weights 2 B + ZeRO-2 sharded bf16 gradients 2 / 4 B + fp32 master, m, v 12 / 4 B = 5.5 B a parameter.
PHI3_FT = {
    "name": "phi-3-mini-full-ft",
    "task": "full_finetune",
    "model": {
        "name": "phi-3-mini-4k",
        "num_layers": 32,
        "hidden_size": 3072,
        "num_attention_heads": 32,
        "num_key_value_heads": 32,
        "intermediate_size": 8192,
        "vocab_size": 32064,
    },
    "micro_batch_size": 4,
    "seq_len": 4096,
    "gradient_checkpointing": "full",
    "parallelism": {"gpus": 4, "zero_stage": 2},
    "training_tokens": 2.0e8,
}


@pytest.mark.django_db
def test_phi3_rows_keep_4_gpus_zero2_and_the_first_row_costs_by_hand(bundled_catalog):
    rows = ranked(PHI3_FT)
    assert rows and all(r["gpus"] == 4 and r["plan"]["zero_stage"] == 2 for r in rows), describe(rows)
    params = 32 * (4 * 3072**2 + 3 * 3072 * 8192) + 2 * 32064 * 3072
    floor_gib = params * 5.5 / GIB
    assert floor_gib == pytest.approx(19.6, abs=0.1)
    first = rows[0]
    assert floor_gib < first["memory_per_gpu_gib"] and first["fits"], describe(rows)
    assert first["memory_margin"]["capacity_gib"] >= first["memory_per_gpu_gib"] * 1.2
    assert_cost_by_hand(first)


# --- 7. Qwen (1) chat models on one A100 80GB, batch 1, 2,048 tokens generated [QWEN] ------------------------------
# The README's table: BF16, Int8 and Int4 (AutoGPTQ) for 7B and 14B; Int4 for 72B (BF16 / Int8 need two cards).
# Shapes: Qwen-7B 32 x 4,096, 32 heads (no GQA), intermediate 11,008, vocabulary 151,936; Qwen-14B is Llama 2
# 13B's 40 x 5,120 with intermediate 13,696 and 152,064 tokens; Qwen-72B is Llama 2 70B's 80 x 8,192 with 64 KV
# heads (no GQA), intermediate 24,576, 152,064 tokens. The profile generates 2,048 tokens from a short prompt
# (context 2,049). Published (tokens/s, GB): 7B BF16 40.93 / 16.99, Int8 37.47 / 11.20, Int4 50.09 / 8.21;
# 14B BF16 32.22 / 30.15, Int8 29.28 / 18.81, Int4 38.72 / 13.01; 72B Int4 11.32 / 48.86. The script's "GB" is
# not defined: each memory row is asserted within 10% under both readings (GiB and 1e9 bytes) where it can be.
QWEN_MODELS = {
    "7b": {
        "name": "Qwen-7B",
        "num_layers": 32,
        "hidden_size": 4096,
        "num_attention_heads": 32,
        "intermediate_size": 11008,
        "vocab_size": 151936,
        # fix47h: the README's run (flash-attn 2, csrc/layer_norm "optional"): Qwen-1's QWenBlock with eager RMSNorms,
        # 37 kernels a layer (serving_host.EAGER_LAYER_KERNELS; was qwen1, 23, fix43d)
        "eager_layer": "qwen1_unfused_norm",
    },
    "14b": {
        "preset": "llama-2-13b",
        "name": "Qwen-14B",
        "intermediate_size": 13696,
        "vocab_size": 152064,
        "eager_layer": "qwen1_unfused_norm",
    },
    "72b": {
        "preset": "llama-2-70b",
        "name": "Qwen-72B",
        "num_key_value_heads": 64,
        "intermediate_size": 24576,
        "vocab_size": 152064,
        "eager_layer": "qwen1_unfused_norm",
    },
}
# (model, weight_quantization): (published tokens/s, published GB, ours tokens/s at this commit, engine hf_eager)
QWEN_TABLE = {
    # fix47h: one harness (transformers, 16.99 us) and the README's layer (qwen1_unfused_norm, 37): 76.84 -> 48.48
    # hfeager: 2 of the 37 (flash-attn's Triton rotary on q and k) at Triton's Python launch, 62 us (triton-lang/triton
    # PR #3503), the other 35 at 16.99 us: 7B (35 x 32 + 30) x 16.99 us + 64 x 62 us = 23.507 ms = 42.54 tokens/s;
    # 14B (35 x 40 + 30) x 16.99 us + 80 x 62 us = 29.256 ms = 34.18; Int4 x 0.912: 46.64 / 37.47
    # before -> after: 7B BF16 host47b 42.11 -> 76.84; fix47h 48.48 (+18.4%); hfeager 42.54 (+3.9%). 7B Int8 fix47h
    # 42.11 (auto_gptq, 23) -> 48.48 (+29.4%); hfeager 42.54 (+13.5%). 7B Int4 (acc44: exllama stated, qwen_spec)
    # fix47h 46.17 -> 53.15; hfeager 46.64. 14B BF16 host47b 33.96 -> 48.72; fix47h 38.98 (+21.0%); hfeager 34.18
    # (+6.1%). 14B Int8 fix47h 33.96 -> 38.98 (+33.1%); hfeager 34.18 (+16.7%, strict xfail). 14B Int4 (acc44:
    # exllama, 33.96 / 0.912) fix47h 37.23 -> 42.73; hfeager 37.47
    ("7b", "none"): (40.93, 16.99, 42.54),
    # int8b: Int8 states inference.quant_kernel cuda_old (qwen_spec): + 5 quantized linears x 4 bare ops x 7 us a
    # layer (serving_host.CUDA_OLD_BARE_OPS, optimizer_op_host_s). 7B: 23.507 + 32 x 5 x 4 x 7 us = 4.480 ms =
    # 27.987 ms = 35.73 tokens/s (was 42.54, +13.5% -> -4.6%); 14B: 29.256 + 40 x 5 x 4 x 7 us = 5.600 ms = 34.856 ms
    # = 28.69 (was 34.18, +16.7%, strict xfail -> -2.0%, passing: FIXED)
    ("7b", "int8"): (37.47, 11.20, 35.73),
    ("7b", "int4"): (50.09, 8.21, 46.64),
    ("14b", "none"): (32.22, 30.15, 34.18),
    ("14b", "int8"): (29.28, 18.81, 28.69),
    ("14b", "int4"): (38.72, 13.01, 37.47),
    # fix44q: exllama GPU-bound; cls45d: 1 / (69.79e9 x 1.1314 ps + 3 x 1.88 ms KV) (11.67 with 1 pass); decode48b:
    # 11.82 -> 11.98 (+5.8%), 1 / (69.79e9 x 1.0579 ps + 5.114 x 1.88 ms), the per-row constant refitted with the fp16
    # cache's cat copies at 2.057 passes each (held out)
    ("72b", "int4"): (11.32, 48.86, 11.98),
}


# acc44: the README's Int4 rows ran AutoGPTQ's 4-bit kernel as the library chose it: "The generation speed of the
# Int4/Int8 models mentioned above is provided by the autogptq library" (QwenLM/Qwen @03cd81f5 README, Inference
# Performance) on "PyTorch 2.0.1", for which the same README's Quantization section pins "torch>=2.0,<2.1
# auto-gptq<0.5.0"; auto-gptq 0.4.x loads 4-bit GPTQ weights on its exllama kernel unless disable_exllama is
# passed (the README's snippets pass none). So Int4 states inference.quant_kernel exllama; Int8 (exllama is 4-bit
# only) states nothing.
def qwen_spec(model: str, quantization: str) -> dict:
    inference = {"concurrency": 1, "context_len": 2049, "output_tokens": 2048, "engine": "hf_eager"}
    if quantization == "int4":
        inference["quant_kernel"] = "exllama"
    # int8b: the Int8 rows state AutoGPTQ's 8-bit linear, inference.quant_kernel cuda_old. The README (@03cd81f5,
    # Inference Performance) ran PyTorch 2.0.1 and says the Int4 / Int8 speeds are "provided by the autogptq library";
    # its Quantization section pairs torch>=2.0,<2.1 with auto-gptq<0.5.0. Every AutoGPTQ release's
    # dynamically_import_QuantLinear (0.4.2 @62187bf8; 0.7-era @03b6ed25) takes exllama / exllamav2 / marlin for
    # bits == 4 only and, with use_triton off (the default), qlinear_cuda_old (desc_act false, as Qwen's Int8
    # quantize_config) or qlinear_cuda for 8 bits: both forwards issue the same 4 bare ops around the 8-bit matmul.
    if quantization == "int8":
        inference["quant_kernel"] = "cuda_old"
    # fix47h: every row on ONE harness, plain transformers (the default). host47b stated auto_gptq for the Int4 / Int8
    # rows ("provided by the autogptq library", QwenLM/Qwen @03cd81f5 README) for AutoGPTQ's generate wrapper; that
    # cause is withdrawn (aud47h): the README's own same-host Int / BF16 pairs run at one per-kernel rate, and it
    # calls from_pretrained ~20% SLOWER than the autogptq path, the opposite sign of a 31 / 17 us split.
    return {
        "name": f"qwen-{model}-{quantization}",
        "task": "inference",
        "model": QWEN_MODELS[model],
        "weight_quantization": quantization,
        "inference": inference,
    }


@pytest.mark.django_db
@pytest.mark.parametrize(("model", "quantization"), list(QWEN_TABLE))
def test_qwen_memory_on_one_a100_within_10_percent(bundled_catalog, model, quantization):
    # ours (GiB): 7B 16.75 / 10.42 / 7.45, 14B 29.95 / 17.62 / 11.84, 72B Int4 46.99: -1.4% to -9.3% as GiB
    published = QWEN_TABLE[(model, quantization)][1]
    report = sized(qwen_spec(model, quantization), "a100-sxm4-80gb")
    peak = report["memory"]["total_per_gpu_gib"]
    assert peak == pytest.approx(published, rel=0.10)
    assert report["candidates"][0]["verdict"] in {
        "fits",
        "tight",
        "oversized",
    }  # oversized: fits, a smaller card would too
    if model == "72b":  # read as 1e9 bytes: 45.50 GiB, ours +3.3%
        assert peak == pytest.approx(published * 1e9 / GIB, rel=0.10)


# The README ran transformers' generate in eager PyTorch (Int4 / Int8 through AutoGPTQ): the spec states it,
# inference.engine hf_eager (procurement/sizing/serving_host.py: a step takes the longer of the GPU's work and 23
# kernels a layer x layers + 30 of the loop at eager_kernel_host_s, 31 us; counted from Qwen-1's modeling_qwen.py,
# not fitted on any row).
# Was a strict xfail (all seven): 7B BF16 96.87 vs 40.93 (+137%), Int8 134.27 vs 37.47, Int4 175.53 vs 50.09;
# 14B BF16 51.68 vs 32.22 (+60%), Int8 73.73 vs 29.28, Int4 100.36 vs 38.72; 72B Int4 21.36 vs 11.32 (+89%).
# Now 7B BF16 42.11 (+2.9%), 7B Int8 42.11 (+12.4%), 14B BF16 33.96 (+5.4%), 14B Int4 33.96 (-12.3%) because the
# eager loop's host floor (serving_host.py) is counted: each waits on the host (7B 23.7 ms a token against 10.3 ms
# of GPU work). The other three stay strict xfails below.
_EAGER_INT = (
    "The eager loop's host floor counts one kernel a quantized linear, as a BF16 GEMV (AutoGPTQ's exllama / cuda "
    "kernel), so Int4, Int8 and BF16 of one size run at the same host-bound speed (7B 42.11, 14B 33.96 tokens/s); "
    "the README's Int4 runs faster than its BF16 (7B 50.09 vs 40.93, 14B 38.72 vs 32.22) and its Int8 slower "
    "(37.47, 29.28): a per-kernel cost that differs by the library's kernel, not sized (one eager_kernel_host_s). "
)
# Was a strict xfail [7b-int4]: 42.11 vs 50.09 (-15.9%; one host cost a kernel whatever the library). Now 46.17
# (-7.8%) because the spec states the README's kernel, inference.quant_kernel exllama, whose one-stream step is
# 0.912 of the fp16 loop's, measured on another model (huggingface/optimum @09638629 tests/benchmark/README.md,
# Llama-2-13B on an A100-SXM4-80GB, batch 1: 33.711 against 36.958 ms a token; serving_host.QUANT_KERNEL_STEP_RATIO):
# 23.7 ms x 0.912 = 21.6 ms a token, still host-bound (GPU work ~5 ms). 14B Int4 (passing) moves 33.96 (-12.3%) ->
# 37.23 (-3.8%).
# Was a strict xfail [72b-int4]: 18.91 vs 11.32 (+67.0%; host-bound at 80 x 23 + 30 kernels x 31 us x 0.912 = 52.9 ms
# against 46.8 ms of GPU work; 88.3 ms published). Now 11.67 (+3.1%) because exllama's GEMV runs each row on the GPU
# at a per-row cost proportional to the quantized weights (fix44q, serving_host.EXLLAMA_ROW_SECONDS_PER_WEIGHT,
# fitted on huggingface/optimum @09638629's Llama-2-13B batch 2 / 4 exllama rows, 15.24 ms a row for 12.69e9
# weights; this row held out): 69.79e9 x 1.2008e-12 s = 83.8 ms + 1.9 ms of KV = 85.7 ms a token, GPU-bound.
# cls45d: 11.82 (+4.4%): the eager loop's 3 passes over the KV cache (torch.cat's copy) and the per-row constant
# refitted with them on the same two optimum rows (14.35 ms a row, 1.1314e-12 s): 79.0 ms + 3 x 1.9 = 84.7 ms.
# fix46k (stop 46, aud46k's audit, tests/procurement/outside/test_outside_eager_decode_audit_stop46.py): [14b-int8]
# back to UNEXPLAINED. decode46 had relabelled it EXPLAINED with (a) AutoGPTQ's 8-bit QuantLinear op list and (b) the
# README's own Int8 / BF16 step ratio as its size; (b) is an identity (the engine gives Int8 = BF16, so
# ours / (32.22 / 29.28) / 29.28 = ours / 32.22 for any ours) and (a)'s own size is refuted by the README's rows
# (test_qwen_int8_extra_kernel_count_overpredicts_the_readme_int8_steps below). The op list stays a lead. Code read
# (not shown to be the rows' release): AutoGPTQ v0.4.2 @62187bf843726bdd473e0685ec9098639fe340c0
# auto_gptq/utils/import_utils.py dynamically_import_QuantLinear (exllama only for bits == 4, else qlinear_cuda_old
# or qlinear_cuda); both 8-bit forwards (qlinear_cuda_old.py l. 196-272, qlinear_cuda.py l. 196-273) issue
# torch.zeros (fp32 out), x.float(), self.scales.float(), vecquant8matmul(_old), out.half() and the bias add.
_INT8_REASON = (
    "UNEXPLAINED: [QWEN] Qwen-14B-Chat-Int8, one A100, batch 1: published 29.28 tokens/s, ours 33.96 (+16.0%) "
    "-> 38.98 (+33.1%) at fix47h (one harness, transformers 16.99 us; the README's layer qwen1_unfused_norm, 37 "
    "kernels: the BF16 row's host excess, +21.0%, and the 8-bit step's, 1.100, together) -> 34.18 (+16.7%) at "
    "hfeager (the BF16 row's excess FIXED: flash-attn's Triton rotary, 2 launches a layer at Triton's 62 us, "
    "triton-lang/triton PR #3503; the BF16 row 34.18, +6.1%): what is left is the 8-bit step, the README's Int8 / "
    "BF16 step ratio 1.100 against the engine's 1.000 (34.18 / 1.100 = 31.07, +6.1%, the BF16 row's error), "
    "the BF16 row's host floor (one kernel a quantized linear, as a BF16 GEMV: Int8 = BF16 in the engine). "
    "Lead, not sized: AutoGPTQ's 8-bit QuantLinear (code read at v0.4.2 @62187bf8: exllama is 4-bit only, so 8 "
    "bits run qlinear_cuda_old / qlinear_cuda, whose forward issues torch.zeros of an fp32 output, x.float(), "
    "self.scales.float(), vecquant8matmul, out.half() and the bias add where the BF16 loop's linear is one call). "
    "Its size is refuted by the README's own rows: 4 extra kernels x 5 linears x 40 layers at the README host's "
    "BF16 rate (1 / 32.22 over 40 x 23 + 30 kernels = 32.7 us) predict +26.1 ms a token where the Int8 step is "
    "+3.1 ms longer (8.4x); at each size's own BF16 rate (31.9 / 31.8 us) 7B +20.4 predicted against +2.3 "
    "seen, 1.8B +15.2 against -0.5 (its Int8 runs faster than "
    "its BF16, 55.56 against 54.09). decode46's size (ours / 1.100, the README's own Int8 / BF16 step ratio, "
    "+5.4% = the BF16 row's error) was an identity and is withdrawn. What the rows ran is not published: the "
    'README says the Int4 / Int8 speeds are "provided by the autogptq library" and that a model loaded with '
    'AutoModelForCausalLM.from_pretrained "will be approximately 20% slower", and gives no profile script, so '
    "neither the AutoGPTQ release (auto-gptq<0.5.0 is the install range of its Quantization section, not the "
    "run's) nor the loading path is known. optimum's measured AutoGPTQ 0.4.2 cuda-old batch-1 ratio (46.44 / "
    "36.958 = 1.257, 4-bit, Llama-2-13B) on the engine's BF16 figures would put this row at -7.7% and the 7B "
    "Int8 at -10.6% but the held-out 1.8B Int8 at -20.6% (44.1 against 55.56), so it is not stated as an 8-bit "
    "kernel (no inference.quant_kernel value); a spec would need the 8-bit library, its release and its loading "
    "path (AutoGPTQ's own loader or from_pretrained), none of which the README states."
)
# host47b: the Qwen-1 README's BF16 rows are plain transformers generate (the README's own AutoModelForCausalLM
# snippet), so they take the new default host, hf_generate_kernel_host_s 16.99 us a kernel (was 31 us), and left the
# 15% band (+51 to +88% on the qwen1 count, 23). fix47h: restated on the README's layer, qwen1_unfused_norm (37:
# flash-attn 2 without the optional csrc/layer_norm; serving_host.EAGER_LAYER_KERNELS, counted from
# zhangningboo/Qwen-7B @e7a368b0774370edec29674e7c51f52fc7663f59 modeling_qwen.py), and every row on one harness
# (transformers): 1.8B / 7B / 14B BF16 +18.5 / +18.4 / +21.0%, still out.
# hfeager: [7b-none], [14b-none] and [7b-int8] pass and lose their strict xfails (FIXED). The cause was not this host's
# per-kernel rate (the reasons read 20.1-20.6 us a kernel on the 37 count) but 2 of the 37: Qwen-1's flash-attn
# rotary (modeling_qwen.py @e7a368b0 apply_rotary_pos_emb -> flash-attn's apply_rotary_emb_func) is a Triton kernel
# from flash-attn 2.1.2 (Dao-AILab/flash-attention 942fcbf0; the README's install: csrc/rotary "not needed" above
# 2.1.1), launched through Triton's Python launcher at 62 us a many-argument launch (triton-lang/triton PR #3503;
# serving_host.TRITON_LAUNCH_HOST_SECONDS), not 16.99 us. Before -> after: 7B BF16 48.48 (+18.4%) -> 42.54 (+3.9%);
# 14B BF16 38.98 (+21.0%) -> 34.18 (+6.1%); 7B Int8 48.48 (+29.4%) -> 42.54 (+13.5%). Their reasons were:
# [7b-none] / [14b-none] "UNEXPLAINED (host47b; fix47h restated ...): ... On 37 the README's BF16 rows read 20.1 /
# 20.1 / 20.6 us a kernel (1.8B / 7B / 14B), 1.18-1.21x the default ... What remains is this host's per-kernel rate,
# which no field states: not sized, not added."; [7b-int8] "UNEXPLAINED (fix47h ...): ... Two parts, neither sized:
# the BF16 row's own host excess (+18.4%, QWEN1_BF16_HOST47) and the 8-bit step (the README's Int8 / BF16 step ratio
# 1.092 ...)". The 8-bit step is still not priced (Int8 = BF16 in the engine); 7B Int8 lands inside with it unpriced.
# int8b: [14b-int8] FIXED, its strict xfail (_INT8_REASON, kept above as history) removed: 34.18 (+16.7%) -> 28.69
# (-2.0%) once the spec states the README's 8-bit linear, inference.quant_kernel cuda_old (qwen_spec: AutoGPTQ's
# qlinear_cuda_old / qlinear_cuda, 4 bare ops a quantized linear at optimizer_op_host_s, 7 us, pytorch/pytorch issue
# #41383; 40 x 5 x 4 x 7 us = 5.60 ms a token). The lead _INT8_REASON refuted priced the 4 ops at a counted kernel's
# rate (32.7 us: +26.1 ms); at a bare op's 7 us the count is 5.6 ms against the README's +3.1 ms Int8 - BF16 step
# (test_qwen_int8_extra_kernel_count_overpredicts_the_readme_int8_steps): the row passes with the count over the
# README's step by 2.5 ms, inside its 15%. [7b-int8] 42.54 (+13.5%) -> 35.73 (-4.6%), passing.
_DECODE_MISSES: dict = {}
# fix47h: [7b-int4] 50.09: 46.17 (-7.8%, auto_gptq on the 23 count) -> 53.15 (+6.1%), passing; [14b-int4] 38.72: 37.23
# (-3.8%) -> 42.73 (+10.4%), passing; [72b-int4] 11.82 unchanged (GPU-bound). All on one harness and the 37 count.


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("model", "quantization"),
    [
        pytest.param(*key, marks=pytest.mark.xfail(strict=True, reason=_DECODE_MISSES[key]))
        if key in _DECODE_MISSES
        else key
        for key in QWEN_TABLE
    ],
)
def test_qwen_decode_speed_on_one_a100_within_15_percent(bundled_catalog, model, quantization):
    published, _, ours = QWEN_TABLE[(model, quantization)]
    report = sized(qwen_spec(model, quantization), "a100-sxm4-80gb")
    speed = report["throughput"]["decode_tokens_per_second_per_stream"]
    assert speed == pytest.approx(ours, rel=0.02)  # the figure the reason quotes
    assert speed == pytest.approx(published, rel=0.15)


# fix46k: replaces decode46's test_qwen_14b_int8_excess_is_the_readme_int8_to_bf16_step_ratio, whose key assert
# (ours / (32.22 / 29.28) / 29.28 - 1 == ours / 32.22 - 1) is an identity: it held for any engine figure and could not
# fail (aud46k). This one pins the lead's own size from published inputs, and fails if the engine starts pricing the
# 8-bit linear apart from the BF16 one (then [14b-int8]'s reason must be redone). Inputs: [QWEN] QwenLM/Qwen @03cd81f5
# README.md Inference Performance, tokens/s BF16 / Int8: 1.8B 54.09 / 55.56, 7B 40.93 / 37.47, 14B 32.22 / 29.28;
# layers 24 / 32 / 40 (the models' config.json, QWEN_MODELS / test_outside_audit_stop43d.py); 23 kernels a layer + 30
# (serving_host.py's qwen1 count, fix43d); 4 extra kernels a quantized linear (zeros, x.float, scales.float,
# out.half; vecquant8matmul replaces the GEMM; AutoGPTQ v0.4.2 @62187bf8 qlinear_cuda_old.py l. 196-272), 5 quantized
# linears a Qwen-1 layer (c_attn, attn c_proj, w1, w2, mlp c_proj).
@pytest.mark.django_db
def test_qwen_int8_extra_kernel_count_overpredicts_the_readme_int8_steps(bundled_catalog):
    key = "decode_tokens_per_second_per_stream"
    ours_int8 = sized(qwen_spec("14b", "int8"), "a100-sxm4-80gb")["throughput"][key]
    # fix47h: both rows on one harness (the default, qwen_spec), so the comparison stays one of the weights' bits alone
    bf16 = qwen_spec("14b", "none")
    ours_bf16 = sized(bf16, "a100-sxm4-80gb")["throughput"][key]
    # int8b: restated. Was `ours_int8 == approx(ours_bf16)` (one kernel a linear whatever the weights' bits); the Int8
    # row now states inference.quant_kernel cuda_old (qwen_spec), whose 4 bare ops a quantized linear are priced at
    # optimizer_op_host_s (7 us), not at a counted kernel's rate: the step grows by 40 x 5 x 4 x 7 us = 5.60 ms
    assert 1 / ours_int8 - 1 / ours_bf16 == pytest.approx(40 * 5 * 4 * 7e-6, rel=1e-4)  # speeds to 4 decimals
    readme = {"1.8b": (24, 54.09, 55.56), "7b": (32, 40.93, 37.47), "14b": (40, 32.22, 29.28)}
    predicted_ms, seen_ms, rate_us = {}, {}, {}
    for size, (layers, bf16, int8) in readme.items():
        rate = 1 / bf16 / (layers * 23 + 30)  # the README host's seconds a kernel on the engine's count
        rate_us[size] = rate * 1e6
        predicted_ms[size] = 4 * 5 * layers * rate * 1e3
        seen_ms[size] = (1 / int8 - 1 / bf16) * 1e3
    assert rate_us == {
        "1.8b": pytest.approx(31.77, abs=0.01),
        "7b": pytest.approx(31.90, abs=0.01),
        "14b": pytest.approx(32.67, abs=0.01),
    }
    assert predicted_ms == {
        "1.8b": pytest.approx(15.25, abs=0.01),  # aud46k rounded it +15.3; 15.2 to one decimal
        "7b": pytest.approx(20.41, abs=0.01),
        "14b": pytest.approx(26.14, abs=0.01),
    }
    assert seen_ms == {
        "1.8b": pytest.approx(-0.49, abs=0.01),
        "7b": pytest.approx(2.26, abs=0.01),
        "14b": pytest.approx(3.12, abs=0.01),
    }
    for (
        size
    ) in readme:  # refuted: the count over-predicts every published Int8 step by 8x or more, or has its sign
        assert seen_ms[size] < predicted_ms[size] / 8
    # int8b: the same 4 ops at a bare op's host time (optimizer_op_host_s 7 us, what inference.quant_kernel cuda_old
    # prices): 1.8B 24 x 5 x 4 x 7 us = 3.36 ms, 7B 4.48, 14B 5.60, still above every seen step (-0.49 / 2.26 / 3.12):
    # by 1.8x at 14B, 2.0x at 7B, and against the sign at 1.8B. Why the README's Int8 steps are this short is not
    # sized (UNEXPLAINED: test_outside_audit_stop43d.py's [int8-55.56] note, test_outside_host_rate_audit_stop47.py)
    bare_ms = {size: 4 * 5 * layers * 7e-6 * 1e3 for size, (layers, _, _) in readme.items()}
    assert bare_ms == {"1.8b": pytest.approx(3.36), "7b": pytest.approx(4.48), "14b": pytest.approx(5.60)}
    for size in readme:
        assert seen_ms[size] < bare_ms[size] - 1.0
    # optimum's AutoGPTQ 0.4.2 cuda-old batch-1 ratio (huggingface/optimum @09638629 tests/benchmark/README.md,
    # Llama-2-13B, A100: 46.44 / 36.958 ms a token, 4-bit) on the engine's BF16 figures (14B here, 7B QWEN_TABLE's
    # 42.11, 1.8B test_outside_audit_stop43d.py's 55.43): 14B -7.7%, 7B -10.6%, 1.8B -20.6% (outside 15%): why no
    # cuda_old value is stated for 8 bits.
    # fix47h: on the engine's BF16 figures now (one harness, the 37 count: 14B 38.98, 7B 48.48, 1.8B 64.12) the same
    # ratio reads 14B +5.9%, 7B +3.0%, 1.8B -8.2%, all inside: a lead for an 8-bit kernel value, not stated here (a
    # 4-bit kernel's ratio on another model, and the BF16 rows it stands on are themselves +18 to +21%).
    # hfeager: on the engine's BF16 figures with flash-attn's Triton rotary priced (14B 34.18, 7B 42.54, 1.8B 56.31)
    # the ratio reads 14B -7.1%, 7B -9.6%, 1.8B -19.3% (outside 15%): the 1.8B still rules a cuda_old value out
    # int8b: inference.quant_kernel cuda_old now names the 8-bit class but prices its 4 bare ops (7 us each), not
    # this 4-bit cuda-old ratio; the lines below keep the ratio's reading on the BF16 figures as history
    cuda_old = 46.44 / 36.958
    assert ours_bf16 / cuda_old / 29.28 - 1 == pytest.approx(-0.071, abs=0.001)
    assert 42.54 / cuda_old / 37.47 - 1 == pytest.approx(-0.096, abs=0.001)
    assert 56.31 / cuda_old / 55.56 - 1 == pytest.approx(-0.193, abs=0.001)
    # the fix47h figures (48.48 / 64.12 / 38.98 on the 37 count, every kernel at 16.99 us), kept as history
    assert 38.98 / cuda_old / 29.28 - 1 == pytest.approx(0.059, abs=0.001)
    assert 48.48 / cuda_old / 37.47 - 1 == pytest.approx(0.030, abs=0.001)
    assert 64.12 / cuda_old / 55.56 - 1 == pytest.approx(-0.082, abs=0.001)
    # the pre-fix47h figures (42.11 / 55.43 at 31 us on the 23 count), kept as history
    assert 42.11 / cuda_old / 37.47 - 1 == pytest.approx(-0.106, abs=0.001)
    assert 55.43 / cuda_old / 55.56 - 1 == pytest.approx(-0.206, abs=0.001)
