"""FLUX.1-dev nf4 on GeForce cards (img29d, outside round x29h): bitsandbytes' per-call dequantization of every
4-bit weight, and the GeForce cards' SD 1.5 UNet rows (measured_efficiency.csv task unet) kept off DiTs.

By hand: bitsandbytes' MatMul4Bit.forward runs F.linear(A, dequantize_4bit(B).to(A.dtype).t()) on a DiT's
thousands of tokens: it reads 0.5 byte a weight and writes 2 each call. FLUX.1-dev's transformer (11,901.41M
published) x 2.5 B x 28 steps (guidance-distilled: one forward a step) = 833.10 GB an image; at 0.7 x 1,008 GB/s
on a 4090, 1.18 s."""

from __future__ import annotations

import pytest

from procurement.sizing import image_model
from procurement.sizing.compute_peak import card_image_factor
from procurement.sizing.efficiency import diffusion_saturation_of
from procurement.sizing.gpus import gpu_by_slug
from procurement.sizing.spec import parse_workload_spec


def _spec(preset: str, **fields):
    base = {"task": "inference", "model": {"preset": preset}, "precision": "bf16"}
    return parse_workload_spec(base | fields)


def test_each_forward_unpacks_every_nf4_weight():
    spec = _spec("flux.1-dev", weight_quantization="nf4")
    assert image_model.weight_dequantize_bytes_per_image(spec) == pytest.approx(11_901.41e6 * 2.5 * 28)
    compiled = _spec("flux.1-dev", weight_quantization="nf4", image={"fused_kernels": True})
    assert image_model.weight_dequantize_bytes_per_image(compiled) == pytest.approx(833.0987e9)
    assert image_model.weight_dequantize_bytes_per_image(_spec("flux.1-dev")) == 0.0


def test_the_geforce_unet_rows_stay_off_dits():
    """The 4090's 1.011 (SD 1.5 UNet steps) reaches UNets only; a DiT takes image_peak_efficiency (factor 1). The
    power-capped cards' diffusion rows (L40: 0.675) still reach both."""
    assert diffusion_saturation_of("rtx-4090", "bf16").efficiency == 1.011
    assert diffusion_saturation_of("rtx-4090", "bf16", unet=False) is None
    assert diffusion_saturation_of("rtx-3090", "fp16", unet=False) is None
    assert diffusion_saturation_of("l40", "fp16", unet=False).efficiency == 0.675
    assert card_image_factor(_spec("flux.1-dev"), gpu_by_slug("rtx-4090")) == 1.0
    assert card_image_factor(_spec("sd-1.5", precision="fp16"), gpu_by_slug("rtx-4090")) > 1.0
    assert card_image_factor(_spec("flux.1-dev"), gpu_by_slug("l40")) == pytest.approx(0.675 / 0.534)
