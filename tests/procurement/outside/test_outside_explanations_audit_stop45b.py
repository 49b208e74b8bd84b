"""Outside audit aud45b (stop 45) of cls45b's nanoGPT relabel and det45's Roboflow YOLOv8s 800 px memory relabel.

Hand checks of the two explanations (no database), then cases of my own from sources no test had (grepped tests/
for each before use). Tolerances (reviewer notes): LLM speed 15%, image memory 15%.

Sources opened:
  [NANOGPT-GIT] karpathy/nanoGPT history: d2705bd9 (2023-01-31, README intro "about 4 days"), f9348f3f / 3969860f
      (2023-02-03, config/train_gpt2.py, header "wait ~5 days"), 77e7e04c (2023-02-04 16:06 UTC, vocab 50,257 ->
      50,304, "about 25% faster ... the last layer ... about 40% of latency"), 23a8e701 (2023-02-05 19:31 UTC, README
      revamp: a NEW sentence "This will run for about 4 days using PyTorch Distributed Data Parallel (DDP)", written
      27.4 h after the padding, too soon for a padded 600,000-iteration run of >= 70 h: carried over, not re-measured).
      karpathy/nanoGPT issue #110 (2023-02-02): default train.py @038ce894 on 8 x A100, "time 562 ms" an iteration.
  [UL-WHEELS] PyPI wheels ultralytics 8.0.6 / 8.0.35 / 8.0.60 (pip download --no-deps): yolo/engine/trainer.py has
      one torch.cuda.empty_cache() after final_eval in 8.0.6 and 8.0.35; 8.0.60 adds one after on_fit_epoch_end
      ("clears GPU vRAM at end of epoch"); GPU_mem is memory_reserved() / 1E9 (8.0.35 trainer.py line 320).
      yolo/utils/tal.py select_topk_candidates: 8.0.6 F.one_hot(topk_idxs, num_anchors).sum(-2); 8.0.35 the same
      (a per-image loop only under roll_out); 8.0.60 accumulates one (b, n, anchors) one_hot per k.
      PyPI's 0.0.x line ends at 0.0.44 (a 2022 HUB client, no trainer), and 8.0.7-8.0.34 are absent.
  [RF-Y8S-LOG] roboflow/notebooks@d1a4863 (and @6d42f74 / @3135114, same saved output), YOLOv8.0.9, T4:
      GPU_mem 7.61 / 7.61 / 9.25 / 10.9G epochs 1-4, 10.9G to epoch 25, INCLUDING epochs 16-25 after the mosaic
      closed (close_mosaic 10 in 8.0.6's default.yaml: 90-95 instances in the last batch, 1.13-1.30 it/s against
      1.8-1.9 s/it): a per-epoch reading would drop there; only a never-emptied cache keeps 10.9G.
"""

from __future__ import annotations

import copy
import io
import json

import pytest
from django.core.management import call_command

from procurement.api.sizing import size_spec_document
from procurement.sizing.assumptions import CUDA_CONTEXT_GIB

LLM_SPEED, IMAGE_MEMORY = 0.15, 0.15
GIB = 2.0**30


def _candidate(spec: dict, gpu: str, count: int) -> dict:
    report = size_spec_document(copy.deepcopy(spec), [gpu])
    return next(c for c in report["candidates"] if c["gpu"] == gpu and c["gpus"] == count)


def _per_gpu_tokens(spec: dict, gpu: str, count: int = 8) -> float:
    return _candidate(spec, gpu, count)["throughput"]["training_tokens_per_second"] / count


def _error(estimate: float, published: float) -> float:
    return estimate / published - 1.0


# ------------------------------------------------------------------------------------------ hand checks


def test_nanogpt_padded_estimate_sits_on_the_tolerance_edge():
    """[NANOGPT-GIT] cls45b's arithmetic redone. 'About 25% faster' read as 1.25x the rate: 562 ms / 1.25 = 449.6 ms,
    600,000 iterations = 74.9 h, +2.7% evaluation = 77.0 h; the product's 65.3 h is -15.2%, 0.2 points OUTSIDE the
    15% speed tolerance (cls45b's reason calls the rest 'inside'). Read as 25% less time: 421.5 ms, 72.1 h, -9.5%.
    The padding's size is one word of a commit message measured with bench.py; it brackets the residual at
    -9.5..-15.2%, it does not put it inside."""
    as_rate = 600_000 * 0.562 / 1.25 * 1.027 / 3600
    as_time = 600_000 * 0.562 * 0.75 * 1.027 / 3600
    assert as_rate == pytest.approx(77.0, abs=0.05)
    assert as_time == pytest.approx(72.1, abs=0.05)
    assert _error(65.3, as_rate) == pytest.approx(-0.152, abs=0.001)
    assert abs(_error(65.3, as_rate)) > LLM_SPEED
    assert _error(65.3, as_time) == pytest.approx(-0.095, abs=0.001)
    # the README's post-padding restatement (23a8e701) came 27.4 h after 77e7e04c: no padded run could have ended
    assert (19 + 31 / 60) + 24 - (16 + 6 / 60) == pytest.approx(27.4, abs=0.05)
    assert 27.4 < as_rate


