"""Fitted calibration factors applied to `size` and recommendations (issue 10 §4, "left from last time" 1)."""

import json
import math

import pytest

from procurement.api.sizing import size_spec_document
from procurement.benchmarks.calibration import PRIOR_WEIGHT
from procurement.services.benchmarks import benchmark_import
from procurement.services.calibration import calibration_factors
from tests.procurement.benchmarks.helpers import QLORA_SPEC, gpu_document

pytestmark = pytest.mark.django_db

H100 = "h100-sxm5-80gb"


def _import(tokens_per_second: float, peak_gib: float, name: str):
    document = gpu_document(
        summary__tokens_per_second_median=tokens_per_second, summary__peak_memory_allocated_gib=peak_gib
    )
    return benchmark_import(json.dumps(document).encode(), source=name).result


def _candidate(report: dict) -> dict:
    return next(c for c in report["candidates"] if c["gpu"] == H100 and c["gpus"] == 1)


def test_one_run_is_below_the_minimum_and_changes_nothing(bundled_catalog):
    _import(4096.0, 20.0, "one.json")
    assert calibration_factors() == {}
    candidate = _candidate(size_spec_document(dict(QLORA_SPEC), [H100]))
    assert candidate["calibration"] == {"throughput": None, "memory": None}


def test_two_runs_calibrate_size_by_the_shrunk_factor(bundled_catalog):
    first, second = _import(4096.0, 20.0, "a.json"), _import(6144.0, 24.0, "b.json")
    estimated = first.estimate["tokens_per_second"]  # the uncalibrated engine figure for one H100
    assert second.estimate["tokens_per_second"] == estimated
    # Shrinkage toward 1 with a prior worth 3 runs: factor = exp((ln r1 + ln r2) / (2 + 3)), r = measured / estimated.
    speed = math.exp((math.log(4096 / estimated) + math.log(6144 / estimated)) / (2 + PRIOR_WEIGHT))
    peak = first.estimate["peak_memory_gib"]
    memory = math.exp((math.log(20.0 / peak) + math.log(24.0 / peak)) / (2 + PRIOR_WEIGHT))
    factor = calibration_factors()[(H100, "qlora")]
    assert factor.samples == 2
    assert factor.throughput_factor == pytest.approx(speed)
    assert factor.memory_factor == pytest.approx(memory)

    plain = _candidate(size_spec_document(dict(QLORA_SPEC), [H100], calibrate=False))
    calibrated = _candidate(size_spec_document(dict(QLORA_SPEC), [H100]))
    # The factor scales the GPU's efficiency (MFU). At 2,048 tokens the eager-PEFT step is bound by its host-bound
    # forward plus the GPU's work after it (lora_host, cls45c: HF Trainer syncs every micro-batch), whose host part
    # the factor does not scale, so tokens/s moves by less than the factor, in its direction.
    plain_speed = plain["throughput"]["training_tokens_per_second"]
    moved = calibrated["throughput"]["training_tokens_per_second"]
    assert min(plain_speed, plain_speed * speed) < moved < max(plain_speed, plain_speed * speed)
    # One GPU, no collectives, a GPU-bound step (8,192 tokens): tokens/s is proportional to the MFU, so it moves
    # by the factor exactly.
    long = dict(QLORA_SPEC, seq_len=8192)
    plain_long = _candidate(size_spec_document(long, [H100], calibrate=False))
    calibrated_long = _candidate(size_spec_document(long, [H100]))
    assert calibrated_long["throughput"]["training_tokens_per_second"] == pytest.approx(
        plain_long["throughput"]["training_tokens_per_second"] * speed, rel=1e-3
    )
    assert calibrated["throughput"]["mfu"] == pytest.approx(0.40 * speed, abs=1e-3)
    assert calibrated["total_per_gpu_gib"] == pytest.approx(plain["total_per_gpu_gib"] * memory, abs=2e-3)
    assert calibrated["calibration"]["throughput"] == f"calibrated from 2 runs (factor {speed:.2f})"
    assert calibrated["calibration"]["memory"] == f"calibrated from 2 runs (factor {memory:.2f})"
    assert plain["calibration"] == {"throughput": None, "memory": None}
    # Another method on the same GPU is not calibrated by QLoRA runs.
    lora = _candidate(size_spec_document(dict(QLORA_SPEC, task="lora"), [H100]))
    assert lora["calibration"] == {"throughput": None, "memory": None}


