"""Issue 26, judged from outside (round x26d): eleven published runs no earlier round or docs/validation.md used,
chosen by a GPU engineer who buys training and serving capacity.

Each case is the spec a user would write for the run (its own plan, parallelism and precision), its source,
the published figure, the product's figure and the gap. Speeds and memory go through `size_spec_document`
(what `manage.py size` runs, calibration off); rankings through the service `manage.py recommend` uses
(``workload_spec_parse`` -> ``ranking_options_parse`` -> ``recommendation_compute``), top five rows.
Tolerances are the issue's: throughput within 15%, memory within 10%. Where the published run states only
that it ran on a card (no per-GPU memory), the check is that the product lets it run there. Misses are
strict xfails with the published figure, the product's figure, the gap and the cause I read.

Sources (figures quoted where used):
  [TT2412]  pytorch/torchtitan @b5bcd76c66d0acb1a08b176d9639425bc55e0b2a
            benchmarks/llama3_h100_202412_torchtitan.md (torchtitan team, end of 2024; Grand Teton hosts, 8 H100
            "96GB HBM2e" per host at the "default 500W power limit", 400 Gb/s RDMA per GPU; TPS/GPU read at
            iteration 90, memory = max over ranks). Recipes at the table's torchtitan commit
            9dec370ad26b5f8e9a7333a0e36165018262644b: train_configs/llama3_8b.toml (seq_len = 8192,
            activation_checkpoint mode = 'selective', selective_ac_option = 'op', data_parallel_shard_degree = -1)
            and train_configs/llama3_70b.toml (seq_len = 8192, tensor_parallel_degree = 8, mode = 'full').
  [TRAINY]  same repository and commit, benchmarks/llama3-8b_h200_202506_trainy-whitefiber.md (Trainy on
            WhiteFiber, June 2025: 8 H200 per host, 400 Gb/s per GPU; llama3_8b.toml with
            --training.local_batch_size=2 --training.compile, float8 linears with FSDP float8 all-gather;
            the toml at torchtitan e7c0cae934df78d6e9c2835f42ff1f757dc3fddc:
            torchtitan/models/llama3/train_configs/llama3_8b.toml has seq_len = 8192, mode = "selective").
  [MCOREMOE] NVIDIA/Megatron-LM @b97184db566352ed2095d389bf09ff76649cc231 megatron/core/transformer/moe/README.md:
            "With MCore v0.9, we've achieved remarkable performance of **468 TFLOPS** for Mixtral 8X7B bf16
            training", and "Reference Best Parallel Mapping": "Mixtral 8x7B(Dropless) | 32K | All-to-All | BF16 |
            64 | 4096 | 1 | 8 | 4 | 8 | 1 | 256" (#GPUs, SEQ LEN, TP, EP, PP, VP, MBS, GBS) on 8xH100 80GB HBM3,
            NVLink 4, InfiniBand 8x400 Gbit/s.
  [AUTOMODEL] NVIDIA-NeMo/Automodel @cb9765441e5127b8100879ca1f7ff5920f825887 docs/performance-summary.mdx
            ("Last Updated: 2025-10-02"; "System: DGX-H100, Precision: BF16"; "Fake balanced gate is enabled";
            "MFU calculated using peak TFLOPs for the system (989 for BF16 H100)"). Recipes at HEAD
            36044ad3d139363fb6c73c24af2e7c6b65ec52f6 examples/llm_benchmark/: deepseek_v3_te_deepep.yaml
            (activation_checkpointing: true, pp_schedule: interleaved1f1b, layers_per_stage: 2),
            gptoss_120b_te_deepep.yaml (ep_size: 64, activation_checkpointing: false),
            llama3_1_8b_peft_benchmark.yaml (target_modules: '*_proj', dim: 16),
            custom_llama3_3_70b_instruct_peft_benchmark.yaml (tp_size: 2, activation_checkpointing: true).
  [UNSLOTH] unslothai/unsloth @e3162dc5bf88bf4c2b598c74cbcaba0706c4067b README.md "Llama 3.1 (8B) max. context
            length": "4bit QLoRA on all linear layers (Q, K, V, O, gate, up and down) with rank = 32 with a batch
            size of 1"; Hugging Face + FA2 column: 12 GB 932, 16 GB 2,551, 24 GB 5,789, 40 GB 12,264,
            48 GB 15,502, 80 GB 28,454 tokens. (docs/validation.md uses only the 70B row of this README.)
  [LAMBDA]  LambdaLabsML/vllm-benchmark @0e8fc5d0f9865a326666cb82aeb2d8dc74c82c5e benchmark_v0.md:
            "`Llama 3.1 70B`: `tp=4`, `rps=inf`, `num-prompt=5000`, `max-num-seq=256`, `max-seq-len=2048`",
            vLLM v0.6.0, scheduler steps 10: 3542.88 output tokens/s, "Median TPOT (ms)" 61.10 (card not stated).
            The model is bf16 meta-llama/Meta-Llama-3.1-70B-Instruct (cache_model.py
            @680cc0a3f925fbf1700b8ba928c7ceebe0015986, the uncommented list).
"""

from __future__ import annotations

from decimal import Decimal

import pytest

from procurement.sizing.spec import parse_workload_spec
from tests.procurement.outside.test_outside_recommendations_x26b import (
    candidate,
    describe,
    ranked,
    tokens_per_gpu,
)

RELABEL48_TITAN_70B_2D = (
    "UNEXPLAINED (relabelA48: rechecked at 64.36 GiB, -10.5%. (b) fails: the column is max_reserved and "
    "no allocated peak is published to size the 7.5 GiB; (c) the allocator's one setting, "
    "expandable_segments, is not published for this launch. Best lead: an allocator reserve, which "
    "torchtitan's own active / reserved rows spread too wide (1.12-1.46) to set). "
)


H100 = "h100-sxm5-80gb"
H200 = "h200-sxm-141gb"
RTX_4090 = "rtx-4090"
A100 = "a100-sxm4-80gb"
FEASIBLE = {"fits", "tight", "oversized"}
GIB = 2**30


def gap(product: float, published: float) -> float:
    return (product - published) / published


def pretrain(
    model, gpus: int, micro_batch: int, seq: int, checkpointing: str, precision: str, **plan
) -> dict:
    """A torchtitan / AutoModel / Megatron run as a user states it: FSDP (ZeRO-3) unless the plan says otherwise,
    the global batch as accumulation steps."""
    accumulation = plan.pop("accumulation", 1)
    parallelism = {"gpus": gpus, "zero_stage": "fsdp"} | plan
    return {
        "task": "pretrain",
        "model": {"preset": model} if isinstance(model, str) else dict(model),
        "precision": precision,
        "micro_batch_size": micro_batch,
        "seq_len": seq,
        "gradient_checkpointing": checkpointing,
        "gradient_accumulation_steps": accumulation,
        "parallelism": parallelism,
        "training_tokens": 1e10,
    }


def compute_cost_by_hand(row: dict) -> Decimal:
    return Decimal(row["effective_price_per_hour"]) * row["instances"] * Decimal(str(row["hours"]))


# --- 1. torchtitan, Llama 3.1 8B on 8 and 128 H100, FSDP, bf16 (eager) ------------------------------------------
# [TT2412] Table 1: "Llama 3.1 8B model. 8 GPUs. Local batch size 2 ... Selective activation checkpointing."
# FSDP 5,762 TPS/GPU, 82.4 GiB; FSDP + torch.compile 6,667, 77.0; FSDP + torch.compile + Float8 8,532, 76.8.
# Table 3 (128 GPUs, same recipe): FSDP 5,605 TPS/GPU, 67.0 GiB.
# The measured H100s are 96 GB HBM2e parts at 500 W, not in the catalog: the absolute speed is not judged on the
# 700 W SXM card; the memory (card-independent) and same-card ratios are.
# torchtitan's "selective" is op-level SAC (saves the matmul outputs except every second one): the spec's nearest
# field is `selective` (the engine drops the attention scores only); `full` keeps the block inputs only.
# stack26: the stack stated (training_stack torchtitan: recorded, sized at the unstated ceiling; no effect here).
TITAN_8B_8 = pretrain("llama-3.1-8b", 8, 2, 8192, "selective", "bf16") | {"training_stack": "torchtitan"}
TITAN_8B_128 = pretrain("llama-3.1-8b", 128, 2, 8192, "selective", "bf16") | {"training_stack": "torchtitan"}
# The same runs as torchtitan states them (added after this round by sac26): `selective_op` is its op-level policy
# (llama3_8b.toml: mode 'selective', selective_ac_option 'op') and `cross_entropy: torchtitan` its eager loss_fn,
# F.cross_entropy(pred.float()).
TITAN_OP = {"gradient_checkpointing": "selective_op", "cross_entropy": "torchtitan"}
TITAN_8B_8_OP = TITAN_8B_8 | TITAN_OP
TITAN_8B_128_OP = TITAN_8B_128 | TITAN_OP
# torchtitan's Float8 is torchao's: pytorch/torchtitan docs/float8.md (@06fe2901) "Please install latest TorchAO
# ... to support float8 dtype", `--model.converters="float8"` swaps nn.Linear for Float8Linear, "tensor-wise
# scaling with dynamic scales": stated as `fp8_recipe: torchao` (added after this round by fp826; the expert's
# spec predates the field).
TITAN_8B_8_FP8 = pretrain("llama-3.1-8b", 8, 2, 8192, "selective", "fp8") | {"fp8_recipe": "torchao"}
TITAN_8B_8_FP8_OP = TITAN_8B_8_FP8 | TITAN_OP


