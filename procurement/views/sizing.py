"""Sizing page: paste a workload spec (or pick a preset) and see memory per GPU, verdicts and speed.

Uses the same `size_spec_document` as the API and `manage.py size`; nothing is stored.
"""

from __future__ import annotations

from django.shortcuts import render

from gpuledger.charts import stacked_bar_chart
from procurement.api.sizing import size_spec_document
from procurement.sizing import WorkloadSpecError
from procurement.sizing.documents import load_spec_text
from procurement.sizing.presets import IMAGE_TIERS, known_preset_names

EXAMPLE_SPEC = """name: llama-3.1-8b-qlora
task: qlora
model: {preset: llama-3.1-8b}
precision: bf16
micro_batch_size: 4
seq_len: 2048
gradient_checkpointing: full
lora: {rank: 16, targets: all-linear}
training_tokens: 2.0e+8
parallelism: {gpus: 1}
"""
# Memory breakdown key -> the label of its bar segment.
BAR_PARTS = {
    "weights_gib": "weights",
    "gradients_gib": "gradients",
    "optimizer_states_gib": "optimizer",
    "activations_gib": "activations",
    "kv_cache_gib": "KV cache",
    "framework_overhead_gib": "overhead",
}


def preset_example(preset: str) -> str:
    tier = IMAGE_TIERS.get(preset)
    task = tier.tasks[0] if tier else "qlora"
    return f"name: {preset}\ntask: {task}\nmodel: {{preset: {preset}}}\nparallelism: {{gpus: 1}}\n"


def sizing_page(request):
    text = EXAMPLE_SPEC
    if request.GET.get("preset") in known_preset_names():
        text = preset_example(request.GET["preset"])
    report, errors = None, []
    if request.method == "POST":
        text = request.POST.get("spec", "")
        try:
            report = size_spec_document(load_spec_text(text, "spec"))
        except WorkloadSpecError as error:
            errors = [field.as_dict() for field in error.errors]
    context = {
        "text": text,
        "errors": errors,
        "report": report,
        "presets": known_preset_names(),
        "selected_preset": request.GET.get("preset", ""),
    }
    if report:
        context["memory_chart_svg"] = memory_chart(report)
        context["speed_keys"] = speed_keys(report["workload"]["task"])
    return render(request, "procurement/sizing.html", context)


def memory_chart(report: dict) -> str:
    candidates = [c for c in report["candidates"] if c["total_per_gpu_gib"] is not None]
    series = {
        label: [candidate["memory"][key] or 0.0 for candidate in candidates]
        for key, label in BAR_PARTS.items()
    }
    return stacked_bar_chart(
        [f"{c['gpus']} x {c['gpu']}" for c in candidates],
        series,
        unit="GiB",
        title="Memory per GPU by candidate (tick: card capacity)",
        reference_lines={"card capacity": [c["capacity_gib"] for c in candidates]},
    )


def speed_keys(task: str) -> list[str]:
    if task == "inference":
        return [
            "decode_tokens_per_second_per_stream",
            "decode_tokens_per_second_total",
            "time_to_first_token_seconds",
        ]
    return ["training_tokens_per_second", "training_hours", "communication_share"]
