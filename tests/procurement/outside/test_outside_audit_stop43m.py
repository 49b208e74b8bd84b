"""Outside audit (aud43m) of moe43 (active params without the input lookup, DeepSeek-V3's MTP module, the MoE
refit on restated fit rows) and fix43s (an MoE prompt's first token reads the experts its tokens route to), with
published MoE runs no other test has: TensorRT-LLM v0.9.0's Mixtral 8x7B peak-throughput rows (serving), and
Megatron-Bridge 25.11's DGX-GB200 DeepSeek-V3 (without MTP) and Qwen3-235B-A22B rows (training), plus pins of
what the audit found. Tolerances are the issue's: LLM speed 15%. Misses are strict xfails with numbers and the
diagnosis.

Sources (stored copies read with read_file / find_string; figures quoted where used):
  [TRT9]   NVIDIA/TensorRT-LLM docs/source/performance.md at v0.9.0 (stored copy id 5995251461: "All data was
           generated using version 0.9.0"), "Peak Throughput", "Throughput (out tok/s/GPU)", Mixtral 8x7B rows
           (Batch Size | TP | Input Length | Output Length | tok/s/GPU):
           H200 FP8: 1024 | 2 | 128 | 128 | 5,444; 256 | 2 | 128 | 2048 | 4,973; 64 | 2 | 2048 | 128 | 605;
                     64 | 2 | 2048 | 2048 | 1,821
           H100 FP8: 512 | 2 | 128 | 128 | 5,255; 128 | 2 | 128 | 2048 | 3,408; 64 | 2 | 2048 | 128 | 588;
                     32 | 2 | 2048 | 2048 | 1,317
           L40S FP8: 256 | 4 | 128 | 128 | 1,266; 256 | 4 | 128 | 2048 | 1,490; 64 | 4 | 2048 | 128 | 155;
                     32 | 4 | 2048 | 2048 | 412
           A100 FP16: 512 | 2 | 128 | 128 | 2,842; 128 | 2 | 128 | 2048 | 1,724; 64 | 2 | 2048 | 128 | 319;
                      32 | 2 | 2048 | 2048 | 801
           Same table, dense reference: H100 FP8 "LLaMA 70B | 1024 | 2 | 128 | 128 | 3,214".
  [MB2511] NVIDIA-NeMo/Megatron-Bridge docs/performance-summary-archive.md @0a25f911b2ed6c6905a539504fdb8e5b40e3438b,
           "25.11 NeMo Container", "System: DGX-GB200" (Model | #-GPUs | Precision | GBS | MBS | Seq | FSDP | TP | PP |
           CP | VP | EP | GA | Tokens/sec/GPU | Model TFLOP/sec/GPU):
           "DeepSeekV3 (w/o MTP) | 256 | BF16 | 4096 | 1 | 4096 | 0 | 1 | 4 | 1 | 4 | 64 | 64 | 3139 | 782"
           "DeepSeekV3 (w/o MTP) | 256 | FP8-MX | 4096 | 1 | 4096 | 0 | 1 | 8 | 1 | 4 | 32 | 128 | 4018 | 1003"
           "Qwen3_235B_a22B | 256 | BF16 | 8192 | 1 | 4096 | 0 | 1 | 8 | 1 | 3 | 32 | 256 | 4916 | 728"
           "In MoE training benchmarks, we force-balance the token distribution among experts and all benchmarks
           are token-dropless."
  [MBCFG]  the same repository @0fa501acee1ebfe3d1ab8088b638e2089d800df6
           scripts/performance/configs/deepseek/workload_base_configs.py: DEEPSEEK_V3_GB200_BF16_BASE_CONFIG
           pipeline 4, virtual 4, expert 64, expert_tensor_parallel 1, recompute_modules ["mla_up_proj"] (a partial
           recomputation of the MLA up-projection: stated as "selective" here).
  [TRTBENCH] how [TRT9]'s engines and runs were made. Primary source (fixa45, after aud45a): [TRT9]'s own
           page, section 'Reproducing Benchmarked Results' (stored copy id 5995251461): every listed model's engine
           is built with "trtllm-build --model_config /tmp/engines/<model>/ckpt_config.json" from a config json
           alone (no --checkpoint_dir, no weights; "Running on A100": drop the json's "quantization" fields) and
           timed with "./cpp/build/benchmarks/gptSessionBenchmark --engine_dir ... --input_output_len ..."
           (Mixtral's own recipe is not listed; GPT-J, Llama2-7b, Llama2-70b and Falcon-180B are). Supporting,
           from copies that bracket v0.9.0 (the v0.9.0 tag's copies themselves were not read): benchmarks/python/
           build.py @05316d33 is a v0.11.0 copy (its tensorrt_llm/version.py reads 0.11.0: aud45a's reading; the index
           holds version.py at another commit only, so not re-read here) and the copy
           stored as id 142410815 ("Copyright (c) 2022-2024", a 2024 copy) both build every benchmark model from a
           config dict ('moe_num_experts', 'moe_top_k', 'quantization') with no checkpoint argument; the builder
           fills every unset weight in tensorrt_llm/network.py _fill_weights (stored id 776661897) with
           Parameter.xavier_init (tensorrt_llm/parameter.py @b57221b7: "torch.randn(...) * 2 - 1" times v_range,
           v_range sqrt(6 / (fan_in + fan_out)) for 2-D tensors and 0.1 otherwise, i.e. random with mean
           -v_range; older copies drew torch.rand * 2 - 1); benchmarks/cpp/gptSessionBenchmark.cpp @3c44cb97
           (still with the --model flag v0.9.0 removed, so older than v0.9.0) and a later SizeType32 copy (stored id
           2618118190, "2022-2024", read by fixa45: srand(time(0)), "rand() % modelConfig.getVocabSizePadded(...)")
           both feed random token ids (topK 1; the 2023 copy @027cd518 fed one pad id everywhere): v0.9.0 sits
           between two copies that both feed random token ids. The router that picks each token's experts is
           random, not Mixtral's. Why a random router reads FEWER experts than a trained
           one: its choices are concentrated across tokens, not drawn anew for each token. Every xavier-random
           matrix has the same mean -v_range in all its entries, so all tokens' hidden states share a common
           component (the mean part maps every input onto one direction), and each token's router logits carry
           the same per-expert term from it: the same few experts win for most tokens. A router that drew a
           uniformly random top-2 for each token independently would read all 8 experts with 32 streams
           (1 - 0.75^32 = 99.99% each); the rows below read at most 5.3-6.5 of 8, which only a concentrated draw
           gives. How concentrated is the draw's (the weights' seed and the shared component's share), which no
           source states. benchmarks/python/allowed_configs.py (stored id 246281269, "2022-2024"):
           "mixtral_8x7b": ModelConfig(family="llama", ... moe_num_experts=8, moe_top_k=2), built by build.py's
           llama branch; that copy sets no num_kv_heads for it (build.py then takes num_heads, 32, where
           "llama_70b" states 8), so its KV cache would be 4x Mixtral's: the bounds below take Mixtral's 8 KV heads,
           the loosest reading.
  [MOEGEMM] the release's MoE GEMM, cpp/tensorrt_llm/kernels/cutlass_kernels/moe_gemm/moe_gemm_kernels_template.h
           (stored copy id 3099670234, "Copyright (c) 2020-2023"): WeightType is T (fp16 / bf16 / fp32), uint8
           or uint4 ("static_assert(... is_same<T, WeightType> || is_same<WeightType, uint8_t> || is_same<
           WeightType, cutlass::uint4b_t>)"), no FP8 type; and "else if (sm_ >= 90) { // TODO Update the arch to
           Sm90 once CUTLASS hopper specialisations are available  dispatchMoeGemmToCutlass<T, WeightType,
           cutlass::arch::Sm80, ...>": Hopper ran the Ampere grouped GEMM (tiles up to 128 x 128 x 64, 2-4
           stages). docs/source/release-notes.md (stored id 5849544754), 0.10.0: "Added FP8 quantization support
           for Mixtral"; 0.12.0 (stored id 2703427195): "Supported FP8 OOTB MoE".
  [GPTOSS] openai/gpt-oss-120b config.json as the product's own docs quote it (docs/workload-spec.md,
           `sliding_window`: "GPT-OSS: 128 on 18 of 36 layers").
  [V090]   moe47: the release commit itself, NVIDIA/TensorRT-LLM @250d9c293d5edbc2a45c20775b3150b1eb68b364 (the
           commit whose docs/source/performance.md is [TRT9]'s stored copy id 5995251461, "All data was generated
           using version 0.9.0"; earlier notes read only copies bracketing v0.9.0). Opened there:
           tensorrt_llm/plugin/plugin.py PluginConfig `moe_plugin: str = "float16"` (the plugin is on unless a build
           disables it; tensorrt_llm/builder.py build(): `network.plugin_config = build_config.plugin_config`,
           BuildConfig `plugin_config: PluginConfig = PluginConfig()`, the path trtllm-build takes);
           tensorrt_llm/layers/moe.py MixtureOfExperts: `self.weight_dtype = dtype`, int8 only `if
           quant_mode.is_weight_only()`, so FP8 leaves the plugin's expert weights 16-bit, and `forward`: `if not
           default_net().plugin_config.moe_plugin:` runs the OOTB path, `for i, expert in enumerate(self.experts):
           out = expert(hidden_states)` (every expert on every token, masked by the top-k weights afterwards);
           cpp/tensorrt_llm/plugins/mixtureOfExperts/mixtureOfExpertsPlugin.cpp init(): runners for (half, half),
           (float, float), (half, int8 / int4), (bf16, bf16), (bf16, int8 / int4) only, else "Could not construct
           the mixture of experts plugin": no FP8 runner; cpp/tensorrt_llm/kernels/cutlass_kernels/moe_gemm/
           moe_gemm_kernels_template.h (id 6142104181): the same static_assert as [MOEGEMM]; tensorrt_llm/layers/
           mlp.py MLP / GatedMLP build `FP8Linear` / `FP8RowLinear` when `quant_mode.has_fp8_qdq()`, so the OOTB
           experts (GatedMLP(..., quant_mode)) are FP8 GEMMs; examples/mixtral/README.md: no FP8 recipe, "Mixtral
           supports OOTB operation without the plugin, however this comes at a significant performance cost".
           So v0.9.0 had two MoE paths and neither is the engine's: the plugin (top-2, 16-bit experts, Sm80
           grouped GEMM) and OOTB (FP8 experts, all 8 computed for every token). Which one [TRT9]'s FP8 engines
           ran is not stated (the Mixtral recipe is not on the page; NVIDIA/TensorRT-LLM#1229, Tracin 2024-03-05:
           "Mixtral with FP8 is almost done for now, will be released in version 0.9.0").
"""

from __future__ import annotations

import math

import pytest

from procurement.sizing import parse_workload_spec, size_workload
from procurement.sizing.assumptions import PREFILL_EFFICIENCY_FP8
from procurement.sizing.mfu import dense_efficiency, routed_bytes
from procurement.sizing.params import active_params, input_lookup_params, layer_counts
from procurement.sizing.throughput import training_flops_per_token
from procurement.sizing.validation import trtllm_spec
from tests.procurement.sizing.test_moe_published import (
    GPT_OSS_120B,
    GPUS,
    QWEN3_30B_GB200,
    QWEN3_235B,
    megatron,
    tokens_per_gpu,
)

SPEED = 0.15
H200, H100, L40S, A100 = "h200-sxm-141gb", "h100-sxm5-80gb", "l40s", "a100-sxm4-80gb"


def gap(ours: float, published: float) -> float:
    return ours / published - 1


