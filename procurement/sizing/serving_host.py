"""The host floor of a Hugging Face transformers eager decode loop (issue 26, stop 43; `inference.engine`), and the
serial host time a step of vLLM's V0 loop adds (`vllm_v0`, ttft48; engine_step_host_seconds).

`compiled` (the default): vLLM, TensorRT-LLM, SGLang and gpt-fast capture a decode step in CUDA graphs or
compiled kernels, so a step costs its GPU work (throughput.inference_throughput). `hf_eager`: transformers'
`generate` in eager PyTorch (Int4 / Int8 through AutoGPTQ's kernels) issues every kernel of every layer from
Python every token. Launches are asynchronous, so a step takes the longer of its GPU work and its host time (a
max, not a sum, the form of lora_host.py and image_model.host_excess_seconds). The host time is counted, not
fitted: kernels a layer x layers + the loop's own kernels, each at the host's rate a kernel, which the calling harness
sets (inference.generate_harness, host47b; GENERATE_HARNESS_HOST below): transformers' own generate (the default)
at hf_generate_kernel_host_s (16.99 us, the median of optimum's 2023 and the Qwen2.5 page's host-bound A100 rows), or,
where inference.transformers_release states the release (its own count), hf_generate_release_kernel_host_s (19.67 us,
the same rows over their recounted kernels: a count and its rate travel together, qwen2up2; a stated release with
any other harness is refused, fixtr);
auto_gptq: the host AutoGPTQ's README llama-7b fp16 A100 row measured, 31 us a kernel (eager_kernel_host_s); cause
not shown (a stated host-rate choice, fix47h). hfeager: a kernel the layer launches through Triton's Python launcher
(Qwen-1's flash-attn rotary, EAGER_LAYER_TRITON_LAUNCHES) costs TRITON_LAUNCH_HOST_SECONDS (62 us, published) instead;
fix51h: inference.rotary_backend states that rotary's code where it is not flash-attn >= 2.1.2's Triton kernel
(cuda_ext: flash-attn 2.0-2.1.1's CUDA extension, same count, no Triton; eager: Qwen-1's own, 10 more kernels a layer,
a flash-attn v1 run without its csrc builds; ROTARY_BACKEND_KERNELS).

Kernels of one decoder layer in decode (one token), read from Qwen-1's modeling_qwen.py (QWenBlock /
QWenAttention / QWenMLP, Qwen/Qwen-7B remote code, with flash-attn installed as the QwenLM/Qwen @03cd81f5
README's profiling ran it):
  2 RMSNorms, flash-attn's fused rms_norm: 2; rotary on q and k through flash-attn's apply_rotary_emb_func
  (t.float(), the rotary kernel, .type_as(t)): 3 each = 6; the KV cache's torch.cat for key and value: 2; the
  logn scaling of the query (use_logn_attn): 1; FlashSelfAttention's two torch.arange cu_seqlens: 2 and
  flash_attn_unpadded_func: 1; two residual adds: 2; F.silu and the gate multiply: 2. Non-GEMM: 18.
  Linears: one kernel each (a cuBLAS GEMV with its bias, or AutoGPTQ's exllama / cuda dequantize-and-multiply
  kernel for Int4 / Int8): c_attn (q, k, v fused), c_proj, w1, w2, mlp.c_proj = 5 (4 without a gated MLP).
  23 a layer: 0.713 ms at 31 us.
The loop's kernels a token, outside the layers (transformers GenerationMixin.sample with Qwen's generation
config, repetition_penalty 1.1 and top_p 0.8): embedding, final norm, LM head 3; the model's position ids and
attention mask 4; the repetition penalty (gather, compare, multiply, divide, where, scatter) 6; top-p (sort,
softmax, cumsum, compare, keep-min, scatter, masked_fill) 7; softmax and multinomial 3; the finished-sequence
update and its sync 4; the input ids' and the mask's concatenation 3: 30 (0.93 ms).

Kernels of transformers' own LlamaDecoderLayer in decode (model.eager_layer llama, the default: every dense
model but Qwen-1's), read from transformers v4.30.2 src/transformers/models/llama/modeling_llama.py (June 2023,
the release of AutoGPTQ's mid-2023 README speed table; 4.28-4.30 have the same layer), fp16, one token, no
flash-attn:
  LlamaRMSNorm (hidden_states.to(float32), pow(2), mean, + eps, rsqrt, multiply, weight *, .to(input_dtype)): 8,
  x2 = 16; LlamaRotaryEmbedding's cos_cached / sin_cached slices .to(dtype) (fp32 buffers): 2;
  apply_rotary_pos_emb: cos[position_ids], sin[position_ids] gathers 2, and for q and k: x * cos, rotate_half
  (neg, torch.cat), * sin, add = 5 each: 12; the KV cache's torch.cat for key and value: 2; attention:
  matmul(q, k^T), / sqrt(head_dim), + attention_mask, torch.tensor(finfo.min, device=...) and torch.max, softmax
  in float32, .to(dtype), matmul(weights, v): 8 (the transpose / reshape is a view at one token); two residual
  adds: 2; act_fn (SiLU) and the gate multiply: 2. Non-GEMM: 44. Linears: q_proj, k_proj, v_proj apart,
  o_proj, gate_proj, up_proj, down_proj = 7 (6 without a gated MLP). 51 a layer: 1.58 ms at 31 us; Llama-7B
  (32 layers) 1,662 kernels = 51.5 ms a token = 19.4 tokens/s, host-bound on any card. Not counted: AutoGPTQ's
  fused llama attention / MLP modules (its "fastest" Int4 setup), which cut the count; the product prices an
  Int4 layer as the fp16 one.
The quantized linears' library (inference.quant_kernel, issue 26 stop 44): `unstated` prices a quantized linear as
one kernel at the BF16 one's host cost. `exllama` (AutoGPTQ / transformers' GPTQ exllama 4-bit kernel, v1) takes
its host floor at QUANT_KERNEL_STEP_RATIO["exllama"] = 0.912 of the same loop's fp16 one, measured, not fitted:
huggingface/optimum @09638629 tests/benchmark/README.md, "GPTQ benchmark", Llama-2-13B-chat on one A100-SXM4-80GB,
transformers generate, prompt 512, 512 new tokens, batch 1: fp16 36.958 ms a token, GPTQ 4-bit group 128 exllama
33.711 (33.711 / 36.958 = 0.912), autogptq-cuda-old 46.44 (1.257, not sized). The ratio belongs to that run's stack,
which optimum @3ffebf99 states: AutoGPTQ 0.4.2, PyTorch 2.0.1, transformers 4.32. The same benchmark re-run at
optimum @4e987762 on AutoGPTQ 0.7.0 / PyTorch 2.2.0 / transformers 4.37.2 has exllama at 1.041 of fp16 at batch 1
(31.68 / 30.43 ms): the spec states the kernel, not its version, and the 0.912 is the 2023 stack's.
On the GPU (fix44q), exllama's GEMV runs each row of the step again: AutoGPTQ's q4_matmul_cuda
(autogptq_extension/exllama/cuda_func/q4_matmul.cu) launches blocks (width / 32, height, dim / block_size_z) with
THREADS_Y = 1, a set of blocks a row of x, each dequantizing and multiplying the whole quantized matrix; a decode
step's rows are its streams (concurrency). So the linears take max(one read of the weights, rows x
EXLLAMA_ROW_SECONDS_PER_WEIGHT x the quantized linear weights) (the weight reads of a row are inside its time) and
the step is max(that GPU work, the host floor x 0.912). From EXLLAMA_RECONS_ROWS = 8 rows up (AutoGPTQ 0.4's
exllama setup: set_tuning_params(matmul_recons_thd = 8); exllama_ext.cpp takes q4_matmul_recons_cuda when
x_height >= matmul_recons_thd) each linear first reconstructs its fp16 weights (w->reconstruct into temp_dq: the
4-bit read and 2 bytes written a weight) and runs cublasHgemm on them (2 bytes read a weight): 4 bytes a weight on
top of the 4-bit read, counted, not fitted; that loop issues the fp16 loop's kernels plus the reconstruction, one a
linear, and takes no 0.912. Held out (none used for the per-row constant): see EXLLAMA_ROW_SECONDS_PER_WEIGHT.
The GPU's work reads the KV cache EAGER_KV_CACHE_PASSES = 3 times a step (torch.cat's copy, then attention), or
3 + 2 x n_rep where the spec states code that repeats a grouped cache per query head (REPEAT_KV: model.eager_layer
with inference.attn_implementation; unstated, the layer follows the preset's architecture, presets.PRESET_EAGER_LAYERS).
That count is a floor, not an estimate: where the GPU binds, Qwen2.5's speed benchmark (transformers 4.46) needs
about 1.7-2.1x the counted passes (the GPU-bound published Qwen2.5 steps, aud45h), Qwen-1's README 8k rows up to 6.1
passes against 3. decode48b: on a 2-byte cache the copies among the counted passes run PyTorch's element-at-a-time
kernels and cost EAGER_2BYTE_COPY_PASS_RATIO (1.944; fix48x, was the inverted 2.057) passes each
(kv_cache_pass_seconds_equivalent), which lands the GPU-bound Qwen2.5 rows stated as run but 7B at 30,720 (+17.8%).
gpt-fast's eager model writes its cache in place (KVCache.update, k_out[:, :, input_pos] = k_val; stored id
5887513086), no copy: no spec value states it (hf_eager is transformers'), and its one row is host-bound.
Not fitted on any row: the Qwen README's seven single-A100 rows check the Qwen-1 count
(tests/procurement/outside/test_outside_recommendations_stop43.py), AutoGPTQ's llama-7b fp16 row the Llama count
(tests/procurement/outside/test_outside_audit_stop43d.py).
"""

