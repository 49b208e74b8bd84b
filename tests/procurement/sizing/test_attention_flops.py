"""Issue 26, class 2: compute counts attention, for every task, against published formulas.

PaLM (Chowdhery et al. 2022, arXiv:2204.02311, appendix B) counts model FLOPs per trained token as
6N + 12 L H Q T (L layers, H heads, Q head dim, T sequence length), attention unmasked. Megatron-LM
(Narayanan et al. 2021, arXiv:2104.04473, eq. 3) counts 72 B s l h^2 (1 + s / 6h + V / 16 l h) per step
without recomputation (96 with full recomputation): the same 12 l h s per token for attention. A causal
mask halves the score and value matmuls (FlashAttention-2, Dao 2023, section 4: "divide by 2" for causal),
so the engine counts 6 L T d_attn per trained token (8 L T d_attn with full recomputation).
"""

import pytest

from procurement.sizing import parse_workload_spec
from procurement.sizing.throughput import attention_forward_flops_per_token, training_flops_per_token


def _model(layers, heads, head_dim, hidden=None):
    hidden = hidden or heads * head_dim
    return parse_workload_spec(
        {
            "name": "m",
            "task": "pretrain",
            "training_tokens": 1e9,
            "model": {
                "params": 1e9,
                "num_layers": layers,
                "hidden_size": hidden,
                "num_attention_heads": heads,
                "num_key_value_heads": heads,
                "intermediate_size": 4 * hidden,
                "vocab_size": 32000,
                "head_dim": head_dim,
            },
        }
    ).model


def test_it_is_palms_appendix_b_term_halved_by_the_causal_mask():
    # PaLM 540B: L = 118, H = 48, Q = 256, T = 2048: 12 L H Q T = 35.6 GFLOPs per token, unmasked
    palm = _model(118, 48, 256, hidden=18432)
    palm_term = 12 * 118 * 48 * 256 * 2048
    assert palm_term == pytest.approx(35.6e9, rel=1e-3)
    assert 3 * attention_forward_flops_per_token(palm, 2048, causal=False) == palm_term  # fwd + bwd
    assert 3 * attention_forward_flops_per_token(palm, 2048) == palm_term / 2


def test_it_is_megatrons_s_over_6h_term():
    # GPT-3 175B in Megatron-LM's formula: l = 96, h = 12288, s = 2048; per token 72 l h^2 x s / 6h = 12 l h s
    gpt3 = _model(96, 96, 128)
    megatron = 72 * 96 * 12288**2 * (2048 / (6 * 12288))
    assert 3 * attention_forward_flops_per_token(gpt3, 2048, causal=False) == pytest.approx(megatron)


LLAMA3_8B_PARAMS = 8_030_261_248  # Llama 3 8B (Meta model card, 8.03B)


@pytest.mark.parametrize(("seq_len", "share"), [(4096, 0.0669), (32768, 0.535)])
def test_at_long_context_attention_is_a_large_share_of_6n(seq_len, share):
    # Llama-3-8B (32 layers, 32 heads x 128): 6 x 32 x T x 4096 / (6 x 8.03e9) = 6.7% at 4k, 53.5% at 32k
    # (the "about 7% at 4k"; 61.5% at 32k against the 6.98e9 non-embedding parameters of the
    # Kaplan et al. convention). LoRA, QLoRA and full fine-tunes carry the same term.
    for task in ("pretrain", "full_finetune", "lora", "qlora"):
        spec = parse_workload_spec(
            {
                "name": "l",
                "task": task,
                "model": {"preset": "llama-3.1-8b"},
                "seq_len": seq_len,
                "training_tokens": 1e9,
            }
        )
        attention = 6 * 32 * seq_len * 4096
        assert attention / (6 * LLAMA3_8B_PARAMS) == pytest.approx(share, abs=5e-4)
        without = parse_workload_spec(
            {
                "name": "l",
                "task": task,
                "model": {"preset": "llama-3.1-8b"},
                "seq_len": 128,
                "training_tokens": 1e9,
            }
        )
        grown = training_flops_per_token(spec) - training_flops_per_token(without)
        assert grown == pytest.approx(6 * 32 * (seq_len - 128) * 4096)


def test_full_recomputation_replays_the_attention_forward():
    base = {
        "name": "l",
        "task": "pretrain",
        "model": {"preset": "llama-3.1-8b"},
        "seq_len": 8192,
        "training_tokens": 1e9,
    }
    plain = training_flops_per_token(parse_workload_spec(base))
    full = training_flops_per_token(parse_workload_spec(base | {"gradient_checkpointing": "full"}))
    # 8 B + 8 L T d versus 6 B + 6 L T d: the difference is one more forward of the blocks' weights B, which
    # leave out the input embedding (a lookup) and the output layer (moe42: checkpointing wraps the blocks only,
    # so the 128,256 x 4,096 output layer runs once, 6 FLOPs a weight, either way)
    params = full - plain - 2 * 32 * 8192 * 4096
    assert params / 2 == pytest.approx(LLAMA3_8B_PARAMS - 2 * 128_256 * 4_096, rel=0.01)
