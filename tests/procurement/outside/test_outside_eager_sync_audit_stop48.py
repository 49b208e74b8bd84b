"""Issue 26, stop 48, decode48: is the missing long-context decode time of the Qwen2 / Qwen2.5 speed-benchmark rows a
per-layer device -> host synchronisation (host launch time and GPU time adding instead of overlapping), or GPU work
that grows with the cache? Arithmetic on published figures and the engine's own per-pass time; no engine change.

Sources (opened for this audit):
  [QW25SPEED] QwenLM/Qwen2.5 @010c37c33b13a1ac59944b349620e13404efe97d docs/source/benchmark/speed_benchmark.rst (A100
      80GB, PyTorch 2.3.1, flash-attn 2.5.8, transformers 4.46.0, batch 1, 2,048 generated; BF16 "(Transformer)" rows,
      tokens/s: 7B 40.38 / 38.76 / 29.78 / 18.83 and 14B 24.74 / 20.51 / 13.92 / 8.20 at input 1 / 6,144 / 14,336 /
      30,720 on one GPU; 72B 8.73 / 6.39 (2 GPUs), 4.25 / 2.94 (3 GPUs)), as test_outside_eager_kv_audit_stop45.py
      and test_outside_repeat_kv_audit_stop45.py quote it.
  [QWEN2SPEED] QwenLM/Qwen2 @5c4e69cb61953a590ea724e0f0f0fcb06fa979e7 docs/source/benchmark/speed_benchmark.rst (A100
      80GB, PyTorch 2.1.2, flash-attn 2.3.3, transformers 4.38.2): Qwen2-7B-Instruct BF16 input 1 37.97, 6,144 34.74
      (test_outside_eager_decode_audit_stop46.py).
  transformers 4.46.0 (PyPI wheel): modeling_qwen2.py Qwen2FlashAttention2.forward l. 364-452 has no .item() and no
      tensor-valued Python condition (DynamicCache.update's torch.cat, cache_utils.py l. 447-448; repeat_kv l. 402-403;
      _flash_attention_forward with the model's mask); Qwen2Model._update_causal_mask l. 942-945 returns None for
      flash_attention_2 unless `0.0 in attention_mask` (one sync a forward, before the layers), so at batch 1
      modeling_flash_attention_utils.py's `if attention_mask is not None:` (l. 244, _upad_input -> _get_unpad_data's
      nonzero and .max().item(), index_first_axis's copies of K and V) never runs, and the torch.diff branch (l. 271)
      is skipped at query_length 1. No per-layer sync on the Qwen2.5 page's code.
  transformers 4.38.2 (PyPI wheel, the Qwen2 page's): Qwen2FlashAttention2.forward l. 382
      `rotary_seq_len = max(kv_seq_len, position_ids[:, -1].max().item()) + 1`: a device -> host sync in every layer
      of every step, placed after the q / k / v projections and before the rotary (l. 383-385: the cos / sin cache
      slices, cos[position_ids] and sin[position_ids], and q, k each through mul, neg, cat, mul, add: 12 kernels,
      14 if the cached cos / sin are not already bf16), the cache's torch.cat (l. 427) and repeat_kv (l. 430-431).
  Qwen-1 (the [QWEN8K] / [QW18C] rows' modeling_qwen.py; zhangningboo/Qwen-7B @1ff20863 modeling_qwen.py):
      FlashSelfAttention.forward runs flash_attn_func directly at batch_size 1 (or flash_attn_unpadded_func with
      torch.arange cu_seqlens); unpad_input (nonzero, .max().item(), hidden_states[indices]) only when
      batch_size > 1 and a mask is given. No per-layer sync at batch 1 either.
Tolerance: the issue's 15% on LLM speed.
"""

from __future__ import annotations

import copy

import pytest

from procurement.api.sizing import size_spec_document
from procurement.sizing import serving_host
from procurement.sizing.assumptions import (
    ACHIEVED_BANDWIDTH_FRACTION,
    HF_GENERATE_KERNEL_HOST_SECONDS,
    HF_GENERATE_RELEASE_KERNEL_HOST_SECONDS,
)