@pytest.mark.django_db
def test_titan_8b_fsdp_memory_falls_by_the_sharded_state_from_8_to_128_gpus(bundled_catalog):
    """Published: 82.4 -> 67.0 GiB, a 15.4 GiB drop. By hand: AdamW mixed precision keeps 16 bytes a parameter
    (bf16 weight and gradient are gathered per layer; fp32 master, two moments and the fp32 gradient shard),
    8.03e9 x 16 x (1/8 - 1/128) = 15.06e9 B = 14.0 GiB. Product: 111.65 -> 96.93 GiB, a 14.72 GiB drop (-4.4%)."""
    drop = (
        candidate(TITAN_8B_8, H100)["memory"]["total_per_gpu_gib"]
        - candidate(TITAN_8B_128, H100)["memory"]["total_per_gpu_gib"]
    )
    assert drop == pytest.approx(82.4 - 67.0, rel=0.10)


# Was a strict xfail: 111.65 GiB (+35.5%). Now 76.28 GiB (-7.4%) (sac26: torchtitan's op-level checkpointing
# stated as selective_op, a layer keeps its input, wq/wv/w1/w2 and SDPA outputs, 63,616 B a token, not Megatron's
# 167,936; and its eager loss stated as cross_entropy torchtitan, 12 B x V at the log-softmax backward, not 4).
@pytest.mark.django_db
def test_titan_8b_fsdp_memory_on_8_gpus_within_10_percent(bundled_catalog):
    total = candidate(TITAN_8B_8_OP, H100)["memory"]["total_per_gpu_gib"]
    assert total == pytest.approx(82.4, rel=0.10)


# Was a strict xfail: 96.93 GiB (+44.7%), does_not_fit. Now 61.55 GiB (-8.1%), fits (sac26: same two causes as
# the 8-GPU case, op-level checkpointing and torchtitan's loss stated).
@pytest.mark.django_db
def test_titan_8b_fsdp_on_128_gpus_fits_the_80gb_h100(bundled_catalog):
    row = candidate(TITAN_8B_128_OP, H100)
    assert row["verdict"] in FEASIBLE, (row["verdict"], row["memory"]["total_per_gpu_gib"])


# Was a strict xfail: top five all 16 x 8 B200 or H200, no H100. Now the first row is Nebius H100 8-GPU on demand,
# 16 x 8, 2.95 h, 1,724.48 USD, and GCP a3 H100 rows are fourth and fifth (sac26: the run stated as torchtitan
# ran it fits at 61.55 GiB a GPU).
@pytest.mark.django_db
def test_titan_8b_on_128_gpus_ranking_offers_an_h100(bundled_catalog):
    rows = ranked(TITAN_8B_128_OP)
    assert all(row["gpus"] == 128 and row["plan"]["zero_stage"] == 3 for row in rows), describe(rows)
    assert any(row["gpu"] == H100 for row in rows), describe(rows)


@pytest.mark.django_db
def test_titan_8b_float8_speedup_over_bf16_within_15_percent(bundled_catalog):
    """[TT2412] Table 1: FSDP + compile + Float8 8,532 TPS/GPU over FSDP + compile 6,667 = 1.280x. Was a strict
    xfail: product 2.000x (+56%), every fp8 FLOP at the Transformer Engine runs' 8-bit efficiency. Now 1.250x
    (-2.3%): with `fp8_recipe: torchao` stated (torchtitan's float8 is torchao's) only the block linears run at
    the 8-bit rate and pay their casts (fp826, k fitted on torchao's own README run, not on this case).
    sac26: both runs stated with torchtitan's op-level checkpointing (wk, wo and w3 run again in backward, at
    the 8-bit rate under Float8): 1.256x (-1.9%)."""
    ratio = tokens_per_gpu(candidate(TITAN_8B_8_FP8_OP, H100)) / tokens_per_gpu(
        candidate(TITAN_8B_8_OP, H100)
    )
    assert ratio == pytest.approx(8532 / 6667, rel=0.15)


# --- 2. torchtitan, Llama 3.1 70B on 256 H100, FSDP 32 x TP 8, Float8, full AC ------------------------------------
# [TT2412] Table 4: "Llama 3.1 70B model. 256 GPUs (FSDP 32, TP 8). Local batch size 16, global batch size 512.
# Full activation checkpointing." 2D: 829 TPS/GPU, 71.9 GiB. Local batch 16 is per data-parallel rank, i.e. per
# TP group of 8 (32 x 16 = 512), which is the spec's micro_batch_size.
# Float8 via torchao, as TITAN_8B_8_FP8 (stated after the round; the published speed held either way).
TITAN_70B = pretrain("llama-3-70b", 256, 16, 8192, "full", "fp8", tensor_parallel=8) | {
    "fp8_recipe": "torchao"
}


@pytest.mark.django_db
def test_titan_70b_2d_speed_within_15_percent(bundled_catalog):
    """Published 829 TPS/GPU on 500 W H100s; product 931.4 on the 700 W SXM (+12.4%) as the round judged it
    (Transformer Engine's 8-bit efficiency), about 866 (+4.4%) with torchao stated. A full-power card can only
    raise the measured figure, narrowing the gap."""
    assert tokens_per_gpu(candidate(TITAN_70B, H100)) == pytest.approx(829, rel=0.15)


# sac26: with torchtitan's loss stated (cross_entropy: torchtitan, eager at @9dec370: "TODO: compiling loss function
# causes CUDA errors"; under TP 8 PyTorch's loss_parallel, whose fused
# backward holds 16 bytes x V / 8 a token over 131,072 tokens, 31.3 GiB) the product gives 64.36 GiB (-10.5%), still
# out. What is left is not the product's under-count alone: it adds the recomputed layer's working set (5.1 GiB)
# on top of the loss peak, though the loss's tensors are freed before the first layer's recompute, so the peak it
# models is about 5 GiB too high here, and the output layer's input, which DTensor's ColwiseParallel saves
# all-gathered at full width (2 GiB), is not counted. Counting both, about 61.7 GiB (-14%): roughly 10 GiB of the
# measured max_reserved (torchtitan's metrics.py reads reserved_bytes.all.peak) stays unexplained.
@pytest.mark.django_db
@pytest.mark.xfail(
    strict=True,
    reason=RELABEL48_TITAN_70B_2D
    + "Not explained (e26c): as run (cross_entropy torchtitan) the product gives 64.36 GiB (-10.5%): "
    "activations 56.38, optimizer 3.08, weights 0.76, gradients 0.51, overhead 3.64 GiB. The published column "
    "is torchtitan's max_reserved (torchtitan/metrics.py @9dec370 reads reserved_bytes.all.peak) on a 96 GB "
    "HBM2e card, where the product counts allocated bytes plus 5% (allocator_fragmentation_fraction). No "
    "source gives this run's allocated peak (max_active), so the 7.5 GiB left is not attributed. Before sac26: "
    "[TT2412] Table 4: 71.9 GiB a GPU; product 38.98 GiB (-45.8%, 32.2 GiB activations) and verdict "
    "'oversized', which lets a 48 GB card look safe for a plan that used 72 GiB. By hand the kept block "
    "inputs are 2 x 8192 x 16 x 8192 x 80 B / TP 8 = 20 GiB; the rest of the measured peak (the recomputed "
    "block's working set at 131k tokens, fp8 casts and the 128k-vocabulary loss over 16 x 8192 tokens) is "
    "under-counted at this micro-batch. tt42: unchanged (64.36 GiB, tensors 60.73). With an allocator reserve "
    "fitted on torchtitan's own published active / reserved rows (median 1.170 of 1.12-1.46; x26f "
    "test_tt_reserved_columns_admit_no_single_allocator_reserve) it would read 71.05 (-1.2%), but the same "
    "reserve leaves x26f's 405B 1F1B row at -11.5% and puts x26e's MI300X memory case at +16.3%, and the rows "
    "it is fitted on spread wider than the tolerance: not applied, UNEXPLAINED. t44: rechecked at 64.36 GiB "
    "(-10.5%), unchanged; the same reading as x26f's 405B pipeline rows (torchtitan's max_reserved against the "
    "product's allocated bytes + 5%). Spec: not expressible (the allocator's reserve; its one setting, "
    "expandable_segments, is not published for this launch). train47: UNEXPLAINED, rechecked at 64.36 GiB "
    "(-10.5%), unchanged; not a pipeline row (no PP), so the in-flight reading ruled out on x26f's 405B rows "
    "does not reach it. tt49: UNEXPLAINED, rechecked unchanged (64.36 GiB, -10.5%); no held-out active / "
    "reserved pair beyond tt42's seven was opened (torchtitan#735, torch 2.6.0.dev20241212, FSDP2 x TP 4, shows "
    "only its allocated peak in the stored excerpt), and the caching allocator's retries located for x26f's CP rows "
    "(TT49_CP) hold a reserved peak down, so they cannot carry a product figure that is too low.",
)
def test_titan_70b_2d_memory_within_10_percent(bundled_catalog):
    as_run = TITAN_70B | {"cross_entropy": "torchtitan"}
    assert candidate(as_run, H100)["memory"]["total_per_gpu_gib"] == pytest.approx(71.9, rel=0.10)


