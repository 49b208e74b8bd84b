"""fix50s (stop 50, acting on aud50s's fix list, issue 29): memory and validation under `image.autocast`.

The memory term (image_model.AUTOCAST_PEAK_SCORE_EXTRA_BYTES) is the code's on-peak less the product's own
allowance, not a code count of what autocast adds (fix50t, after aud50t):
  [AMP-CAST] PyTorch aten/src/ATen/autocast_mode.cpp (1.10+ layout; stored copy find_string id 266950229): softmax is
      fp32_set_opt_dtype (reads the 16-bit scores, writes fp32 probabilities), matmul / bmm / einsum are
      lower_precision_fp (cached_cast makes a 16-bit copy of the fp32 probabilities, uncached).
  [D030-ATTN] huggingface/diffusers v0.3.0 src/diffusers/models/attention.py CrossAttention._attention lines 279-282
      (mirror): `einsum(q, k) * self.scale`, `.softmax(dim=-1)` rebinding `attn_slice` (the scaled scores die when
      softmax returns), `einsum(probs, v)`; v0.4.2 lines 278-281 keep the scores in their own variable
      (`attention_scores`, `attention_probs`) to the end. Reserved at the peak a score element, both versions
      (replayed through the c10 allocator rules in tests/procurement/sizing/test_attention_allocator_autocast.py):
      on 8 B (the 16-bit scores 2, the fp32 probabilities 4 in a segment of their own, their 16-bit cast 2 in the
      freed matmul temporary's block), off 4 B (softmax's 16-bit output reuses that block): the code's
      on-minus-off is +4 B. The product's +2 B is the 8 B less its 3 x 2 = 6 B eager allowance without autocast
      (EAGER_INFERENCE_SCORE_TENSORS, diffusers 0.15's processor): its peak under autocast is the code's 8 B.
      diffmem (stop 51): under image.runtime diffusers-0.7 the allowance without autocast is now the code's own 4 B
      (DIFFUSERS_0_7_SCORE_TENSORS), so the term there is the code's +4 B and the peak under autocast stays 8 B.
Compared with, not a row the term was set on (the on-minus-off check on reserved memory is a strict xfail in
test_outside_autocast_memory_audit_aud50t.py):
  [LAMBDA-AC] LambdaLabsML/lambda-diffusers PR #11 (head bb72fa67, diffusers 0.4.2), RTX A6000 'half' rows' memory
      column (GB reserved, test_outside_lambda_autocast_stop49.py): autocast True 4.52 / 8.74 / 11.4, False
      3.38 / 4.92 / 8.82 at 1 / 2 / 4 images.
Then compared with [LAMBDA-22-MEM] (lambda-diffusers @0c9fbc7 benchmark.csv memory column, diffusers 0.3.0;
test_outside_autocast_audit_aud50s.py): 16 / 28-image rows land, 4 / 8-image rows stay UNEXPLAINED there.
"""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import call_command

from gpuledger.errors import InputError
from procurement.sizing import image_model
from procurement.sizing.assumptions import CUDA_CONTEXT_GIB
from procurement.sizing.spec import parse_workload_spec

MEMORY = 0.15
GIB = 2.0**30
# SD 1.5 at 512 px, the product's largest score tensor a sample: 8 heads x 4,096 queries x (4,096 self + 77 text) keys
LARGEST_SCORES = 8 * 4096 * (4096 + 77)
# [LAMBDA-AC] memory column, GB reserved: n_samples -> (autocast True, autocast False)
LAMBDA_AC_MEMORY = {1: (4.52, 3.38), 2: (8.74, 4.92), 4: (11.4, 8.82)}


def _spec(batch: int = 1, autocast: bool = True, **overrides) -> dict:
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