def test_rf_y8s_readings_cannot_both_be_met_and_the_assigner_term():
    """[RF-Y8S-LOG] det45's proof from the log: one estimate within 15% of 7.61G must be <= 8.75, one within 15% of
    10.9G must be >= 9.27. The 8.0.6/8.0.35 assigner redone: 800 px has 100^2 + 50^2 + 25^2 = 13,125 anchors;
    16 images x 100 slots x 13,125 = 21.0M slots; (104 - 36) B a slot = +1.43 GB raw, +1.92 GB with the fit's
    48.4/36 allocator ratio: 8.12-8.61 GB over the product's 6.69 (det45: 8.19-8.70, immaterial)."""
    assert 7.61 * 1.15 == pytest.approx(8.75, abs=0.01)
    assert 10.9 * 0.85 == pytest.approx(9.27, abs=0.01)
    assert 7.61 * 1.15 < 10.9 * 0.85
    anchors = 100**2 + 50**2 + 25**2
    slots = 16 * 100 * anchors
    assert anchors == 13_125
    raw = (104 - 36) * slots / 1e9
    scaled = (104 - 36) * 48.4 / 36 * slots / 1e9
    assert raw == pytest.approx(1.43, abs=0.01)
    assert scaled == pytest.approx(1.92, abs=0.01)
    assert _error(6.69, 7.61) == pytest.approx(-0.121, abs=0.001)
    assert abs(_error(6.69 + scaled, 7.61)) <= IMAGE_MEMORY


# ------------------------------------------------------------------------------------------ [LLMC] llm.c on A100
# karpathy/llm.c scripts, the author's own step times on "8X A100 80GB SXM" at 524,288 tokens a step, sequence 1,024,
# bf16, cuDNN flash attention (USE_CUDNN=1), -r 0 (no recompute), -z 1 (ZeRO-1), vocabulary padded to 50,304:
#   scripts/run_gpt2_124M.sh @039904ee: d12, -b 64, "steps in ~300ms/iter" (18,865 steps, 94.3 min)
#   scripts/run_gpt2_350M.sh @100bba03: d24, -b 64, "steps in ~820ms/iter"
#   scripts/run_gpt2_774M.sh @039904ee: d36, -b 32, "steps in ~1.7s/iter"
# Published per GPU: 524,288 / 8 / step = 218,453 / 79,922 / 38,551 tokens/s.
LLMC_ROWS = {
    "d12-124m": (12, 768, 12, 64, 0.300),
    "d24-350m": (24, 1024, 16, 64, 0.820),
    "d36-774m": (36, 1280, 20, 32, 1.7),
}
LLMC_OURS = {"d12-124m": 156_916, "d24-350m": 62_052, "d36-774m": 31_020}


def _llmc_spec(layers: int, width: int, heads: int, micro_batch: int) -> dict:
    return {
        "name": f"llmc-gpt2-d{layers}",
        "task": "pretrain",
        "model": {
            "name": f"gpt2-d{layers}",
            "num_layers": layers,
            "hidden_size": width,
            "num_attention_heads": heads,
            "intermediate_size": 4 * width,
            "vocab_size": 50304,
            "gated_mlp": False,
            "tie_word_embeddings": True,
        },
        "micro_batch_size": micro_batch,
        "seq_len": 1024,
        "gradient_accumulation_steps": 524_288 // (8 * micro_batch * 1024),
        "parallelism": {"gpus": 8, "zero_stage": 1},
        "training_tokens": 18_865 * 524_288,
    }


