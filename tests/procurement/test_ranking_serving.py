"""Serving ranked as serving: a month of serving per row, replicas from demand, latency targets, no
training-only plans, identical rows collapsed, a throughput Pareto front, serving remedies before fewer users."""

import math

import pandas as pd
import pytest

from procurement.ranking import RankingOptions, rank_workload
from procurement.sizing import WorkloadSpecError, load_bundled_gpus, parse_workload_spec
from procurement.sizing.verdict import cheapest_remedy
from tests.procurement.test_ranking import GPUS, NOW, OFFERS, _offer
from tests.reference.ranking_loop import rank_workload_loop


def _serve(**inference):
    document = {
        "name": "s",
        "task": "inference",
        "model": {"preset": "llama-3.1-8b"},
        "inference": {"concurrency": 32, "context_len": 8192} | inference,
    }
    return parse_workload_spec(document)


def _rank(spec, offers=OFFERS, **options):
    return rank_workload(spec, offers, GPUS, RankingOptions(**({"top": None} | options)), now=NOW).results


def test_a_month_of_serving_has_no_reruns_and_no_setup():
    rows = _rank(_serve())
    assert rows and all(row["hours"] == 730 for row in rows)
    h100 = next(row for row in rows if row["instance_type"] == "gpu_1x_h100_pcie")
    # one replica (no demand stated): 3.29/h x 730 h x 1 = 2401.70
    assert h100["total_cost"] == h100["serving"]["cost_per_month"] == "2401.70"
    assert h100["cost_breakdown"]["reruns"] == h100["cost_breakdown"]["setup"] == "0.00"
    assert h100["serving"]["replicas_basis"] == "one replica (no demand stated)"
    assert any("one replica: the spec states no demand" in reason for reason in h100["reasons"])


def test_serving_has_no_zero3_rows_and_no_multi_instance_grid():
    rows = _rank(_serve(), include_infeasible=True)
    assert rows and {row["plan"]["name"] for row in rows} <= {"data_parallel", "tensor_parallel"}
    assert all(row["instances"] == 1 for row in rows)  # no demand: one instance each


def test_replicas_come_from_the_demand():
    # 5 requests/s x 256 output tokens = 1,280 tokens/s of demand
    rows = _rank(_serve(requests_per_second=5))
    h100 = next(row for row in rows if row["instance_type"] == "gpu_1x_h100_pcie")
    each = h100["serving"]["tokens_per_second_per_instance"]
    assert h100["serving"]["demand_tokens_per_second"] == 1280.0
    # One H100 PCIe (2.0 TB/s, 756 BF16 TFLOPS) serves ~413 tokens/s: a decode step of 32 streams reads the
    # 15.0 GB of weights (less the looked-up embedding) and 32 x 8,064 tokens x 128 KiB of KV at 0.7 x 2.0
    # TB/s (10.7 + 24.2 ms), and every 256 steps each stream's 7,936-token prompt is prefilled once:
    # 7,936 x (2 x 8.03e9 + 2.1e9 attention) = 1.44e14 FLOPs at 0.56 of 756 TFLOPS = 0.34 s a request,
    # 32 / 256 x 0.34 = 42.5 ms a step; 32 / 77.4 ms = 413.
    assert 400 <= each <= 425
    assert h100["instances"] == math.ceil(1280 / each) == 4
    assert h100["total_cost"] == "9606.80"  # 3.29 x 730 x 4
    assert h100["serving"]["tokens_per_second"] == pytest.approx(4 * each, abs=0.4)
    same = _rank(_serve(tokens_per_second=1280))
    assert [r["total_cost"] for r in same] == [r["total_cost"] for r in rows]


def test_a_latency_target_rules_out_slow_configurations():
    rows = _rank(_serve(tpot_ms=20), include_infeasible=True)
    fast = [row for row in rows if row["fits"]]
    assert fast and all(row["serving"]["time_per_output_token_ms"] <= 20 for row in fast)
    slow = next(row for row in rows if not row["fits"] and row["instance_type"] == "gpu_1x_h100_pcie")
    assert any("misses tpot_ms" in reason for reason in slow["reasons"])
    assert not any(row["fits"] for row in _rank(_serve(ttft_ms=1), include_infeasible=True))


def test_the_loop_agrees_on_serving():
    spec = _serve(requests_per_second=5)
    vectorized = rank_workload(
        spec, OFFERS, GPUS, RankingOptions(top=None, collapse_identical=False), now=NOW
    )
    loop = rank_workload_loop(spec, OFFERS, GPUS, RankingOptions(top=None))
    assert [(float(r["total_cost"]), r["instances"], r["plan"]["name"]) for r in vectorized.results] == [
        (round(total, 2), instances, plan) for total, _hours, _position, instances, plan in loop
    ]


