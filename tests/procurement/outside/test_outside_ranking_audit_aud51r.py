"""aud51r (stop 51): outside audit of the RANKING after stop 51's changes (decode read fraction keyed to the RTX
4090, inference.quant_format gptq / awq / mxfp4, decode_attention, DeepSpeed ZeRO-1/2 buckets, Qwen-1 Triton rotary,
the eager UNet launch queue, torchao float8 DiT training, YOLO / RT-DETR EMA). Issue 26's done-criterion format:
six published runs no test used (tests/ grepped for each source and figure: vllm-project/vllm#22331, "90 tps",
SemiAnalysisAI/InferenceX#1061, "31.4 ms", AlexsJones/llmfit#1046, "58.7", ai-bot-pro/achatbot#183, "2765.40",
chenyaofo's DeepSpeed gist, "44.8", ultralytics/ultralytics#3075, "2.8G": none), stated as the publisher ran them
with docs/workload-spec.md's fields (defaults otherwise), ranked through the service `manage.py recommend SPEC
--format json --top 5` runs (`ranked`), each top-5 row judged with the stop-48 module's `row_problems` (row 1 fits
with its margin shown, no rack-scale part, no consumer split for production serving, the stated GPU count kept in
training, every row's compute = price x hours x instances to the cent and total = its parts). Speeds and memory are
read off the ranking rows themselves (`serving.time_per_output_token_ms` / `time_to_first_token_ms`,
`memory_per_gpu_gib`, `hours`) filtered to the publisher's card, because the per-card `size` service raises on every
language-model spec at this commit (test_the_size_service_answers_a_language_model_spec, below).
Bars: LLM memory 10%, LLM speed 15%; image memory 15%, image speed 25%. A miss is a strict xfail "UNEXPLAINED
(aud51r): ...".

Sources (verbatim where quoted):
  [V22331] vllm-project/vllm issue #22331 ("vllm/vllm-openai:gptoss AssertionError: Sinks are only supported in
           FlashAttention 3"), ghostplant quoted by jkyamog (2025-08-28): "What I use is A100 80GB + fully NVlink",
           `docker run ... --env "VLLM_ATTENTION_BACKEND=TRITON_ATTN_VLLM_V1" ... vllm/vllm-openai:gptoss
           --tensor-parallel-size=2 --model openai/gpt-oss-120b`, "For TP=1, I get 90 tps. For TP=2/4, I get 77-78
           tps."; jkyamog: "90 tps for 120B is about similar to what I got 88 tps"; ghostplant: "Looks like if local
           expert count per device is small, the MoE layer start to slow down." One chat stream (vLLM's gpt-oss
           recipe, A100 path: the Triton attention backend, MXFP4 experts); prompt and reply lengths unstated
           (128 / 1,024 assumed; decode speed at that context does not move with them).
  [IX1061] SemiAnalysisAI/InferenceX pull request #1061 (2026-04-17): "Results (single MI300X, vllm v0.17.0,
           ISL/OSL=1024)": "| 64 (current) | 2,008 | 4,016 | 31.4 ms |", "| 96 | 2,561 | 5,105 | 36.6 ms |",
           "| 128 | 2,990 | 5,981 | 41.3 ms |", "| 256 | 4,271 | 8,552 | 58.3 ms |" (concurrency, output TPS, total
           TPS, median TPOT); "GPT-OSS 120B FP4 on MI300X TP=1".
  [LLMFIT] AlexsJones/llmfit pull request #1046 (2026-09-15, `llmfit bench --share`, nvidia-geforce-rtx-4090):
           "| Qwen/Qwen3-8B | vllm | 58.7 | — |" (Avg TPS); the maintainer: "300 tokens in 5.1 s is 58.7 tok/s".
           One stream, BF16 (no quantization stated); prompt unstated (128 assumed). Qwen3-8B config.json: 36
           layers, hidden 4,096, 32 heads / 8 KV heads of 128, intermediate 12,288, vocabulary 151,936, untied.
  [ACB183] ai-bot-pro/achatbot pull request #183 (2025-08-10): `LLM_MODEL=openai/gpt-oss-20b SERVE_IMAGE_GPU=H100
           TP=1 ... --num-prompts 160 --max-concurrency 32`, "Backend: sglang-oai", "Total input tokens: 81920",
           "Total generated tokens: 163840", "Mean E2E Latency (ms): 11769.33", "Mean TTFT (ms): 3721.89": 512 in /
           1,024 out, mean TPOT (11,769.33 - 3,721.89) / 1,023 = 7.867 ms (the excerpt read stops before the TPOT
           block; derived, and it holds whatever prefills interleave with a stream's decode).
  [CYFZ2]  gist.github.com/chenyaofo/d4cd6a20ab4b95cb3a49491747e2139a: "A800 x 8 ... CUDA 12.1, PyTorch 2.2.0,
           Deepspeed 0.14.2", "Benchmark of LLaMA-7B models using deepspeed-based traning code. The squence length is
           4096.", ZeRO-2 rows (Ckpt / Optim. Off. / Param. Off. / Zero++ / BS / CPU Mem. / GPU Mem. / Th.put):
           "2 | × | × | × | × | 1/64 | 320.1 | 19.4/44.8 | 5.33 |", "2 | √ | × | × | × | 1/64 | 320.0 | 19.4/23.5 |
           4.19 |", "2 | √ | × | × | × | 4/64 | 320.4 | 27.2/38.6 | 4.69 |"; "Ckpt. indicates whether to enable HF
           gradient checkpointing"; "BS represents batch size per device per iteration / batch size for gradient
           [update]". Read: 8 ranks, global 64 (accumulation 8 at BS 1, 2 at BS 4); GPU Mem.'s second figure the
           peak (its footnote was not readable: taken as GiB, as the project reads "G" elsewhere); Th.put as samples
           a second over the 8 GPUs (its unit is unlabelled: 5.33 x 4,096 / 8 = 2,729 tokens/s/GPU, 37% of the
           A800's 312 TFLOPS at 6 x 6.7e9 a token, a plausible ZeRO-2 rate). The DeepSpeed config is not shown:
           stated with DeepSpeed 0.14.2's defaults (reduce_bucket_size 5e8, overlap_comm false at stage 2,
           contiguous_gradients true; docs/workload-spec.md parallelism.reduce_bucket_size), an HF model (the
           huggingface loss). The catalog has no A800 SXM: sized on the A100 SXM4 80GB (the same GA100 and HBM2e;
           NVLink 400 against 600 GB/s).
  [U3075]  ultralytics/ultralytics issue #3075 (2023-06-07), NVIDIA GTX 1060 6 GB: `model = YOLO('yolov8n.pt')`,
           `model.train(data='test.yaml', imgsz=704, epochs=8, batch=8)`; "1/8 2.8G 0.4452 1.629 1.087 18 704:
           100%| 25848/25848 [5:32:46<00:00, 1.29it/s]"; validation "12924/12924 [1:45:40<00:00, 2.04it/s]", "all
           206780 411952" (images, instances). GPU_mem is torch.cuda.memory_reserved() / 1e9 (the project's reading,
           test_outside_detection_audit_stop44.py). The GTX 1060 is not in the catalog: its speed is not judged.
Not used: gigagpu.com "RTX 4090 24GB SDXL Benchmark" (SDXL 1,024 px, 30 steps in 2.0 s; a batch of four in 6.5 s,
  diffusers 0.30 / PyTorch 2.5 / SDPA). It is twice as fast as Hugging Face's own measured RTX 4090 rows of the same
  pipeline (the SDXL blog's fp16 + SDPA, 11.41 s for 4 images x 25 steps, 3.4 s an image at 30 steps, which the
  project already uses as [SDXL-OPT]); a vendor page that contradicts a measured run on the same card by 2x is not a
  source to judge an engine with. (Ours: 4.23 s an image, 15.29 s for four.)
"""

