"""Issue 26: tensor parallelism inside an instance is not all or nothing. Where the spec leaves the degree
open, the ranking also tries TP 2, 4 and 8 groups inside a larger NVLink instance with data parallelism
across the groups (Megatron-LM's layout; MLPerf Training v4.0 ran 8 x H100 at TP 4 and 8 x H200 at TP 2 for
Llama 2 70B LoRA); a stated degree is a contract."""

import numpy as np
import pandas as pd
import pytest

from procurement.ranking import PLAN_NAMES, RankingOptions, rank_workload
from procurement.ranking.shapes import _plan_arrays
from procurement.sizing import parse_workload_spec
from procurement.sizing.assumptions import COMM_EFFICIENCY, TP_ALLREDUCE_LATENCY
from tests.procurement.test_ranking import GPUS, NOW, OFFERS, _offer

GB = 1e9
TOKENS = 1e8
# One AWS p5e.48xlarge: 8 x H200 141 GB on NVSwitch, 450 GB/s per direction per GPU (interconnects.csv)
P5E = pd.DataFrame(
    [_offer("aws", "p5e.48xlarge", "h200-sxm-141gb", 8, "on_demand", 80.0, vcpus=192, ram=2048)]
)


def _lora_70b(parallelism=None):
    document = {
        "name": "tp",
        "task": "lora",
        "model": {"preset": "llama-3-70b"},
        "training_tokens": TOKENS,
        "seq_len": 1024,
        "micro_batch_size": 1,
        "gradient_accumulation_steps": 16,
        "gradient_checkpointing": "selective",
    }
    return parse_workload_spec(document | ({"parallelism": parallelism} if parallelism else {}))


def _rank(spec, offers=OFFERS, **options):
    options = {"top": None, "instance_counts": (1,)} | options
    return rank_workload(spec, offers, GPUS, RankingOptions(**options), now=NOW)


def _by_tp(rows):
    return {row["plan"]["tensor_parallel"]: row for row in rows if row["plan"]["zero_stage"] == 0}


def _tp_all_reduce(row):
    return next(item for item in row["interconnect"]["carried"] if item["collective"] == "TP all-reduce")


def test_it_plans_tp_groups_that_divide_a_larger_instance_and_never_cross_it():
    per_instance = np.array([1.0, 2.0, 4.0, 8.0, 16.0])
    for name in ("tensor_parallel_2", "tensor_parallel_4", "tensor_parallel_8"):
        plan = np.full(per_instance.shape, PLAN_NAMES.index(name))
        _, uses_tp, partial, tensor_parallel, _, valid = _plan_arrays(plan, np.ones(5), per_instance)
        group = float(name.rsplit("_", 1)[1])
        assert uses_tp.all() and (partial == group).all() and (tensor_parallel == group).all()
        # valid only inside an instance with more GPUs than the group (all of them is "tensor_parallel")
        assert valid.tolist() == (per_instance > group).tolist(), name


