"""aud46d (stop 46, issue 29): an outside audit of diff46 (`image.engine_version`, FasterTransformer v5.0's fused
attention bound), run on published ViT rows the change's author did not use, sized as a user sizes them
(`manage.py size FILE --gpu SLUG --format json` on the bundled catalog). Target: image speed within 25%.

Sources:
  [FT-VIT] NVIDIA/FasterTransformer docs/vit_guide.md, 'Performance' section, byte-identical from a44c381
      (release/v5.0_tag, 2022-04-15) to 6ea1c77c (v5.3); the file and models/vit/ViT.cc first appear at a44c381
      (no earlier commit or tag in the repository holds either), so the rows are v5.0-era code. CUDA 11.4, T4 at
      pclk 1,590 MHz, ViT-B/16 384 px (577 tokens), ms a batch, cpp path (examples/cpp/vit/vit_example.cc
      @a44c381: getAttentionType<T>(head_dim, sm, true, seq_len)). Rows used here, none used by diff46:
        'ViT Performance on T4', FP32 table, cpp column, batch 32: 1,123.58 ms. fp32 runs UnfusedAttentionLayer
          in every release (getAttentionType fuses `half` only), so this checks the unfused count the v5.0 field
          reuses (unpadded, 577) on a second card (diff46 held out the A100's fp32 row only).
        'INT8 vs. FP16 speedup on ViT' (T4), B_16 (FP16) column, batch 32: 253.20 ms: a second, separate
          measurement of the config whose FP16-table row (263.17 ms) diff46 used; v5.0 runs it unfused
          (max_seq_len 577 > 384, BaseAttentionLayer.h @a44c381), padded to 584 (ViT.cc need_padding).
  [TIMM-4090] huggingface/pytorch-image-models results/benchmark-infer-amp-nchw-pt291-cu128-4090.csv
      @90cae8c5ab83d2d7e23b1fb2bab1559bfdcbc7e9 (PyTorch 2.9.1, CUDA 12.8, RTX 4090; timm benchmark.py AMP fp16,
      NCHW, eager, SDPA attention), columns model, infer_img_size, infer_samples_per_sec, infer_step_time,
      infer_batch_size: vit_base_patch16_384,384,966.77,1059.173,1024; vit_large_patch16_384,384,312.48,
      3276.996,1024. test_outside_image_workloads_8.py uses this file's vit_large_patch16_224 row only; the 384 px
      rows are not used anywhere in tests/, docs/ or procurement/ (grepped for the figures and model names).
  [XF-SD15] huggingface/diffusers @98c42134a5615e1c26f2cca70ff9a4c142850f65 (2022-11-02, 'Up to 2x speedup on GPUs
      using memory efficient attention (#532)', diffusers 0.7.0.dev0; the table is kept unchanged in
      docs/source/en/optimization/memory.md through 19edca82f1, 2023-09-13): runwayml/stable-diffusion-v1-5 fp16,
      512 x 512, batch 1 (one prompt, CFG), `pipe.enable_xformers_memory_efficient_attention()`, 'PyTorch > 1.12',
      the pipeline's tqdm rate (UNet steps a second, text encoder and VAE decode outside it), 'Memory Efficient
      Attention FP16' column: NVIDIA Tesla T4 5.5 it/s, NVIDIA A10G 15.6 it/s. Not used in tests/, docs/ or
      procurement/ (grepped for the figures). Stated as `image.runtime: pytorch-2.0`, the product's stack for
      'SDPA or xformers attention' diffusers runs (the closest: the run predates PyTorch 2.0). The product prints
      a generation's seconds, not a step rate, so the rate is read as a user can: sized at 50 and at 1 step, the
      difference is 49 steps (text encoder and decode cancel).

Not sizable (recorded, not a test): [FT-VIT]'s INT8 384 px rows (A100 batch 32 29.07 ms, T4 150.31 ms) ran
unfused too in v5.0 (vit_int8_example.cc @a44c381 calls getAttentionType<T>, bound <= 384; ViTINT8.cc pads an
unfused sequence to a multiple of 32, 577 -> 608), but the product refuses `precision: int8` with
`image.engine: fastertransformer` ('invalid workload spec'), so no user can state them.
"""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import call_command

