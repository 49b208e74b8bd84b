"""Issue 26, outside audit at stop 43 (aud43l): lora43's eager adapter-kernel term and accel43's Gaudi 2 fp8 split.

Cases of my own choosing that no test of the project had, sized the way `manage.py size` sizes them
(`size_spec_document`, calibration off). Tolerance: the issue's 15% on speed. Misses are strict xfails with the
published figure, ours, and the diagnosis.

Sources:
  [QWEN]   QwenLM/Qwen @03cd81f5e4da6ab60fc8f97f3b8aa1206fdb08a9 README.md "Profiling of Memory and Speed": one
           A100-SXM4-80G, CUDA 11.8, PyTorch 2.0, FlashAttention 2, HF PEFT, batch 1, gradient accumulation 8,
           s/it at 256 / 512 / 1,024 / 2,048 / 4,096 / 8,192 tokens. Rows used here, none used by any test before:
             1.8B LoRA   1.0 / 1.0 / 1.1 / 1.7 / 3.3 / 6.8
             7B   LoRA   1.2 / 1.5 (256 / 512 only; 1k-8k are lora43's fit rows)
             14B  LoRA   1.6 / 2.4 (256 / 512 only; same)
             7B   Q-LoRA 3.0 / 3.0 / 3.5 / 7.0 / 11.6 / 22.3
             72B  Q-LoRA (one GPU) 27.4 / 31.5 / 41.4 / 59.5 / 97.7 / 179.8
           Qwen-1.8B config.json: hidden 2,048, 24 layers, 16 heads (no GQA), intermediate_size 11,008 of which
           QWenMLP uses 11,008 / 2 = 5,504 a projection, vocabulary 151,936.
  [GAUDI]  intel.com/content/www/us/en/developer/platform/gaudi/model-performance-gaudi2-training.html at SynapseAI
           1.19.0 (PyTorch 2.5.1): "LLaMA V2 7B | 8 | 4096 | FP8 | 1024 | 70523" tokens/s (1.18: 68,464). The
           project tests the 13B, 3.1 70B and 3.1 8B rows of 1.19, not this one.
"""

from __future__ import annotations

import pytest

from procurement.api.sizing import size_spec_document
from procurement.sizing.gpus import gpu_by_slug
from procurement.sizing.spec import parse_workload_spec
from tests.procurement.outside.test_outside_recommendations import (
    QWEN_SHAPES,
    candidate,
    gaudi2_intel_plan,
    qwen_lora_spec,
)

A100 = "a100-sxm4-80gb"
QWEN_1_8B = {
    "preset": "llama-2-7b",
    "num_layers": 24,
    "hidden_size": 2048,
    "num_attention_heads": 16,
    "num_key_value_heads": 16,
    "intermediate_size": 5504,
    "vocab_size": 151936,
    "name": "Qwen-1.8B",
}
QWEN_7B = {"preset": "llama-2-7b", "vocab_size": 151936, "name": "Qwen-7B"}  # as lora43's fit models it
MODELS = {"1.8b": QWEN_1_8B, "7b": QWEN_7B, "14b": QWEN_SHAPES["14b"], "72b": QWEN_SHAPES["72b"]}


def tokens_per_second(spec: dict, gpu: str = A100, gpus: int = 1) -> float:
    report = size_spec_document(spec, [gpu], calibrate=False)
    return candidate(report, gpu, gpus)["throughput"]["training_tokens_per_second"]


def published_tokens_per_second(seq: int, seconds_a_step: float) -> float:
    return 8 * seq / seconds_a_step  # batch 1 x 8 accumulation on one GPU