def test_identical_rows_collapse_into_one_with_its_other_regions():
    same = [
        _offer(
            "lambda",
            "gpu_1x_h100_pcie",
            "h100-pcie-80gb",
            1,
            "on_demand",
            3.29,
            region=region,
            vcpus=26,
            ram=200,
        )
        for region in ("us-east-1", "us-west-1", "europe-central-1")
    ]
    offers = pd.DataFrame(same + [_offer("vast", "1x-RTX4090", "rtx-4090", 1, "on_demand", 0.35)])
    rows = _rank(_serve(concurrency=1, context_len=4096), offers)
    h100 = [row for row in rows if row["instance_type"] == "gpu_1x_h100_pcie"]
    assert len(h100) == 1 and h100[0]["region"] == "us-east-1"
    assert h100[0]["also_in"] == ["us-west-1", "europe-central-1"]
    assert "also in 2 regions: us-west-1, europe-central-1" in h100[0]["reasons"]
    kept = _rank(_serve(concurrency=1, context_len=4096), offers, collapse_identical=False)
    assert len([row for row in kept if row["instance_type"] == "gpu_1x_h100_pcie"]) == 3
    for top in range(1, len(rows) + 1):
        assert _rank(_serve(concurrency=1, context_len=4096), offers, top=top) == rows[:top]


def test_the_serving_pareto_front_trades_cost_against_throughput():
    rows = _rank(_serve(concurrency=1, context_len=4096))
    front = [row for row in rows if row["pareto"]]
    assert front and len(front) < len(rows)
    for row in front:  # no row is both cheaper and faster than a front row
        assert not any(
            float(other["total_cost"]) < float(row["total_cost"])
            and other["serving"]["tokens_per_second"] > row["serving"]["tokens_per_second"]
            for other in rows
        )
    for row in rows:  # and every row off the front is beaten on both counts by some row
        if not row["pareto"]:
            assert any(
                float(o["total_cost"]) <= float(row["total_cost"])
                and o["serving"]["tokens_per_second"] >= row["serving"]["tokens_per_second"]
                and o is not row
                for o in rows
            )


def test_serving_remedies_try_a_smaller_kv_cache_before_fewer_users():
    # Llama-3.1-8B, 32 users x 8,192 tokens: KV = 32 layers x 8 KV heads x 128 x 2 (K, V) = 65,536 values a
    # token; bf16 32 x 8192 x 65,536 x 2 B = 32 GiB, fp8 16 GiB; with 15 GiB of weights that fits a 45 GiB L40S.
    l40s = {gpu.slug: gpu for gpu in load_bundled_gpus()}["l40s"]
    remedy = cheapest_remedy(_serve(), l40s, 1, True)
    assert remedy["actions"] == ["fp8 KV cache"]
    assert remedy["total_per_gpu_gib"] < l40s.capacity_gib


@pytest.mark.parametrize(
    ("inference", "path"),
    [
        ({"requests_per_second": 0}, "inference.requests_per_second"),
        ({"tokens_per_second": 2e9}, "inference.tokens_per_second"),
        ({"ttft_ms": -1}, "inference.ttft_ms"),
        ({"tpot_ms": 1e6}, "inference.tpot_ms"),
        ({"requests_per_second": 1, "tokens_per_second": 5}, "inference.tokens_per_second"),
    ],
)
def test_demand_fields_are_bounded_and_named(inference, path):
    with pytest.raises(WorkloadSpecError) as error:
        _serve(**inference)
    assert path in [e.path for e in error.value.errors]


def test_the_serving_chart_plots_cost_per_month_against_tokens_per_second():
    from procurement.views.costing import cost_time_chart

    rows = _rank(_serve(concurrency=1, context_len=4096))
    svg = cost_time_chart(rows)
    assert "Cost per month versus throughput" in svg and "generated tokens/s" in svg
    assert "cost per month of serving (USD)" in svg
    training = [row | {"serving": None} for row in rows]
    assert "Cost versus time" in cost_time_chart(training)


def test_serving_latency_and_throughput_are_the_sizing_engines_figures():
    from procurement.sizing import inference_throughput

    spec = _serve(requests_per_second=5)
    row = next(r for r in _rank(spec) if r["instance_type"] == "gpu_1x_h100_pcie")
    gpu = GPUS["h100-pcie-80gb"]
    figures = inference_throughput(
        spec,
        bandwidth_gbps=gpu.memory_bandwidth_gbps,
        peak_tflops=gpu.dense_tflops("bf16"),
        gpu_counts=1,
        tensor_parallel=1,
        pipeline_parallel=1,
    )
    # time per output token = 1000 ms / a stream's tokens/s; time to first token = 1000 x the prefill seconds
    assert row["serving"]["time_per_output_token_ms"] == pytest.approx(
        1000.0 / float(figures["decode_tokens_per_second_per_stream"]), abs=0.01
    )
    assert row["serving"]["time_to_first_token_ms"] == pytest.approx(
        1000.0 * float(figures["time_to_first_token_seconds"]), abs=0.1
    )
    assert row["serving"]["tokens_per_second_per_instance"] == pytest.approx(
        float(figures["decode_tokens_per_second_total"]), abs=0.1
    )
