"""The no-grad peak of a UNet forward (image_shapes.unet_cost forward_peak): every skip connection plus
the busiest level's working set."""

import pytest

from procurement.sizing import image_model as im
from procurement.sizing import parse_workload_spec
from procurement.sizing.image_presets import component, image_preset
from procurement.sizing.image_shapes import resnet_working
from procurement.sizing.memory import memory_breakdown_scalar


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


def test_sdxl_vae_decode_peaks_in_the_last_upsample_with_its_nhwc_copies():
    """AutoencoderKL decoder at a 128x128 latent (SDXL, 1024 px). The last Upsample2D (256 channels) goes
    from 512^2 to 1024^2: the caller keeps its 512^2 input (256 / 4 = 64 per 1024^2 position), the nearest
    copy (256), the conv's NHWC copy of it (256), its NHWC output (256) and the NCHW output (256): 1,088
    elements per position (cuDNN's NCHW-to-NHWC transformations for tensor-core convolutions;
    image_shapes.CONV_NHWC_COPIES). The next ResNet (256 -> 128) holds less at conv1: input, SiLU output
    and its NHWC copy (3 x 256) + NHWC output and output (2 x 128) = 1,024."""
    decoder = im.vae_decoder_cost(component(image_preset("sdxl")["vae"]), 128)
    assert decoder.forward_peak == 1088 * 1024 * 1024
    assert resnet_working(256, 128) == 3 * 256 + 2 * 128
    assert resnet_working(512, 512) == 2 * 512 + 512 + 2 * 512  # conv1 = conv2 = 5c without a shortcut


def test_an_fp32_pipeline_keeps_its_text_encoders_and_vae_in_fp32():
    """diffusers loads every component in the pipeline's torch_dtype: fp32 SDXL holds UNet 2,567.46M + CLIP-L
    123.06M + OpenCLIP-bigG 694.66M + VAE 83.65M parameters at 4 bytes = 12.92 GiB (HF blog
    simple_sdxl_optimizations: 28.09 GiB allocated in all, of which the rest is the decode)."""
    spec = {"task": "inference", "model": {"preset": "sdxl"}, "precision": "fp32"}
    memory = memory_breakdown_scalar(parse_workload_spec(spec), 1)
    params = 2567.46e6 + 123.06e6 + 694.66e6 + 83.65e6
    assert memory["weights_gib"] == pytest.approx(params * 4 / 2**30, rel=1e-3)
