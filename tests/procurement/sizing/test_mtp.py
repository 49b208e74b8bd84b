"""Multi-token prediction modules (model.mtp_layers, HF config num_nextn_predict_layers; moe43, issue 26 class 7).

Sources:
- [DSV3] DeepSeek-AI, "DeepSeek-V3 Technical Report", arXiv:2412.19437, sec. 2.2: each MTP module a shared embedding
  and output head, a transformer block and a projection M of 2h x h; trained at depth 1 (sec. 4.2).
- [CFG] deepseek-ai/DeepSeek-V3 config.json "num_nextn_predict_layers": 1; README: 671B main model, the HF checkpoint
  685B with the MTP module's 14B.
- [MEG] NVIDIA/Megatron-LM megatron/training/training.py num_floating_point_operations (search-index file
  61717202382): mtp_num_layers adds layers of the last layer's kind, "# MTP norms and proj" 3 x 2 x (3h + 2h^2) and
  the logit term x (mtp_num_layers + 1).
- [MB2511] NVIDIA-NeMo/Megatron-Bridge docs/performance-summary.md @00b7660be0254ac6f95f44164ddd0c3e9cc798ed, 25.11
  DGX-B200 "DeepSeekV3 | 256 | FP8-MX | ... | 2139 | 557": 557e12 / 2,139 = 260.4e9 FLOPs a token.
- [AUTOMODEL] NVIDIA-NeMo/Automodel docs/performance-summary.md @89e3a9fdd "DeepSeek V3 671B | 256 | ... | 250 |
  1,002": 249.5e9 a token, the count without MTP.
"""

import pytest

from procurement.sizing import params, throughput
from procurement.sizing.spec import parse_workload_spec

H, V = 7168, 129280
ATTENTION = 187_107_328  # MLA a layer (test_mla_params.py)
EXPERT = 3 * H * 2048
BLOCK = ATTENTION + 9 * EXPERT + H * 256  # top-8 + 1 shared, router
EXTRA = 2 * H * H + V * H  # the projection M and the shared output head again


def spec_of(model, task="pretrain", checkpointing="none"):
    return parse_workload_spec(
        {"task": task, "model": model, "seq_len": 4096, "gradient_checkpointing": checkpointing}
    )


def test_deepseek_v3_preset_has_one_module_other_presets_none():
    assert spec_of({"preset": "deepseek-v3"}).model.mtp_layers == 1
    for preset in ("qwen3-30b-a3b", "mixtral-8x7b", "llama-3.1-8b"):
        assert spec_of({"preset": preset}).model.mtp_layers == 0


def test_mtp_weights_by_hand():
    """[DSV3] one module: the block 585,304,064 active weights, M 102,760,448, the head 926,679,040; its own weights
    with all 257 experts 11,610,060,800 ([CFG]: 671B + 11.6B + copies of embedding and head 1.85B = 684.5B, the
    checkpoint's 685B)."""
    model = spec_of({"preset": "deepseek-v3"}).model
    assert params.mtp_block_params(model) == BLOCK == 585_304_064
    assert params.mtp_matmul_params(model) == BLOCK + EXTRA == 1_614_743_552
    own = ATTENTION + 257 * EXPERT + H * 256 + 2 * H * H + 4 * H
    assert params.mtp_params(model) == own == 11_610_060_800
    assert (params.count_params(model) + own + 2 * V * H) / 685e9 - 1 == pytest.approx(0.0, abs=0.002)


def test_mtp_flops_by_hand_and_nvidias_count():
    """6 x 1,614,743,552 + one layer's causal attention, 3 passes: 10.19e9 a token at 4,096. With it the product's
    count is within 0.2% of the 260.4e9 NVIDIA's DeepSeek-V3 row charges [MB2511]; without it (stated 0) within 0.4%
    of AutoModel's 249.5e9 [AUTOMODEL]."""
    spec = spec_of({"preset": "deepseek-v3"})
    core = throughput.attention_forward_flops_per_token(spec.model, 4096) / 61
    assert throughput.mtp_flops_per_token(spec) == pytest.approx(6 * (BLOCK + EXTRA) + 3 * core, rel=1e-12)
    assert throughput.mtp_flops_per_token(spec) == pytest.approx(10.19e9, rel=0.001)
    assert throughput.training_flops_per_token(spec) / 260.4e9 - 1 == pytest.approx(0.0, abs=0.002)
    off = spec_of({"preset": "deepseek-v3", "mtp_layers": 0})
    assert throughput.mtp_flops_per_token(off) == 0.0
    assert throughput.training_flops_per_token(off) / 249.5e9 - 1 == pytest.approx(0.0, abs=0.004)


def test_full_recomputation_runs_the_block_again_not_the_head():
    spec = spec_of({"preset": "deepseek-v3"}, checkpointing="full")
    core = throughput.attention_forward_flops_per_token(spec.model, 4096) / 61
    assert throughput.mtp_flops_per_token(spec) == pytest.approx(8 * BLOCK + 6 * EXTRA + 4 * core, rel=1e-12)


def test_adapters_and_reshaped_presets_count_no_module():
    """LoRA trains no MTP module; Kimi K2 reshaped from the deepseek-v3 preset has none (its config
    num_nextn_predict_layers 0) unless stated."""
    lora = parse_workload_spec({"task": "lora", "model": {"preset": "deepseek-v3"}, "seq_len": 4096})
    assert throughput.mtp_flops_per_token(lora) == 0.0
    reshaped = spec_of({"preset": "deepseek-v3", "num_attention_heads": 64, "num_key_value_heads": 64})
    assert reshaped.model.mtp_layers == 0
    stated = spec_of(
        {"preset": "deepseek-v3", "num_attention_heads": 64, "num_key_value_heads": 64, "mtp_layers": 1}
    )
    assert stated.model.mtp_layers == 1


def test_the_speed_text_states_the_module():
    from procurement.sizing.mfu import mtp_text

    text = mtp_text(spec_of({"preset": "deepseek-v3"}))
    assert "1 multi-token prediction module" in text and "4.1%" in text and "11.61B" in text
    assert mtp_text(spec_of({"preset": "deepseek-v3", "mtp_layers": 0})) == ""
