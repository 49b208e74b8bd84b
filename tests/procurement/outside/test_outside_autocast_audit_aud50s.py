"""aud50s (stop 50, outside audit of branch `autocast`, issue 29): `image.autocast` judged on cases the author did
not use. Target: image work within 25% on speed, 15% on memory.

Sources (grepped tests/ for each figure first):
  [LAMBDA-22-MEM] LambdaLabsML/lambda-diffusers @0c9fbc7 benchmark.csv, the 'memory' column of the 'half' rows
      (scripts/benchmark.py @0c9fbc7 get_inference_memory: `torch.cuda.empty_cache()`, one pipeline call inside
      `autocast("cuda")` for half, then `round(torch.cuda.memory_reserved() / 1e9, 2)`: GB reserved by the caching
      allocator, CUDA context excluded; rewritten at cc81843 under 2469d61's script, autocast on, aud49s). Rows
      (device, precision, backend, n_samples, latency s, memory GB), verbatim:
        NVIDIA RTX A6000,half,pytorch,1,5.03,4.53      NVIDIA RTX A6000,half,pytorch,4,17.0,15.34
        NVIDIA RTX A6000,half,pytorch,16,63.16,46.11   NVIDIA A100 80GB PCIe,half,pytorch,8,18.68,28.47
        NVIDIA A100 80GB PCIe,half,pytorch,28,63.88,78.78   NVIDIA GeForce RTX 3090,half,pytorch,4,15.87,15.36
      No test read this column (grepped 4.53 / 15.34 / 46.11 / 28.47 / 78.78 / 15.36).
  [LAMBDA-22-MID] the same CSV's latencies the autocast branch did not size with `image.autocast`: A100 80GB PCIe
      2 / 4 / 8 / 28 images 5.72 / 10.04 / 18.68 / 63.88 s, RTX A6000 8 images 32.57 s, RTX 3090 2 images 8.42 s
      (earlier modules used some only in slope arithmetic on the plain-fp16 figure).
  [PR-7] LambdaLabsML/lambda-diffusers PR #7 (2022-10-07, diffusers 0.3.0, every half row under autocast, PR #11):
      RTX A6000 8.89 / 17.2 s at 2 / 4 images (aud49s used them only as arithmetic; never sized with the field).
  [D030] huggingface/diffusers v0.3.0 (the [LAMBDA-22] requirements' diffusers==0.3.0), read in the mirror:
      src/diffusers/models/resnet.py ResnetBlock2D.forward lines 336 and 354
      `hidden_states = self.norm1(hidden_states.float()).type(hidden_states.dtype)` (norm2 alike), and
      unet_2d_condition.py line 263 `sample = self.conv_norm_out(sample.float()).type(sample.dtype)`: the ResNet
      GroupNorms already run in fp32 and are cast back to 16 bits by the model itself, autocast or not (removed by
      diffusers PR #495, 2022-09-13; absent at v0.4.2, the [LAMBDA-AC] rows' version).
  [AMP-CAST] PyTorch aten/src/ATen/autocast_mode.cpp cached_cast (1.10+ layout; stored copy find_string id
      266950229): `if (is_eligible(arg, device_type) && (arg.scalar_type() != to_type))` casts any floating CUDA
      tensor that is not the target dtype, and `can_try_cache` requires `arg.scalar_type() == at::kFloat`. Under
      `torch.autocast('cuda')` (default dtype float16) a bf16 weight is cast to fp16 at every conv / linear, uncached.
"""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import call_command

from gpuledger.errors import InputError
from procurement.api.spec_schemas import WorkloadImageSerializer
from procurement.sizing import image_model
from procurement.sizing.assumptions import CUDA_CONTEXT_GIB
from procurement.sizing.spec import parse_workload_spec
from procurement.views.sizing_image_fields import image_form_fields
from tests.procurement.outside.test_outside_image_autocast_stop50 import (
    RESNET_NORM_ELEMENTS,
    SCORES,
    TRANSFORMER_ELEMENTS,
)

