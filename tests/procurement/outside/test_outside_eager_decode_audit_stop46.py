"""Outside audit aud46k of decode46 (issue 26, eager Hugging Face decode): six published eager rows the change's
author did not use, run through the product as a user states them, and the two relabels' claims held out on them.

Source: [QWEN2SPEED] QwenLM/Qwen2 (now QwenLM/Qwen2.5) @5c4e69cb61953a590ea724e0f0f0fcb06fa979e7
docs/source/benchmark/speed_benchmark.rst (2024-06-11): "NVIDIA A100 80GB, CUDA 11.8, Pytorch 2.1.2+cu118, Flash
Attention 2.3.3, Transformers 4.38.2, AutoGPTQ 0.7.1"; batch 1, 2,048 generated tokens, "Transformer" tables,
tokens/s, one GPU:
    Qwen2-0.5B-Instruct input 1 : BF16 49.94, GPTQ-Int8 36.35
    Qwen2-1.5B-Instruct input 1 : BF16 40.89, GPTQ-Int8 31.51
    Qwen2-7B-Instruct   input 1 : BF16 37.97, GPTQ-Int8 30.85, GPTQ-Int4 36.17;  input 6,144: BF16 34.74
Shapes (the models' config.json): 0.5B 24 layers, hidden 896, 14 heads / 2 KV heads of 64, MLP 4,864, vocab
151,936, tied; 1.5B 28 layers, 1,536, 12 / 2 heads of 128, 8,960, 151,936, tied; 7B = the product's qwen2.5-7b
preset (28 layers, 3,584, 28 / 4 heads of 128, 18,944, 152,064: Qwen2.5-7B keeps Qwen2-7B's shapes). Stated as
run: inference.engine hf_eager, model.eager_layer qwen2 (transformers 4.38.2's Qwen2DecoderLayer), attn_implementation
flash_attention_2 (Flash Attention 2.3.3 in the environment); Int4 states inference.quant_kernel exllama (AutoGPTQ
0.7.1 picks exllamav2 for 4 bits; the product has only exllama v1's ratio). Speed read as 2,048 / the whole
generate(), as test_outside_repeat_kv_audit_stop45.py reads the Qwen2.5 page.

AutoGPTQ's kernel choice (auto_gptq/utils/import_utils.py, stored @03b6ed25, the 0.7-era dynamically_import_QuantLinear):
marlin / exllamav2 / exllama only for bits == 4, else qlinear_cuda_old (desc_act false or group_size -1) or
qlinear_cuda, the same 8-bit classes as AutoGPTQ 0.4.2's (decode46's [14b-int8] mechanism; qlinear_cuda_old.py
forward, stored @179776bd: torch.zeros fp32 out, x.float(), scales.float(), vecquant8matmul_old, out.half(), bias).
So this table's Int8 rows hold decode46's 8-bit relabel out on the same linear, another release and another host.
Tolerance: LLM speed 15%.
"""

from __future__ import annotations

import copy
import dataclasses

import pytest

from procurement.api.sizing import size_spec_document
from procurement.sizing import serving_host
from procurement.sizing.assumptions import EAGER_KERNEL_HOST_SECONDS

A100 = "a100-sxm4-80gb"
GENERATED = 2048
SHAPES = {
    "0.5b": {
        "name": "Qwen2-0.5B-Instruct",
        "num_layers": 24,
        "hidden_size": 896,
        "num_attention_heads": 14,
        "num_key_value_heads": 2,
        "head_dim": 64,
        "intermediate_size": 4864,
        "vocab_size": 151936,
        "tie_word_embeddings": True,
        "attention_qkv_bias": True,
    },
    "1.5b": {
        "name": "Qwen2-1.5B-Instruct",
        "num_layers": 28,
        "hidden_size": 1536,
        "num_attention_heads": 12,
        "num_key_value_heads": 2,
        "head_dim": 128,
        "intermediate_size": 8960,
        "vocab_size": 151936,
        "tie_word_embeddings": True,
        "attention_qkv_bias": True,
    },
    "7b": {"preset": "qwen2.5-7b"},
}
# [QWEN2SPEED] BF16 rows at input 1 (the Int8 rows' pairs)
BF16_INPUT_ONE = {"0.5b": 49.94, "1.5b": 40.89, "7b": 37.97}
INT8_INPUT_ONE = {"0.5b": 36.35, "1.5b": 31.51, "7b": 30.85}
# quantized linears a layer: q / k / v / o and gate / up / down
LINEARS = {"0.5b": 24 * 7, "1.5b": 28 * 7, "7b": 28 * 7}


