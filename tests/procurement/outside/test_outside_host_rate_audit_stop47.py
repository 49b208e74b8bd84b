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
# [QW18C] BF16 FlashAttn Disabled: 48.17 (2,048) / 45.01 (8,192). Stated: eager_layer llama (51 a layer, the nearest
# countable eager layer; Qwen-1's own no-flash layer is 45, above), default harness transformers (the card's BF16 is
# the model's own generate). Ours 46.94 both (1,254 kernels x 16.99 us = 21.3 ms; GPU 1.6-1.9 ms): -2.6% / +4.3%.
# This is the held-out row the new default most needs: a plain-transformers Qwen-1 run on the same host and torch
# 2.0.1 as the README's BF16 rows, with nothing optional in the count, reads 20.76 ms / (45 x 24 + 30) = 18.7 us a
# kernel, 1.10x hf_generate_kernel_host_s.
@pytest.mark.django_db
@pytest.mark.parametrize(("generated", "published"), [(2048, 48.17), (8192, 45.01)])
def test_qwen_1_8b_chat_card_flash_disabled_rows_at_the_default_host(bundled_catalog, generated, published):
    speed = _speed("llama", "none", generated)
    assert speed == pytest.approx(1 / ((51 * LAYERS + LOOP) * 16.99e-6), rel=0.002)  # 46.94, host-bound
    assert speed == pytest.approx(published, rel=SPEED)


# --- Case 2: the flash v2 BF16 row at 8,192 generated ---------------------------------------------------------------
QW18C_FLASH_BF16 = (
    "UNEXPLAINED (aud47h): [QW18C] Qwen-1.8B-Chat BF16, FlashAttn v2, 1 context token + 8,192 generated, one "
    "A100-SXM4-80G, PyTorch 2.0.1: published 54.04 tokens/s; ours 101.13 (+87.1%), the qwen1 count (23 a layer, "
    "flash-attn's fused rms_norm assumed) at the default 16.99 us. The same card's Disabled row (no flash-attn, "
    "count certain at 45 a layer) is 48.17 at 2,048: removing flash-attn saves only 2.27 ms a token (94.7 us a "
    "layer). At the Disabled row's own 18.7 us a kernel, a 23-kernel flash layer would save 22 kernels a layer and "
    "read 91.9 tokens/s (+70%), a 37-kernel one (the README's default install: csrc/layer_norm 'optional', the "
    "rotary kernel in flash-attn > 2.1.1) saves 8 and reads 58.2 (+7.7%): the pair sizes the lead, the fused norm "
    "absent. Not FIXED here: that needs a qwen1 layer variant of 37 (model.eager_layer), a product change; at 37 "
    "and 16.99 us this row reads 64.1 (+18.6%), still outside."
)


@pytest.mark.django_db
@pytest.mark.xfail(strict=True, reason=QW18C_FLASH_BF16)
def test_qwen_1_8b_chat_card_flash_bf16_generating_8192(bundled_catalog):
    speed = _speed("qwen1", "none", 8192)
    assert speed == pytest.approx(101.13, rel=0.002)
    assert speed == pytest.approx(54.04, rel=SPEED)


# --- Case 3: the harness split against one host's two loaders -------------------------------------------------------
# The card's Int8 rows ran AutoGPTQ's loader (the README: "provided by the autogptq library"), its BF16 rows the
# model's own generate; same host, same count (the Int8 linear is one kernel, as the BF16 one). host47b prices them
# 31 us (auto_gptq) against 16.99 us (transformers): Int8 / BF16 = 0.548. Published 55.62 / 54.04 = 1.029 at 8,192
# (55.56 / 54.09 = 1.027 at 2,048). Ours Int8 55.43 (-0.3%, passing on its own) and BF16 101.13 (+87.1%).
QW18C_HARNESS = (
    "UNEXPLAINED (aud47h): [QW18C] one A100-SXM4-80G host, PyTorch 2.0.1, 8,192 generated: Int8 through AutoGPTQ's "
    "loader 55.62 tokens/s, BF16 through the model's own generate 54.04: ratio 1.029; ours 55.43 / 101.13 = 0.548 "
    "(-46.7%). inference.generate_harness auto_gptq prices AutoGPTQ's generate wrapper at 31 us a kernel against "
    "16.99: a 1.82x per-kernel cost that this host's two loaders do not show (same count, same speed). The wrapper "
    "(AutoGPTQ @4b8524ff .. v0.7.0 auto_gptq/modeling/_base.py generate: torch.inference_mode() + "
    "torch.amp.autocast) is code opened, but no published pair sizes it; the one same-host pair here says it costs "
    "nothing measurable, as does the QwenLM/Qwen README's own note that AutoModelForCausalLM.from_pretrained runs "
    "about 20% SLOWER than the autogptq path. The 31 / 17 us split is AutoGPTQ's README host against the others'."
)


@pytest.mark.django_db
@pytest.mark.xfail(strict=True, reason=QW18C_HARNESS)
def test_qwen_1_8b_chat_card_int8_over_bf16_on_one_host(bundled_catalog):
    int8 = _speed("qwen1", "int8", 8192, harness="auto_gptq")
    bf16 = _speed("qwen1", "none", 8192)
    assert int8 == pytest.approx(55.43, rel=0.002)
    assert int8 == pytest.approx(55.62, rel=SPEED)  # the Int8 row alone is inside
    assert int8 / bf16 == pytest.approx(55.62 / 54.04, rel=SPEED)


# --- Case 4: the Int4 flash v2 row at 8,192 generated ----------------------------------------------------------------
QW18C_INT4 = (
    "UNEXPLAINED (aud47h): [QW18C] Qwen-1.8B-Chat Int4 (AutoGPTQ, exllama), FlashAttn v2, 8,192 generated: "
    "published 76.45 tokens/s; ours 60.76 (-20.5%): (23 x 24 + 30) kernels x 31 us (auto_gptq) x 0.912 (exllama). "
    "The 2,048 row of the same card (71.07) reads -14.5%. On the no-fused-norm count (37) this row is 15.6 us a "
    "kernel with the 0.912 (14.2 without): the plain-transformers host's rate, not the 31 us auto_gptq prices."
)


@pytest.mark.django_db
@pytest.mark.xfail(strict=True, reason=QW18C_INT4)
def test_qwen_1_8b_chat_card_int4_generating_8192(bundled_catalog):
    speed = _speed("qwen1", "int4", 8192, harness="auto_gptq")
    assert speed == pytest.approx(60.76, rel=0.002)
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
