"""Selective recomputation by module (recompute_modules, Megatron-Core's --recompute-modules names) and the fused
SwiGLU (fused_swiglu): what each drops from a layer's saved activations, counted by hand, and the forward FLOPs
it adds to the step.

Shapes: DeepSeek-V3 inference/configs/config_671B.json (dim 7,168, 128 heads, q_lora_rank 1,536, kv_lora_rank
512, qk_nope 128 + qk_rope 64, v_head_dim 128, moe_inter_dim 2,048, 8 routed + 1 shared experts, 61 layers);
Llama 3 70B config.json (h 8,192, intermediate 28,672).
"""

import pytest

from procurement.sizing.bytes_model import layer_activation_terms, state_bytes
from procurement.sizing.memory import memory_breakdown_scalar
from procurement.sizing.spec import WorkloadSpecError, parse_workload_spec
from procurement.sizing.throughput import recomputed_forward_flops_per_token, training_flops_per_token

DEEPSEEK = {
    "task": "pretrain",
    "model": {"preset": "deepseek-v3"},
    "precision": "fp8",
    "seq_len": 4096,
    "gradient_checkpointing": "selective",
    "parallelism": {"gpus": 2048, "zero_stage": 1, "pipeline_parallel": 16, "expert_parallel": 64},
    "gradient_accumulation_steps": 120,
}
LLAMA_70B = {"task": "pretrain", "model": {"preset": "llama-3-70b"}, "precision": "fp8", "seq_len": 8192}


def kept(document: dict) -> float:
    return state_bytes(parse_workload_spec(document)).layer_bytes_per_token_no_scores


def test_it_counts_deepseek_v3_mla_layer_by_hand():
    # fp8 training: the linears' saved inputs are 1-byte casts, everything else 16-bit. Per token and layer:
    # down-projection input h = 7,168; latents 2 x (1,536 + 512 + 64) = 4,224; up-projection inputs 1,536 + 512
    # = 2,048; Q and K 2 x 128 x 192 each = 49,152 + 49,152, V 2 x 128 x 128 = 32,768 (qkv 131,072); attention
    # output 32,768; MLP input 7,168; I = 2,048 x (8 + 1) = 18,432: gate and up 4I = 73,728, SiLU output 2I =
    # 36,864, down input I = 18,432; norm inputs 4h = 28,672. Sum 342,144 (was 368,640 with V and O counted
    # 192 wide, as for MHA).
    terms = layer_activation_terms(parse_workload_spec(DEEPSEEK).model, 1.0, None, 0.5)
    assert terms["qkv"] == 131_072 and terms["attention_output"] == 32_768
    assert terms["mla_latents"] == 4_224 and terms["mla_up_inputs"] == 2_048
    assert sum(terms.values()) == 342_144
    assert kept(DEEPSEEK) == 342_144


def test_it_drops_what_each_module_discards():
    # DeepSeek-V3 sec. 3.2.3 recomputes RMSNorm and the MLA up-projections: 342,144 - 7,168 - 7,168 (the two norm
    # outputs, the linears' fp8 inputs) - 2,048 (up-projection inputs) - 131,072 (Q, K, V) = 194,688
    assert kept(DEEPSEEK | {"recompute_modules": ["layernorm", "mla_up_proj"]}) == 194_688
    # moe_act: the routed experts' 8 / 9 of the down-projection input, 18,432 x 8 / 9 = 16,384
    assert kept(DEEPSEEK | {"recompute_modules": ["layernorm", "mla_up_proj", "moe_act"]}) == 178_304
    # fused SwiGLU on top: the SiLU output 2I = 36,864
    both = DEEPSEEK | {"recompute_modules": ["layernorm", "mla_up_proj", "moe_act"], "fused_swiglu": True}
    assert kept(both) == 141_440
    # shared_experts: the shared expert's 1 / 9 of gate/up, SiLU and down (73,728 + 36,864 + 18,432) / 9 = 14,336
    assert kept(DEEPSEEK | {"recompute_modules": ["shared_experts"]}) == 342_144 - 14_336
    # moe: the whole MLP (7,168 + 129,024) for its 16-bit input 2h = 14,336
    assert kept(DEEPSEEK | {"recompute_modules": ["moe"]}) == 342_144 - 7_168 - 129_024 + 14_336


def test_it_keeps_selectives_old_meaning_by_default():
    spec = parse_workload_spec(DEEPSEEK)
    assert spec.recompute_modules == ("core_attn",)
    assert parse_workload_spec(DEEPSEEK | {"gradient_checkpointing": "none"}).recompute_modules == ()
    # core_attn: the score matrix only; without flash attention a list without it keeps the scores
    eager = LLAMA_70B | {"gradient_checkpointing": "selective", "flash_attention": False}
    scores = memory_breakdown_scalar(parse_workload_spec(eager | {"recompute_modules": ["layernorm"]}), 8)
    no_scores = memory_breakdown_scalar(parse_workload_spec(eager | {"recompute_modules": ["core_attn"]}), 8)
    assert scores["activations_gib"] > no_scores["activations_gib"]


