"""Outside audit aud47h (issue 26, stop 47): host47 / host47b, hf_eager's host rate and inference.generate_harness.

Cases from one published source no test used before (grep of tests/ for 54.04, 45.01, 48.17, 55.62, 76.45: none):

  [QW18C]  Qwen/Qwen-1_8B-Chat model card README.md, "推理速度 (Inference Speed)" (Hugging Face hub; stored copy
           id 796929382 of the code search): "generating 8192 new tokens with 1 context token ... a single
           A100-SXM4-80G GPU with PyTorch 2.0.1 and CUDA 11.4", tokens/s at 2,048 / 8,192 generated:
             BF16  FlashAttn v2 54.09 / 54.04, v1 51.70 / 55.04, Disabled 48.17 / 45.01
             Int8  v2 55.56 / 55.62;  Int4 v2 71.07 / 76.45 (FP32 and the other Int rows not used).
           The 2,048 v2 rows are the QwenLM/Qwen README's 1.8B rows (already tested in test_outside_audit_stop43d.py);
           the 8,192 column and the Disabled rows are new.
  [QCODE]  Qwen-1's remote code, modeling_qwen.py at zhangningboo/Qwen-7B (a mirror of the hub repo Qwen/Qwen-7B)
           @e7a368b0774370edec29674e7c51f52fc7663f59 (2023-11-30, the day of the 1.8B release and its card):
           _import_flash_attn runs only with use_flash_attn; RMSNorm.forward takes flash_attn.ops.rms_norm when it
           imports (csrc/layer_norm, "optional" in the README's install) else self._norm(x.float()).type_as(x) *
           self.weight (float, pow, mean, add, rsqrt, mul, type_as, weight mul: 8 kernels); apply_rotary_pos_emb
           takes flash_attn's apply_rotary_emb_func (t.float(), the kernel, type_as: 3) else t.float(), t_rot * cos,
           _rotate_half (neg, cat), * sin, add, cat with the empty t_pass, type_as: 8; without flash-attn the
           attention is F.scaled_dot_product_attention on torch 2 (SUPPORT_TORCH2, since @e08ed08 2023-10-14), then
           _merge_heads' contiguous(). QWenLMHeadModel.generate only appends a StopWordsLogitsProcessor (for
           generation_config.stop_words_ids; the base config's [[151643]] is the eos and is filtered out, so it loops
           over nothing; chat()'s chatml stop words add two .tolist() syncs a step): no material per-step work.

Per-layer counts (decode, one token), BF16: flash path with fused rms_norm 23 (the product's qwen1); flash path
without it 37; no flash-attn at all: norms 16 + rotary 16 + the KV torch.cat 2 + SDPA 1 + contiguous 1 + linears 5
(c_attn, c_proj, w1, w2, c_proj) + silu and multiply 2 + residual adds 2 = 45. The product has no qwen1-without-flash
layer; its llama layer (51: eager attention, rotary and norms) is the nearest countable one and is stated for the
Disabled rows (at 45 instead: 53.03 tokens/s, +10.1% / +17.8%: the 8,192 row then misses, the card's own 2,048 ->
8,192 drop of 6.6% being attention work the host-bound engine does not show; at 51: the figures below).

fix47h: the product now has both Qwen-1 counts (model.eager_layer qwen1_unfused_norm 37, qwen1_no_flash 45; verified
from the same modeling_qwen.py @e7a368b0, per-op list at serving_host.EAGER_LAYER_KERNELS), and every case states the
layer its row ran (FlashAttn v2 -> qwen1_unfused_norm, Disabled -> qwen1_no_flash) on one harness (transformers).

Every spec: QWEN_1_8B's shape (test_outside_audit_stop43l), inference.engine hf_eager, batch 1, context 1 + output.
"""

from __future__ import annotations

import copy

import pytest

from procurement.api.sizing import size_spec_document
from tests.procurement.outside.test_outside_audit_stop43l import QWEN_1_8B as _QWEN_1_8B_SHAPE

A100 = "a100-sxm4-80gb"
SPEED = 0.15
LAYERS = 24
LOOP = 30


