"""aud50t (stop 50, outside audit of fix50s, issue 29): memory under `image.autocast` judged on cases the author did
not use. Target for image work: 15% on memory.

Sources (grepped tests/ for each source and figure first: no test reads the Quadro RTX 8000 rows, the c6598a5 CSV,
nor the per-batch on-minus-off of [LAMBDA-AC]):
  [Q8000] LambdaLabsML/lambda-diffusers @cc81843 (2022-10-03) benchmark.csv, the Quadro RTX 8000 'half' rows
      (device, precision, backend, n_samples, latency s, memory GB), verbatim:
        Quadro RTX 8000,half,pytorch,1,5.93,4.52     Quadro RTX 8000,half,pytorch,2,10.92,7.02
        Quadro RTX 8000,half,pytorch,4,21.24,12.39   Quadro RTX 8000,half,pytorch,8,40.52,20.98
        Quadro RTX 8000,half,pytorch,16,80.31,38.18
      Same rows at 0c9fbc7 and later. Script scripts/benchmark.py @2469d61 (cc81843 = 2469d61 + readme): diffusers
      0.3.0 (requirements.txt), `revision="fp16"`, `torch_dtype=torch.float16`, every half call inside
      `autocast("cuda")`, `torch.cuda.empty_cache()` then one call then `round(torch.cuda.memory_reserved() / 1e9, 2)`.
      The same script and software as [LAMBDA-22-MEM]; the card is Turing (sm75), not in pricing/data/gpu_specs.csv,
      so it was never sized (test_outside_diffusers03_audit_stop48.py: 'Not sizable'). The product's memory does
      not depend on the card (asserted below: T4, A6000 and 3090 give the same GB), so it is compared as sized.
  [CSV-HIST] the same file's history (git log -p benchmark.csv): c6598a5 (2022-10-02, the script before 2469d61 added
      `revision="fp16"`) holds  RTX A6000 half 1: 5.5 GB, A100 80GB PCIe half 1: 5.48, RTX 3090 half 1: 5.47,
      Quadro RTX 8000 half 1: 4.5, half 2: 8.8, and the A6000 / A100 / 3090 rows at 2 / 4 / 8 images that
      [LAMBDA-22-MEM] still reads today (A6000 8.79 / 15.34 / 28.51, A100 8.77 / 15.34 / 28.47, 3090 8.75 / 15.36).
      cc81843 rewrote only the 1-image memory of those cards (5.5 -> 4.53, 5.48 -> 4.55, 5.47 -> 4.54, latency
      unchanged), added A6000 16 (46.11) and A100 28 (78.78), and replaced the Quadro rows (2 images 8.8 -> 7.02).
  [D042] huggingface/diffusers v0.4.2 src/diffusers/models/attention.py CrossAttention._attention lines 278-281
      (mirror): `attention_scores = torch.matmul(query, key.transpose(-1, -2)) * self.scale`,
      `attention_probs = attention_scores.softmax(dim=-1)`, `hidden_states = torch.matmul(attention_probs, value)`.
      v0.3.0 lines 278-282: `attn_slice = einsum(...) * self.scale`, `attn_slice = attn_slice.softmax(dim=-1)`
      (the name is rebound: the 16-bit scores die when softmax returns), `einsum(attn_slice, value)`.
  [C10-CCA] c10/cuda/CUDACachingAllocator.cpp (upstream layout; stored copy find_string id 14916183002):
      get_allocation_size rounds a request >= kMinLargeAlloc (10 MB) up to 2 MB and cudaMallocs a segment of that
      size; get_free_block is best fit (lower_bound); blocks merge only with their prev/next in one segment;
      should_split in the large pool when the remainder > 1 MB.
  [LAMBDA-AC] LambdaLabsML/lambda-diffusers PR #11 (head bb72fa67, diffusers 0.4.2 requirements), RTX A6000 'half'
      memory GB reserved, autocast True 4.52 / 8.74 / 11.4, False 3.38 / 4.92 / 8.82 at 1 / 2 / 4 images (the
      figures fix50s used for the slope only; here the per-batch on-minus-off).
"""

from __future__ import annotations

import pytest

