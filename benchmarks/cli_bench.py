"""How fast the README's commands answer (issue 30): each one as a user runs it, a fresh process on the
bundled catalog, against a baseline measured in the same run.

    .venv/bin/python benchmarks/cli_bench.py              # 3 runs of each command, the median printed
    .venv/bin/python benchmarks/cli_bench.py --runs 1     # quicker

Sets up a throwaway var/ (migrate, the bundled catalog, examples/bill-focus.csv, a saved workload and
study) in a temporary folder, then times each command end to end (interpreter start, Django set-up,
imports, the work, output). Baseline: `django.setup()` alone on the same settings, the floor every
command pays; each command's ratio to it says how much is its own. Targets: 2 s for a command, 3 s for
a report PDF (PASS/MISS). Wall time depends on the machine's load: the CPU time (user + system) is
printed beside it, and the ratio is of wall times measured back to back.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PYTHON = sys.executable
COMMAND_TARGET_S, PDF_TARGET_S = 2.0, 3.0
SETUP = [
    ["migrate", "--no-input"],
    ["load_catalog"],
    ["import_billing", "examples/bill-focus.csv", "--no-progress"],
    ["recommend", "examples/lora-finetune.yaml", "--top", "5", "--save"],
    ["tco", "examples/tco-study.yaml", "--save"],
]
COMMANDS = [
    ["gpus"],
    ["job_cost", "--price-per-hour", "3.5", "--hours", "5", "--currency", "USD", "--format", "json"],
    ["size", "examples/lora-finetune.yaml"],
    ["recommend", "examples/lora-finetune.yaml", "--top", "5"],
    ["recommend", "examples/serve-70b.yaml", "--top", "5"],
    ["tco", "examples/tco-study.yaml"],
    ["spend_review", "--from", "2026-11-01", "--to", "2026-12-01"],
    ["budgets", "--month", "2026-11"],
    ["report", "spot", "--id", "1", "--format", "pdf", "--output", "{tmp}/spot.pdf"],
    ["report", "rent_or_buy", "--id", "1", "--format", "pdf", "--output", "{tmp}/tco.pdf"],
    [
        "report",
        "spend_review",
        "--from",
        "2026-11-01",
        "--to",
        "2026-12-01",
        "--format",
        "pdf",
        "--output",
        "{tmp}/spend.pdf",
    ],
]
BASELINE = "import django; django.setup()"


def _timed(arguments: list[str], env: dict) -> tuple[float, float]:
    """(wall seconds, CPU seconds of the child) of one run."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(arguments, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(arguments)} failed:\n{done.stderr[-2000:]}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="gpuledger-cli-bench-") as tmp:
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": tmp,
            "GPULEDGER_VAR_DIR": tmp,
            "DJANGO_SETTINGS_MODULE": "gpuledger.settings.local",
        }
        for step in SETUP:
            _timed([PYTHON, "manage.py", *step], env)
        rows = []
        base = statistics.median(_timed([PYTHON, "-c", BASELINE], env)[0] for _ in range(args.runs))
        print(f"baseline django.setup(): {base:.2f} s (median of {args.runs})")
        print(f"{'command':<70} {'wall s':>7} {'cpu s':>6} {'x base':>7}  target")
        for command in COMMANDS:
            arguments = [part.replace("{tmp}", tmp) for part in command]
            runs = [_timed([PYTHON, "manage.py", *arguments], env) for _ in range(args.runs)]
            wall = statistics.median(run[0] for run in runs)
            cpu = statistics.median(run[1] for run in runs)
            target = PDF_TARGET_S if "pdf" in command else COMMAND_TARGET_S
            verdict = "PASS" if wall < target else "MISS"
            label = " ".join(command).replace("{tmp}/", "")
            rows.append(verdict)
            print(f"{label[:70]:<70} {wall:7.2f} {cpu:6.2f} {wall / base:7.2f}  {verdict} (< {target:.0f} s)")
        load, cores = os.getloadavg()[0], os.cpu_count() or 1
        print(f"{rows.count('PASS')} of {len(rows)} within target; load average {load:.1f} on {cores} cores")
        if load > cores:
            print("the machine is busier than its cores: wall times include waiting for a core; the CPU time")
            print("is what an idle machine's wall time approaches (plus file reads)")


if __name__ == "__main__":
    main()