def _speed(layer: str, quantization: str, generated: int, harness: str = "transformers") -> float:
    inference = {
        "concurrency": 1,
        "context_len": generated + 1,
        "output_tokens": generated,
        "engine": "hf_eager",
        "generate_harness": harness,
    }
    if quantization == "int4":
        inference["quant_kernel"] = (
            "exllama"  # the README's auto-gptq runs 4-bit on exllama (qwen_spec, stop 44)
        )
    if quantization == "int8":  # int8b: AutoGPTQ's 8-bit linear, qlinear_cuda_old (qwen_spec)
        inference["quant_kernel"] = "cuda_old"
    spec = {
        "name": f"aud47h-qwen-1.8b-{layer}-{quantization}-{generated}",
        "task": "inference",
        "model": _QWEN_1_8B_SHAPE | {"eager_layer": layer},
        "weight_quantization": quantization,
        "inference": inference,
    }
    report = size_spec_document(copy.deepcopy(spec), [A100], calibrate=False)
    assert report["candidates"][0]["verdict"] in {"fits", "tight", "oversized"}
    return report["throughput"]["decode_tokens_per_second_per_stream"]


# --- Case 1: the no-flash-attn rows, whose count is certain (no optional build), at the new default host ----------
# [QW18C] BF16, FlashAttn Disabled: 48.17 (2,048) / 45.01 (8,192), default harness transformers (the card's BF16 is the
# model's own generate). aud47h stated eager_layer llama (51, the nearest countable layer then): 46.94 both (-2.6% /
# +4.3%). fix47h states the layer the rows ran, qwen1_no_flash (45): (45 x 24 + 30) x 16.99 us = 18.86 ms, 53.03
# tokens/s both: 2,048 +10.1%, passing; 8,192 +17.8%, a strict xfail (below). A held-out row of
# hf_generate_kernel_host_s: 18.7 us a kernel on the 45 count, 1.10x the default.
QW18C_DISABLED_8192 = (
    "UNEXPLAINED (fix47h; passing before on the llama layer, 51 kernels, which is not this row's code): [QW18C] "
    "Qwen-1.8B-Chat BF16, FlashAttn Disabled, 1 context token + 8,192 generated, one A100-SXM4-80G, PyTorch 2.0.1: "
    "published 45.01 tokens/s; ours 46.94 (+4.3%, llama 51) -> 53.03 (+17.8%) on Qwen-1's own no-flash layer "
    "(model.eager_layer qwen1_no_flash, 45 kernels, counted from zhangningboo/Qwen-7B @e7a368b0 modeling_qwen.py) "
    "at 16.99 us. The same card's 2,048 row (48.17) passes at +10.1%: the card's 2,048 -> 8,192 drop (20.76 -> "
    "22.22 ms, +1.46 ms a token) is context work the engine's step does not show (host-bound: the GPU's weights "
    "and 3 KV passes, 1.8B at a mean context of 4,096, stay under the 18.86 ms floor), as on the README's 8,192 "
    "Int4 rows (test_outside_quant_decode_audit_stop44.py, _QWEN8K_REASON). Tried: the count (45 is the code's; "
    "51 passed it only by overcounting), the harness (none: the model's own generate). A spec would need a "
    "context-growing host or KV term sized on rows not these: not added."
)


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("generated", "published"),
    [
        (2048, 48.17),
        pytest.param(8192, 45.01, marks=pytest.mark.xfail(strict=True, reason=QW18C_DISABLED_8192)),
    ],
)
def test_qwen_1_8b_chat_card_flash_disabled_rows_at_the_default_host(bundled_catalog, generated, published):
    speed = _speed("qwen1_no_flash", "none", generated)
    assert speed == pytest.approx(1 / ((45 * LAYERS + LOOP) * 16.99e-6), rel=0.002)  # 53.03, host-bound
    assert speed == pytest.approx(published, rel=SPEED)


