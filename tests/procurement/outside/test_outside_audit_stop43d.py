"""Issue 26, audited from outside at stop 43 (aud43d): inference.engine hf_eager (f67737b8,
procurement/sizing/serving_host.py), judged on eager single-stream decode rates no test of the project has.

Sources (each case repeats the figure it uses):
  [AGPTQ]  AutoGPTQ README, "Performance Comparison / Inference Speed" (PanQiWei/AutoGPTQ, mid-2023 README; the
           table was later removed, AutoGPTQ/AutoGPTQ@4160db15 no longer has it): "batch size of input is 1, decode
           strategy is beam search and enforce the model to generate 512 tokens"; "llama-7b | 1xA100-40G | 1 |
           18.87 | 25.53" (num_beams 1, fp16 tokens/s, gptq-int4 tokens/s; "the quantized model is loaded using
           the setup that can gain the fastest inference speed"). transformers generate, eager PyTorch.
  [QWEN]   QwenLM/Qwen @03cd81f5e4da6ab60fc8f97f3b8aa1206fdb08a9 README.md "Inference Performance" (the claim's own
           table; rows no test uses: the claim is checked on 7B / 14B / 72B Int4 only): one A100-SXM4-80G, PyTorch
           2.0.1, CUDA 11.8, Flash-Attention 2, "generating 2048" tokens, speed "averaged over the encoded and
           generated tokens": 1.8B BF16 54.09 / 4.23GB, Int8 55.56 / 3.48GB, Int4 71.07 / 2.91GB; 72B BF16 8.48
           "144.69GB (2xA100)", Int8 9.05 "81.27GB (2xA100)". Int4 / Int8 through AutoGPTQ. Two A100s under
           transformers' device_map="auto" split the layers (a pipeline, one stream: pipeline_parallel 2).
  [GPTFAST] https://pytorch.org/blog/accelerating-generative-ai-2/ ("Accelerating Generative AI with PyTorch II:
           GPT, Fast", Nov 2023): batch 1, "A100-80GB, power limited to 330W"; "Starting Point (25.5 tok/s)" for an
           "extremely basic and simple implementation" of Llama-7B in eager PyTorch: "it's heavily CPU overhead
           bound". The only eager engine the spec can state is hf_eager.

The product's hf_eager host floor was (23 kernels a layer x layers + 30) x 31 us for every language model: 7B
(32 layers) 766 kernels = 23.7 ms a token = 42.11 tokens/s on any card, whatever the weight format. fix43d: 23
for model.eager_layer qwen1 (the Qwen cases here state it), 51 (transformers 4.30 Llama layer) otherwise.
"""

from __future__ import annotations

import copy

import pytest

from procurement.api.sizing import size_spec_document
from procurement.services.recommendations import workload_spec_parse
from procurement.sizing import serving_host
from procurement.sizing.assumptions import EAGER_KERNEL_HOST_SECONDS
from tests.procurement.outside.test_outside_audit_stop43l import QWEN_1_8B as _QWEN_1_8B_SHAPE
from tests.procurement.outside.test_outside_recommendations_stop43 import QWEN_MODELS

# fix47h: the README's run (flash-attn 2 without the optional csrc/layer_norm): 37 kernels a layer (was qwen1, 23)
QWEN_1_8B = _QWEN_1_8B_SHAPE | {"eager_layer": "qwen1_unfused_norm"}


def qwen_report(model: dict, quantization: str, parallelism: dict | None = None) -> dict:
    inference = {"concurrency": 1, "context_len": 2049, "output_tokens": 2048, "engine": "hf_eager"}
    # acc44: the README's auto-gptq < 0.5 runs 4-bit on exllama (test_outside_recommendations_stop43.qwen_spec)
    if quantization == "int4":
        inference["quant_kernel"] = "exllama"
    # int8b: Int8 through AutoGPTQ's 8-bit linear, qlinear_cuda_old (test_outside_recommendations_stop43.qwen_spec)
    if quantization == "int8":
        inference["quant_kernel"] = "cuda_old"
    # fix47h: one harness for every row, plain transformers (the default); host47b's auto_gptq for Int4 / Int8 is
    # withdrawn (test_outside_recommendations_stop43.qwen_spec)
    spec = {
        "name": f"aud43d-{model['name']}-{quantization}",
        "task": "inference",
        "model": model,
        "weight_quantization": quantization,
        "inference": inference,
    }
    if parallelism:
        spec["parallelism"] = parallelism
    return size_spec_document(copy.deepcopy(spec), ["a100-sxm4-80gb"], calibrate=False)


