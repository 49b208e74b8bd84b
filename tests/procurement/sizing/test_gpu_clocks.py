"""The bundled boost clocks (procurement/data/gpu_clocks.csv) are the clocks the catalog's peaks are stated at."""

import csv

import pytest

from procurement.sizing import gpu_by_slug
from procurement.sizing.clocks import DATA, peak_clock_hz
from procurement.sizing.gpus import load_bundled_gpus


def _rows() -> list[dict]:
    with DATA.open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def _off_catalog_cards() -> dict:
    """Cards the CSV holds that the catalog does not sell, sized by outside cases with their own GpuSpec: the RTX
    2080 SUPER (fixd44; NVIDIA's spec page and Turing whitepaper, the row's source), whose GpuSpec states 44.6
    TFLOPS fp16 with fp32 accumulate (tests/procurement/outside/test_outside_image_workloads_2.py)."""
    from tests.procurement.outside.test_outside_image_workloads_2 import RTX_2080_SUPER

    return {RTX_2080_SUPER.slug: RTX_2080_SUPER}


def _card(slug: str):
    return _off_catalog_cards().get(slug) or gpu_by_slug(slug)


@pytest.mark.parametrize("row", _rows(), ids=lambda row: row["gpu"])
def test_sms_times_tensor_flops_per_clock_times_clock_is_the_catalogued_peak(row):
    """E.g. the RTX 4090: 128 SMs x 512 (fp32-accumulate) x 2,520 MHz = 165.2 TFLOPS, the Ada whitepaper's
    Table 1 figure and the catalog's fp16 dense peak; within 1% for every row (the V100 PCIe's datasheet
    rounds 113 down to 112)."""
    peak = int(row["sms"]) * int(row["tensor_flops_per_sm_clock"]) * float(row["boost_clock_mhz"]) * 1e6
    assert peak / 1e12 == pytest.approx(_card(row["gpu"]).dense_tflops("fp16"), rel=0.01)


def test_every_catalogued_card_with_a_vendor_sm_count_has_a_row():
    """Only cards whose vendors publish no SM (or compute-unit) count are left to the peak-only scaling: the
    B200 and GB200 (NVIDIA states their peaks, not their SMs or clocks), the H20 (no NVIDIA datasheet) and
    Gaudi 2 and 3 (matrix engines, no fp16 column)."""
    listed = {row["gpu"] for row in _rows()}
    unlisted = {gpu.slug for gpu in load_bundled_gpus()} - listed
    assert unlisted == {"b200", "gb200", "h20", "gaudi2", "gaudi3"}
    # fixd44: one off-catalog row, the outside review's RTX 2080 SUPER (its SMs set its YOLO step fill)
    assert listed - {gpu.slug for gpu in load_bundled_gpus()} == {"rtx-2080-super"}


def test_slot_powered_cards_have_their_clock_and_unlisted_cards_none():
    """The T4 (70 W) and L4 (72 W) keep their datasheet boost clocks: peak / clock is their width (40 SMs x
    1,024 = 40,960 and 58 x 1,024 = 59,392 FLOPs a clock), which a card that cannot hold its boost clock
    keeps (clocks.py)."""
    assert peak_clock_hz(gpu_by_slug("rtx-4090")) == pytest.approx(2.52e9)
    assert peak_clock_hz(gpu_by_slug("t4")) == pytest.approx(1.59e9)
    assert peak_clock_hz(gpu_by_slug("l4")) == pytest.approx(2.04e9)
    assert peak_clock_hz(gpu_by_slug("h100-sxm5-80gb")) == pytest.approx(1.83e9)
    assert peak_clock_hz(gpu_by_slug("b200")) is None  # NVIDIA states no SM count or clock


def test_the_rtx_2080_super_row_is_nvidias_turing_figures():
    """fixd44: NVIDIA's RTX 2080 SUPER spec page states 3,072 CUDA cores at a 1,815 MHz boost; the Turing
    whitepaper's SM holds 64 CUDA cores (3,072 / 64 = 48 SMs, the full TU104) and GeForce Turing's FP16 tensor
    rate with FP32 accumulate is 512 FLOPs per SM per clock (Table 1: RTX 2080 Ti FE 68 x 512 x 1,635 MHz =
    56.9 TFLOPS). 48 x 512 x 1,815 MHz = 44.6 TFLOPS."""
    from procurement.sizing.clocks import sm_count

    card = _off_catalog_cards()["rtx-2080-super"]
    assert sm_count(card) == 3072 // 64 == 48
    assert peak_clock_hz(card) == pytest.approx(1.815e9)
    assert 48 * 512 * 1.815e9 / 1e12 == pytest.approx(44.6, rel=0.001)
