"""Outside audit aud48k of decode48b (issue 26, eager Hugging Face decode at long context): the Qwen2 speed page's
long-input BF16 rows, run on an older stack than the Qwen2.5 rows decode48b landed (torch 2.1.2, transformers
4.38.2, flash-attn 2.3.3: the same pre-pytorch#150233 cat kernel and the same Qwen2FlashAttention2 repeat_kv), sized
as a user states them. None of these four rows is used by another test (the page's 0.5B / 1.5B / 7B input-1 and 7B
6,144 rows are test_outside_eager_decode_audit_stop46.py's; the Qwen2.5 page's rows are decode48b's).

Source: [QWEN2LONG] shadowboxx/Qwen2 @cb54c496fb94dcc960653c1aa0595679f956f56b docs/source/benchmark/speed_benchmark.rst
(the QwenLM/Qwen2 page [QWEN2SPEED] quotes @5c4e69cb; its input-1 rows 37.97 / 30.85 / 34.74 match digit for digit):
"NVIDIA A100 80GB, CUDA 11.8, Pytorch 2.1.2+cu118, Flash Attention 2.3.3, Transformers 4.38.2"; "We use the batch
size of 1 and the least number of GPUs as possible"; "generating 2048 tokens with the input lengths of 1, 6144, 14336,
30720". Verbatim rows (Model | Input Length | Quantization | GPU Num | Speed(tokens/s) | GPU Memory(GB)):
    7B (Transformer):  Qwen2-7B-Instruct  | 14336 | BF16 | 1 | 26.63 | 27.71 ;  | 30720 | BF16 | 1 | 17.49 | 42.62
    72B (Transformer): Qwen2-72B-Instruct | 14336 | BF16 | 3 | 4.12 | 169.93 ;   | 30720 | BF16 | 3 | 2.86 | 209.03
Shapes: Qwen2-7B / 72B = the product's qwen2.5-7b / qwen2.5-72b presets (28 x 3,584, 28 / 4 heads; 80 x 8,192, 64 / 8
heads, 29,568 MLP, 152,064 vocab: Qwen2.5 keeps Qwen2's shapes). Stated as run: inference.engine hf_eager,
model.eager_layer qwen2, inference.attn_implementation flash_attention_2 (transformers 4.38.2's Qwen2FlashAttention2
repeats the cache with repeat_kv before flash_attn_func, as 4.46.0 does), multi-GPU as device_map "auto"
(pipeline_parallel = GPUs), speed = 2,048 / (prefill + 2,048 decode steps), as test_outside_eager_kv_fix_stop45.py
reads the Qwen2.5 page. Tolerance: LLM speed 15%.
"""

from __future__ import annotations

import copy

import pytest

from procurement.api.sizing import size_spec_document
from procurement.sizing import serving_host

A100 = "a100-sxm4-80gb"
GENERATED = 2048


def _speed(preset: str, prompt: int, gpus: int, stated: bool = True) -> float:
    spec = {
        "name": f"aud48k-{preset}-{prompt}",
        "task": "inference",
        "model": {"preset": preset},
        "weight_quantization": "none",
        "inference": {
            "concurrency": 1,
            "context_len": prompt + GENERATED,
            "output_tokens": GENERATED,
            "engine": "hf_eager",
        },
    }
    if stated:
        spec["model"]["eager_layer"] = "qwen2"
        spec["inference"]["attn_implementation"] = "flash_attention_2"
        spec["inference"]["transformers_release"] = "4.38.2"
    if gpus > 1:
        spec["parallelism"] = {"gpus": gpus, "pipeline_parallel": gpus}
    t = size_spec_document(copy.deepcopy(spec), [A100], calibrate=False)["throughput"]
    return GENERATED / (
        t["time_to_first_token_seconds"] + GENERATED / t["decode_tokens_per_second_per_stream"]
    )


