"""Issue 26, class 3: every parallelism plan the spec parser accepts is a plan the ranking can rank, and an
empty ranking names the gate that really stops it. Round x26d found stated ZeRO-3/FSDP + tensor-parallel plans
(torchtitan's FSDP 32 x TP 8, NeMo AutoModel's FSDP 4 x TP 2) ranked nothing while the reason blamed NVLink
the 8-GPU NVLink nodes of the catalog had: the plan grid paired tensor parallelism with ZeRO 0-2 only."""

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, assume, event, given, settings
from hypothesis import strategies as st

from procurement.ranking import RankingOptions, rank_workload
from procurement.ranking.offers import prepare
from procurement.ranking.options import MAX_INSTANCES
from procurement.ranking.shapes import tensor_parallel_splits_heads
from procurement.ranking.splits import tensor_parallel_splits_mlp
from procurement.sizing import memory_breakdown_gib, parse_workload_spec
from procurement.sizing.bytes_model import state_bytes
from procurement.sizing.spec import WorkloadSpecError
from tests.procurement.test_ranking import GPUS, NOW, OFFERS, _offer

GIB = 2**30
# 8 x L4 on PCIe (AWS g6.48xlarge: no NVLink), for a plan whose real blocker is the link
PCIE_8 = pd.DataFrame([_offer("aws", "g6.48xlarge", "l4", 8, "on_demand", 13.35, vcpus=192, ram=768)])


def _spec(parallelism, task="full_finetune", preset="llama-3.1-8b", **extra):
    document = {"name": "s", "task": task, "model": {"preset": preset}, "training_tokens": 1e8}
    return parse_workload_spec(document | {"parallelism": parallelism} | extra)


def _rank(spec, offers=OFFERS, **options):
    options = {"top": None, "include_infeasible": True} | options
    return rank_workload(spec, offers, GPUS, RankingOptions(**options), now=NOW)


def _plans(rows):
    return {(row["gpus"], row["plan"]["zero_stage"], row["plan"]["tensor_parallel"]) for row in rows}


def test_a_stated_fsdp_with_tensor_parallel_plan_ranks_and_shards_over_the_tp_groups():
    spec = _spec({"gpus": 8, "zero_stage": "fsdp", "tensor_parallel": 2})
    rows = _rank(spec).results
    assert rows and _plans(rows) == {(8, 3, 2)}
    assert all(row["differs_from_spec"] == [] for row in rows)
    # FSDP shards over the data-parallel group of 8 / TP 2 = 4 ranks. Against the same TP 2 unsharded, each
    # GPU keeps 1/8 instead of 1/2 of the 16 bytes a parameter (2 weights + 2 gradients + 12 Adam, ZeRO paper
    # sec. 5.1): 16 x (1/2 - 1/8) = 6 bytes a parameter saved, less the gathered largest layer / TP 2 (the
    # 128,256 x 4,096 bf16 embedding of Llama 3.1 8B), x 1.05 allocator fragmentation (sizing/assumptions.py).
    largest = 128256 * 4096 * 2
    assert state_bytes(spec).largest_layer_bytes == largest
    row = next(r for r in rows if r["instance_type"] == "p5.48xlarge")
    unsharded = memory_breakdown_gib(spec, 8.0, zero_stage=0.0, tensor_parallel=2.0, pipeline_parallel=1.0)
    saved = float(unsharded["total_per_gpu_gib"]) - row["memory_per_gpu_gib"]
    assert saved == pytest.approx((6 * spec.model.params - largest / 2) * 1.05 / GIB, abs=0.01)
    assert any("ZeRO-3" in reason and "TP 2" in reason for reason in row["reasons"]), row["reasons"]


def test_fsdp_with_tensor_and_pipeline_parallelism_ranks_across_instances():
    spec = _spec(
        {"gpus": 32, "zero_stage": 3, "tensor_parallel": 8, "pipeline_parallel": 2},
        task="pretrain",
        preset="llama-3-70b",
        gradient_checkpointing="full",
    )
    rows = _rank(spec).results
    assert rows and _plans(rows) == {(32, 3, 8)}
    assert {(row["instances"], row["plan"]["pipeline_parallel"]) for row in rows} == {(4, 2)}


