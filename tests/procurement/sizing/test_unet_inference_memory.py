"""The no-grad peak of a UNet forward (image_shapes.unet_cost forward_peak, unet_forward_peak): the up block
whose caller-held input and skip tuple plus its largest working set hold the most."""

import pytest

from procurement.sizing import image_model as im
from procurement.sizing import parse_workload_spec
from procurement.sizing.image_presets import component, image_preset
from procurement.sizing.image_shapes import resnet_working
from procurement.sizing.memory import memory_breakdown_scalar


def test_sdxl_unet_peaks_in_the_level_0_up_blocks_first_resnet():
    """SDXL at a 128x128 latent (diffusers UNet2DConditionModel.forward keeps `sample`, the up block's input,
    and `res_samples`, its skip tuple, for the whole block). Level 0's UpBlock2D: input 640 (level 1's
    output, upsampled), skips 3 x 320 (conv_in and two ResNets), first ResNet over the 640 + 320 = 960-channel
    concatenation: resnet_working(960, 320) = 3 x 960 + 2 x 320 = 3,520 (conv1: input, SiLU output, its
    NHWC copy, NHWC output, output). (640 + 960 + 3,520) x 16,384 = 83,886,080 elements. Level 1's
    CrossAttnUpBlock2D holds less: input 1,280 + skips 320 + 2 x 640 + the feed-forward's 21 x 640 = 16,320
    x 4,096 = 66,846,720. 0.1563 GiB per sample in bf16 (0.1355 under the old count, every skip plus the
    level 1 feed-forward at 18 C: 72,744,960)."""
    cost = im.network_cost("sdxl-base-1.0", 1024)
    assert resnet_working(960, 320) == 3_520
    assert cost.forward_peak == (640 + 960 + 3_520) * 16_384
    assert (1_280 + 320 + 2 * 640 + 21 * 640) * 4_096 < cost.forward_peak
    assert cost.forward_peak * 2 / 2**30 == pytest.approx(0.1563, abs=0.0001)


def test_sd15_unet_peaks_in_the_level_0_up_blocks_feed_forward():
    """SD 1.5 at a 64x64 latent (512 px). Level 0's CrossAttnUpBlock2D: input 640 (level 1's output,
    upsampled), skips 3 x 320, and a BasicTransformerBlock's feed-forward (diffusers v0.11.0 attention.py):
    the Transformer2D's residual, the block's input, norm2's output, the sum after cross-attention and norm3's
    output (5 x 320), GEGLU's 8C projection, gelu(gate) and the product (16 x 320). (2 + 3 + 21) x 320 x 4,096
    = 34,078,720 elements a sample (30,228,480 under the old count: every skip, 6,635,520, plus 18 C). The
    LambdaLabsML/lambda-diffusers benchmark.csv (8571d8d) sliced fp16 rows grow 0.16 GB an image from 32 to
    128 images on the A100 80GB PCIe (7.34, 12.46, 22.68 GB reserved): 40M elements a UNet sample."""
    cost = im.network_cost("sd-1.5", 512)
    assert cost.forward_peak == (2 + 3 + 21) * 320 * 4_096


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