from __future__ import annotations

import numpy as np

from procurement.sizing import params as counts
from procurement.sizing.assumptions import (
    EAGER_KERNEL_HOST_SECONDS,
    HF_GENERATE_KERNEL_HOST_SECONDS,
    HF_GENERATE_RELEASE_KERNEL_HOST_SECONDS,
    OPTIMIZER_OP_HOST_SECONDS,
    VLLM_V0_STEP_HOST_SECONDS,
)

# model.eager_layer: (non-GEMM kernels a decode layer, attention linears); the MLP adds 3 linears (2 ungated)
EAGER_LAYER_KERNELS = {
    "qwen1": (18.0, 2.0),  # Qwen-1 QWenBlock with flash-attn: c_attn (q, k, v fused) and c_proj
    # fix47h, counted from Qwen-1's remote code, zhangningboo/Qwen-7B (a mirror of the hub's Qwen/Qwen-7B)
    # @e7a368b0774370edec29674e7c51f52fc7663f59 modeling_qwen.py (2023-11-30), decode, batch 1, BF16:
    # qwen1_unfused_norm: flash-attn 2 installed without its optional csrc/layer_norm build (the QwenLM/Qwen README's
    #   install: layer_norm "optional"), so _import_flash_attn's rms_norm import fails and RMSNorm.forward runs
    #   self._norm(x.float()).type_as(x) * self.weight: x.float(), pow(2), mean, + eps, rsqrt, x * rsqrt, type_as,
    #   * weight = 8 kernels a norm, 16 for ln_1 / ln_2 (fused: 2); the rest as qwen1: rotary through flash-attn's
    #   apply_rotary_emb_func (t.float(), the kernel, type_as: 3) on q and k 6; the KV torch.cat 2; logn 1;
    #   FlashSelfAttention's two cu_seqlens aranges and flash_attn_unpadded_func 3; residual adds 2; F.silu and
    #   a1 * silu 2. Non-GEMM 32, + 5 linears = 37. Checked on the Qwen-1.8B-Chat card's v2 / Disabled pair (aud47h,
    #   tests/procurement/outside/test_outside_host_rate_audit_stop47.py): the saved 94.7 us a layer at the
    #   Disabled path's 18.7 us a kernel is 5 kernels, 45 - 37 = 8 (23 would be 22). Caveat: with flash-attn >= 2.1
    #   at batch 1 FlashSelfAttention calls flash_attn_func (1 kernel, no aranges) and logn runs only past
    #   seq_length, so the same install can issue 34-37; 37 keeps qwen1's attention count.
    "qwen1_unfused_norm": (32.0, 2.0),
    # qwen1_no_flash: no flash-attn (use_flash_attn false or not importable): RMSNorm fallback 8 x 2 = 16;
    #   apply_rotary_pos_emb's fallback t.float(), t_rot * cos, _rotate_half's neg and cat, * sin, add, the cat with
    #   the (empty) t_pass, type_as = 8, on q and k 16; the KV torch.cat 2; F.scaled_dot_product_attention 1 (the
    #   SUPPORT_TORCH2 branch; prepare_inputs_for_generation passes attention_mask None at batch 1 and the decode
    #   step has no causal mask); _merge_heads' contiguous() 1; residual adds 2; silu and multiply 2. Non-GEMM 40,
    #   + 5 linears = 45.
    "qwen1_no_flash": (40.0, 2.0),
    "llama": (44.0, 4.0),  # transformers 4.30 LlamaDecoderLayer: q_proj, k_proj, v_proj, o_proj
    # transformers 4.37-4.46 Qwen2DecoderLayer: priced as the Llama layer's (same RMSNorm, rotary, q / k / v apart,
    # gated MLP); it differs in its KV copies (kv_cache_passes). qwen2cnt recounted it (applied where inference.transformers_release is stated, RELEASE_LAYER_KERNELS; NOTES-issue26.md
    # "### qwen2cnt"), decode, batch 1, BF16, flash_attention_2, grouped KV, from the PyPI wheels:
    #   4.38.2 modeling_qwen2.py: RMSNorm 8 x 2 (l. 92-95); Qwen2FlashAttention2 position_ids[:, -1].max().item()
    #   (l. 382: a max and a device-to-host sync) 2; cos_cached / sin_cached[:seq_len].to(dtype) (l. 130-131) 0 (the
    #   buffers are built in the load dtype, from_pretrained's default dtype); cos[position_ids] / sin[position_ids]
    #   gathers (l. 165-166) 2, q / k: * cos, neg, cat, * sin, add (l. 167-168) 10; DynamicCache.update's two
    #   torch.cat (cache_utils.py l. 131) 2; repeat_kv k / v (l. 430-431) 2; flash_attn_func (l. 563 / 572) 1;
    #   residual adds (l. 781 / 787) 2; act and gate multiply (l. 185) 2. Non-GEMM 39 (16 + 2 + 2 + 10 + 2 + 2 + 1 +
    #   2 + 2; qwen2cnt's total said 38, one short of its own list: audtr, fixed fixtr), + 7 linears = 46 (not 51).
    #   4.46.0 modeling_qwen2.py: the rotary is computed once a model (Qwen2Model.forward l. 871: position_ids
    #   .float(), matmul, cat, cos, sin, x attention_scaling x 2, .to(dtype) x 2 = 9 a token (1 + 1 + 1 + 1 + 1 + 2 +
    #   2; Qwen2RotaryEmbedding.forward l. 152-172, the scaling launched at 1.0 too; 8 before audtr), in the loop), no gather
    #   and no .item(): norms 16, rotary 10 (l. 206-207), cat 2 (cache_utils.py l. 447), repeat_kv 2 (l. 402-403),
    #   flash_attn_func 1 (modeling_flash_attention_utils.py l. 297; query_length 1 skips l. 271's torch.diff),
    #   residual 2, MLP 2: non-GEMM 35, + 7 linears = 42 a layer, + 9 a token.
    #   Caveats: q / k / v carry a bias (addmm; one cuBLASLt launch with its bias epilogue on a CUDA >= 12.1 torch,
    #   two, a copy and a GEMM, where the Lt path is refused); flash-attn's split-KV path adds a combine kernel.
    "qwen2": (44.0, 4.0),
    # transformers 4.38-4.46 MistralDecoderLayer: likewise priced as the Llama layer's (same norms, rotary, q / k / v
    # apart, gated MLP); it differs in its KV copies (REPEAT_KV). qwen2cnt recounted it (RELEASE_LAYER_KERNELS), flash_attention_2:
    #   4.38.2 modeling_mistral.py: as Qwen2's 4.38.2 (max().item() l. 377, gathers l. 160-161, repeat_kv l. 424-425):
    #   non-GEMM 39 (38 before audtr), + 7 = 46. 4.46.0: the rotary stays in the layer (MistralFlashAttention2 l. 321,
    #   MistralRotaryEmbedding.forward l. 97-110: .float(), matmul, cat, cos, sin, two casts = 7) and
    #   kv_seq_len += cache_position[0] (l. 319) adds a 0-d tensor add: non-GEMM 43, + 7 = 50.
    "mistral": (44.0, 4.0),
}
LOOP_KERNELS = 30.0
# qwen2cnt: inference.transformers_release -> the decoder layer's kernels as that release's modeling code issues them
# in decode at batch 1 (the releases whose wheels were read; the counts in the EAGER_LAYER_KERNELS comments above):
# (model.eager_layer, release, inference.attn_implementation) -> (non-GEMM kernels a layer without repeat_kv, kernels a
# token outside the layers on top of LOOP_KERNELS). repeat_kv adds 2 (k and v) where the code repeats a grouped cache
# (repeats_kv). Linears as EAGER_LAYER_KERNELS (q / k / v apart: 4 + the MLP's). "unstated": EAGER_LAYER_KERNELS.
#   llama 4.32.0 eager (transformers 4.32.0 modeling_llama.py: RMSNorm 8 x 2 l. 86-89; cos[position_ids] /
#     sin[position_ids] l. 184-185 and the q / k rotation 12 (the cos / sin caches' .to(dtype) are no-ops: built in the
#     load dtype); the past's torch.cat l. 326-327 2; matmul, / sqrt(d), + mask, softmax in fp32 (one kernel), .to(dtype),
#     matmul (l. 336-353) 6; residual adds 2; SiLU and the gate multiply 2): 40 (fixg45's 47 with its 7 linears).
#     Caveat (fixtr, noted, not priced): softmax(dtype=torch.float32) is one kernel only for fp16 input. ATen's
#     softmax(input, dim, dtype) (pytorch aten/src/ATen/native/SoftMax.cpp) takes the fused half_to_float path only
#     when input.is_cuda() and input.scalar_type() == ScalarType::Half and dtype == Float; a bf16 input goes through
#     input.toType(Float), a cast kernel, then _softmax: a bf16 run of this layer issues 41, not 40. Not added on
#     precision bf16 because the spec's precision defaults to bf16 and every published row stated at 4.32.0 (optimum
#     2023, the fit row of hf_generate_release_kernel_host_s) is an fp16 run whose spec leaves precision at that
#     default: the kernel would land on fp16 rows. A bf16 4.32.0 eager loop is under-counted by 1 a layer
#     (Llama-2-13B: 40 x 19.67 us = 0.79 ms a token, 2.1% of the 37.6 ms floor).
#   qwen2 4.38.2 flash_attention_2: 39 - repeat_kv's 2 = 37 (36 until audtr: qwen2cnt's list sums to 39, its total
#     said 38). qwen2 4.46.0 flash_attention_2: 35 - 2 = 33 a layer, and the model-level rotary (Qwen2Model.forward
#     l. 871) 9 a token (8 until audtr). mistral 4.38.2 flash_attention_2: 37 (36 until audtr);
#     mistral 4.46.0 flash_attention_2: 43 - 2 = 41.
#   llama 4.37.2 sdpa (modeling_llama.py: LlamaSdpaAttention l. 659-; gathers l. 232-233 + rotation 12; DynamicCache
#     .update's cats 2; the mask is None at decode (_prepare_4d_causal_attention_mask_for_sdpa, query_length 1), so no
#     .contiguous(); scaled_dot_product_attention l. 728 1; residual 2; MLP 2): 35.
RELEASE_LAYER_KERNELS = {
    ("llama", "4.32.0", "eager"): (40.0, 0.0),
    ("llama", "4.37.2", "sdpa"): (35.0, 0.0),
    ("qwen2", "4.38.2", "flash_attention_2"): (37.0, 0.0),
    ("qwen2", "4.46.0", "flash_attention_2"): (33.0, 9.0),
    ("mistral", "4.38.2", "flash_attention_2"): (37.0, 0.0),
    ("mistral", "4.46.0", "flash_attention_2"): (41.0, 0.0),
}
REPEAT_KV_KERNELS = 2.0
# hfeager: model.eager_layer -> of its kernels, those launched through Triton's Python launcher, not a CUDA
# extension's or ATen's C++ launch. Qwen-1's flash-attn path rotates q and k with flash-attn's apply_rotary_emb_func
# (modeling_qwen.py @e7a368b0 apply_rotary_pos_emb), which from flash-attn v2.1.2 (942fcbf0, 2023-09-03: "[Rotary]
# Implement rotary in Triton"; v2.1.1 and before call the csrc/rotary extension) is flash_attn/ops/triton/rotary.py
# apply_rotary: one rotary_kernel[grid](...) launch with 19 runtime arguments (Dao-AILab/flash-attention @v2.3.3).
# The README's install clones flash-attention's head and says csrc/rotary is not needed "if the version of flash-attn
# is higher than 2.1.1" (QwenLM/Qwen @03cd81f5 README, Quickstart): its rows ran the Triton rotary. 2 a layer (q, k).
EAGER_LAYER_TRITON_LAUNCHES = {"qwen1": 2.0, "qwen1_unfused_norm": 2.0}
# fix51h: inference.rotary_backend -> (kernels of the q and k rotary a layer, of them Triton launches), for the layers
# above (Qwen-1's flash-attn layers, whose EAGER_LAYER_KERNELS count holds the triton row); unstated = triton there.
# Counted from the code, not fitted: triton, flash-attn >= 2.1.2's apply_rotary: t.float(), rotary_kernel[grid],
# type_as = 3 on q and k (modeling_qwen.py @e7a368b0 apply_rotary_pos_emb). cuda_ext, flash-attn 2.0-2.1.1 (or a
# build with csrc/rotary): ApplyRotaryEmb.forward calls the extension's rotary_emb.apply_rotary once (no copy of a
# pass-through part: Qwen-1 rotates the whole head), the same 3 a tensor through ATen / the extension's C++ launch,
# none through Triton. eager, Qwen-1's own fallback when apply_rotary_emb_func is None (flash-attn v1.0.x whose
# layers/rotary.py imports the csrc rotary_emb at module top, built without it: the QwenLM/Qwen README's install):
# t.float(), t_rot * cos, _rotate_half's neg and cat, * sin, add, the cat with the empty pass-through, type_as = 8
# a tensor, 16 (the qwen1_no_flash count's rotary): a flash-attn v1 run is qwen1_unfused_norm + eager, 37 + 10 = 47
# kernels a layer (aud51h's count; tests/procurement/outside/test_outside_triton_launch_audit_aud51h.py).
ROTARY_BACKEND_KERNELS = {"triton": (6.0, 2.0), "cuda_ext": (6.0, 0.0), "eager": (16.0, 0.0)}
# hfeager: host seconds of one launch of a jitted Triton kernel through its Python launcher (JITFunction.run builds
# the call's Python containers and specialization key every launch): "40us to 4.2us for kernels with a few params,
# or 62us to 6us for kernels with many params", measured on the triton 2 shipped with PyTorch 2.2
# (triton-lang/triton PR #3503, "[FRONTEND][RFC] Low latency kernel launching", 2024-03-29; the cuts landed after
# triton 2.2, PR #3638). Earlier launchers were no faster: PR #1431 (2023-03-29, triton 2.0 era) measured an empty
# few-argument kernel at ~55 us on its CI machine, ~42 us with that PR. The rotary kernel has many arguments: 62 us.
# Published, not fitted; checked on rows not used to set it (the Qwen README's BF16 1.8B / 7B / 14B, host-bound:
# tests/procurement/outside/test_outside_recommendations_stop43.py and test_outside_audit_stop43d.py; the Qwen-1.8B-
# Chat card's FlashAttn v2 rows; its Disabled rows, no Triton launch, do not move). At 40 us (few arguments) the
# same rows land within 15% as well (the module's tests).
TRITON_LAUNCH_HOST_SECONDS = 62e-6
# inference.generate_harness -> the host's seconds a kernel (host47b; restated fix47h). transformers:
# hf_generate_kernel_host_s (fit and held-out rows at its definition, assumptions.py). auto_gptq: the host AutoGPTQ's
# README llama-7b fp16 A100 row measured, 31 us a kernel; cause not shown. A stated host-rate choice, not a mechanism:
# that row (AutoGPTQ/AutoGPTQ @4b8524ffb1b3f56edd9b1106ff809c07069ce693 README, 18.87 tokens/s = 31.89 us on the
# 51-kernel count; the engine 19.41, +2.9%) is the only one it stands on (eager_kernel_host_s, not refitted: the
# diffusers-fitted constant). AutoGPTQ's generate wrapper (torch.inference_mode + torch.amp.autocast, _base.py
# l. 387-390 @4b8524ff) was given as its cause at host47b and is withdrawn (aud47h): the same-host Qwen-1 pairs
# (QwenLM/Qwen README 7B / 14B Int4 / BF16 1.22 / 1.20; the Qwen-1.8B-Chat card Int8 / BF16 1.03) show no 1.82x, and
# that README says from_pretrained runs about 20% slower than AutoGPTQ's path. Figures:
# tests/procurement/outside/test_outside_host_rate_audit_stop47.py and test_outside_host_release_stop47.py.
GENERATE_HARNESS_HOST = {
    "transformers": HF_GENERATE_KERNEL_HOST_SECONDS,
    "auto_gptq": EAGER_KERNEL_HOST_SECONDS,
}
# qwen2up2: the harness's rate where inference.transformers_release states the release (its own recounted kernels,
# RELEASE_LAYER_KERNELS): read on the same rows over that count (hf_generate_release_kernel_host_s). A harness not
# listed has no rate read on a recount: spec.py refuses a stated release with it (fixtr, audtr's finding: auto_gptq's
# 31 us was read on the 51-kernel count, AutoGPTQ @4b8524ff README llama-7b fp16, 31.89 us over 51 x 32 + 30).
RELEASE_HARNESS_HOST = {"transformers": HF_GENERATE_RELEASE_KERNEL_HOST_SECONDS}
# inference.quant_kernel: the eager loop's host floor relative to the same loop in fp16, measured (optimum
# tests/benchmark/README.md @09638629, Llama-2-13B, A100-SXM4-80GB, batch 1: 33.711 / 36.958 ms a token; AutoGPTQ
# 0.4.2 / torch 2.0.1 / transformers 4.32 per @3ffebf99; the module docstring). No fit: one published ratio. Held out:
# Qwen README Int4 1.8B / 7B / 14B (stop 44: -22.0% / -15.9% / -12.3% unstated -> -14.5% / -7.8% / -3.8%). Applied
# to the GEMV path (below EXLLAMA_RECONS_ROWS rows), whose kernels the host launches at every row count.
QUANT_KERNEL_STEP_RATIO = {"unstated": 1.0, "exllama": 33.711 / 36.958}
# int8gptq: inference.quant_kernel cuda_old, AutoGPTQ's 8-bit GPTQ linear. auto_gptq's dynamically_import_QuantLinear
# takes exllama / exllamav2 / marlin for bits == 4 only, so 8 bits (use_triton off: AutoGPTQ's from_quantized default
# and transformers' / optimum's GPTQ integration) run qlinear_cuda_old (desc_act false or group_size -1) or
# qlinear_cuda. QuantLinear.forward's 8-bit branch (AutoGPTQ qlinear_cuda_old.py @179776bd; use_cuda_fp16 is forced
# off at 8 bits) issues, beside the vecquant8matmul_old kernel that takes the counted linear's place:
# torch.zeros of the fp32 output, x.float(), self.scales.float() and out.half() = 4 kernels; the bias add is in both
# loops (cuda_old's out + bias; the 16-bit linear's addmm), not a difference. The 4 are bare ATen calls inside a
# forward whose module Python the linear's kernel already carries, so each costs a bare op's host time,
# optimizer_op_host_s (7 us, pytorch/pytorch issue #41383; lora_host prices PEFT's x.to(fp32) the same way), not the
# harness's rate a counted kernel (which carries each module's Python). Counted, not fitted. Checked on rows not used
# to set anything: the Qwen2 speed page's Int8 rows (0.5B / 1.5B / 7B) and the Qwen-1 README's (1.8B / 7B / 14B).
CUDA_OLD_BARE_OPS = 4.0
# int8gpu (aud51g FIX LIST 1): the same 4 ops' GPU side. Each is a small elementwise kernel that moves its bytes
# once (qlinear_cuda_old.py @179776bd, 8-bit branch): torch.zeros(rows, out, fp32) writes 4 bytes an output,
# x.float() reads 2 and writes 4 bytes an input, self.scales.float() reads 2 and writes 4 bytes a scale (the scales
# are (in / group_size) x out fp16, cast on every call), out.half() reads 4 and writes 2 bytes an output. Priced
# at the decode read rate, added to the GPU step (quant_kernel_gpu_seconds). The engine has no
# per-kernel GPU floor (no such constant in procurement/sizing), so a kernel's launch-to-launch minimum is not
# added: the 4 x linears kernels cost their bytes only, a lower bound. The scales' cast dominates: 6 bytes a
# scale, one scale per CUDA_OLD_GROUP_SIZE quantized weights; the rows' terms are kilobytes a token.
# AutoGPTQ's BaseQuantizeConfig group_size default (auto_gptq/modeling/_base.py, 0.4-0.7: group_size: int = 128);
# int8 specs have no group-size field (inference.quant_group_size is for int4 formats), so the default is used.
CUDA_OLD_GROUP_SIZE = 128.0
CUDA_OLD_SCALE_CAST_BYTES = 2.0 + 4.0  # fp16 read, fp32 write
CUDA_OLD_INPUT_CAST_BYTES = 2.0 + 4.0  # x.float(): fp16 read, fp32 write
CUDA_OLD_OUTPUT_BYTES = 4.0 + 4.0 + 2.0  # torch.zeros' fp32 write; out.half(): fp32 read, fp16 write
# exllama's GEMV on the GPU: seconds a quantized linear weight a row of the step (the module docstring). Fitted
# (fix44q) on the same table's two GPU-bound GEMV rows, Llama-2-13B (12.688e9 quantized block weights) on one
# A100-SXM4-80GB, prompt 512 + 512 generated: batch 2 exllama 37.25 ms, batch 4 54.14 ms (each above 0.912 x its
# fp16 row, 34.07 / 34.56 ms, so the GPU's). Step's GPU time = rows x x + the eager loop's KV traffic, 3 passes
# over the cache (EAGER_KV_CACHE_PASSES) of 0.88 / 1.76 ms each; the x that misses both by the same fraction
# (minimax): x = (2 - 3 x 0.88 / 37.25 - 3 x 1.76 / 54.14) / (2 / 37.25 + 4 / 54.14) = 14.35 ms a row, 1.1314e-12 s
# a weight (cls45d; 15.24 ms, 1.2008e-12, with one pass). Fit rows: batch 2 GPU 31.36 ms (-15.8%; the step, max
# with the host's 34.07, -8.5%, +9.3% in tokens/s), batch 4 62.71 ms (+15.8%, -13.7% in tokens/s). Held out:
# optimum @4e987762 batch 4 (AutoGPTQ 0.7.0 / torch 2.2) 55.15 ms against 59.19 (-6.8% in tokens/s; -10.4% with
# one pass); QwenLM/Qwen @03cd81f5 README Qwen-72B-Chat-Int4 on one A100 (auto-gptq < 0.5), batch 1, 2,048 tokens:
# 88.3 ms a token (11.32 tokens/s) against 69.79e9 x 1.1314e-12 = 79.0 ms + 3 x 1.9 ms of KV = 84.7 ms (11.82
# tokens/s, +4.4%; 11.67, +3.1%, with one pass); 7B / 14B / 1.8B Int4
# stay host-bound (GPU 9.9 / 16.8 / 2.6 ms). Batch 8 (reconstruction, below) is not on this constant. The form
# adds no separate weight read (each row's blocks read the weights themselves); weights read once + the per-row
# cost, fitted the same way (12.39 ms a row), puts the 72B row at 114.9 ms, -23.1%.
# decode48b: the fit rows' KV term in the engine's pass-equivalents (kv_cache_pass_seconds_equivalent: an fp16 cache,
# the llama layer's 3 passes of which 2 are the cat's copies at EAGER_2BYTE_COPY_PASS_RATIO; fix48x: at the corrected
# 1.944 (was the inverted 2.057), 3 + 2 x 0.944 = 4.889 pass-equivalents (was 5.114; 3.0 before decode48b);
# refitted the same way on the same two fit rows, x = (2 - 4.889 x 0.88159 / 37.25 - 4.889 x 1.76318 / 54.14) /
# (2 / 37.25 + 4 / 54.14) = 13.52 ms a row, 1.0657e-12 s a weight (was 13.42 ms, 1.0579e-12); the fit rows' errors
# are unchanged by the form (-15.8% / +15.8%). Held out: see tests/procurement/outside (optimum @4e987762 batch 4; Qwen-72B-Chat-Int4).
_EXLLAMA_FIT_KV_PASSES = 3.0 + 2.0 * (2.0 * 2.668288 / 2.744544 - 1.0)
EXLLAMA_ROW_SECONDS_PER_WEIGHT = (
    (2.0 - _EXLLAMA_FIT_KV_PASSES * 0.88159 / 37.25 - _EXLLAMA_FIT_KV_PASSES * 1.76318 / 54.14)
    / (2.0 / 37.25 + 4.0 / 54.14)
    * 1e-3
    / 12.688184e9
)
# AutoGPTQ 0.4's exllama reconstructs fp16 weights and runs cuBLAS from this many rows (matmul_recons_thd)
EXLLAMA_RECONS_ROWS = 8
# bytes a quantized weight the reconstruction adds to the 4-bit read: its fp16 write and cuBLAS's fp16 read
EXLLAMA_RECONS_BYTES_PER_WEIGHT = 4.0


