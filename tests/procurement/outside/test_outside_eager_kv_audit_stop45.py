"""Issue 26, stop 45, outside audit (aud45d) of cls45d's eager KV term (serving_host.EAGER_KV_CACHE_PASSES: an
`inference.engine: hf_eager` decode step reads the KV cache 3 times, torch.cat's read and write of the past cache and
attention's read). Published transformers `generate` decode speeds at long context that no test used before (grep of
tests/ for the table, its figures and "qwen.readthedocs"). Tolerance: the issue's 15% on LLM speed.

Source:
  [QW25SPEED] QwenLM/Qwen2.5 @010c37c33b13a1ac59944b349620e13404efe97d docs/source/benchmark/speed_benchmark.rst
      (qwen.readthedocs.io "Qwen2.5 Speed Benchmark"): "NVIDIA A100 80GB", "Pytorch 2.3.1", "Flash Attention 2.5.8",
      "Transformers 4.46.0"; "batch size of 1 and the least number of GPUs as possible"; "generating 2048 tokens with
      the input lengths of 1, 6144, 14336, and 30720" (BF16 rows, "(Transformer)" tables):
        Qwen2.5-7B-Instruct   1 GPU : input 1 40.38, 30720 18.83 tokens/s
        Qwen2.5-14B-Instruct  1 GPU : input 1 24.74, 30720 8.20
        Qwen2.5-72B-Instruct        : input 1 8.73 (2 GPUs), 6144 6.39 (2), 14336 4.25 (3), 30720 2.94 (3)
      The script (QwenLM/Qwen2.5 @054825eff821f4734482b61796bec04b90e7f55d
      examples/speed-benchmark/speed_benchmark_transformers.py): attn_implementation "flash_attention_2",
      device_map "auto" (layers split over the GPUs: pipeline_parallel = GPUs here), torch_dtype "auto" (BF16),
      min_length = input + 2048, timed around the whole generate() (prefill included), tokens_per_second =
      2048 / time. The product's figure compared is therefore 2048 / (time_to_first_token + 2048 x decode step).

Code read for the pass count (transformers wheels from PyPI, this audit): 4.30.2 LlamaAttention torch.cat of the
past tuple (modeling_llama.py l. 207-208); DynamicCache.update torch.cat(..., dim=-2) in 4.36.0 (cache_utils.py
l. 127-128), 4.38.2 (l. 131-132) and 4.46.0 (l. 447-448), the default cache of generate (4.46.0
generation/utils.py l. 1767-1771); StaticCache (in place, k_out[:, :, pos] = ...) from 4.38 only when asked for.
Qwen2FlashAttention2.forward in 4.38.2 (l. 430-431) and 4.46.0 (l. 402-403) calls repeat_kv on the updated cache
BEFORE flash-attn: expand + reshape, a copy of n_rep = heads / kv_heads times the cache (read 1, write n_rep), which
flash-attn then reads (n_rep). A Qwen2 decode step therefore moves 3 + 2 n_rep passes of the kv-head cache
(7B n_rep 7: 17; 14B 5: 13; 72B 8: 19), where the engine counts 3 for every hf_eager model. (transformers' Llama
FA2 class does not repeat; its eager and SDPA classes do.)
"""

from __future__ import annotations

import copy

import pytest

from procurement.api.sizing import size_spec_document
from procurement.sizing import serving_host
from procurement.sizing.assumptions import ACHIEVED_BANDWIDTH_FRACTION

A100 = "a100-sxm4-80gb"
GENERATED = 2048
_DECODE48 = (  # decode48: the brief's leads checked in the code (test_outside_eager_sync_audit_stop48.py)
    " decode48: no per-layer sync in transformers 4.46.0 at batch 1 (Qwen2FlashAttention2 has no .item(); "
    "_update_causal_mask returns None for flash_attention_2, so _upad_input / _get_unpad_data / index_first_axis "
    "never run), so host and GPU do not add; the published growth between input columns is 1.3-1.7x the counted "
    "passes a cache byte (7B 22.6 / 28.3, 14B 19.8 / 21.4, 72B 25.8 against 17 / 13 / 19): GPU work a byte, "
    "unsized (lead: repeat_kv's expand + reshape copy and the cat run PyTorch's non-vectorized bf16 paths)."
)

