"""qfmt: the int4 checkpoint's format and group size (inference.quant_format, inference.quant_group_size).

Sources of the numbers checked here:
  vLLM v0.6.3 vllm/model_executor/layers/quantization/gptq.py and awq.py create_weights: qweight (4 bits a weight),
    qzeros [in / group, out / 8] int32 (one 4-bit zero a group and output channel), scales [in / group, out] fp16;
    "The input size is not aligned with the quantized weight shape" where input_size_per_partition % group_size != 0.
  OCP Microscaling Formats (MX) v1.0, section 5: MXFP4 = 32 E2M1 values sharing one E8M0 (8-bit) scale.
  vLLM's gpt-oss loader (vllm/model_executor/models/gpt_oss.py _load_weights_mxfp4): per_rank_intermediate_size_block
    = cdiv(intermediate_size // 32, tp_size); mxfp4.py Mxfp4MoEMethod.create_weights pads each rank's slice up to a
    multiple of 64 "to hold non-uniform sharded tensor": no TP degree is refused for the MXFP4 blocks.
  gpt-oss-120b config: intermediate_size 2,880 (tests/procurement/outside/test_outside_recommendations_x26e.py).
  fix51f: gpt-oss's config.json quantization_config modules_to_not_convert (self_attn, mlp.router, embed_tokens,
    lm_head): only the routed experts are MXFP4; vllm-project/vllm @afdb4a4f vllm/model_executor/layers/quantization/
    mxfp4.py Mxfp4Config.get_quant_method ("Mxfp4 linear layer is not implemented") and Mxfp4MoEMethod.create_weights:
    hidden and intermediate_size_per_partition rounded up to 256 / 256 (SM100 FlashInfer TRT-LLM), 256 / 128
    (Marlin, capability < 9) or - / 64 (Triton, Hopper).
"""

from __future__ import annotations

import pytest

from procurement.ranking.splits import tensor_parallel_splits_mlp
from procurement.sizing import WorkloadSpecError, parse_workload_spec, throughput
from procurement.sizing import params as counts
from procurement.sizing.assumptions import INT4_DECODE_EFFICIENCY
from procurement.sizing.bytes_model import block_linear_bytes, expert_weight_bytes, weights_bytes
from tests.procurement.outside.test_outside_recommendations_x26b import candidate, describe, ranked
from tests.procurement.outside.test_outside_recommendations_x26e import GPT_OSS_120B, GPT_OSS_SERVE


def _doc(task="inference", quantization="int4", model=None, **inference):
    doc = {
        "task": task,
        "model": model or {"preset": "qwen2.5-7b"},
        "precision": "fp16",
        "weight_quantization": quantization,
    }
    if task == "inference":
        doc["inference"] = {"concurrency": 1, "context_len": 4096, "output_tokens": 256} | inference
    else:
        doc |= {"training_tokens": 1e9, "lora": {"rank": 16}}
        if inference:
            doc["inference"] = inference
    return doc


def _errors(doc) -> dict[str, str]:
    with pytest.raises(WorkloadSpecError) as caught:
        parse_workload_spec(doc)
    return {e.path: e.message for e in caught.value.errors}


# --- validation ------------------------------------------------------------------------------------------------
def test_it_names_the_field_for_an_unknown_format():
    assert "inference.quant_format" in _errors(_doc(quant_format="hqq"))


@pytest.mark.parametrize("group", [0, 8, 2048, -2, 12.5])
def test_it_refuses_a_group_size_out_of_bounds(group):
    assert "inference.quant_group_size" in _errors(_doc(quant_format="awq", quant_group_size=group))


def test_it_refuses_the_format_where_weights_are_not_int4():
    errors = _errors(_doc(quantization="int8", quant_format="gptq"))
    assert "weight_quantization int4" in errors["inference.quant_format"]


def test_it_refuses_the_format_on_a_training_spec():
    errors = _errors(_doc(task="qlora", quant_format="gptq"))
    assert "task inference" in errors["inference.quant_format"]


def test_it_refuses_a_group_size_without_a_format():
    assert "inference.quant_format" in _errors(_doc(quant_group_size=64))["inference.quant_group_size"]


def test_it_refuses_another_block_for_mxfp4():
    assert "32" in _errors(_doc(quant_format="mxfp4", quant_group_size=64))["inference.quant_group_size"]


def test_the_default_is_unstated_and_today_exactly():
    spec = parse_workload_spec(_doc())
    assert (spec.inference.quant_format, spec.inference.quant_group_size) == ("unstated", None)
    assert block_linear_bytes(spec) == 4.25 / 8  # int4_bits_per_param