SPEED = 0.25
MEMORY = 0.15
GIB = 2.0**30
# SD 1.5 self-attention scores a UNet sample at 512 px: 8 heads x 4096^2 (the largest score tensor, the peak)
SELF_SCORES = 8 * 4096 * 4096


def _spec(batch: int, autocast: bool = True, **overrides) -> dict:
    """[LAMBDA-22] as the product's own module states it (test_outside_diffusers03_audit_stop48.py), autocast on."""
    image = {"resolution_px": 512, "steps": 50, "runtime": "diffusers-0.7", "autocast": autocast}
    spec = {
        "task": "inference",
        "model": {"preset": "sd-1.5"},
        "precision": "fp16",
        "micro_batch_size": batch,
        "flash_attention": False,
        "image": image,
    }
    return spec | overrides


def _candidate(tmp_path, gpu: str, spec: dict) -> dict:
    path = tmp_path / "spec.json"
    path.write_text(json.dumps(spec))
    out = io.StringIO()
    call_command("size", str(path), "--gpu", gpu, "--format", "json", stdout=out)
    (candidate,) = json.loads(out.getvalue())["candidates"]
    return candidate


def _reserved_gb(candidate: dict) -> float:
    """The product's total less the CUDA context, in GB: what memory_reserved() reports."""
    return (candidate["memory"]["total_per_gpu_gib"] - CUDA_CONTEXT_GIB) * GIB / 1e9


# ---------------------------------------------------------------------------------------------------------------
# 1. The mechanism at the run's version: diffusers 0.3.0 upcasts its ResNet norms itself.
# ---------------------------------------------------------------------------------------------------------------


def test_the_count_at_diffusers_0_3_0_where_the_resnet_norms_are_already_fp32():
    """[D030] + [AMP-CAST], by hand. On diffusers 0.3.0 every ResNet GroupNorm (and conv_norm_out) runs
    `.float()` (read 2, write 4) -> fp32 group_norm (+6, the author's convention) -> `.type(fp16)` (read 4, write 2):
    18 B an element, in the run with or without autocast; the SiLU after it and the conv see fp16 (no cast). The
    branch counts 22 (norm 12 + fp32 SiLU 4 + conv's cast 6), the 0.4+ code path. As-run bytes beyond the all-16-bit
    forward: branch 22 R + 84 T + 8 S = 7.566 GB, hand 18 R + 84 T + 8 S = 7.432 GB (+1.8%): 0.025 s an image on
    the A6000, immaterial to the [LAMBDA-22] verdicts. But the attribution is off at 0.3.0: of the 7.43 GB only
    6.83 is autocast's; 0.60 GB (18 R) is diffusers 0.3.0's own upcast, which `image.runtime: diffusers-0.7`
    prices in no row (a plain-fp16 0.3.0 run, if one could be stated, would miss it)."""
    branch = image_model.autocast_bytes_per_sample(parse_workload_spec(_spec(1)))
    hand = 18 * RESNET_NORM_ELEMENTS + 84 * TRANSFORMER_ELEMENTS + 8 * SCORES
    assert branch / 1e9 == pytest.approx(7.566, abs=0.001)
    assert hand / 1e9 == pytest.approx(7.432, abs=0.001)
    assert branch / hand - 1.0 == pytest.approx(0.018, abs=0.001)
    assert 18 * RESNET_NORM_ELEMENTS / 1e9 == pytest.approx(0.603, abs=0.001)
    # A6000: 100 sample forwards an image (50 steps x CFG 2) at 768 GB/s x 0.70 achieved
    assert (branch - hand) * 100 / (768e9 * 0.70) == pytest.approx(0.025, abs=0.001)
    assert abs(branch / hand - 1.0) <= SPEED