A100 = "a100-sxm4-80gb"
A100_BYTES_PER_S = 2039e9
GENERATED = 2048
KV_BYTES_PER_TOKEN = {  # layers x 2 (k, v) x kv heads x head_dim x 2 bytes (model_architectures.json)
    "qwen2.5-7b": 28 * 2 * 4 * 128 * 2,
    "qwen2.5-14b": 48 * 2 * 8 * 128 * 2,
    "qwen2.5-72b": 80 * 2 * 8 * 128 * 2,
}
CODE_PASSES = {"qwen2.5-7b": 17.0, "qwen2.5-14b": 13.0, "qwen2.5-72b": 19.0}  # 3 + 2 n_rep (n_rep 7 / 5 / 8)
PUBLISHED = {  # [QW25SPEED] (preset, input): (tokens/s, GPUs)
    ("qwen2.5-7b", 1): (40.38, 1),
    ("qwen2.5-7b", 6144): (38.76, 1),
    ("qwen2.5-7b", 14336): (29.78, 1),
    ("qwen2.5-7b", 30720): (18.83, 1),
    ("qwen2.5-14b", 1): (24.74, 1),
    ("qwen2.5-14b", 6144): (20.51, 1),
    ("qwen2.5-14b", 14336): (13.92, 1),
    ("qwen2.5-14b", 30720): (8.20, 1),
    ("qwen2.5-72b", 14336): (4.25, 3),
    ("qwen2.5-72b", 30720): (2.94, 3),
}


def _throughput(preset: str, prompt: int, gpus: int) -> dict:
    """The row stated as run (fixd45): eager_layer qwen2, flash_attention_2, device_map auto = layers split."""
    spec = {
        "name": f"decode48-{preset}-{prompt}",
        "task": "inference",
        "model": {"preset": preset, "eager_layer": "qwen2"},
        "weight_quantization": "none",
        "inference": {
            "concurrency": 1,
            "context_len": prompt + GENERATED,
            "output_tokens": GENERATED,
            "engine": "hf_eager",
            "attn_implementation": "flash_attention_2",
            "transformers_release": "4.46.0",
        },
    }
    if gpus > 1:
        spec["parallelism"] = {"gpus": gpus, "pipeline_parallel": gpus}
    return size_spec_document(copy.deepcopy(spec), [A100], calibrate=False)["throughput"]


def _pass_s(preset: str, prompt: int) -> float:
    """The engine's time for one pass over the mean-context KV cache (kv bytes x (input + 1,024) at 0.7 x 2,039 GB/s)."""
    return (
        KV_BYTES_PER_TOKEN[preset]
        * (prompt + GENERATED / 2)
        / (A100_BYTES_PER_S * ACHIEVED_BANDWIDTH_FRACTION)
    )


def _published_step_s(preset: str, prompt: int) -> float:
    """The run's decode step: 2,048 / tokens/s less the product's prefill, over 2,048 steps."""
    speed, gpus = PUBLISHED[(preset, prompt)]
    return (GENERATED / speed - _throughput(preset, prompt, gpus)["time_to_first_token_seconds"]) / GENERATED


# --- 1. The missing time grows with the cache, between columns where every row is GPU-bound or nearly: the published
# step's growth from one input column to the next, in passes of the added mean-context cache at the engine's rate.
# 7B 22.6 / 28.3, 14B 19.8 / 21.4, 72B 25.8 (14,336 -> 30,720, both on 3 GPUs) against the code's 17 / 13 / 19: 1.3 to
# 1.7 times the counted passes a byte, column after column. A per-step or per-layer constant (a sync, a launch) would
# not grow with the cache; it would show as an offset, not as a slope. So the shortfall is GPU work a cache byte.
_SLOPES = {
    # (preset, from input, to input): passes a step the published growth needs
    ("qwen2.5-7b", 6144, 14336): 22.6,
    ("qwen2.5-7b", 14336, 30720): 28.3,
    ("qwen2.5-14b", 6144, 14336): 19.8,
    ("qwen2.5-14b", 14336, 30720): 21.4,
    ("qwen2.5-72b", 14336, 30720): 25.8,
}


@pytest.mark.django_db
@pytest.mark.parametrize("key", list(_SLOPES), ids=lambda k: f"{k[0]}-{k[1]}-{k[2]}")
def test_the_missing_decode_time_grows_with_the_cache(bundled_catalog, key):
    preset, low, high = key
    growth = _published_step_s(preset, high) - _published_step_s(preset, low)
    passes = growth / (_pass_s(preset, high) - _pass_s(preset, low))
    assert passes == pytest.approx(_SLOPES[key], abs=0.3)
    assert 1.15 * CODE_PASSES[preset] <= passes <= 1.75 * CODE_PASSES[preset]