LLMC_REASON = (  # the strict xfail's reason before train46, kept as the record
    "UNEXPLAINED (aud45b): karpathy/llm.c's own step times on 8 x A100 80GB SXM (scripts/run_gpt2_124M.sh / "
    "run_gpt2_774M.sh @039904ee, run_gpt2_350M.sh @100bba03: ~300 ms / ~820 ms / ~1.7 s a 524,288-token step) are "
    "218,453 / 79,922 / 38,551 tokens/s/GPU; the product gives 156,916 / 62,052 / 31,020 (-28.2% / -22.4% / "
    "-19.5%), the gap narrowing with width. Diagnosis: llm.c is a fused C/CUDA stack (a FusedClassifier that never "
    "materialises the normalised logits, cuDNN flash attention, 128-bit packed loads; its author's 'Day 24' post "
    "puts it ~7% ahead of PyTorch nightly), and the product's width ceiling is fitted on llm-foundry's PyTorch MPT "
    "sweep; procurement/sizing/assumptions.py itself calls it 'a ceiling, not a factor: fused stacks reach more at "
    "small widths (... llm.c GPT-2 124M up to ~60%)'. training_stack has no llm.c value, so no spec can state it. "
    "The '~' steps allow a few percent, not 20-28. "
    "fixb45 (still UNEXPLAINED, sharpened): the step times were written with the code of their day (the '~300ms' / "
    "'~820ms' lines at karpathy/llm.c@a0d5dbb, 2024-05-30; '~1.7s' at 963aa68, 2024-06-12). Its train_gpt2.cu there "
    "runs, where PyTorch's eager GPT-2 (nanoGPT model.py) runs separate kernels: fused_residual_forward5 (residual "
    "add and the next layernorm in one pass), fused_classifier (softmax, loss and dlogits in one pass over the "
    "bf16 logits, written in place: about 4 B a logit against about 46 B for an eager fp32 F.cross_entropy, "
    "2.1 MB a token at V 50,304, 1.0 us at 2.04 TB/s against llm.c's 4.6 / 12.5 / 25.9 us a token), cuDNN "
    "attention reading the fused QKV buffer without a permute copy, a fused layernorm backward, no recompute "
    "(-r 0), one fused AdamW with ZeRO-1. Its only GEMM epilogue at those commits is the bias (CUBLASLT_EPILOGUE_"
    "BIAS; the GELU epilogue arrived later and stays off by default at 039904ee, gelu_fusion 0 'off for now'), "
    "so 'elementwise work fused into GEMM epilogues' is, for these rows, one bias add a linear. The "
    "product runs these rows at the A100 width ceiling itself (MFU 0.401 / 0.452 / 0.489, exposed communication "
    "0), fitted on llm-foundry's MPT stack (fused cross-entropy and low-precision layernorm too), so the gap is "
    "against MPT's stack, not eager PyTorch's. Sized in the engine's own terms: the published steps are 0.559 / "
    "0.582 / 0.608 of the dense peak in its count; at the fitted e 0.726 they need k 230 / 253 / 250 (MPT's fit: "
    "621), i.e. the gap has the shape of about 0.4x MPT's width-linear (memory-bound) work, not a constant "
    "factor. Counted from train_gpt2.cu@a0d5dbb's kernels (bf16, per token and layer, in units of d): forward two "
    "fused_residual_forward5 (4d each) and gelu_forward (8d), backward gelu_backward (12d), two layernorm_backward "
    "(4d each) and the four bias-gradient reads (9d): 45d = 90 B, plus fused_classifier's 4 x 50,304 B a token "
    "(21.8 / 8.2 / 4.4 B a d and layer at 124M / 350M / 774M); at the A100's full 2.04 TB/s this is k = B x 0.726 x "
    "153 / 72 = 173 / 152 / 146, which would put the rows at +6.1 / +8.6 / +7.3% (at 80% of the bandwidth, k 216 / "
    "189 / 182). Not landed as a FIX: the engine has no per-stack k (training_stack moves only Hopper's e, "
    "megatron), and e 0.726 was fitted jointly with k 621 on MPT's stack, whose passes were not counted the same "
    "way; k also absorbs what narrow shapes cost beyond memory passes (narrow GEMMs, attention at the fit's "
    "2,048 tokens), which llm.c's cuBLASLt GEMMs at the same shapes would pay too, so a counted llm.c k under "
    "MPT's fitted e mixes a count with a fit. A llm_c value needs MPT's passes counted on the same basis first; "
    "a k fitted on these three rows would be a fit, not a FIX."
)


