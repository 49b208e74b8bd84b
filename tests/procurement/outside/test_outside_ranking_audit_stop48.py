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
import statistics
from decimal import ROUND_HALF_UP, Decimal

import pytest

from procurement.api.sizing import size_spec_document
from procurement.sizing.assumptions import CUDA_CONTEXT_GIB, FRAGMENTATION_FRACTION
from procurement.sizing.validation import trtllm_spec
from tests.procurement.outside.test_outside_recommendations_x26b import ranked
from tests.procurement.outside.test_outside_trtllm_bench_source_stop48 import run_70b_tp8

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


# [FLUXB]'s 'TorchAO FP8' row is an unquantized FP16 run (fp8img48, stop 48). Its config (benchmarks/h100.json
# @4815c79c, unchanged at 35368dfb, "TorchAO_FP8": "dtype": "FP16", "quantize": true, "quantize_dtype": "FP8",
# "quantize_backend": "TorchAO", "compilations": null, avg 7.2848 s) makes compiledflux.py @35368dfb (lines 150,
# 198-201) call FluxPipeline.from_pretrained(model_id, torch_dtype=torch.float16,
# quantization_config=TorchAoConfig("float8wo")). diffusers v0.33.1 (375ec930, 2025-04-09, the release on
# 2025-04-28; main @4a9ab650 that day the same) pipelines/pipeline_utils.py never pops quantization_config in
# DiffusionPipeline.from_pretrained nor passes it to load_sub_model (lines 961-984): it lands in unused_kwargs,
# "Keyword arguments {...} are not expected by FluxPipeline and will be ignored." (line 901); a pipeline-level
# config arrived in v0.34.0 (#11130, 2025-05-09). The published row agrees: 7.28 s vs the same script's FP16
# 7.23 s (+0.7%). Had float8wo applied (torchao v0.10.0 Float8WeightOnlyConfig: "The actual matmul will be
# computed in original precision"; float8_layout.py _linear_fp_act_fp8_weight_impl = F.linear(input,
# weight.dequantize(), bias)), the eager run would pay a dequantize of every weight each step, not an fp8 GEMM.
FLUX_FP8_AS_RUN = {
    "task": "inference",
    "model": {"preset": "flux.1-dev"},
    "precision": "fp16",
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
# rank48: every row's parts are now priced on the figures it shows (hours to 6 decimals, the effective price to 6,
# each part rounded once, the total their sum: ranking/breakdown.py priced_parts) and rebuild to the cent; COST below
# records aud48r's reading at 3d5c56bb, no longer a cause of these xfails (the speed misses are).
FIXED_COST = " [rank48: the cost part is fixed, the rows rebuild to the cent; the speed miss remains]"
COST = "the rows' cost is not reproducible to the cent from their displayed price x hours x instances"
# pretrain49 (stop 49): implied MFU of each published Phi figure in the engine's FLOP count (flops_per_token:
# phi-2 16.894e9, phi-1 / phi-1.5 8.481e9; A100 dense 312e12): phi-2's card 12,056 -> 0.653; phi-1.5's card 6,782 ->
# 0.184; phi-1.5's paper (arXiv:2309.05463 Table 1 "1.5K" GPU hours for 150B tokens, as quoted in
# huggingface.co/microsoft/phi-1_5/discussions/77 and aiportalx.com/microsoft/phi-1.5; the PDF itself not opened)
# 27,778 -> 0.755; phi-1's paper (arXiv:2306.11644 Figure 2.1: phi-1-base "51B tokens (770 GPU hours)", Stack+ 76B
# tokens 1,090 GPU hours; section 2.3: the same 24 x 2,048 architecture phi-1.5 reuses, fp16, DeepSpeed, FlashAttention,
# 8 A100s) 18,398 / 19,368 -> 0.500 / 0.526. The engine runs all of them at 0.51 (mfu_pretrain_a100, below MPT's width
# ceiling at d 2,048 / 2,560) and lands phi-1's rows (+2.0% / -3.1%, test_phi1_paper_gpu_hours_on_the_phi15_shape).
PHI_SIBLINGS = (
    " Siblings (pretrain49): phi-1 (arXiv:2306.11644 Figure 2.1, 51B tokens in 770 A100 hours, 8 A100s, fp16, "
    "DeepSpeed, FlashAttention) is phi-1.5's own architecture and stack; ours 18,761 tokens/s a GPU against its "
    "18,398 (+2.0%; Stack+ 76B in 1,090 h: 19,368, -3.1%). Implied MFU in the engine's count: phi-1 0.50, phi-1.5 card "
    "0.18, phi-1.5 paper (Table 1: 1.5K GPU hours for 150B) 0.755, phi-2 card 0.653; no one efficiency lands the "
    "phi-1.5 card row and the phi-2 card row within 15% (their implied MFUs differ 3.5x)."
)
R_PHI2 = (
    "UNEXPLAINED: A100-80G 9,419 tokens/s a GPU vs Phi-2's published 12,056 (-21.9%; the 14-day run sized at "
    "430 h on its own 96 A100s, over its own 336 h deadline); "
    + COST
    + " (row 1 $60,248.04 vs 23.60 x 212.74 h "
    "x 12 = $60,247.97). Rows 1-5 (12 x 8 H100/H200/B200 at 96 GPUs, ZeRO-1, fits) are sensible."
    + FIXED_COST
    + PHI_SIBLINGS
    + " The card and Microsoft's blog ('The training for Phi-2 took 14 days on 96 A100 GPUs', 1.4T tokens) agree; "
    "no paper gives GPU hours. Lead, sized, not landed: the engine caps d 2,560 at mfu_pretrain_a100 0.51 (LLaMA-1's "
    "2,048-GPU fit) while its own MPT width ceiling gives 0.584 (MPT 3B, d 2,560, 0.586 on 8 A100 80GB); stated at "
    "0.584 this row reads 10,791 (-10.5%) and phi-1 20,493 (+11.4%), but lifting the cap moves every A100 dense "
    "pretraining case of d >= 1,470 (the LLaMA-1 fit rows among them): not run against the suite."
    " a100cap (stop 49), run against the suite and withdrawn: GPU count does not separate the cap's runs from this "
    "one. The engine already prices this run's data-parallel traffic (ZeRO-1 all-reduce over the fabric, all of it "
    "hidden: 0 s exposed of a 0.217 s step) and LLaMA-1 7B's at 2,048 GPUs (0 s exposed too), so no charged "
    "collective makes 0.51. llm-foundry's A100 40GB multi-node table (mosaicml/llm-foundry@061f2c7c "
    "scripts/train/benchmarking/README.md, read_file id 31909394220) holds one MFU a width from 8 to 128 GPUs (3B, "
    "d 2,560: 57.8 / 56.0 / 57.0 / 55.9 / 54.8% at 8-128), i.e. at the width ceiling; but IBM fms-fsdp on 128 A100s "
    "(FSDP, data parallel, x26g) runs at the cap, not the ceiling: computing data-parallel A100 runs of <= 128 GPUs "
    "at the ceiling (probed) put its passing rows out (Llama 2 7B 3,760 -> 4,589 tokens/s a GPU, +22.0%; 13B 1,700 "
    "-> 2,459, +44.7%; 34B 772 -> 896, +16.1%; 70B 380 -> 440, +15.9%), with Llama 2 7B's model-card GPU hours "
    "(-34%) and the eff42 recompute-share fit rows. So what separates Phi-2 (0.653 implied) from fms-fsdp (0.45-0.53) "
    "at the same scale is the run or its stack (DeepSpeed ZeRO-1 + FlashAttention, fp16), which no spec field names "
    "and no source sizes. Lead: a published Phi-2 or DeepSpeed + FlashAttention A100 throughput at d 2,560 "
    "(tokens/s a GPU at a stated plan) held out of this row."
)
R_PHI15 = (
    "UNEXPLAINED: A100-40G 18,761 tokens/s a GPU vs Phi-1.5's published 6,782 (+176.6%): the engine is 2.8x "
    "faster than the card says the run was; "
    + COST
    + " (row 1 $3,094.79 vs 23.60 x 32.784 h x 4 = $3,094.81)."
    + FIXED_COST
    + PHI_SIBLINGS
    + " The card contradicts its own paper: 8 days x 32 GPUs = 6,144 GPU hours against Table 1's 1.5K (4.1x); "
    "restated as the paper's run the case reads -32.5% (18,761 vs 27,778), still out, and 0.755 of the peak is "
    "above the published A100 runs at this width (MPT 1B, d 2,048: 0.559; TinyLlama ~0.55, assumptions.py). phi-1's card (6 days, 8 A100, 54B: "
    "13,021) also states 1.4x its paper's 826 GPU hours (770 + 7 h x 8 of finetuning), so the cards' training "
    "time holds more than the training steps, by an amount no source states. Not a mechanism: label stays "
    "UNEXPLAINED; lead: the phi-1.5 paper's own accounting of the 1.5K hours, or a log of the run."
)
R_PEFT_LORA = (
    "UNEXPLAINED: L40S 9,443 tokens/s vs PEFT's 6,665 (+41.7%), the same sign and size as docs/validation.md's "
    "rank-32 row (+33.7%). Ruled out (peft48, huggingface/peft@5d602fdb method_comparison/MetaMathQA): the "
    "optimizer (18.35M fp32 adapter parameters, ~3 ms a step); the evaluations (run.py times each train step "
    "tic..toc, eval time outside 'tokens / sec'); padding (utils.py BucketIterator sorts each 80-sample bucket "
    "by length before batching 4); fp32 adapters (lora.adapter_dtype fp32 stated: 9,144, +37.2%). The same "
    "harness's frozen-base rows run slower than the engine's whole r64 step: ln_tuning (175,104 parameters) "
    "7,959 tokens/s and beft 8,065 = 0.104-0.106 s a 839.6-token step against the engine's 0.089 s; so the gap "
    "is the base model's rate at ~840-token steps (0.29 of the L40S's dense peak against the workstation MFU "
    "0.35), plus r64's 0.014 s over ln_tuning (7,045 at 5d602fdb), where the adapters' FLOPs are ~1 ms. Lead: the "
    "eager step syncs twice (num_items_in_batch .item() before the forward, loss.item() after) and times "
    "tokenizer.pad and a blocking .to(device) inside the step. peft49, also ruled out: torch.compile and gradient checkpointing (the row's train_config: "
    "compile false, use_gc false). Partial lead, unsized: the batches' lengths vary (up to 768 tokens, mean 210) "
    "and the engine's r64 step is host-floor-bound below ~150 tokens (seq_len 100: 6,334 tokens/s, 0.063 s), so "
    "the mean of the steps is longer than the mean-length step; no published length histogram sizes it, and a "
    "floor on the short steps alone cannot bring 0.089 s to the published 0.126 s a step; "
    + COST
    + " (AWS spot g6.xlarge row 2: "
    "0.095210 x 0.36 h = $0.034, compute $0.02)." + FIXED_COST
)
# trtb48: the [TRT16] figures are not an 8B measurement. The repository's own run logs @aeec9f29
# (results/result_128_1024_7500.txt, result_128_2048_3000.txt) print "Model: meta-llama/Llama-3.1-70B-Instruct",
# "TP Size: 8", engine dir tp_8_pp_1, "Token Throughput (tokens/sec): 19787.6318" / "16901.8790"; the 8B sweep log
# @cc0f8eb0 (llama-8b-results/benchmark_sweep/nohup_8b.out, progress.txt) completed 1 of 62 runs (128/128, no figure
# printed), and llama-8b-results/analysis/throughput_summary.csv repeats the 70B TP 8 figures row for row. Stated as
# the run, the engine reads them in test_outside_trtllm_bench_source_stop48.py.
TRT16_SOURCE = (
    "the published figure is not an 8B one-GPU measurement: shaamil101-etched/trtllm-benchmarks' own log "
    "@aeec9f29 results/result_128_{osl}_{n}.txt prints Model Llama-3.1-70B-Instruct, TP Size 8, Token Throughput "
    "{pub} (8 H100s, FP8, FP8 KV, max batch 2,048, KV 90%, 42,668 blocks of 64 tokens), and the 8B sweep "
    "@cc0f8eb0 (nohup_8b.out, progress.txt) completed only 128/128 without a figure: the sub-README copied the "
    "70B TP 8 table. Stated as that run (70B FP8 TP 8, {conc} in flight: GUARANTEED_NO_EVICT reserves ISL + OSL "
    "a request, capacityScheduler.cpp) ours reads {ours}; the 8B on one H100 against NVIDIA's own 0.17 row of "
    "the harness (perf-overview @258c7540, 128/2048 21,109.38) reads 20,114 (-4.7%). Landing the case needs it "
    "restated as the 70B TP 8 run (a test change, not an engine term; not done: the case's workload is aud48r's "
    "and the ranking finding below is judged on the 8B). "
)
# fix48x (audx48b item 4): each [TRT16] case split in two. The row-1 ranking defect is its own strict xfail (the
# ranking fix, rank48, lands separately; the assertion is row_problems as before); the speed finding is stated as
# the run the log printed, Llama 3.1 70B FP8 TP 8 on 8 H100s (test_outside_trtllm_bench_source_stop48.py's [LOG70]).
# Was (audx48b, one strict xfail each, withdrawn): "EXPLAINED (trtb48, speed): H100 27,442 output tokens/s vs
# 19,787.63 (+38.7%)" and "... 20,114 vs 16,901.88 (+19.0%)", each also pinning the row-1 defect.
TRT_ROW1 = (
    "UNEXPLAINED (aud48r's open ranking defect, split out by fix48x per audx48b item 4; no (a) / (b) / (c): a "
    "product defect, not a disagreement with a measurement): [TRT16] Llama 3.1 8B FP8 on one H100, ISL 128 / OSL "
    "{osl}: row 1 is cudo sapphire-rapids-h100_1x4v8gb ranked first while its own reason says 'host RAM too small: "
    "8 GiB on the instance, needs 79.6 GiB' - a warning, not a ranking demotion. The speed is judged apart, as the "
    "70B TP 8 run the log printed (test_trtllm016_isl128_osl{osl}_speed_is_the_70b_tp8_run)."
)
R_TRT_1K = TRT_ROW1.format(osl=1024)
R_TRT_2K = TRT_ROW1.format(osl=2048)
R_TRT_2K_SPEED = (
    "UNEXPLAINED (trtb48; audx48b withdrew its EXPLAINED label, fix48x states it as the run): [TRT16] 128/2048, "
    "published 16,901.88 output tokens/s, the log's run ([LOG70] @aeec9f29: Llama-3.1-70B-Instruct FP8, TP 8 on 8 "
    "H100s, 42,668 KV blocks, GUARANTEED_NO_EVICT, 1,254 in flight): ours 19,932 (+17.9%; +14.9% counting the run's "
    "last partial wave of 492 requests, not accepted by its author). The 8B on one H100 reads 20,114 (+19.0%) "
    "against a 70B figure, no finding. Lead: about 10 ms a step the engine does not charge (no CUDA graphs, "
    "enableTrtOverlap 0 in the log), unsized; see test_outside_trtllm_bench_source_stop48.py. trtstep: no source "
    "sizes it; NVIDIA's 0.17 rows leave 10.6 ms here but 4.9 ms at 128/4096 (not one size a step) and a "
    "TP-independent 10 ms breaks the 8B TP 1 128/128 row (-19.8%): test_outside_trtllm_host_step_stop49.py"
)
R_FLUX_BF16 = (
    "UNEXPLAINED: speeds pass (A100 14.16 s vs 15.65, -9.5%; H100 5.39 s vs 7.11, -24.1%, at the edge), "
    "rows are sensible (L40S 1x4/1x2/1x8 on-demand for 10,000 images, fits 35.8 GiB of 45.0), but "
    + COST
    + ": lium L40S_4x $14.96 vs 1.52 x 9.838 h = $14.95, and rows 2 and 4 the same."
)
R_FLUX_FP8 = (
    "UNEXPLAINED: stated as run (fp16, unquantized: see FLUX_FP8_AS_RUN) H100 5.42 s vs 7.28 (-25.5%, 0.5 point "
    "past the bar; 5.39 s, -25.9%, before imgmisc49 counted diffusers v0.33.1's fp16-only residual clips, "
    "transformer_flux.py @375ec930 100-101 and 187-188: 2.27 GB a step, +0.027 s, the only fp16-specific "
    "denoiser pass; on this H100 it leaves about 0.09 s of the published fp16 / bf16 gap against a 1.86 s miss, "
    "so the miss is not the dtype, while on the A100 the published gap is about 10x the clip, aud49i); was 4.43 s (-39.1%) stated as precision fp8, whose 1.22x fp8 credit the run never had: "
    "diffusers 0.33.1 FluxPipeline.from_pretrained ignores quantization_config, so the published 'TorchAO FP8' "
    "is the FP16 run (7.28 vs its FP16 7.23 s, +0.7%). The rest is the eager DiT undercount its BF16 sibling "
    "shows (-24.1%); lead (fp8img48, counted, not fitted): diffusers 0.33.1's fp32 q/k RMSNorm "
    "(normalization.py 554-566) and fp32 RoPE (embeddings.py 1204-1213) passes, about 1.6 s an image on the "
    "H100 at DRAM rate (not landable so: probed, it puts two passing L40S FLUX cases at +51% / +34%; their fp32 "
    "temporaries fit the L40S's 96 MB L2); "
    + COST
    + " (rows 1, 2 and 4, the BF16 case's: lium L40S_4x $14.96 vs 1.52 x 9.838 h = $14.95)."
    + FIXED_COST
)
R_Y11X = (
    "UNEXPLAINED: speed passes (70.0 images/s vs 65.1, +7.5%) and memory passes, but 133 epochs take 0.2366 h "
    "vs 0.335 (-29.4%): on a 440-image set the per-epoch fixed cost (dataloader restart, validation setup, "
    "plots, checkpoint) is not priced; " + COST + " (AWS spot g6.xlarge row 2: 0.095273 x 0.447 h = $0.043, "
    "compute $0.03). yval48 (stop 48) sized the hours half from the log's own bars: an epoch is 0.335 h / 133 = "
    "9.068 s, of which the train bar (28 steps at 4.07 it/s) is 6.880 s and the validation bar (1 batch at "
    "4.20-4.47 it/s) 0.23 s, so 1.96 s an epoch (1.93 s net of the slower epochs 1-2) runs outside both bars; "
    "the product's epoch is 6.285 s of training (70.0 images/s) + 0.119 s of evaluation and nothing else. Outside "
    "the bars Ultralytics' trainer runs, every epoch, save_metrics (results.csv) and save_model: torch.save of the "
    "fp16 EMA and the optimizer state to a buffer, written to last.pt and, on a new best, best.pt (ultralytics "
    "8.3.179 engine/trainer.py 450-482 and 556-587, fp16 optimizer state; 8.0.176 saves the fp16 model too and an "
    "fp32 optimizer state; the log's 8.3.55 not opened): for YOLO11x 342-683 MB ('Optimizer stripped ... 114.4MB' "
    "plus AdamW's two moments of 56.9M parameters), with the validator's end-of-pass metrics. Ours + 1.93 s an "
    "epoch = 0.3079 h (-8.1%). Not EXPLAINED: the 1.93 s is not split between the checkpoint and the metrics, its "
    "rate (~180-350 MB/s serialised and written) is this Colab A100 host's, read off this row alone, and the "
    "cost half is unexplained. Lead: a per-epoch host term (checkpoint bytes / a host write rate) once a second "
    "host's log gives the rate." + FIXED_COST
)
R_Y11S = (
    "UNEXPLAINED: 100 epochs of 536 images take 0.0789 h vs the median published 0.227 h (-65.2%): read at first "
    "(aud48r) as the unpriced per-epoch fixed cost of small-dataset detector runs; yval48 bounds that part "
    "below (most of the miss is inside the training loop). Rows (AWS g5g T4G spot on a Graviton "
    "host, then L4) reproduce to the cent. yval48 (stop 48): the record (a Windows server, Ultralytics 8.4.117, "
    "torch 2.12.1+cu130, workers 8) shows no per-epoch bars in the part opened, so the 5.33 s an epoch the "
    "product misses (8.17 s published; ours 2.72 s of loader-bound training at 8 x 24.6 images/s + 0.12 s of "
    "evaluation) cannot be split; but the per-epoch work outside the loops is small here: YOLO11s's checkpoint "
    "is at most 113 MB (9.41M parameters x 12 bytes, the 8.0.176 form), at most 0.64 s at the 180-350 MB/s "
    "[Y11X]'s log implies, and a validation of its 179 images takes 0.7-1.1 s (the six runs' own final validations, 6 "
    "batches, on a fresh loader), so at least 3.6 s an epoch (~0.11 s over each of its 34 steps) is in the "
    "training loop on this host, which no spec field states (the six runs themselves spread 0.201-0.239 h). "
    "Lead: that host's loader (Windows spawns the workers) or its per-step host time, from a per-epoch bar."
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


PHI1_SPEC = pretrain(PHI15, 8, 51e9)


@pytest.mark.django_db
def test_phi1_paper_gpu_hours_on_the_phi15_shape(bundled_catalog):
    """pretrain49. phi-1 (arXiv:2306.11644, "Textbooks Are All You Need"): section 2.3, the 1.3B model is 24 layers,
    d 2,048, MLP 8,192, 32 heads of 64, FlashAttention, seq 2,048, fp16, DeepSpeed on 8 Nvidia A100s (the shape
    phi-1.5 reuses: PHI15); Figure 2.1: phi-1-base "51B tokens (770 GPU hours)" and the Stack+ model 76B tokens in
    1,090 GPU hours (read via ai-papers.xuzou.cn/papers/phi_2023 and aiportalx.com/microsoft-research/phi-1, which
    quote the figure; the A100's memory is unstated and the engine sizes the 40GB and 80GB alike here).
    Published 51e9 / (770 x 3600) = 18,398 and 76e9 / (1,090 x 3600) = 19,368 tokens/s a GPU; ours 18,761
    (+2.0% / -3.1%). The same team's phi-1.5 card row (6,782) on this shape is 2.8x slower and its paper's
    Table 1 (1.5K GPU hours, 27,778) 1.5x faster: the Phi-1.5 strict xfail is about the figure, not the shape."""
    ours = tokens_per_gpu(candidate(PHI1_SPEC, "a100-sxm4-80gb"))
    assert ours == pytest.approx(18761, rel=0.002)
    for tokens, gpu_hours in ((51e9, 770), (76e9, 1090)):
        assert abs(err(ours, tokens / (gpu_hours * 3600))) <= LLM_SPEED
    flops = candidate(PHI1_SPEC, "a100-sxm4-80gb")["throughput"]["flops_per_token"]
    implied = {
        "phi-1 paper": 51e9 / (770 * 3600) * flops / 312e12,
        "phi-1.5 card": 1.5e11 / (8 * 86400 * 32) * flops / 312e12,
        "phi-1.5 paper": 1.5e11 / (1500 * 3600) * flops / 312e12,
    }
    assert implied == pytest.approx(
        {"phi-1 paper": 0.500, "phi-1.5 card": 0.184, "phi-1.5 paper": 0.755}, abs=0.002
    )


@pytest.mark.django_db
def test_peft_full_finetune_llama32_3b_l40s(bundled_catalog):
    """[PEFTFT] full fine-tune, pure bf16 AdamW, batch 4, one L40S: 2,310 tokens/s, cuda_memory_max 34.68 GiB.
    maxlen: stated as the harness ran it, samples of 210 tokens on average (seq_len, the hours) and up to 768
    (max_seq_len, the memory: huggingface/peft @5d602fdb method_comparison/MetaMathQA data.py CHAR_LIMIT 1300, 'with
    a token limit of 768 for query + response'; run.py's max_memory_reserved over the whole run).
    zgrad (FIXED, was EXPLAINED at +13.8%): and zero_grad set_to_none, as the run's loop clears its gradients: run.py
    calls optimizer.zero_grad() before each forward, one batch a step, on torch 2.7.1, whose Optimizer.zero_grad
    defaults to set_to_none=True since 2.0 (torch 2.0.0 wheel, git c263bd43, torch/optim/optimizer.py line 435; 1.13.0,
    git 7c98e70d, line 246: False). Ours 33.97 GiB: weights 5.98 + bf16 states 11.97 + the 768-token activations
    13.67 + the tied lm_head / embedding gradient backward creates first (128,256 x 3,072 x 2 B = 0.73 GiB), with the
    product's 5% fragmentation: -2.0% (held out, the torch 2.9.0 / 2.13.0 reruns 35.90 / 36.20 GiB: -5.4% / -6.2%).
    768 is the harness's truncation cap, not a measured longest batch (aud49p); the run's own windowed token counts
    against a 512-cap run over the same samples put its longest batch between 513 and 768 tokens (aud49z), where
    the row reads -9.4% to -2.0% (the optimizer step's phase is the floor below about 630 tokens)."""
    c = candidate(PEFT_FT_FREED, "l40s")
    ours_mem = c["memory"]["total_per_gpu_gib"] - CUDA_CONTEXT_GIB
    problems = judge(
        PEFT_FT_FREED,
        [
            ("L40S tokens/s", tokens_per_gpu(c), 2310.0, LLM_SPEED),
            ("L40S peak memory GiB", ours_mem, 37241225216 / GIB, LLM_MEMORY),
        ],
    )
    assert not problems, problems


@pytest.mark.django_db
def test_peft_full_finetune_memory_is_the_optimizer_steps_phase(bundled_catalog):
    """[PEFTFT] optmem48: the published memory is the foreach AdamW step's phase, not the backward's. The run's
    results file (@0a179c1e) logs, after each optimizer.step (run.py: memory_allocated / memory_reserved before the
    next zero_grad; empty_cache every 10 steps), 'mem allocated avg' ~26.07e9 B and cuda_memory_reserved_avg
    33,098,872,284 B, _99th 33,573,390,254 B, cuda_memory_max 37,241,225,216 B. torch 2.13.0 @cf30153c
    torch/optim/adam.py line 790: `exp_avg_sq_sqrt = torch._foreach_sqrt(device_exp_avg_sqs)`, one bf16 state's
    size, while weights, gradients and both states are held and the activations are freed."""
    m = candidate(PEFT_FT, "l40s")["memory"]
    held = m["weights_gib"] + m["gradients_gib"] + m["optimizer_states_gib"]
    sqrt_temporary = m["optimizer_states_gib"] / 2  # exp_avg_sq's size (pure bf16: exp_avg + exp_avg_sq)
    step_phase, backward_phase = held + sqrt_temporary, held + m["activations_gib"]
    allocated_after_step = 26069449254.912 / GIB  # step 250's 'mem allocated avg'
    reserved_avg, reserved_99th, reserved_max = 33098872284 / GIB, 33573390254 / GIB, 37241225216 / GIB
    assert abs(err(held, allocated_after_step)) < 0.02  # 23.94 vs 24.28 GiB: the log is the post-step state
    assert sqrt_temporary == pytest.approx(3212749824 * 2 / GIB, rel=0.01)  # 5.98 GiB
    assert abs(err(step_phase, reserved_avg)) < 0.05 and abs(err(step_phase, reserved_99th)) < 0.05
    assert err(backward_phase, reserved_avg) < -0.10  # the backward's tensors cannot fill the steady reserve
    # in the product's own convention (fragmentation on the tensors, context left out as the case does)
    assert abs(err(step_phase * (1 + FRAGMENTATION_FRACTION), reserved_max)) < LLM_MEMORY  # -9.4%
    assert err(m["total_per_gpu_gib"] - CUDA_CONTEXT_GIB, reserved_max) < -LLM_MEMORY  # today: -16.2%


# peft49: the harness's cuda_memory_max is max_memory_reserved over the whole run (huggingface/peft
# @5d602fdbff04c33c1c4de55cda9d4ae1d7cb7e40 method_comparison/MetaMathQA/utils.py init_accelerator resets the peak
# before the model loads; run.py reads max_memory_reserved at the end), so it is the LONGEST batch's step: data.py keeps
# samples of up to CHAR_LIMIT 1300 characters ("with a token limit of 768 for query + response"), BucketIterator pads
# a batch of 4 to its longest. Sibling rows of the same folder at the audited row's release (bda9665bc9ad5e89279a55bc2
# 02724271bd5643b, torch 2.7.1, transformers 4.52.4; bytes from results/*.json train_info): LoRA r64 max 22,540,189,696
# / reserve avg 12,128,055,669; LoRA r32 22,273,851,392 / 11,868,689,976. Full fine-tune reruns (held out): @a99942694
# (torch 2.9.0) max 38,549,848,064, @51c2ff666 (torch 2.13.0) 38,868,615,168.
SIBLING_LORA_MAX = {64: 22540189696 / GIB, 32: 22273851392 / GIB}
SIBLING_LORA_RESERVED_AVG = {64: 12128055669 / GIB, 32: 11868689976 / GIB}
HARNESS_TOKEN_LIMIT = 768  # data.py's comment on CHAR_LIMIT: the longest query + response a batch can hold
FT_RERUN_MAX = (38549848064 / GIB, 38868615168 / GIB)
PEFT_FT_LONGEST = PEFT_FT | {"max_seq_len": HARNESS_TOKEN_LIMIT}  # maxlen: memory at the longest batch
# zgrad: and the loop's zero_grad as run.py's torch 2.7.1 ran it (set_to_none, torch's default since 2.0)
PEFT_FT_FREED = PEFT_FT_LONGEST | {"zero_grad": "set_to_none"}


@pytest.mark.django_db
def test_peft_max_memory_is_the_longest_batch_on_the_sibling_rows(bundled_catalog):
    """peft49: the engine at the harness's 768-token limit reads the LoRA rows' whole-run max, and at the mean 210
    their steady reserve (each within the 10% bar or near it), so the max is the longest batch's. Applied to the full
    fine-tune with run.py's zero_grad() before the forward (torch's set_to_none: no gradients held beside the
    activations): weights + bf16 states + the 768-token activations, with the product's fragmentation."""
    for rank in (64, 32):
        lora = peft_run("lora", lora={"rank": rank, "targets": ["q_proj", "v_proj"]})
        long, mean = (candidate(lora | {"seq_len": n}, "l40s")["memory"] for n in (HARNESS_TOKEN_LIMIT, 210))
        assert (
            abs(err(long["total_per_gpu_gib"] - CUDA_CONTEXT_GIB, SIBLING_LORA_MAX[rank])) < LLM_MEMORY
        )  # -9.3/-9.0%
        assert abs(err(mean["total_per_gpu_gib"] - CUDA_CONTEXT_GIB, SIBLING_LORA_RESERVED_AVG[rank])) < 0.12
    c = candidate(PEFT_FT_LONGEST, "l40s")
    m = c["memory"]
    assert c["throughput"] == candidate(PEFT_FT, "l40s")["throughput"]  # maxlen: speed stays at the mean 210
    long_batch = (m["weights_gib"] + m["optimizer_states_gib"] + m["activations_gib"]) * (
        1 + FRAGMENTATION_FRACTION
    )
    assert long_batch == pytest.approx(33.2, abs=0.05)
    assert abs(err(long_batch, 37241225216 / GIB)) < LLM_MEMORY  # -4.3%: the audited row
    assert all(abs(err(long_batch, rerun)) < LLM_MEMORY for rerun in FT_RERUN_MAX)  # -7.5% / -8.3%, held out
    step_phase = (m["weights_gib"] + m["gradients_gib"] + m["optimizer_states_gib"] * 1.5) * (
        1 + FRAGMENTATION_FRACTION
    )
    assert long_batch > step_phase  # optmem48's foreach step phase (31.42 GiB) is under the long batch's peak


def test_foreach_adamw_allocates_one_full_size_temporary_a_step():
    """optmem48: torch 2.13's foreach AdamW (decoupled decay, not amsgrad / maximize) with clip_grad_norm_ makes
    exactly one new full-size tensor list a step, _foreach_sqrt of the second moments (adam.py line 790); the
    first step also creates the states (zeros_like), which stay. Traced on the CPU with TorchDispatchMode."""
    torch = pytest.importorskip("torch")
    from torch.utils._python_dispatch import TorchDispatchMode

    sizes = [1000, 3000, 500]
    params = [torch.nn.Parameter(torch.randn(n, dtype=torch.bfloat16)) for n in sizes]
    for p in params:
        p.grad = torch.randn_like(p)
    optimizer = torch.optim.AdamW(params, lr=1e-5, weight_decay=0.01, foreach=True)
    created: list[tuple[str, list[int]]] = []

    class Record(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            out = func(*args, **(kwargs or {}))
            outs = out if isinstance(out, (list, tuple)) else [out]
            big = [o.numel() for o in outs if isinstance(o, torch.Tensor) and o.numel() > 1]
            if big and not func._schema.name.endswith("_") and "stack" not in func._schema.name:
                created.append((func._schema.name, big))
            return out

    for _ in range(2):
        created.clear()
        with Record():
            torch.nn.utils.clip_grad_norm_(params, 1.0, foreach=True)
            optimizer.step()
    assert created == [("aten::_foreach_sqrt", sizes)]


@pytest.mark.django_db
@pytest.mark.xfail(strict=True, reason=R_PEFT_LORA)
def test_peft_lora_rank64_llama32_3b_l40s(bundled_catalog):
    """[PEFTLORA] LoRA r 64 on q/v, batch 4, one L40S: 6,665 tokens/s (memory max includes the batch-50 eval
    generation, so only speed is judged)."""
    c = candidate(PEFT_LORA, "l40s")
    problems = judge(PEFT_LORA, [("L40S tokens/s", tokens_per_gpu(c), 6665.0, LLM_SPEED)])
    assert not problems, problems


@pytest.mark.django_db
def test_trtllm016_llama31_8b_fp8_h100_isl128_osl1024(bundled_catalog):
    """[TRT16] Llama 3.1 8B FP8 on one H100 stated at concurrency 512 (the largest batch whose FP8 KV cache fits the
    H100 with the product's headroom): the ranking's row 1 and every row's cost (row_problems). fix48x: the speed
    check (27,442 vs 19,787.63, +38.7%) moved to test_trtllm016_isl128_osl1024_speed_is_the_70b_tp8_run: the figure
    is the 70B TP 8 run's.

    Was a strict xfail (aud48r, split out by fix48x): row 1 was cudo sapphire-rapids-h100_1x4v8gb, an 8 GiB-RAM host
    the row itself called too small, and the rows' costs did not rebuild to the cent. Now both hold because
    rank48 demotes a serving host without RAM for a checkpoint shard + the runtime (sizing.host.serving_host_ram,
    8.2 GiB for the 8B FP8) below the first host that holds it, and prices every part on the row's shown figures
    (ranking/breakdown.py priced_parts)."""
    problems = row_problems(ranked(TRT_1K, 5), TRT_1K)
    assert not problems, problems


@pytest.mark.django_db
def test_trtllm016_isl128_osl1024_speed_is_the_70b_tp8_run(bundled_catalog):
    """[TRT16] 19,787.63 output tokens/s is [LOG70]'s run (@aeec9f29 results/result_128_1024_7500.txt:
    Llama-3.1-70B-Instruct, TP Size 8, 19787.6318): stated as that run at its 2,048 in flight, ours 21,891 (+10.6%)."""
    row = run_70b_tp8(128, 1024)
    assert row["throughput"]["decode_tokens_per_second_total"] == pytest.approx(19787.6318, rel=LLM_SPEED)


@pytest.mark.django_db
def test_trtllm016_llama31_8b_fp8_h100_isl128_osl2048(bundled_catalog):
    """[TRT16] ISL 128 / OSL 2048, the 8B on one H100 stated at concurrency 256: row 1 and the rows' costs. fix48x:
    the speed check (20,114 vs 16,901.88, +19.0%) moved to test_trtllm016_isl128_osl2048_speed_is_the_70b_tp8_run.

    Was a strict xfail (aud48r, split out by fix48x): row 1 was cudo sapphire-rapids-h100_1x4v8gb, an 8 GiB-RAM host
    the row itself called too small, and the rows' costs did not rebuild to the cent. Now both hold because
    rank48 demotes a serving host without RAM for a checkpoint shard + the runtime (sizing.host.serving_host_ram,
    8.2 GiB for the 8B FP8) below the first host that holds it, and prices every part on the row's shown figures
    (ranking/breakdown.py priced_parts)."""
    problems = row_problems(ranked(TRT_2K, 5), TRT_2K)
    assert not problems, problems


@pytest.mark.django_db
@pytest.mark.xfail(strict=True, reason=R_TRT_2K_SPEED)
def test_trtllm016_isl128_osl2048_speed_is_the_70b_tp8_run(bundled_catalog):
    row = run_70b_tp8(128, 2048)
    assert row["throughput"]["decode_tokens_per_second_total"] == pytest.approx(16901.8790, rel=LLM_SPEED)


@pytest.mark.django_db
def test_flux_dev_bf16_generation_a100_and_h100(bundled_catalog):
    """[FLUXB] FLUX.1-dev 1024 px, 28 steps, batch 1, BF16: 15.65 s (A100), 7.11 s (H100); 10,000 images ranked.

    img51 (diffusers' fp32 q / k chains in DRAM where they exceed the card's L2): A100 14.16 -> 16.78 s (-9.5% ->
    +7.2%), H100 5.39 -> 6.82 s (-24.1% -> -4.1%).

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


# Was a strict xfail (R_FLUX_FP8, kept above as its history): H100 5.42 s vs 7.28 (-25.5%). FIXED (img51): 6.85 s
# (-5.9%). diffusers v0.33.1's eager Flux attention runs fp32 chains on q and k (RMSNorm 30 B and RoPE 54 B an
# element beyond the counted activations, models/normalization.py 554-563 and models/embeddings.py 1204-1213 at
# @375ec930); at 1,024 px a joined q or k is 4,608 x 3,072 = 14.16M elements, 56.6 MB in fp32, over the H100's
# 50 MB L2 (51,200 KB, H100 whitepaper Table 3), so every kernel of the chain streams through HBM: 119.4 GB a step
# (image_model.flux_qk_chain_dram_bytes_per_step; the joint blocks' image q / k, 50.3 MB, stay in L2), 28 steps at
# 0.7 x 3.35 TB/s = 1.43 s. Nothing fitted; the L40S's 96 MB holds the chains, so its FLUX rows do not move.


@pytest.mark.django_db
def test_flux_dev_torchao_fp8_generation_h100(bundled_catalog):
    """[FLUXB] FLUX.1-dev 'TorchAO FP8' on the H100: 7.28 s (no faster than its 7.11 s BF16 or 7.23 s FP16),
    stated as the run ran (FLUX_FP8_AS_RUN): fp16, no quantization."""
    h100 = candidate(FLUX_FP8_AS_RUN, "h100-sxm5-80gb")["throughput"]["seconds_per_batch"]
    problems = judge(FLUX_FP8_AS_RUN, [("H100 'TorchAO FP8' s/image", h100, 7.28, IMAGE_SPEED)])
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


# yval48 (stop 48): the figures R_Y11X and R_Y11S quote, pinned so the reasons cannot go stale silently.
Y11X_TRAIN_BARS = {1: 3.04, 2: 3.90, 132: 4.07, 133: 4.07}  # [Y11X] it/s of the 28-step train bar
# it/s of the 1-batch validation bar (epoch 1 printed '1.52s/it')
Y11X_VAL_BARS = {1: 1 / 1.52, 2: 5.61, 132: 4.20, 133: 4.47}


def _y11x_seconds_outside_the_bars() -> float:
    """[Y11X] an epoch's seconds outside its two bars, at the steady bars, less epochs 1-2's excess over them."""
    epoch = 0.335 * 3600 / 133
    train, val = 28 / Y11X_TRAIN_BARS[133], 1 / statistics.mean([Y11X_VAL_BARS[132], Y11X_VAL_BARS[133]])
    early = sum(28 / Y11X_TRAIN_BARS[e] - train + 1 / Y11X_VAL_BARS[e] - val for e in (1, 2))
    return epoch - train - val - early / 133


@pytest.mark.django_db
def test_the_yolo11x_hours_gap_is_the_logs_time_outside_its_bars(bundled_catalog):
    """[Y11X] 9.068 s an epoch = 6.880 s train bar + 0.23 s validation bar + 1.93 s outside both; the product
    prices the two loops (6.285 s + 0.119 s) and nothing outside them: adding the log's 1.93 s lands the hours
    (-8.1%), which is why R_Y11X names per-epoch work, not the step, as the hours gap (a size read off this row,
    not a landed term)."""
    outside = _y11x_seconds_outside_the_bars()
    assert outside == pytest.approx(1.93, abs=0.01)
    t = candidate(Y11X, "a100-sxm4-40gb")["throughput"]
    assert 440 / t["training_images_per_second"] == pytest.approx(6.285, abs=0.01)
    assert t["evaluation_hours"] * 3600 / 133 == pytest.approx(0.119, abs=0.01)
    assert t["training_hours"] == pytest.approx(0.2366, abs=0.0005)
    with_outside = t["training_hours"] + 133 * outside / 3600
    assert with_outside / 0.335 - 1 == pytest.approx(-0.081, abs=0.005)


@pytest.mark.django_db
def test_the_yolo11s_miss_is_inside_the_training_loop(bundled_catalog):
    """[Y11S] 8.17 s an epoch against ours 2.84 s; the per-epoch work outside the loops bounded from [Y11X]'s
    implied write rate (>= 180 MB/s for <= 113 MB) and the runs' own final validations (<= 1.1 s) leaves at least
    3.6 s an epoch inside the training loop."""
    t = candidate(Y11S, "a100-sxm4-40gb")["throughput"]
    assert t["training_images_per_second"] == pytest.approx(197.1, abs=0.1)
    ours_epoch = t["training_hours"] * 3600 / 100
    assert ours_epoch == pytest.approx(2.84, abs=0.01)
    published_epoch = 0.227 * 3600 / 100
    rate_mb_s = 342 / _y11x_seconds_outside_the_bars()  # the 8.3.179 form, the lower of [Y11X]'s two sizes
    checkpoint_s = 9.41e6 * 12 / 1e6 / rate_mb_s
    assert checkpoint_s == pytest.approx(0.64, abs=0.01)
    in_the_loop = published_epoch - ours_epoch - checkpoint_s - 1.1
    assert in_the_loop >= 3.55