# The floor the README's shortest rows show: at 256 tokens the 1.8B / 7B / 14B LoRA steps take 1.0 / 1.2 / 1.6 s,
# 125 / 150 / 200 ms a micro-batch over 24 / 32 / 40 layers = 5.2 / 4.7 / 5.0 ms a layer, the same a layer whatever
# the width (2,048 to 5,120) while the FLOPs a layer grow 5.6x: a host-side cost a layer (eager HF modules + PEFT,
# ~5 ms, against lora43's 98 x 31 us = 3.04 ms of adapter kernels only), which the GPU's work hides once it is the
# longer (a max, not a sum): the 1.8B's 1k step (1.1 s) is 10% above its 256-token floor although its compute at
# lora43's 0.56 is 0.44 s of it. The engine adds 3.04 ms a layer to the compute (a sum): too little on a narrow
# model at short lengths, too much on a wide one.
HOST_FLOOR = (
    "the README's 256-token LoRA steps put a floor of ~5 ms a layer and micro-batch under every width (1.8B / 7B / "
    "14B: 5.2 / 4.7 / 5.0 ms; lora43 charges 98 x 31 us = 3.04 ms of adapter kernels only, added to the compute "
    "where the rows say the larger of the two)"
)
QWEN_1_8B_STEPS = {256: 1.0, 512: 1.0, 1024: 1.1, 2048: 1.7, 4096: 3.3, 8192: 6.8}
# fixrev43: lora43's term and 0.56 refit reverted (this audit's findings): the engine prices these rows at the A100
# LoRA row's 0.47 with no host time at all, so every short row runs at its compute alone. aud43l's floor taken as a
# max (8 micro-batches x layers x ~5 ms: 1.8B ~1.0 s, 7B 1.2 s, 14B 1.6 s a step) would land the 256-token rows (they
# define it: circular), the 1.8B at 512 (1.0 s, 0%) and 1k (1.0 s, +10%); not the 1.8B at 2k-8k (compute 1.08 /
# 2.35 / 5.41 s, above the floor: the 2,048-wide model needs 0.47 x 5.41 / 6.8 = 0.37 of peak at 8k, the width
# dependence NARROW_LONG names) nor the 7B at 512 (1.20 s against 1.5; the floor 1.2 s: +25% either way). Not
# adopted here: a host floor needs a spec field for the adapter stack (eager / fused / compiled) to reach every card.
NO_HOST = (
    "fixrev43 (lora43 reverted after this audit): the A100 LoRA row's 0.47 and no host time, the step is its compute "
    "alone"
)
NARROW_LONG = (
    "and at 4k / 8k, where the fixed part is under a quarter of the step (23% / 11%), the 2,048-wide model's compute runs at "
    "~0.41 of the A100's peak where lora43's fit on 4,096 / 5,120-wide Qwen-7B / 14B gives 0.56: the A100 LoRA row "
    "carries no width dependence (mfu.width_ceiling does not bind at d 2,048 against 0.56), lora42's width form was "
    "left out, and the row's scoping to 'the A100' is a scoping to 7B-14B widths"
)
HOST43 = (
    "host43: the eager-PEFT host floor (lora_host.py, counted: 66 forward kernels a layer twice under full "
    "recomputation at 31 us + 86 backward at 7 us = 4.69 ms a layer and micro-batch, 0.90 s a step on the 1.8B) taken "
    "as the larger of it and the compute"
)
# Was a strict xfail [256]: 16,309 tokens/s against 2,048 (+696%; step 0.13 s against 1.0). Now 2,272.4 (+11.0%;
# step 0.90 s) because the eager PEFT step runs at the larger of its GPU work and its host's kernels (lora_host.py).
# Was a strict xfail [512]: 16,129 against 4,096 (+294%). Now 4,544.8 (+11.0%; step 0.90 s), same class fix.
LW44_WIDTH = (
    "lw44: the A100 LoRA row now scales with width (efficiency.measured_width_factor: (1 + 621 / 4,096) / (1 + 621 / "
    "d), k from llm-foundry's MPT A100 sweep, anchored at the row's Qwen-7B; x 0.884 at d 2,048: 0.416 of peak)"
)
# Was a strict xfail [8192]: 12,107 tokens/s against 9,638 (+25.6%; step 5.41 s against 6.8), the row fitted on the
# 4,096-wide Qwen-7B applied unchanged at d 2,048. Now 10,698.7 (+11.0%; step 6.13 s) because lw44 scales the row by
# the Ampere width form (efficiency.measured_width_factor, x 0.884 at d 2,048, k 621 from llm-foundry's A100 sweep);
# 10,732.2 (+11.4%; step 6.11 s) once the spec states the run's Qwen-1 targets (QWEN1_AS_RUN).
QWEN1_AS_RUN = (
    "lw44, stated as the README ran it (qwen_lora_spec: Qwen-1 targets c_attn, c_proj, w1, w2 and lora_dropout 0.05 "
    "from QwenLM/Qwen finetune.py, model.eager_layer qwen1; it was an all-linear Llama layer, aud44 flag 6): the "
    "eager-PEFT floor counts 61 forward kernels a layer twice at 31 us + 77 backward at 7 us = 4.321 ms a layer and "
    "micro-batch (the all-linear Llama count 4.694)"
)
QWEN1_FLOOR_SHORT = (
    "the README's 256 / 512-token steps put the floor at 1.0 s / 8 micro-batches / 24 layers = 5.2 ms a layer on the "
    "1.8B (7B 4.7, 14B 5.0 ms): the count is 17% short on the 1.8B. Candidates, none sized: kernels the count leaves "
    "out (a Qwen-1 layer counted from modeling_qwen.py gives 57 + 74 kernels, 4.05 ms, fewer still: "
    "test_the_floor_for_the_readmes_qwen1_run_matches_a_qwen1_layers_count), PEFT's Python dispatch a module beyond "
    "its kernels, and the 31 / 7 us host rates, fitted on other runs (lora_host); UNEXPLAINED. Passing before only "
    "because the spec stated 7 adapted Llama linears the run did not have. cls45c: unchanged, host-bound (the phase "
    "bound, forward host 0.36 s plus the GPU's work after it, is under the 0.83 s floor). Sharpened: the measured "
    "floor against the adapters a layer is ~4.0 ms + ~0.19 ms an adapter (ms-swift, c_attn only, 4.22 ms; the "
    "README, 5 adapted linears, 4.7-5.2, mean 4.97) where the count gives ~2.5 + 0.36 ms: a per-layer host cost of ~1.5 ms that "
    "does not depend on the adapters is missing (candidates, unsized: HF's reentrant torch.utils.checkpoint wrapper a "
    "layer, its RNG-state fork and nested autograd.backward; QWenBlock's Python) and the per-adapter cost is "
    "overcounted; the one-decimal steps (+-0.05 s, +-0.26 ms a layer on the 1.8B) allow no finer fit"
)
# relabelB48 (stop 48): every reason below starts with its label (explain-rules); the facts are unchanged and
# each gains a STOP48_* sentence. None is EXPLAINED: no source sizes the short rows' per-layer host cost or the
# 2,048-wide model's steeper width curve.
STOP48_FLOOR = (
    ". relabelB48 (stop 48): label set, figure unchanged. Ruled out again: the GPU work (under the floor at these "
    "lengths), more kernels (Qwen-1's own count is fewer, 4.05 ms), the adapters (the ms-swift c_attn-only run "
    "measures 4.22 ms a layer against the README's 5 adapted linears' 4.7-5.2, so most of the cost is not "
    "theirs). Best lead: a ~1.5 ms per-layer host cost independent of the adapters; sizing it needs a measured "
    "eager-PEFT step on an A100 (a profile of one Qwen-1 layer under HF checkpointing), which no source publishes"
)
STOP48_WIDTH = (
    ". relabelB48 (stop 48): label set, figure unchanged. Ruled out: the host floor (GPU-bound here, the phase "
    "bound moves neither row beyond cls45c), the kernel count (the Qwen-1 count is fewer). Best lead: the steeper "
    "width curve the ms-swift 1.8B / 7B ratios ask for (k ~3,400-3,500 against the MPT sweep's 621; "
    "test_outside_lora_width_audit_stop44, UNEXPLAINED), blocked by the README's 14B 512 row and without a source "
    "for its sum form"
)
# lora48: fp32 adapters under torch autocast, as the README's single-GPU LoRA run had them (qwen_lora_spec states
# lora.adapter_dtype fp32: finetune_lora_single_gpu.sh runs --bf16 without DeepSpeed, so Accelerate wraps the forward
# in torch.autocast; peft 0.5.0 keeps lora_A / lora_B in fp32): PEFT's x.to(fp32) (Python, 31 us) and autocast's 3
# casts (7 us) each forward pass, 4 cast gradients backward (7 us), 5 adapters a layer: 61 + 5 = 66 forward kernels
# twice at 31 us + 15 twice and 77 + 20 backward at 7 us = 4.980 ms a layer and micro-batch (lora_host, counted, not
# fitted). Was a strict xfail [256]: 2,468.6 tokens/s against 2,048 (+20.5%; step 0.83 s, the floor, against 1.0: the
# count 17% short of the README's 5.2 ms a layer, QWEN1_FLOOR_SHORT, UNEXPLAINED). Now 2,141.5 (+4.6%; step 0.956 s,
# the floor) because the fp32 adapters' casts are counted (lora48, FP32_ADAPTER_* in lora_host: peft v0.5.0
# update_layer / Linear.forward, Accelerate v0.21.0 prepare_model's autocast). Was a strict xfail [512]: 4,937.1
# (+20.5%, same reason). Now 4,282.9 (+4.6%; step 0.956 s), same mechanism. Held out: the 7B / 14B 256 / 512 rows
# (7B 256 +8.5 -> -5.9%, 7B 512 +14.3 -> +8.8%, 14B 256 +15.7 -> +0.4%, 14B 512 +9.0% unchanged); every longer LoRA row
# of the table is GPU-bound and does not move but the 1.8B 1k / 2k (below).
# fix48l (after aud48l): PEFT's x.to(fp32) is one bare op issued from Python inside a forward whose module Python is
# already counted: priced at optimizer_op_host_s (7 us, pytorch/pytorch issue #41383) instead of eager_kernel_host_s
# (31 us, a diffusers calibration carrying per-module Python): 61 forward kernels twice at 31 us + 20 casts twice and
# 97 backward at 7 us = 4.741 ms a layer. The 7 us of the C++-issued casts and cast gradients is an ASSUMPTION (#41383
# measures a Python-issued op; about 1 us of it is C++), not a measurement; the counts are read from the code. [256]
# now 2,249.9 (+9.9%; was 2,141.5, +4.6%), [512] 4,499.8 (+9.9%), 14B 256 1,349.9 (+5.5%): still FIXED. Held out:
# 7B 256 -1.1%, 7B 512 +11.3% (was +8.8%), 14B 512 unchanged. The 1.8B rows' peft is INFERRED, not shown: they entered
# the README at @e8e15962 (2023-11-30), four weeks after peft 0.6.0 (02f0a4ca, 2023-11-02); the README's
# "peft>=0.5.0,<0.6.0" line (l. 419-420) is the auto-gptq compatibility note, not the profiling environment, and the
# same commit's docker/Dockerfile installs peft unpinned (0.6.2 that day: bf16 adapters, no casts, the rows back at
# +20.5%). The 7B / 14B rows (@e6f2a7a, 2023-10-11) predate peft 0.6.0.
FIX48L_FP32 = (
    ". fix48l: PEFT's x.to(fp32) priced as a bare op at 7 us (pytorch issue #41383) not 31 us; the 7 us of "
    "autocast's C++-issued casts is an assumption; 4.741 ms a layer: "
)
LORA48_FP32 = (
    ". lora48: with the run's fp32 adapters under autocast counted (lora.adapter_dtype fp32, qwen_lora_spec; "
    "lora_host FP32_ADAPTER_*: 4.980 ms a layer against 4.321), "
)
QWEN_1_8B_MISSES = {
    1024: f"UNEXPLAINED: {NO_HOST}: ours 15,779 against 7,447 (+111.9%; step 0.52 s against 1.1). {HOST43}: 9,089.6 (+22.1%; "
    f"step 0.90 s, the floor) against the README's 1.1 s, which is 10% above its own 256-token floor while the "
    f"compute (0.52 s) is half of it: the host and the GPU do not overlap perfectly near the crossover (a max is "
    f"the ideal); UNEXPLAINED by a sized term. {QWEN1_AS_RUN}: 9,874.3 (+32.6%; step 0.83 s, the floor)"
    f"{STOP48_FLOOR}; and the README's 1k step (1.1 s) is 0.1 s above its own 256 / 512 floor where a max of "
    "host and GPU work gives none: the overlap near the crossover is not sized either"
    f"{LORA48_FP32}8,565.9 (+15.0%, 0.02% past the bar; step 0.956 s, the floor, against 1.1): the 256 / 512 rows' "
    "floor now lands (+4.6%); what is left is the README's 1k step 0.1 s above its own 256 / 512 floor (the overlap "
    "near the crossover, unsized): UNEXPLAINED. That +15.0% was fragile (15.02%, 0.02% past the bar: any small "
    f"change flipped it, aud48l){FIX48L_FP32}8,999.5 (+20.8%; step 0.910 s, the floor, against 1.1): the same 0.1 s "
    "overlap gap, no longer at the edge: UNEXPLAINED",
    2048: f"UNEXPLAINED: {NO_HOST}: ours 15,124 against 9,638 (+56.9%; step 1.08 s against 1.7; passed under lora43, +13.5%): "
    f"the compute is above the ~0.90 s floor ({HOST43}: unchanged), so the floor does not explain it: UNEXPLAINED "
    f"in the engine's terms, {NARROW_LONG}. {LW44_WIDTH}: 13,364.5 (+38.7%; step 1.23 s against 1.7): the width "
    "term sizes a third of the miss; the rest sits where the step is near the host floor (0.90 s), as at 1k: "
    f"UNEXPLAINED. {QWEN1_AS_RUN}: 13,416.7 (+39.2%; step 1.22 s). cls45c: 13,089.5 (+35.8%; step 1.25 s) once HF "
    "Trainer's per-micro-batch sync adds the host-bound forward (0.36 s against 0.33 s of its GPU work) to the GPU's "
    "work after it (0.89 s); the rest is the width gap of the 4k / 8k rows (the 7B's 2k row is +4.9%): UNEXPLAINED"
    f"{STOP48_WIDTH}{LORA48_FP32}12,587.4 (+30.6%; step 1.302 s, the phase bound: the forward's host time grows by "
    f"PEFT's and autocast's casts): the width gap is the rest: UNEXPLAINED{FIX48L_FP32}12,814.3 (+33.0%; the "
    "phase bound, the forward's host time a little shorter): UNEXPLAINED",
    4096: f"UNEXPLAINED: {NO_HOST}: ours 13,964 against 9,930 (+40.6%; step 2.35 s against 3.3; lora43 +28.8%; host43 unchanged, "
    f"GPU-bound): UNEXPLAINED in the engine's terms, {NARROW_LONG}. {LW44_WIDTH}: 12,339.6 (+24.3%; step 2.66 s "
    "against 3.3), GPU-bound: the README's 4k step is nearly half its 8k step (3.3 against 6.8), so its 2,048-wide "
    "compute runs at ~0.33 of peak where the width form gives 0.416 and the 8k row ~0.37: UNEXPLAINED beyond the "
    f"width term. {QWEN1_AS_RUN}: 12,384.1 (+24.7%; step 2.65 s){STOP48_WIDTH}{LORA48_FP32}unchanged (GPU-bound: "
    "the casts are host time): UNEXPLAINED",
}


