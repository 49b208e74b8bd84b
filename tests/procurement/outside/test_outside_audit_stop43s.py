"""Outside audit (aud43s) of serve43's context_phase_fixed_seconds_per_layer (110 us a layer, commit d8f1fed2):
time to first token = max(prompt FLOPs at the prefill efficiency, weight and KV reads + layers x 110 us) + the
prompt's all-reduces. Fitted on TensorRT-LLM v0.9.0's one-GPU FP8 Llama 2 7B / Mistral 7B first tokens at 128
tokens (tests/procurement/sizing/test_context_fixed_cost.py). Here: first tokens at 128 tokens that no other test
has, from the same publisher's tables (other models of the v0.9.0 table, and the v0.5 table's rows), run through
the engine as validate_sizing does. Tolerance: LLM speed 15%. Misses are strict xfails with numbers.

Sources (stored copies read with find_string / read_file; figures quoted where used):
  [TRT9] NVIDIA/TensorRT-LLM docs/source/performance.md at v0.9.0 ("All data was generated using version 0.9.0";
         find_string id 5995251461), "Low Latency", batch 1, "1st Token Latency (ms)" at "Input Length 128":
         H200 FP8: "GPT-J 6B | 1 | 1 | 128 | 5.0", "Mixtral 8x7B | 1 | 2 | 128 | 12.1",
                   "Falcon 180B | 1 | 4 | 128 | 36.4";
         H100 FP8: GPT-J 5.5, Mixtral (TP 2) 13.4, Falcon 180B (TP 4) 41.1;
         L40S FP8: GPT-J 12.4, Mixtral (TP 4) 19.5, Falcon 180B (TP 8) 91.0;
         A100 FP16: GPT-J 14.8, Mixtral (TP 2) 23.8, Falcon 180B (TP 8) 76.5.
         Model shapes from the same file's ckpt_config.json blocks: GPT-J 28 layers, 16 heads, hidden 4,096, vocab
         50,400, gelu (no gate); Falcon 180B 80 layers, 232 heads, 8 KV heads, hidden 14,848, vocab 65,024, gelu.
  [TRT5] the same file @77d24b5fa178f11ed7fafdd9833b7245e075f721 ("The following data is from TensorRT-LLM v0.5"),
         Low Latency, batch 1, 128 tokens, whole milliseconds: H100 FP8 "GPT-J 6B ... 7", "LLaMA 7B ... 7",
         "LLaMA 70B | 1 | 4 | 128 | 26", "Falcon 180B | 1 | 8 | 128 | 27"; L40S FP8 GPT-J 12, LLaMA 7B 14;
         A100 FP16 GPT-J 12, LLaMA 70B (TP 4) 47, Falcon 180B (TP 8) 61.
GPT-J's 6,053,381,344 parameters: EleutherAI/gpt-j-6b model card; Falcon 180B's 179.5e9 from the shapes above
(80 x (14,848 x 15,872 + 14,848^2 + 2 x 14,848 x 59,392) + 2 x 65,024 x 14,848).
"""

from __future__ import annotations

import numpy as np
import pytest

from procurement.sizing import load_bundled_gpus, parse_workload_spec
from procurement.sizing import throughput as engine
from procurement.sizing.compute_peak import expert_rate_inputs
from procurement.sizing.efficiency import serving_efficiency
from procurement.sizing.gpus import collective_bandwidth_gbps, tensor_parallel_over_nvlink
from procurement.sizing.validation import trtllm_spec
from tests.procurement.outside.test_outside_audit_stop43m import MIXTRAL49_LEAD, TRTMIX_NAN_PATH

SPEED = 0.15
GPUS = {gpu.slug: gpu for gpu in load_bundled_gpus()}
H200, H100, L40S, A100 = "h200-sxm-141gb", "h100-sxm5-80gb", "l40s", "a100-sxm4-80gb"

GPT_J_6B = {
    "name": "gpt-j-6b",
    "params": 6_053_381_344,
    "num_layers": 28,
    "hidden_size": 4096,
    "num_attention_heads": 16,
    "num_key_value_heads": 16,
    "intermediate_size": 16384,
    "vocab_size": 50400,
    "gated_mlp": False,
}
FALCON_180B = {
    "name": "falcon-180b",
    "params": 179.5e9,
    "num_layers": 80,
    "hidden_size": 14848,
    "num_attention_heads": 232,
    "num_key_value_heads": 8,
    "intermediate_size": 59392,
    "vocab_size": 65024,
    "gated_mlp": False,
}
MODELS = {"gpt-j-6b": GPT_J_6B, "falcon-180b": FALCON_180B}