# Passes over the KV cache an eager transformers decode step makes, counted from the code, not fitted: each layer
# concatenates the new key and value onto the past ones, torch.cat((past_key, key), dim=1) in Qwen-1's
# QWenAttention (modeling_qwen.py; the same lines in optimum-intel's Qwen patch, stored id 34240564312) and
# torch.cat([past_key_value[0], key_states], dim=2) in transformers 4.30's LlamaAttention (the cat kernels the
# layer counts above already issue; DynamicCache.update's torch.cat in 4.36-4.46, generate's default cache):
# torch.cat allocates a new tensor and copies the whole past into it, one read and one write of the cache, and
# attention then reads the result (flash-attn, or the matmuls against k and v): 3 passes. Compiled engines append
# in place and read once. Held out (no fit): QwenLM/Qwen README Qwen-72B BF16 on 2 x A100 (layer split), 8.48
# tokens/s: 9.86 -> 9.51 (+16.3% -> +12.1%).
# 3 is a floor: published eager steps move more than the counted passes (Qwen2.5's speed benchmark, transformers
# 4.46: about 1.7-2.1x the counted passes where its steps are GPU-bound, aud45h's 72B 6,144 / 14B 14,336 / 7B 14,336
# rows 33 / 23.6 / 36 passes against 19 / 13 / 17; the 1.2-1.6x quoted before was the growth from a host-bound
# input-1 step; Qwen-1's README 8k rows 2.9-6.1 passes where the code makes 3), so the answer says "at least".
# decode48b: the Qwen2.5 shortfall is the copies' rate, not their count (kv_cache_pass_seconds_equivalent below).
EAGER_KV_CACHE_PASSES = 3.0
# Grouped-KV code that repeats the cache per query head before attention: transformers' repeat_kv
# (hidden_states[:, :, None].expand(...).reshape(...), a copy unless n_rep = heads / kv heads is 1) reads the
# kv-head cache once and writes n_rep copies, which attention then reads: 3 + 2 x n_rep passes (the cat's read and
# write, the repeat's read, n_rep writes and n_rep reads). Read in the PyPI wheels (fixd45): LlamaAttention and
# LlamaSdpaAttention call repeat_kv after past_key_value.update in 4.36.0 (modeling_llama.py l. 410-411 / 710-711),
# 4.38.2 (l. 369-370 / 657-658) and 4.46.0 (l. 364-365 / 584-585), LlamaFlashAttention2 does not (flash-attn takes
# the kv heads as they are); Qwen2Attention, Qwen2SdpaAttention and Qwen2FlashAttention2 all do, 4.38.2
# (modeling_qwen2.py l. 285-286 / 682-683 / 430-431) and 4.46.0 (l. 316-317 / 525-526 / 402-403). Qwen-1 (qwen1*)
# has one KV head a query head. MistralAttention, MistralSdpaAttention and MistralFlashAttention2 all repeat too
# (4.38-4.46, aud45h): mistral. Version: Qwen2FlashAttention2's repeat is transformers 4.37-4.47 code; 4.48.0 moved
# flash-attn to integrations/flash_attention.py, which has no repeat_kv, so on 4.48 and later with
# flash_attention_2 the qwen2 count (19 passes on Qwen2.5-72B) overcharges (3 is that code's count). The llama
# layer's 3 passes with flash_attention_2 hold for Llama code only (LlamaFlashAttention2). Counted where the spec
# states the code (model.eager_layer, or the preset's architecture) and the attention (inference.attn_implementation);
# unstated, 3.
REPEAT_KV = {
    "llama": ("eager", "sdpa"),
    "qwen2": ("eager", "sdpa", "flash_attention_2"),
    "mistral": ("eager", "sdpa", "flash_attention_2"),
    "qwen1": (),
    "qwen1_unfused_norm": (),
    "qwen1_no_flash": (),
}