@pytest.mark.parametrize(
    "seq",
    [
        pytest.param(seq, marks=pytest.mark.xfail(strict=True, reason=QWEN_1_8B_MISSES[seq]))
        if seq in QWEN_1_8B_MISSES
        else seq
        for seq in QWEN_1_8B_STEPS
    ],
)
@pytest.mark.django_db
def test_qwen_1_8b_lora_on_one_a100_at_the_readmes_speed(seq, bundled_catalog):
    # Held out of lora43 (never fitted): the narrowest model of the same table, where a per-layer fixed cost weighs
    # most. 1k +7.7% and 2k +13.5% passed under lora43; fixrev43: all six out (NO_HOST).
    published = published_tokens_per_second(seq, QWEN_1_8B_STEPS[seq])
    assert tokens_per_second(qwen_lora_spec(QWEN_1_8B, seq, 1)) == pytest.approx(published, rel=0.15)


QWEN_SHORT_STEPS = {("7b", 256): 1.2, ("7b", 512): 1.5, ("14b", 256): 1.6, ("14b", 512): 2.4}
# Was a strict xfail [7b-256]: 3,444 tokens/s against 1,707 (+101.8%; step 0.59 s against 1.2). Now 1,704.3 (-0.1%;
# step 1.20 s) because the eager PEFT step runs at the larger of its GPU work and its host's kernels (lora_host.py:
# 32 layers x 4.69 ms x 8 micro-batches). Was a strict xfail [14b-256]: 1,817 against 1,280 (+42.0%; step 1.13 s
# against 1.6). Now 1,363.4 (+6.5%; step 1.50 s), same class fix. lw44 (QWEN1_AS_RUN): 7B 256 1,851.4 (+8.5%; step
# 1.11 s, the floor), 14B 512 1,860.5 (+9.0%); 14B 256 falls out again (below).
# Was a strict xfail [14b-256]: 1,481.1 tokens/s against 1,280 (+15.7%; step 1.38 s, the floor, against 1.6: the
# README's 5.0 ms a layer against the count's 4.32, QWEN1_FLOOR_SHORT, UNEXPLAINED). Now 1,284.9 (+0.4%; step 1.594 s,
# the floor: 40 layers x 8 x 4.980 ms) because the run's fp32 adapters under autocast are counted (lora48,
# lora.adapter_dtype fp32: peft v0.5.0's x.to(fp32), autocast's 3 casts a pass, 4 cast gradients; lora_host).
# fix48l: with the x.to at a bare op's 7 us (issue #41383; the C++ casts' 7 us an assumption), 1,349.9 (+5.5%; 40 x 8 x
# 4.741 ms): still FIXED.
QWEN_SHORT_MISSES: dict[tuple[str, int], str] = {}
# Was a strict xfail [7b-512]: 3,430.8 tokens/s against 2,730.7 (+25.6%; step 1.19 s against 1.5, the GPU's work just
# above the 1.11 s whole-step host floor; fixrev43 +25.3%, host43 +24.8%, lora43 -15.8%). Now 3,120.9 (+14.3%; step
# 1.31 s) because HF Trainer reads each micro-batch's loss on the host before the next starts (_inner_training_loop's
# NaN filter, torch.isnan(tr_loss_step) or torch.isinf(tr_loss_step): a device-to-host sync), so the eager forward's
# host time (32 layers x 8 micro-batches x 61 kernels x 31 us = 0.48 s, above its 0.37 s of GPU work) and the GPU's
# recompute-and-backward after it (0.83 s) add up instead of hiding under one max (lora_host "Synchronised
# micro-batches", throughput.forward_share). Counted, nothing fitted; held out on this table's other LoRA rows
# (1.8B 256-8k, 7B 256 and 1k-8k, 14B 256 / 512 / 1k-8k, Q-LoRA 7B / 72B): none moves but the 1.8B at 2k (+39.2 ->
# +35.8%, still a strict xfail), where the forward is host-bound too.