def _as_published(
    size: str, prompt: int, quant: str, kernel: str | None = None, release: str = "4.38.2"
) -> float:
    """A row as the page ran it; qwen2up2: its transformers release stated (4.38.2, the page's setup: 46 kernels a
    layer since fixtr, 45 before, serving_host.RELEASE_LAYER_KERNELS, at hf_generate_release_kernel_host_s 19.67 us)."""
    model = dict(SHAPES[size], eager_layer="qwen2")
    spec = {
        "name": f"aud46k-qwen2-{size}-{prompt}-{quant}",
        "task": "inference",
        "model": model,
        "weight_quantization": quant,
        "inference": {
            "concurrency": 1,
            "context_len": prompt + GENERATED,
            "output_tokens": GENERATED,
            "engine": "hf_eager",
            "attn_implementation": "flash_attention_2",
            "transformers_release": release,
        },
    }
    if kernel:
        spec["inference"]["quant_kernel"] = kernel
    t = size_spec_document(copy.deepcopy(spec), [A100], calibrate=False)["throughput"]
    return GENERATED / (
        t["time_to_first_token_seconds"] + GENERATED / t["decode_tokens_per_second_per_stream"]
    )


_HOST = (
    "host47b: the engine's hf_eager host floor is now plain transformers generate's (inference.generate_harness "
    "transformers; qwen2up2: the row stated as run, transformers 4.38.2; fixtr: the wheel's 46 a layer, not 45, "
    "28 x 46 + 30 = 1,318 kernels at hf_generate_release_kernel_host_s 19.67 us = 25.9 ms a token (qwen2up2's 1,290 "
    "at 19.68 us, 25.4 ms); was 28 x 51 + 30 = 1,458 at 16.99 us, 24.8 ms; 31 us before host47b, 45.2 ms), this "
    "table's input-1 BF16 steps read 20.0 / 18.6 / 17.7 us a kernel (7B / 1.5B / 0.5B) on the 4.38.2 count, so the "
    "BF16 host is priced; what is left is the row's own term below. "
)
_ROWS = {
    # id: (size, input, quantization, quant_kernel, published, ours)
    # host47b: ours at hf_generate_kernel_host_s 16.99 us (were 22.122 / 22.019 / 22.122 / 24.254 / 25.723 / 22.124)
    # qwen2up2: stated transformers 4.38.2 (45 a layer at 19.68 us, hand: 1 / ((28 x 45 + 30) x 19.68 us) = 39.39
    # tokens/s decode on the 7B), before -> after: 7b-bf16-1 40.359 (+6.3%) -> 39.380 (+3.7%); 7b-bf16-6144 40.018
    # (+15.2%) -> 39.055 (+12.4%, lands: FIXED); 7b-int8-1 33.042 (+7.1%) -> 32.383 (+5.0%); 7b-int4-1-exllama
    # 44.249 (+22.3%) -> 43.177 (+19.4%, still out); 0.5b-int8-1 38.445 (+5.8%) -> 37.664 (+3.6%); 1.5b-int8-1
    # 33.045 (+4.9%) -> 32.386 (+2.8%)
    # fixtr (audtr): the 4.38.2 layer is 46 kernels (39 non-GEMM read in the wheel, modeling_qwen2.py l. 90-95,
    # 165-168, 382, cache_utils.py l. 131-132, + 7 linears), the rate 19.67 us; hand: 1 / ((28 x 46 + 30) x 19.67 us)
    # = 1 / 25.93 ms = 38.57 tokens/s decode on the 7B. Before -> after: 7b-bf16-1 39.380 (+3.7%) -> 38.563 (+1.6%);
    # 7b-bf16-6144 39.055 (+12.4%) -> 38.252 (+10.1%); 7b-int8-1 32.383 (+5.0%) -> 31.829 (+3.2%); 7b-int4-1-exllama
    # 43.177 (+19.4%) -> 42.281 (+16.9%, still out); 0.5b-int8-1 37.664 (+3.6%) -> 37.021 (+1.8%; 24 x 46 + 30 =
    # 1,134 kernels); 1.5b-int8-1 32.386 (+2.8%) -> 31.832 (+1.0%)
    "7b-bf16-1": ("7b", 1, "none", None, 37.97, 38.563),
    "7b-bf16-6144": ("7b", 6144, "none", None, 34.74, 38.252),
    # int8gptq: the Int8 rows state inference.quant_kernel cuda_old (AutoGPTQ 0.7.1's 8-bit class, module docstring):
    # 4 bare ops a quantized linear at optimizer_op_host_s 7 us, hand: 28 x 7 x 4 x 7 us = 5.488 ms on 24.777 ms
    # (7B, 1.5B), 24 x 7 x 4 x 7 us = 4.704 ms on 21.307 ms (0.5B). Before -> after (strict xfails removed, FIXED):
    # 7B 40.361 (+30.8%) -> 33.042 (+7.1%); 0.5B 46.933 (+29.1%) -> 38.445 (+5.8%); 1.5B 40.365 (+28.1%) -> 33.045
    # (+4.9%). Held out: no constant set on these rows (the 4 is counted, the 7 us is pytorch/pytorch issue #41383's).
    "7b-int8-1": ("7b", 1, "int8", "cuda_old", 30.85, 31.829),
    "7b-int4-1-exllama": ("7b", 1, "int4", "exllama", 36.17, 42.281),
    "0.5b-int8-1": ("0.5b", 1, "int8", "cuda_old", 36.35, 37.021),
    "1.5b-int8-1": ("1.5b", 1, "int8", "cuda_old", 31.51, 31.832),
}
# Was a strict xfail [7b-bf16-1]: "UNEXPLAINED (host): published 37.97 tokens/s, ours 22.12 (-41.7%)" (45.2 ms host
# floor at 31 us a kernel). Now 40.36 (+6.3%) because the default harness (inference.generate_harness transformers,
# host47b) prices a kernel at hf_generate_kernel_host_s, 16.99 us, the median of optimum's 2023 and the Qwen2.5
# page's plain transformers A100 hosts (this row held out: 18.06 us on the engine's count).
# fix47h: passing since stop 47's default host rate (held out: the Qwen2 page, QwenLM/Qwen2 @5c4e69cb, is not a fit
# row); not FIXED (host47b moved 8 passing cases out), a held-out check of hf_generate_kernel_host_s at +6.3%.
# qwen2up2: stated transformers 4.38.2, a held-out check of hf_generate_release_kernel_host_s at +3.7% (+1.6% on the
# wheel's 46-kernel layer at 19.67 us, fixtr).
# Was a strict xfail [7b-bf16-6144] (FIXED, qwen2up2: 40.02, +15.2% -> 39.06, +12.4%, by the count at the run's
# release, transformers 4.38.2's 45 kernels a layer at the rate read on the recounted rows, 19.68 us; not by the 2.2 ms
# the run's step grows from input 1, which stays unsized): "UNEXPLAINED (host): [QWEN2SPEED] Qwen2-7B-Instruct BF16,
# input 6,144: published 34.74, ours 22.02 (-36.6%) at 31 us -> 40.02 (+15.2%, just outside) at 16.99 us (host47b)
# ... at this table's own input-1 rate (18.06 us) it reads 37.66 (+8.4%) ... decode48 (lead, not landed): this page's
# transformers 4.38.2 syncs in every layer (Qwen2FlashAttention2.forward l. 382) ... (test_outside_eager_sync_audit_
# stop48.py)."
_REASON = {
    "7b-int4-1-exllama": "UNEXPLAINED: [QWEN2SPEED] Qwen2-7B-Instruct GPTQ-Int4, input 1, quant_kernel exllama: "
    "published 36.17, ours 24.25 (-32.9%) at 31 us -> 44.25 (+22.3%) at 16.99 us (host47b; the host floor x 0.912, "
    "optimum's 2023 exllama v1 ratio) -> 43.18 (+19.4%) stated as run (qwen2up2, transformers 4.38.2's 45 kernels a "
    "layer at 19.68 us) -> 42.28 (+16.9%) on the wheel's 46 at 19.67 us (fixtr, audtr's recount): "
    + _HOST
    + "The run's Int4 step is 1.050x its BF16 step (AutoGPTQ 0.7.1, exllamav2), where the product's exllama "
    "ratio is 0.912 (AutoGPTQ 0.4.2 exllama v1): at 1.050 it would read 42.28 x 0.912 / 1.050 = 36.72 (+1.5%, "
    "about the BF16 row's +1.6%; 37.50, +3.7%, on qwen2up2's count); the "
    "spec cannot state exllamav2.",
}