def first_token_ms(
    model: str, precision: str, gpu_slug: str, tp: int, prompt: int = 128, experts: str = "model"
) -> float:
    """The engine's unrounded time to first token of one request (batch 1, one output token), in ms; ``experts``:
    inference.expert_precision (moe47)."""
    raw = trtllm_spec(model if model not in MODELS else "llama-2-7b", precision, tp, 1, prompt, 1)
    if model in MODELS:
        raw["model"] = MODELS[model]
    if experts != "model":
        raw["inference"]["expert_precision"] = experts
    spec = parse_workload_spec({"name": "s", **raw})
    gpu = GPUS[gpu_slug]
    expert_peak, expert_efficiency = expert_rate_inputs(spec, gpu)
    rows = engine.inference_throughput(
        spec,
        expert_peak_tflops=expert_peak,
        expert_compute_efficiency=expert_efficiency,
        bandwidth_gbps=gpu.memory_bandwidth_gbps,
        peak_tflops=gpu.dense_tflops(spec.precision),
        tensor_parallel_gbps=collective_bandwidth_gbps(gpu, tp),
        tensor_parallel_nvlink=tensor_parallel_over_nvlink(gpu, tp),
        generation=gpu.generation or 0,
        compute_efficiency=serving_efficiency(spec, gpu),
    )
    return float(np.asarray(rows["time_to_first_token_seconds"])) * 1000


def test_gptj_spec_counts_its_published_parameters():
    # the custom shape must carry the model card's count, or the weight reads below would be another model's
    spec = parse_workload_spec(
        {"name": "s", **trtllm_spec("llama-2-7b", "fp8", 1, 1, 128, 1), "model": GPT_J_6B}
    )
    assert spec.model.params == 6_053_381_344
    assert spec.model.num_layers == 28


# --- Case 1: [TRT9] GPT-J 6B at 128 tokens: a held-out model (28 layers, no gate, 16 heads) on the fit's cards. ---
# Ours (110 us a layer; without it): H200 4.83 (-3.4%; 1.75, -65.0%), H100 5.59 (+1.6%; 2.51, -54.4%), L40S 12.80
# (+3.2%; 9.72, -21.6%). By hand, H100: reads (6,053,381,344 - 50,400 x 4,096 embedding) bytes / (3,350 GB/s x
# 0.70) = 2.49 ms + 28 x 110 us = 3.08 ms -> 5.57 ms (the engine's 5.59 adds the 129-token KV read).
@pytest.mark.parametrize(("gpu", "published"), [(H200, 5.0), (H100, 5.5), (L40S, 12.4)])
def test_trt9_gptj_fp8_first_token_at_128_tokens(gpu, published):
    assert first_token_ms("gpt-j-6b", "fp8", gpu, 1) == pytest.approx(published, rel=SPEED)


# ttft47 (stop 47): what the published first token times (sources in tests/procurement/sizing/test_context_fixed_cost.py,
# test_the_fixed_cost_is_per_layer_not_per_call), appended to every too-fast first-token reason of this module and of
# test_context_fixed_cost.py.
TTFT47_FIGURE = (
    " ttft47 (stop 47) read what the figure times and ruled out two more candidates. (1) A missing decode step: the"
    " figure is the host clock around one GptSession::generate() (NVIDIA/TensorRT-LLM"
    " benchmarks/cpp/gptSessionBenchmark.cpp @027cd518) run with --input_output_len 128,1 (TRT9 'Reproducing First"
    " Token Latency'); with one new token generate() runs the context engine, samples that token and blocks on the"
    " finished flag, and runs no generation-phase engine (cpp/tensorrt_llm/runtime/gptSession.cpp @027cd518: the"
    " step loop runs step 0 only; the later GptSession, stored copy id 2608598896: executeGenerationStep calls"
    " shouldStopSync before executeContext), so the product's first token (context phase only) times the same"
    " work, and counting a decode step would break the passing fit rows (H100 FP8 Llama 2 7B 6.35 -> 9.18 ms,"
    " +46%). (2) A per-call host cost (decoder setup, sampling, finished check, finalize): the rows put it at or"
    " below zero where they can separate it (GPT-J's 28 layers against the 7B rows' 32 on the H200 / H100: 125 /"
    " 119 us a layer, intercept -0.25 / -0.34 ms; test_context_fixed_cost.py::"
    "test_the_fixed_cost_is_per_layer_not_per_call); on the A100 the same pair does not separate (gaps 6.57 / 6.61"
    " ms: 10 us a layer, intercept 6.3 ms), and a 6.3 ms per-call A100 term would leave the A100 70B TP 4 row at"
    " 36.7 ms (-19.5%) and Falcon TP 8 at 48.9 (-36%). What is missing stays per layer and differs by card or"
    " precision (A100 FP16 190-235 us) and by model (Falcon 180B TP 4 on Hopper 191-204 us against the 70B's"
    " 84-89); no source opened counts it."
)


