"""The host floor of a Hugging Face transformers eager decode loop (issue 26, stop 43; `inference.engine`).

`compiled` (the default): vLLM, TensorRT-LLM, SGLang and gpt-fast capture a decode step in CUDA graphs or
compiled kernels, so a step costs its GPU work (throughput.inference_throughput). `hf_eager`: transformers'
`generate` in eager PyTorch (Int4 / Int8 through AutoGPTQ's kernels) issues every kernel of every layer from
Python every token. Launches are asynchronous, so a step takes the longer of its GPU work and its host time (a
max, not a sum, the form of lora_host.py and image_model.host_excess_seconds). The host time is counted, not
fitted: kernels a layer x layers + the loop's own kernels, each at eager_kernel_host_s (31 us, calibrated on an
eager diffusers UNet; its caveat applies: the published range is 31-46 us a kernel, this is its fast end).

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
one kernel at the BF16 one's host cost. `exllama` (AutoGPTQ / transformers' GPTQ exllama 4-bit kernel) takes a
single-stream step at QUANT_KERNEL_STEP_RATIO["exllama"] = 0.912 of the same loop's fp16 step, measured, not
fitted: huggingface/optimum @09638629 tests/benchmark/README.md, "GPTQ benchmark", Llama-2-13B-chat on one
A100-SXM4-80GB, transformers generate, prompt 512, 512 new tokens, batch 1: fp16 36.958 ms a token, GPTQ 4-bit
group 128 exllama 33.711 (33.711 / 36.958 = 0.912), autogptq-cuda-old 46.44 (1.257, not sized: its step is the
kernel's GPU time, not the host's). The ratio is applied to the host floor, the part of the step the library's
launches set, at concurrency 1 only: at batch 2 the same table has exllama at 0.997 of fp16 (37.25 / 37.35),
where its GEMV's GPU time grows (batch 4: 1.43x), so nothing is claimed beyond one stream. Held out (none used
to set it): the QwenLM/Qwen @03cd81f5 README's Int4 rows ("provided by the autogptq library", torch 2.0.1, so
auto-gptq < 0.5.0, whose 4-bit default is the exllama kernel): 1.8B 71.07, 7B 50.09, 14B 38.72 tokens/s
(tests/procurement/outside/test_outside_recommendations_stop43.py, test_outside_audit_stop43d.py).
Not fitted on any row: the Qwen README's seven single-A100 rows check the Qwen-1 count
(tests/procurement/outside/test_outside_recommendations_stop43.py), AutoGPTQ's llama-7b fp16 row the Llama count
(tests/procurement/outside/test_outside_audit_stop43d.py).
"""

from __future__ import annotations

from procurement.sizing.assumptions import EAGER_KERNEL_HOST_SECONDS

# model.eager_layer: (non-GEMM kernels a decode layer, attention linears); the MLP adds 3 linears (2 ungated)
EAGER_LAYER_KERNELS = {
    "qwen1": (18.0, 2.0),  # Qwen-1 QWenBlock with flash-attn: c_attn (q, k, v fused) and c_proj
    "llama": (44.0, 4.0),  # transformers 4.30 LlamaDecoderLayer: q_proj, k_proj, v_proj, o_proj
}
LOOP_KERNELS = 30.0
# inference.quant_kernel: a single-stream step of the eager loop relative to the same loop in fp16, measured
# (optimum tests/benchmark/README.md, Llama-2-13B, A100-SXM4-80GB, batch 1: 33.711 / 36.958 ms a token; the
# module docstring). No fit: one published ratio. Held out: Qwen README Int4 1.8B / 7B / 14B (stop 44: -22.0% /
# -15.9% / -12.3% unstated -> -14.5% / -7.8% / -3.8%) and 72B on one A100 (+52.4% -> +67.1%, further out: its
# own cause, 1.10 ms a layer against 0.73-0.76, is not this ratio).
QUANT_KERNEL_STEP_RATIO = {"unstated": 1.0, "exllama": 33.711 / 36.958}


def applies(spec) -> bool:
    """An eager transformers decode loop on a language model."""
    return (
        spec.task == "inference"
        and spec.model.image_arch is None
        and getattr(spec.inference, "engine", "compiled") == "hf_eager"
    )


def kernels_per_layer(spec) -> float:
    non_gemm, attention_linears = EAGER_LAYER_KERNELS[getattr(spec.model, "eager_layer", "llama")]
    return non_gemm + attention_linears + (3.0 if spec.model.gated_mlp else 2.0)


def host_seconds_per_token(spec) -> float:
    """Host time of one decode step of an eager transformers loop; 0 where it does not apply."""
    if not applies(spec):
        return 0.0
    kernels = kernels_per_layer(spec) * spec.model.num_layers + LOOP_KERNELS
    return kernels * EAGER_KERNEL_HOST_SECONDS.value * quant_kernel_ratio(spec)


def quant_kernel_ratio(spec) -> float:
    """The stated quantization kernel's measured single-stream step ratio to fp16 (QUANT_KERNEL_STEP_RATIO);
    1 where none is stated or above one stream (only batch 1 was measured to differ)."""
    kernel = getattr(spec.inference, "quant_kernel", "unstated")
    if spec.inference.concurrency != 1:
        return 1.0
    return QUANT_KERNEL_STEP_RATIO.get(kernel, 1.0)


def text(spec) -> str:
    """The answer's clause for the floor, the same on every card; "" where it does not apply."""
    if not applies(spec):
        return ""
    per_layer = kernels_per_layer(spec)
    return (
        f"eager transformers decode (inference.engine hf_eager): {per_layer:.0f} kernels a layer x "
        f"{spec.model.num_layers} layers + {LOOP_KERNELS:.0f} of the sampling loop at "
        f"{EAGER_KERNEL_HOST_SECONDS.value * 1e6:.0f} us of host time = {host_seconds_per_token(spec) * 1e3:.1f} ms "
        "a token, on every card; a decode step takes the longer of that and the GPU's work (launches are "
        "asynchronous). "
        + _LAYER_TEXT[getattr(spec.model, "eager_layer", "llama")]
        + "; 31 us is the fast end of "
        "the published 31-46 us a kernel" + _quant_kernel_text(spec)
    )


def _quant_kernel_text(spec) -> str:
    kernel = getattr(spec.inference, "quant_kernel", "unstated")
    if kernel == "unstated":
        return ""
    ratio = QUANT_KERNEL_STEP_RATIO[kernel]
    if spec.inference.concurrency != 1:
        return (
            f". The {kernel} kernel (inference.quant_kernel) was measured faster than fp16 at one stream only; "
            "at this concurrency its host time is the fp16 loop's"
        )
    return (
        f". The {kernel} 4-bit kernel (inference.quant_kernel) takes a one-stream step at {ratio:.3f} of the fp16 "
        "loop's, measured (huggingface/optimum tests/benchmark/README.md: Llama-2-13B on an A100-SXM4-80GB, "
        "33.711 against 36.958 ms a token), included in the host time above"
    )


_LAYER_TEXT = {
    "qwen1": "The count is Qwen-1's layer with flash-attn's fused norm and rotary (model.eager_layer qwen1)",
    "llama": (
        "The count is transformers 4.30's Llama decoder layer (model.eager_layer llama: eager norms and rotary, "
        "q, k and v apart; AutoGPTQ's fused llama modules would issue fewer)"
    ),
}