SPEED = 0.25
T4 = "t4"
RTX_4090 = "rtx-4090"


def _size(tmp_path, spec: dict, gpu: str) -> dict:
    path = tmp_path / "spec.json"
    path.write_text(json.dumps(spec))
    out = io.StringIO()
    call_command("size", str(path), "--gpu", gpu, "--format", "json", stdout=out)
    (candidate,) = json.loads(out.getvalue())["candidates"]
    return candidate


def _ft_v50(precision: str, batch: int) -> dict:
    """[FT-VIT]'s cpp runs as a user states them: ViT-B/16 at 384 px, the release that made the rows."""
    return {
        "task": "inference",
        "model": {"preset": "vit-b-16"},
        "precision": precision,
        "micro_batch_size": batch,
        "image": {"resolution_px": 384, "engine": "fastertransformer", "engine_version": "v5.0"},
    }


# (precision, batch, published ms a batch); the product's images/s at aud46d in the comment
FT_T4_ROWS = [
    # FP32 table, cpp, batch 32: 1,123.58 ms -> 28.48 images/s; product 34.65 (+21.7%; inside 25%, but the
    # same sign as the A100 fp32 row's +17.2% and every ViT-B 384 px fp16 row's +7..+24%)
    pytest.param("fp32", 32, 1123.58, id="t4-fp32-b32"),
    # 'INT8 vs. FP16' B_16 (FP16), batch 32: 253.20 ms -> 126.4 images/s; product as v5.0 135.5 (+7.2%; as v5.3
    # 186.7, +47.7%); fix46d 134.4 (+6.4%), the layers over the 584 padded tokens counted
    pytest.param("fp16", 32, 253.20, id="t4-fp16-b32-int8-table"),
]


@pytest.mark.django_db
@pytest.mark.parametrize(("precision", "batch", "published_ms"), FT_T4_ROWS)
def test_fastertransformer_v5_0_vit_b_384_on_a_t4(bundled_catalog, tmp_path, precision, batch, published_ms):
    published = batch / (published_ms / 1e3)
    row = _size(tmp_path, _ft_v50(precision, batch), T4)
    estimate = row["throughput"]["images_per_second_per_gpu"]
    error = estimate / published - 1.0
    assert abs(error) <= SPEED, f"{estimate:.4g} vs {published:.4g} images/s ({error:+.1%})"
    # the answer names the release and the unfused path it sized
    (note,) = [text for text in row["warnings"] if "FasterTransformer v5.0" in text]
    assert "unfused" in note


def _timm(preset: str) -> dict:
    """timm benchmark.py's inference: AMP fp16, batch 1024, 384 px, eager PyTorch (the product's default engine)."""
    return {
        "task": "inference",
        "model": {"preset": preset},
        "precision": "fp16",
        "micro_batch_size": 1024,
        "image": {"resolution_px": 384},
    }


TIMM_4090_ROWS = [
    # vit_base_patch16_384: 966.77 images/s; product 786.7 (-18.6%)
    pytest.param("vit-b-16", 966.77, id="vit-b-16-384"),
    # vit_large_patch16_384: 312.48 images/s; product 251.3 (-19.6%)
    pytest.param("vit-l-16", 312.48, id="vit-l-16-384"),
]


@pytest.mark.django_db
@pytest.mark.parametrize(("preset", "published"), TIMM_4090_ROWS)
def test_timm_vit_384_amp_inference_on_an_rtx_4090(bundled_catalog, tmp_path, preset, published):
    estimate = _size(tmp_path, _timm(preset), RTX_4090)["throughput"]["images_per_second_per_gpu"]
    error = estimate / published - 1.0
    assert abs(error) <= SPEED, f"{estimate:.4g} vs {published:.4g} images/s ({error:+.1%})"


def _sd15_xformers(steps: int) -> dict:
    return {
        "task": "inference",
        "model": {"preset": "sd-1.5"},
        "precision": "fp16",
        "micro_batch_size": 1,
        "image": {"resolution_px": 512, "steps": steps, "runtime": "pytorch-2.0"},
    }


