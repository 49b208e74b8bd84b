"""Serving pipelines and what a tensor-parallel degree must split (issue 26 class 3, aud49k items 1-4).

[VLLM-PP] vLLM's distributed-serving guide (docs/serving/distributed_serving.md): where the GPUs cannot divide the
model, "the tensor parallel size should be 1 and the pipeline parallel size should be the number of GPUs".
[VLLM-QUANT] vLLM awq.py / gptq.py create_weights: "The input size is not aligned with the quantized weight shape.
This can be caused by too large tensor parallel size." (input_size_per_partition % group_size); fp8.py
Fp8MoEMethod.create_weights: "The output_size of gate's and up's weight = ... is not divisible by weight
quantization block_n = 128".
"""

import numpy as np
import pandas as pd
import pytest

from procurement.costing.values import CostInputError
from procurement.ranking import RankingOptions, rank_workload
from procurement.ranking.splits import serving_stage_tensor_parallel, tensor_parallel_splits_mlp
from procurement.ranking.warnings import consumer_split_text
from procurement.services.recommendations import ranking_options_parse
from procurement.sizing import inference_throughput, parse_workload_spec
from procurement.sizing.assumptions import PCIE_HOP_LATENCY, RING_BASE_LATENCY
from procurement.sizing.throughput import pipeline_send_seconds, serving_pipeline_batches
from tests.procurement.test_ranking import GPUS, NOW, _offer


def _serving(model, precision="fp16", concurrency=1, parallelism=None, **extra):
    document = {
        "task": "inference",
        "model": model,
        "precision": precision,
        "inference": {"concurrency": concurrency, "context_len": 4096, "output_tokens": 256},
    } | extra
    if parallelism:
        document["parallelism"] = parallelism
    return parse_workload_spec(document)


LLAMA70B_INT4 = {"model": {"preset": "llama-3-70b"}, "weight_quantization": "int4"}
# a 3 x RTX 3090 host (lium RTX3090_3x in the catalog) and a 2 x A100 80GB one
THREE_3090 = pd.DataFrame(
    [
        _offer("lium", "RTX3090_3x", "rtx-3090", 3, "on_demand", 0.66, vcpus=48, ram=192),
        _offer("aws", "p4de.2x", "a100-sxm4-80gb", 2, "on_demand", 8.0, vcpus=48, ram=384),
    ]
)


def _rank(spec, offers=THREE_3090, **options):
    return rank_workload(spec, offers, GPUS, RankingOptions(**({"top": None} | options)), now=NOW)


def test_a_pipeline_send_is_nccls_simple_base_plus_one_hop_plus_the_bytes():
    # Llama-3-70B (hidden 8,192): a token's hidden states and residual, 8,192 x 2 tensors x 2 bytes = 32,768 B,
    # over 10 GB/s of PCIe: 8.4 us base + 5.7 us PCIe hop + 3.2768 us, twice for PP 3 (two stage boundaries)
    spec = _serving(**LLAMA70B_INT4)
    sent = pipeline_send_seconds(spec, np.array([1.0, 3.0]), 1.0, np.array(10.0), nvlink=False)
    one = RING_BASE_LATENCY.value + PCIE_HOP_LATENCY.value + 32768 / 10e9
    assert one == pytest.approx(17.3768e-6)
    assert sent.tolist() == pytest.approx([0.0, 2 * one])
    assert pipeline_send_seconds(spec, np.array([3.0]), 1.0, None).tolist() == [0.0]  # the `size` model: none


def test_a_serving_pipeline_keeps_min_pp_concurrency_micro_batches_in_flight():
    assert serving_pipeline_batches(np.array([1.0, 3.0, 4.0]), 2.0, np.array(1.0)).tolist() == [1.0, 2.0, 2.0]
    assert serving_pipeline_batches(np.array([4.0]), 8.0, None).tolist() == [1.0]  # no link: one batch


