"""Parameters, FLOPs and activation elements of image networks, counted from their shapes.

One `Cost` per network and input size, per sample. Counting rules (stated so they can be checked):

- Linear and convolution weights cost one multiply-add (MAC, 2 FLOPs) per weight per position they
  slide over; attention adds QK^T and AV: 2 x N x M x C MACs for N queries over M keys of width C.
- Saved activations (training, no recomputation) are the tensors autograd keeps, in elements per
  sample: a ResNet block keeps 3 x in + 3 x out per position (GroupNorm, SiLU and conv inputs); a
  transformer block keeps ~28 x C per token in a UNet (norms, q/k/v, attention output, cross-attention,
  GEGLU's 8C projection and 4C product) and 20 x h per token in a DiT; eager attention adds the softmax
  output (heads x N x M) that flash/SDPA kernels never store. Checkpointing keeps each block's input
  and recomputes one block at a time (the largest block's saved elements are the recompute peak).
- The UNet walk follows diffusers' UNet2DConditionModel: conv_in, per level `layers_per_block` ResNets
  (each followed by a Transformer2D where the level has attention) and a stride-2 downsampler, a mid
  block (ResNet, Transformer2D, ResNet), then per level `layers_per_block + 1` ResNets over the
  concatenated skip connections, an upsampler, conv_out. The VAE decoder walk follows AutoencoderKL.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field


@dataclass
class Cost:
    params: float = 0.0
    macs: float = 0.0  # per sample, per forward
    saved: float = 0.0  # activation elements kept for backward, per sample
    checkpoint_inputs: float = 0.0  # elements kept with full recomputation (block inputs)
    largest_block_saved: float = 0.0  # recompute peak with checkpointing
    eager_scores_saved: float = 0.0  # softmax elements kept by eager attention (all layers)
    largest_scores: float = 0.0  # one attention's softmax elements (eager inference transient)
    norm_inputs: float = 0.0  # LayerNorm inputs among `saved` (a ViT's residual stream; fp32 under autocast)
    attention_macs: float = 0.0  # the QK^T and AV share of `macs` (what an attention kernel computes)
    conv_macs: float = 0.0  # the convolutions' share of `macs` (cuDNN: TF32 under fp32 by default)
    # elements the convolutions read (input) and write (output) per sample, one forward (convnets only:
    # image_model.nchw_transpose_bytes_per_sample)
    conv_io: float = 0.0
    # convolution weights by kernel (4-D tensors: an optimizer that factors by shape, Adafactor, keeps
    # state in proportion to them; image_model.factored_conv_state_bytes); UNet denoisers only
    conv3x3_params: float = 0.0
    conv1x1_params: float = 0.0
    forward_peak: float = 0.0  # live elements of a no-grad forward (skips + largest working set)
    blocks: int = 0
    tokens: float = 0.0  # rows every weight multiplies per sample (transformers; 0: MACs per weight)
    notes: list[str] = field(default_factory=list)
    # eager no-grad forward, per block: (elementwise/normalization kernels, elements they write and read
    # per sample); UNet denoisers and ResNets (image_model.eager_launch_seconds_per_image)
    launches: list[tuple[float, float]] = field(default_factory=list)
    launches_fixed: float = 0.0  # kernels per forward on tiny tensors (time embedding, stem, output head)
    # convolution, linear and attention kernels of the same forward (the FLOP model's; UNets only)
    gemm_kernels: float = 0.0
    linear_outputs: float = 0.0  # elements the per-token linears write per sample (DiTs only)
    output_linear_macs: float = 0.0  # proj_out's share of `macs` (the DiT's last linear; DiTs only)
    # torch.autocast over a 16-bit UNet (image.autocast; UNets only): bytes its fp32 GroupNorm / LayerNorm
    # chains move beyond the 16-bit forward's, per sample, and the cast kernels they add per forward
    # (AUTOCAST_* below); the score casts are image_model's (eager attention only)
    autocast_norm_bytes: float = 0.0
    autocast_kernels: float = 0.0
    attentions: int = 0  # attention calls of one forward (self and cross; UNets only)
    # running totals at the end of each unit in forward order (Cost.launch; UNets only): macs, attention_macs,
    # saved, eager_scores_saved, autocast_norm_bytes, kernels (GEMM + elementwise), autocast_kernels, attentions.
    # image_model.eager_step_units turns them into each unit's kernels and GPU time (the host-GPU critical path)
    unit_marks: list[tuple[float, ...]] = field(default_factory=list)

    def launch(self, kernels: float, elements: float) -> None:
        """Close one unit of the forward (a ResNet, a Transformer2D's norm and projections, a transformer block,
        a resampler, a skip concatenation), called after the unit's other counts: its elementwise kernels, and
        the running totals at that point (unit_marks), so the forward's order is kept."""
        self.launches.append((kernels, elements))
        self.unit_marks.append(
            (
                self.macs,
                self.attention_macs,
                self.saved,
                self.eager_scores_saved,
                self.autocast_norm_bytes,
                self.gemm_kernels + sum(count for count, _ in self.launches),
                self.autocast_kernels,
                float(self.attentions),
            )
        )

    def block(self, params, macs, saved, block_input, scores=0.0, attention_macs=0.0, conv=False) -> None:
        self.params += params
        self.macs += macs
        self.conv_macs += macs if conv else 0.0
        self.attention_macs += attention_macs
        self.saved += saved
        self.checkpoint_inputs += block_input
        self.largest_block_saved = max(self.largest_block_saved, saved)
        self.eager_scores_saved += scores
        self.largest_scores = max(self.largest_scores, scores)
        self.blocks += 1