def _unet_steps_per_second(tmp_path, gpu: str) -> float:
    many = _size(tmp_path, _sd15_xformers(50), gpu)["throughput"]["seconds_per_batch"]
    one = _size(tmp_path, _sd15_xformers(1), gpu)["throughput"]["seconds_per_batch"]
    return 49.0 / (many - one)


T4_XFORMERS_REASON = (
    "UNEXPLAINED: [XF-SD15] SD 1.5 fp16 512 px batch 1 (CFG) with xformers memory-efficient attention on a Tesla "
    "T4: published 5.5 it/s; product 6.99 it/s (49 / (7.3793 - 0.3694) s, image.runtime pytorch-2.0), +27.1%; "
    "6.96 (+26.6%) since diffspd (stop 51: the eager step's launch queue priced as a critical path; the T4's step is "
    "GPU-bound, so it barely moves; the figures below are the earlier ones). "
    "The same table's A10G row lands (-22.8%), so the T4's step is priced short on this stack; as 'optimized' "
    "it is 10.13 it/s (+84%). Candidates not checked: the T4's 70 W cap holding its clock under the boost the "
    "catalog rates it at, and the 2022 xformers kernels' Turing path; neither is sized from a source here."
    " fix46d (stop 46), the clock checked, not the mechanism: (1) the 70 W cap is already in the T4's price:"
    " procurement/data/measured_efficiency.csv prices diffusion on a T4 at 0.322 of its 65 TFLOPS (fitted on"
    " huggingface/diffusers docs/source/en/optimization/torch2.0.md @2c529b75, T4 batch 16, torch 2.0 SDPA), 0.322 /"
    " 0.534 (image_peak_efficiency) = 0.603 of the reference cards' rate per FLOP, the derating det46's ~900 MHz"
    " (0.575 of the 2080 SUPER's work a SM-GHz; mlcommons inference_results_v0.5 issue #20, NVIDIA forum 264462)"
    " describes. (2) The same configuration on a T4 is published twice: that torch2.0.md's 'T4 (batch size: 1)',"
    " SD - txt2img, torch 2.0 no compile (SD 1.5, 512 px, fp16, CFG, SDPA), 6.9 it/s, which the product's 6.99"
    " meets (+1.3%), and this 2022 table's 5.5 it/s: 6.9 / 5.5 = 1.255 between two runs of one card and one"
    " configuration, while the 2022 table's A10G ran faster than the product (-22.8%). A clock applied again would"
    " double-count: 6.99 x 0.575 = 4.02 it/s (-26.9% here, -41.7% on the torch 2.0 row). The FasterTransformer"
    " T4 rows agree: [FT-VIT] ran the T4 at pclk 1,590 MHz, and its 384 px fp16 rows lean as the A100's do per"
    " model (ViT-B: T4 +9.5..+13.5%, A100 +7.9..+23.1%; ViT-L: T4 -5.7..+1.3%, A100 -2.7..+3.7%,"
    " test_outside_ft_release_stop46.py), no T4-only excess; a 0.575 clock would put them at -35..-46%. What is left is"
    " the 2022 stack (diffusers 0.7.0.dev0, PyTorch 1.12/1.13, xformers' 2022 memory-efficient kernel on sm75)"
    " against the 2023 one on the same card: not sized; a spec would need the attention library's release (no"
    " field). UNEXPLAINED."
    " img47 (stop 47), the xformers-on-sm75 candidate made less likely (not ruled out: fix47i) by the doc's own rows"
    " ([XF-SD15] table, 'Base"
    " Attention FP16' beside 'Memory Efficient Attention FP16'; test_the_t4_xformers_gain_is_not_short): on the"
    " T4 xformers ran 5.5 / 3.5 = 1.57x its eager-attention step, the same gain as the A100s (29.0 / 18.6 = 1.56,"
    " 29.5 / 18.7 = 1.58), inside the Ampere cards' 1.56-1.80 and above the other sm75 card's (TITAN RTX 18.22 /"
    " 12.51 = 1.46); a cutlass fMHA without a tensor-core path or with a smaller tile on sm75 would show a smaller"
    " gain on the T4, not the A100's. fix47i (aud47i): the other sm75 card's 1.46 is under every Ampere card's"
    " (1.56-1.80), so one of the two sm75 rows does fit a slow sm75 path; the T4's own gain argues against it,"
    " it does not rule it out. The T4's excess sits in the rest of the step: the product prices the doc's"
    " base-attention T4 row (flash_attention false, pytorch-2.0) at 5.03 it/s against 3.5 (+43.7%, worse than the"
    " xformers row's +27.1%) and its own SDPA-over-eager gain at 1.39, under the doc's 1.57. That column does not"
    " isolate the T4 either: the product's eager A100-40GB row is +43.5% (26.69 vs 18.6), the A6000's +28.0%,"
    " the A10G's +1.6%, so the 2022 eager column is slow on three of four cards for reasons not sized here."
    " Still UNEXPLAINED: the attention library's sm75 path is not favoured by the T4's gain but stays open (the"
    " TITAN RTX's 1.46); the 2022 stack's non-attention step on the T4."
    " img47 (stop 47, second pass; test_outside_diffusers_2022_stop47.py): not a host floor either: the T4's"
    " step (181.8 ms) is 5.8x the engine's host time (1,004 kernels x 31 us = 31.1 ms), and a host floor"
    " would be a time, while the table's base-minus-xformers steps are a fixed number of bytes (T4 7.4"
    " score passes at its achieved bandwidth, A10G / A6000 / A100-40GB 7.0 / 7.0 / 7.2): the T4's attention"
    " kernels run as the other cards' do, and its excess stays in the rest of its step, unsized. fix47i (aud47i):"
    " that fixed-bytes reading does not hold on Turing: the TITAN RTX (sm_75, the same 2022 code) reads 4.0"
    " passes against the T4's 7.4 (test_outside_image_audit_stop47b.py), so the T4's base row is UNEXPLAINED"
    " again (test_outside_diffusers_2022_stop47.py) and this row's excess is not placed outside the attention."
)


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("gpu", "published"),
    [
        # A10G: 15.6 it/s; product 12.05 it/s (49 / (4.2797 - 0.2141) s), -22.8%
        pytest.param("a10g", 15.6, id="a10g"),
        pytest.param("t4", 5.5, id="t4", marks=pytest.mark.xfail(strict=True, reason=T4_XFORMERS_REASON)),
    ],
)
def test_sd15_xformers_unet_rate(bundled_catalog, tmp_path, gpu, published):
    estimate = _unet_steps_per_second(tmp_path, gpu)
    error = estimate / published - 1.0
    assert abs(error) <= SPEED, f"{estimate:.4g} vs {published:.4g} it/s ({error:+.1%})"