# --- Case 2: the flash v2 BF16 row at 8,192 generated ---------------------------------------------------------------
_DECODE48_QWEN1 = (  # decode48, lead (3) of its brief checked in Qwen-1's own code
    " decode48: Qwen-1's modeling_qwen.py (zhangningboo/Qwen-7B @1ff20863, the HF file's FlashSelfAttention."
    "forward) runs flash-attn at batch 1 with no sync (flash_attn_func, or flash_attn_unpadded_func on "
    "torch.arange cu_seqlens); unpad_input's nonzero "
    "and .max().item() run only at batch_size > 1 with a mask, so no per-layer sync makes host and GPU add here; "
    "the context growth stays unsized (test_outside_eager_sync_audit_stop48.py)."
)
QW18C_FLASH_BF16 = (  # history: the strict xfail reason before hfeager
    "UNEXPLAINED (aud47h; fix47h restated): [QW18C] Qwen-1.8B-Chat BF16, FlashAttn v2, 1 context token + 8,192 "
    "generated, one A100-SXM4-80G, PyTorch 2.0.1: published 54.04 tokens/s; ours 101.13 (+87.1%) on the qwen1 "
    "count (23, flash-attn's fused rms_norm assumed) -> 64.12 (+18.7%) at fix47h on the layer the card's pair "
    "sizes, model.eager_layer qwen1_unfused_norm (37: flash-attn 2 without csrc/layer_norm), at the default "
    "16.99 us. The card's v2 / Disabled pair at the Disabled row's own 18.7 us a kernel reads the flash layer at "
    "37 (58.2 tokens/s, +7.7%): the residual is the host's rate, 20.1 us a kernel on 37 for this run against the "
    "Disabled run's 18.7 on 45 and the default's 16.99; the same excess as the QwenLM/Qwen README's BF16 rows "
    "(QWEN1_BF16_HOST47, test_outside_recommendations_stop43.py). Not sized: no field states a host's rate."
)


# hfeager: FIXED, its strict xfail removed: 64.12 (+18.7%) -> 56.31 (+4.2%). "The residual is the host's rate" was
# not the host: 2 of the 37 kernels are flash-attn's Triton rotary (q and k; Dao-AILab/flash-attention 942fcbf0, from
# v2.1.2), each launched through Triton's Python launcher at 62 us (triton-lang/triton PR #3503, many-argument kernels;
# serving_host.TRITON_LAUNCH_HOST_SECONDS), not at 16.99 us: (35 x 24 + 30) x 16.99 us + 48 x 62 us = 17.757 ms
# (host-bound at 8,192: the GPU's weights and KV passes stay under it). The Disabled rows (no flash-attn, eager
# rotary: no Triton launch) do not move (53.03, Case 1), the sibling without the mechanism.
@pytest.mark.django_db
def test_qwen_1_8b_chat_card_flash_bf16_generating_8192(bundled_catalog):
    speed = _speed("qwen1_unfused_norm", "none", 8192)
    by_hand = 1 / ((35 * LAYERS + LOOP) * 16.99e-6 + 2 * LAYERS * 62e-6)
    assert by_hand == pytest.approx(56.31, abs=0.01)
    assert speed == pytest.approx(by_hand, rel=0.002)
    assert speed == pytest.approx(54.04, rel=SPEED)


# --- Case 3: the harness split against one host's two loaders -------------------------------------------------------
# The card's Int8 rows ran AutoGPTQ's loader (the README: "provided by the autogptq library"), its BF16 rows the
# model's own generate; same host, same count (the Int8 linear is one kernel, as the BF16 one). host47b priced them
# 31 us (auto_gptq) against 16.99 us (transformers): Int8 / BF16 = 0.548. Published 55.62 / 54.04 = 1.029 at 8,192
# (55.56 / 54.09 = 1.027 at 2,048). fix47h: both on one harness (transformers) and the card's v2 layer
# (qwen1_unfused_norm, 37): Int8 64.12, BF16 64.12, ratio 1.000 (-2.8%, now inside); the Int8 row alone +15.3%.
QW18C_HARNESS = (  # history: the strict xfail reason before hfeager
    "UNEXPLAINED (aud47h; fix47h restated): [QW18C] one A100-SXM4-80G host, PyTorch 2.0.1, 8,192 generated: Int8 "
    "through AutoGPTQ's loader 55.62 tokens/s, BF16 through the model's own generate 54.04: ratio 1.029. host47b "
    "(Int8 on auto_gptq, 31 us; BF16 on transformers, 16.99 us): 55.43 / 101.13 = 0.548 (-46.7%). fix47h states "
    "both on one harness (transformers; auto_gptq's cause, AutoGPTQ's inference_mode + autocast wrapper, is "
    "withdrawn: this pair is one of the rows that refute it) and the card's v2 layer qwen1_unfused_norm (37): "
    "64.12 / 64.12 = 1.000 (-2.8%, the ratio now inside), but the Int8 row alone reads 64.12 against 55.62 "
    "(+15.3%): the BF16 rows' host excess (20.1 us a kernel on 37 against 16.99; QW18C_FLASH_BF16). Not sized."
)