def test_a_stated_zero_3_on_one_gpu_with_offload_ranks():
    # DeepSpeed ZeRO-3 with the optimizer offloaded on a single card: the grid's own ZeRO-3 plan needs two GPUs
    spec = _spec({"gpus": 1, "zero_stage": 3, "offload": "optimizer"})
    rows = _rank(spec).results
    assert rows and _plans(rows) == {(1, 3, 1)}
    assert any(row["fits"] for row in rows)


def test_a_stated_zero_2_with_the_optimizer_offloaded_ranks_what_size_sizes():
    # ZeRO-Offload (Ren et al. 2021) is ZeRO-2 with the optimizer on the host: the ranking used to drop a stated
    # offload below ZeRO-3 and size the GPUs as if nothing left them. Off the GPU go the sharded Adam state and
    # gradients, (12 + 2) bytes / 8 GPUs a parameter, x 1.05 allocator fragmentation (sizing/assumptions.py).
    spec = _spec({"gpus": 8, "zero_stage": 2, "offload": "optimizer"})
    row = next(r for r in _rank(spec).results if r["instance_type"] == "p5.48xlarge")
    assert row["plan"]["zero_stage"] == 2
    sized = memory_breakdown_gib(spec, 8.0, zero_stage=2.0, tensor_parallel=1.0, pipeline_parallel=1.0)
    assert row["memory_per_gpu_gib"] == pytest.approx(float(sized["total_per_gpu_gib"]), abs=0.01)
    kept = memory_breakdown_gib(
        spec, 8.0, zero_stage=2.0, tensor_parallel=1.0, pipeline_parallel=1.0, offload="none"
    )
    saved = float(kept["total_per_gpu_gib"]) - row["memory_per_gpu_gib"]
    assert saved == pytest.approx(spec.model.params * 14 / 8 * 1.05 / GIB, abs=0.01)


def test_an_empty_ranking_of_a_plan_with_nvlink_names_memory_not_the_link():
    # FSDP x TP 8 on one 8-GPU NVLink node: the data-parallel group is 1, so nothing is sharded and each GPU
    # holds 16 bytes x 70.6e9 parameters / 8 = 131 GiB, over every 80 GB card of OFFERS
    spec = _spec({"gpus": 8, "zero_stage": 3, "tensor_parallel": 8}, preset="llama-3-70b")
    assert spec.model.params * 16 / 8 / GIB > 130
    ranking = _rank(spec, include_infeasible=False)
    assert ranking.results == [] and ranking.why_empty
    assert ranking.why_empty[0]["reason"] == "does not fit in GPU memory"
    assert not any("NVLink" in item["reason"] for item in ranking.why_empty)


def test_an_empty_ranking_names_a_gpu_count_no_offer_makes():
    # Restated (glm, stop 51): before, 1,024 GPUs ranked nothing, "no offer makes 1024 GPUs (... at the instance
    # counts tried, 1, 2, 4 or 8)": the contract added only counts of at most 64 instances. After, 128 instances
    # of 8 (under ranking.options.MAX_INSTANCES, 2,048) make them and the plan ranks; a count past the bound,
    # 32,768 GPUs = 4,096 instances of 8 (the largest instance of OFFERS), is empty and says the bound.
    spec = _spec({"gpus": 1024, "zero_stage": 3, "tensor_parallel": 8}, preset="llama-3-70b")
    assert {(row["instances"], row["gpus_per_instance"]) for row in _rank(spec).results} == {(128, 8)}
    spec = _spec({"gpus": 32768, "zero_stage": 3, "tensor_parallel": 8}, preset="llama-3-70b")
    (reason,) = _rank(spec).why_empty
    assert reason["reason"].startswith(
        "no offer can run the stated parallelism (gpus 32768, zero_stage 3, tensor_parallel 8): no offer makes "
        "32768 GPUs (instances of 1 or 8 GPUs at the instance counts tried, 1, 2, 4 or 8): 32,768 GPUs need "
        "more than the 2,048 instances a row may use, even on instances of 8"
    )
    assert "NVLink" not in reason["reason"]


