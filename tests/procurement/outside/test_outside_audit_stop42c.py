"""Outside audit (aud42c) of two merged stop-42 changes (tests/procurement/outside/NOTES-issue26.md, "## Disagreements
at stop 42"): moe42 / int42's training FLOP count (no input embedding, the output layer 6 a weight, never recomputed)
and its refit of training_width_peak_hopper_megatron 0.623 -> 0.600; mla42's multi-head latent attention count (its
low-rank projections, attention core at heads x (192 + 128) / 2). Each is checked by hand against its source and tried
on published cases no other test uses. Tolerances: LLM speed 15%, memory 10%. Misses are strict xfails with numbers.

Sources (read with read_file / find_string; figures quoted where used):
  [MEG]    NVIDIA/Megatron-LM @001b00c2734d8f0fad096fe48a382fedf755d321 megatron/training/training.py
           num_floating_point_operations / transformer_flops: "3x: Each GEMM ... forward pass, backward wgrad, backward
           dgrad" x "2mnk"; per token 6 x (qkv proj + core attention "query_projection_size * seq_length / 2 * 2" + out
           proj) per layer + 6 h (ffn x 3 for SwiGLU) per dense layer + "# Logit." 3 x 2 x hidden x padded_vocab_size;
           no input-embedding term and no recomputation term (model FLOPs). MLA branch: q_term q_lora_rank x (hidden +
           heads x (qk_head_dim + qk_pos_emb_head_dim) + 1), kv_lora_rank x (hidden + heads x (qk_head_dim + v_head_dim)
           + 1) + hidden x qk_pos_emb_head_dim, o heads x v_head_dim x hidden, core attention seq x heads x (qk_head_dim
           + qk_pos_emb_head_dim) / 2 + seq x heads x v_head_dim / 2 (Megatron's qk_head_dim is the no-RoPE 128).
  [NAR]    Narayanan et al. 2021, arXiv:2104.04473 appendix: F = 96 B s l h^2 (1 + s / 6h + V / 16lh) with full
           recomputation; the logit term 96 B s l h^2 x V / 16lh = 6 B s h V (not 8), no input-embedding term.
  [DSV3]   deepseek-ai/DeepSeek-V3 config (the preset; test_mla_params.py's source): 61 layers, hidden 7,168, 128 heads,
           q_lora_rank 1,536, kv_lora_rank 512, qk_nope 128, qk_rope 64, v_head_dim 128, 3 dense layers of 18,432, 58 MoE
           layers of 256 routed (top 8) + 1 shared of 2,048, vocabulary 129,280.
  [DSV2L]  DeepSeek-V2-Lite: 27 layers, hidden 2,048, 16 heads, no q_lora_rank (q_proj), kv_lora_rank 512, qk_nope 128,
           qk_rope 64, v 128, intermediate 10,944, first_k_dense_replace 1, 64 routed (top 6) + 2 shared of 1,408,
           vocabulary 102,400 (search-index files 63136765309 "large" config and 18120545959 test_config_deepseek_v2;
           vocabulary as DeepSeek-V2's). Published: "DeepSeek-V2-Lite has 15.7B total parameters, where 2.4B are
           activated for each token" (arXiv:2405.04434, appendix B).
  [ISCA]   Zhao et al. 2025, "Insights into DeepSeek-V3: Scaling Challenges and Reflections on Hardware for AI
           Architectures", arXiv:2505.09343, Table 1, KV cache per token in BF16: DeepSeek-V3 (MLA) 70.272 KB,
           Qwen-2.5 72B (GQA) 327.680 KB, LLaMA-3.1 405B (GQA) 516.096 KB.
  [DGX]    NVIDIA/dgxc-benchmarking @143b90dd91f9be958fed4773ae95d941a3356a82 llama3.1/README_8b.md, README_70b.md (the
           two NeMo 24.09 fit rows of training_width_peak_hopper_megatron: 8B 8 x H100 8,192 x 128 / 12.91 s = 10,152.75
           tokens/s/GPU; 70B 64 x H100 8,192 x 128 / 14.72 s = 1,113.05), as in sizing_reference.json.
  [MBR]    pufanyi/Megatron-Bridge @21a2ced8106754c746d0bbde686f35554992e4be docs/performance-summary.md (NVIDIA's
           table, Tokens / sec / GPU and Model TFLOP / sec / GPU, Megatron's count [MEG]): 25.09 DGX-H100 "LLAMA3_8B |
           8 | 128 | 1 | 8192 | ... | 14079 | 725"; 25.11 DGX-B200 "DeepSeekV3 | 256 | FP8-MX | 2048 | 1 | 4096 | ... |
           2139 | 557", DGX-GB300 "DeepSeekV3 | 256 | ... | 3943 | 1026"; 25.09 DGX-H100 "DeepSeekV3 (dropless) | 1024
           | ... | 1297 | 338 (330)". Their ratio is the FLOPs a token NVIDIA charges.
"""

