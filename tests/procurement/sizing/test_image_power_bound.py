"""A UNet generation on an Ada card runs no faster than its board power allows (compute_peak.power_bound_tflops,
assumptions.ADA_UNET_TFLOPS_PER_WATT): the RTX 6000 Ada's 364.2 dense TFLOPS at 300 W, the L40S's at 350 W."""

from __future__ import annotations

import numpy as np
import pytest

from procurement.ranking.shapes import _power_bound
from procurement.sizing import gpu_by_slug, parse_workload_spec
from procurement.sizing import image_model as im
from procurement.sizing.compute_peak import power_bound_tflops, spec_peak_tflops


def _spec(preset: str = "sdxl", precision: str = "fp16", task: str = "inference", **image) -> object:
    return parse_workload_spec(
        {"task": task, "model": {"preset": preset}, "precision": precision, "image": image}
    )


def _seconds(spec, gpu_slug: str, bounded: bool = True) -> float:
    gpu = gpu_by_slug(gpu_slug)
    peak, bandwidth = spec_peak_tflops(spec, gpu) * 1e12, gpu.memory_bandwidth_gbps * 1e9
    bound = power_bound_tflops(spec, gpu) * 1e12 if bounded else None
    return float(im.inference_seconds_per_image(spec, peak, bandwidth, gpu.generation, bound))


@pytest.mark.parametrize(
    ("slug", "watts"),
    [("rtx-6000-ada", 300), ("l40", 300), ("l40s", 350), ("rtx-4090", 450)],
)
def test_an_ada_cards_unet_rate_is_bounded_by_its_board_power(slug, watts):
    """0.261 TFLOPS a watt: 78.3 at 300 W, 91.35 at 350 W, 117.45 at 450 W."""
    assert power_bound_tflops(_spec(), gpu_by_slug(slug)) == pytest.approx(0.261 * watts)


@pytest.mark.parametrize(
    ("spec", "slug"),
    [
        pytest.param(_spec(), "a100-sxm4-80gb", id="not-ada"),
        pytest.param(_spec(), "l4", id="slot-powered-l4-keeps-the-t4-row"),
        pytest.param(_spec("flux.1-dev", "bf16"), "l40s", id="a-dit"),
        pytest.param(_spec(precision="fp8"), "l40s", id="an-8-bit-engine"),
        pytest.param(_spec(task="lora", train_steps=10), "rtx-4090", id="training"),
        pytest.param(_spec("yolov8x"), "rtx-4090", id="a-detector"),
    ],
)
def test_other_cards_networks_and_tasks_are_not_bounded(spec, slug):
    assert power_bound_tflops(spec, gpu_by_slug(slug)) == float("inf")


def test_it_reproduces_its_fit_the_l40s_sdxl_unet_forward():
    """diffusers/benchmarks: SDXL UNet forward, bf16, 1024 px, batch 1, L40S (350 W): 0.074 s. Hand: the
    engine's 2 x 3.3806e12 MACs = 6.7612 TFLOP / (0.261 x 350 W) = 0.07402 s (+0.03%)."""
    cost = im.network_cost("sdxl-base-1.0", 1024)
    assert 2.0 * cost.macs / (power_bound_tflops(_spec(precision="bf16"), gpu_by_slug("l40s")) * 1e12) == (
        pytest.approx(0.074, rel=0.005)
    )


def test_the_rtx_6000_ada_runs_compiled_sdxl_at_its_board_power():
    """alexeigor/sd-benchmarks README @8583180, SDXL 50 steps, CFG, 'PT2.0,fp16 + compile': RTX 6000 Ada 9.07 s.
    Hand: 686.7 TFLOP an image / (0.261 x 300 W = 78.3 TFLOPS) = 8.77 s (-3.3%); without the bound 6.42 s
    (-29.2%), the card's diffusion row at 0.341 of 364.2 TFLOPS."""
    spec = _spec(steps=50, fused_kernels=True)
    assert im.inference_flops_per_image(spec) / 1e12 == pytest.approx(686.7, rel=1e-3)
    assert _seconds(spec, "rtx-6000-ada") == pytest.approx(686.7 / 78.3, rel=1e-3)
    assert _seconds(spec, "rtx-6000-ada", bounded=False) == pytest.approx(6.42, rel=0.01)


def test_a_host_bound_or_unsaturated_generation_keeps_its_estimate():
    """SD 1.5 at 512 px, batch 1: 82.8 TFLOP / 78.3 TFLOPS = 1.06 s on an L40, under the engine's 1.50 s at
    its compiled pytorch-2.0 rate: the bound does not bind."""
    spec = _spec("sd-1.5", steps=50, fused_kernels=True, runtime="pytorch-2.0")
    assert _seconds(spec, "l40") == _seconds(spec, "l40", bounded=False)


def test_the_ranking_passes_each_shapes_bound():
    gpus = [gpu_by_slug("rtx-6000-ada"), gpu_by_slug("a100-sxm4-80gb")]
    bound = _power_bound(_spec(), gpus, np.array([0, 1, 0]))
    assert bound.tolist() == pytest.approx([78.3, float("inf"), 78.3])
    llm = parse_workload_spec({"task": "inference", "model": {"preset": "llama-3-8b"}, "precision": "bf16"})
    assert _power_bound(llm, gpus, np.array([0])) is None
