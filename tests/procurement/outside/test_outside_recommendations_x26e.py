"""Issue 26, judged from outside (round x26e): published runs no earlier round, docs/validation.md or fit used,
chosen to exercise what the last stop added (Hopper FP8 MoE and the MoE fixed costs, recompute_modules,
sliding_window, fp8_recipe: torchao off the H100, stated TP/PP/VP plans for SFT and LoRA, multi-instance spot
rows ranked last).

Speeds and memory go through `size_spec_document` (what `manage.py size` runs, calibration off); rankings
through the service `manage.py recommend` uses (``workload_spec_parse`` -> ``ranking_options_parse`` ->
``recommendation_compute``). Tolerances are the issue's: throughput within 15%, memory within 10%. Misses are
strict xfails with the published figure, the product's, the gap and the cause I read.

Sources (figures quoted where used):
  [MBARCH]  NVIDIA-NeMo/Megatron-Bridge @067f987df03b8355b03192d88d70f1709fedf51a
            docs/performance-summary-archive.md (tables of the 26.06, 26.04.01, 26.04, 26.02.01 and 26.02 NeMo
            containers, DGX-H100 rows; "we force-balance the token distribution among experts and all
            benchmarks are token-dropless"). Columns: System | #-GPUs | Precision | GBS | MBS | Sequence
            Length | [FSDP |] TP | PP | CP | VP | EP | Tokens / sec / GPU | Model TFLOP / sec / GPU.
  [MBCFG]   same repository, the recipes of those tables:
            scripts/performance/configs/qwen/qwen3_workload_base_configs.py @63b08b397 (26.06):
              QWEN3_30B_A3B_PRETRAIN_CONFIG_H100_FP8_CS_V1: num_gpus=16, global_batch_size=1024,
              expert_model_parallel_size=16, moe_a2a_overlap=False, moe_flex_dispatcher_backend="hybridep";
              QWEN3_235B_A22B_PRETRAIN_CONFIG_H100_FP8_CS_V1: TP 2, PP 8, VP 4, EP 32, expert TP 1.
            scripts/performance/configs/gpt_oss/gpt_oss_workload_base_configs.py @63b08b397:
              GPT_OSS_120B_PRETRAIN_CONFIG_H100_BF16_V1 = BASE (64 GPUs, EP 8, MBS 1) + PP 4 +
              recompute_modules=["layernorm", "moe_act"]; _V2: global_batch_size=1280.
            scripts/performance/configs/llama/llama3_workload_base_configs.py @63b08b397:
              _LLAMA3_70B_SFT_CONFIG_H100: 32 GPUs, TP 4, PP 4, VP 5, MBS 1, GBS 32 (FP8_CS adds CUDA graphs);
              _LLAMA3_70B_LORA_CONFIG_H100: 8 GPUs, PP 4, VP 20, MBS 1, GBS 32; FP8_CS_V1: TP 2.
  [AOF8]    pytorch/ao @50865d5c7c781e7dd7a23642c1b3e41709c541ae torchao/float8/README.md, "AMD MI300x":
            "Single-node training on 8xMI300X GPUs, batch size 1, sequence length 8192, steps 100,
            `torch.compile`, FSDP2, per-op SAC": Llama3-8b "none (bfloat16)" 5376.5 median tokens/s,
            "tensorwise with float8 all-gather" 6166.0; "NVIDIA H100" (same settings) bf16 6150. The product's
            torchao cast cost was fitted on the H100 pair of this README (tests/procurement/sizing/
            test_fp8_recipe.py); the MI300X rows are not used anywhere.
"""

from __future__ import annotations

from decimal import Decimal

import pytest

from procurement.sizing.spec import parse_workload_spec
from tests.procurement.outside.test_outside_recommendations_x26b import (
    candidate,
    describe,
    megatron_spec,
    ranked,
    tokens_per_gpu,
)

RELABEL48_MI300X_TITAN = (
    "UNEXPLAINED (relabelA48: rechecked at 7,146.8, +32.9%. The 'EXPLAINED, not fixed' below (accel43) is"
    " withdrawn: 1.084 x 0.92 / 0.750 restates the row as a torchtitan MI300X ratio taken from the row "
    "itself, with no mechanism from a source (a) and nothing held out (b). Best lead: DVFS clock "
    "throttling (arXiv:2512.08242), unsized). "
)

ACCEL48_MI300X_TITAN = (
    "accel48: still 7,146.8 (+32.9%). No second MI300X torchtitan / PyTorch-FSDP bf16 row found to hold out: "
    "ROCm/TransformerEngine issues #78 / #79 (SemiAnalysis's FSDP Llama 3 8B / 70B-proxy reproductions): the "
    "excerpts read give TE FP8 'preliminary' TFLOP/s/GPU on the script's own FLOP count, no bf16 tokens/s at "
    "this recipe; AMD-AIG-AIMA/pytorch-training-"
    "benchmark's README gives run commands, no pretraining figure; ROCm's pytorch-training v25.4 doc points to "
    "AMD's performance-results page, whose training tables the stored copy does not reach. "
)

H100 = "h100-sxm5-80gb"
H100_NVL = "h100-nvl-94gb"
MI300X = "mi300x"
FEASIBLE = {"fits", "tight", "oversized"}


def gap(product: float, published: float) -> float:
    return (product - published) / published


