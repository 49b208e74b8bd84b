"""bw51 / fix51b: the share of the datasheet bandwidth a language model's decode reads reach is measured per card, not
one figure: the RTX 4090 at decode_read_fraction_rtx_4090 (calm's fp16 rows on that card), every other card at
achieved_bandwidth_fraction (gpt-fast's A100). fix51b (after aud51b): bw51 keyed the 0.885 to the memory type
(every GDDR6X card); it is now keyed to the measured card. Sources in procurement/sizing/assumptions.py."""

import pytest

from procurement.sizing import throughput
from procurement.sizing.assumptions import (
    ACHIEVED_BANDWIDTH,
    DECODE_READ_FRACTION_RTX_4090,
    MEASURED_DECODE_READ_FRACTIONS,
)
from procurement.sizing.gpus import gpu_by_slug
from procurement.sizing.spec import parse_workload_spec

# zeux/calm README @021304d6, RTX 4090 (1,008 GB/s), fp16, first 32 tokens: Llama2 7B "67 tok/s (892 GB/s)" (the
# figure set), Mistral 7B "63 tok/s (903 GB/s)", Phi 2.7B "167 tok/s (888 GB/s)" (same card, same kernels)
CALM_4090_FP16_GBPS = {"llama2-7b": 892.0, "mistral-7b": 903.0, "phi-2.7b": 888.0}


def test_it_sets_the_4090_fraction_on_calms_llama2_row():
    assert DECODE_READ_FRACTION_RTX_4090.value == pytest.approx(892.0 / 1008.0, abs=0.0005)


@pytest.mark.parametrize("model", ["mistral-7b", "phi-2.7b"])
def test_it_holds_on_calms_other_fp16_rows(model):
    assert CALM_4090_FP16_GBPS[model] / 1008.0 == pytest.approx(DECODE_READ_FRACTION_RTX_4090.value, rel=0.02)


def test_it_keeps_the_hbm2e_figure_on_the_published_a100_rows():
    """gpt-fast README @0f925b5d: Llama-2-7B bf16 1,397.31 GB/s; torchao quantization README @fd6e4b1f: Llama-2-7B
    1,418.93, Llama-3-8B 1,435.54 GB/s; A100-80GB, 2,039 GB/s: 0.685 / 0.696 / 0.704, all within 2.2% of 0.70."""
    for gbps in (1397.31, 1418.93, 1435.54):
        assert gbps / 2039.0 == pytest.approx(ACHIEVED_BANDWIDTH.value, rel=0.025)


@pytest.mark.parametrize(
    ("slug", "fraction"),
    [
        ("rtx-4090", DECODE_READ_FRACTION_RTX_4090.value),
        # fix51b: bw51 gave the 3090 the 4090's 0.885 by memory type (GDDR6X); now 0.885 -> 0.70 (no 3090 row of its
        # own; [XDAI]'s llama.cpp reads it at 0.73-0.76 of its 936 GB/s, aud51b)
        ("rtx-3090", ACHIEVED_BANDWIDTH.value),
        ("a100-sxm4-80gb", ACHIEVED_BANDWIDTH.value),
        ("h100-sxm5-80gb", ACHIEVED_BANDWIDTH.value),
        ("l40s", ACHIEVED_BANDWIDTH.value),  # GDDR6, not 6X: no source opened
        ("rtx-5090", ACHIEVED_BANDWIDTH.value),  # GDDR7: no source opened
    ],
)
def test_it_reads_the_fraction_measured_on_the_card(slug, fraction):
    assert gpu_by_slug(slug).decode_read_fraction == fraction


def test_it_keys_the_measured_fraction_to_the_card_not_the_memory_type():
    """The RTX 3090 and 4090 share GDDR6X (gpu_specs.csv memory_type); only the 4090 has a measured row."""
    assert gpu_by_slug("rtx-3090").memory_type == gpu_by_slug("rtx-4090").memory_type == "GDDR6X"
    assert "rtx-4090" in MEASURED_DECODE_READ_FRACTIONS
    assert "rtx-3090" not in MEASURED_DECODE_READ_FRACTIONS
    assert gpu_by_slug("rtx-3090").decode_read_fraction != gpu_by_slug("rtx-4090").decode_read_fraction


def test_every_measured_card_is_a_bundled_card():
    """A misspelt slug would silently leave its card at 0.70: each key must name a catalog card."""
    for slug in MEASURED_DECODE_READ_FRACTIONS:
        assert gpu_by_slug(slug).slug == slug


def test_it_scales_a_memory_bound_step_by_the_fraction():
    """Llama 2 7B fp16, one stream, on 1,008 GB/s: the weight-read part of the step shrinks by 0.70 / 0.885."""
    spec = parse_workload_spec(
        {
            "name": "t",
            "task": "inference",
            "precision": "fp16",
            "model": {"preset": "llama-2-7b"},
            "inference": {"concurrency": 1, "context_len": 2, "output_tokens": 1},
        }
    )
    rows = [
        throughput.inference_throughput(spec, bandwidth_gbps=1008.0, peak_tflops=165.0, achieved_bandwidth=f)
        for f in (ACHIEVED_BANDWIDTH.value, DECODE_READ_FRACTION_RTX_4090.value)
    ]
    slow, fast = (float(r["decode_tokens_per_second_per_stream"]) for r in rows)
    assert fast / slow == pytest.approx(
        DECODE_READ_FRACTION_RTX_4090.value / ACHIEVED_BANDWIDTH.value, rel=0.01
    )
