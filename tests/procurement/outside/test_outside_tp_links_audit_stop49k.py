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


@pytest.mark.django_db
def test_falcon_180b_bf16_ranks_an_8_gpu_tp8_row_first(bundled_catalog):
    spec = serving(FALCON180B)
    rows = ranked(spec, 10)
    assert not row_problems(rows, spec), row_problems(rows, spec)
    assert rows[0]["gpus_per_instance"] == 8 and tp_of(rows[0]) == 8
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
# (the hobby 2-card case): row 1 lium 2x L40S ($601.05), row 2 vast 2x RTX 3090 ($287.15), which is also tight and
# on an assumed link. An 8B on 2 x 4090 never forms a TP group (two data-parallel replicas, no consumer flag).
@pytest.mark.django_db
def test_hobby_70b_int4_consumer_split_is_row_two_and_says_why(bundled_catalog):
    rows = ranked(LLAMA70B_INT4, 5)
    assert not rows[0]["gpu"].startswith("rtx-") or rows[0]["gpus_per_instance"] == 1
    splits = [r for r in rows if r["gpu"].startswith("rtx-") and tp_of(r) > 1]
    assert splits and rows.index(splits[0]) == 1
    assert any("split over consumer cards" in reason for reason in splits[0]["reasons"])