from procurement.api.spec_schemas import WorkloadImageSerializer
from procurement.sizing import image_model
from procurement.sizing.spec import parse_workload_spec
from procurement.views.sizing_image_fields import image_form_fields
from tests.procurement.outside.test_outside_autocast_memory_fix50s import (
    LAMBDA_AC_MEMORY,
    LARGEST_SCORES,
    _candidate,
    _reserved_gb,
    _spec,
)

MEMORY = 0.15
# [Q8000] n_samples -> GB reserved
Q8000 = {1: 4.52, 2: 7.02, 4: 12.39, 8: 20.98, 16: 38.18}
# the product's allocator allowances on activations (fix50s's test: 0.547 live -> 0.617 reserved an image)
RESERVE = 0.617 / 0.547


# ---------------------------------------------------------------------------------------------------------------
# 1. Held-out rows: the same 0.3.0 script under autocast on a Turing card.
# ---------------------------------------------------------------------------------------------------------------


def test_the_products_memory_does_not_depend_on_the_card(bundled_catalog, tmp_path):
    """Why [Q8000] can be compared though the card is not in the catalog: a Turing T4, an Ampere A6000 and a 3090
    size the same GB at 1 and 4 images, autocast on."""
    for batch in (1, 4):
        figures = {gpu: _reserved_gb(tmp_path, gpu, _spec(batch)) for gpu in ("t4", "rtx-a6000", "rtx-3090")}
        assert max(figures.values()) - min(figures.values()) < 1e-6


@pytest.mark.parametrize(
    ("batch", "ours_before", "ours_after", "expected_before", "expected_after"),
    # ours_before / expected_before: the autocast False figure, restated by diffmem (stop 51: the 2022 code's two
    # score tensors, not three; the autocast figures unchanged): 4.242 -> 3.626 (+6.6% -> +24.7%), 6.245 -> 5.012
    # (+12.4% -> +40.1%), 10.251 -> 7.785 (+20.9% -> +59.2%), 18.262 -> 13.331 (+14.9% -> +57.4%), 34.286 -> 24.423
    # (+11.4% -> +56.3%): on these autocast rows the no-autocast figure now misses all five, the term is needed
    [
        pytest.param(1, 3.626, 4.859, 0.247, -0.070, id="b1"),
        pytest.param(2, 5.012, 7.478, 0.401, -0.061, id="b2"),
        pytest.param(4, 7.785, 12.716, 0.592, -0.026, id="b4"),
        pytest.param(8, 13.331, 23.194, 0.574, -0.095, id="b8"),
        pytest.param(16, 24.423, 44.148, 0.563, -0.135, id="b16"),
    ],
)
def test_quadro_rtx_8000_autocast_rows_held_out(
    bundled_catalog, tmp_path, batch, ours_before, ours_after, expected_before, expected_after
):
    """[Q8000], published / ours - 1. Before fix50s (autocast added nothing to memory: the autocast False figure)
    the 4-image row missed (+20.9%); after, all five land (-2.6% to -13.5%), the 16-image row near the bar. Sized on
    the A6000 (48 GB, as the RTX 8000)."""
    before = _reserved_gb(tmp_path, "rtx-a6000", _spec(batch, autocast=False))
    after = _reserved_gb(tmp_path, "rtx-a6000", _spec(batch))
    assert (before, after) == pytest.approx((ours_before, ours_after), abs=0.002)
    assert Q8000[batch] / before - 1.0 == pytest.approx(expected_before, abs=0.005)
    assert Q8000[batch] / after - 1.0 == pytest.approx(expected_after, abs=0.005)
    assert abs(Q8000[batch] / after - 1.0) <= MEMORY


def test_quadro_per_image_slope_lands_with_or_without_the_term(bundled_catalog, tmp_path):
    """[Q8000] 1 -> 16 images: (38.18 - 4.52) / 15 = 2.244 GB an image. Ours 2.619 with the term (-14.3%), 1.386
    without it (+61.8%; was 2.003, +12.0%, before diffmem, stop 51, counted the 2022 code's two score tensors
    without autocast): the slope now needs the term (1.233 GB an image reserved under diffusers-0.7)."""
    published = (Q8000[16] - Q8000[1]) / 15
    after = (
        _reserved_gb(tmp_path, "rtx-a6000", _spec(16)) - _reserved_gb(tmp_path, "rtx-a6000", _spec(1))
    ) / 15
    plain = [_reserved_gb(tmp_path, "rtx-a6000", _spec(b, autocast=False)) for b in (1, 16)]
    before = (plain[1] - plain[0]) / 15
    assert published == pytest.approx(2.244, abs=0.001)
    assert published / after - 1.0 == pytest.approx(-0.143, abs=0.005)
    assert published / before - 1.0 == pytest.approx(0.618, abs=0.005)