_7B_LEAD = (
    " Ruled out as this row's miss: the per-byte term. Between 14,336 and 30,720 the page's 7B step grows 19.7 ms "
    "(2,048 / 26.63 -> 2,048 / 17.49 per token: 37.5 -> 57.2 ms, prefill included as published) and the engine's "
    "19.0 ms (27.5 -> 46.5 ms), so decode48b's 2.057 carries the growth; the miss is the step up to 14,336: 37.5 ms "
    "published against 27.5 (the same shape as the Qwen2.5 page's 7B 14,336 row, UNEXPLAINED at +22.2%). The page "
    "is slower than Qwen2.5's at every 7B row (37.97 / 26.63 / 17.49 against 40.38 / 29.78 / 18.83) on the same "
    "shapes, card and cat kernel: transformers 4.38.2's loop against 4.46.0's, which no spec field states. Best "
    "lead: the 7B GPU step at 6,144-14,336 (the engine near its 24.8 ms host floor there) and how much host and GPU "
    "overlap there (decode48b's lead for the Qwen2.5 7B 14,336 row)."
)
ROWS = {
    # id: (preset, prompt, GPUs, published tok/s, ours stated as run, ours unstated)
    # fix48k: pins moved to fix48x's corrected 1.944 (aud48k wrote them at decode48b's inverted 2.057: 36.385 / 21.502
    # / 4.684 / 2.973 stated, 8.097 / 6.651 unstated 72B); a pin only, the 15% claims are unchanged
    "7b-14336-1gpu": ("qwen2.5-7b", 14336, 1, 26.63, 37.330, 39.474),
    "7b-30720-1gpu": ("qwen2.5-7b", 30720, 1, 17.49, 22.188, 38.158),
    "72b-14336-3gpu": ("qwen2.5-72b", 14336, 3, 4.12, 4.782, 8.149),
    "72b-30720-3gpu": ("qwen2.5-72b", 30720, 3, 2.86, 3.056, 6.724),
}
XFAIL = {
    "7b-14336-1gpu": (
        "UNEXPLAINED: [QWEN2LONG] Qwen2-7B-Instruct BF16, 1 x A100 80GB, input 14,336, torch 2.1.2 / transformers "
        "4.38.2 / flash-attn 2.3.3: published 26.63 tokens/s, ours stated as run 36.39 (+36.6%; before decode48b "
        "39.47, +48.2%; unstated 39.47). fix48x's corrected 1.944: 37.33 (+40.2%)." + _7B_LEAD
    ),
    "7b-30720-1gpu": (
        "UNEXPLAINED: [QWEN2LONG] Qwen2-7B-Instruct BF16, 1 x A100 80GB, input 30,720, torch 2.1.2 / transformers "
        "4.38.2 / flash-attn 2.3.3: published 17.49 tokens/s, ours stated as run 21.50 (+22.9%; before decode48b "
        "30.28, +73.1%; unstated 38.16). decode48b's FIXED Qwen2.5 row at the same shapes, card and cat kernel "
        "(18.83, +14.2%) lands 0.8 point inside; this release's run is 7.1% slower and misses. fix48x's corrected "
        "1.944: 22.19 (+26.9%)." + _7B_LEAD
    ),
    "72b-14336-3gpu": (
        "UNEXPLAINED (fix48k): [QWEN2LONG] Qwen2-72B-Instruct BF16, 3 x A100 80GB, input 14,336, torch 2.1.2 / "
        "transformers 4.38.2 / flash-attn 2.3.3: published 4.12 tokens/s, ours stated as run 4.782 (+16.1%). Was a "
        "passing case at aud48k (4.684, +13.7%, at decode48b's inverted 2.057; 5.798, +40.7%, before decode48b); "
        "moved out by fix48x's correction to 1.944, as aud48k forecast (+16.4% at the A100-anchored 1.93). Ruled out "
        "as the miss: the per-byte copy term, which overcharges this page's 14,336 -> 30,720 growth (engine 118.2 ms "
        "against 106.9 published, 1.11x): the engine's 14,336 step itself is short (209.1 ms against 242.7, -13.8%; "
        "the Qwen2.5 page's same row 235.3, -11.1%, passes at +12.5%), so the 72B row lands or misses by "
        "compensation. Best lead: the 72B step's fixed part at 3-GPU layer split (weights, host, the split's "
        "hand-offs), unsized; no opened source sizes it."
    ),
}


@pytest.mark.django_db
@pytest.mark.parametrize(
    "row",
    [
        pytest.param(k, marks=pytest.mark.xfail(strict=True, reason=XFAIL[k])) if k in XFAIL else k
        for k in ROWS
    ],
)
def test_qwen2_long_input_bf16_rows_stated_as_run(bundled_catalog, row):
    """[QWEN2LONG] rows (module docstring), each within 15% stated as run. Passing: 72B 14,336 (3 GPUs) published
    4.12, ours 4.684 (+13.7%); 72B 30,720 (3 GPUs) published 2.86, ours 2.973 (+4.0%): decode48b's 2.057 held out
    on another torch / transformers release (before decode48b 5.798 / 3.975, +40.7% / +39.0%). fix48k: at fix48x's
    corrected 1.944, 72B 30,720 passes at 3.056 (+6.8%) and 72B 14,336 is out at 4.782 (+16.1%), a strict xfail."""
    preset, prompt, gpus, published, ours, _ = ROWS[row]
    speed = _speed(preset, prompt, gpus)
    assert speed == pytest.approx(ours, rel=0.01)
    assert speed == pytest.approx(published, rel=0.15)


@pytest.mark.django_db
@pytest.mark.parametrize("row", list(ROWS))
def test_unstated_rows_stay_far_out(bundled_catalog, row):
    """A user who states only hf_eager (3 passes, no repeat_kv: transformers >= 4.48's default) gets 1.5-2.3x the
    published speed on this page; stating the run's code is what lands the 72B rows."""
    preset, prompt, gpus, published, _, unstated = ROWS[row]
    speed = _speed(preset, prompt, gpus, stated=False)
    assert speed == pytest.approx(unstated, rel=0.01)
    assert speed > published * 1.15