def repeats_kv(spec) -> float:
    """n_rep (query heads a KV head) where the stated code copies the cache per query head before attention
    (REPEAT_KV), else 0."""
    attn = getattr(spec.inference, "attn_implementation", "unstated")
    layer = getattr(spec.model, "eager_layer", "llama")
    heads, kv_heads = spec.model.num_attention_heads, spec.model.num_key_value_heads
    if attn not in REPEAT_KV.get(layer, ()) or not kv_heads or heads <= kv_heads:
        return 0.0
    return heads / kv_heads


def kv_cache_passes(spec) -> float:
    """Passes over the KV cache a decode step makes: in an eager transformers loop at least 3 (torch.cat copies
    the past keys and values into a new tensor, reading the cache and writing it again, and attention reads the
    result), 3 + 2 x n_rep where the stated code repeats a grouped cache per query head (repeats_kv); 1 in a
    compiled engine (it appends the new token in place and reads the cache once). The eager count is a floor:
    GPU-bound published eager steps need about 1.7-2.1x the counted passes (Qwen2.5, transformers 4.46) and up
    to 2x (Qwen-1 8k rows)."""
    if not applies(spec):
        return 1.0
    n_rep = repeats_kv(spec)
    return EAGER_KV_CACHE_PASSES + (2.0 * n_rep if n_rep else 0.0)