_DECODE48B = (  # decode48b: the copies priced (serving_host.EAGER_2BYTE_COPY_PASS_RATIO)
    " decode48b: the engine now prices the cache copies among the counted passes (the cat's read + write, "
    "repeat_kv's read and n_rep writes) at PyTorch's element-at-a-time rate on a 2-byte cache, 2.057 passes each "
    "(serving_host.EAGER_2BYTE_COPY_PASS_RATIO), flash-attn's reads at one."
)


def _explained_48b(
    row: str,
    published: float,
    before: str,
    ours: str,
    n_rep: int,
    stated: str,
    corrected: str,
    prefix: str = "",
) -> str:
    """decode48b's EXPLAINED reason for a [QW25SPEED] row left with attn_implementation unstated."""
    return (
        f"{prefix}EXPLAINED (decode48b): [QW25SPEED] {row}: published {published} tokens/s, ours unstated {before} -> {ours}. "
        "(a) Mechanism, from the code the row ran: transformers 4.46.0's Qwen2FlashAttention2 repeat_kv's the cache "
        f"before flash-attn (modeling_qwen2.py l. 402-403; n_rep {n_rep}: 3 + 2 x {n_rep} passes), and the copies "
        f"among them (torch.cat's read + write, repeat_kv's read and {n_rep} writes) run PyTorch 2.3.1's "
        "element-at-a-time kernels on the bf16 cache (CatArrayBatchedCopy_contig; gpu_kernel's legacy path for the "
        "stride-0 source), 2.057 passes each in the engine (1.944 by the benchmark, below) at the vectorized rate (pytorch#150233's 'before' benchmark: the bf16 cat "
        "takes the fp32 cat's time, 2.668288 against 2.744544 ms, for half the bytes). (b) Size: stated as run "
        f"(model.eager_layer qwen2, inference.attn_implementation flash_attention_2) the engine reads {stated} "
        "(test_outside_eager_kv_fix_stop45.py); audx48b (RESTATE): the benchmark's own ratio is 1.944, not 2.057 "
        "(bf16 2.668288 ms for half the bytes of fp32's 2.744544: 2 x 2.668288 / 2.744544; the engine's "
        "EAGER_2BYTE_COPY_PASS_RATIO inverts it), and at 1.944 the stated run reads "
        f"{corrected}. (c) The field exists (inference.attn_implementation); unstated the "
        "engine counts 3 passes, because transformers 4.48 and later run flash-attn without repeat_kv "
        "(integrations/flash_attention.py, fixd45): defaulting to the 4.46 count would overcharge current releases. "
        "Before: "
    )


_EXPLAINED_48B = {
    "72b-14336-3gpu": _explained_48b(
        "Qwen2.5-72B-Instruct BF16, 3 x A100, input 14,336",
        4.25,
        "8.62",
        "8.10 (+90.5%)",
        8,
        "4.684 (+10.2%)",
        "4.782 (+12.5%)",
    ),
    "72b-30720-3gpu": _explained_48b(
        "Qwen2.5-72B-Instruct BF16, 3 x A100, input 30,720",
        2.94,
        "7.41",
        "6.65 (+126.2%)",
        8,
        "2.973 (+1.1%)",
        "3.056 (+3.9%)",
    ),
    "14b-30720-1gpu": _explained_48b(
        "Qwen2.5-14B-Instruct BF16, 1 x A100, input 30,720",
        8.20,
        "22.15",
        "22.15 (+170.1%)",
        5,
        "8.585 (+4.7%)",
        "8.886 (+8.4%)",
    ),
    "7b-30720-1gpu": _explained_48b(
        "Qwen2.5-7B BF16, 1 x A100, input 30,720",
        18.83,
        "38.16",
        "38.16 (+102.6%)",
        7,
        "21.502 (+14.2%)",
        "22.188 (+17.8%), outside 15%",
        prefix="UNEXPLAINED (withdrawn by audx48b: (b) fails: the size rests on a ratio that inverts its source; at "
        "pytorch#150233's own 'before' figures, 2 x 2.668288 / 2.744544 = 1.944 passes a 2-byte copy, not 2.057, the "
        "stated run reads 22.188 tokens/s, +17.8%, outside 15%; the rest of the 7B row's gap is unsized): ",
    ),
}


