"""Multi-head latent attention's parameter count and attention FLOPs (mla42, issue 26).

Shapes, each from a config.json read for this test:
- [DSV3] deepseek-ai/DeepSeek-V3 config (procurement/data/model_architectures.json entry, from
  inference/configs/config_671B.json; also search-index file 1407982029, a MaxText DeepSeek-V3 definition):
  61 layers, hidden 7,168, 128 heads, q_lora_rank 1,536, kv_lora_rank 512, qk_nope_head_dim 128,
  qk_rope_head_dim 64, v_head_dim 128, 256 routed experts top-8 of 2,048, 1 shared, 3 dense layers of 18,432,
  vocabulary 129,280. Published: 671B total, 37B activated (DeepSeek-V3 README; arXiv:2412.19437 sec. 1).
- [DSV2] deepseek-ai/DeepSeek-V2 config.json as copied in search-index file 1252603174 ("model_type":
  "deepseek_v2"): 60 layers, hidden 5,120, 128 heads, q_lora_rank 1,536, kv_lora_rank 512, qk_nope 128,
  qk_rope 64, v_head_dim 128, 160 routed experts top-6 of 1,536, 2 shared, first_k_dense_replace 1 of 12,288,
  vocabulary 102,400. Published: 236B total, 21B activated (arXiv:2405.04434 abstract).
- [KIMI] moonshotai Kimi K2 config.json as copied in search-index file 4289690615 (KIMI_K2_THINKING_CONFIG,
  "model_type": "kimi_k2"): DeepSeek-V3's shape with 64 heads, 384 routed experts, first_k_dense_replace 1,
  vocabulary 163,840. Published: 1.04T total, 32.6B activated (Kimi K2 report, arXiv:2507.20534 sec. 2).
"""

from __future__ import annotations

import pytest

from procurement.sizing import params
from procurement.sizing.spec import WorkloadSpecError, parse_workload_spec
from procurement.sizing.throughput import attention_dim, attention_forward_flops_per_token

MLA_V3 = {
    "q_lora_rank": 1536,
    "kv_lora_rank": 512,
    "qk_nope_head_dim": 128,
    "qk_rope_head_dim": 64,
    "v_head_dim": 128,
}
DEEPSEEK_V2 = {
    "name": "deepseek-v2",
    "num_layers": 60,
    "hidden_size": 5120,
    "num_attention_heads": 128,
    "intermediate_size": 12288,
    "moe_intermediate_size": 1536,
    "num_experts": 160,
    "experts_per_token": 6,
    "shared_experts": 2,
    "dense_layers": 1,
    "vocab_size": 102400,
    **MLA_V3,
}
KIMI_K2 = {
    "preset": "deepseek-v3",
    "num_attention_heads": 64,
    "num_key_value_heads": 64,
    "vocab_size": 163840,
    "num_experts": 384,
    "dense_layers": 1,
}


def model_of(model: dict):
    return parse_workload_spec({"task": "pretrain", "model": dict(model), "seq_len": 4096}).model


def mla_layer_by_hand(hidden: int, heads: int) -> int:
    """q_a + its norm + q_b, kv_a (latent + RoPE key) + its norm + kv_b, o (HF DeepseekV3Attention's weights)."""
    query = hidden * 1536 + 1536 + 1536 * heads * (128 + 64)
    key_value = hidden * (512 + 64) + 512 + 512 * heads * (128 + 128)
    return query + key_value + heads * 128 * hidden


def test_it_counts_deepseek_v3_attention_as_its_low_rank_projections():
    """187,107,328 a layer where plain 128-head attention of head_dim 192 is 704,643,072; the shape's totals
    come out at the checkpoint's 671,026,404,352 and 37,552,282,624 (671B / 37B published)."""
    model = model_of({"preset": "deepseek-v3"})
    assert params.attention_params_per_layer(model) == mla_layer_by_hand(7168, 128) == 187_107_328
    assert params.count_params(model) == 671_026_404_352
    assert params.count_params(model, active_only=True) == 37_552_282_624


def test_it_counts_deepseek_v2_from_its_config_fields():
    """149.2M a layer; 235.7e9 total (published 236B, -0.1%) and 21.4e9 active (published 21B, +1.8%)."""
    model = model_of(DEEPSEEK_V2)
    assert model.head_dim == 192 and model.kv_elems_per_token_per_layer == 576
    assert params.attention_params_per_layer(model) == mla_layer_by_hand(5120, 128) == 149_227_520
    assert params.count_params(model) == pytest.approx(236e9, rel=0.01)
    assert params.count_params(model, active_only=True) == pytest.approx(21e9, rel=0.02)


def test_it_counts_kimi_k2_reshaped_from_the_deepseek_v3_preset():
    """101,124,096 a layer at 64 heads (352.3M as plain attention); 1.026e12 total (published 1.04T, -1.3%) and
    32.86e9 active (published 32.6B, +0.8%; 48.2e9 before). moe43: active_params leaves out the input embedding
    (a lookup; 163,840 x 7,168 = 1.174e9), which Moonshot's 32.6B counts: 31.69e9 + 1.174e9."""
    model = model_of(KIMI_K2)
    assert params.attention_params_per_layer(model) == mla_layer_by_hand(7168, 64) == 101_124_096
    assert params.count_params(model) == pytest.approx(1.04e12, rel=0.015)
    lookup = params.input_lookup_params(model)
    assert lookup == 163840 * 7168
    assert params.active_params(model) + lookup == pytest.approx(32.6e9, rel=0.01)


def test_it_sizes_mla_attention_core_with_qk_192_and_v_128():
    """Q K^T is 2 x T x heads x 192 and A V 2 x T x heads x 128 a layer: d_attn = 128 x (192 + 128) / 2 = 20,480
    (24,576 if the values were 192 wide); causal at 4,096 tokens, 4 x 61 x 2,048 x 20,480 a token."""
    model = model_of({"preset": "deepseek-v3"})
    assert attention_dim(model) == 20480
    assert attention_forward_flops_per_token(model, 4096) == pytest.approx(4 * 61 * 2048 * 20480)


def test_it_refuses_a_latent_attention_without_its_head_widths():
    with pytest.raises(WorkloadSpecError, match="model.v_head_dim"):
        model_of({**DEEPSEEK_V2, "v_head_dim": 0})
    with pytest.raises(WorkloadSpecError, match="needs model.kv_lora_rank"):
        model_of({**DEEPSEEK_V2, "kv_lora_rank": 0})
