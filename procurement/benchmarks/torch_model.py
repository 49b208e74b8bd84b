"""A decoder-only transformer of a workload spec's shape, for the benchmark runner.

The block mirrors Llama-style models (RMSNorm, grouped-query attention, SwiGLU or plain MLP) so the
measured step time and memory move with the same dimensions the sizing engine reads. LoRA adapters
replace the named linears for lora/qlora specs; the base weights are frozen. QLoRA's NF4 storage is not
emulated (no bitsandbytes here): the run records `base_weights_dtype` so the import can say so.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn
from torch.nn import functional as F
from torch.utils.checkpoint import checkpoint


@dataclass(frozen=True)
class Shape:
    num_layers: int
    hidden_size: int
    num_attention_heads: int
    num_key_value_heads: int
    intermediate_size: int
    vocab_size: int
    gated_mlp: bool = True

    @property
    def head_dim(self) -> int:
        return self.hidden_size // self.num_attention_heads


# On a machine without a GPU the runner uses this shape, so the whole path runs in seconds in CI.
TINY_CPU_SHAPE = Shape(
    num_layers=2,
    hidden_size=64,
    num_attention_heads=4,
    num_key_value_heads=2,
    intermediate_size=128,
    vocab_size=256,
)


class LoraLinear(nn.Module):
    """y = W x + (alpha / r) B A x with W frozen (Hu et al. 2021, arXiv:2106.09685)."""

    def __init__(self, base: nn.Linear, rank: int, alpha: float | None = None):
        super().__init__()
        self.base = base
        self.base.weight.requires_grad_(False)
        self.lora_a = nn.Linear(base.in_features, rank, bias=False)
        self.lora_b = nn.Linear(rank, base.out_features, bias=False)
        nn.init.zeros_(self.lora_b.weight)
        self.scale = (alpha or 2 * rank) / rank

    def forward(self, x):
        return self.base(x) + self.lora_b(self.lora_a(x)) * self.scale


class Block(nn.Module):
    def __init__(self, shape: Shape):
        super().__init__()
        d, kv = shape.hidden_size, shape.num_key_value_heads * shape.head_dim
        self.shape = shape
        self.attn_norm = nn.RMSNorm(d)
        self.mlp_norm = nn.RMSNorm(d)
        self.q_proj, self.k_proj, self.v_proj = (
            nn.Linear(d, d, bias=False),
            nn.Linear(d, kv, bias=False),
            nn.Linear(d, kv, bias=False),
        )
        self.o_proj = nn.Linear(d, d, bias=False)
        self.up_proj = nn.Linear(d, shape.intermediate_size, bias=False)
        self.down_proj = nn.Linear(shape.intermediate_size, d, bias=False)
        self.gate_proj = nn.Linear(d, shape.intermediate_size, bias=False) if shape.gated_mlp else None

    def _attention(self, x, cache):
        batch, length, _ = x.shape
        heads, kv_heads, head_dim = (
            self.shape.num_attention_heads,
            self.shape.num_key_value_heads,
            self.shape.head_dim,
        )
        q = self.q_proj(x).view(batch, length, heads, head_dim).transpose(1, 2)
        k = self.k_proj(x).view(batch, length, kv_heads, head_dim).transpose(1, 2)
        v = self.v_proj(x).view(batch, length, kv_heads, head_dim).transpose(1, 2)
        if cache is not None:
            if cache.get("k") is not None:
                k, v = torch.cat([cache["k"], k], dim=2), torch.cat([cache["v"], v], dim=2)
            cache["k"], cache["v"] = k, v
        repeat = heads // kv_heads
        k, v = k.repeat_interleave(repeat, dim=1), v.repeat_interleave(repeat, dim=1)
        causal = cache is None or length > 1
        out = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
        return self.o_proj(out.transpose(1, 2).reshape(batch, length, -1))

    def _mlp(self, x):
        up = self.up_proj(x)
        hidden = F.silu(self.gate_proj(x)) * up if self.gate_proj is not None else F.gelu(up)
        return self.down_proj(hidden)

    def forward(self, x, cache=None):
        x = x + self._attention(self.attn_norm(x), cache)
        return x + self._mlp(self.mlp_norm(x))


class DecoderModel(nn.Module):
    def __init__(self, shape: Shape, *, checkpointing: bool = False):
        super().__init__()
        self.shape, self.checkpointing = shape, checkpointing
        self.embed = nn.Embedding(shape.vocab_size, shape.hidden_size)
        self.layers = nn.ModuleList(Block(shape) for _ in range(shape.num_layers))
        self.norm = nn.RMSNorm(shape.hidden_size)
        self.lm_head = nn.Linear(shape.hidden_size, shape.vocab_size, bias=False)

    def forward(self, tokens, caches=None):
        x = self.embed(tokens)
        for index, layer in enumerate(self.layers):
            cache = caches[index] if caches is not None else None
            if self.checkpointing and self.training:
                x = checkpoint(layer, x, use_reentrant=False)
            else:
                x = layer(x, cache)
        return self.lm_head(self.norm(x))


def lora_apply(model: DecoderModel, *, rank: int, targets: tuple[str, ...]) -> int:
    """Freeze the model, wrap each targeted linear in a LoRA adapter; returns the trainable parameter count."""
    for parameter in model.parameters():
        parameter.requires_grad_(False)
    for layer in model.layers:
        for name in targets:
            base = getattr(layer, name, None)
            if isinstance(base, nn.Linear):
                setattr(layer, name, LoraLinear(base, rank))
    return sum(p.numel() for p in model.parameters() if p.requires_grad)


def parameter_count(model: nn.Module) -> int:
    return sum(p.numel() for p in model.parameters())


def training_flops_per_token(params: float, trainable_fraction: float) -> float:
    """6N for full training; LoRA skips the frozen weights' gradient: about 4N + 2N x trainable share."""
    return params * (4.0 + 2.0 * trainable_fraction) if trainable_fraction < 1 else 6.0 * params
