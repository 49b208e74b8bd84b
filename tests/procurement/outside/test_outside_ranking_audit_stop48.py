"""Issue 26 done-criterion, judged from outside (aud48r, stop 48): ten workloads from published runs that no test in
tests/ used before (grepped for each source and figure), stated as the publisher ran them with only the fields
docs/workload-spec.md has, ranked through the service `manage.py recommend SPEC --format json --top 5` runs
(`ranked`, as x26b/x26g do, on the bundled catalog) and judged row by row on the top five:

  (1) is the first row a sensible choice (the stated GPU count / parallelism / precision honoured, fits with its
      margin shown, host sized, no consumer card split over PCIe for production serving, no rack-scale part as
      the "best card" for one job);
  (2) on the publisher's own GPU (`size_spec_document`, what `manage.py size` runs, calibration off): speed or
      time within 15% (LLM) / 25% (image), memory within 10% / 15% where the run published it;
  (3) the cost of every one of the five rows reproduced by hand from the row's own catalog price and its
      displayed hours and instances, to the cent: compute = effective_price_per_hour x hours x instances, and
      total = compute + setup + storage + reruns.

A workload the product misses on any of the three is a strict xfail "UNEXPLAINED: ..." naming what is wrong.

Sources (published figures verbatim where quoted):
  [PHI2]  Hugging Face model card microsoft/phi-2 ("Training: ... Context length: 2048 tokens; Dataset size: 250B
          tokens ...; Training tokens: 1.4T tokens; GPUs: 96xA100-80G; Training time: 14 days"), quoted on
          sourceforge.net/projects/phi-2 ("trained over 14 days on 96 A100 GPUs using DeepSpeed and
          FlashAttention"). Shape from its config.json: 32 layers, d 2560, 32 heads, MLP 10240 (GELU, not gated),
          vocab 51200. 1.4e12 / (14 x 86400 x 96) = 12,056 tokens/s a GPU.
  [PHI15] Hugging Face model card microsoft/phi-1_5 ("Training tokens: 150B tokens; GPUs: 32xA100-40G; Training
          time: 8 days"); 24 layers, d 2048, 32 heads, MLP 8192, vocab 51200. 150e9 / (8 x 86400 x 32) = 6,782.
  [PEFTFT] huggingface/peft @0a179c1e8659ab4f7df0369b9b03943cfe470ff1
          method_comparison/MetaMathQA/results/full-finetuning--llama-3.2-3B-lr_0.00001.json: "dtype": "bfloat16",
          "batch_size": 4, "max_steps": 5000, "optimizer_type": "AdamW", "use_amp": false, "gpu": "NVIDIA L40S",
          "cuda_memory_max": 37241225216, "train total tokens": 4198051 over 20000 samples (209.9 a sample);
          windowed "tokens / sec" 2274.4 .. 2360.5, median 2,310.
  [PEFTLORA] the same folder, lora--llama-3.2-3B-rank64.json @18e07f189c06cbc6472e4e3ec180358319de8175: "r": 64,
          "target_modules": ["q_proj", "v_proj"], "accelerator_memory_max": 22540189696, windowed "tokens / sec"
          6556.6 .. 6753.0, median 6,665 (rank 32 is docs/validation.md's row; rank 64 is not used anywhere).
  [TRT16] shaamil101-etched/trtllm-benchmarks @cc0f8eb02303de15aea03248e30e9dee403de4e5 llama-8b-results/README.md:
          "meta-llama/Llama-3.1-8B-Instruct using TensorRT-LLM with FP8 quantization on a single NVIDIA H100 80GB
          GPU", "TensorRT-LLM Version: 0.16.0", trtllm-bench throughput: "19,787.63 tokens/sec - ISL=128,
          OSL=1024 (7,500 requests)" and "16,901.88 tokens/sec - ISL=128, OSL=2048 (3,000 requests)". (The
          repository's top README @aeec9f29 attributes 19,787 to "Llama-3.1-70B-Instruct (TP=8)": the sub-README,
          with the engine build command `--tp_size 1`, is the one I take; the contradiction is noted.)
  [FLUXB] varadrane1707/BenchmarkFlux @35368dfb1b17946a6d28199d77bd3f13c7e617b4 README.md: FLUX.1-dev, 1024x1024,
          28 steps, guidance 3.5, batch 1, end-to-end: "BF16 | 15.65" s (A100), "BF16 | 7.11" s (H100),
          "TorchAO FP8 | 7.28" s (H100).
  [Y11X]  find_string id 28120274739 (PerfCam experiment README): "Ultralytics 8.3.55 ... CUDA:0 (NVIDIA
          A100-SXM4-40GB, 40514MiB)", model=yolo11x.pt, batch=16, imgsz=640, workers=8, amp=True; "440 images";
          "28/28 ... 4.07it/s" (steady epochs, 65.1 images/s), GPU_mem 16.4G; "133 epochs completed in 0.335
          hours" (val of 32 images every epoch).
  [Y11S]  find_string id 70883616601 (Thermal-To-Optical-Translation record 022): yolo11s, A100-SXM4-40GB,
          batch=16, epochs=100, train 536 frames, val 179 every epoch; "100 epochs completed in" 0.201 / 0.239 /
          0.234 / 0.201 / 0.230 / 0.224 hours (median 0.227).
"""