# ttft49 (stop 49): GEMM tile / wave quantization at 128 tokens sized as a lead (test_outside_gemm_waves_stop49.py),
# appended to the short-prompt first-token reasons of this module, test_context_fixed_cost.py and
# test_outside_a100_tp8_audit_stop48.py.
TTFT49_WAVES = (
    " ttft49 (stop 49) sized the tile and wave quantization of the 128-token GEMMs (NVIDIA Matrix Multiplication"
    " Background User's Guide DU-09799-001, sections 2.3 and 3.2: one output tile a SM, a grid that does not fill the"
    " SMs leaves them idle; at M 128 a 128 x 128 tile gives N / 128 tiles, Llama 2 7B's o-projection 32 on 108 / 132"
    " SMs) with no per-layer constant, each GEMM the slower of its reads and its FLOPs on the SMs its tiles fill"
    " (test_outside_gemm_waves_stop49.py). At 128 x 128 it lands the A100 FP16 rows (GPT-J 14.8: 15.66, +5.8%;"
    " Llama 2 7B 16.2: 14.88, -8.2%; Falcon 180B TP 8 76.5: 76.41, -0.1%; 70B TP 4 45.6 / 47: +13.0% / +9.6%) but"
    " not Mistral 7B (112 tiles on 108 SMs, two waves: +28.6%), [TRT8] 70B TP 8 (+34.4%), [TRT5]'s A100 GPT-J 12 /"
    " Falcon 61 (+30.5% / +25.3%), and drops every Hopper FP8 row 20-32% (fit rows H100 / H200 7B 4.28 / 4.20 ms;"
    " Falcon TP 4 -28% / -31%); with the fastest of 64/128 x 64/128/256 tiles at one efficiency the effect vanishes"
    " (A100 7B 10.84, -33%). The tile each GEMM ran (cuBLASLt's profiled tactic under the GEMM plugin, TensorRT's"
    " own FP8 kernels) and its per-tile efficiency are in no opened source, so the mechanism sizes nothing here;"
    " lead: the engines' tactic logs (trtllm-build --log_level verbose) or an M-128 GEMM timing per card."
)

# ftok (stop 51): what [TRT9]'s own build recipe says about those GEMMs (test_outside_first_token_recipe_stop51.py),
# appended after TTFT49_WAVES wherever it is.
TTFT51_RECIPE = (
    " ftok (stop 51, test_outside_first_token_recipe_stop51.py) read [TRT9]'s own recipe ('Reproducing Benchmarked"
    " Results': trtllm-build --context_fmha enable --paged_kv_cache disable --max_batch_size 64 --max_input_len"
    " 2048, no --gemm_plugin, no --use_fused_mlp; on A100 the same, quantization fields dropped) against v0.9-era"
    " sources: PluginConfig gemm_plugin None (tensorrt_llm/plugin/plugin.py, stored ids 4882224494 and 6101044984"
    " @035b99e0), trtllm-build --use_fused_mlp default False (stored id 5483343864). So cls45d's precision split"
    " does not hold for [TRT9]: its A100 FP16 and Hopper FP8 rows both ran TensorRT's own GEMM tactics (the GEMM"
    " plugin, and a fused gate/up for the llama family, are benchmarks/python/build.py's recipe; whether [TRT8] /"
    " [TRT5] used it is not opened). With the plugin off and the cache unpaged the engine has two optimization"
    " profiles (GenerationMixin.has_two_optimization_profiles, stored id 69458389), the context one num_tokens"
    " [1, 2,048, 4,096], and TensorRT picks each kernel at the profile's optimum (TensorRT Python API,"
    " IOptimizationProfile): in the one engine the page lists for GPT-J, Llama 2 7B and 70B (max_batch_size 64,"
    " max_input_len 2,048) a 128-token prompt runs tactics timed at 2,048 tokens, on every card (Falcon's per-shape"
    " engines are listed for its throughput shapes only, Mistral's recipe not at all). Unsized: stop 49's"
    " wave model with the prompt padded to a 256-row tile reads A100 7B 29.43 ms (+82%) and H100 FP8 7B 8.39 (+33%)"
    " against 14.88 / 4.28 at 128 rows, a bracket, not a size. A fused gate/up moves [TRT8] 70B TP 8's 128 x 128"
    " figure from +34.4% to +3.7% and Mistral's from +28.6% to +15.1%, not the Hopper fit rows (-32% / -26%), so no"
    " engine change. Context FMHA (enabled) is at most 4.3 us a layer on the A100 7B (1.27 us of FLOPs on 32 of 108"
    " SMs) against 105 us missed; [TRT8]'s TP 8 all-reduce would need 92.3 us a call (55.4 priced), inside the"
    " published 59.3-108.8 us, unpinned. Lead: trtllm-build --profiling_verbosity detailed on an A100 and an H100"
    " with this recipe, to read the context profile's GEMM tactics."
)

CTXFIRST_GEMM_PATH = (
    " ctxfirst (stop 51, test_outside_first_token_gemm_path_ctxfirst.py): [TRT5]'s recipe (performance.md"
    " @77d24b5f, stored id 736701021) builds Falcon-180B with --use_gemm_plugin float16 and GPT-J / Llama without it;"
    " [TRT9] builds Falcon without it. The plugin (gemmPlugin.cpp @027cd518, profiler skipped) lets cuBLAS pick the"
    " kernel for the call's own M = 128; TensorRT's own GEMMs keep the tactic timed at the profile's optimum. On the"
    " same A100 card and shape Falcon TP 8 goes 61 -> 76.5 ms across the switch (194 us a layer), 70B TP 4 (own both)"
    " 47 -> 45.6, but GPT-J (own both) 12 -> 14.8, so the path is not the only lever; stop 49's 128 x 128 tile"
    " predicts 154% of the Falcon step (76.41 against today's 52.54). The residual a layer is 97-116 us on the FP8"
    " cards over 5.6x of bandwidth (floor-shaped) and 198-235 us on the A100, which a per-kernel floor cannot give"
    " the same network; at 128 rows a fill loss costs time on the H200 (below 94% fill) as on the A100 (86%), so no"
    " one tile fits both. Tile and per-tile rate still unsourced: (b) fails."
)