@pytest.mark.django_db
@pytest.mark.parametrize(
    "row",
    [
        pytest.param(row, marks=pytest.mark.xfail(strict=True, reason=_REASON[row]))
        if row in _REASON
        else row
        for row in _ROWS
    ],
)
def test_qwen2_speed_benchmark_rows_as_run_within_15_percent(bundled_catalog, row):
    size, prompt, quant, kernel, published, ours = _ROWS[row]
    speed = _as_published(size, prompt, quant, kernel)
    assert speed == pytest.approx(ours, rel=0.01)  # the figure the reason quotes
    assert speed == pytest.approx(published, rel=0.15)


# decode46's [14b-int8] (test_outside_recommendations_stop43.py) held out. (1) Its "size" is an identity: the engine
# gives Int8 = BF16, so ours / (32.22 / 29.28) / 29.28 = ours / 32.22 for any ours: "+5.4%, exactly the BF16 row's
# error" cannot fail. (2) Its mechanism's own size: 4 extra kernels a quantized linear (zeros, x.float,
# scales.float, out.half; the vecquant kernel replaces the GEMM) x 5 linears x 40 layers = 800 kernels at the README
# host's BF16 rate (31.04 ms / 950 = 32.7 us) is +26.1 ms a token against the +3.1 ms the README shows (8.4x), 7B
# +20.4 against +2.3, and 1.8B +15.3 against -0.5 (Int8 faster). (3) The ratio it takes as the 8-bit excess, 1.100,
# is not this table's on the same AutoGPTQ 8-bit class: 1.231 / 1.298 / 1.374; applied to this table's own BF16
# rows it misses 2 of 3 Int8 rows, where optimum's measured AutoGPTQ 0.4.2 cuda-old batch-1 ratio (46.44 / 36.958 =
# 1.257, huggingface/optimum @09638629 tests/benchmark/README.md, 4-bit, quoted in serving_host.py) lands all three.
def test_decode46_int8_ratio_is_an_identity_and_does_not_hold_out():
    for ours in (20.0, 33.96, 50.0):
        assert ours / (32.22 / 29.28) / 29.28 - 1 == pytest.approx(ours / 32.22 - 1, rel=1e-12)
    readme_rate = (1 / 32.22) / (40 * 23 + 30)  # [QWEN] 14B BF16 step over the engine's qwen1 count
    assert readme_rate * 1e6 == pytest.approx(32.67, abs=0.01)
    assert 4 * 5 * 40 * readme_rate * 1e3 == pytest.approx(26.1, abs=0.1)
    assert (1 / 29.28 - 1 / 32.22) * 1e3 == pytest.approx(3.12, abs=0.01)
    assert (1 / 55.56 - 1 / 54.09) * 1e3 == pytest.approx(-0.49, abs=0.01)  # 1.8B: Int8 faster than BF16
    ratio = {size: BF16_INPUT_ONE[size] / INT8_INPUT_ONE[size] for size in BF16_INPUT_ONE}
    assert ratio == {
        "0.5b": pytest.approx(1.374, abs=0.001),
        "1.5b": pytest.approx(1.298, abs=0.001),
        "7b": pytest.approx(1.231, abs=0.001),
    }
    per_linear_us = {
        size: (1 / INT8_INPUT_ONE[size] - 1 / BF16_INPUT_ONE[size]) / LINEARS[size] * 1e6 for size in LINEARS
    }
    assert per_linear_us == {
        "0.5b": pytest.approx(44.6, abs=0.1),
        "1.5b": pytest.approx(37.1, abs=0.1),
        "7b": pytest.approx(31.0, abs=0.1),
    }
    at_1100 = {size: BF16_INPUT_ONE[size] / 1.100 / INT8_INPUT_ONE[size] - 1 for size in BF16_INPUT_ONE}
    assert at_1100 == {
        "0.5b": pytest.approx(0.249, abs=0.001),
        "1.5b": pytest.approx(0.180, abs=0.001),
        "7b": pytest.approx(0.119, abs=0.001),
    }
    cuda_old = 46.44 / 36.958
    at_cuda_old = {
        size: BF16_INPUT_ONE[size] / cuda_old / INT8_INPUT_ONE[size] - 1 for size in BF16_INPUT_ONE
    }
    assert at_cuda_old == {
        "0.5b": pytest.approx(0.093, abs=0.001),
        "1.5b": pytest.approx(0.032, abs=0.001),
        "7b": pytest.approx(-0.021, abs=0.001),
    }
    # the same ratio on the Qwen-1 README's Int8 rows, from the engine's BF16 figures (33.96 / 42.11): -7.7% / -10.6%
    assert 33.96 / cuda_old / 29.28 - 1 == pytest.approx(-0.077, abs=0.001)
    assert 42.11 / cuda_old / 37.47 - 1 == pytest.approx(-0.106, abs=0.001)


