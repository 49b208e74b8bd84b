"""Outside audit aud45h of fixd45 ([KVREPEAT]: inference.attn_implementation, model.eager_layer qwen2, 3 + 2 n_rep
KV passes an hf_eager decode step where the stated code repeat_kv's a grouped cache).

Source: [QW25SPEED] QwenLM/Qwen2.5 @010c37c33b13a1ac59944b349620e13404efe97d docs/source/benchmark/speed_benchmark.rst
(A100 80GB, CUDA 12.1, PyTorch 2.3.1, Flash Attention 2.5.8, Transformers 4.46.0; batch 1, 2,048 generated tokens;
"Transformer" BF16 rows). Rows no earlier test uses (aud45d / fixd45 took input 1 and 30,720, and 72B 14,336):
    Qwen2.5-7B-Instruct   1 GPU : 6144 38.76, 14336 29.78 tokens/s   (input 1: 40.38)
    Qwen2.5-14B-Instruct  1 GPU : 6144 20.51, 14336 13.92            (input 1: 24.74)
    Qwen2.5-72B-Instruct  2 GPUs: 6144 6.39                          (input 1: 8.73, 2 GPUs)
The benchmark script (@054825eff821f4734482b61796bec04b90e7f55d examples/speed-benchmark/
speed_benchmark_transformers.py) loads with attn_implementation "flash_attention_2", device_map "auto"; speed =
2048 / the whole generate() (prefill included), as fixd45's test_outside_eager_kv_fix_stop45.py measures it.
Stated as run: model.eager_layer qwen2, inference.attn_implementation flash_attention_2 (Qwen2FlashAttention2 calls
repeat_kv after past_key_value.update: transformers 4.46.0 modeling_qwen2.py l. 402-403, read in the PyPI wheel by
this audit; also 4.38.2 l. 430-431, 4.42.0 l. 416-417).

Passes needed, in the engine's own terms (step = max(host floor, GPU work); KV pass = cache bytes at the mean
context / (2,039 GB/s x 0.7)), with the published step = (2048 / speed - our prefill) / 2048:
    72B 6,144 : step 154.4 ms, GPU work besides KV 100.1 ms, pass 1.646 ms -> 33 passes (19 counted)
    14B 14,336: step 70.7 ms, non-KV ~20.7 ms, pass 2.116 ms -> 23.6 (13 counted)
    7B 14,336 : step 33.0 ms, non-KV ~10.7 ms, pass 0.617 ms -> 36 (17 counted); 30,720 (aud45d's row) ~32
So where the GPU binds the published steps need 1.7-2.1x the code's count at the engine's bandwidth, more than the
1.2-1.6x the answer and docs quote (that range is the growth from input 1, whose 7B / 14B steps are host-bound and
hide the first GPU milliseconds). The 7B / 14B 6,144 rows sit under the publisher's host (its 24.8 / 40.4 ms input-1
steps, 1.8-1.9x faster than the engine's 45.2 / 76.8 ms floors): the known host miss, unmoved by the repeat.
"""

from __future__ import annotations

import copy
import dataclasses

import pytest
import yaml

from procurement.api.sizing import size_spec_document
from procurement.sizing import serving_host
from procurement.sizing.assumptions import EAGER_KERNEL_HOST_SECONDS
from tests.procurement.outside.test_outside_host_release_stop47 import HOST47

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
    "(serving_host.EAGER_2BYTE_COPY_PASS_RATIO: pytorch#150233's own 'before' benchmark, the bf16 cat in the fp32 "
    "cat's time for half the bytes), flash-attn's reads at one (FlagAttention PR #17: flash_attn_func at one query "
    "row reads at 0.87-0.90 of an Ampere card's bandwidth); that lands this page's GPU-bound rows stated as run "
    "(14B 14,336 / 30,720, 72B 6,144 / 14,336 / 30,720, 7B 30,720: +8.6% / +4.7% / +2.5% / +10.2% / +1.1% / "
    "+14.2%)."
)


