"""diffmem (stop 51, issue 29): the score tensors diffusers' 2022 eager attention holds at its peak in inference.

The class: `image.runtime: diffusers-0.7` (diffusers before 0.8) sized its eager attention's memory with diffusers
0.15's processor count, three 16-bit score tensors (image_model.EAGER_INFERENCE_SCORE_TENSORS). The 2022 code holds
two (image_model.DIFFUSERS_0_7_SCORE_TENSORS):
  [D042] huggingface/diffusers v0.4.2 src/diffusers/models/attention.py CrossAttention._attention lines 278-281:
      `attention_scores = torch.matmul(query, key.transpose(-1, -2)) * self.scale` (the matmul's output is a
      temporary, freed when `* scale` returns), `attention_probs = attention_scores.softmax(dim=-1)` (its output
      takes the temporary's block), `hidden_states = torch.matmul(attention_probs, value)`: two score tensors live
      and reserved, 4 B an element at 16 bits, 8 B at fp32; no baddbmm input beside them (that arrived with PR
      #1203, v0.8). Replayed through the c10 caching allocator's rules in
      tests/procurement/sizing/test_attention_allocator_autocast.py (off: 4 B a 16-bit score element).
Held out (no row here set the count; it is read from the code):
  [LAMBDA-AC] LambdaLabsML/lambda-diffusers PR #11 (head bb72fa67, diffusers 0.4.2; rows in
      test_outside_lambda_autocast_stop49.py), RTX A6000, memory_reserved GB after one call: 'half' without
      autocast 3.38 / 4.92 / 8.82 (scored in test_outside_autocast_memory_fix50s.py), 'single' (fp32, no
      autocast) 7.73 / 9.57 / 18.4 at 1 / 2 / 4 images (scored here).
"""

from __future__ import annotations

import pytest

from procurement.sizing import image_model
from procurement.sizing.spec import parse_workload_spec
from tests.procurement.outside.test_outside_autocast_memory_fix50s import LARGEST_SCORES, _reserved_gb, _spec

MEMORY = 0.15
# [LAMBDA-AC] 'single' rows, GB reserved: n_samples -> memory
LAMBDA_AC_SINGLE = {1: 7.73, 2: 9.57, 4: 18.4}


def _single(batch: int) -> dict:
    return _spec(batch, autocast=False) | {"precision": "fp32"}


def test_the_2022_runtime_counts_two_score_tensors_and_the_later_ones_three():
    """[D042]: two on diffusers-0.7, three (diffusers 0.15's processor) on the other runtimes."""
    old = parse_workload_spec(_single(1))
    later = parse_workload_spec(_single(1) | {"image": {"resolution_px": 512, "runtime": "pytorch-2.0"}})
    assert image_model.eager_inference_score_tensors(old) == 2.0
    assert image_model.eager_inference_score_tensors(later) == 3.0


def test_one_score_tensor_less_is_1_233_gb_an_image_reserved_in_fp32(bundled_catalog, tmp_path):
    """Hand: one fp32 score tensor of SD 1.5 at 512 px with CFG, 2 samples x 136.74 M elements x 4 B = 1.094 GB an
    image live, x 1.127 (the sd-1.5 preset's forward_reserve_ratio) = 1.233 GB reserved: the 2022 runtime's figure
    is that much below the later runtimes' at every batch (1 / 4 images: 8.484 -> 7.251, 20.501 -> 15.570)."""
    live = 2 * LARGEST_SCORES * 4 / 1e9
    assert live == pytest.approx(1.094, abs=0.001)
    for batch in (1, 4):
        old = _reserved_gb(tmp_path, "rtx-a6000", _single(batch))
        later = _reserved_gb(
            tmp_path,
            "rtx-a6000",
            _single(batch) | {"image": {"resolution_px": 512, "runtime": "pytorch-2.0"}},
        )
        assert later - old == pytest.approx(batch * 1.233, abs=0.003)


@pytest.mark.parametrize(
    ("batch", "ours_gb", "expected"),
    [
        # before diffmem (three score tensors): 8.484 GB, -8.9%
        pytest.param(1, 7.251, 0.066, id="b1"),
        # before: 12.490 GB, -23.4% (outside)
        pytest.param(2, 10.024, -0.045, id="b2"),
        pytest.param(
            4,
            15.570,
            0.182,
            id="b4",
            marks=pytest.mark.xfail(
                strict=True,
                reason="UNEXPLAINED (diffmem, stop 51; 20.501 GB, -10.3%, inside, under the three-tensor count "
                "before): [LAMBDA-AC] RTX A6000 'single' (fp32, diffusers 0.4.2, no autocast), 4 images: "
                "published 18.4 GB reserved, ours 15.570 (+18.2%) with the 2022 code's two fp32 score tensors "
                "(the UNet forward binds: 9.84 GB live against the fp32 decode's 4.56). The 1- and 2-image rows "
                "of the same column land (+6.6% / -4.5%), and the 'half' column without autocast shows the same "
                "4-image excess (8.82 against 7.785, +13.3%, inside), 1 -> 2 images growing 1.84 / 1.54 GB and "
                "2 -> 4 images 8.83 / 3.90 GB (fp32 / half): a cost at 4 images outside the scores' count, not "
                "sized. Lead: the allocator's segments over the whole 0.4.2 generation at 4 images (the UNet's "
                "other tensors and the decode replayed with the scores), not done.",
            ),
        ),
    ],
)
def test_lambda_ac_fp32_rows_held_out(bundled_catalog, tmp_path, batch, ours_gb, expected):
    """[LAMBDA-AC] 'single' rows against the product's total less the CUDA context (memory_reserved)."""
    published = LAMBDA_AC_SINGLE[batch]
    ours = _reserved_gb(tmp_path, "rtx-a6000", _single(batch))
    assert ours == pytest.approx(ours_gb, abs=0.002)
    assert published / ours - 1.0 == pytest.approx(expected, abs=0.005)
    assert abs(published / ours - 1.0) <= MEMORY