@pytest.mark.parametrize(
    ("size", "seq"),
    [
        pytest.param(*key, marks=pytest.mark.xfail(strict=True, reason=QWEN_SHORT_MISSES[key]))
        if key in QWEN_SHORT_MISSES
        else key
        for key in QWEN_SHORT_STEPS
    ],
)
@pytest.mark.django_db
def test_qwen_lora_short_sequences_on_one_a100(size, seq, bundled_catalog):
    # The fit models' shortest rows, left out of lora43's fit (1k-8k) and of every test: the lengths where the per-layer
    # term is the largest share of the step. 7B at 256: -6.0% under lora43 (passed); fixrev43: +101.8% (a strict xfail).
    # 14B at 512: Was a strict xfail: 1,425 tokens/s against 1,707 (-16.5%; step 2.87 s against 2.4, lora43's 3.04 ms
    # a layer added to the compute). Now 1,808 (+5.9%; step 2.27 s) because lora43's term and refit were reverted
    # (fixrev43): its compute at 0.47 alone is above the ~1.6 s floor.
    published = published_tokens_per_second(seq, QWEN_SHORT_STEPS[(size, seq)])
    assert tokens_per_second(qwen_lora_spec(MODELS[size], seq, 1)) == pytest.approx(published, rel=0.15)