def _reserved_gb(tmp_path, gpu: str, spec: dict) -> float:
    """The product's total less the CUDA context, in GB: what memory_reserved() reports."""
    total = _candidate(tmp_path, gpu, spec)["memory"]["total_per_gpu_gib"]
    return (total - CUDA_CONTEXT_GIB) * GIB / 1e9


def test_the_fp32_probabilities_term_is_the_on_peak_less_the_products_allowance():
    """[AMP-CAST] + [D030-ATTN]: the code's 8 B reserved under autocast (2 + 4 + 2) less the product's allowance
    without autocast. On the later processors 3 x 2 = 6 B: 2 B a score element. diffmem (stop 51): under
    image.runtime diffusers-0.7 the allowance is the 2022 code's own 2 x 2 = 4 B (image_model.
    DIFFUSERS_0_7_SCORE_TENSORS), so the term is the code's on-minus-off, 4 B: x 136.74 M score elements a sample x
    2 samples an image (CFG) = 1.094 GB an image live (was 2 B, 0.547 GB). None with fused attention or without
    autocast."""
    spec = parse_workload_spec(_spec())
    cost = image_model.spec_network_cost(spec)
    assert cost.largest_scores == LARGEST_SCORES
    assert (
        2 + 4 + 2
    ) - 2 * image_model.EAGER_INFERENCE_SCORE_TENSORS == image_model.AUTOCAST_PEAK_SCORE_EXTRA_BYTES
    assert image_model.AUTOCAST_PEAK_SCORE_EXTRA_BYTES == 2.0
    later = parse_workload_spec(
        _spec() | {"image": {"resolution_px": 512, "runtime": "pytorch-2.0", "autocast": True}}
    )
    assert image_model.autocast_peak_score_bytes(later, False, cost) == 2 * LARGEST_SCORES
    per_sample = image_model.autocast_peak_score_bytes(spec, False, cost)
    assert per_sample == (2 + 4 + 2 - 2 * 2) * LARGEST_SCORES
    assert 2 * per_sample / 1e9 == pytest.approx(1.094, abs=0.001)
    assert image_model.autocast_peak_score_bytes(spec, True, cost) == 0.0
    plain = parse_workload_spec(_spec(autocast=False))
    assert image_model.autocast_peak_score_bytes(plain, False, cost) == 0.0


def test_the_terms_on_minus_off_growth_against_lambda_ac_a_diagnostic(bundled_catalog, tmp_path):
    """[LAMBDA-AC], 1 -> 4 images: on (11.4 - 4.52) / 3 = 2.293 GB an image, off (8.82 - 3.38) / 3 = 1.813: autocast
    grows 0.480 GB an image. The product answers reserved memory: its on-minus-off is 1.233 GB an image (-61.1%,
    outside 15%: scored as a strict xfail in test_outside_autocast_memory_audit_aud50t.py); was 0.617 (-22.2%)
    before diffmem (stop 51) counted the 2022 code's two score tensors without autocast (the off slope fell, the
    on slope did not move). The live 0.547 (-12.2%) was fix50s's +2 B, not a figure the product answers. The
    code's own on-minus-off, +4 B a score element, is 1.094 GB an image live (-56.1%), now the product's term."""
    measured = (11.4 - 4.52) / 3 - (8.82 - 3.38) / 3
    assert measured == pytest.approx(0.480, abs=0.001)
    live = 2 * 2 * LARGEST_SCORES / 1e9
    assert measured / live - 1.0 == pytest.approx(-0.122, abs=0.005)
    assert measured / (2 * live) - 1.0 == pytest.approx(-0.561, abs=0.005)
    growth = []
    for autocast in (True, False):
        ends = [_reserved_gb(tmp_path, "rtx-a6000", _spec(b, autocast)) for b in (1, 4)]
        growth.append((ends[1] - ends[0]) / 3)
    reserved = growth[0] - growth[1]
    assert reserved == pytest.approx(1.233, abs=0.002)
    assert measured / reserved - 1.0 == pytest.approx(-0.611, abs=0.005)