def decode_speed(
    preset: str, quantization: str, gpu: str, output_tokens: int, prompt: int, harness: str = "transformers"
) -> float:
    spec = {
        "name": f"aud43d-{preset}-{quantization}",
        "task": "inference",
        "model": {"preset": preset},
        "weight_quantization": quantization,
        "inference": {
            "concurrency": 1,
            "context_len": prompt + output_tokens,
            "output_tokens": output_tokens,
            "engine": "hf_eager",
            "generate_harness": harness,
        },
    }
    report = size_spec_document(copy.deepcopy(spec), [gpu], calibrate=False)
    assert report["candidates"][0]["verdict"] in {"fits", "tight", "oversized"}
    return report["throughput"]["decode_tokens_per_second_per_stream"]


# --- 0. The claim's count, redone by hand ------------------------------------------------------------------------
# Qwen-1 modeling_qwen.py (Qwen/Qwen-7B remote code; copies found by the code search): RMSNorm.forward calls
# flash-attn's fused rms_norm when importable (1 kernel, x2); apply_rotary_pos_emb does t.float(),
# apply_rotary_emb_func(t_float, cos, sin), .type_as(t) (3, x q and k); QWenAttention's layer_past torch.cat for
# key and value (2); the logn query scaling (1, the logn tensor's cast is cached); FlashSelfAttention's two
# torch.arange cu_seqlens + flash_attn_unpadded_func (3); residual adds (2); QWenMLP a1 * F.silu(a2) (2): 18, + 5
# linears = 23 a layer. I agree. The loop (transformers GenerationMixin.sample, Qwen's generation config top_p 0.8,
# repetition_penalty 1.1): RepetitionPenaltyLogitsProcessor 6, TopPLogitsWarper 7, softmax + multinomial 3 agree;
# I count more in the eos bookkeeping (next_tokens * unfinished + pad * (1 - unfinished): 4; unfinished.mul(
# next_tokens.tile().ne(eos).prod()): 4; unfinished.max() + sync: 1 = 9 where the claim has 4) -> 35-37 loop
# kernels, not 30: +7 x 31 us = +0.22 ms on 23.7 ms (-0.9% speed), inside the noise of the per-kernel cost.
@pytest.mark.django_db
def test_qwen7b_host_floor_matches_hand_count(bundled_catalog):
    spec = workload_spec_parse(
        {
            "name": "qwen-7b-eager",
            "task": "inference",
            "model": {
                "name": "Qwen-7B",
                "num_layers": 32,
                "hidden_size": 4096,
                "num_attention_heads": 32,
                "intermediate_size": 11008,
                "vocab_size": 151936,
                "eager_layer": "qwen1",
            },
            "inference": {"concurrency": 1, "context_len": 2049, "output_tokens": 2048, "engine": "hf_eager"},
        }
    )
    assert EAGER_KERNEL_HOST_SECONDS.value == pytest.approx(31e-6)
    assert serving_host.kernels_per_layer(spec) == 23
    # host47b: the spec states no generate_harness, so the default (plain transformers generate) prices each kernel at
    # hf_generate_kernel_host_s, 16.99 us (was eager_kernel_host_s, 31 us: 23.746 ms); the count is unchanged
    # hfeager: 2 of the 23 (flash-attn's rotary on q and k, a Triton kernel from flash-attn 2.1.2) go through Triton's
    # Python launcher at 62 us (triton-lang/triton PR #3503): (21 x 32 + 30) x 16.99 us + 64 x 62 us = 15.895 ms
    # (was 23 x 32 + 30 kernels at 16.99 us, 13.014 ms)
    by_hand = (21 * 32 + 30) * 16.99e-6 + 2 * 32 * 62e-6
    assert by_hand == pytest.approx(0.015895, rel=1e-4)
    assert serving_host.host_seconds_per_token(spec) == pytest.approx(by_hand, rel=1e-6)
    # my loop count (37) moves the floor by under 1%: not a defect worth a case
    assert (7 * 16.99e-6) / by_hand < 0.01


