"""Round 4 of issue 29: ViT classifiers' saturated efficiency (assumptions.vision_peak_efficiency) and the
slot-powered cards' image rate (assumptions.slot_powered_card_w)."""

import pytest

from procurement.sizing import gpu_by_slug, parse_workload_spec
from procurement.sizing import image_model as im
from procurement.sizing.compute_peak import card_image_factor, spec_peak_tflops


def _spec(preset: str, precision: str = "fp16", batch: int = 1024, task: str = "inference"):
    return parse_workload_spec(
        {"task": task, "model": {"preset": preset}, "precision": precision, "micro_batch_size": batch}
    )


def test_a_vit_saturates_at_the_vision_ceiling_and_a_unet_at_the_image_one():
    """ViT-B/16 at batch 1024: its MACs per weight (203.5: 197 tokens, plus attention's QK^T and AV that
    no weight multiplies) x 1024 = 208,341 rows; on an RTX 4090 (165 TFLOPS) half efficiency is at
    549 x 165 / 312 = 290 rows: 0.600 x 208,341 / 208,631 = 0.5992 (0.7440 at round 4's 0.745, before
    diffspeed43 fitted the ceiling on AITemplate's A100 ViT-B row). SDXL's UNet on the same card keeps
    image_peak_efficiency (0.534) as its ceiling."""
    peak = gpu_by_slug("rtx-4090").dense_tflops("fp16") * 1e12
    vit = _spec("vit-b-16")
    half = 549 * peak / 312e12
    rows = im.weight_rows(vit, 1024)
    assert rows == pytest.approx(208_341, abs=1)
    assert im.inference_efficiency(vit, peak) == pytest.approx(0.600 * rows / (rows + half), rel=1e-9)
    assert im.inference_efficiency(vit, peak) == pytest.approx(0.5992, abs=5e-5)
    sdxl = _spec("sdxl", batch=64)
    assert im.peak_efficiency(sdxl) == 0.534
    assert im.inference_efficiency(sdxl, peak) < 0.534


def test_an_fp32_vit_still_runs_its_matmuls_at_the_sgemm_rate():
    """The fp32 matmul peak is stated in the network's own ceiling's units, so a saturated fp32 ViT's
    matmuls come out at fp32 x FP32_SIMT_GEMM_EFFICIENCY_VOLTA (0.89 on a V100) whatever that ceiling is."""
    spec, v100 = _spec("vit-b-16", "fp32", 256), gpu_by_slug("v100-sxm2-16gb")
    share = im.conv_flops_share(spec)
    matmul_peak = v100.dense_tflops("fp32") * 0.89 / 0.600
    conv_peak = v100.dense_tflops("fp32")  # no TF32 on Volta
    assert spec_peak_tflops(spec, v100) == pytest.approx(1 / (share / conv_peak + (1 - share) / matmul_peak))


def test_the_l4_takes_the_t4_measured_image_rate_and_other_cards_keep_theirs():
    """The L4 (72 W, no measured image row) runs image networks at the T4's measured 0.364 / 0.534 = 0.681
    of the reference rate per FLOP; a 4090 (450 W) takes the GeForce ViT ceiling (e29), an H100 keeps 1; detectors keep their own fits on any card."""
    vit = _spec("vit-b-16")
    assert gpu_by_slug("l4").tdp_w == 72
    assert card_image_factor(vit, gpu_by_slug("l4")) == pytest.approx(0.364 / 0.534)
    assert card_image_factor(vit, gpu_by_slug("t4")) == pytest.approx(0.364 / 0.534)
    # e29: a GeForce card's ViT factor is geforce_vision_peak_efficiency / vision_peak_efficiency (0.600 since
    # diffspeed43); other networks keep 1 there, detectors take geforce_detector_rate (fix43v: the literal 1.19
    # fitted on the four GeForce detector logs; was pinned as 0.886 / 0.745 = 1.1893, the ratio it came from)
    assert card_image_factor(vit, gpu_by_slug("rtx-4090")) == pytest.approx(0.886 / 0.600)
    # Was 1.19, now 1.26 because fill44 refitted geforce_detector_rate on the same four GeForce logs once the
    # detector step's GEMM fill is counted (log least squares 1.257; assumptions.py lists the rows and errors)
    # Was 1.26, now 1.28 because fixd44 gave the RTX 2080 SUPER fit row its 48 SMs (gpu_clocks.csv, NVIDIA's spec
    # page), so its step fill is 0.908 not the fit mean 0.979, and refitted on the same four logs (log least squares
    # 1.281; assumptions.py lists the rows and errors)
    assert card_image_factor(_spec("yolov8x"), gpu_by_slug("rtx-4090")) == pytest.approx(1.28)
    assert card_image_factor(vit, gpu_by_slug("h100-sxm5-80gb")) == 1.0
    assert card_image_factor(_spec("yolov8n", batch=1), gpu_by_slug("l4")) == 1.0


def test_a_vit_eager_forward_moves_what_timm_under_autocast_moves():
    """Why the ViT fix is in the GEMM ceiling and not in the eager traffic: timm's ViT under fp16 autocast
    keeps an fp32 residual stream (fp16 patch embedding + fp32 pos_embed) and runs LayerNorm in fp32
    (autocast's fp32 list), so per token and layer its elementwise kernels move, in bytes per hidden unit:
    LayerNorm 1 (read 4, write 4) 8, the cast into the qkv GEMM (4 + 2) 6, the attention output copy
    (2 + 2) 4, the residual add (4 + 2 + 4) 10, LayerNorm 2 8, the cast into fc1 6, GELU over the 4h
    fc1 output in fp16 (2 + 2) x 4 = 16, the second residual add 10: 68. The engine's count, every saved
    element (17 per hidden unit) written and read once at 2 B, is the same 68: 12 x 197 x 68 x 768 B.
    Eager kernels on one stream run one after another, so this time adds to the GEMMs'."""
    assert im.inference_traffic_bytes_per_image(_spec("vit-b-16")) == 12 * 197 * 68 * 768