# hfeager: FIXED, its strict xfail (QW18C_HARNESS, kept above as history) removed: the Int8 row 64.12 (+15.3%) ->
# 56.31 (+1.2%), the ratio 1.000 (-2.8%) unchanged: the BF16 rows' "host excess" was flash-attn's 2 Triton rotary
# launches a layer (Case 2).
# int8b: the Int8 row states inference.quant_kernel cuda_old (_speed): the README's Int8 rows ran "the autogptq
# library" on PyTorch 2.0.1 (auto-gptq < 0.5.0 by its Quantization section), whose 8-bit layers are qlinear_cuda_old /
# qlinear_cuda (dynamically_import_QuantLinear: exllama is bits == 4 only), 4 bare ops a quantized linear at
# optimizer_op_host_s 7 us: 24 x 5 x 4 x 7 us = 3.36 ms on the 17.757 ms floor, 21.117 ms = 47.35 tokens/s.
# Before -> after: Int8 56.31 (+1.2%) -> 47.35 (-14.9%, inside); the ratio 1.000 (-2.8%) -> 0.841 (-18.3%, out). The
# test was split in two (the Int8 row and the pair's figures, passing; the ratio against the card's, a strict xfail),
# so the pins keep their teeth. Restating a passing test into an xfail: the spec now states what the run used and
# 0.841 is the engine's figure for it.
@pytest.mark.django_db
def test_qwen_1_8b_chat_card_int8_over_bf16_on_one_host(bundled_catalog):
    int8 = _speed("qwen1_unfused_norm", "int8", 8192)
    bf16 = _speed("qwen1_unfused_norm", "none", 8192)
    floor = (35 * LAYERS + LOOP) * 16.99e-6 + 2 * LAYERS * 62e-6  # 17.757 ms, the BF16 row (Case 2)
    by_hand = 1 / (floor + LAYERS * 5 * 4 * 7e-6)
    assert by_hand == pytest.approx(47.35, abs=0.01)
    assert int8 == pytest.approx(by_hand, rel=0.002)
    assert bf16 == pytest.approx(56.31, rel=0.002)
    assert int8 / bf16 == pytest.approx(0.8409, abs=0.0005)
    # the Int8 row alone: +15.3% at fix47h, +1.2% at hfeager, -14.9% at int8b
    assert int8 == pytest.approx(55.62, rel=SPEED)


QW18C_INT8_RATIO = (
    "UNEXPLAINED (int8b; passing before with the 8-bit linear priced as a BF16 one): [QW18C] one A100-SXM4-80G "
    "host, PyTorch 2.0.1, 8,192 generated: Int8 (AutoGPTQ) 55.62 tokens/s over BF16 54.04, ratio 1.029. The Int8 "
    "row now states inference.quant_kernel cuda_old, AutoGPTQ's 8-bit qlinear_cuda_old (4 bare ops a quantized "
    "linear, torch.zeros of the fp32 output, x.float(), scales.float(), out.half(), at optimizer_op_host_s 7 us): "
    "47.35 / 56.31 = 0.841 (-18.3%; was 1.000, -2.8%). The card's Int8 step is 0.53 ms SHORTER than its BF16 one "
    "(17.98 against 18.50 ms) where the count adds 3.36 ms; the README's Int8 steps run +3.1 / +2.3 / -0.5 ms over "
    "BF16 (14B / 7B / 1.8B) against the count's 5.6 / 4.5 / 3.4. Not sized: what makes the 8-bit run's host "
    "cheaper than the count (the BF16 loop's own linears, AutoGPTQ's loader, or bare-op rates below 7 us on this "
    "host) has no published step; 0% of the gap sized."
)


@pytest.mark.django_db
@pytest.mark.xfail(strict=True, reason=QW18C_INT8_RATIO)
def test_qwen_1_8b_chat_card_int8_over_bf16_ratio(bundled_catalog):
    int8 = _speed("qwen1_unfused_norm", "int8", 8192)
    bf16 = _speed("qwen1_unfused_norm", "none", 8192)
    assert int8 / bf16 == pytest.approx(55.62 / 54.04, rel=SPEED)