# decode46's [7b-6144-1gpu] held out: its host rate, 17.0 us a kernel from the Qwen2.5 page's 7B input-1 row, put
# in place of the engine's 31 us on this other page (another transformers release, 4.38.2, and another run): the
# 0.5B and 1.5B input-1 BF16 rows land; the 7B 6,144 row reads +15.2%, just outside; at this page's own 7B input-1
# rate (18.06 us) +8.4%. The host-rate mechanism carries across releases; its constant is the run's, not the card's.
@pytest.mark.django_db
def test_decode46_host_rate_held_out_on_the_qwen2_page(bundled_catalog, monkeypatch):
    qwen25_rate = 1 / 40.38 / (28 * 51 + 30)
    qwen2_rate = 1 / 37.97 / (28 * 51 + 30)
    assert (qwen25_rate * 1e6, qwen2_rate * 1e6) == (
        pytest.approx(16.99, abs=0.01),
        pytest.approx(18.06, abs=0.01),
    )
    expected = {
        qwen25_rate: {"0.5b": 46.945, "1.5b": 40.376, "7b-6144": 40.029},
        qwen2_rate: {"0.5b": 44.144, "1.5b": 37.966, "7b-6144": 37.659},
    }
    for rate, speeds in expected.items():
        host = dataclasses.replace(EAGER_KERNEL_HOST_SECONDS, value=rate)
        # host47b: the default harness reads its rate from GENERATE_HARNESS_HOST (hf_generate_kernel_host_s)
        monkeypatch.setitem(serving_host.GENERATE_HARNESS_HOST, "transformers", host)
        # qwen2up2: decode46's rates were read on the 51 count, so they are held out on the unstated count
        assert _as_published("0.5b", 1, "none", release="unstated") == pytest.approx(
            speeds["0.5b"], rel=0.005
        )
        assert _as_published("1.5b", 1, "none", release="unstated") == pytest.approx(
            speeds["1.5b"], rel=0.005
        )
        assert _as_published("7b", 6144, "none", release="unstated") == pytest.approx(
            speeds["7b-6144"], rel=0.005
        )
    assert 40.029 / 34.74 - 1 == pytest.approx(0.152, abs=0.001)  # outside 15% at decode46's constant
    assert 46.945 / 49.94 - 1 == pytest.approx(-0.060, abs=0.001)
    assert 40.376 / 40.89 - 1 == pytest.approx(-0.013, abs=0.001)
