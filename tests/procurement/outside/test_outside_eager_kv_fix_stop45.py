"""Issue 26, stop 45, fixd45 (aud45d's note 1): Qwen2.5's speed benchmark rows stated as they ran, with the new
`inference.attn_implementation: flash_attention_2` and `model.eager_layer: qwen2`, so the engine counts
Qwen2FlashAttention2's repeat_kv (3 + 2 n_rep passes over the KV cache; serving_host.REPEAT_KV).

Source: [QW25SPEED] QwenLM/Qwen2.5 @010c37c33b13a1ac59944b349620e13404efe97d docs/source/benchmark/speed_benchmark.rst
(A100 80GB, PyTorch 2.3.1, flash-attn 2.5.8, transformers 4.46.0, batch 1, 2,048 generated; BF16 "(Transformer)"
rows: 7B 1 GPU 30,720 18.83; 14B 1 GPU 30,720 8.20; 72B 1 input 8.73 (2 GPUs), 14,336 4.25 (3), 30,720 2.94 (3)); the
script @054825eff821f4734482b61796bec04b90e7f55d examples/speed-benchmark/speed_benchmark_transformers.py sets
attn_implementation "flash_attention_2". Code: transformers 4.46.0 modeling_qwen2.py Qwen2FlashAttention2.forward
l. 402-403 (repeat_kv after past_key_value.update), read in the PyPI wheel. Measured as the script does:
2048 / (prefill + 2048 decode steps). The same rows unstated (3 passes) are aud45d's
test_outside_eager_kv_audit_stop45.py, unchanged.
"""

from __future__ import annotations

import copy

import pytest

from procurement.api.sizing import size_spec_document

A100 = "a100-sxm4-80gb"
GENERATED = 2048
_DECODE48 = (  # decode48: the brief's leads checked in the code (test_outside_eager_sync_audit_stop48.py)
    " decode48: no per-layer sync in transformers 4.46.0 at batch 1 (Qwen2FlashAttention2 has no .item(); "
    "_update_causal_mask returns None for flash_attention_2, so _upad_input / _get_unpad_data / index_first_axis "
    "never run), so host and GPU do not add; the published growth between input columns is 1.3-1.7x the counted "
    "passes a cache byte (7B 22.6 / 28.3, 14B 19.8 / 21.4, 72B 25.8 against 17 / 13 / 19): GPU work a byte, "
    "unsized (lead: repeat_kv's expand + reshape copy and the cat run PyTorch's non-vectorized bf16 paths)."
)

_DECODE48B = (  # decode48b: the copy-rate lead sized (test_outside_eager_copy_rate_audit_stop48b.py)
    " decode48b: priced at the one A100 measurement found of PyTorch's element-at-a-time copy path on 2-byte inputs "
    "(pytorch#195542's base-build bf16 -> fp32 copy_, 67.1M elements in 362.46 us: 1.111 TB/s, 1.285x under the "
    "engine's 0.7 x 2,039 GB/s), the cache copies (the cat's read + write, repeat_kv's read and n_rep writes) close "
    "about a fifth of the gap (7B 30,720 +60.8% -> +44.9%, 14B +53.4% -> +36.3%, 72B 14,336 / 30,720 +36.4% / "
    "+35.2% -> +28.2% / +24.0%); landing by the copies alone needs them 2.1-3.0x under the engine's rate "
    "(0.47-0.68 TB/s), which no published figure shows; flash-attn 2.5.8's decode read rate at batch 1 is unsized."
)


def _as_published(preset: str, prompt: int, gpus: int) -> float:
    spec = {
        "name": f"fixd45-{preset}-{prompt}",
        "task": "inference",
        "model": {"preset": preset, "eager_layer": "qwen2"},
        "weight_quantization": "none",
        "inference": {
            "concurrency": 1,
            "context_len": prompt + GENERATED,
            "output_tokens": GENERATED,
            "engine": "hf_eager",
            "attn_implementation": "flash_attention_2",
        },
    }
    if gpus > 1:  # device_map "auto": layers split over the GPUs
        spec["parallelism"] = {"gpus": gpus, "pipeline_parallel": gpus}
    t = size_spec_document(copy.deepcopy(spec), [A100], calibrate=False)["throughput"]
    return GENERATED / (
        t["time_to_first_token_seconds"] + GENERATED / t["decode_tokens_per_second_per_stream"]
    )


