"""A generic price file for the fault tests' refreshes, and the stored-data checks they share."""

from __future__ import annotations

import datetime as dt
import json
import subprocess
from pathlib import Path

HEADER = "provider,region,instance_type,gpu_model,gpu_count,vcpus,memory_gib,pricing_model,price_per_hour,currency,observed_at"
ROWS = 40


def price_file(folder: Path, *, rows: int = ROWS, name: str = "prices.csv") -> Path:
    """`rows` on-demand prices of distinct examplecloud instance types, observed yesterday."""
    day = (dt.datetime.now(dt.UTC) - dt.timedelta(days=1)).date().isoformat()
    lines = [HEADER] + [
        f"examplecloud,us-central,faults-x{i},H100-SXM,1,26,225,on_demand,{2 + i / 100:.2f},USD,{day}"
        for i in range(rows)
    ]
    path = folder / name
    path.write_text("\n".join(lines) + "\n")
    return path


def outcome(text: str) -> dict:
    """The driver's JSON line (the last line of its output)."""
    return json.loads(text.strip().splitlines()[-1])


def finished(process: subprocess.Popen, log: Path, timeout_s: float = 90) -> tuple[int, dict]:
    process.wait(timeout=timeout_s)
    return process.returncode, outcome(log.read_text())


PRICE_ROWS = "pricing_priceobservation"
DUPLICATE_PRICES = """
    SELECT count(*) FROM (
        SELECT 1 FROM pricing_priceobservation
        GROUP BY offer_id, pricing_model, payment_option, commitment_kind, observed_at, source HAVING count(*) > 1
    ) AS duplicated"""