@pytest.mark.parametrize(
    ("batch", "expected_before", "expected"),
    [
        # ours 4.859 GB under autocast (fix50s; unchanged by diffmem). expected_before is published / the product's
        # no-autocast figure, restated by diffmem (stop 51: the 2022 code's two score tensors, not three): b1 0.066
        # -> 0.247 (4.242 -> 3.626 GB), b2 0.400 -> 0.744 (6.245 -> 5.012), b4 0.112 -> 0.464 (10.251 -> 7.785)
        pytest.param(1, 0.247, -0.070, id="b1"),
        pytest.param(
            2,
            0.744,
            0.169,
            id="b2",
            marks=pytest.mark.xfail(
                strict=True,
                reason="UNEXPLAINED (fix50s): [LAMBDA-AC] RTX A6000 half under autocast, 2 images: published 8.74 GB"
                " reserved, ours 7.48 GB (+16.9%; 6.25 GB, +40.0%, before the fp32 probabilities were counted). The"
                " row is out of line with its neighbours in both columns: 1 -> 2 images grows 4.22 GB with autocast"
                " and 1.54 without, 2 -> 4 grows 1.33 and 1.95 an image; the b1 and b4 rows land (-7.0% / -10.3%)."
                " Best lead: the allocator's segment layout at two images (which blocks of the first call's UNet"
                " forward the decode could not reuse), not read.",
            ),
        ),
        # ours 12.716 GB under autocast
        pytest.param(4, 0.464, -0.103, id="b4"),
    ],
)
def test_lambda_ac_autocast_rows_memory_held_out(bundled_catalog, tmp_path, batch, expected_before, expected):
    """[LAMBDA-AC] autocast True rows (diffusers 0.4.2), GB reserved, against the product's total less the CUDA
    context. Held out: the term was set from the code's on-peak and the product's allowance, not on these rows."""
    published = LAMBDA_AC_MEMORY[batch][0]
    before = _reserved_gb(tmp_path, "rtx-a6000", _spec(batch, autocast=False))
    ours = _reserved_gb(tmp_path, "rtx-a6000", _spec(batch))
    assert published / before - 1.0 == pytest.approx(expected_before, abs=0.005)
    assert published / ours - 1.0 == pytest.approx(expected, abs=0.005)
    assert abs(published / ours - 1.0) <= MEMORY


@pytest.mark.parametrize(
    ("batch", "ours_gb", "expected"),
    [
        pytest.param(1, 3.626, -0.068, id="b1"),
        pytest.param(2, 5.012, -0.018, id="b2"),
        pytest.param(4, 7.785, 0.133, id="b4"),
    ],
)
def test_lambda_ac_rows_without_autocast_held_out(bundled_catalog, tmp_path, batch, ours_gb, expected):
    """[LAMBDA-AC]'s autocast False rows (3.38 / 4.92 / 8.82 GB reserved), held out for diffmem (stop 51): the
    spec states image.runtime diffusers-0.7, whose attention (0.4.2's matmul * scale, then softmax, which takes the
    freed matmul temporary's block) holds two 16-bit score tensors at the peak, 4 B a score element (image_model.
    DIFFUSERS_0_7_SCORE_TENSORS, counted from the code and replayed in
    tests/procurement/sizing/test_attention_allocator_autocast.py; not set on these rows). Was a diagnostic at
    three tensors (diffusers 0.15's processor): 4.242 / 6.245 / 10.251 GB, -20.3% / -21.2% / -14.0%; now
    3.626 / 5.012 / 7.785, -6.8% / -1.8% / +13.3%: 2 B x 136.74 M x 2 samples = 0.547 GB an image less live."""
    published = LAMBDA_AC_MEMORY[batch][1]
    ours = _reserved_gb(tmp_path, "rtx-a6000", _spec(batch, autocast=False))
    assert ours == pytest.approx(ours_gb, abs=0.002)
    assert published / ours - 1.0 == pytest.approx(expected, abs=0.005)
    assert abs(published / ours - 1.0) <= MEMORY