# ---------------------------------------------------------------------------------------------------------------
# 2. Speed: rows the branch did not size with image.autocast.
# ---------------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("gpu", "batch", "published", "expected"),
    [
        # diffspd (stop 51), the launch queue's critical path; before -> after in each comment
        # [LAMBDA-22-MID]: ours as run (autocast) 4.655 / 8.861 / 17.271 / 59.323 -> 4.685 / 8.887 / 17.297 / 59.350
        # s; 0.229 / 0.133 / 0.082 / 0.077 -> 0.221 / 0.130 / 0.080 / 0.076
        ("a100-pcie-80gb", 2, 5.72, 0.221),
        ("a100-pcie-80gb", 4, 10.04, 0.130),
        ("a100-pcie-80gb", 8, 18.68, 0.080),
        ("a100-pcie-80gb", 28, 63.88, 0.076),
        # ours 39.746 -> 39.773 s
        ("rtx-a6000", 8, 32.57, -0.181),
        # ours 9.073 -> 9.100 s; -0.072 -> -0.075
        ("rtx-3090", 2, 8.42, -0.075),
        # [PR-7]: ours 10.274 / 20.098 -> 10.301 / 20.125 s; -0.135 / -0.144 -> -0.137 / -0.145
        ("rtx-a6000", 2, 8.89, -0.137),
        ("rtx-a6000", 4, 17.2, -0.145),
    ],
)
def test_held_out_2022_autocast_rows_within_25_percent(
    bundled_catalog, tmp_path, gpu, batch, published, expected
):
    """All inside 25%. The pattern is the verdict's note: on the A100 the error falls with the batch (+22.1% at 2
    images -> +7.6% at 28 since diffspd, stop 51; +22.9% / +7.7% before: a per-call cost, the author's lead for the b1 row), on the A6000 it grows negative with the
    batch (-6.2% at 1 -> -18.1% at 8 -> -20.1% at 16): the per-image slope is now too steep. [LAMBDA-22]'s A6000
    rows (1 -> 16 images) rise 3.875 s an image, ours 4.912 (-21.1%), where the plain-fp16 slope was 3.505 (+10.6%):
    the 1.407 s an image autocast adds overshoots this card's 0.3.0 rows as it overshoots [LAMBDA-AC]'s 1.04."""
    ours = _candidate(tmp_path, gpu, _spec(batch))["throughput"]["seconds_per_batch"]
    error = published / ours - 1.0
    assert error == pytest.approx(expected, abs=0.005)
    assert abs(error) <= SPEED


def test_the_a6000_slope_under_autocast(bundled_catalog, tmp_path):
    """[LAMBDA-22] RTX A6000 1 -> 16 images: (63.16 - 5.03) / 15 = 3.875 s an image; ours (79.042 - 5.362) / 15 =
    4.912 with autocast (-21.1%), 3.505 without (+10.6%). A diagnostic, not a row: it sits at the bar."""
    on = [_candidate(tmp_path, "rtx-a6000", _spec(b))["throughput"]["seconds_per_batch"] for b in (1, 16)]
    off = [
        _candidate(tmp_path, "rtx-a6000", _spec(b, False))["throughput"]["seconds_per_batch"] for b in (1, 16)
    ]
    published = (63.16 - 5.03) / 15
    assert published == pytest.approx(3.875, abs=0.001)
    assert (on[1] - on[0]) / 15 == pytest.approx(4.912, abs=0.002)
    assert (off[1] - off[0]) / 15 == pytest.approx(3.505, abs=0.002)
    assert published / ((on[1] - on[0]) / 15) - 1.0 == pytest.approx(-0.211, abs=0.003)


# ---------------------------------------------------------------------------------------------------------------
# 3. Memory under autocast: [LAMBDA-22-MEM], never tested.
# ---------------------------------------------------------------------------------------------------------------