def _report(preset: str, prompt: int, gpus: int) -> dict:
    spec = {
        "name": f"aud45d-{preset}-{prompt}",
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
    if gpus > 1:  # device_map "auto": the layers split over the GPUs, run one after another
        spec["parallelism"] = {"gpus": gpus, "pipeline_parallel": gpus}
    report = size_spec_document(copy.deepcopy(spec), [A100], calibrate=False)
    assert report["candidates"][0]["verdict"] in {"fits", "tight", "oversized"}
    return report["throughput"]


def _as_published(preset: str, prompt: int, gpus: int) -> float:
    """The product's tokens/s as the script measures it: 2048 / (prefill + 2048 decode steps)."""
    t = _report(preset, prompt, gpus)
    step = 1.0 / t["decode_tokens_per_second_per_stream"]
    return GENERATED / (t["time_to_first_token_seconds"] + GENERATED * step)


# --- 1. [QW25SPEED] Qwen2.5-72B BF16, 2 x A100, input 1: published 8.73 tokens/s; ours 7.85 (-10.1%), inside.
# Ours is the host floor (80 x 51 + 30 = 4,110 kernels x 31 us = 127.4 ms) above the GPU's 100 ms (143 GB at
# 1.42 TB/s); the run's step is 114.5 ms. It lands, but on the host floor: the publisher's 7B row (input 1, 24.8 ms
# a step for 28 x 51 + 30 = 1,458 kernels) dispatches at ~17 us a kernel, so their 72B step is the GPU's.
@pytest.mark.django_db
# host47b: the default harness's host floor is 4,110 x 16.99 us = 69.8 ms, under the GPU's work: ours 7.85 (-10.1%) ->
# 9.91 (+13.5%), now the GPU's step (the publisher's own reading of this row, above), still inside.
def test_qwen25_72b_bf16_two_a100_short_context(bundled_catalog):
    ours = _as_published("qwen2.5-72b", 1, 2)
    assert ours == pytest.approx(9.911, rel=0.01)
    assert ours == pytest.approx(8.73, rel=0.15)


# --- 2. [QW25SPEED] Qwen2.5-7B BF16, 1 x A100, input 30,720: published 18.83; ours 21.44 (+13.9%), inside, by
# compensation: ours is the host floor, 45.2 ms a step at every context (the GPU's work, 9.6 ms + 3 x 1.28 ms of KV,
# is under it), where the run's step grows 24.8 -> 51.7 ms from input 1 to 30,720 (prefill subtracted). Its input-1
# row, 40.38 against ours 22.12 (-45%), is the known host-dispatch miss (test_outside_audit_stop44.py).
# host47b: right for the wrong reason (the compensation above): at the default harness's 16.99 us the host floor is
# 24.8 ms and the step the GPU's 13.4 ms (9.6 + 3 x 1.28 ms of KV), so ours 21.44 (+13.9%) -> 38.16 (+102.6%).
@pytest.mark.django_db
@pytest.mark.xfail(
    strict=True,
    reason=_EXPLAINED_48B["7b-30720-1gpu"]
    + "UNEXPLAINED (host47b; passing before by compensation at 31 us): [QW25SPEED] Qwen2.5-7B BF16, 1 x A100, "
    "input 30,720: published 18.83 tokens/s, ours 21.44 (+13.9%) -> 38.16 (+102.6%). The 45.2 ms host floor at 31 us "
    "a kernel hid the missing KV traffic; plain transformers generate's 16.99 us (hf_generate_kernel_host_s, fitted "
    "on this page's own input-1 rows) floors the step at 24.8 ms; the GPU's 9.6 ms + 3 x 1.28 ms of KV = 13.4 ms "
    "is under it, so the step is the 24.8 ms floor against the run's 51.7 ms (prefill "
    "subtracted): the run moves about 21 passes of its mean-context cache (section 6 below) where the engine counts "
    "3 (17 with Qwen2's repeat_kv stated: test_outside_eager_kv_fix_stop45.py, 30.28, +60.8%). The rest of the "
    "passes is unsized (decode46's leads, _DECODE46_LEADS); a spec would need the run's KV traffic a step, which "
    "no field states." + _DECODE48 + _DECODE48B,
)
def test_qwen25_7b_bf16_one_a100_at_30k_input(bundled_catalog):
    ours = _as_published("qwen2.5-7b", 30720, 1)
    assert ours == pytest.approx(38.16, rel=0.01)
    assert ours == pytest.approx(18.83, rel=0.15)


_QW25_LONG = {
    # id: (preset, input, GPUs, published tokens/s, ours at this commit, n_rep)
    # host47b: ours at the default harness's 16.99 us a kernel (were 7.533 / 7.124 / 12.521 at 31 us)
    # decode48b: 8.617 / 7.410 -> 8.097 / 6.651 (the cat's 2 copy passes at 2.057 each on the bf16 cache)
    "72b-14336-3gpu": ("qwen2.5-72b", 14336, 3, 4.25, 8.097, 8),
    "72b-30720-3gpu": ("qwen2.5-72b", 30720, 3, 2.94, 6.651, 8),
    "14b-30720-1gpu": ("qwen2.5-14b", 30720, 1, 8.20, 22.150, 5),
}
# decode46: two leads on the missing passes, checked at their sources (flash-attn's tag v2.5.8 and PyTorch's cat kernel).
_DECODE46_LEADS = (
    "decode46, leads checked, neither closes it: (1) flash-attn v2.5.8 (@9a11f440, the row's) flash_attn_func -> "
    "mha_fwd runs set_params_splitkv, num_splits_heuristic(heads x 1 m-block, 2 x 108 SMs, L / 128 blocks): after "
    "repeat_kv (no GQA swap, heads = KV heads) 64 / 40 / 28 heads take 3 / 5 / 7 splits, 192 / 200 / 196 CTAs of 216 "
    "slots, so the attention read is not occupancy-starved at one query row; (2) torch 2.3.1's torch.cat has no "
    "vectorized path for 2-byte dtypes (CatArrayBatchedCopy_contig, one bf16 element a thread with per-element index "
    "division; 8-byte loads only from pytorch#150233, 2025, whose own bf16 benchmark runs 1.66x faster after): the "
    "cache's 2 cat passes cost ~3.3, +1.3 of the ~10-12 missing."
)
_QW25_REASON = {
    "72b-14336-3gpu": (
        "UNEXPLAINED: [QW25SPEED] Qwen2.5-72B-Instruct BF16, 3 x A100, input 14,336 + 2,048 generated: published "
        "4.25 tokens/s, ours 7.53 (+77.3%). Ours stays on the 127.4 ms host floor (GPU 101.8 ms + 3 x 3.52 ms of KV "
        "= 112.4 ms under it), so cls45d's 3 passes move nothing; the run's step grows 114.5 -> 230.0 ms from input "
        "1 (prefill subtracted), 33 passes of its 5.0 GB mean-context cache at the engine's 1.43 TB/s. Counted from "
        "transformers 4.46.0 (the row's): Qwen2FlashAttention2 repeat_kv's the cache before flash-attn (n_rep 8), "
        "3 + 2 x 8 = 19 passes: 167.1 ms, 5.80 tokens/s (+36.4%), still out; the rest (~14 passes' worth) unsized "
        "(lead, not verified: flash-attn at one query row a head, 64 heads at batch 1, below the achieved rate). "
        + _DECODE46_LEADS
    ),
    "72b-30720-3gpu": (
        "UNEXPLAINED: [QW25SPEED] Qwen2.5-72B-Instruct BF16, 3 x A100, input 30,720 + 2,048 generated: published "
        "2.94 tokens/s, ours 7.12 (+142.3%). Ours: the 127.4 ms host floor (GPU 95-100 ms + 3 x 7.31 ms of KV = "
        "117 ms under it); the run's step 327.2 ms (2048 / 2.94 less our 26.5 s prefill), 29 passes of its 10.4 GB "
        "mean-context cache beyond the input-1 step. With Qwen2's repeat_kv counted (19 passes, transformers 4.46.0 "
        "Qwen2FlashAttention2 l. 402-403) ours would be 238.6 ms, 3.98 tokens/s (+35.2%); the rest unsized. "
        + _DECODE46_LEADS
    ),
    "14b-30720-1gpu": (
        "UNEXPLAINED: [QW25SPEED] Qwen2.5-14B-Instruct BF16, 1 x A100, input 30,720 + 2,048 generated: published "
        "8.20 tokens/s, ours 12.52 (+52.7%). Ours: the 76.8 ms host floor (48 x 51 + 30 kernels x 31 us; GPU 10.4 + "
        "3 x 4.42 ms = 23.7 ms); the run's step 40.4 -> 118.9 ms from input 1 (prefill subtracted), 18 passes of "
        "its 6.24 GB mean-context cache; Qwen2's repeat_kv (n_rep 5) gives 13 passes, GPU 67.9 ms, still under our "
        "floor, so even the counted copies do not move this row; its input-1 row is the host miss (24.74 against "
        "ours 13.02, -47.4%): two errors of opposite sign, the host floor 1.9x slow and the KV traffic 6x short. "
        + _DECODE46_LEADS
    ),
}


_HOST47B = {  # host47b: the default harness (plain transformers generate) at 16.99 us a kernel, was 31 us
    "72b-14336-3gpu": " host47b: ours 7.53 -> 8.62 (+102.8%): the host floor (69.8 ms) drops under the GPU's work, "
    "which still counts 3 passes.",
    "72b-30720-3gpu": " host47b: ours 7.12 -> 7.41 (+152.0%), the GPU's step; the floor no longer binds.",
    "14b-30720-1gpu": " host47b: ours 12.52 -> 22.15 (+170.1%): the 76.8 ms floor at 31 us is 42.1 ms at 16.99 us, "
    "still above the GPU's 23.7 ms; the KV traffic is the whole miss now.",
}


@pytest.mark.django_db
@pytest.mark.parametrize(
    "row",
    [
        pytest.param(
            row,
            marks=pytest.mark.xfail(
                strict=True,
                reason=_EXPLAINED_48B[row] + _QW25_REASON[row] + _HOST47B[row] + _DECODE48 + _DECODE48B,
            ),
        )
        for row in _QW25_LONG
    ],
)
def test_qwen25_long_input_rows_within_15_percent(bundled_catalog, row):
    preset, prompt, gpus, published, pinned, _ = _QW25_LONG[row]
    ours = _as_published(preset, prompt, gpus)
    assert ours == pytest.approx(pinned, rel=0.01)
    assert ours == pytest.approx(published, rel=0.15)


# --- 6. Arithmetic on [QW25SPEED] and the engine's own per-pass time: how many passes over the mean-context KV cache
# the published growth of the decode step from input 1 to input 30,720 needs (the input-1 step taken as the base,
# the product's prefill subtracted: both make the count low, not high). Per pass: kv-head bytes a token x
# (30,720 + 1,024) / (2,039 GB/s x the achieved fraction). 7B 21.1, 14B 17.8, 72B 29.1 passes, against the code's
# 3 + 2 n_rep = 17 / 13 / 19 and the engine's 3: the torch.cat copy is real but, for GQA models in transformers'
# Qwen2 code, a fifth to a tenth of the traffic.
_KV_BYTES_PER_TOKEN = {  # layers x 2 (k, v) x kv heads x head_dim x 2 bytes (model_architectures.json)
    "qwen2.5-7b": 28 * 2 * 4 * 128 * 2,
    "qwen2.5-14b": 48 * 2 * 8 * 128 * 2,
    "qwen2.5-72b": 80 * 2 * 8 * 128 * 2,
}
_GROWTH_ROWS = {  # preset: (input-1 tokens/s, GPUs; 30,720 tokens/s, GPUs; n_rep)
    "qwen2.5-7b": (40.38, 1, 18.83, 1, 7),
    "qwen2.5-14b": (24.74, 1, 8.20, 1, 5),
    "qwen2.5-72b": (8.73, 2, 2.94, 3, 8),
}


@pytest.mark.django_db
@pytest.mark.parametrize("preset", list(_GROWTH_ROWS))
def test_published_long_context_growth_needs_many_more_kv_passes_than_three(bundled_catalog, preset):
    short, short_gpus, long_, long_gpus, n_rep = _GROWTH_ROWS[preset]
    ttft_short = _report(preset, 1, short_gpus)["time_to_first_token_seconds"]
    ttft_long = _report(preset, 30720, long_gpus)["time_to_first_token_seconds"]
    step_short = (GENERATED / short - ttft_short) / GENERATED
    step_long = (GENERATED / long_ - ttft_long) / GENERATED
    per_pass = _KV_BYTES_PER_TOKEN[preset] * (30720 + GENERATED / 2) / (2039e9 * ACHIEVED_BANDWIDTH_FRACTION)
    needed = (step_long - step_short) / per_pass
    assert needed == pytest.approx(
        {"qwen2.5-7b": 21.1, "qwen2.5-14b": 17.8, "qwen2.5-72b": 29.1}[preset], abs=0.3
    )
    code_count = 3 + 2 * n_rep  # cat read + write, repeat_kv read + n_rep writes, flash-attn n_rep reads
    assert code_count <= needed <= 1.6 * code_count
    assert needed > 5 * serving_host.EAGER_KV_CACHE_PASSES
