"""The sizing report as a page reads it: rows in words, each note once, the headline card named.

Presentation only: the numbers are the engine's (`procurement.sizing.size_workload`); this module
picks which to show, in what order and under what label. Formatting (separators, units, decimals)
is the template's, through `gpuledger.templatetags.formatting`.
"""

from __future__ import annotations

from procurement.sizing.memory import MEMORY_KEYS
from procurement.sizing.mfu import CALIBRATION_LABELS

TASK_WORDS = {
    "pretrain": "Pre-training",
    "full_finetune": "Full fine-tuning",
    "lora": "LoRA fine-tuning",
    "qlora": "QLoRA fine-tuning",
    "inference": "Serving",
}
VERDICT_BADGES = {"fits": "good", "oversized": "", "tight": "warn", "does_not_fit": "bad"}
TRAINING_SPEED_KEYS = ("training_tokens_per_second", "training_hours", "communication_share")
INFERENCE_SPEED_KEYS = (
    "decode_tokens_per_second_per_stream",
    "decode_tokens_per_second_total",
    "time_to_first_token_seconds",
)
# Image presets: the same figures named in images (procurement/sizing/report.py aliases).
IMAGE_TRAINING_SPEED_KEYS = ("training_images_per_second", "training_hours", "communication_share")
IMAGE_INFERENCE_SPEED_KEYS = ("images_per_second", "images_per_second_per_gpu", "seconds_per_batch")
TOKEN_SPEED_KEYS = set(TRAINING_SPEED_KEYS + INFERENCE_SPEED_KEYS) | {
    "decode_tokens_per_second_upper_bound",
    "decode_bound",
}
# How each speed figure is formatted: a share as %, hours with days, the rest to 3 significant figures.
SPEED_FORMATS = {
    "communication_share": "percent",
    "exposed_communication_share": "percent",
    "training_hours": "hours",
    "evaluation_hours": "hours",
    "mfu": "percent",
}
# Throughput keys that are not speeds (they name the card) or that a reader does not act on.
NOT_SPEEDS = {"gpu", "gpus", "estimate", "flops_per_token", "flops_per_image"}
# The speed the measured-accuracy line states, with its unit: the figure the headline card is chosen by.
ACCURACY_SPEEDS = {
    (False, False): ("training_tokens_per_second", "tokens/s"),
    (False, True): ("decode_tokens_per_second_total", "tokens/s, all streams"),
    (True, False): ("training_images_per_second", "images/s"),
    (True, True): ("images_per_second", "images/s"),
}
# Memory lines the breakdown adds up from, then the totals (shown in bold).
MEMORY_TOTALS = ("total_per_gpu_gib", "required_per_gpu_gib")


def speed_keys(task: str, image: bool = False) -> tuple[str, ...]:
    if image:
        return IMAGE_INFERENCE_SPEED_KEYS if task == "inference" else IMAGE_TRAINING_SPEED_KEYS
    return INFERENCE_SPEED_KEYS if task == "inference" else TRAINING_SPEED_KEYS


def _is_image_preset(report: dict) -> bool:
    return "image" in report["workload"]


def memory_rows(memory: dict) -> list[dict]:
    """Memory per GPU, parts first and totals last; lines that are zero for this task are left out."""
    parts = [k for k in MEMORY_KEYS if k not in MEMORY_TOTALS and k != "host_ram_gib"]
    rows = [{"key": key, "value": memory[key], "total": False} for key in parts if memory.get(key)]
    rows += [{"key": key, "value": memory.get(key), "total": True} for key in MEMORY_TOTALS if key in memory]
    if memory.get("host_ram_gib"):
        rows.append({"key": "host_ram_gib", "value": memory["host_ram_gib"], "total": False})
    return rows


def speed_rows(throughput: dict, image: bool = False) -> list[dict]:
    """The headline card's speed figures, each with its format; missing ones are left out (an image
    preset's token-named figures too: its images are shown under their own names)."""
    hidden = NOT_SPEEDS | (TOKEN_SPEED_KEYS - set(IMAGE_TRAINING_SPEED_KEYS) if image else set())
    return [
        {"key": key, "value": value, "format": SPEED_FORMATS.get(key, "speed")}
        for key, value in throughput.items()
        if key not in hidden and value is not None
    ]


def _note_key(text: str) -> str:
    return str(text).strip().rstrip(".").lower()


def shared_notes(candidates: list[dict]) -> list[str]:
    """Warnings every candidate carries (e.g. the image-tier caveat): shown once above the table."""
    if not candidates:
        return []
    common = {_note_key(w) for w in candidates[0]["warnings"]}
    for candidate in candidates[1:]:
        common &= {_note_key(w) for w in candidate["warnings"]}
    return [w for w in candidates[0]["warnings"] if _note_key(w) in common]