# --- (1) bytes per weight, memory and the decode read -------------------------------------------------------------
@pytest.mark.parametrize(
    "fmt, group, bits",
    [
        ("awq", None, 4 + (16 + 4) / 128),  # 4.15625: an fp16 scale and a packed 4-bit zero a group of 128
        ("gptq", None, 4 + (16 + 4) / 128),  # the symmetric checkpoint ships (and vLLM loads) its qzeros too
        ("gptq", 32, 4 + (16 + 4) / 32),  # 4.625
        ("awq", 64, 4 + (16 + 4) / 64),  # 4.3125
        ("gptq", -1, 4.0),  # one scale a row of 3,584+ weights: under 0.006 bits, left out
        # 4.25: one E8M0 scale a block of 32. Restated (fix51f): was block_linear_bytes on qwen2.5-7b (dense) ->
        # the routed experts' bytes on gpt-oss-120b (expert_weight_bytes): a dense model is now refused under mxfp4
        # and the other linears are 16-bit (test_mxfp4_prices_only_the_routed_experts)
        ("mxfp4", None, 4 + 8 / 32),
    ],
)
def test_it_prices_each_format_by_its_bits(fmt, group, bits):
    extra = {"quant_group_size": group} if group else {}
    if fmt == "mxfp4":
        mxfp4 = parse_workload_spec(_doc(model=GPT_OSS_120B, quant_format=fmt))
        assert expert_weight_bytes(mxfp4) == bits / 8
        return
    assert block_linear_bytes(parse_workload_spec(_doc(quant_format=fmt, **extra))) == bits / 8


def test_it_holds_the_stated_bits_in_memory():
    """AWQ g128 against the unstated 4.25 bits: every quantized weight (4.15625 - 4.25) / 8 bytes lighter."""
    unstated = parse_workload_spec(_doc())
    awq = parse_workload_spec(_doc(quant_format="awq"))
    linears = counts.quantizable_params(awq.model)
    assert weights_bytes(awq) - weights_bytes(unstated) == pytest.approx(linears * (4.15625 - 4.25) / 8)


def test_it_reads_the_stated_bits_in_decode():
    """The decode weight read moves by the same bytes (the 16-bit lm_head and table unchanged, compiled loop)."""
    unstated = parse_workload_spec(_doc())
    awq = parse_workload_spec(_doc(quant_format="awq"))
    linears = counts.quantizable_params(awq.model)
    eff = throughput.decode_efficiency(awq)
    assert eff == throughput.decode_efficiency(unstated)
    read_awq, _ = throughput.decode_read_bytes(awq, 1)
    read_unstated, _ = throughput.decode_read_bytes(unstated, 1)
    assert read_awq - read_unstated == pytest.approx(linears * (4.15625 - 4.25) / 8 / eff, rel=1e-6)


# --- (2) the TP gate's group ---------------------------------------------------------------------------------------
def _oss(**inference):
    return parse_workload_spec(_doc(model=GPT_OSS_120B, **inference))


@pytest.mark.parametrize(
    "inference, tp, splits",
    [
        ({}, 2, False),  # unstated: 2,880 / 2 = 1,440 = 11.25 groups of 128 (today's refusal)
        ({"quant_format": "mxfp4"}, 2, True),  # 1,440 = 45 blocks of 32
        ({"quant_format": "mxfp4"}, 8, True),  # 360 = 11.25 blocks: vLLM gives ranks 12 (cdiv(90, 8)) or 6
        ({"quant_format": "awq"}, 2, False),  # 1,440 % 128 = 32
        ({"quant_format": "awq", "quant_group_size": 32}, 2, True),  # 1,440 % 32 = 0
        ({"quant_format": "awq", "quant_group_size": 64}, 4, False),  # 720 % 64 = 16
        ({"quant_format": "gptq", "quant_group_size": -1}, 4, True),  # per channel: no group to hold whole
        ({"quant_format": "mxfp4"}, 7, False),  # 2,880 % 7 != 0: the width itself does not divide
    ],
)
def test_the_tp_gate_checks_the_stated_group(inference, tp, splits):
    assert bool(tensor_parallel_splits_mlp(_oss(**inference), tp)) is splits


@pytest.mark.django_db
def test_gpt_oss_120b_mxfp4_at_tp_2_ranks(bundled_catalog):
    """gpt-oss-120b stated at TP 2 over 2 GPUs: no row while int4 means 128-wide groups (1,440 % 128 = 32); rows
    with its MXFP4 format stated, each a 2-GPU TP 2 plan."""
    two = GPT_OSS_SERVE | {"parallelism": {"gpus": 2, "tensor_parallel": 2}}
    assert ranked(two, top=3) == []
    mxfp4 = two | {"inference": GPT_OSS_SERVE["inference"] | {"quant_format": "mxfp4"}}
    rows = ranked(mxfp4, top=3)
    assert rows, "no row for gpt-oss-120b MXFP4 at TP 2"
    assert all(r["gpus"] == 2 and r["plan"]["tensor_parallel"] == 2 for r in rows), describe(rows)