# Q-LoRA on the same card, stack and table. Before qlora44 the engine priced it at the A100's card default with a 30% proportional
# dequantization overhead (assumptions.qlora_dequant_overhead, "estimate") and without lora43's term. The README's
# Q-LoRA minus LoRA step, same model and length, is a fixed cost a micro-batch, not a share: 7B 1.8 / 1.5 / 0.7 / 1.8
# / 1.5 / 1.0 s a step from 256 to 8k (~190 ms a micro-batch), 14B 3.7 / 3.9 / 3.8 / 3.4 / 3.1 / 2.3 s (~440 ms): ~30
# ms a micro-batch per billion NF4 weights (dequantized for the forward, the recomputed forward and the backward),
# whatever the length. At 8k that is +5% on the 7B (22.3 against 21.3 s) where the engine charges +30% and a lower
# efficiency (its 7B Q-LoRA step 34.7 s against its LoRA step 19.9 s, 1.75x; the README's 1.05x).
QWEN_QLORA_STEPS = {
    ("7b", 1024): 3.5,
    ("7b", 2048): 7.0,
    ("7b", 4096): 11.6,
    ("7b", 8192): 22.3,
    ("72b", 256): 27.4,
    ("72b", 512): 31.5,  # lora46: held-out rows of the same README line, no test had them
    ("72b", 1024): 41.4,
    ("72b", 2048): 59.5,  # lora46, held out
    ("72b", 4096): 97.7,  # lora46, held out
    ("72b", 8192): 179.8,
}
# qlora44: the README's Q-LoRA is GPTQ int4, not bitsandbytes NF4: QwenLM/Qwen finetune.py loads the Int4 model with
# GPTQConfig(bits=4, disable_exllama=True), so AutoGPTQ's qlinear_cuda_old unpacks every weight by eager PyTorch ops
# (16.5 bytes a weight, forward and recomputed forward; procurement/sizing/qlora_dequant.py counts them). The spec
# states weight_quantization int4; the engine charges that traffic a micro-batch at the card's achieved bandwidth
# (0.70 x 2,039 GB/s: 23.1 ms per billion weights a micro-batch, the README's Q-LoRA minus LoRA steps ~30) and runs the
# GEMMs at the A100's LoRA row (0.47). Nothing fitted on these rows.
# lora46: the unpacking runs at the rate AutoGPTQ's eager path reaches on this card, measured at the version the README
# ran (huggingface/optimum @0963862 tests/benchmark/README.md, prefill-only, Llama-2-13B on one A100-SXM4-80GB:
# autogptq-cuda-old minus fp16 = 271.75 ms for one pass over 12.688e9 weights at 16.5 B = 0.378 of 2,039 GB/s;
# assumptions.GPTQ_EAGER_UNPACK_BANDWIDTH), not at the streaming 0.70: 7B 0.277 s, 14B 0.540 s, 72B 2.99 s a
# micro-batch (2 passes). Fit rows: optimum's table only; these rows are held out.
# Was a strict xfail [72b-256] (qlora44's QWEN_72B_SHORT, UNEXPLAINED): 110.6 tokens/s against 74.7 (+48.0%; step
# 18.5 s against 27.4), the unpacking charged 1.61 s a micro-batch at 0.70 where the row needs ~2.7 s ("0.42 of the
# peak bandwidth"; the caching allocator near the card's limit was the unsized candidate). Now 69.4 (-7.2%; step
# 29.5 s) because the unpacking runs at optimum's measured 0.378 (2.99 s a micro-batch).
# Was a strict xfail [72b-1024] (lw44, UNEXPLAINED, same shortfall): 230.5 against 197.9 (+16.5%; step 35.5 s). Now
# 176.0 (-11.0%; step 46.5 s), same mechanism.
QWEN_QLORA_MISSES = {
    ("7b", 1024): (
        "UNEXPLAINED: lora46 (new strict xfail; passing before at -3.2%, 2,265.7 tokens/s, step 3.616 s): ours "
        "1,767.0 tokens/s against 2,340.6 (-24.5%; step 4.636 s against 3.5) once AutoGPTQ's eager unpacking runs at "
        "the rate optimum's prefill table measures for it (0.378 of 2,039 GB/s: 2 passes x 16.5 B x 6.476e9 weights "
        "= 0.277 s a micro-batch, 2.22 s a step; 1.20 s at the 0.70 it had). The README's own rows put this cell off "
        "its neighbours: Q-LoRA minus LoRA is 1.8 / 1.5 / 0.7 / 1.8 / 1.5 / 1.0 s at 256 / 512 / 1k / 2k / 4k / 8k "
        "(7B LoRA 1.2 / 1.5 / 2.8 / 5.2 / 10.1 / 21.3 s, Q-LoRA 3.0 / 3.0 / 3.5 / 7.0 / 11.6 / 22.3 s): from 512 to "
        "1k the Q-LoRA step grows 0.5 s where LoRA's, with the same GEMMs, attention and adapters, grows 1.3 s, and "
        "from 1k to 2k 3.5 s against LoRA's 2.4 s; an unpacking flat in the tokens (optimum: 271.75 -> 324.47 ms a "
        "pass from 512 to 8,192 tokens, rising) cannot dip 0.8 s at 1k alone (one-decimal steps: +-0.2 s on a "
        "difference). The same table's 256 / 512 / 2k Q-LoRA rows land (+6.7 / -12.1 / -2.4%). Also unmodelled: "
        "the README's gap falls at long lengths (7B 1.0 s, 14B 2.3 s at 8k against 3.7-3.9 s at 256-1k on the "
        "14B), which a per-pass rate measured flat in tokens does not give; not a spec field. fix46l, evidence that "
        "the 3.5 s cell is the outlier (aud46l's lead, re-read): the same README's first table of the same run "
        "(QwenLM/Qwen @ee5350521ede55e6d64f2fb619e84f99262084b1, 2023-10-08, one A100-SXM4-80G, CUDA 11.8, PyTorch 2.0, "
        "batch 1 x 8) has 7B Q-LoRA 3.0 / 3.6 / 4.8 / 7.3 s and LoRA 1.6 / 1.6 / 2.9 / 5.5 s at 256 / 512 / 1k / 2k, "
        "a Q-LoRA minus LoRA of 1.4 / 2.0 / 1.9 / 1.8 s, flat as a per-micro-batch unpacking is; ours on its 1k cell "
        "4.64 s against 4.8 (step -3.4%, tokens/s +3.5%; test_outside_gptq_qlora_audit_stop46, passing). The table this case reads replaced it at e6f2a7a "
        "(2023-10-11), whose only stated change is 'Flash attention 2 is applied': LoRA 1k moved 2.9 -> 2.8 s (-0.1) "
        "and Q-LoRA 1k 4.8 -> 3.5 s (-1.3), though the two runs' attention is the same work, so FlashAttention 2 "
        "accounts for about 0.1 s of the 1.3 (LoRA 512 / 2k moved -0.1 / -0.3 s, Q-LoRA 512 / 2k -0.6 / -0.3 s). Not "
        "EXPLAINED: (b) holds (the arithmetic above) and (c) is nothing a spec could state, but (a) does not: no "
        "source names what made the re-measured 1k cell 1.2 s faster than the attention change allows"
    ),
    ("72b", 4096): (
        "UNEXPLAINED: lora46 (new held-out row of the README's 72B Q-LoRA line; at the old 0.70 it read 306.8 tokens/s, "
        "-8.5%): ours 278.2 tokens/s against 335.4 (-17.1%; step 117.8 s against 97.7) with the GPTQ unpacking at "
        "optimum's measured 0.378 (23.9 s a step); the rest of the step, 93.9 s, against at most 97.7 - 23.9 = 73.8 s "
        "(1.27x): the 72B GEMMs' width gap, as at 8k (below) and in the 72B ZeRO-3 LoRA 4k / 8k rows "
        "(test_outside_recommendations, -11.3 / -18.0%); the same line's 512 / 2k rows pass (-10.4 / -14.7%); not a "
        "spec field"
    ),
    ("72b", 8192): (
        "UNEXPLAINED: lora46 (new strict xfail; passing before at -14.2%, 312.6 tokens/s, step 209.6 s, by "
        "compensation): ours 297.0 tokens/s against 364.5 (-18.5%; step 220.6 s against 179.8) once the GPTQ "
        "unpacking runs at optimum's measured 0.378 of the bandwidth (2 x 16.5 B x 69.8e9 weights = 2.99 s a "
        "micro-batch, 23.9 s a step; 12.9 s at the 0.70 it had), which lands this table's 72B 256 / 1k rows "
        "(-7.2 / -11.0%). Left here: the rest of the step, 196.7 s, against at most 179.8 - 23.9 = 155.9 s (1.26x): "
        "the 72B's GEMMs at the A100 LoRA row (0.47 x the width factor 1.070 at d 8,192) where the README's 72B "
        "steps imply ~0.66 of the peak, the width gap of the 72B ZeRO-3 LoRA 8k row (test_outside_recommendations "
        "ZERO3_LONG, -18.0%) and of kfit44's width constant; the README's Q-LoRA minus LoRA gap also falls at 8k "
        "(14B 2.3 s against 3.8 s at 1k), unmodelled; not a spec field"
    ),
}


