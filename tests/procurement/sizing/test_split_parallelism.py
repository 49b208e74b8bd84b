"""parallelism.virtual_pipeline, context_parallel and expert_parallel: validation, memory and speed against
hand computations.

Sources: the interleaved 1F1B schedule, Narayanan et al. 2021 (arXiv:2104.04473) sec. 2.2.2 (bubble
(p - 1) / (v m)) and Korthikanti et al. 2022 (arXiv:2205.05198) sec. 4.2.3 (first-stage activations
x (1 + (p - 1) / (p v))); context parallelism as Megatron-Core / Transformer Engine run it (seq / cp tokens a
rank, K/V passed around a ring); expert parallelism as Megatron-Core's all-to-all token dispatcher runs it.
Llama-2-7B: 32 layers, hidden 4096, 32 KV heads of 128. Mixtral-8x7B: 32 layers, hidden 4096, 8 KV heads of
128, 8 experts of 3 x 4096 x 14336, top-2, 46,702,792,704 parameters.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from procurement.sizing import WorkloadSpecError, training_throughput
from procurement.sizing.bytes_model import split_notes
from tests.procurement.sizing.helpers import memory, spec

NVLINK = 450 * 0.8
FABRIC = 400 / 8 * 0.8  # 400 Gb/s a GPU at 80% collective efficiency
MIXTRAL = {"preset": "mixtral-8x7b"}
MIXTRAL_PARAMS = 46_702_792_704
MIXTRAL_ROUTED = 32 * 8 * 3 * 4096 * 14336  # 45,097,156,608: 96.6% of the model


def _pretrain(parallelism, **fields):
    return spec(task="pretrain", training_tokens=1e9, parallelism=parallelism, **fields)


def _train(workload, **rows):
    defaults = {"peak_tflops": 989.5, "interconnect_gbps": NVLINK, "mfu": 0.4}
    return {k: np.asarray(v).item() for k, v in training_throughput(workload, **(defaults | rows)).items()}


def _errors(parallelism, **fields) -> dict[str, str]:
    with pytest.raises(WorkloadSpecError) as raised:
        _pretrain(parallelism, **fields)
    return {error.path: error.message for error in raised.value.errors}


# --- validation: each error names its field --------------------------------------------------------------
@pytest.mark.parametrize(
    ("parallelism", "fields", "path", "words"),
    [
        ({"gpus": 8, "virtual_pipeline": 2}, {}, "parallelism.virtual_pipeline", "pipeline_parallel > 1"),
        # 32 layers cannot fill 4 stages x 9 chunks (4 x 3 = 12 chunks of 2-3 layers parse: PyTorch's pipelining
        # runs them, and the stages keep the balanced average)
        (
            {"gpus": 8, "pipeline_parallel": 4, "virtual_pipeline": 9},
            {},
            "parallelism.virtual_pipeline",
            "at most model.num_layers (32)",
        ),
        # 2 x 4 chunks of a 4,100-token sequence
        ({"gpus": 8, "context_parallel": 4}, {"seq_len": 4100}, "parallelism.context_parallel", "seq_len"),
        # 12 GPUs do not hold whole TP 2 x CP 4 groups
        (
            {"gpus": 12, "tensor_parallel": 2, "context_parallel": 4},
            {},
            "parallelism.gpus",
            "tensor_parallel x pipeline_parallel x context_parallel",
        ),
        ({"gpus": 8, "expert_parallel": 2}, {}, "parallelism.expert_parallel", "mixture-of-experts"),
        ({"gpus": 0.5}, {}, "parallelism.gpus", ">= 1"),
        ({"gpus": 8, "context_parallel": 0}, {}, "parallelism.context_parallel", ">= 1"),
        ({"gpus": 8, "virtual_pipeline": 1.5}, {}, "parallelism.virtual_pipeline", "whole number"),
        ({"gpus": 8, "virtual_pipeline": 129}, {}, "parallelism.virtual_pipeline", "<= 128"),
        ({"gpus": 8, "virtual_pipeline_size": 2}, {}, "parallelism.virtual_pipeline_size", "unknown field"),
    ],
)
def test_a_bad_split_is_refused_naming_its_field(parallelism, fields, path, words):
    errors = _errors(parallelism, **fields)
    assert path in errors and words in errors[path], errors


def test_expert_parallel_must_divide_the_experts_and_each_stages_ranks():
    # Mixtral has 8 experts: EP 16 cannot split them; EP 4 on 8 GPUs at PP 4 leaves 2 ranks a stage
    errors = _errors({"gpus": 16, "expert_parallel": 16}, model=MIXTRAL)
    assert "must divide model.num_experts (8)" in errors["parallelism.expert_parallel"]
    errors = _errors({"gpus": 8, "pipeline_parallel": 4, "expert_parallel": 4}, model=MIXTRAL)
    assert "= 2, got 4" in errors["parallelism.expert_parallel"]
    assert _pretrain({"gpus": 16, "pipeline_parallel": 2, "expert_parallel": 8}, model=MIXTRAL)


def test_the_split_degrees_are_training_degrees():
    with pytest.raises(WorkloadSpecError) as raised:
        spec(task="inference", parallelism={"gpus": 2, "context_parallel": 2})
    assert [e.path for e in raised.value.errors] == ["parallelism.context_parallel"]


# --- memory ---------------------------------------------------------------------------------------------
def test_context_parallel_divides_the_activations_by_cp():
    # each of the cp ranks keeps seq / cp tokens of every saved tensor (logits too); weights stay whole
    alone = memory(_pretrain({"gpus": 4}, seq_len=8192))
    split = memory(_pretrain({"gpus": 4, "context_parallel": 4}, seq_len=8192))
    assert split["activations_gib"] == pytest.approx(alone["activations_gib"] / 4, rel=1e-12)
    assert split["weights_gib"] == alone["weights_gib"]


def test_interleaving_keeps_more_activations_on_the_first_stage():
    # PP 4 with 8 micro-batches: 4 in flight on the first stage; with 4 chunks a stage Korthikanti's factor
    # is 1 + 3 / 16, on the per-layer term only (the last stage's logits are not on the first stage)
    fields = {"gradient_accumulation_steps": 8, "gradient_checkpointing": "full"}
    plain = memory(_pretrain({"gpus": 4, "pipeline_parallel": 4}, **fields))
    chunks = memory(_pretrain({"gpus": 4, "pipeline_parallel": 4, "virtual_pipeline": 4}, **fields))
    per_token_layer = 2 * 4096 * 2048  # full recomputation keeps each layer's 2h-byte input, 2,048 tokens
    assert (chunks["activations_gib"] - plain["activations_gib"]) * 2**30 == pytest.approx(
        32 * 3 / 16 * per_token_layer, rel=1e-9
    )


def test_expert_parallel_shards_the_routed_experts():
    # Mixtral on 16 GPUs, PP 2, bf16: 46.70e9 x 2 B / 2 = 43.5 GiB a GPU; EP 8 keeps the 3.4% dense part
    # whole and 1 / 8 of the experts: x (1 - 0.9656 + 0.9656 / 8) = 0.155
    share = 1 - MIXTRAL_ROUTED / MIXTRAL_PARAMS + MIXTRAL_ROUTED / MIXTRAL_PARAMS / 8
    alone = memory(_pretrain({"gpus": 16, "pipeline_parallel": 2}, model=MIXTRAL))
    split = memory(_pretrain({"gpus": 16, "pipeline_parallel": 2, "expert_parallel": 8}, model=MIXTRAL))
    assert alone["weights_gib"] == pytest.approx(MIXTRAL_PARAMS * 2 / 2 / 2**30, rel=1e-9)
    for key in ("weights_gib", "gradients_gib", "optimizer_states_gib"):
        assert split[key] == pytest.approx(alone[key] * share, rel=1e-9), key
    # under ZeRO-1 each GPU already holds 1 / 8 of the optimizer state: EP leaves it there
    zero1 = {"gpus": 16, "pipeline_parallel": 2, "zero_stage": 1}
    sharded = memory(_pretrain(zero1 | {"expert_parallel": 8}, model=MIXTRAL))
    assert sharded["optimizer_states_gib"] == pytest.approx(
        memory(_pretrain(zero1, model=MIXTRAL))["optimizer_states_gib"], rel=1e-9
    )


def test_a_count_that_does_not_tile_the_groups_is_no_plan():
    # CP 2 x TP 1 on 3 GPUs, or EP 8 over 12 / 2 = 6 ranks a stage: NaN, as for a TP x PP misfit
    workload = _pretrain({"gpus": 4, "context_parallel": 2})
    assert np.isnan(memory(workload, 3)["total_per_gpu_gib"])
    mixtral = _pretrain({"gpus": 16, "pipeline_parallel": 2, "expert_parallel": 8}, model=MIXTRAL)
    assert np.isnan(memory(mixtral, 12, pipeline_parallel=2)["total_per_gpu_gib"])


# --- speed ----------------------------------------------------------------------------------------------
def test_interleaving_divides_the_bubble_and_multiplies_the_sends():
    # PP 4, 8 micro-batches of 2,048 tokens: bubble 3 / 8 -> 3 / 32 with 4 chunks; each micro-batch sends
    # 2 x 2048 x 4096 x 2 bytes a chunk boundary, 4 times as often
    fields = {"gradient_accumulation_steps": 8}
    rows = {"gpu_counts": 4, "pipeline_parallel": 4}
    plain = _train(_pretrain({"gpus": 4, "pipeline_parallel": 4}, **fields), **rows)
    chunks = _train(_pretrain({"gpus": 4, "pipeline_parallel": 4, "virtual_pipeline": 4}, **fields), **rows)
    assert plain["pipeline_bubble"] == pytest.approx(3 / 8)
    assert chunks["pipeline_bubble"] == pytest.approx(3 / 32)
    assert plain["pipeline_bytes_per_step"] == pytest.approx(2 * 8 * 2048 * 4096 * 2)
    assert chunks["pipeline_bytes_per_step"] == pytest.approx(4 * plain["pipeline_bytes_per_step"])
    assert chunks["compute_seconds"] == pytest.approx(plain["compute_seconds"] * (1 + 3 / 32) / (1 + 3 / 8))
    # the interleaved sends hide under compute (Megatron overlaps them only there): the step is compute
    assert chunks["step_seconds"] == pytest.approx(chunks["compute_seconds"], rel=1e-12)


def test_chunks_that_do_not_divide_the_layers_keep_the_interleaved_bubble():
    # NeMo AutoModel runs DeepSeek-V3's 61 layers on PP 4 x VP 8 (layers_per_stage 2: 32 chunks, some of one
    # layer), which PyTorch's pipelining allows and Megatron-LM only with an uneven split. 32 layers on 4 x 3
    # chunks is the same kind of plan: bubble (4 - 1) / (3 x 8) = 1 / 8, stages at the balanced 8 layers
    fields = {"gradient_accumulation_steps": 8}
    rows = {"gpu_counts": 4, "pipeline_parallel": 4}
    chunks = _train(_pretrain({"gpus": 4, "pipeline_parallel": 4, "virtual_pipeline": 3}, **fields), **rows)
    assert chunks["pipeline_bubble"] == pytest.approx(3 / 24)


def test_context_parallel_passes_kv_around_the_ring():
    # Llama-2-7B at 8k, CP 4 on 4 GPUs of one node: each rank's K and V chunk is 2,048 tokens x 2 x 4,096 x
    # 2 B = 33.6 MB a layer, passed 3 times (forward K/V; backward K/V and their gradients) x (4 - 1) ranks,
    # 32 layers, 2 micro-batches, over NVLink
    workload = _pretrain({"gpus": 4, "context_parallel": 4}, seq_len=8192, gradient_accumulation_steps=2)
    rows = _train(workload, gpu_counts=4, gpus_per_node=8, fabric_gbps=FABRIC)
    volume = 3 * 3 * (2048 * 2 * 4096 * 2) * 32 * 2
    assert rows["context_parallel_bytes_per_step"] == pytest.approx(volume, rel=1e-12)
    assert rows["context_parallel_seconds"] == pytest.approx(volume / (NVLINK * 1e9), rel=1e-12)
    # one replica (dp = 4 / 4) trains 2 x 8,192 tokens a step, the same FLOPs a token as without CP
    assert rows["training_tokens_per_second"] * rows["step_seconds"] == pytest.approx(2 * 8192)


def test_expert_all_to_alls_split_between_the_node_link_and_the_fabric():
    # Mixtral, 16 GPUs in nodes of 4, EP 8, 2,048-token micro-batches, 1 accumulation step: 4 all-to-alls
    # per MoE layer x 32 layers of 2,048 tokens x top-2 x 4,096 x 2 B, 7/8 of it leaving the GPU; 3 of the 7
    # peers in the node (NVLink), 4 across (fabric), both at once
    workload = _pretrain({"gpus": 16, "expert_parallel": 8}, model=MIXTRAL)
    rows = _train(workload, gpu_counts=16, gpus_per_node=4, fabric_gbps=FABRIC)
    volume = 4 * 32 * 2048 * 2 * 4096 * 2 * 7 / 8
    assert rows["expert_parallel_bytes_per_step"] == pytest.approx(volume, rel=1e-12)
    seconds = max(volume * 3 / 7 / (NVLINK * 1e9), volume * 4 / 7 / (FABRIC * 1e9))
    assert rows["expert_parallel_seconds"] == pytest.approx(seconds, rel=1e-12)
    # EP 8 inside each node: everything on NVLink
    inside = _pretrain({"gpus": 16, "expert_parallel": 8}, model=MIXTRAL)
    rows = _train(inside, gpu_counts=16, gpus_per_node=8, fabric_gbps=FABRIC)
    assert rows["expert_parallel_seconds"] == pytest.approx(
        4 * 32 * 2048 * 2 * 4096 * 2 * 7 / 8 / (NVLINK * 1e9), rel=1e-12
    )


def test_expert_gradients_cross_the_fabric_whole_when_ep_fills_the_node():
    # Mixtral on 16 GPUs in nodes of 8, EP 8, ZeRO-1: each GPU holds 1 / 8 of the routed experts,
    # 45,097,156,608 / 8 x 2 B = 11.27 GB of bf16 gradients, all-reduced with the one GPU of the other node
    # that holds the same experts (no reduction inside the node first): 2 x 1 / 2 x 11.27 GB over the fabric.
    # The dense 1,605,636,096 parameters (3.21 GB) ring over all 16: 2 x 7 / 8 of it on NVLink, then
    # 2 x 1 / 2 x 3.21 / 8 GB a GPU over the fabric (the hierarchical ring)
    workload = _pretrain({"gpus": 16, "expert_parallel": 8}, model=MIXTRAL)
    rows = _train(workload, gpu_counts=16, gpus_per_node=8, fabric_gbps=FABRIC)
    experts, dense = MIXTRAL_ROUTED / 8 * 2, (MIXTRAL_PARAMS - MIXTRAL_ROUTED) * 2
    fabric = (2 * 1 / 2 * experts + 2 * 1 / 2 * dense / 8) / (FABRIC * 1e9)
    assert rows["gradient_seconds_fabric"] == pytest.approx(fabric, rel=1e-9)
    assert rows["gradient_seconds_node"] == pytest.approx(2 * 7 / 8 * dense / (NVLINK * 1e9), rel=1e-9)


@settings(max_examples=40)
@given(
    pp=st.sampled_from([2, 4, 8]),
    vp=st.sampled_from([1, 2, 4]),
    accumulation=st.integers(1, 64),
    cp=st.sampled_from([1, 2, 4]),
)
def test_more_chunks_never_slow_the_compute_and_cp_keeps_the_flops(pp, vp, accumulation, cp):
    gpus = pp * cp
    fields = {"gradient_accumulation_steps": accumulation, "seq_len": 4096}
    base = {"gpus": gpus, "pipeline_parallel": pp}
    rows = {"gpu_counts": gpus, "gpus_per_node": 8, "fabric_gbps": FABRIC}
    plain = _train(_pretrain(base | {"context_parallel": cp}, **fields), **rows)
    chunks = _train(_pretrain(base | {"context_parallel": cp, "virtual_pipeline": vp}, **fields), **rows)
    assert chunks["compute_seconds"] <= plain["compute_seconds"] * (1 + 1e-12)
    assert chunks["pipeline_bubble"] == pytest.approx((pp - 1) / (vp * accumulation))
    # the replicas (gpus / (pp x cp) = 1) see accumulation x 4,096 tokens a step, whatever cp
    tokens = plain["training_tokens_per_second"] * plain["step_seconds"]
    assert tokens == pytest.approx(accumulation * 4096)


def test_the_breakdown_says_what_each_split_does():
    # PP 4 x VP 2: the first stage keeps 1 + 3 / 8 = 1.375x; CP 2 of 8,192 tokens; EP 4 of Mixtral's 8
    workload = _pretrain(
        {
            "gpus": 32,
            "pipeline_parallel": 4,
            "virtual_pipeline": 2,
            "context_parallel": 2,
            "expert_parallel": 4,
        },
        model=MIXTRAL,
        seq_len=8192,
    )
    assert split_notes(workload) == [
        "interleaved pipeline, 2 chunks a stage: bubble (p - 1) / (2 m); the first stage keeps 1.375x the "
        "activations",
        "context parallel 2: each GPU keeps 4,096 of the 8,192 tokens",
        "expert parallel 4: each GPU keeps 2 of the 8 routed experts a layer",
    ]
    assert split_notes(_pretrain({"gpus": 8})) == []
