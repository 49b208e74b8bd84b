"""A stated expert tensor parallel (parallelism.expert_tensor_parallel, Megatron-Core's
--expert-tensor-parallel-size; moeb26): validation, layout, memory and all-to-alls against hand computations.

Sources: NVIDIA/Megatron-LM megatron/core/parallel_state.py @c5ff22b7f11822e0a36526b0434708d99c8206b0,
initialize_model_parallel (expert grid order "tp-cp-ep-dp-pp" with tp = expert TP; world_size a multiple of
expert TP x EP x PP); NVIDIA-NeMo/Megatron-Bridge @fa0315ae2684693a666be9d247adf9baf1e30028
scripts/performance/configs/deepseek/deepseek_v3_llm_pretrain.yaml (h100 num_gpus_1024: tp 2, pp 8, vp 4,
ep 64, etp 1) and scripts/performance/run_script.py (DeepSeek-V3 on h100: enable_deepep, i.e. the flex
dispatcher with DeepEP; overlap_moe_expert_parallel_comm True; recompute_modules ["mla_up_proj", "mlp"]).
Mixtral-8x7B: 32 layers, hidden 4096, 8 experts of 3 x 4096 x 14336, top-2, 46,702,792,704 parameters.
[MB2509] Megatron-Bridge @067f987df03b8355b03192d88d70f1709fedf51a docs/performance-summary-archive.md, 25.09,
DGX-H100: "DeepSeekV3 (dropless) | 1024 | 8192 | 1 | 4096 | 0 | 2 | 8 | 1 | 4 | 64 | 128 | 1297".
"""

import pytest

from procurement.sizing import WorkloadSpecError, load_bundled_gpus, size_workload
from procurement.sizing.expert_layout import expert_rank_stride, routed_expert_divisor, spans_tensor_parallel
from tests.procurement.sizing.helpers import memory, spec
from tests.procurement.sizing.test_expert_layout import (
    FABRIC,
    MIXTRAL_PARAMS,
    MIXTRAL_ROUTED,
    _pretrain,
    _train,
)

H100 = next(gpu for gpu in load_bundled_gpus() if gpu.slug == "h100-sxm5-80gb")


def _errors(parallelism) -> dict:
    with pytest.raises(WorkloadSpecError) as raised:
        _pretrain(parallelism)
    return {error.path: error.message for error in raised.value.errors}


def test_a_stated_1_spans_the_tensor_parallel_ranks_even_where_ep_fits_the_data_ranks():
    # TP 2 on 16 GPUs: 8 data-parallel ranks, EP 8 fits them (unstated: expert TP 2, stride 2); stated 1: the
    # EP group is 8 consecutive ranks and each GPU keeps 8 / 8 = 1 whole expert
    assert not spans_tensor_parallel(16, 2, 1, 8)
    assert spans_tensor_parallel(16, 2, 1, 8, 1)
    assert expert_rank_stride(16, 2, 1, 1, 8, 1) == 1
    assert expert_rank_stride(16, 2, 1, 1, 8) == 2
    assert (1 / 2) / routed_expert_divisor(16, 2, 1, 8, 1) == pytest.approx(1 / 8)
    assert (1 / 2) / routed_expert_divisor(16, 2, 1, 8, 2) == pytest.approx(1 / 16)


def test_a_stated_tp_is_megatrons_default():
    assert not spans_tensor_parallel(16, 2, 1, 8, 2)
    # stated 1 without tensor parallelism changes nothing
    assert not spans_tensor_parallel(16, 1, 1, 8, 1)


def test_it_keeps_whole_experts_on_each_gpu_with_expert_tp_1():
    # bf16, TP 2, EP 4 on 8 GPUs: the dense part split over the TP pair, 8 / 4 = 2 whole experts a GPU:
    # (dense / 2 + routed / 4) x 2 B, against (dense + routed / 4) / 2 x 2 B under expert TP 2
    dense = MIXTRAL_PARAMS - MIXTRAL_ROUTED
    whole = memory(
        _pretrain({"gpus": 8, "tensor_parallel": 2, "expert_parallel": 4, "expert_tensor_parallel": 1})
    )
    assert whole["weights_gib"] * 2**30 == pytest.approx((dense / 2 + MIXTRAL_ROUTED / 4) * 2, rel=1e-9)
    split = memory(_pretrain({"gpus": 8, "tensor_parallel": 2, "expert_parallel": 4}))
    assert split["weights_gib"] * 2**30 == pytest.approx((dense + MIXTRAL_ROUTED / 4) / 2 * 2, rel=1e-9)


