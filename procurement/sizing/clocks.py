"""The clocks the catalog's peaks are stated at (procurement/data/gpu_clocks.csv), for the cards whose vendor
whitepaper or datasheet states their SMs (AMD: compute units) and either the clock or a peak that fixes it.

A kernel's fixed latency (launch into the SMs, prologue, the last wave's tail) is a number of clock cycles, so
the work a card needs to hide it scales with its dense FLOPs per clock (peak / clock, i.e. SMs x tensor FLOPs
per SM per clock: the card's width), not with its peak: a card that reaches its peak through a high clock
(GeForce Ada at 2.52 GHz) hides it behind less work than one of the same peak at 1.41 GHz (A100). Each row's
SMs x tensor FLOPs per SM per clock x clock reproduces the catalogued dense fp16 peak within 1%
(tests/procurement/sizing/test_gpu_clocks.py), so peak / clock is the card's width. Slot-powered cards (T4,
L4) have rows too: a card that cannot hold its boost clock under load (assumptions.SLOT_POWERED_CARD_W) runs
fewer cycles a second, not fewer FLOPs a cycle, so its width is the datasheet's. Cards without a row (no
vendor-stated SM count: B200, GB200, H20, Gaudi) are scaled by their peak alone (the reference clock).
The clock is the one the tensor peaks are stated at: NVIDIA states Hopper's FP32 peak at its higher maximum
boost (1,980 vs 1,830 MHz on the SXM5) and the L40S's at 2,520 vs 2,490 MHz, so an fp32 network's FLOPs per
clock read up to 8% high there.
"""

from __future__ import annotations

import csv
from functools import lru_cache
from pathlib import Path

from procurement.sizing.gpus import GpuSpec

DATA = Path(__file__).resolve().parents[1] / "data" / "gpu_clocks.csv"


@lru_cache(maxsize=1)
def boost_clocks_mhz() -> dict[str, float]:
    with DATA.open(newline="", encoding="utf-8") as handle:
        return {row["gpu"]: float(row["boost_clock_mhz"]) for row in csv.DictReader(handle)}


def peak_clock_hz(gpu: GpuSpec) -> float | None:
    """The clock the card's datasheet peak is stated at, in Hz; None where no row is bundled."""
    mhz = boost_clocks_mhz().get(gpu.slug)
    return None if mhz is None else mhz * 1e6


@lru_cache(maxsize=1)
def sm_counts() -> dict[str, int]:
    with DATA.open(newline="", encoding="utf-8") as handle:
        return {row["gpu"]: int(row["sms"]) for row in csv.DictReader(handle) if row.get("sms")}


def sm_count(gpu: GpuSpec) -> int | None:
    """The card's streaming multiprocessors (AMD: compute units) as its vendor states them; None where no
    row is bundled."""
    return sm_counts().get(gpu.slug)