# --- 2. Lead (1) of the brief, host and GPU adding per step instead of overlapping, in its most favourable form: the
# host floor (the engine's, plain transformers generate at hf_generate_kernel_host_s) plus the counted KV passes, the
# weight reads left under the floor. It would land the 7B column and three 14B rows, but not 14B at 30,720 (+21.6%) and
# none of the GPU-bound 72B rows (their step is already the GPU's; adding the host moves them the wrong way), the
# 4.46.0 code above has no per-layer sync to make host and GPU add, and the page's own 0.5B / 1.5B rows refute it (2b).
# Not a mechanism; recorded so it is not re-tried.
# qwen2up2: the rows stated as run (transformers 4.46.0: the floor is 42 kernels a layer + 8 a token at 19.68 us, 7B
# 23.89 ms / 14B 40.42 ms, was 24.77 / 42.10 on the 51 count at 16.99 us), before -> after (against the published):
# 7B 6,144 33.37 (-13.9%) -> 34.48 (-11.0%); 14,336 27.84 (-6.5%) -> 28.62 (-3.9%); 30,720 20.86 (+10.8%) -> 21.27
# (+13.0%); 14B 6,144 18.08 (-11.8%) -> 18.62 (-9.2%); 14,336 14.12 (+1.4%) -> 14.48 (+4.0%); 30,720 9.80 (+19.5%) ->
# 9.97 (+21.6%). The same rows land and the same one does not.
_ADDITIVE = {  # (preset, input): tokens/s at host floor + counted KV passes, as the script measures it
    ("qwen2.5-7b", 6144): 34.48,
    ("qwen2.5-7b", 14336): 28.62,
    ("qwen2.5-7b", 30720): 21.27,
    ("qwen2.5-14b", 6144): 18.62,
    ("qwen2.5-14b", 14336): 14.48,
    ("qwen2.5-14b", 30720): 9.97,
}


@pytest.mark.django_db
@pytest.mark.parametrize("key", list(_ADDITIVE), ids=lambda k: f"{k[0]}-{k[1]}")
def test_host_plus_kv_would_not_land_the_long_rows_and_has_no_sync_in_the_code(bundled_catalog, key):
    preset, prompt = key
    t = _throughput(preset, prompt, 1)
    host_floor = _throughput(preset, 1, 1)  # the input-1 step is the host floor for 7B and 14B (GPU under it)
    floor_s = 1.0 / host_floor["decode_tokens_per_second_per_stream"]
    step = floor_s + CODE_PASSES[preset] * _pass_s(preset, prompt)
    speed = GENERATED / (t["time_to_first_token_seconds"] + GENERATED * step)
    assert speed == pytest.approx(_ADDITIVE[key], rel=0.01)
    published = PUBLISHED[key][0]
    lands = abs(speed / published - 1) <= 0.15
    assert lands == (key != ("qwen2.5-14b", 30720))


# --- 2b. The same page's small models refute host and GPU adding outright, from published figures alone: Qwen2.5-1.5B
# (28 layers, 2 KV heads of 128, 12 heads: n_rep 6, 15 passes) and 0.5B (24 layers, 2 KV heads of 64, 14 heads: n_rep
# 7, 17 passes) run 39.68 / 47.40 tokens/s at input 1 and 38.59 / 47.16 at 30,720 ([QW25SPEED] @010c37c3, BF16, one
# GPU). Their steps grow at most 0.71 / 0.11 ms (prefill left in, so an upper bound), where the counted KV work at
# 30,720 is 9.57 / 4.65 ms at the engine's rate: had the KV work added to the host's launches, the steps would have grown
# 13 to 40 times more. On this page the KV work overlaps the host's launches.
_SMALL = {  # preset: (kv bytes a token, counted passes, input-1 tokens/s, 30,720 tokens/s, counted KV ms, growth ms)
    "qwen2.5-1.5b": (28 * 2 * 2 * 128 * 2, 15.0, 39.68, 38.59, 9.57, 0.71),
    "qwen2.5-0.5b": (24 * 2 * 2 * 64 * 2, 17.0, 47.40, 47.16, 4.65, 0.11),
}