# --- 1. Qwen3-30B-A3B FP8 on 16 H100, EP 16 over two nodes (Hopper FP8 MoE) -------------------------------------
# [MBARCH] 26.06: "DGX-H100 | 16 | FP8 | 1024 | 1 | 4096 | 1 | 1 | 1 | n/a | 16 | 8826 | 203" (26.04: 8901;
# 26.04.01: 8960). [MBCFG]: EP 16, no A2A overlap, hybridep flex dispatcher (stated as expert_dispatch: hybridep;
# moe26c, was deepep, the spec's only flex dispatcher before). No recompute in the recipe; 'selective' is the
# engine's no-recompute with flash attention. Published step: 1024 x 4096 / (8826 x 16) = 29.7 s.
QWEN3_EP16 = megatron_spec("qwen3-30b-a3b", 16, 4096, 1, 1, ep=16, global_batch=1024)
QWEN3_EP16["parallelism"]["expert_dispatch"] = "hybridep"


# hfp826: 4,675 (-47.0%); BF16 5,500. With no Hopper FP8 cost at all it would be 7,293 (-17.4%): 7.7 s of EP 16
# all-to-all over two nodes stays exposed (the engine's fabric rate), which this branch does not touch.
# Was a strict xfail: 4,876 (-44.8%), a 53.8 s step for the measured 29.7 s, stated as expert_dispatch deepep. Now
# 8,291 (-6.1%), step 31.6 s (moe26c: the recipe's HybridEP stated as expert_dispatch hybridep, which permutes and
# pads the tokens inside its dispatch and combine kernels, so Hopper's FP8 cost per routed copy is not charged;
# assumptions.MOE_HOPPER_FP8_ROUTED_COPY_SECONDS, "HybridEP"). Stated as deepep it still gives 4,876.
# Was a strict xfail: "int42: 10,153.9 (+15.0%, out by 0.05 point; step 25.82 s, 3.85 s of it exposed all-to-all)".
# Now 10,081.5 (+14.2%; step 26.00 s, 3.85 s exposed) because the MoE cost constants were refitted on their four rows
# once two were stated as run (moe43: DeepSeek-V2 with its MLA fields; the stated active counts read without the input
# embedding lookup, params.active_params): 217.5 B a routed element x the fp8 share 0.75 (163.1 B, was 155.8), and
# the card-independent 1.64 ms + 0.205 ms a local expert (4.92 ms a layer and micro-batch at 16 local experts, was
# 5.4) x HybridEP's 0.27. Inside by 0.8 point; whether HybridEP's saving on Hopper is the GB200 rows' share is still
# not measured (moe42's diagnosis).
@pytest.mark.django_db
def test_qwen3_30b_fp8_ep16_on_16_h100_within_15_percent(bundled_catalog):
    assert tokens_per_gpu(candidate(QWEN3_EP16, H100)) == pytest.approx(8826, rel=0.15)


@pytest.mark.django_db
def test_qwen3_30b_fp8_ep16_plan_fits_the_h100(bundled_catalog):
    """NVIDIA ran it on 80 GB H100s; product 52.7 GiB a GPU."""
    assert candidate(QWEN3_EP16, H100)["verdict"] in FEASIBLE


# hfp826: the Nebius 2 x 8 H100 row is second at 34.59 h and 2,042.82 USD (was 39.16 h, 2,302.50); B200 first.
# Was a strict xfail: the first row Nebius 2 x 8 B200, the H100 row second at 39.16 h (+99%) and 2,302.50 USD. Now
# the Nebius 2 x 8 H100 row is first at 20.94 h (+6.5% against 19.67) and 1,267.34 USD (moe26c: expert_dispatch
# hybridep, as the recipe states it; the reason's hand estimate at the measured rate was about 1,200 USD).
@pytest.mark.django_db
def test_qwen3_30b_fp8_ep16_ranking_h100_hours_within_15_percent(bundled_catalog):
    rows = ranked(QWEN3_EP16, top=10)
    h100 = [r for r in rows if r["gpu"] == H100]
    assert h100 and h100[0]["hours"] == pytest.approx(1e10 / (8826 * 16) / 3600, rel=0.15), describe(rows)


# --- 2. Qwen3-30B-A3B FP8 on 16 H100, PP 2 / VP 12 / EP 8, MBS 1: the product's own fit point, corrected -----------
# The product's assumption moe_hopper_fp8_seconds_per_local_expert (1.1 ms) is fitted on two rows, one of them
# 26.02 "Qwen3_30B_a3B | 16 | FP8-CS | 1024 | 1 | 4096 | 0 | 1 | 2 | 1 | 12 | 8 | 128 | 2557 | 118" as first
# published (@df0289c180dd20ff26933455c7a0a11084f6a36f). That row's two figures disagree with each other: at
# this model and sequence 1 model TFLOP/s is 43.5 tokens/s (25.11: 5275 / 121 = 43.6; 26.06: 8826 / 203 = 43.5),
# so 118 TFLOP/s is 5,130 tokens/s, not 2,557. The 2,557 is a draft of 2026-02-23: the 26.02 table as merged
# three days later (c0b9a0003 "26.02 perf summary (#2492)", docs/performance-summary.md) and NVIDIA's archive of
# it ([MBARCH]) read "Qwen3_30B_a3B | 16 | FP8 | 1024 | 1 | 4096 | 0 | 1 | 2 | 1 | 12 | 8 | 5113 | 118", and
# 26.02.01 runs the same plan at 9,058. The assumption's note ("both
# rows spend about 33 ms a MoE layer and micro-batch whatever the micro-batch") rests on the typo: with 5,113
# the MBS 1 row spends 4096 / (5113 x 48) = 16.7 ms against MBS 2's 32.4 ms, i.e. the cost scales with the
# tokens, as a per-expert fixed cost does not.
QWEN3_PP2_MBS1 = megatron_spec("qwen3-30b-a3b", 16, 4096, 1, 2, vp=12, ep=8, global_batch=1024)


