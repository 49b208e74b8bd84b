"""Outside audit (aud45g) of two stop-45 relabels no auditor had seen: fixa45 (TensorRT-LLM v0.9.0-era XQA takes
only 8 (or 1, later 16) query heads a KV head, so Mistral 7B (4) and Falcon 180B (29, head 64) decoded with masked
MHA, one thread block a query head; sized at one per-query-head rate of 3.7 TB/s fitted on two A100 Mistral rows)
and cls45f (optimum's GPTQ fp16 / exllama rows host-bound; ms-swift's 14B at 512 trained only the samples its
'delete' truncation kept). No product code is changed: these cases test the explanations where they predict an
answer, on rows of the same publishers' tables.

Sources (opened for this audit; figures quoted where used):
  [TRT9]    NVIDIA/TensorRT-LLM docs/source/performance.md at v0.9.0 (stored copy id 5995251461, "All data was
            generated using version 0.9.0"), Peak Throughput, out tok/s/GPU (Batch | TP | In | Out):
              H200 FP8: LLaMA 70B 64|1|2048|128 418 (no test had it), 64|1|2048|2048 1,458, 512|2|128|2048 3,963;
                        Falcon 180B 1024|4|128|128 1,118, 1024|4|128|2048 990, 64|4|2048|128 118, 64|4|2048|2048 265.
              H100 FP8: LLaMA 70B 64|2|2048|2048 1,011, 512|4|128|2048 2,725; Falcon 180B 1024|4|128|128 1,100,
                        64|4|2048|128 112, 64|4|2048|2048 246.
              L40S FP8: Falcon 180B 256|8|128|2048 200, 32|8|2048|2048 52.
              A100 FP16: LLaMA 70B 64|4|2048|2048 289; Mistral 7B 120|1|128|2048 3,776, 56|1|2048|2048 1,576.
            Its recipes: Llama2-70b ckpt_config 64 heads / 8 KV heads, Falcon-180B 232 / 8, hidden 14,848 (head 64),
            kv_cache_quant_algo FP8 on Hopper; engines from trtllm-build with no XQA flag.
  [XQA]     decoderXQARunner.h shouldUse, stored ids 619534789 ("if (nbQHeadsPerKV != 8 || (nbKVHeads != 1 && ...
            != 8)) SUPPORT_RETURN_FALSE("nbHeads")", head_size 128 only; it carries Medusa's multi_query_tokens,
            0.8.0+) and 5566994761 ("nbQHeadsPerKV != 8 && nbQHeadsPerKV != 1"; head 128 or 256); later
            decoderXQAImplPrecompiled.cpp id 2834867687 (16, 8 or 1). None takes 4 or 29.
  [PLUGIN]  gptAttentionCommon.cpp, stored id 441861056 (Medusa IFB era, the one-argument shouldUse<T> of id
            619534789): initialize() builds the DecoderXQARunner when `(mEnableXQA || mIsMedusaEnabled) &&
            !mCrossAttention` and fp16/bf16; enqueueGeneration "Try XQA optimization first" when shouldUse, else
            the masked MHA dispatch. tensorrt_llm/plugin/plugin.py PluginConfig, stored id 4882224494 ("2022-2024",
            moe_plugin, use_custom_all_reduce True): `enable_xqa: bool = True`, a trtllm-build flag defaulting to
            "enable". So XQA was on by default for an eligible model; the page's TRTLLM_ENABLE_XQA warning is not
            read by these copies. The masked MHA kernel (decoderMaskedMultiheadAttentionTemplate.h, e.g. id
            2796670445): "const unsigned hi{blockIdx.x}; ... const unsigned hi_kv{hi / qhead_per_kv};" one block a
            query head reading its KV head's cache.
  [OPTGPTQ] huggingface/optimum @096386299309ec9c4c737c9e5ce260008c48fad7 tests/benchmark/README.md, GPTQ benchmark,
            Llama-2-13B on one A100-SXM4-80GB, prompt 512, 512 new tokens, per-token latency (ms) fp16: batch 1
            36.958, 2 37.35, 4 37.89, 8 47.37 (168.86 tok/s), 16 69.94 (228.76 tok/s).
  [SWIFT]   modelscope/ms-swift Benchmark.md, LoRA, 'Model Type & Max Length' (training speed, samples/s): qwen-7b-chat
            512 7.43, 1024 6.51, 2048 4.31; qwen-14b-chat 512 5.63, 1024 4.36, 2048 2.60; "Token statistics ...
            (obtained by qwen's tokenizer): 3234.4±2547.5, min=91, max=19548". The table entered at ms-swift
            @97e4d198b (2024-01-02, "Update benchmark 0101 (#271)"), where swift/llm/utils/argument.py has
            `truncation_strategy ... default='delete'`, template.py returns None when `len(input_ids) >
            template.max_length` under 'delete', utils.py dataset_map drops the None rows, sft.py reports
            get_time_info(log_history, len(train_dataset)) = kept samples / train_runtime, and
            scripts/benchmark/test_memory_time/run_single.py uses every row (train_dataset_sample = -1) at max_length
            <= 2048 of cls-fudan-news-zh (damo/zh_cls_fudan-news). Its result.jsonl (with the kept set's stat_dataset)
            was never committed (git history of the path).
Tolerance: LLM speed 15%.
"""