def test_the_fused_swiglu_drops_the_silu_output():
    # Llama 3 70B in fp8: 35h = 286,720 B a token and layer; SiLU's output 2 x 28,672 = 57,344 (7h)
    assert kept(LLAMA_70B) == 286_720
    assert kept(LLAMA_70B | {"fused_swiglu": True}) == 286_720 - 57_344


def test_it_adds_the_recomputed_forward_flops():
    # mla_up_proj: q up 1,536 x 128 x 192 + kv up 512 x 128 x (128 + 128) = 54,525,952 weights a layer; forward
    # 2 FLOPs a weight and token over 61 layers: 6,652,166,144 a token
    spec = parse_workload_spec(DEEPSEEK | {"recompute_modules": ["layernorm", "mla_up_proj"]})
    assert recomputed_forward_flops_per_token(spec) == 2 * 54_525_952 * 61 == 6_652_166_144
    assert training_flops_per_token(spec) - training_flops_per_token(parse_workload_spec(DEEPSEEK)) == (
        pytest.approx(6_652_166_144)
    )
    # shared_experts: 58 MoE layers x 2 x 3 x 7,168 x 2,048 = 5,110,235,136
    shared = parse_workload_spec(DEEPSEEK | {"recompute_modules": ["shared_experts"]})
    assert recomputed_forward_flops_per_token(shared) == 58 * 2 * 3 * 7168 * 2048
    # element-wise modules cost nothing the engine counts
    cheap = parse_workload_spec(DEEPSEEK | {"recompute_modules": ["layernorm", "moe_act", "core_attn"]})
    assert recomputed_forward_flops_per_token(cheap) == 0.0


@pytest.mark.parametrize(
    ("document", "path"),
    [
        (
            DEEPSEEK | {"gradient_checkpointing": "full", "recompute_modules": ["layernorm"]},
            "recompute_modules",
        ),
        (
            LLAMA_70B | {"gradient_checkpointing": "selective", "recompute_modules": ["mla_up_proj"]},
            "recompute_modules",
        ),
        (
            LLAMA_70B | {"gradient_checkpointing": "selective", "recompute_modules": ["moe_act"]},
            "recompute_modules",
        ),
        # Qwen3-30B-A3B has no dense layer, so mlp (the dense layers' MLP only) would recompute nothing
        (
            DEEPSEEK | {"model": {"preset": "qwen3-30b-a3b"}, "recompute_modules": ["mlp"]},
            "recompute_modules",
        ),
        (DEEPSEEK | {"recompute_modules": ["attention"]}, "recompute_modules[0]"),
        (
            LLAMA_70B | {"model": {"preset": "llama-3-70b", "gated_mlp": False}, "fused_swiglu": True},
            "fused_swiglu",
        ),
    ],
)
def test_it_refuses_what_megatron_refuses(document, path):
    with pytest.raises(WorkloadSpecError) as error:
        parse_workload_spec(document)
    assert path in [problem[0] for problem in error.value.problems]


def test_the_breakdown_says_what_is_recomputed():
    from procurement.sizing.bytes_model import memory_assumptions

    notes = memory_assumptions(
        parse_workload_spec(DEEPSEEK | {"recompute_modules": ["layernorm", "mla_up_proj"]})
    )
    assert any("layernorm, mla_up_proj" in note for note in notes)
    assert not any("recomputation of" in note for note in memory_assumptions(parse_workload_spec(DEEPSEEK)))
    assert any(
        "fused SwiGLU" in note
        for note in memory_assumptions(parse_workload_spec(LLAMA_70B | {"fused_swiglu": True}))
    )


def test_full_recomputation_supersedes_the_modules():
    # The verdict's fallback (verdict.py) replaces selective by full on a spec that keeps its module list: whole
    # layers are then recomputed (8N), and the modules' FLOPs and dropped bytes must not count a second time.
    from dataclasses import replace

    stated = parse_workload_spec(DEEPSEEK | {"recompute_modules": ["layernorm", "mla_up_proj"]})
    full = replace(stated, gradient_checkpointing="full")
    plain_full = replace(parse_workload_spec(DEEPSEEK), gradient_checkpointing="full")
    assert recomputed_forward_flops_per_token(full) == 0.0
    assert training_flops_per_token(full) == training_flops_per_token(plain_full)
    assert state_bytes(full).layer_bytes_per_token_no_scores == 342_144


def test_it_recomputes_only_the_dense_layers_mlp_of_an_moe_model():
    """Megatron-Core transformer_layer.py: '"mlp" in recompute_modules: if not isinstance(self.mlp, MoELayer):
    self.recompute_mlp = True'. DeepSeek-V3's first_k_dense_replace 3 layers of 18,432-wide SwiGLU MLP, as
    NVIDIA's H100 recipe states (Megatron-Bridge @fa0315ae scripts/performance/run_script.py: recompute_modules
    ["mla_up_proj", "mlp"]): 2 x 3 x 7,168 x 18,432 x 3 FLOPs a token, nothing for the 58 MoE layers."""
    spec = parse_workload_spec(DEEPSEEK | {"recompute_modules": ["mlp"]})
    assert recomputed_forward_flops_per_token(spec) == pytest.approx(2 * 3 * 7168 * 18432 * 3)
