"""The no-grad peak of a UNet forward (image_shapes.unet_cost forward_peak): every skip connection plus
the busiest level's working set."""

import pytest

from procurement.sizing import image_model as im


def test_sdxl_unet_peaks_in_the_level_1_feed_forward():
    """SDXL at a 128x128 latent. Skips: conv_in 320 x 16,384 + two level-0 ResNets 2 x 320 x 16,384 +
    downsample 320 x 4,096 + 2 x 640 x 4,096 + 640 x 1,024 + 2 x 1,280 x 1,024 = 25,559,040 elements.
    Working set: diffusers' BasicTransformerBlock feed-forward at 640 channels x 4,096 tokens keeps the
    residual (C), norm3's output (C), GEGLU's 8C projection, gelu(gate) (4C) and the product (4C):
    18 x 640 x 4,096 = 47,185,920 (more than level 0's ResNet, 4 x 320 x 16,384). 72,744,960 elements,
    0.1355 GiB per sample in bf16 (0.087 before the feed-forward was counted)."""
    cost = im.network_cost("sdxl-base-1.0", 1024)
    assert cost.forward_peak == 25_559_040 + 47_185_920
    assert cost.forward_peak * 2 / 2**30 == pytest.approx(0.1355, abs=0.0001)
