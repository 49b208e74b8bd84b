"""Kernels an eager no-grad diffusers DiT forward launches, block by block in forward order (FLUX.1's
FluxTransformer2DModel, SD3 / SD3.5's SD3Transformer2DModel), for the eager step's launch queue
(image_model.eager_pass_seconds), as image_shapes counts a UNet's.

Counted from huggingface/diffusers v0.32.0 (the release [ORT-22986]'s benchmark_flux.sh pins), bf16, batch of
samples in one forward, no kernel for views, chunk, unsqueeze, p = 0 dropout or a same-dtype `.to`:
- AdaLayerNormZero / AdaLayerNormZeroSingle / AdaLayerNormContinuous (models/normalization.py 131-200, 334-339):
  silu of the conditioning vector, the modulation linear (a GEMM, counted below), layer_norm, 1 + scale, the
  multiply and the shift add: ADALN_KERNELS elementwise.
- RMSNorm (normalization.py 487-530, each of norm_q, norm_k, norm_added_q, norm_added_k): .to(float32), pow,
  mean, + eps, rsqrt, the multiply, .to(bf16), * weight: QK_RMSNORM_KERNELS.
- apply_rotary_emb (models/embeddings.py 1171-1217, use_real, unbind -1), on q and on k: -x_imag, stack,
  x.float(), * cos, x_rotated.float(), * sin, the add, .to(x.dtype): ROPE_KERNELS.
- Joint attention (models/attention_processor.py JointAttnProcessor2_0 1399-1470, FluxAttnProcessor2_0
  2254-2345): torch.cat of q, k and v over the two streams (3) and the heads' output copy
  (`.transpose(1, 2).reshape`, 1); single-stream attention: the copy only.
- A stream's tail after attention (models/attention.py JointTransformerBlock.forward 190-257,
  models/transformers/transformer_flux.py FluxTransformerBlock 136-190): the gate multiply, the residual add,
  norm2's layer_norm, 1 + scale, the multiply, the shift add, GELU (tanh), the gate multiply and the residual
  add: STREAM_TAIL_KERNELS. SD3's last block (context_pre_only) has no text tail.
- FluxSingleTransformerBlock (transformer_flux.py 79-103): AdaLayerNormZeroSingle, GELU, its attention, the
  cat of attention and MLP outputs, the gate multiply and the residual add.
So FLUX.1 joint block 10 + 32 + 3 + 16 + 1 + 18 = 80, single block 5 + 1 + 16 + 16 + 1 + 3 = 42 (dit51's counts
at v0.33.1, re-read at v0.32.0: the same code); SD3 joint block 10 + 3 + 1 + 18 = 32, its last 23; SD3.5 Large's
qk RMSNorms (qk_norm rms_norm) +32 a block. GEMMs a block are image_shapes.DIT_*_BLOCK_GEMMS (the FLOP model's;
the last SD3 block's 3 missing text linears are not taken off: 3 of ~3,000 kernels). Left out (a lower bound):
the per-forward embedders on tiny tensors (timestep / guidance / pooled projections, FluxPosEmbed's rotary
tables), and the copy + bias add F.linear runs on a non-contiguous stream slice at batch > 1 (SD3 under CFG:
~4 a block)."""

from __future__ import annotations

ADALN_KERNELS = 5
QK_RMSNORM_KERNELS = 8
ROPE_KERNELS = 8
JOINT_ATTENTION_KERNELS = 3 + 1
SINGLE_ATTENTION_KERNELS = 1
STREAM_TAIL_KERNELS = 9
SINGLE_TAIL_KERNELS = 1 + 1 + 1 + 1  # GELU, cat, gate multiply, residual add
# proj_out's AdaLayerNormContinuous (norm_out) and the forward's three embedding GEMMs (x_embedder,
# context_embedder, proj_out: image_shapes.dit_cost)
OUTPUT_KERNELS = ADALN_KERNELS + 3


def joint_block_kernels(denoiser: dict, text_tail: bool = True) -> int:
    """Elementwise kernels of one joint (two-stream) block."""
    qk = 4 * QK_RMSNORM_KERNELS if denoiser.get("qk_norm") else 0
    rope = 2 * ROPE_KERNELS if denoiser.get("rope") else 0
    tails = 2 if text_tail else 1
    return 2 * ADALN_KERNELS + qk + JOINT_ATTENTION_KERNELS + rope + tails * STREAM_TAIL_KERNELS


def single_block_kernels(denoiser: dict) -> int:
    """Elementwise kernels of one single-stream (FLUX.1) block."""
    qk = 2 * QK_RMSNORM_KERNELS if denoiser.get("qk_norm") else 0
    rope = 2 * ROPE_KERNELS if denoiser.get("rope") else 0
    return ADALN_KERNELS + qk + SINGLE_ATTENTION_KERNELS + rope + SINGLE_TAIL_KERNELS


def block_kernels(denoiser: dict) -> list[tuple[str, int]]:
    """(kind, elementwise kernels) of each block in forward order: the joint blocks, then the single ones.
    SD3 (no single blocks) runs its last joint block context_pre_only (SD3Transformer2DModel: `context_pre_only=
    i == num_layers - 1`, transformer_sd3.py 176); FLUX.1's joint blocks all keep the text tail."""
    joint, single = denoiser["joint_blocks"], denoiser["single_blocks"]
    blocks = [
        ("joint", joint_block_kernels(denoiser, text_tail=bool(single) or i < joint - 1))
        for i in range(joint)
    ]
    return blocks + [("single", single_block_kernels(denoiser))] * single
