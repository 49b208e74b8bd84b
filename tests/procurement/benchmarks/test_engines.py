"""Plain-Python parts: document checks, unit costs, diagnostics and calibration, against hand computations."""

import json
import math
from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from procurement.benchmarks import diagnostics
from procurement.benchmarks.calibration import Observation, calibrate, shrunk_factor
from procurement.benchmarks.document import BenchmarkDocumentError, load_document
from procurement.benchmarks.unit_costs import unit_costs
from tests.procurement.benchmarks.helpers import gpu_document


def _load(document):
    return load_document(json.dumps(document).encode())


def test_it_reads_a_runner_document():
    document = _load(gpu_document())
    assert document.tokens_per_second == 4096.0 and document.gpu_name == "NVIDIA H100 80GB HBM3"
    assert (
        document.sha256 == _load(json.loads(json.dumps(gpu_document(), indent=3))).sha256
    )  # key order/whitespace free


@pytest.mark.parametrize(
    "changes, path",
    [
        ({"schema_version": 7}, "schema_version"),
        ({"summary__step_seconds_median": -1.0}, "summary.step_seconds_median"),
        ({"summary__tokens_per_second_median": None}, "summary.tokens_per_second_median"),
        ({"measured_at": "yesterday"}, "measured_at"),
        ({"workload__task": "finetune"}, "workload.task"),
        ({"steps": []}, "steps"),
        ({"environment__currency": "dollars"}, "environment.currency"),
    ],
)
def test_it_rejects_bad_documents_naming_the_field(changes, path):
    with pytest.raises(BenchmarkDocumentError) as error:
        _load(gpu_document(**changes))
    assert path in [p for p, _ in error.value.errors]


def test_it_names_every_negative_step_and_an_empty_file():
    document = gpu_document()
    document["steps"][3]["seconds"] = -0.5
    document["samples"][1]["gpu_util_pct"] = 140
    with pytest.raises(BenchmarkDocumentError) as error:
        _load(document)
    assert {p for p, _ in error.value.errors} == {"steps[3].seconds", "samples[1].gpu_util_pct"}
    with pytest.raises(BenchmarkDocumentError, match="empty file"):
        load_document(b"  \n")


def test_unit_costs_by_hand():
    # 4.00 USD/h at 4096 tokens/s: 4 / (4096 x 3600) x 1e6 = 0.271267 USD per 1M tokens;
    # one 1.0 s step = 4 / 3600 = 0.001111; 2 samples per 1.0 s step -> 4 / (2 x 3600) x 1e6 = 555.555556.
    costs = unit_costs(
        price_per_hour=Decimal("4"), tokens_per_second=4096, step_seconds=1.0, samples_per_step=2
    )
    assert costs == {
        "per_million_tokens": Decimal("0.271267"),
        "per_step": Decimal("0.001111"),
        "per_million_samples": Decimal("555.555556"),
    }


def _gpu(util, cpu=10.0, used=20.0, total=80.0, gpu=0):
    return {
        "t_s": 0.0,
        "gpu": gpu,
        "gpu_util_pct": util,
        "cpu_util_pct": cpu,
        "memory_used_gib": used,
        "memory_total_gib": total,
    }


def test_data_loading_rule():
    assert diagnostics.data_loading([_gpu(30, cpu=95)] * 5).triggered
    assert not diagnostics.data_loading(
        [_gpu(30, cpu=40)] * 5
    ).triggered  # idle GPU, idle CPU: something else
    assert not diagnostics.data_loading([_gpu(95, cpu=95)] * 5).triggered


def test_periodic_stalls_rule():
    stalling = [_gpu(u) for u in (90, 0, 90, 90, 0, 0, 90, 90, 0, 90)]
    assert diagnostics.periodic_stalls(stalling).triggered
    one_dip = [_gpu(u) for u in (90, 0, 90, 90, 90, 90, 90, 90, 90, 90)]  # one stall of 10%: not periodic
    assert not diagnostics.periodic_stalls(one_dip).triggered