# --- Case 4: the Int4 flash v2 row at 8,192 generated ----------------------------------------------------------------
# Was a strict xfail: "published 76.45 tokens/s; ours 60.76 (-20.5%): (23 x 24 + 30) kernels x 31 us (auto_gptq) x
# 0.912 (exllama)". Now 70.29 (-8.1%) because fix47h states the card's v2 layer, qwen1_unfused_norm ((37 x 24 + 30)
# kernels, flash-attn 2 without csrc/layer_norm; zhangningboo/Qwen-7B @e7a368b0 modeling_qwen.py), on one harness
# (transformers, 16.99 us; host47b's auto_gptq cause withdrawn): 918 x 16.99 us x 0.912 = 14.23 ms a token. Not a
# FIXED label: the same restatement moves passing cases out (the 8,192 Disabled row, the README's Int8 rows).
# hfeager: back out, a strict xfail: 70.29 (-8.1%) -> 61.74 (-19.2%) once flash-attn's Triton rotary is priced
# (2 launches a layer at 62 us, x 0.912: 16.196 ms a token). It passed on the BF16 loop's unpriced Triton launches
# offsetting the Int4 step's own gap.
QW18C_INT4_8192 = (
    "UNEXPLAINED (hfeager): [QW18C] Qwen-1.8B-Chat-Int4, FlashAttn v2, 1 context token + 8,192 generated, one "
    "A100-SXM4-80G, PyTorch 2.0.1: published 76.45 tokens/s; ours 60.76 (-20.5%) -> 70.29 (-8.1%, fix47h) -> 61.74 "
    "(-19.2%) at hfeager, which prices 2 of the layer's 37 kernels (flash-attn's Triton rotary, Dao-AILab/flash-"
    "attention 942fcbf0) at Triton's Python launch, 62 us (triton-lang/triton PR #3503), and lands the card's BF16 "
    "and Int8 rows (56.31: +4.2% / +1.2%). What is left is the Int4 step's ratio to BF16: published 76.45 / 54.04 = "
    "1.415 at 8,192 (71.07 / 54.09 = 1.314 at 2,048; the QwenLM/Qwen README's 7B / 14B 1.224 / 1.202), where the "
    "engine's exllama ratio is 1 / 0.912 = 1.096, measured on Llama-2-13B (huggingface/optimum @09638629, AutoGPTQ "
    "0.4.2); at the card's own 1.415 the row would read 56.31 x 1.415 = 79.7 (+4.2%, the BF16 row's error). Not "
    "sized: which host work the README's AutoGPTQ Int4 loop skips (its release and loader are not published), and "
    "why the ratio grows with model size falling (1.20 at 14B to 1.31 at 1.8B) and with length (1.31 -> 1.42)."
)


@pytest.mark.django_db
@pytest.mark.xfail(strict=True, reason=QW18C_INT4_8192)
def test_qwen_1_8b_chat_card_int4_generating_8192(bundled_catalog):
    speed = _speed("qwen1_unfused_norm", "int4", 8192)
    assert speed == pytest.approx(61.74, rel=0.002)
    assert speed == pytest.approx(76.45, rel=SPEED)


# --- Not a case: the arithmetic of the v2 / Disabled pair (from the published rows and the counts above) ------------
def test_the_flash_disabled_pair_reads_the_flash_layer_at_37_not_23():
    v2, disabled = 1 / 54.09, 1 / 48.17  # seconds a token, 2,048 generated
    saved_per_layer = (disabled - v2) / LAYERS
    assert saved_per_layer == pytest.approx(94.7e-6, rel=0.01)
    rate = disabled / (45 * LAYERS + LOOP)  # the no-flash-attn path's own host rate
    assert rate == pytest.approx(18.7e-6, rel=0.01)
    assert rate / 16.99e-6 == pytest.approx(1.10, abs=0.01)  # within the default's band
    predicted = {n: 1 / (disabled - (45 - n) * LAYERS * rate) for n in (23, 37)}
    assert predicted[23] / 54.09 - 1 == pytest.approx(0.70, abs=0.01)  # fused rms_norm: ruled out
    assert predicted[37] / 54.09 - 1 == pytest.approx(0.077, abs=0.005)  # no fused rms_norm: inside 15%
    # at the default 16.99 us the 37 count puts the README's BF16 rows at +18.4 to +21%, not +51 to +88%
    readme = {24: 54.09, 32: 40.93, 40: 32.22}
    at_37 = {n: 1 / ((37 * n + LOOP) * 16.99e-6) / p - 1 for n, p in readme.items()}
    assert at_37 == pytest.approx({24: 0.186, 32: 0.184, 40: 0.210}, abs=0.005)