# --- fix51f: MXFP4 prices the experts only, padded by the card's MoE backend per TP rank ----------------------------
# gpt-oss-120b by hand: routed experts 36 layers x 128 x 3 x 2,880 x 2,880 = 114,661,785,600; the rest 2,127,447,360
# = attention 36 x (2,880 x 4,096 + 2 x 2,880 x 512 + 4,096 x 2,880) = 955,514,880 + embedding and lm_head
# 2 x 201,088 x 2,880 = 1,158,266,880 + router 36 x 2,880 x 128 = 13,271,040 + norms 210,240 + qkv biases 184,320.
OSS_EXPERTS = 36 * 128 * 3 * 2880 * 2880
OSS_REST = 955_514_880 + 1_158_266_880 + 13_271_040 + 210_240 + 184_320
GIB = 2**30


def test_it_refuses_mxfp4_on_a_dense_model():
    """No dense MXFP4 checkpoint loads in vLLM (Mxfp4Config: 'Mxfp4 linear layer is not implemented')."""
    assert "no experts" in _errors(_doc(quant_format="mxfp4"))["inference.quant_format"]


def test_mxfp4_prices_only_the_routed_experts():
    """60.693 GiB: the experts at 4.25 bits, everything else bf16 (before fix51f every linear at 4.25: 59.368)."""
    spec = _oss(quant_format="mxfp4")
    assert block_linear_bytes(spec) == 2.0
    expected = OSS_EXPERTS * 4.25 / 8 + OSS_REST * 2
    assert weights_bytes(spec) == pytest.approx(expected, rel=1e-9)
    assert expected / GIB == pytest.approx(60.693, abs=0.001)


def test_mxfp4_reads_attention_at_the_16_bit_rate():
    """One stream's decode read: the top-4 of 128 experts a layer at 4.25 bits over the int4 read rate, and the
    16-bit rest without the input table (201,088 x 2,880 = 579,133,440, a row lookup) at the 16-bit rate."""
    spec = _oss(quant_format="mxfp4")
    read, _ = throughput.decode_read_bytes(spec, 1)
    touched = OSS_EXPERTS * 4 / 128 * 4.25 / 8
    sixteen = (OSS_REST - 579_133_440) * 2
    assert read == pytest.approx(touched / INT4_DECODE_EFFICIENCY.value + sixteen, rel=1e-9)


def _oss_at(gpus: int) -> dict:
    return GPT_OSS_SERVE | {
        "parallelism": {"gpus": gpus, "tensor_parallel": gpus},
        "inference": GPT_OSS_SERVE["inference"] | {"quant_format": "mxfp4", "context_len": 2048},
    }


# (card, TP) -> its backend's padded hidden x per-rank intermediate (2,880 / tp rounded up): GB200 256 / 256, A100
# Marlin 256 / 128, H100 Triton - / 64. A100 at TP 1 is 3,072 x 2,944 = x1.0904 the expert bytes, the x1.091 aud51f
# stated from the same code (a sibling not used to write the rule).
PADDED = {
    ("gb200", 1): (3072, 3072),
    ("gb200", 2): (3072, 1536),
    ("gb200", 8): (3072, 512),
    ("a100-sxm4-80gb", 1): (3072, 2944),
    ("a100-sxm4-80gb", 2): (3072, 1536),
    ("a100-sxm4-80gb", 8): (3072, 384),
    ("h100-sxm5-80gb", 1): (2880, 2880),
    ("h100-sxm5-80gb", 2): (2880, 1472),
    ("h100-sxm5-80gb", 8): (2880, 384),
}


@pytest.mark.django_db
@pytest.mark.parametrize("gpu, tp", list(PADDED))
def test_mxfp4_weights_per_rank_by_hand(bundled_catalog, gpu, tp):
    """A rank's weights: 36 x 128 x 3 x the padded widths at 4.25 bits plus 1 / tp of the 16-bit rest. GB200 TP 8:
    512 / 360 = x1.517 the unpadded expert share (8.34 -> 10.23 GiB a rank)."""
    hidden, intermediate = PADDED[gpu, tp]
    expected = (36 * 128 * 3 * hidden * intermediate * 4.25 / 8 + OSS_REST * 2 / tp) / GIB
    row = candidate(_oss_at(tp), gpu)
    # the report rounds to 3 places
    assert row["memory"]["weights_gib"] == pytest.approx(expected, abs=0.0006)


@pytest.mark.django_db
@pytest.mark.parametrize("tp", [2, 8])
def test_gpt_oss_mxfp4_ranking_rows_hold_the_padded_rank(bundled_catalog, tp):
    """The ranking's rows at TP 2 / TP 8 carry the same per-rank peak as `size` on their card (the padding is read
    per card in both; test_mxfp4_weights_per_rank_by_hand checks those by hand)."""
    spec = _oss_at(tp)
    rows = ranked(spec, top=5)
    assert rows, f"no gpt-oss-120b MXFP4 row at TP {tp}"
    for row in rows:
        sized = candidate(spec, row["gpu"])["memory"]["total_per_gpu_gib"]
        assert row["memory_per_gpu_gib"] == pytest.approx(sized, abs=0.01), describe([row])