# The eager loop's cache copies (the cat's read + write, repeat_kv's read and n_rep writes) on a 2-byte cache run
# PyTorch's element-at-a-time kernels, not the vectorized ones the engine's read rate stands for: torch.cat of bf16 /
# fp16 tensors takes CatArrayBatchedCopy_contig (one 2-byte element a thread; the wide-load kernel, pytorch#102815,
# is 32 / 64-bit only; 8-byte loads for 2-byte dtypes only from pytorch#150233, 2025) and repeat_kv's expand +
# reshape copy (a stride-0 source) takes gpu_kernel's legacy OffsetCalculator path (CUDALoops.cuh: vectorized only
# when contiguous), at every torch release the published eager rows state (2.0.1-2.3.1). Size, measured, not
# fitted: pytorch#150233's own "before" benchmark, torch.cat of the same shapes in fp32 (vectorized) and bf16
# (scalar): 2.744544 / 2.668288 ms (B 20,000; 1.326848 / 1.303792 at 10,000): the bf16 cat moves half the bytes
# in about the same time, an element rate. The engine prices a 2-byte copy pass at its bytes (half the fp32 cat's):
# at the vectorized rate it would take 2.744544 / 2 = 1.372272 ms; it takes 2.668288 ms, so a 2-byte copy pass costs
# 2 x 2.668288 / 2.744544 = 1.944 passes at the vectorized rate (fix48x, audx48b item 1: decode48b's 2.057 was
# 2 x 2.744544 / 2.668288, the ratio inverted; 1.965 at 10,000 = 2 x 1.303792 / 1.326848; 2.105 at its smallest
# size, 1,000 = 2 x 0.140608 / 0.133616). Consistent, not used: pytorch#195542's A100
# base-build bf16 -> fp32 copy_ on the same element-at-a-time path, 67,108,864 elements in 362.46 us, 185 G
# elements/s, which for a 2 + 2-byte copy is 0.74 TB/s, 1.93x under the engine's 0.7 x 2,039 GB/s. Flash-attn's
# read of the result is not slowed: flash_attn_func at one query row reads its cache at 0.87-0.90 of the card's
# bandwidth (flagos-ai/FlagAttention PR #17, RTX 3090, batch 2, 32 x 64 / 16 x 128 heads, 16k-512k keys; the engine
# charges 0.7). Held out (decode48b, no fit): [QW25SPEED] Qwen2.5 (QwenLM/Qwen2.5 @010c37c3 speed_benchmark.rst,
# A100 80GB, torch 2.3.1, transformers 4.46.0, stated as run: qwen2 / flash_attention_2), GPU-bound rows
# 14B 14,336 / 30,720, 72B 6,144 (2 GPUs) / 14,336 / 30,720 (3 GPUs), 7B 30,720: see
# tests/procurement/outside/test_outside_eager_copy_rate_audit_stop48b.py for the errors. A release with
# pytorch#150233 (torch 2.8 on) overcharges the cat; the spec states no torch release.
# fix48k (aud48k's note): #150233 names no card. Read as its table title's shapes, three (B, 30,108 / 624 / 772)
# inputs catted on dim 1 (the script is not in the PR), its fp32 cat at B 20,000 moves 2 x 630.08M x 4 bytes in
# 2.744544 ms, about 1.84 TB/s, not the engine's 0.7 x 2,039 GB/s (1.43 TB/s): only its fp32 / bf16 ratio is used,
# not its rate. The anchor on a named card that agrees is pytorch#195542's A100 element-at-a-time copy_ (185 G
# elements/s, 1.93 passes, above). The ratio is a range, 1.93-1.97 (#195542's 1.93; #150233's 1.944 at B 20,000 and
# 1.965 at 10,000; 2.105 at its smallest, 1,000), of which 1.944 is taken. repeat_kv's copy (the legacy gpu_kernel /
# launch_legacy_kernel path with an OffsetCalculator, a stride-0 source) is priced by analogy with the cat, which is
# all #150233 measured; no opened source times it. Next lead: a published A100 bf16 measurement of a non-contiguous
# copy_ / expand().reshape(). The 72B rows land partly by compensation (aud48k): from 14,336 to 30,720 the engine's
# step grows more than the published (1.19x the pass-equivalents decode48 measured, at 2.057; 29.4 / 25.8 = 1.14x
# at 1.944) while its 14,336 step is 11-14% short, so the 72B fixed part is the next to size. Counter-evidence for
# the 7B class: the Qwen2 page's 7B rows ([QWEN2LONG], aud48k: +22.9% / +36.6% at 30,720 / 14,336).
EAGER_2BYTE_COPY_PASS_RATIO = 2.0 * 2.668288 / 2.744544


