"""Outside audit aud49i (stop 49) of imgmisc49: eager fp16 FLUX charged diffusers' fp16-only residual clips
(image_model.fp16_clip_elements_per_sample).

Mechanism checked in the diffusers mirror (huggingface/diffusers): transformer_flux.py @375ec930 (v0.33.1)
FluxSingleTransformerBlock.forward 100-101 clips `hidden_states` after `residual + gate * proj_out(...)`; the
single blocks run on torch.cat([encoder_hidden_states, hidden_states], dim=1) (line 511): 512 + 4,096 = 4,608
tokens at 1024 px. FluxTransformerBlock.forward 187-188 clips only `encoder_hidden_states` (512 text tokens).
Added by #9097 "Flux fp16 inference fix" (9b5180cb, 2024-08-07), in every release from v0.30.0 (Flux's first)
through v0.39.0 (two `clip(-65504, 65504)` in the file at each tag). An out-of-place clamp: one elementwise kernel
in eager mode, N read + N written.

Held-out published measurements (same script, same card, same diffusers, both dtypes):
  [FLUXBJ] varadrane1707/BenchmarkFlux @4815c79c239bae7ac116404c8d241983bd8f9945 benchmarks/a100.json
           "Dtype_FP16" avg 16.1299 s (p50 16.1409, 6 iterations) and "Dtype_BF16" avg 15.6510 s (p50 15.6648);
           benchmarks/h100.json "Dtype_FP16" avg 7.2252 s (p50 7.1810, 12 iterations), "Dtype_BF16" avg
           7.1057 s (p50 7.0907). FLUX.1-dev, 1024x1024, 28 steps, guidance 3.5, batch 1, eager, no quantization.
           (A100 80 GB per utils/Experimentation.md "Single A100 (80GB)".) Only the BF16 avgs (README 15.65 / 7.11)
           are used elsewhere (test_outside_ranking_audit_stop48.py); the FP16 rows and the gaps are not.
"""

from __future__ import annotations

import copy

import pytest

from procurement.api.sizing import size_spec_document
from procurement.sizing import image_model
from procurement.sizing.spec import parse_workload_spec as parse_spec

IMAGE_SPEED = 0.25
A100, H100 = "a100-sxm4-80gb", "h100-sxm5-80gb"


def flux(precision: str, **image) -> dict:
    return {
        "task": "inference",
        "model": {"preset": image.pop("preset", "flux.1-dev")},
        "precision": precision,
        "micro_batch_size": 1,
        "image": {"steps": 28, "resolution_px": 1024, "images": 10000} | image,
    }


def seconds(spec: dict, gpu: str) -> float:
    report = size_spec_document(copy.deepcopy(spec), [gpu], calibrate=False)
    return next(c for c in report["candidates"] if c["gpu"] == gpu)["throughput"]["seconds_per_batch"]


def clip_elements(spec: dict) -> float:
    return image_model.fp16_clip_elements_per_sample(parse_spec(copy.deepcopy(spec)))


def test_clip_count_is_the_single_stream_and_the_joint_text_stream():
    """38 single blocks x (4,096 image + 512 text tokens) x 3,072 + 19 joint blocks x 512 text tokens x 3,072."""
    assert clip_elements(flux("fp16")) == 38 * 4608 * 3072 + 19 * 512 * 3072
    # schnell: 256 text tokens (its preset's max_sequence_length)
    assert clip_elements(flux("fp16", preset="flux.1-schnell", steps=4)) == 38 * 4352 * 3072 + 19 * 256 * 3072


@pytest.mark.parametrize(
    "spec",
    [
        flux("bf16"),
        flux("fp32"),
        flux("fp16", fused_kernels=True),
        flux("fp16", preset="sd3-medium"),
        flux("fp16", preset="sd3.5-large"),
    ],
    ids=["bf16", "fp32", "compiled", "sd3-medium", "sd3.5-large"],
)
def test_clip_is_not_charged_outside_eager_fp16_flux(spec):
    assert clip_elements(spec) == 0.0


@pytest.mark.django_db
def test_a100_fp16_generation(bundled_catalog):
    """[FLUXBJ] A100 FP16 16.13 s (held out)."""
    ours = seconds(flux("fp16"), A100)
    assert abs(ours / 16.1299 - 1) <= IMAGE_SPEED, ours


@pytest.mark.django_db
def test_h100_fp16_generation(bundled_catalog):
    """[FLUXBJ] H100 FP16 7.2252 s avg (held out; the 'TorchAO FP8' row, 7.28, is the same run's twin)."""
    ours = seconds(flux("fp16"), H100)
    assert abs(ours / 7.2252 - 1) <= IMAGE_SPEED, ours


@pytest.mark.django_db
@pytest.mark.parametrize(
    "gpu,fp16,bf16", [(A100, 16.1299, 15.6510), (H100, 7.2252, 7.1057)], ids=["a100", "h100"]
)
def test_the_charged_fp16_gap_does_not_exceed_the_published_one(bundled_catalog, gpu, fp16, bf16):
    """The clip is one part of the fp16 / bf16 difference: it must be positive and not above the published gap."""
    gap = seconds(flux("fp16"), gpu) - seconds(flux("bf16"), gpu)
    assert 0.0 < gap <= fp16 - bf16, gap


R_GAP = (
    "UNEXPLAINED: the clip is the right mechanism but not the published fp16 / bf16 gap: [FLUXBJ] A100 +0.479 s "
    "(16.130 vs 15.651, +3.1%), ours +0.045 (16.829 vs 16.785; 14.205 vs 14.160 before img51's fp32 q / k "
    "chains, which both dtypes run alike); H100 +0.119 s avg / +0.090 p50, ours +0.027 (6.848 vs 6.821; 5.422 vs "
    "5.395 before img51). Ruled out: the clip's size (2.27 GB a step read + written, counted from transformer_flux.py "
    "@375ec930; 1.1 ms a step at the A100 80 GB peak, 1.6 ms as charged). Lead, not sized at the run's transformers "
    "release: T5's _keep_in_fp32_modules ['wo'] applies only when torch_dtype is float16 (fp32 FF output GEMMs, "
    "~1 TFLOP on 512 tokens once an image, ~0.05 s on an A100 without TF32); the rest may be run-to-run variance "
    "between two separate processes (one publisher, 6-12 iterations each)."
)


@pytest.mark.django_db
@pytest.mark.xfail(strict=True, reason=R_GAP)
@pytest.mark.parametrize(
    "gpu,fp16,bf16", [(A100, 16.1299, 15.6510), (H100, 7.2252, 7.1057)], ids=["a100", "h100"]
)
def test_the_charged_fp16_gap_is_at_least_half_the_published_one(bundled_catalog, gpu, fp16, bf16):
    gap = seconds(flux("fp16"), gpu) - seconds(flux("bf16"), gpu)
    assert gap >= 0.5 * (fp16 - bf16), gap