from __future__ import annotations

import copy

import pytest

from procurement.api.sizing import size_spec_document
from procurement.sizing import parse_workload_spec
from procurement.sizing.assumptions import ACHIEVED_BANDWIDTH_FRACTION
from procurement.sizing.throughput import decode_read_bytes
from procurement.sizing.validation import trtllm_spec
from tests.procurement.outside.test_outside_audit_stop43h import SWIFT_MODELS, swift_lora_spec
from tests.procurement.outside.test_outside_audit_stop43l import tokens_per_second
from tests.procurement.outside.test_outside_audit_stop43s import MODELS
from tests.procurement.outside.test_outside_serve44 import GPUS, per_gpu

SPEED = 0.15
H200, H100, L40S, A100 = "h200-sxm-141gb", "h100-sxm5-80gb", "l40s", "a100-sxm4-80gb"
FIXA45_RATE = 3.7e12  # B/s, fixa45's rate (fitted on the two A100 FP16 Mistral long-output rows)


def _per_query_head(model, precision, gpu, tp, batch, prompt, output, group, rate=FIXA45_RATE):
    """fixa45's sizing (test_outside_xqa_stop45.py case 3), redone: the product's step plus the group's
    per-query-head reads at `rate` beyond the product's one read of the KV cache. Returns (sized out tok/s/GPU,
    the rate the published row implies)."""
    raw = trtllm_spec(model if model not in MODELS else "llama-2-7b", precision, tp, batch, prompt, output)
    if model in MODELS:
        raw["model"] = MODELS[model]
    _, kv = decode_read_bytes(parse_workload_spec({"name": "s", **raw}), float(batch))
    step = batch / (per_gpu(model, precision, gpu, tp, batch, prompt, output) * tp)
    once = batch * kv / (tp * GPUS[gpu].memory_bandwidth_gbps * 1e9 * ACHIEVED_BANDWIDTH_FRACTION)
    reads = batch * group * kv / tp
    sized = batch / (step + max(0.0, reads / rate - once)) / tp
    return sized, reads / (once + batch / (PUBLISHED[(model, gpu, tp, batch, prompt, output)] * tp) - step)


PUBLISHED = {  # [TRT9] out tok/s/GPU
    ("llama-2-70b", A100, 4, 64, 2048, 2048): 289,
    ("llama-2-70b", H100, 2, 64, 2048, 2048): 1011,
    ("llama-2-70b", H100, 4, 512, 128, 2048): 2725,
    ("llama-2-70b", H200, 1, 64, 2048, 2048): 1458,
    ("llama-2-70b", H200, 2, 512, 128, 2048): 3963,
    ("mistral-7b", A100, 1, 120, 128, 2048): 3776,
    ("mistral-7b", A100, 1, 56, 2048, 2048): 1576,
    ("falcon-180b", H200, 4, 1024, 128, 2048): 990,
    ("falcon-180b", H200, 4, 64, 2048, 2048): 265,
    ("falcon-180b", H100, 4, 64, 2048, 2048): 246,
    ("falcon-180b", L40S, 8, 256, 128, 2048): 200,
    ("falcon-180b", L40S, 8, 32, 2048, 2048): 52,
    ("falcon-180b", H200, 4, 1024, 128, 128): 1118,
    ("falcon-180b", H200, 4, 64, 2048, 128): 118,
    ("falcon-180b", H100, 4, 1024, 128, 128): 1100,
    ("falcon-180b", H100, 4, 64, 2048, 128): 112,
}
PRECISION = {A100: "fp16", H100: "fp8", H200: "fp8", L40S: "fp8"}
GROUP = {"llama-2-70b": 8, "mistral-7b": 4, "falcon-180b": 29}


