"""fp32 image networks on Ampere and later: PyTorch runs convolutions in TF32 by default
(torch.backends.cudnn.allow_tf32 = True) and matmuls in fp32 (torch.backends.cuda.matmul.allow_tf32 =
False since 1.12; PyTorch docs notes/cuda.html, 'TensorFloat-32 (TF32) on Ampere (and later) devices')."""

import pytest

from procurement.sizing import gpu_by_slug, parse_workload_spec
from procurement.sizing import image_model as im
from procurement.sizing.compute_peak import spec_peak_tflops
from procurement.sizing.image_presets import component, image_preset


def test_the_sdxl_unet_convolutions_are_its_resnets_samplers_and_stem():
    """SDXL UNet at a 128x128 latent (block_out_channels 320/640/1280 at 16,384/4,096/1,024 positions),
    conv MACs per position of each ResNet 9 c_in c_out + 9 c_out^2 (+ c_in c_out 1x1 shortcut):
    down 60.4 + 3.8 + 23.5 + 30.2 + 3.8 + 23.5 + 30.2 G, mid 60.4 G, up 48.6 + 48.6 + 40.3 + 60.4 +
    65.4 + 48.7 + 40.3 + 60.4 + 65.4 + 48.6 + 48.6 G, conv_in/out 0.4 G = 811.4 G of its 3,381 G MACs."""
    cost = im.network_cost("sdxl-base-1.0", 1024)
    assert cost.conv_macs == pytest.approx(811.4e9, rel=0.002)
    assert cost.conv_macs / cost.macs == pytest.approx(0.240, abs=0.002)


def test_the_vae_decoder_is_all_convolution_but_its_mid_attention():
    """SDXL VAE decoder at 128x128 latents: the only non-conv block is the mid-block attention over
    P = 16,384 positions at c = 512: 4 c^2 P (q/k/v/out) + 2 P^2 c (scores and values) MACs."""
    decoder = im.vae_decoder_cost(component(image_preset("sdxl")["vae"]), 128)
    positions, c = 128 * 128, 512
    assert decoder.macs - decoder.conv_macs == 4 * c * c * positions + 2 * positions * positions * c


def _spec(preset: str, precision: str = "fp32", **extra) -> object:
    return parse_workload_spec(
        {"task": "inference", "model": {"preset": preset}, "precision": precision} | extra
    )


def test_a_detector_in_fp32_runs_at_the_tf32_peak_on_an_a100():
    # every YOLO layer is a convolution: A100 TF32 dense 156 TFLOPS (A100 datasheet), not fp32's 19.5
    assert spec_peak_tflops(_spec("yolov8m"), gpu_by_slug("a100-sxm4-40gb")) == pytest.approx(156.0)


def test_sdxl_fp32_mixes_the_two_peaks_by_time():
    """fp32 SDXL, 25 steps, CFG: conv share s of the generation's FLOPs at 156 (TF32), the rest on the CUDA
    cores at cuBLAS SGEMM's 96.9% of 19.5 (18.88 of 19.49 TFLOPS on an A100, Yinghan-Li/YHs_Sample issue
    #4), stated in units of the image efficiency the engine applies afterwards (0.534):
    peak = 1 / (s / 156 + (1 - s) / (19.5 x 0.969 / 0.534)) = 44.3 TFLOPS."""
    spec = _spec("sdxl", micro_batch_size=4, image={"steps": 25})
    share = im.conv_flops_share(spec)
    assert 0.24 < share < 0.30  # the UNet's 24% plus the all-conv VAE decode
    expected = 1.0 / (share / 156.0 + (1.0 - share) / (19.5 * 0.969 / 0.534))
    assert spec_peak_tflops(spec, gpu_by_slug("a100-sxm4-40gb")) == pytest.approx(expected, rel=1e-9)
    assert expected == pytest.approx(44.3, abs=0.1)


def test_sdxl_fp32_on_a_volta_card_keeps_its_convolutions_at_the_fp32_peak():
    """No TF32 on a V100: convolutions at 15.7 x image efficiency, matmuls at the V100's own SGEMM rate
    (89% of 15.7: lablup/mlxcel issue #1654; the A100's 96.9% is an Ampere figure)."""
    spec = _spec("sdxl", micro_batch_size=4, image={"steps": 25})
    share = im.conv_flops_share(spec)
    expected = 1.0 / (share / 15.7 + (1.0 - share) / (15.7 * 0.89 / 0.534))
    assert spec_peak_tflops(spec, gpu_by_slug("v100-sxm2-16gb")) == pytest.approx(expected, rel=1e-9)


@pytest.mark.parametrize(
    ("spec", "gpu", "peak"),
    [
        ({"preset": "yolov8m", "precision": "fp16"}, "a100-sxm4-40gb", 312.0),  # half precision: its own peak
        ({"preset": "yolov8m", "precision": "fp32"}, "v100-sxm2-16gb", 15.7),  # Volta: no TF32
    ],
)
def test_other_precisions_and_cards_keep_their_datasheet_peak(spec, gpu, peak):
    card = gpu_by_slug(gpu)
    assert spec_peak_tflops(_spec(spec["preset"], spec["precision"]), card) == pytest.approx(peak)


def test_a_language_model_in_fp32_keeps_the_fp32_peak():
    """Its FLOPs are matmuls, which PyTorch keeps in fp32 by default."""
    spec = parse_workload_spec({"task": "inference", "model": {"preset": "llama-3-8b"}, "precision": "fp32"})
    assert spec_peak_tflops(spec, gpu_by_slug("a100-sxm4-40gb")) == pytest.approx(19.5)