from __future__ import annotations

import pytest

from procurement.services.sizing import size_spec_document
from procurement.sizing.assumptions import CUDA_CONTEXT_GIB
from tests.procurement.outside.test_outside_quant_format_audit_aud51f import GPT_OSS_20B
from tests.procurement.outside.test_outside_ranking_audit_stop48 import (
    IMAGE_MEMORY,
    LLM_MEMORY,
    LLM_SPEED,
    candidate,
    err,
    row_problems,
)
from tests.procurement.outside.test_outside_recommendations_x26b import ranked
from tests.procurement.outside.test_outside_recommendations_x26e import GPT_OSS_120B

GIB = 2.0**30
A100, H100, MI300X, RTX4090 = "a100-sxm4-80gb", "h100-sxm5-80gb", "mi300x", "rtx-4090"


def gpt_oss(model: dict, gpus: int, concurrency: int, prompt: int, output: int) -> dict:
    """gpt-oss as vLLM / SGLang serve the released checkpoint: MXFP4 routed experts (quant_format mxfp4, stop 51),
    everything else bf16."""
    parallelism = {"gpus": gpus, "tensor_parallel": gpus} if gpus > 1 else {"gpus": 1}
    return {
        "task": "inference",
        "model": model,
        "precision": "bf16",
        "weight_quantization": "int4",
        "parallelism": parallelism,
        "inference": {
            "concurrency": concurrency,
            "context_len": prompt + output,
            "output_tokens": output,
            "quant_format": "mxfp4",
        },
    }