A100_GPTJ_REASON = (
    (
        "UNEXPLAINED: [TRT9] A100 FP16 GPT-J 6B, 128 tokens, batch 1: 14.8 ms; ours 11.31 (-23.6%) with 28 x 110 us (8.23, -44.4%"
        " without). The same class as test_context_fixed_cost.py's A100 FP16 7B xfail (-21.0% / -17.2%): the A100 rows"
        " need 6.6 ms (235 us a layer) over the read-bound forward (8.23 ms: reads 11.75 GB / (2,039 GB/s x 0.70)),"
        " twice the FP8 cards' 97-118 us, so the per-layer cost is not card- (or precision-) independent. Not the"
        " ridge alone: the same publisher's v0.5 table has this card, model and prompt at 12 ms (TRT5, passing below,"
        " -5.7%), 2.8 ms faster than v0.9.0's row; what changed in the A100 run between releases is not stated."
        " cls45d (stop 45) checked the release's engine recipe: the benchmark build.py sets the GEMM plugin only"
        " when the quantization is not FP8 (benchmarks/python/build.py @05316d33 'if args.quantization is None or"
        ' "fp8" not in args.quantization: gemm_plugin = dtype\'; the same line in the set_gemm_plugin form, stored'
        " ids 142410815 / 2730593151), so every A100 FP16 row ran its linears as cuBLAS plugin calls TensorRT"
        " cannot fuse with their neighbours, while the FP8 fit rows ran TensorRT's own FP8 GEMMs: a per-layer cost"
        " that differs by engine precision is what that recipe predicts, but the card is confounded with it (every"
        " FP16 row of the tables is an A100) and no source counts either engine's kernels. Sized, not landed: a"
        " 16-bit constant of 210 us a layer (fitted on the two v0.9.0 7B rows: -1.1% / +2.4%) holds out GPT-J 14.8"
        " at -4.6%, the 70B TP 4 45.6 at +3.5%, v0.5's 70B TP 4 47 at +0.4% and Falcon TP 8 61 at -2.6%, leaves"
        " v0.9.0's Falcon TP 8 76.5 at -22.4%, and breaks v0.5's passing A100 GPT-J 12 ms (-5.7% -> +17.6%): the"
        " same card, model and prompt 2.8 ms apart between releases, which no field states."
    )
    + TTFT47_FIGURE
    + TTFT49_WAVES
    + TTFT51_RECIPE
    + CTXFIRST_GEMM_PATH
)


@pytest.mark.xfail(strict=True, reason=A100_GPTJ_REASON)
def test_trt9_gptj_a100_fp16_first_token_at_128_tokens():
    assert first_token_ms("gpt-j-6b", "fp16", A100, 1) == pytest.approx(14.8, rel=SPEED)


