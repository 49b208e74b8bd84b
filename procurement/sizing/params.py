"""Parameter counts from a model's shape: totals, active (MoE), per-layer, LoRA adapters.

Counts follow the Llama/Mistral/Qwen layout (q, k, v, o projections; gate/up/down MLP; two norms
per layer; a final norm; input embedding and, unless tied, an LM head); multi-head latent attention
(DeepSeek-V2/V3, Kimi K2) by its low-rank projections. A preset's published total (`params`) wins over
the formula where the two differ.
"""

from __future__ import annotations

from procurement.sizing.model_spec import LoraSpec, ModelSpec


def attention_params_per_layer(model: ModelSpec) -> int:
    if model.is_mla:
        return mla_attention_params_per_layer(model)
    h, hd = model.hidden_size, model.head_dim
    q_out, kv_out = model.num_attention_heads * hd, model.num_key_value_heads * hd
    bias = q_out + 2 * kv_out if model.attention_qkv_bias else 0
    return h * q_out + 2 * h * kv_out + q_out * h + bias


def mla_attention_params_per_layer(model: ModelSpec) -> int:
    """Multi-head latent attention's weights in one layer, as HF's DeepseekV3Attention holds them: q_a_proj
    (hidden x q_lora_rank) and its norm, q_b_proj (q_lora_rank x heads x qk_head_dim; without a q latent,
    q_proj hidden x heads x qk_head_dim), kv_a_proj_with_mqa (hidden x (kv_lora_rank + qk_rope_head_dim)) and
    its norm, kv_b_proj (kv_lora_rank x heads x (qk_nope_head_dim + v_head_dim)), o_proj (heads x v_head_dim x
    hidden); head_dim is qk_nope + qk_rope (192). DeepSeek-V3 (128 heads, config q_lora_rank 1536,
    kv_lora_rank 512, qk_nope 128, qk_rope 64, v 128): 187,107,328 a layer, where plain 128-head attention of
    head_dim 192 would be 704.6e6; Kimi K2 (64 heads) 101,124,096."""
    h, heads, qk = model.hidden_size, model.num_attention_heads, model.head_dim
    rope, q_lora, kv_lora = model.qk_rope_head_dim, model.q_lora_rank, model.kv_lora_rank
    if q_lora:
        query = h * q_lora + q_lora + q_lora * heads * qk
    else:
        query = h * heads * qk
    key_value = h * (kv_lora + rope) + kv_lora + kv_lora * heads * (qk - rope + model.v_head_dim)
    return query + key_value + heads * model.v_head_dim * h


def dense_mlp_params(model: ModelSpec, intermediate: int) -> int:
    matrices = 3 if model.gated_mlp else 2
    return matrices * model.hidden_size * intermediate


def moe_mlp_params(model: ModelSpec, experts: int) -> int:
    """An MoE layer's MLP with `experts` routed experts present, plus shared experts and the router."""
    per_expert = dense_mlp_params(model, model.moe_intermediate_size)
    return (experts + model.shared_experts) * per_expert + model.hidden_size * model.num_experts


def layer_counts(model: ModelSpec) -> tuple[int, int]:
    """(dense layers, MoE layers)."""
    if not model.is_moe:
        return model.num_layers, 0
    return model.dense_layers, model.num_layers - model.dense_layers


def embedding_params(model: ModelSpec) -> int:
    tables = 1 if model.tie_word_embeddings else 2
    return tables * model.vocab_size * model.hidden_size


def output_layer_params(model: ModelSpec) -> int:
    """The output projection's vocab x hidden weights (the tied table when the embeddings are tied)."""
    return model.vocab_size * model.hidden_size


def input_lookup_params(model: ModelSpec) -> int:
    """The input embedding table where it is not the output head (untied): a row lookup, no matmul,
    forward or backward; 0 when tied (the one table is the output head)."""
    return 0 if model.tie_word_embeddings else model.vocab_size * model.hidden_size