GOSS_TP1 = gpt_oss(GPT_OSS_120B, 1, 1, 128, 1024)
GOSS_TP2 = gpt_oss(GPT_OSS_120B, 2, 1, 128, 1024)
PUB_V22331 = {1: 90.0, 2: 77.5}  # tokens/s, one stream; TP 2 "77-78"
IX = {c: gpt_oss(GPT_OSS_120B, 1, c, 1024, 1024) for c in (64, 96, 128, 256)}
PUB_IX_TPOT_MS = {64: 31.4, 96: 36.6, 128: 41.3, 256: 58.3}
QWEN3_8B = {
    "name": "Qwen3-8B",
    "num_layers": 36,
    "hidden_size": 4096,
    "num_attention_heads": 32,
    "num_key_value_heads": 8,
    "head_dim": 128,
    "intermediate_size": 12288,
    "vocab_size": 151936,
    "tie_word_embeddings": False,
}
LLMFIT = {
    "task": "inference",
    "model": QWEN3_8B,
    "precision": "bf16",
    "inference": {"concurrency": 1, "context_len": 128 + 300, "output_tokens": 300},
}
ACB183 = gpt_oss(GPT_OSS_20B, 1, 32, 512, 1024)
PUB_ACB183_TPOT_MS = (11769.33 - 3721.89) / 1023
CYFZ2 = {
    "task": "full_finetune",
    "model": {"preset": "llama-2-7b"},
    "precision": "bf16",
    "seq_len": 4096,
    "micro_batch_size": 1,
    "gradient_accumulation_steps": 8,
    "cross_entropy": "huggingface",
    "training_tokens": 64 * 4096 * 1000,  # 1,000 optimizer steps of 64 x 4,096 tokens
    "parallelism": {"gpus": 8, "zero_stage": 2, "reduce_bucket_size": 500_000_000},
}
CYFZ2_CKPT = CYFZ2 | {"gradient_checkpointing": "full"}
CYFZ2_CKPT_BS4 = CYFZ2_CKPT | {"micro_batch_size": 4, "gradient_accumulation_steps": 2}
U3075 = {
    "task": "full_finetune",
    "model": {"preset": "yolov8n"},
    "micro_batch_size": 8,
    "image": {
        "resolution_px": 704,
        "epochs": 8,
        "dataset_images": 206780,
        "eval_every_epochs": 1,
        "eval_images": 206780,
    },
}


def on(spec: dict, gpu: str, **options) -> dict:
    """The ranking's best row on the publisher's card (the service with --gpu GPU)."""
    return ranked(spec, 1, gpus=[gpu], **options)[0]


def decode_rate(row: dict) -> float:
    return 1000.0 / row["serving"]["time_per_output_token_ms"]


def samples_per_second(spec: dict, row: dict) -> float:
    return spec["training_tokens"] / spec["seq_len"] / (row["hours"] * 3600)


def top5(spec: dict, **options) -> list[dict]:
    rows = ranked(spec, 5, **options)
    assert len(rows) == 5
    return rows


# --- the size service ---------------------------------------------------------------------------------------------
R_SIZE = (
    "UNEXPLAINED (aud51r): not a published-vs-product gap but a crash found while auditing: at deeb0b4e the size "
    "service (size_spec_document, what `manage.py size` and the per-card candidate helpers call) raises "
    "AttributeError: 'NoneType' object has no attribute 'slug' on every language-model spec (this gpt-oss one, a "
    "llama-3.1-8b preset alike). Located in the product, not a source run: fix51i (91f96baa) added "
    "image_model.unstated_density_note, which report._workload_summary reaches through image_model.memory_notes for "
    "every spec and which calls is_yolo(spec) -> image_preset(spec.model.image_arch.slug) without the `image_arch is "
    "None` guard its neighbour dense_detector_peak_note has. Existing outside tests fail with it (x26e's "
    "test_gpt_oss_120b_mxfp4_serves_131k_context_from_one_80gb_card, stop 49's "
    "test_vllm023_llama31_8b_a100_40gb_one_stream). The ranking (`recommend`) does not call it and answers."
)


# XPASS -> FIXED (zacc): strict xfail R_SIZE (kept above as the record) removed; the AttributeError was fixed by
# 6ece8ccf / fix51t (unstated_density_note guarded on language models, merged before zacc), not by zacc's change:
# before, AttributeError 'NoneType' object has no attribute 'slug'; after, the report answers with candidates.
@pytest.mark.django_db
def test_the_size_service_answers_a_language_model_spec(bundled_catalog):
    report = size_spec_document(GOSS_TP1, [A100], calibrate=False)
    assert report["candidates"]