def test_an_empty_ranking_blames_the_link_only_where_it_is_the_blocker():
    spec = _spec({"gpus": 8, "zero_stage": 3, "tensor_parallel": 8}, preset="llama-3.1-8b")
    (reason,) = _rank(spec, offers=PCIE_8).why_empty
    assert (
        "needs NVLink or Infinity Fabric between an instance's GPUs to train: the 8-GPU instances"
        in (reason["reason"])
    )
    assert "PCIe" in reason["reason"]
    # the same plan on an 8-GPU NVLink node ranks
    assert _plans(_rank(spec).results) == {(8, 3, 8)}


# --- the property: every stated plan the parser accepts ranks where a catalog node can hold it ------------------
CATALOG = pd.concat([OFFERS, PCIE_8], ignore_index=True)
COUNTS = (1, 2, 4, 8)


def _kinds():
    """(GPUs per instance, NVLink or Infinity Fabric inside, cluster fabric) of each GPU kind in CATALOG."""
    prepared = prepare(CATALOG, GPUS, RankingOptions(instance_counts=COUNTS))
    kinds = prepared.kinds
    return [
        (int(n), prepared.links[int(link)].scale_up, prepared.links[int(link)].has_fabric)
        for n, link in zip(kinds["gpus_per_instance"], kinds["link"], strict=True)
    ]


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    gpus=st.sampled_from([1, 2, 3, 4, 8, 12, 16, 32, 64, 1024, 32768]),
    zero=st.sampled_from([None, 0, 1, 2, 3, "fsdp"]),
    tp=st.sampled_from([None, 1, 2, 4, 8, 16]),
    pp=st.sampled_from([None, 1, 2, 4]),
    split=st.sampled_from([{}, {"context_parallel": 2}, {"expert_parallel": 2}, {"expert_parallel": 8}]),
    task=st.sampled_from(["full_finetune", "lora", "pretrain"]),
    preset=st.sampled_from(["llama-3.1-8b", "mixtral-8x7b"]),
)
def test_every_accepted_stated_plan_ranks_on_a_node_that_holds_it_or_says_a_true_reason(
    gpus, zero, tp, pp, split, task, preset
):
    parallelism = {"gpus": gpus} | split
    for key, value in (("zero_stage", zero), ("tensor_parallel", tp), ("pipeline_parallel", pp)):
        if value is not None:
            parallelism[key] = value
    try:
        spec = _spec(parallelism, task=task, preset=preset, seq_len=4096)
    except WorkloadSpecError:
        assume(False)
    par = spec.parallelism
    ranking = _rank(spec, offers=CATALOG, instance_counts=COUNTS)
    # a node holds the plan: instances of n GPUs make the stated count (at most MAX_INSTANCES of them: the counts
    # the contract adds, ranking/contract.instance_counts_for; 64 before glm, stop 51), its TP groups inside an instance on NVLink or
    # Infinity Fabric. Whether it fits, and a fabric between instances, are the configurations' gates.
    # ...and the TP degree splits the model's attention heads (ranking/shapes.tensor_parallel_splits_heads: the
    # query heads divide, training's KV heads too: Megatron-Core never replicates them, aud49k)
    # query heads divide, training's KV heads too: Megatron-Core never replicates them, aud49k), and the MLP's
    # width (splits.tensor_parallel_splits_mlp, gate tp_mlp, stop 50)
    degree = np.array([float(par.tensor_parallel)])
    heads_split = bool(tensor_parallel_splits_heads(spec, degree)[0])
    mlp_split = bool(tensor_parallel_splits_mlp(spec, degree)[0])
    holds = [
        n
        for n, scale_up, _ in _kinds()
        if gpus % n == 0
        and gpus // n <= MAX_INSTANCES
        and (par.tensor_parallel == 1 or (n % par.tensor_parallel == 0 and scale_up))
        and heads_split
        and mlp_split
    ]
    for row in ranking.results:  # the stated fields, each as stated
        figures = {"gpus": row["gpus"]} | row["plan"]
        assert {key: figures[key] for key in par.stated} == {key: getattr(par, key) for key in par.stated}
    event("ranked" if holds else "empty")
    if holds:  # the stated plan is priced (and shown, with include_infeasible)
        assert ranking.considered and ranking.results, (parallelism, ranking.why_empty)
        return
    assert not ranking.considered and not ranking.results and ranking.why_empty, parallelism
    reason = ranking.why_empty[0]["reason"]
    makes = [n for n, _, _ in _kinds() if gpus % n == 0 and gpus // n <= MAX_INSTANCES]
    if "no offer makes" in reason:
        assert not makes, reason
    elif "does not split the model's" in reason:  # the heads are the blocker
        assert not heads_split, reason
    elif "does not split the MLP's width" in reason:  # the MLP is the blocker
        assert heads_split and not mlp_split, reason
    elif "NVLink or Infinity Fabric between an instance's GPUs" in reason:  # the link is the blocker
        divides = [(n, up) for n, up, _ in _kinds() if n in makes and n % par.tensor_parallel == 0]
        assert divides and not any(up for _, up in divides), reason
    elif "needs an instance whose GPU count it divides" in reason:
        assert not any(n % par.tensor_parallel == 0 for n in makes), reason
    else:  # any other reason would be a plan the grid cannot produce
        pytest.fail(f"{parallelism}: {reason}")


# --- a stated GPU count is made of every instance size the catalog sells (inst16, stop 51) ----------------------
# GCP a2-megagpu-16g: 16 x A100 40GB on one NVSwitch host (cloud.google.com/compute/docs/gpus, pricing/providers/
# gcp_hosts.py), us-central1-a on demand 8.79698 host + 46.94253 for the 16 GPUs = 55.73951 $/h (the bundled
# SkyPilot rows, pricing/data/skypilot/gcp/vms.hosts.csv and vms.gpu.csv; the bundled catalog carries it).
MEGA_16 = pd.DataFrame(
    [_offer("gcp", "a2-megagpu-16g", "a100-sxm4-40gb", 16, "on_demand", 55.73951, "us-central1", 96, 1360)]
)


def _shapes(rows):
    return {(row["instances"], row["gpus_per_instance"], row["instance_type"]) for row in rows}


@pytest.mark.parametrize("task", ["lora", "pretrain"])
def test_a_stated_16_gpus_ranks_one_16_gpu_instance(task):
    # At the default counts (1, 2, 4, 8: options.DEFAULT_INSTANCE_COUNTS) 1 x 16 was already tried, as a requested
    # count. A request for multi-instance counts only (2, 4, 8) lost it: the contract made a stated count only of
    # instances of 1, 2, 4 or 8 GPUs (16 = 2 x 8, 4 x 4, 8 x 2 rows), never 1 x 16 of a2-megagpu-16g. After
    # (inst16, stop 51): 16 / 16 = 1 instance is added, one count per catalog size that divides the stated count.
    spec = _spec({"gpus": 16}, task=task)
    offers = pd.concat([OFFERS, MEGA_16], ignore_index=True)
    assert (1, 16, "a2-megagpu-16g") in _shapes(_rank(spec, offers=offers).results)
    rows = _rank(spec, offers=offers, instance_counts=(2, 4, 8)).results
    assert (1, 16, "a2-megagpu-16g") in _shapes(rows)
    assert all(row["gpus"] == 16 for row in rows)
    # without the 16-GPU offer, no 1 x 16 row (the shape comes from the catalog, not from a list of sizes)
    assert not any(row["gpus_per_instance"] == 16 for row in _rank(spec).results)


def test_a_stated_768_gpus_ranks_48_instances_of_16():
    # 768 / 16 = 48 instances (<= MAX_INSTANCES, 2,048); 768 / 8 = 96 (GLM-130B's 96 x 8 DGX-A100,
    # arXiv:2210.02414 sec. 3) still ranks beside it
    spec = _spec(
        {"gpus": 768, "zero_stage": 1, "tensor_parallel": 4, "pipeline_parallel": 8}, preset="llama-3-70b"
    )
    shapes = _shapes(_rank(spec, offers=pd.concat([OFFERS, MEGA_16], ignore_index=True)).results)
    assert (48, 16, "a2-megagpu-16g") in shapes
    assert (96, 8, "p4d.24xlarge") in shapes


def test_a_stated_768_gpus_on_a2_megagpu_16g_moves_its_data_parallel_traffic_over_the_sourced_fabric():
    # a2net (stop 51): before, a2-megagpu-16g matched the a2-* rule (NVLink, no fabric), so its 48 x 16 row said
    # "no cluster interconnect" and did not fit. GCP's network page (cloud.google.com/compute/docs/gpus/
    # gpu-network-bandwidth, overview table) gives A2 100 Gbps with no GPUDirect: the row now runs its
    # between-instance collectives at 100 Gb/s / 8 = 12.5 GB/s an instance, shared by 16 GPUs, at the 0.80
    # collective efficiency (sizing/assumptions.py COMM_EFFICIENCY): 12.5 / 16 x 0.8 = 0.625 GB/s a GPU.
    # p4d (400 Gbps EFA over 8 GPUs): 50 / 8 x 0.8 = 5.0 GB/s a GPU, 8 x the A2 rate.
    spec = _spec(
        {"gpus": 768, "zero_stage": 1, "tensor_parallel": 4, "pipeline_parallel": 8}, preset="llama-3-70b"
    )
    rows = _rank(spec, offers=pd.concat([OFFERS, MEGA_16], ignore_index=True)).results
    a2 = next(row for row in rows if (row["instances"], row["instance_type"]) == (48, "a2-megagpu-16g"))
    p4d = next(row for row in rows if (row["instances"], row["instance_type"]) == (96, "p4d.24xlarge"))
    assert a2["interconnect"]["fabric"] == "gVNIC TCP (no GPUDirect) 100 Gb/s"
    assert "no cluster interconnect for a2-megagpu-16g" not in a2["reasons"]

    def zero_1(row):
        return next(c for c in row["interconnect"]["carried"] if c["collective"].startswith("ZeRO-1"))

    # both rows are DP 768 / (TP 4 x PP 8) = 24 across instances: the same bytes a step, at the rates above
    assert zero_1(a2)["gb_per_step"] == zero_1(p4d)["gb_per_step"]
    assert zero_1(a2)["over"] == "gVNIC TCP (no GPUDirect) 100 Gb/s"
    assert zero_1(a2)["seconds_per_step"] == pytest.approx(zero_1(a2)["gb_per_step"] / 0.625, rel=1e-3)
    assert zero_1(p4d)["seconds_per_step"] == pytest.approx(zero_1(p4d)["gb_per_step"] / 5.0, rel=1e-3)


def test_the_contract_adds_one_instance_count_per_catalog_size_that_divides():
    from procurement.ranking.contract import instance_counts_for

    spec = _spec({"gpus": 768}, task="pretrain")
    options = RankingOptions(instance_counts=COUNTS)
    # 768 = 768 x 1 = 384 x 2 = 96 x 8 = 48 x 16 = 256 x 3; 5 does not divide 768 (no count for it)
    assert instance_counts_for(spec, options, [1, 2, 8, 16, 16, 3, 5]) == (1, 2, 4, 8, 48, 96, 256, 384, 768)
    # a count past the bound adds nothing: 4,096 GPUs on instances of 1 are 4,096 instances, past 2,048
    assert instance_counts_for(_spec({"gpus": 4096}, task="pretrain"), options, [1]) == COUNTS
    # serving and explored specs keep the requested counts
    assert instance_counts_for(_spec({"gpus": "auto"}, task="pretrain"), options, [16]) == COUNTS


@pytest.mark.django_db
def test_the_bundled_catalog_makes_a_stated_count_of_its_16_gpu_hosts(bundled_catalog):
    # the bundled catalog sells a2-megagpu-16g (pricing/data/skypilot/gcp/vms.hosts.csv): a stated 256 GPUs is
    # 16 x 16 of it (before inst16: 256 / 16 = 16 instances was never tried; 256 x 1, 128 x 2, 64 x 4, 32 x 8 were)
    from procurement import selectors

    frame, gpus = selectors.ranking_offer_frame(), selectors.ranking_gpus()
    spec = _spec({"gpus": 256}, task="pretrain")
    options = RankingOptions(top=None, include_infeasible=True, collapse_identical=False)
    rows = rank_workload(spec, frame, gpus, options, now=NOW).results
    assert any(
        (row["instances"], row["gpus_per_instance"], row["instance_type"]) == (16, 16, "a2-megagpu-16g")
        for row in rows
    )
    assert {row["gpus"] for row in rows} == {256}
