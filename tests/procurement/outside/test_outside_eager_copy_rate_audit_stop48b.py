"""Issue 26, stop 48, decode48b: decode48's lead sized from sources and landed. The Qwen2.5 speed page's eager decode
steps need 1.3-1.7x the counted KV passes a cache byte (test_outside_eager_sync_audit_stop48.py); the copies among
those passes (DynamicCache.update's torch.cat: read + write; repeat_kv's expand + reshape: one read, n_rep writes)
run PyTorch's element-at-a-time kernels on a 2-byte cache, and the engine now prices each copy pass at
serving_host.EAGER_2BYTE_COPY_PASS_RATIO (1.944; fix48x: decode48b's 2.057 inverted the source's ratio) passes of
its vectorized read rate; attention's reads stay at one.

Sources (opened for this audit):
  [PT150233] pytorch/pytorch PR #150233 "[aten] 8 bytes aligned vector loads for bf16 and fp16 dtypes in torch.cat"
      (2025-03-28), its "before" benchmark (torch-cat-D1-30108-D2-624-D3-772, the same shapes in each dtype): pt_eager
      fp32 1.326848 / 2.744544 ms, bf16 1.303792 / 2.668288 ms at B 10,000 / 20,000 (0.133616 / 0.140608 at 1,000).
      The bf16 cat moves half the fp32 cat's bytes in the same time: an element rate. fp32 took the wide-load kernel
      (pytorch#102815, 2023, 32 / 64-bit only), bf16 CatArrayBatchedCopy_contig, one element a thread, the kernel of
      every torch release the published eager rows state (2.0.1-2.3.1). The engine prices a copy at its bytes: the
      bf16 cat (half the fp32 bytes, 1.372272 ms at the fp32 cat's rate) takes 2.668288 ms, so a 2-byte copy pass
      costs 2 x 2.668288 / 2.744544 = 1.944 passes (fix48x; decode48b had 2 x 2.744544 / 2.668288 = 2.057, inverted).
  [PT195542] pytorch/pytorch PR #195542 (2026-09-01), its A100 table: a bf16 -> fp32 copy_ on the base build (the
      element-at-a-time LoadWithCast path), 67,108,864 elements in 362.46 us: 185 G elements/s. Consistent, not used:
      at that element rate a 2 + 2-byte copy moves 0.74 TB/s, 1.93x under the engine's 0.7 x 2,039 GB/s.
  [FA17] flagos-ai/FlagAttention PR #17 (2024-02-01), RTX 3090 (936 GB/s, pricing/data/gpu_specs.csv), its
      benchmark/flash_decoding_benchmark.py: flash_attn_func(q, k, v) with q (2, 1, H, D), fp16, H x D = 2,048:
      "flash-2" 10.183790 ms at 524,288 keys (D 64) and 0.324517 ms at 16,384 keys (D 128). Bytes read (K and V):
      2 x H x N x D x 2 x 2: 843.5 / 827.3 GB/s, 0.90 / 0.88 of the card's bandwidth, above the engine's 0.7: the
      attention read at one query row is not slow, so the missing time is not there.
  [QW25SPEED] QwenLM/Qwen2.5 @010c37c33b13a1ac59944b349620e13404efe97d docs/source/benchmark/speed_benchmark.rst, as
      test_outside_eager_sync_audit_stop48.py quotes it.
No fit: every Qwen2.5 row is held out. Tolerance: the issue's 15% on LLM speed.
"""

from __future__ import annotations

import pytest

from procurement.sizing import serving_host
from tests.procurement.outside.test_outside_eager_sync_audit_stop48 import (
    GENERATED,
    PUBLISHED,
    _throughput,
)

RTX3090_BYTES_PER_S = 936e9


def test_the_copy_ratio_is_pytorch_150233s_own_fp32_bf16_cat_benchmark():
    # fix48x (audx48b item 1): was pinned to the inverted 2 x 2.744544 / 2.668288 = 2.057
    assert serving_host.EAGER_2BYTE_COPY_PASS_RATIO == pytest.approx(1.944, abs=0.001)
    assert serving_host.EAGER_2BYTE_COPY_PASS_RATIO == pytest.approx(2 * 2.668288 / 2.744544)  # B 20,000
    assert 2 * 1.303792 / 1.326848 == pytest.approx(1.965, abs=0.001)  # B 10,000
    assert 2 * 0.140608 / 0.133616 == pytest.approx(2.105, abs=0.001)  # B 1,000, the smallest
    # [PT195542]'s A100 element rate, read for a 2 + 2-byte copy: 1.93x under the engine's rate (consistent)
    elements_per_s = 67_108_864 / 362.46e-6
    assert 0.7 * 2039e9 / (elements_per_s * 4) == pytest.approx(1.93, abs=0.01)


def test_flash_attn_reads_its_cache_at_one_query_row_above_the_engines_rate():
    d64 = 2 * 32 * 524288 * 64 * 2 * 2 / 10.183790e-3
    d128 = 2 * 16 * 16384 * 128 * 2 * 2 / 0.324517e-3
    assert d64 / RTX3090_BYTES_PER_S == pytest.approx(0.901, abs=0.002)
    assert d128 / RTX3090_BYTES_PER_S == pytest.approx(0.884, abs=0.002)
    assert min(d64, d128) / RTX3090_BYTES_PER_S > 0.7


