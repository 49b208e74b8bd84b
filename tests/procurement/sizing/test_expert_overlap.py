"""Expert parallelism's all-to-alls: parallelism.expert_overlap and expert_dispatch (moe27).

none (default) keeps them on the critical path as Megatron-Core does unless told (model_parallel_config.py
@02aa3ee4: overlap_moe_expert_parallel_comm = False); partial is its 1F1B A2A overlap (steady phase only);
dualpipe is DeepSeek-V3's schedule, which hides them under computation (arXiv:2412.19437 sec. 3.2.1).
assumptions.EXPERT_OVERLAP states the rule; throughput.exposed_expert_seconds applies it.
expert_dispatch: deepep is DeepSeek's dispatch (sec. 3.2.2): one fabric copy per other node a token's
experts sit on, capped by the model's group-limited routing (DeepSeek-V3: n_group 8, topk_group 4), and
FP8 dispatch under fp8 (sec. 3.3.2); assumptions.EXPERT_DISPATCH.
"""

import dataclasses

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from procurement.sizing import WorkloadSpecError, parse_workload_spec, size_workload
from procurement.sizing.throughput import dispatch_bytes_share, exposed_expert_seconds, node_copy_share
from tests.procurement.sizing.test_moe_published import H100, candidate, megatron


def deepseek_v3(overlap=None, dispatch=None):
    """DeepSeek-V3's own plan (PP 16, EP 64, 2,048 GPUs; tests/procurement/outside case 3's spec)."""
    spec = megatron("deepseek-v3", 2048, 1, 16, ep=64, global_batch=15360, precision="fp8", overlap=overlap)
    if dispatch:
        spec = dataclasses.replace(
            spec, parallelism=dataclasses.replace(spec.parallelism, expert_dispatch=dispatch)
        )
    return spec


def test_the_default_keeps_the_alltoalls_exposed():
    spec = deepseek_v3()
    assert spec.parallelism.expert_overlap == "none"
    throughput = candidate(spec, H100)["throughput"]
    assert throughput["expert_parallel_exposed_seconds"] == throughput["expert_parallel_seconds"] > 0


def test_dualpipe_hides_the_alltoalls_up_to_the_compute():
    # DeepSeek-V3 on 2,048 H100 (engine, moe27): 35.76 s of all-to-alls a step over the 25 GB/s fabric
    # against 18.67 s of compute (bubble included); moe26 (stop 38) adds Hopper FP8's cost per local expert,
    # 58 MoE layers x 4 local experts (256 / EP 64) x 1.1 ms / 4,096 tokens = 62.3 us a token x 30,720
    # tokens a GPU a step (15,360 x 4,096 / 2,048) x the 1 + 15 / 120 bubble = 2.15 s: compute 20.82 s.
    # moebf26: the fixed MoE cost is 2 ms a layer + 0.25 ms a local expert, 3 ms here instead of 6 ms:
    # 58 x 3 ms / 4,096 = 42.5 us a token less, x 30,720 x 1.125 = 1.47 s: compute 19.35 s.
    # hfp826: Hopper FP8's cost is 200 ns a routed token copy instead: 58 layers x top-8 x 200 ns = 92.8 us a
    # token (30.5 us more) x 30,720 x 1.125 = 1.06 s more: compute 20.41 s.
    # moe26b: the size report's H100 fabric is 400 Gb/s a GPU (assumptions.NETWORK_BANDWIDTH_HOPPER, was 200):
    # 35.76 / 2 = 17.88 s of all-to-alls, under the 20.41 s of compute: dualpipe hides them all
    none = candidate(deepseek_v3(), H100)["throughput"]
    dual = candidate(deepseek_v3("dualpipe"), H100)["throughput"]
    assert dual["expert_parallel_seconds"] == pytest.approx(none["expert_parallel_seconds"])
    assert dual["expert_parallel_seconds"] == pytest.approx(35.76 / 2, abs=0.05)
    hidden = dual["expert_parallel_seconds"] - dual["expert_parallel_exposed_seconds"]
    assert none["step_seconds"] - dual["step_seconds"] == pytest.approx(hidden, abs=1e-3)
    assert dual["expert_parallel_exposed_seconds"] == 0.0