def test_it_picks_tp_2_x_dp_4_over_tp_8_where_the_weights_need_two_gpus():
    # Llama 3 70B LoRA, bf16, 1k context, micro-batch 1, 16 micro-batches a step, selective recomputation,
    # on one 8 x H200 instance. Memory: the frozen weights are 70.6e9 x 2 B = 131.5 GiB, so data parallel
    # (TP 1) peaks at 160.0 GiB on a 140.4 GiB card; TP 2 halves them (peak 80.3 GiB); TP 8 needs 20.5 GiB
    # (activations: LoRA on q and v keeps no input for the frozen MLP linears, bytes_model.py).
    rows = _rank(_lora_70b(), P5E, include_infeasible=True).results
    by_tp = _by_tp(rows)
    assert 70.6e9 * 2 / 2**30 == pytest.approx(131.5, abs=0.1)
    assert not by_tp[1]["fits"] and by_tp[1]["memory_per_gpu_gib"] == pytest.approx(160.0, abs=0.1)
    assert by_tp[2]["fits"] and by_tp[8]["fits"]
    # TP all-reduce per step (Megatron: 4 per layer per micro-batch, forward and backward): 4 x 80 layers
    # x 16 micro-batches = 5,120 calls of one micro-batch's activations, 1,024 tokens x 8,192 x 2 B = 16.8 MB;
    # a ring moves 2(t-1)/t of it: TP 8 5,120 x 1.75 x 16.8 MB = 150.3 GB, TP 2 5,120 x 1.0 x 16.8 MB =
    # 85.9 GB, each over NVLink at 450 GB/s x 0.8 (COMM_EFFICIENCY) = 360 GB/s plus 20 us a call:
    # TP 8 0.4176 + 0.1024 = 0.5200 s a step, TP 2 0.2386 + 0.1024 = 0.3410 s.
    message, calls = 1024 * 8192 * 2.0, 4 * 80 * 16
    link = 450 * GB * COMM_EFFICIENCY.value
    seconds = {}
    for tp, ring in ((8, 1.75), (2, 1.0)):
        volume = calls * ring * message
        assert _tp_all_reduce(by_tp[tp])["gb_per_step"] == pytest.approx(volume / GB, abs=0.001)
        seconds[tp] = volume / link + calls * TP_ALLREDUCE_LATENCY.value
        assert _tp_all_reduce(by_tp[tp])["seconds_per_step"] == pytest.approx(seconds[tp], abs=1e-6)
    assert (seconds[8], seconds[2]) == pytest.approx((0.5200, 0.3410), abs=1e-4)
    # A step is 16 x 1,024 = 16,384 tokens per data-parallel rank: one rank at TP 8, four at TP 2 x DP 4
    # (65,536 tokens). Compute is the same per token on the same 8 GPUs (about 9.0e-5 s: 1.5 s a TP 8 step,
    # 5.9 s a TP 2 x DP 4 step); DP 4's gradient all-reduce of the LoRA adapters (0.05 GB) hides under it.
    # So TP 8 takes (0.5200 / 16,384 - 0.3410 / 65,536) s = 26.5 us more per token: 0.737 h over 1e8 tokens.
    extra_per_token = seconds[8] / 16384 - seconds[2] / 65536
    assert extra_per_token * TOKENS / 3600 == pytest.approx(0.737, abs=0.001)
    assert by_tp[8]["hours"] - by_tp[2]["hours"] == pytest.approx(extra_per_token * TOKENS / 3600, abs=0.002)
    assert by_tp[2]["plan"]["name"] == "tensor_parallel_2"
    assert "estimated: TP 2 x DP 4 (TP groups within each instance)" in " ".join(by_tp[2]["reasons"])
    assert by_tp[2]["differs_from_spec"] == []  # the degree was left open
    # TP 2 is the fastest row; TP 4, slower than TP 2 on the same instance and price, is not ranked
    # (shapes.slower_partial_plans). mfu26: 16-bit LoRA on Hopper now computes at the width ceiling (0.485 at
    # d 8,192, was the 0.40 card default), 18% less compute a token, so TP 8 (compute plus its 0.52 s of
    # all-reduces a step) falls 3.394 -> 2.952 h, while ZeRO-3, whose per-micro-batch all-gathers of the
    # 131.5 GiB weights take 10.98 s of each 131,072-token step, no longer hides them (3.183 -> 3.037 h): it
    # now comes third, after TP 8 (was second).
    assert rows[0]["plan"]["name"] == "tensor_parallel_2"
    assert (
        by_tp[2]["hours"]
        < by_tp[8]["hours"]
        < next(r["hours"] for r in rows if r["plan"]["name"] == "zero3_fsdp")
    )
    assert 4 not in by_tp


def test_a_stated_tensor_parallel_8_keeps_tp_8_rows_only():
    rows = _rank(_lora_70b({"gpus": 8, "tensor_parallel": 8}), include_infeasible=True).results
    assert rows and {(row["gpus"], row["plan"]["tensor_parallel"]) for row in rows} == {(8, 8)}
    assert {row["plan"]["name"] for row in rows} == {"tensor_parallel"}
    # exploring ranks the partial plans too, each saying what differs from the spec
    explored = _rank(_lora_70b({"gpus": 8, "tensor_parallel": 8}), explore_parallelism=True).results
    partial = [row for row in explored if row["plan"]["name"] in ("tensor_parallel_2", "tensor_parallel_4")]
    assert partial  # p5.48xlarge: TP 4 x DP 2 (the 80 GB H100 does not hold the 83.3 GiB TP 2 peak)
    for row in partial:
        expected = f"tensor parallel {row['plan']['tensor_parallel']} (spec: 8)"
        assert expected in row["differs_from_spec"]


def test_a_stated_degree_no_offer_can_run_is_said():
    one_gpu = OFFERS[OFFERS["gpu_count"] == 1]
    ranking = _rank(_lora_70b({"gpus": 8, "tensor_parallel": 8}), one_gpu, instance_counts=(1, 8))
    assert ranking.results == []
    assert ranking.why_empty[0]["reason"].startswith(
        "no offer can run the stated parallelism (gpus 8, tensor_parallel 8): tensor parallel 8 needs an instance "
        "whose GPU count it divides with NVLink or Infinity Fabric between them"
    )


def test_serving_keeps_its_replica_plans():
    # A serving replica is its TP group: the partial training plans add no serving row
    spec = parse_workload_spec(
        {"name": "s", "task": "inference", "model": {"preset": "llama-3-70b"}, "precision": "bf16"}
    )
    rows = _rank(spec, include_infeasible=True).results
    assert rows and not any(row["plan"]["name"].startswith("tensor_parallel_") for row in rows)
