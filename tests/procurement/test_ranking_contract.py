"""Issue 26, class 3: the user's spec is a contract. Stated parallelism.gpus, zero_stage, tensor_parallel and
pipeline_parallel are honoured; other plans appear only with ``gpus: auto`` or ``explore_parallelism``, and
each such row says what differs from the spec."""

import pytest

from procurement.ranking import RankingOptions, rank_workload
from procurement.sizing import memory_breakdown_gib, parse_workload_spec
from tests.procurement.test_ranking import GPUS, NOW, OFFERS

GIB = 2**30


def _spec(parallelism, task="full_finetune", preset="llama-3.1-8b", **extra):
    return parse_workload_spec(
        {
            "name": "c",
            "task": task,
            "model": {"preset": preset},
            "training_tokens": 1e8,
            "parallelism": parallelism,
        }
        | extra
    )


def _rank(spec, **options):
    return rank_workload(spec, OFFERS, GPUS, RankingOptions(**({"top": None} | options)), now=NOW).results


def test_a_spec_for_one_gpu_gets_one_gpu_rows_only():
    # QLoRA of a 70B model on one card (the example): nf4 weights ~35 GB fit one 80 GB card
    spec = _spec({"gpus": 1}, task="qlora", preset="llama-3-70b", gradient_checkpointing="full")
    rows = _rank(spec)
    assert rows and {row["gpus"] for row in rows} == {1}
    assert all(row["differs_from_spec"] == [] for row in rows)
    # without the contract (gpus: auto) the same job also ranks 8-GPU instances, saying so
    explored = _rank(
        _spec({"gpus": "auto"}, task="qlora", preset="llama-3-70b", gradient_checkpointing="full")
    )
    assert {row["gpus"] for row in explored} > {1}


def test_a_stated_zero_1_on_8_gpus_never_becomes_zero_3_or_2_gpus():
    spec = _spec({"gpus": 8, "zero_stage": 1})
    rows = _rank(spec)
    assert rows and {(row["gpus"], row["plan"]["zero_stage"]) for row in rows} == {(8, 1)}
    # ZeRO-1 shards only the optimizer state (ZeRO paper, Rajbhandari et al. 2020, section 5.1: 2Psi + 2Psi +
    # K Psi / Nd with K = 12 for mixed-precision Adam). Against unsharded data parallel on the same 8 GPUs it
    # saves 12 x (1 - 1/8) = 10.5 bytes per parameter: 8.03e9 x 10.5 / 2^30 = 78.5 GiB of tensors per GPU,
    # 82.4 GiB with the 5% allocator fragmentation the sizing engine adds (procurement/sizing/assumptions.py).
    row = next(
        r for r in rows if r["instance_type"] == "p5.48xlarge" and r["plan"]["name"] == "data_parallel"
    )
    unsharded = memory_breakdown_gib(spec, 8.0, zero_stage=0.0, tensor_parallel=1.0, pipeline_parallel=1.0)
    saved = float(unsharded["total_per_gpu_gib"]) - row["memory_per_gpu_gib"]
    assert spec.model.params * 10.5 / GIB == pytest.approx(78.5, abs=0.1)
    assert saved == pytest.approx(spec.model.params * 10.5 / GIB * 1.05, abs=0.05)


def test_exploring_ranks_other_plans_and_says_what_differs():
    spec = _spec({"gpus": 8, "zero_stage": 1})
    rows = _rank(spec, explore_parallelism=True)
    counts = {row["gpus"] for row in rows}
    assert 8 in counts and len(counts) > 1
    for row in rows:
        expected = []
        if row["gpus"] != 8:
            expected.append(f"{row['gpus']} GPU{'s' if row['gpus'] != 1 else ''} (spec: 8)")
        if row["plan"]["zero_stage"] != 1:
            expected.append(f"ZeRO-{row['plan']['zero_stage']} (spec: ZeRO-1)")
        assert row["differs_from_spec"] == expected
        assert (f"differs from the spec: {'; '.join(expected)}" in row["reasons"]) == bool(expected)