# --- Case 2: [TRT9] Mixtral 8x7B (MoE, 32 layers) at 128 tokens. ---
# Was a strict xfail: H200 12.1 / H100 13.4 ms published, ours 6.88 / 7.71 (-43.1% / -42.5%). Now 11.92 / 14.92
# (-1.5% / +11.3%) because a prompt's first token reads the routed experts its tokens route to (fix43s,
# throughput.routed_experts_touched at the prompt's 128 tokens: 1 - 0.75^128, all 8; 46.57 GB at FP8), not the
# 25% a batch-1 decode step touches (12.75 GB). By hand, H200: 46.57 GB / (2 x 4,800 GB/s x 0.70) = 6.93 ms + 32 x
# 110 us + 1.46 ms of all-reduces = 11.92 ms.
# fixa45 (after aud45a), a contradiction recorded, the test unchanged: these rows pass for a reason [MOEGEMM] (the
# v0.9.0 MoE GEMM has no FP8 weight type, test_outside_audit_stop43m.py) contradicts. The product reads all 8
# experts at FP8 (46.57 GB); under [MOEGEMM] they were 16-bit, and all 8 16-bit experts with the attention weights
# and the output layer (46.6 GB a GPU at TP 2) in 13.4 ms need 1.04 of the H100's 3,350 GB/s with no launch or
# all-reduce time at all: no engine does that. So the H100 row, too, read fewer than 8 16-bit experts (the random,
# concentrated router of [TRTBENCH]), and the product lands it only because reading 8 experts at 1 byte moves
# about the bytes a random router's fewer 16-bit experts moved. Implied: the pass is no evidence for fix43s's
# all-8 prompt reads on this table, and a product that learned the 16-bit MoE GEMM alone would move both rows out
# (by hand, 93.14 GB at 0.70 of 2 x 4,800 / 2 x 3,350 GB/s plus the same 3.52 ms of layers and ~1.5 ms of
# all-reduces: H200 18.8 ms, +56%; H100 24.9 ms, +85%); the two terms can only be taught together.
#
# moe47: the rows now state inference.expert_precision fp16, what the published run did. [V090] (NVIDIA/TensorRT-LLM
# @250d9c293d5edbc2a45c20775b3150b1eb68b364, the commit of the v0.9.0 performance.md, opened): tensorrt_llm/layers/
# moe.py MixtureOfExperts `self.weight_dtype = dtype` (int8 only for weight-only), the expert Parameters at that
# dtype; cpp/tensorrt_llm/plugins/mixtureOfExperts/mixtureOfExpertsPlugin.cpp init() has no FP8 runner; plugin.py
# PluginConfig moe_plugin "float16" on by default (test_outside_audit_stop43m.py [V090]). Both rows then leave the
# tolerance, as fixa45 predicted above (H200 11.92 -> 18.63 ms, +54.0%; H100 14.92 -> 24.53, +83.1%): strict xfails.
V090_EXPERTS = "fp16"
MIXTRAL_HOPPER_FIRST_TOKEN = {
    H200: (
        12.1,
        "UNEXPLAINED (moe47): [TRT9] Mixtral 8x7B FP8 H200 TP 2 at 128 tokens, batch 1: published 12.1 ms; ours"
        " 11.92 (-1.5%) with the experts at FP8 (passing for a reason [V090] contradicts) -> 18.63 (+54.0%) with"
        " inference.expert_precision fp16 stated ([V090]: moe.py `self.weight_dtype = dtype`, no FP8 runner in"
        " mixtureOfExpertsPlugin.cpp). The 128 prompt tokens of a trained router read all 8 16-bit experts (45.1 GB"
        " a GPU: 13.4 ms at 0.70 of 4,800 GB/s) before 32 x 110 us of layers and 1.46 ms of all-reduces. At the full"
        " datasheet 4,800 GB/s they take 9.4 ms, inside the published 12.1 ms, so the row does not prove that fewer"
        " experts were read ([TRTBENCH]'s random router) nor that the reads ran above the engine's 0.70; neither is"
        " sized. History: fixa45 recorded this row's pass as no evidence for all-8 prompt reads (see above).",
    ),
    H100: (
        13.4,
        "UNEXPLAINED (withdrawn by audx48a: (b) fails: all 8 16-bit experts' 13.70 ms at 3,350 GB/s over the row's 13.45 ms proves fewer than 8 and bounds how many 16-bit experts the run read but no published figure says how many it did, so no arithmetic reproduces the gap within 15% (a bracket sized on the row itself, which the bar does not accept as a size); the arithmetic re-checked and sound, and (a)'s ingredients opened (moe.py @250d9c29 `self.weight_dtype = dtype`; parameter.py copies torch.randn * 2 - 1), but the concentration of the random router is inferred, not measured): "
        "EXPLAINED (moe47): [TRT9] Mixtral 8x7B FP8 H100 TP 2 at 128 tokens, batch 1: published 13.4 ms; ours 14.92"
        " (+11.3%) with the experts at FP8 (passing for a reason [V090] contradicts) -> 24.53 (+83.1%) with"
        " inference.expert_precision fp16 stated. (a) [V090]: 16-bit experts (moe.py `self.weight_dtype = dtype`,"
        " no FP8 runner in mixtureOfExpertsPlugin.cpp); [TRTBENCH] (test_outside_audit_stop43m.py): engines built"
        " without a checkpoint and timed on random token ids, a random router concentrated across tokens. (b) From"
        " the row: 13.4 ms is rounded, so at most 13.45 ms. The forward reads all 8 16-bit experts, 45.10 GB a GPU"
        " (8 x 32 x 3 x 4,096 x 14,336 x 2 B / TP 2), plus the FP8 attention weights (32 x 41.9e6 B / 2 = 0.67 GB)"
        " and the 16-bit output layer (0.13 GB): 45.90 GB, which at the H100's datasheet 3,350 GB/s take 13.70 ms,"
        " 1.9% over 13.45 ms with no launch, per-layer or all-reduce time at all, so the run read fewer than 8"
        " 16-bit experts a layer where 128 prompt tokens of a trained router read all 8 (1 - 0.75^128). The margin"
        " is the datasheet's; the row alone fits FP8 experts too (it passed at +11.3%), so fewer experts rests on"
        " (a), with the existence proof the same table's A100 FP16 batch-32 2,048/2,048 row (at most 5.85 of 8,"
        " test_outside_audit_stop43m.py). (c) The experts a random"
        " router's draw reads are no property of a deployable model: no field can state them; the product sizes"
        " trained routing.",
    ),
}


@pytest.mark.parametrize(
    ("gpu", "published"),
    [
        pytest.param(
            gpu,
            published,
            marks=pytest.mark.xfail(strict=True, reason=reason + MIXTRAL49_LEAD + TRTMIX_NAN_PATH),
        )
        for gpu, (published, reason) in MIXTRAL_HOPPER_FIRST_TOKEN.items()
    ],
)
def test_trt9_mixtral_fp8_tp2_first_token_at_128_tokens(gpu, published):
    ours = first_token_ms("mixtral-8x7b", "fp8", gpu, 2, experts=V090_EXPERTS)
    assert ours == pytest.approx(published, rel=SPEED)