from __future__ import annotations

import copy
from decimal import ROUND_HALF_UP, Decimal

import pytest

from procurement.api.sizing import size_spec_document
from procurement.sizing.assumptions import CUDA_CONTEXT_GIB
from procurement.sizing.validation import trtllm_spec
from tests.procurement.outside.test_outside_recommendations_x26b import ranked

GIB = 2.0**30
LLM_SPEED, LLM_MEMORY, IMAGE_SPEED, IMAGE_MEMORY = 0.15, 0.10, 0.25, 0.15
RACK_SCALE = {"gb200"}
CONSUMER = {"rtx-3090", "rtx-4090", "rtx-5090"}

PHI2 = {
    "name": "phi-2",
    "num_layers": 32,
    "hidden_size": 2560,
    "num_attention_heads": 32,
    "intermediate_size": 10240,
    "vocab_size": 51200,
    "gated_mlp": False,
}
PHI15 = {
    "name": "phi-1.5",
    "num_layers": 24,
    "hidden_size": 2048,
    "num_attention_heads": 32,
    "intermediate_size": 8192,
    "vocab_size": 51200,
    "gated_mlp": False,
}


def pretrain(model: dict, gpus: int, tokens: float) -> dict:
    return {
        "task": "pretrain",
        "model": model,
        "seq_len": 2048,
        "parallelism": {"gpus": gpus, "zero_stage": 1},
        "training_tokens": tokens,
    }


def peft_run(task: str, **extra) -> dict:
    """[PEFTFT]/[PEFTLORA]: the model loaded in bf16 with no AMP, torch AdamW (states in bf16: pure bf16, not
    master weights), batch 4 of MetaMathQA samples (209.9 tokens on average), transformers' causal-LM loss."""
    spec = {
        "task": task,
        "model": {"preset": "llama-3.2-3b"},
        "micro_batch_size": 4,
        "seq_len": 210,
        "cross_entropy": "huggingface",
        "parallelism": {"gpus": 1},
        "training_tokens": 4198051,
    }
    return spec | extra


def flux(precision: str = "bf16") -> dict:
    return {
        "task": "inference",
        "model": {"preset": "flux.1-dev"},
        "precision": precision,
        "micro_batch_size": 1,
        "image": {"steps": 28, "resolution_px": 1024, "images": 10000},
    }


def yolo(preset: str, images: int, epochs: int, val: int) -> dict:
    return {
        "task": "full_finetune",
        "model": {"preset": preset},
        "micro_batch_size": 16,
        "image": {
            "resolution_px": 640,
            "epochs": epochs,
            "dataset_images": images,
            "eval_every_epochs": 1,
            "eval_images": val,
        },
    }


def candidate(spec: dict, gpu: str) -> dict:
    report = size_spec_document(copy.deepcopy(spec), [gpu], calibrate=False)
    gpus = spec.get("parallelism", {}).get("gpus", 1)
    return next(c for c in report["candidates"] if c["gpu"] == gpu and c["gpus"] == gpus)