# --- Case 1: [TRT9] Mixtral 8x7B peak throughput (out tok/s/GPU), static batches, all four cards. ---------------------
# No test had these rows (test_serving_published.py and validation.py hold the dense rows of the same table;
# test_outside_audit_stop43s.py the Mixtral first tokens). Ours: decode_tokens_per_second_total / TP, what the dense
# rows are judged on.
# moe47: the two MoE paths of the release commit ([V090]) against the rows, by hand
# (test_v090_moe_paths_against_the_prefill_heavy_rows pins the arithmetic on the published rows; the OOTB row errors
# are a hand model on the engine's own read, attention and all-reduce terms, not landed).
MOE47_HOPPER = (
    " moe47, the release commit opened ([V090], @250d9c29): the engine prices these experts at FP8 reads and the FP8 "
    "rate (0.46 of 1,979 TFLOPS on top-2 FLOPs), a path v0.9.0 did not have. Its default MoE plugin has no FP8 "
    "runner (mixtureOfExpertsPlugin.cpp init; moe.py weight_dtype = dtype), so there the experts ran top-2 in 16 "
    "bits on the Sm80 grouped GEMM: the four prefill-heavy rows run 255-278 TFLOPS a GPU on top-2 FLOPs (0.26-0.28 "
    "of the 16-bit peak) where the A100 FP16 rows of the same shapes run 138-145 (0.44-0.46), a Hopper / A100 "
    "ratio of 1.84-1.92 that no opened source sizes (SM count x boost clock gives 1.72). Its OOTB path (moe.py "
    "forward without the plugin; mlp.py FP8Linear experts: the network v0.9.0 builds already has FP8 OOTB experts, "
    "whatever 0.12.0's 'Supported FP8 OOTB MoE' added, which is not read here) runs FP8 experts but all 8 for "
    "every token, 93.1 "
    "GFLOPs a token against 25.5: on it the same four rows run 931-1,014 TFLOPS a GPU, 0.470-0.512 of the FP8 "
    "peak, beside the engine's fitted FP8 prefill efficiency 0.46 and the same table's dense Llama 2 70B TP 2 "
    "batch-1,024 row's 0.446; the A100 rows could not have run it (1.62-1.70x the A100's peak), so the A100 ran "
    "the plugin. Sized as OOTB by hand (decode: the slower of all experts' FP8 reads at 0.70 of the bandwidth and "
    "all FLOPs at 0.46 of the FP8 peak; prompt FLOPs at 0.46; the engine's own attention and all-reduce seconds): "
    "H200 -14.1 / +39.6 / "
    "-15.1 / +30.0% (1,024 128/128, 256 128/2,048, 64 2,048/128, 64 2,048/2,048), H100 -12.7 / +35.4 / -17.4 / "
    "-14.9% (512 128/128, 128 128/2,048, 64 2,048/128, 32 2,048/2,048): the long-output rows at 64-256 streams "
    "want 4-8 ms a step more than OOTB's compute-bound decode, the H100 batch-32 row none (its FP8 reads of all "
    "8 experts need 0.65 of 3,350 GB/s with prefill and all-reduces counted zero). Held out, the same page's "
    "first tokens at 2,048 tokens (batch 1, TP 2: H100 89.5, H200 87.7, A100 160.9 ms): top-2 runs 0.30-0.31 of "
    "the 16-bit peak on Hopper, 1.80-1.83x the A100's 0.53, the throughput rows' ratio again, where OOTB would "
    "need 0.54-0.55 of the FP8 peak, 18-20% above the engine's fit on the same table's dense Llama 2 7B first "
    "token (0.46): the first tokens favour the plugin, the default. Neither path alone fits the "
    "eight rows (plugin: a Sm80 rate on Hopper no source gives, and no one rate: the engine's read-or-compute step "
    "needs 268 / 334 TFLOPS on the experts for the H200 128/128 and 2,048/128 rows, 265 / 389 on the H100, while the "
    "H100 128/2,048 and batch-32 rows exceed all 8 16-bit experts' reads even at infinite compute, 2,772 / 717 at "
    "most, so a random router's fewer experts too; OOTB: three long rows +30 to +40%), and the page does not "
    "say which path the FP8 engines ran "
    "(no Mixtral recipe; NVIDIA/TensorRT-LLM#1229, Tracin 2024-03-05: 'Mixtral with FP8 is almost done for now, "
    "will be released in version 0.9.0'). A spec would need the serving engine's MoE path (TensorRT-LLM release "
    "and moe_plugin on / off) and, for the plugin, that kernel's Hopper rate; not added (the path is not stated "
    "for these rows and neither sizes all of them)"
)
FP8_HOPPER_MOE = (
    "UNEXPLAINED: [TRT9] Mixtral 8x7B FP8 on Hopper, {row}: published {published:,}; ours {ours:,.1f} ({err:+.1%}). "
    "Sized: the H100 batch-512 128/128 row's step is 512 / (5,255 x 2) = 48.7 ms with its amortized prefill, ours "
    "21.3 ms (decode memory-bound, 13.3 ms: all experts' FP8 reads 23.3 GB a GPU at 0.70 of 3,350 GB/s = 9.9 ms plus "
    "KV). The 1,024 tokens a step (512 decoded, 512 prefilled) carry 1,024 x 2 x 12.75e9 = 26.1 TFLOP: 13.5% of two "
    "H100s' FP8 peak, where the same table's dense Llama 2 70B TP 2 batch 1,024 128/128 row (3,214) runs 45%. The "
    "engine's inference path charges an MoE nothing beyond its reads and FLOPs (the routed-bytes and per-layer MoE "
    "seconds are training-only); sized as a BF16 engine (16-bit reads and rate) the H100 rows read +30.1% (128/128), +6.5% (2,048/128), "
    "-26.8% (128/2,048): v0.9.0's MoE layer did not run at the FP8 rate (the release notes list 'Supported FP8 OOTB "
    "MoE' only at v0.12.0), but no published figure sizes its rate, so no cost is fitted here. serve44, sized "
    "across the table: the four prefill-heavy Hopper rows (H200 1,024 128/128 and 64 2,048/128, H100 512 128/128 "
    "and 64 2,048/128) run at one rate, 278 / 262 / 268 / 255 TFLOPS a GPU on active FLOPs (decoded plus "
    "amortized prompt tokens x 2 x 12.75e9 / TP / the published step), the same on the 3.35 and 4.8 TB/s cards: "
    "a compute ceiling, 0.26-0.28 of the dense BF16 peak and 0.13-0.14 of the FP8 one; the A100 FP16 rows of the "
    "same shapes run 145 / 138 (0.44-0.46 of 312), and 1.88x the A100 is near the SM count x boost clock ratio "
    "(132 x 1.98 / (108 x 1.41) = 1.72): the A100's 16-bit kernels on more SMs, not Hopper's FP8 path. The v0.10.0 "
    "release notes list 'Added FP8 quantization support for Mixtral' (docs/source/release-notes.md), so v0.9.0's "
    "FP8 Mixtral ran its experts through the 16-bit MoE plugin. The decode-heavy rows do not fit 16-bit expert reads "
    "(H100 32 2,048/2,048: published step 12.1 ms, 16-bit experts 46.7 GB a GPU take 13.9 ms at the full 3,350 GB/s), "
    "so either fewer experts were read than uniform routing reads (the A100 2,048/2,048 anomaly) or the stored "
    "weights were 8-bit: not one mechanism. A spec could state the MoE kernel's precision and rate (a serving "
    "engine release), none does; fitted on this one release it would mis-size every FP8 MoE engine since v0.12.0. "
    "cls45, both halves now located in the release's source: [MOEGEMM] has no FP8 weight type and runs the Sm80 "
    "grouped GEMM on Hopper ('TODO Update the arch to Sm90'), so the experts ran 16-bit mma.sync kernels: the A100's "
    "138-145 TFLOPS on the same shapes times the SM x clock ratio 1.72 gives 237-249, 7-15% under the Hopper rows' "
    "255-278; and [TRTBENCH] built the engines without a checkpoint (xavier-random weights, random token ids), so "
    "the router is random: the batch-32 2,048/2,048 rows read at most 5.9 (A100), 5.3 (L40S) and 6.5 (H100) of the "
    "8 experts a layer and step with 16-bit experts at the full datasheet bandwidth, where a trained router's 32 "
    "streams read 8 (test_the_batch_32_long_output_rows_read_fewer_experts_than_any_trained_router). Sized as a "
    "16-bit engine (reads and rate) ours reads +67.0 / +18.8 / +20.3 / -15.1% (H200) and +30.1 / -26.8 / +6.5% (H100): "
    "too fast where the Sm80 rate binds, too slow where a random router's fewer experts do; each row needs both, "
    "and the experts a random router reads depend on its draw, which no spec of a deployable model states. "
    "UNEXPLAINED as a sized term (the Sm80 rate is sized only by the A100 rows of this one table)."
    + MOE47_HOPPER
)
A100_BELOW_READS = (
    "UNEXPLAINED (withdrawn by audx48a: (b) fails: 'at most 5.9 of 8' bounds how many 16-bit experts the run read but no published figure says how many it did, so no arithmetic reproduces the gap within 15% (a bracket sized on the row itself, which the bar does not accept as a size); the arithmetic re-checked and sound, and (a)'s ingredients opened (moe.py @250d9c29 `self.weight_dtype = dtype`; parameter.py copies torch.randn * 2 - 1), but the concentration of the random router is inferred, not measured): "
    "EXPLAINED: (cls45) [TRT9] Mixtral 8x7B FP16 A100 TP 2, batch 32, 2,048/2,048: published 801; ours "
    "{ours:,.1f} ({err:+.1%}). (a) the table's engines carry no Mixtral weights: [TRTBENCH] "
    "the v0.9.0 page's own 'Reproducing' recipe builds every engine with trtllm-build --model_config "
    "<ckpt_config.json> (no checkpoint) and times it with gptSessionBenchmark; network.py _fill_weights fills every "
    "weight with Parameter.xavier_init (random, mean -v_range), and the gptSessionBenchmark copies either side of "
    "v0.9.0 (@3c44cb97, older; id 2618118190, later) both feed random token ids (rand() % vocabSizePadded); "
    "benchmarks/python/build.py @05316d33 (a v0.11.0 copy) and id 142410815 (a 2024 copy) also build from a config "
    "dict without a checkpoint. So each token's two experts are a random router's, and its choices are "
    "concentrated across tokens: the mean -v_range of every random matrix gives all tokens' hidden states a shared "
    "component, so all tokens' router logits carry the same per-expert term and the same few experts win (a "
    "uniformly random top-2 drawn anew for each of 32 streams would read all 8); (b) sized from "
    "the row: its whole step, 32 / (801 x 2) = 20.0 ms with the amortized prefill counted as zero, at the full "
    "2,039 GB/s moves 40.7 GB a GPU; less the KV cache (6.4 GB at FP16, mean context 3,071.5) and the attention "
    "weights (1.3 GB) it leaves room for 5.9 of the 8 FP16 experts a layer (5.64 GB each a GPU), where 32 streams "
    "of a trained router read 8 (1 - 0.75^32 = 99.99% each; moe_routed_expert_reads), and so would a uniformly "
    "random, unconcentrated draw: no model of a trained "
    "Mixtral reaches 801 on this card, and the FP16 table leaves no precision question; fixa45: the decode "
    "attention makes it tighter still, v0.9.0-era XQA takes only 8 (or 1) query heads a KV head "
    "(decoderXQARunner.h shouldUse, three stored copies, none tagged v0.9.0, from around 0.8-0.9 and later; XQA on "
    "by default, PluginConfig enable_xqa True, stored id 4882224494; test_outside_xqa_stop45.py) and Mixtral has 4, "
    "so the step ran the per-query-head masked MHA kernel, which reads each KV head once per query head "
    "(test_the_batch_32_long_output_rows_read_fewer_experts_than_any_trained_router); the same anomaly as the A100 "
    "TP 2 first token (test_outside_audit_stop43s.py); (c) a spec would have to state how many experts the "
    "router's draw reads, which is no property of a deployable model: no field can; the product sizes trained routing"
)
L40S_MOE = (
    "UNEXPLAINED: [TRT9] Mixtral 8x7B FP8 L40S (PCIe), {row}: published {published:,}; ours {ours:,.1f} "
    "({err:+.1%}). The long-output row's published step (32 / (412 x 4) = 19.4 ms) equals the FP8 weight reads alone "
    "(11.7 GB a GPU at 0.70 of 864 GB/s = 19.3 ms), leaving no time for the KV reads and 64 PCIe all-reduces a step "
    "that ours adds (25.6 ms); the prefill-heavy rows read too fast instead (the same card's dense 70B TP 4 rows "
    "are +35.8% / +15.7%, test_outside_audit_stop42a.py): the L40S host's P2P and all-reduce path are not stated. "
    "serve44: a PCIe ring at 0.45 of the x16 link (fitted on the dense TP 4 rows) brings the 128/128 and 2,048/128 "
    "rows to -9.9% / -1.5% and keeps 128/2,048 inside (-4.8%), but the same table's Falcon 180B L40S TP 8 first "
    "token and four throughput rows want 0.75-0.80 or more (-43% to -18% at 0.45), so it was not landed "
    "(test_outside_audit_stop42a.py PCIE_TP_REASON, test_outside_serve44.py); the 2,048/2,048 "
    "row reads -32.5% at 0.45, -28.7% at 0.80, below its own weight reads either way. cls45: [MOEGEMM] ran the "
    "experts 16-bit (no FP8 weight type in the release's MoE GEMM); sized as a 16-bit engine the 2,048/128 row reads "
    "-5.3% (inside without any PCIe share) and 128/128 -23.7% (its 256 streams' decode reads a random router's "
    "experts, [TRTBENCH], unsized); UNEXPLAINED. moe47 ([V090], the release commit): sized as the OOTB path "
    "(FP8 experts, all 8 for every token, at the engine's FP8 rate) by hand the four L40S rows read +3.5 / +10.3 / "
    "+4.6 / -30.3% (256 128/128, 256 128/2,048, 64 2,048/128, 32 2,048/2,048), the two xfails inside, but the same "
    "path leaves three Hopper long-output rows +30 to +40% (MOE47_HOPPER) and the page does not say which MoE path "
    "its FP8 engines ran (v0.9.0's default is the 16-bit plugin); not landed"
)
L40S_BELOW_READS = (
    "UNEXPLAINED (withdrawn by audx48a: (b) fails: 'room for 5.3 of the 8' bounds how many 16-bit experts the run read but no published figure says how many it did, so no arithmetic reproduces the gap within 15% (a bracket sized on the row itself, which the bar does not accept as a size); the arithmetic re-checked and sound, and (a)'s ingredients opened (moe.py @250d9c29 `self.weight_dtype = dtype`; parameter.py copies torch.randn * 2 - 1), but the concentration of the random router is inferred, not measured): "
    "EXPLAINED: (cls45; before, left open with the PCIe rows) [TRT9] Mixtral 8x7B FP8 L40S (PCIe) TP 4, batch 32, "
    "2,048/2,048: published 412; ours {ours:,.1f} ({err:+.1%}). (a) the release's MoE GEMM has no FP8 weight type "
    "([MOEGEMM]: T, uint8 or uint4; FP8 Mixtral only from v0.10.0), so the experts were 16-bit, and the engine's "
    "router is random ([TRTBENCH]: no checkpoint, xavier-random weights, random token ids); (b) sized from the row: "
    "its whole step, 32 / (412 x 4) = 19.4 ms with the amortized prefill and the PCIe all-reduces counted as zero, "
    "at the full 864 GB/s moves 16.8 GB a GPU; less the FP8 KV cache (1.6 GB) and the FP8 attention weights "
    "(0.3 GB) it leaves room for 5.3 of the 8 16-bit experts a layer (2.82 GB each a GPU), where 32 streams of a "
    "trained router read 8 (test_the_batch_32_long_output_rows_read_fewer_experts_than_any_trained_router); the "
    "A100 FP16 row of the same table needs the same (at most 5.9); (c) the experts a random router reads are no "
    "property of a deployable model: no field can state them; the product sizes trained routing"
)
# moe47 (inference.expert_precision): every FP8 row below states `expert_precision: fp16`, what the published run
# did. [V090] (the release commit, @250d9c293d5edbc2a45c20775b3150b1eb68b364, opened): tensorrt_llm/layers/moe.py
# MixtureOfExperts `self.weight_dtype = dtype` (trt.int8 only `if quant_mode.is_weight_only()`), experts_weight_1 /
# _2 Parameters at that weight_dtype, so an FP8 build keeps the plugin's expert weights at the model's 16-bit dtype;
# cpp/tensorrt_llm/plugins/mixtureOfExperts/mixtureOfExpertsPlugin.cpp init() builds only (half, half), (float,
# float), (half, int8 / int4), (bf16, bf16), (bf16, int8 / int4) runners (no FP8), and plugin.py's PluginConfig
# has `moe_plugin = "float16"` on by default. The attention and dense linears stay FP8 (spec.precision), the KV
# cache FP8 (kv_cache_dtype). The engine then reads the experts at 2 bytes a weight and runs their GEMMs at the
# 16-bit peak and the 16-bit prefill efficiency (throughput.expert_split). The A100 rows are FP16 throughout: unchanged.
V090_EXPERTS = "fp16"
# ours with the experts at the model's FP8 (before moe47 stated them), for the reasons' published -> before -> after
MOE47_BEFORE = {
    (H200, 1024, 128, 128): 14678.9,
    (H200, 256, 128, 2048): 10933.7,
    (H200, 64, 2048, 128): 1242.4,
    (H200, 64, 2048, 2048): 2849.7,
    (H100, 512, 128, 128): 12044.4,
    (H100, 128, 128, 2048): 4712.6,
    (H100, 64, 2048, 128): 1091.2,
    (H100, 32, 2048, 2048): 1218.3,
    (L40S, 256, 128, 128): 1458.4,
    (L40S, 256, 128, 2048): 1657.0,
    (L40S, 64, 2048, 128): 203.0,
    (L40S, 32, 2048, 2048): 293.9,
}
MOE47_SM80_RATE = (
    "UNEXPLAINED in part: [TRT9] Mixtral 8x7B FP8, {row}: published {published:,}; ours {before:,.1f} "
    "({before_err:+.1%}) with the experts at FP8 -> {ours:,.1f} ({err:+.1%}) with inference.expert_precision fp16 "
    "stated (moe47). (a) [V090], opened: v0.9.0's default MoE plugin keeps the experts at the model's 16-bit dtype "
    "(moe.py `self.weight_dtype = dtype`; mixtureOfExpertsPlugin.cpp init() has no FP8 runner), so the experts "
    "read 2 bytes a weight and run 16-bit GEMMs while attention and the dense linears run FP8. (b) Stating it "
    "closes {closed:.0%} of the gap. (c) Left: the experts' 16-bit GEMM rate. The engine runs them at its 16-bit "
    "Hopper prefill efficiency, 0.55 of the 16-bit peak (0.46 x 2 / 1.68, fitted on dense first tokens), where the "
    "four prefill-heavy Hopper rows of this table run 0.26-0.28 of the 16-bit peak on top-2 FLOPs for the whole step "
    "(test_v090_moe_paths_against_the_prefill_heavy_rows) and the A100 FP16 rows 0.44-0.46: the release runs the "
    "experts on the Sm80 CUTLASS grouped GEMM on Hopper too ([MOEGEMM], 'TODO Update the arch to Sm90'), whose "
    "Hopper rate no opened source gives (SM count x boost clock would give 1.72x the A100's, the rows show "
    "1.84-1.92x). No rate is fitted (only this table's rows size it); UNEXPLAINED for that rest. moe48 tried the "
    "Sm80 instruction rate (Ampere's 2,048 16-bit FLOPs a SM a clock on Hopper's 132 SMs at 1,830-1,980 MHz) at "
    "the same release's A100 efficiency on these experts (0.531, its 2,048-token first token): the 128/128 rows "
    "land (H200 -3.5 / +3.6%, H100 -2.1 / +4.9%) and the H200 2,048/128 row at 1,980 MHz (-12.4%), but the passing "
    "H100 2,048/128 row leaves the tolerance (+14.4% -> -22.5 / -18.6%), the H200 128/2,048 row stays +36%, and "
    "that Hopper issues mma.sync at Ampere's rate a SM and clock no opened source states: not landed "
    "(test_outside_moe_serving_stop48.py)."
)
MOE47_H100_LONG = (
    "UNEXPLAINED in part: [TRT9] Mixtral 8x7B FP8 H100, {row}: published {published:,}; ours {before:,.1f} "
    "({before_err:+.1%}) with the experts at FP8 -> {ours:,.1f} ({err:+.1%}) with inference.expert_precision fp16 "
    "stated (moe47). (a) [V090], opened: moe.py `self.weight_dtype = dtype` and no FP8 runner in "
    "mixtureOfExpertsPlugin.cpp, so 16-bit experts. (b) Stating it turns +38.3% into -19.3%: the row now reads too "
    "slow. (c) Left: its step, 128 / (3,408 x 2) = 18.8 ms with the amortized prefill, is shorter than the engine's "
    "read of all 8 16-bit experts alone (45.1 GB a GPU at 0.70 of 3,350 GB/s = 19.2 ms) but not than the datasheet's "
    "(13.5 ms, 14.9 with the FP8 KV cache), so the row does not prove that fewer experts were read ([TRTBENCH]'s "
    "random router) nor that reads ran above the engine's 0.70; neither is sized: UNEXPLAINED for that rest."
)
MOE47_H100_BELOW_READS = (
    "UNEXPLAINED (withdrawn by audx48a: (b) fails: 'Size only bounded: at most 6.5 of 8' bounds how many 16-bit experts the run read but no published figure says how many it did, so no arithmetic reproduces the gap within 15% (a bracket sized on the row itself, which the bar does not accept as a size); the arithmetic re-checked and sound, and (a)'s ingredients opened (moe.py @250d9c29 `self.weight_dtype = dtype`; parameter.py copies torch.randn * 2 - 1), but the concentration of the random router is inferred, not measured): "
    "EXPLAINED: [TRT9] Mixtral 8x7B FP8 H100 TP 2, batch 32, 2,048/2,048: published 1,317; ours {before:,.1f} "
    "({before_err:+.1%}) with the experts at FP8 (passing, for a wrong reason: v0.9.0 had no FP8 experts) -> "
    "{ours:,.1f} ({err:+.1%}) with inference.expert_precision fp16 stated (moe47), as the A100 and L40S batch-32 "
    "rows. (a) [V090]: the plugin's experts are 16-bit (moe.py `self.weight_dtype = dtype`, no FP8 runner), and "
    "[TRTBENCH]: the engines ran without a checkpoint (xavier-random weights, random token ids), a random router "
    "concentrated across tokens. (b) Existence: the same table's A100 FP16 TP 2 batch-32 "
    "2,048/2,048 row (published 801; FP16 throughout, so certainly 16-bit experts, in the same harness) reads at "
    "most 5.85 of 8 experts a layer in its step at the A100's full 2,039 GB/s, the KV cache and attention weights "
    "counted (test_the_batch_32_long_output_rows_read_fewer_experts_than_any_trained_router), where 32 streams of "
    "a trained router read 8: the random router's fewer experts, proven on a row with no FP8 to confound it. This "
    "row alone proves fewer 16-bit bytes than all 8 experts (its step, 32 / (1,317 x 2) = 12.15 ms with the "
    "prefill, attention and all-reduces counted as zero, is shorter than all 8 16-bit experts at the full 3,350 "
    "GB/s, 45.1 GB a GPU: 13.46 ms), not fewer experts against FP8 experts (it passed at -7.5% with all 8 read at "
    "FP8); that rests on (a) and the A100 sibling. Size only bounded: at most 6.5 of 8 here. (c) The experts a random router's draw reads are no property of a deployable model: no field "
    "can state them; the product sizes trained routing."
)
MOE47_L40S = (
    "UNEXPLAINED: [TRT9] Mixtral 8x7B FP8 L40S (PCIe), {row}: published {published:,}; ours {before:,.1f} "
    "({before_err:+.1%}) with the experts at FP8 -> {ours:,.1f} ({err:+.1%}) with inference.expert_precision fp16 "
    "stated (moe47; the same plugin on Ada: [V090]'s mixtureOfExpertsPlugin.cpp has no FP8 runner for any card and "
    "moe.py keeps the experts at the model's 16-bit dtype). The row now reads too slow: at 256 streams the engine "
    "reads all 8 16-bit experts (22.5 GB a GPU at 0.70 of 864 GB/s = 37.3 ms) plus the FP8 KV cache and 64 PCIe "
    "all-reduces a step, where the published step with its amortized prefill is {step:.1f} ms; at the full 864 GB/s "
    "the experts take 26.1 ms, inside it, so the row does not prove [TRTBENCH]'s random router read fewer experts, "
    "and the L40S host's PCIe all-reduce path is not stated (cls45). Neither sized: UNEXPLAINED."
)
MOE47_L40S_BELOW_READS = L40S_BELOW_READS + (
    ". moe47: inference.expert_precision fp16 stated ([V090]: the experts 16-bit, as (a) says): ours {before:,.1f} "
    "({before_err:+.1%}) with the experts at FP8 -> {ours:,.1f} ({err:+.1%}), the engine now reading all 8 16-bit "
    "experts a trained router's 32 streams read, which (b) shows the row did not"
)
# mixtral49: what v0.9.0's weightless build puts in the experts and what a 128-token prompt's router then does.
# Opened: NVIDIA/TensorRT-LLM @250d9c29 examples/mixtral/README.md ("If no checkpoint directory is specified,
# TensorRT-LLM will build engine(s) with dummy weights"); tensorrt_llm/layers/moe.py @250d9c29 (stored id 5765230365)
# MoeConfig tp_mode default TENSOR_PARALLEL (models/llama/model.py check_config sets the same when the config json
# omits moe_tp_mode, stored id 5817802860), the router a float32 RowLinear(4096, 8) replicated on every rank,
# experts_weight_1 / _2 3-D Parameters (experts_per_node, 2 x 14,336 / TP, 4,096); tensorrt_llm/parameter.py
# (stored id 3433841355, a "2022-2023" copy; the v0.9.0 copy is not stored): a Parameter without a value is
# "torch.randn(...) * 2 - 1" times v_range, v_range sqrt(6 / (a + b)) for 2-D shapes and 0.1 for any other.
MIXTRAL49_LEAD = (
    " mixtral49: expert parallelism ruled out as the lever (v0.9.0's default moe_tp_mode is TENSOR_PARALLEL, so "
    "every rank reads its 1 / TP slice of each expert a token routes to, which is what the engine charges). The "
    "dummy experts are 3-D Parameters, so they draw at v_range 0.1 (mean -0.1, sd 0.2 a weight), not xavier. A "
    "CPU re-run of that init at Mixtral's shapes (fp32, TP 1, 128 random token ids; seeds 0 and 1 at layer 0, seed 0 "
    "at layer 1; a helper script not committed, not a run of the engine) routed all 128 tokens to one pair of the 8 "
    "experts in each layer run (a different pair each), and layer 0's MoE output reached 2.3e6-2.45e6, above FP16's 65,504: a 16-bit expert GEMM of these weights overflows to inf in the "
    "first layer, so every later layer's float32 router sees inf / NaN, and which experts it then picks is what "
    "the plugin's top-k kernel does with NaN (moe_kernels.cu at v0.9.0, not opened). Not sized: 2 experts a layer "
    "would take the H100 TP 2 first token to about 10 ms (-24% against 13.4) and cls45 found the A100 128/2,048 "
    "row needs nearly all 8 (NOTES, stop 45), so neither 'all 8' nor 'the same 2' sizes these rows; what would "
    "decide it is the NaN path of v0.9.0's topkGatingSoftmax or an nsys trace of the dummy engine."
)
# trtmix (stop 51): the NaN path mixtral49 left open, read and sized. Opened: cpp/tensorrt_llm/kernels/
# mixtureOfExperts/moe_kernels.cu (stored copy @03cff08f14948f2eb805e24829a813052030b41d, id 10368265324, the
# expert-parallel-aware kernel of the v0.9.0 era; the v0.9.0 tag's own copy is not stored) topkGatingSoftmax and
# its launcher; benchmarks/cpp/gptSessionBenchmark.cpp (stored id 2618118190) `samplingConfig.minLength =
# maxNewTokens` unless --disable_force_max_tokens: every run decodes all its output tokens, so no early stop.
TRTMIX_NAN_PATH = (
    " trtmix (stop 51), the NaN path opened and sized: the v0.9.0-era topkGatingSoftmax (moe_kernels.cu, stored "
    "copy @03cff08f; the tag's own copy is not stored; 8 experts: 4 values a thread, 2 threads a row) picks with a "
    "strict '>' and breaks ties on '==', both false against NaN, and clears each winner to -10000, so a row of "
    "NaN logits (or of +/-inf ones, whose softmax is NaN) goes to expert 0 in both top-2 slots. The overflow is no "
    "draw: by hand the weightless init (randn x 2 - 1 times v_range, so every matrix has mean -v_range) gives the "
    "layer-0 attention output a shared +492 a channel (embedding mean -0.0129, the normed input's sum +183, V "
    "-4.43), the MoE input is then the norm weight itself (sum -410), every gate and up row +41, and fc2 -0.1 x "
    "14,336 x silu(41) x 41 = -2.41e6 a channel (-1.2e6 a TP 2 rank's partial), past FP16's 65,504 on every "
    "channel of every token (a numpy re-run of layer 0 in FP16 storage, seed 0, 128 tokens, not committed: +553, "
    "41.1, -2.42e6, inf on all of layer 0's output, NaN on all of layer 1's router logits). A weightless FP16 "
    "v0.9.0 Mixtral therefore reads layer 0's one pair and expert 0 in layers 1-31: 33 of 256 expert-layers a "
    "step, whatever the draw and the batch (gptSessionBenchmark forces every output token: minLength = "
    "maxNewTokens). Sized with the engine's routed-expert share set to 33 / 256 (a throwaway run, not committed), "
    "every row goes fast: H200 +80.4 / +141.6 / +79.9 / +158.9%, H100 +79.6 / +185.0 / +76.6 / +93.8%, L40S "
    "+54.9 / +65.9 / +44.7 / +42.9%, A100 +29.4 / +124.7 / +28.9 / +53.6% (each card's rows in the table's "
    "order), the 128-token first tokens -42.7 / -41.9 / -20.0 / -57.2% (H200, H100, L40S, A100); a BF16 draw "
    "(no overflow: mixtral49's one pair for every token, 2 of 8) gives +7.3% to +141.6% on the throughput rows "
    "and -41.1% to +3.1% on the first tokens. The passing A100 FP16 "
    "128/2,048 row (-10.5% with all 8 read) would have 14 ms of its 37.1 ms step unaccounted, reads and FLOPs "
    "added (test_a_weightless_fp16_mixtral_routes_every_token_to_expert_0_from_layer_1). So no draw of the "
    "weightless recipe sizes these rows: the 'fewer experts' reading of [TRTBENCH] is refuted as a size (the "
    "rows read between the dummy router's 1-2 experts a layer and all 8), not found. Open: whether the Mixtral "
    "rows ran a checkpoint ([TRT9] lists no Mixtral recipe) and the Sm80 grouped GEMM's Hopper rate. An "
    "indication only: with the NaN path and the 32 KV heads that benchmarks/python/allowed_configs.py's "
    "mixtral_8x7b leaves unset (stored id 246281269, no num_kv_heads; its limits, batch 128 and 2,048 positions, "
    "are not this table's, so not its engines as written) the A100 rows read +3.5 / -0.6 / -0.5 / -26.6% but the "
    "Hopper rows +14.7% to +57.6%, the L40S rows +35.7 / -14.4 / +23.1 / -11.5% and the first tokens -18.3% to "
    "-54.7%: not one mechanism."
)
MIXTRAL_ROWS = {
    # (gpu, precision, tp, batch, prompt, output): (published, ours at audit time, reason or None); FP8 rows with
    # expert_precision fp16 stated (moe47; MOE47_BEFORE has ours before)
    (H200, "fp8", 2, 1024, 128, 128): (5444, 9822.1, MOE47_SM80_RATE),
    (H200, "fp8", 2, 256, 128, 2048): (4973, 6899.3, MOE47_SM80_RATE),
    (H200, "fp8", 2, 64, 2048, 128): (605, 778.8, MOE47_SM80_RATE),
    # Landed when stated with 16-bit experts; not FIXED (four passing rows moved out by the same restatement; fix47x
    # after aud47x, explain-rules: a fix moves no passing case out). Was a strict xfail: published 1,821; ours
    # 2,849.7 (+56.5%). Now 1,731.7 (-4.9%) with the experts read at 2 bytes and run at the 16-bit rate
    # (inference.expert_precision fp16 stated: [V090] moe.py weight_dtype = dtype, no FP8 runner in
    # mixtureOfExpertsPlugin.cpp), the attention and dense linears staying FP8. The restatement's other moves:
    # four passing rows moved out by the same restatement: H100 b32 2,048/2,048 -7.5% -> -47.2%, L40S b256 128/2,048 +11.2% -> -25.1%, and test_outside_audit_stop43s.py's H100 / H200 128-token first tokens +11.3% -> +83.1% / -1.5% -> +54.0%.
    (H200, "fp8", 2, 64, 2048, 2048): (1821, 1731.7, None),
    (H100, "fp8", 2, 512, 128, 128): (5255, 7276.4, MOE47_SM80_RATE),
    (H100, "fp8", 2, 128, 128, 2048): (3408, 2751.1, MOE47_H100_LONG),
    # Landed when stated with 16-bit experts; not FIXED (four passing rows moved out by the same restatement, see the
    # H200 b64 2,048/2,048 row above). Was a strict xfail: published 588; ours 1,091.2 (+85.6%). Now 672.8 (+14.4%)
    # with the experts at the 16-bit rate and bytes (expert_precision fp16 stated, [V090] as above). At the edge:
    # the prefill-heavy rows' 0.26-0.28 of the 16-bit peak (MOE47_SM80_RATE) says the Sm80 grouped GEMM's rate is
    # still under the 0.55 the engine charges, here offset by the row's other terms. If a Hopper rate for v0.9.0's
    # Sm80 grouped GEMM is ever fitted, hold this row out (it lands only by the tolerance's width at 0.55).
    (H100, "fp8", 2, 64, 2048, 128): (588, 672.8, None),
    (H100, "fp8", 2, 32, 2048, 2048): (1317, 695.1, MOE47_H100_BELOW_READS),
    (L40S, "fp8", 4, 256, 128, 128): (1266, 998.3, MOE47_L40S),
    (L40S, "fp8", 4, 256, 128, 2048): (1490, 1115.7, MOE47_L40S),
    # Landed when stated with 16-bit experts; not FIXED (four passing rows moved out by the same restatement, see the
    # H200 b64 2,048/2,048 row above). Was a strict xfail: published 155; ours 203.0 (+31.0%). Now 154.1 (-0.6%)
    # with the experts at the 16-bit rate and bytes (expert_precision fp16 stated: the same plugin on Ada, [V090]).
    (L40S, "fp8", 4, 64, 2048, 128): (155, 154.1, None),
    (L40S, "fp8", 4, 32, 2048, 2048): (412, 173.7, MOE47_L40S_BELOW_READS),
    (A100, "fp16", 2, 512, 128, 128): (
        2842,
        3582.1,
        "UNEXPLAINED: [TRT9] Mixtral 8x7B FP16 A100 TP 2, batch 512, 128/128: published 2,842; ours {ours:,.1f} "
        "({err:+.1%}). The compute-bound row runs at 0.47 of the A100's peak on active FLOPs (2,842 x 2 x 2 x 12.75e9 "
        "/ 312e12 per GPU, prefill included), the dense 70B TP 4 batch-1,024 row of the same table 0.61: v0.9.0's "
        "MoE GEMMs at 0.77 of the dense rate, which the engine's inference path does not charge (the FP8 Hopper rows "
        "show the same, larger). serve44: the 2,048/128 row of the same card runs at the same 138 TFLOPS a GPU "
        "(145 here) and passes (-4.8%) because the engine spends its step on the experts' reads instead: both "
        "published rows fit one compute rate, which the engine's read-bound decode step does not produce. cls45: "
        "the experts run the release's CUTLASS grouped GEMM ([MOEGEMM]: Sm80 tiles up to 128 x 128 x 64, 2-4 "
        "stages), not the dense GEMM plugin the engine's rate is fitted on, and its 512 streams route through a "
        "random router ([TRTBENCH]); no source gives that kernel's rate, the two rows of this table only: "
        "UNEXPLAINED as a sized term. moe47 ([V090], the release commit): this row ran the plugin, not OOTB (all 8 "
        "experts for every token would need 1.70x the A100's peak here, 1.62x on the 2,048/128 row), i.e. top-2 "
        "16-bit experts on the Sm80 grouped GEMM at 0.44-0.46 of the peak where the engine's dense A100 rate is 0.68; "
        "an expert-only rate of 167-179 TFLOPS (0.54-0.57 of the peak) in the engine's read-or-compute decode step "
        "would land this row and keep 128/2,048 and 2,048/128 inside (at 170: +9.9 / -10.6 / -13.9%), but it is a "
        "constant fitted on two rows of this table with no held-out MoE serving row on an A100 and no source for "
        "the kernel's rate, so not landed; with no overlap of reads and compute no single rate lands both "
        "prefill-heavy rows (-21.4 / -17.3% at 170, -10.9 / -6.2% only at the dense 212 where 128/2,048 is -24.4%)",
    ),
    (A100, "fp16", 2, 128, 128, 2048): (1724, 1543.7, None),  # -10.5%
    (A100, "fp16", 2, 64, 2048, 128): (319, 303.8, None),  # -4.8%
    (A100, "fp16", 2, 32, 2048, 2048): (801, 394.8, A100_BELOW_READS),
}