def test_a_pipeline_stream_steps_as_one_micro_batch_of_the_streams_plus_its_sends():
    """vLLM's PP 4 at 8 streams: 4 micro-batches of 2 in flight, each stage's weights read once a micro-batch.
    A stream's step is the whole model's weight read at one GPU's bandwidth plus 2 streams' KV reads: exactly the
    one-GPU step at concurrency 2, plus 3 sends of 2 tokens; all 8 streams step once in that time."""
    pp4 = _serving({"preset": "llama-3-70b"}, concurrency=8)
    one_gpu = _serving({"preset": "llama-3-70b"}, concurrency=2)
    common = {"bandwidth_gbps": 2039.0, "peak_tflops": 312.0, "generation": 80}
    rows = inference_throughput(
        pp4, gpu_counts=4, tensor_parallel=1, pipeline_parallel=4, pipeline_link_gbps=np.array(20.0), **common
    )
    alone = inference_throughput(one_gpu, gpu_counts=1, tensor_parallel=1, pipeline_parallel=1, **common)
    sends = pipeline_send_seconds(pp4, np.array(4.0), 2.0, np.array(20.0))
    assert float(rows["decode_step_seconds"]) == pytest.approx(float(alone["decode_step_seconds"] + sends))
    # the one-batch model (`size`'s, no link): all 8 streams in one batch through the stages in turn
    one_batch = inference_throughput(pp4, gpu_counts=4, tensor_parallel=1, pipeline_parallel=4, **common)
    assert float(one_batch["decode_step_seconds"]) > float(rows["decode_step_seconds"])


def test_a_3_gpu_instance_serves_a_64_head_model_as_tp1_pp3():
    rows = _rank(_serving(**LLAMA70B_INT4)).results
    three = [row for row in rows if row["gpus_per_instance"] == 3]
    assert three and all(
        (row["plan"]["tensor_parallel"], row["plan"]["pipeline_parallel"]) == (1, 3) for row in three
    )
    row = three[0]
    assert any("TP 1 x PP 3" in reason and "vLLM's guide" in reason for reason in row["reasons"]), row[
        "reasons"
    ]
    # 3 x 24 GB consumer cards: a serving split over GeForce cards, flagged and ordered as one (production)
    assert any("production serving split over 3 consumer cards" in w for w in row["warnings"]), row[
        "warnings"
    ]
    sends = row["interconnect"]["carried"]
    assert [item["collective"] for item in sends] == ["pipeline send"], row["interconnect"]
    assert row["interconnect"]["summary"].startswith("pipeline sends (one a stage boundary per decode step)")
    # per GPU: a third of the weights (int4: 0.5 byte a parameter of the blocks) and of the KV cache
    two = next(r for r in rows if r["gpus_per_instance"] == 2)
    assert row["memory_per_gpu_gib"] < two["memory_per_gpu_gib"]


def test_a_stated_serving_pipeline_is_honoured_with_tp1():
    spec = _serving(parallelism={"gpus": 3, "pipeline_parallel": 3}, **LLAMA70B_INT4)
    rows = _rank(spec).results
    assert rows and {
        (r["gpus_per_instance"], r["plan"]["tensor_parallel"], r["plan"]["pipeline_parallel"]) for r in rows
    } == {(3, 1, 3)}
    assert all(row["differs_from_spec"] == [] for row in rows)
    assert any("parallelism.pipeline_parallel as stated" in reason for reason in rows[0]["reasons"])


def test_a_stated_serving_pipeline_explored_says_what_differs():
    spec = _serving(parallelism={"gpus": 3, "pipeline_parallel": 3}, **LLAMA70B_INT4)
    rows = _rank(spec, explore_parallelism=True).results
    a100 = next(row for row in rows if row["gpu"] == "a100-sxm4-80gb")
    assert "pipeline parallel 1 (spec: 3)" in a100["differs_from_spec"]


FOUR_A100 = pd.DataFrame([_offer("aws", "4xA100", "a100-sxm4-80gb", 4, "on_demand", 16.0, vcpus=96, ram=768)])