# --- Misses: the Qwen-1 count is applied to every architecture ---------------------------------------------------
# fix43d: a model now runs the decoder layer it states (model.eager_layer): qwen1 keeps the 23 kernels; llama, the
# default, is transformers v4.30.2's LlamaDecoderLayer counted from modeling_llama.py: 44 non-GEMM kernels (norms
# 2 x 8, the fp32 cos / sin cache casts 2, rotary 12, KV cat 2, matmul-softmax attention with the finfo.min clamp 8,
# residuals 2, SiLU and gate 2) + 7 linears = 51 a layer. Llama-7B: (51 x 32 + 30) x 31 us = 51.5 ms = 19.41
# tokens/s on any card.
_LLAMA_COUNT = (
    "hf_eager prices transformers 4.30's Llama decoder layer (51 kernels: eager LlamaRMSNorm 8 x2, rotate_half "
    "rotary, q, k, v apart, matmul-softmax attention) for a model that states no eager_layer: Llama-7B 1,662 "
    "kernels x 31 us = 51.5 ms, 19.41 tokens/s. "
)


# [AGPTQ] llama-7b fp16, 1xA100-40G, batch 1, num_beams 1, 512 generated tokens: 18.87 tokens/s = 53.0 ms a
# token. GPU work (13.5 GB of weights at ~1.5 TB/s) ~9 ms: host-bound. 53.0 ms / 32 layers = 1.66 ms a layer =
# 53 kernels at 31 us.
# Was a strict xfail: published 18.87, ours 42.11 (+123%). Now 19.41 (+2.9%) because the eager floor counts the
# model's own decoder layer (transformers 4.30 LlamaDecoderLayer, 51 kernels) instead of Qwen-1's 23 for every model.
@pytest.mark.django_db
def test_autogptq_llama7b_fp16_a100_40g_batch1(bundled_catalog):
    # host47b: states inference.generate_harness auto_gptq (AutoGPTQ @4b8524ff examples/benchmark/generation_speed.py
    # drives AutoGPTQForCausalLM.generate). Unstated it would be plain transformers at 16.99 us: 35.24 tokens/s, +86.8%.
    # fix47h (aud47h): UNEXPLAINED host. auto_gptq is now only a stated host-rate choice, "the host AutoGPTQ's README
    # llama-7b fp16 A100 row measured, 31 us a kernel; cause not shown": host47b's cause (AutoGPTQ's inference_mode +
    # autocast generate wrapper, _base.py l. 387-390) is withdrawn, the same-host Qwen-1 Int / BF16 pairs refute it.
    # Kept passing with the spec stating auto_gptq, not made a strict xfail at the default: the field is a stated host
    # and this row is that host's only published measurement (31.89 us on the 51 count); its pass is therefore no
    # evidence for the rate (the value is read off this row), and what makes this host 1.9x the default's is not shown
    # (no same-host pair with and without AutoGPTQ's harness is published; torch / transformers release ruled out,
    # test_outside_host_release_stop47.py).
    speed = decode_speed("llama-2-7b", "none", "a100-sxm4-40gb", 512, 64, "auto_gptq")
    assert speed == pytest.approx(1 / ((51 * 32 + 30) * 31e-6), rel=0.002)  # host-bound: the floor decides
    assert speed == pytest.approx(18.87, rel=0.15)


