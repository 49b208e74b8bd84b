"""The runner's CPU path end to end, as CI runs it: run -> JSON -> import -> unit cost -> diagnostics -> calibration."""

import json
import os

import pytest

try:
    import torch
except ImportError:  # requirements-dev.txt includes requirements-bench.txt, so CI always has torch
    if os.environ.get("REQUIRE_SERVICES") == "1":
        raise
    pytest.skip("torch is not installed (pip install -r requirements-bench.txt)", allow_module_level=True)

from procurement.benchmarks import runner  # noqa: E402

TRAINING = """
name: llama-lora-cpu
task: lora
model: {preset: llama-3.1-8b}
seq_len: 512
gradient_checkpointing: full
lora: {rank: 8, targets: [q_proj, v_proj]}
training_tokens: 1.0e8
"""
SERVING = """
name: llama-serve-cpu
task: inference
model: {preset: llama-3.1-8b}
inference: {concurrency: 16, context_len: 2048, output_tokens: 64}
"""


def _run(tmp_path, text, *extra):
    spec, output = tmp_path / "spec.yaml", tmp_path / "run.json"
    spec.write_text(text)
    assert (
        runner.main(
            [
                str(spec),
                "--steps",
                "4",
                "--warmup-steps",
                "1",
                "--device",
                "cpu",
                "--output",
                str(output),
                *extra,
            ]
        )
        == 0
    )
    return json.loads(output.read_text()), output


def test_a_training_run_writes_the_documented_fields(tmp_path):
    document, _ = _run(tmp_path, TRAINING)
    assert document["schema_version"] == 1 and document["run"]["mode"] == "training"
    assert document["run"]["tiny_cpu_model"] is True and document["run"]["seq_len"] == 64  # capped on CPU
    measured = [s for s in document["steps"] if not s["warmup"]]
    assert len(measured) == 4 and len(document["steps"]) == 5
    summary = document["summary"]
    # tokens/s is tokens per step over the median step time: micro-batch 1 x 64 tokens
    assert summary["tokens_per_second_median"] == pytest.approx(64 / summary["step_seconds_median"])
    # LoRA r=8 on q and v of the tiny model: 2 layers x (A 64x8 + B 8x64 for q, A 64x8 + B 8x32 for v) = 3,584
    assert document["run"]["trainable_params_run"] == 2 * ((64 * 8 + 8 * 64) + (64 * 8 + 8 * 32))
    assert document["environment"]["gpu_name"] is None and document["samples"]


def test_an_inference_run_decodes_every_stream(tmp_path):
    document, _ = _run(tmp_path, SERVING)
    assert document["run"]["concurrency"] == 4 and document["summary"]["tokens_per_step"] == 4
    assert document["summary"]["prefill_seconds"] > 0


@pytest.mark.django_db
def test_cpu_path_end_to_end(tmp_path, bundled_catalog, client_as, team_named):
    from django.core.management import call_command

    from procurement import models
    from procurement.services.calibration import calibration_fits

    document, output = _run(tmp_path, TRAINING, "--price-per-hour", "0.5", "--instance-type", "g6e.xlarge")
    team_named("research")
    call_command("import_benchmark", str(output), "--team", "research")  # its engineers see it
    row = models.BenchmarkResult.objects.get()
    assert row.cpu_only and row.gpu is None and row.instance_type.name == "g6e.xlarge"
    # 0.50 USD/h / (tokens/s x 3600) x 1e6
    expected = 0.5 / (document["summary"]["tokens_per_second_median"] * 3600) * 1e6
    assert float(row.unit_costs["per_million_tokens"]) == pytest.approx(expected, abs=1e-6)
    assert any(finding["rule"] == "step_variation" for finding in row.diagnostics)
    fits, skipped = calibration_fits()
    assert fits == [] and skipped == 1  # a tiny CPU model calibrates nothing, and says so
    page = client_as("engineer", team="research").get(f"/benchmarks/{row.pk}/").content.decode()
    assert "CPU path run with a tiny model" in page


def test_the_runner_refuses_cuda_without_a_gpu(tmp_path, capsys):
    if torch.cuda.is_available():
        pytest.skip("a GPU is present")
    spec = tmp_path / "spec.yaml"
    spec.write_text(TRAINING)
    with pytest.raises(SystemExit):
        runner.main([str(spec), "--device", "cuda", "--output", str(tmp_path / "x.json")])
    assert "no CUDA device" in capsys.readouterr().err


def test_the_runner_imports_no_django():
    import subprocess
    import sys

    code = "import sys, procurement.benchmarks.runner; sys.exit(1 if 'django' in sys.modules else 0)"
    assert subprocess.run([sys.executable, "-c", code], check=False).returncode == 0
