"""autocast (stop 50, issue 29): `image.autocast`, torch.autocast around a 16-bit UNet generation, counted from
PyTorch's autocast op lists (image_shapes.AUTOCAST_*, image_model.AUTOCAST_SCORE_BYTES), not fitted on any row.

What is counted, per UNet forward of one sample (bytes beyond the all-fp16 forward, at the card's achieved
bandwidth like every other eager pass): group_norm / layer_norm are autocast `fp32` ops and softmax is
`fp32_set_opt_dtype` (aten/src/ATen/autocast_mode.cpp, the 1.10+ layout's CUDA list: stored copies find_string ids
1310945309 / 266950229; no gelu there, unlike the 1.6-1.9 layout, id 64284162), conv / linear / matmul / bmm are
`lower_precision_fp`. So each norm casts its input up (read 2, write 4 B), runs in fp32 (two reads and a write at
+2 B each), the SiLU after a ResNet norm runs in fp32 (+4), and every 16-bit consumer casts the output back (read 4,
write 2: +6 each; norm1 feeds to_q, to_k and to_v). Scores: +2 B for the fp32 probabilities, +6 for their cast.

Held out: [LAMBDA-AC] (LambdaLabsML/lambda-diffusers PR #11, head bb72fa67, diffusers 0.4.2, RTX A6000, SD v1-4,
50 steps PNDM, 512 px, CFG; rows in test_outside_lambda_autocast_stop49.py ROWS): 'half' with autocast True,
4.39 / 8.29 / 15.73 s at 1 / 2 / 4 images, and the on-minus-off difference, 1.04 s an image. Used by no fit.
"""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import call_command

from gpuledger.errors import InputError
from procurement.sizing import image_model, image_shapes
from procurement.sizing.spec import parse_workload_spec
from tests.procurement.outside.test_outside_lambda_autocast_stop49 import ROWS, autocast_seconds_per_image

SPEED = 0.25


def _spec(batch: int = 1, autocast: bool | None = True, **overrides) -> dict:
    image = {"resolution_px": 512, "steps": 50, "runtime": "diffusers-0.7"}
    if autocast is not None:
        image["autocast"] = autocast
    spec = {
        "task": "inference",
        "model": {"preset": "sd-1.5"},
        "precision": "fp16",
        "micro_batch_size": batch,
        "flash_attention": False,
        "image": image,
    }
    return spec | overrides


def _seconds(tmp_path, gpu: str, spec: dict) -> float:
    path = tmp_path / "spec.json"
    path.write_text(json.dumps(spec))
    out = io.StringIO()
    call_command("size", str(path), "--gpu", gpu, "--format", "json", stdout=out)
    (candidate,) = json.loads(out.getvalue())["candidates"]
    return candidate["throughput"]["seconds_per_batch"]


# SD 1.5's UNet at a 64 x 64 latent (unet/config.json: 320 / 640 / 1280 / 1280, attention at the first three
# levels and the mid block, 2 ResNets a down level, 3 an up level), by hand. ResNet GroupNorm inputs, (c_in + c_out)
# x positions: down 2 x 640 x 4096; 960 x 1024 + 1280 x 1024; 1920 x 256 + 2560 x 256; 2 x 2560 x 64; mid
# 2 x 2560 x 64; up (2560 + 1280) x 64 x 3; (3840 + 3840 + 3200) x 256; (2560 + 1920 + 1600) x 1024; (1280 + 960 +
# 960) x 4096; conv_norm_out 320 x 4096.
RESNET_NORM_ELEMENTS = (
    2 * 640 * 4096
    + (960 + 1280) * 1024
    + (1920 + 2560) * 256
    + 2 * 2560 * 64
    + 2 * 2560 * 64
    + 3 * 3840 * 64
    + (3840 + 3840 + 3200) * 256
    + (2560 + 1920 + 1600) * 1024
    + (1280 + 960 + 960) * 4096
    + 320 * 4096
)
# Transformer2D inputs, channels x tokens (one block each): down 2 at each of 320 x 4096, 640 x 1024, 1280 x 256;
# mid 1280 x 64; up 3 at each level
TRANSFORMER_ELEMENTS = 5 * (320 * 4096 + 640 * 1024 + 1280 * 256) + 1280 * 64
SCORES = (
    732_283_392  # the engine's eager score elements a sample forward (8 heads; test_outside_diffusers_2022)
)