from __future__ import annotations

import dataclasses
import math

import pytest

from procurement.sizing import mfu, params, throughput, validation
from procurement.sizing.params import kv_elems_per_token
from procurement.sizing.spec import parse_workload_spec


def spec_of(model: dict, checkpointing: str = "none", seq_len: int = 4096, task: str = "pretrain"):
    return parse_workload_spec(
        {"task": task, "model": dict(model), "seq_len": seq_len, "gradient_checkpointing": checkpointing}
    )


# Llama 3 8B by hand: h 4,096, L 32, 32 heads, 8 KV heads of 128, FFN 14,336, V 128,256 (untied)
H, L, FFN, V = 4096, 32, 14336, 128256
ATTN_PROJ = H * H + 2 * H * 1024 + H * H  # 41,943,040
MLP = 3 * H * FFN  # 176,160,768
CORE_FWD = 4 * (4096 / 2) * H  # QK^T and AV under a causal mask, one layer's forward a token
LOGITS = H * V  # 525,336,576


def test_llama3_8b_flops_per_token_equal_megatrons_formula_by_hand():
    """[MEG] at 4k, no recomputation: 6 x 32 x (41,943,040 + 176,160,768) + 3 x 32 x 33,554,432 + 6 x 525,336,576
    = 41,875,931,136 + 3,221,225,472 + 3,152,019,456 = 48,249,176,064; the product 48,250,773,504, the 65 norms'
    gains (6 x 266,240) apart. The old count charged 6 x 525,336,576 = 3.15e9 more (the input table, +6.5%)."""
    megatron = 6 * L * (ATTN_PROJ + MLP) + 3 * L * CORE_FWD + 6 * LOGITS
    assert megatron == 48_249_176_064
    ours = throughput.training_flops_per_token(spec_of({"preset": "llama-3-8b"}))
    assert ours == 48_250_773_504
    assert ours - megatron == 6 * (2 * L + 1) * H


def test_llama3_8b_full_recompute_charges_the_logits_six_a_weight():
    """[NAR]: under full recomputation the blocks 8 a weight, attention 4 passes, logits 6 B s h V (V / 16lh of
    96 B s l h^2): 8 x 6,979,588,096 + 4 x 1,073,741,824 + 6 x 525,336,576 = 63,283,691,520."""
    model = spec_of({"preset": "llama-3-8b"}).model
    blocks = params.block_matmul_params(model)
    assert blocks == 8_030_261_248 - 2 * LOGITS == 6_979_588_096
    by_hand = 8 * blocks + 4 * L * CORE_FWD + 6 * LOGITS
    assert throughput.training_flops_per_token(spec_of({"preset": "llama-3-8b"}, "full")) == by_hand
    assert by_hand == 63_283_691_520