# Was a strict xfail: 2,833 (-44.6%). Now 4,476 (-12.5%) (hfp826: Hopper FP8 cost per routed token copy, 200 ns,
# fitted on Qwen3-235B-A22B H100 rows, replaces 1.1 ms per local expert and micro-batch fitted on the draft 2,557).
@pytest.mark.django_db
def test_qwen3_30b_fp8_pp2_vp12_mbs1_on_16_h100_within_15_percent(bundled_catalog):
    assert tokens_per_gpu(candidate(QWEN3_PP2_MBS1, H100)) == pytest.approx(5113, rel=0.15)


# --- 3. GPT-OSS 120B BF16 on 64 H100, PP 4 / EP 8, recompute_modules, 128-token sliding window -------------------
# [MBARCH] 26.04.01: "DGX-H100 | 64 | BF16 | 1280 | 1 | 4096 | 0 | 1 | 4 | 1 | n/a | 8 | 5824 | 158" (26.04:
# 5810; 26.02.01: 5984). [MBCFG] V2: GBS 1280, MBS 1, PP 4, EP 8, recompute_modules ["layernorm", "moe_act"].
# Shape: openai/gpt-oss-120b config.json as x26d states it (36 layers, hidden 2880, 64 heads of 64, 8 KV heads,
# 128 experts top-4 of 2880, vocabulary 201,088, QKV bias, "sliding_window": 128 on the 18 "sliding_attention"
# layers). 36 / PP 4 = 9 layers a stage; GA = 1280 / 16 = 80 micro-batches.
# (The product's MoE byte cost was fitted on the 25.11 row of this model: 64 H100, GBS 512, MBS 4, PP 1, 5,630;
# this is another plan: MBS 1, PP 4, recompute.)
GPT_OSS_120B = {
    "name": "gpt-oss-120b",
    "num_layers": 36,
    "hidden_size": 2880,
    "num_attention_heads": 64,
    "num_key_value_heads": 8,
    "head_dim": 64,
    "intermediate_size": 2880,
    "moe_intermediate_size": 2880,
    "num_experts": 128,
    "experts_per_token": 4,
    "vocab_size": 201088,
    "attention_qkv_bias": True,
    "sliding_window": 128,
    "sliding_window_layers": 18,
}
GPT_OSS_H100 = megatron_spec(GPT_OSS_120B, 64, 4096, 1, 4, ep=8, global_batch=1280, precision="bf16") | {
    "recompute_modules": ["layernorm", "moe_act"]
}


@pytest.mark.django_db
def test_gpt_oss_120b_pp4_ep8_bf16_on_64_h100_within_15_percent(bundled_catalog):
    """Published 5,824 tokens/s/GPU; product 5,753 (-1.2%). Without the window stated: 5,609 (-3.7%)."""
    assert tokens_per_gpu(candidate(GPT_OSS_H100, H100)) == pytest.approx(5824, rel=0.15)


@pytest.mark.django_db
def test_gpt_oss_120b_recompute_modules_lower_the_peak_and_fit_the_h100(bundled_catalog):
    """NVIDIA ran the recipe on 80 GB H100s. Product: 52.4 GiB with layernorm + moe_act recomputed against 57.4
    GiB without (the two norms' outputs and the routed experts' activation output leave the saved set)."""
    with_recompute = candidate(GPT_OSS_H100, H100)
    plain = megatron_spec(
        GPT_OSS_120B, 64, 4096, 1, 4, ep=8, global_batch=1280, precision="bf16", checkpointing="none"
    )
    without = candidate(plain, H100)
    assert with_recompute["verdict"] in FEASIBLE
    assert with_recompute["memory"]["total_per_gpu_gib"] < without["memory"]["total_per_gpu_gib"]


# --- 3b. GPT-OSS 120B served from one 80 GB card, 131k context (sliding window in the KV cache) ------------------
# vllm-project/recipes OpenAI/GPT-OSS.md @00143a1a4aace5143b6825bcaa0fc30505015c61: "gpt-oss-120b will fit on a
# single A100 (80GB)" (`vllm serve openai/gpt-oss-120b`, default max-model-len = the model's 131,072) and the
# Hopper recipe's `--tensor-parallel-size 1` on an H100. OpenAI's gpt-oss model card (arXiv:2508.10925, Table 1):
# checkpoint 60.8 GiB (MoE weights in MXFP4, 4.25 bits; the rest bf16), stated as weight_quantization: int4.
# KV by hand: only the 18 full-attention layers hold 131,072 tokens: 18 x 131,072 x 2 x 8 x 64 x 2 B = 4.5 GiB
# (the 18 windowed layers 128 tokens each); without the window 9.0 GiB.
GPT_OSS_SERVE = {
    "task": "inference",
    "model": GPT_OSS_120B,
    "precision": "bf16",
    "weight_quantization": "int4",
    "parallelism": {"gpus": 1},
    "inference": {"concurrency": 1, "context_len": 131072, "output_tokens": 1024},
}