def _said_by_remedy(error: str, remedy: str) -> bool:
    """An error whose advice the remedy already gives ("bf16 needs Ampere ...: use fp16" beside the
    remedy "use fp16 (Turing has no BF16) or ..."), so the row says it once."""
    advice = error.rpartition(": ")[2].strip().rstrip(".").lower()
    return bool(advice) and remedy.strip().lower().startswith(advice)


def candidate_notes(candidate: dict, shared: list[str]) -> list[dict]:
    """The remedy (kind "fix"), then errors ("why"), then warnings, each once: an error whose advice the
    remedy gives, a note another note contains, and a warning every row has (shown above the table)
    are not said again."""
    skip = {_note_key(note) for note in shared}
    remedy = candidate.get("remedy") or ""
    items = [("fix", remedy)] if remedy else []
    items += [("why", e) for e in candidate["errors"] if not (remedy and _said_by_remedy(e, remedy))]
    items += [("warning", w) for w in candidate["warnings"]]
    calibration = candidate.get("calibration") or {}  # "speed calibrated from N runs (factor x.xx)"
    items += [
        ("calibrated", f"{label} {calibration[key]}")
        for key, label in CALIBRATION_LABELS
        if calibration.get(key)
    ]
    notes: list[dict] = []
    seen: list[str] = []
    for kind, text in items:
        key = _note_key(text)
        if not key or key in skip or any(key in other or other in key for other in seen):
            continue
        seen.append(key)
        notes.append({"kind": kind, "text": str(text).strip().rstrip(".")})
    return notes


def candidate_rows(report: dict) -> tuple[list[dict], list[str]]:
    """Table rows for the candidates, plus the notes they all share."""
    candidates = report["candidates"]
    shared = shared_notes(candidates)
    headline = (report["throughput"].get("gpu"), report["throughput"].get("gpus"))
    keys = speed_keys(report["workload"]["task"], _is_image_preset(report))
    rows = [
        {
            "candidate": c,
            "badge": VERDICT_BADGES.get(c["verdict"], ""),
            "speeds": [
                {"key": key, "value": c["throughput"].get(key), "format": SPEED_FORMATS.get(key, "speed")}
                for key in keys
            ],
            "notes": candidate_notes(c, shared),
            "headline": (c["gpu"], c["gpus"]) == headline,
        }
        for c in candidates
    ]
    return rows, shared


def accuracy_lines(report: dict, headline: dict | None) -> list[dict]:
    """The estimate next to how the engine did on published runs of its kind (issue 26 item 7): "Throughput:
    1,234 tokens/s, within 15% on 38 of 41 published runs of LoRA fine-tunes (median error 6%)"."""
    accuracy = report.get("accuracy")
    if not accuracy:
        return []
    key, unit = ACCURACY_SPEEDS[(_is_image_preset(report), report["workload"]["task"] == "inference")]
    memory = (headline or {}).get("total_per_gpu_gib", report["memory"].get("total_per_gpu_gib"))
    lines = [
        {"label": "Throughput", "value": report["throughput"].get(key), "format": "speed", "unit": unit},
        {"label": "Memory", "value": memory, "format": "gib", "unit": "per GPU"},
    ]
    for line, metric in zip(lines, ("throughput", "memory"), strict=True):
        line["text"] = accuracy[metric]["text"]
        if accuracy[metric].get("note"):  # the class does not speak for this workload (RT-DETR training)
            line["text"] += f"; {accuracy[metric]['note']}"
    return [line for line in lines if line["value"] is not None]


def sizing_display(report: dict) -> dict:
    """Everything the template shows of one sizing report."""
    rows, shared = candidate_rows(report)
    workload = report["workload"]
    headline = next((row["candidate"] for row in rows if row["headline"]), None)
    return {
        "task_words": TASK_WORDS.get(workload["task"], workload["task"]),
        "memory_rows": memory_rows(report["memory"]),
        "speed_keys": speed_keys(workload["task"], _is_image_preset(report)),
        "speed_columns": [
            {"key": key, "format": SPEED_FORMATS.get(key, "speed")}
            for key in speed_keys(workload["task"], _is_image_preset(report))
        ],
        "speed_rows": speed_rows(report["throughput"], _is_image_preset(report)),
        "candidate_rows": rows,
        "shared_notes": shared,
        "headline": headline,
        "feasible_count": sum(1 for row in rows if row["candidate"]["verdict"] != "does_not_fit"),
        "accuracy_lines": accuracy_lines(report, headline),
    }
