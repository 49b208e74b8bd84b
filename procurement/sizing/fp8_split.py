"""The 16-bit part of an fp8 training step: Transformer Engine runs only the block linears in fp8.

NVIDIA's fp8 recipe (Transformer Engine under NeMo, Megatron-Core and Megatron-Bridge; Intel's Gaudi port
of it under Megatron-DeepSpeed) casts the inputs of the transformer blocks' linear layers to fp8: QKV, the
attention projection, the MLP and the experts (te.Linear, LayerNormLinear, LayerNormMLP, GroupedLinear).
Two matmul groups stay in bf16:

- the attention core, softmax(Q K^T) V, run by the fused (flash) attention kernel in bf16: Transformer
  Engine's recipes default to fp8_dpa False (transformer_engine/common/recipe: DelayedScaling,
  Float8CurrentScaling, MXFP8BlockScaling), Megatron-Core's TransformerConfig to
  fp8_dot_product_attention False, and Megatron-Bridge's MixedPrecisionConfig presets keep that default;
- the output layer (LM head, vocabulary x hidden), a Megatron ColumnParallelLinear outside Transformer
  Engine's fp8 modules; the input embedding is a lookup and runs no matmul in either precision.

So with both peaks known the step's matmul time is linears / fp8 rate + (attention + head) / bf16 rate. The
engine's fitted fp8 efficiencies are the linears' efficiency; `time_factor` is the step's matmul time over
the time with every FLOP at the fp8 rate, which divides that efficiency. torchao float8 has its own split
(mfu.torchao_float8_speedup); a stated MFU is the spec's own and is not split.
"""

from __future__ import annotations

from procurement.sizing.throughput import (
    attention_context_tokens,
    attention_forward_flops_per_token,
    output_layer_flops_per_token,
    training_flops_per_token,
)

# the 16-bit dense rate over the fp8 one: 1 / 2 on every part with both peaks in the catalog (H100/H200
# 989.5 / 1,979, B200 2,250 / 4,500, GB200, Gaudi 2 432 / 865, MI300X 1,307 / 2,615)
SIXTEEN_BIT_RATE = 0.5


def applies(spec) -> bool:
    """fp8 training of a language model by Transformer Engine (the default fp8_recipe)."""
    return (
        spec.precision == "fp8"
        and spec.is_training
        and not spec.model.is_image
        and spec.fp8_recipe == "transformer_engine"
    )


def sixteen_bit_flops_per_token(spec) -> float:
    """The FLOPs a trained token spends in bf16 under fp8 training: the causal attention core (3 passes, 4 with
    full recomputation; throughput.attention_forward_flops_per_token) and the output layer's vocab x hidden
    matmul (6 FLOPs a weight, 4 for adapters, which compute no weight gradient of the frozen head; full
    recomputation does not rerun it: throughput.output_layer_flops_per_token). 0 where the split does not apply."""
    if not applies(spec):
        return 0.0
    model, full = spec.model, spec.gradient_checkpointing == "full"
    attention = (4.0 if full else 3.0) * attention_forward_flops_per_token(
        model, attention_context_tokens(spec)
    )
    return attention + output_layer_flops_per_token(spec)


def sixteen_bit_share(spec) -> float:
    """The bf16 FLOPs' share of a trained token's (training_flops_per_token); 0 where the split does not apply."""
    if not applies(spec):
        return 0.0
    return min(sixteen_bit_flops_per_token(spec) / training_flops_per_token(spec), 1.0)


def time_factor(spec) -> float:
    """The step's matmul time with the attention core and the head at the bf16 rate, over the time with every
    FLOP at the fp8 rate: 1 - share + share / SIXTEEN_BIT_RATE (Llama 3 8B at 8k: 1.18; Llama 2 70B at 4k:
    1.04). 1 where the split does not apply."""
    share = sixteen_bit_share(spec)
    return 1.0 - share + share / SIXTEEN_BIT_RATE


def text(spec) -> str:
    """The "speed: ..." sentence of a split fp8 estimate; "" where it does not apply."""
    if spec.mfu or not applies(spec):
        return ""
    return (
        f"speed: fp8 runs the block linears only; the attention core and the output layer "
        f"({sixteen_bit_share(spec):.0%} of the FLOPs) stay bf16 at half the fp8 rate, so the step takes "
        f"{time_factor(spec):.2f}x its all-fp8 time (Transformer Engine's defaults)"
    )