MIXTRAL_FEWER_EXPERTS_HISTORY = (
    " History: [TRT9] Mixtral 8x7B at 128 tokens, batch 1: L40S FP8 TP 4 19.5 ms, A100 FP16 TP 2 23.8; ours 29.43"
    " (+50.9%) and 37.71 (+58.4%) since fix43s reads the prompt's experts (all 8 at 128 tokens under uniform"
    " routing; 15.45 / 14.02 before, -20.8% / -41.1%, with a decode step's 25%). L40S: 46.57 GB / (4 x 864 GB/s x"
    " 0.70) = 19.25 ms + 3.52 ms (32 x 110 us) + 6.66 ms of PCIe all-reduces; A100: 93.14 GB / (2 x 2,039 x 0.70) ="
    " 32.64 + 3.52 + 1.56. aud43s: both rows sit below all experts' reads; how many experts were read is not"
    " stated. cls45 located the sources: [TRTBENCH] (weightless engines, random token ids: a random router) and"
    " [MOEGEMM] (no FP8 weight type in the v0.9.0 MoE GEMM: 16-bit experts on every card), both in"
    " test_outside_audit_stop43m.py."
)
MIXTRAL_L40S_FIRST_TOKEN_REASON = (
    "UNEXPLAINED (withdrawn by audx48a: (b) fails: 'at most 6.0 of the 8' bounds how many 16-bit experts the run read but no published figure says how many it did, so no arithmetic reproduces the gap within 15% (a bracket sized on the row itself, which the bar does not accept as a size); the arithmetic re-checked and sound, and (a)'s ingredients opened (moe.py @250d9c29 `self.weight_dtype = dtype`; parameter.py copies torch.randn * 2 - 1), but the concentration of the random router is inferred, not measured; and the head figure 'ours 29.43 (+50.9%)' is stale: today 48.07 (+146.5%) with expert_precision fp16 stated): "
    "EXPLAINED: (cls45, restated by fixa45 after aud45a) [TRT9] Mixtral 8x7B FP8 L40S TP 4 at 128 tokens, batch 1:"
    " published 19.5 ms, ours 29.43 (+50.9%). (a) [TRTBENCH]: the v0.9.0 page's own 'Reproducing' recipe builds"
    " every engine with trtllm-build --model_config <ckpt_config.json> (no checkpoint: xavier-random weights) and"
    " times it with gptSessionBenchmark (random token ids), so the router is random and its choices are"
    " concentrated across tokens (the mean -v_range of every random matrix gives all hidden states a shared"
    " component, so the same few experts win; a uniformly random top-2 for each of 128 tokens would read all 8);"
    " [MOEGEMM]: the experts are 16-bit. (b) A proof from the row: 19.5 ms at the full 4 x 864 GB/s moves 67.4"
    " GB, under the 16-bit experts alone (90.2 GB: 8 x 32 layers x 3 x 4,096 x 14,336 x 2 B), so it read at most"
    " 6.0 of the 8 experts a layer before any attention weight, all-reduce or launch, where the 128 prompt tokens"
    " of a trained router read all 8 (1 - 0.75^128). (c) The experts a random router's draw reads are no property"
    " of a deployable model: no spec field can state them; the product sizes trained routing."
    + MIXTRAL_FEWER_EXPERTS_HISTORY
    + " moe47: the row states inference.expert_precision fp16 ([V090], as (a) says, the experts 16-bit): ours 29.43"
    " (+50.9%) -> 48.07 (+146.5%), the engine now reading all 8 16-bit experts at 0.70 of 4 x 864 GB/s (37.3 ms),"
    " which (b) shows the row did not."
)
MIXTRAL_A100_FIRST_TOKEN_REASON = (
    "UNEXPLAINED (fixa45, after aud45a; was EXPLAINED by cls45): [TRT9] Mixtral 8x7B FP16 A100 TP 2 at 128 tokens,"
    " batch 1: published 23.8 ms, ours 37.71 (+58.4%). The mechanisms are located ([TRTBENCH]: no checkpoint, a"
    " random router concentrated across tokens; [MOEGEMM]: 16-bit experts, the FP16 table's own precision anyway),"
    " but this row does not prove them. The plain bound: all 8 16-bit experts with the attention weights and the"
    " input and output layers (93.4 GB, 46.7 GB a GPU) fit in 23.8 ms at 0.96 of 2,039 GB/s with zero launch,"
    " per-layer or all-reduce time; cls45's 'room for 6.5 of 8' subtracted the product's fitted 3.52 ms of"
    " per-layer cost (context_phase_fixed_seconds_per_layer) and its 1.56 ms of all-reduces, which are the"
    " engine's estimates, not the row's. Rebased on the same table: its dense A100 FP16 first tokens read their"
    " weights at only 0.29-0.41 of 2,039 GB/s (GPT-J 12.1 GB in 14.8 ms, LLaMA 7B 13.5 GB in 16.2, LLaMA 70B TP 4"
    " 34.5 GB a GPU in 45.6, Falcon 180B TP 8 44.9 GB a GPU in 76.5;"
    " test_outside_explanations_audit_stop45a.py), so reading all 8 would put Mixtral at 2.3x the share of every"
    " dense first token of the table; at the dense share (0.29-0.41) the row moves 14.1-19.9 GB a GPU, room for"
    " 2.2-3.2 of 8 16-bit experts a layer after the 1.6 GB a GPU of attention and vocabulary weights. That is a"
    " same-table calibration, not a bound: an MoE's grouped GEMM at 128 tokens (32 tokens an expert on average under top-2)"
    " need not read at a dense GEMM's share, and nothing measured says it does. So (b) is not met: the size of"
    " the fewer-experts term on this row rests on an assumption. Best diagnosis: a random router concentrated"
    " across tokens read about 2-3 of 8 experts; what would size it is the draw (no field can state it) or a"
    " measured MoE grouped-GEMM read rate at ~32 tokens an expert on the A100 (none found)."
    + MIXTRAL_FEWER_EXPERTS_HISTORY
)