@pytest.mark.parametrize(
    ("gpu", "batch", "expected_gb"),
    [
        # [LAMBDA-22-MEM] published 4.53 / 15.34 / 46.11 / 28.47 / 78.78 / 15.36 GB; before fix50s 4.242 / 10.251 /
        # 34.286 / 18.262 / 58.320 / 10.251
        ("rtx-a6000", 1, 4.859),
        ("rtx-a6000", 4, 12.716),
        ("rtx-a6000", 16, 44.148),
        ("a100-pcie-80gb", 8, 23.194),
        ("a100-pcie-80gb", 28, 75.581),
        ("rtx-3090", 4, 12.716),
    ],
)
def test_the_lambda_2022_memory_figures_after_fix50s(bundled_catalog, tmp_path, gpu, batch, expected_gb):
    """The figures the aud50s module judges, pinned: each rises by 0.617 GB an image reserved (the term through
    the allocator rules), the batch-1 row included (4.242 -> 4.859, +6.8% -> -6.8%)."""
    assert _reserved_gb(tmp_path, gpu, _spec(batch)) == pytest.approx(expected_gb, abs=0.002)


def test_the_default_and_fused_attention_memory_are_unchanged(bundled_catalog, tmp_path):
    """image.autocast false leaves the memory without the term (3.626 GB at one image; 4.242 before diffmem counted
    the 2022 code's two score tensors, stop 51); with SDPA-style fused attention there are no eager scores to widen,
    so autocast adds nothing to memory."""
    assert _reserved_gb(tmp_path, "rtx-a6000", _spec(1, autocast=False)) == pytest.approx(3.626, abs=0.001)
    fused_on = _reserved_gb(tmp_path, "rtx-a6000", _spec(1, flash_attention=True))
    fused_off = _reserved_gb(tmp_path, "rtx-a6000", _spec(1, autocast=False, flash_attention=True))
    assert fused_on == fused_off


def test_the_answer_warns_that_memory_counts_only_the_probabilities(bundled_catalog, tmp_path):
    on = _candidate(tmp_path, "rtx-a6000", _spec(4))["warnings"]
    off = _candidate(tmp_path, "rtx-a6000", _spec(4, autocast=False))["warnings"]
    assert image_model.AUTOCAST_MEMORY_WARNING in on
    assert image_model.AUTOCAST_MEMORY_WARNING not in off
    assert "not its other fp32 tensors" in image_model.AUTOCAST_MEMORY_WARNING


def test_bf16_under_default_autocast_is_refused_naming_the_field():
    """[AMP-CAST]: torch.autocast('cuda') runs at float16; bf16 weights would be cast at every conv / linear."""
    with pytest.raises(InputError) as error:
        parse_workload_spec(_spec(precision="bf16"))
    assert "image.autocast" in str(error.value) and "float16" in str(error.value)


@pytest.mark.parametrize(
    ("image", "field"),
    [
        ({"autocast": True}, "image.autocast"),
        ({"runtime": "diffusers-0.7"}, "image.runtime"),
        ({"runtime": "pytorch-2.0"}, "image.runtime"),
    ],
)
def test_a_tier_preset_refuses_the_stack_fields(image, field):
    """aud50s fix 3: a tier preset is sized from its measured table; the stack fields have nothing to act on."""
    with pytest.raises(InputError) as error:
        parse_workload_spec(_spec() | {"model": {"preset": "sdxl-tier"}, "image": image})
    assert field in str(error.value) and "tier preset" in str(error.value)


def test_a_tier_preset_without_the_stack_fields_still_sizes():
    spec = parse_workload_spec(_spec() | {"model": {"preset": "sdxl-tier"}, "image": {}})
    assert spec.model.is_image_tier and not spec.image.autocast