# The measured per-image growth, GB reserved an image: A6000 (46.11 - 4.53) / 15 = 2.77, (15.34 - 4.53) / 3 = 3.60;
# A100 (78.78 - 4.55) / 27 = 2.75. Ours 1.86 an image of activations before fix50s (1.655 GiB a CFG pair of samples),
# 2.00 reserved ((34.286 - 4.242) / 15 on the A6000); 2.62 reserved after (image_model.AUTOCAST_PEAK_SCORE_EXTRA_BYTES:
# the fp32 probabilities, +0.617 GB an image reserved).
MEMORY_LEAD = (
    " fix50s counts autocast's fp32 attention probabilities (image_model.AUTOCAST_PEAK_SCORE_EXTRA_BYTES: the"
    " code's 8 B reserved a score element under autocast less the product's 6 B eager allowance, +0.617 GB an"
    " image reserved; fix50t), which lands the 16 / 28-image rows and leaves this one {gap} short. Lead (aud50t"
    " [CSV-HIST], not a sized cause): this row was measured by the c6598a5 benchmark script, before 2469d61 added"
    ' `revision="fp16"` (the fp32 checkpoint loaded with torch_dtype fp16); cc81843 re-measured only the 1-image'
    " rows (A6000 5.5 -> 4.53 GB, A100 5.48 -> 4.55, 3090 5.47 -> 4.54) and kept this one, while the rows that"
    " land (A6000 1 / 16, A100 28) and the held-out Quadro RTX 8000 rows (-13.5% to -2.6%) are the later"
    " script's; why the earlier load reserved more on diffusers 0.3.0 was not read. The earlier lead (autocast's"
    " uncounted norm outputs, the 0.3.0 VAE decode's upcast) is dropped: the same software on the Turing Quadro"
    " RTX 8000 reserves 2.6% / 9.5% below ours at 4 / 8 images (test_outside_autocast_memory_audit_aud50t.py)."
)


@pytest.mark.parametrize(
    ("gpu", "batch", "published"),
    [
        # ours 4.242 GB (+6.8%) before fix50s, 4.859 (-6.8%) after
        pytest.param("rtx-a6000", 1, 4.53, id="rtx-a6000-b1"),
        pytest.param(
            "rtx-a6000",
            4,
            15.34,
            id="rtx-a6000-b4",
            marks=pytest.mark.xfail(
                strict=True,
                reason="UNEXPLAINED (aud50s; restated by fix50t): [LAMBDA-22-MEM] RTX A6000 half under autocast, 4"
                " images: published 15.34 GB reserved, ours 12.72 GB (+20.6%; was 10.25, +49.6%)."
                + MEMORY_LEAD.format(gap="5.6 points"),
            ),
        ),
        # Was a strict xfail (aud50s): ours 34.28 GB (+34.5%). fix50s: 44.15 GB (+4.4%), FIXED
        pytest.param("rtx-a6000", 16, 46.11, id="rtx-a6000-b16"),
        pytest.param(
            "a100-pcie-80gb",
            8,
            28.47,
            id="a100-pcie-80gb-b8",
            marks=pytest.mark.xfail(
                strict=True,
                reason="UNEXPLAINED (aud50s; restated by fix50t): [LAMBDA-22-MEM] A100 80GB PCIe half under"
                " autocast, 8 images: published 28.47 GB reserved, ours 23.19 GB (+22.7%; was 18.26, +55.9%)."
                + MEMORY_LEAD.format(gap="7.7 points"),
            ),
        ),
        # Was a strict xfail (aud50s): ours 58.32 GB (+35.1%). fix50s: 75.58 GB (+4.2%), FIXED
        pytest.param("a100-pcie-80gb", 28, 78.78, id="a100-pcie-80gb-b28"),
        pytest.param(
            "rtx-3090",
            4,
            15.36,
            id="rtx-3090-b4",
            marks=pytest.mark.xfail(
                strict=True,
                reason="UNEXPLAINED (aud50s; restated by fix50t): [LAMBDA-22-MEM] RTX 3090 half under autocast, 4"
                " images: published 15.36 GB reserved, ours 12.72 GB (+20.8%; was 10.25, +49.8%)."
                + MEMORY_LEAD.format(gap="5.8 points"),
            ),
        ),
    ],
)
def test_lambda_2022_memory_under_autocast_within_15_percent(
    bundled_catalog, tmp_path, gpu, batch, published
):
    """[LAMBDA-22-MEM]: memory_reserved after one autocast call, against the product's total less the CUDA
    context (the reserved pool excludes it)."""
    ours = _reserved_gb(_candidate(tmp_path, gpu, _spec(batch)))
    error = published / ours - 1.0
    assert abs(error) <= MEMORY, f"{ours:.3f} GB vs {published} GB published ({error:+.1%})"