# --- 3. Trainy on WhiteFiber, Llama 3.1 8B on 32 H200, FSDP, Float8, compile ---------------------------------------
# [TRAINY] NUM_NODES 4: 10,938 TPS/GPU, 47.96 GiB (8 nodes: 10,753, 46.97). local_batch_size 2, seq 8192.
# Trainy runs torchtitan's float8 converter (the run's command above): torchao, as for TITAN_8B_8_FP8.
TRAINY_8B_H200 = pretrain("llama-3.1-8b", 32, 2, 8192, "selective", "fp8") | {"fp8_recipe": "torchao"}


@pytest.mark.django_db
def test_trainy_8b_float8_on_32_h200_within_15_percent(bundled_catalog):
    """[TRAINY] 10,938 TPS/GPU on 32 H200. Was a strict xfail: 14,491.8 (+32.5%), torchao float8 at the full
    8-bit rate. Now about 10,059 (-8.0%) with `fp8_recipe: torchao` stated (fp826)."""
    assert tokens_per_gpu(candidate(TRAINY_8B_H200, H200)) == pytest.approx(10938, rel=0.15)


# Was a strict xfail: 88.32 GiB (+84%; 99.87 before this branch, since fp826 keeps torchao's linear inputs in 16
# bits). Now 48.06 GiB (+0.2%) (sac26: stated as the run's torchtitan ran it, op-level checkpointing, selective_op,
# which torchao's float8 linears state since they call torch.mm; and its compiled loss, cross_entropy: compiled,
# torchtitan @e7c0cae components/loss.py compiling loss_fn under training.compile: 4 B x V, not the eager 12).
# The speed test above keeps the spec as stated: restated, the recomputed wk/wo/w3 put it at 9,242 (-15.5%).
TRAINY_8B_H200_AS_RUN = TRAINY_8B_H200 | {
    "gradient_checkpointing": "selective_op",
    "cross_entropy": "compiled",
}


@pytest.mark.django_db
def test_trainy_8b_float8_on_32_h200_memory_within_10_percent(bundled_catalog):
    total = candidate(TRAINY_8B_H200_AS_RUN, H200)["memory"]["total_per_gpu_gib"]
    assert total == pytest.approx(47.96, rel=0.10)


# --- 4. Megatron-Core MoE: Mixtral 8x7B on 64 H100, TP 1 / EP 8 / PP 4 / VP 8, bf16 -------------------------------
# [MCOREMOE] mapping row and "468 TFLOPS for Mixtral 8X7B bf16 training". DP = 64 / (1 x 4) = 16, GBS 256 / (16 x 1)
# = 16 micro-batches; dropless all-to-all dispatch; recomputation not stated (none: the spec's `selective`).
# Caveat recorded: the headline is MCore v0.9's and the mapping table says "MCore v0.8".
MIXTRAL_MCORE = pretrain(
    "mixtral-8x7b",
    64,
    1,
    4096,
    "selective",
    "bf16",
    zero_stage=1,
    pipeline_parallel=4,
    virtual_pipeline=8,
    expert_parallel=8,
    accumulation=16,
) | {
    "training_stack": "megatron"
}  # stack26: Megatron-Core, stated; MoE keeps the llm-foundry base (unchanged)


@pytest.mark.django_db
def test_mixtral_flops_per_token_match_a_hand_count(bundled_catalog):
    """By hand, per token forward (Mixtral-8x7B config: 32 layers, d 4096, 32 heads, 8 KV heads, FFN 14336, top-2
    of 8, vocab 32000): QKV 2 x 4096 x 6144 = 50.3M, out 33.6M, two SwiGLU experts 2 x 3 x 2 x 4096 x 14336 =
    704.6M, causal attention 2 x 4096 x 4096 = 33.6M; x 32 layers = 26.31G, + LM head 2 x 4096 x 32000 = 0.26G;
    x 3 = 79.7 GFLOPs. Product 80.5 (+1.0%)."""
    fpt = candidate(MIXTRAL_MCORE, H100)["throughput"]["flops_per_token"]
    assert fpt == pytest.approx(79.7e9, rel=0.03)


# moe26b: unchanged, 333.7 TFLOPS (-28.7%); nothing here is communication-bound (all-to-alls 2%, bubble 2.3%).
# Causes: (1) MoE models keep the 0.40 end-to-end Hopper default as their dense rate (mfu._fitted_mfu) where
# dense pretraining runs at the width ceiling (0.444 at d 4,096) and pays bubble and communication on top;
# (2) the MoE costs fitted on narrow-expert runs take 12% (factor 0.88); (3) the 468 is in Megatron's FLOPs,
# whose attention term counts the whole s x s score matrix (training.py num_floating_point_operations, (1 +
# g / h + s / h)) and no input embedding: 82.9 GFLOPs a token against the engine's 80.5, so the run's tokens/s
# is 5,645 and the product's 4,145 is -26.6% of it. (1) alone would put DeepSeek-V2, a fit point, at about +14%.
# moebf26: 333.7 TFLOPS (-28.7%, was -36.6%). The fixed MoE cost is now 2 ms a MoE layer + 0.25 ms a local
# expert (one grouped-GEMM launch each; assumptions.MOE_LOCAL_EXPERT_SECONDS): Mixtral's one local expert of
# EP 8 pays 2.25 ms, 17.6 us a token instead of 46.9. The rest is the dense 0.40 Hopper default for MoE
# (0.40 x 0.92 MoE factor x bubble and all-to-all): raising it to the dense width ceiling (0.444 at d 4,096)
# would put DeepSeek-V2, a fit point held within 10%, at about +14%.
# cls45e: the BF16 MoE rows outside every fit are all slow in the product, the FP8 ones much less so. Checked rows
# (none of them fit rows): Mixtral 8x7B on H100 BF16 -30.0% (below), DeepSeek-V3 AutoModel H100 BF16 -16.2%,
# Qwen3-30B-A3B AutoModel H100 BF16 -44.1%, [MB2511] GB200 DeepSeek-V3 BF16 -31.0% and Qwen3-235B BF16 -42.5%
# (test_outside_audit_stop43m.py), against the FP8 rows DeepSeek-V3 Megatron H100 +7.8% (x26f), GB200 26.02 MXFP8
# -17.0% / -28.7% and B200 EP 8 MXFP8 -6.2% / -13.0% (stop43m GB200_HELD_OUT). The BF16 fit rows are GPT-OSS 120B
# (H100) and DeepSeek-V2 (H800); GPT-OSS on 64 GB200 / B200 at EP 64 (26.02) stays inside (+8.1% / -0.2%).
CLS45E_BF16_MOE = (
    "cls45e: unchanged; sharpened: every BF16 MoE row outside the fit reads slow (Mixtral H100 -30.0%, DeepSeek-V3 "
    "AutoModel -16.2%, Qwen3-30B AutoModel -44.1%, GB200 DeepSeek-V3 -31.0%, Qwen3-235B -42.5%) where the FP8 rows "
    "of the same models read -6 to -29% or fast, and on one GB200 plan the product's FP8 / BF16 is 1.52 against "
    "NVIDIA's 1.13-1.26 (test_gb200_held_out_moe_rows_put_the_miss_in_the_gb200s_card_path): the BF16 MoE rate (the "
    "0.40 MoE base the routed-byte and fixed terms were fitted on with two BF16 rows, GPT-OSS 120B and DeepSeek-V2) "
    "is where the miss sits, not the all-to-all (its volume already scales with the EP degree: throughput."
    "expert_alltoall, (ep - 1) / ep of tokens x top-k x hidden x 2 B, 4 calls a MoE layer, node and fabric shares). "
    "A BF16 MoE rate set on these rows would be set on the failing rows. One more held-out H100 BF16 row, read "
    "only through a third-party reproduction of Yan et al. 2026 (arXiv:2603.07685, Table 20 and B.2; the paper not "
    "opened): Qwen3-235B on 256 H100, TP 2, PP 8, VP 4, EP 32, GBS 2,048, DeepEP with 1F1B A2A overlap and CUDA "
    "graphs, 2,132 tokens/s/GPU; the product, stated with DeepEP and overlap partial, gives 1,421.9 (-33.3%) where "
    "the same plan in FP8 (Megatron-Bridge 25.11, 1,575) reads 1,682.3 (+6.8%): the same pattern, on another "
    "software version (CUDA graphs), so an indication, not a fit row."
)