@pytest.mark.django_db
def test_72b_growth_per_cache_byte_is_overcharged_on_both_pages(bundled_catalog):
    """The 72B rows land by compensation: from 14,336 to 30,720 (both 3 GPUs) the engine's step grows 123.0 ms
    (4.684 -> 2.973 tok/s) where [QWEN2LONG] grows 106.6 ms (4.12 -> 2.86) and [QW25SPEED] 104.8 ms (4.25 -> 2.94):
    the 19 counted passes at 30.6 pass-equivalents (11 copies x 2.057 + 8 reads) against decode48's measured 25.8
    needed on the Qwen2.5 page (1.19x over), while the 14,336 step itself is 12-14% short. 7B: 27.6 charged
    against 22.6 / 28.3 needed (decode48), 14B 21.5 against 19.8 / 21.4. fix48k, at fix48x's corrected 1.944: the
    engine grows 118.2 ms (4.782 -> 3.056), 29.4 pass-equivalents (1.14x over decode48's 25.8), the 14,336 step
    11-14% short (209.1 ms against 242.7 / 235.3)."""
    per_token = {k: 1e3 / _speed(*ROWS[k][:3]) for k in ("72b-14336-3gpu", "72b-30720-3gpu")}
    engine_growth = per_token["72b-30720-3gpu"] - per_token["72b-14336-3gpu"]
    assert engine_growth == pytest.approx(118.2, abs=1.0)  # fix48k: 123.0 at decode48b's 2.057
    assert 1e3 / 2.86 - 1e3 / 4.12 == pytest.approx(106.9, abs=0.2)
    assert 1e3 / 2.94 - 1e3 / 4.25 == pytest.approx(104.8, abs=0.2)
    assert 3.0 + 2.0 * 8 == 19.0 and 2.0 + 1.0 + 8 == 11.0
    # fix48k: 29.4 and 1.105 at fix48x's 1.944 (30.6 and 1.15 at decode48b's 2.057)
    assert 19.0 + 11.0 * (serving_host.EAGER_2BYTE_COPY_PASS_RATIO - 1.0) == pytest.approx(29.4, abs=0.05)
    assert engine_growth / (1e3 / 2.86 - 1e3 / 4.12) == pytest.approx(1.105, abs=0.01)


def test_pytorch_150233_ratio_against_an_a100_anchor():
    """pytorch#150233 "before" (ms, one unnamed GPU), title torch-cat-D1-30108-D2-624-D3-772: fp32 B 20,000 2.744544,
    bf16 2.668288. Read as a cat of [B, 30,108] / [B, 624] / [B, 772] along dim 1 (the title's D's; the script is not
    in the PR text): fp32 5.04 GB in and out in 2.745 ms = 1.84 TB/s, bf16 2.52 GB in 2.668 ms = 0.94 TB/s, 236 G
    elements/s. The card is not named; it is unlikely an A100: pytorch#195542's A100 element-at-a-time copy_
    (bf16 -> fp32, 67,108,864 elements, 362.46 us, "control") runs 185 G elements/s, 1.28x under it, and an A100
    80GB would put the vectorized fp32 cat at 0.90 of peak, not at the engine's 0.7 x 2,039 = 1.43 TB/s that the
    2.057 is charged against (read that way the bf16 cat would cost 1.51 passes). Anchored on the named A100 instead
    (element-bound, 185 G elements/s x 2 + 2 bytes = 0.74 TB/s) a 2-byte copy pass costs 1.93 passes. At 1.93 the
    FIXED [QW25SPEED] 7B 30,720 row reads 22.28 (+18.3%, out) and [QWEN2LONG] 72B 14,336 4.795 (+16.4%, out); the
    other FIXED rows stay inside (14B 14,336 +12.2%, 14B 30,720 +8.9%, 72B 6,144 +4.1%, 14,336 +12.8%, 30,720 +4.3%).
    The copy kernels priced are two (the cat's CatArrayBatchedCopy_contig; repeat_kv's gpu_kernel legacy path,
    launch_legacy_kernel<128, 4> with an OffsetCalculator, which fp32 takes too): #150233 measured only the first,
    and repeat_kv's 1 + n_rep copies are 8 of 10 (7B) / 9 of 11 (72B) of the surcharged passes."""
    elems = 20000 * (30108 + 624 + 772)
    fp32_tbs = 2 * elems * 4 / 2.744544e-3 / 1e12
    bf16_tbs = 2 * elems * 2 / 2.668288e-3 / 1e12
    assert fp32_tbs == pytest.approx(1.837, abs=0.005)
    assert bf16_tbs == pytest.approx(0.945, abs=0.005)
    engine = 0.7 * 2039e9 / 1e12
    assert engine / bf16_tbs == pytest.approx(1.51, abs=0.01)
    a100_elements = 67108864 / 362.46e-6
    assert a100_elements / 1e9 == pytest.approx(185.1, abs=0.1)
    assert (elems / 2.668288e-3) / a100_elements == pytest.approx(1.276, abs=0.005)
    assert engine / (a100_elements * 4 / 1e12) == pytest.approx(1.93, abs=0.01)
    # fix48k: fix48x corrected the engine's ratio to 2 x 2.668288 / 2.744544 (decode48b's 2.057 was it inverted)
    assert serving_host.EAGER_2BYTE_COPY_PASS_RATIO == pytest.approx(1.944, abs=0.001)