def block_matmul_params(model: ModelSpec) -> float:
    """The active parameters a token multiplies inside the blocks (the norms' few gains with them): a dense
    model's total less its embedding tables, an MoE's active_params less the output layer, which is counted
    on its own (output_layer_params)."""
    if not model.is_moe:
        return max(0.0, model.params - embedding_params(model))
    return max(0.0, active_params(model) - output_layer_params(model))


def mtp_matmul_params(model: ModelSpec) -> float:
    """The weights one token multiplies in the multi-token prediction modules (mtp_layers; DeepSeek-V3 sec.
    2.2: each module a transformer block, the projection M of 2h x h over the normed hidden state and next
    embedding, and the output head it shares with the main model, applied again): per module the last layer's
    active block (an MoE layer with its top-k and shared experts and router, or a dense one), 2 h^2 and
    vocab x hidden, as Megatron-LM's num_floating_point_operations counts them (megatron/training/training.py,
    mtp_num_layers: one more layer of the last layer's kind, '# MTP norms and proj' 2 h^2, the logit term x
    (mtp_num_layers + 1)). DeepSeek-V3: 187.1e6 + 9 x 44.04e6 + 1.8e6 + 102.8e6 + 926.7e6 = 1.614e9. 0 without
    MTP."""
    if not model.mtp_layers:
        return 0.0
    h = model.hidden_size
    return model.mtp_layers * (mtp_block_params(model) + 2 * h * h + output_layer_params(model))


def mtp_block_params(model: ModelSpec) -> float:
    """The active weights of one multi-token prediction module's transformer block: attention and the last
    layer's MLP (an MoE layer's top-k and shared experts and router, or a dense MLP)."""
    _, moe_layers = layer_counts(model)
    if moe_layers:
        mlp = moe_mlp_params(model, model.experts_per_token)
    else:
        mlp = dense_mlp_params(model, model.intermediate_size)
    return float(attention_params_per_layer(model) + mlp)


def mtp_params(model: ModelSpec) -> float:
    """The multi-token prediction modules' own weights (the embedding and output head are the main model's):
    each a block with all its experts, the 2h x h projection and three norms. DeepSeek-V3: 11.61e9 for its
    one module (its HF checkpoint's 14B MTP weights include copies of the embedding and head, 1.85e9)."""
    if not model.mtp_layers:
        return 0.0
    h = model.hidden_size
    _, moe_layers = layer_counts(model)
    if moe_layers:
        mlp = moe_mlp_params(model, model.num_experts)
    else:
        mlp = dense_mlp_params(model, model.intermediate_size)
    return float(model.mtp_layers * (attention_params_per_layer(model) + mlp + 2 * h * h + 4 * h))


def norm_params(model: ModelSpec) -> int:
    return (2 * model.num_layers + 1) * model.hidden_size


def count_params(model: ModelSpec, *, active_only: bool = False) -> int:
    """Total parameters from the shape (all experts, or only the active ones)."""
    dense_layers, moe_layers = layer_counts(model)
    experts = model.experts_per_token if active_only else model.num_experts
    attention = attention_params_per_layer(model) * model.num_layers
    mlp = (
        dense_mlp_params(model, model.intermediate_size) * dense_layers
        + moe_mlp_params(model, experts) * moe_layers
    )
    return attention + mlp + embedding_params(model) + norm_params(model)


def active_params(model: ModelSpec) -> float:
    """Parameters per token: the total for dense models; for MoE the weights a token multiplies: attention,
    dense layers, shared experts, the top-k routed experts, routers, norms and the output head, not the
    untied input embedding, a row lookup (input_lookup_params). DeepSeek's and OpenAI's convention:
    DeepSeek-V2-Lite 2.45e9 against its paper's 2.4B "activated" (arXiv:2405.04434 appendix B; with the
    input table 2.66e9, +10.9%), DeepSeek-V3 36.6e9 against 37B, gpt-oss-120b's 5.13B (its model card
    counts the unembedding, not the embedding). Mistral (Mixtral 12.9B), Qwen (Qwen3-30B-A3B 3.3B,
    Qwen3-235B-A22B 22.2B) and Moonshot (Kimi K2 32.6B) count the input table too: vocab x hidden more.
    A stated params_active is read in this definition."""
    if not model.is_moe:
        return model.params
    if model.params_active:
        return model.params_active
    return shape_active_params(model)