@pytest.mark.parametrize(
    ("size", "seq"),
    [
        pytest.param(*key, marks=pytest.mark.xfail(strict=True, reason=QWEN_QLORA_MISSES[key]))
        if key in QWEN_QLORA_MISSES
        else key
        for key in QWEN_QLORA_STEPS
    ],
)
@pytest.mark.django_db
def test_qwen_qlora_on_one_a100_at_the_readmes_speed(size, seq, bundled_catalog):
    # Passing before qlora44 (NF4 assumed, 30% of the step): 7B 1k -5.5%, 2k -7.7%; 72B 1k +11.7%. qlora44, stated
    # as run (GPTQ int4, finetune.py's GPTQConfig(bits=4, disable_exllama=True)): 7B 1k -3.3%, 2k +13.6%; 72B 1k
    # +11.4%. Was a strict xfail [7b-4096]: 2,060 tokens/s against 2,825 (-27.1%), the 30% share on the card
    # default. Now 2,822.1 (-0.1%) because the unpacking is a time a micro-batch (qlora_dequant.py, 16.5 bytes a
    # weight x 2 passes) and the GEMMs run at the A100 LoRA row. Was a strict xfail [7b-8192]: 1,886 (-35.8%). Now
    # 2,737.0 (-6.9%), same change. Was a strict xfail [72b-8192] (QWEN_72B_LONG): 292.9 against 364.5 (-19.6%), the
    # width gap of the 72B LoRA rows. Now 312.6 (-14.2%; step 209.6 s against 179.8) because lw44 scales the A100 LoRA
    # row by the Ampere width form (x 1.070 at d 8,192, efficiency.measured_width_factor). lora46 (optimum's measured
    # GPTQ unpacking rate, 0.378): 7B 2k / 4k / 8k +13.8 / +0.1 / -6.7% -> -2.4 / -8.0 / -10.5% (passing); 7B 1k
    # and 72B 8k fall out (strict xfails above); 72B 256 / 1k come in. Held-out rows added by lora46 (the README's
    # 72B line, never tested): 512 published 130.0, ours 116.5 (-10.4%; +30.4% at the old 0.70); 2k 275.4, ours
    # 235.0 (-14.7%; +1.3% at 0.70); 4k 335.4, ours 278.2 (-17.1%, strict xfail; -8.5% at 0.70).
    spec = qwen_lora_spec(MODELS[size], seq, 1, qlora=True) | {"task": "qlora", "weight_quantization": "int4"}
    published = published_tokens_per_second(seq, QWEN_QLORA_STEPS[(size, seq)])
    assert tokens_per_second(spec) == pytest.approx(published, rel=0.15)


