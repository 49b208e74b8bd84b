"""Tensor parallelism splits the attention heads the way serving and training engines require (aud49r, stop 49).

aud49r ranked Mixtral 8x7B int8 serving (one stream) and got lium RTX3090_3x first: a TP 3 group over a model of
32 query heads and 8 KV heads. vLLM refuses it ("Total number of attention heads (32) must be divisible by tensor
parallel size (3)", vllm/config.py ModelConfig.verify_with_parallel_config, stored id 10081767991; a user hitting it
on 3 cards with Qwen3-8B: stored id 57589686346), and so do Megatron-Core and TensorRT-LLM.
"""

import numpy as np
import pytest

from procurement.ranking.shapes import tensor_parallel_splits_heads
from procurement.sizing.spec import parse_workload_spec
from tests.procurement.outside.test_outside_ranking_audit_stop48 import ranked

MIXTRAL_INT8 = {
    "task": "inference",
    "model": {"preset": "mixtral-8x7b"},
    "precision": "bf16",
    "weight_quantization": "int8",
    "inference": {"concurrency": 1, "context_len": 640, "output_tokens": 128},
}


def test_the_degrees_that_split_32_query_and_8_kv_heads():
    spec = parse_workload_spec(MIXTRAL_INT8)
    degrees = np.array([1, 2, 3, 4, 6, 8, 16])
    # 32 % tp == 0 and (8 % tp == 0 or tp % 8 == 0): 1, 2, 4, 8 split; 16 replicates the 8 KV heads twice
    assert tensor_parallel_splits_heads(spec, degrees).tolist() == [
        True,
        True,
        False,
        True,
        False,
        True,
        True,
    ]


def test_a_28_head_model_has_no_tp_8():
    # Qwen2.5-7B: 28 query heads, 4 KV heads (its config.json): TP 8 leaves 3.5 heads a rank
    spec = parse_workload_spec(MIXTRAL_INT8 | {"model": {"preset": "qwen2.5-7b"}})
    assert spec.model.num_attention_heads == 28 and spec.model.num_key_value_heads == 4
    assert tensor_parallel_splits_heads(spec, np.array([2, 4, 7, 8])).tolist() == [True, True, False, False]


@pytest.mark.django_db
def test_mixtral_serving_ranks_no_tp_3_group(bundled_catalog):
    # rankpp (aud49k item 1): a 3-GPU instance now serves as TP 1 x PP 3 (vLLM's guide), never TP 3 of 32 heads
    rows = ranked(MIXTRAL_INT8, 10)
    plans = [
        (row["gpus_per_instance"], row["plan"]["tensor_parallel"], row["plan"]["pipeline_parallel"])
        for row in rows
    ]
    assert rows and all(tp != 3 for _, tp, _ in plans), plans
    assert all((tp, pp) == (1, 3) for gpus, tp, pp in plans if gpus == 3), plans


@pytest.mark.django_db
def test_a_consumer_serving_split_ranks_below_the_first_row_that_is_not_one(bundled_catalog):
    """aud49r: row 1 was lium RTX3090_4x (TP 4 over GeForce cards), flagged "prefer a data-center card that holds
    the model on fewer GPUs" and still first. The split is now a doubt, like a tight fit: the first row is not one,
    and the flagged rows keep their warning and say why they rank lower."""
    rows = ranked(MIXTRAL_INT8, 6)
    first = rows[0]
    assert not (first["gpus_per_instance"] > 1 and first["gpu"].startswith("rtx-30")), first["instance_type"]
    splits = [row for row in rows if any("production serving split" in w for w in row["warnings"])]
    assert all(
        "a serving replica split over consumer cards: ranked below the first row that is not one"
        in row["reasons"]
        for row in splits
    )


def test_training_never_replicates_kv_heads():
    # aud49k: Megatron-Core requires num_query_groups % tp == 0 (it never copies KV heads), so a training TP 8 of
    # an 8-KV-head model splits, TP 16 does not; serving (vLLM) replicates them at TP 16.
    training = parse_workload_spec(
        {"task": "lora", "model": {"preset": "mixtral-8x7b"}, "training_tokens": 1e8}
    )
    serving = parse_workload_spec(MIXTRAL_INT8)
    assert tensor_parallel_splits_heads(training, np.array([8, 16])).tolist() == [True, False]
    assert tensor_parallel_splits_heads(serving, np.array([8, 16])).tolist() == [True, True]