def err(ours: float, published: float) -> float:
    return ours / published - 1


def cents(x) -> Decimal:
    return Decimal(str(x)).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)


def row_problems(rows: list[dict], spec: dict) -> list[str]:
    """Checks (1) on the first row and (3) on every row; returns what an expert would not sign."""
    out = []
    if not rows:
        return ["no ranked row"]
    first = rows[0]
    if first["gpu"] in RACK_SCALE:
        out.append(f"row 1 is a rack-scale part ({first['gpu']})")
    if spec["task"] == "inference" and first["gpu"] in CONSUMER and first["gpus_per_instance"] > 1:
        out.append(f"row 1 splits consumer cards ({first['gpu']}) for serving")
    if not first["fits"]:
        out.append("row 1 does not fit")
    if "margin_gib" not in (first.get("memory_margin") or {}):
        out.append("row 1 shows no memory margin")
    stated = spec.get("parallelism", {}).get("gpus", 1)
    if spec["task"] != "inference" and first["gpus"] != stated:
        out.append(f"row 1 runs {first['gpus']} GPUs, the spec states {stated}")
    for reason in first["reasons"]:
        if "host RAM too small" in reason:
            out.append(
                f"row 1 ({first['provider']} {first['instance_type']}) is ranked first while its own "
                f"reason says: {reason[:90]}"
            )
    for i, r in enumerate(rows, 1):
        b = r["cost_breakdown"]
        hand = cents(Decimal(str(r["effective_price_per_hour"])) * Decimal(str(r["hours"])) * r["instances"])
        if hand != Decimal(b["compute"]):
            out.append(
                f"row {i} compute {b['compute']} != {r['effective_price_per_hour']} x {r['hours']} h x "
                f"{r['instances']} = {hand}"
            )
        parts = sum(Decimal(b[k]) for k in ("compute", "setup", "storage", "reruns"))
        if parts != Decimal(b["total"]) or Decimal(b["total"]) != Decimal(str(r["total_cost"])):
            out.append(f"row {i} total {r['total_cost']} != parts {parts}")
    return out


def judge(spec: dict, checks: list[tuple[str, float, float, float]], **options) -> list[str]:
    problems = row_problems(ranked(spec, 5, **options), spec)
    for name, ours, published, tol in checks:
        if abs(err(ours, published)) > tol:
            problems.append(
                f"{name}: ours {ours:,.4g} vs published {published:,.4g} ({err(ours, published):+.1%})"
            )
    return problems


def tokens_per_gpu(c: dict) -> float:
    return c["throughput"]["training_tokens_per_second"] / c["gpus"]


PHI2_SPEC = pretrain(PHI2, 96, 1.4e12)
PHI15_SPEC = pretrain(PHI15, 32, 1.5e11)
PEFT_FT = peft_run("full_finetune", master_weights_fp32=False)
PEFT_LORA = peft_run("lora", lora={"rank": 64, "targets": ["q_proj", "v_proj"]})
TRT_1K = trtllm_spec("llama-3.1-8b", "fp8", 1, 512, 128, 1024)
TRT_2K = trtllm_spec("llama-3.1-8b", "fp8", 1, 256, 128, 2048)
Y11X = yolo("yolo11x", 440, 133, 32)
Y11S = yolo("yolo11s", 536, 100, 179)