@pytest.mark.django_db
@pytest.mark.parametrize("gpu", ["a100-sxm4-80gb", H100])
def test_gpt_oss_120b_mxfp4_serves_131k_context_from_one_80gb_card(bundled_catalog, gpu):
    """Product: weights 59.37 GiB (-2.4% against the 60.8 GiB checkpoint), KV 4.5 GiB, 68.4 GiB in all: 'tight'
    (the 20% headroom does not fit), which is the honest verdict for vLLM's 0.9-0.95 memory utilisation."""
    row = candidate(GPT_OSS_SERVE, gpu)
    assert row["verdict"] in FEASIBLE
    assert row["memory"]["weights_gib"] == pytest.approx(60.8, rel=0.10)
    assert row["memory"]["kv_cache_gib"] == pytest.approx(18 * 131072 * 2 * 8 * 64 * 2 / 2**30, rel=0.02)


@pytest.mark.django_db
def test_gpt_oss_120b_one_card_month_first_row_by_hand_at_vllm_headroom(bundled_catalog):
    """A month of one stream at 131k context, headroom 0.1 (vLLM's gpu-memory-utilization 0.9). By hand: first row
    Cudo A800 PCIe 80GB on demand at 0.8234 USD/h x 730 h = 601.08 compute + 73.56 storage = 674.64 USD, the card
    class vLLM's recipe names ("will fit on a single A100 (80GB)"). At the default headroom 0.2 every 80 GB row is
    'tight' (68.4 GiB needs 82.1) and the first row is a Vast H100 NVL 94GB at 2.08 USD/h, 1,591.96 USD, 2.36x
    the A800 row, which follows it with its margin shown (class 6 by design; I would buy the A800)."""
    rows = ranked(GPT_OSS_SERVE | {"headroom": 0.1}, top=5)
    assert all(r["gpus"] == 1 and r["instances"] == 1 and not r["tight"] for r in rows), describe(rows)
    first = rows[0]
    compute = Decimal(first["effective_price_per_hour"]) * Decimal(str(first["hours"]))
    assert first["hours"] == pytest.approx(730)
    assert Decimal(first["cost_breakdown"]["compute"]) == pytest.approx(compute, abs=Decimal("0.01"))
    assert Decimal(first["effective_price_per_hour"]) < Decimal("1.0"), describe(rows)


# --- 4. Llama 3 70B SFT, FP8, 32 H100, TP 4 / PP 4 / VP 5 ---------------------------------------------------------
# [MBARCH] 26.06 "SFT Performance", LLAMA3_70B: "DGX-H100 | 32 | FP8 | 32 | 1 | 4096 | 4 | 4 | 1 | 5 | n/a | 1638 |
# 710". DP = 32 / 16 = 2, GA = 32 / 2 = 16. Full fine-tune: Megatron's distributed optimizer (ZeRO-1).
LLAMA70_SFT = megatron_spec("llama-3-70b", 32, 4096, 4, 4, vp=5, global_batch=32) | {
    "task": "full_finetune",
    "training_tokens": 2e9,
}


@pytest.mark.django_db
def test_llama3_70b_sft_fp8_on_32_h100_within_15_percent(bundled_catalog):
    """Published 1,638 tokens/s/GPU; product 1,494 (-8.8%), verdict tight (70.1 GiB on the 80 GB card)."""
    row = candidate(LLAMA70_SFT, H100)
    assert row["verdict"] in FEASIBLE
    assert tokens_per_gpu(row) == pytest.approx(1638, rel=0.15)


# --- 5. Llama 3 70B LoRA, FP8, 8 H100, TP 2 / PP 4 / VP 20 ---------------------------------------------------------
# [MBARCH] 26.06 "LoRA Performance", LLAMA3_70B: "DGX-H100 | 8 | FP8 | 32 | 1 | 4096 | 2 | 4 | 1 | 20 | n/a | 2643 |
# 735". DP 1, GA 32. Megatron-Bridge's LoRA default: rank 32 on linear_qkv, linear_proj, linear_fc1, linear_fc2
# (all linears).
LLAMA70_LORA = megatron_spec("llama-3-70b", 8, 4096, 2, 4, vp=20, global_batch=32) | {
    "task": "lora",
    "lora": {"rank": 32, "targets": "all-linear"},
}


@pytest.mark.django_db
def test_llama3_70b_lora_fp8_on_8_h100_within_15_percent(bundled_catalog):
    """Published 2,643 tokens/s/GPU; product 2,415 (-8.6%), 73.8 GiB a GPU (tight)."""
    row = candidate(LLAMA70_LORA, H100)
    assert row["verdict"] in FEASIBLE
    assert tokens_per_gpu(row) == pytest.approx(2643, rel=0.15)