def _row(key):
    model, gpu, tp, batch, prompt, output = key
    return _per_query_head(model, PRECISION[gpu], gpu, tp, batch, prompt, output, GROUP[model])


# --- Case 1 (new row): [TRT9] H200 FP8 LLaMA 70B on ONE GPU, batch 64, 2,048 in / 128 out: 418. --------------------
# Llama 2 70B has 8 query heads a KV head (64 / 8), head 128: [XQA] takes it and [PLUGIN] enables it by default (the
# recipe also exports TRTLLM_ENABLE_XQA=1), so the decode shares each KV head across its group as the product prices
# it, and fixa45's per-query-head term must not apply. It would make this row worse: 283.3 (-32.2%).
H200_70B_TP1_REASON = (
    "UNEXPLAINED (aud45g): [TRT9] H200 FP8 Llama 2 70B, TP 1, batch 64, 2,048/128: published 418 tok/s/GPU; ours "
    "346.6 (-17.1%). Not the masked-MHA re-reads of fixa45: 8 query heads a KV head with head 128 is the one shape "
    "v0.9.0-era XQA takes (decoderXQARunner.h shouldUse), on by default (PluginConfig enable_xqa True; the recipe "
    "also exports TRTLLM_ENABLE_XQA=1), and the per-query-head term at 3.7 TB/s would give 283.3 (-32.2%). The row "
    "is prefill-heavy on one GPU (64 x 2,048 prompt tokens a batch of 128 steps), the shape of "
    "test_serving_published.py's H200 one-GPU 1,024 x 128/128 miss (-18.1%, 'the FP8 GEMMs of this all-compute shape "
    "reach more than the 0.47 fitted on a batch-1 prefill'); the TP 2 H100 row of the same shape passes (-9.3%). "
    "A spec cannot state the FP8 GEMM rate a shape reaches"
)


@pytest.mark.xfail(strict=True, reason=H200_70B_TP1_REASON)
def test_trt9_h200_llama2_70b_one_gpu_2048_in_128_out():
    assert per_gpu("llama-2-70b", "fp8", H200, 1, 64, 2048, 128) == pytest.approx(418, rel=SPEED)


# --- Case 2: the published rows split by shouldUse's group test, and the one rate's spread. -----------------------
# The rate each [TRT9] long-output row implies if its decode read the cache once a query head (the group's reads over
# the time the row leaves beyond the product's step, with the product's one read put back). By hand, at the
# product's unchanged steps: Llama 2 70B (group 8, XQA) A100 TP 4 8.9, H100 TP 2 16.2, TP 4 12.1, H200 TP 1 19.0,
# TP 2 23.6 TB/s: 2.4-6.4x fixa45's 3.7, i.e. these rows did NOT re-read per query head (at 3.7 TB/s they would
# read -27% to -58%), as shouldUse's group-8 test says. Mistral 7B (group 4) A100 3.40 / 4.16 (the fit rows),
# Falcon 180B (group 29) H200 5.57 / 3.43, H100 (2,048/2,048) 3.6: the masked-MHA rows sit at 3.4-5.6 TB/s, a
# 1.65x spread, not one rate. fixa45 did not check the L40S Falcon 180B long-output rows (passing today, +9.2% /
# -1.1%): with the term they read -3.1% / -8.4%, still inside (TP 8 over PCIe: the all-reduces dominate the step).
# The prefill-heavy Falcon Hopper rows (passing today at -3.3% .. -7.4%) read -15.1% .. -17.5% with the term (four
# rows, not three): their 141-248 ms steps already land, and 127 decode steps of 29 x the cache at 3.7 TB/s add
# 21.7-31.6 ms to each; to stay inside 15% they need a rate of 3.8-5.0 TB/s or more, or the product's Falcon prefill
# on Hopper is ~10% slow and the term would be compensating it. Either way the term is a fit good to about +-20%.
def test_xqa_group_test_splits_the_rows_and_the_one_rate_spreads():
    llama_70b = [k for k in PUBLISHED if k[0] == "llama-2-70b"]
    implied_70b = [_row(k)[1] for k in llama_70b]
    assert min(implied_70b) > 2.3 * FIXA45_RATE  # 8.9 TB/s and up: no per-query-head re-reads in these runs
    assert all(_row(k)[0] / PUBLISHED[k] - 1 < -0.25 for k in llama_70b)  # the term would wreck them
    masked = [k for k in PUBLISHED if k[0] != "llama-2-70b" and k[1] != L40S and k[5] == 2048]
    implied = [_row(k)[1] for k in masked]
    assert 3.3e12 < min(implied) and max(implied) < 5.7e12
    assert max(implied) / min(implied) == pytest.approx(1.65, abs=0.05)
    for k in [k for k in PUBLISHED if k[1] == L40S]:  # checked by nobody before: still inside with the term
        assert _row(k)[0] == pytest.approx(PUBLISHED[k], rel=SPEED)
    prefill_heavy = [k for k in PUBLISHED if k[0] == "falcon-180b" and k[5] == 128]
    errors = sorted(_row(k)[0] / PUBLISHED[k] - 1 for k in prefill_heavy)
    assert all(-0.18 < e < -0.15 for e in errors)  # -17.5, -16.5, -16.2, -15.1%: four rows pushed out


