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

Not counted: transformers' own Llama decoder layer (eager LlamaRMSNorm 8 kernels, rotate_half rotary 5 a tensor,
q, k and v apart: about 40 a layer) runs slower than this count; the count here is Qwen-1's with flash-attn's
fused kernels, the README's stack. Not fitted on any row: the README's seven single-A100 rows check it
(tests/procurement/outside/test_outside_recommendations_stop43.py).
"""

from __future__ import annotations

from procurement.sizing.assumptions import EAGER_KERNEL_HOST_SECONDS

LAYER_NON_GEMM_KERNELS = 18.0
ATTENTION_LINEARS = 2.0  # q, k, v fused (Qwen-1's c_attn) and the output projection
LOOP_KERNELS = 30.0


def applies(spec) -> bool:
    """An eager transformers decode loop on a language model."""
    return (
        spec.task == "inference"
        and spec.model.image_arch is None
        and getattr(spec.inference, "engine", "compiled") == "hf_eager"
    )


def kernels_per_layer(spec) -> float:
    linears = ATTENTION_LINEARS + (3.0 if spec.model.gated_mlp else 2.0)
    return LAYER_NON_GEMM_KERNELS + linears


def host_seconds_per_token(spec) -> float:
    """Host time of one decode step of an eager transformers loop; 0 where it does not apply."""
    if not applies(spec):
        return 0.0
    kernels = kernels_per_layer(spec) * spec.model.num_layers + LOOP_KERNELS
    return kernels * EAGER_KERNEL_HOST_SECONDS.value


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
        "asynchronous). The count is Qwen-1's layer with flash-attn's fused norm and rotary; 31 us is the fast end "
        "of the published 31-46 us a kernel"
    )