# --- 6. Qwen3-235B-A22B FP8 on 256 H100: NVIDIA's plan, EP 32 across TP 2 ----------------------------------------
# [MBARCH] 26.04.01: "DGX-H100 | 256 | FP8 | 8192 | 1 | 4096 | 0 | 2 | 8 | 1 | 4 | 32 | 1712 | 253" (26.04 1686,
# 26.02.01 1611, 26.02 1633); [MBCFG] expert_tensor_parallel_size=1, so the 32 expert ranks span the TP pairs
# (Megatron-Core's expert-data-parallel folding). 94 layers + embedding + loss = 96 = PP 8 x VP 4 x 3.
QWEN3_235B = {
    "name": "qwen3-235b-a22b",
    "params": 235.1e9,
    # moe43: Qwen's 22.2B counts the input embedding table, which params.active_params leaves out (a lookup)
    "params_active": 22.2e9 - 151936 * 4096,
    "num_layers": 94,
    "hidden_size": 4096,
    "num_attention_heads": 64,
    "num_key_value_heads": 4,
    "head_dim": 128,
    "intermediate_size": 12288,
    "moe_intermediate_size": 1536,
    "num_experts": 128,
    "experts_per_token": 8,
    "vocab_size": 151936,
}
QWEN3_235B_H100 = megatron_spec(QWEN3_235B, 256, 4096, 2, 8, vp=4, ep=32, global_batch=8192)
QWEN3_235B_H100["parallelism"] |= {"account_for_embedding": True, "account_for_loss": True}


# Was a strict xfail: refused ('expert_parallel must divide ... gpus / (tp x pp) = 16, got 32'). Now stated (hfp826:
# EP may span the TP ranks, expert TP 1, sizing/expert_layout.py; sized at 1,048 tokens/s/GPU with the recipe's
# moe_a2a_overlap as 'partial', -38.8% of 1,712, the exposed EP 32 all-to-all: tests/procurement/sizing/
# test_moe_published.py, test_qwen3_235b_h100_as_sized_within_15_percent).
def test_qwen3_235b_nvidia_hopper_plan_can_be_stated():
    parse_workload_spec(QWEN3_235B_H100)


# --- 6b. Dense Hopper FP8 pretraining rows of the same tables, new batch sizes ------------------------------------
# [MBARCH] 26.04.01 LLAMA3_70B: "DGX-H100 | 64 | FP8 | 256 | 1 | 8192 | 0 | 4 | 8 | 1 | 5 | n/a | 1664 | 731" (GBS 256;
# x26b judged the 25.11 row at GBS 128). DP 2, GA 128.
LLAMA70_PRETRAIN_GBS256 = megatron_spec("llama-3-70b", 64, 8192, 4, 8, vp=5, global_batch=256)


@pytest.mark.django_db
def test_llama3_70b_fp8_gbs256_on_64_h100_within_15_percent(bundled_catalog):
    """Published 1,664 tokens/s/GPU; product 1,488 (-10.6%), 76.1 GiB (tight)."""
    row = candidate(LLAMA70_PRETRAIN_GBS256, H100)
    assert row["verdict"] in FEASIBLE
    assert tokens_per_gpu(row) == pytest.approx(1664, rel=0.15)


# [MBARCH] 26.06 LLAMA3.1_405B: "DGX-H100 | 1024 | FP8 | 1536 | 1 | 8192 | 8 | 8 | 2 | 8 | n/a | 326 | 822" ([MBCFG]
# llama31_workload_base_configs.py @63b08b397 LLAMA31_405B_PRETRAIN_CONFIG_H100_FP8_CS_V2: the V1 plan at GBS
# 1536). DP 8, GA 192; 126 layers + embedding + loss = 128 = PP 8 x VP 8 x 2 (the recipe's account_for_* flags,
# as x26b states them for the 25.11 GBS 512 row, 292).
LLAMA405_GBS1536 = megatron_spec("llama-3.1-405b", 1024, 8192, 8, 8, cp=2, vp=8, global_batch=1536)
LLAMA405_GBS1536["parallelism"] |= {"account_for_embedding": True, "account_for_loss": True}
# The recipe's TP communication overlap, stated with the spec field comm26 added: [MBCFG] llama31_405b_pretrain_config
# (src/megatron/bridge/recipes/llama/llama3.py @63b08b397) sets CommOverlapConfig(tp_comm_overlap=True), and
# llama31_405b_pretrain_config_h100 keeps it with userbuffers_fp8_h100_h16384_tp8_cp2_mbs1_seqlen8192.
LLAMA405_GBS1536["parallelism"]["tp_comm_overlap"] = True


# Was a strict xfail: "[MBARCH] 26.06 Llama 3.1 405B FP8 on 1,024 H100 (TP 8, PP 8, CP 2, VP 8, GBS 1536): 326
# tokens/s/GPU; product 250 (-23.3%), with 24.4% of the step in communication and a 0.46% bubble ... at TP 8 +
# CP 2 it keeps the TP all-reduce and the CP ring exposed (NeMo's H100 recipes overlap TP communication with the
# GEMMs)". Now 304.3 (-6.7%) (comm26: the recipe's tp_comm_overlap hides the TP collectives under the linears'
# GEMMs, 8.13 s -> 0.25 s exposed, and Transformer Engine's ring attention hides the CP ring under attention,
# 0.95 s -> 0.16 s; step 49.06 -> 40.38 s). The bubble already used m = GBS / (DP x MBS) = 192: 7 / (8 x 192).
@pytest.mark.django_db
def test_llama31_405b_fp8_gbs1536_on_1024_h100_within_15_percent(bundled_catalog):
    assert tokens_per_gpu(candidate(LLAMA405_GBS1536, H100)) == pytest.approx(326, rel=0.15)