@pytest.mark.django_db
@pytest.mark.xfail(
    strict=True,
    reason="UNEXPLAINED (moet47: unchanged; the per-local-expert cost ruled out, one local expert at EP 8, -29.5% at zero; every MoE term at zero -19.4%: the 0.40 dense MoE base, test_outside_moe_training_stop47.py) "
    "moe43: 327.5 TFLOPS (-30.0%) after the MoE constants' refit (217.5 B a routed element, 1.64 ms + 0.205 "
    "ms a local expert: 32 x 2 x 4,096 routed elements 17.0 us a token, 32 x 1.845 ms / 4,096 = 14.4 us). "
    "Not explained (e26c; stack26: stated training_stack megatron, unchanged at 333.7 TFLOPS: the Megatron "
    "stack's ceiling moves dense models only, the MoE costs having been fitted on the 0.40 MoE base; at that "
    "stack's dense ceiling, 0.517 at d 4,096, the base would be 1.29x today's): 333.7 TFLOPS (-28.7%; 4,145 "
    "tokens/s/GPU against 5,645 at Megatron's 82.9 "
    "GFLOPs a token). The headline needs 0.473 of the peak, above the product's dense width ceiling at d 4,096 "
    "(0.444), and the README states no run config beside it beyond the v0.8 mapping row (TP 1, EP 8, PP 4, VP "
    "8, MBS 1, GBS 256, all-to-all, dropless). The product's step is compute at 0.353 of the peak (the MoE "
    "factor on the 0.40 dense MoE rate) with 2.1% exposed all-to-all and 2.3% bubble: the compute rate is the "
    "gap, but no source shows what that run did to reach 0.473. Before: "
    "[MCOREMOE] 468 TFLOPS a GPU (5,814 tokens/s/GPU at the product's 80.5 GFLOPs a token); product "
    "3,686.8 tokens/s/GPU = 296.8 TFLOPS (-36.6%). Not the pipeline (bubble 2.3%) nor the all-to-all "
    "(0.08 s of a 4.44 s step): the engine's MFU is 0.313 where the run reached 0.473 of the 989 TFLOPS "
    "peak. By hand from procurement/sizing/mfu.py moe_efficiency_factor: FLOPs 80.5e9 / (989e12 x 0.40) = "
    "203.5 us a token, routed bytes 32 x 2 x 4096 x 125 B / 3.35 TB/s = 9.8 us, and moe_layer_fixed_seconds "
    "6 ms x 32 layers / 4,096 tokens = 46.9 us: factor 0.781, 0.40 x 0.781 = 0.313. The fixed 6 ms a MoE "
    "layer and micro-batch (fitted where it was, on narrow-expert runs) costs this wide-expert model 22%, "
    "and the dense cap of 0.40 is itself 15% under the run. "
    "t44: the class fix stack26 left open, tried (not applied): MoE on a stated Megatron stack at that "
    "stack's dense width ceiling (0.498 of the peak at d 4,096, not the 0.40 MoE base) gives 393.1 TFLOPS (-16.0%) before "
    "any refit, and moves the GPT-OSS 120B H100 fit row, a Megatron-Bridge run, from +2.6% to +12.9% once it is "
    "stated megatron; refitting the MoE costs to hold it would pull Mixtral back down, so the base is not the "
    "gap. Spec: nothing left to state (stack, plan, dispatcher and no recomputation are stated; the README gives no "
    "other setting). UNEXPLAINED. " + CLS45E_BF16_MOE,
)
def test_mixtral_mcore_speed_within_15_percent(bundled_catalog):
    row = candidate(MIXTRAL_MCORE, H100)
    tflops = tokens_per_gpu(row) * row["throughput"]["flops_per_token"] / 1e12
    assert tflops == pytest.approx(468, rel=0.15)


@pytest.mark.django_db
def test_mixtral_mcore_ranking_keeps_the_plan_and_costs_by_hand(bundled_catalog):
    """Top five: all 64 GPUs (8 instances x 8), TP 1 / PP 4 / VP 8 / EP 8 / ZeRO-1 as stated. First row
    (Nebius H100 8-GPU on demand, 23.60 USD/h an instance): compute 8 x 23.60 x 11.7724 h = 2,222.63 USD.
    moebf26 (Mixtral's fixed MoE cost 2.25 ms a layer, was 6): the first row is Nebius B200 8-GPU on demand, 44.00
    USD/h an instance, 8 x 44.00 x 5.047 h = 1,776.38 USD; the H100 second, 8 x 23.60 x 10.471 h = 1,976.92."""
    rows = ranked(MIXTRAL_MCORE)
    assert len(rows) == 5, describe(rows)
    for row in rows:
        plan = row["plan"]
        assert (row["gpus"], row["instances"] * row["gpus_per_instance"]) == (64, 64), describe(rows)
        assert (plan["tensor_parallel"], plan["pipeline_parallel"], plan["virtual_pipeline"]) == (1, 4, 8)
        assert (plan["expert_parallel"], plan["zero_stage"]) == (8, 1)
    first = rows[0]
    assert Decimal(first["cost_breakdown"]["compute"]) == pytest.approx(
        compute_cost_by_hand(first), rel=Decimal("0.001")
    )


# --- 5. NeMo AutoModel: DeepSeek-V3 671B on 256 H100, PP 4 / VP 8 / EP 64, FSDP 64, bf16 --------------------------
# [AUTOMODEL] "DeepSeek V3 671B | 256 | 512 | 1 | 8 | 1 | 4096 | 1 | 4 | 1 | 64 | 8 | 64 | TE + DeepEP | 8.18 | 250 |
# 1,002" (GPUs, GBS, MBS, LBS, GA, seq, TP, PP, CP, EP, VP, FSDP, ..., s/step, TFLOPs/GPU, tokens/s/GPU).
# LBS 8 at MBS 1: 8 micro-batches in flight per pipeline; activation checkpointing on in the recipe.
# Every AutoModel MoE row ran with the fake balanced gate: docs/performance-summary.md @89e3a9fdd (the commit that
# published these rows) "Fake balanced gate is enabled to simulate ideal expert routing", and each recipe there
# (examples/benchmark/configs/deepseek_v3_te_deepep.yaml, gptoss_120b_te_deepep.yaml, qwen3_moe_30b_te_deepep.yaml,
# line 74) states `fake_balanced_gate: true`: token i goes to experts i k .. i k + k - 1 (mod E)
# (nemo_automodel/components/moe/layers.py FakeBalancedGate), stated as `expert_routing: balanced` (e26c).
AUTOMODEL_GATE = {"expert_routing": "balanced"}
# AutoModel's MoE.forward runs the shared experts on a side stream beside the routed experts' dispatch, expert
# GEMMs and combine (nemo_automodel/components/moe/layers.py @89e3a9fdd lines 909-923, "Execute shared experts
# in a separate stream to overlap compute with the communication for grouped experts"): Megatron-Core's
# --moe-shared-expert-overlap, stated as `expert_overlap: shared_experts` (e26c) for the model that has them.


def deepseek_v3_automodel(virtual_pipeline: int) -> dict:
    plan = {
        "pipeline_parallel": 4,
        "expert_parallel": 64,
        "expert_dispatch": "deepep",
        "accumulation": 8,
        "expert_overlap": "shared_experts",
    } | AUTOMODEL_GATE
    if virtual_pipeline > 1:
        plan["virtual_pipeline"] = virtual_pipeline
    # moe43: no multi-token prediction module (the preset's mtp_layers 1 stated off): the row's 250 TFLOP/s at
    # 1,002 tokens/s/GPU charge 249.5e9 FLOPs a token, Megatron's count of DeepSeek-V3 without MTP (249.8e9;
    # with its MTP layer 260.0e9, what Megatron-Bridge's DeepSeek-V3 rows charge: 557 / 2,139 = 260.4e9)
    model = {"preset": "deepseek-v3", "mtp_layers": 0}
    return pretrain(model, 256, 1, 4096, "full", "bf16", **plan)


# Was a strict xfail: WorkloadSpecError, pp x vp (32) must divide num_layers (61). Now parses, bubble 4.7% (moe26b:
# chunks need only a layer each, as PyTorch's pipelining runs them; stages keep the balanced average).
def test_deepseek_v3_automodel_plan_can_be_stated():
    assert parse_workload_spec(deepseek_v3_automodel(8)).parallelism.virtual_pipeline == 8


@pytest.mark.django_db
def test_deepseek_v3_automodel_plan_fits_the_80gb_h100(bundled_catalog):
    """The run was published on 80 GB H100s; product 70.24 GiB a GPU, verdict 'tight' (runs, no 20% headroom).
    sac26: 48.78 GiB, 'fits': FSDP gathers a GPU's 4 local experts of 256 a layer under EP 64, not the whole
    MoE layer (11.3e9 parameters, 21 GiB in bf16)."""
    assert candidate(deepseek_v3_automodel(1), H100)["verdict"] in FEASIBLE