def _as_published(
    preset: str, prompt: int, gpus: int, *, stated: bool = True, release: str = "4.46.0"
) -> float:
    spec = {
        "name": f"aud45h-{preset}-{prompt}",
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
        # qwen2up2: the page's transformers release (4.46.0), its count at hf_generate_release_kernel_host_s 19.68 us
        spec["inference"]["transformers_release"] = release
    if gpus > 1:  # device_map "auto": layers split over the GPUs, run one after another
        spec["parallelism"] = {"gpus": gpus, "pipeline_parallel": gpus}
    t = size_spec_document(copy.deepcopy(spec), [A100], calibrate=False)["throughput"]
    return GENERATED / (
        t["time_to_first_token_seconds"] + GENERATED / t["decode_tokens_per_second_per_stream"]
    )


# [QW25SPEED] Qwen2.5-14B-Instruct BF16, 1 x A100 80GB, input 14,336: 13.92 tokens/s. Ours 12.83 (-7.9%): passes,
# by compensation. Ours is the engine's 76.8 ms host floor (the 13 counted passes, GPU ~48 ms, stay under it); the
# run's step is 70.7 ms = its host's 40.4 ms input-1 step + KV growth, or, GPU-bound, 23.6 passes of its 3.02 GB
# mean cache at 0.7 of 2,039 GB/s against 13 counted.
# host47b: the compensation is gone. At plain transformers generate's 16.99 us a kernel (the default harness) the
# floor is 42.1 ms, under the counted GPU work (~48 ms), so ours 12.83 (-7.9%) -> 20.72 (+48.8%), the GPU's step.
# Was a strict xfail: "UNEXPLAINED (host47b): published 13.92, ours 12.83 (-7.9%) -> 20.72 (+48.8%): the step is the
# counted GPU work, 13 passes of the 3.02 GB mean cache (~48 ms), against the run's 70.7 ms, which GPU-bound needs
# 23.6 passes". Now 15.115 (+8.6%) because the copies among the 13 passes (the cat's 2, repeat_kv's 1 + 5) cost 2.057
# passes each on this bf16 cache (decode48b, serving_host.EAGER_2BYTE_COPY_PASS_RATIO: torch 2.3.1's cat and
# repeat_kv's copy run element-at-a-time kernels; pytorch#150233's "before" benchmark sizes it): 21.5 pass-equivalents.
@pytest.mark.django_db
def test_qwen25_14b_at_14336_input_on_one_a100(bundled_catalog):
    speed = _as_published("qwen2.5-14b", 14336, 1)
    assert speed == pytest.approx(
        15.564, rel=0.01
    )  # fix48x: the copies at 1.944, was 15.115 at the inverted 2.057
    assert speed == pytest.approx(13.92, rel=0.15)


# Was a strict xfail [14b-6144-1gpu]: "UNEXPLAINED (host): published 20.51; ours 12.94 (-36.9%), stated = unstated:
# the engine's 76.8 ms host floor binds ... at the publisher's own host rate ... 23.51 (+14.6%, the 7B's 17.0 us)".
# Now 23.51 (+14.6%) because the default harness (inference.generate_harness transformers, host47b) prices a kernel
# at hf_generate_kernel_host_s, 16.99 us (the Qwen2.5 7B / 14B input-1 rows are two of its fit rows; this row is a
# context the fit did not use). Inside by 0.4 points: the run's step grows 7.9 ms from input 1 where the engine's GPU
# work stays under the host floor, the KV-pass shortfall of the longer rows.
# fix47h: passing since stop 47's default host rate (fit row: the host-bound sibling of the Qwen2.5 14B input-1 fit
# row, same page and host, not held out); not FIXED (host47b moved 8 passing cases out).
# Was a strict xfail [7b-6144-1gpu]: "EXPLAINED: published 38.76; ours 22.02 (-43.2%), the engine's 45.2 ms host floor
# (28 x 51 + 30 = 1,458 kernels x 31 us) ... At the 7B's input-1 step (17.0 us on the engine's count) this row reads
# 40.03 (+3.3%)". Now 40.02 (+3.2%) because of the same default rate, which its (b) named (16.99 us; the 7B input-1
# row is a fit row of the constant, this 6,144 row is not).
# fix47h: passing since stop 47's default host rate (fit row: the host-bound sibling of the Qwen2.5 7B input-1 fit
# row, same page and host, not held out); not FIXED (host47b moved 8 passing cases out).
# Was a strict xfail [72b-6144-2gpu]: "UNEXPLAINED: published 6.39; ours unstated 7.72 (+20.8%) -> stated as run 7.49
# (+17.2%) ... the run needs 33 passes, 1.74x the code's count" (host47b: stated 7.49, unstated 9.33). Now stated 6.550
# (+2.5%) because the 19 counted passes' copies (the cat's 2, repeat_kv's 1 + 8) cost 2.057 passes each on this bf16
# cache (decode48b, serving_host.EAGER_2BYTE_COPY_PASS_RATIO, pytorch#150233's "before" benchmark).
_ROWS = {
    # id: (preset, input, GPUs, published, ours stated as run, ours unstated)
    # host47b (the default harness, 16.99 us a kernel): 72b unstated 7.719 -> 9.328 (stated unchanged, GPU-bound);
    # 7b-14336 21.853 -> 39.474; 14b-6144 12.944 -> 23.508; 7b-6144 22.019 -> 40.018
    # decode48b (the copies at 2.057 a pass): 72b stated 7.489 -> 6.550, unstated 9.328 -> 9.035; 7b-14336 stated
    # 39.474 -> 36.385 (the GPU's step now, above the 24.8 ms floor), unstated 39.474
    # fix48x (the copies at the corrected 1.944): 72b stated 6.550 -> 6.639 (+3.9%)
    "72b-6144-2gpu": ("qwen2.5-72b", 6144, 2, 6.39, 6.639, 9.035),
    # qwen2up2 (stated as run now includes transformers 4.46.0: 42 kernels a layer + 8 a token at 19.68 us; unstated
    # unchanged): 7b-14336 stated 36.385 (+22.2%) -> 37.330 (+25.4%, its early steps on the 23.89 ms floor, was 24.77);
    # 14b-6144 stated 23.508 (+14.6%) -> 24.473 (+19.3%, leaves its bar: strict xfail below); 7b-6144 stated 40.018
    # (+3.2%) -> 41.478 (+7.0%); 72b stated 6.639 unchanged (GPU-bound)
    "7b-14336-1gpu": ("qwen2.5-7b", 14336, 1, 29.78, 37.330, 39.474),
    "14b-6144-1gpu": ("qwen2.5-14b", 6144, 1, 20.51, 24.473, 23.508),
    "7b-6144-1gpu": ("qwen2.5-7b", 6144, 1, 38.76, 41.478, 40.018),
}
_WAS = {  # 72b-6144-2gpu: the strict xfail reason before decode48b (now passing)
    "72b-6144-2gpu": (
        "UNEXPLAINED: [QW25SPEED] Qwen2.5-72B-Instruct BF16, 2 x A100, input 6,144: published 6.39 tokens/s; ours "
        "unstated 7.72 (+20.8%) -> stated as run (qwen2 / flash_attention_2, 19 passes) 7.49 (+17.2%). The step: "
        "published 154.4 ms (320.5 s less our 4.37 s prefill, / 2048), ours 131.4 ms = GPU 100.1 ms besides the KV "
        "+ 19 x 1.646 ms (2.35 GB mean cache at 0.7 of 2,039 GB/s), just above the 127.4 ms host floor; the run "
        "needs 33 passes, 1.74x the code's count (aud45d's 14,336 row ~33 too). Not the host (ours 127.4 ms "
        "floor < the run's 154.4 ms step; its input-1 step 114.5 ms). Lead, not verified: the achieved bandwidth "
        "of repeat_kv's broadcast copy (expand + reshape on a stride-0 source) and of flash-attn 2.5.8 at one "
        "query row a head, both below the 0.7 the engine charges; no field sizes it. host47b: stated unchanged "
        "(7.49, the GPU's step); unstated 7.72 -> 9.33 (+46.0%), the 69.8 ms floor at 16.99 us no longer hiding the "
        "3-pass GPU step."
    ),
}
_REASON = {
    "14b-6144-1gpu": (
        "UNEXPLAINED (qwen2up2): [QW25SPEED] Qwen2.5-14B-Instruct BF16, 1 x A100, input 6,144: published 20.51; ours "
        "stated as run 24.47 (+19.3%; was 23.51, +14.6%, inside by 0.4 points on the 51 count at 16.99 us; unstated "
        "still 23.51). Stated, the step is the host floor of transformers 4.46.0's count at the rate read on it "
        "(48 x 42 + 39 = 2,055 kernels x 19.67 us = 40.42 ms since fixtr's 9-kernel model-level rotary; 2,054 x "
        "19.68 us before; this page's own 14B input-1 step: the 14B is the "
        "rate's median fit row), so the host is priced at the run's own; the engine's 13 counted passes (GPU under "
        "the floor) do not grow the step, where the run's grows 8.3 ms from input 1 (40.42 -> 48.76 ms): the same "
        "figure as test_outside_qwen25_host_stop46.py's publisher's-host overshoot (24.47, +19.3%). The growth is "
        "the KV-pass shortfall decode48 measured between columns (1.3-1.7x the counted passes a cache byte), "
        "unsized; it passed before only because the 51-count rate put the floor 1.7 ms higher."
    ),
    "7b-14336-1gpu": (
        "UNEXPLAINED (host): [QW25SPEED] Qwen2.5-7B-Instruct BF16, 1 x A100, input 14,336: published 29.78; ours "
        "21.85 (-26.6%), stated = unstated: the engine's 45.2 ms host floor binds (17 counted passes: GPU ~21 ms). "
        "The run's step 33.0 ms; its input-1 step 24.8 ms (40.38 tokens/s) is the known host miss (-45.2%, 1.82x "
        "faster than 31 us a kernel); GPU-bound at 14,336 it needs ~36 passes (0.617 ms each) against 17 counted. "
        "serve46 / decode46: at the publisher's own input-1 host rate (17.0 us, see [7b-6144-1gpu]) it reads 39.48 "
        "(+32.6%): the host is not this row's miss, the KV-pass shortfall is. "
        + HOST47
        + " host47b: the default "
        "harness (plain transformers generate) now prices that host, 16.99 us: ours 21.85 -> 39.47 (+32.6%), the "
        "17-pass GPU step (~21 ms) under the 24.8 ms floor against the run's 33.0 ms: the KV shortfall is the miss. "
        "decode48b: stated 39.47 -> 36.39 (+22.2%), the GPU's step (17 passes at 27.6 pass-equivalents, 26.9 ms) "
        "now above the 24.8 ms floor, against the run's 33.0 ms (37.4 pass-equivalents needed); the same code and "
        "cache land at 30,720 (+14.2%) and for 14B at 14,336 (+8.6%), so what is left is this row's own ~6 ms a step, "
        "unsized (the page's 7B step grows 8.2 ms from input 1 to 14,336 and 18.7 ms more to 30,720, while the "
        "engine's GPU step grows from under the floor). qwen2up2: stated as run with transformers 4.46.0 (42 "
        "kernels a layer + 8 a token at 19.68 us, a 23.89 ms floor, was 24.77) 36.39 -> 37.33 (+25.4%): the "
        "decode's early steps sit on the lower floor; the row's own ~6 ms a step is still what is left."
    ),
}


@pytest.mark.django_db
@pytest.mark.parametrize(
    "row",
    [
        pytest.param(row, marks=pytest.mark.xfail(strict=True, reason=_REASON[row] + _DECODE48 + _DECODE48B))
        if row in _REASON
        else row
        for row in _ROWS
    ],
)
def test_qwen25_mid_context_rows_stated_as_run(bundled_catalog, row):
    preset, prompt, gpus, published, ours, unstated = _ROWS[row]
    speed = _as_published(preset, prompt, gpus)
    assert speed == pytest.approx(ours, rel=0.01)
    assert _as_published(preset, prompt, gpus, stated=False) == pytest.approx(unstated, rel=0.01)
    assert speed == pytest.approx(published, rel=0.15)


# The sizing page for the published 72B 30,720 run as Qwen's script ran it (flash_attention_2): the form has a
# control for attn_implementation but none for model.eager_layer, so a Qwen2.5 preset is priced with the llama layer,
# whose flash-attn class does not repeat: 3 passes, 7.85 decode tokens/s on the A100 where the API stating
# eager_layer qwen2 gives 4.12 (published 2.94 end to end).
@pytest.mark.django_db
def test_the_page_sizes_qwen25_with_flash_attention_as_the_api_does(bundled_catalog, engineer_client):
    """Was a strict xfail: PRODUCT GAP (fixd45): the sizing form could not state model.eager_layer and presets
    carried none, so qwen2.5-72b + flash_attention_2 on the page was sized with 3 KV passes (7.85 decode tokens/s on
    an A100) while the API with eager_layer qwen2 sized 19 (4.12); [QW25SPEED] 30,720 published 2.94 end to end.
    Now the page gives 4.12, as the API does, because the Qwen2.5 presets carry their architecture's layer
    (presets.PRESET_EAGER_LAYERS: Qwen/Qwen2.5-* -> qwen2, fixh45), so an unstated model.eager_layer on a Qwen2.5
    preset is qwen2 and its flash_attention_2 repeats the cache (19 passes)."""
    form = {
        "source": "fields",
        "name": "aud45h-form",
        "task": "inference",
        "preset": "qwen2.5-72b",
        "precision": "bf16",
        "concurrency": "1",
        "context_len": str(30720 + GENERATED),
        "gpus": "3",
        "pipeline_parallel": "3",
        "serving_engine": "hf_eager",
        "attn_implementation": "flash_attention_2",
    }
    page = engineer_client.post("/size/", form)
    assert page.status_code == 200 and page.context["errors"] == []
    built = yaml.safe_load(page.context["text"])
    assert (
        built["inference"]["attn_implementation"] == "flash_attention_2"
        and "eager_layer" not in built["model"]
    )
    page_speed = next(
        cand["throughput"]["decode_tokens_per_second_per_stream"]
        for cand in page.context["report"]["candidates"]
        if cand.get("gpu") == A100
    )
    stated = copy.deepcopy(built)
    stated["model"]["eager_layer"] = "qwen2"
    api = engineer_client.post(f"/api/size/?gpu={A100}", stated, content_type="application/json").json()
    api_speed = api["throughput"]["decode_tokens_per_second_per_stream"]
    # decode48b: 4.1235 -> 3.0335, the copies at 2.057 a pass; fix48x: 3.1215 at the corrected 1.944
    assert api_speed == pytest.approx(3.1215, rel=0.01)
    assert page_speed == pytest.approx(api_speed, rel=0.01)


# decode46: the arithmetic of [7b-6144-1gpu]'s EXPLAINED reason. The publisher's host rate, taken from its own
# input-1 rows ([QW25SPEED] 7B 40.38 / 14B 24.74 tokens/s, steps 24.77 / 40.42 ms, prefill of one token ~0), put in
# place of the engine's 31 us (procurement.sizing.assumptions.EAGER_KERNEL_HOST_SECONDS) on the engine's own kernel
# count (28 / 48 layers x 51 + 30): the 7B 6,144 row lands, the other model's input-1 row holds out.
@pytest.mark.django_db
def test_qwen25_7b_6144_lands_at_the_publishers_own_host_rate(bundled_catalog, monkeypatch):
    # host47b: the default harness now prices plain transformers generate at 16.99 us (was 31 us: 22.019)
    # qwen2up2: stated as run (4.46.0, 1,214 kernels at 19.68 us) 40.018 -> 41.478 (+7.0%); decode46's rates below
    # are read on the 51 count, so they are put on the unstated count (release "unstated", the same layer and
    # attention)
    assert _as_published("qwen2.5-7b", 6144, 1) == pytest.approx(41.478, rel=0.01)
    assert _as_published("qwen2.5-7b", 6144, 1, release="unstated") == pytest.approx(40.018, rel=0.01)
    kernels_7b, kernels_14b = 28 * 51 + 30, 48 * 51 + 30
    rate_7b, rate_14b = 1 / 40.38 / kernels_7b, 1 / 24.74 / kernels_14b
    assert (rate_7b * 1e6, rate_14b * 1e6) == (pytest.approx(16.99, abs=0.01), pytest.approx(16.31, abs=0.01))
    assert 53.0e-3 / (32 * 51 + 30) * 1e6 == pytest.approx(31.9, abs=0.05)  # AutoGPTQ's A100 host, same loop
    # fix46k: the same steps on the recounted transformers 4.46.0 layer (42-43 kernels, the reason's (a)): the main
    # figure, 20.5 / 19.8 us at 42 (20.1 / 19.3 at 43); the step, so every figure below, is the same.
    recount_us = [
        1e6 / speed / (layers * k + 30) for speed, layers in ((40.38, 28), (24.74, 48)) for k in (42, 43)
    ]
    assert recount_us == pytest.approx([20.53, 20.07, 19.76, 19.30], abs=0.01)
    for rate, seven_6144, fourteen_1 in ((rate_7b, 40.03, 23.75), (rate_14b, 41.67, 24.73)):
        host = dataclasses.replace(EAGER_KERNEL_HOST_SECONDS, value=rate)
        monkeypatch.setitem(serving_host.GENERATE_HARNESS_HOST, "transformers", host)  # host47b
        seven, fourteen = (
            _as_published("qwen2.5-7b", 6144, 1, release="unstated"),
            _as_published("qwen2.5-14b", 1, 1, release="unstated"),
        )
        assert seven == pytest.approx(seven_6144, rel=0.01)
        assert fourteen == pytest.approx(fourteen_1, rel=0.01)
        assert seven == pytest.approx(38.76, rel=0.15)
        assert fourteen == pytest.approx(24.74, rel=0.15)