# --- [V22331] gpt-oss-120b, vLLM's recipe, one stream on A100 80GB ------------------------------------------------
R_V22331 = (
    "UNEXPLAINED (aud51r): [V22331] gpt-oss-120b (MXFP4 experts, vLLM gptoss image, Triton attention) one stream on "
    "A100 80GB: published {pub:.1f} tokens/s at TP {tp}, ours {ours:.1f} ({e:+.1%}; TPOT {tpot:.2f} ms against "
    "{pub_ms:.2f}). The published TP 2 row is SLOWER than TP 1 (77.5 against 90 tokens/s: +1.8 ms a token), ours "
    "faster (3.62 against 4.35 ms): the engine prices the batch-1 MoE step as bytes (5.1B active parameters, experts at "
    "4.25 bits, the rest bf16, ~5.2 GB a token at 0.70 of 2,039 GB/s = 3.6 ms) that TP halves, while the run pays "
    "~0.31 ms a layer (11.1 ms / 36 layers) that TP does not halve. Sized in part: +1.8 ms at TP 2 is 72 all-reduces "
    "(2 a layer x 36) at ~25 us, the usual latency of a small NVLink all-reduce on A100 (moefloor: the engine "
    "already charges 20.02 us a call, 1.44 ms at TP 2; nccl-tests' A100 table reads 25.56 us at 5,760 B, 0.40 ms "
    "more, 4% of the TP 2 gap); the per-layer floor (Marlin MXFP4 fused_moe on Ampere, the Triton attention with sinks, "
    "router and top-k, each a launch) was not sized by aud51r (0% of the TP 1 gap; moefloor below). The same class as aud50b's [DSR1] (MoE "
    "decode at small batch: 0.42 ms a layer on H200) and ghostplant's own reading ('if local expert count per device "
    "is small, the MoE layer start to slow down'). The row's accuracy block says 'no published runs of LLM decode at "
    "batch 1 of mixture-of-experts models to check it against' (the doubt is shown, the figure is not hedged). Rows "
    "rebuild to the cent. moefloor (test_outside_moe_floor_moefloor.py, sized from kernel tables, checked here, "
    "not set here): fused_moe's Triton kernel at batch 1 runs 26-40 us above its expert bytes at the engine's rate "
    "(vllm#19049 A100 PCIe bf16 109.21 us, 39.85 over; vllm#24700 H100 fp8 28.44; sglang#11730 H200 fp8 26.08); "
    "39.85 us x 36 layers = 1.43 ms, 21% of the TP 1 gap, 15% of TP 2's (20% with the all-reduce shortfall). The "
    "run's MXFP4 experts ran another kernel on Ampere (not timed in any table read), and vllm#39902's gpt-oss H100 "
    "batch-1 time (89.02 us, dtype not read) sits at its bf16 bytes, so the floor depends on the expert shape: no "
    "engine constant. ~80% unsized: the Triton attention with sinks, router / top-k / align kernels, per-layer "
    "launches outside the CUDA graph. moeshape (test_outside_moe_shape_moeshape.py): no rule of the Triton kernel's "
    "shape (grid blocks against SMs, K-loop waves) reproduces the fused_moe tables within 20% (worst 34-72%), and "
    "the run's MXFP4 experts on Ampere ran another kernel (aud51r: Marlin), not that one: no engine term here."
)


def _v22331(tp: int) -> tuple[float, float]:
    row = on(GOSS_TP1 if tp == 1 else GOSS_TP2, A100)
    return decode_rate(row), row["serving"]["time_per_output_token_ms"]


@pytest.mark.django_db
@pytest.mark.xfail(
    strict=True,
    reason=R_V22331.format(pub=90.0, tp=1, ours=229.9, e=229.9 / 90 - 1, tpot=4.35, pub_ms=1000 / 90),
)
def test_v22331_gpt_oss_120b_one_a100_one_stream(bundled_catalog):
    """[V22331] TP 1: published 90 tokens/s (jkyamog 88); ours 229.9 (TPOT 4.35 ms), +155.4%."""
    ours, _ = _v22331(1)
    assert abs(err(ours, PUB_V22331[1])) < LLM_SPEED, f"ours {ours:.1f}"


@pytest.mark.django_db
@pytest.mark.xfail(
    strict=True,
    reason=R_V22331.format(pub=77.5, tp=2, ours=276.2, e=276.2 / 77.5 - 1, tpot=3.62, pub_ms=1000 / 77.5),
)
def test_v22331_gpt_oss_120b_two_a100_tp2_one_stream(bundled_catalog):
    """[V22331] TP 2 over NVLink: published 77-78 tokens/s; ours 276.2 (TPOT 3.62 ms), +256.4%."""
    ours, _ = _v22331(2)
    assert abs(err(ours, PUB_V22331[2])) < LLM_SPEED, f"ours {ours:.1f}"