# moebf26: 417.8 (-58.3%, was -58.6%): 4 local experts of EP 64 pay 3 ms a MoE layer instead of 6; the
# bubble of the statable VP 1 and the exposed all-to-alls remain.
# moe26b: the run's own plan, VP 8, can now be stated and is what this checks: 651.3 (-35.0%; VP 1 531.9). The
# bubble falls from 37.5% to 4.7%; EP 64 = the 64 data-parallel ranks of a stage, so no routed expert is gathered
# by FSDP (throughput.data_parallel_groups); the size report's H100 fabric is 400 Gb/s a GPU (assumptions.
# NETWORK_BANDWIDTH_HOPPER, was 200). Step 12.58 s = compute 9.00 + 3.58 s of DeepEP all-to-all on the critical
# path; hidden, the step would be 9.0 s (910, -9.2%).
# Was a strict xfail: "[AUTOMODEL] 1,002 tokens/s/GPU; product at the run's plan (PP 4 x VP 8) 651.3 (-35.0%):
# step 12.58 s = compute 9.00 s ... + 3.58 s of DeepEP EP-64 all-to-all over 8 nodes on the critical path, against
# the published 8.18 s." Now 866.9 (-13.5%) because the run is stated as AutoModel ran it (e26c): (1) its fake
# balanced gate (expert_routing: balanced) sends token i to experts 8i .. 8i + 7 (mod 256), 2 GPUs of one node
# under EP 64, where a learned router's 8 experts reach 4 of the 8 nodes (5.25 capped by DeepSeek-V3's group-
# limited routing, 4 of 8 groups): DeepEP's fabric copies fall to 1 / 4 and the exposed
# all-to-alls 3.58 -> 0.89 s (826.8, -17.4%); (2) its shared expert runs on a side stream beside them
# (expert_overlap: shared_experts), hiding up to its 5.8% of the compute: 0.89 -> 0.45 s, step 9.45 s.
# What is left (-13.5%) is the compute, 9.00 s at 0.337 of the peak against the published 8.18 s step.
@pytest.mark.django_db
@pytest.mark.xfail(
    strict=True,
    reason="UNEXPLAINED (moet47: unchanged; per-local-expert cost at zero -15.3% (4 local experts at EP 64; TE's grouped GEMM launches one cuBLAS GEMM per expert by default), every MoE term at zero +6.0%, where the fit rows need them: test_outside_moe_training_stop47.py) "
    "moe43: 840.0 (-16.2%): stated without the MTP module (mtp_layers 0: AutoModel's 250 TFLOP/s / 1,002 = "
    "249.5e9 a token, Megatron's count without MTP; with it 818.7) and the MoE constants refitted on their four rows "
    "(217.5 B a routed element: DeepSeek-V3's 58 x 8 x 7,168 routed elements pay 6% more). "
    "mla42: [AUTOMODEL] 1,002 tokens/s/GPU; product 846.4 (-15.5%; moe42 830.9, -17.1%): MLA's attention "
    "core counted 192 wide in Q K^T and 128 in A V (340.3e9 -> 332.1e9 FLOPs a token, step 9.86 -> 9.68 s) and its "
    "low-rank layers in the FSDP gather (weights 6.93 -> 6.61 GiB a GPU) move it 1.6 points, not inside. "
    "moe42: passed at 866.9 (-13.5%) before. The "
    "FLOP count fix (no FLOPs for the 129,280 x 7,168 input embedding lookup, the output layer 6 not 8 under full "
    "recomputation: 349.5e9 -> 340.3e9 a token) speeds the compute 2.7%, but the MoE terms, refitted on their own "
    "four rows once the same fix had moved those rows fast (GPT-OSS 120B H100 +6.7% -> +15.0%), now charge 205 B a "
    "routed element (was 125) and 0.9 x the card-independent seconds: DeepSeek-V3's 58 MoE layers x top-8 x 7,168 "
    "routed elements pay the bytes term in full. The compute model, not the routing, is what is short (as before: "
    "0.337 of the peak against the published step). "
    "t44: rechecked at 840.0 (-16.2%), unchanged. Spec: the run is stated as AutoModel ran it (PP 4 x VP 8, EP 64, DeepEP, fake balanced gate, shared-expert overlap, no MTP); "
    "what is short is the compute rate, and the stack is not a training_stack value: a value would be expressible, "
    "but no published pair of the same MoE run on AutoModel and Megatron sizes it, and Kimi K2 on the same stack "
    "passes at the MoE costs as they are (-1.1%). UNEXPLAINED. "
    + CLS45E_BF16_MOE
    + " For this model: the same H100s on Megatron-Bridge in FP8 (x26f DEEPSEEK_H100_AS_RUN, 1,297) read 1,397.7 "
    "(+7.8%), so the product's FP8 / BF16 for DeepSeek-V3 on H100 is 1,397.7 / 840.0 = 1.66 where NVIDIA's two rows "
    "give 1,297 / 1,002 = 1.29 (two stacks and plans, so an indication only).",
)
def test_deepseek_v3_automodel_speed_within_15_percent(bundled_catalog):
    assert tokens_per_gpu(candidate(deepseek_v3_automodel(8), H100)) == pytest.approx(1002, rel=0.15)


# --- 6. NeMo AutoModel: GPT-OSS 120B on 64 H100, EP 64, FSDP 64, bf16 ---------------------------------------------
# [AUTOMODEL] "GPT-OSS 120B | 64 | 512 | 2 | 2 | 4 | 4096 | 1 | 1 | 1 | - | - | 64 | TE + DeepEP + FlexAttn | 4.30 | 231 |
# 7,626"; the recipe sets ep_size: 64 and no activation checkpointing. No preset: the shape of
# openai/gpt-oss-120b config.json (not fetched here; as copied in two public repositories' fixtures, search
# index file ids 71309954953 and 54030563578) (36 layers, hidden 2880, 64 heads of 64, 8 KV heads, 128 experts top-4 of width
# 2880, vocabulary 201,088, QKV bias). Alternate layers use a 128-token sliding window, which the spec cannot state.
# moebf26: now it can. The config as copied in file id 71309954953: "sliding_window": 128, "layer_types":
# ["sliding_attention" if i % 2 == 0 else "full_attention" for i in range(36)], i.e. 18 windowed layers
# (tests/procurement/sizing/test_sliding_window.py counts its FLOPs and KV cache by hand).
GPT_OSS_120B = {
    "name": "gpt-oss-120b",
    "num_layers": 36,
    "hidden_size": 2880,
    "num_attention_heads": 64,
    "num_key_value_heads": 8,
    "head_dim": 64,
    "intermediate_size": 2880,
    "moe_intermediate_size": 2880,
    "num_experts": 128,
    "experts_per_token": 4,
    "vocab_size": 201088,
    "attention_qkv_bias": True,
    "sliding_window": 128,
    "sliding_window_layers": 18,
}
GPT_OSS_AUTOMODEL = pretrain(
    GPT_OSS_120B,
    64,
    2,
    4096,
    "none",
    "bf16",
    expert_parallel=64,
    expert_dispatch="deepep",
    accumulation=4,
    **AUTOMODEL_GATE,
)


# moebf26: still 80.42 GiB with the window stated: under flash attention a layer keeps per-token tensors
# only (no score matrix), which a window does not shrink; the 42.8 GiB of activations are the MoE layers'.
# Was a strict xfail: 80.42 GiB, does_not_fit. Now 75.27 GiB, tight (sac26: FSDP's gather buffer under expert
# parallelism rebuilds a GPU's 2 local experts of 128 a layer, not the whole MoE layer: AutoModel shards the
# experts over EP on the expert dimension before fully_shard; the activations, 42.8 GiB, are unchanged).
@pytest.mark.django_db
def test_gpt_oss_120b_automodel_plan_fits_the_80gb_h100(bundled_catalog):
    assert candidate(GPT_OSS_AUTOMODEL, H100)["verdict"] in FEASIBLE


# moebf26: 4,201.3 (-44.9%, was -49.1%): 2 local experts of EP 64 pay 2.5 ms a MoE layer instead of 6
# (4,126.8), and the spec now states the 128-token window on 18 layers: 37.89 -> 36.19 GFLOPs a token (by
# hand 3 x 18 x (33.55M - 2.06M) = 1.70G less, 4.5%; attention is 3.6G of the product's count, so the
# window cannot explain a 24% gap to the source's 30.3). The exposed EP-64 all-to-alls remain.
# moe26b: 5,619.4 (-26.3%): the size report's H100 fabric is 400 Gb/s a GPU (DGX H100's 8 x ConnectX-7;
# assumptions.NETWORK_BANDWIDTH_HOPPER, checked on Megatron-Bridge 26.02's GPT-OSS 120B at EP 64 on 64 B200, +1.4%):
# the all-to-alls 3.94 -> 1.97 s of a 5.83 s step. The same stack on GPT-OSS 20B inside one node (AutoModel's
# table, 8 H100, EP 8: 13,058) is -15.2%: what is left here is the all-to-all over the fabric on the critical path.
# Was a strict xfail: "[AUTOMODEL] 7,626 tokens/s/GPU; product 5,619.4 (-26.3%): step 5.83 s = compute 3.86 s ...
# + 1.97 s of DeepEP EP-64 all-to-all over 8 nodes on the critical path, against the published 4.30 s. With the
# all-to-alls hidden the product gives 8,490 (+11%): their overlap with computation, which the source does not
# state, is the remaining cause." Now 7,351.2 (-3.6%) because the run's fake balanced gate is stated (e26c,
# expert_routing: balanced, AUTOMODEL_GATE above): token i's 4 experts are 4i .. 4i + 3 (mod 128), 2 GPUs of one
# node under EP 64 (2 experts a GPU, 16 a node), where a learned router's 4 experts reach 8 (1 - (7 / 8)^4) = 3.31
# of the 8 nodes: DeepEP's fabric copies fall to 1 / 3.31 and the exposed all-to-alls from 1.97 s to 0.59 s of a
# 4.46 s step (no overlap assumed; nothing was fitted on this row).
@pytest.mark.django_db
def test_gpt_oss_120b_automodel_speed_within_15_percent(bundled_catalog):
    assert tokens_per_gpu(candidate(GPT_OSS_AUTOMODEL, H100)) == pytest.approx(7626, rel=0.15)


