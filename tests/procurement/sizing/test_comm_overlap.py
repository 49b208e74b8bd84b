"""Model-parallel traffic under computation: the context-parallel K/V ring under its attention steps
(Transformer Engine's ring attention) and, with parallelism.tp_comm_overlap, the tensor-parallel collectives
under the linear layers' GEMMs (Megatron-Core --tp-comm-overlap), against hand computations.

Llama-2-7B: 6,738,415,616 parameters, 32 layers, hidden 4096 (32 heads of 128, no GQA), vocabulary 32,000.
At 8,192 tokens a trained token costs 6 x (P7 - 32,000 x 4,096) = 39,644,061,696 FLOPs of weights (moe42: the
input embedding is a row lookup, no FLOPs) plus causal attention 3 x 4 x 32 layers x 4,096 (half the sequence) x
4,096 = 6,442,450,944 (14.0%); the output head is 6 x 32,000 x 4,096 = 786,432,000 of the weights' FLOPs, the block
linears the rest.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from procurement.sizing import WorkloadSpecError, training_throughput
from procurement.sizing.throughput import training_flops_shares
from tests.procurement.sizing.helpers import spec

NVLINK = 450 * 0.8
FABRIC = 400 / 8 * 0.8
P7 = 6_738_415_616
ATTENTION = 3 * 4 * 32 * 4096 * 4096
HEAD = 6 * 32_000 * 4096
TOTAL = 6 * (P7 - 32_000 * 4096) + ATTENTION


def _pretrain(parallelism, **fields):
    return spec(task="pretrain", training_tokens=1e9, seq_len=8192, parallelism=parallelism, **fields)


def _train(workload, **rows):
    defaults = {"peak_tflops": 989.5, "interconnect_gbps": NVLINK, "mfu": 0.4, "gpus_per_node": 8}
    defaults["fabric_gbps"] = FABRIC
    return {k: np.asarray(v).item() for k, v in training_throughput(workload, **(defaults | rows)).items()}


def test_it_splits_a_token_s_flops_into_linears_and_attention():
    linears, attention = training_flops_shares(_pretrain({"gpus": 1}))
    assert attention == pytest.approx(ATTENTION / TOTAL, rel=1e-12)
    assert linears == pytest.approx((TOTAL - ATTENTION - HEAD) / TOTAL, rel=1e-12)


def test_the_kv_ring_hides_under_cp_minus_one_of_cp_attention_steps():
    # CP 4 on 4 GPUs of one node: 3 passes x 3 hops x (2,048 tokens x 2 x 4,096 x 2 B) x 32 layers over NVLink
    rows = _train(_pretrain({"gpus": 4, "context_parallel": 4}), gpu_counts=4)
    ring = 3 * 3 * (2048 * 2 * 4096 * 2) * 32 / (NVLINK * 1e9)  # 26.8 ms
    compute = 8192 * TOTAL / (4 * 989.5e12 * 0.4)  # 238.5 ms, no bubble
    hidden = compute * ATTENTION / TOTAL * 3 / 4  # 25.0 ms of attention steps that send
    assert rows["context_parallel_seconds"] == pytest.approx(ring, rel=1e-12)
    assert rows["context_parallel_exposed_seconds"] == pytest.approx(ring - hidden, rel=1e-9)
    assert rows["step_seconds"] == pytest.approx(compute + ring - hidden, rel=1e-9)
    # over the fabric (2 GPUs a node: tp x cp = 4 spans two) the ring outlasts the attention by far
    slow = _train(_pretrain({"gpus": 4, "context_parallel": 4}), gpu_counts=4, gpus_per_node=2)
    assert slow["context_parallel_exposed_seconds"] == pytest.approx(
        ring * NVLINK / FABRIC - hidden, rel=1e-9
    )


def test_tensor_parallel_traffic_is_exposed_unless_tp_comm_overlap_is_stated():
    # TP 8 on one node: 4 all-reduces a layer of 8,192 x 4,096 x 2 B, 2 x 7/8 of each over NVLink, + 20 us
    plain = _train(_pretrain({"gpus": 8, "tensor_parallel": 8}), gpu_counts=8)
    tp = 4 * 32 * (2 * 7 / 8 * 8192 * 4096 * 2 / (NVLINK * 1e9) + 20e-6)
    assert plain["tensor_parallel_seconds"] == pytest.approx(tp, rel=1e-12)
    assert plain["tensor_parallel_exposed_seconds"] == plain["tensor_parallel_seconds"]
    overlap = _train(_pretrain({"gpus": 8, "tensor_parallel": 8, "tp_comm_overlap": True}), gpu_counts=8)
    # 44.3 ms of traffic under 103 ms of the linears' GEMMs: only the last chunk of 2 of the 8 collectives
    assert overlap["tensor_parallel_seconds"] == pytest.approx(tp, rel=1e-12)
    assert overlap["tensor_parallel_exposed_seconds"] == pytest.approx(tp * 0.25 / 8, rel=1e-9)
    assert overlap["step_seconds"] == pytest.approx(plain["step_seconds"] - tp + tp * 0.25 / 8, rel=1e-9)


def test_tensor_parallel_traffic_longer_than_the_gemms_stays_on_the_critical_path():
    # the same TP 8 over PCIe-class 25.6 GB/s: 0.59 s of traffic against the linears' 0.10 s
    workload = _pretrain({"gpus": 8, "tensor_parallel": 8, "tp_comm_overlap": True})
    rows = _train(workload, gpu_counts=8, interconnect_gbps=32 * 0.8)
    tp = rows["tensor_parallel_seconds"]
    linears = 8192 * (TOTAL - ATTENTION - HEAD) / (8 * 989.5e12 * 0.4)
    tail = tp * 0.25 / 8
    assert rows["tensor_parallel_exposed_seconds"] == pytest.approx(tail + tp - tail - linears, rel=1e-9)


@settings(max_examples=30)
@given(
    tp=st.sampled_from([2, 4, 8]),
    cp=st.sampled_from([1, 2, 4]),
    per_node=st.sampled_from([2, 8]),
    accumulation=st.integers(1, 16),
    comm=st.sampled_from(["p2p", "pytorch"]),
)
def test_overlap_never_lengthens_a_step_nor_hides_more_than_the_traffic(tp, cp, per_node, accumulation, comm):
    base = {"gpus": tp * cp, "tensor_parallel": tp, "context_parallel": cp}
    base |= {"context_parallel_comm": comm} if cp > 1 else {}
    fields = {"gradient_accumulation_steps": accumulation}
    rows = {"gpu_counts": tp * cp, "gpus_per_node": per_node}
    plain = _train(_pretrain(base, **fields), **rows)
    overlap = _train(_pretrain(base | {"tp_comm_overlap": True}, **fields), **rows)
    assert overlap["step_seconds"] <= plain["step_seconds"] * (1 + 1e-12)
    for row in (plain, overlap):
        assert 0 <= row["tensor_parallel_exposed_seconds"] <= row["tensor_parallel_seconds"] * (1 + 1e-12)
        assert 0 <= row["context_parallel_exposed_seconds"] <= row["context_parallel_seconds"] * (1 + 1e-12)


def test_tp_comm_overlap_is_a_training_option():
    assert _pretrain({"gpus": 8, "tensor_parallel": 8}).parallelism.tp_comm_overlap is False
    with pytest.raises(WorkloadSpecError) as raised:
        spec(task="inference", parallelism={"gpus": 2, "tensor_parallel": 2, "tp_comm_overlap": True})
    assert [error.path for error in raised.value.errors] == ["parallelism.tp_comm_overlap"]
    with pytest.raises(WorkloadSpecError):
        _pretrain({"gpus": 2, "tensor_parallel": 2, "tp_comm_overlap": "yes"})


def test_an_all_gather_before_attention_hides_nothing():
    # the same CP 4 bytes, gathered before attention (Megatron-Core cp_comm_type all_gather; Meta's Llama 3)
    workload = _pretrain({"gpus": 4, "context_parallel": 4, "context_parallel_comm": "all_gather"})
    rows = _train(workload, gpu_counts=4)
    ring = 3 * 3 * (2048 * 2 * 4096 * 2) * 32 / (NVLINK * 1e9)
    assert rows["context_parallel_seconds"] == pytest.approx(ring, rel=1e-12)
    assert rows["context_parallel_exposed_seconds"] == rows["context_parallel_seconds"]
    with pytest.raises(WorkloadSpecError) as raised:
        _pretrain({"gpus": 4, "context_parallel_comm": "all_gather"})
    assert [error.path for error in raised.value.errors] == ["parallelism.context_parallel_comm"]


def test_pytorch_s_ring_gathers_under_its_first_step_and_leaves_the_last_gradient_pass_exposed():
    # cp26. CP 4 on 4 GPUs of one node, PyTorch's ring (torchtitan): per layer a GPU sends K/V's 3 chunks in
    # the forward and in backward (2 x 3) and dK/dV 4 times in fp32 (4 x 2 chunks): 14 chunks of 2,048 tokens
    # x 2 x 4,096 x 2 B (Llama-2-7B has no GQA: the repeated K/V are its own), 32 layers.
    rows = _train(
        _pretrain({"gpus": 4, "context_parallel": 4, "context_parallel_comm": "pytorch"}), gpu_counts=4
    )
    chunk = 2048 * 2 * 4096 * 2 * 32 / (NVLINK * 1e9)  # 2.98 ms a step
    assert rows["context_parallel_seconds"] == pytest.approx(14 * chunk, rel=1e-12)
    attention = 8192 * ATTENTION / (4 * 989.5e12 * 0.4)  # 33.3 ms: a forward and a backward of 2 forwards
    forward_step, backward_step = attention / 3 / 4, 2 * attention / 3 / 4  # 2.78 and 5.55 ms
    gathers = (3 * chunk - forward_step) + (3 * chunk - backward_step)  # 6.17 + 3.40 ms past step 0
    gradients = 3 * (2 * chunk - backward_step) + 2 * chunk  # 3 x 0.41 ms, then the last 5.96 ms whole
    assert rows["context_parallel_exposed_seconds"] == pytest.approx(gathers + gradients, rel=1e-9)


def test_pytorch_s_ring_carries_the_query_heads_k_v_and_fp32_gradients():
    # Llama 3.1 8B, 32 query heads on 8 KV heads: torchtitan repeats K/V to 32 heads before SDPA, so a chunk
    # is 4x Transformer Engine's; CP 2 moves 2 + 2 x 2 = 6 chunks a layer against TE's 3 (x 1 hop): 8x.
    def ring(comm):
        workload = spec(
            task="pretrain",
            model={"preset": "llama-3.1-8b"},
            training_tokens=1e9,
            seq_len=8192,
            parallelism={"gpus": 2, "context_parallel": 2, "context_parallel_comm": comm},
        )
        return _train(workload, gpu_counts=2)["context_parallel_seconds"]

    assert ring("pytorch") == pytest.approx(8 * ring("p2p"), rel=1e-12)
    assert ring("all_gather") == ring("p2p")
    assert ring("pytorch_compiled") == ring("pytorch")


def test_pytorch_s_ring_traced_by_torch_compile_hides_nothing():
    # cp43: the same ring inside a torch.compile'd block (torchtitan's training.compile) moves the same bytes,
    # but a traced functional collective is waited on where it is issued (_functional_collectives
    # _maybe_wrap_tensor) and Inductor does not reorder for overlap by default: all of it is exposed.
    def rows(comm):
        return _train(
            _pretrain({"gpus": 4, "context_parallel": 4, "context_parallel_comm": comm}), gpu_counts=4
        )

    eager, compiled = rows("pytorch"), rows("pytorch_compiled")
    assert compiled["context_parallel_seconds"] == eager["context_parallel_seconds"]
    assert compiled["context_parallel_exposed_seconds"] == compiled["context_parallel_seconds"]
    assert eager["context_parallel_exposed_seconds"] < eager["context_parallel_seconds"]