# [AGPTQ] llama-7b gptq-int4, same run, "the setup that can gain the fastest inference speed" (AutoGPTQ's fused
# attention / fused MLP injection for llama): 25.53 tokens/s = 39.2 ms a token = 1.22 ms a layer (39 kernels at
# 31 us). Int4 runs 35% faster than fp16 in a host-bound loop: the fused modules cut kernels, and the product prices
# Int4 and fp16 alike (one kernel a linear, the same layer). Ours 42.11 (+65%) -> 19.41 (-24.0%).
@pytest.mark.django_db
@pytest.mark.xfail(
    strict=True,
    reason="UNEXPLAINED (labelled at stop 48; its text said EXPLAINED, but the 39 kernels a layer are read off this "
    "row's own step, so (b) fails): "
    + _LLAMA_COUNT
    + "AutoGPTQ llama-7b gptq-int4 on A100-40G: published 25.53 tokens/s, ours 19.41 (-24.0%; before fix43d "
    "42.11, +65%). 39.2 ms a token = 39 kernels a layer at 31 us: AutoGPTQ's fused llama attention / MLP modules "
    "(its 'fastest' setup: fused qkv, fused attention, fused MLP) replace about 12 of the 51; the spec cannot "
    "state them and the product gives Int4 the fp16 layer. EXPLAINED by the kernel count, not fixed. acc44: the "
    "table does not name its 4-bit kernel, so inference.quant_kernel stays unstated here; stated as exllama "
    "(0.912 of the fp16 step, huggingface/optimum's GPTQ benchmark) it would be 21.28 (-16.6%), still out: the "
    "fused modules' kernel count is the rest, and the spec cannot state them.",
)
def test_autogptq_llama7b_int4_a100_40g_batch1(bundled_catalog):
    speed = decode_speed(
        "llama-2-7b", "int4", "a100-sxm4-40gb", 512, 64, "auto_gptq"
    )  # host47b: as the fp16 row
    assert speed == pytest.approx(19.41, rel=0.02)
    assert speed == pytest.approx(25.53, rel=0.15)