# --- 7. NeMo AutoModel LoRA: Llama 3.1 8B on one H100, and Llama 3.3 70B on 8 H100 (TP 2, FSDP 4) -----------------
# [AUTOMODEL] "Llama3 8B | 1 | 32 | 2 | 2 | 16 | 4096 | 1 | 1 | 1 | - | 1 | 1 | TE + triton | 10.51 | 402 | 12472.87" and
# "Llama3 70B | 8 | 32 | 2 | 2 | 4 | 4096 | 2 | 1 | 1 | - | 1 | 4 | TE + triton + fsdp2_prefetch | 15.00 | 316 | 1091.85".
# LoRA dim 16 on every '*_proj' (all-linear); the 8B recipe states no checkpointing, the 70B one does.
def automodel_lora(model: str, gpus: int, checkpointing: str, accumulation: int, **plan) -> dict:
    return {
        "task": "lora",
        "model": {"preset": model},
        "precision": "bf16",
        "lora": {"rank": 16, "targets": "all-linear"},
        "micro_batch_size": 2,
        "seq_len": 4096,
        "gradient_accumulation_steps": accumulation,
        "gradient_checkpointing": checkpointing,
        "parallelism": {"gpus": gpus} | plan,
        "training_tokens": 1e8,
    }


LORA_8B = automodel_lora("llama-3.1-8b", 1, "none", 16)
LORA_70B = automodel_lora("llama-3-70b", 8, "full", 4, zero_stage="fsdp", tensor_parallel=2)


@pytest.mark.django_db
def test_automodel_lora_8b_on_one_h100_within_15_percent(bundled_catalog):
    """Published 12,472.87 tokens/s; product 11,119.9 (-10.8%), 64.1 GiB (fits 80 GB as the run did).
    mfu26: 12,346.8 (-1.0%), 16-bit LoRA on Hopper at the width ceiling (0.444 at d 4,096)."""
    row = candidate(LORA_8B, H100)
    assert row["verdict"] in FEASIBLE
    assert tokens_per_gpu(row) == pytest.approx(12472.87, rel=0.15)


@pytest.mark.django_db
def test_automodel_lora_8b_ranking_keeps_one_gpu_and_costs_by_hand(bundled_catalog):
    """Top five are one GPU each; the first row (Verda H100 spot, 0.8015 USD/h, effective 0.802433 with its
    checkpoints) costs 1 x 0.802433 x 2.498 h = 2.00 USD of compute, its hours are 1e8 / 11,119.9 / 3600 = 2.498.
    mfu26 (16-bit LoRA on Hopper at the width ceiling, 0.444 at d 4,096): the same row, 1e8 / 12,346.8 / 3600 =
    2.250 h, 1 x 0.802433 x 2.250 = 1.81 USD of compute. moe42 (no FLOPs for the 128,256 x 4,096 input embedding
    lookup; the frozen output layer 4 a weight): 13,121 tokens/s, 1e8 / 13,121 / 3600 = 2.117 h, 1.70 USD."""
    rows = ranked(LORA_8B)
    assert len(rows) == 5 and all(row["gpus"] == 1 for row in rows), describe(rows)
    first = rows[0]
    assert first["hours"] == pytest.approx(1e8 / 13121 / 3600, rel=0.01)
    assert Decimal(first["cost_breakdown"]["compute"]) == pytest.approx(
        compute_cost_by_hand(first), abs=Decimal("0.01")
    )


@pytest.mark.django_db
def test_automodel_lora_70b_plan_fits_the_80gb_h100(bundled_catalog):
    """The run used 8 x H100 80GB; product 27.9 GiB a GPU (TP 2 x FSDP 4, full recomputation)."""
    row = candidate(LORA_70B, H100)
    assert row["verdict"] in FEASIBLE and row["plan"]["tensor_parallel"] == 2


# sac26: the recomputation count is not the miss. The row is the "fsdp2_prefetch" one (NVIDIA-NeMo/Automodel #1711,
# April 2026), whose recipe sets enable_compile: true; with compile, nemo_automodel/components/distributed/
# parallelizer.py (@2013a4dd6) wraps each layer's self_attn and mlp in checkpoint_wrapper (NO_REENTRANT), so
# backward reruns every linear's forward, as `full` counts (6N for LoRA). What is left is the efficiency: the run
# implies 49% of the BF16 peak at that count, the product caps at 40%.
# Was a strict xfail: 852.5 tokens/s/GPU (-21.9%). Now 1,025.9 (-6.0%) (mfu26: 16-bit LoRA on NVSwitch Hopper
# runs at the width ceiling as pretraining does, 0.485 at d 8,192; checked on AutoModel LoRA rows no test uses).
@pytest.mark.django_db
def test_automodel_lora_70b_on_8_h100_within_15_percent(bundled_catalog):
    assert tokens_per_gpu(candidate(LORA_70B, H100)) == pytest.approx(1091.85, rel=0.15)


# --- 8. Unsloth README: Llama 3.1 8B QLoRA with Hugging Face + FA2 on 24 GB and 80 GB cards ------------------------
# [UNSLOTH] batch 1, rank 32 on all linears, sequences padded to length. Longest context that fits: 24 GB 5,789
# tokens, 40 GB 12,264, 80 GB 28,454. Gradient checkpointing is the HF baseline's (stated as full). The column is
# "Hugging Face + FA2": the spec states that stack's loss (cross_entropy: huggingface, a field added after this
# round; the README's table came in with e3162dc, 2025-01-14, when transformers 4.46-4.48 were current).
def unsloth_qlora(seq: int) -> dict:
    return {
        "task": "qlora",
        "model": {"preset": "llama-3.1-8b"},
        "precision": "bf16",
        "lora": {"rank": 32, "targets": "all-linear"},
        "micro_batch_size": 1,
        "seq_len": seq,
        "gradient_checkpointing": "full",
        "parallelism": {"gpus": 1},
        "training_tokens": 1e7,
        "cross_entropy": "huggingface",
    }


@pytest.mark.django_db
def test_unsloth_8b_qlora_at_the_24gb_limit_runs_on_a_4090(bundled_catalog):
    """5,789 tokens is the longest the HF stack fits in 24 GB: the product must let it run on an RTX 4090
    (product 20.09 GiB, 'tight': the 20% headroom does not fit; 12.83 GiB before the HF loss was counted)."""
    assert candidate(unsloth_qlora(5789), RTX_4090)["verdict"] in FEASIBLE


@pytest.mark.django_db
def test_unsloth_8b_qlora_memory_per_token_within_10_percent(bundled_catalog):
    """Was a strict xfail: "[UNSLOTH] HF + FA2 grows 56e9 B over 28,454 - 5,789 = 22,665 tokens (24 GB -> 80 GB
    limits): 2.47 MB a token. Product peak 12.83 GiB at 5,789 and 33.73 GiB at 28,454: 0.99 MB a token (-60%).
    The HF causal-LM loss keeps bf16 logits, their fp32 upcast and the fp32 log-softmax and its gradient over a
    128,256 vocabulary (~14 B x V = 1.8 MB a token); the engine counts about 4 B x V."
    Now 20.09 GiB at 5,789 and 69.42 GiB at 28,454: 2.34 MB a token (-5.4%): with cross_entropy: huggingface
    the engine counts transformers 4.46-4.48's peak at the loss, 14 B x V (bytes_model.logits_bytes_per_token):
    1.05 x (32 x 8,192 checkpointed + 167,936 recomputed layer + 14 x 128,256) = 2,336,947 B a token."""
    low = candidate(unsloth_qlora(5789), A100)["memory"]["total_per_gpu_gib"]
    high = candidate(unsloth_qlora(28454), A100)["memory"]["total_per_gpu_gib"]
    per_token_bytes = (high - low) * GIB / (28454 - 5789)
    assert per_token_bytes == pytest.approx((80e9 - 24e9) / (28454 - 5789), rel=0.10)


@pytest.mark.django_db
def test_unsloth_8b_qlora_at_12k_is_not_ranked_on_24gb_cards(bundled_catalog):
    """Was a strict xfail: "[UNSLOTH] at 12,264 tokens the HF stack needs a 40 GB card (24 GB fits only 5,789);
    the product ranks four 24 GB L4 rows (AWS g6 spot, 2.23-2.43 USD) among the top five at 18.8 GiB a GPU: a
    buyer following them gets an out-of-memory. Cause: the per-token loss memory above."
    Now 34.18 GiB a GPU (the HF loss counted, 14 B x V): no 24 GB card holds it."""
    rows = ranked(unsloth_qlora(12264))
    assert rows and all(
        row["gpu"] not in {"l4", "rtx-4090", "rtx-3090", "a10g", "l4-gpus"} for row in rows
    ), describe(rows)