@pytest.mark.django_db
def test_v22331_ranking_rows_one_card_and_rebuildable(bundled_catalog):
    """The month of one stream ranked at the stated one GPU: row 1 vast H100 SXM 80GB $1,438.66 (64.4 GiB, 15.26 GiB
    margin), then A100 PCIe / A800 / A100 SXM rows at $708.66-$1,015.26 marked tight (69.8 GiB against the 20%
    headroom's 83.7: Marlin's MXFP4 padding on Ampere holds 5.4 GiB more than Hopper's Triton layout, fix51f; vLLM's
    recipe runs it on one A100 80GB at gpu-memory-utilization 0.9). Feasible, like-for-like
    (one card each, TP 1, MXFP4 held at the card's Marlin / Triton padding), every row rebuilds. x26e already
    discussed ranking the tight A100 after the dearer H100 NVL (class 6 by design)."""
    rows = top5(GOSS_TP1)
    assert row_problems(rows, GOSS_TP1) == []
    assert all(r["gpus"] == 1 and r["plan"]["tensor_parallel"] == 1 for r in rows)
    assert rows[0]["gpu"] == H100 and not rows[0]["tight"]


@pytest.mark.django_db
def test_v22331_stated_tp2_ranks_tp2_pairs(bundled_catalog):
    """gpt-oss-120b stated at TP 2 (the brief's 'now ranks at TP 2'): every row is a TP 2 pair holding 36.6 GiB a
    card; row 1 lium L40S_2x $628.36 (8.39 GiB margin), then runpod L40S / A40 / RTX A6000 pairs. Feasible (vLLM
    serves MXFP4 on Ada / Ampere through Marlin) and rebuildable; the speed shown for them (6.59 ms a token on the
    L40S pair, PCIe) inherits the [V22331] miss above: the publisher's NVLink A100 pair ran 12.9 ms."""
    rows = top5(GOSS_TP2)
    assert row_problems(rows, GOSS_TP2) == []
    assert all(r["gpus"] == 2 and r["plan"]["tensor_parallel"] == 2 for r in rows)


# --- [IX1061] gpt-oss-120b on one MI300X, vLLM 0.17, 1k / 1k ------------------------------------------------------
R_IX = (
    "UNEXPLAINED (aud51r): [IX1061] gpt-oss-120b FP4 on one MI300X (vLLM v0.17.0), 1,024 in / 1,024 out at "
    "concurrency {c}: published median TPOT {pub} ms, ours {ours:.2f} ms ({e:+.1%} in per-stream speed). Ours is "
    "flat where the run is steep: 41.23 / 45.76 / 47.96 / 52.19 ms at 64 / 96 / 128 / 256 streams against 31.4 / "
    "36.6 / 41.3 / 58.3 published (ours +11.0 ms from 64 to 256, published +26.9): too slow at 64-96, inside the bar "
    "at 128 and 256. A bandwidth roofline of the step at 64 streams is ~17 ms (the PR's '111/128 unique experts "
    "loaded per decode step': 111/128 of 60.9 GB of MXFP4 experts, 52.8 GB, at 0.70 x 5.3 TB/s = 14.2 ms, the bf16 attention and head, ~4 GB, 1.1 ms, and 64 x 2,048 tokens of KV on "
    "the 18 full-attention layers, 4.8 GB, 1.3 ms), so ours carries ~24 ms a step that is neither bytes nor the "
    "run's; the engine's MI300X serving is one ratio to H100 (aud50b's [DSR1] note: 0.96 x H100 from MLPerf's "
    "dense Llama 2 70B), which this MoE at 64-256 streams does not follow. Not sized: 0% of the gap."
)


@pytest.mark.django_db
@pytest.mark.parametrize(
    "conc",
    [
        pytest.param(
            64,
            marks=pytest.mark.xfail(
                strict=True, reason=R_IX.format(c=64, pub=31.4, ours=41.23, e=31.4 / 41.23 - 1)
            ),
        ),
        pytest.param(
            96,
            marks=pytest.mark.xfail(
                strict=True, reason=R_IX.format(c=96, pub=36.6, ours=45.76, e=36.6 / 45.76 - 1)
            ),
        ),
        128,  # published 41.3 ms, ours 47.96: -13.9%
        256,  # published 58.3 ms, ours 52.19: +11.7%
    ],
)
def test_ix1061_gpt_oss_120b_one_mi300x_tpot(bundled_catalog, conc):
    """[IX1061] median TPOT at 64 / 96 / 128 / 256 streams: 31.4 / 36.6 / 41.3 / 58.3 ms; ours 41.23 / 45.76 / 47.96
    / 52.19 ms (per-stream speed -23.8 / -20.0 / -13.9 / +11.7%)."""
    ours_ms = on(IX[conc], MI300X)["serving"]["time_per_output_token_ms"]
    assert abs(err(PUB_IX_TPOT_MS[conc] / ours_ms, 1.0)) < LLM_SPEED, f"ours {ours_ms} ms"