# Was a strict xfail (aud50t): the warning claimed 'up to about a quarter more than this figure at 4 to 8 images a
# call', while [Q8000] at 4 / 8 images reserved less (-2.6% / -9.5%). fix50t rewords it to the measured range.
def test_the_warning_states_the_measured_range(bundled_catalog, tmp_path):
    """The 2469d61 script's rows read -13.5% ([Q8000] 16 images) to +4.4% ([LAMBDA-22-MEM] A6000 16 images,
    46.11 GB) against ours; the c6598a5 script's rows +20.6% / +20.8% (A6000 / 3090, 4 images: 15.34 / 15.36 GB)
    and +22.7% (A100 80GB, 8 images: 28.47 GB): what the warning says, and no longer 'a quarter more'."""
    warning = image_model.AUTOCAST_MEMORY_WARNING
    assert "a quarter more" not in warning and "4 to 8 images" not in warning
    assert "13.5% less" in warning and "4% more" in warning and "21-23% more" in warning
    ours = {b: _reserved_gb(tmp_path, "rtx-a6000", _spec(b)) for b in (4, 8, 16)}
    assert Q8000[16] / ours[16] - 1.0 == pytest.approx(-0.135, abs=0.001)
    assert 46.11 / ours[16] - 1.0 == pytest.approx(0.044, abs=0.001)
    old_script = [15.34 / ours[4], 15.36 / ours[4], 28.47 / ours[8]]
    assert [r - 1.0 for r in old_script] == pytest.approx([0.206, 0.208, 0.227], abs=0.001)


def test_provenance_the_rows_left_unexplained_ran_the_earlier_script():
    """[CSV-HIST]. The three [LAMBDA-22-MEM] rows fix50s leaves as strict xfails (A6000 4, A100 8, 3090 4 images)
    were measured by the c6598a5 script (no `revision="fp16"`), whose 1-image rows read 0.93-0.97 GB above the
    2469d61 script's re-measurement on the same cards; the two rows fix50s calls FIXED (A6000 16, A100 28) and the
    [Q8000] rows came from the 2469d61 script. On one card (RTX 8000) the old script's 2-image row is 1.78 GB
    (+25.4%) above the new one, and under the old script the Turing and Ampere 2-image rows agree to 0.01 GB (8.8 vs
    8.79): the FIXED / UNEXPLAINED split follows the script, not the batch size. Not a cause sized from code (why
    the fp32 'main' checkpoint with torch_dtype fp16 reserved more on diffusers 0.3.0 was not read): a lead. Nor a
    constant load offset: the old script's RTX 8000 1-image row read 4.5, as the new one (4.52)."""
    old_b1 = {"rtx-a6000": 5.5, "a100-pcie-80gb": 5.48, "rtx-3090": 5.47}
    new_b1 = {"rtx-a6000": 4.53, "a100-pcie-80gb": 4.55, "rtx-3090": 4.54}
    shifts = [old_b1[g] - new_b1[g] for g in old_b1]
    assert shifts == pytest.approx([0.97, 0.93, 0.93], abs=0.001)
    quadro_old_b2, quadro_new_b2, a6000_old_b2 = 8.8, Q8000[2], 8.79
    assert quadro_old_b2 / quadro_new_b2 - 1.0 == pytest.approx(0.254, abs=0.001)
    assert abs(quadro_old_b2 - a6000_old_b2) <= 0.011
    assert abs(4.5 - Q8000[1]) <= 0.02
    # the same-script 16-image rows on two architectures
    assert 46.11 / Q8000[16] - 1.0 == pytest.approx(0.208, abs=0.001)