# --- 9. Lambda's vLLM v0.6.0 run: Llama 3.1 70B bf16 on 4 H100 (TP 4), 256 sequences, contexts up to 2,048 ---------
# [LAMBDA] 3,542.88 output tokens/s, median TPOT 61.10 ms. Requests are capped at max-seq-len 2048 (prompt + output),
# so 2,048 bounds every request's context. The section does not say which card ran it (the report covers A100 and
# H100 80GB SXM): the product's decode step at the 2,048 bound is 39.48 ms on the H100 and 77.55 ms on the A100,
# bracketing the measured 61.10, so the TPOT itself is not judged here; the ranking at that target is.
def vllm_70b_tp4(**inference) -> dict:
    return {
        "task": "inference",
        "model": {"preset": "llama-3-70b"},
        "precision": "bf16",
        "parallelism": {"gpus": 4, "tensor_parallel": 4},
        "inference": {"concurrency": 256, "context_len": 2048, "output_tokens": 256} | inference,
    }


@pytest.mark.django_db
def test_vllm_70b_tp4_ranking_at_the_measured_tpot_keeps_tp4_and_prices_a_month(bundled_catalog):
    """With the measured 61.1 ms as the TPOT target, every top-five row is one 4-GPU TP 4 replica (the spec's
    contract) and is priced for a month of serving: compute = price an hour x 730 h (first row RunPod 4 x MI300X,
    9.96 USD/h -> 7,270.80 USD)."""
    rows = ranked(vllm_70b_tp4(tpot_ms=61.1))
    assert len(rows) == 5, describe(rows)
    for row in rows:
        assert (row["gpus"], row["plan"]["tensor_parallel"]) == (4, 4), describe(rows)
        assert row["hours"] == pytest.approx(730)
    first = rows[0]
    assert Decimal(first["cost_breakdown"]["compute"]) == pytest.approx(
        compute_cost_by_hand(first), rel=Decimal("0.001")
    )


# --- 10. The 2D plans above (FSDP with tensor parallelism) as a buyer ranks them ------------------------------------
# torchtitan's 70B (FSDP 32 x TP 8 on 256 H100, [TT2412] Table 4) and AutoModel's 70B LoRA (FSDP 4 x TP 2 on 8 H100,
# [AUTOMODEL]) both ran on 8-GPU NVLink H100 nodes, and `size` sizes both (cases 2 and 7). The same plan with
# zero_stage 1 ranks (32 x 8 B200 first for the 70B), so the catalog has the nodes and fabric.
@pytest.mark.django_db
def test_titan_70b_fsdp_tp8_plan_is_ranked(bundled_catalog):
    """Was a strict xfail: "The ranking returns no rows for a stated ZeRO-3 (FSDP) + tensor-parallel plan: 'considered
    0', why_empty 'no offer can run the stated parallelism (gpus 256, zero_stage 3, tensor_parallel 8): tensor
    parallel 8 needs an instance whose GPU count it divides with NVLink or Infinity Fabric between them' across 6,851
    offers, though Nebius and GCP 8-GPU NVLink H100/H200/B200 nodes with InfiniBand/RDMA are in the catalog and rank
    the same plan at ZeRO-1. Same with TP 4 or TP 8 on 64 GPUs. Reading procurement/ranking/contract.py: the plan
    grid pairs tensor parallelism with ZeRO 0-2 only, so the contract (zero == 3 and tp == 8) matches no cell and
    empty.py blames the interconnect."
    Now the stated ZeRO-3 is the tensor-parallel plans' stage (ranking/contract.stated_zero: FSDP over the
    256 / 8 = 32 data-parallel ranks), so the plan ranks: 32 x 8 B200 first (Nebius, 5.33 h), then 32 x 8 H100.
    The H100 row is the `size` figure of case 2: 1e10 / 11.65 h / 3600 / 256 = 931 tokens/s a GPU against
    [TT2412]'s 829 (+12.4%, within 15%), 38.98 GiB a GPU (the memory gap of case 2 stays its own xfail)."""
    rows = ranked(TITAN_70B)
    assert rows, "no rows"
    for row in rows:
        assert (row["gpus"], row["plan"]["tensor_parallel"], row["plan"]["zero_stage"]) == (256, 8, 3), (
            describe(rows)
        )
    h100 = next(row for row in ranked(TITAN_70B, top=20) if row["gpu"] == H100)
    assert 1e10 / h100["hours"] / 3600 / 256 == pytest.approx(
        tokens_per_gpu(candidate(TITAN_70B, H100)), rel=0.01
    )
    assert 1e10 / h100["hours"] / 3600 / 256 == pytest.approx(829, rel=0.15)
    assert Decimal(h100["cost_breakdown"]["compute"]) == pytest.approx(
        compute_cost_by_hand(h100), rel=Decimal("0.001")
    )


@pytest.mark.django_db
def test_automodel_lora_70b_fsdp_tp2_plan_is_ranked(bundled_catalog):
    """Was a strict xfail: "Same gap on one node: AutoModel's 70B LoRA (FSDP 4 x TP 2 on 8 H100, 1,091.85 tokens/s/GPU
    published, sized by the product as fitting at 27.9 GiB) gets an empty ranking, though 8-GPU NVLink H100
    instances are in the catalog."
    Now it ranks FSDP 4 x TP 2 on one 8-GPU node (Verda B200 spot first, then Nebius H100 spot). The H100 row is
    the `size` figure of case 7 at 27.92 GiB a GPU: 1e8 / 4.073 h / 3600 / 8 = 852.5 tokens/s a GPU; its -21.9%
    against the published 1,091.85 stays case 7's strict xfail (this test asserts the plan, not the speed).
    mfu26: case 7 now passes at 1,025.9 tokens/s a GPU (-6.0%); Nebius H100 spot is second, 3.38 h."""
    rows = ranked(LORA_70B)
    assert rows, "no rows"
    for row in rows:
        assert (row["gpus"], row["plan"]["tensor_parallel"], row["plan"]["zero_stage"]) == (8, 2, 3), (
            describe(rows)
        )
    h100 = next(row for row in ranked(LORA_70B, top=20) if row["gpu"] == H100)
    sized = candidate(LORA_70B, H100)
    assert 1e8 / h100["hours"] / 3600 / 8 == pytest.approx(tokens_per_gpu(sized), rel=0.01)
    assert h100["memory_per_gpu_gib"] == pytest.approx(sized["memory"]["total_per_gpu_gib"], abs=0.01)


# --- 11. NeMo AutoModel: Qwen3-30B-A3B in BF16 on 8 H100 (EP 8, FSDP 8) --------------------------------------------
# [AUTOMODEL] "Qwen3 MoE 30B | 8 | 512 | 4 | 4 | 16 | 4096 | 1 | 1 | 1 | 8 | - | 8 | TE + DeepEP | 21.773 | 277 | 12,040";
# recipe qwen3_moe_30b_te_deepep.yaml (@f4f146ffc): activation_checkpointing: true, fake_balanced_gate: true,
# experts: gmm. Same model as NVIDIA's two FP8 Megatron-Bridge rows the Hopper-FP8 expert cost was fitted on, but
# another table, stack and precision: the BF16 MoE path out of sample.
QWEN3_MOE_AUTOMODEL = pretrain(
    "qwen3-30b-a3b",
    8,
    4,
    4096,
    "full",
    "bf16",
    expert_parallel=8,
    expert_dispatch="deepep",
    accumulation=16,
    **AUTOMODEL_GATE,
)


@pytest.mark.django_db
def test_qwen3_moe_bf16_automodel_plan_fits_the_80gb_h100(bundled_catalog):
    """The run used 8 x H100 80GB; product 75.8 GiB a GPU, 'tight' (runs without the 20% headroom). sac26: 75.16
    GiB (FSDP gathers 16 local experts of 128 under EP 8)."""
    assert candidate(QWEN3_MOE_AUTOMODEL, H100)["verdict"] in FEASIBLE


