"""MoE training speed against published runs, and fp8 saved activations (issue 26, class 7; branch moe26).

MoE layers spend time beside their FLOPs: routing, permutation, the activation, the combine, and grouped
GEMMs of a few hundred rows a local expert (mfu.moe_efficiency_factor). The engine charges
assumptions.MOE_ROUTED_BYTES per routed element (token x top-k x hidden) at the card's bandwidth and
assumptions.MOE_LAYER_FIXED_SECONDS per MoE layer and micro-batch whatever the card (moe27), both fitted on
four published runs that are NOT the outside tests' cases; two more published runs are kept as xfails with
their causes. tests/procurement/outside checks the others. The experts' all-to-alls can be stated as
overlapped with computation (parallelism.expert_overlap, assumptions.EXPERT_OVERLAP; moe27). 8-bit training
on Hopper also pays assumptions.MOE_HOPPER_FP8_ROUTED_COPY_SECONDS per routed token copy (hfp826; moe26's
stop 38 charged 1.1 ms per local expert, fitted on a mistyped row), fitted on NVIDIA's Qwen3-235B-A22B H100
rows, statable since EP may span the TP ranks (sizing/expert_layout.py); the Qwen3-30B-A3B H100 rows check it.

Sources:
- [MB2511] NVIDIA-NeMo/Megatron-Bridge docs/performance-summary.md @00b7660be0254ac6f95f44164ddd0c3e9cc798ed
  ("25.11 NeMo Container", DGX-H100, DGX-B200 and DGX-GB200 tables; forced-balanced routing, dropless).
- [MCORE] NVIDIA/Megatron-LM megatron/core/transformer/moe/README.md @022bcb5afe888664d3fb61adacea6e6c887a97f8
  ("468 TFLOPS for Mixtral 8X7B bf16 training", MCore v0.9; reference mapping for Mixtral 8x7B: 64 H100,
  BF16, seq 4,096, TP 1, EP 8, PP 4, VP 8, MBS 1, GBS 256).
- [MB2602] the same document @df0289c180dd20ff26933455c7a0a11084f6a36f ("26.02 NeMo Container" tables).
- [DSV2] DeepSeek-AI, "DeepSeek-V2", arXiv:2405.04434: sec. 3.2.3, 172.8K H800 GPU-hours per trillion
  tokens; sec. 3.1.3, 16-way zero-bubble pipeline, 8-way expert parallelism, ZeRO-1; 60 layers, hidden
  5,120, 160 routed experts of 1,536 + 2 shared, top-6, first layer dense; batch 9,216 x 4,096.
"""

import dataclasses
import statistics

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from procurement.sizing import load_bundled_gpus, parse_workload_spec, size_workload
from procurement.sizing.assumptions import (
    FP8_SAVED_LINEAR_INPUT,
    MOE_HOPPER_FP8_ROUTED_COPY_SECONDS,
    MOE_LAYER_FIXED_SECONDS,
    MOE_LOCAL_EXPERT_SECONDS,
    MOE_ROUTED_BYTES,
)
from procurement.sizing.bytes_model import state_bytes
from procurement.sizing.mfu import (
    default_mfu,
    hopper_fp8_expert_seconds,
    moe_efficiency_factor,
    moe_fixed_seconds,
)
from procurement.sizing.throughput import training_flops_per_token

GPUS = {gpu.slug: gpu for gpu in load_bundled_gpus()}
H100, B200, GB200 = GPUS["h100-sxm5-80gb"], GPUS["b200"], GPUS["gb200"]