# [GPTFAST] Llama-7B eager baseline, A100-80GB at 330 W, batch 1: 25.5 tokens/s = 39.2 ms a token. gpt-fast's
# model.py layer in eager: RMSNorm 8 x2, fused wqkv 1, apply_rotary_emb (float, 4 mul, add, sub, stack,
# type_as) 9 x2, KV cache index_put 2, repeat_interleave 2, the mask gather 1, SDPA with a mask 1-3, wo 1,
# residual 2, w1 w3 silu mul w2 5: 45-51 a layer -> 39.2 ms / (32 x 45-51 + 10) = 24-27 us a kernel. So 31 us a
# kernel is plausible (the claim's question (2)). Ours 42.11 (+65%) -> 19.41 (-23.9%): the product now prices
# transformers' loop and layer, not gpt-fast's.
# fix46s (aud46s): that count is not the baseline's. The blog's 25.5 tokens/s precedes its "Step 1: Reducing CPU
# overhead through torch.compile and a static kv-cache"; gpt-fast's model.py (read @03e10bc2) is the code after that
# step (static KVCache.update index_put, the mask gather), so its 45-51 a layer counts a later stack. At the product's
# 31 us that count gives (32 x 45 + 10) x 31 us = 44.95 ms (22.25 tokens/s) to (32 x 51 + 10) x 31 us = 50.90 ms
# (19.65): -12.7% to -22.9% against the published 25.5, so the count moves about 1 to 11 of the row's 24 points
# (aud46s rounds it 0-10); the rest is the host's rate (24-27 us a kernel only on the post-Step-1 count), unsized.
@pytest.mark.django_db
@pytest.mark.xfail(
    strict=True,
    reason="UNEXPLAINED (host rate) (fix46s; serve46's EXPLAINED rejected by aud46s): [GPTFAST] Llama-7B eager on "
    "A100-80GB, published 25.5 tokens/s (39.2 ms a token), ours 19.41 (-23.9%) at 31 us; host47b: 35.41 (+38.9%) at "
    "the default harness's 16.99 us (plain transformers generate, hf_generate_kernel_host_s; 1,662 kernels = 28.2 "
    "ms): gpt-fast's baseline is neither transformers' generate nor AutoGPTQ's (inference.generate_harness has no "
    "value for it), and its 39.2 ms sits between the two harness rates on the 4.30 count (23.6 us a kernel). The blog's baseline is "
    "'heavily CPU overhead bound', so its step is the host's issue time; but it precedes the blog's 'Step 1: "
    "Reducing CPU overhead through torch.compile and a static kv-cache', and the 45-51 kernels a layer serve46 "
    "counted were read from gpt-fast's model.py (stored @03e10bc2), the code after Step 1 (static KVCache.update, "
    "the mask gather): not the baseline's layer, which is not published. At the product's 31 us that count gives "
    "44.95-50.90 ms (22.25-19.65 tokens/s, -12.7 to -22.9%): it moves about 1-11 of the 24 points; the rest is the "
    "host's per-kernel rate, which no published row of this host sizes (24-27 us a kernel holds only on the "
    "post-Step-1 count; the A100 hosts of other publishers run 17-32 us: test_outside_qwen25_host_stop46.py, "
    "test_outside_audit_stop44.py, test_autogptq_llama7b_fp16_a100_40g_batch1). No field states the host's "
    "per-kernel issue time, and hf_eager is the only eager stack a spec can state. Earlier reason (serve46, "
    "EXPLAINED): (a) the blog's CPU-bound trace, gpt-fast model.py counted at 45-51 a layer; (b) 39.2 ms / (32 x "
    "45-51 + 10) = 24-27 us a kernel, inside the published A100 hosts' 17-32 us; (c) no field for the host's issue "
    "time, and hf_eager is the only eager stack a spec can state (no gpt-fast layer). History: "
    + _LLAMA_COUNT
    + "gpt-fast blog eager Llama-7B baseline on A100-80GB (330 W): published 25.5 tokens/s, ours 19.41 (-23.9%; "
    "before fix43d 42.11, +65%). gpt-fast is not transformers: its own eager model.py layer (fused wqkv, SDPA) "
    "is 45-51 kernels with a 10-kernel loop, 39.2 ms / 1,450-1,640 kernels = 24-27 us a kernel, under the "
    "product's 31 us (the fast end of 31-46 us, fitted on a diffusers UNet) and transformers' 51 + 30. "
    "hf_eager is the only eager engine the spec can state. gpt-fast's KVCache.update writes the cache in place "
    "(k_out[:, :, input_pos] = k_val; stored id 5887513086), no torch.cat copy, where hf_eager charges 3 passes "
    "(fixd45: at 200 tokens the GPU work stays under the host floor, so the copy moves nothing here; no spec value "
    "states gpt-fast's eager stack). Then read as EXPLAINED (count and per-kernel cost of another stack), not fixed.",
)
def test_gptfast_blog_eager_llama7b_a100_80g_batch1(bundled_catalog):
    speed = decode_speed("llama-2-7b", "none", "a100-sxm4-80gb", 200, 10)
    assert speed == pytest.approx(35.41, rel=0.02)  # host47b: 19.41 at 31 us
    assert speed == pytest.approx(25.5, rel=0.15)


# --- Held-out rows of the claim's own source: Qwen-1.8B on one A100-SXM4-80G -------------------------------------
# The count was set on 7B / 14B; 1.8B (24 layers, hidden 2,048, 16 heads, w1 / w2 5,504, vocabulary 151,936: the
# shape test_outside_audit_stop43l uses) is a hold-out. By hand: (23 x 24 + 30) x 31 us = 18.04 ms = 55.43 tokens/s,
# host-bound (GPU work ~3 ms). BF16 54.09: +2.5%; Int8 55.56: -0.2%; Int4 71.07: -22.0%.
# Was a strict xfail [int4]: "Qwen-1.8B Int4: published 71.07 tokens/s, ours 55.43 (-22.0%) ... AutoGPTQ's exllama
# Int4 path costs the host less a token than the BF16 / Int8 path ... one eager_kernel_host_s cannot show it". Now
# 60.77 (-14.5%) because the spec states the README's kernel (inference.quant_kernel exllama), whose one-stream
# step is 0.912 of the fp16 loop's, measured on Llama-2-13B (huggingface/optimum @09638629 tests/benchmark/README.md,
# A100-SXM4-80GB, batch 1: 33.711 / 36.958 ms a token): 18.04 ms x 0.912 = 16.46 ms a token. A held-out row of that
# ratio, inside by 0.5 points: the README's 14.07 ms is still 24 us a kernel on the same count at the ratio's 28 us.