# --- Cases 3 and 4 (new rows): [OPTGPTQ]'s fp16 rows at batch 8 and 16, where the run's GPU binds. ----------------
# cls45f reads batch 1-4 as host-bound (36.958 -> 37.89 ms, flat), at 19.3 us a kernel (1,910 kernels; 17.85 us on
# the product's 2,070). Held out: at batch 8 / 16 the run's step grows to 47.37 / 69.94 ms, above that host time, so
# those rows time the GPU. By hand (the product with EAGER_KERNEL_HOST_SECONDS set to 17.85 us): batch 1 / 2 / 4 land
# at +0.0 / +1.1 / +2.5% (cls45f's explanation holds), but the product's GPU step at batch 8 / 16 is 28.6 / 39.2 ms,
# 0.60 / 0.56 of the run's: with the run's host the product would read +28.2% / +78.6%. At the product's 31 us the
# 64.2 ms host floor hides it: batch 8 -26.2%, batch 16 +9.0% (a pass by compensation). The eager step's GPU work
# that grows with streams (transformers 4.32's torch.cat cache copies and m = 1 batched attention matmuls) is priced
# at about 0.6 of what the run took; aud45d's Qwen2.5 long-input rows show the same shortfall from another side.
def _optimum_fp16_ms(concurrency: int) -> float:
    inference = {"concurrency": concurrency, "context_len": 1024, "output_tokens": 512, "engine": "hf_eager"}
    spec = {
        "name": f"aud45g-optimum-fp16-b{concurrency}",
        "task": "inference",
        "model": {"preset": "llama-2-13b"},
        "weight_quantization": "none",
        "inference": inference,
    }
    report = size_spec_document(copy.deepcopy(spec), [A100], calibrate=False)
    return 1e3 / report["throughput"]["decode_tokens_per_second_per_stream"]


OPTIMUM_B8_REASON = (
    "UNEXPLAINED (aud45g): [OPTGPTQ] Llama-2-13B fp16, one A100-SXM4-80GB, batch 8: published 47.37 ms a token "
    "(21.11 tok/s a stream, 168.86 in all); ours 64.2 ms (15.58 a stream, -26.2%), hf_eager's host floor (2,070 "
    "kernels x 31 us). cls45f's explanation (the run's host issues a kernel in 17.85 us on this count, 19.3 us on "
    "4.32's 47-kernel layer) fits batch 1-4 (+0.0 / +1.1 / +2.5% with that rate) but here the run's step is above "
    "its host time, and the product's GPU step is 28.6 ms, 0.60 of the run's 47.37: with the run's host rate this "
    "row would read +28.2%. The eager GPU work that grows with streams is short; not sized (no count of what "
    "transformers 4.32's attention costs at m = 1). decode46, one lead sized, not closing: the run's torch 2.0.1 "
    "torch.cat has no vectorized path (CatArrayBatchedCopy; 8-byte loads for fp16 only from pytorch#150233, 2025, "
    "whose own bf16 benchmark runs 1.66x faster after): at 1.66x its 2 passes of the 5.03 GB cache (8 streams x "
    "768 mean context x 0.82 MB) add 1.3 passes, +4.7 ms: 33.3 ms, 0.70 of the run's 47.37; the 8 -> 16 stream "
    "slope (22.57 ms for 5.03 GB more, 6.4 passes at 1.43 TB/s) needs 3.4 passes beyond the 3 counted, the cat 1.3. "
    "host47b: plain transformers generate (the default harness, inference.generate_harness transformers) now prices "
    "a kernel at 16.99 us (hf_generate_kernel_host_s, this benchmark's batch-1 row one of its fit rows): the floor is "
    "35.2 ms and ours is the GPU's 35.2 ms: 28.43 a stream (+34.7%); the eager GPU work is the whole miss now."
)