# Was a strict xfail (LLMC_REASON above, kept as the record): the product sized llm.c at MosaicML MPT's fitted
# width ceiling, 156,916 / 62,052 / 31,020 tokens/s/GPU (-28.2 / -22.4 / -19.5%), training_stack having no llm.c
# value. Now 235,530 / 85,307 / 40,399 (+7.8 / +6.7 / +4.8%) because the spec states `training_stack: llm_c` and
# the engine counts llm.c's own memory-bound passes from train_gpt2.cu@a0d5dbb (train46, mfu.llm_c_efficiency:
# 45 bf16 elements a token and layer per unit of d, fused_classifier's 4 B a logit, at achieved_bandwidth_fraction
# 0.70; the GEMMs and cuDNN attention at the width ceiling's e 0.726), nothing fitted on these rows. Held out:
# scripts/run_gpt2_1558M.sh on 8 H100 (test_llmc_gpt2_1558m_on_8_h100_is_held_out below).
# fix46t: 235,530 / 85,307 / 40,399 -> 234,963 / 85,094 / 40,295 (+7.6 / +6.5 / +4.5%) because llm_c counts AdamW's
# once-a-step bytes (train_gpt2.cu@a0d5dbb adamw_kernel3 30 B a parameter of the ZeRO-1 shard over 8 GPUs, gradient
# norm and zero-grad 4 B a parameter) over the 65,536 tokens a GPU takes a step: 0.2%.
LLMC_STATED = {"d12-124m": 234_963, "d24-350m": 85_094, "d36-774m": 40_295}


@pytest.mark.django_db
@pytest.mark.parametrize("row", list(LLMC_ROWS))
def test_llmc_gpt2_step_times_on_8_a100_80gb(bundled_catalog, row):
    layers, width, heads, micro_batch, step = LLMC_ROWS[row]
    unstated = _per_gpu_tokens(_llmc_spec(layers, width, heads, micro_batch), "a100-sxm4-80gb")
    # MPT's ceiling (no training_stack stated): the xfail's figures, unchanged
    assert unstated == pytest.approx(LLMC_OURS[row], rel=0.005)
    spec = dict(_llmc_spec(layers, width, heads, micro_batch), training_stack="llm_c")
    ours = _per_gpu_tokens(spec, "a100-sxm4-80gb")
    assert ours == pytest.approx(LLMC_STATED[row], rel=0.005)
    published = 524_288 / 8 / step
    error = _error(ours, published)
    assert abs(error) <= LLM_SPEED, f"{ours:,.0f} vs {published:,.0f} tokens/s/GPU ({error:+.1%})"


# [LLMC-1558M] held out of train46's count (no test had it): karpathy/llm.c scripts/run_gpt2_1558M.sh @c6efd90
# (2024-07-02, "upload good 1558M sh script"): "on 8X H100 80GB SXM ($28/hr) steps in 2.80s/iter", -e d48 (48 layers,
# d 1,600, 25 heads), -b 16 -t 1024, -d 1,048,576 tokens a step, -r 0, -z 1, USE_CUDNN=1: 1,048,576 / 8 / 2.80 =
# 46,811 tokens/s/GPU. The script passes -ge 1 (GELU in the forward GEMM's epilogue, default 0 at that commit); the
# spec cannot state it and the engine counts the default (the fused forward moves 41 elements, not 45: +1.0%).
# Product unstated (MPT's H100 ceiling, 0.351 of the peak): 35,440 (-24.3%, the A100 rows' miss on another card).
@pytest.mark.django_db
def test_llmc_gpt2_1558m_on_8_h100_is_held_out(bundled_catalog):
    spec = _llmc_spec(48, 1600, 25, 16)
    spec["gradient_accumulation_steps"] = 1_048_576 // (8 * 16 * 1024)
    unstated = _per_gpu_tokens(spec, "h100-sxm5-80gb")
    assert unstated == pytest.approx(35_440, rel=0.005)
    ours = _per_gpu_tokens(dict(spec, training_stack="llm_c"), "h100-sxm5-80gb")
    published = 1_048_576 / 8 / 2.80
    assert ours == pytest.approx(46_317, rel=0.005)
    # fix46t: 46,401 -> 46,317 (-0.9% -> -1.1%) because llm_c counts AdamW's once-a-step bytes (30 B a parameter of
    # the ZeRO-1 shard + 4 B a parameter, train_gpt2.cu@a0d5dbb) over the 131,072 tokens a GPU takes a step
    assert _error(ours, published) == pytest.approx(-0.011, abs=0.001)
    assert abs(_error(ours, published)) <= LLM_SPEED