@pytest.mark.parametrize(
    ("gpu", "precision", "tp", "published"),
    [
        pytest.param(
            L40S,
            "fp8",
            4,
            19.5,
            marks=pytest.mark.xfail(
                strict=True, reason=MIXTRAL_L40S_FIRST_TOKEN_REASON + MIXTRAL49_LEAD + TRTMIX_NAN_PATH
            ),
        ),
        pytest.param(
            A100,
            "fp16",
            2,
            23.8,
            marks=pytest.mark.xfail(
                strict=True, reason=MIXTRAL_A100_FIRST_TOKEN_REASON + MIXTRAL49_LEAD + TRTMIX_NAN_PATH
            ),
        ),
    ],
)
def test_trt9_mixtral_l40s_and_a100_first_token_at_128_tokens(gpu, precision, tp, published):
    # moe47: the FP8 row states its 16-bit experts ([V090]); the A100 row is FP16 throughout
    experts = V090_EXPERTS if precision == "fp8" else "model"
    ours = first_token_ms("mixtral-8x7b", precision, gpu, tp, experts=experts)
    assert ours == pytest.approx(published, rel=SPEED)


# Was a strict xfail: the first token of Mixtral FP8 TP 2 on an H200 was 6.88 ms, under the 6.93 ms that reading
# the prompt's experts alone takes at the engine's bandwidth (it read a batch-1 decode step's 12.75 GB). Now 11.92
# ms because inference_throughput reads decode_read_bytes at the prompt's tokens for the first token: the expected
# distinct experts its tokens route to, E x (1 - (1 - k / E)^tokens) a MoE layer, shared experts always (fix43s).
def test_a_short_prompts_first_token_reads_the_experts_it_routes_to():
    spec = parse_workload_spec({"name": "s", **trtllm_spec("mixtral-8x7b", "fp8", 2, 1, 128, 1)})
    assert engine.decode_read_bytes(spec, 1.0)[0] == pytest.approx(12.75e9, rel=0.01)
    prompt_reads, _ = engine.decode_read_bytes(spec, 128.0)
    assert prompt_reads == pytest.approx(46.57e9, rel=0.01)
    read_s = prompt_reads / (2 * GPUS[H200].memory_bandwidth_gbps * 1e9 * 0.70)
    assert first_token_ms("mixtral-8x7b", "fp8", H200, 2) / 1000 > read_s


# --- Case 3: [TRT9] Falcon 180B (80 layers, GQA 8) at 128 tokens, TP 4 and TP 8. ---
# L40S TP 8 91.0 ms: ours 101.4 (+11.4%; 92.6 without the 8.8 ms of per-layer cost, +1.7%).
def test_trt9_falcon180b_l40s_tp8_first_token_at_128_tokens():
    assert first_token_ms("falcon-180b", "fp8", L40S, 8) == pytest.approx(91.0, rel=SPEED)


FALCON_REASON = (
    (
        "UNEXPLAINED: [TRT9] Falcon 180B, 128 tokens, batch 1: H200 FP8 TP 4 36.4 ms, H100 FP8 TP 4 41.1, A100 FP16 TP 8 76.5; ours"
        " 28.9 (-20.6%), 34.7 (-15.7%), 51.4 (-32.8%) with 80 x 110 us (20.1 / 25.9 / 42.6 without). The H200 needs"
        " 16.3 ms over the forward, 204 us a layer, where the same card's Llama 2 70B TP 4 row needs 89 us a layer"
        " (17.8 against 10.7): the per-layer cost is not model-independent either. Checked: Falcon's forward sits at"
        " the ridge on Hopper (reads 44.6 GB / (4,800 x 0.70) = 13.3 ms, FLOPs 2 x 178.5e9 x 128 / 4 / (1,979 x 0.46)"
        " = 12.6 ms), like the A100 7B rows, but so do the H200 7B fit rows (reads 1.98, FLOPs 1.86 ms), which the"
        " constant fits; reads + FLOPs + its 6.8 ms of all-reduces would give 32.7 ms (-10%)"
        " here, but the H200 Llama 2 7B fit row 3.8 ms without a fixed cost (-33%) and 7.4 with it (+29%). Not explained."
    )
    + TTFT47_FIGURE
    + TTFT49_WAVES
    + TTFT51_RECIPE
    + CTXFIRST_GEMM_PATH
)


