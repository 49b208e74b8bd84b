"""`manage.py size` prints shares as percentages (issue 30, item 5; x30 read "util 1.72" and
"communication_share 0.083" following the README's "Try it" block).

Hand check on examples/full-finetune-8gpu.yaml on 8 H100 SXM5: the table's GiB/GPU over the card's
driver-reported 81,559 MiB = 79.65 GiB (pricing/data/gpu_specs.csv, SkyPilot's vast/vms.csv MemoryInfo)
is the memory share printed, to the whole percent."""

from __future__ import annotations

import json
import re
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command

pytestmark = pytest.mark.django_db
SPEC = Path(__file__).resolve().parents[2] / "examples" / "full-finetune-8gpu.yaml"


def test_memory_and_communication_shares_are_percentages(bundled_catalog):
    table, as_json = StringIO(), StringIO()
    call_command("size", str(SPEC), "--gpu", "h100-sxm5-80gb", stdout=table)
    call_command("size", str(SPEC), "--gpu", "h100-sxm5-80gb", "--format", "json", stdout=as_json)
    report = json.loads(as_json.getvalue())
    text = table.getvalue()
    row = next(line for line in text.splitlines() if line.startswith("h100-sxm5-80gb "))
    gib = float(row.split()[4])
    assert row.split()[3] == f"{gib / (81_559 / 1024):.0%}"  # 24.89 / 79.65 = 31%
    share = report["throughput"]["communication_share"]
    assert re.search(rf"communication_share\s+{share:.0%}$", text, re.MULTILINE)
    header = next(line for line in text.splitlines() if line.startswith("gpu "))
    assert " memory " in header and " util " not in header