# hfeager: Qwen-1's flash-attn rotary (apply_rotary_emb_func on q and k) is, from flash-attn 2.1.2, a Triton kernel
# (Dao-AILab/flash-attention 942fcbf0 "[Rotary] Implement rotary in Triton"; @v2.3.3 flash_attn/ops/triton/rotary.py:
# one rotary_kernel[grid] launch, 19 runtime arguments), and the README's install takes flash-attn above 2.1.1 ("If the
# version of flash-attn is higher than 2.1.1, the following is not needed. # pip install csrc/rotary", QwenLM/Qwen
# @03cd81f5 README). A jitted Triton kernel is launched through Triton's Python launcher: 62 us for a many-argument
# kernel (triton-lang/triton PR #3503, the triton 2 shipped with PyTorch 2.2; PR #1431, triton 2.0 era: ~42-55 us for a
# few-argument one), where the engine priced it as a CUDA kernel at 16.99 us. By hand, 1.8B (24 layers): 35 kernels
# a layer at 16.99 us and 2 launches at 62 us, (35 x 24 + 30) x 16.99 us + 48 x 62 us = 14.781 + 2.976 = 17.757 ms
# = 56.31 tokens/s (x 0.912 exllama: 16.196 ms, 61.74). Not fitted: the 62 us is the PR's published figure.
# BF16 54.09: 64.12 (+18.5%) -> 56.31 (+4.1%), its strict xfail removed (FIXED); Int8 55.56: 64.12 (+15.4%) -> 56.31
# (+1.4%), its strict xfail removed (FIXED); Int4 71.07: 70.29 (-1.1%) -> 61.74 (-13.1%), still inside: the README's
# Int4 step is shorter than its BF16 one by more than exllama's 0.912 (71.07 / 54.09 = 1.314), not sized here.
# Was a strict xfail [none]: QWEN1_BF16_HOST47 ("Qwen-1.8B BF16: published 54.09 tokens/s, ours 55.43 (+2.5%) ->
# 101.13 (+87.0%, host47b) -> 64.12 (+18.5%, fix47h)"); [int8]: "UNEXPLAINED (fix47h ...): ours 55.43 (-0.2%) -> 64.12
# (+15.4%) ... It misses by the BF16 row's own host excess ... Not sized: this host's per-kernel rate, which no field
# states." The per-kernel rate was not the host's: 20.1 us on 37 kernels was 35 at 16.99 us and 2 Triton launches.
@pytest.mark.django_db
@pytest.mark.parametrize(("quantization", "published"), [("none", 54.09), ("int8", 55.56), ("int4", 71.07)])
def test_qwen_1_8b_decode_on_one_a100_within_15_percent(bundled_catalog, quantization, published):
    # fix47h: every row on one harness (transformers, 16.99 us) and the README's layer (qwen1_unfused_norm, 37)
    rate, triton = 16.99e-6, 62e-6
    host = (35 * 24 + 30) * rate + 2 * 24 * triton
    # int8b: Int8 states inference.quant_kernel cuda_old (qwen_report): + 24 layers x 5 quantized linears x 4 bare
    # ops x 7 us (optimizer_op_host_s) = 3.36 ms a token, 17.757 + 3.360 = 21.117 ms = 47.35 tokens/s. Restated
    # (was 56.31, +1.4%) -> 47.35 (-14.8%), still inside 15%: the spec now states what the run used (AutoGPTQ's
    # 8-bit qlinear_cuda_old, qwen_spec's note) and this is the engine's figure for it. The README's own Int8 step is
    # 0.49 ms SHORTER than its BF16 one (55.56 against 54.09) where the count adds 3.36 ms: not sized (UNEXPLAINED
    # in test_outside_host_rate_audit_stop47.py's Int8 / BF16 ratio, the same card's pair at 8,192).
    bare = 24 * 5 * 4 * 7e-6 if quantization == "int8" else 0.0
    by_hand = 1 / (host * (33.711 / 36.958 if quantization == "int4" else 1.0) + bare)
    assert by_hand == pytest.approx({"none": 56.31, "int8": 47.35, "int4": 61.74}[quantization], abs=0.01)
    speed = qwen_report(QWEN_1_8B, quantization)["throughput"]["decode_tokens_per_second_per_stream"]
    assert speed == pytest.approx(by_hand, rel=0.002)  # host-bound: the floor decides
    assert speed == pytest.approx(published, rel=0.15)