def test_the_terms_arithmetic_against_lambda_ac():
    """The term's arithmetic: (8 - 6) B a self-attention score element (the code's 8 B reserved under autocast
    less the product's 6 B allowance without it, not the code's on-minus-off, +4 B: fix50t) x 2 samples (CFG) x
    134.2 M = 0.537 GB an image; [LAMBDA-AC] (test_outside_lambda_autocast_stop49.py ROWS memory column, PR #11,
    1 -> 4 images) grows (11.4 - 4.52) / 3 = 2.293 GB an image with autocast, (8.82 - 3.38) / 3 = 1.813 without:
    0.48 measured (live term +12%; reserved, what the product answers, is scored in
    test_outside_autocast_memory_audit_aud50t.py). [LAMBDA-22-MEM] grows 2.75-3.60 GB an image: ~1 GB beyond
    ours + the term, in rows of the earlier benchmark script (see MEMORY_LEAD)."""
    lead = (8 - 6) * 2 * SELF_SCORES / 1e9
    assert lead == pytest.approx(0.537, abs=0.001)
    measured = (11.4 - 4.52) / 3 - (8.82 - 3.38) / 3
    assert measured == pytest.approx(0.48, abs=0.001)
    assert lead / measured - 1.0 == pytest.approx(0.118, abs=0.005)
    assert (46.11 - 4.53) / 15 == pytest.approx(2.772, abs=0.001)
    assert (78.78 - 4.55) / 27 == pytest.approx(2.749, abs=0.001)


# ---------------------------------------------------------------------------------------------------------------
# 4. The field: validation, API schema, form; bf16 under torch.autocast('cuda').
# ---------------------------------------------------------------------------------------------------------------


def test_a_non_boolean_autocast_is_refused_naming_the_field():
    with pytest.raises(InputError) as error:
        parse_workload_spec(_spec(1) | {"image": {"resolution_px": 512, "autocast": "yes"}})
    assert "image.autocast" in str(error.value)


def test_the_field_is_in_the_api_schema_and_the_form():
    assert "autocast" in WorkloadImageSerializer().fields
    fields = {field["name"]: field for field in image_form_fields({}, {})}
    assert fields["autocast"]["kind"] == "checkbox"


# Was a strict xfail (aud50s): bf16 accepted and sized like fp16 (7.566 GB a sample forward, the 3.44 GB a UNet call
# of weight casts uncounted). fix50s: refused naming image.autocast (spec._check_autocast).
def test_bf16_weights_under_default_autocast_are_refused_or_count_the_weight_casts():
    try:
        spec = parse_workload_spec(_spec(1, precision="bf16"))
    except InputError as error:
        assert "image.autocast" in str(error)
        return
    fp16 = image_model.autocast_bytes_per_sample(parse_workload_spec(_spec(1)))
    bf16 = image_model.autocast_bytes_per_sample(spec)
    # the weight casts alone, per sample at CFG's 2 samples a call
    assert bf16 - fp16 >= 0.86e9 * 4 / 2


# Was a strict xfail (aud50s): sdxl-tier accepted image.autocast and ignored it (22.352 GiB either way, no warning).
# fix50s: refused naming the field, and image.runtime alike (spec._check_tier_image_fields).
def test_a_tier_preset_refuses_autocast_naming_the_field():
    with pytest.raises(InputError) as error:
        parse_workload_spec(_spec(1) | {"model": {"preset": "sdxl-tier"}, "image": {"autocast": True}})
    assert "image.autocast" in str(error.value)
