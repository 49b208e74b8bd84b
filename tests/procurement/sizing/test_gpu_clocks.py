"""The bundled boost clocks (procurement/data/gpu_clocks.csv) are the clocks the catalog's peaks are stated at."""

import csv

import pytest

from procurement.sizing import gpu_by_slug
from procurement.sizing.clocks import DATA, sustained_clock_hz


def _rows() -> list[dict]:
    with DATA.open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


@pytest.mark.parametrize("row", _rows(), ids=lambda row: row["gpu"])
def test_sms_times_tensor_flops_per_clock_times_clock_is_the_catalogued_peak(row):
    """E.g. the RTX 4090: 128 SMs x 512 (fp32-accumulate) x 2,520 MHz = 165.2 TFLOPS, the Ada whitepaper's
    Table 1 figure and the catalog's fp16 dense peak; within 1% for every row (the V100 PCIe's datasheet
    rounds 113 down to 112)."""
    peak = int(row["sms"]) * int(row["tensor_flops_per_sm_clock"]) * float(row["boost_clock_mhz"]) * 1e6
    assert peak / 1e12 == pytest.approx(gpu_by_slug(row["gpu"]).dense_tflops("fp16"), rel=0.01)


def test_slot_powered_and_unlisted_cards_have_no_sustained_clock():
    assert sustained_clock_hz(gpu_by_slug("rtx-4090")) == pytest.approx(2.52e9)
    assert sustained_clock_hz(gpu_by_slug("t4")) is None  # 70 W: no bundled clock either
    assert sustained_clock_hz(gpu_by_slug("h100-sxm5-80gb")) is None  # not bundled