def kv_copy_passes(spec) -> float:
    """Of kv_cache_passes, the copies: the cat's read and write (2), and repeat_kv's read and n_rep writes where the
    stated code repeats the cache (1 + n_rep); 0 outside an eager loop."""
    if not applies(spec):
        return 0.0
    n_rep = repeats_kv(spec)
    return 2.0 + (1.0 + n_rep if n_rep else 0.0)


def kv_cache_pass_seconds_equivalent(spec) -> float:
    """kv_cache_passes in passes at the engine's read rate: on a 2-byte cache (bf16 / fp16) each copy pass costs
    EAGER_2BYTE_COPY_PASS_RATIO (PyTorch's element-at-a-time copy kernels); attention's reads cost one."""
    passes = kv_cache_passes(spec)
    if getattr(spec.inference, "kv_cache_dtype", "bf16") not in ("bf16", "fp16"):
        return passes
    return passes + kv_copy_passes(spec) * (EAGER_2BYTE_COPY_PASS_RATIO - 1.0)


def applies(spec) -> bool:
    """An eager transformers decode loop on a language model."""
    return (
        spec.task == "inference"
        and spec.model.image_arch is None
        and getattr(spec.inference, "engine", "compiled") == "hf_eager"
    )


def linears_per_layer(spec) -> float:
    return EAGER_LAYER_KERNELS[getattr(spec.model, "eager_layer", "llama")][1] + (
        3.0 if spec.model.gated_mlp else 2.0
    )


def rotary_backend(spec) -> str:
    """The code that rotates q and k (inference.rotary_backend): stated, else the layer's own (flash-attn's Triton
    kernel in Qwen-1's flash-attn layers, EAGER_LAYER_TRITON_LAUNCHES; eager code in every other layer)."""
    stated = getattr(spec.inference, "rotary_backend", "unstated")
    if stated != "unstated":
        return stated
    return "triton" if getattr(spec.model, "eager_layer", "llama") in EAGER_LAYER_TRITON_LAUNCHES else "eager"


def _flash_rotary(spec) -> tuple[float, float] | None:
    """(kernels, Triton launches) of the rotary a layer where the layer calls flash-attn's rotary; else None."""
    if getattr(spec.model, "eager_layer", "llama") not in EAGER_LAYER_TRITON_LAUNCHES:
        return None
    return ROTARY_BACKEND_KERNELS[rotary_backend(spec)]


def kernels_per_layer(spec) -> float:
    """Kernels one decode layer issues; an exllama loop that reconstructs (EXLLAMA_RECONS_ROWS rows and up) adds
    its reconstruction kernel, one a linear. A Qwen-1 flash-attn layer's count is its Triton rotary's; another
    inference.rotary_backend changes the rotary's kernels (ROTARY_BACKEND_KERNELS)."""
    non_gemm = EAGER_LAYER_KERNELS[getattr(spec.model, "eager_layer", "llama")][0]
    release = _release_count(spec)
    if release is not None:
        non_gemm = release[0] + (REPEAT_KV_KERNELS if repeats_kv(spec) else 0.0)
    rotary = _flash_rotary(spec)
    if rotary is not None:
        non_gemm += rotary[0] - ROTARY_BACKEND_KERNELS["triton"][0]
    return non_gemm + linears_per_layer(spec) * (2.0 if exllama_reconstructs(spec) else 1.0)


def _release_count(spec) -> tuple[float, float] | None:
    """RELEASE_LAYER_KERNELS' entry for the stated transformers release; None where it is unstated."""
    release = getattr(spec.inference, "transformers_release", "unstated")
    if release == "unstated":
        return None
    layer = getattr(spec.model, "eager_layer", "llama")
    return RELEASE_LAYER_KERNELS[(layer, release, getattr(spec.inference, "attn_implementation", "unstated"))]


def loop_kernels(spec) -> float:
    """The loop's kernels a token outside the layers: LOOP_KERNELS, + the model-level rotary of a release that
    computes it once a model (RELEASE_LAYER_KERNELS)."""
    release = _release_count(spec)
    return LOOP_KERNELS + (release[1] if release is not None else 0.0)


def kernel_host_seconds(spec) -> float:
    """The host's seconds a kernel of the stated generate harness (GENERATE_HARNESS_HOST). Plain transformers
    generate with inference.transformers_release stated runs at hf_generate_release_kernel_host_s (19.67 us), the
    rate read on the recounted rows, not the 16.99 us read on the unstated 51-kernel count: a count and a rate fitted
    on the same rows travel together (qwen2up2; the per-host rate stays a lead). A stated release with another harness
    never reaches here: spec.py refuses it (fixtr)."""
    harness = getattr(spec.inference, "generate_harness", "transformers")
    if harness in RELEASE_HARNESS_HOST and _release_count(spec) is not None:
        return RELEASE_HARNESS_HOST[harness].value
    return GENERATE_HARNESS_HOST[harness].value


def triton_launches_per_layer(spec) -> float:
    """Of kernels_per_layer, those the layer launches through Triton's Python launcher: flash-attn's Triton rotary
    (EAGER_LAYER_TRITON_LAUNCHES, where inference.rotary_backend leaves it triton)."""
    rotary = _flash_rotary(spec)
    return rotary[1] if rotary is not None else 0.0


def host_seconds_per_token(spec) -> float:
    """Host time of one decode step of an eager transformers loop; 0 where it does not apply. A kernel costs the
    harness's rate, one launched through Triton's Python launcher TRITON_LAUNCH_HOST_SECONDS instead."""
    if not applies(spec):
        return 0.0
    triton = triton_launches_per_layer(spec) * spec.model.num_layers
    kernels = kernels_per_layer(spec) * spec.model.num_layers + loop_kernels(spec) - triton
    host = kernels * kernel_host_seconds(spec) + triton * TRITON_LAUNCH_HOST_SECONDS
    return host * quant_kernel_ratio(spec) + quant_kernel_bare_op_seconds(spec)


def quant_kernel_bare_op_seconds(spec) -> float:
    """Host seconds a token of the stated quantized linear's own bare ops (cuda_old: CUDA_OLD_BARE_OPS a quantized
    linear at optimizer_op_host_s); 0 for every other kernel."""
    if getattr(spec.inference, "quant_kernel", "unstated") != "cuda_old":
        return 0.0
    linears = linears_per_layer(spec) * spec.model.num_layers
    return linears * CUDA_OLD_BARE_OPS * OPTIMIZER_OP_HOST_SECONDS.value