def test_a_stated_tensor_and_pipeline_serving_plan_ranks_each_stage_a_tp_group():
    """fix50k (aud50k item 2): before, refused ("... not both"); after, TP 2 x PP 2 over one 4-GPU instance."""
    spec = _serving(parallelism={"gpus": 4, "tensor_parallel": 2, "pipeline_parallel": 2}, **LLAMA70B_INT4)
    rows = _rank(spec, FOUR_A100).results
    assert rows and {(r["plan"]["tensor_parallel"], r["plan"]["pipeline_parallel"]) for r in rows} == {(2, 2)}
    assert all(row["differs_from_spec"] == [] for row in rows)
    assert any(
        "TP 2 x PP 2" in reason and "each stage a TP group of 2" in reason for reason in rows[0]["reasons"]
    )


def test_stated_gpus_a_multiple_of_the_pipeline_make_its_stages_tp_groups():
    """gpus 4 with pipeline_parallel 2 and no tensor_parallel: vLLM's world size is TP x PP, so TP 2 a stage."""
    spec = _serving(parallelism={"gpus": 4, "pipeline_parallel": 2}, **LLAMA70B_INT4)
    assert serving_stage_tensor_parallel(spec) == 2
    rows = _rank(spec, FOUR_A100).results
    assert rows and {(r["plan"]["tensor_parallel"], r["plan"]["pipeline_parallel"]) for r in rows} == {(2, 2)}


def test_a_tp_x_pp_decode_step_is_its_micro_batch_all_reduces_plus_its_sends():
    """TP 2 x PP 2 at 8 streams: 2 micro-batches of 4; the step is the TP 2 step at 4 streams (its all-reduces over
    4 tokens) plus one send of 4 tokens."""
    common = {"bandwidth_gbps": 2039.0, "peak_tflops": 312.0, "generation": 80}
    pipeline = _serving({"preset": "llama-3-70b"}, concurrency=8)
    alone = _serving({"preset": "llama-3-70b"}, concurrency=4)
    link = np.array(100.0)
    rows = inference_throughput(
        pipeline,
        gpu_counts=4,
        tensor_parallel=2,
        pipeline_parallel=2,
        pipeline_link_gbps=link,
        tensor_parallel_gbps=link,
        **common,
    )
    tp2 = inference_throughput(
        alone, gpu_counts=2, tensor_parallel=2, pipeline_parallel=1, tensor_parallel_gbps=link, **common
    )
    sends = pipeline_send_seconds(pipeline, np.array(2.0), 4.0, link)
    assert float(rows["decode_step_seconds"]) == pytest.approx(float(tp2["decode_step_seconds"] + sends))


def test_a_v1_pipeline_row_says_its_throughput_is_an_upper_bound():
    """[V1-SCHED] aud50k: V1's micro-batches follow arrival (vLLM PR #57433, +22.95% from balancing them); V0's
    schedulers balance them, so a vllm_v0 row says nothing."""
    compiled = _rank(_serving(**LLAMA70B_INT4)).results
    three = next(row for row in compiled if row["gpus_per_instance"] == 3)
    assert any("throughput is an upper bound" in r and "#57433" in r for r in three["reasons"]), three[
        "reasons"
    ]
    v0 = _rank(
        _serving(
            **LLAMA70B_INT4,
            inference={"concurrency": 1, "context_len": 4096, "output_tokens": 256, "engine": "vllm_v0"},
        )
    ).results
    three = next(row for row in v0 if row["gpus_per_instance"] == 3)
    assert not any("upper bound" in r for r in three["reasons"])


# [QWEN2-72B] Qwen2-72B config.json: intermediate_size 29,568 = 231 groups of 128 (64 heads, 8 KV heads); Qwen pads
# its AWQ checkpoint's MLP to 29,696 so that TP 2, 4 and 8 load (Qwen/Qwen2-72B-Instruct-AWQ discussion 3).
QWEN2_72B = {
    "name": "qwen2-72b",
    "num_layers": 80,
    "hidden_size": 8192,
    "num_attention_heads": 64,
    "num_key_value_heads": 8,
    "intermediate_size": 29568,
    "vocab_size": 152064,
}