# --- 7. torchao float8 on 8 MI300X (fp8_recipe: torchao off the H100 it was fitted on) -------------------------------
# [AOF8] AMD MI300x table: bf16 5,376.5, tensorwise float8 with float8 all-gather 6,166.0 median tokens/s (per GPU,
# torchtitan's tps), batch 1 x 8192, compile, FSDP2, per-op SAC ('selective' is the nearest the spec states).
# e26a: the spec states per-op SAC now, gradient_checkpointing selective_op (torchtitan's op-level policy: wk, wo
# and w3 run again in backward, +5.1 GFLOPs a token). Before: 'selective' (no recomputation).
def titan_8b(precision: str, **extra) -> dict:
    return (
        {
            "task": "pretrain",
            "model": {"preset": "llama-3.1-8b"},
            "precision": precision,
            "micro_batch_size": 1,
            "seq_len": 8192,
            "gradient_checkpointing": "selective_op",
            "parallelism": {"gpus": 8, "zero_stage": "fsdp"},
            "training_tokens": 1e10,
            "training_stack": "torchtitan",  # stack26: stated; sized at the unstated ceiling (no torchtitan fit rows)
        }
        | extra
    )


TITAN_BF16 = titan_8b("bf16")
TITAN_FP8 = titan_8b("fp8", fp8_recipe="torchao")


@pytest.mark.django_db
def test_torchao_float8_speedup_on_mi300x_within_15_percent(bundled_catalog):
    """Published 6,166.0 / 5,376.5 = 1.147x; product 1.250x (+9.0%): the H100's cast cost carried to the MI300X.
    With per-op SAC stated (selective_op, e26a): 8,502.5 / 6,769.7 = 1.256x (+9.5%)."""
    ratio = tokens_per_gpu(candidate(TITAN_FP8, MI300X)) / tokens_per_gpu(candidate(TITAN_BF16, MI300X))
    assert ratio == pytest.approx(6166.0 / 5376.5, rel=0.15)


@pytest.mark.django_db
def test_mi300x_over_h100_bf16_torchtitan_within_15_percent(bundled_catalog):
    """Same README, same recipe: MI300X 5,376.5 over H100 6,150 = 0.874; product 7,402 / 8,045 = 0.920 (+5.2%);
    with per-op SAC stated (selective_op, e26a) 6,769.7 / 7,358.3 = 0.920 (+5.2%)."""
    ratio = tokens_per_gpu(candidate(TITAN_BF16, MI300X)) / tokens_per_gpu(candidate(TITAN_BF16, H100))
    assert ratio == pytest.approx(5376.5 / 6150, rel=0.15)


@pytest.mark.django_db
@pytest.mark.xfail(
    strict=True,
    reason=RELABEL48_MI300X_TITAN
    + ACCEL48_MI300X_TITAN
    + "[AOF8] MI300X bf16 Llama 3 8B, 8 GPUs FSDP2, 1 x 8192, per-op SAC: 5,376.5 tokens/s/GPU; product 7,402 "
    "(+37.7%) with 'selective'. e26a stated the README's per-op SAC as selective_op (wk, wo and w3 recomputed, "
    "54.6 -> 59.7 GFLOPs a token): 6,769.7 (+25.9%). Not MI300X-specific: the same README's H100 row, 6,150, is "
    "7,358.3 in the product (+19.6%), and the MI300X / H100 ratio agrees (0.920 against 0.874). The run does "
    "5,376.5 x 59.7e9 = 3.21e14 FLOP/s, 0.246 of the MI300X's 1,307 TFLOPS (H100: 0.371 of 989) where the product "
    "does 0.309 (H100: 0.444, the width ceiling at d 4,096). The engine exposes no FSDP2 communication here. Not "
    "the recompute policy: the README's MI300X peak memory, 39.09, is the product's 38.6 GiB under selective_op "
    "(test below), where full recomputation, whose speed would match (5,551, +3.3%), keeps 24.9 GiB (audit aud26 "
    "rejects this: the same README's H100 row peaks at 47.65 against the same 38.59 GiB estimate, so reserved "
    "peaks do not pick the policy and full recomputation is not ruled out; the STATED per-op SAC rests on the "
    "README's words alone). The cause of "
    "the remaining +20-26% is not found (UNEXPLAINED, e26a). stack26: stated training_stack torchtitan, unchanged "
    "(6,769.7, +25.9%): the stack is real in the published rows (at d 4,096 this torchtitan H100 row needs 0.371 "
    "of the peak, llm-foundry's MPT-7B 0.439, NeMo 24.09's Llama 3.1 8B 0.560) but no torchtitan row outside the "
    "outside tests' cases exists to fit a torchtitan ceiling on, so torchtitan is sized as other. tt42: the "
    "H100 sibling is not evidence of a stack gap: that row ran on torchtitan's own 95.0 GiB, 500 W H100 (test "
    "below: pytorch/torchtitan 069bae286 logs a bf16 + compile llama3_8b.toml run on 8 H100s peaking at the "
    "README's 47.65 GiB as 50.16% of the card), which lies between the product's NVL (4,896) and SXM (7,358) "
    "estimates, so +19.6% against the SXM is the card, and the MI300X / H100 ratio test compares the MI300X "
    "with the SXM, not with the part the H100 row ran on. The MI300X's own +25.9% (6,769.7, unchanged) stands "
    "alone: UNEXPLAINED. accel43: now 7,146.8 (+32.9%; moe42's FLOP count, 56.57e9 a token, moved the H100 SXM "
    "to 7,768.3 and the MI300X with it at 0.92 x). Located and sized (EXPLAINED, not fixed): an H100 SXM "
    "torchtitan row at this recipe exists (AWS p5, 7,166; test below): the product is +8.4% there, so the "
    "rest is the ratio: the MI300X runs this recipe at 5,376.5 / 7,166 = 0.750 of an SXM, where "
    "measured_speed.csv's 0.92 comes from MLPerf Training v5.0's Llama 2 70B LoRA (AMD's tuned submission "
    "against NeMo on the H200): 1.084 x 0.92 / 0.750 = 1.329, the whole gap. Not fixed: a torchtitan-stack "
    "MI300X ratio would be fitted on this row alone (no second MI300X torchtitan or PyTorch-FSDP row found "
    "to hold out; AMD's ROCm training pages publish Megatron / Primus rows). A named, unsized cause: Kurzynski, Aga "
    "and Wu (arXiv:2512.08242, AMD co-author) profile Llama 3 8B FSDP on 8 MI300X and find clock throttling (DVFS) "
    "the largest loss against the peak, ahead of MFMA utilization, overlap and launch overheads; the excerpts give "
    "no throughput to size it. acc44: the ratio is now chosen by what its measurement matched (measured_speed.csv "
    "names the stack each row ran on; a stated training_stack takes its own row where one is published) and the "
    "answer says this 0.92 was measured on a vendor-tuned stack, not on the stated torchtitan. No MI300X "
    "torchtitan or PyTorch-FSDP row outside this case was found to set one (searched: AMD ROCm blogs and training "
    "docs, torchtitan's benchmarks folder, SemiAnalysis's Dec-2024 MI300X training article, whose excerpts give "
    "no figure, and an independent single-GPU MI300X-vs-H200 report, H200 1.32-1.40x on 8B BF16 training, whose "
    "stack and H200 / H100 step are not readable: 0.71-0.87 x H100), so it stays 7,146.8 (+32.9%). The spec "
    "states the cause (training_stack torchtitan); no published source outside the case sets its ratio.",
)
def test_mi300x_torchtitan_bf16_speed_within_15_percent(bundled_catalog):
    assert tokens_per_gpu(candidate(TITAN_BF16, MI300X)) == pytest.approx(5376.5, rel=0.15)