def _resnet(cost: Cost, c_in: int, c_out: int, positions: float, time_dim: int) -> None:
    shortcut = c_in * c_out if c_in != c_out else 0
    conv = 9 * c_in * c_out + 9 * c_out * c_out + shortcut
    cost.conv3x3_params += 9 * c_in * c_out + 9 * c_out * c_out
    cost.conv1x1_params += shortcut
    params = conv + time_dim * c_out + 2 * (c_in + c_out) * 2 + 3 * c_out  # time proj, norms, biases
    cost.block(params, conv * positions, (3 * c_in + 3 * c_out) * positions, c_in * positions, conv=True)
    # norm1 over the input, norm2 over conv1's output, each followed by a SiLU and a convolution
    cost.autocast_norm_bytes += AUTOCAST_RESNET_NORM_BYTES * (c_in + c_out) * positions
    cost.autocast_kernels += 2 * AUTOCAST_NORM_KERNELS
    cost.gemm_kernels += 3 + (
        1 if shortcut else 0
    )  # conv1, conv2, the time-embedding linear (+ 1x1 shortcut)
    cost.launch(RESNET_KERNELS + (1 if shortcut else 0), (3 * c_in + 3 * c_out) * positions)


def _unet_transformer(
    cost: Cost, channels: int, heads: int, depth: int, tokens: float, context: int, context_dim: int
) -> None:
    c = channels
    per_block = 4 * c * c + 2 * c * c + 2 * context_dim * c + 12 * c * c  # self, cross q/o, cross k/v, GEGLU
    # proj_in / proj_out and the GroupNorm around the stack, counted once per Transformer2D
    cost.params += 2 * c * c + 2 * c
    cost.macs += 2 * c * c * tokens
    cost.autocast_norm_bytes += AUTOCAST_PROJ_IN_NORM_BYTES * c * tokens
    cost.autocast_kernels += AUTOCAST_NORM_KERNELS
    cost.gemm_kernels += 2  # proj_in, proj_out
    cost.launch(TRANSFORMER2D_KERNELS, 6 * c * tokens)  # GroupNorm in/out, layout copies, residual
    for _ in range(depth):
        attention = 2 * tokens * tokens * c + 2 * tokens * context * c  # self and cross scores and values
        macs = (18 * c * c) * tokens + 2 * context_dim * c * context + attention
        scores = heads * tokens * (tokens + context)
        cost.block(per_block, macs, 28 * c * tokens, c * tokens, scores, attention)
        cost.autocast_norm_bytes += AUTOCAST_BLOCK_NORM_BYTES * c * tokens
        cost.autocast_kernels += AUTOCAST_BLOCK_KERNELS
        cost.attentions += 2
        cost.gemm_kernels += TRANSFORMER_BLOCK_GEMMS
        cost.launch(TRANSFORMER_BLOCK_KERNELS, 28 * c * tokens)


# Live elements per channel per token while a UNet transformer block's feed-forward runs (diffusers
# Transformer2DModel + BasicTransformerBlock + GEGLU, v0.11.0 attention.py and @58eb52c0 attention.py
# BasicTransformerBlock.forward; unet_forward_peak): the
# Transformer2D's residual, the block's input (held by its caller), norm2's output (the block's
# norm_hidden_states, still bound; later versions keep attn2's attn_output bound instead), the sum after
# cross-attention and norm3's output (C each), then GEGLU's 8C projection (its two halves are views),
# gelu(gate) (4C) and the product (4C) before the 8C is freed.
UNET_TRANSFORMER_LIVE = 21

# Elementwise and normalization kernels an eager no-grad diffusers UNet forward launches per block (the
# convolutions, linears and the SDPA kernel are the FLOP model's; bias adds fused into addmm are not
# kernels). Counted from diffusers' code: ResnetBlock2D: two GroupNorms (PyTorch's CUDA group_norm runs 3
# kernels: moments, fused parameters, apply), three SiLUs (norm1, time embedding, norm2), two conv bias
# adds, the time-embedding add, the residual add and the output_scale_factor division = 14 (+1: the 1x1
# shortcut's bias). BasicTransformerBlock: three LayerNorms, per attention (self, cross) the heads-to-
# sequence copy after SDPA, the rescale_output_factor division and the residual add (2 x 3), GEGLU's gelu
# and product and the feed-forward residual = 12. Transformer2DModel around them: GroupNorm (3), proj_in's
# bias, the NCHW -> tokens copy, proj_out's bias, the copy back and the residual = 8. Downsample2D: its
# conv's bias; Upsample2D: the interpolation and the bias; up blocks: one torch.cat per ResNet.
RESNET_KERNELS = 14