# aud48r's findings (the run at 3d5c56bb). COST: every ranking prints `hours` rounded (212.74, 9.838, 0.447) while
# cost_breakdown.compute is priced on unrounded (or different) hours, so the hand check price x hours x instances
# misses by 1-15 cents on 8 of 10 workloads; on AWS spot rows (g6.xlarge) it misses by a quarter or more
# (0.095210 x 0.36 h = $0.034, compute $0.02): not rounding.
COST = "the rows' cost is not reproducible to the cent from their displayed price x hours x instances"
# rank48: every row's parts are now priced on the figures it shows (hours to 6 decimals, the effective price to 6,
# each part rounded once, the total their sum: ranking/breakdown.py priced_parts) and rebuild to the cent; COST below
# records aud48r's reading at 3d5c56bb, no longer a cause of these xfails (the speed misses are).
FIXED_COST = " [rank48: the cost part is fixed, the rows rebuild to the cent; the speed miss remains]"
R_PHI2 = (
    "UNEXPLAINED: A100-80G 9,419 tokens/s a GPU vs Phi-2's published 12,056 (-21.9%; the 14-day run sized at "
    "430 h on its own 96 A100s, over its own 336 h deadline); "
    + COST
    + " (row 1 $60,248.04 vs 23.60 x 212.74 h "
    "x 12 = $60,247.97). Rows 1-5 (12 x 8 H100/H200/B200 at 96 GPUs, ZeRO-1, fits) are sensible." + FIXED_COST
)
R_PHI15 = (
    "UNEXPLAINED: A100-40G 18,761 tokens/s a GPU vs Phi-1.5's published 6,782 (+176.6%): the engine is 2.8x "
    "faster than the card says the run was (the card's 8 days may include what it does not state); "
    + COST
    + " (row 1 $3,094.79 vs 23.60 x 32.784 h x 4 = $3,094.81)."
    + FIXED_COST
)
R_PEFT_FT = (
    "UNEXPLAINED: L40S 6,537 tokens/s vs PEFT's 2,310 (+183.0%) and 29.06 GiB vs cuda_memory_max 34.68 GiB "
    "(-16.2%). Leads, not sized: the 3.2B-parameter AdamW step every 840 tokens (about 45 GB of bf16 "
    "state traffic a step, ~75 ms on an L40S) and padding to the batch's longest sample; the LoRA runs of "
    "the same harness are +41.7%, so the optimizer step alone would leave ~2x. "
    + COST
    + " (row 4)."
    + FIXED_COST
)
R_PEFT_LORA = (
    "UNEXPLAINED: L40S 9,443 tokens/s vs PEFT's 6,665 (+41.7%), the same sign and size as "
    "docs/validation.md's rank-32 row (+33.7%): the harness's short padded batches are not priced; "
    + COST
    + " (AWS spot g6.xlarge row 2: 0.095210 x 0.36 h = $0.034, compute $0.02)."
    + FIXED_COST
)
R_TRT_1K = (
    "UNEXPLAINED: H100 27,442 output tokens/s vs trtllm-bench 0.16's 19,787.63 (+38.7%, the same total at "
    "any concurrency 256-640: prefill of 128 tokens and the in-flight batcher are not charged); row 1 is "
    "cudo sapphire-rapids-h100_1x4v8gb ranked first while its own reason says 'host RAM too small: 8 GiB "
    "on the instance, needs 79.6 GiB' - a warning, not a ranking demotion. [rank48: fixed, a serving process "
    "holds at least a 5 GB shard + 3.5 GiB of runtime = 8.2 GiB (sizing.host.serving_host_ram), so the 8 GiB host "
    "ranks below the first H100 host that holds it; the speed miss remains]"
)
R_TRT_2K = (
    "UNEXPLAINED: H100 20,114 output tokens/s vs 16,901.88 (+19.0%); row 1 again the 8 GiB-RAM cudo H100 "
    "whose host the product itself calls too small. [rank48: the host part is fixed as in the ISL 1024 case; the "
    "speed miss remains]"
)
R_FLUX_BF16 = (
    "UNEXPLAINED: speeds pass (A100 14.16 s vs 15.65, -9.5%; H100 5.39 s vs 7.11, -24.1%, at the edge), "
    "rows are sensible (L40S 1x4/1x2/1x8 on-demand for 10,000 images, fits 35.8 GiB of 45.0), but "
    + COST
    + ": lium L40S_4x $14.96 vs 1.52 x 9.838 h = $14.95, and rows 2 and 4 the same."
)
R_FLUX_FP8 = (
    "UNEXPLAINED: H100 fp8 4.43 s vs TorchAO FP8's 7.28 s (-39.1%): the engine speeds fp8 up 1.22x over "
    "its own BF16 where the published run gained nothing (7.28 vs 7.11 s); " + COST + " (row 5)." + FIXED_COST
)
R_Y11X = (
    "UNEXPLAINED: speed passes (70.0 images/s vs 65.1, +7.5%) and memory passes, but 133 epochs take 0.2366 h "
    "vs 0.335 (-29.4%): on a 440-image set the per-epoch fixed cost (dataloader restart, validation setup, "
    "plots, checkpoint) is not priced; " + COST + " (AWS spot g6.xlarge row 2: 0.095273 x 0.447 h = $0.043, "
    "compute $0.03)." + FIXED_COST
)
R_Y11S = (
    "UNEXPLAINED: 100 epochs of 536 images take 0.0789 h vs the median published 0.227 h (-65.2%): the per-epoch "
    "fixed cost dominates small-dataset detector runs and is not priced. Rows (AWS g5g T4G spot on a Graviton "
    "host, then L4) reproduce to the cent."
)


