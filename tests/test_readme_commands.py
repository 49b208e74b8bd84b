"""Every command of the README's "Try it" block runs as written, in a fresh copy of the checkout with no
variable set (issue 30): the local settings, a new SQLite file under the copy's var/, in-process Celery.

The bill's figures are hand sums of examples/bill-focus.csv, whose prices are the bundled catalog's
us-east-1 rates (pricing/data/skypilot/aws/vms.gpu.csv): p5.48xlarge 55.04 x 10 h = 550.40,
p4d.24xlarge 21.957642 x 24 h = 526.98, g6e.xlarge spot 0.9154 x 12 h = 10.98, g5.xlarge 1.006 x 24 h
= 24.14; GPU spend 1,112.50 USD over 8x10 + 8x24 + 12 + 24 = 308 GPU-hours.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()
# Named in the README's "Using it" table but needing a network, credentials, a GPU or a measured run
# file: not in the block, said so next to it.
NOT_RUNNABLE_HERE = {"refresh_prices", "pull_cost_explorer", "import_benchmark", "commitments", "recompute"}


def _block_commands() -> list[str]:
    block = README.split("<!-- readme-commands:start -->", 1)[1].split("<!-- readme-commands:end -->", 1)[0]
    return [line.strip() for line in block.splitlines() if line.strip().startswith(".venv/bin/python")]


def _fresh_checkout(folder: Path) -> Path:
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    copy = folder / "checkout"
    for name in filter(None, listed.stdout.split("\0")):
        source = ROOT / name
        if source.is_file():
            (copy / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, copy / name)
    (copy / ".venv").symlink_to(Path(sys.prefix))  # the virtualenv these tests run in
    return copy


def test_the_block_uses_the_examples_and_covers_the_tables_commands():
    commands = _block_commands()
    ran = {command.split()[2] for command in commands}
    table = README.split("## Using it", 1)[1].split("### Try it", 1)[0]
    named = set(re.findall(r"`manage\.py (\w+)", table))
    assert named - ran <= NOT_RUNNABLE_HERE, named - ran - NOT_RUNNABLE_HERE
    for example in ("lora-finetune.yaml", "full-finetune-8gpu.yaml", "serve-70b.yaml", "tco-study.yaml"):
        assert any(f"examples/{example}" in command for command in commands), example
        assert (ROOT / "examples" / example).exists()
    assert any("examples/bill-focus.csv" in command for command in commands)


@pytest.mark.slow
def test_every_readme_command_runs_as_written_in_a_clean_environment(tmp_path):
    checkout = _fresh_checkout(tmp_path)
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}  # nothing of gpuledger's: no DEBUG, no URLs
    outputs = {}
    for command in _block_commands():
        done = subprocess.run(
            ["bash", "-c", command], cwd=checkout, env=env, capture_output=True, text=True, timeout=180
        )
        assert done.returncode == 0, f"{command}\n{done.stdout[-1500:]}\n{done.stderr[-3000:]}"
        assert "Traceback" not in done.stderr, f"{command}\n{done.stderr[-3000:]}"
        # a command's output is its answer: no in-process Celery task log, no kombu warning about the
        # in-memory broker (x30: `import_billing` printed both between its progress bars)
        for noise in ("No hostname was supplied", "] succeeded in "):
            assert noise not in done.stderr, f"{command}\n{done.stderr[-3000:]}"
        outputs[command] = done.stdout
    assert (checkout / "var" / "gpuledger.sqlite3").exists()  # the embedded database, fresh
    review = next(
        out for command, out in outputs.items() if " spend_review " in command and "report" not in command
    )
    assert (
        "GPU spend 1,112.50 USD effective (1,112.50 billed), 308.00 GPU-hours" in review
    )  # separators (x30)
    assert "non-GPU spend 5.20 USD" in review
    for name in ("spot.pdf", "spend.pdf"):
        assert (checkout / name).read_bytes()[:5] == b"%PDF-"
    assert (checkout / "tco.xlsx").read_bytes()[:2] == b"PK"
    job = next(out for command, out in outputs.items() if " job_cost " in command)
    assert '"total": "17.50"' in job  # 3.5 USD/h x 5 h


def test_make_run_prints_the_url_and_the_demo_users_not_pips_output():
    # `make -n` prints the recipe without running it: pip's and the set-up's output go to var/ logs, and
    # the last things said are the demo users, the URL and the server's own lines.
    # Under `make test` the suite runs inside make: a nested make would print "Entering/Leaving directory"
    # lines, so it runs as a user's would, without the parent's make variables.
    env = {key: value for key, value in os.environ.items() if key not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL")}
    done = subprocess.run(
        ["make", "--no-print-directory", "-n", "run", "-W", "requirements.txt"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )
    assert done.returncode == 0, done.stderr
    lines = [line for line in done.stdout.splitlines() if line.strip()]
    for line in lines:
        if "pip install" in line:
            assert "var/pip.log 2>&1" in line, line
    assert "load_catalog" in done.stdout and "var/make-run.log 2>&1" in done.stdout
    assert "manage.py demo_users" in lines[-3] and "Serving http://" in lines[-2] and "runserver" in lines[-1]