# ---------------------------------------------------------------------------------------------------------------
# 2. The mechanism: what the code at the run's version holds, and what the term adds.
# ---------------------------------------------------------------------------------------------------------------


def test_the_codes_on_minus_off_is_4_bytes_a_score_element_not_2():
    """[D042] + [C10-CCA], reserved blocks at the largest score size s (2 B an element), first call after
    empty_cache. Off: matmul -> A (s); `* scale` -> B (s); A freed; softmax's 16-bit output takes A (best fit): 2 s.
    On: A, B, A freed; softmax (fp32_set_opt_dtype) writes 2 s of fp32, which A cannot hold (no merge across
    segments) -> a new segment; the matmul's cached_cast fp16 copy takes A: 4 s. On minus off: 2 s = 4 B a score
    element (1.094 GB an image live for SD 1.5 512 px with CFG). fix50s's +2 B is the code's 8 B 'on' minus the
    product's 3-tensor allowance (6 B), not minus the code's 'off' (4 B), which its own diagnostic test concedes
    ('0.4.2's matmul * scale then softmax may reserve two'). So the term is not an increment counted from code."""
    off_blocks, on_blocks = 2 * 2, 2 + 2 + 4
    assert on_blocks - off_blocks == 4
    assert (
        image_model.AUTOCAST_PEAK_SCORE_EXTRA_BYTES
        == on_blocks - 2 * image_model.EAGER_INFERENCE_SCORE_TENSORS
    )
    code_increment = (on_blocks - off_blocks) * LARGEST_SCORES * 2 / 1e9
    assert code_increment == pytest.approx(1.094, abs=0.001)
    # [LAMBDA-AC] measured on-minus-off slope, 1 -> 4 images: 0.480 GB an image, the code's count is 2.3x it
    measured = (11.4 - 4.52) / 3 - (8.82 - 3.38) / 3
    assert code_increment / measured == pytest.approx(2.28, abs=0.01)


@pytest.mark.xfail(
    strict=True,
    reason="UNEXPLAINED (aud50t; fix50t; diffmem): [LAMBDA-AC] RTX A6000, diffusers 0.4.2, autocast on-minus-off"
    " growth, 1 -> 4 images: published 0.480 GB an image reserved, ours 1.233 GB an image reserved (the product's"
    " answer; -61.1%; was 0.617, -22.2%, before diffmem, stop 51, sized the off run with the 2022 code's two score"
    " tensors: the code's own on-minus-off, +4 B a score element, allocator replay in"
    " tests/procurement/sizing/test_attention_allocator_autocast.py). Each end row is inside 15% (on -7.0% / -10.3%,"
    " off -6.8% / +13.3%, test_outside_autocast_memory_fix50s.py): the difference of differences amplifies them."
    " Lead: the measured per-batch on-minus-off is not linear (1.14 / 3.82 / 2.58 GB at 1 / 2 / 4 images, one"
    " run each), so one slope from three single-run rows cannot check a per-image term; the off run's peak may"
    " sit outside the attention (the VAE decode) at 4 images.",
)
def test_the_products_reserved_on_minus_off_growth_against_lambda_ac(bundled_catalog, tmp_path):
    measured = (11.4 - 4.52) / 3 - (8.82 - 3.38) / 3
    growth = []
    for autocast in (True, False):
        ends = [_reserved_gb(tmp_path, "rtx-a6000", _spec(b, autocast)) for b in (1, 4)]
        growth.append((ends[1] - ends[0]) / 3)
    ours = growth[0] - growth[1]
    assert ours == pytest.approx(1.233, abs=0.002)
    assert abs(measured / ours - 1.0) <= MEMORY