def test_the_sizing_api_takes_calibrate_false_and_rejects_a_bad_value(bundled_catalog, client_as):
    _import(4096.0, 20.0, "a.json")
    _import(6144.0, 24.0, "b.json")
    client = client_as("engineer")
    url = f"/api/size/?gpu={H100}"
    on = client.post(url, QLORA_SPEC, content_type="application/json").json()
    off = client.post(url + "&calibrate=false", QLORA_SPEC, content_type="application/json").json()
    assert _candidate(on)["calibration"]["throughput"].startswith("calibrated from 2 runs")
    assert _candidate(off)["calibration"]["throughput"] is None
    bad = client.post(url + "&calibrate=maybe", QLORA_SPEC, content_type="application/json")
    assert bad.status_code == 400 and bad.json()["errors"][0]["path"] == "calibrate"


def test_recommendations_apply_the_factor_unless_asked_not_to(bundled_catalog):
    from procurement.services.recommendations import ranking_options_parse, recommendation_compute
    from procurement.sizing import parse_workload_spec

    _import(4096.0, 20.0, "a.json")
    _import(6144.0, 24.0, "b.json")
    spec = parse_workload_spec(QLORA_SPEC)
    # Only runs at 1 GPU exist; other counts and GPUs stay as they were. Compare the 1-GPU H100 rows.
    filters = {"gpus": ["h100-pcie-80gb", H100], "top": 200}
    on = recommendation_compute(spec=spec, options=ranking_options_parse(filters)).results
    off = recommendation_compute(
        spec=spec, options=ranking_options_parse(filters | {"calibrate": False})
    ).results
    assert ranking_options_parse({"calibrate": False}).use_calibration is False
    calibrated = [
        r for r in on if r["gpu"] == H100 and any("calibrated from 2 runs" in x for x in r["reasons"])
    ]
    assert calibrated
    assert not any("calibrated" in reason for row in off for reason in row["reasons"])


def test_the_sizing_page_says_which_rows_are_calibrated(bundled_catalog, client_as):
    _import(4096.0, 20.0, "a.json")
    _import(6144.0, 24.0, "b.json")
    page = client_as("engineer").post("/size/", {"spec": json.dumps(QLORA_SPEC)}).content.decode()
    assert "speed calibrated from 2 runs (factor" in page and "memory calibrated from 2 runs (factor" in page


def test_a_multi_gpu_run_is_compared_with_the_estimate_at_its_gpu_count(bundled_catalog):
    # An 8-GPU run's tokens/s is a cluster total: comparing it with the 1-GPU estimate would fit a factor
    # near 8. QLoRA 8B data parallel on 8 H100s hides its adapter all-reduce: the 8-GPU estimate is 8x.
    one = _import(4096.0, 20.0, "one-gpu.json")
    eight = benchmark_import(
        json.dumps(
            gpu_document(environment__gpus_used=8, summary__tokens_per_second_median=32768.0)
        ).encode(),
        source="eight-gpu.json",
    ).result
    assert eight.estimate["tokens_per_second"] == pytest.approx(
        8 * one.estimate["tokens_per_second"], rel=1e-3
    )
    assert eight.estimate["measured_tokens_per_second_full_depth"] / eight.estimate["tokens_per_second"] == (
        pytest.approx(4096.0 / one.estimate["tokens_per_second"], rel=1e-3)
    )


def test_the_size_command_notes_calibration_and_can_turn_it_off(bundled_catalog, tmp_path):
    from io import StringIO

    from django.core.management import call_command

    _import(4096.0, 20.0, "a.json")
    _import(6144.0, 24.0, "b.json")
    path = tmp_path / "spec.json"
    path.write_text(json.dumps(QLORA_SPEC))
    on, off = StringIO(), StringIO()
    call_command("size", str(path), "--gpu", H100, stdout=on)
    call_command("size", str(path), "--gpu", H100, "--no-calibration", stdout=off)
    assert "speed calibrated from 2 runs (factor" in on.getvalue()
    assert "calibrated" not in off.getvalue()
