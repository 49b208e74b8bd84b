"""Outside audit aud51l: the weight memory of BigCode's code models as their own cards print it.

Sources (grepped first: no test in tests/ names StarCoder, StarCoder2 or these figures):
  [SC2-CARD] the bigcode/starcoder2-15b model card (stored copy id 21135615699, "Quantized Versions through
             `bitsandbytes`"): `model.get_memory_footprint() / 1e6` printed after loading with
             `torch_dtype=torch.bfloat16` -> "Memory footprint: 32251.33 MB"; with
             `BitsAndBytesConfig(load_in_8bit=True)` -> "Memory footprint: 16900.18 MB"; "# load_in_4bit" ->
             "Memory footprint: 9224.60 MB".
  [SC1-README] bigcode-project/starcoder README.md (stored id 722188368, "Inference hardware requirements"):
             `from_pretrained("bigcode/starcoder", device_map="auto", load_in_8bit=True)` -> "Memory footprint:
             15939.61 MB".
Shapes (config.json of each checkpoint): StarCoder2-15B 40 layers, hidden 6,144, 48 heads, 4 KV heads (GQA),
MLP 24,576 (c_fc / c_proj with GELU, not gated), vocab 49,152, untied head, biases on every linear, LayerNorm with
bias, max_position_embeddings 16,384; StarCoder (GPTBigCode) the same widths with multi-query attention (1 KV
head), a head tied to the input table, learned position embeddings (8,192 x 6,144).

get_memory_footprint() sums parameters and buffers (transformers modeling_utils): it is the weights as loaded,
with no CUDA context, KV cache or activations, so each case is judged on the report's `weights_gib`. The hand
reconciliations below use only the shapes and reproduce every card figure to 0.02 MB, so the figures are what
they say they are. Bar: LLM memory 10%.
"""

from __future__ import annotations

import copy

import pytest

from procurement.api.sizing import size_spec_document

MEMORY = 0.10
GPU = "a100-sxm4-80gb"  # the cards state no GPU; weights do not depend on it
MB = 1e6
GIB = 2**30

SC2_15B = {
    "num_layers": 40,
    "hidden_size": 6144,
    "num_attention_heads": 48,
    "num_key_value_heads": 4,
    "intermediate_size": 24576,
    "vocab_size": 49152,
    "gated_mlp": False,
    "tie_word_embeddings": False,
}
SC1_15B = dict(SC2_15B, num_key_value_heads=1, tie_word_embeddings=True)

# Hand counts from the shapes (StarCoder2-15B).
_H, _I, _KV, _L, _V = 6144, 24576, 4 * 128, 40, 49152
SC2_LINEAR = _L * (2 * _H * _H + 2 * _H * _KV + 2 * _H * _I)  # 15,351,152,640 block-linear weights
SC2_TABLES = 2 * _V * _H  # input table + untied head: 603,979,776 (bnb never quantizes either)
SC2_SMALL = _L * (2 * _H + 2 * _KV + _I + _H + 4 * _H) + 2 * _H  # biases + LayerNorms: 2,756,608
# Rotary caches of the 2024 transformers port: Starcoder2RotaryEmbedding ("Copied from ... MistralRotaryEmbedding",
# stored copy of modeling_starcoder2.py id 27307902746) calls _set_cos_sin_cache(seq_len=max_position_embeddings,
# dtype=torch.get_default_dtype()) in __init__, one module a layer: cos_cached and sin_cached, 16,384 x 128 in the
# load dtype (buffers, so get_memory_footprint counts them; not weights).
SC2_ROTARY_B = _L * 2 * 16384 * 128 * 2


def _weights_mb(spec: dict) -> float:
    report = size_spec_document(copy.deepcopy(spec), [GPU], calibrate=False)
    cand = next(c for c in report["candidates"] if c["gpu"] == GPU)
    return cand["memory"]["weights_gib"] * GIB / MB


def _spec(model: dict, precision: str, wq: str, **extra) -> dict:
    # "def print_hello_world():" then generate()'s default 20 tokens: one stream, a few dozen tokens.
    return {
        "task": "inference",
        "model": dict(model),
        "precision": precision,
        "weight_quantization": wq,
        "inference": {"concurrency": 1, "context_len": 32, "output_tokens": 20},
        **extra,
    }


