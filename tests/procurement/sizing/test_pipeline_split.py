"""Uneven pipeline splits (procurement/sizing/pipeline_split.py): validation naming the field, the stage
layout, and the heaviest stage's memory and the slowest stage's pace, checked by hand.

Sources: Megatron-LM's --account-for-embedding-in-pipeline-split / --account-for-loss-in-pipeline-split and
--decoder-first/last-pipeline-num-layers (the Llama 3.1 405B recipe of Megatron-Bridge sets the first two);
Llama 3 paper (arXiv:2407.21783 sec. 3.3.2): one transformer layer off the first and the last stage, "the
first model chunk on the first stage has only the embedding", bubble (PP - 1) / (V x M). Megatron's
interleaved warm-up: 2 (p - r - 1) + (v - 1) p chunk forwards on rank r, capped by the step's m x v
(megatron/core/pipeline_parallel/schedules.py). Llama-2-7B: 32 layers, hidden 4096, vocabulary 32,000,
untied, 6,738,415,616 parameters.
"""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from procurement.sizing import WorkloadSpecError, parse_workload_spec, training_throughput
from procurement.sizing.pipeline_split import (
    in_flight_micro_batches,
    stage_split,
)
from tests.procurement.sizing.helpers import memory, spec

LLAMA2_PARAMS = 6_738_415_616
# blocks: total - 2 vocab tables (32,000 x 4,096) - 65 norms of 4,096, over 32 layers
LLAMA2_BLOCK = (LLAMA2_PARAMS - 2 * 32000 * 4096 - 65 * 4096) / 32  # 202,375,168
LLAMA2_TABLE = 32000 * 4096


def _pretrain(parallelism, **fields):
    fields = {"gradient_checkpointing": "selective", "gradient_accumulation_steps": 8} | fields
    return spec(task="pretrain", training_tokens=1e9, parallelism=parallelism, **fields)


def _errors(parallelism, **fields) -> dict[str, str]:
    with pytest.raises(WorkloadSpecError) as raised:
        _pretrain(parallelism, **fields)
    return {error.path: error.message for error in raised.value.errors}


PP4 = {"gpus": 4, "pipeline_parallel": 4}


@pytest.mark.parametrize(
    ("parallelism", "path", "words"),
    [
        ({"gpus": 4, "account_for_loss": True}, "parallelism.account_for_loss", "pipeline_parallel > 1"),
        # 32 + 1 = 33 slots over 4 stages
        (PP4 | {"account_for_embedding": True}, "parallelism.account_for_embedding", "(32 + 1 = 33)"),
        (PP4 | {"account_for_loss": "yes"}, "parallelism.account_for_loss", "true or false"),
        (
            PP4 | {"account_for_embedding": True, "pipeline_layers_last": 7},
            "parallelism.account_for_embedding",
            "not both",
        ),
        # 32 - 7 = 25 layers over 3 stages
        (PP4 | {"pipeline_layers_first": 7}, "parallelism.pipeline_layers_first", "remaining 25"),
        # 2 chunks a stage: 7 layers cannot be 2 equal chunks
        (
            PP4 | {"virtual_pipeline": 2, "pipeline_layers_last": 7, "pipeline_layers_first": 7},
            "parallelism.pipeline_layers_first",
            "multiple of virtual_pipeline (2)",
        ),
        (PP4 | {"pipeline_layers_last": 0}, "parallelism.pipeline_layers_last", ">= 1"),
        # two stages, both stated: they must hold all 32 layers
        (
            {"gpus": 2, "pipeline_parallel": 2, "pipeline_layers_first": 10, "pipeline_layers_last": 20},
            "parallelism.pipeline_layers_first",
            "remaining 2",
        ),
    ],
)
def test_a_bad_split_is_refused_naming_its_field(parallelism, path, words):
    errors = _errors(parallelism)
    assert path in errors and words in errors[path], errors


def test_a_split_is_a_training_field():
    with pytest.raises(WorkloadSpecError) as raised:
        spec(task="inference", parallelism={"gpus": 2, "pipeline_parallel": 2, "pipeline_layers_first": 15})
    assert "parallelism.pipeline_parallel" in {error.path for error in raised.value.errors}


def test_the_layouts_of_nvidias_and_metas_405b_plans():
    # Megatron-Bridge 25.11 Llama 3.1 405B: 126 + 2 = 128 slots over PP 8 x VP 8, 2 a chunk, 16 a stage
    nvidia = parse_workload_spec(
        {
            "task": "pretrain",
            "model": {"preset": "llama-3.1-405b"},
            "seq_len": 8192,
            "parallelism": {
                "gpus": 1024,
                "tensor_parallel": 8,
                "pipeline_parallel": 8,
                "context_parallel": 2,
                "virtual_pipeline": 8,
                "account_for_embedding": True,
                "account_for_loss": True,
            },
        }
    )
    assert stage_split(nvidia.parallelism, 126).layers == (15, 16, 16, 16, 16, 16, 16, 15)
    # Meta: PP 16, one layer off the first and last stages: 7 + 14 x 8 + 7 = 126
    meta = parse_workload_spec(
        {
            "task": "pretrain",
            "model": {"preset": "llama-3.1-405b"},
            "parallelism": {
                "gpus": 16384,
                "tensor_parallel": 8,
                "pipeline_parallel": 16,
                "pipeline_layers_first": 7,
                "pipeline_layers_last": 7,
            },
        }
    )
    assert stage_split(meta.parallelism, 126).layers == (7,) + (8,) * 14 + (7,)