# accel43: an H100 SXM torchtitan row at the [AOF8] recipe. AWS Machine Learning Blog, "Efficient Pre-training of
# Llama 3-like model architectures using torchtitan on Amazon SageMaker" (2024-10, with Meta's PyTorch team;
# https://aws.amazon.com/blogs/machine-learning/efficient-pre-training-of-llama-3-like-model-architectures-using-
# torchtitan-on-amazon-sagemaker): Llama 3 8B on 4 x p5.48xlarge (32 x H100 SXM5 80 GB, EFA), torchtitan's default
# llama3_8b.toml plus "compile = true": 7,166 tokens per second (torchtitan's per-GPU wps; 6,475 without compile).
# The default (pytorch/torchtitan @0011fb905e9561a51af0f265e35d989f7448b1d8 train_configs/llama3_8b.toml):
# batch_size 1, seq_len 8192, data_parallel_shard_degree -1 (FSDP over all ranks), activation_checkpoint
# 'selective' with selective_ac_option 'op': TITAN_BF16 on 32 GPUs. The MI300X row of [AOF8] over this row: 0.750.
AWS_P5_TORCHTITAN_COMPILE = 7166


@pytest.mark.django_db
def test_torchtitan_8b_on_32_h100_sxm_at_the_aws_p5_rate(bundled_catalog):
    """Published 7,166 tokens/s/GPU on p5 (H100 SXM5); product 7,768.3 (+8.4%): the H100 side of the MI300X case
    holds on the SXM, so the MI300X's +32.9% beyond it is its 0.92 ratio (0.750 measured at this recipe)."""
    spec = TITAN_BF16 | {"parallelism": {"gpus": 32, "zero_stage": "fsdp"}}
    assert tokens_per_gpu(candidate(spec, H100)) == pytest.approx(AWS_P5_TORCHTITAN_COMPILE, rel=0.15)
    assert 5376.5 / AWS_P5_TORCHTITAN_COMPILE == pytest.approx(0.750, abs=0.001)


# tt42: which H100 the [AOF8] H100 row ran on. pytorch/torchtitan commit 069bae286 (PR #808, "add configuration
# for float8 with rowwise scaling", Vasiliy Kuznetsov, 2025-02-27): "pretraining LLaMa 3 8B on 8 H100s ...
# baseline (bf16 + compile) ... step: 20  loss:  8.4931  memory: 47.65GiB(50.16%)  tps: 5,760": the README's
# H100 bf16 peak to the hundredth (so the column is GiB, torchtitan's max_reserved), on a card of 47.65 / 0.5016
# = 95.0 GiB. Neither catalog H100 holds that (SXM5 80 GB: 79.65 GiB; NVL 94 GB: 93.58); torchtitan's own
# hosts do (other torchtitan float8 commits: 2271b6386 (#812) "81.77GiB(86.07%)", 473674acf (#833)
# "47.32GiB(49.81%)", both 95.0 GiB), the Grand Teton H100 "96GB HBM2e with 2.4 TB/sec" at "the default 500W
# power limit" of [TT2412] (x26f's header), a part no catalog row is. As x26f does for that part, the absolute rate is judged against the product's NVL and SXM.
TORCHTITAN_H100_CAPACITY_GIB = 47.65 / 0.5016