def _mixtral_id(case) -> str:
    gpu, precision, tp, batch, prompt, output = case
    return f"{gpu}-{precision}-tp{tp}-b{batch}-{prompt}-{output}"


# the reasons each FP8 row carried before moe47 stated its experts' precision (their numbers: the experts at FP8)
MOE47_HISTORY = {
    (H200, 1024, 128, 128): FP8_HOPPER_MOE,
    (H200, 256, 128, 2048): FP8_HOPPER_MOE,
    (H200, 64, 2048, 128): FP8_HOPPER_MOE,
    (H100, 512, 128, 128): FP8_HOPPER_MOE,
    (H100, 128, 128, 2048): FP8_HOPPER_MOE,
    (L40S, 256, 128, 128): L40S_MOE,
    (L40S, 64, 2048, 128): L40S_MOE,
}


def _mixtral_param(case):
    published, ours, reason = MIXTRAL_ROWS[case]
    marks = ()
    if reason:
        gpu, _, tp, batch, prompt, output = case
        row = f"TP {tp}, batch {batch}, {prompt}/{output}"
        before = MOE47_BEFORE.get((gpu, batch, prompt, output), ours)
        text = reason.format(
            row=row,
            published=published,
            ours=ours,
            err=gap(ours, published),
            before=before,
            before_err=gap(before, published),
            closed=(before - ours) / (before - published) if before != published else 0.0,
            step=batch / (published * tp) * 1000,
        )
        history = MOE47_HISTORY.get((gpu, batch, prompt, output))
        if history:
            text += " History, the experts at FP8: " + history.format(
                row=row, published=published, ours=before, err=gap(before, published)
            )
        text += MIXTRAL49_LEAD + TRTMIX_NAN_PATH
        marks = (pytest.mark.xfail(strict=True, reason=text),)
    return pytest.param(case, marks=marks, id=_mixtral_id(case))


