"""bnb49: the QLoRA stack's bitsandbytes memory terms (spec `quantization`, procurement/sizing/bnb_memory.py), by hand.

Sources of the mechanisms (bnb_memory's docstring): bitsandbytes 0.41.1 (18e827d6) bitsandbytes/autograd/_functions.py
line 523 `ctx.tensors = (A, B)` (fixed in 0.43.2, 9e753741), lines 516 / 547 `.to(A.dtype)`, nn/modules.py line 156
Params4bit.cuda `.half()` (gone at 0.43.0); Lightning @71aed751 src/lightning/fabric/plugins/precision/bitsandbytes.py
line 130 (init_context replaces torch.nn.Linear, the LM head included) and line 221 (quantizes from torch.half).
"""

from __future__ import annotations

import pytest

from procurement.sizing.memory import memory_breakdown_scalar
from procurement.sizing.spec import WorkloadSpecError, parse_workload_spec

GIB = 1024**3
# A small dense shape: d 1,024, 4 layers, 8 heads, f 2,816 (gated), vocab 10,000
SHAPE = {
    "num_layers": 4,
    "hidden_size": 1024,
    "num_attention_heads": 8,
    "intermediate_size": 2816,
    "vocab_size": 10000,
}
NF4_BYTES = 4.127 / 8  # assumptions nf4_bits_per_param (double-quantized)
FRAGMENTATION = 0.05  # assumptions FRAGMENTATION_FRACTION, on the tensors


def qlora(quantization: dict | None = None, **fields) -> dict:
    spec = {
        "task": "qlora",
        "model": SHAPE,
        "seq_len": 512,
        "micro_batch_size": 2,
        "lora": {"rank": 8, "targets": ["q_proj", "v_proj"], "dropout": 0.05},
    } | fields
    return spec | ({"quantization": quantization} if quantization is not None else {})


def breakdown(document: dict) -> dict:
    return memory_breakdown_scalar(parse_workload_spec(document))


def test_the_defaults_add_nothing():
    plain = breakdown(qlora())
    stated = breakdown(qlora({"bnb_version": "current", "lm_head_4bit": False}))
    assert stated == plain
    # 0.43.2 and later keep nothing more either
    assert breakdown(qlora({"bnb_version": "0.43.2"})) == plain


def test_bitsandbytes_0_43_0_keeps_the_inputs_only():
    # q / v adapted with dropout 0.05: attention input d, o_proj input d, MLP input d, down input f, 2 B each:
    # (3 x 1,024 + 2,816) x 2 B x 4 layers x 1,024 tokens = 48,234,496 B; 0.43.0 stores the compute dtype, so no
    # copies with a 16-bit head.
    plain, stated = breakdown(qlora()), breakdown(qlora({"bnb_version": "0.43.0"}))
    inputs = (3 * 1024 + 2816) * 2 * 4 * 1024
    assert (stated["activations_gib"] - plain["activations_gib"]) * GIB == pytest.approx(inputs)
    assert stated["dequantized_weights_gib"] == plain["dequantized_weights_gib"]
    assert (stated["total_per_gpu_gib"] - plain["total_per_gpu_gib"]) * GIB == pytest.approx(inputs * 1.05)


def test_an_adapter_without_dropout_shares_its_linears_input():
    # dropout 0: the q / v adapters' saved input is the attention input itself (already counted): d + d + f
    plain = breakdown(qlora(lora={"rank": 8, "targets": ["q_proj", "v_proj"]}))
    stated = breakdown(qlora({"bnb_version": "0.43.1"}, lora={"rank": 8, "targets": ["q_proj", "v_proj"]}))
    inputs = (2 * 1024 + 2816) * 2 * 4 * 1024
    assert (stated["activations_gib"] - plain["activations_gib"]) * GIB == pytest.approx(inputs)