# GPT-OSS 120B (openai/gpt-oss-120b config.json: 36 layers, hidden 2,880, 64 heads of 64, 8 KV heads,
# 128 experts of 2,880, top-4, vocabulary 201,088; 116.8B parameters, 5.1B active).
# fix43m: stated with its 128-token sliding window on 18 of the 36 layers, as run (docs/workload-spec.md
# `sliding_window`: "GPT-OSS: 128 on 18 of 36 layers"; aud43m, test_outside_audit_stop43m.py). The FLOPs a token fall
# 34.22e9 -> 32.52e9; the H100 fit row moves 5,587.5 -> 5,778.2 tokens/s/GPU (-0.8% -> +2.6% of 5,630), still inside.
# The MoE constants (assumptions.py, moe43's refit) were fitted on the row without the window and are NOT refitted
# here (stop 43 out of time): their fit saw this row 3.4 points off its as-run value.
GPT_OSS_120B_FULL_ATTENTION = {
    "name": "gpt-oss-120b",
    "params": 116.8e9,
    "params_active": 5.1e9,
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
}
GPT_OSS_120B = GPT_OSS_120B_FULL_ATTENTION | {"sliding_window": 128, "sliding_window_layers": 18}
# Qwen3-235B-A22B (Qwen/Qwen3-235B-A22B config.json: 94 layers, hidden 4,096, 64 heads of 128, 4 KV heads,
# 128 experts of 1,536, top-8, vocabulary 151,936). moe43: Qwen's 22.2B active counts the input embedding
# table (151,936 x 4,096 = 0.622e9), which params.active_params leaves out (a lookup): stated 22.2e9 - 0.622e9.
QWEN3_235B = {
    "name": "qwen3-235b-a22b",
    "params": 235.1e9,
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
# moe43: stated with its multi-head latent attention (deepseek-ai/DeepSeek-V2 config.json on Hugging Face,
# huggingface.co/deepseek-ai/DeepSeek-V2/blob/main/config.json: q_lora_rank 1,536, kv_lora_rank 512, qk_nope_head_dim
# 128, qk_rope_head_dim 64, v_head_dim 128). fix43m: the GitHub repository deepseek-ai/DeepSeek-V2 holds no
# config.json (README, report and figures only; find_files), and the search-index file 1252603174 moe43 cited is a
# third-party parameter calculator quoting the config inline (at its character 19,867), not DeepSeek's file; the
# values agree with it and with the same 236B shape in deepseek-ai's inference configs as quoted elsewhere.
# no longer as plain attention of head_dim 128: the attention core is heads x (192 + 128) / 2 a token and
# position, 25% more than 128 x 128. DeepSeek's 21B activated leaves out the input embedding lookup, as
# params.active_params does.
DEEPSEEK_V2 = {
    "name": "deepseek-v2",
    "params": 236e9,
    "params_active": 21e9,
    "num_layers": 60,
    "hidden_size": 5120,
    "num_attention_heads": 128,
    "num_key_value_heads": 128,
    "q_lora_rank": 1536,
    "kv_lora_rank": 512,
    "qk_nope_head_dim": 128,
    "qk_rope_head_dim": 64,
    "v_head_dim": 128,
    "intermediate_size": 12288,
    "moe_intermediate_size": 1536,
    "num_experts": 160,
    "experts_per_token": 6,
    "shared_experts": 2,
    "dense_layers": 1,
    "vocab_size": 102400,
}


def megatron(
    model,
    gpus,
    tp,
    pp,
    *,
    global_batch,
    ep,
    vp=1,
    micro_batch=1,
    precision="bf16",
    seq=4096,
    overlap=None,
    dispatch=None,
    sync=None,
):
    """A Megatron run as published: ZeRO-1, no recomputation ("selective": flash attention).

    fix47m (aud47m item 5): Megatron-Core syncs an accumulated step's DDP gradients in its last micro-batch (e26b;
    x26f states parallelism.gradient_sync last_micro_batch for the same plans), but this helper does NOT state it by
    default: the MoE cost constants (moe_routed_bytes_per_element, moe_layer_fixed_seconds, moe_local_expert_seconds)
    and the fp8 joint fit (test_outside_refits_int42.py, ten rows) were fitted on rows built here with the default
    overlapped sync, and stating it moves two of those fit rows (Qwen3-235B B200 3,301.5 -> 3,153.2, +1.0% -> -3.5%;
    DeepSeek-V2 -0.6%, a run of DeepSeek's own HAI-LLM stack, not Megatron's) and the 26.02 DeepSeek-V3 B200 row
    (-7.5% -> -8.6%): a refit of both families, not done here. Every case here still passes either way; the
    GPT-OSS B200 25.11 row (xfail) reads 14,998.9 -> 11,604.1 (+82.6% -> +41.3%). sync states it for one case."""
    dp = gpus // (tp * pp)
    parallelism = {"gpus": gpus, "zero_stage": 1, "tensor_parallel": tp, "pipeline_parallel": pp}
    parallelism |= {"expert_parallel": ep} | ({"virtual_pipeline": vp} if vp > 1 else {})
    parallelism |= {"expert_overlap": overlap} if overlap else {}
    parallelism |= {"expert_dispatch": dispatch} if dispatch else {}
    parallelism |= {"gradient_sync": sync} if sync else {}
    return parse_workload_spec(
        {
            "name": "moe",
            "task": "pretrain",
            "model": {"preset": model} if isinstance(model, str) else dict(model),
            "precision": precision,
            "micro_batch_size": micro_batch,
            "seq_len": seq,
            "gradient_checkpointing": "selective",
            "parallelism": parallelism,
            "gradient_accumulation_steps": global_batch // (dp * micro_batch),
            "training_tokens": 1e10,
        }
    )


def candidate(spec, gpu):
    report = size_workload(spec, [gpu])
    return next(c for c in report["candidates"] if c["gpus"] == spec.parallelism.gpus)


def tokens_per_gpu(spec, gpu) -> float:
    row = candidate(spec, gpu)
    return row["throughput"]["training_tokens_per_second"] / row["gpus"]


# [DSV2]: 1e12 / (172,800 h x 3,600) = 1,607.5 tokens/s per H800 (H100 compute). 60 layers cannot split 16
# ways evenly in the spec: PP 15 on 960 GPUs (DP 64, 144 micro-batches) stands in; its 1F1B bubble
# 14 / 144 = 9.7% is not in DeepSeek's zero-bubble schedule, so the check takes it out.
DSV2 = megatron(DEEPSEEK_V2, 960, 1, 15, ep=8, global_batch=9216)
# [MB2511] DGX-H100 "GPT OSS 120B | 64 | BF16 | 512 | 4 | 4096 | 0 | 1 | 4 | 1 | 1 | 8 | ... | 5630 | 153".
GPT_OSS_H100 = megatron(GPT_OSS_120B, 64, 1, 4, ep=8, micro_batch=4, global_batch=512)
# [MB2511] DGX-B200 "GPT OSS 120B | 64 | BF16 | 512 | 4 | 4096 | 0 | 1 | 1 | 1 | 1 | 8 | 2 | 8213 | 223".
GPT_OSS_B200 = megatron(GPT_OSS_120B, 64, 1, 1, ep=8, micro_batch=4, global_batch=512)
# [MB2511] DGX-B200 "Qwen3_235B_a22B | 64 | FP8-MX | 1024 | 1 | 4096 | 0 | 1 | 8 | 1 | 2 | 8 | 128 | 3269 |
# 484". 94 layers do not split 8 x 2 evenly in the spec: PP 2 (bubble 1 / 32 = 3.1%) stands in for PP 8 x
# VP 2 (7 / 256 = 2.7%).
QWEN3_235B_B200 = megatron(QWEN3_235B, 64, 1, 2, ep=8, global_batch=1024, precision="fp8")
# [MB2511] DGX-GB200 "Qwen3_30B_a3B | 8 | FP8-MX | 512 | 4 | 4096 | 0 | 1 | 1 | 1 | 1 | 8 | 16 | 23766 | 547":
# the same model, card generation and EP as the DGX-B200 outside case (MBS 1: 9,299), at 4x the micro-batch.
# b200x: stated with the recipe's HybridEP dispatcher (NVIDIA-NeMo/Megatron-Bridge @717c62de401bce92e913fd1c66c03f4e17bff265
# (v0.2.0, the 25.11 release) scripts/performance/configs/qwen3/workload_base_configs.py lines 193-200,
# QWEN3_30B_A3B_GB200_FP8_MX_BASE_CONFIG: moe_flex_dispatcher_backend "hybridep"; the 26.02 release, v0.3.0, the same).
QWEN3_30B_GB200 = megatron(
    "qwen3-30b-a3b", 8, 1, 1, ep=8, micro_batch=4, global_batch=512, precision="fp8", dispatch="hybridep"
)
# [MCORE] Mixtral 8x7B, 468 TFLOPS a GPU (Megatron's FLOP count; compared in the engine's own FLOPs).
MIXTRAL_H100 = megatron("mixtral-8x7b", 64, 1, 4, vp=8, ep=8, global_batch=256)


def _gaps() -> dict[str, float]:
    dsv2 = tokens_per_gpu(DSV2, H100) * (1 + 14 / 144) / (1e12 / 172_800 / 3600) - 1
    mixtral = candidate(MIXTRAL_H100, H100)["throughput"]
    mixtral_tflops = mixtral["training_tokens_per_second"] / 64 * mixtral["flops_per_token"]
    return {
        "deepseek-v2 h800": dsv2,
        "gpt-oss h100": tokens_per_gpu(GPT_OSS_H100, H100) / 5630 - 1,
        "qwen3-235b b200": tokens_per_gpu(QWEN3_235B_B200, B200) / 3269 - 1,
        "qwen3-30b gb200": tokens_per_gpu(QWEN3_30B_GB200, GB200) / 23766 - 1,
        "gpt-oss b200": tokens_per_gpu(GPT_OSS_B200, B200) / 8213 - 1,
        "mixtral h100": mixtral_tflops / 468e12 - 1,
    }


def test_fine_grained_fit_points_are_within_15_percent():
    # moe27 (bytes 125, 6 ms a layer and micro-batch): DeepSeek-V2 +7.3%, GPT-OSS H100 +6.7%, Qwen3-235B
    # B200 -0.9%, Qwen3-30B GB200 -2.8% (moe26's 380 bytes alone: -1.4%, -7.4%, +14.1%, -32.7%). moebf26 (2 ms a
    # layer + 0.25 ms a local expert): DeepSeek-V2 +4.7% (20 local experts, 7 ms), the other three unchanged (16)
    # b200x: the GB200 pays the card-independent seconds whole (it had divided them by its 2.2 measured ratio) and
    # its recipe's HybridEP pays 0.55 of them (moe_hybridep_fixed_share, fitted on this row and its 26.02 rerun):
    # Qwen3-30B GB200 -0.9% -> +4.5%; DeepSeek-V2 +6.0%, GPT-OSS H100 +6.7%, Qwen3-235B B200 +2.2% unchanged
    # moe43: DeepSeek-V2 stated with its MLA fields, the stated active counts read without the input lookup, and the
    # bytes and card-independent seconds refitted (217.5 B, 1.64 + 0.205 ms), then the fp8 joint fit: DeepSeek-V2
    # -1.9%, GPT-OSS H100 -0.8%, Qwen3-235B B200 +1.0%, Qwen3-30B GB200 +1.8%
    # moe45: the GB200 priced from the B200 at NVIDIA's same-plan dense 1.025 (was the H100 over 2.2): Qwen3-30B
    # GB200 +1.8% -> +9.6% at moe_hybridep_fixed_share 0.27, +4.5% at its refit 0.40; the other three unchanged
    gaps = _gaps()
    for name in ("deepseek-v2 h800", "gpt-oss h100", "qwen3-235b b200", "qwen3-30b gb200"):
        assert abs(gaps[name]) <= 0.10, gaps
    # the two left out (xfails below) do not pull the median error over the six points out of 15%
    assert statistics.median(abs(g) for g in gaps.values()) <= 0.15, gaps


# moe26b: +83.1% (was +97.3%). With EP 8 filling each node the routed experts' gradients (28.7 GB a GPU in bf16)
# all-reduce among the one GPU a node that holds the same experts, over the fabric whole (throughput.
# data_parallel_groups; 1.28 s at the 400 Gb/s a GPU of a DGX-B200): at 2 micro-batches a step they no longer hide
# entirely. The engine's compute alone (1.89 s) is under half the published 3.99 s step; the same model and card
# in 26.02 at EP 64 (test_gpt_oss_120b_on_b200_ep64_2602) is within 2%.
@pytest.mark.xfail(
    strict=True,
    reason="EXPLAINED (moet47): the row's EP column is not the plan that ran. (a) The recipe at the table's own "
    "commit (NVIDIA-NeMo/Megatron-Bridge 00b7660be0254ac6f95f44164ddd0c3e9cc798ed scripts/performance/configs/gpt_oss/"
    "gpt_oss_workload_base_configs.py lines 50-55) and at the 25.11 release tag v0.2.0 (commit 7af9601c9, "
    "workload_base_configs.py lines 50-55) sets the B200 BF16 GPT-OSS 120B run to expert_model_parallel_size=64, "
    "MBS 4, GBS 512 (the row's MBS and GBS). fix47m, history corrected (aud47m): before e59a57360 (2025-11-20, "
    "'fix GPT-OSS perf scripts', workload_base_configs.py) the B200 BF16 config was the base, EP 8, MBS 8, CUDA "
    "graphs full_iteration; e59a57360 set EP 64, MBS 4; the printed MBS 4 rules the earlier EP 8 config out. The "
    "next B200 EP 8 recipe is 7260d6214 (2026-03-23, GPT_OSS_120B_PRETRAIN_CONFIG_B200_BF16_V2, GBS 1280). (b) The published rows put 8,213 at the EP 64 rate: the "
    "26.02 DGX-B200 EP 64 row (8,047, same model, card, MBS 4, seq 4,096) is 2.0% under it, the three later EP 8 rows "
    "(docs/performance-summary-archive.md @067f987df lines 434 / 337 / 237: 26.02.01 13,722, 26.04 13,045, 26.04.01 "
    "13,568) are 1.59-1.67x it, while the H100 EP 8 rows moved only +3-6% over the same releases (5,630 -> "
    "5,810-5,993). Stated as the recipe ran it (EP 64, GBS 512) the product gives 8,032.6 (-2.2%; "
    "test_outside_moe_training_stop47.py). (c) The spec already states EP 64; nothing to add. The case keeps the "
    "table's printed plan (EP 8), as the GB200 25.11 DeepSeek-V3 / Qwen3-235B cases keep theirs (fix47m, "
    "test_outside_audit_stop43m.py: their dispatcher is inferred, so they are not stated as run either; the "
    "as-run readings are side tests). Printed, the product gives 14,998.9 (+82.6%) with this helper's overlapped "
    "gradient sync, 11,604.1 (+41.3%) with gradient_sync last_micro_batch stated as Megatron-Core runs it "
    "(megatron() docstring; test_the_2511_b200_gpt_oss_printed_ep8_row_with_megatrons_gradient_sync): outside "
    "either way. History: "
    "GPT-OSS 120B BF16 on 64 B200 (EP 8, MBS 4, GBS 512: 2 micro-batches; Megatron-Bridge 25.11): engine "
    "+83% over NVIDIA's 8,213 tokens/s/GPU (moe26b; was +97%). The engine's compute alone is 1.89 s of the "
    "published 3.99 s step; its exposed communication 0.29 s (the experts' gradients over the fabric). The same "
    "model on 64 H100 at EP 8 (+7%) and on 64 B200 at EP 64 in 26.02 (+1.4%) are within tolerance: nothing in the "
    "25.11 B200 row's stated plan says why it ran at half the engine's pace (not fitted; candidates: gradients "
    "reduced in fp32, and Megatron's gradient overlap limited to the last micro-batch's backward)",
)
def test_gpt_oss_on_b200_within_15_percent():
    assert abs(_gaps()["gpt-oss b200"]) <= 0.15


# [MB2602] DGX-B200 "GPT OSS 120B | 64 | BF16 | 1280 | 4 | 4096 | 0 | 1 | 1 | 1 | n/a | 64 | 5 | 8047": EP 64 over the 8
# nodes, a check (not fitted) on the size report's inter-node fabric: 400 Gb/s a GPU on a DGX-B200 (assumptions.
# NETWORK_BANDWIDTH_HOPPER) gives +1.4%; the 200 Gb/s used before gave -36.3% (11.9 s of all-to-alls a step).
GPT_OSS_B200_EP64 = megatron(GPT_OSS_120B, 64, 1, 1, ep=64, micro_batch=4, global_batch=1280)


def test_gpt_oss_120b_on_b200_ep64_2602():
    assert tokens_per_gpu(GPT_OSS_B200_EP64, B200) == pytest.approx(8047, rel=0.15)


# moe44: the Mixtral 8x7B point ([MCORE] 468 TFLOPS on 64 H100, -30.0%) had a strict xfail here too; it was the same
# published point as tests/procurement/outside/test_outside_recommendations_x26d.py::
# test_mixtral_mcore_speed_within_15_percent (outside audit expl44, flag 7: a duplicate inflating the evidence). That one
# is kept: it cites the README at a commit (NVIDIA/Megatron-LM @b97184db), states the README's mapping row (TP 1, EP 8,
# PP 4, VP 8, MBS 1, GBS 256, all-to-all, dropless) and the Megatron stack, and counts the FLOPs by hand. This one is
# deleted; the point stays in _gaps() for the median above.


def test_qwen3_30b_factor_by_hand():
    # Qwen3-30B-A3B FP8 on an H100: 48 MoE layers x top-8 x 2,048 = 786,432 routed elements a token;
    # x 125 B x 0.73 (fp826: moe_routed_bytes_fp8_share, fp8 training) / 3,350 GB/s = 21.4 us; plus 48 layers x
    # 6 ms / (4,096 x 2 tokens a micro-batch) = 35.2 us (moebf26: 2 ms a layer + 16 local experts x 0.25 ms);
    # plus (hfp826, refitted by fp826) Hopper FP8's 48 layers x top-8 routed copies x 220 ns = 84.5 us.
    # FLOPs a token (6N + causal attention at 4,096) at the dense efficiency: the fp8 linears' 0.425 of 1,979
    # TFLOPS over the bf16 attention core and output layer's time (fp826): attention 3 x 4 x 2,048 x 4,096 x 48
    # = 4.832e9 and head 6 x 151,936 x 2,048 = 1.867e9 of 2.495e10 FLOPs a token (26.8%) at half the rate, 1.2685.
    # moe42: the input embedding is a lookup (2.495e10 - 1.867e9 = 2.308e10 FLOPs a token: 29.0%, 1.2902) and the
    # constants refitted: 205 B x 0.73 = 35.1 us, 48 x (1.8 + 16 x 0.225 = 5.4 ms) / 8,192 = 31.6 us, 48 x 8 x
    # 162.5 ns = 62.4 us. int42: mfu_fp8_linears_hopper 0.425 -> 0.42 and moe_routed_bytes_fp8_share 0.73 -> 0.76,
    # refitted jointly on their ten rows after the count fix: 205 B x 0.76 = 36.6 us. moe43 (the MoE constants refitted
    # on their four rows, then the fp8 share on its ten): 217.5 B x 0.75 = 38.3 us, 48 x (1.64 + 16 x 0.205 = 4.92
    # ms) / 8,192 = 28.8 us.
    spec = megatron("qwen3-30b-a3b", 16, 1, 2, vp=24, ep=8, micro_batch=2, global_batch=512, precision="fp8")
    overhead = 48 * 8 * 2048 * MOE_ROUTED_BYTES.value * 0.75 / (H100.memory_bandwidth_gbps * 1e9)
    overhead += 48 * (MOE_LAYER_FIXED_SECONDS.value + 16 * MOE_LOCAL_EXPERT_SECONDS.value) / (4096 * 2)
    overhead += 48 * (4096 * 2 * 8) * MOE_HOPPER_FP8_ROUTED_COPY_SECONDS.value / (4096 * 2)
    dense = 0.42 / 1.2902
    flops = training_flops_per_token(spec) / (1979e12 * dense)
    assert overhead == pytest.approx(38.3e-6 + 28.8e-6 + 62.4e-6, rel=0.01)
    assert moe_efficiency_factor(spec, H100, dense) == pytest.approx(flops / (flops + overhead), rel=1e-6)
    assert default_mfu(spec, H100) == pytest.approx(dense * flops / (flops + overhead), rel=1e-4)


def test_b200_gains_less_over_the_h100_on_moe_than_its_bandwidth():
    # The fixed cost per layer and micro-batch does not shrink on the faster card: the B200/H100 ratio of the
    # MoE cost a token stays under their bandwidth ratio 8,000 / 3,350 = 2.39 (the terms both cards pay;
    # Hopper FP8's cost per routed copy, which only the H100 pays, is left out here and checked in
    # test_hopper_fp8_pays_per_routed_copy)
    spec = megatron("qwen3-30b-a3b", 8, 1, 1, ep=8, global_batch=512, precision="fp8")

    def overhead(gpu):  # the MoE seconds a token the factor implies beside the FLOPs' seconds
        flop_s = training_flops_per_token(spec) / (gpu.dense_tflops("fp8") * 1e12 * 0.40)
        return flop_s / moe_efficiency_factor(spec, gpu, 0.40, hopper_experts=False) - flop_s

    assert 1.0 < overhead(H100) / overhead(B200) < 8000 / 3350


# --- Hopper FP8: a cost per routed token copy (hfp826; was moe26's 1.1 ms per local expert) ------------------
# [MB2511] 25.11 DGX-H100 "Qwen3_30B_a3B | 16 | FP8-CS | 512 | 2 | 4096 | 0 | 1 | 2 | 1 | 24 | 8 | 32 | 5275";
# 26.02 DGX-H100 "Qwen3_30B_a3B | 16 | FP8 | 1024 | 1 | 4096 | 0 | 1 | 2 | 1 | 12 | 8 | 5113 | 118" (the table as
# merged, c0b9a0003 "26.02 perf summary (#2492)", and NVIDIA-NeMo/Megatron-Bridge docs/performance-summary-
# archive.md @067f987df03b8355b03192d88d70f1709fedf51a). A GPU's time a token: 1 / 5,275 = 189.6 us at MBS 2 and
# 1 / 5,113 = 195.6 us at MBS 1, flat where a cost per micro-batch would halve it at MBS 2.
QWEN3_30B_H100_2511 = megatron(
    "qwen3-30b-a3b", 16, 1, 2, vp=24, ep=8, micro_batch=2, global_batch=512, precision="fp8"
)
QWEN3_30B_H100_2602 = megatron(
    "qwen3-30b-a3b", 16, 1, 2, vp=12, ep=8, micro_batch=1, global_batch=1024, precision="fp8"
)


def test_hopper_fp8_rows_are_within_15_percent():
    # Checks, not fit points (hfp826): 5,310 (+0.7%) and 4,476 (-12.5%); fp826 (bf16 attention core and output
    # layer, joint refit): 5,148 (-2.4%) and 4,362 (-14.7%), the latter just inside. The 26.02 row was 2,557 here, the
    # draft of that table (@df0289c180dd20ff26933455c7a0a11084f6a36f, 2026-02-23) whose own 118 TFLOP/s column
    # gives about 5,130; moe26's 1.1 ms per local expert was fitted on it (2,833 there, -44.6% of 5,113).
    assert tokens_per_gpu(QWEN3_30B_H100_2511, H100) == pytest.approx(5275, rel=0.15)
    assert tokens_per_gpu(QWEN3_30B_H100_2602, H100) == pytest.approx(5113, rel=0.15)


def test_hopper_fp8_pays_per_routed_copy():
    # MBS 2 x 4,096 tokens x top-8 = 65,536 routed copies x 162.5 ns (moe42 refit; 220 ns fp826, 200 before) = 10.6 ms
    # a MoE layer and micro-batch, on the H100 in fp8 only; BF16 (GPT-OSS 120B on 64 H100 stays within 7% without
    # it) and Blackwell pay none
    assert hopper_fp8_expert_seconds(QWEN3_30B_H100_2511, H100) == pytest.approx(2 * 4096 * 8 * 162.5e-9)
    assert hopper_fp8_expert_seconds(QWEN3_30B_H100_2511, B200) == 0.0
    assert hopper_fp8_expert_seconds(dataclasses.replace(QWEN3_30B_H100_2511, precision="bf16"), H100) == 0.0
    assert hopper_fp8_expert_seconds(GPT_OSS_H100, H100) == 0.0
    dense = megatron("llama-3-70b", 64, 4, 8, vp=5, ep=1, global_batch=128, precision="fp8", seq=8192)
    assert hopper_fp8_expert_seconds(dense, H100) == 0.0


def _dispatched(spec, dispatch: str):
    return dataclasses.replace(
        spec, parallelism=dataclasses.replace(spec.parallelism, expert_dispatch=dispatch)
    )


def test_hybridep_drops_the_hopper_fp8_cost_and_part_of_the_fixed_cost():
    # moe26c: HybridEP permutes and pads inside its dispatch kernel (assumptions.MOE_HOPPER_FP8_ROUTED_COPY_SECONDS):
    # no Hopper FP8 cost per routed copy under it, the 10.6 ms a MoE layer and micro-batch under DeepEP (moe42)
    deepep = _dispatched(QWEN3_30B_H100_2511, "deepep")
    hybridep = _dispatched(QWEN3_30B_H100_2511, "hybridep")
    assert hopper_fp8_expert_seconds(deepep, H100) == pytest.approx(2 * 4096 * 8 * 162.5e-9)
    assert hopper_fp8_expert_seconds(hybridep, H100) == 0.0
    assert tokens_per_gpu(hybridep, H100) > tokens_per_gpu(deepep, H100)
    # b200x (was "where that cost is not charged HybridEP sizes as DeepEP"): the fused dispatch also pays
    # moe_hybridep_fixed_share (0.55; moe42: 0.27; moe45: 0.40, refitted on its two GB200 rows once the GB200 is
    # priced from the B200) of the 6 ms (moe42: 5.4 ms; moe43: 4.92 ms) a layer and micro-batch, on every card and
    # precision
    assert moe_fixed_seconds(hybridep) == pytest.approx(0.40 * moe_fixed_seconds(deepep))
    assert moe_fixed_seconds(deepep) == pytest.approx(1.64e-3 + 16 * 0.205e-3)
    assert tokens_per_gpu(hybridep, B200) > tokens_per_gpu(deepep, B200)
    bf16 = dataclasses.replace(QWEN3_30B_H100_2511, precision="bf16")
    assert tokens_per_gpu(_dispatched(bf16, "hybridep"), H100) > tokens_per_gpu(
        _dispatched(bf16, "deepep"), H100
    )


@settings(max_examples=20, deadline=None)
@given(micro_batch=st.integers(min_value=1, max_value=8), ep=st.sampled_from([2, 4, 8, 16]))
def test_hopper_fp8_cost_a_token_follows_the_tokens_not_the_micro_batches(micro_batch, ep):
    # the cost a token is 48 layers x top-8 x 220 ns = 84.5 us whatever the micro-batch and the local experts
    spec = megatron(
        "qwen3-30b-a3b", 16, 1, 1, ep=ep, micro_batch=micro_batch, global_batch=960, precision="fp8"
    )
    per_token = 48 * hopper_fp8_expert_seconds(spec, H100) / (4096 * micro_batch)
    assert per_token == pytest.approx(48 * 8 * MOE_HOPPER_FP8_ROUTED_COPY_SECONDS.value)


# The fit (assumptions.MOE_HOPPER_FP8_ROUTED_COPY_SECONDS): NVIDIA's Qwen3-235B-A22B FP8 rows on 256 H100
# ([MBARCH] above @067f987d: 25.11 "DGX-H100 | 256 | FP8-CS | 2048 | 1 | 4096 | 0 | 2 | 8 | 1 | 4 | 32 | ... | 1575"
# and 26.02 "... | 8192 | 1 | 4096 | 0 | 2 | 8 | 1 | 4 | 32 | 1633"), the recipe's plan (Megatron-Bridge v0.3.0
# scripts/performance/configs/qwen/qwen3_workload_base_configs.py QWEN3_235B_A22B_PRETRAIN_CONFIG_H100_FP8_CS_V1:
# TP 2, PP 8, VP 4, EP 32, expert TP 1, moe_a2a_overlap; V2: GBS 8192; the alltoall dispatcher), taken as compute:
# the measured steps (20.8 s, 80.3 s) leave no room for the all-to-all the engine exposes. The model: QWEN3_235B above.


def qwen3_235b_h100(global_batch: int):
    return parse_workload_spec(
        {
            "task": "pretrain",
            "model": QWEN3_235B,
            "precision": "fp8",
            "micro_batch_size": 1,
            "seq_len": 4096,
            "gradient_checkpointing": "selective",
            "parallelism": {
                "gpus": 256,
                "zero_stage": 1,
                "tensor_parallel": 2,
                "pipeline_parallel": 8,
                "virtual_pipeline": 4,
                "expert_parallel": 32,
                "expert_overlap": "partial",
                "account_for_embedding": True,
                "account_for_loss": True,
            },
            "gradient_accumulation_steps": global_batch // 16,
            "training_tokens": 1e10,
        }
    )


def _compute_tokens_per_gpu(spec) -> float:
    """Tokens/s/GPU with the exposed all-to-all taken out of the step."""
    throughput = candidate(spec, H100)["throughput"]
    step = throughput["step_seconds"] - throughput["expert_parallel_exposed_seconds"]
    return throughput["training_tokens_per_second"] * throughput["step_seconds"] / step / 256


@pytest.mark.parametrize("global_batch, published", [(2048, 1575), (8192, 1633)])
def test_qwen3_235b_h100_compute_matches_the_fit_rows(global_batch, published):
    # hfp826: 1,590 (+0.9%) and 1,606 (-1.7%); fp826 (refitted on these two with the bf16 split): +1.0%, -1.6%; 2,197 (+39.5%) and 2,218 (+35.8%) without the Hopper term
    assert _compute_tokens_per_gpu(qwen3_235b_h100(global_batch)) == pytest.approx(published, rel=0.05)


# Was a strict xfail: "1,048 tokens/s/GPU against 1,633 (-35.8%): the EP 32 all-to-alls cost 121 s a step at the
# engine's fabric rate, 43 s of it exposed". Now 1,587 (-2.8%; integration of hfp826 and moe26b: the H100 fabric is
# 400 Gb/s a GPU, assumptions.NETWORK_BANDWIDTH_HOPPER, so the all-to-alls take 60.6 s and 0.95 s of them stay
# exposed; step 82.6 s against the 80.3 s NVIDIA measured). Not out-of-sample: this row is one of the two the
# Hopper FP8 cost was fitted on (as compute alone), so it checks that the fit and the fabric agree.
def test_qwen3_235b_h100_as_sized_within_15_percent():
    assert tokens_per_gpu(qwen3_235b_h100(8192), H100) == pytest.approx(1633, rel=0.15)


@settings(max_examples=20, deadline=None)
@given(ep=st.sampled_from([1, 2, 4, 8]))
def test_hopper_fp8_more_expert_parallelism_leaves_fewer_local_experts(ep):
    def factor(degree):
        spec = megatron("qwen3-30b-a3b", 8, 1, 1, ep=degree, global_batch=512, precision="fp8")
        return moe_efficiency_factor(spec, H100, 0.40)

    wider = factor(ep * 2) if ep < 8 else 1.0
    assert 0.0 < factor(ep) < wider


# The same document's 26.02 tables, used to choose the form of the fixed MoE cost (moe26, stop 38) and not
# in the moe27 fit: per MoE layer and micro-batch (assumptions.MOE_LAYER_FIXED_SECONDS) fits these four and
# the four fit points with a log-SSE of 0.027; a cost per local expert (0.35 ms, refit) 0.042, DeepSeek-V3
# at -11.7% ("DeepSeekV3 | 256 | FP8-MX | 4096 | 1 | 4096 | 0 | 1 | 16 | 1 | n/a | 8 | 256 | 2689").
ROWS_2602 = (
    # DGX-H100 "GPT OSS 120B | 64 | BF16 | 1280 | 1 | 4096 | 0 | 1 | 4 | 1 | n/a | 8 | 80 | 5993": -1.1%
    (megatron(GPT_OSS_120B, 64, 1, 4, ep=8, micro_batch=1, global_batch=1280), H100, 5993),
    # DGX-B200 "Qwen3_30B_a3B | 8 | FP8-MX | 512 | 1 | 4096 | ... | 8 | 64 | 9691": -0.9%
    (megatron("qwen3-30b-a3b", 8, 1, 1, ep=8, global_batch=512, precision="fp8"), B200, 9691),
    # DGX-GB200 "Qwen3_30B_a3B | 8 | FP8-MX | 512 | 4 | 4096 | ... | 8 | 16 | 26084": -11.5%; -9.7% before b200x,
    # -4.8% after (HybridEP stated; moe_hybridep_fixed_share was fitted on this row and the 25.11 one); moe43 -7.3%;
    # moe45 (the GB200 from the B200 at 1.025, the share refitted 0.27 -> 0.40) -4.8%
    (QWEN3_30B_GB200, GB200, 26084),
    # DGX-B200 DeepSeek-V3 above (PP 16, EP 8, GA 256): +4.9%; moe43 -7.5% (stated alltoall).
    # moe47r: stated as run. The recipe at the table's own commit (NVIDIA-NeMo/Megatron-Bridge
    # @df0289c180dd20ff26933455c7a0a11084f6a36f scripts/performance/configs/deepseek/deepseek_workload_base_configs.py
    # lines 105-117, DEEPSEEK_V3_PRETRAIN_CONFIG_B200_V1: num_gpus 256, PP 16, EP 8, no VP,
    # moe_flex_dispatcher_backend "hybridep"; lines 178-184, _B200_V2 / _B200_FP8_MX_V2: GBS 4096) matches the
    # printed 256 / GBS 4096 / MBS 1 / PP 16 / VP n/a / EP 8, and sets hybridep: +20.8% at today's constants
    # (strict xfail below; the 25.11 row's recipe, @00b7660be lines 64-75, GBS 2048, sets no dispatcher: alltoall).
    pytest.param(
        megatron("deepseek-v3", 256, 1, 16, ep=8, global_batch=4096, precision="fp8", dispatch="hybridep"),
        B200,
        2689,
        marks=pytest.mark.xfail(
            strict=True,
            reason="UNEXPLAINED (moe47r): stated as its recipe ran it (hybridep, Megatron-Bridge @df0289c18 "
            "deepseek_workload_base_configs.py lines 105-117 / 178-184) the row reads 3,247.6 against 2,689 "
            "(+20.8%; stated alltoall, as moe_local_expert_seconds was fitted on it, 2,488.2, -7.5%): "
            "moe_hybridep_fixed_share scales the per-local-expert seconds (TE's per-expert GEMM launches, which no "
            "dispatcher touches) and 32 local experts make that 0.40 cheap. Tried: the share on the layer term only, "
            "refitted jointly with moe_layer_fixed_seconds and moe_local_expert_seconds on their eight fit rows with "
            "this row as run (2.85 ms + 0.18 ms a local expert, share 0): this row +7.8%, but the Qwen3-30B GB200 "
            "26.02 fit row -4.8% -> -10.7% and the held-out Qwen3-30B B200 26.04.01 row -10.2% -> -15.7% "
            "(test_outside_moe_training_stop47.py::test_the_joint_refit_with_the_2602_dsv3_row_as_run_does_not_land). "
            "What separates the DeepSeek-V3 (32 local experts, MBS 1) from the Qwen3-30B (16, MBS 4) HybridEP rows "
            "is not established.",
        ),
    ),
)


@pytest.mark.parametrize(
    "spec, gpu, published", ROWS_2602, ids=["gpt-oss-h100", "qwen3-b200", "qwen3-gb200", "dsv3-b200"]
)
def test_megatron_bridge_2602_rows_are_within_15_percent(spec, gpu, published):
    assert tokens_per_gpu(spec, gpu) == pytest.approx(published, rel=0.15)


def test_the_size_report_names_the_hopper_fp8_cost():
    basis = candidate(QWEN3_30B_H100_2511, H100)["speed_basis"]
    assert "10.6 ms a MoE layer and micro-batch for Hopper's FP8 expert path (65,536 routed" in basis, basis
    assert "Hopper's FP8" not in candidate(QWEN3_30B_H100_2511, B200)["speed_basis"]


def test_gb200_at_its_measured_ratio_does_not_inherit_the_hopper_cost():
    # moe45: the GB200 is ranked at 1.025x the B200's modelled speed (procurement/data/measured_speed.csv, NVIDIA's
    # same-plan dense DGX-GB200 / DGX-B200 pairs), no longer at 2.2x the H100's, so no Hopper cost can reach it; the
    # card-independent seconds are still paid whole (b200x): its MBS 4 row +4.5% (moe43: +1.8%; b200x: +4.5%, was -0.9%)
    assert tokens_per_gpu(QWEN3_30B_GB200, GB200) == pytest.approx(23766, rel=0.05)


@settings(max_examples=25, deadline=None)
@given(micro_batch=st.integers(min_value=1, max_value=15), gpu=st.sampled_from([H100, B200]))
def test_larger_micro_batches_spread_the_fixed_moe_cost(micro_batch, gpu):
    def factor(mbs):
        spec = megatron("qwen3-30b-a3b", 8, 1, 1, ep=8, micro_batch=mbs, global_batch=960, precision="fp8")
        return moe_efficiency_factor(spec, gpu, 0.40)

    assert 0.0 < factor(micro_batch) < factor(micro_batch + 1) < 1.0


def test_dense_models_keep_their_efficiency():
    dense = megatron("llama-3-70b", 64, 4, 8, vp=5, ep=1, global_batch=128, precision="fp8", seq=8192)
    assert moe_efficiency_factor(dense, H100, 0.40) == 1.0


def test_inference_keeps_its_efficiency():
    spec = parse_workload_spec({"name": "i", "task": "inference", "model": {"preset": "mixtral-8x7b"}})
    assert moe_efficiency_factor(spec, H100, 0.40) == 1.0


@settings(max_examples=25, deadline=None)
@given(
    narrow=st.integers(min_value=256, max_value=8192),
    extra=st.integers(min_value=1, max_value=8192),
    precision=st.sampled_from(["bf16", "fp8"]),
)
def test_wider_experts_lose_less_and_fp8_loses_more(narrow, extra, precision):
    # parameters counted from the shape (no published totals), so the experts' width moves the FLOPs
    shape = {k: v for k, v in QWEN3_235B.items() if k not in ("params", "params_active")}

    def factor(width, dtype=precision):
        spec = megatron(
            shape | {"moe_intermediate_size": width}, 8, 1, 1, ep=8, global_batch=64, precision=dtype
        )
        return moe_efficiency_factor(spec, H100, 0.40)

    assert 0.0 < factor(narrow) < factor(narrow + extra) < 1.0
    assert factor(narrow, "fp8") < factor(narrow, "bf16")


# --- fp8 training keeps the linears' saved inputs as 1-byte casts (Transformer Engine) ------------------------
def test_fp8_linear_inputs_are_one_byte_by_hand():
    # Llama 3 70B (h 8,192, I 28,672, 64 heads of 128, 8 KV heads), no scores kept, per token and layer:
    # bf16 = q/k/v input 2h + Q 2q + K,V 4kv + O 2q + MLP input 2h + gate/up/SiLU 6I + down input 2I + norms 4h
    #      = 16,384 + 16,384 + 4,096 + 16,384 + 16,384 + 172,032 + 57,344 + 32,768 = 331,776 B;
    # fp8 keeps the three linear inputs at 1 byte: - (h + h + I) = -45,056 -> 286,720 B.
    bf16 = megatron("llama-3-70b", 64, 4, 8, vp=5, ep=1, global_batch=128, seq=8192)
    fp8 = dataclasses.replace(bf16, precision="fp8")
    assert FP8_SAVED_LINEAR_INPUT.value == 1.0
    assert state_bytes(bf16).layer_bytes_per_token_no_scores == 331_776
    assert state_bytes(fp8).layer_bytes_per_token_no_scores == 286_720


def test_fp8_lora_keeps_16_bit_adapter_inputs():
    # LoRA's A matrices run 16-bit matmuls on the frozen linear's input: nothing to halve
    lora = {"name": "l", "task": "lora", "model": {"preset": "llama-3-70b"}, "seq_len": 8192}
    bf16 = parse_workload_spec(lora | {"precision": "bf16"})
    fp8 = parse_workload_spec(lora | {"precision": "fp8"})
    assert (
        state_bytes(fp8).layer_bytes_per_token_no_scores == state_bytes(bf16).layer_bytes_per_token_no_scores
    )


def test_the_size_report_says_why_an_moe_runs_slower():
    spec = megatron("qwen3-30b-a3b", 16, 1, 2, vp=24, ep=8, micro_batch=2, global_batch=512, precision="fp8")
    basis = candidate(spec, H100)["speed_basis"]
    assert "768-wide experts, top-8" in basis and "of the dense efficiency" in basis, basis
    dense = megatron("llama-3-70b", 64, 4, 8, vp=5, ep=1, global_batch=128, precision="fp8", seq=8192)
    assert "MoE" not in (candidate(dense, H100)["speed_basis"] or "")