def test_llmc_gpt3_125m_comment_is_not_a_measurement():
    """scripts/run_gpt3_125M.sh @72698a5 says "on 8X A100 80GB SXM ... steps in ~150ms/iter" for a 125M model at
    -t 2048, 524,288 tokens a step. The product's FLOP count of that model (d 768, 12 layers, V 50,304, 2,048-token
    causal attention) is 854.8M a token: 524,288 x 854.8e6 / 0.150 / 8 = 373 TFLOPS a GPU, above the A100's 312
    dense bf16 peak, so the line cannot be a step time of that script; it is not used as a held-out row."""
    per_gpu_tflops = 524_288 * 854.77e6 / 0.150 / 8 / 1e12
    assert per_gpu_tflops == pytest.approx(373.4, abs=0.5)
    assert per_gpu_tflops > 312


# ------------------------------------------------------------------------------------------ [BNG-BLOG] padded PyTorch
# debtirthasaha.github.io/blog/2026/gpt2-124m/ ("Eight A100s, $61, and 124M parameters"): an end-to-end run of
# karpathy/build-nanogpt's train_gpt2.py (PyTorch, torch.compile, flash SDPA, bf16, vocabulary 50,304) on "8x A100
# SXM4 rented from Lambda", 19,073 steps over 10B tokens, "Sustained throughput 1.1M tokens/sec", "~127 steps/min"
# (127 x 524,288 / 60 = 1.11M: consistent). Not stated in the page text I read: the card's memory and the micro-batch
# (build-nanogpt's default B = 64, T = 1,024); the product gives the same rate on both A100 SXM4 cards and at 12 or
# 64 sequences (asserted), so neither moves the comparison. 1.1M / 8 = 137.5k tokens/s/GPU: the nanoGPT family after
# the padding, on the card nanoGPT's README names. cls45b projected 136.5k for the padded January-2023 stack.
BNG_PUBLISHED = 1.1e6 / 8


@pytest.mark.django_db
def test_padded_nanogpt_family_rate_on_8_a100(bundled_catalog):
    """[BNG-BLOG] 137.5k tokens/s/GPU; product 156,916 (+14.1%), inside 15%: the padded PyTorch GPT-2 124M lands,
    which supports cls45b's reading that the -32% of the 2023 case is mostly the unpadded vocabulary (its projected
    136.5k is within 1% of this row). The residual is at the edge of the tolerance, as in the nanoGPT case."""
    spec = _llmc_spec(12, 768, 12, 64)
    spec["parallelism"] = {"gpus": 8}
    rates = {
        (gpu, micro_batch): _per_gpu_tokens(
            dict(
                spec,
                micro_batch_size=micro_batch,
                gradient_accumulation_steps=524_288 // (8 * micro_batch * 1024),
            ),
            gpu,
        )
        for gpu in ("a100-sxm4-80gb", "a100-sxm4-40gb")
        for micro_batch in (16, 64)
    }
    assert max(rates.values()) == pytest.approx(min(rates.values()), rel=0.005)
    ours = rates[("a100-sxm4-80gb", 64)]
    error = _error(ours, BNG_PUBLISHED)
    assert error == pytest.approx(0.141, abs=0.005)
    assert abs(error) <= LLM_SPEED, f"{ours:,.0f} vs {BNG_PUBLISHED:,.0f} ({error:+.1%})"
    assert 136.5e3 / BNG_PUBLISHED - 1 == pytest.approx(-0.007, abs=0.001)


# ------------------------------------------------------------------------------------------ [RF-037A] same spec, 11.9G
# roboflow/notebooks@037a0e9 (2023-01-10, the notebook's first commit), notebooks/train-yolov8-object-detection-on-
# custom-dataset.ipynb, saved Colab output: 'Ultralytics YOLO 0.0.59 ... torch-1.13.0+cu116 CUDA:0 (Tesla T4,
# 15110MiB)', trainer line 'model=yolov8s.pt, data=/content/football-players-detection-2/data.yaml, epochs=25, ...
# batch=16, imgsz=800', 612 train / 38 val images (the same counts as [RF-Y8S]'s version 1), 39 iterations an epoch:
# '1/25 11.9G ... 77 800: 100% 39/39' and '2/25 11.9G ... 391 800: 26% 10/39'. Same spec as det45's case, first
# epoch 11.9G where 8.0.2 / 8.0.9 read 7.61G. 0.0.59 is not on PyPI (0.0.x ends at 0.0.44, a HUB client): its code
# is unopened.
RF_037A_SPEC = {
    "task": "full_finetune",
    "model": {"preset": "yolov8s"},
    "precision": "fp16",
    "micro_batch_size": 16,
    "optimizer": "sgd",
    "image": {
        "resolution_px": 800,
        "epochs": 25,
        "dataset_images": 612,
        "max_objects_per_image": 100,
        "deterministic": False,
    },
    "host": {"vcpus_per_gpu": 2},
}