def test_dualpipe_hides_all_of_a_smaller_alltoall():
    spec = megatron("qwen3-30b-a3b", 8, 1, 1, ep=8, global_batch=512, precision="fp8", overlap="dualpipe")
    throughput = candidate(spec, H100)["throughput"]
    assert throughput["expert_parallel_seconds"] > 0 == throughput["expert_parallel_exposed_seconds"]


def test_partial_overlap_leaves_the_warm_up_and_cool_down_exposed():
    # no pipeline, 8 micro-batches (512 / (8 x 8)): 1 of 8 keeps its all-to-alls, 7 / 8 hide under compute
    spec = megatron("qwen3-30b-a3b", 8, 1, 1, ep=8, global_batch=64, precision="fp8", overlap="partial")
    assert spec.gradient_accumulation_steps == 8
    exposed = exposed_expert_seconds(spec, np.array(4.0), np.array(100.0), 1.0)
    assert float(exposed) == pytest.approx(4.0 / 8)
    # more all-to-all than the steady compute can cover: the rest shows
    assert float(exposed_expert_seconds(spec, np.array(4.0), np.array(2.0), 1.0)) == pytest.approx(
        4.0 - 7 / 8 * 2.0
    )


@settings(max_examples=40, deadline=None)
@given(
    ep_s=st.floats(min_value=0.0, max_value=100.0),
    compute_s=st.floats(min_value=0.01, max_value=100.0),
    pp=st.sampled_from([1.0, 2.0, 4.0, 16.0]),
)
def test_more_overlap_never_exposes_more(ep_s, compute_s, pp):
    spec = megatron("qwen3-30b-a3b", 8, 1, 1, ep=8, global_batch=512, precision="fp8")
    exposed = [
        float(
            exposed_expert_seconds(
                dataclasses.replace(
                    spec, parallelism=dataclasses.replace(spec.parallelism, expert_overlap=mode)
                ),
                np.array(ep_s),
                np.array(compute_s),
                pp,
            )
        )
        for mode in ("none", "partial", "dualpipe")
    ]
    assert exposed[0] == pytest.approx(ep_s)
    assert ep_s + 1e-9 >= exposed[0] >= exposed[1] >= exposed[2] >= max(0.0, ep_s - compute_s) - 1e-9


def test_bad_overlap_values_name_the_field():
    with pytest.raises(WorkloadSpecError) as error:
        megatron("qwen3-30b-a3b", 8, 1, 1, ep=8, global_batch=512, overlap="full")
    messages = {e.path: e.message for e in error.value.errors}
    assert "none, partial, dualpipe" in messages["parallelism.expert_overlap"], messages
    with pytest.raises(WorkloadSpecError) as error:
        parse_workload_spec(
            {
                "name": "x",
                "task": "pretrain",
                "model": {"preset": "qwen3-30b-a3b"},
                "parallelism": {"gpus": 8, "expert_overlap": "dualpipe"},
            }
        )
    messages = {e.path: e.message for e in error.value.errors}
    assert "expert_parallel > 1" in messages["parallelism.expert_overlap"], messages