def test_a_stated_tensor_parallel_degree_is_the_plans_degree():
    # 8 GPUs as TP 2 x DP 4 inside one 8-GPU NVLink instance (Megatron-LM's layout); never TP 8 or TP 1
    rows = _rank(
        _spec({"gpus": 8, "tensor_parallel": 2}, preset="llama-3-70b", gradient_checkpointing="full"),
        include_infeasible=True,
    )
    assert rows and {(row["gpus"], row["plan"]["tensor_parallel"]) for row in rows} == {(8, 2)}


def test_gpus_auto_is_not_a_multiple_check_and_an_unstated_spec_is_unchanged():
    spec = _spec({"gpus": "auto", "tensor_parallel": 2})
    assert spec.parallelism.gpus_auto and spec.parallelism.stated == frozenset({"tensor_parallel"})
    plain = parse_workload_spec(
        {"name": "p", "task": "qlora", "model": {"preset": "llama-3.1-8b"}, "training_tokens": 1e8}
    )
    assert plain.parallelism.stated == frozenset()
    assert all(row["differs_from_spec"] == [] for row in _rank(plain))


def test_context_and_expert_parallel_degrees_are_every_rows_and_tile_its_gpus():
    # par26: the degrees a spec states (or 1) are never varied. Llama 3 8B pretraining at 8k with CP 4 and
    # gpus auto: every row keeps CP 4 and a GPU count holding whole TP x CP 4 groups (no 1-GPU rows)
    spec = _spec({"gpus": "auto", "context_parallel": 4}, task="pretrain", seq_len=8192)
    rows = _rank(spec, include_infeasible=True)
    assert rows and all(row["plan"]["context_parallel"] == 4 for row in rows)
    assert all(row["gpus"] % (4 * row["plan"]["tensor_parallel"]) == 0 for row in rows)
    # the same job with CP 1 ranks 1-GPU cards too, so the filter is CP's
    plain = _rank(_spec({"gpus": "auto"}, task="pretrain", seq_len=8192), include_infeasible=True)
    assert any(row["gpus"] == 1 for row in plain)
    # Mixtral with EP 8 stated on 8 GPUs: rows keep 8 GPUs and EP 8 (each GPU holds one expert of 8)
    mixtral = _spec({"gpus": 8, "expert_parallel": 8}, task="pretrain", preset="mixtral-8x7b")
    rows = _rank(mixtral, include_infeasible=True)
    assert rows and {(row["gpus"], row["plan"]["expert_parallel"]) for row in rows} == {(8, 8)}
    assert any(row["instances"] == 1 for row in rows)
    for row in [row for row in rows if row["instances"] == 1]:  # an 8-GPU instance: all-to-alls on its link
        carried = {item["collective"]: item["over"] for item in row["interconnect"]["carried"]}
        assert carried["EP all-to-all"] == row["interconnect"]["node_link"], carried
    # EP shrinks each GPU's share of the experts: its rows need less memory than the same plan without EP
    alone = _rank(_spec({"gpus": 8}, task="pretrain", preset="mixtral-8x7b"), include_infeasible=True)

    def plan_of(row):
        return (
            row["instance_type"],
            row["pricing_model"],
            row["plan"]["zero_stage"],
            row["plan"]["tensor_parallel"],
        )

    by_plan = {plan_of(row): row["memory_per_gpu_gib"] for row in alone}
    compared = [row for row in rows if plan_of(row) in by_plan]
    assert compared
    # unsharded (ZeRO-0) each GPU keeps 1 / 8 of the experts instead of all; under ZeRO-3 each already held
    # 1 / 8 of the whole state, so EP changes nothing there
    assert all(row["memory_per_gpu_gib"] <= by_plan[plan_of(row)] for row in compared)
    unsharded = [row for row in compared if row["plan"]["zero_stage"] == 0]
    assert unsharded and all(row["memory_per_gpu_gib"] < by_plan[plan_of(row)] for row in unsharded)