def test_full_recomputation_holds_one_block():
    plain = breakdown(qlora(gradient_checkpointing="full"))
    stated = breakdown(qlora({"bnb_version": "0.41.1"}, gradient_checkpointing="full"))
    inputs = (3 * 1024 + 2816) * 2 * 1 * 1024
    assert (stated["activations_gib"] - plain["activations_gib"]) * GIB == pytest.approx(inputs)


def test_fp16_stored_weights_add_the_largest_block_linears_two_copies():
    # before 0.43.0 under bf16: fp16 + bf16 copies of the largest block linear, 4 B x 1,024 x 2,816
    plain, stated = breakdown(qlora()), breakdown(qlora({"bnb_version": "0.42.0"}))
    assert (stated["dequantized_weights_gib"] - plain["dequantized_weights_gib"]) * GIB == pytest.approx(
        4 * 1024 * 2816
    )
    # fp16 compute: no cast, the fp16 copy alone
    plain16 = breakdown(qlora(precision="fp16"))
    stated16 = breakdown(qlora({"bnb_version": "0.42.0"}, precision="fp16"))
    assert (stated16["dequantized_weights_gib"] - plain16["dequantized_weights_gib"]) * GIB == pytest.approx(
        2 * 1024 * 2816
    )


def test_a_4bit_lm_head():
    head = 10000 * 1024
    plain = breakdown(qlora())
    current = breakdown(qlora({"lm_head_4bit": True}))
    # weights: 2 - 0.516 B a head weight less. Copies (fix49b, aud49b fix 1): only Lightning's plugin quantizes the
    # head, and it quantizes from torch.half at every release, so a 4-bit head implies fp16 storage: the head's
    # fp16 + bf16 unpacked copies at the backward's start, 4 B a head weight, whatever the bitsandbytes release
    assert (plain["weights_gib"] - current["weights_gib"]) * GIB == pytest.approx(head * (2 - NF4_BYTES))
    assert (current["dequantized_weights_gib"] - plain["dequantized_weights_gib"]) * GIB == pytest.approx(
        4 * head
    )
    # stated compute-dtype storage: the bf16 copy alone, 2 B a head weight
    compute = breakdown(qlora({"lm_head_4bit": True, "bnb_storage_dtype": "compute"}))
    assert (compute["dequantized_weights_gib"] - plain["dequantized_weights_gib"]) * GIB == pytest.approx(
        2 * head
    )
    # with 0.41.1: the head's fp16 + bf16 copies (4 B), not a block linear's, and the inputs
    old = breakdown(qlora({"bnb_version": "0.41.1", "lm_head_4bit": True}))
    assert (old["dequantized_weights_gib"] - plain["dequantized_weights_gib"]) * GIB == pytest.approx(
        4 * head
    )
    inputs = (3 * 1024 + 2816) * 2 * 4 * 1024
    tensors = inputs - head * (2 - NF4_BYTES) + 4 * head
    assert (old["total_per_gpu_gib"] - plain["total_per_gpu_gib"]) * GIB == pytest.approx(tensors * 1.05)


def test_fp16_storage_is_a_dtype_not_a_release():
    # fix49b (aud49b fix 1): transformers' bnb loader overrides torch_dtype None with torch.float16
    # (quantizer_bnb_4bit update_torch_dtype, stored id 14084635761), so a current bitsandbytes run loaded without a
    # dtype stores its 4-bit weights fp16: the largest block linear's fp16 + bf16 copies, 4 B x 1,024 x 2,816 =
    # 11,534,336 B, and no saved inputs (0.43.2 keeps (None, B): bitsandbytes 9e753741, stored id 102675332)
    plain = breakdown(qlora())
    fp16 = breakdown(qlora({"bnb_storage_dtype": "fp16"}))
    assert (fp16["dequantized_weights_gib"] - plain["dequantized_weights_gib"]) * GIB == pytest.approx(
        4 * 1024 * 2816
    )
    assert fp16["activations_gib"] == plain["activations_gib"]
    # compute storage with a 16-bit head adds nothing (the engine's default count)
    assert breakdown(qlora({"bnb_storage_dtype": "compute"})) == plain
    # unstated before 0.43.0: fp16, as bnb49 charged it (Params4bit.cuda's .half())
    assert breakdown(qlora({"bnb_version": "0.42.0", "bnb_storage_dtype": "fp16"})) == breakdown(
        qlora({"bnb_version": "0.42.0"})
    )