ACTIVE_PARAMS_CONVENTION = (
    "active parameters a token multiplies (input embedding lookup excluded; model cards of Mistral/Qwen/Kimi "
    "include it)"
)
# a stated params_active further than this from the shape's own count (this convention) is named in a warning
STATED_ACTIVE_TOLERANCE = 0.05


def shape_active_params(model: ModelSpec) -> float:
    """The MoE shape's own active count in active_params' convention (the stated params_active aside): the
    total's active share, less the untied input table."""
    share = count_params(model, active_only=True) / count_params(model)
    return model.params * share - input_lookup_params(model)


def stated_active_params_warning(model: ModelSpec) -> str:
    """A warning when a stated params_active is more than 5% from the shape's count in the product's convention
    (input lookup excluded), naming both counts and the card convention's (lookup included); "" otherwise."""
    if not model.is_moe or not model.params_active:
        return ""
    shape = shape_active_params(model)
    if shape <= 0 or abs(model.params_active / shape - 1) <= STATED_ACTIVE_TOLERANCE:
        return ""
    with_lookup = shape + input_lookup_params(model)
    card = abs(model.params_active / with_lookup - 1) <= STATED_ACTIVE_TOLERANCE
    reading = (
        f"it matches the count with the input embedding lookup ({with_lookup / 1e9:.2f}B), a model card's "
        f"convention: state {shape / 1e9:.2f}B"
        if card
        else f"with the input embedding lookup the shape has {with_lookup / 1e9:.2f}B"
    )
    return (
        f"params_active: the stated {model.params_active / 1e9:.2f}B active parameters differ by "
        f"{model.params_active / shape - 1:+.1%} from the model shape's {shape / 1e9:.2f}B ({ACTIVE_PARAMS_CONVENTION}); "
        f"{reading}. The stated count sets the FLOPs and block weights a token uses."
    )


def routed_expert_fraction(model: ModelSpec) -> float:
    """Share of the parameters in routed experts (what expert parallelism shards): the experts' count from
    the shape (plain MLPs, exact) over the model's total, a preset's published one where the formula differs
    (DeepSeek-V3: 58 x 256 x 3 x 7,168 x 2,048 = 653.9e9 of 671e9, 97.5%; with MLA counted by its low-rank
    projections the shape's count is the checkpoint's 671,026,404,352)."""
    _, moe_layers = layer_counts(model)
    if not moe_layers:
        return 0.0
    routed = moe_layers * model.num_experts * dense_mlp_params(model, model.moe_intermediate_size)
    return routed / max(float(model.params or count_params(model)), float(routed))


def quantizable_params(model: ModelSpec) -> float:
    """Linear weights inside the blocks; embeddings, LM head and norms stay 16-bit under quantization."""
    return max(0.0, model.params - embedding_params(model) - norm_params(model))


def layer_params(model: ModelSpec, expert_parallel: int = 1) -> float:
    """The largest transformer block (an MoE block if the model has any), with the routed experts one GPU
    holds under `expert_parallel` (num_experts / ep)."""
    dense_layers, moe_layers = layer_counts(model)
    attention = attention_params_per_layer(model) + 2 * model.hidden_size
    local_experts = model.num_experts // max(expert_parallel, 1) if moe_layers else 0
    biggest_mlp = max(
        dense_mlp_params(model, model.intermediate_size) if dense_layers else 0,
        moe_mlp_params(model, local_experts) if moe_layers else 0,
    )
    return float(attention + biggest_mlp)