@pytest.mark.django_db
def test_ix1061_ranking_rows(bundled_catalog):
    """The same workload at 64 streams, a month, no card named: row 1 vast H100 NVL 94GB $1,591.96, then A100 PCIe
    / A800 / A100 SXM rows marked tight (4.48 GiB margin: 64 x 2,048 tokens of KV on ~60 GiB of weights). One card each,
    rows rebuild. No demand stated, so one replica is priced; the MI300X (192 GB, ranked below them on price) would
    hold the whole batch with room."""
    rows = top5(IX[64])
    assert row_problems(rows, IX[64]) == []
    assert all(r["gpus"] == 1 for r in rows)


# --- [LLMFIT] Qwen3-8B BF16 on one RTX 4090, vLLM, development ---------------------------------------------------
@pytest.mark.django_db
def test_llmfit_qwen3_8b_rtx4090_one_stream(bundled_catalog):
    """[LLMFIT] 300 tokens in 5.1 s, 58.7 tokens/s. Ours: TTFT 21.0 ms + 300 x 17.01 ms = 5.124 s, 58.55 tokens/s
    (-0.3%): ~15.2 GB of bf16 weights a token (8.19B less the unread embedding table) read at the RTX 4090's measured 0.885 of 1,008 GB/s (fix51b's
    MEASURED_DECODE_READ_FRACTIONS) lands a held-out 4090 row no fit used."""
    row = on(LLMFIT, RTX4090, deployment="development")
    s = row["serving"]
    ours = 300 / (s["time_to_first_token_ms"] / 1000 + 300 * s["time_per_output_token_ms"] / 1000)
    assert abs(err(ours, 58.7)) < LLM_SPEED, f"ours {ours:.2f}"


@pytest.mark.django_db
def test_llmfit_development_ranking_puts_one_4090_first(bundled_catalog):
    """--deployment development: row 1 lium RTX4090_1x $213.87 a month (16.7 GiB, 7.29 GiB margin), then vast 2 x RTX
    3090 $250.37 (two one-card replicas, data parallel), lium RTX4090_1x $264.97, vast RTX 6000 Ada $279.57, vast
    RTX 4090 $301.47. Every row fits one replica on one card and rebuilds. The production ranking (hostdoubt, stop
    52; was the same row 1, whose host is unknown: 'host RAM and vCPUs unknown for this offer: not checked') puts
    lium RTX3090_1x $301.47 first (host known and meeting the serving rule), and the lium RTX4090_1x $213.87 right
    below it, saying its host is not known (configurations.host_unknown: one host doubt for production serving).
    fix51hd (audhd's FIX LIST item 1): lium's RTX4090_1x host is not unknown but the smallest of its three regions'
    listed hosts (RU's 4 vCPUs / 29 GiB; lium/vms.csv lines 22-24), which meets the 8.2 GiB / 4 vCPU serving rule:
    production row 1 is again the development row 1, lium RTX4090_1x $213.87 (was RTX3090_1x $301.47: -29.1%),
    saying its host figures are a lower bound."""
    rows = top5(LLMFIT, deployment="development")
    assert row_problems(rows, LLMFIT) == []
    assert rows[0]["gpu"] == RTX4090 and rows[0]["gpus"] == 1
    production = ranked(LLMFIT, 2)
    assert not any("unknown for this offer" in w for w in production[0]["warnings"])
    assert production[0]["gpus"] == 1 and production[0]["offer_id"] == rows[0]["offer_id"]
    assert any("the smallest of the provider's listed hosts" in r for r in production[0]["reasons"])


# --- [ACB183] gpt-oss-20b on one H100, SGLang, 32 streams ---------------------------------------------------------
@pytest.mark.django_db
def test_acb183_gpt_oss_20b_h100_32_streams(bundled_catalog):
    """[ACB183] mean TPOT (E2E - TTFT) / 1,023 = 7.867 ms (127.1 tokens/s a stream); ours 8.34 ms (119.9, -5.7%)."""
    ours_ms = on(ACB183, H100)["serving"]["time_per_output_token_ms"]
    assert abs(err(PUB_ACB183_TPOT_MS / ours_ms, 1.0)) < LLM_SPEED, f"ours {ours_ms} ms"