@pytest.mark.xfail(strict=True, reason=FALCON_REASON)
@pytest.mark.parametrize(
    ("gpu", "precision", "tp", "published"),
    [(H200, "fp8", 4, 36.4), (H100, "fp8", 4, 41.1), (A100, "fp16", 8, 76.5)],
)
def test_trt9_falcon180b_first_token_at_128_tokens(gpu, precision, tp, published):
    assert first_token_ms("falcon-180b", precision, gpu, tp) == pytest.approx(published, rel=SPEED)


# --- Case 4: [TRT5] the publisher's v0.5 first tokens at 128 tokens (whole ms: +-0.5 ms is +-7% at 7 ms). ---
# A release the constant was not fitted on. Ours: H100 Llama 2 7B 6.35 (-9.3%), L40S Llama 2 7B 14.50 (+3.6%),
# L40S GPT-J 12.80 (+6.6%), A100 FP16 GPT-J 11.31 (-5.7%), H100 Falcon 180B TP 8 28.03 (+3.8%).
@pytest.mark.parametrize(
    ("model", "precision", "gpu", "tp", "published"),
    [
        ("llama-2-7b", "fp8", H100, 1, 7),
        ("llama-2-7b", "fp8", L40S, 1, 14),
        ("gpt-j-6b", "fp8", L40S, 1, 12),
        ("gpt-j-6b", "fp16", A100, 1, 12),
        ("falcon-180b", "fp8", H100, 8, 27),
        # Was a strict xfail (TRT5_MISS_REASON, UNEXPLAINED): A100 FP16 Falcon 180B TP 8, published 61 ms, ours
        # 51.39 (-15.8%). Now 52.54 (-13.9%) because its 160 all-reduces of 128 x 14,848 x 2 B = 3.8 MB cost what
        # nccl-tests measured on 8 A100-SXM4-80GB, one MPI rank a GPU (about 78 us a call, log-interpolated
        # between 55.4 us at 2 MB and 81.7 us at 4 MB), where NCCL's model gave about 71
        # (assumptions.A100_TP8_ALLREDUCE_SECONDS; serve48b). fix48n: it lands by 1.1 points only (13.9 of 15),
        # at the fastest of four published 8 x A100 sweeps (the -g 8 runs would read -8.7 / -7.3 / -0.8%); v0.5
        # ran NCCL here (--use_custom_all_reduce off, aud48n). The same shape's [TRT8] / [TRT9] 76.5 ms rows stay
        # at -31.3% (test_trt9_falcon180b_first_token_at_128_tokens' A100 row): v0.9.0 ran this 3.8 MB call on its
        # own TWOSHOT kernel (allreducePlugin.cpp @b57221b7 selectImplementation, under 8,000,000 B), which the
        # NCCL table does not describe
        ("falcon-180b", "fp16", A100, 8, 61),
    ],
)
def test_trt5_first_token_at_128_tokens(model, precision, gpu, tp, published):
    assert first_token_ms(model, precision, gpu, tp) == pytest.approx(published, rel=SPEED)


TRT5_MISS_REASON = (
    (
        "UNEXPLAINED: [TRT5] v0.5, 128 tokens, batch 1: H100 FP8 GPT-J 7 ms, Llama 2 70B TP 4 26 (H100 FP8) / 47 (A100 FP16), A100"
        " FP16 Falcon 180B TP 8 61; ours 5.59 (-20.2%), 21.71 (-16.5%), 39.22 (-16.5%), 51.39 (-15.8%). An older"
        " release than the constant's fit (v0.9.0: the H100 GPT-J row is 5.5 there, and passes): v0.5's H100 rows"
        " carry 0.7-6.4 ms more than v0.9.0's for the same card and shape (Llama 2 7B 7 against 6.3, GPT-J 7 against"
        " 5.5, 70B TP 4 26 against 19.6; A100 70B TP 4 47 against 45.6), a release-to-release difference that a"
        " per-layer constant fitted on one release cannot carry. The v0.5 figure's own runtime (release/0.5.0) is not"
        " opened; at 027cd518, an early commit of the same runtime, gptSession.cpp's step loop runs the context step"
        " only at one output token, as the later GptSession does. serve48b: the A100 Falcon 180B TP 8 row left this"
        " list (52.54 ms, -13.9%, with its all-reduces at the cost nccl-tests measured on 8 A100s)."
    )
    + TTFT47_FIGURE
    + TTFT49_WAVES
    + TTFT51_RECIPE
    + CTXFIRST_GEMM_PATH
)


@pytest.mark.xfail(strict=True, reason=TRT5_MISS_REASON)
@pytest.mark.parametrize(
    ("model", "precision", "gpu", "tp", "published"),
    [
        ("gpt-j-6b", "fp8", H100, 1, 7),
        ("llama-2-70b", "fp8", H100, 4, 26),
        ("llama-2-70b", "fp16", A100, 4, 47),
    ],
)
def test_trt5_first_token_misses_at_128_tokens(model, precision, gpu, tp, published):
    assert first_token_ms(model, precision, gpu, tp) == pytest.approx(published, rel=SPEED)