def serving_as_run(gpu, precision, tp, batch, prompt, output):
    """test_serving_published.serving with what the v0.9.0 run did stated: FP8 rows keep 16-bit experts."""
    raw = trtllm_spec("mixtral-8x7b", precision, tp, batch, prompt, output)
    if precision == "fp8":
        raw["inference"]["expert_precision"] = V090_EXPERTS
    report = size_workload(parse_workload_spec({"name": "s", **raw}), [GPUS[gpu]])
    return next(c for c in report["candidates"] if c["gpus"] == tp)["throughput"]


@pytest.mark.parametrize("case", [_mixtral_param(case) for case in MIXTRAL_ROWS])
def test_trt9_mixtral_peak_throughput_within_15_percent(case):
    gpu, precision, tp, batch, prompt, output = case
    published = MIXTRAL_ROWS[case][0]
    rows = serving_as_run(gpu, precision, tp, batch, prompt, output)
    assert rows["decode_tokens_per_second_total"] / tp == pytest.approx(published, rel=SPEED)


# cls45: arithmetic on the published rows only. Each batch-32 2,048/2,048 row's whole step (the amortized prefill,
# the attention math and any all-reduce counted as zero, so an upper bound) at the datasheet bandwidth (A100 SXM4
# 80GB 2,039 GB/s, H100 SXM5 3,350 GB/s, L40S 864 GB/s: NVIDIA datasheets, as the reasons above use them) less
# the KV cache (65,536 elements a token: 32 layers x 2 x 8 KV heads x 128; mean context 2,048 + 2,047 / 2; FP8 on
# the FP8 rows, build.py's "fp8" recipe quantizes the KV cache too) and the attention weights (32 x (4,096 x 6,144
# + 4,096 x 4,096), FP8 on the FP8 rows) leaves room for so many 16-bit experts a layer ([MOEGEMM]: no FP8 weight
# type), each 3 x 4,096 x 14,336 x 32 layers x 2 B / TP. A trained router's 32 streams read all 8 (1 - 0.75^32),
# and so would a router that drew a uniformly random top-2 for each token: fewer than 8 needs a draw concentrated
# across tokens ([TRTBENCH]: the shared component the mean -v_range of every xavier-random matrix gives all hidden states).
MIXTRAL_EXPERT_BYTES_16 = 3 * 4096 * 14336 * 32 * 2  # one expert in every layer, 16-bit
MIXTRAL_ATTENTION_PARAMS = 32 * (4096 * 6144 + 4096 * 4096)
MIXTRAL_KV_ELEMENTS = 32 * 2 * 8 * 128
LONG_OUTPUT_ROWS = {
    # gpu: (tp, published tok/s/GPU, datasheet B/s, bytes a KV / attention element, experts room)
    A100: (2, 801, 2039e9, 2, 5.85),
    H100: (2, 1317, 3350e9, 1, 6.53),
    L40S: (4, 412, 864e9, 1, 5.26),
}


@pytest.mark.parametrize("gpu", list(LONG_OUTPUT_ROWS))
def test_the_batch_32_long_output_rows_read_fewer_experts_than_any_trained_router(gpu):
    tp, published, bandwidth, element_bytes, room = LONG_OUTPUT_ROWS[gpu]
    batch, prompt, output = 32, 2048, 2048
    step = batch / (published * tp)
    kv = batch * (prompt + (output - 1) / 2) * MIXTRAL_KV_ELEMENTS * element_bytes / tp
    attention = MIXTRAL_ATTENTION_PARAMS * element_bytes / tp
    experts = (step * bandwidth - kv - attention) / (MIXTRAL_EXPERT_BYTES_16 / tp)
    assert experts == pytest.approx(room, abs=0.01)
    trained = 8 * (1 - 0.75**batch)  # expected experts a layer a trained (uniform) router's 32 streams read
    assert trained > 7.99 and experts < 0.82 * trained