def _nemo_rows_at(value: float, monkeypatch) -> list[float]:
    """The two [DGX] fit rows' errors with the Megatron ceiling at `value`."""
    ceiling = dataclasses.replace(mfu.TRAINING_WIDTH_PEAK_HOPPER_MEGATRON, value=value)
    monkeypatch.setattr(mfu, "TRAINING_WIDTH_PEAK_HOPPER_MEGATRON", ceiling)
    errors = []
    for case_id, published in (
        ("nemo2409-llama31-8b-8xh100-bf16-tps", 10_152.75),
        ("nemo2409-llama31-70b-64xh100-bf16-tps", 1_113.05),
    ):
        case = validation.CASES[case_id]
        ours = validation._estimate(parse_workload_spec(case.spec), case)
        errors.append(ours / published - 1.0)
    return errors


def test_megatron_ceiling_refit_is_the_log_least_squares_optimum(monkeypatch):
    """int42's refit by hand: at 0.600 the rows read -5.7% / +6.0%; at the old 0.623 under the new count -2.1% /
    +10.0%; on a 0.001 grid the least squares of the log errors is least at 0.600. By hand, if the rows scale with
    the ceiling: 0.623 x exp(-(ln 0.979 + ln 1.100) / 2) = 0.6003; and the two rows' FLOP counts fell 5.8% (8B at
    8k, 3.15e9 of 54.6e9) and 1.4% (70B), geometric mean 0.964, 0.623 x 0.964 = 0.600."""
    at_600 = _nemo_rows_at(0.600, monkeypatch)
    assert at_600 == pytest.approx([-0.057, 0.060], abs=0.002)
    at_623 = _nemo_rows_at(0.623, monkeypatch)
    assert at_623 == pytest.approx([-0.021, 0.100], abs=0.002)
    grid = [0.590 + 0.001 * i for i in range(21)]
    cost = {e: sum(math.log1p(x) ** 2 for x in _nemo_rows_at(e, monkeypatch)) for e in grid}
    assert min(cost, key=cost.get) == pytest.approx(0.600, abs=0.0011)


def mla_layer(hidden: int, heads: int, q_lora: int = 1536) -> int:
    """[MEG]'s MLA terms as weights (q_term, kv term with the RoPE key, o), norms included."""
    query = q_lora * (hidden + heads * 192 + 1) if q_lora else hidden * heads * 192
    key_value = 512 * (hidden + heads * (128 + 128) + 1) + hidden * 64
    return query + key_value + heads * 128 * hidden


def test_deepseek_v3_mla_layer_and_core_equal_megatrons_mla_terms():
    """[DSV3] by hand: q 1,536 x (7,168 + 24,576 + 1) = 48,760,320; kv 512 x (7,168 + 32,768 + 1) + 7,168 x 64 =
    20,906,496; o 117,440,512; 187,107,328 a layer (plain 128 x 192 attention: 704,643,072). Core: [MEG] 6 x (s x
    128 x 192 / 2 + s x 128 x 128 / 2) = 6 x 4,096 x 20,480 a layer-token = 503,316,480, the product's 3 passes x
    4 x 2,048 x 20,480. Whole token at 4k: [MEG] 6 x (61 x 187,107,328 + 3 x 396,361,728 + 58 x 9 x 44,040,192 +
    926,679,040) + 61 x 503,316,480 = 249,812,054,016; the product 250,455,926,784 adds the routers (58 x 7,168 x
    256) and norms' gains, 6 x 107,312,128 (+0.26%)."""
    model = spec_of({"preset": "deepseek-v3"}).model
    assert params.attention_params_per_layer(model) == mla_layer(7168, 128) == 187_107_328
    assert throughput.attention_dim(model) == 128 * (192 + 128) / 2
    assert 3 * throughput.attention_forward_flops_per_token(model, 4096) == 61 * 6 * 4096 * 20480
    megatron = 6 * (61 * 187_107_328 + 3 * 3 * 7168 * 18432 + 58 * 9 * 3 * 7168 * 2048 + 7168 * 129280)
    megatron += 61 * 6 * 4096 * 20480
    assert megatron == 249_812_054_016
    # moe43: the preset trains its MTP module (mtp_layers 1) unless stated 0; the main model's count is unchanged
    ours = throughput.training_flops_per_token(spec_of({"preset": "deepseek-v3", "mtp_layers": 0}))
    assert ours == 250_455_926_784 == megatron + 6 * (58 * 7168 * 256 + 123 * 7168)
    with_mtp = throughput.training_flops_per_token(spec_of({"preset": "deepseek-v3"}))
    assert with_mtp == 260_647_704_576