def test_deepep_sends_a_token_once_to_each_node_by_hand():
    # DeepSeek-V3, EP 64 over 8 nodes: top-8 copies, 8 x 7 / 8 = 7 of them off the node under the plain
    # all-to-all; the routing caps a token at 4 of 8 groups = 4 nodes, DeepEP sends once to each: 4 / 8
    capped = deepseek_v3(dispatch="deepep")
    assert (capped.model.expert_groups, capped.model.expert_groups_per_token) == (8, 4)
    assert float(node_copy_share(capped, 8.0)) == pytest.approx(0.5)
    # without the cap the 8 experts sit on 8 (1 - (7 / 8)^8) = 5.25 distinct nodes on average
    free = dataclasses.replace(capped, model=dataclasses.replace(capped.model, expert_groups_per_token=0))
    assert float(node_copy_share(free, 8.0)) == pytest.approx((1 - (7 / 8) ** 8) * 8 / 8)
    # 16 nodes, 8 groups: a group spans 2 nodes, 4 groups reach at most 8 nodes
    assert float(node_copy_share(capped, 16.0)) == pytest.approx(16 * (1 - (15 / 16) ** 8) / 8)
    assert float(node_copy_share(deepseek_v3(), 8.0)) == 1.0
    # FP8 dispatch: 2 of the 4 calls at 1 byte under fp8 only
    assert dispatch_bytes_share(capped) == 0.75
    assert dispatch_bytes_share(dataclasses.replace(capped, precision="bf16")) == 1.0
    assert dispatch_bytes_share(deepseek_v3()) == 1.0


def test_deepep_sends_a_token_once_to_each_gpu_of_the_node():
    # Qwen3-30B-A3B on 8 GPUs, EP 8 (NeMo AutoModel's plan): a token's 8 experts sit on 8 (1 - (7 / 8)^8) =
    # 5.25 of the 8 GPUs on average; DeepEP's dispatch layout marks a token once per GPU (is_token_in_rank)
    # and its combine returns one sum per GPU, where the plain all-to-all moves one copy per routed expert
    def spec(dispatch):
        plan = {"gpus": 8, "zero_stage": 3, "expert_parallel": 8} | (
            {"expert_dispatch": dispatch} if dispatch else {}
        )
        return parse_workload_spec(
            {
                "name": "q",
                "task": "pretrain",
                "model": {"preset": "qwen3-30b-a3b"},
                "micro_batch_size": 4,
                "gradient_accumulation_steps": 16,
                "parallelism": plan,
            }
        )

    plain = candidate(spec(None), H100)["throughput"]["expert_parallel_seconds"]
    deepep = candidate(spec("deepep"), H100)["throughput"]["expert_parallel_seconds"]
    assert deepep == pytest.approx(plain * (1 - (7 / 8) ** 8), rel=1e-4)


def test_deepep_cuts_deepseek_v3s_fabric_time_by_the_share():
    # all 63 peers but 7 are off the node: the fabric sets the time, 0.5 x 0.75 = 0.375 of it
    plain = candidate(deepseek_v3(), H100)["throughput"]
    deepep = candidate(deepseek_v3(dispatch="deepep"), H100)["throughput"]
    assert deepep["expert_parallel_seconds"] == pytest.approx(
        0.375 * plain["expert_parallel_seconds"], rel=1e-3
    )


def test_bad_routing_groups_and_dispatch_name_their_fields():
    base = {"name": "x", "task": "pretrain", "parallelism": {"gpus": 8}}
    with pytest.raises(WorkloadSpecError) as error:
        parse_workload_spec(base | {"model": {"preset": "qwen3-30b-a3b", "expert_groups_per_token": 4}})
    assert "model.expert_groups_per_token" in {e.path for e in error.value.errors}
    with pytest.raises(WorkloadSpecError) as error:
        parse_workload_spec(
            base
            | {"model": {"preset": "qwen3-30b-a3b"}, "parallelism": {"gpus": 8, "expert_dispatch": "deepep"}}
        )
    assert "parallelism.expert_dispatch" in {e.path for e in error.value.errors}


def test_the_size_report_echoes_the_stated_overlap_and_dispatch():
    spec = deepseek_v3("dualpipe", "deepep")
    echoed = size_workload(spec, [H100])["workload"]["parallelism"]
    assert (echoed["expert_overlap"], echoed["expert_dispatch"]) == ("dualpipe", "deepep")