# [XF-SD15]'s table as opened here in huggingface/diffusers docs/source/optimization/fp16.mdx @0f75d572 ('Memory
# Efficient Attention'; its xformers column carries [XF-SD15]'s T4 5.5 and A10G 15.6): it/s of the denoising loop,
# (Base Attention FP16, Memory Efficient Attention FP16)
XF_SD15_ROWS = {
    "t4": (3.5, 5.5),
    "rtx-3060": (4.6, 7.8),
    "a10g": (8.88, 15.6),
    "rtx-a6000": (11.7, 21.09),
    "titan-rtx": (12.51, 18.22),
    "a100-sxm4-40gb": (18.6, 29.0),
    "a100-sxm4-80gb": (18.7, 29.5),
}
AMPERE = ("rtx-3060", "a10g", "rtx-a6000", "a100-sxm4-40gb", "a100-sxm4-80gb")


def _sd15_eager(steps: int) -> dict:
    """The table's 'Base Attention' column: diffusers 0.7's eager CrossAttention (baddbmm, softmax, bmm)."""
    return _sd15_xformers(steps) | {"flash_attention": False}


@pytest.mark.django_db
def test_the_t4_xformers_gain_is_not_short(bundled_catalog, tmp_path):
    """img47: if xformers' 2022 memory-efficient kernel ran a slow path on sm75 (no tensor cores, a smaller tile),
    the T4's xformers-over-base gain would fall under the Ampere cards'. It does not: 1.571 on the T4, inside the
    Ampere cards' 1.56-1.80 (the A100s 1.56 / 1.58), above the other sm75 card's (TITAN RTX 1.456). The product's
    own SDPA-over-eager gain on the T4 is smaller (1.39), and its base-attention T4 row is further out (+43.7%)
    than its xformers row (+27.1%): the excess is outside the attention kernel."""
    gains = {gpu: fast / base for gpu, (base, fast) in XF_SD15_ROWS.items()}
    ampere = [gains[gpu] for gpu in AMPERE]
    assert min(ampere) <= gains["t4"] <= max(ampere)
    assert gains["t4"] == pytest.approx(1.571, abs=0.001)
    assert min(ampere) == pytest.approx(1.559, abs=0.001) and max(ampere) == pytest.approx(1.803, abs=0.001)
    assert gains["titan-rtx"] < gains["t4"]
    many = _size(tmp_path, _sd15_eager(50), T4)["throughput"]["seconds_per_batch"]
    one = _size(tmp_path, _sd15_eager(1), T4)["throughput"]["seconds_per_batch"]
    eager = 49.0 / (many - one)
    sdpa = _unet_steps_per_second(tmp_path, T4)
    # diffspd (stop 51): 5.03 -> 5.02 it/s (+43.7% -> +43.3%; the SDPA row 6.99 -> 6.96), the launch queue's
    # critical path (image_model.eager_pass_seconds)
    assert eager == pytest.approx(5.02, abs=0.01)
    assert eager / XF_SD15_ROWS["t4"][0] - 1.0 > sdpa / XF_SD15_ROWS["t4"][1] - 1.0 > SPEED
    assert sdpa / eager == pytest.approx(1.39, abs=0.01)
    assert sdpa / eager < gains["t4"]