def quant_kernel_gpu_bytes(spec) -> float:
    """Bytes a decode step's cuda_old bare ops move on the GPU (CUDA_OLD_BARE_OPS a quantized linear: the fp32
    output's zeros, the input's and the scales' casts to fp32, the output's cast back), whole model, all streams;
    0 for every other kernel. Qwen2.5-7B at batch 1: 6.53e9 quantized weights / 128 x 6 bytes = 306 MB of scale
    casts, 20.7 MB of activations (326.6 MB, 0.229 ms at 0.70 x the A100-80GB's 2,039 GB/s)."""
    if getattr(spec.inference, "quant_kernel", "unstated") != "cuda_old" or not applies(spec):
        return 0.0
    model = spec.model
    h, inter = float(model.hidden_size), float(model.intermediate_size or 0)
    q_out = float(model.num_attention_heads * model.head_dim)
    kv_out = float((model.num_key_value_heads or model.num_attention_heads) * model.head_dim)
    # the layer's linears: q / k / v read h, o reads q_out; gate (gated MLPs) and up read h, down reads inter
    mlp_inputs = (2.0 if model.gated_mlp else 1.0) * h + inter
    mlp_outputs = (2.0 if model.gated_mlp else 1.0) * inter + h
    inputs = 3.0 * h + q_out + mlp_inputs
    outputs = q_out + 2.0 * kv_out + h + mlp_outputs
    rows = float(spec.inference.concurrency)
    activations = (
        rows * (CUDA_OLD_INPUT_CAST_BYTES * inputs + CUDA_OLD_OUTPUT_BYTES * outputs) * model.num_layers
    )
    scales = counts.block_matmul_params(model) / CUDA_OLD_GROUP_SIZE * CUDA_OLD_SCALE_CAST_BYTES
    return activations + scales


def quant_kernel_gpu_seconds(spec, read_rate):
    """GPU seconds a decode step of the cuda_old bare ops (quant_kernel_gpu_bytes at ``read_rate``, bytes a
    second, per row); 0 for every other kernel."""
    return quant_kernel_gpu_bytes(spec) / read_rate


def engine_step_host_seconds(spec) -> float:
    """Host time a step of the stated engine's loop adds to the GPU's work (a sum, not a max: the loop waits for
    the sampled tokens before it schedules and builds the next step): vllm_v0_step_host_s for vLLM's V0 engine
    (inference.engine vllm_v0; fit and held-out rows at its definition, assumptions.py); 0 otherwise (compiled:
    a step is its GPU work; hf_eager: host_seconds_per_token's floor)."""
    if spec.task != "inference" or spec.model.image_arch is not None:
        return 0.0
    if getattr(spec.inference, "engine", "compiled") != "vllm_v0":
        return 0.0
    return VLLM_V0_STEP_HOST_SECONDS.value


def quant_kernel_ratio(spec) -> float:
    """The stated quantization kernel's measured host-floor ratio to fp16 (QUANT_KERNEL_STEP_RATIO); 1 where
    none is stated or where exllama reconstructs fp16 weights for cuBLAS (its loop issues cuBLAS's kernels)."""
    kernel = getattr(spec.inference, "quant_kernel", "unstated")
    if exllama_reconstructs(spec):
        return 1.0
    return QUANT_KERNEL_STEP_RATIO.get(kernel, 1.0)


def uses_exllama(spec) -> bool:
    return applies(spec) and getattr(spec.inference, "quant_kernel", "unstated") == "exllama"


def exllama_reconstructs(spec) -> bool:
    """exllama at EXLLAMA_RECONS_ROWS rows (streams) or more: fp16 reconstruction and cuBLAS, not its GEMV."""
    return uses_exllama(spec) and spec.inference.concurrency >= EXLLAMA_RECONS_ROWS


def quant_kernel_gemm_seconds(spec, gemm_s, weight_read, read_rate, tensor_parallel):
    """The linears' GPU time of a decode step with the stated kernel (the module docstring): exllama's GEMV
    runs each row again (rows x EXLLAMA_ROW_SECONDS_PER_WEIGHT x quantized weights, a GPU's share), its
    reconstruction reads EXLLAMA_RECONS_BYTES_PER_WEIGHT more a weight; ``gemm_s`` (max of the weight read and
    the FLOPs) otherwise and as the floor."""
    if not uses_exllama(spec):
        return gemm_s
    quantized = counts.block_matmul_params(spec.model)
    if exllama_reconstructs(spec):
        return np.maximum(gemm_s, (weight_read + EXLLAMA_RECONS_BYTES_PER_WEIGHT * quantized) / read_rate)
    rows = float(spec.inference.concurrency)
    return np.maximum(gemm_s, rows * EXLLAMA_ROW_SECONDS_PER_WEIGHT * quantized / tensor_parallel)


def text(spec) -> str:
    """The answer's clause for the floor, the same on every card; "" where it does not apply."""
    if engine_step_host_seconds(spec):
        return (
            f"vLLM's V0 loop (inference.engine vllm_v0): {engine_step_host_seconds(spec) * 1e3:.2f} ms of host time "
            "a step (first token included) on every card, after the GPU's work (scheduling, input preparation, "
            "sampling's copy to the CPU, output processing); fitted on one publisher's batch-1 A100 host "
            "(vllm_v0_step_host_s)"
        )
    if not applies(spec):
        return ""
    per_layer = kernels_per_layer(spec)
    return (
        f"eager transformers decode (inference.engine hf_eager): {per_layer:.0f} kernels a layer x "
        f"{spec.model.num_layers} layers + {loop_kernels(spec):.0f} of the sampling loop at "
        f"{kernel_host_seconds(spec) * 1e6:.0f} us of host time"
        + _triton_text(spec)
        + f" = {host_seconds_per_token(spec) * 1e3:.1f} ms "
        "a token, on every card; a decode step takes the longer of that and the GPU's work (launches are "
        f"asynchronous), whose attention moves the KV cache at least {kv_cache_passes(spec):.0f} times a step "
        "(torch.cat copies the past keys and values into a new tensor before attention reads it"
        + _repeat_text(spec)
        + _copy_rate_text(spec)
        + "; Qwen-1's 8,192-token rows need up to 2 times the counted passes, so this is a floor). "
        + _layer_text(spec)
        + _rotary_text(spec)
        + "; "
        + _harness_text(spec)
        + _quant_kernel_text(spec)
    )


def _rotary_text(spec) -> str:
    """What inference.rotary_backend changed in a Qwen-1 flash-attn layer's count; "" where it is the layer's own."""
    backend = getattr(spec.inference, "rotary_backend", "unstated")
    if _flash_rotary(spec) is None or backend in ("unstated", "triton"):
        return ""
    if backend == "cuda_ext":
        return (
            ", its rotary through flash-attn's CUDA extension (inference.rotary_backend cuda_ext: flash-attn 2.0 to "
            "2.1.1, or a build with csrc/rotary), no Triton launch"
        )
    return (
        ", its rotary in Qwen-1's own eager code (inference.rotary_backend eager: flash-attn's rotary not importable, "
        "as flash-attn 1.0 without its csrc/rotary build): 16 kernels for q and k, not 6 (10 more than that count), and no Triton launch"
    )


def _layer_text(spec) -> str:
    release = getattr(spec.inference, "transformers_release", "unstated")
    if release == "unstated":
        return _LAYER_TEXT[getattr(spec.model, "eager_layer", "llama")]
    return (
        f"The count is transformers {release}'s {spec.model.eager_layer} decoder layer with "
        f"{spec.inference.attn_implementation} attention (inference.transformers_release), read from that release's "
        "modeling code"
    )


def _triton_text(spec) -> str:
    launches = triton_launches_per_layer(spec)
    if not launches:
        return ""
    return (
        f", {launches:.0f} of them a layer (flash-attn's rotary on q and k, a Triton kernel from flash-attn 2.1.2) "
        f"at {TRITON_LAUNCH_HOST_SECONDS * 1e6:.0f} us each, Triton's Python launcher (triton-lang/triton PR #3503's "
        "many-argument launch)"
    )