def test_memory_full_low_util_rule():
    assert diagnostics.memory_full_low_util([_gpu(40, used=76, total=80)] * 3).triggered  # 95% full, 40% busy
    assert not diagnostics.memory_full_low_util([_gpu(90, used=76, total=80)] * 3).triggered
    assert not diagnostics.memory_full_low_util([_gpu(40, used=40, total=80)] * 3).triggered


def test_uneven_gpus_rule():
    assert diagnostics.uneven_gpus([_gpu(95, gpu=0), _gpu(60, gpu=1)]).triggered  # 35 points apart
    assert not diagnostics.uneven_gpus([_gpu(95, gpu=0), _gpu(85, gpu=1)]).triggered
    assert not diagnostics.uneven_gpus([_gpu(95)]).triggered


def test_step_variation_rule():
    # steps/s 1.0, 1.0, 0.8: (1.0 - 0.8) / 1.0 = 20%, not more than 20%; 0.75 s -> 1.333 steps/s: 53%
    assert not diagnostics.step_variation([1.0, 1.0, 1.25]).triggered
    assert diagnostics.step_variation([1.0, 1.0, 0.75]).triggered


def test_small_batch_rule():
    assert diagnostics.small_batch([_gpu(50)] * 3, micro_batch_size=1).triggered
    assert not diagnostics.small_batch([_gpu(50)] * 3, micro_batch_size=8).triggered
    assert not diagnostics.small_batch([_gpu(85)] * 3, micro_batch_size=1).triggered


def test_memory_fit_rule():
    assert "tight" in diagnostics.memory_fit(75, 80).message  # 94%
    oversized = diagnostics.memory_fit(20, 80, cheaper_fit="L40S")
    assert oversized.triggered and "L40S" in oversized.message  # 25%
    assert not diagnostics.memory_fit(50, 80).triggered  # 62.5%


def test_communication_rule():
    assert diagnostics.communication(0.31).triggered and not diagnostics.communication(0.30).triggered


def test_the_communication_rule_reads_the_exposed_share_when_the_estimate_gives_it():
    # pres26: 45% of all traffic but 12% of the step exposed (the rest under compute) is not a scaling limit
    quiet = diagnostics.communication(0.45, 0.12)
    assert not quiet.triggered
    assert (
        quiet.message
        == "communication 12% of step time exposed (45% counting the traffic hidden under compute)"
    )
    assert diagnostics.communication(0.45, 0.31).triggered


def test_cpu_runs_do_not_trigger_gpu_rules():
    cpu_samples = [{"t_s": 0.0, "gpu": None, "cpu_util_pct": 99.0}]
    for rule in (diagnostics.data_loading, diagnostics.periodic_stalls, diagnostics.memory_full_low_util):
        assert not rule(cpu_samples).triggered


def test_shrinkage_by_hand():
    # Two runs at 1.2x the estimate: exp(2 ln 1.2 / (2 + 3)) = 1.2 ** 0.4 = 1.0757
    assert shrunk_factor([1.2, 1.2]) == pytest.approx(1.2**0.4)
    assert shrunk_factor([1.5]) == 1.0  # below the minimum sample count: the default stays


def test_calibration_errors_before_and_after():
    observations = [
        Observation("h100-sxm5-80gb", "qlora", 1200, 1000),
        Observation("h100-sxm5-80gb", "qlora", 1200, 1000),
    ]
    (fit,) = calibrate(observations)
    assert fit.samples == 2 and fit.throughput_error_before == pytest.approx(200 / 1200)
    assert fit.throughput_error_after == pytest.approx(abs(1000 * 1.2**0.4 - 1200) / 1200)
    assert fit.memory_factor == 1.0 and fit.memory_error_before is None


@given(st.lists(st.floats(0.2, 5.0), min_size=2, max_size=30))
def test_shrunk_factor_lies_between_one_and_the_data(ratios):
    geometric = math.exp(sum(map(math.log, ratios)) / len(ratios))
    factor = shrunk_factor(ratios)
    assert min(1.0, geometric) - 1e-9 <= factor <= max(1.0, geometric) + 1e-9