@pytest.mark.django_db
def test_acb183_ranking_rows(bundled_catalog):
    """No card named: row 1 lium RTX4090_1x $221.38 (17.0 GiB on 24, 7.0 margin; TPOT 21.9 ms at 32 streams), then
    RTX 4090 / RTX 6000 Ada / RTX 3090 single cards. Feasible: vLLM runs gpt-oss's MXFP4 experts on Ada and Ampere
    through Marlin with the Triton attention backend ([V22331]'s own workaround for 'Sinks are only supported in
    FlashAttention 3' on a 4090); one card a replica, no split; rows rebuild."""
    rows = top5(ACB183)
    assert row_problems(rows, ACB183) == []
    assert all(r["gpus"] == 1 for r in rows)


# --- [CYFZ2] LLaMA-7B full fine-tune, DeepSpeed ZeRO-2, 8 x A800, 4,096 tokens -----------------------------------
def _peak_less_context(spec: dict) -> float:
    return on(spec, A100)["memory_per_gpu_gib"] - CUDA_CONTEXT_GIB


@pytest.mark.django_db
def test_cyfz2_zero2_no_checkpointing_memory_and_speed(bundled_catalog):
    """[CYFZ2] row 1 (no checkpointing, BS 1 / 64): peak 44.8, Th.put 5.33. Ours 47.77 GiB - 0.6 context = 47.17
    (+5.3%; weights 12.55, gradients 2.50 with the 5e8 bucket's 0.93, Adam + master 9.41, activations 20.46) and
    5.686 samples/s (+6.7%). zacc: 5.686 -> 5.493 samples/s (+6.7% -> +3.1%): DeepSpeed ZeRO-2 with overlap_comm
    false (the 0.14.2 default) reduces the bf16 gradients on the backward's stream at each of the 8
    micro-batches (deepspeed_reduce.py, stage_1_and_2.py@v0.12.3 lines 1328-1330 and 962). fix51c: 5.493 -> 5.312
    (+3.1% -> -0.3%): 0.14.2 all-reduces each bucket (use_multi_rank_bucket_allreduce, default true since 0.12.4),
    8 x 99.2 ms exposed a step on the A100 SXM4's link, not 8 x 49.6."""
    assert abs(err(_peak_less_context(CYFZ2), 44.8)) < LLM_MEMORY
    assert abs(err(samples_per_second(CYFZ2, on(CYFZ2, A100)), 5.33)) < LLM_SPEED


@pytest.mark.django_db
def test_cyfz2_zero2_checkpointing_bs4_memory_and_speed(bundled_catalog):
    """[CYFZ2] checkpointing, BS 4 / 64: peak 38.6, Th.put 4.69. Ours 40.13 - 0.6 = 39.53 GiB (+2.4%) and 5.102
    samples/s (+8.8%). zacc: 5.102 -> 5.062 samples/s (+8.8% -> +7.9%): 2 micro-batches, 2 exposed reduce-scatters
    of 49.6 ms a step (deepspeed_reduce.py). fix51c: 5.062 -> 5.023 (+7.9% -> +7.1%): DeepSpeed 0.14.2's all-reduce,
    2 x 99.2 ms a step."""
    assert abs(err(_peak_less_context(CYFZ2_CKPT_BS4), 38.6)) < LLM_MEMORY
    assert abs(err(samples_per_second(CYFZ2_CKPT_BS4, on(CYFZ2_CKPT_BS4, A100)), 4.69)) < LLM_SPEED


R_CYFZ2_BS1 = (
    "UNEXPLAINED (aud51r): [CYFZ2] ZeRO-2, checkpointing, BS 1 / 64 (accumulation 8): published peak 23.5, Th.put "
    "4.19; ours 29.15 GiB less context (+24.0%) and 4.799 samples/s (+14.5%, inside the speed bar; 5.102, +21.8%, "
    "before zacc; 4.946, +18.0%, before fix51c), while the same table's no-checkpointing "
    "row (+5.3% / -0.3%) and BS 4 row (+2.4% / +7.1%) land. The strict xfail now stands on the memory alone. Memory: the published 23.5 is below the model states "
    "by hand (bf16 weights 12.55 GiB + master and Adam partitions 12 B x 6.74e9 / 8 = 9.41 + the bf16 gradient "
    "partition 1.57 = 23.53, before any bucket or activation), so the figure's basis (GPU Mem.'s footnote 7, not "
    "read) cannot be the peak the other two rows read; 0% of the gap sized in the run. Speed: the run ran BS 1 11% "
    "slower than BS 4 (0.204 s more a sample a GPU). zacc and fix51c priced the located part: ZeRO-2 reduces the bf16 "
    "gradients at every micro-batch's backward, on the backward's stream under overlap_comm false "
    "(deepspeed_reduce.py; stage_1_and_2.py@v0.12.3 lines 1328-1330, 962), and DeepSpeed 0.14.2 (the run's) "
    "all-reduces each bucket (use_multi_rank_bucket_allreduce, its default since 0.12.4; @v0.14.2 lines 1116-1130, "
    "1500): 2 x 11.8 GB a rank, 99.2 ms on the A100 SXM4's link the row is sized on, 8 a step at BS 1 against 2 at "
    "BS 4: ours now BS 1 0.074 s a sample a GPU slower than BS 4 (36% of the 0.204 s; 0.037 s, 18%, before fix51c; "
    "on the A800's 400 GB/s NVLink, 2/3 of the A100's, ~149 ms and ~54%). The rest (~0.13 s a sample a GPU: "
    "smaller GEMMs at BS 1, per-micro-batch launches and hooks) is not sized."
)