# moebf26: unchanged at 6,312.6 (-47.6%): 16 local experts of EP 8 keep 2 + 16 x 0.25 = 6 ms a MoE layer.
# moe26b: 6,643.1 (-44.8%): DeepEP sends a token once to each GPU holding some of its 8 experts (5.25 of 8 copies).
# e26c: 7,228.4 (-40.0%): the fake balanced gate stated (expert_routing balanced), all-to-alls 3.95 -> 0.75 s.
# moe26d (no product change; the run checked against AutoModel @8d9bfb90e, the commit that set 12,040 / 277 / 21.773
# s in docs/performance-summary.md, with examples/benchmark/configs/qwen3_moe_30b_te_deepep.yaml): GBS 512, LBS 4,
# seq 4096, no compile section, MockIterableDataset (full sequences, "no padding"), FSDP2 via
# nemo_automodel/components/moe/parallelizer.py (reshard_after_forward False, apply_ac wraps every block in
# checkpoint_wrapper: full recomputation), experts GroupedExpertsDeepEP (components/moe/layers.py: grouped_gemm
# ops.gmm, TE fused permute, DeepEP dispatch). Each matches the spec. The product's step a token (us): FLOPs 33.27e9
# at its dense 0.38 = 88.55, routed bytes 48 x 8 x 2,048 x 125 B / 3.35 TB/s = 29.34, fixed 6 ms x 48 / 16,384 =
# 17.58, exposed all-to-all 0.75 s / 262,144 tokens = 2.87: 138.3 against the published 83.06. With the fake gate
# each of a GPU's 16 experts gets exactly 8 x 16,384 x 8 / 128 = 8,192 rows. See the test below the xfail.
@pytest.mark.django_db
@pytest.mark.xfail(
    strict=True,
    reason="UNEXPLAINED (moet47: unchanged; per-local-expert cost at zero -40.2% (16 local experts; TE's grouped GEMM launches one cuBLAS GEMM per expert by default), routed bytes at zero -14.9%, every MoE term at zero -0.1% where the four fit rows read +43% to +151%: test_outside_moe_training_stop47.py) "
    "moe43: 6,729.0 (-44.1%): the MoE constants refitted on their four rows (217.5 B a routed element, 1.64 ms + "
    "0.205 ms a local expert) now charge 65.5 us a token (routed 51.1, card-independent 14.4); still unexplained: "
    "AutoModel's own count (277 TFLOP/s / 12,040 = 23.0e9 a token, 6N) puts its hardware rate at 0.367 of the BF16 "
    "peak with full recomputation, the product's dense 0.38, i.e. no visible MoE cost where Megatron's rows of the "
    "same model need one; no published source sizes what AutoModel's path (TE fused permute, DeepEP, grouped_gemm "
    "ops.gmm) saves. "
    "[AUTOMODEL] 12,040 tokens/s/GPU; product 6,798.9 (-43.5%; moe42). Unexplained. moe42 fixed the FLOP count "
    "(no FLOPs for the input embedding lookup, the output layer 6 a weight under recomputation: 33.27e9 -> 30.16e9 a "
    "token, the hardware count; 7,228.4 -> 7,688.7, -36.1%) and refitted the MoE terms on their own rows (four moe27 "
    "rows: 205 B a routed element, 1.8 ms + 0.225 ms a local expert; those rows had absorbed the over-count and "
    "moved fast with it: GPT-OSS H100 +6.7% -> +15.0%): 6,798.9. The MoE work the product charges is now 63.9 us a "
    "token (routed bytes 48.1, card-independent 15.8) beside 80.2 us of FLOPs at the dense 0.38 and 2.9 us of "
    "all-to-all; the published step is 83.1 us. Not the grouped-GEMM rate at 8,192 rows an expert: the fit row "
    "Qwen3-30B-A3B FP8 on 8 GB200 (MBS 4, EP 8) has the same 8,192 rows an expert and needs the MoE terms (without "
    "them +112%). Before moe42 (moe26d), bounded: the product "
    "charges 46.9 us a token of MoE cost (routed bytes 29.3, 6 ms a MoE layer and micro-batch 17.6) beside 88.6 us "
    "of FLOPs at its dense 0.38 and 2.9 us of all-to-all; the published step is 83.1 us a token, less than the "
    "product's FLOP time alone. The product's 33.27 GFLOPs a token count the 311M-parameter input embedding at 8 "
    "FLOPs a parameter and the output layer at 8, not 6 (+3.11e9, +10.3%; AutoModel's qwen3_flops gives 23.0e9, "
    "6N with no input embedding, plus one recomputed forward 7.1e9 = 30.1e9); at 30.15e9 and the dense 0.38 the "
    "FLOPs and the all-to-all alone give 12,034 (-0.1%), leaving the MoE layers' own work 0 us of room, and 12.4 us "
    "within the 15% tolerance, against the 46.9 charged. Every recipe setting matches the spec (AutoModel "
    "@8d9bfb90e); the published run's experts (8,192 rows each under the fake gate) therefore run faster than the "
    "0.38 dense ceiling or its permute/activation work is far under 125 B a routed element, but no source measures "
    "which: the MoE terms were fitted on Megatron-Core rows (one of them the same model on 8 GB200 in FP8 at the same "
    "8,192 rows an expert), and Megatron-Bridge labels no Qwen3-30B-A3B row BF16 to cross-check. "
    "t44: rechecked at 6,729.0 (-44.1%), unchanged. Spec: as the DeepSeek-V3 AutoModel row (stack not statable, no pair sizes it; "
    "Kimi K2 on AutoModel passes with the MoE costs charged, so the stack is not uniformly free of them). "
    "UNEXPLAINED. " + CLS45E_BF16_MOE,
)
def test_qwen3_moe_bf16_automodel_speed_within_15_percent(bundled_catalog):
    assert tokens_per_gpu(candidate(QWEN3_MOE_AUTOMODEL, H100)) == pytest.approx(12040, rel=0.15)


@pytest.mark.django_db
def test_qwen3_moe_bf16_automodel_gap_is_the_moe_terms_and_the_embedding_flops(bundled_catalog):
    """The xfail's numbers (moe26d; moe42: the product's count is now the hardware count, and the MoE terms are the
    refitted 205 B a routed element and 0.9 x 6 ms a layer and micro-batch). By hand, Qwen3-30B-A3B's hardware FLOPs
    a token under full recomputation:
    a layer's q 2,048 x 4,096, k and v 2,048 x 512, o 4,096 x 2,048, router 2,048 x 128, 8 experts x 3 x 2,048 x 768
    = 56,885,248 weights x 48 layers x 8 (forward, recomputed forward, backward), the output layer 151,936 x 2,048 x 6,
    and causal attention (the product's own term); no FLOPs for the input embedding lookup. The published step
    (83.06 us a token) leaves the MoE layers' own work no room at the product's dense rate: the product charges
    63.9 us (46.9 before moe42)."""
    from procurement.services.sizing import catalog_gpus
    from procurement.sizing import mfu
    from procurement.sizing.throughput import attention_context_tokens, attention_forward_flops_per_token

    spec = parse_workload_spec(QWEN3_MOE_AUTOMODEL)
    gpu = catalog_gpus([H100])[0]
    row = candidate(QWEN3_MOE_AUTOMODEL, H100)
    product_flops = row["throughput"]["flops_per_token"]
    attention = 4.0 * attention_forward_flops_per_token(spec.model, attention_context_tokens(spec))
    vocab_by_hidden = 151_936 * 2_048
    hardware = 56_885_248 * 48 * 8 + vocab_by_hidden * 6 + attention
    assert hardware == pytest.approx(30.15e9, rel=0.005)
    # moe42: the product counts what the hardware runs (it had charged the input embedding 8 FLOPs a weight and the
    # output layer 8, not 6: +10 x 151,936 x 2,048 = +3.11e9)
    assert product_flops == pytest.approx(hardware, rel=0.005)

    tokens_a_step = 512 * 4096 / 8
    published_s = 1 / 12040
    peak = gpu.dense_tflops("bf16") * 1e12
    dense = mfu.dense_efficiency(spec, gpu)
    all_to_all_s = row["throughput"]["expert_parallel_exposed_seconds"] / tokens_a_step
    flop_s = product_flops / (peak * dense)
    moe_s = flop_s / mfu.moe_efficiency_factor(spec, gpu, dense) - flop_s
    # routed 48 x 8 x 2,048 x 205 B / 3.35 TB/s = 48.1 us, card-independent 48 x 0.9 x 6 ms / 16,384 = 15.8 us;
    # moe43 (refitted on their four rows): 217.5 B, 51.1 us, and 48 x 0.82 x 6 ms / 16,384 = 14.4 us
    assert moe_s == pytest.approx(48 * 8 * 2048 * 217.5 / 3.35e12 + 48 * 0.82 * 6e-3 / 16384, rel=0.02)
    assert moe_s == pytest.approx(65.5e-6, rel=0.02)
    # at the hardware count, FLOPs and all-to-all alone are the published step; the 15% tolerance leaves 12.4 us
    room_s = published_s * 1.15 - hardware / (peak * dense) - all_to_all_s
    assert 1 / (hardware / (peak * dense) + all_to_all_s) == pytest.approx(12040, rel=0.02)
    assert room_s < moe_s / 3


@pytest.mark.django_db
def test_deepseek_v3_automodel_ranking_keeps_the_plan_and_offers_the_published_card(bundled_catalog):
    """Top five at the statable plan (VP 1): every row 256 GPUs as 32 x 8, PP 4 / EP 64 / ZeRO-3; the H100 the run
    used is among them (Nebius, second: 20,492.62 USD against the first row's H200 at 23,584.16, ranked after it
    because at 70.2 GiB it is 'tight' on 80 GB, the stated policy). Its compute is 32 x 23.60 x 21.04 h.
    moebf26 (3 ms a MoE layer for 4 local experts, was 6): 32 x 23.60 x 20.401 h = 15,407.22 USD of compute.
    sac26: the H100 row is first (48.78 GiB a GPU, 'fits', with FSDP gathering only the local experts)."""
    rows = ranked(deepseek_v3_automodel(1))
    assert len(rows) == 5, describe(rows)
    for row in rows:
        plan = row["plan"]
        assert (row["gpus"], row["instances"] * row["gpus_per_instance"]) == (256, 256), describe(rows)
        assert (plan["pipeline_parallel"], plan["expert_parallel"], plan["zero_stage"]) == (4, 64, 3)
    h100 = [row for row in rows if row["gpu"] == H100]
    assert h100, describe(rows)
    assert Decimal(h100[0]["cost_breakdown"]["compute"]) == pytest.approx(
        compute_cost_by_hand(h100[0]), rel=Decimal("0.001")
    )