# moe47: [V090]'s two MoE paths against the prefill-heavy rows of [TRT9] (published arithmetic only). FLOPs a token,
# top-2 (the plugin, the default): 2 x (2 experts of 3 x 4,096 x 14,336 over 32 layers + the attention weights + the
# 32,000 x 4,096 output layer) = 25.5e9; OOTB (every expert for every token, FP8Linear experts): the same with 8
# experts, 93.1e9. A step carries `batch` decoded and batch x prompt / output amortized prompt tokens in
# batch / (published x TP) seconds. Dense peaks (NVIDIA datasheets): H100 SXM5 / H200 SXM FP8 1,979 and 16-bit 989
# TFLOPS; A100 SXM4 FP16 312. SM count x boost clock: H100 132 x 1.98 GHz, A100 108 x 1.41 GHz.
MIXTRAL_EXPERT_PARAMS = MIXTRAL_EXPERT_BYTES_16 // 2  # one expert in every layer
MIXTRAL_OUTPUT_PARAMS = 32000 * 4096
TOP2_FLOPS = 2 * (2 * MIXTRAL_EXPERT_PARAMS + MIXTRAL_ATTENTION_PARAMS + MIXTRAL_OUTPUT_PARAMS)
OOTB_FLOPS = 2 * (8 * MIXTRAL_EXPERT_PARAMS + MIXTRAL_ATTENTION_PARAMS + MIXTRAL_OUTPUT_PARAMS)
PREFILL_HEAVY_ROWS = {
    # (gpu, batch, prompt, output): (published, OOTB share of the precision's peak, top-2 share of the 16-bit peak)
    (H200, 1024, 128, 128): (5444, 0.512, 0.281),
    (H100, 512, 128, 128): (5255, 0.495, 0.271),
    (H200, 64, 2048, 128): (605, 0.484, 0.265),
    (H100, 64, 2048, 128): (588, 0.470, 0.258),
    (A100, 512, 128, 128): (2842, 1.697, 0.464),
    (A100, 64, 2048, 128): (319, 1.619, 0.443),
}
PEAKS = {H200: (1979e12, 989e12), H100: (1979e12, 989e12), A100: (312e12, 312e12)}


def _per_gpu_rate(gpu, batch, prompt, output, flops_per_token):
    published = PREFILL_HEAVY_ROWS[(gpu, batch, prompt, output)][0]
    step = batch / (published * 2)  # TP 2
    tokens = batch + batch * prompt / output
    return tokens * flops_per_token / 2 / step


def test_v090_moe_paths_against_the_prefill_heavy_rows():
    assert TOP2_FLOPS == pytest.approx(25.495e9, rel=1e-3) and OOTB_FLOPS == pytest.approx(93.141e9, rel=1e-3)
    for (gpu, batch, prompt, output), (_, ootb_share, top2_share) in PREFILL_HEAVY_ROWS.items():
        peak, peak16 = PEAKS[gpu]
        ootb = _per_gpu_rate(gpu, batch, prompt, output, OOTB_FLOPS) / peak
        top2 = _per_gpu_rate(gpu, batch, prompt, output, TOP2_FLOPS) / peak16
        assert ootb == pytest.approx(ootb_share, abs=0.001) and top2 == pytest.approx(top2_share, abs=0.001)
        if gpu == A100:
            assert ootb > 1.6  # the A100 rows cannot have run OOTB: they ran the 16-bit plugin
        else:  # OOTB's FP8 rate sits at the engine's FP8 prefill efficiency (0.46), 2-11% above it
            assert 1.0 < ootb / PREFILL_EFFICIENCY_FP8.value < 1.12
    # the plugin reading: Hopper's Sm80 grouped GEMM runs 1.84-1.92x the A100's on the same shapes, above the SM
    # count x boost clock ratio; no source sizes the difference
    a100 = {
        prompt: _per_gpu_rate(A100, b, prompt, 128, TOP2_FLOPS)
        for (g, b, prompt, _) in PREFILL_HEAVY_ROWS
        if g == A100
    }
    ratios = [
        _per_gpu_rate(g, b, prompt, 128, TOP2_FLOPS) / a100[prompt]
        for (g, b, prompt, _) in PREFILL_HEAVY_ROWS
        if g != A100
    ]
    assert min(ratios) == pytest.approx(1.84, abs=0.01) and max(ratios) == pytest.approx(1.92, abs=0.01)
    sm_clock = 132 * 1.98 / (108 * 1.41)
    assert sm_clock == pytest.approx(1.72, abs=0.01) and sm_clock < min(ratios)
    # OOTB reads all 8 FP8 experts every step whatever the router: the H100 batch-32 2,048/2,048 row's step (prefill
    # and all-reduces counted zero) then needs 0.65 of 3,350 GB/s for them, its FP8 attention and output layer and
    # its FP8 KV cache (mean context 3,071.5)
    step = 32 / (1317 * 2)
    weights = (8 * MIXTRAL_EXPERT_PARAMS + MIXTRAL_ATTENTION_PARAMS + MIXTRAL_OUTPUT_PARAMS) / 2
    kv = 32 * (2048 + 2047 / 2) * MIXTRAL_KV_ELEMENTS / 2
    assert (weights + kv) / step / 3350e9 == pytest.approx(0.651, abs=0.001)
    # held out: [TRT9]'s first tokens at 2,048 tokens, batch 1, TP 2 (H100 89.5, H200 87.7, A100 160.9 ms), with the
    # causal attention core (4 x 32 layers x 4,096 x 1,024 a token): top-2 gives Hopper 1.80-1.83x the A100 again;
    # OOTB would need 0.54-0.55 of the FP8 peak, 18-20% above the dense Llama 2 7B first token's 0.46
    attention = 4 * 32 * 4096 * 1024
    first = {H100: 0.0895, H200: 0.0877, A100: 0.1609}
    top2 = {g: 2048 * (TOP2_FLOPS + attention) / 2 / t for g, t in first.items()}
    ootb = {g: 2048 * (OOTB_FLOPS + attention) / 2 / t / PEAKS[g][0] for g, t in first.items()}
    assert top2[H100] / top2[A100] == pytest.approx(1.80, abs=0.01)
    assert top2[H200] / top2[A100] == pytest.approx(1.83, abs=0.01)
    assert top2[A100] / PEAKS[A100][1] == pytest.approx(0.531, abs=0.001)
    assert ootb[H100] == pytest.approx(0.542, abs=0.001) and ootb[H200] == pytest.approx(0.553, abs=0.001)
    assert ootb[H100] / PREFILL_EFFICIENCY_FP8.value > 1.17


def _fmaxf(a: float, b: float) -> float:
    """CUDA's max(float, float) (fmaxf): the other operand when one is NaN."""
    if math.isnan(a):
        return b
    if math.isnan(b):
        return a
    return a if a > b else b