RF_037A_REASON = (
    "UNEXPLAINED (aud45b): roboflow/notebooks@037a0e9, YOLOv8s, batch 16, 800 px, Colab T4, pre-release 'Ultralytics "
    "YOLO 0.0.59' (torch 1.13.0): GPU_mem 11.9G already at the end of epoch 1 (and mid-epoch 2); product 6.69 GB "
    "reserved at 100 objects (-43.8%). The same spec's epoch 1 reads 7.61G on 8.0.2 and 8.0.9 (det45's case), so a "
    "first-epoch reading is version-bound too: epoch 1 has no earlier epoch to accumulate, so 0.0.59 "
    "reserved 4.3 GB more than 8.0.2 / 8.0.9 within the same first 39 steps. Its code is not on PyPI (0.0.x there ends at 0.0.44, a 2022 HUB "
    "client) and was not opened; no spec field states an Ultralytics version."
    " det46 (stop 46): where 0.0.59 came from and what it is not. The notebook installed it with a plain '!pip"
    " install ultralytics' (cell 5 at 037a0e9; 'yolo mode=checks' prints 'Ultralytics YOLO 0.0.59'), and the run's"
    " TensorBoard file (events.out.tfevents.1672999595...) dates it to 2023-01-06 10:06 UTC: a PyPI release since"
    " removed (pip's index today lists 0.0.13-0.0.44, then 8.0.0). The earliest code on PyPI, the 8.0.0 wheel"
    " (2023-01-10), was opened and, where it was read, matches 8.0.6: utils/tal.py identical (the"
    " F.one_hot(topk_idxs, num_anchors).sum(-2) assigner, 104 B a slot), trainer.py's one torch.cuda.empty_cache()"
    " after final_eval, AMP on for any CUDA device (self.amp = self.device.type != 'cpu'), init_seeds with"
    " deterministic as in 8.0.6 and 'torch.backends.cudnn.benchmark = True' commented out ('AutoBatch problem',"
    " ultralytics/yolov5 issue 9287). 8.0.2 of that family reads 7.61G at epoch 1 (73ab71d: the same torch-1.13.0+cu116"
    " build, so the same bundled cuDNN; the Colab driver is not printed); so the 4.3 GB is in"
    " code that changed between 2023-01-06 and 2023-01-10. The two runs' trainer lines differ only cosmetically"
    " (conf=0.001 vs None, dropout=False vs 0.0, device='' vs None); same torch 1.13.0, T4, 612 / 38 images and 905"
    " val instances (Roboflow version 2 vs 1 of the same project). 0.0.59 ran epoch 1 faster (1.79 s/it vs"
    " 2.09) while reserving 4.3 GB more, the pattern cuDNN autotuning would give (faster algorithms, larger"
    " workspaces kept by the caching allocator): a lead only, unverified without 0.0.59's torch_utils.py. Unchanged"
    " at 6.69 GB (-43.8%), UNEXPLAINED."
)


def _reserved_gb(row: dict) -> float:
    return (row["memory"]["total_per_gpu_gib"] - CUDA_CONTEXT_GIB) * GIB / 1e9


def _size_image(tmp_path, spec: dict, gpu: str) -> dict:
    path = tmp_path / "spec.json"
    path.write_text(json.dumps(spec))
    out = io.StringIO()
    call_command("size", str(path), "--gpu", gpu, "--format", "json", stdout=out)
    (row,) = json.loads(out.getvalue())["candidates"]
    return row


@pytest.mark.django_db
@pytest.mark.xfail(strict=True, reason=RF_037A_REASON)
def test_yolov8s_800px_t4_first_epoch_on_the_pre_release(bundled_catalog, tmp_path):
    ours = _reserved_gb(_size_image(tmp_path, RF_037A_SPEC, "t4"))
    assert ours == pytest.approx(6.69, abs=0.01)
    error = _error(ours, 11.9)
    assert abs(error) <= IMAGE_MEMORY, f"{ours:.3g} GB vs 11.9G ({error:+.1%})"