# torch.autocast('cuda') over a UNet whose weights are already 16-bit (image.autocast: fp16 weights under
# autocast, the lambda-diffusers 'half' benchmark and early webuis' default), counted from the op lists of
# PyTorch's aten/src/ATen/autocast_mode.cpp as they stand from 1.10 through 2.x (the 2022 stack is 1.12 / 1.13):
# group_norm, layer_norm and native_layer_norm are `fp32` ops (every 16-bit input cast to float32 first, the
# output float32); conv2d, linear, matmul, bmm and baddbmm are `lower_precision_fp` ops (a float32 input cast
# back to 16 bits); softmax is `fp32_set_opt_dtype` (the 16-bit scores read, float32 probabilities written:
# at::softmax's half_to_float path). gelu: the copies in the 1.10+ layout (lower_precision_fp, DeviceType::CUDA,
# the AutocastCPU list beside it; stored pytorch forks, find_string ids 1310945309 and 266950229) list no gelu for
# CUDA, nor does the 2.x KERNEL_CUDA layout (id 28549648: softplus then layer_norm); the 1.6-1.9 layout (fp16 / fp32 policies, Scalar by value; id
# 64284162) lists it as fp32 (its removal: pytorch/pytorch PR #59639, 2021-06). So GEGLU's gelu stays 16-bit on
# every image.runtime (PyTorch >= 1.12 stacks); a torch <= 1.9 run would add GEGLU's gate casts, not counted. Other ops (SiLU, adds, copies) run in their inputs' dtype. Bytes
# an element beyond the all-16-bit forward:
#   a norm: the cast of its input (read 2, write 4) and its own passes in float32 (group_norm's CUDA kernel
#   reads the input twice, moments then apply, and writes once: +2 B each; LayerNorm counted alike): 12;
#   a SiLU after it (ResNet norm1 / norm2, conv_norm_out) in float32: read and write +2 each: 4;
#   each 16-bit consumer of the float32 output casts it again (read 4, write 2): 6 per consumer.
# ResNet norm + SiLU + conv: 12 + 4 + 6 = 22. Transformer2D's GroupNorm + proj_in: 12 + 6 = 18. A
# BasicTransformerBlock (diffusers 0.3-0.4 attention.py; later releases alike): norm1 feeds to_q, to_k and to_v
# (self-attention: three casts, autocast caches no activation casts) 12 + 18, norm2 feeds to_q 18, norm3 the
# GEGLU proj 18: 66. The scores' casts (image_model.AUTOCAST_SCORE_BYTES) are counted where eager attention
# writes them.
AUTOCAST_NORM_BYTES = 12.0
AUTOCAST_CONSUMER_CAST_BYTES = 6.0
AUTOCAST_SILU_BYTES = 4.0
AUTOCAST_RESNET_NORM_BYTES = AUTOCAST_NORM_BYTES + AUTOCAST_SILU_BYTES + AUTOCAST_CONSUMER_CAST_BYTES
AUTOCAST_PROJ_IN_NORM_BYTES = AUTOCAST_NORM_BYTES + AUTOCAST_CONSUMER_CAST_BYTES
AUTOCAST_BLOCK_NORM_BYTES = 3 * AUTOCAST_NORM_BYTES + (3 + 1 + 1) * AUTOCAST_CONSUMER_CAST_BYTES
# Cast kernels autocast launches: a norm casts its input, weight and bias (16-bit parameters, never cached:
# the cast cache keeps only float32 leaves going to 16 bits) and its consumer casts the output: 4; a
# BasicTransformerBlock's three LayerNorms 3 x 3 plus 3 + 1 + 1 consumer casts: 14 (the probabilities' cast
# a self- or cross-attention adds is image_model's, with the scores).
AUTOCAST_NORM_KERNELS = 4.0
AUTOCAST_BLOCK_KERNELS = 3 * 3.0 + (3 + 1 + 1)
# Its matmul kernels: per attention q, k, v, out and the SDPA kernel (x 2: self and cross), GEGLU's proj and
# the feed-forward's output linear = 12.
TRANSFORMER_BLOCK_GEMMS = 12
TRANSFORMER_BLOCK_KERNELS = 12
TRANSFORMER2D_KERNELS = 8
# Time embedding (sinusoid: arange, exp, mul, sin, cos, cat; linear-SiLU-linear), conv_in's bias and the
# output head (GroupNorm 3, SiLU, conv_out's bias): ~16 per forward on tensors too small to matter.
UNET_FIXED_KERNELS = 16


def unet_forward_peak(channels: list, attention: list, positions: list, per_level: int) -> float:
    """Live elements per sample at the peak of a no-grad UNet2DConditionModel forward, traced through
    diffusers' up path, where the most is held at once (v0.11.0 and later: unet_2d_condition.py forward,
    unet_2d_blocks.py CrossAttnUpBlock2D / UpBlock2D, attention.py Transformer2DModel and
    BasicTransformerBlock). While an up block runs, its caller keeps the block's input (`sample`, passed as
    hidden_states: the level below's channels, upsampled, or the mid block's output at the lowest level)
    and the level's skip tuple (`res_samples`, passed as res_hidden_states_tuple: per_level + 1 skips, the
    first from conv_in at the top level or from the level above's downsampler elsewhere), whatever the block
    has consumed. Inside it, the largest working set is either a transformer block's feed-forward
    (UNET_TRANSFORMER_LIVE x C per token) or the first ResNet (resnet_working over the concatenation of
    the block's input with the tuple's last skip, the same count as the VAE decoder's ResNets)."""
    peak = 0.0
    last = len(channels) - 1
    for level, c in enumerate(channels):
        block_input = channels[min(level + 1, last)]
        first_skip = channels[level - 1] if level > 0 else c
        skips = first_skip + per_level * c
        resnet = resnet_working(block_input + c, c)  # the first ResNet, over the concatenation
        working = max(UNET_TRANSFORMER_LIVE * c if attention[level] else 0, resnet)
        peak = max(peak, (block_input + skips + working) * positions[level])
    return peak