def _v090_top2_of_8(logits: list[float]) -> list[int]:
    """moe_kernels.cu topkGatingSoftmax (stored copy @03cff08f) for 8 experts and k = 2, step by step: the launcher
    gives BYTES_PER_LDG 16, ELTS_PER_LDG 4, VPT 4, THREADS_PER_ROW 2 (thread 0 holds experts 0-3, thread 1 experts
    4-7); a fmaxf reduce, expf, the row sum, each thread's strict '>' argmax, the butterfly's '>' or '==' with the
    lower index, the winner cleared to -10000 before the next k."""
    chunks = [[float(v) for v in logits[0:4]], [float(v) for v in logits[4:8]]]
    row_max = _fmaxf(
        _fmaxf(_fmaxf(chunks[0][0], chunks[0][1]), _fmaxf(chunks[0][2], chunks[0][3])), float("-inf")
    )
    row_max = _fmaxf(row_max, _fmaxf(_fmaxf(chunks[1][0], chunks[1][1]), _fmaxf(chunks[1][2], chunks[1][3])))

    def expf(x: float) -> float:
        return (
            x
            if math.isnan(x)
            else (0.0 if x == float("-inf") else math.exp(x) if x != math.inf else math.inf)
        )

    chunks = [[expf(v - row_max) for v in c] for c in chunks]
    total = sum(chunks[0]) + sum(chunks[1])
    reciprocal = 1.0 / total if total and not math.isnan(total) else math.nan
    chunks = [[v * reciprocal for v in c] for c in chunks]
    picks = []
    for _ in range(2):
        best = []
        for thread, chunk in enumerate(chunks):
            value, expert = chunk[0], 4 * thread
            for i in range(1, 4):
                if chunk[i] > value:
                    value, expert = chunk[i], 4 * thread + i
            best.append((value, expert))
        (v0, e0), (v1, e1) = best  # thread 0's view after the butterfly (mask 1)
        if v1 > v0 or (v1 == v0 and e1 < e0):
            v0, e0 = v1, e1
        picks.append(e0)
        chunks[e0 // 4][e0 % 4] = -10000.0
    return picks


def test_a_weightless_fp16_mixtral_routes_every_token_to_expert_0_from_layer_1():
    # the kernel as transcribed: a finite row gets its true top-2; a NaN row, or a row of +/-inf logits (its softmax
    # is inf - inf = NaN), gets expert 0 twice
    assert _v090_top2_of_8([0.1, 3.0, 0.2, -1.0, 5.0, 0.0, 2.9, 0.3]) == [4, 1]
    assert _v090_top2_of_8([0.0] * 7 + [1.0]) == [7, 0]
    assert _v090_top2_of_8([math.nan] * 8) == [0, 0]
    assert _v090_top2_of_8([math.inf, -math.inf] * 4) == [0, 0]
    # layer 0 of the weightless build by hand (tensorrt_llm/parameter.py, stored id 3433841355: (randn x 2 - 1) x
    # v_range, v_range sqrt(6 / (a + b)) for 2-D shapes, 0.1 otherwise; the mean parts only: every entry of a
    # matrix has mean -v_range, so W x has -v_range x sum(x) in every row)
    v_embedding = math.sqrt(6 / (32000 + 4096))
    normed_mean = -v_embedding / math.sqrt(v_embedding**2 + (2 * v_embedding) ** 2)  # -1 / sqrt(5) a channel
    input_sum = 4096 * normed_mean * -0.1  # the input norm's weight, mean -0.1 (1-D: v_range 0.1)
    value = -math.sqrt(6 / (6144 + 4096)) * input_sum  # V, shared by every token: attention averages it
    attention_out = -math.sqrt(6 / (4096 + 4096)) * 4096 * value
    assert input_sum == pytest.approx(183.2, abs=0.1) and value == pytest.approx(-4.43, abs=0.01)
    assert attention_out == pytest.approx(491.5, abs=0.1)  # a channel, against the embedding's 0.029 rms
    # the post-attention norm then sees +492 on every channel: its output is the norm weight (sum -409.6)
    gate = -0.1 * (4096 * -0.1)  # every gate and up row of a 3-D expert weight (v_range 0.1)
    fc2 = -0.1 * 14336 * (gate / (1 + math.exp(-gate)) * gate)
    assert gate == pytest.approx(40.96) and fc2 == pytest.approx(-2.405e6, rel=1e-3)
    assert abs(fc2) / 2 > 18 * 65504  # each TP 2 rank's partial is past FP16's largest finite value too
    # so every channel is -inf after layer 0, the next RMSNorm gives -inf x rsqrt(inf) = NaN, and each later
    # layer's router sends every token to expert 0: 1 + 32 expert-layers read of 256, whatever the batch
    nan_share = (2 + 31) / (8 * 32)
    assert nan_share == pytest.approx(0.129, abs=0.001)
    # the passing A100 FP16 128/2,048 row (-10.5% with all 8 read): its published step against the NaN path's
    # reads at the engine's 0.70 of 2,039 GB/s plus its top-2 FLOPs at the 0.464 of 312 TFLOPS the same card's
    # 512-stream 128/128 row runs (PREFILL_HEAVY_ROWS), added, not overlapped
    step = 128 / (1724 * 2)
    kv = 128 * (128 + 2047 / 2) * MIXTRAL_KV_ELEMENTS * 2 / 2
    others = (MIXTRAL_ATTENTION_PARAMS + MIXTRAL_OUTPUT_PARAMS) * 2 / 2 + kv
    experts_all = 8 * MIXTRAL_EXPERT_BYTES_16 / 2

    def reads_s(share: float) -> float:
        return (experts_all * share + others) / (0.70 * 2039e9)

    compute_s = 128 * TOP2_FLOPS / 2 / (0.464 * 312e12)
    assert step == pytest.approx(0.03712, abs=1e-5)
    assert reads_s(nan_share) == pytest.approx(0.01187, abs=1e-5) and compute_s == pytest.approx(
        0.01127, abs=1e-5
    )
    assert step - reads_s(nan_share) - compute_s == pytest.approx(
        0.0140, abs=1e-4
    )  # 38% of the step left over
    assert reads_s(2 / 8) + compute_s < 0.75 * step  # a BF16 draw's one pair leaves a quarter too
    assert reads_s(1.0) == pytest.approx(0.0394, abs=1e-4)  # all 8 fill it (+6%): the row read them


# --- Case 2: [MB2511] DGX-GB200 MoE pretraining with expert parallelism beyond 8 GPUs (inside one NVL72 rack). ------
# No test had a GB200 row with EP above 8 (the Qwen3-30B GB200 rows are EP 8). NVIDIA's rows train no MTP module
# ("w/o MTP"): stated mtp_layers 0, moe43's field. 61 and 94 layers do not split evenly into PP x VP chunks; the
# spec takes the stated degrees (Megatron-Bridge lays them out by hand).
# fix43m: the NVLink domain's size is the part's (gpus.nvlink_domain_gpus: 72 on a GB200 NVL72 rack, from the
# catalog's "NVL72" interconnect), so an EP group of 32 or 64 prices its all-to-all at NVLink 5, no longer over the
# 400 Gb/s fabric. The rows moved 3.1x / 2.5x / 2.2x and are still outside: what is left is the GB200's MoE compute.
GB200_MOE_COMPUTE = (
    "[MB2511] DGX-GB200 {what}: published {published:,} tokens/s/GPU; ours {ours:,.1f} ({err:+.1%}), was "
    "{before:,.1f} ({before_err:+.1%}) with the expert all-to-all over the fabric ({before_ep_s:.1f} s of a "
    "{before_step_s:.1f} s step). fix43m put the NVL72 rack on one NVLink domain (gpus.nvlink_domain_gpus): the "
    "all-to-all now costs {ep_s:.2f} s of the {step_s:.2f} s step. UNEXPLAINED: the rest is the GB200's MoE compute "
    "({compute_s:.2f} s: ranked at the measured 2.2x H100 of a dense run, the card-independent MoE seconds paid "
    "undivided), not sized further here. {moe44}"
)
# moe44 (outside audit expl44, row 16/18/19: "scale the card-independent MoE seconds by the card's measured ratio"),
# sized on the product and not landed. How the GB200 pays the MoE terms now (accelerators.effective_speed): the
# H100's step without the card-independent seconds divided by the measured 2.2 (MLPerf Training v5.0 405B,
# measured_speed.csv), so the routed bytes (moe_routed_bytes_per_element, 217.5 B) already run at 2.2 x 3,350 =
# 7,370 GB/s, against the datasheet's 8,000 GB/s (NVIDIA GB200 NVL72 datasheet, HBM3e 8 TB/s a GPU): 1.7 points of
# step, no more. The card-independent seconds (moe_fixed_seconds: launches and the dispatcher's host sync) are
# 34.8 / 46.4 / 56.5 us a token of these rows. Divided by 2.2 the rows read -28.0 / -14.4 / -37.0% (the Qwen3-30B
# GB200 fit row +1.8 -> +7.3%); dropped entirely -25.3 / -7.6 / -31.5%; the GB200 on the datasheet model (like the
# B200) -23.5 / -13.5 / -37.3% (fit row +11.8%). No source says a GB200 launches kernels or syncs its host 2.2x
# faster, and two rows stay outside whichever way, so it is not the mechanism. The floor, by hand (mfu.py terms at
# the GB200's datasheet, no card-independent seconds, no all-to-all, no bubble): FLOPs at the dense 0.40 of 2,500
# TFLOPS (fp8: 0.373 of 5,000) plus the routed bytes at 8 TB/s give 250.5 + 90.4 = 340.9 us a token for DeepSeek-V3
# BF16 (published 1e6 / 3,139 = 318.6), 134.1 + 67.8 = 202.0 for FP8-MX (248.9) and 148.4 + 83.7 = 232.1 for
# Qwen3-235B (203.4); with the product's exposed all-to-all 377.3 and 265.3, past what 15% allows (374.8 and 239.3):
# the BF16 rows run faster than the product's MoE base alone (the dense
# 0.40 MoE rate and 217.5 B a routed element, fitted at EP 8 on H800 / H100 / B200 / GB200 rows), whatever the
# card scaling. The same table's H100 rows of these models pass (Qwen3-235B FP8-CS 1,575, DeepSeek-V3 1,297 in
# 25.09: test_moe_published, test_expert_tensor_parallel), and NVIDIA's GB200 / H100 ratio on them is 4,916 /
# 1,575 = 3.12 and 3,139 / 1,297 = 2.42 per GPU, the first above even the BF16 peak ratio 2,500 / 989 = 2.53.
# cls45e: the held-out 26.02 rows of the same table (test_gb200_held_out_moe_rows_put_the_miss_in_the_gb200s_card_path,
# comment above GB200_HELD_OUT) locate the miss in the GB200's card path, not in the expert-parallel plan.
CLS45E_GB200 = (
    "cls45e: unchanged. Held out ([MB2602], 26.02, MXFP8): the B200 rows of the same models at EP 8 land inside "
    "(DeepSeek-V3 2,523.4 against 2,689, -6.2%; Qwen3-235B 3,311.3 against 3,805, -13.0%), the GB200 rows at EP 64 / "
    "32 outside (3,281.6 against 3,955, -17.0%; 3,883.9 against 5,448, -28.7%), GPT-OSS 120B BF16 on 64 GB200 at EP "
    "64 inside (17,056.1 against 15,784, +8.1%). On the B200's own plan the product prices the GB200 at 0.991 / 0.967 "
    "of a B200 (the H100's step over the dense 405B's measured 2.2) where the datasheet gives 1.111 and NVIDIA's "
    "same-plan dense rows 1.029-1.045 (LLAMA3_8B, 25.11 / 25.09); the plan's gain it gives (1.312 / 1.213) is within "
    "1-6% of what the published 1.471 / 1.432 leave over that card ratio. And BF16: the product's FP8 / BF16 on "
    "DeepSeek-V3 at this GB200 plan is 3,281.6 / 2,164.9 = 1.52, NVIDIA's 3,955 / 3,139 = 1.26 (26.02 over 25.11) "
    "and 4,357 / 3,848 = 1.13 on the GB300 (25.11, one plan): the BF16 rows' further miss is the product's BF16 "
    "MoE rate on this path. UNEXPLAINED, located: the GB200's measured-ratio path for MoE and its BF16 rate; the "
    "datasheet path (moe44 above) moves only the FP8-MX row inside and the MoE constants were fitted with the GB200 "
    "on the measured path (their Qwen3-30B GB200 row), so a fix is a refit with the GB200 off it."
)
# moe45: the GB200 priced from the B200 at NVIDIA's same-plan dense 1.025 (measured_speed.csv); each row's before ->
# after, and what is left (test_gb200_held_out_moe_rows_put_the_miss_in_the_gb200s_card_path).
MOE45_GB200 = {
    "deepseek-v3-bf16-pp4-vp4-ep64": (2164.9, 2295.9),
    "deepseek-v3-fp8mx-pp8-vp4-ep32": (3160.1, 3363.1),
    "qwen3-235b-bf16-pp8-vp3-ep32": (2826.3, 2986.0),
}
MOE45_REASON = (
    " moe45: the GB200 is now the B200's modelled step over NVIDIA's same-plan dense 1.025 (Megatron-Bridge LLAMA3_8B "
    "DGX-GB200 / DGX-B200 pairs, 1.009-1.045), no longer the H100's over MLPerf's dense-405B 2.2: {before:,.1f} -> "
    "{after:,.1f} ({err:+.1%}), still outside. UNEXPLAINED, relocated: the card path was not most of the miss. "
    "NVIDIA's same-plan MoE pairs put a GB200 at 0.962-0.988 of a B200 (Qwen3-30B-A3B MXFP8, 8 GPUs, EP 8, MBS 4: "
    "26.04.01 26,112 / 27,136; 26.04 26,032 / 26,859; 26.02.01 26,373 / 26,695), so of the published 26.02 GB200 EP "
    "64 / 32 over B200 EP 8 gains (1.471 / 1.432) the plan is 1.49-1.53 / 1.45-1.49 where the product gives 1.330 / "
    "1.225: the rack-scale EP plan's gain, not the card, is what the product under-prices, and BF16 adds its rate "
    "(the product's MXFP8 / BF16 1.52 against NVIDIA's 1.13-1.26). The small-GEMM FP8 reading does not hold at these "
    "plans: a local expert's grouped GEMM gets seq x MBS x top-k x EP / experts = 8,192 rows (BF16 rows; 4,096 FP8-MX) "
    "under Megatron's dispatcher (test_the_gb200_moe_rows_expert_gemms_have_thousands_of_rows)."
)
GB200_MOE44 = {
    "deepseek-v3-bf16-pp4-vp4-ep64": "moe44: the card-independent seconds divided by the 2.2 ratio give -28.0%, "
    "dropped -25.3%; FLOPs at the dense 0.40 plus the routed bytes at the datasheet 8 TB/s alone take 340.9 us a "
    "token against the published 318.6, 377.3 with the product's exposed all-to-all (15% allows 374.8): the MoE base, not the card scaling (comment above GB200_MOE44) "
    + CLS45E_GB200,
    "deepseek-v3-fp8mx-pp8-vp4-ep32": "moe44: the card-independent seconds divided by the 2.2 ratio give -14.4%, "
    "dropped -7.6%, but no source says a GB200 launches or syncs 2.2x faster and the two BF16 rows stay outside "
    "that way (comment above GB200_MOE44); floor by hand 202.0 us a token against the published 248.9 "
    + CLS45E_GB200,
    "qwen3-235b-bf16-pp8-vp3-ep32": "moe44: the card-independent seconds divided by the 2.2 ratio give -37.0%, "
    "dropped -31.5%; FLOPs at the dense 0.40 plus the routed bytes at the datasheet 8 TB/s alone take 232.1 us a "
    "token against the published 203.4, 265.3 with the product's exposed all-to-all (15% allows 239.3): the MoE base, not the card "
    "scaling (comment above GB200_MOE44) " + CLS45E_GB200,
}


def _gb200_row(model, pp: int, vp: int, ep: int, global_batch: int, precision: str, dispatch=None):
    return megatron(
        model, 256, 1, pp, vp=vp, ep=ep, global_batch=global_batch, precision=precision, dispatch=dispatch
    )


# moet47: the three [MB2511] GB200 rows state their recipe's dispatcher. NVIDIA-NeMo/Megatron-Bridge
# @00b7660be0254ac6f95f44164ddd0c3e9cc798ed (the commit that published these rows) scripts/performance/configs/
# deepseek/deepseek_workload_base_configs.py lines 46-58 (DEEPSEEK_V3_PRETRAIN_CONFIG_GB200_BASE_CONFIG, which the
# GB200 BF16, FP8-CS and FP8-MX configs all are) and configs/qwen/qwen3_workload_base_configs.py lines 71-80
# (QWEN3_235B_A22B_PRETRAIN_CONFIG_GB200_BF16_BASE_CONFIG) set moe_flex_dispatcher_backend "hybridep" (with CUDA graphs
# over the MoE router and preprocess, which the spec cannot state); they had been stated with the default alltoall.
# The engine's HybridEP term (moe_hybridep_fixed_share 0.40, fitted on the Qwen3-30B-A3B GB200 rows) is not refitted:
# these rows are held out of it.
# fix47m (aud47m's fix list, items 1 and 3): withdrawn; the rows state their printed plan again (the default
# alltoall). The recipe cited is not these runs: at 00b7660be deepseek lines 46-58 are GBS 2048, PP 4, VP 4, EP 64
# (the plan of the rows that commit's own diff replaced, 3,037 / 3,653), not the published GBS 4096 PP 8 EP 32
# FP8-MX row, and no DeepSeek-V3 GB200 config at EP 32 exists at any revision of the file (aud47m, all searched);
# qwen3 lines 71-80 are 64 GPUs PP 8 EP 8 GBS 1024, not the 256-GPU EP 32 row. The only recipe matching a printed
# plan is a later one (DeepSeek-V3 BF16, V2 at 5dd02f535, 2026-01-16). So the dispatcher is inferred, and these
# cases keep the printed plan, as test_moe_published's GPT-OSS B200 25.11 case keeps its printed EP 8; the readings
# with hybridep are pinned beside them (MOET47_GB200).


DSV3_NO_MTP = {"preset": "deepseek-v3", "mtp_layers": 0}
GB200_ROWS = {
    "deepseek-v3-bf16-pp4-vp4-ep64": (
        _gb200_row(DSV3_NO_MTP, 4, 4, 64, 4096, "bf16"),
        64,
        3139,
        "DeepSeek-V3 BF16",
    ),
    "deepseek-v3-fp8mx-pp8-vp4-ep32": (
        _gb200_row(DSV3_NO_MTP, 8, 4, 32, 4096, "fp8"),
        32,
        4018,
        "DeepSeek-V3 FP8-MX",
    ),
    "qwen3-235b-bf16-pp8-vp3-ep32": (
        _gb200_row(QWEN3_235B, 8, 3, 32, 8192, "bf16"),
        32,
        4916,
        "Qwen3-235B BF16",
    ),
}
# At audit time: (ours, step s, exposed EP s)
GB200_OURS = {
    "deepseek-v3-bf16-pp4-vp4-ep64": (992.5, 66.03, 38.14),
    "deepseek-v3-fp8mx-pp8-vp4-ep32": (1282.8, 51.09, 32.70),
    "qwen3-235b-bf16-pp8-vp3-ep32": (1277.6, 102.59, 60.56),
}
# After fix43m (the NVL72 domain): (ours, step s, exposed EP s)
GB200_OURS_NVL72 = {
    "deepseek-v3-bf16-pp4-vp4-ep64": (2164.9, 30.27, 2.38),
    "deepseek-v3-fp8mx-pp8-vp4-ep32": (3160.1, 20.74, 2.35),
    "qwen3-235b-bf16-pp8-vp3-ep32": (2826.3, 46.38, 4.35),
}


# moet47: the rows stated with their recipe's HybridEP (comment above _gb200_row): (printed plan, stated hybridep)
# tokens/s/GPU. fix47m: the cases are the printed plan again (the first number).
MOET47_GB200 = {
    "deepseek-v3-bf16-pp4-vp4-ep64": (2295.9, 2424.4),
    "deepseek-v3-fp8mx-pp8-vp4-ep32": (3363.1, 3885.2),
    "qwen3-235b-bf16-pp8-vp3-ep32": (2986.0, 3363.6),
}
# the cited recipe's plan, for each row (Megatron-Bridge @00b7660be0254ac6f95f44164ddd0c3e9cc798ed
# scripts/performance/configs/, aud47m [RCP2511])
MOET47_RECIPE = {
    "deepseek-v3-bf16-pp4-vp4-ep64": "deepseek/deepseek_workload_base_configs.py lines 46-58: GBS 2048, PP 4, VP 4, "
    "EP 64 (the row prints GBS 4096; a recipe of its plan, V2 with hybridep, first appears at 5dd02f535, 2026-01-16, "
    "after the row)",
    "deepseek-v3-fp8mx-pp8-vp4-ep32": "deepseek/deepseek_workload_base_configs.py lines 46-58: GBS 2048, PP 4, VP 4, "
    "EP 64 (the row prints GBS 4096, PP 8, EP 32; no DeepSeek-V3 GB200 config at EP 32 exists at any revision of the "
    "file)",
    "qwen3-235b-bf16-pp8-vp3-ep32": "qwen/qwen3_workload_base_configs.py lines 71-80: 64 GPUs, PP 8, EP 8, GBS 1024 "
    "(the row prints 256 GPUs, EP 32, GBS 8192)",
}
MOET47_REASON = (
    "UNEXPLAINED (fix47m: moet47's restatement with hybridep withdrawn, the case is the printed plan with the default "
    "alltoall, {before:,.1f}, {before_err:+.1%}). The dispatcher this run used is inferred, not sourced: the recipe "
    "moet47 cited, Megatron-Bridge @00b7660be {recipe}, is another plan; stated hybridep the row reads {after:,.1f} "
    "({err:+.1%}) through moe_hybridep_fixed_share (0.40, fitted on the Qwen3-30B-A3B GB200 rows, this row held out), "
    "and no published pair sizes HybridEP on this row (aud47m). The printed plan is kept as test_moe_published's "
    "GPT-OSS B200 25.11 case keeps its printed EP 8. "
)
MOET47_BF16 = (
    "Ruled out for the BF16 rows: the per-local-expert cost (4 local experts; TE's grouped GEMM launches one cuBLAS "
    "GEMM per expert by default, and at zero per-expert cost the rows stay outside: test_outside_moe_training_stop47."
    "py), the card-independent seconds (the floor of FLOPs at the dense 0.40 plus routed bytes alone, with the exposed "
    "all-to-all, takes {floor} us a token against the published {published_us}: test_the_gb200_bf16_moe_rows_run_"
    "faster_than_the_moe_base_alone). Left: the BF16 MoE base (the 0.40 rate and 217.5 B a routed element), which no "
    "published pair sizes apart from the fit rows. "
)
MOET47_FLOOR = {
    "deepseek-v3-bf16-pp4-vp4-ep64": ("377.3", "318.6"),
    "qwen3-235b-bf16-pp8-vp3-ep32": ("265.3", "203.4"),
}
# fix47m: the engine split aud47m proposed (HybridEP's share on moe_layer_fixed_seconds only; test_outside_moe_
# training_stop47.py::test_the_hybridep_share_on_the_layer_term_only_does_not_refit) was tried and not landed.
FIX47M_FP8MX = (
    "With HybridEP's share on the layer term only (aud47m's engine fix, refitted: the share goes to its bound 0) the "
    "row stated hybridep reads -5.0%, but that split is not landed (its fit rows go +4.5% / -4.8% -> -4.6% / -13.1% "
    "and it takes the held-out Qwen3-30B-A3B B200 26.04.01 row out, -10.2% -> -17.9%). "
)


def _gb200_param(key: str):
    spec, ep, published, what = GB200_ROWS[key]
    # fix47m: moet47 had removed the FP8-MX row's strict xfail as FIXED (3,885.2, -3.3%, stated hybridep); the label
    # is withdrawn (no engine change; the dispatcher is inferred from a recipe of another plan) and the xfail is back.
    before, before_step_s, before_ep_s = GB200_OURS[key]
    ours, step_s, ep_s = GB200_OURS_NVL72[key]
    reason = GB200_MOE_COMPUTE.format(
        what=f"{what} on 256 GB200, EP {ep}",
        published=published,
        ours=ours,
        err=gap(ours, published),
        before=before,
        before_err=gap(before, published),
        before_ep_s=before_ep_s,
        before_step_s=before_step_s,
        ep_s=ep_s,
        step_s=step_s,
        compute_s=step_s - ep_s,
        moe44=GB200_MOE44[key],
    ) + MOE45_REASON.format(
        before=MOE45_GB200[key][0],
        after=MOE45_GB200[key][1],
        err=gap(MOE45_GB200[key][1], published),
    )
    before47, after47 = MOET47_GB200[key]
    prefix = MOET47_REASON.format(
        before=before47,
        before_err=gap(before47, published),
        recipe=MOET47_RECIPE[key],
        after=after47,
        err=gap(after47, published),
    )
    if key in MOET47_FLOOR:
        floor, published_us = MOET47_FLOOR[key]
        prefix += MOET47_BF16.format(floor=floor, published_us=published_us)
    else:
        prefix += FIX47M_FP8MX
    reason = prefix + reason
    return pytest.param(key, marks=pytest.mark.xfail(strict=True, reason=reason), id=key)


@pytest.mark.parametrize("key", [_gb200_param(key) for key in GB200_ROWS])
def test_mb2511_gb200_moe_rows_within_15_percent(key):
    spec, _, published, _ = GB200_ROWS[key]
    assert tokens_per_gpu(spec, GPUS["gb200"]) == pytest.approx(published, rel=SPEED)


def test_gb200_expert_all_to_all_stays_on_the_nvl72_nvlink_domain():
    # Was the pin of the defect ("most of the step is exposed expert all-to-all": 38.14 of 66.03 s, the NVL72
    # domain not modelled). Now 2.38 of 30.27 s because fix43m sizes the GB200's NVLink domain as its rack's 72
    # GPUs (gpus.nvlink_domain_gpus): an EP group of 64 stays on NVLink 5, none of it on the fabric.
    spec = GB200_ROWS["deepseek-v3-bf16-pp4-vp4-ep64"][0]
    report = size_workload(spec, [GPUS["gb200"]])
    row = next(c for c in report["candidates"] if c["gpus"] == 256)["throughput"]
    assert row["expert_parallel_exposed_seconds"] < 0.1 * row["gpu_step_seconds"]


def test_the_gb200_bf16_moe_rows_run_faster_than_the_moe_base_alone():
    # moe44 (comment above GB200_MOE44): the product's FLOPs at its dense MoE rate on the GB200's datasheet peak
    # plus the routed bytes at its datasheet 8 TB/s, with no card-independent seconds, already take longer than
    # NVIDIA's published step a token on the two BF16 rows; with the product's exposed all-to-all a token added
    # (the row's expert_parallel_exposed_seconds over its tokens a GPU and step) both are outside 15%, so no scaling
    # of the card-independent seconds by the card brings them in. The FP8-MX row has room (202.0 us against 248.9).
    gpu = GPUS["gb200"]
    assert gpu.memory_bandwidth_gbps == 8000 and gpu.dense_tflops("bf16") == 2500
    floors = {}
    for key, (spec, _, published, _) in GB200_ROWS.items():
        _, moe_layers = layer_counts(spec.model)
        routed = moe_layers * spec.model.experts_per_token * spec.model.hidden_size * routed_bytes(spec)
        peak = gpu.dense_tflops(spec.precision) * 1e12
        flop_s = training_flops_per_token(spec) / (peak * dense_efficiency(spec, gpu))
        row = next(c for c in size_workload(spec, [gpu])["candidates"] if c["gpus"] == 256)["throughput"]
        tokens = row["training_tokens_per_second"] / 256 * row["step_seconds"]  # a GPU's tokens a step
        all_to_all_s = row["expert_parallel_exposed_seconds"] / tokens
        floor_us = (flop_s + routed / (gpu.memory_bandwidth_gbps * 1e9)) * 1e6
        floors[key] = floor_us, floor_us + all_to_all_s * 1e6, 1e6 / published
    # moet47: with the recipes' HybridEP stated the exposed all-to-all shrinks (377.3 -> 375.3, 265.3 -> 261.9 us a
    # token); both BF16 rows stay past what 15% allows (374.8, 239.3). fix47m: the printed plan again (alltoall),
    # 375.3 -> 377.3 and 261.9 -> 265.3, moe45's figures.
    assert floors["deepseek-v3-bf16-pp4-vp4-ep64"] == pytest.approx((340.9, 377.3, 318.6), abs=0.1)
    assert floors["qwen3-235b-bf16-pp8-vp3-ep32"] == pytest.approx((232.1, 265.3, 203.4), abs=0.1)
    assert floors["deepseek-v3-fp8mx-pp8-vp4-ep32"][::2] == pytest.approx((202.0, 248.9), abs=0.1)
    for key in ("deepseek-v3-bf16-pp4-vp4-ep64", "qwen3-235b-bf16-pp8-vp3-ep32"):
        floor_us, with_all_to_all_us, published_us = floors[key]
        assert floor_us > published_us and with_all_to_all_us > published_us / 0.85, floors


# cls45e: the same table's next release, held out (no fit used it): [MB2602] NVIDIA-NeMo/Megatron-Bridge
# docs/performance-summary-archive.md @0a25f911b2ed6c6905a539504fdb8e5b40e3438b, "26.02 NeMo Container" (System |
# #-GPUs | Precision | GBS | MBS | Seq | FSDP | TP | PP | CP | VP | EP | Tokens/sec/GPU):
#   DeepSeekV3      "DGX-GB200 | 256 | MXFP8 | 4096 | 1 | 4096 | 0 | 1 | 4 | 1 | 4 | 64 | 3955"
#                   "DGX-B200 | 256 | MXFP8 | 4096 | 1 | 4096 | 0 | 1 | 16 | 1 | n/a | 8 | 2689"
#   Qwen3_235B_a22B "DGX-GB200 | 256 | MXFP8 | 8192 | 1 | 4096 | 0 | 1 | 8 | 1 | n/a | 32 | 5448"
#                   "DGX-B200 | 256 | MXFP8 | 8192 | 1 | 4096 | 0 | 1 | 8 | 1 | n/a | 8 | 3805"
#   GPT OSS 120B    "DGX-GB200 | 64 | BF16 | 1280 | 4 | 4096 | 0 | 1 | 1 | 1 | n/a | 64 | 15784"
# The B200 rows at EP 8 land inside, the GB200 rows at EP 32 / 64 of the same models, release and precision outside,
# GPT-OSS on the GB200 at EP 64 inside. Split the GB200 / B200 gain into the card and the plan: on the B200's own plan
# the product prices the GB200 at 0.991 (DeepSeek-V3) and 0.967 (Qwen3-235B) of a B200, because the GB200 runs at
# the H100's step over the measured 2.2 (measured_speed.csv, MLPerf Training v5.0's dense Llama 3.1 405B) and the
# B200 on Blackwell's datasheet path; the datasheet puts the GB200 at 2,500 / 2,250 = 1.11 of a B200 (same 8 TB/s),
# and NVIDIA's same-plan dense rows at 1.029 (25.11 LLAMA3_8B FP8-CS 31,508 / 30,624) and 1.045 (25.09, 31,357 /
# 29,994). The plan's gain the product gives on the GB200 (EP 64 / 32 plan over the B200's) is 1.312 and 1.213,
# against the published 3,955 / 2,689 = 1.471 and 5,448 / 3,805 = 1.432 over that card ratio (1.03-1.11): 1.32-1.43
# and 1.29-1.39. So the DeepSeek-V3 miss is mostly the card path (0.99 where >= 1.03), Qwen3-235B's both. The GB200
# on the datasheet path (moe44: -23.5 / -13.5 / -37.3% on the three [MB2511] rows, the GB200 fit row +1.8 -> +11.8%)
# would bring the FP8-MX row in but not the BF16 rows: not landed, the MoE constants were fitted with the GB200 on
# the measured path (their Qwen3-30B GB200 row) and would need a refit with it.
GB200_HELD_OUT = {
    # key: (spec, gpu, published, ours, gap)
    # moe45: the GB200 from the B200 at 1.025 (cls45e's pins: 3,281.6 / 3,883.9 / 17,056.1; the B200's unchanged)
    "deepseek-v3-mxfp8-gb200-ep64": (_gb200_row(DSV3_NO_MTP, 4, 4, 64, 4096, "fp8"), "gb200", 3955, 3500.5),
    # cons47: stated as its recipe ran it, as test_moe_published's dsv3-b200 case states it (one row, one statement):
    # NVIDIA-NeMo/Megatron-Bridge @df0289c180dd20ff26933455c7a0a11084f6a36f (the commit of the 26.02 table,
    # docs/performance-summary.md line 92) scripts/performance/configs/deepseek/deepseek_workload_base_configs.py
    # lines 105-117 (DEEPSEEK_V3_PRETRAIN_CONFIG_B200_V1: num_gpus 256, PP 16, EP 8, no VP,
    # moe_flex_dispatcher_backend "hybridep") and 178-184 (_B200_V2, GBS 4096; _B200_FP8_MX_V2 = it). With MTP: the
    # row's own TFLOP/s column gives 699e12 / 2,689 = 259.9e9 FLOPs a token, the "(w/ MTP)" 25.11 row 557e12 / 2,139 =
    # 260.4e9, the "(w/o MTP)" 782e12 / 3,139 = 249.1e9 (same document, lines 92 / 145 / 133). Pin 2,523.4 (-6.2%,
    # DSV3_NO_MTP, default alltoall) -> 3,247.4 (+20.8%, outside; stated hybridep without MTP it would read 3,307.7).
    "deepseek-v3-mxfp8-b200-ep8": (
        _gb200_row("deepseek-v3", 16, 1, 8, 4096, "fp8", dispatch="hybridep"),
        "b200",
        2689,
        3247.4,
    ),
    "qwen3-235b-mxfp8-gb200-ep32": (_gb200_row(QWEN3_235B, 8, 1, 32, 8192, "fp8"), "gb200", 5448, 4108.4),
    "qwen3-235b-mxfp8-b200-ep8": (_gb200_row(QWEN3_235B, 8, 1, 8, 8192, "fp8"), "b200", 3805, 3311.3),
    "gpt-oss-120b-bf16-gb200-ep64": (
        megatron(GPT_OSS_120B, 64, 1, 1, ep=64, micro_batch=4, global_batch=1280),
        "gb200",
        15784,
        18084.4,
    ),
}


# moe45 (was cls45e's pin of the defect: "on the B200's own plan the product prices the GB200 at 0.991 / 0.967 of a
# B200", card < 1.029). Now 1.043 / 1.013 because the GB200 is priced from the B200 (the same Blackwell die) at NVIDIA's
# same-plan dense ratio, 1.025 (measured_speed.csv: Megatron-Bridge LLAMA3_8B DGX-GB200 / DGX-B200, 25.11 FP8-CS
# 31,508 / 30,624 = 1.029, FP8-MX 29,789 / 29,521 = 1.009, 25.09 31,357 / 29,994 = 1.045, MX 29,925 / 29,388 = 1.018),
# its own NVLink domain still pricing its communication. What it moved: DeepSeek-V3 MXFP8 GB200 EP 64 -17.0% -> -11.5%
# (inside), Qwen3-235B GB200 EP 32 -28.7% -> -24.6%, GPT-OSS GB200 EP 64 +8.1% -> +14.6% (inside, at the edge).
# What it does not move: the plan's gain the product gives (EP 64 / 32 in the rack over the B200's EP 8 plan) is 1.330
# and 1.225, against the published 1.471 / 1.432 over a card ratio of 0.962-0.988, which is what NVIDIA's same-plan
# MoE pairs give (Qwen3-30B-A3B MXFP8, 8 GPUs, EP 8, MBS 4, HybridEP, [MBARCH] via test_outside_recommendations_x26f:
# B200 / GB200 26,695 / 26,373, 26,859 / 26,032, 27,136 / 26,112, i.e. GB200 / B200 0.988 / 0.969 / 0.962; the
# product's 1.019): NVIDIA's plan gain 1.49-1.53 and 1.45-1.49, the product's 11-18% short. So the card path was
# not most of the miss: NVIDIA's MoE GB200 runs at or under a B200 on one plan, and the rest is the plan.
# cons47: the DeepSeek-V3 B200 EP 8 row is now stated as run (hybridep, with MTP; comment at its GB200_HELD_OUT entry)
# and reads +20.8%, outside; the diagnosis is moe47r's (test_moe_published's dsv3-b200 strict xfail, UNEXPLAINED):
# moe_hybridep_fixed_share scales the per-local-expert seconds too, 32 local experts make HybridEP 0.40 cheap, and the
# joint refit that brings this row in (+7.8%) takes the held-out Qwen3-30B-A3B B200 26.04.01 row out, -10.2% ->
# -15.7% (test_outside_moe_training_stop47.py::test_the_joint_refit_with_the_2602_dsv3_row_as_run_does_not_land).
# The card / plan split stays like for like: the GB200 EP 64 row's recipe at the same commit sets hybridep too
# (deepseek_workload_base_configs.py lines 72-84, DEEPSEEK_V3_PRETRAIN_CONFIG_GB200_V1: 256 GPUs, PP 4, VP 4, EP 64,
# "hybridep"; lines 155-161, _GB200_V2 GBS 4096, _GB200_FP8_MX_V2 = it), so the DeepSeek-V3 split is read with both
# plans on hybridep and with MTP (DSV3_2602_GB200_AS_RUN; its GB200_HELD_OUT entry still states alltoall without MTP,
# a follow-up): card 1.043 -> 1.057, plan 1.330 -> 1.124. On hybridep the card is above NVIDIA's same-plan dense range
# (1.009-1.045) and further above its same-plan MoE pairs (0.962-0.988); on the alltoall reading moe45 pinned
# (ALLTOALL_DSV3) it is 1.043, inside. The plan's gain is still short of what the published gain leaves.
DSV3_2602_GB200_AS_RUN = _gb200_row("deepseek-v3", 4, 4, 64, 4096, "fp8", dispatch="hybridep")
ALLTOALL_DSV3 = (  # moe45's like-for-like reading: both plans the default alltoall, DSV3_NO_MTP
    _gb200_row(DSV3_NO_MTP, 16, 1, 8, 4096, "fp8"),
    GB200_HELD_OUT["deepseek-v3-mxfp8-gb200-ep64"][0],
)


def _card_and_plan(b200_spec, gb200_spec) -> tuple[float, float]:
    gb200_on_b200_plan = tokens_per_gpu(b200_spec, GPUS["gb200"])
    card = gb200_on_b200_plan / tokens_per_gpu(b200_spec, GPUS["b200"])
    return card, tokens_per_gpu(gb200_spec, GPUS["gb200"]) / gb200_on_b200_plan


def test_gb200_held_out_moe_rows_put_the_miss_in_the_gb200s_card_path():
    ours = {key: tokens_per_gpu(spec, GPUS[gpu]) for key, (spec, gpu, _, _) in GB200_HELD_OUT.items()}
    # cons47: the DeepSeek-V3 B200 row as run is outside (+20.8%; it was inside at -6.2% stated alltoall)
    outside_as_run = ("deepseek-v3-mxfp8-b200-ep8",)
    inside_now = (
        ("-b200-" in key and key not in outside_as_run)
        or key.startswith(("gpt-oss", "deepseek-v3-mxfp8-gb200"))
        for key in GB200_HELD_OUT
    )
    for (key, (_, _, published, pinned)), inside_expected in zip(
        GB200_HELD_OUT.items(), inside_now, strict=True
    ):
        assert ours[key] == pytest.approx(pinned, rel=0.002), key
        assert (abs(ours[key] / published - 1) <= SPEED) == inside_expected, (key, gap(ours[key], published))
    assert gap(ours["deepseek-v3-mxfp8-b200-ep8"], 2689) == pytest.approx(0.208, abs=0.002)
    # the GB200 EP 64 plan as run (hybridep, MTP), the DeepSeek-V3 split's other side: 3,857.8 (-2.5%)
    assert tokens_per_gpu(DSV3_2602_GB200_AS_RUN, GPUS["gb200"]) == pytest.approx(3857.8, rel=0.002)
    # cons47: moe45's alltoall reading, pinned as it was (card 1.043, plan 1.330), inside NVIDIA's dense range
    card, plan = _card_and_plan(*ALLTOALL_DSV3)
    assert (card, plan) == pytest.approx((1.043, 1.330), abs=0.002)
    assert 1.009 <= card <= 1.045 and 3955 / 2689 / 0.988 > 1.08 * plan
    for model, b200_plan, gb200_spec, card_pin, plan_pin in (
        ("deepseek-v3", "deepseek-v3-mxfp8-b200-ep8", DSV3_2602_GB200_AS_RUN, 1.057, 1.124),
        (
            "qwen3-235b",
            "qwen3-235b-mxfp8-b200-ep8",
            GB200_HELD_OUT["qwen3-235b-mxfp8-gb200-ep32"][0],
            1.013,
            1.225,
        ),
    ):
        card, plan = _card_and_plan(GB200_HELD_OUT[b200_plan][0], gb200_spec)
        assert card == pytest.approx(card_pin, abs=0.002), model
        assert plan == pytest.approx(plan_pin, abs=0.002), model
        published_gain = {"deepseek-v3": 3955, "qwen3-235b": 5448}[model] / GB200_HELD_OUT[b200_plan][2]
        # the plan's gain short of what the published gain leaves over NVIDIA's same-plan MoE card ratio
        # (0.962-0.988); the card inside NVIDIA's same-plan dense range (1.009-1.045) for Qwen3-235B (alltoall),
        # above it for DeepSeek-V3 on hybridep (cons47, comment above DSV3_2602_GB200_AS_RUN)
        assert published_gain / 0.988 > 1.08 * plan, model
        assert (1.009 <= card <= 1.045) == (model == "qwen3-235b"), (model, card)
    nvidia_moe_same_plan = (26373 / 26695, 26032 / 26859, 26112 / 27136)
    ours_moe_same_plan = tokens_per_gpu(QWEN3_30B_GB200, GPUS["gb200"]) / tokens_per_gpu(
        QWEN3_30B_GB200, GPUS["b200"]
    )
    assert ours_moe_same_plan == pytest.approx(1.019, abs=0.002) and max(nvidia_moe_same_plan) < 0.99
    assert GPUS["gb200"].dense_tflops("bf16") / GPUS["b200"].dense_tflops("bf16") == pytest.approx(
        1.111, abs=0.001
    )
    # BF16 against MXFP8 on one GB200 plan (PP 4, VP 4, EP 64): the product 1.52 (1.516 before moe45), NVIDIA 1.26
    # (26.02 over 25.11) and 1.13 on the GB300 within 25.11 ("DeepSeekV3 (w/o MTP) | 256 | BF16 ... 3848" /
    # "... FP8-MX ... 4357")
    bf16 = tokens_per_gpu(GB200_ROWS["deepseek-v3-bf16-pp4-vp4-ep64"][0], GPUS["gb200"])
    # moet47: the BF16 row now states its 25.11 recipe's HybridEP (2,295.9 -> 2,424.4), the 26.02 MXFP8 held-out row
    # not (its v0.3.0 recipe sets hybridep too: a follow-up, with the 26.02 rows above): 3,500.5 / 2,424.4 = 1.444
    # fix47m: the BF16 row is its printed plan again (alltoall, 2,295.9): 3,500.5 / 2,295.9 = 1.525, moe45's figure
    assert ours["deepseek-v3-mxfp8-gb200-ep64"] / bf16 == pytest.approx(1.525, abs=0.002)
    assert 3955 / 3139 < 1.27 and 4357 / 3848 < 1.14


# moe45, part 2 of the brief (the BF16 MoE rate): "FP8 gains less on MoE's small per-expert GEMMs (tokens x top-k /
# experts)". Megatron's alltoall dispatcher gathers every EP rank's tokens for its local experts (NVIDIA/Megatron-LM
# megatron/core/transformer/moe/token_dispatcher.py @0014f13713bfa38a8bab4ae11edd6917d35165ce, preprocess:
# "num_tokens_per_local_expert = num_global_tokens_per_local_expert.sum(dim=(0, 1))" over [tp_size, ep_size,
# num_local_experts]), so a local expert's grouped-GEMM rows under balanced routing ("we force-balance the token
# distribution") are seq x MBS x top-k x EP / experts: 8,192 on both GB200 BF16 rows (DeepSeek-V3 4,096 x 8 x 64 /
# 256, Qwen3-235B 4,096 x 8 x 32 / 128), 4,096 on the FP8-MX one; 128 and 256 without the EP factor. GEMMs of
# 8,192 x 7,168 x 2,048 (DeepSeek-V3's experts) are not small, so the small-GEMM FP8 gain does not size the BF16
# rows' miss; not landed.
def test_the_gb200_moe_rows_expert_gemms_have_thousands_of_rows():
    for key, rows in (
        ("deepseek-v3-bf16-pp4-vp4-ep64", 8192),
        ("deepseek-v3-fp8mx-pp8-vp4-ep32", 4096),
        ("qwen3-235b-bf16-pp8-vp3-ep32", 8192),
    ):
        spec = GB200_ROWS[key][0]
        model, ep = spec.model, spec.parallelism.expert_parallel
        assert spec.seq_len * spec.micro_batch_size * model.experts_per_token * ep / model.num_experts == rows


def test_the_gb200_rows_state_no_mtp_module():
    # "DeepSeekV3 (w/o MTP)": stated 0, the FLOPs are Megatron's count without the module (782e12 / 3,139 = 249.1e9)
    spec = GB200_ROWS["deepseek-v3-bf16-pp4-vp4-ep64"][0]
    assert spec.model.mtp_layers == 0
    assert training_flops_per_token(spec) == pytest.approx(782e12 / 3139, rel=0.02)


# --- Case 3: the GPT-OSS 120B fit row stated as run (its sliding window) -------------------------------------------
# moe43 restated the DeepSeek-V2 fit row with its MLA fields; GPT-OSS 120B's fit row ([MB2511] DGX-H100, 5,630
# tokens/s/GPU) still leaves out the 128-token window of 18 of its 36 layers ([GPTOSS]), which the spec can state.
# Stated, its attention FLOPs fall (34.22e9 -> 32.52e9 a token) and the row moves -0.8% -> +2.6%: still inside, but
# the refit's least squares saw a row 3.4 points off its as-run value.
def test_gpt_oss_fit_row_with_its_sliding_window_stays_within_15_percent():
    model = GPT_OSS_120B | {"sliding_window": 128, "sliding_window_layers": 18}
    spec = megatron(model, 64, 1, 4, ep=8, micro_batch=4, global_batch=512)
    assert training_flops_per_token(spec) == pytest.approx(32.52e9, rel=0.005)
    assert tokens_per_gpu(spec, GPUS[H100]) == pytest.approx(5630, rel=SPEED)


# --- Pins of claim 1: the active-parameter convention ------------------------------------------------------------
# Qwen/Qwen3-30B-A3B's card: "Number of Parameters: 30.5B in total and 3.3B activated" (the vLLM-Ascend tutorial
# quotes it: "30.5B total parameters with 3.3B activated per token"); Qwen counts the input table.
def test_qwen3_30b_active_params_read_under_qwens_card_by_the_input_table():
    spec = parse_workload_spec({"name": "q", "task": "inference", "model": {"preset": "qwen3-30b-a3b"}})
    ours = active_params(spec.model)
    assert ours == pytest.approx(3.04e9, rel=0.005)
    assert gap(ours, 3.3e9) == pytest.approx(-0.078, abs=0.005)
    assert ours + input_lookup_params(spec.model) == pytest.approx(3.3e9, rel=0.02)


def _qwen_pretrain(extra: dict):
    return parse_workload_spec(
        {
            "name": "q",
            "task": "pretrain",
            "model": {"preset": "qwen3-30b-a3b"} | extra,
            "precision": "bf16",
            "seq_len": 4096,
            "micro_batch_size": 1,
            "training_tokens": 1e9,
        }
    )


# Was a strict xfail: "a params_active copied from Qwen's card (3.3e9 for Qwen3-30B-A3B, input table counted) is read
# in the product's convention without a word: the FLOPs a token rise 23.08e9 -> 24.63e9 (+6.7%) ... nothing in the
# size report compares the stated count with the shape's own (3.04e9, 8.5% apart)". Now every candidate carries a
# "params_active:" warning naming the stated 3.30B, the shape's 3.04B (+8.5%) and the card convention's 3.35B, and the
# summary's active_params_convention labels the count, because fix43m (params.stated_active_params_warning) compares
# any stated count with the shape's own in both conventions (5% apart).
def test_a_stated_active_count_far_from_the_shapes_is_flagged():
    stated = size_workload(_qwen_pretrain({"params_active": 3.3e9}), [GPUS[H100]])
    warnings = " ".join(" ".join(map(str, c.get("warnings") or [])) for c in stated["candidates"])
    assert "params_active" in warnings
    assert "3.30B" in warnings and "3.04B" in warnings
    assert "input embedding lookup excluded" in stated["workload"]["active_params_convention"]
    shape = size_workload(_qwen_pretrain({}), [GPUS[H100]])
    assert not any("params_active" in " ".join(c["warnings"]) for c in shape["candidates"])
