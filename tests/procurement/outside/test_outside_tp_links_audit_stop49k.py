"""aud49k (stop 49, issue 26 'links and parallelism as they are'): published serving setups against the two ranking
changes f9dc6426 (shapes.tensor_parallel_splits_heads, gate 'tp_heads') and 17a6dd32 (configurations.consumer_split).

Engines' head rules, opened: vLLM ModelConfig.verify_with_parallel_config raises "Total number of attention heads
(N) must be divisible by tensor parallel size (T)" (stored id 10081767991) and QKVParallelLinear splits the KV heads
(`divide(total_num_kv_heads, tp_size)`) or replicates them (`divide(tp_size, total_num_kv_heads)`, stored id
286204081); SGLang's layers/linear.py is that code (adapted from vLLM v0.6.4.post1); TensorRT-LLM asserts
`num_heads % tp_size == 0` and rounds KV heads up, `(num_kv_heads + tp_size - 1) // tp_size`, duplicating them when
tp > kv (stored ids 27194950742, 686431158). Megatron-Core does NOT replicate: TransformerConfig raises
"num_query_groups (G) must be a multiple of tensor_model_parallel_size (T)" (stored id 3369804354).
"""

from __future__ import annotations

import numpy as np
import pytest

from procurement.ranking.shapes import tensor_parallel_splits_heads
from procurement.sizing.spec import parse_workload_spec
from tests.procurement.outside.test_outside_ranking_audit_stop48 import ranked, row_problems


def serving(model, precision="bf16", concurrency=8, context=2048, out=256, **extra) -> dict:
    return {
        "task": "inference",
        "model": model,
        "precision": precision,
        "inference": {"concurrency": concurrency, "context_len": context, "output_tokens": out},
    } | extra


def tp_of(row) -> int:
    return int(row["plan"]["tensor_parallel"])


# [SGL-DSV3] SGLang's DeepSeek-V3 benchmark page, "DeepSeek V3 on 8xH200 (single-node)": `sglang.launch_server
# --model deepseek-ai/DeepSeek-V3 --tp 8` (stored id 4990723880); SGLang's DeepSeek docs quote speeds "on H200 TP8"
# (stored id 505805276). MLA model: 128 query heads, config's num_key_value_heads 128.
DSV3_FP8 = serving({"preset": "deepseek-v3"}, precision="fp8", context=2048, out=1024)


@pytest.mark.django_db
def test_sglang_deepseek_v3_fp8_on_8_h200_tp8(bundled_catalog):
    rows = ranked(DSV3_FP8, 10)
    assert not row_problems(rows, DSV3_FP8), row_problems(rows, DSV3_FP8)
    assert all(128 % tp_of(r) == 0 for r in rows)
    h200_tp8 = [
        r for r in rows if r["gpu"].startswith("h200") and r["gpus_per_instance"] == 8 and tp_of(r) == 8
    ]
    assert h200_tp8, [(r["instance_type"], r["gpu"], tp_of(r)) for r in rows]


# [FALCON180] Falcon-180B (tiiuae/falcon-180b config.json: 80 layers, hidden 14,848, 232 query heads, 8 KV heads,
# plain 4h GELU MLP, vocab 65,024); Hugging Face's launch post ("Spread Your Wings: Falcon 180B is here", Sept 2023)
# serves it in BF16 on 8 x A100 80GB, i.e. TP 8 (232 / 8 = 29 heads a rank). TP 16 leaves 14.5 heads a rank: vLLM
# refuses it although 16 % 8 == 0 would replicate the KV heads.
FALCON180B = {
    "name": "falcon-180b",
    "num_layers": 80,
    "hidden_size": 14848,
    "num_attention_heads": 232,
    "num_key_value_heads": 8,
    "intermediate_size": 4 * 14848,
    "vocab_size": 65024,
    "gated_mlp": False,
}


