"""What PyTorch's caching allocator reserves over diffusers' 2022 eager attention call, autocast on and off
(image_model.AUTOCAST_PEAK_SCORE_EXTRA_BYTES; fix50t, acting on aud50t's fix 1).

The calls, score-sized tensors only (q, k, v and the output are heads x N x 40, under 1% of the scores):
  [D042] huggingface/diffusers v0.4.2 src/diffusers/models/attention.py CrossAttention._attention lines 278-281:
      `attention_scores = torch.matmul(query, key.transpose(-1, -2)) * self.scale` (the matmul's output is a
      temporary, freed once `* scale` returns), `attention_probs = attention_scores.softmax(dim=-1)`,
      `hidden_states = torch.matmul(attention_probs, value)`; both names live until the function returns.
  [D030] v0.3.0 lines 278-282: `attn_slice = einsum(...) * self.scale`, `attn_slice = attn_slice.softmax(dim=-1)`
      (the name is rebound: the scaled scores are freed when softmax returns), `einsum(attn_slice, value)`.
  [AMP-CAST] aten/src/ATen/autocast_mode.cpp (1.10+): softmax is fp32_set_opt_dtype (fp32 output from 16-bit
      input), matmul / einsum lower_precision_fp (cached_cast makes an uncached 16-bit copy of the fp32
      probabilities, freed when the matmul returns).
They run through `_CachingAllocator`, the c10 CUDACachingAllocator rules replayed for the UNet in
test_unet_allocator_reserve.py (requests >= 10 MiB get their own segment rounded to 2 MiB; best fit; merges only
within a segment), two consecutive calls after empty_cache, at SD 1.5's self-attention size at 512 px with CFG
(2 samples x 8 heads x 4096 x 4096).
"""

import pytest

from procurement.sizing import image_model
from tests.procurement.sizing.test_unet_allocator_reserve import _CachingAllocator

SCORE_ELEMENTS = 2 * 8 * 4096 * 4096
HALF, FLOAT = 2 * SCORE_ELEMENTS, 4 * SCORE_ELEMENTS


def _call(version: str, autocast: bool) -> list[tuple[str, str, int]]:
    """One attention call's score-sized allocations and frees, in order."""
    probabilities = FLOAT if autocast else HALF
    events = [("malloc", "matmul", HALF), ("malloc", "scaled", HALF), ("free", "matmul", 0)]
    events.append(("malloc", "probabilities", probabilities))
    if version == "0.3.0":
        events.append(("free", "scaled", 0))  # `attn_slice = attn_slice.softmax(...)` drops the scaled scores
    if autocast:
        events += [("malloc", "cast", HALF), ("free", "cast", 0)]  # cached_cast's copy, gone after the matmul
    if version == "0.4.2":
        events.append(("free", "scaled", 0))
    events.append(("free", "probabilities", 0))
    return events


def _replay(version: str, autocast: bool, calls: int = 2) -> _CachingAllocator:
    allocator = _CachingAllocator()
    for _ in range(calls):
        live: dict[str, tuple[int, int]] = {}
        for action, name, size in _call(version, autocast):
            if action == "malloc":
                live[name] = allocator.malloc(size)
            else:
                allocator.free(*live.pop(name))
    return allocator


def _per_element(figure: int) -> float:
    return figure / SCORE_ELEMENTS


@pytest.mark.parametrize("version", ["0.4.2", "0.3.0"])
def test_the_replay_reserves_8_bytes_a_score_element_on_and_4_off(version):
    """On: the matmul temporary's block is freed, the fp32 probabilities (4 B) cannot take it (their own
    segment), the 16-bit cast does: 2 + 2 + 4 = 8 B. Off: softmax's 16-bit output takes the temporary's block:
    2 + 2 = 4 B. On minus off: +4 B a score element, 1.074 GB an image at SD 1.5's self-attention size with CFG
    (1.094 GB on the product's largest score tensor, 8 x 4096 x 4173)."""
    on, off = _replay(version, True), _replay(version, False)
    assert _per_element(on.peak_reserved) == pytest.approx(8.0, abs=0.001)
    assert _per_element(off.peak_reserved) == pytest.approx(4.0, abs=0.001)
    assert (on.peak_reserved - off.peak_reserved) / 1e9 == pytest.approx(1.074, abs=0.001)


def test_live_peaks_differ_by_version_reserved_does_not():
    """0.4.2 keeps the scaled scores through the second matmul: 8 B live under autocast. 0.3.0 rebinds the name,
    so the scores die when softmax returns: 6 B live (fp32 probabilities + scores, then + cast), reserved still
    8 B (the freed block stays cached). Off: 4 B live on both."""
    assert _per_element(_replay("0.4.2", True).peak_allocated) == pytest.approx(8.0, abs=0.001)
    assert _per_element(_replay("0.3.0", True).peak_allocated) == pytest.approx(6.0, abs=0.001)
    for version in ("0.4.2", "0.3.0"):
        assert _per_element(_replay(version, False).peak_allocated) == pytest.approx(4.0, abs=0.001)


def test_the_products_term_is_the_replayed_on_peak_less_its_own_off_allowance():
    """What the +2 B is: the replayed on-peak (8 B) less the product's three-tensor allowance for eager attention
    without autocast (EAGER_INFERENCE_SCORE_TENSORS x 2 B = 6 B, diffusers 0.15's AttnProcessor), not the
    code's on-minus-off (+4 B: the code's off-peak is 4 B, 2 B under the allowance). The product's total at the
    peak under autocast, 6 + 2 = 8 B, is the replay's."""
    on = _per_element(_replay("0.4.2", True).peak_reserved)
    off = _per_element(_replay("0.4.2", False).peak_reserved)
    allowance = 2 * image_model.EAGER_INFERENCE_SCORE_TENSORS
    assert on - allowance == pytest.approx(image_model.AUTOCAST_PEAK_SCORE_EXTRA_BYTES, abs=0.001)
    assert on - off == pytest.approx(4.0, abs=0.001)
    assert allowance + image_model.AUTOCAST_PEAK_SCORE_EXTRA_BYTES == pytest.approx(on, abs=0.001)


@pytest.mark.parametrize("version", ["0.4.2", "0.3.0"])
def test_the_2022_runtimes_allowance_is_the_replayed_off_peak_and_its_term_the_on_minus_off(version):
    """diffmem (stop 51): under image.runtime diffusers-0.7 the product's allowance without autocast is the replay's
    off-peak (DIFFUSERS_0_7_SCORE_TENSORS x 2 B = 4 B), so its autocast term is the code's on-minus-off (+4 B) and its
    peak under autocast stays the replay's 8 B."""
    on = _per_element(_replay(version, True).peak_reserved)
    off = _per_element(_replay(version, False).peak_reserved)
    assert 2 * image_model.DIFFUSERS_0_7_SCORE_TENSORS == pytest.approx(off, abs=0.001)
    assert image_model.AUTOCAST_EAGER_PEAK_SCORE_BYTES == pytest.approx(on, abs=0.001)
    assert (
        image_model.AUTOCAST_EAGER_PEAK_SCORE_BYTES - 2 * image_model.DIFFUSERS_0_7_SCORE_TENSORS == on - off
    )