@pytest.mark.django_db
def test_gaudi2_llama2_7b_at_synapseai_1_19(bundled_catalog):
    # [GAUDI] 1.19: 70,523 tokens/s on 8 HPU (the 1.18 figure, 68,464, is the project's held-out check of accel43's
    # split). Ours 62,319.5 (-11.6%): inside, and further out than at 1.18 (-9.0%); before accel43's split the
    # engine gave 66,434.9 (-5.8% here). fixrev43: the split reverted (one efficiency, 0.45): 66,434.9 (-5.8%) again;
    # the arithmetic below is accel43's. By hand (data parallel, no TP traffic): fp8 linears 6 x 6.477e9 FLOPs a
    # token / (8 x 0.51 x 865e12) = 11.01 us, bf16 output layer 6 x 0.131e9 + causal attention 3 x 1.074e9 =
    # 4.008e9 / (8 x 0.23 x 432e12) = 5.04 us: 16.05 us a token, 62,300 tokens/s (the engine charges no recompute
    # of the attention core under selective checkpointing on this row; with it, 57,460, -18.5%).
    spec = gaudi2_intel_plan("llama-2-7b", 8, 1, 1, 4096, 2, 1024)
    assert tokens_per_second(spec, "gaudi2", 8) == pytest.approx(70_523, rel=0.15)