DSV2_LITE = {
    "name": "deepseek-v2-lite",
    "num_layers": 27,
    "hidden_size": 2048,
    "num_attention_heads": 16,
    "intermediate_size": 10944,
    "moe_intermediate_size": 1408,
    "num_experts": 64,
    "experts_per_token": 6,
    "shared_experts": 2,
    "dense_layers": 1,
    "vocab_size": 102400,
    "kv_lora_rank": 512,
    "qk_nope_head_dim": 128,
    "qk_rope_head_dim": 64,
    "v_head_dim": 128,
}


def test_deepseek_v2_lite_total_without_a_query_latent_matches_the_paper():
    """[DSV2L], the q_proj path (no q_lora_rank) no test had: a layer 2,048 x 16 x 192 + 2,048 x 576 + 512 +
    512 x 16 x 256 + 16 x 128 x 2,048 = 13,763,072; total 15,706,484,224 against 15.7B (+0.04%). Activated, as the
    FLOP count charges it (blocks + output layer, no input lookup): 2,241,719,808 + 209,715,200 = 2.452e9 against
    2.4B (+2.1%); DeepSeek-V3's the same way 36.63e9 against 37B (-1.0%)."""
    model = spec_of(DSV2_LITE).model
    assert params.attention_params_per_layer(model) == mla_layer(2048, 16, q_lora=0) == 13_763_072
    assert params.count_params(model) == 15_706_484_224
    assert params.count_params(model) / 15.7e9 - 1 == pytest.approx(0.0, abs=0.01)
    charged = params.block_matmul_params(model) + params.output_layer_params(model)
    assert charged / 2.4e9 - 1 == pytest.approx(0.021, abs=0.002)
    v3 = spec_of({"preset": "deepseek-v3"}).model
    v3_charged = params.block_matmul_params(v3) + params.output_layer_params(v3)
    assert v3_charged / 37e9 - 1 == pytest.approx(-0.010, abs=0.002)


# Was a strict xfail: active_params counted both embedding tables, 2,661,150,208 against the paper's 2.4B activated
# (+10.9%). Now 2,451,435,008 (+2.1%) because params.active_params leaves out the untied input embedding, a row
# lookup (moe43; the FLOP count already did), DeepSeek's own convention for "activated".
def test_deepseek_v2_lite_active_params_within_10_percent():
    model = spec_of(DSV2_LITE).model
    assert params.active_params(model) == 2_661_150_208 - 102_400 * 2048 == 2_451_435_008
    assert params.active_params(model) / 2.4e9 - 1 == pytest.approx(0.0, abs=0.10)


@pytest.mark.parametrize(
    "preset, published_kb",
    [("deepseek-v3", 70.272), ("qwen2.5-72b", 327.680), ("llama-3.1-405b", 516.096)],
)
def test_kv_cache_per_token_matches_the_deepseek_isca_table(preset, published_kb):
    """[ISCA] Table 1 (BF16): DeepSeek-V3 61 x (512 + 64) x 2 B = 70,272 B; Qwen-2.5 72B 80 x 2 x 8 x 128 x 2 B =
    327,680 B; Llama 3.1 405B 126 x 2 x 8 x 128 x 2 B = 516,096 B. The product exactly (MLA's latent + RoPE key
    from kv_lora_rank + qk_rope_head_dim), 4.7x / 7.3x less for MLA than the GQA models."""
    model = spec_of({"preset": preset}).model
    assert kv_elems_per_token(model) * 2 == pytest.approx(published_kb * 1000, rel=1e-9)