@pytest.mark.django_db
@pytest.mark.xfail(strict=True, reason=R_PHI2)
def test_phi2_pretrain_96_a100_14_days(bundled_catalog):
    """[PHI2] 1.4T tokens on 96 x A100-80G in 14 days = 12,056 tokens/s a GPU; ranked with its own 336 h deadline."""
    c = candidate(PHI2_SPEC, "a100-sxm4-80gb")
    problems = judge(
        PHI2_SPEC,
        [("A100-80G tokens/s/GPU", tokens_per_gpu(c), 1.4e12 / (14 * 86400 * 96), LLM_SPEED)],
        deadline_hours=336,
    )
    assert not problems, problems


@pytest.mark.django_db
@pytest.mark.xfail(strict=True, reason=R_PHI15)
def test_phi15_pretrain_32_a100_40gb_8_days(bundled_catalog):
    """[PHI15] 150B tokens on 32 x A100-40G in 8 days = 6,782 tokens/s a GPU; ranked with its own 192 h deadline."""
    c = candidate(PHI15_SPEC, "a100-sxm4-40gb")
    problems = judge(
        PHI15_SPEC,
        [("A100-40G tokens/s/GPU", tokens_per_gpu(c), 1.5e11 / (8 * 86400 * 32), LLM_SPEED)],
        deadline_hours=192,
    )
    assert not problems, problems


@pytest.mark.django_db
@pytest.mark.xfail(strict=True, reason=R_PEFT_FT)
def test_peft_full_finetune_llama32_3b_l40s(bundled_catalog):
    """[PEFTFT] full fine-tune, pure bf16 AdamW, batch 4, one L40S: 2,310 tokens/s, cuda_memory_max 34.68 GiB."""
    c = candidate(PEFT_FT, "l40s")
    ours_mem = c["memory"]["total_per_gpu_gib"] - CUDA_CONTEXT_GIB
    problems = judge(
        PEFT_FT,
        [
            ("L40S tokens/s", tokens_per_gpu(c), 2310.0, LLM_SPEED),
            ("L40S peak memory GiB", ours_mem, 37241225216 / GIB, LLM_MEMORY),
        ],
    )
    assert not problems, problems


@pytest.mark.django_db
@pytest.mark.xfail(strict=True, reason=R_PEFT_LORA)
def test_peft_lora_rank64_llama32_3b_l40s(bundled_catalog):
    """[PEFTLORA] LoRA r 64 on q/v, batch 4, one L40S: 6,665 tokens/s (memory max includes the batch-50 eval
    generation, so only speed is judged)."""
    c = candidate(PEFT_LORA, "l40s")
    problems = judge(PEFT_LORA, [("L40S tokens/s", tokens_per_gpu(c), 6665.0, LLM_SPEED)])
    assert not problems, problems


@pytest.mark.django_db
@pytest.mark.xfail(strict=True, reason=R_TRT_1K)
def test_trtllm016_llama31_8b_fp8_h100_isl128_osl1024(bundled_catalog):
    """[TRT16] 19,787.63 output tokens/s on one H100 (trtllm-bench throughput); stated at concurrency 512, the
    largest batch whose FP8 KV cache fits the H100 with the product's headroom (1,024 does not fit; the total is the
    same at 256-640)."""
    c = candidate(TRT_1K, "h100-sxm5-80gb")
    problems = judge(
        TRT_1K,
        [("H100 output tokens/s", c["throughput"]["decode_tokens_per_second_total"], 19787.63, LLM_SPEED)],
    )
    assert not problems, problems