@pytest.mark.parametrize("preset", list(_SMALL))
def test_the_pages_small_models_refute_host_and_kv_adding(preset):
    kv_bytes, passes, short, long_, kv_ms, growth_ms = _SMALL[preset]
    counted_kv_s = (
        passes * kv_bytes * (30720 + GENERATED / 2) / (A100_BYTES_PER_S * ACHIEVED_BANDWIDTH_FRACTION)
    )
    growth_at_most_s = (
        1.0 / long_ - 1.0 / short
    )  # prefill left in the long row: its decode step is shorter still
    assert counted_kv_s == pytest.approx(kv_ms * 1e-3, rel=0.01)
    assert growth_at_most_s == pytest.approx(growth_ms * 1e-3, abs=0.01e-3)
    assert counted_kv_s > 13 * growth_at_most_s


# --- 3. The Qwen2 page's transformers 4.38.2 does sync in every layer (l. 382 above), before the rotary and the KV
# work. Between two syncs the step is at least the host's launches of the layer (51 kernels on the engine's qwen2 count)
# and at least the host's launches up to the first cache kernel (the 12 rotary kernels) plus the layer's GPU work (its
# weights and 17 passes of the cache). At 6,144 on the engine's own figures the second is 0.77 ms against the host's
# 0.87 ms: the sync does not bind, so it does not size the run's 2.2 ms growth from input 1 (0.08 ms a layer), unless
# each of the layer's ~35 small kernels after the cache work costs ~3 us of GPU time the engine does not count (no
# published row sizes that). Lead for [QWEN2SPEED] 7b-bf16-6144, not landed.
@pytest.mark.django_db
def test_the_qwen2_page_per_layer_sync_does_not_bind_at_6144_on_the_engines_figures(bundled_catalog):
    host_s = HF_GENERATE_KERNEL_HOST_SECONDS.value
    layers = 28
    # GPU-bound: weights + 17 passes; Qwen2-7B has Qwen2.5-7B's shapes. decode48b: the 17 passes' 10 copies cost
    # 2.057 each on the bf16 cache (serving_host.EAGER_2BYTE_COPY_PASS_RATIO; the Qwen2 page's torch 2.1.2 has the
    # same element-at-a-time cat and legacy copy): 27.57 pass-equivalents, the GPU path 0.733 -> 0.841 ms a layer,
    # still under the host's 0.866 ms
    passes = 17.0 + 10.0 * (serving_host.EAGER_2BYTE_COPY_PASS_RATIO - 1.0)
    # fix48x: at the corrected ratio 1.944 (2.057 inverted pytorch#150233's table): 26.44 pass-equivalents
    assert passes == pytest.approx(26.44, abs=0.01)
    stated = _throughput("qwen2.5-7b", 30720, 1)
    weights_s = 1.0 / stated["decode_tokens_per_second_per_stream"] - passes * _pass_s("qwen2.5-7b", 30720)
    assert weights_s == pytest.approx(9.91e-3, rel=0.01)
    host_layer = 51 * host_s
    gpu_path_layer = 12 * host_s + (weights_s + passes * _pass_s("qwen2.5-7b", 6144)) / layers
    assert host_layer == pytest.approx(0.866e-3, rel=0.01)
    assert gpu_path_layer == pytest.approx(0.841e-3, rel=0.02)
    assert gpu_path_layer < host_layer
    # qwen2up2: on the count the Qwen2 page's release issues (transformers 4.38.2, 45 a layer, RELEASE_LAYER_KERNELS)
    # at the rate read on the recounted rows (19.68 us): host 45 x 19.68 = 0.886 ms, GPU path 12 x 19.68 us + the same
    # GPU work = 0.873 ms: still under, by 1.5%
    release_s = HF_GENERATE_RELEASE_KERNEL_HOST_SECONDS.value
    release_gpu_path = 12 * release_s + (weights_s + passes * _pass_s("qwen2.5-7b", 6144)) / layers
    assert 45 * release_s == pytest.approx(0.886e-3, rel=0.01)
    assert release_gpu_path == pytest.approx(0.873e-3, rel=0.02)
    assert release_gpu_path < 45 * release_s
    step_1 = GENERATED / 37.97 / GENERATED  # [QWEN2SPEED] input 1, prefill negligible
    step_6144 = (
        GENERATED / 34.74 - _throughput("qwen2.5-7b", 6144, 1)["time_to_first_token_seconds"]
    ) / GENERATED
    assert (step_6144 - step_1) / layers == pytest.approx(0.078e-3, abs=0.01e-3)