@pytest.mark.django_db
@pytest.mark.xfail(strict=True, reason=OPTIMUM_B8_REASON)
def test_optimum_gptq_benchmark_fp16_batch_8_row(bundled_catalog):
    assert 1e3 / _optimum_fp16_ms(8) == pytest.approx(1e3 / 47.37, rel=SPEED)


@pytest.mark.django_db
@pytest.mark.xfail(
    strict=True,
    reason="UNEXPLAINED (host47b; passed before by compensation, as this test's name said): [OPTGPTQ] Llama-2-13B "
    "fp16, one A100-SXM4-80GB, batch 16: published 69.94 ms a token (14.30 tok/s a stream); ours 64.2 ms (+9.0% "
    "speed, hf_eager's 31 us host floor standing in for GPU work the engine does not price) -> 39.2 ms (+78.6%) at "
    "plain transformers generate's 16.99 us a kernel (hf_generate_kernel_host_s; the floor 35.2 ms), the product's "
    "GPU step. As batch 8 (OPTIMUM_B8_REASON): the eager GPU work that grows with streams is short, the run's 8 -> 16 "
    "slope needs 3.4 passes of the cache beyond the 3 counted, the torch 2.0.1 scalar torch.cat lead sizes 1.3; "
    "the rest unsized, and no field states a run's KV traffic. fixtr (audtr's finding; the 39.2 ms pin was stale "
    "since decode48b, hidden because a strict xfail's first failing line xfails it): the product's step is 52.49 ms "
    "(+33.2% speed), the GPU's: 25.7 GB of weights + 16 streams x 4.889 pass-equivalents (3 passes, the cat's two "
    "copy passes of a 2-byte cache at EAGER_2BYTE_COPY_PASS_RATIO 1.944 each, decode48b / fix48x) x 0.629 GB of "
    "mean cache, at 0.7 x 2,039 GB/s (by hand in the test); the host floor (35.17 ms) is under it. Still short of the "
    "run's 69.94 ms by 17.5 ms; the priced copy rate closed 13.3 ms of the 30.8 ms the 3-pass step missed.",
)
def test_optimum_gptq_benchmark_fp16_batch_16_row_passes_by_compensation(bundled_catalog, monkeypatch):
    # [OPTGPTQ] batch 16: 69.94 ms a token (228.76 tok/s); ours 64.2 ms (+9.0% speed): inside, but it was hf_eager's
    # host floor against a GPU-bound run step.
    # host47b: at the default harness's 16.99 us (near the run's own host rate, cls45f's 17.85 us on the product's
    # count) the product's GPU step shows: 39.2 ms, +78.6% speed, the miss the 31 us floor hid.
    # fixtr (audtr): re-pinned 39.17 -> 52.49 ms. decode48b / fix48x priced the cat's two copy passes of a 2-byte
    # cache at serving_host.EAGER_2BYTE_COPY_PASS_RATIO each (3 passes -> 3 + 2 x 0.944 = 4.889 pass-equivalents);
    # the 39.17 pin was host47b's 3-pass step and failed first, hiding the bar line's figure (+33.2%, not +78.6%).
    assert _optimum_fp16_ms(1) == pytest.approx(35.17, rel=0.005)  # 2,070 x 16.99 us: the floor at batch 1
    assert _optimum_fp16_ms(16) == pytest.approx(52.49, rel=0.005)
    # by hand: the weights once + 16 streams x 4.889 pass-equivalents of one stream's mean cache, at 0.7 x 2,039 GB/s
    spec = parse_workload_spec(
        {
            "task": "inference",
            "model": {"preset": "llama-2-13b"},
            "weight_quantization": "none",
            "inference": {"concurrency": 16, "context_len": 1024, "output_tokens": 512, "engine": "hf_eager"},
        }
    )
    weights, kv = decode_read_bytes(spec, 16.0)  # 25.7 GB, 0.629 GB a stream
    assert weights / 1e9 == pytest.approx(25.7, rel=0.01) and kv / 1e9 == pytest.approx(0.629, rel=0.01)
    rate = ACHIEVED_BANDWIDTH_FRACTION * 2039e9  # 0.7 x the A100-SXM4-80GB datasheet 2,039 GB/s
    assert (weights + 16 * 4.889 * kv) / rate * 1e3 == pytest.approx(52.49, rel=0.01)
    assert 69.94 / 52.49 - 1 == pytest.approx(0.332, abs=0.001)  # the bar line's miss: +33.2% speed
    assert 1e3 / _optimum_fp16_ms(16) == pytest.approx(1e3 / 69.94, rel=SPEED)