@pytest.mark.django_db
@pytest.mark.xfail(strict=True, reason=R_TRT_2K)
def test_trtllm016_llama31_8b_fp8_h100_isl128_osl2048(bundled_catalog):
    """[TRT16] 16,901.88 output tokens/s on one H100, ISL 128 / OSL 2048, stated at concurrency 256."""
    c = candidate(TRT_2K, "h100-sxm5-80gb")
    problems = judge(
        TRT_2K,
        [("H100 output tokens/s", c["throughput"]["decode_tokens_per_second_total"], 16901.88, LLM_SPEED)],
    )
    assert not problems, problems


@pytest.mark.django_db
def test_flux_dev_bf16_generation_a100_and_h100(bundled_catalog):
    """[FLUXB] FLUX.1-dev 1024 px, 28 steps, batch 1, BF16: 15.65 s (A100), 7.11 s (H100); 10,000 images ranked.

    Was a strict xfail: UNEXPLAINED, speeds pass (A100 14.16 s, -9.5%; H100 5.39 s, -24.1%) and the rows are
    sensible, but lium L40S_4x showed compute $14.96 for 1.52 x 9.838 h = $14.95 (rows 2 and 4 alike). Now every
    row rebuilds to the cent (1.520000 x 9.837653 h x 1 = $14.95, total $17.26 = the sum of its parts) because the
    row shows the hours its money is priced on to 6 decimals and each part is priced on the row's shown figures and
    rounded once, the total their sum (ranking/breakdown.py priced_parts; the costing module's own rule,
    costing/job.py JobCostBreakdown.as_report)."""
    a100 = candidate(flux(), "a100-sxm4-80gb")["throughput"]["seconds_per_batch"]
    h100 = candidate(flux(), "h100-sxm5-80gb")["throughput"]["seconds_per_batch"]
    problems = judge(
        flux(), [("A100 s/image", a100, 15.65, IMAGE_SPEED), ("H100 s/image", h100, 7.11, IMAGE_SPEED)]
    )
    assert not problems, problems


@pytest.mark.django_db
@pytest.mark.xfail(strict=True, reason=R_FLUX_FP8)
def test_flux_dev_torchao_fp8_generation_h100(bundled_catalog):
    """[FLUXB] FLUX.1-dev with TorchAO FP8 on the H100: 7.28 s (no faster than its 7.11 s BF16)."""
    h100 = candidate(flux("fp8"), "h100-sxm5-80gb")["throughput"]["seconds_per_batch"]
    problems = judge(flux("fp8"), [("H100 fp8 s/image", h100, 7.28, IMAGE_SPEED)])
    assert not problems, problems


@pytest.mark.django_db
@pytest.mark.xfail(strict=True, reason=R_Y11X)
def test_yolo11x_training_a100_40gb(bundled_catalog):
    """[Y11X] 65.1 images/s (16 x 4.07 it/s), GPU_mem 16.4G (reserved, GB), 133 epochs of 440 images in 0.335 h."""
    c = candidate(Y11X, "a100-sxm4-40gb")
    t = c["throughput"]
    ours_mem = c["memory"]["total_per_gpu_gib"] - CUDA_CONTEXT_GIB
    problems = judge(
        Y11X,
        [
            ("A100 images/s", t["training_images_per_second"], 16 * 4.07, IMAGE_SPEED),
            ("A100 memory GiB", ours_mem, 16.4e9 / GIB, IMAGE_MEMORY),
            ("A100 hours", t["training_hours"], 0.335, IMAGE_SPEED),
        ],
    )
    assert not problems, problems


@pytest.mark.django_db
@pytest.mark.xfail(strict=True, reason=R_Y11S)
def test_yolo11s_training_a100_40gb(bundled_catalog):
    """[Y11S] 100 epochs of 536 images, val 179 every epoch: 0.227 h (median of six runs)."""
    t = candidate(Y11S, "a100-sxm4-40gb")["throughput"]
    problems = judge(Y11S, [("A100 hours", t["training_hours"], 0.227, IMAGE_SPEED)])
    assert not problems, problems