@pytest.mark.django_db
@pytest.mark.xfail(strict=True, reason=R_CYFZ2_BS1)
def test_cyfz2_zero2_checkpointing_bs1_memory_and_speed(bundled_catalog):
    """[CYFZ2] checkpointing, BS 1 / 64: peak 23.5, Th.put 4.19. Ours 29.15 GiB (+24.0%), 4.799 samples/s (+14.5%;
    zacc: 5.102, +21.8%, before the per-micro-batch ZeRO-2 reductions; fix51c: 4.946, +18.0%, before DeepSpeed
    0.14.2's all-reduce bytes). The speed lands; the memory does not."""
    assert abs(err(_peak_less_context(CYFZ2_CKPT), 23.5)) < LLM_MEMORY
    assert abs(err(samples_per_second(CYFZ2_CKPT, on(CYFZ2_CKPT, A100)), 4.19)) < LLM_SPEED


@pytest.mark.django_db
def test_cyfz2_ranking_keeps_eight_gpus_and_rebuilds(bundled_catalog):
    """1,000 steps of 64 x 4,096 tokens, no card named: row 1 verda 8 x B200 $27.18 (0.39 h), then AWS p5en 8 x H200
    $27.25 / $27.60, nebius 8 x H100 $27.75, AWS p5 8 x H100 $28.94: the stated 8 GPUs and ZeRO-2 kept on every row,
    each rebuilds to the cent."""
    rows = top5(CYFZ2)
    assert row_problems(rows, CYFZ2) == []
    assert all(r["gpus"] == 8 and r["plan"]["zero_stage"] == 2 for r in rows)


# --- [U3075] YOLOv8n, 704 px, batch 8 -----------------------------------------------------------------------------
R_U3075 = (
    "UNEXPLAINED (aud51r): [U3075] YOLOv8n training at 704 px, batch 8 (AMP, Ultralytics' default): GPU_mem 2.8 G "
    "(memory_reserved / 1e9), ours {ours:.3f} GB reserved ({e:+.1%}; 2.153 GiB total, activations 1.42, EMA and "
    "states 0.06). Stated with AMP off (precision fp32) ours reads 2.696 GB (-3.7%), so a GTX 1060 that ran the "
    "step in fp32 would explain it, but the log shows no AMP line and Ultralytics' check_amp of mid-2023 keeps AMP "
    "on a Pascal card that passes its output comparison: not established (a). Not ruled out: cudnn.benchmark's "
    "algorithm search on a card without tensor cores reserving workspace blocks the caching allocator keeps. The "
    "unstated density (COCO's densest image assumed) reads high, not low, on this 2-objects-an-image set (411,952 / "
    "206,780), so it is not the cause. Lead: the GPU_mem of a batch-8 YOLOv8n run on an Ampere or later card."
)


def _u3075_reserved_gb() -> float:
    return (candidate(U3075, "t4")["memory"]["total_per_gpu_gib"] - CUDA_CONTEXT_GIB) * GIB / 1e9


@pytest.mark.django_db
@pytest.mark.xfail(strict=True, reason=R_U3075.format(ours=1.6675, e=1.6675 / 2.8 - 1))
def test_u3075_yolov8n_704_batch8_gpu_mem(bundled_catalog):
    """[U3075] GPU_mem 2.8G; ours 1.668 GB (-40.4%)."""
    assert abs(err(_u3075_reserved_gb(), 2.8)) < IMAGE_MEMORY


@pytest.mark.django_db
def test_u3075_ranking_rows_rebuild(bundled_catalog):
    """8 epochs of 206,780 images plus a validation of as many each epoch: row 1 AWS g5g.xlarge (T4G, 4 Graviton
    vCPUs) 5.45 h $1.39, then AWS g6 L4 rows and g5g.4xlarge; one card each, rows rebuild. Doubt not shown: g5g is
    an Arm host, where Ultralytics' PyTorch needs an aarch64 CUDA build (NGC's, not PyPI's wheels of mid-2023)."""
    rows = top5(U3075)
    assert row_problems(rows, U3075) == []
    assert all(r["gpus"] == 1 for r in rows)