# --- Case 5: [SWIFT]'s own rows prove the run's samples shorter than max_length. -----------------------------------
# A LoRA step with full checkpointing does at least 6 FLOPs a frozen matmul weight a token (forward, recomputed
# forward, activation gradients; no weight gradients): 6 x (params - vocab x hidden) from the product's models:
# Qwen-7B 7.10e9, Qwen-14B 13.39e9 matmul weights. At max_length tokens a sample the published rows need, of the
# A100's 312 dense BF16 TFLOPS: 7B 0.52 / 0.91 / 1.21, 14B 0.74 / 1.15 / 1.37 (512 / 1,024 / 2,048). Rows above
# 1.0 are impossible at the stated length: the run trained shorter samples, as ms-swift @97e4d198b's 'delete'
# truncation says. This is the proof-from-the-rows cls45f's 14B reason lacks; at 512 itself the row needs 0.74
# (implausible for eager PEFT, not impossible), so the 512 row leans on the code, not on its own figure.
def test_ms_swift_rows_need_more_than_the_a100_peak_at_their_max_length():
    peak = GPUS[A100].dense_tflops("bf16") * 1e12
    rows = {"7b": {512: 7.43, 1024: 6.51, 2048: 4.31}, "14b": {512: 5.63, 1024: 4.36, 2048: 2.60}}
    share = {}
    for size, by_length in rows.items():
        model = parse_workload_spec(swift_lora_spec(SWIFT_MODELS[size], 512)).model
        matmul = model.params - model.vocab_size * model.hidden_size
        share[size] = {n: sps * n * 6 * matmul / peak for n, sps in by_length.items()}
    assert share["14b"][512] == pytest.approx(0.74, abs=0.01)
    assert all(share[size][n] > 1.0 for size in rows for n in (2048,)) and share["14b"][1024] > 1.1


# --- Case 6: one kept set for the 7B and the 14B at 512 (same data set, same Qwen-1 tokenizer). -------------------
# cls45f sizes the 14B row by inverting the engine: 177.6 ms a sample is its time at a ~334-token kept mean. The 7B
# row trained the same kept samples: at 334 tokens the engine gives it 9.52 samples/s against 7.43 (+28.1%). A
# lognormal with [SWIFT]'s published moments (3,234.4 +- 2,547.5) keeps 1.1% of the 4,959 rows (52) at a mean of
# 413 tokens: there the 14B reads 4.60 samples/s against 5.63 (-18.3%). A common kept mean lands both only near 395
# (14B -14.7%, 7B +14.9%: both at the edge); the lognormal's lower tail is too thin for the set (its expected minimum
# 217 against the published 91), so the kept mean is not known from any published source. Bounded, not sized.
@pytest.mark.django_db
def test_ms_swift_one_kept_mean_cannot_comfortably_land_the_7b_and_the_14b(bundled_catalog):
    def samples_per_second(size, mean):
        return tokens_per_second(swift_lora_spec(SWIFT_MODELS[size], mean)) / mean

    assert samples_per_second("7b", 334) / 7.43 - 1 > 0.25  # cls45f's 14B-derived mean misses the 7B
    assert samples_per_second("14b", 413) / 5.63 - 1 < -0.15  # the moments' lognormal mean misses the 14B
    edge = 395
    assert samples_per_second("14b", edge) / 5.63 - 1 == pytest.approx(-0.147, abs=0.01)
    assert samples_per_second("7b", edge) / 7.43 - 1 == pytest.approx(0.149, abs=0.01)