def test_llama3_8b_at_8k_charges_what_nvidias_table_charges():
    """[MBR] 725e12 / 14,079 = 51.495e9 FLOPs a token (Llama 3 8B, seq 8,192). [MEG] by hand at 8k: 41,875,931,136 +
    3 x 32 x 4 x 4,096 x 4,096 + 3,152,019,456 = 51,470,401,536 (-0.05%, the table's rounding of 725); the product
    51.472e9 (norms apart). The pre-moe42 count (input table 6 a weight) read 54.62e9, +6.1% over NVIDIA's."""
    published = 725e12 / 14079
    megatron = 6 * L * (ATTN_PROJ + MLP) + 3 * L * 4 * (8192 / 2) * H + 6 * LOGITS
    assert megatron == 51_470_401_536
    ours = throughput.training_flops_per_token(spec_of({"preset": "llama-3-8b"}, seq_len=8192))
    assert ours / published - 1 == pytest.approx(0.0, abs=0.002)
    assert (ours + 6 * LOGITS) / published - 1 == pytest.approx(0.061, abs=0.002)


@pytest.mark.parametrize("tflops, tokens", [(557, 2139), (1026, 3943), (338, 1297)])
def test_deepseek_v3_mla_count_is_what_nvidias_table_charges(tflops, tokens):
    """[MBR] DeepSeek-V3 at 4k: 557e12 / 2,139 = 260.4e9, 1,026e12 / 3,943 = 260.2e9, 338e12 / 1,297 = 260.6e9 FLOPs a
    token. The product's 250.46e9 (checked against [MEG] above) plus the one MTP module these runs train ([MEG]
    mtp_num_layers: an MoE layer 6 x (187,107,328 + 9 x 44,040,192) + 503,316,480 = 4,004,130,816, its logits 6 x
    926,679,040, its projection and norms 6 x (2 x 7,168^2 + 3 x 7,168)) = 259.99e9 + routers/norms: within 0.5%
    of every row. Without MTP the product charges 3.8% less than NVIDIA (the preset has no MTP module; a stated
    gap, not an MLA error). mla42's core at (192 + 128) / 2 is NVIDIA's; a core at 128 x 192 for both matmuls
    (pre-mla42) adds 61 x 6 x 4,096 x 128 x 32 = 6.14e9; an unstated shape counted as plain attention (704.6e6 a
    layer) would add 6 x 61 x 517.5e6 = 189.4e9 more (+71% with the core)."""
    published = tflops * 1e12 / tokens
    # moe43: the preset now carries the MTP module (mtp_layers 1, counted in training: 260.65e9 a token, within
    # 0.2% of every row); stated 0 it charges the main model alone, 3.8% under NVIDIA
    assert throughput.training_flops_per_token(
        spec_of({"preset": "deepseek-v3"})
    ) / published - 1 == pytest.approx(0.0, abs=0.005)
    ours = throughput.training_flops_per_token(spec_of({"preset": "deepseek-v3", "mtp_layers": 0}))
    mtp = 6 * (187_107_328 + 9 * 3 * 7168 * 2048) + 6 * 4096 * 20480 + 6 * 7168 * 129280
    mtp += 6 * (2 * 7168 * 7168 + 3 * 7168)
    assert (ours + mtp) / published - 1 == pytest.approx(0.0, abs=0.005)
    assert ours / published - 1 == pytest.approx(-0.038, abs=0.005)
    plain = ours + 6 * 61 * (704_643_072 - 187_107_328) + 61 * 6 * 4096 * 128 * (192 - 160)
    assert plain / published - 1 == pytest.approx(0.71, abs=0.03)