# Memory of the same rows (GB read as GiB; ours 4.59 / 3.40 / 2.84 GiB: +8.4%, -2.3%, -2.3%).
@pytest.mark.django_db
@pytest.mark.parametrize(("quantization", "published"), [("none", 4.23), ("int8", 3.48), ("int4", 2.91)])
def test_qwen_1_8b_memory_on_one_a100_within_10_percent(bundled_catalog, quantization, published):
    peak = qwen_report(QWEN_1_8B, quantization)["memory"]["total_per_gpu_gib"]
    assert peak == pytest.approx(published, rel=0.10)


# Qwen-72B on 2 x A100-SXM4-80G (device_map="auto": layers split, pipeline_parallel 2, one stream). GPU-bound in
# the engine (host floor 80 x 23 + 30 = 1,870 kernels x 31 us = 58.0 ms): BF16 ours 9.86 tokens/s = 101.4 ms a
# token for 144 GB of weights (1.42 TB/s); the README's 8.48 is 117.9 ms (1.22 TB/s). Int8 ours 14.69 (68.1 ms:
# 72 GB / int8_decode_bandwidth_efficiency 0.765 at 1.42 TB/s); the README's 9.05 = 110.5 ms, barely faster than
# its BF16.
# cls45d: the eager loop reads the KV cache 3 times a step (serving_host.EAGER_KV_CACHE_PASSES: Qwen-1's
# torch.cat((past_key, key), dim=1) copies the cache into a new tensor, then flash-attn reads it): Qwen-72B's cache,
# 80 layers x 2 x 8,192 x 2 B = 2.62 MB a token at a mean context of 1,025, 2.7 GB, is read and written twice more,
# +3.7 ms a token: BF16 9.86 -> 9.51 (105.2 ms), Int8 14.69 -> 13.92.
_QWEN_72B_2GPU = {
    # Was a strict xfail: "published 8.48 tokens/s, ours 9.86 (+16.3%) ... UNEXPLAINED (1.3 points out of
    # tolerance)". Now 9.51 (+12.1%) because the eager loop's torch.cat copy of the KV cache is counted (cls45d, 3
    # passes over the cache a step, not 1; held out, no constant fitted on this row).
    "none": (8.48, None),
    "int8": (
        9.05,
        "UNEXPLAINED (withdrawn by audx48b: (b) fails: the 0.53 is fitted on this row's own 9.05 tokens/s (110.5 ms "
        "= 1 / 9.05) and even so lands at +16%, outside 15%; (a) cites no AutoGPTQ kernel source (repo@commit, "
        "lines); ours 13.187 (+45.7%) at audx48b, 13.26 (+46.5%) at fix48x's corrected copy ratio 1.944, the test's "
        "stale 13.92 pin corrected to it (fix48x); lead: the README's 7B / 14B Int8 / BF16 "
        "ratios, 0.915 / 0.909, are a held-out size to try): "
        "EXPLAINED: Qwen-72B Int8 on 2 x A100 (pipeline 2): published 9.05 tokens/s, ours 14.69 (+62%; cls45d: 13.92, "
        "+53.8%, "
        "with the eager loop's 3 passes over the KV cache). The engine reads the "
        "Int8 weights (72 GB) at int8_decode_bandwidth_efficiency 0.765 of BF16's bandwidth (fitted on gpt-fast's "
        "compiled int8 kernel, procurement/sizing/assumptions.py): 68.1 ms. AutoGPTQ's 8-bit CUDA kernel (exllama "
        "is 4-bit only) reads them at 72 GB / 110.5 ms = 0.65 TB/s, 0.53 of the same README's BF16 1.22 TB/s, "
        "which is also why 7B / 14B Int8 run slower than BF16 there (37.47 vs 40.93, 29.28 vs 32.22). EXPLAINED: "
        "one decode efficiency per weight format (throughput.DECODE_EFFICIENCY), not per kernel library; at 0.53 "
        "the engine would give ~10.5 tokens/s (+16%, the BF16 row's own gap): the kernel accounts for the rest. "
        "acc44: a spec value could state the library (inference.quant_kernel, now exllama for 4-bit), but "
        "AutoGPTQ's 8-bit kernel has no published speed outside this README's rows (optimum's GPTQ benchmark is "
        "4-bit only), so its 0.53 would be fitted on this case: not added. int8b: the row now states "
        "inference.quant_kernel cuda_old (AutoGPTQ's 8-bit qlinear_cuda_old: 4 bare ops a quantized linear at 7 us, "
        "host only); unchanged at 13.36, GPU-bound (host 69.2 ms under 74.9 ms of GPU work): the kernel's read rate "
        "is still not priced. int8gpu: 13.36 -> 12.95 (+43.1%), the 4 bare ops' GPU bytes (the scales' fp32 cast, "
        "3.2 GB a token). Held out against a read rate for vecquant8matmul_old set on the Qwen2.5 page's 7B 30,720 "
        "pair (0.361 of the 16-bit rate): 6.72 tokens/s (-25.7%); this row alone sets it at 0.503 (bisection): the "
        "two pages disagree by 39% (kernel rate by matrix size or by AutoGPTQ 0.4 / 0.6 stack), so no rate landed.",
    ),
}


