"""active_params: the weights a token multiplies, not the input embedding lookup (moe43, issue 26 class 7).

Sources: DeepSeek-V2-Lite "15.7B total parameters, where 2.4B are activated for each token" (arXiv:2405.04434,
appendix B; its shape in tests/procurement/outside/test_outside_audit_stop42c.py); openai/gpt-oss-120b model card,
5.13B active (blocks and unembedding); Mistral's 12.9B for Mixtral 8x7B and Qwen's 3.3B for Qwen3-30B-A3B count the
input table too (procurement/data/model_architectures.json params_active_computed / _reported).
"""

import pytest

from procurement.sizing import params
from procurement.sizing.spec import parse_workload_spec


def model_of(preset: str):
    return parse_workload_spec({"task": "pretrain", "model": {"preset": preset}}).model


@pytest.mark.parametrize(
    "preset, both_tables",
    [("mixtral-8x7b", 12_879_925_248), ("qwen3-30b-a3b", 3_353_032_704), ("deepseek-v3", 37_552_282_624)],
)
def test_presets_leave_out_the_input_table(preset, both_tables):
    """The architecture file's counts hold both vocab tables; the product's active count is less the input one, and
    the blocks a token multiplies (the FLOP count's) are what they were: both tables less."""
    model = model_of(preset)
    table = model.vocab_size * model.hidden_size
    assert params.active_params(model) == both_tables - table
    assert params.block_matmul_params(model) == both_tables - 2 * table


def test_mixtral_and_qwen_publish_the_input_table_in_their_count():
    """Mixtral 12.75e9 + 0.131e9 = 12.88e9 (Mistral: 12.9B); Qwen3-30B-A3B 3.04e9 + 0.311e9 = 3.35e9 (Qwen: 3.3B)."""
    for preset, published in (("mixtral-8x7b", 12.9e9), ("qwen3-30b-a3b", 3.3e9)):
        model = model_of(preset)
        counted = params.active_params(model) + params.input_lookup_params(model)
        assert counted / published - 1 == pytest.approx(0.0, abs=0.02)


def test_dense_models_keep_their_total_and_tied_tables_are_the_head():
    dense = model_of("llama-3.1-8b")
    assert params.active_params(dense) == dense.params
    tied = parse_workload_spec(
        {
            "task": "pretrain",
            "model": {
                "num_layers": 2,
                "hidden_size": 256,
                "num_attention_heads": 4,
                "intermediate_size": 512,
                "vocab_size": 1000,
                "num_experts": 4,
                "experts_per_token": 2,
                "tie_word_embeddings": True,
            },
        }
    ).model
    assert params.input_lookup_params(tied) == 0
    assert params.active_params(tied) == params.count_params(tied, active_only=True)
    assert params.block_matmul_params(tied) == params.active_params(tied) - 1000 * 256