def _copy_rate_text(spec) -> str:
    if kv_cache_pass_seconds_equivalent(spec) == kv_cache_passes(spec):
        return ""
    return (
        f"; on this 2-byte cache the {kv_copy_passes(spec):.0f} copy passes run PyTorch's element-at-a-time kernels "
        f"and cost {EAGER_2BYTE_COPY_PASS_RATIO:.2f} passes each at the read rate (pytorch#150233's bf16 / fp32 cat "
        f"benchmark; torch 2.0-2.7), {kv_cache_pass_seconds_equivalent(spec):.1f} pass-equivalents, which lands the "
        "GPU-bound published Qwen2.5 steps but 7B at 30,720 input (transformers 4.46, torch 2.3.1)"
    )


def _harness_text(spec) -> str:
    if getattr(spec.inference, "generate_harness", "transformers") == "auto_gptq":
        return (
            "31 us a kernel is the host AutoGPTQ's README llama-7b fp16 A100 row measured (inference.generate_harness "
            "auto_gptq: a stated host rate, 31.9 us on the count; cause not shown), about 1.8x plain transformers "
            "generate's 17 us"
        )
    if _release_count(spec) is not None:
        return (
            "20 us a kernel is plain transformers generate on the stated release's count (inference.generate_harness "
            "transformers, hf_generate_release_kernel_host_s 19.67 us: the median of published A100 hosts read on "
            "their releases' own counts, 19.35-20.39 us, optimum's 2023 benchmark and the Qwen2.5 speed page; the "
            "unstated count keeps its own 17 us); inference.generate_harness auto_gptq takes the unstated count "
            "only (its 31.9 us was read on it)"
        )
    return (
        "17 us a kernel is plain transformers generate (inference.generate_harness transformers: the median of "
        "published A100 hosts, 14.7-18.1 us, optimum's benchmark and the Qwen2 / Qwen2.5 speed pages, on the "
        "unstated count; a stated inference.transformers_release runs at 19.67 us on its own count); state "
        "inference.generate_harness auto_gptq for the host AutoGPTQ's README llama-7b fp16 A100 row measured (31.9 "
        "us; cause not shown)"
    )


def _repeat_text(spec) -> str:
    n_rep = repeats_kv(spec)
    if n_rep:
        return (
            f", and transformers' repeat_kv, in the {spec.model.eager_layer} layer's "
            f"{spec.inference.attn_implementation} attention, copies it for each of the {n_rep:.0f} query heads a "
            "KV head before attention reads the copies" + _version_text(spec)
        )
    attn = getattr(spec.inference, "attn_implementation", "unstated")
    grouped = (
        spec.model.num_key_value_heads and spec.model.num_attention_heads > spec.model.num_key_value_heads
    )
    if attn == "flash_attention_2" and grouped and getattr(spec.model, "eager_layer", "llama") == "llama":
        return (
            "; the count assumes Llama code (model.eager_layer llama: LlamaFlashAttention2 hands flash-attn the KV "
            "heads as they are); Qwen2's and Mistral's flash-attn classes repeat the cache per query head "
            "(Qwen2's in transformers 4.37-4.47, Mistral's read in 4.38-4.46): state model.eager_layer qwen2 or "
            "mistral for their code"
        )
    if getattr(spec.inference, "attn_implementation", "unstated") == "unstated" and (
        spec.model.num_key_value_heads and spec.model.num_attention_heads > spec.model.num_key_value_heads
    ):
        return (
            "; grouped-KV code that repeats the cache per query head, as transformers' eager and SDPA attention "
            "and Qwen2's and Mistral's flash-attn do, moves 2 more passes for each query head a KV head: state "
            "inference.attn_implementation to count them"
        )
    return ""


def _version_text(spec) -> str:
    """Qwen2's flash-attn repeat is transformers 4.37-4.47 code (REPEAT_KV)."""
    if spec.model.eager_layer == "qwen2" and spec.inference.attn_implementation == "flash_attention_2":
        return (
            " (transformers 4.37 to 4.47: from 4.48.0 its flash-attn path, integrations/flash_attention.py, has no "
            "repeat_kv, and 3 passes would be that code's count, so on 4.48 and later this overcharges)"
        )
    return ""


def _quant_kernel_text(spec) -> str:
    kernel = getattr(spec.inference, "quant_kernel", "unstated")
    if kernel == "unstated":
        return ""
    if kernel == "cuda_old":
        return (
            ". The cuda_old 8-bit kernel (inference.quant_kernel: AutoGPTQ's qlinear_cuda_old / qlinear_cuda) adds "
            f"{CUDA_OLD_BARE_OPS:.0f} bare ops a quantized linear (the fp32 output's zeros, the input's and the scales' "
            f"casts to fp32, the output's cast back): {quant_kernel_bare_op_seconds(spec) * 1e3:.2f} ms a token at "
            f"{OPTIMIZER_OP_HOST_SECONDS.value * 1e6:.0f} us an op, included in the host time above; on the GPU "
            f"the same ops move {quant_kernel_gpu_bytes(spec) / 1e6:.0f} MB a step (mostly the scales' cast to fp32, "
            f"6 bytes a scale, one scale per {CUDA_OLD_GROUP_SIZE:.0f} weights, AutoGPTQ's default group), in the "
            "GPU's work at the read rate (no per-kernel GPU floor); the 8-bit kernel itself (vecquant8matmul_old) "
            "is read at the int8 rate, not measured for this kernel"
        )
    ratio = QUANT_KERNEL_STEP_RATIO[kernel]
    stack = (
        "measured by huggingface/optimum's GPTQ benchmark (Llama-2-13B on an A100-SXM4-80GB, AutoGPTQ 0.4.2, "
        "PyTorch 2.0.1, transformers 4.32: 33.711 against 36.958 ms a token at batch 1; the same benchmark on "
        "AutoGPTQ 0.7.0 and PyTorch 2.2 measured exllama at 1.041 of fp16, so the ratio is that 2023 stack's)"
    )
    rows = spec.inference.concurrency
    if exllama_reconstructs(spec):
        return (
            f". The {kernel} 4-bit kernel (inference.quant_kernel) at {rows} streams ({EXLLAMA_RECONS_ROWS} rows "
            "and up, AutoGPTQ 0.4's matmul_recons_thd) reconstructs each linear's fp16 weights and multiplies them "
            f"with cuBLAS: {EXLLAMA_RECONS_BYTES_PER_WEIGHT:.0f} bytes a quantized weight on top of the 4-bit read "
            "in the GPU's work and one more kernel a linear in the count above; the host floor takes no "
            f"{ratio:.3f} (exllama's own kernel's ratio to fp16, measured by huggingface/optimum's GPTQ benchmark "
            "on AutoGPTQ 0.4.2, PyTorch 2.0.1 and transformers 4.32)"
        )
    per_row_ms = EXLLAMA_ROW_SECONDS_PER_WEIGHT * counts.block_matmul_params(spec.model) * 1e3
    return (
        f". The {kernel} 4-bit kernel (inference.quant_kernel) takes its host floor at {ratio:.3f} of the fp16 "
        f"loop's, {stack}, included in the host time above. On the GPU its GEMV runs each stream's row again "
        f"(AutoGPTQ's q4_matmul: a set of blocks a row): {per_row_ms:.1f} ms a row for this model's quantized "
        f"linears at {EXLLAMA_ROW_SECONDS_PER_WEIGHT * 1e12:.2f} ps a weight (fitted on the same benchmark's batch 2 "
        f"and 4 rows, 37.25 and 54.14 ms), x {rows} stream{'s' if rows != 1 else ''} in the GPU's work (split by tensor parallelism)"
    )


_LAYER_TEXT = {
    "qwen2": (
        "The count is transformers' Llama decoder layer's, taken for Qwen2's (model.eager_layer qwen2; not "
        "recounted)"
    ),
    "mistral": (
        "The count is transformers' Llama decoder layer's, taken for Mistral's (model.eager_layer mistral; not "
        "recounted)"
    ),
    "qwen1": "The count is Qwen-1's layer with flash-attn's fused norm and rotary (model.eager_layer qwen1)",
    "qwen1_unfused_norm": (
        "The count is Qwen-1's layer with flash-attn 2 but eager RMSNorms, 37 kernels (model.eager_layer "
        "qwen1_unfused_norm: flash-attn's optional csrc/layer_norm not built)"
    ),
    "qwen1_no_flash": (
        "The count is Qwen-1's layer without flash-attn, 45 kernels (model.eager_layer qwen1_no_flash: eager norms "
        "and rotary, SDPA)"
    ),
    "llama": (
        "The count is transformers 4.30's Llama decoder layer (model.eager_layer llama: eager norms and rotary, "
        "q, k and v apart; AutoGPTQ's fused llama modules would issue fewer)"
    ),
}