# --- Defects pinned (not published cases): one software stack, different answers by card -------------------------
# lora43 charges the eager adapter kernels only where the card's efficiency is ADAPTER_KERNEL_ROWS' measured row
# (the A100 80GB SXM). The cost is the host's (it does not scale with the GPU; the README's floor above is the same a
# layer at every width), so the same HF PEFT run on an A100 PCIe 80GB (the same GA100 die and 312 TFLOPS), an
# H100 or an L40S gets none of it, with their card defaults fitted on fused stacks. The engine's Qwen-7B LoRA
# (README settings) on the A100 PCIe over the A100 SXM: step 0.63x at 256 tokens (the PCIe "faster"), 1.16x at 1k,
# 1.54x at 8k; H100 SXM over A100 SXM: 6.4x faster at 256 tokens, 3.5x at 1k, 2.6x at 8k, where the host floor
# alone (~5 ms a layer, 1.28 s a step at 256 tokens) caps an eager H100 near the A100's step at short lengths.
# fixrev43 (lora43 reverted): no card charges host time; A100 SXM over PCIe 1.343x and H100 over A100 SXM 3.00x at
# every length (efficiency and peak only: the SXM's measured 0.47 against the PCIe's generic 0.35).
SAME_STACK = (
    "lora43 scopes a host-side cost to one card's measured row (mfu.ADAPTER_KERNEL_ROWS): the same eager PEFT spec "
    "pays 31 us an adapter kernel on the A100 SXM and 0 on the A100 PCIe, H100 and L40S; the spec has no field for "
    "the adapter implementation (peft eager / fused / compiled) that would carry it to every card"
)


def host_time_clauses(spec, gpu) -> list[str]:
    """The clauses of the estimate's speed sentence (accelerators.speed_ratio) that charge host time beside the
    FLOPs (lora43's 'small kernels a layer at 31 us of host time'); fixrev43: mfu.adapter_kernel_seconds, which this
    compared before, went with lora43's revert, so the answer's own text is compared."""
    from procurement.sizing.accelerators import speed_ratio

    return [part for part in speed_ratio(spec, gpu)[1].split("; ") if "host time" in part]


def _lora_spec_object():
    return parse_workload_spec(qwen_lora_spec(QWEN_7B, 1024, 1))


# Was a strict xfail (SAME_STACK): 31 us an adapter kernel on the A100 SXM, 0 on the A100 PCIe, H100 and L40S. Now
# every card pays the same (none) because lora43's term was reverted (fixrev43); compared in the answer's speed text.
@pytest.mark.parametrize("gpu", ["a100-pcie-80gb", "h100-sxm5-80gb", "l40s"])
@pytest.mark.django_db
def test_the_same_peft_stack_pays_the_same_host_time_on_every_card(gpu, bundled_catalog):
    spec = _lora_spec_object()
    assert host_time_clauses(spec, gpu_by_slug(gpu)) == host_time_clauses(spec, gpu_by_slug(A100))


# Was a strict xfail [256]: SXM over PCIe 1.343x (efficiency and peak only). Now 1.000 (1,704.3 tokens/s on both)
# because the eager PEFT host floor (lora_host.py, 1.20 s a step) is the software's, charged on every card, and both
# cards. compute (0.59 / 0.79 s) runs under it.
# Was a strict xfail [8192]: SXM over PCIe 1.343x, the measured A100 LoRA row (0.47) keyed to the SXM's slug and the
# PCIe on the generic 0.35. Now 1.111 (2,886.9 against 2,598.2 tokens/s on the spec as run; 2,881.2 / 2,593.0 on the
# all-linear one) because lw44 keys the row to the die
# (efficiency.SAME_DIE_ROWS: GA100, 80 GB HBM2e) at the card's own 312 TFLOPS datasheet peak, times
# ga100_pcie_sustained_share 0.90 for its 300 W against 400 W (NVIDIA's launch rating of the PCIe A100 at 90% of the
# SXM4, AnandTech 15867): 0.47 x 0.90 = 0.423 of peak, 1 / 0.90 = 1.111 wherever the step is GPU-bound.
@pytest.mark.parametrize("seq", [256, 8192])
@pytest.mark.django_db
def test_a100_pcie_and_sxm_run_the_same_lora_within_25_percent(seq, bundled_catalog):
    spec = qwen_lora_spec(QWEN_7B, seq, 1)
    ratio = tokens_per_second(spec, A100) / tokens_per_second(spec, "a100-pcie-80gb")
    assert 1.0 <= ratio <= 1.25
    if seq == 8192:  # GPU-bound: the whole ratio is the sustained share
        assert ratio == pytest.approx(1 / 0.90, rel=1e-3)