# Passing rows stay where they were: 72B at input 1 (no cache to repeat) and 7B at 30,720 (17 passes: GPU 31 ms,
# under its 45.2 ms host floor).
# host47b (the default harness, plain transformers generate, 16.99 us a kernel): 72B input 1 7.845 (-10.1%) -> 9.555
# (+9.4%), the GPU's step; 7B at 30,720 21.444 (+13.9%) -> 30.280 (+60.8%): the 17 counted passes' 31 ms of GPU work
# was under the 45.2 ms floor at 31 us and is now the step, short of the run's 51.7 ms (about 21 passes needed).
_7B_30K_HOST47 = (
    "UNEXPLAINED (host47b; passing before at 31 us, by the host floor): [QW25SPEED] Qwen2.5-7B BF16, 1 x A100, input "
    "30,720, stated as run (eager_layer qwen2, flash_attention_2: 17 passes): published 18.83 tokens/s, ours 21.44 "
    "(+13.9%) -> 30.28 (+60.8%). At plain transformers generate's 16.99 us a kernel (hf_generate_kernel_host_s, "
    "fitted on this page's own input-1 rows) the floor is 24.8 ms and the step is the GPU's 31 ms, against the run's "
    "51.7 ms (prefill subtracted): about 21 passes of the mean-context cache needed (test_outside_eager_kv_audit_"
    "stop45.py section 6) where the code counts 17; the rest is unsized (decode46's leads: flash-attn split-KV "
    "occupancy ruled out, torch 2.3.1's scalar bf16 torch.cat +1.3 passes). A spec would need the run's KV traffic a "
    "step, which no field states."
)


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("preset", "prompt", "gpus", "published", "ours"),
    [
        ("qwen2.5-72b", 1, 2, 8.73, 9.555),
        pytest.param(
            "qwen2.5-7b",
            30720,
            1,
            18.83,
            30.280,
            marks=pytest.mark.xfail(strict=True, reason=_7B_30K_HOST47 + _DECODE48 + _DECODE48B),
        ),
    ],
)
def test_stated_passing_rows_do_not_move(bundled_catalog, preset, prompt, gpus, published, ours):
    speed = _as_published(preset, prompt, gpus)
    assert speed == pytest.approx(ours, rel=0.01)
    assert speed == pytest.approx(published, rel=0.15)


_ROWS = {
    # id: (preset, input, GPUs, published, ours stated, ours unstated)
    # host47b: unstated 7.533 / 7.124 / 12.521 -> 8.617 / 7.410 / 22.150, 14B stated 12.521 -> 12.579 (16.99 us)
    "72b-14336-3gpu": ("qwen2.5-72b", 14336, 3, 4.25, 5.798, 8.617),
    "72b-30720-3gpu": ("qwen2.5-72b", 30720, 3, 2.94, 3.975, 7.410),
    "14b-30720-1gpu": ("qwen2.5-14b", 30720, 1, 8.20, 12.579, 22.150),
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
_REASON = {
    "72b-14336-3gpu": (
        "UNEXPLAINED: [QW25SPEED] Qwen2.5-72B BF16, 3 x A100, input 14,336: published 4.25 tokens/s; stated as run "
        "(eager_layer qwen2, attn_implementation flash_attention_2) ours 7.53 -> 5.80 (+77.3% -> +36.4%): "
        "Qwen2FlashAttention2's repeat_kv counted (19 passes of the 8-KV-head cache, transformers 4.46.0 l. 402-403), "
        "the GPU step 167 ms now above the 127.4 ms host floor. The rest: the run's step needs ~33 passes, 1.7x the "
        "code's own count; unsized (lead, not verified: flash-attn at one query row a head below the achieved rate). "
        + _DECODE46_LEADS
    ),
    "72b-30720-3gpu": (
        "UNEXPLAINED: [QW25SPEED] Qwen2.5-72B BF16, 3 x A100, input 30,720: published 2.94 tokens/s; stated as run "
        "ours 7.12 -> 3.98 (+142.3% -> +35.2%): 19 counted passes (repeat_kv, n_rep 8); the growth from input 1 "
        "needs 29.1 (1.5x the count; test_outside_eager_kv_audit_stop45.py), the rest unsized. "
        + _DECODE46_LEADS
    ),
    "14b-30720-1gpu": (
        "UNEXPLAINED: [QW25SPEED] Qwen2.5-14B BF16, 1 x A100, input 30,720: published 8.20 tokens/s; stated as run "
        "ours 12.52 unchanged (+52.7%): the counted 13 passes (n_rep 5) give 67.9 ms of GPU work, still under the "
        "engine's 76.8 ms host floor, which this publisher's host beats 1.9x at input 1 (24.74 against 13.02 "
        "tokens/s); two errors of opposite sign, the host floor slow and the KV traffic short (17.8 passes needed). "
        "host47b: at plain transformers generate's 16.99 us the floor is 42.1 ms and the step the counted GPU work: "
        "stated 12.58 (+53.4%), unstated 22.15 (+170.1%); the KV traffic is the whole miss now. "
        + _DECODE46_LEADS
    ),
}


@pytest.mark.django_db
@pytest.mark.parametrize(
    "row",
    [
        pytest.param(row, marks=pytest.mark.xfail(strict=True, reason=_REASON[row] + _DECODE48 + _DECODE48B))
        for row in _ROWS
    ],
)
def test_qwen25_long_input_rows_stated_as_run(bundled_catalog, row):
    preset, prompt, gpus, published, ours, _ = _ROWS[row]
    speed = _as_published(preset, prompt, gpus)
    assert speed == pytest.approx(ours, rel=0.01)
    assert speed == pytest.approx(published, rel=0.15)


@pytest.mark.django_db
@pytest.mark.parametrize("row", list(_ROWS))
def test_stating_the_code_never_makes_a_row_faster(bundled_catalog, row):
    preset, prompt, gpus, published, ours, unstated = _ROWS[row]
    speed = _as_published(preset, prompt, gpus)
    assert speed == pytest.approx(ours, rel=0.01)
    assert speed <= unstated * 1.0001
    assert abs(speed / published - 1) <= abs(unstated / published - 1) + 1e-3  # unstated pinned to 0.1%