def unet_cost(config: dict, latent_side: int, context_tokens: int) -> Cost:
    cost = Cost()
    channels = config["block_out_channels"]
    attention, depth, heads = config["attention"], config["transformer_layers"], config["heads"]
    per_level, time_dim = config["layers_per_block"], config["time_embed_dim"]
    context_dim = config["cross_attention_dim"]
    in_ch = config["in_channels"]
    positions = [float(latent_side * latent_side) / 4**level for level in range(len(channels))]
    # time embedding (320 -> 1280 -> 1280) and SDXL's added text/time embedding
    cost.params += (
        channels[0] * time_dim + time_dim * time_dim + config.get("addition_embed_dim", 0) * time_dim
    )
    cost.params += time_dim * time_dim
    cost.params += 9 * in_ch * channels[0] + 9 * channels[0] * in_ch
    cost.conv3x3_params += 9 * in_ch * channels[0] * 2  # conv_in and conv_out
    cost.macs += (9 * in_ch * channels[0] * 2) * positions[0]
    cost.conv_macs += (9 * in_ch * channels[0] * 2) * positions[0]  # conv_in and conv_out
    skips = [channels[0]]
    c_prev = channels[0]
    for level, c in enumerate(channels):
        for _ in range(per_level):
            _resnet(cost, c_prev, c, positions[level], time_dim)
            c_prev = c
            if attention[level]:
                _unet_transformer(
                    cost, c, heads[level], depth[level], positions[level], context_tokens, context_dim
                )
            skips.append(c)
        if level < len(channels) - 1:
            cost.conv3x3_params += 9 * c * c
            cost.block(
                9 * c * c + c,
                9 * c * c * positions[level + 1],
                c * positions[level],
                c * positions[level],
                conv=True,
            )
            cost.gemm_kernels += 1
            cost.launch(1, c * positions[level + 1])  # the conv's bias
            skips.append(c)
    last = len(channels) - 1
    _resnet(cost, c_prev, c_prev, positions[last], time_dim)
    _unet_transformer(cost, c_prev, heads[last], depth[last], positions[last], context_tokens, context_dim)
    _resnet(cost, c_prev, c_prev, positions[last], time_dim)
    for level in reversed(range(len(channels))):
        c = channels[level]
        for _ in range(per_level + 1):
            skip = skips.pop()
            cost.launch(1, (c_prev + skip) * positions[level])  # torch.cat of the skip connection
            _resnet(cost, c_prev + skip, c, positions[level], time_dim)
            c_prev = c
            if attention[level]:
                _unet_transformer(
                    cost, c, heads[level], depth[level], positions[level], context_tokens, context_dim
                )
        if level > 0:
            cost.conv3x3_params += 9 * c * c
            cost.block(
                9 * c * c + c,
                9 * c * c * positions[level - 1],
                c * positions[level - 1],
                c * positions[level],
                conv=True,
            )
            cost.gemm_kernels += 1
            cost.launch(2, 2 * c * positions[level - 1])  # the interpolation and the conv's bias
    cost.forward_peak = unet_forward_peak(channels, attention, positions, per_level)
    cost.launches_fixed = UNET_FIXED_KERNELS
    # conv_norm_out, a SiLU and conv_out over the first level's channels
    cost.autocast_norm_bytes += AUTOCAST_RESNET_NORM_BYTES * channels[0] * positions[0]
    cost.autocast_kernels += AUTOCAST_NORM_KERNELS
    cost.gemm_kernels += 2  # conv_in, conv_out
    return cost


# GEMM and attention kernels of a DiT block as diffusers runs it (models/transformers/transformer_flux.py and
# transformer_sd3.py at v0.30), counted as a UNet's are (every convolution and linear, its ResNets' time-embedding
# linears included, and each attention kernel): a joint block runs, per stream (image and text, each with its own
# weights), to_q, to_k, to_v, to_out and the two MLP linears (add_q_proj ... ff_context for the text) and its adaLN
# modulation linear (norm1, norm1_context), 14, plus one joint attention: 15. A single-stream block runs norm's
# modulation linear, to_q, to_k, to_v, proj_mlp and proj_out, plus its attention: 7.
DIT_JOINT_BLOCK_GEMMS = 15
DIT_SINGLE_BLOCK_GEMMS = 7


def dit_cost(config: dict, image_tokens: float, text_tokens: int) -> Cost:
    """MMDiT (SD3: joint blocks only) and Flux (joint + single-stream blocks): adaLN modulation is
    a linear on the conditioning vector (weights, no per-token FLOPs); every other weight runs per token
    of its own stream (joint blocks keep separate image and text weights)."""
    cost = Cost()
    h, heads, ratio = config["hidden"], config["heads"], config["mlp_ratio"]
    tokens = image_tokens + text_tokens
    cost.tokens = tokens
    per_stream = (4 + 2 * ratio) * h * h  # qkv + out + MLP
    for _ in range(config["joint_blocks"]):
        params = 2 * per_stream + 2 * 6 * h * h
        attention = 2 * tokens * tokens * h
        macs = per_stream * tokens + attention
        cost.block(params, macs, 20 * h * tokens, h * tokens, heads * tokens * tokens, attention)
        cost.gemm_kernels += DIT_JOINT_BLOCK_GEMMS
        cost.linear_outputs += (4 + 1 + ratio) * h * tokens  # q, k, v, out, MLP up (ratio x h) and down
    for _ in range(config["single_blocks"]):
        params = per_stream + 3 * h * h  # linear1 (h -> 3h + 4h) and linear2 (5h -> h), modulation 3h^2
        attention = 2 * tokens * tokens * h
        macs = per_stream * tokens + attention
        cost.block(params, macs, 20 * h * tokens, h * tokens, heads * tokens * tokens, attention)
        cost.gemm_kernels += DIT_SINGLE_BLOCK_GEMMS
        cost.linear_outputs += (3 + ratio + 1) * h * tokens  # linear1 (q, k, v, MLP up), linear2
    cost.gemm_kernels += 3  # patch embedding (x_embedder), context_embedder, proj_out
    patch_in = config["in_channels"] * config["patch"] ** 2
    cost.params += 2 * patch_in * h + 4096 * h + 768 * h + 2 * h * h  # patch embed/out, context/pooled proj
    cost.macs += 2 * patch_in * h * image_tokens + 4096 * h * text_tokens
    cost.output_linear_macs = patch_in * h * image_tokens  # proj_out: h -> patch_in a image token
    cost.forward_peak = tokens * (1 + 3 + 2 * ratio) * h  # input, q/k/v and the MLP hidden of one block
    return cost