def test_sdxl_cached_workspace_reading_does_not_fit_its_own_table():
    """Arithmetic on [SDXL-OPT] alone (huggingface/blog simple_sdxl_optimizations.md @11e799d7, A100 40GB, fp16,
    SDPA, 4 images, one notebook process), nothing sized: diff46's EXPLAINED reason for
    test_outside_image_workloads_2.py::test_sdxl_fp16_batch_of_4_with_the_decode_sliced says the UNet step at CFG
    batch 8 holds 15.40 - 6.461 = 8.94 GiB over the resident weights (1.23 live + ~7.7 cuDNN workspace) and that
    the workspaces are chosen once per shape (Conv_v8.cpp @06ca69ca: thread_local benchmark_cache, keyed by the
    convolution's params and alignments, not by free memory), 'which is why the two rows agree'. Under that
    reading the UNet step holds the same ~8.94 GiB in every row with the same shapes. 'default + VAE slicing +
    sequential CPU offload' (11.47) keeps almost no weights resident (accelerate moves one leaf module at a time)
    and slices the decode the same way, so it should peak near 8.94 (+ one module's weights); it peaks 2.5 GiB
    (28%) higher. The residual is therefore not a constant cached workspace, and 7.7 GiB is a gap, not the
    mechanism's size: explain-rules (b) does not hold."""
    weights = 4.782 + 1.523 + 0.156  # GiB: SDXL UNet, both text encoders, VAE in fp16 (diff46's own figures)
    unet_step_over_weights = 15.40 - weights
    live_tensors = 1.23  # diffmem43's profile, as diff46 quotes it
    workspace = unet_step_over_weights - live_tensors
    assert unet_step_over_weights == pytest.approx(8.94, abs=0.01) and workspace == pytest.approx(
        7.71, abs=0.01
    )
    predicted_offload_row = live_tensors + workspace  # ~0 weights resident under sequential offload
    published_offload_row = 11.47
    assert (
        published_offload_row / predicted_offload_row - 1.0 > 0.25
    )  # +28.3%: the reading misses its sibling