def test_falcon_180b_232_heads_split_by_2_4_8_not_3_16():
    spec = parse_workload_spec(serving(FALCON180B))
    assert tensor_parallel_splits_heads(spec, np.array([1, 2, 3, 4, 8, 16])).tolist() == [
        True,
        True,
        False,
        True,
        True,
        False,
    ]


# What aud49k's rule promised is that TP splits the heads and row 1 is a sensible replica, not that row 1 is 8 GPUs.
# Before -> after (fix50k, stop 50): row 1 runpod 8 x A100 80GB TP 8 -> runpod 4x_MI300X_SECURE TP 4 ($7,381.39 a
# month, 143 tokens/s at concurrency 8). Cause: fix50b (aud50b fix 2, accepted by aud50m) gave MI300X hosts their
# Infinity Fabric baseboard link where the catalog states none (AMD CDNA 3 white paper: MI300X is made only as OAM
# modules in a fully connected 8-GPU system; a 4-GPU slice talks over 3 of its 7 x 64 GB/s links), so the row lost
# its "assumed PCIe link" doubt. An expert signs it: 4 x 192 GB = 768 GB holds 360 GB of bf16 weights at 90.0 GiB
# a GPU of 178.8 (comfortable, the first row that is not tight), 232 / 4 = 58 query heads and 8 / 4 = 2 KV heads a
# rank (split, not replicated), at 0.96x H100 measured (MLPerf Inference v4.1 Llama 2 70B). HF's own 8 x A100 TP 8
# shape stays in the top ten (8-GPU TP 8 rows 2-9: tight 48 GB cards, then A800 PCIe on an assumed link).
@pytest.mark.django_db
def test_falcon_180b_bf16_ranks_a_tp_group_that_splits_the_heads_first(bundled_catalog):
    spec = serving(FALCON180B)
    rows = ranked(spec, 10)
    assert not row_problems(rows, spec), row_problems(rows, spec)
    first = rows[0]
    tp = tp_of(first)
    assert tp == first["gpus_per_instance"] and 232 % tp == 0 and 8 % tp == 0
    assert first["reasons"][0].startswith("fits: needs"), first["reasons"][0]
    assert not any("assumed" in reason for reason in first["reasons"])
    assert any(r["gpus_per_instance"] == 8 and tp_of(r) == 8 for r in rows[1:])
    assert all(232 % tp_of(r) == 0 for r in rows)


# [HARNESS-2GPU] a vLLM serving-benchmark harness README ("Tensor parallelism", stored id 56786816775): on a 2-GPU
# host vLLM rejects TP 2 for SmolLM2-135M ("attention heads (9) must be divisible by tensor parallel size (2)"), so
# it runs TP 1 on one GPU; Qwen2.5-0.5B (14 heads, 2 KV heads) and Llama-3.1-8B (32 / 8) run TP 2.
# Shapes from their config.json files.
SMOLLM2_135M = {
    "name": "smollm2-135m",
    "num_layers": 30,
    "hidden_size": 576,
    "num_attention_heads": 9,
    "num_key_value_heads": 3,
    "intermediate_size": 1536,
    "vocab_size": 49152,
}
QWEN25_05B = {
    "name": "qwen2.5-0.5b",
    "num_layers": 24,
    "hidden_size": 896,
    "num_attention_heads": 14,
    "num_key_value_heads": 2,
    "intermediate_size": 4864,
    "vocab_size": 151936,
}


@pytest.mark.parametrize(
    "model,tp2",
    [(SMOLLM2_135M, False), (QWEN25_05B, True), ({"preset": "llama-3.1-8b"}, True)],
    ids=["smollm2-135m", "qwen2.5-0.5b", "llama-3.1-8b"],
)
def test_two_gpu_host_tp_ladder(model, tp2):
    spec = parse_workload_spec(serving(model))
    assert tensor_parallel_splits_heads(spec, np.array([1, 2])).tolist() == [True, tp2]


