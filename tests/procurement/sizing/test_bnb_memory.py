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
    # weights: 2 - 0.516 B a head weight less; copies: its bf16 unpacked copy at the backward's start, 2 B
    assert (plain["weights_gib"] - current["weights_gib"]) * GIB == pytest.approx(head * (2 - NF4_BYTES))
    assert (current["dequantized_weights_gib"] - plain["dequantized_weights_gib"]) * GIB == pytest.approx(
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
    ],
)
def test_refused_where_it_does_not_apply(document, path):
    with pytest.raises(WorkloadSpecError) as raised:
        parse_workload_spec(document)
    assert path in [error.path for error in raised.value.errors]