def test_hand_reconciliation_of_the_card_figures():
    """Not a product check: the shapes reproduce [SC2-CARD]'s three prints and [SC1-README]'s one.
    bf16: (15,351,152,640 + 603,979,776 + 2,756,608) x 2 B + 335.54 MB of rotary caches = 32,251.32 MB (32,251.33).
    8-bit: block linears int8 (1 B; LLM.int8's fp32 row scales SCB are attributes, not parameters) + 16-bit tables,
    biases and norms + the fp16 rotary caches = 16,900.16 MB (16,900.18). 4-bit: Params4bit packs two weights a byte
    (the fp32 absmax of each 64-weight block lives in quant_state, not a parameter) = 9,224.59 MB (9,224.60).
    StarCoder 8-bit: c_attn 6,144 x 6,400 (MQA) + c_proj + MLP int8, wte + wpe fp16, biases / norms fp16, and the
    8,192^2 bool causal-mask buffer of GPTBigCode = 15,939.6 MB (15,939.61)."""
    small_b = SC2_SMALL * 2
    bf16 = (SC2_LINEAR + SC2_TABLES + SC2_SMALL) * 2 + SC2_ROTARY_B
    int8 = SC2_LINEAR + SC2_TABLES * 2 + small_b + SC2_ROTARY_B
    int4 = SC2_LINEAR / 2 + SC2_TABLES * 2 + small_b + SC2_ROTARY_B
    assert bf16 / MB == pytest.approx(32251.33, abs=0.02)
    assert int8 / MB == pytest.approx(16900.18, abs=0.03)
    assert int4 / MB == pytest.approx(9224.60, abs=0.02)
    sc1_linear = 40 * (6144 * 6400 + 6144 * 6144 + 2 * 6144 * 24576)
    sc1_small = (40 * (6400 + 6144 + 24576 + 6144 + 4 * 6144) + 2 * 6144) * 2
    sc1 = sc1_linear + (49152 + 8192) * 6144 * 2 + sc1_small + 8192 * 8192
    assert sc1 / MB == pytest.approx(15939.61, abs=0.1)


def test_case1_starcoder2_15b_bf16_footprint(bundled_catalog):
    """[SC2-CARD] bf16: published 32,251.33 MB. Ours 29.72 GiB = 31,911 MB (-1.05%); against the weights alone
    (32,251.33 less the 335.54 MB of rotary caches: 31,915.8 MB) -0.01%. The product's 15,955,630,080 parameters
    omit the 2.76M biases / LayerNorm biases outside QKV (StarCoder2 has `use_bias` on every linear), 5.5 MB.
    PASS."""
    ours = _weights_mb(_spec(SC2_15B, "bf16", "none"))
    assert ours == pytest.approx(31911, rel=0.002)
    assert abs(ours / 32251.33 - 1) < MEMORY


def test_case2_starcoder2_15b_load_in_8bit_footprint(bundled_catalog):
    """[SC2-CARD] load_in_8bit: published 16,900.18 MB. Ours (`weight_quantization: int8`, fp16 compute as the
    bitsandbytes quantizer loads without a torch_dtype) 15.423 GiB = 16,560 MB (-2.0%): the 335.5 MB the card
    counts for the fp16 rotary caches is the whole gap (16,900.18 - 335.54 = 16,564.6, ours -0.03%). PASS."""
    ours = _weights_mb(_spec(SC2_15B, "fp16", "int8"))
    assert ours == pytest.approx(16560, rel=0.002)
    assert abs(ours / 16900.18 - 1) < MEMORY


def test_case3_starcoder2_15b_load_in_4bit_footprint(bundled_catalog):
    """[SC2-CARD] load_in_4bit: published 9,224.60 MB. The card's BitsAndBytesConfig(load_in_4bit=True) takes
    transformers' defaults: no double quantization (`quantization.nf4_double_quant: false`; the quant type is fp4,
    which holds the same 4 bits and one fp32 absmax a 64-weight block as nf4). Ours 9.168 GiB = 9,844 MB (+6.7%).
    The excess is not the product's: get_memory_footprint() counts parameters and buffers, and the 15.35e9 / 64 fp32
    absmax (959.4 MB) sit in each weight's quant_state, allocated on the GPU but not a parameter; with them the
    load holds 9,224.6 + 959.4 = 10,184 MB, ours -3.3% (the rotary caches again). Stated with the engine's default
    double quantization instead (not what the card ran): 8.501 GiB = 9,128 MB. PASS."""
    ours = _weights_mb(_spec(SC2_15B, "fp16", "nf4", quantization={"nf4_double_quant": False}))
    assert ours == pytest.approx(9844, rel=0.002)
    assert abs(ours / 9224.60 - 1) < MEMORY
    absmax_mb = SC2_LINEAR / 64 * 4 / MB
    assert abs(ours / (9224.60 + absmax_mb) - 1) < 0.04


def test_case4_starcoder_15b_mqa_load_in_8bit_footprint(bundled_catalog):
    """[SC1-README] StarCoder (multi-query, tied head) load_in_8bit: published 15,939.61 MB. Ours 14.685 GiB =
    15,768 MB (-1.08%). The product has no field for GPTBigCode's learned position table (8,192 x 6,144 fp16,
    100.7 MB) and does not count its 8,192^2 bool causal-mask buffer (67.1 MB): together 168 MB, the whole gap
    (15,939.61 - 167.8 = 15,771.8, ours -0.02%). PASS."""
    ours = _weights_mb(_spec(SC1_15B, "fp16", "int8"))
    assert ours == pytest.approx(15768, rel=0.002)
    assert abs(ours / 15939.61 - 1) < MEMORY