@pytest.mark.parametrize(
    ("batch", "published", "ours_gb", "expected"),
    [
        pytest.param(
            4,
            11.4 - 8.82,
            4.931,
            -0.477,
            id="b4",
            marks=pytest.mark.xfail(
                strict=True,
                reason="UNEXPLAINED (diffmem, stop 51; passed before at 2.465 GB, +4.7%): [LAMBDA-AC] A6000, 4 "
                "images, autocast on minus off: published 11.4 - 8.82 = 2.58 GB reserved, ours 12.716 - 7.785 = "
                "4.931 (-47.7%), the code's +4 B a score element (0.4.2's 8 B on, 4 B off, replayed in "
                "tests/procurement/sizing/test_attention_allocator_autocast.py) now the product's, as aud50t "
                "predicted (4.94 vs 2.58). Both end rows are inside 15% (on -10.3%, off +13.3%), in opposite "
                "directions: the off run reserved 1.04 GB more than two score tensors at 4 images, the on run 1.32 "
                "GB less than four. The same excess appears at 4 images in the run's fp32 column (18.4 GB against "
                "15.57, +18.2%, test_outside_eager_scores_diffmem51.py), not at 1 or 2: a 4-image cost outside the "
                "scores that no count here sizes. Lead: a replay of the whole 0.4.2 generation at 4 images (the "
                "UNet's other tensors and the decode through the allocator), not done.",
            ),
        ),
        # FIXED by diffmem (stop 51): was a strict xfail at 0.617 GB (+84.8%): "The code's 4 B a score element
        # through the product's allowances (1.23 GB) would land it (-7.6%)", now the product's count
        pytest.param(1, 4.52 - 3.38, 1.233, -0.075, id="b1"),
    ],
)
def test_lambda_ac_on_minus_off_at_a_fixed_batch(
    bundled_catalog, tmp_path, batch, published, ours_gb, expected
):
    """[LAMBDA-AC] on minus off at one batch (the same run's two rows, no slope across runs)."""
    ours = _reserved_gb(tmp_path, "rtx-a6000", _spec(batch)) - _reserved_gb(
        tmp_path, "rtx-a6000", _spec(batch, autocast=False)
    )
    assert ours == pytest.approx(ours_gb, abs=0.002)
    assert published / ours - 1.0 == pytest.approx(expected, abs=0.005)
    assert abs(published / ours - 1.0) <= MEMORY


def test_the_code_count_through_the_allowances_at_1_and_4_images():
    """The arithmetic behind the b1 reason: 4 B x 136.74 M x 2 samples = 1.094 GB an image live, x 1.128 (the
    product's own live -> reserved ratio on this term, 0.617 / 0.547) = 1.234 GB an image reserved: 1 image -7.6%
    against the measured 1.14, 4 images (4.94) -47.7% against 2.58."""
    live = 4 * LARGEST_SCORES * 2 / 1e9
    reserved = live * RESERVE
    assert reserved == pytest.approx(1.234, abs=0.002)
    assert LAMBDA_AC_MEMORY[1][0] - LAMBDA_AC_MEMORY[1][1] == pytest.approx(1.14, abs=0.001)
    assert (LAMBDA_AC_MEMORY[1][0] - LAMBDA_AC_MEMORY[1][1]) / reserved - 1.0 == pytest.approx(
        -0.076, abs=0.005
    )
    assert (LAMBDA_AC_MEMORY[4][0] - LAMBDA_AC_MEMORY[4][1]) / (4 * reserved) - 1.0 == pytest.approx(
        -0.477, abs=0.005
    )


# ---------------------------------------------------------------------------------------------------------------
# 3. Validation, schema, form.
# ---------------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("bad", ["yes", 1])
def test_a_non_boolean_autocast_names_the_field(bad):
    spec = _spec(1)
    spec["image"] = spec["image"] | {"autocast": bad}
    with pytest.raises(Exception) as error:
        parse_workload_spec(spec)
    assert "image.autocast" in str(error.value)


def test_fp32_under_autocast_is_refused_naming_the_field():
    with pytest.raises(Exception) as error:
        parse_workload_spec(_spec(1, precision="fp32"))
    assert "image.autocast" in str(error.value) and "float16" in str(error.value)


def test_schema_and_form_say_fp16_only_and_the_answer_warns(bundled_catalog, tmp_path):
    help_text = str(WorkloadImageSerializer().fields["autocast"].help_text)
    assert "fp16" in help_text and "bf16" in help_text
    fields = {field["name"]: field for field in image_form_fields({}, {})}
    assert "fp16" in str(fields["autocast"])
    assert image_model.AUTOCAST_MEMORY_WARNING in _candidate(tmp_path, "rtx-a6000", _spec(2))["warnings"]