def video_dit_cost(config: dict, tokens: float, text_tokens: int) -> Cost:
    """A single-stream video DiT (LTX-Video): per block self-attention (4h^2), cross-attention to the
    caption (q and out h^2 each per video token; k and v from the caption width per text token) and a
    4h GELU MLP (8h^2); adaLN scale/shift tables are per-block vectors."""
    cost = Cost()
    h, heads, ratio, caption = config["hidden"], config["heads"], config["mlp_ratio"], config["caption_dim"]
    per_token = (4 + 2 + 2 * ratio) * h * h
    cost.tokens = tokens
    kv = 2 * caption * h
    for _ in range(config["layers"]):
        attention = 2 * tokens * tokens * h + 2 * tokens * text_tokens * h
        macs = per_token * tokens + kv * text_tokens + attention
        scores = heads * tokens * (tokens + text_tokens)
        cost.block(per_token + kv + 6 * h, macs, 20 * h * tokens, h * tokens, scores, attention)
    cost.params += 2 * config["in_channels"] * h + 2 * caption * h + 7 * h * h  # patchify, caption, timestep
    cost.macs += 2 * config["in_channels"] * h * tokens + 2 * caption * h * text_tokens
    cost.forward_peak = tokens * (1 + 3 + 2 * ratio) * h
    return cost