@pytest.mark.django_db
def test_torchao_h100_row_ran_on_torchtitans_95_gib_h100_between_the_nvl_and_sxm(bundled_catalog):
    """Published 6,150 tokens/s/GPU on the 95.0 GiB, 500 W part; product 4,896.2 on the H100 NVL (-20.4%) and
    7,358.3 on the SXM (+19.6%): the row lies inside the product's bracket (0.51 of the way from NVL to SXM)."""
    from procurement.sizing.gpus import gpu_by_slug

    assert TORCHTITAN_H100_CAPACITY_GIB == pytest.approx(95.0, abs=0.05)
    for slug in (H100, H100_NVL):
        assert abs(gpu_by_slug(slug).capacity_gib - TORCHTITAN_H100_CAPACITY_GIB) > 1.0
    nvl = tokens_per_gpu(candidate(TITAN_BF16, H100_NVL))
    sxm = tokens_per_gpu(candidate(TITAN_BF16, H100))
    assert nvl * 0.85 <= 6150 <= sxm * 1.15


@pytest.mark.django_db
def test_mi300x_torchtitan_peak_memory_is_per_op_sac_not_full_recomputation(bundled_catalog):
    """[AOF8] MI300X table, bf16 row: "Peak Memory (GB) 39.09" (torchtitan's peak reserved; GiB or GB, the check
    holds for both: 39.09 or 36.41 GiB). Product: 38.6 GiB under selective_op; 24.9 under full recomputation."""
    op_sac = candidate(TITAN_BF16, MI300X)["memory"]["total_per_gpu_gib"]
    full = candidate(TITAN_BF16 | {"gradient_checkpointing": "full"}, MI300X)["memory"]["total_per_gpu_gib"]
    for published_gib in (39.09, 39.09e9 / 2**30):
        assert op_sac == pytest.approx(published_gib, rel=0.10)
        assert full < published_gib * 0.75


# --- 8. The ranking a buyer reads first: Llama 3 70B SFT as NVIDIA ran it (case 4), 2e9 tokens ---------------------
@pytest.mark.django_db
def test_llama3_70b_sft_first_row_cost_by_hand_and_plan_kept(bundled_catalog):
    """By hand: the first row is Nebius gpu-b200-sxm_8gpu-160vcpu-1792gb on demand, 4 instances at 44.00 USD an
    hour for 5.264 h: 4 x 44 x 5.264 = 926.46 USD of compute (row: 926.51, hours rounded to 3 decimals), plus
    setup 176.00 (one hour of the four instances), storage 66.15 and a rerun allowance 185.30 (20% of compute),
    1,353.96 in all. It is what I would buy like for like: the stated TP 4 / PP 4 / VP 5 on 32 GPUs, on B200s at
    2.2x an H100's speed for 1.86x its hourly rate (the cheapest H100 row, Nebius at 23.60 an instance-hour, is
    1,479.77, ranked later as 'tight'). The published H100 rate gives 2e9 / (1,638 x 32) / 3,600 = 10.60 h;
    the product's H100 rows say 11.62 h (+9.6%)."""
    rows = ranked(LLAMA70_SFT, top=5)
    assert all(
        (
            r["gpus"],
            r["plan"]["tensor_parallel"],
            r["plan"]["pipeline_parallel"],
            r["plan"]["virtual_pipeline"],
        )
        == (32, 4, 4, 5)
        and not r["differs_from_spec"]
        for r in rows
    ), describe(rows)
    first = rows[0]
    compute = Decimal(first["effective_price_per_hour"]) * first["instances"] * Decimal(str(first["hours"]))
    assert Decimal(first["cost_breakdown"]["compute"]) == pytest.approx(compute, rel=Decimal("0.001"))
    parts = sum(Decimal(v) for k, v in first["cost_breakdown"].items() if k != "total")
    assert parts == Decimal(first["total_cost"]) == Decimal(first["cost_breakdown"]["total"])
    assert first["pricing_model"] == "on_demand" and first["wall_clock"]["p90_hours"] == first["hours"]
    h100 = [r for r in ranked(LLAMA70_SFT, top=40) if r["gpu"] == H100]
    assert h100 and h100[0]["hours"] == pytest.approx(2e9 / (1638 * 32) / 3600, rel=0.15), describe(h100)


@pytest.mark.django_db
def test_llama3_70b_sft_multi_instance_spot_rows_rank_after_every_other_row(bundled_catalog):
    """The 4-instance spot rows (e.g. Nebius H100 spot at 10.00 an instance-hour, 668.81 USD, half the first row)
    come after all 81 on-demand rows, each priced above its list rate (reclaims of any of the 4 instances), as the
    stop says; their P90 wall clock is shown beside the compute hours."""
    rows = ranked(LLAMA70_SFT, top=400)
    spot = [i for i, r in enumerate(rows) if r["pricing_model"] == "spot" and r["instances"] > 1]
    other = [i for i, r in enumerate(rows) if r["pricing_model"] != "spot"]
    assert spot and other and min(spot) > max(other)
    for i in spot:
        row = rows[i]
        assert Decimal(row["effective_price_per_hour"]) >= Decimal(row["price_per_hour"])
        assert row["wall_clock"]["p90_hours"] >= row["wall_clock"]["compute_hours"]