def test_expert_tp_1_puts_the_ep_group_on_consecutive_ranks_for_its_all_to_alls():
    # Mixtral, 16 GPUs in nodes of 8, TP 2, EP 8, 2,048-token micro-batches (1,024 a rank's sequence shard):
    # expert TP 2 strides the group over 2 nodes (3 of 7 peers in the node), expert TP 1 keeps it in one
    workload = _pretrain(
        {"gpus": 16, "tensor_parallel": 2, "expert_parallel": 8, "expert_tensor_parallel": 1}
    )
    rows = _train(workload, gpu_counts=16, gpus_per_node=8, fabric_gbps=FABRIC)
    assert rows["expert_parallel_on_node"] and not rows["expert_parallel_on_fabric"]
    default = _train(
        _pretrain({"gpus": 16, "tensor_parallel": 2, "expert_parallel": 8}),
        gpu_counts=16,
        gpus_per_node=8,
        fabric_gbps=FABRIC,
    )
    assert default["expert_parallel_on_fabric"]
    assert rows["expert_parallel_bytes_per_step"] == pytest.approx(default["expert_parallel_bytes_per_step"])


@pytest.mark.parametrize(
    ("parallelism", "needle"),
    [
        (
            {"gpus": 16, "tensor_parallel": 2, "expert_parallel": 8, "expert_tensor_parallel": 4},
            "must be 1 or",
        ),
        ({"gpus": 16, "tensor_parallel": 2, "expert_tensor_parallel": 1}, "expert_parallel > 1"),
        # expert TP 2 x EP 8 = 16 does not divide 8 GPUs (EP 8 fits only across the TP pairs)
        ({"gpus": 8, "tensor_parallel": 2, "expert_parallel": 8, "expert_tensor_parallel": 2}, "must divide"),
    ],
)
def test_it_refuses_what_megatron_refuses(parallelism, needle):
    assert needle in _errors(parallelism)["parallelism.expert_tensor_parallel"]


def deepseek_v3_h100_recipe():
    """NVIDIA's DeepSeek-V3 H100 plan as its recipe states it: TP 2, PP 8, VP 4, EP 64, expert TP 1, DeepEP,
    1F1B A2A overlap, recompute_modules mla_up_proj and mlp (the 3 dense layers' MLP); GBS 8,192 over 64
    data-parallel ranks = 128 micro-batches of one 4,096-token sequence."""
    return spec(
        task="pretrain",
        model={"preset": "deepseek-v3"},
        precision="fp8",
        seq_len=4096,
        gradient_checkpointing="selective",
        recompute_modules=["mla_up_proj", "mlp"],
        gradient_accumulation_steps=128,
        training_tokens=1e10,
        parallelism={
            "gpus": 1024,
            "zero_stage": 1,
            "tensor_parallel": 2,
            "pipeline_parallel": 8,
            "virtual_pipeline": 4,
            "expert_parallel": 64,
            "expert_tensor_parallel": 1,
            "expert_dispatch": "deepep",
            "expert_overlap": "partial",
        },
    )


def test_deepseek_v3_h100_recipe_is_statable_and_fits():
    """[MB2509] ran it on 80 GB H100s; the product: 48.6 GiB a GPU (65.9 GiB as the outside case states it,
    without the recomputation and expert TP 1)."""
    workload = deepseek_v3_h100_recipe()
    assert workload.parallelism.expert_tensor_parallel == 1
    assert expert_rank_stride(1024, 2, 8, 1, 64, 1) == 1
    assert _candidate(workload)["verdict"] in {"fits", "tight"}


def _candidate(workload):
    report = size_workload(workload, [H100])
    return next(c for c in report["candidates"] if c["gpus"] == workload.parallelism.gpus)


# Was a strict xfail: 1,549 (+19.4%; the partial A2A overlap hid every steady-phase all-to-all at no cost). Now
# 1,478 (+13.9%) (moeb26: a hidden DeepEP all-to-all still takes its 20 SMs of 132 from the compute it runs
# beside, assumptions.DEEPEP_OVERLAP_SM_SHARE, from DeepSeek-V3 sec. 3.2.2 and Megatron-Core's default). Without
# the overlap 1,192 (-8.1%); as the outside case states the run (none of the recipe's settings) 804.
def test_deepseek_v3_h100_recipe_within_15_percent():
    row = _candidate(deepseek_v3_h100_recipe())
    assert row["throughput"]["training_tokens_per_second"] / row["gpus"] == pytest.approx(1297, rel=0.15)
