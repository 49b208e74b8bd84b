"""python manage.py size FILE: memory per GPU, speed, verdicts and host sizing for a workload spec.

FILE is YAML or JSON (docs/workload-spec.md). GPUs come from the catalog; `--gpu SLUG` (repeatable)
narrows them. On bad input every offending field is printed by its path and the exit code is 2.
"""

from __future__ import annotations

import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from procurement.services.sizing import size_spec_document
from procurement.sizing import WorkloadSpecError
from procurement.sizing.documents import load_spec_text
from procurement.sizing.mfu import CALIBRATION_LABELS

BAD_INPUT = 2


class Command(BaseCommand):
    help = "Size a workload spec (YAML/JSON) on the catalog GPUs: memory breakdown, speed, verdicts."
    # No system checks: they import every URL conf and view, most of a one-shot command's start-up
    # (issue 9); `manage.py check` runs them in CI and at deploy.
    requires_system_checks: list[str] = []

    def add_arguments(self, parser):
        parser.add_argument("file", help="workload spec, YAML or JSON")
        parser.add_argument("--format", choices=["json", "table"], default="table")
        parser.add_argument(
            "--gpu", action="append", default=[], help="GPU slug (repeatable; see `manage.py gpus`)"
        )
        parser.add_argument(
            "--gpus", action="append", type=int, default=[], help="GPU count to size (repeatable)"
        )
        parser.add_argument(
            "--vcpus-per-gpu",
            type=float,
            default=None,
            help="the host's vCPUs per GPU (sets host.vcpus_per_gpu: they feed an image loader)",
        )
        parser.add_argument(
            "--no-calibration",
            action="store_true",
            help="ignore the factors fitted from stored benchmarks (the uncalibrated estimate)",
        )

    def handle(self, *args, **options):
        path = Path(options["file"])
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as error:
            raise CommandError(f"{path}: {error.strerror}", returncode=BAD_INPUT) from None
        try:
            document = load_spec_text(text, str(path))
            if options["vcpus_per_gpu"] is not None and isinstance(document, dict):
                host = document.get("host") if isinstance(document.get("host"), dict) else {}
                document = document | {"host": host | {"vcpus_per_gpu": options["vcpus_per_gpu"]}}
            report = size_spec_document(
                document,
                options["gpu"],
                options["gpus"] or None,
                calibrate=not options["no_calibration"],
            )
        except WorkloadSpecError as error:
            lines = [f"{field.path}: {field.message}" for field in error.errors]
            raise CommandError(
                f"{path}: invalid workload spec\n" + "\n".join(lines), returncode=BAD_INPUT
            ) from None
        if options["format"] == "json":
            self.stdout.write(json.dumps(report, indent=2))
        else:
            self.stdout.write(render_table(report))


def _number(value, digits: int = 2) -> str:
    return "-" if value is None else f"{value:,.{digits}f}"


def _percent(value) -> str:
    """A share as a percentage (issue 30: "shares as percentages"): 0.31 -> "31%", 1.72 -> "172%"."""
    return "-" if value is None else f"{value:.0%}"


def render_table(report: dict) -> str:
    workload, memory = report["workload"], report["memory"]
    lines = [f"{workload['name']}: {workload['task']} of {workload['model']} ({workload['estimate']})", ""]
    longest = workload.get("max_seq_len")
    at_longest = (
        f" (activations at max_seq_len {longest:,} tokens; speed at seq_len {workload['seq_len']:,})"
        if longest and longest > workload["seq_len"]
        else ""
    )
    lines.append(f"Memory per GPU at {workload['parallelism']['gpus']} GPU(s), GiB{at_longest}:")
    lines += [f"  {key:<24} {_number(value):>10}" for key, value in memory.items()]
    throughput = report["throughput"]
    lines += ["", f"Speed on {throughput.get('gpus', '-')} x {throughput.get('gpu', '-')}:"]
    keys = _speed_keys(workload["task"], image="image" in workload)
    lines += [
        f"  {key:<38} {_percent(throughput.get(key)) if key.endswith('_share') else _number(throughput.get(key), 3):>14}"
        for key in keys
    ]
    accuracy = report.get("accuracy")
    if accuracy:  # how the engine did on published runs of this kind (procurement/sizing/accuracy.py)
        lines += [
            "",
            f"Throughput: {accuracy['throughput']['text']}"
            + (f"; {accuracy['throughput']['note']}" if accuracy["throughput"].get("note") else ""),
            f"Memory: {accuracy['memory']['text']}"
            + (f"; {accuracy['memory']['note']}" if accuracy["memory"].get("note") else ""),
        ]
    lines += [
        "",
        f"{'gpu':<22} {'n':>3} {'verdict':<13} {'memory':>6} {'GiB/GPU':>9} {'speed':>12}  remedy / warnings",
    ]
    speed_key = keys[0]
    for candidate in report["candidates"]:
        calibration = candidate.get("calibration") or {}  # "speed calibrated from N runs (factor x.xx)"
        calibrated = [
            f"{label} {calibration[key]}" for key, label in CALIBRATION_LABELS if calibration.get(key)
        ]
        note = candidate.get("remedy") or "; ".join(candidate["errors"] + candidate["warnings"] + calibrated)
        lines.append(
            f"{candidate['gpu']:<22} {candidate['gpus']:>3} {candidate['verdict']:<13} "
            f"{_percent(candidate['memory_utilization']):>6} {_number(candidate['total_per_gpu_gib']):>9} "
            f"{_number(candidate['throughput'].get(speed_key), 1):>12}  {note}"
        )
    host = report["host"]
    if host:
        lines += [
            "",
            f"Host per node: {host['vcpus_per_node']} vCPUs, {host['ram_gib_per_node']} GiB RAM, "
            f"{host['disk_gb_per_node']} GB disk",
        ]
    return "\n".join(lines)


def _speed_keys(task: str, image: bool = False) -> tuple[str, ...]:
    """An image workload's speed in images (its JSON keys, report.py IMAGE_*_ALIASES), not tokens."""
    if image:
        if task == "inference":
            return ("images_per_second", "seconds_per_batch")
        # evaluation_hours: the part of training_hours spent on image.eval_* passes (aud47i item 3)
        return ("training_images_per_second", "training_hours", "evaluation_hours", "communication_share")
    if task == "inference":
        return (
            "decode_tokens_per_second_total",
            "decode_tokens_per_second_per_stream",
            "time_to_first_token_seconds",
        )
    return ("training_tokens_per_second", "training_hours", "communication_share")
