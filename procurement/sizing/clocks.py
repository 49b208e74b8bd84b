"""Datasheet boost clocks of the cards whose whitepapers state them (procurement/data/gpu_clocks.csv).

A kernel's fixed latency (launch into the SMs, prologue, the last wave's tail) is a number of clock cycles, so
the work a card needs to hide it scales with its dense FLOPs per clock (peak / clock), not with its peak: a
card that reaches its peak through a high clock (GeForce Ada at 2.52 GHz) hides it behind less work than one
of the same peak at 1.41 GHz (A100). Each row's SMs x tensor FLOPs per SM per clock x clock reproduces the
catalogued dense fp16 peak (tests/procurement/sizing/test_gpu_clocks.py), so the clock is the one the peak is
stated at.
"""

from __future__ import annotations

import csv
from functools import lru_cache
from pathlib import Path

from procurement.sizing.assumptions import SLOT_POWERED_CARD_W
from procurement.sizing.gpus import GpuSpec

DATA = Path(__file__).resolve().parents[1] / "data" / "gpu_clocks.csv"


@lru_cache(maxsize=1)
def boost_clocks_mhz() -> dict[str, float]:
    with DATA.open(newline="", encoding="utf-8") as handle:
        return {row["gpu"]: float(row["boost_clock_mhz"]) for row in csv.DictReader(handle)}


def sustained_clock_hz(gpu: GpuSpec) -> float | None:
    """The card's datasheet boost clock in Hz; None where none is bundled, and for slot-powered cards
    (board power at most SLOT_POWERED_CARD_W: the T4, the L4), which cannot hold their boost clock under
    sustained tensor-core load (assumptions.SLOT_POWERED_CARD_W)."""
    if gpu.tdp_w is not None and gpu.tdp_w <= SLOT_POWERED_CARD_W.value:
        return None
    mhz = boost_clocks_mhz().get(gpu.slug)
    return None if mhz is None else mhz * 1e6