def encoder_cost(config: dict, tokens: float) -> Cost:
    """A text encoder or ViT: pre-norm transformer blocks (Korthikanti-style saved elements)."""
    cost = Cost()
    h, ffn = config["hidden"], config["ffn"]
    q_width = config.get("heads", 1) * config.get("head_dim", h // config["heads"])
    mlp = (3 if config.get("gated") else 2) * h * ffn
    attn = 4 * h * q_width
    for _ in range(config["layers"]):
        attention = 2 * tokens * tokens * q_width
        macs = (attn + mlp) * tokens + attention
        saved = (4 * h + 5 * q_width + (3 if config.get("gated") else 2) * ffn) * tokens
        cost.block(attn + mlp + 4 * h, macs, saved, h * tokens, config["heads"] * tokens * tokens, attention)
        cost.norm_inputs += 2 * h * tokens  # the two pre-norms' inputs: the residual stream
    cost.params += (
        config.get("vocab", 0) * h + config.get("patch", 0) ** 2 * 3 * h + config.get("classes", 0) * h
    )
    cost.macs += config.get("patch", 0) ** 2 * 3 * h * tokens + config.get("classes", 0) * h
    cost.forward_peak = tokens * (2 * h + 2 * ffn)
    return cost


def vae_decoder_cost(config: dict, latent_side: int) -> Cost:
    """AutoencoderKL decoder from latents to pixels (conv_in, mid ResNet/attention/ResNet, up blocks
    of layers_per_block + 1 ResNets with nearest-neighbour upsampling + conv, conv_out)."""
    cost = Cost()
    channels = list(reversed(config["block_out_channels"]))
    positions = float(latent_side * latent_side)
    c = channels[0]
    cost.block(
        9 * config["latent_channels"] * c, 9 * config["latent_channels"] * c * positions, 0, 0, conv=True
    )
    _resnet(cost, c, c, positions, 0)
    cost.block(
        4 * c * c,
        4 * c * c * positions + 2 * positions * positions * c,
        6 * c * positions,
        c * positions,
        positions * positions,
        2 * positions * positions * c,
    )
    _resnet(cost, c, c, positions, 0)
    peak = 0.0
    for index, out in enumerate(channels):
        for _ in range(config["layers_per_block"] + 1):
            _resnet(cost, c, out, positions, 0)
            peak = max(peak, resnet_working(c, out) * positions)
            c = out
        if index < len(channels) - 1:
            # Upsample2D: the caller keeps the low-resolution input (c / 4 per new position) while the
            # nearest-neighbour copy (c) goes through a tensor-core conv: its NHWC copy, the NHWC output
            # and the output (CONV_NHWC_COPIES)
            peak = max(peak, (c / 4 + c + CONV_NHWC_COPIES * c + (1 + CONV_NHWC_COPIES) * c) * positions * 4)
            positions *= 4
            cost.block(9 * c * c, 9 * c * c * positions, c * positions, c * positions, conv=True)
    cost.block(9 * c * 3, 9 * c * 3 * positions, 0, 0, conv=True)
    cost.forward_peak = peak
    return cost


# A convolution on tensor cores over NCHW tensors (PyTorch's default layout) keeps an NHWC copy of its
# input and writes an NHWC output that is transposed back: cuDNN 'may use padding, folding, and
# NCHW-to-NHWC transformations to call the Tensor Core operations' (NVIDIA cuDNN docs, Legacy API,
# 'Convolution Functions: Data and Filter Formats'); the NCHW input 'must be transposed to NHWC before the
# convolution and transposed back to NCHW after' (NVIDIA's diagram in MosaicML Composer's channels_last
# method card). Two extra copies per conv (one of its input, one of its output) while it runs; cards and
# precisions without tensor-core convolutions (fp32 before Ampere) do not make them, so a no-grad peak
# counted with them is an upper bound there.
CONV_NHWC_COPIES = 1.0  # per tensor (input and output each)


def resnet_working(c_in: float, c_out: float) -> float:
    """Live elements per position of a no-grad diffusers ResnetBlock2D (GroupNorm, SiLU, conv twice,
    1x1 shortcut when c_in != c_out; the block input stays alive for the residual): the most of
    - conv1: input c_in, SiLU output c_in, its NHWC copy c_in, NHWC output c_out, output c_out;
    - conv2: input c_in, SiLU output c_out, its NHWC copy c_out, NHWC output and output 2 c_out;
    - shortcut: input c_in, its NHWC copy c_in, conv2's result c_out, NHWC output and output 2 c_out."""
    nhwc = CONV_NHWC_COPIES
    conv1 = 2 * c_in + nhwc * c_in + (1 + nhwc) * c_out
    conv2 = c_in + (1 + nhwc) * c_out + (1 + nhwc) * c_out
    shortcut = (c_in + nhwc * c_in + c_out + (1 + nhwc) * c_out) if c_in != c_out else 0.0
    return max(conv1, conv2, shortcut)


def vae_encoder_macs(config: dict, pixel_side: int) -> float:
    """The encoder mirrors the decoder with one ResNet fewer per level: scaled from the decoder walk."""
    latent = pixel_side // config["downsample"]
    per = config["layers_per_block"]
    return vae_decoder_cost(config, latent).macs * per / (per + 1)


def _divisible(value: float, by: int = 8) -> int:
    return int(math.ceil(value / by) * by)


def yolov8_cost(config: dict, side: int) -> Cost:
    """Ultralytics YOLOv8 (yolov8.yaml) at a square input: parameters and FLOPs are the published
    figures at 640 px scaled by pixel count; saved activations are walked from the yaml's layers: every
    Conv (conv + BatchNorm + SiLU) keeps 3 x its output channels per position, a C2f block its two
    convolutions, n bottlenecks (two half-width Convs and the residual sum) and the concatenation."""
    cost = Cost()
    d, w, cap = config["depth"], config["width"], config["max_channels"]

    def ch(c):
        return _divisible(min(c, cap) * w)

    def reps(n):
        return max(round(n * d), 1)

    pixels = float(side * side)

    def conv(c, stride):
        return 3 * c * pixels / stride**2

    def c2f(c, n, stride):
        return (3 * c + n * (3 * c + c / 2) + (2 + n) * c / 2 + 3 * c) * pixels / stride**2

    c1, c2, c3, c4, c5 = ch(64), ch(128), ch(256), ch(512), ch(1024)
    saved = conv(c1, 2) + conv(c2, 4) + c2f(c2, reps(3), 4) + conv(c3, 8) + c2f(c3, reps(6), 8)
    saved += conv(c4, 16) + c2f(c4, reps(6), 16) + conv(c5, 32) + c2f(c5, reps(3), 32)
    saved += (3 * c5 / 2 + 3 * c5 / 2 + 2 * c5 + 3 * c5) * pixels / 32**2  # SPPF
    saved += (c5 + c4) * pixels / 16**2 + c2f(c4, reps(3), 16)  # head: upsample + concat, C2f
    saved += (c4 + c3) * pixels / 8**2 + c2f(c3, reps(3), 8)
    saved += conv(c3, 16) + c2f(c4, reps(3), 16) + conv(c4, 32) + c2f(c5, reps(3), 32)
    box, cls = max(16, c3 // 4, 64), max(c3, 80)
    for stride in (8, 16, 32):  # Detect: two 3x3 Convs per branch, then 1x1 to 64 box and 80 class channels
        saved += (6 * box + 64 + 6 * cls + 80) * pixels / stride**2
    cost.params = config["params_published"]
    cost.macs = config["gflops_at_reference"] * 1e9 / 2 * pixels / 640**2
    cost.conv_macs = cost.macs  # every layer a Conv (C2PSA's q/k/v too); its attention matmuls are ~1%
    cost.saved = saved
    cost.checkpoint_inputs = saved  # Ultralytics has no activation checkpointing
    cost.largest_block_saved = 0.0
    cost.forward_peak = 4 * c1 * pixels / 4  # first stride-2 feature map and its copies
    return cost


def yolo11_cost(config: dict, side: int) -> Cost:
    """Ultralytics YOLO11 (yolo11.yaml) at a square input: published parameters and FLOPs at 640 px scaled
    by pixel count, saved activations walked from the yaml like yolov8_cost (every Conv keeps 3 x its
    output channels per position). C3k2 (a C2f of hidden width e x out) runs `n` Bottlenecks (half-width
    3x3 pair and the residual: 4.5 x hidden) or, in the m/l/x scales, C3k blocks (two 1x1 halves, two
    bottlenecks, concat and 1x1 out: 14 x hidden); C2PSA adds a position-sensitive attention block
    (~25 x its half width, plus heads x N^2 scores over the stride-32 grid); the Detect head's class
    branch uses depthwise Convs (DWConv x, Conv c3, DWConv c3, Conv c3)."""
    cost = Cost()
    d, w, cap = config["depth"], config["width"], config["max_channels"]
    c3k = config["c3k"]  # parse_model forces C3k blocks into every C3k2 of the m/l/x scales

    def ch(c):
        return _divisible(min(c, cap) * w)

    n = max(round(2 * d), 1)
    pixels = float(side * side)

    def conv(c, stride):
        return 3 * c * pixels / stride**2

    def c3k2(c, stride, deep=c3k, e=0.5):
        hidden = c * e
        inner = 14 * hidden if deep else 4.5 * hidden
        return (6 * hidden + n * inner + (2 + n) * hidden + 3 * c) * pixels / stride**2

    c1, c2, c3, c4, c5 = ch(64), ch(128), ch(256), ch(512), ch(1024)
    saved = conv(c1, 2) + conv(c2, 4) + c3k2(c3, 4, e=0.25) + conv(c3, 8) + c3k2(c4, 8, e=0.25)
    saved += conv(c4, 16) + c3k2(c4, 16, deep=True) + conv(c5, 32) + c3k2(c5, 32, deep=True)
    saved += (3 * c5 / 2 + 3 * c5 / 2 + 2 * c5 + 3 * c5) * pixels / 32**2  # SPPF
    half, grid = c5 / 2, pixels / 32**2
    saved += (6 * half + n * 25 * half + 2 * half + 3 * c5) * grid + n * (half // 64) * grid * grid  # C2PSA
    saved += (c5 + c4) * pixels / 16**2 + c3k2(c4, 16)  # head: upsample + concat, C3k2
    saved += (c4 + c3) * pixels / 8**2 + c3k2(c3, 8)
    saved += conv(c3, 16) + c3k2(c4, 16) + conv(c4, 32) + c3k2(c5, 32, deep=True)
    box, cls = max(16, c3 // 4, 64), max(c3, 80)
    for stride, x in ((8, c3), (16, c4), (32, c5)):
        saved += (6 * box + 64 + 3 * x + 9 * cls + 80) * pixels / stride**2
    cost.params = config["params_published"]
    cost.macs = config["gflops_at_reference"] * 1e9 / 2 * pixels / 640**2
    cost.conv_macs = cost.macs  # every layer a Conv (C2PSA's q/k/v too); its attention matmuls are ~1%
    cost.saved = saved
    cost.checkpoint_inputs = saved  # Ultralytics has no activation checkpointing
    cost.forward_peak = 4 * c1 * pixels / 4  # first stride-2 feature map and its copies
    return cost


def table_cost(config: dict, side: int, reference_side: int) -> Cost:
    """A network known only by its published parameters and FLOPs at a reference size."""
    cost = Cost(params=config["params_published"])
    cost.macs = config["gflops_at_reference"] * 1e9 / 2 * (side / reference_side) ** 2
    return cost


@dataclass(frozen=True)
class YoloConv:
    """One convolution of a YOLO network at a square input: channels in and out, kernel side, output
    positions per image, groups (a depthwise DWConv has groups = channels) and whether it reads the image
    (no input gradient is computed for it)."""

    c_in: int
    c_out: int
    kernel: int
    positions: float
    groups: int = 1
    first: bool = False
    downsample: bool = False  # a stride-2 Conv: its input has 4x its output's positions

    @property
    def input_positions(self) -> float:
        return self.positions * (4.0 if self.downsample else 1.0)

    @property
    def macs(self) -> float:
        return self.c_in // self.groups * self.c_out * self.kernel**2 * self.positions


def yolo_convs(config: dict, side: int) -> list[YoloConv]:
    """Every convolution of an Ultralytics detector, walked from its yaml at a square input, for the layer's
    GEMM shapes (image_model.yolo_step_fill, through detector_step_fill). kind yolov8 (ultralytics/cfg/models/v8/yolov8.yaml),
    yolo11 (ultralytics/cfg/models/11/yolo11.yaml, ultralytics/ultralytics@0a2ae50b) or yolov5 (the v6.0
    models/yolov5*.yaml: Conv 6x6 stem, C3, SPPF, anchor Detect; the detector training fit's network);
    channels make_divisible(min(c, max_channels) x width, 8), repeats max(round(n x depth), 1). Module
    bodies as in ultralytics/nn/modules/block.py: C2f = 1x1 to 2c, n Bottlenecks (two 3x3 c -> c), 1x1 out;
    C3k2 = C2f whose Bottleneck keeps its default e=0.5 (3x3 c -> c/2 -> c), or with c3k (every C3k2 of the
    m/l/x scales, parse_model) C3k blocks (1x1 halves twice, two 3x3 Bottlenecks, 1x1 out); YOLOv5's C3 =
    two 1x1 halves, n (1x1, 3x3) Bottlenecks, 1x1 out; SPPF = 1x1 to c/2, 1x1 from 4 x c/2; C2PSA =
    1x1 to 2 x c/2, n PSABlocks (qkv 1x1 c -> 2c, proj 1x1, 3x3 depthwise positional conv, FFN c -> 2c -> c),
    1x1 out; Detect (v8/11): per level two 3x3 box Convs to max(16, P3 / 4, 64) and a 1x1 to 64, a class
    branch of two 3x3 Convs to max(P3, 80) (YOLO11: DWConv, 1x1, DWConv, 1x1) and a 1x1 to 80 classes.
    The walk's FLOPs match the published totals within 0.6% for all ten v8/11 scales and YOLOv5s/m/l/x
    (tests/procurement/sizing/test_detector_gemm_fill.py); C2PSA's attention matmuls (about 0.2%: YOLO11m at
    640 px, 4 heads x 400^2 positions x (32 + 64) MACs = 0.12 of its 68.0 GFLOPs) are not convolutions and
    are left out."""
    kind = config["kind"]
    depth, width = config["depth"], config["width"]
    cap = config.get("max_channels") or math.inf
    pixels = float(side * side)
    convs: list[YoloConv] = []

    def ch(c):
        return _divisible(min(c, cap) * width)

    def reps(n):
        return max(round(n * depth), 1)

    def conv(c_in, c_out, k, stride, groups=1, first=False):
        convs.append(YoloConv(int(c_in), int(c_out), k, pixels / stride**2, groups, first))
        return int(c_out)

    def down(c_in, c_out, stride):  # Conv(c_out, 3, 2)
        convs.append(YoloConv(int(c_in), int(c_out), 3, pixels / stride**2, downsample=True))
        return int(c_out)

    def bottleneck(c, stride, hidden):  # Ultralytics Bottleneck(c, c, k=(3, 3)) at hidden = c x e
        conv(c, hidden, 3, stride)
        conv(hidden, c, 3, stride)

    def c2f(c_in, c_out, n, stride, e=0.5, c3k=False, yolo11=False):
        c = int(c_out * e)
        conv(c_in, 2 * c, 1, stride)
        for _ in range(n):
            if c3k:
                h = int(c * 0.5)
                conv(c, h, 1, stride)
                conv(c, h, 1, stride)
                for _ in range(2):
                    bottleneck(h, stride, h)
                conv(2 * h, c, 1, stride)
            else:
                bottleneck(c, stride, int(c * 0.5) if yolo11 else c)
        return conv((2 + n) * c, c_out, 1, stride)

    def c3(c_in, c_out, n, stride):  # YOLOv5 v6.0 C3
        h = int(c_out * 0.5)
        conv(c_in, h, 1, stride)
        conv(c_in, h, 1, stride)
        for _ in range(n):
            conv(h, h, 1, stride)
            conv(h, h, 3, stride)
        return conv(2 * h, c_out, 1, stride)

    def sppf(c_in, c_out, stride):
        conv(c_in, c_in // 2, 1, stride)
        return conv(4 * (c_in // 2), c_out, 1, stride)

    c1, c2, c3_, c4, c5 = ch(64), ch(128), ch(256), ch(512), ch(1024)
    if kind == "yolov5":
        x = conv(3, c1, 6, 2, first=True)
        x = c3(down(x, c2, 4), c2, reps(3), 4)
        p3 = x = c3(down(x, c3_, 8), c3_, reps(6), 8)
        p4 = x = c3(down(x, c4, 16), c4, reps(9), 16)
        x = sppf(c3(down(x, c5, 32), c5, reps(3), 32), c5, 32)
        h10 = x = conv(x, c4, 1, 32)
        h14 = x = conv(c3(x + p4, c4, reps(3), 16), c3_, 1, 16)
        o3 = x = c3(x + p3, c3_, reps(3), 8)
        o4 = x = c3(down(x, c3_, 16) + h14, c4, reps(3), 16)
        o5 = c3(down(x, c4, 32) + h10, c5, reps(3), 32)
        for c, stride in ((o3, 8), (o4, 16), (o5, 32)):
            conv(c, 3 * 85, 1, stride)  # 3 anchors x (80 classes + 5)
        return convs
    yolo11 = kind == "yolo11"
    c3k = bool(config.get("c3k"))
    x = down(conv(3, c1, 3, 2, first=True), c2, 4)
    if yolo11:
        n = reps(2)
        x = c2f(x, c3_, n, 4, e=0.25, c3k=c3k, yolo11=True)
        p3 = x = c2f(down(x, c3_, 8), c4, n, 8, e=0.25, c3k=c3k, yolo11=True)
        p4 = x = c2f(down(x, c4, 16), c4, n, 16, c3k=True, yolo11=True)
        x = sppf(c2f(down(x, c5, 32), c5, n, 32, c3k=True, yolo11=True), c5, 32)
        half = c5 // 2
        conv(c5, 2 * half, 1, 32)
        for _ in range(n):  # PSABlock
            conv(half, 2 * half, 1, 32)
            conv(half, half, 1, 32)
            conv(half, half, 3, 32, groups=half)
            conv(half, 2 * half, 1, 32)
            conv(2 * half, half, 1, 32)
        p5 = x = conv(2 * half, c5, 1, 32)
        h13 = x = c2f(x + p4, c4, n, 16, c3k=c3k, yolo11=True)
        o3 = x = c2f(x + p3, c3_, n, 8, c3k=c3k, yolo11=True)
        o4 = x = c2f(down(x, c3_, 16) + h13, c4, n, 16, c3k=c3k, yolo11=True)
        o5 = c2f(down(x, c4, 32) + p5, c5, n, 32, c3k=True, yolo11=True)
    else:
        x = c2f(x, c2, reps(3), 4)
        p3 = x = c2f(down(x, c3_, 8), c3_, reps(6), 8)
        p4 = x = c2f(down(x, c4, 16), c4, reps(6), 16)
        p5 = x = sppf(c2f(down(x, c5, 32), c5, reps(3), 32), c5, 32)
        h12 = x = c2f(x + p4, c4, reps(3), 16)
        o3 = x = c2f(x + p3, c3_, reps(3), 8)
        o4 = x = c2f(down(x, c3_, 16) + h12, c4, reps(3), 16)
        o5 = c2f(down(x, c4, 32) + p5, c5, reps(3), 32)
    box, cls = max(16, o3 // 4, 64), max(o3, 80)
    for c, stride in ((o3, 8), (o4, 16), (o5, 32)):
        conv(c, box, 3, stride)
        conv(box, box, 3, stride)
        conv(box, 64, 1, stride)
        if yolo11:
            conv(c, c, 3, stride, groups=c)
            conv(c, cls, 1, stride)
            conv(cls, cls, 3, stride, groups=cls)
            conv(cls, cls, 1, stride)
        else:
            conv(c, cls, 3, stride)
            conv(cls, cls, 3, stride)
        conv(cls, 80, 1, stride)
    return convs