@pytest.mark.django_db
@pytest.mark.parametrize(
    "quantization",
    [
        pytest.param(q, marks=pytest.mark.xfail(strict=True, reason=_QWEN_72B_2GPU[q][1]))
        if _QWEN_72B_2GPU[q][1]
        else q
        for q in _QWEN_72B_2GPU
    ],
)
def test_qwen_72b_decode_on_two_a100_layer_split_within_15_percent(bundled_catalog, quantization):
    published = _QWEN_72B_2GPU[quantization][0]
    report = qwen_report(QWEN_MODELS["72b"], quantization, {"gpus": 2, "pipeline_parallel": 2})
    assert report["candidates"][0]["verdict"] in {"fits", "tight", "oversized"}
    speed = report["throughput"]["decode_tokens_per_second_per_stream"]
    # decode48b: BF16 9.51 (+12.1%) -> 9.16 (+8.0%), the cat's 2 copy passes at 2.057 each on the bf16 cache;
    # fix48x: at the corrected 1.944 a copy pass, BF16 9.20 (+8.4%), Int8 13.26 (+46.5%; its pin was a stale 13.92,
    # cls45d's, audx48b item 3: the strict xfail now fails only on its 15%)
    # int8b: Int8 states inference.quant_kernel cuda_old (qwen_report): unchanged at 13.36 tokens/s (74.9 ms a token,
    # GPU-bound): the host floor grows 58.0 -> 69.2 ms (80 x 5 x 4 x 7 us = 11.2 ms), still under the GPU's work
    # int8gpu: Int8 13.36 (+47.6%) -> 12.95 (+43.1%): cuda_old's 4 bare ops now also move their bytes on the GPU
    # (the scales' fp32 cast, 6 bytes a scale at 1 scale / 128 weights: 3.2 GB a token, +2.4 ms on this GPU-bound step)
    assert speed == pytest.approx({"none": 9.20, "int8": 12.95}[quantization], rel=0.02)
    assert speed == pytest.approx(published, rel=0.15)