def test_it_counts_autocasts_bytes_of_an_sd15_unet_forward():
    """22 B a ResNet norm element (norm 12 + SiLU 4 + conv's cast 6), 18 a Transformer2D GroupNorm element (+
    proj_in's cast), 66 a transformer block's (three LayerNorms 36, five consumer casts 30: gelu is not an fp32 op
    on PyTorch >= 1.10), 8 a score: 0.737 + 0.208 + 0.762 + 5.858 = 7.566 GB a sample forward."""
    assert RESNET_NORM_ELEMENTS == 33_505_280 and TRANSFORMER_ELEMENTS == 11_550_720
    assert image_shapes.AUTOCAST_BLOCK_NORM_BYTES == 66.0
    hand = 22 * RESNET_NORM_ELEMENTS + (18 + 66) * TRANSFORMER_ELEMENTS + 8 * SCORES
    spec = parse_workload_spec(_spec())
    assert image_model.autocast_bytes_per_sample(spec) == pytest.approx(hand, rel=1e-9)
    assert hand / 1e9 == pytest.approx(7.566, abs=0.001)
    # kernels: 4 a norm (input, weight and bias casts, the consumer's cast), 14 + 2 a transformer block
    assert image_model.autocast_forward_kernels(spec) == 500.0
    assert image_model.image_summary(spec)["autocast_gb_per_unet_sample"] == 7.566
    assert "autocast_gb_per_unet_sample" not in image_model.image_summary(
        parse_workload_spec(_spec(autocast=False))
    )
    # SDPA / xformers write no scores: only the norms' chains
    flash = parse_workload_spec(_spec(flash_attention=True))
    assert image_model.autocast_bytes_per_sample(flash) == pytest.approx(hand - 8 * SCORES, rel=1e-9)


def test_it_leaves_every_figure_unchanged_by_default(bundled_catalog, tmp_path):
    """image.autocast false (the default) is the spec without the field: 3.981 s on the A6000 at 1 image (3.955
    before diffspd, stop 51: the eager step's launch queue priced as a critical path)."""
    unstated = _seconds(tmp_path, "rtx-a6000", _spec(autocast=None))
    assert _seconds(tmp_path, "rtx-a6000", _spec(autocast=False)) == unstated
    assert unstated == pytest.approx(3.981, abs=0.0005)


# diffspd (stop 51), the launch queue's critical path: -0.181 / -0.193 / -0.217 -> -0.185 / -0.195 / -0.218
@pytest.mark.parametrize(("batch", "expected"), [(1, -0.185), (2, -0.195), (4, -0.218)])
def test_lambda_diffusers_0_4_fp16_under_autocast_within_25_percent(
    bundled_catalog, tmp_path, batch, expected
):
    """[LAMBDA-AC] 'half', autocast True (held out): ours 5.389 / 10.301 / 20.125 s against 4.39 / 8.29 / 15.73:
    -18.5% / -19.5% / -21.8%, inside (5.362 / 10.274 / 20.098 s before diffspd, stop 51). Not a clean landing: the product's plain-fp16 figure is already 15.5-19.9%
    slow against the same PR's autocast-False rows, and the counted increment is 35% above the measured one
    (test_the_counted_increment_against_the_measured_one)."""
    published = ROWS[batch][0]
    ours = _seconds(tmp_path, "rtx-a6000", _spec(batch))
    error = published / ours - 1.0
    assert error == pytest.approx(expected, abs=0.005)
    assert abs(error) <= SPEED


def test_the_counted_increment_against_the_measured_one(bundled_catalog, tmp_path):
    """On - off, seconds an image on the A6000: counted 1.407 (7.566 GB x 100 sample forwards at 768 x 0.70 GB/s)
    against [LAMBDA-AC]'s 1.04, +35%; the score casts alone would be 1.089 (+5%, aud48i's 1.11 at 51 calls), the
    norms' chains the other 0.318. Per image, not per call, as measured (1.407 at 1, 2 and 4 images). On / off
    1.356 / 1.377 / 1.389 against the measured 1.314 / 1.344 / 1.357 and the held-out 1.352 (diffusers PR #511)
    / 1.358 (AITemplate #142). The overshoot is not fitted away: the cast kernels are pure streams, which may run
    nearer the datasheet than the engine's one achieved bandwidth (0.70), but no source here measures them."""
    increments, ratios = [], []
    for batch in ROWS:
        on = _seconds(tmp_path, "rtx-a6000", _spec(batch))
        off = _seconds(tmp_path, "rtx-a6000", _spec(batch, autocast=False))
        increments.append((on - off) / batch)
        ratios.append(on / off)
    assert increments == pytest.approx([1.407] * 3, abs=0.001)
    assert increments[0] / autocast_seconds_per_image() - 1.0 == pytest.approx(0.353, abs=0.005)
    scores_only = 8 * SCORES * 100 / (768e9 * 0.70)
    assert scores_only == pytest.approx(1.089, abs=0.001)
    # diffspd (stop 51): 1.356 / 1.377 / 1.389 -> 1.353 / 1.376 / 1.388 (the plain-fp16 'off' figures grow by the
    # launch queue's critical path; the increments do not move)
    assert [round(r, 3) for r in ratios] == pytest.approx([1.353, 1.376, 1.388], abs=0.002)


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"task": "lora"}, "leave it out"),
        ({"model": {"preset": "flux.1-dev"}, "precision": "bf16"}, "UNet generation"),
        ({"precision": "fp32"}, "16-bit weights"),
        ({"image": {"autocast": True, "fused_kernels": True}}, "fuses"),
    ],
)
def test_it_refuses_autocast_where_it_is_not_counted(overrides, message):
    """Training (its 16-bit precisions are autocast already), DiTs (their norms are not walked), fp32 weights
    under autocast (every matmul casts its weight: not counted) and compiled stacks (they fuse the casts)."""
    with pytest.raises(InputError) as error:
        parse_workload_spec(_spec() | overrides)
    assert "image.autocast" in str(error.value) and message in str(error.value)