@pytest.mark.parametrize(
    ("stage", "stages", "chunks", "micro_batches", "expected"),
    [
        (0, 4, 1, 8, 4),  # 1F1B: rank 0 runs p forwards before its first backward
        (1, 4, 1, 8, 3),
        (0, 4, 1, 2, 2),  # no more than the step's micro-batches
        (0, 4, 2, 8, 11 / 2),  # 2 x 3 + 1 x 4 + 1 = 11 chunk forwards = 4 x (1 + 3 / 8)
        (0, 4, 2, 4, 4),  # m = p: every forward first, m x v = 8 chunks = 4 stages' worth
        (3, 4, 2, 8, 5 / 2),  # last rank: 0 + 4 + 1 = 5 chunks
    ],
)
def test_micro_batches_in_flight_follow_megatrons_warm_up(stage, stages, chunks, micro_batches, expected):
    assert in_flight_micro_batches(stage, stages, chunks, micro_batches) == pytest.approx(expected)


def test_the_heaviest_stage_sets_the_memory():
    even = memory(_pretrain(PP4), 4)
    uneven = memory(_pretrain(PP4 | {"pipeline_layers_first": 6, "pipeline_layers_last": 6}), 4)
    # stages 6, 10, 10, 6 layers, 4, 3, 2, 1 micro-batches in flight: 24, 30, 20, 6 layer x micro-batches;
    # the even split's first stage keeps 8 x 4 = 32 (the last stage's logits are smaller than either)
    assert uneven["activations_gib"] / even["activations_gib"] == pytest.approx(30 / 32, rel=1e-9)
    # the state of the heaviest stage: 10 blocks (the first: 6 blocks + the embedding, less) over 1 / 4
    share = 10 * LLAMA2_BLOCK / LLAMA2_PARAMS
    assert uneven["weights_gib"] / even["weights_gib"] == pytest.approx(share * 4, rel=1e-9)
    assert uneven["optimizer_states_gib"] / even["optimizer_states_gib"] == pytest.approx(share * 4, rel=1e-9)


def test_every_micro_batch_moves_at_the_slowest_stages_pace():
    rows = {"peak_tflops": 989.5, "interconnect_gbps": 360.0, "mfu": 0.4, "gpu_counts": None}
    even = training_throughput(_pretrain(PP4), **rows)
    uneven = training_throughput(
        _pretrain(PP4 | {"pipeline_layers_first": 6, "pipeline_layers_last": 6}), **rows
    )
    # work: 6, 10, 10 blocks and 6 blocks + the output head; the slowest (10 blocks) over the average
    average = (32 * LLAMA2_BLOCK + LLAMA2_TABLE) / 4
    factor = 10 * LLAMA2_BLOCK / average  # 1.2252
    assert np.asarray(uneven["compute_seconds"]).item() / np.asarray(even["compute_seconds"]).item() == (
        pytest.approx(factor, rel=1e-9)
    )
    assert np.asarray(uneven["pipeline_bubble"]).item() == pytest.approx(3 / 8)  # (p - 1) / m as before


def test_metas_bubble_with_eight_chunks_is_15_over_128():
    # Llama 3 405B at 8K: 16M tokens / 8,192 / DP 128 = 16 micro-batches; 126 + 2 slots over PP 16 x V 8
    meta = parse_workload_spec(
        {
            "task": "pretrain",
            "model": {"preset": "llama-3.1-405b"},
            "seq_len": 8192,
            "gradient_accumulation_steps": 16,
            "parallelism": {
                "gpus": 16384,
                "tensor_parallel": 8,
                "pipeline_parallel": 16,
                "virtual_pipeline": 8,
                "account_for_embedding": True,
                "account_for_loss": True,
            },
        }
    )
    assert stage_split(meta.parallelism, 126).layers == (7,) + (8,) * 14 + (7,)
    row = training_throughput(meta, peak_tflops=989.5, interconnect_gbps=360.0, mfu=0.4, gpu_counts=None)
    assert np.asarray(row["pipeline_bubble"]).item() == pytest.approx(15 / 128)


@given(
    first=st.integers(1, 30),
    last=st.integers(1, 30),
    stages=st.integers(2, 8),
    micro_batches=st.integers(1, 64),
)
def test_a_stated_split_places_every_layer_and_never_lightens_the_slowest_stage(
    first, last, stages, micro_batches
):
    parallelism = {
        "gpus": stages,
        "pipeline_parallel": stages,
        "pipeline_layers_first": first,
        "pipeline_layers_last": last,
    }
    try:
        workload = _pretrain(parallelism, gradient_accumulation_steps=micro_batches)
    except WorkloadSpecError:
        return
    split = stage_split(workload.parallelism, 32)
    assert sum(split.layers) == 32 and len(split.layers) == stages
    rows = {"peak_tflops": 989.5, "interconnect_gbps": 360.0, "mfu": 0.4, "gpu_counts": None}
    even = parse_workload_spec(
        {
            "task": "pretrain",
            "model": {"preset": "llama-2-7b"},
            "training_tokens": 1e9,
            "gradient_accumulation_steps": micro_batches,
            "gradient_checkpointing": "selective",
            "parallelism": {"gpus": stages, "pipeline_parallel": stages},
        }
    )
    # the slowest stage is never quicker than the average stage
    uneven_s = np.asarray(training_throughput(workload, **rows)["compute_seconds"]).item()
    even_s = np.asarray(training_throughput(even, **rows)["compute_seconds"]).item()
    assert uneven_s >= even_s * (1 - 1e-12)