# The [QW25SPEED] rows stated as run (eager_layer qwen2, flash_attention_2), before -> after decode48b. The GPU-bound
# rows land; 7B at 14,336 (the GPU's step now, 26.9 ms, above its 24.8 ms floor, against the run's 33.0) stays out;
# 14B at 6,144 is the host floor (unchanged, +14.6%); the input-1 and 6,144 7B rows are host-bound and do not move.
# fix48x: at the corrected ratio 1.944 (was 2.057): 7B 14,336 36.385 -> 37.330, 30,720 21.502 -> 22.188 (+17.8%, back
# out: a strict xfail, _OUT), 14B 14,336 15.115 -> 15.564, 30,720 8.585 -> 8.886, 72B 4.684 -> 4.782, 2.973 -> 3.056.
# qwen2up2 / fixtr (stop 52): the builder states the run's transformers 4.46.0, so the host-bound rows read the
# recounted layer (42 + 9 a token) at 19.67 us, not 51 at 16.99 us: 7B input 1 40.359 -> 41.832 (-0.1% -> +3.6%),
# 6,144 40.018 -> 41.466 (+3.2% -> +7.0%), 14B 6,144 23.508 -> 24.474 (+14.6% -> +19.3%, the strict xfail of
# test_outside_repeat_kv_audit_stop45.py). The GPU-bound rows, which decode48b's copy pricing moved, do not move.
_HOST_BOUND = {("qwen2.5-7b", 1), ("qwen2.5-7b", 6144), ("qwen2.5-14b", 6144)}
_ROWS = {  # (preset, input): (before decode48b, after fix48x; host-bound rows: stated 4.46.0, stop 52)
    ("qwen2.5-7b", 1): (40.359, 41.832),
    ("qwen2.5-7b", 6144): (40.018, 41.466),
    ("qwen2.5-7b", 14336): (39.474, 37.330),
    ("qwen2.5-7b", 30720): (30.280, 22.188),
    ("qwen2.5-14b", 6144): (23.508, 24.474),
    ("qwen2.5-14b", 14336): (20.718, 15.564),
    ("qwen2.5-14b", 30720): (12.579, 8.886),
    ("qwen2.5-72b", 14336): (5.798, 4.782),
    ("qwen2.5-72b", 30720): (3.975, 3.056),
}
REASON_7B_30720 = (
    "UNEXPLAINED (fix48x): [QW25SPEED] Qwen2.5-7B BF16, 1 x A100, input 30,720, stated as run (qwen2 / "
    "flash_attention_2): published 18.83 tokens/s, ours 22.19 (+17.8%). Was FIXED by decode48b at the inverted ratio "
    "2.057 (21.50, +14.2%); at pytorch#150233's own 'before' table a 2-byte copy pass costs 2 x 2.668288 / 2.744544 "
    "= 1.944 passes (serving_host.EAGER_2BYTE_COPY_PASS_RATIO, audx48b item 1), so the 17 counted passes (10 "
    "copies) are 26.4 pass-equivalents and the row closes from 30.28 (+60.8%) to 22.19, not inside 15%. Ruled out: "
    "flash-attn's one-row read (FlagAttention PR #17: 0.88-0.90 of the card's bandwidth, above the engine's 0.7). "
    "Best lead, not sized: the element-at-a-time copy rate at this cache's own shapes (#150233's table spans "
    "1.944-2.105 a pass across its sizes, none of them this cache's); no published row isolates it."
)
REASON_14B_6144 = (
    "UNEXPLAINED (qwen2up2, stop 52; passed at +14.6%): [QW25SPEED] Qwen2.5-14B BF16, 1 x A100, input 6,144, stated "
    "as run (transformers 4.46.0, qwen2 / flash_attention_2): published 20.51 tokens/s, ours 24.47 (+19.3%). The row "
    "is the host floor: the stated release's recounted layer (42 non-GEMM + 7 linears, 9 a token for the model's "
    "rotary) at 19.67 us puts it at the run's own 14B input-1 step (40.42 ms), where the unstated 51 kernels at "
    "16.99 us put it 1.7 ms higher; the run's step grows 8.3 ms by input 6,144 and the engine's counted KV passes do "
    "not grow it. Not sized; the same row is the strict xfail of test_outside_repeat_kv_audit_stop45.py."
)
_OUT = {("qwen2.5-7b", 30720): REASON_7B_30720, ("qwen2.5-14b", 6144): REASON_14B_6144}


@pytest.mark.django_db
@pytest.mark.parametrize(
    "key",
    [
        pytest.param(k, marks=pytest.mark.xfail(strict=True, reason=_OUT[k])) if k in _OUT else k
        for k in _ROWS
    ],
    ids=lambda k: f"{k[0]}-{k[1]}",
)
def test_the_page_stated_as_run_with_the_copies_priced(bundled_catalog, key):
    preset, prompt = key
    published, gpus = PUBLISHED[key]
    t = _throughput(preset, prompt, gpus)
    speed = GENERATED / (
        t["time_to_first_token_seconds"] + GENERATED / t["decode_tokens_per_second_per_stream"]
    )
    before, after = _ROWS[key]
    assert speed == pytest.approx(after, rel=0.005)
    # the copies decode48b priced moved no row away; the host-bound rows moved with the stated release (stop 52)
    if key not in _HOST_BOUND:
        assert abs(speed / published - 1) <= abs(before / published - 1) + 1e-3
    lands = abs(speed / published - 1) <= 0.15
    assert lands == (key != ("qwen2.5-7b", 14336))