def test_int4_groups_of_128_gate_tp_on_the_mlp_width():
    tp = np.array([1, 2, 4, 8])
    int4 = _serving(QWEN2_72B, weight_quantization="int4")
    assert tensor_parallel_splits_mlp(int4, tp).tolist() == [
        True,
        False,
        False,
        False,
    ]  # 14,784 = 115.5 x 128
    padded = _serving(QWEN2_72B | {"intermediate_size": 29696}, weight_quantization="int4")
    assert tensor_parallel_splits_mlp(padded, tp).tolist() == [True, True, True, True]  # 3,712 = 29 x 128
    assert tensor_parallel_splits_mlp(_serving(QWEN2_72B), tp).tolist() == [True, True, True, True]  # 16-bit
    # Llama 2 7B (11,008): TP 2 holds 43 groups a rank, TP 4 21.5
    llama2 = _serving({"preset": "llama-2-7b"}, weight_quantization="int4")
    assert llama2.model.intermediate_size == 11008
    assert tensor_parallel_splits_mlp(llama2, np.array([2, 4])).tolist() == [True, False]


# [QWEN3-MOE-FP8] Qwen3-30B-A3B(-FP8) config.json: moe_intermediate_size 768, 128 experts, 32 heads, 4 KV heads,
# FP8 weight_block_size [128, 128]: TP 8 leaves 96 a rank (vLLM's "= 96 is not divisible by ... block_n = 128"),
# TP 2 384 = 3 blocks.
QWEN3_30B_A3B = {
    "name": "qwen3-30b-a3b",
    "num_layers": 48,
    "hidden_size": 2048,
    "num_attention_heads": 32,
    "num_key_value_heads": 4,
    "head_dim": 128,
    "intermediate_size": 6144,
    "moe_intermediate_size": 768,
    "num_experts": 128,
    "experts_per_token": 8,
    "vocab_size": 151936,
}


def test_block_fp8_experts_gate_tp_on_128_wide_blocks():
    fp8 = _serving(QWEN3_30B_A3B, precision="fp8")
    assert tensor_parallel_splits_mlp(fp8, np.array([1, 2, 4, 8])).tolist() == [True, True, False, False]
    bf16 = _serving(QWEN3_30B_A3B, precision="bf16")
    assert tensor_parallel_splits_mlp(bf16, np.array([2, 4, 8])).tolist() == [True, True, True]


def test_an_empty_ranking_names_the_mlp_groups():
    spec = _serving(QWEN2_72B, weight_quantization="int4", parallelism={"gpus": 2, "tensor_parallel": 2})
    ranking = _rank(spec)
    assert not ranking.results
    reason = ranking.why_empty[0]["reason"]
    assert "tensor parallel 2 does not split the MLP's width (29,568) into whole int4 groups of 128" in reason


def test_consumer_split_text_cites_geforce_licence_for_nvidia_only():
    nvidia = consumer_split_text("rtx-4090", 2, nvidia=True)
    radeon = consumer_split_text("radeon-rx-7900-xtx", 2, nvidia=False)
    assert "GeForce driver licence" in nvidia and "no ECC memory" in nvidia
    assert "GeForce" not in radeon and "NVIDIA" not in radeon and "no ECC memory" in radeon


def test_development_deployment_lifts_the_consumer_split_order():
    spec = _serving(**LLAMA70B_INT4)
    production = _rank(spec).results
    development = _rank(spec, deployment="development").results
    consumer = "a serving replica split over consumer cards: ranked below the first row that is not one"
    assert any(consumer in row["reasons"] for row in production)
    assert not any(consumer in row["reasons"] for row in development)
    # development ranks by cost: the cheapest row first (the 3 x 3090 pipeline at $0.66 an hour)
    assert development[0]["instance_type"] == "RTX3090_3x"
    assert production[0]["instance_type"] != "RTX3090_3x"


def test_the_deployment_option_parses_and_names_its_field():
    assert ranking_options_parse({"deployment": "development"}).deployment == "development"
    assert ranking_options_parse({}).deployment == "production"
    with pytest.raises(CostInputError) as error:
        ranking_options_parse({"deployment": "staging"})
    assert error.value.field == "deployment"