# [VLLM-PP] vLLM's distributed-serving guide (docs/serving/distributed_serving.md, stored id 100353991): "if the
# model fits in a single node with multiple GPUs, but the number of GPUs cannot divide the model size evenly, you can
# use pipeline parallelism, which splits the model along layers and supports uneven splits. In this case, the tensor
# parallel size should be 1 and the pipeline parallel size should be the number of GPUs." The catalog has 3-GPU
# instances (daytona 3x-RTX5090, 96 GB; lium RTX3090_3x, 72 GB) that hold a 70B int4 replica (about 38 GB of
# weights); with the tp_heads gate they held no plan at all (serving had no pipeline plan). FIXED at stop 50
# (rankpp): where no TP degree of an instance's GPUs splits the model, its replica is TP 1 x PP n
# (ranking/splits.serving_pipeline_plans), the stages' micro-batches in flight as vLLM runs them, a send of
# activations a stage (sizing/throughput.serving_pipeline_batches, pipeline_send_seconds); before: no 3-GPU row
# in the top 300, after: lium RTX3090_3x TP 1 x PP 3 at row 20 ($528.05 a month, ordered as a consumer split).
LLAMA70B_INT4 = serving(
    {"preset": "llama-3-70b"}, precision="fp16", concurrency=1, context=4096, weight_quantization="int4"
)


@pytest.mark.django_db
def test_vllm_pipeline_parallel_serving_on_a_3_gpu_instance(bundled_catalog):
    rows = ranked(LLAMA70B_INT4, 300)
    three = [r for r in rows if r["gpus_per_instance"] == 3]
    assert three, sorted({r["gpus_per_instance"] for r in rows})
    assert all((tp_of(r), r["plan"]["pipeline_parallel"]) == (1, 3) for r in three)


# The two setups aud49k ran for the consumer rule (printed rows, not asserted beyond what the rule promises):
# Llama-3-70B bf16 at 32 streams: row 1 runpod 8x L40S ($2,557.45); the 8 x RTX 3090 TP 8 row ($980.65) is row 2
# and was already tight (20.7 of 24 GiB), so the consumer rule adds nothing there. Llama-3-70B int4 at one stream
# (the hobby 2-card case): row 1 lium 2x L40S ($601.05). An 8B on 2 x 4090 never forms a TP group (two
# data-parallel replicas, no consumer flag). aud49k's rule is "ranked below the first row that is not one", which
# is what is asserted. Before -> after (fix50k, stop 50): vast 2x RTX 3090 ($287.15) row 2 -> row 26 of 300; the
# consumer splits sit at rows 13, 16 (lium RTX3090_4x TP 4, $571.85, roomy on a stated link), 24, 25, 26. Cause: fix50a (aud50a)
# orders doubted rows by their number of doubts; the 2 x 3090 row has three (tight 21.5 of 24 GiB, an assumed link,
# a consumer split), so the one-doubt rows (tight single 48 GB cards from $316.35) rank above it. An expert agrees:
# one 48 GB card with 5.5 GiB to spare is the better buy than two GeForce cards at 2.5 GiB over an unstated link.
@pytest.mark.django_db
def test_hobby_70b_int4_consumer_split_ranks_below_the_first_row_that_is_not_one_and_says_why(
    bundled_catalog,
):
    rows = ranked(LLAMA70B_INT4, 300)

    def is_split(row):
        return any("split over consumer cards" in reason for reason in row["reasons"])

    first_plain = next(i for i, r in enumerate(rows) if not is_split(r))
    splits = [i for i, r in enumerate(rows) if is_split(r)]
    print("consumer splits at rows", [i + 1 for i in splits])  # 13, 16, 24, 25, 26 at fix50k
    assert first_plain == 0 and splits and min(splits) > first_plain
    hobby = [
        i
        for i, r in enumerate(rows)
        if r["gpu"] == "rtx-3090" and r["gpus_per_instance"] == 2 and tp_of(r) == 2
    ]
    assert hobby and all(i in splits for i in hobby), hobby
    assert all(rows[i]["gpus_per_instance"] > 1 and rows[i]["gpu"].startswith("rtx-") for i in splits)