def test_nf4_without_double_quantization():
    # fix49b (aud49b fix 5): LitGPT's bnb.nf4 keeps one float32 absmax per 64-weight block, 32 / 64 = 0.5 bits a
    # weight; double quantization (bnb.nf4-dq, the default here) brings the constants to 8 / 64 + 32 / (64 x 256) =
    # 0.127 (QLoRA, Dettmers et al. 2023, arXiv 2305.14314 section 2 "Double Quantization"). Block linears a layer:
    # 4 x 1,024 x 1,024 + 3 x 1,024 x 2,816 = 12,845,056; x 4 layers = 51,380,224 at (4.5 - 4.127) / 8 B more each
    linears = 4 * (4 * 1024 * 1024 + 3 * 1024 * 2816)
    plain, single = breakdown(qlora()), breakdown(qlora({"nf4_double_quant": False}))
    assert (single["weights_gib"] - plain["weights_gib"]) * GIB == pytest.approx(linears * (4.5 - 4.127) / 8)
    # a 4-bit head is quantized the same way: 10,000 x 1,024 more weights at 4.5 bits
    head = 10000 * 1024
    with_head = breakdown(qlora({"nf4_double_quant": False, "lm_head_4bit": True}))
    dq_head = breakdown(qlora({"lm_head_4bit": True}))
    assert (with_head["weights_gib"] - dq_head["weights_gib"]) * GIB == pytest.approx(
        (linears + head) * (4.5 - 4.127) / 8
    )
    # also for NF4 inference (transformers' BitsAndBytesConfig leaves bnb_4bit_use_double_quant off)
    serve = {"task": "inference", "model": SHAPE, "weight_quantization": "nf4"}
    assert (
        breakdown(serve | {"quantization": {"nf4_double_quant": False}})["weights_gib"]
        - breakdown(serve)["weights_gib"]
    ) * GIB == pytest.approx(linears * (4.5 - 4.127) / 8)


@pytest.mark.parametrize(
    ("document", "path"),
    [
        (qlora({"bnb_version": "0.41"}) | {"task": "lora"}, "quantization.bnb_version"),
        (qlora({"lm_head_4bit": True}, weight_quantization="int4"), "quantization.lm_head_4bit"),
        (qlora({"bnb_version": "latest"}), "quantization.bnb_version"),
        (
            qlora({"lm_head_4bit": True}, model=SHAPE | {"tie_word_embeddings": True}),
            "quantization.lm_head_4bit",
        ),
        (
            qlora({"bnb_version": "0.41.1"}, model=SHAPE | {"num_experts": 8, "experts_per_token": 2}),
            "quantization.bnb_version",
        ),
        (qlora({"bnb": "0.41.1"}), "quantization.bnb"),
        (qlora({"bnb_storage_dtype": "bf16"}), "quantization.bnb_storage_dtype"),
        # before 0.43.0 Params4bit.cuda stores .half() whatever the load dtype (bitsandbytes 0.41.1 nn/modules.py 156)
        (qlora({"bnb_version": "0.42.0", "bnb_storage_dtype": "compute"}), "quantization.bnb_storage_dtype"),
        (qlora({"bnb_storage_dtype": "fp16"}) | {"task": "lora"}, "quantization.bnb_storage_dtype"),
        (qlora({"nf4_double_quant": False}, weight_quantization="int4"), "quantization.nf4_double_quant"),
    ],
)
def test_refused_where_it_does_not_apply(document, path):
    with pytest.raises(WorkloadSpecError) as raised:
        parse_workload_spec(document)
    assert path in [error.path for error in raised.value.errors]
