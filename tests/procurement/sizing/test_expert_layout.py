"""Expert parallelism across the tensor-parallel ranks (expert tensor parallel 1; hfp826): validation, memory and
all-to-alls against hand computations.

Source: NVIDIA/Megatron-LM megatron/core/parallel_state.py @c5ff22b7f11822e0a36526b0434708d99c8206b0,
initialize_model_parallel: the expert grid is RankGenerator(tp=expert_tensor_parallel_size,
ep=expert_model_parallel_size, dp=expert_data_parallel_size, pp, cp=1, order "tp-cp-ep-dp-pp") and world_size
must be a multiple of expert TP x EP x PP; with expert TP 1 (NVIDIA's Qwen3 recipes) an EP group is consecutive
ranks, the TP pairs included, and each GPU holds num_experts / ep whole experts.
Mixtral-8x7B: 32 layers, hidden 4096, 8 experts of 3 x 4096 x 14336, top-2, 46,702,792,704 parameters.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from procurement.sizing import WorkloadSpecError, training_throughput
from procurement.sizing.expert_layout import (
    expert_groups_tile,
    expert_rank_stride,
    routed_expert_divisor,
    spans_tensor_parallel,
)
from tests.procurement.sizing.helpers import memory, spec

NVLINK = 450 * 0.8
FABRIC = 400 / 8 * 0.8
MIXTRAL = {"preset": "mixtral-8x7b"}
MIXTRAL_PARAMS = 46_702_792_704
MIXTRAL_ROUTED = 32 * 8 * 3 * 4096 * 14336


def _pretrain(parallelism, **fields):
    return spec(task="pretrain", training_tokens=1e9, model=MIXTRAL, parallelism=parallelism, **fields)


def _train(workload, **rows):
    defaults = {"peak_tflops": 989.5, "interconnect_gbps": NVLINK, "mfu": 0.4}
    return {k: np.asarray(v).item() for k, v in training_throughput(workload, **(defaults | rows)).items()}


def test_it_states_ep_across_the_tensor_parallel_ranks():
    # TP 2 on 8 GPUs: 4 data-parallel ranks; EP 8 divides the stage's 8 ranks, not the 4
    workload = _pretrain({"gpus": 8, "tensor_parallel": 2, "expert_parallel": 8})
    assert workload.parallelism.expert_parallel == 8
    assert spans_tensor_parallel(8, 2, 1, 8)
    assert not spans_tensor_parallel(8, 2, 1, 4)  # EP 4 over the 4 data-parallel ranks, as before


def test_it_refuses_ep_beyond_a_stages_ranks():
    # TP 2 x PP 2 on 8 GPUs: 4 ranks a stage, EP 8 does not fit in them
    with pytest.raises(WorkloadSpecError) as raised:
        _pretrain({"gpus": 8, "tensor_parallel": 2, "pipeline_parallel": 2, "expert_parallel": 8})
    errors = {error.path: error.message for error in raised.value.errors}
    assert "gpus / pipeline_parallel = 4, got 8" in errors["parallelism.expert_parallel"]


def test_it_keeps_whole_experts_on_each_gpu_when_ep_spans_tp():
    # bf16, TP 2, EP 8 on 8 GPUs: the dense 3.4% split over the TP pair, one whole expert of 8 a GPU:
    # (dense / 2 + routed / 8) x 2 B; with EP 4 over the data-parallel ranks the experts split over TP too:
    # (dense + routed / 4) / 2 x 2 B, the same routed share a GPU
    dense = MIXTRAL_PARAMS - MIXTRAL_ROUTED
    spanning = memory(_pretrain({"gpus": 8, "tensor_parallel": 2, "expert_parallel": 8}))
    assert spanning["weights_gib"] * 2**30 == pytest.approx((dense / 2 + MIXTRAL_ROUTED / 8) * 2, rel=1e-9)
    over_dp = memory(_pretrain({"gpus": 8, "tensor_parallel": 2, "expert_parallel": 4}))
    assert over_dp["weights_gib"] == pytest.approx(spanning["weights_gib"], rel=1e-9)


def test_it_lays_the_ep_group_on_consecutive_ranks_for_its_all_to_alls():
    # Mixtral, 8 GPUs in nodes of 4, TP 2, EP 8 spanning the TP pairs, 2,048-token micro-batches: each rank
    # sends its 1,024-token sequence shard x top-2 x 4,096 x 2 B, 4 all-to-alls x 32 layers, 7/8 leaving the
    # GPU; the group is 8 consecutive ranks: 3 of the 7 peers in the node, 4 across (strided over the TP
    # pairs, as EP over data-parallel ranks is laid, only 1 of them would share the node)
    workload = _pretrain({"gpus": 8, "tensor_parallel": 2, "expert_parallel": 8})
    rows = _train(workload, gpu_counts=8, gpus_per_node=4, fabric_gbps=FABRIC)
    volume = 4 * 32 * 1024 * 2 * 4096 * 2 * 7 / 8
    assert rows["expert_parallel_bytes_per_step"] == pytest.approx(volume, rel=1e-12)
    seconds = max(volume * 3 / 7 / (NVLINK * 1e9), volume * 4 / 7 / (FABRIC * 1e9))
    assert rows["expert_parallel_seconds"] == pytest.approx(seconds, rel=1e-12)
    assert rows["expert_parallel_on_node"] and rows["expert_parallel_on_fabric"]


@settings(max_examples=40, deadline=None)
@given(
    tp=st.sampled_from([1, 2, 4, 8]),
    pp=st.sampled_from([1, 2, 4]),
    dp=st.sampled_from([1, 2, 3, 4, 8]),
    ep=st.sampled_from([2, 4, 8, 16, 32]),
)
def test_each_gpu_holds_num_experts_over_ep(tp, pp, dp, ep):
    # a GPU's routed share (1 / tp of the stage over the divisor): whole experts, 1 / ep, when EP spans the
    # TP ranks; 1 / (tp x ep) when EP runs over the data-parallel ranks and each expert is split over tp
    gpus = tp * pp * dp
    if not expert_groups_tile(gpus, pp, ep):
        assert (gpus // pp) % ep
        return
    spans = bool(dp % ep)
    share = (1 / tp) / routed_expert_divisor(gpus, tp, pp, ep)
    assert share == pytest.approx(1 / ep if spans else 1 / (tp * ep))
    assert expert_rank_stride(gpus, tp, pp, 1, ep) == (1 if spans else tp)