def largest_layer_params(model: ModelSpec, expert_parallel: int = 1) -> float:
    """What ZeRO-3/FSDP must gather whole at once: the bigger of a block and the embedding table. Under
    expert parallelism a GPU gathers only its own experts: they are sharded over the EP ranks on the expert
    dimension and FSDP shards what is left over the expert-data-parallel ranks, so its all-gather rebuilds
    num_experts / ep of them (NVIDIA-NeMo/Automodel @cb976544 nemo_automodel/components/moe/parallelizer.py:
    ExpertParallel `distribute_tensor(param, device_mesh, [Shard(0)])`, 'Dim 0 of each parameter is sharded
    since that is the expert dimension', then `fully_shard(moe_module.experts, mesh=ep_shard_mesh)`)."""
    return max(layer_params(model, expert_parallel), float(model.vocab_size * model.hidden_size))


def linear_shapes(model: ModelSpec) -> dict[str, tuple[int, int, int]]:
    """LoRA target name -> (d_in, d_out, instances per model)."""
    h, hd = model.hidden_size, model.head_dim
    q_out, kv_out = model.num_attention_heads * hd, model.num_key_value_heads * hd
    dense_layers, moe_layers = layer_counts(model)
    mlp_instances = dense_layers + moe_layers * (model.num_experts + model.shared_experts)
    layers = model.num_layers
    shapes = {
        "q_proj": (h, q_out, layers),
        "k_proj": (h, kv_out, layers),
        "v_proj": (h, kv_out, layers),
        "o_proj": (q_out, h, layers),
        "qkv_fused": (h, q_out + 2 * kv_out, layers),
    }
    # Dense and expert MLPs share target names; an MoE model's experts use moe_intermediate_size.
    inter = model.moe_intermediate_size if moe_layers and not dense_layers else model.intermediate_size
    shapes.update(
        {
            "gate_proj": (h, inter, mlp_instances if model.gated_mlp else 0),
            "up_proj": (h, inter, mlp_instances),
            "down_proj": (inter, h, mlp_instances),
        }
    )
    return shapes


def lora_params(model: ModelSpec, lora: LoraSpec) -> int:
    """Adapter parameters: r x (d_in + d_out) per adapted linear (Hu et al. 2021)."""
    shapes = linear_shapes(model)
    return sum(lora.rank * (shapes[t][0] + shapes[t][1]) * shapes[t][2] for t in lora.targets)


def attended_tokens(model: ModelSpec, context_tokens: float, causal: bool = True) -> float:
    """Keys a query attends to, summed over the layers: a full layer the whole ``context_tokens`` (on
    average half under a causal mask), a sliding-window layer at most the last ``sliding_window`` tokens,
    which under a causal mask over a sequence of T >= w tokens averages w - w^2 / 2T (the first w tokens
    see fewer)."""
    context, window = float(context_tokens), float(model.sliding_window)
    windowed = model.sliding_window_layers if window else 0
    full = (model.num_layers - windowed) * (context / 2.0 if causal else context)
    if not windowed:
        return full
    if not causal:
        return full + windowed * min(context, window)
    per_layer = context / 2.0 if window >= context else window - window * window / (2.0 * context)
    return full + windowed * per_layer


def cached_tokens(model: ModelSpec, context_tokens: float) -> float:
    """Tokens of K/V a sequence of ``context_tokens`` keeps, averaged over the layers: a sliding-window
    layer keeps only the last ``sliding_window`` (vLLM and HF's sliding-window caches drop the rest)."""
    context = float(context_tokens)
    windowed = model.sliding_window_layers if model.sliding_window else 0
    if not windowed:
        return context
    kept = (model.num_layers - windowed) * context + windowed * min(context, float(model.sliding_window))
    return kept / model.num_layers


def kv_elems_per_token(model: ModelSpec) -> int:
    """K and V elements cached per token over all layers (MLA models cache one compressed head)."""
    if model.kv_elems_per_token_per_layer:
        per_layer = model.kv_elems_per_token_per_layer
    else:
        per_layer = 2 * model.num_key_value_heads * model.head_dim
    return per_layer * model.num_layers
