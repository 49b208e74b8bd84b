"""Issue 26, judged from outside (round x26f): published runs no earlier round, docs/validation.md or fit used,
chosen to exercise what the last stops added (gradient_checkpointing selective_op, cross_entropy torchtitan /
compiled, tp_comm_overlap, the context-parallel ring hidden under attention, virtual pipeline chunks that do not
divide the layers, 400 Gb/s fabric, B200 MoE) and a buyer's 70B fine-tune with a deadline.

Speeds and memory go through `size_spec_document` (what `manage.py size` runs, calibration off); rankings
through the service `manage.py recommend` uses (``workload_spec_parse`` -> ``ranking_options_parse`` ->
``recommendation_compute``). Tolerances are the issue's: throughput within 15%, memory within 10%. Misses are
strict xfails with the published figure, the product's, the gap and the cause I read.

The torchtitan runs were made on Grand Teton hosts whose H100s are "96GB HBM2e with 2.4 TB/sec", at "the
default 500W power limit", with a peak "between SXM and NVL" (the files' own words). No catalog card is that
part, so for them I judge ratios between rows of one table (same hosts, same software), which the card's clock
and power cancel out of, and absolute rates and memory only where the file's card bounds them.

Sources (figures quoted where used):
  [TT2412]  pytorch/torchtitan @b5bcd76c66d0acb1a08b176d9639425bc55e0b2a benchmarks/llama3_h100_202412_torchtitan.md
            (torchtitan @9dec370, torch 1963fc8, Dec 2024). Tables 2, 5 and 6 only; x26d judged Tables 1, 3, 4.
            Memory is the max across GPUs of torchtitan's reserved-memory reading.
  [TTATP]   same repository and commit, benchmarks/asyncTP_llama3_h100_2025-06_torchtitan.md (torch 38410cf9,
            torchtitan 820504e, June 2025): vanilla TP vs async TP, tokens/s/GPU.
  [TTSRC]   pytorch/torchtitan @9dec370ad26b5f8e9a7333a0e36165018262644b: train_configs/llama3_{8b,70b,405b}.toml
            (seq_len = 8192), torchtitan/parallelisms/pipelining_utils.py generate_split_points ("Multi-stage
            schedules ... num_stages_per_rank = 2" by default), torchtitan/parallelisms/pipeline_llama.py
            ("pipeline_parallel_microbatches or parallel_dims.pp"), torchtitan/parallelisms/parallelize_llama.py
            lines 326-339 ("if pp_enabled: # For PP, do not reshard after forward to avoid per-microbatch
            all-gathers ... reshard_after_forward = False").
  [MBARCH]  NVIDIA-NeMo/Megatron-Bridge @067f987df03b8355b03192d88d70f1709fedf51a docs/performance-summary-archive.md,
            "26.04.01 NeMo Container", the DGX-B200 rows (no test used a B200 MoE row). Columns: System | #-GPUs |
            Precision | GBS | MBS | Sequence Length | FSDP | TP | PP | CP | VP | EP | Tokens / sec / GPU | Model
            TFLOP / sec / GPU.
  [MBREC]   same commit, src/megatron/bridge/perf_recipes/gpt_oss/b200/gpt_oss.py (gpt_oss_120b_pretrain_64gpu_b200_
            bf16_config: TP 1, PP 1, EP 8, GBS 1280, MBS 4, recompute_modules ["layernorm", "moe_act"]; common.py:
            hybridep flex dispatcher, cuda_graph_impl "full_iteration") and perf_recipes/qwen/b200/qwen3_moe.py
            (qwen3_30b_a3b_pretrain_8gpu_b200_*: EP 8, GBS 512, MBS 4, no recompute, hybridep, CUDA graphs).
  [MB2509]  same archive, "25.09 NeMo Container", DGX-H100: "DeepSeekV3 (dropless) | 1024 | 8192 | 1 | 4096 | 0 | 2 |
            8 | 1 | 4 | 64 | 128 | 1297 | 338 (330)" (no test used it); its recipe, Megatron-Bridge
            @fa0315ae2684693a666be9d247adf9baf1e30028 scripts/performance/configs/deepseek/deepseek_v3_llm_pretrain.yaml:
            h100 num_gpus_1024: seq 4096, mbs 1, gbs 8192, cuda_graphs false, tp 2, pp 8, vp 4, ep 64, etp 1;
            recompute_granularity "selective"; pipeline_model_parallel_layout "Et|(tt|)*30mL" (32 chunks for 61
            layers); no dispatcher or A2A-overlap setting there: run_script.py sets them (section 5b).
"""

from __future__ import annotations

import copy
from decimal import Decimal

import pytest

from tests.procurement.outside.test_outside_recommendations_x26b import (
    candidate,
    describe,
    megatron_spec,
    ranked,
    tokens_per_gpu,
)

RELABEL48_TT_8B_CP = (
    "UNEXPLAINED (relabelA48: rechecked at 0.374 / 0.206 of the 32k rate for CP 4 / CP 8, +35.9% / "
    "+46.5%. (a) fails: the ring, its load balancing and rotation, and the SDPA backend are ruled out by "
    "source below; the 8B's jump between CP 2 and CP 4 has no located cause. Best lead: a timing of the "
    "ring at the benchmark's torch). "
)

RELABEL48_TT_405B_CP8 = (
    "UNEXPLAINED (relabelA48: rechecked at 0.250, +18.8%; the same unlocated long-context attention cost "
    "as the 8B CP rows). "
)

RELABEL48_TT_405B_PP_MEMORY = (
    "UNEXPLAINED (relabelA48: rechecked at 66.16 GiB, -19.8% / -12.1%. (b) fails: no allocated peak is "
    "published, and the 2-3 GiB counted for this plan fall short of the 8.1-13.8 GiB window a common term"
    " needs). "
)

RELABEL48_QWEN3_GB200 = (
    "UNEXPLAINED (relabelA48: rechecked, the B200 / GB200 ratio 0.981, under the 1.0 bound. (a) fails: no"
    " source opened says why a GB200 runs this MoE slower than a B200; best lead the Grace host's "
    "launches and syncs, unsized). "
)


H100 = "h100-sxm5-80gb"
H100_NVL = "h100-nvl-94gb"
B200 = "b200"
FEASIBLE = {"fits", "tight", "oversized"}


def gap(product: float, published: float) -> float:
    return (product - published) / published


def titan(
    model: str,
    gpus: int,
    seq: int,
    local_batch: int,
    checkpointing: str,
    *,
    tp: int = 1,
    pp: int = 1,
    vp: int = 1,
    cp: int = 1,
    microbatches: int = 1,
    precision: str = "bf16",
    loss: str = "torchtitan",
    async_tp: bool = False,
    task: str = "pretrain",
    tokens: float = 1e10,
    compiled: bool = True,
) -> dict:
    """A torchtitan run as its toml states it: FSDP2 over the data (and context) ranks, the stated TP/PP/CP,
    torchao float8 for "Float8", the local batch split into `microbatches` pipeline micro-batches (torchtitan's
    default: as many as pipeline stages), async TP stated as tp_comm_overlap (the spec's only TP overlap field;
    with tp_implementation dtensor, PyTorch's async TP rather than Transformer Engine's userbuffers)."""
    parallelism: dict = {"gpus": gpus, "zero_stage": "fsdp"}
    parallelism |= {"tensor_parallel": tp} if tp > 1 else {}
    parallelism |= {"pipeline_parallel": pp} if pp > 1 else {}
    parallelism |= {"virtual_pipeline": vp} if vp > 1 else {}
    parallelism |= {"context_parallel": cp} if cp > 1 else {}
    parallelism |= {"tp_comm_overlap": True} if async_tp else {}
    # integration (tt26's fields): torchtitan's own rule, stated as it runs: under PP it does not reshard
    # after forward ([TTSRC] parallelize_llama.py: reshard_after_forward = not pp_enabled), and its attention
    # is PyTorch SDPA's FlashAttention-2 backend on H100
    parallelism |= {"reshard_after_forward": False} if pp > 1 else {}
    # tp26's field: torchtitan's TP is PyTorch DTensor's ([TTSRC] parallelize_llama.py apply_tp: sequence
    # parallel on Shard(1) of [b, s, h]; enable_async_tensor_parallel is inductor's micro-pipeline TP)
    parallelism |= {"tp_implementation": "dtensor"} if tp > 1 else {}
    # cp26: its context parallelism is PyTorch's experimental ring (torch.distributed.tensor.experimental
    # .context_parallel, torchtitan's CP at 9dec370), over K/V repeated to the query heads
    # cp43: under training.compile (every table here states "torch.compile") each TransformerBlock is compiled with
    # fullgraph=True ([TTSRC] parallelize_llama.py apply_compile), so the ring is traced into the block's graph,
    # where its collectives are waited on at issue: stated as pytorch_compiled
    parallelism |= {"context_parallel_comm": "pytorch_compiled" if compiled else "pytorch"} if cp > 1 else {}
    spec = {
        "task": task,
        "model": {"preset": model},
        "precision": precision,
        "micro_batch_size": local_batch // microbatches,
        "gradient_accumulation_steps": microbatches,
        "seq_len": seq,
        "gradient_checkpointing": checkpointing,
        "cross_entropy": loss,
        "attention_kernel": "flash_attention_2",
        "parallelism": parallelism,
        "training_tokens": tokens,
    }
    return spec | ({"fp8_recipe": "torchao"} if precision == "fp8" else {})


def rate(spec: dict, gpu: str = H100) -> float:
    return tokens_per_gpu(candidate(spec, gpu))


# --- 1. Llama 3.1 8B, long context with CP on 8 H100 ([TT2412] Table 2) ------------------------------------------------
# "FSDP + CP + torch.compile + Float8. Llama 3.1 8B model. 8 GPUs. Local batch size 1. Full activation
# checkpointing." Rows (Parallelism | Sequence Length | TPS/GPU | Memory(GiB)): "FSDP 8, CP 1 | 32768 | 3,890 | 83.9",
# "FSDP 4, CP 2 | 65536 | 2,540 | 84.2", "FSDP 2, CP 4 | 131072 | 1,071 | 84.0", "FSDP 1, CP 8 | 262144 | 548 | 84.5".
# Every row holds 32,768 tokens a GPU, so the memory stays put and the speed falls only by attention and the ring.
# Loss: eager torchtitan loss_fn at 9dec370 (the compiled loss came in April 2025). CP over NVLink (one host).
def titan_8b_cp(cp: int) -> dict:
    return titan("llama-3.1-8b", 8, 32768 * cp, 1, "full", cp=cp, precision="fp8")


TT_8B_CP = {1: (3890, 83.9), 2: (2540, 84.2), 4: (1071, 84.0), 8: (548, 84.5)}


@pytest.mark.django_db
@pytest.mark.parametrize("cp", [1, 2, 4, 8])
def test_tt_8b_long_context_cp_memory_within_10_percent(bundled_catalog, cp):
    """Product 80.43 GiB at every row (-4.1% .. -4.8%); 'does_not_fit' on the 80 GB H100, which is right: the
    published 83.9-84.5 GiB ran on 96 GB parts. On the 94 GB H100 NVL the rows fit."""
    published = TT_8B_CP[cp][1]
    assert candidate(titan_8b_cp(cp), H100)["memory"]["total_per_gpu_gib"] == pytest.approx(
        published, rel=0.10
    )
    assert candidate(titan_8b_cp(cp), H100_NVL)["verdict"] in FEASIBLE


@pytest.mark.django_db
def test_tt_8b_32k_rate_lies_between_the_nvl_and_sxm_estimates(bundled_catalog):
    """The file's card is "between SXM and NVL": published 3,890; product 5,230 on the SXM (+34.5%) and 3,480 on the
    NVL (-10.5%). The measured rate lies inside the product's bracket, so the absolute level is not contradicted.
    t44: now 4,301.8 on the SXM (+10.6%) and 3,206.8 on the NVL (-17.6%), still a bracket."""
    spec = titan_8b_cp(1)
    assert rate(spec, H100_NVL) * 0.85 <= 3890 <= rate(spec, H100) * 1.15


@pytest.mark.django_db
def test_tt_8b_cp2_64k_over_cp1_32k_within_15_percent(bundled_catalog):
    """Published 2,540 / 3,890 = 0.653; product 2,710 / 4,123 = 0.657 (+0.7%; cp26: PyTorch's ring as torchtitan
    runs it, 0.33 s of traffic a 12.1 s step, 0.10 s of it exposed). cp43: the ring traced by torch.compile, all exposed (context_parallel_comm
    pytorch_compiled): 0.631 -> 0.618 (-3.3% -> -5.3%). t44: 0.635 (-2.7%; 2,732.7 / 4,301.8) since fixrev43 charges
    an fp8 run's recomputed forward whole again (every row's step +0.59 s)."""
    ratio = rate(titan_8b_cp(2)) / rate(titan_8b_cp(1))
    assert ratio == pytest.approx(2540 / 3890, rel=0.15)


# cp26, why the long-context rows stay out. Per token (full AC) the 8B costs 8N = 6.4e10 FLOPs of weights and
# 4 x 2 s d L = 1.05e6 x s of causal attention (34% of the work at 32k, 80% at 262k). PyTorch's ring
# (pytorch/pytorch torch/distributed/tensor/experimental/_attention.py, round-robin load balance) runs exactly the
# causal FLOPs: step 0 a causal call on the rank's 2 chunks, every other step a half block, (s / cp)^2 / 2 each, all
# calls at s / cp = 32k tokens, where FlashAttention-2 runs at its flat top rate. So the product's attention time
# per ring step is the same at CP 2, 4 and 8, and so is the measured one from CP 1 to CP 2: with the linears at one
# pace (450 TFLOP/s at 500 W, say), attention runs 301 TFLOP/s at CP 1, 274 at CP 2, but 174 at CP 4 and 163 at
# CP 8. The ring does not explain the drop: over NVLink it is 0.8 s (CP 4) and 1.8 s (CP 8) of traffic in a 20 and
# 36 s step, 0.10 s exposed (K/V repeated to the query heads, dK/dV in fp32, the last gradient pass waited on after
# the loop; stated as context_parallel_comm: pytorch); the fp32 merge of each step's partial output (~40 bytes an
# output element, HBM-bound) adds ~6% of a step's attention. A ring without load balance (2 cp - 1 half blocks on
# the last rank) would fit CP 1, 4 and 8 within 1% (linears 443 TFLOP/s, attention 307 against FlashAttention-2's
# published 291 as 4 passes count it), but CP 2 runs 22% faster than it and PyTorch's source balances by default
# (enable_load_balance True in the version read): not established, not modelled.
# e26b: UNEXPLAINED after these checks, each ruling a cause out. (1) The published TPS is per GPU as the
# product's: torchtitan @9dec370 train.py, tps = ntokens_since_last_log / (time_delta x
# parallel_dims.non_data_parallel_size), parallel_dims.py non_data_parallel_size = cp x tp x pp, and ntokens counts
# the whole sequence each CP rank's labels hold before sharding: global tokens / s / GPU, no CP factor. (2) The rows
# differ in CP degree and sequence only: the caption states local batch 1 and full activation checkpointing for all
# four, and the K/V rotate method is the default 'allgather' (config_manager.py
# --experimental.context_parallel_rotate_method), as context_parallel_comm pytorch sizes it. (3) PyTorch's
# load-balanced ring (pytorch/pytorch @0123248a torch/distributed/tensor/experimental/_attention.py
# _templated_ring_attention and its backward) gives every ring step the same shapes at any CP >= 2 (a causal call on
# the rank's 2 chunks, then full q x half k/v or half q x full k/v), with one all-gather a pass and one fp32 dK/dV
# permute a step: every cost it adds grows like the attention FLOPs, so none makes CP 4 slower per FLOP than CP 2.
# What slows the measured attention ~0.6x from CP 2 to CP 4 is not in the sources read.
CP_UNEXPLAINED = (
    " e26b: UNEXPLAINED; ruled out by source: the TPS is per GPU with no CP factor (train.py tps / "
    "non_data_parallel_size = cp x tp x pp), the rows change only CP and sequence (batch 1, full AC, rotate method "
    "allgather, as stated), and the load-balanced ring has the same step shapes at every CP >= 2. tt42: re-read "
    "in an older stored form of torch/distributed/tensor/experimental/_attention.py than @0123248a (DeviceMesh "
    "signatures, a pre_allgather method, as around the benchmark's torch): the same load-balanced loops, K/V all-gathered once a call, dK/dV "
    "permuted in fp32 each step; torchtitan @9dec370 utils.py get_train_context limits SDPA to the flash and "
    "efficient backends only under CP. The published per-GPU step times (CP 1 = 1: 1.531, 3.632, 7.099) cost "
    "0.53 of a CP 1 step per added unit of causal attention from CP 1 to 2, 1.05 from 2 to 4 and 0.87 from 4 to "
    "8 (a GPU's attention at CP c is c units): the same blocks cost twice as much from CP 4 on. Not found."
)
# cp43: the three leads of tt42's stop sized. (1) The ring's link: Table 2's runs are 8 GPUs (one host, CP 4 and 8
# on NVLink); Table 6's are 512 with TP 8 filling a host, so every CP >= 2 ring crosses the 400 Gb/s fabric; the
# product prices both (context_parallel_exchange: 0.33 / 0.81 / 1.77 s a step for the 8B at CP 2 / 4 / 8; 5.92 /
# 14.37 / 31.29 s for the 405B). The 8B rows need 6.53 s (CP 4) and 15.33 s (CP 8) more a step than the product
# had (CP 1 7.03 s x 3,890 / 1,071 = 25.53 against 19.00; x 3,890 / 548 = 49.89 against 34.56): the whole ring,
# exposed, is 11% of either; a link 8.2x slower than NVLink would close CP 4 but put the passing CP 2 row at 0.511
# (-21.8%). (2) The kernel: _sdpa_handler runs the op the outer SDPA call dispatched to (call_maps: flash ->
# _scaled_dot_product_ring_flash_attention) at every step, so CP 2 and CP 4 use the same kernel on the same
# shapes; all-gather against all-to-all changes only when K/V arrive (one gather of c - 1 chunks a pass, the same
# chunk size). (3) The fp32 dK/dV: each backward step reads and writes about 7 GB a layer at the 8B (1 GiB of fp32
# dK/dV received, _partial_update's torch.cat copies, the next torch.cat, grad_query +=), 3.0 ms at 2.4 TB/s against
# a 73 ms step of attention backward (2.2e13 FLOPs at 300 TFLOP/s): 4%, the same at every step, so it grows like
# the attention and cannot raise its cost a unit from CP 4. Applied (class fix, parallelism.context_parallel_comm
# pytorch_compiled, stated by titan()): every table here ran torch.compile, which compiles each TransformerBlock with
# fullgraph=True ([TTSRC] parallelize_llama.py apply_compile; the block's Attention calls the SDPA that CP replaces,
# model.py line 209), so the ring is traced into the block's graph, where a functional collective is waited on at
# issue (torch/distributed/_functional_collectives.py _maybe_wrap_tensor: "if _are_we_tracing(): return
# wait_tensor(self)"; _attention.py _maybe_wait says the same of tracing) and Inductor reorders for overlap only with
# reorder_for_compute_comm_overlap (default False): the whole ring is exposed (was 0.10 s of the 8B's, 1.69 / 13.55 s
# of the 405B's). 8B 0.631 / 0.370 / 0.203 -> 0.618 / 0.357 / 0.194 (-3.3 / +34.4 / +44.4% -> -5.3 / +29.5 /
# +37.7%); 405B CP 2 0.720 -> 0.676 (+16.4% -> +9.3%, passes), CP 4 (not a case) +15.5% -> +4.8%, CP 8 0.276 ->
# 0.250 (+31.2% -> +18.8%).
CP43 = (
    " cp43: the ring's link, the kernel and the fp32 dK/dV sized (comment above CP43): none closes the gap; the "
    "ring, all exposed as the compiled trace runs it (context_parallel_comm pytorch_compiled, applied), is 11% of "
    "the 8B rows' missing time."
)

# t44: the class the brief named ("the ring's cost growing with the CP degree") tested against the rows themselves.
# Every Table 2 / Table 6 row holds 32,768 tokens a GPU, so a row's step over its CP 1 step is 1 + (c - 1) x r(c),
# where r(c) is what one more ring step costs in CP 1 steps (tps is per GPU, [TT2412]: step ratio = TPS(1) / TPS(c)).
# Published, 8B (Table 2): r = 0.531 (CP 2), 0.877 (CP 4), 0.871 (CP 8); 405B (Table 6, two-digit TPS, +-3% at CP 8):
# 0.617, 0.484, 0.536. The product (steps 7.62 / 11.99 / 20.37 / 36.91 s for the 8B, 46.74 / 69.18 / 109.33 /
# 186.91 s for the 405B): 0.574, 0.558, 0.549 and 0.480, 0.446, 0.428. So (1) a cost that grows with c (ring
# traffic, all-gather size, peers) would raise r from CP 4 to CP 8; the 8B's r is the same at CP 4 and CP 8 (0.7%
# apart) and 0.61 of that at CP 2: the measured step is a jump between CP 2 and CP 4, not a growth with the degree,
# and the 405B's r does not rise either (0.62 -> 0.48 -> 0.54). (2) The product's r is within 8% of the 8B's CP 2
# and 0.63-0.64 of its CP 4 / CP 8; for the 405B it is 0.78 / 0.92 / 0.80 of the published: no one factor on the
# ring step fits both tables (1.53-1.59 for the 8B from CP 4, 1.08-1.29 for the 405B), and a factor on the 8B's
# would put its passing CP 2 row at +38% slower; the ring's exposed seconds doubled fit the 405B's three rows
# (+0.6 / -7.4 / +1.8%), whose ring crosses the fabric, and leave the 8B at +30.7 / +39.8%. (3) Source: PyTorch's load-balanced ring at the benchmark's torch
# (torch/distributed/tensor/experimental/_attention.py, the form with DeviceMesh signatures and _AllGatherRotater)
# runs the same SDPA shapes at every step for every c >= 2 and its per-step extras (torch.cat of K/V, fp32 merge,
# fp32 dK/dV permute) are the same per step; what changes with c is only the number of steps and the all-gathered
# K/V's size. [TT2412] also says its TPS is "always read at the (arbitrarily determined) 90th iteration": one
# 10-iteration window a row, no repeat.
T44_CP = (
    " t44: per added ring step (row step / CP 1 step = 1 + (c - 1) r) the 8B's published r is 0.531 / 0.877 / 0.871 "
    "at CP 2 / 4 / 8 and the product's 0.574 / 0.558 / 0.549; the 405B's 0.617 / 0.484 / 0.536 against 0.480 / "
    "0.446 / 0.428 (test_tt_cp_rows_cost_a_ring_step_that_does_not_grow_with_the_degree). r does not grow with c "
    "in either table, so a ring cost scaling with the CP degree is ruled out as the cause; the 8B's step is a jump "
    "between CP 2 and CP 4 that the source's per-step shapes (identical at every c >= 2) do not produce. "
    "Spec: nothing a spec could state; the runs are stated as run (CP degree, allgather rotation, compiled ring, "
    "full recomputation, Float8) and the cause is not identified. Sized, not applied: the ring's exposed seconds "
    "doubled would bring the three 405B rows inside (CP 2 / 4 / 8 +0.6 / -7.4 / +1.8%; its ring crosses the "
    "400 Gb/s fabric) and leave the 8B's (NVLink) at +30.7 / +39.8%; no source gives the fabric that rate for "
    "this traffic and the fit would have one table's three rows and nothing held out. UNEXPLAINED."
)

# cls45b: the SDPA backend, the lead left after t44. torchtitan @9dec370 torchtitan/utils.py get_train_context
# enters sdpa_kernel([SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION]) only when a CP context is given,
# so the CP 1 rows run the selector unrestricted. PyTorch's selector of the period
# (aten/src/ATen/native/transformers/cuda/sdp_utils.cpp, the stored form with check_prefer_cudnn_attention defined
# and flash's [sm80, sm90] range) has default_order flash, efficient, math, cudnn: FlashAttention-2 first with or
# without the restriction, so CP 1 and the ring run one kernel. Its flash filters have no sequence-length limit;
# the one shape filter that could move a call to the efficient kernel, check_flash_causal_non_square_seqlens
# (is_causal with s_q != s_k), never fires in the load-balanced ring, whose only causal call is each rank's square
# 2-chunk block at step 0 (every other step is non-causal). The one lead that depends on the row (CP 1 vs the ring)
# gives the same kernel; nothing in it depends on the degree. Ruled out.
TR47_CP = (
    " train47: UNEXPLAINED, rechecked unchanged (8B CP 4 / CP 8: 1,609.0 / 887.8 over 4,301.8; 405B CP 8: 21.9 over"
    " 87.6 tokens/s/GPU). The candidates this round was asked to check (the ring's load balancing, allgather against"
    " alltoall rotation, the SDPA backend, the causal mask's split of the work) are each ruled out by source above"
    " (e26b, tt42, cls45b) and no new one was found; no device was lent this session to time the ring at the"
    " benchmark's torch."
)
# tt49: the caching allocator's retries, the lead this stop adds, located but not sized. With allgather rotation the
# ring all-gathers a layer's whole K/V once a call (tt42 above), over K/V repeated to the query heads (cp26), so the
# gathered buffer is c x 32,768 tokens x (heads / TP) x 128 x 2 B x 2: 8B (32 heads) 1 / 2 / 4 GiB at CP 2 / 4 / 8;
# 405B (128 heads / TP 8) 0.5 / 1 / 2 GiB (test_tt_cp_misses_are_the_rows_with_a_2_gib_gathered_kv_near_the_card).
# The three CP misses (8B CP 4, CP 8; 405B CP 8) are exactly the rows whose gathered K/V reaches 2 GiB a layer call
# while the published reserved peak sits at 84.0-84.9 GiB of the "95 GiB" card (pytorch/torchtitan PR #800,
# docs/performance.md); the passing rows (8B CP 2 at 1 GiB, 405B CP 2 / CP 4 at 0.5 / 1 GiB and 75.9 / 77.1 GiB) are
# not. PyTorch's caching allocator (c10/cuda/CUDACachingAllocator.cpp, stored id 51919916: alloc_block counts
# num_alloc_retries and calls cudaMalloc; on failure malloc releases the cached blocks, synchronizing the device, and
# retries) adds to reserved_bytes only on a successful cudaMalloc, so a run that retries a 2-4 GiB request reads a
# peak below the card's limit: the published 84 GiB does not rule retries out. torchtitan logs them
# (metrics.py GPUMemoryMonitor.get_peak_stats, stored id 1351839338: "{num_retries} CUDA memory allocation retries.")
# but [TT2412] publishes no log, and retries cost a device sync and cudaFree / cudaMalloc a retry, a per-call cost that
# would jump (CP 2 -> CP 4) rather than grow with c, as the 8B's r does (t44). Unsized: no source gives the runs'
# retry counts, the memory NCCL and the CUDA context hold outside reserved on these hosts, or a retry's time.
TT49_CP = (
    " tt49: UNEXPLAINED, lead located, not sized: the caching allocator's retries. The three misses are exactly the "
    "rows whose ring all-gathers 2 GiB or more of repeated K/V a layer call (8B CP 4 / CP 8: 2 / 4 GiB; 405B CP 8: "
    "2 GiB) while reserved peaks at 84.0-84.9 GiB of a 95 GiB card; the passing CP rows gather 0.5-1 GiB. "
    "CUDACachingAllocator.cpp (stored id 51919916) counts reserved only on a successful cudaMalloc and, on failure, "
    "frees the cache (a device sync) and retries, so a retrying run reads a peak below the limit; torchtitan warns "
    "'N CUDA memory allocation retries' (metrics.py, stored id 1351839338) but [TT2412] publishes no log. (b) fails: "
    "no retry count, non-allocator memory or retry time is published. Best lead: the rows' logs (the retry "
    "warnings) or Table 2's CP 2 and CP 4 rows rerun on 8 H100s reading memory_stats()['num_alloc_retries']."
)
CLS45B_CP = (
    " cls45b: the SDPA backend ruled out as well: torchtitan @9dec370 restricts SDPA to flash and efficient only "
    "under CP, but the period's sdp_utils.cpp default order is flash, efficient, math, cudnn, so CP 1 and the ring "
    "both run FlashAttention-2; the flash filters have no sequence-length limit, and the non-square causal filter "
    "never applies (the ring's one causal call is square). UNEXPLAINED."
)


@pytest.mark.django_db
@pytest.mark.parametrize(
    "cp",
    [
        pytest.param(
            4,
            marks=pytest.mark.xfail(
                strict=True,
                reason=RELABEL48_TT_8B_CP
                + "[TT2412] Table 2: 131k on CP 4 runs at 1,071 / 3,890 = 0.275 of the 32k rate; product 1,638 / "
                "4,123 = 0.397 (+44%; +45% before cp26's ring). Attention per ring step runs ~0.6x the speed it has at "
                "CP 1 and CP 2 with the same FLOPs a step; see the comment above."
                + CP_UNEXPLAINED
                + CP43
                + " Was 0.370 (+34.4%); now 0.357 (+29.5%)."
                + " t44: now 1,609.0 / 4,301.8 = 0.374 (+35.9%): fixrev43 charges the recomputed fp8 forward whole "
                "again, +0.59 s on every row's step, which the CP 1 row feels most."
                + T44_CP
                + CLS45B_CP
                + TR47_CP
                + TT49_CP,
            ),
        ),
        pytest.param(
            8,
            marks=pytest.mark.xfail(
                strict=True,
                reason=RELABEL48_TT_8B_CP
                + "[TT2412] Table 2: 262k on CP 8 runs at 548 / 3,890 = 0.141 of the 32k rate; product 920 / "
                "4,123 = 0.223 (+58%; +59% before cp26's ring); absolute 548 against 920 (SXM) and 700 (NVL, +28%). At "
                "262k attention is ~80% of the 3.4e11 FLOPs a token (full AC): the measured run does ~190 TFLOP/s a "
                "GPU. The ring is not it (1.8 s of traffic, 0.10 s exposed, stated as PyTorch runs it); see the "
                "comment above."
                + CP_UNEXPLAINED
                + CP43
                + " Was 0.203 (+44.4%); now 0.194 (+37.7%)."
                + " t44: now 887.8 / 4,301.8 = 0.206 (+46.5%), fixrev43 as for CP 4."
                + T44_CP
                + CLS45B_CP
                + TR47_CP
                + TT49_CP,
            ),
        ),
    ],
)
def test_tt_8b_long_context_rate_falls_as_measured(bundled_catalog, cp):
    published = TT_8B_CP[cp][0] / TT_8B_CP[1][0]
    assert rate(titan_8b_cp(cp)) / rate(titan_8b_cp(1)) == pytest.approx(published, rel=0.15)


# --- 2. Llama 3.1 405B, 3D on 512 H100: 1F1B vs interleaved 1F1B ([TT2412] Table 5) -----------------------------------
# "3D parallelism (FSDP + TP + PP) + torch.compile + Float8 + AsyncTP. Llama 3.1 405B model. 512 GPUs (FSDP 8, TP 8,
# PP8). Local batch size 32, global batch size 256. Full activation checkpointing." "1F1B | 100 | 82.5",
# "Interleaved 1F1B | 128 | 72.7". [TTSRC]: 8 micro-batches (= PP) of 32 / 8 = 4 sequences of 8,192; the interleaved
# schedule's default split is 2 stages a rank, 16 chunks for 126 layers (7.875 layers a chunk: chunks that do not
# divide the layers). Bubble (p - 1) / m = 7 / 8 for 1F1B, 7 / 16 interleaved.
TT_405B_1F1B = titan(
    "llama-3.1-405b", 512, 8192, 32, "full", tp=8, pp=8, microbatches=8, precision="fp8", async_tp=True
)
TT_405B_INTERLEAVED = titan(
    "llama-3.1-405b", 512, 8192, 32, "full", tp=8, pp=8, vp=2, microbatches=8, precision="fp8", async_tp=True
)


@pytest.mark.django_db
def test_tt_405b_interleaved_over_1f1b_within_15_percent(bundled_catalog):
    """Published 128 / 100 = 1.28; product 173.8 / 133.2 = 1.305 (+2.0%). Absolute: 100 lies between the product's
    NVL (76.3) and SXM (133.2) rates, as the file's card does."""
    ratio = rate(TT_405B_INTERLEAVED) / rate(TT_405B_1F1B)
    assert ratio == pytest.approx(128 / 100, rel=0.15)
    assert rate(TT_405B_1F1B, H100_NVL) * 0.85 <= 100 <= rate(TT_405B_1F1B) * 1.15


# --- 3. Llama 3.1 405B, 4D with CP on 512 H100 ([TT2412] Table 6) -----------------------------------------------------
# "4D parallelism (FSDP + TP + PP + CP) + torch.compile + Float8 + AsyncTP + 1F1B. Llama 3.1 405B model. 512 GPUs
# (TP 8, PP8). Local batch size 8. Full activation checkpointing." "FSDP 8, CP 1 | 32768 | 76 | 75.3", "FSDP 4, CP 2 |
# 65536 | 47 | 75.9", "FSDP 2, CP 4 | 131072 | 31 | 77.1", "FSDP 1, CP 8 | 262144 | 16 | 84.9". 8 micro-batches of one
# sequence. TP 8 fills a host, so the CP ring runs between hosts over the 400 Gb/s-a-GPU RDMA fabric.
def titan_405b_cp(cp: int) -> dict:
    return titan(
        "llama-3.1-405b",
        512,
        32768 * cp,
        8,
        "full",
        tp=8,
        pp=8,
        cp=cp,
        microbatches=8,
        precision="fp8",
        async_tp=True,
    )


@pytest.mark.django_db
def test_tt_405b_32k_over_8k_same_plan_within_15_percent(bundled_catalog):
    """Table 6's CP 1 row over Table 5's 1F1B row (same 512 GPUs, schedule and tokens a micro-batch): published
    76 / 100 = 0.76; product 110.9 / 133.2 = 0.833 (+9.6%)."""
    ratio = rate(titan_405b_cp(1)) / rate(TT_405B_1F1B)
    assert ratio == pytest.approx(76 / 100, rel=0.15)


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("cp", "published"),
    [
        # Was a strict xfail: published 47 / 76 = 0.618; product 64.95 / 46.74 s a step = 0.720 (+16.4%), the ring's
        # 5.92 s on the 400 Gb/s fabric 1.69 s exposed. Now 69.18 s, 0.676 (+9.3%) because the ring runs traced into
        # torch.compile's block graph, waited on where issued (cp43: context_parallel_comm pytorch_compiled; see
        # the comment above CP43). The rest (+9.3%) is the long-context attention cost of the 8B rows, unexplained.
        pytest.param(2, 47 / 76),
        pytest.param(
            8,
            16 / 76,
            marks=pytest.mark.xfail(
                strict=True,
                reason=RELABEL48_TT_405B_CP8
                + "[TT2412] Table 6: CP 8 at 262k runs at 16 / 76 = 0.211 of CP 1; product 24.3 / 89.1 = 0.273 "
                "(+29.6%; +41% before cp26: the ring's 31.3 s of traffic, 13.6 s exposed, now counted). The rest is "
                "the long-context attention cost of the 8B case, on the 405B. (CP 4, not a case: 0.467 against "
                "0.408, +14.4%.) tt42: now 24.17 / 87.17 = 0.277 (+31.7%)."
                + CP_UNEXPLAINED
                + CP43
                + " Was 169.17 s / 46.74 s a step, 0.276 (+31.2%); now 186.91 s, 0.250 (+18.8%)."
                + " t44: unchanged (21.91 / 87.63 = 0.250, +18.8%)."
                + T44_CP
                + CLS45B_CP
                + TR47_CP
                + TT49_CP,
            ),
        ),
    ],
)
def test_tt_405b_long_context_rate_falls_as_measured(bundled_catalog, cp, published):
    assert rate(titan_405b_cp(cp)) / rate(titan_405b_cp(1)) == pytest.approx(published, rel=0.15)


def ring_step_costs(step_ratio) -> list[float]:
    """r(c) for CP 2, 4, 8: what one more ring step costs in CP 1 steps, from a row's step over its CP 1 step
    (1 + (c - 1) r); every row of Tables 2 and 6 holds 32,768 tokens a GPU."""
    return [(step_ratio(c) - 1) / (c - 1) for c in (2, 4, 8)]


@pytest.mark.django_db
def test_tt_cp_rows_cost_a_ring_step_that_does_not_grow_with_the_degree(bundled_catalog):
    """t44 (comment above T44_CP). Published from [TT2412] Tables 2 and 6 (TPS per GPU, so a row's step over the
    CP 1 step is TPS(1) / TPS(c)); the product's from its step seconds."""
    published_8b = ring_step_costs(lambda c: TT_8B_CP[1][0] / TT_8B_CP[c][0])
    tps_405b = {1: 76, 2: 47, 4: 31, 8: 16}  # [TT2412] Table 6, TPS/GPU
    published_405b = ring_step_costs(lambda c: tps_405b[1] / tps_405b[c])
    assert published_8b == pytest.approx([0.5315, 0.8774, 0.8712], abs=0.0001)
    assert published_405b == pytest.approx([0.6170, 0.4839, 0.5357], abs=0.0001)
    # the 8B's CP 4 and CP 8 cost the same a ring step (0.7% apart); CP 2 costs 0.61 of that: a jump, no growth
    assert published_8b[1] / published_8b[2] == pytest.approx(1.0, abs=0.01)
    assert published_8b[0] / published_8b[2] == pytest.approx(0.61, abs=0.01)

    def product(spec_for):
        steps = {c: candidate(spec_for(c), H100)["throughput"]["step_seconds"] for c in (1, 2, 4, 8)}
        return ring_step_costs(lambda c: steps[c] / steps[1])

    assert product(titan_8b_cp) == pytest.approx([0.574, 0.558, 0.549], abs=0.002)
    assert product(titan_405b_cp) == pytest.approx([0.480, 0.446, 0.428], abs=0.002)


def gathered_kv_gib(cp: int, query_heads_a_rank: int) -> float:
    """The allgather rotater's buffer a layer call: the whole sequence's K and V (repeated to the query heads,
    128 wide, bf16), c x 32,768 tokens (every Table 2 / Table 6 row holds 32,768 a GPU)."""
    return cp * 32768 * query_heads_a_rank * 128 * 2 * 2 / 2**30


def test_tt_cp_misses_are_the_rows_with_a_2_gib_gathered_kv_near_the_card():
    """tt49 (comment above TT49_CP): the pattern the allocator-retry lead rests on, from [TT2412]'s memory columns
    and the models' heads (8B 32; 405B 128 over TP 8). A pattern in the rows, not a size: the rows stay xfails."""
    memory = {
        ("8b", 2): 84.2,
        ("8b", 4): 84.0,
        ("8b", 8): 84.5,
        ("405b", 2): 75.9,
        ("405b", 4): 77.1,
        ("405b", 8): 84.9,
    }
    heads = {"8b": 32, "405b": 128 // 8}
    missed = {
        ("8b", 4),
        ("8b", 8),
        ("405b", 8),
    }  # the strict xfails (405B CP 4, +4.8%, passes in the product)
    near_and_large = {
        row for row in memory if memory[row] >= 84.0 and gathered_kv_gib(row[1], heads[row[0]]) >= 2
    }
    assert near_and_large == missed
    assert [gathered_kv_gib(c, 32) for c in (2, 4, 8)] == [1.0, 2.0, 4.0]
    assert [gathered_kv_gib(c, 16) for c in (2, 4, 8)] == [0.5, 1.0, 2.0]


# tt49: the reserve the brief asked for, sized from torchtitan's own active / reserved pairs (tt42's seven, below), is
# not one number (1.12-1.46), and no new pair was opened: pytorch/torchtitan#735 (torch 2.6.0.dev20241212, FSDP2 x TP 4,
# the benchmark's month) prints a memory_summary whose reserved line is not in the stored excerpt. The allocator
# retries located for the CP rows (TT49_CP) would hold a reserved peak down, not up, so they cannot carry these low
# readings.
TT49_PP_MEMORY = (
    " tt49: UNEXPLAINED, rechecked unchanged. A reserve over allocated from a held-out source is still the one "
    "candidate; torchtitan's published active / reserved pairs spread 1.12-1.46 (tt42) and no new pair was opened "
    "(torchtitan#735, torch 2.6.0.dev20241212 FSDP2 x TP 4, shows its allocated peak, 18,803 MiB, but not its "
    "reserved one in the stored excerpt). The caching allocator's retries, the lead located for the CP rows "
    "(TT49_CP), lower a reserved peak and cannot explain a product figure that is too low."
)


REASON_405B_PP_MEMORY = (
    RELABEL48_TT_405B_PP_MEMORY
    + "[TT2412] Tables 5/6: 405B on FSDP 8 x TP 8 x PP 8 peaks at 82.5 GiB (1F1B) and 75.3 (32k); product 32.83 "
    "GiB for each before tt26 (-60%, -56%, verdict 'oversized'): torchtitan does not reshard after forward under PP. "
    "With parallelism.reshard_after_forward false (tt26, stated by titan()) 66.16 GiB for both (-19.8%, -12.1%): "
    "the stage's weights and fp32 gradients are held whole now, but the product gives 1F1B and interleaved the "
    "same activations (8 micro-batches in flight) where the published peaks differ by 10 GiB. cp26: so do the "
    "schedules torchtitan ran. PyTorch's Schedule1F1B warms stage 0 up with min(m, p - stage) = 8 forwards; "
    "ScheduleInterleaved1F1B rank 0 with (v - 1) x 8 + 2 (p - 1 - rank) = 22, capped at m v = 16 chunk forwards "
    "(torch/distributed/pipelining/schedules.py get_rank_warmup_ops), i.e. all 16 chunks of 7-8 layers before its "
    "first backward: 8 micro-batches of the stage's layers either way (Megatron's p (1 + (p - 1) / (p v)) = 11.5 is "
    "capped at m = 8 too). The interleaved peak is the lower one, against any schedule formula, and the same 1F1B "
    "with the same 32,768 tokens a micro-batch (Table 6, CP 1) reads 75.3, 7 GiB below Table 5's 82.5: the "
    "spread lies in torchtitan's reserved memory, not in the activations a schedule keeps. e26b: UNEXPLAINED. "
    "Verified: the column is torchtitan's max_reserved_gib (train.py @9dec370 logs "
    "device_mem_stats.max_reserved_gib; metrics.py reads reserved_bytes.all.peak), which bounds allocated from "
    "above, but no allocated (max_active) figure is published to size the difference. The 405B toml's "
    "enable_fsdp_float8_all_gather true keeps the gathered linear weights in fp8 under reshard_after_forward "
    "false (torchao float8's WeightWithDynamicFloat8CastTensor.fsdp_post_all_gather returns the gathered fp8 data "
    "as the unsharded weight), ~5.9 GiB below the product's bf16 11.81 (widening the gap); expandable_segments, "
    "which keeps reserved near allocated, is set by run_llama_train.sh but the 512-GPU launch is not published; "
    "the default split (pipelining_utils.py "
    "generate_split_points) gives 15, 16 x 6, 15 layers a stage, +0.3 GiB over the product's 15.75 average. "
    "tt42: now 66.16 GiB still (tensors 62.44). An allocator reserve fitted on torchtitan's own published "
    "active / reserved rows (1.12-1.46, median 1.170; test_tt_reserved_columns_admit_no_single_allocator_reserve) "
    "brings CP 1 inside (-3.0%) but leaves 1F1B at -11.5%, and no single reserve passes 1F1B and x26e's MI300X "
    "memory case together. PyTorch's pipelining at the benchmark's torch keeps every micro-batch's stage output "
    "to the end of the step (stage.py output_chunks, made last-stage only by pytorch#153383, May 2025): 8 x 0.125 "
    "GiB (1F1B) or 16 x 0.125 (interleaved, two stages a rank) of [4, 1,024, 16,384] bf16 sequence-parallel "
    "outputs, and 8 x 0.98 GiB of [4, 8,192, 16,032] bf16 logits on the last rank, whose one micro-batch in "
    "flight keeps it under the first stages (about 15 GiB of activations, logits and loss against their 18.1): "
    "1-2 GiB on the heaviest rank, and more for interleaved, the wrong way for the spread. "
    "t44: rechecked at 66.16 GiB for 1F1B, interleaved and CP 1 alike (-19.8% / -9.0% / -12.1%): weights 11.81 (the "
    "stage's bf16 TP shard held whole), gradients 23.62 (right as counted: under PP, PyTorch's pipelining turns "
    "FSDP2's gradient sync off until the last micro-batch and FSDP2 accumulates the unsharded gradients in "
    "reduce_dtype fp32, torch/distributed/fsdp/_fully_shard/_fsdp_param.py to_accumulated_grad_if_needed), optimizer "
    "8.86, activations 18.14, overhead 3.72. The three runs hold the same tokens, layers and micro-batches in flight "
    "and read 82.5 / 72.7 / 75.3: the 10 GiB between them is in torchtitan's reserved reading, which no setting the "
    "spec states changes. Spec: not expressible; the one allocator setting that bounds reserved over allocated "
    "(PYTORCH_CUDA_ALLOC_CONF expandable_segments) is not published for the 512-GPU launch and no field carries it. "
    "UNEXPLAINED. "
    "cls45b: sized as a window. The three runs hold the same tensors in the product (66.16 GiB), so one missing "
    "term X common to them passes all three only for 8.09 <= X <= 13.81 GiB (1F1B needs 74.25, interleaved allows "
    "79.97, CP 1 67.77-82.83). A constant that size is not torchtitan's: its torchao 8B H100 row (47.65, product "
    "46.81, test_torchao_h100_row_peak_memory_within_10_percent) would go to +15% at X = 8.1, so X would have to "
    "come from what this plan adds (PP 8, TP 8 with async TP, 405B stages). Counted for it and too small: "
    "DTensor TP saves each recomputed layer's all-gathered linear inputs at full sequence (PyTorch TP, unlike "
    "Megatron's sequence parallelism, does not re-gather in backward); under Float8 torchtitan @9dec370 "
    "parallelize_llama.py apply_tp uses torchao's PrepareFloat8ModuleInput / Float8ColwiseParallel, so the "
    "attention and feed_forward inputs are cast to fp8 before the all-gather and saved gathered in fp8: 2 x "
    "32,768 x 16,384 x 1 B = 1 GiB where the product counts 0.25 GiB, one layer at a time under full "
    "recomputation (+0.75 GiB); the pipeline's recv buffers and kept outputs, 1-2 GiB (above); async TP's "
    "symmetric-memory workspace is allocated outside the caching allocator (cuMem), so it is not in "
    "reserved_bytes. Together about 2-3 GiB of the 8.1 needed; fp8 all-gathered weights (5.9 GiB below the "
    "product's bf16) widen it. Not applied as an engine term (it moves no case into tolerance). UNEXPLAINED. "
    "train47: UNEXPLAINED, rechecked at 66.16 GiB (-19.8% / -12.1%). The in-flight reading is ruled out "
    "(test_tt_405b_1f1b_gap_is_not_an_in_flight_count): at m = p = 8 stage 0 already holds all 8 micro-batches "
    "(Schedule1F1B's min(m, p - r)) and PyTorch's stage frees each one's saved tensors at its backward (stage.py "
    "backward_one_chunk pops fwd_cache), so no schedule holds more; the 16.3 GiB gap is 0.90 of all the activations "
    "the product counts (18.14 GiB). The same count cannot also lighten Meta's 405B plan, which needs fewer than "
    "all micro-batches held (x26b test_llama3_405b_meta_plan_fits_only_with_a_smaller_group_or_lighter_layers): the "
    "two gaps are not one in-flight error." + TT49_PP_MEMORY
)


@pytest.mark.django_db
# interleaved: was a strict xfail ("product 32.83 GiB, -55%: torchtitan does not reshard after forward under PP").
# Now 66.16 GiB (-9.0%) (tt26: parallelism.reshard_after_forward, stated by titan() as torchtitan runs PP).
@pytest.mark.parametrize(
    ("name", "published"),
    [
        pytest.param("1f1b", 82.5, marks=pytest.mark.xfail(strict=True, reason=REASON_405B_PP_MEMORY)),
        ("interleaved", 72.7),
        pytest.param("cp1_32k", 75.3, marks=pytest.mark.xfail(strict=True, reason=REASON_405B_PP_MEMORY)),
    ],
)
def test_tt_405b_pipeline_memory_within_10_percent(bundled_catalog, name, published):
    spec = {"1f1b": TT_405B_1F1B, "interleaved": TT_405B_INTERLEAVED, "cp1_32k": titan_405b_cp(1)}[name]
    assert candidate(spec, H100)["memory"]["total_per_gpu_gib"] == pytest.approx(published, rel=0.10)


# train47: the in-flight reading of the 1F1B gap, ruled out from the schedule's own count. PyTorch's Schedule1F1B
# warms stage r up with min(m, p - r) forwards (torch/distributed/pipelining/schedules.py, as the cp26 note cites),
# and a stage frees a micro-batch's saved tensors at its backward (torch/distributed/pipelining/stage.py
# backward_one_chunk: ``self.fwd_cache.pop(bwd_chunk_id)``), so at m = p = 8 stage 0 already holds every
# micro-batch of the step at its peak, the most any schedule can hold; the interleaved rank 0 holds all 16 chunk
# forwards (8 micro-batches of its layers) too. What the product keeps for them is the checkpointed block inputs
# ([4, 8,192 / TP 8, 16,384] bf16 = 0.125 GiB a layer and micro-batch): 15.75 x 8 x 0.125 = 15.75 GiB of its
# 18.14 GiB of activations. The 1F1B gap (16.3 GiB) is 0.90 of all the activations counted, and 2.1x the
# largest extra a schedule could add (none: the cap is reached), so no count of in-flight micro-batches moves it.
@pytest.mark.django_db
def test_tt_405b_1f1b_gap_is_not_an_in_flight_count(bundled_catalog):
    from procurement.sizing.pipeline_split import in_flight_micro_batches

    assert in_flight_micro_batches(0, 8, 1, 8) == 8  # 1F1B stage 0: min(m, p) = m, every micro-batch
    assert in_flight_micro_batches(0, 8, 2, 8) == 8  # interleaved rank 0: m v = 16 chunk forwards, capped
    memory = candidate(TT_405B_1F1B, H100)["memory"]
    kept_inputs = 126 / 8 * 8 * (4 * 8192 / 8 * 16384 * 2) / 2**30
    assert kept_inputs == pytest.approx(15.75)
    assert memory["activations_gib"] == pytest.approx(18.14, abs=0.01)
    gap = 82.5 - memory["total_per_gpu_gib"]
    assert gap == pytest.approx(16.34, abs=0.01)
    assert gap / memory["activations_gib"] == pytest.approx(0.90, abs=0.01)


# tt42: the allocator's reserve as torchtitan's own published rows give it, tried as the class fix for the
# reserved columns (this table's 1F1B and CP 1 rows, x26d's 70B 2D) and not applied. Rows that publish both of
# torchtitan's peaks for one run (max_active, max_reserved, GiB; pytorch/torchtitan commit messages):
#   ba6e2c4a6 (2026-06-15, region SAC): "llama3 A/B on 4xH100 FSDP, no compile": region 17.414 / 25.19, op SAC
#             17.070 / 24.98;
#   e1f7f318a (#1974, 2025-11-21): "DSv3 16B layer fwd + bwd", seq 4096, batch 4: 5.926 / 7.225, 5.051 / 5.910;
#   00cffaeb3 (#4153, 2026-08-20): "DeepSeek V3 671B, fake backend, FSDP 256, EP 64, local batch 8, sequence
#             length 4096, NVIDIA GB300": 96.596 / 107.971, 126.115 / 141.529, 128.189 / 143.717.
# Reserved over active runs 1.12 to 1.46 (median 1.170): wider than the 10% band, so no one constant is the
# allocator's reserve. At the median (the product's tensors x 1.170, context excluded as torchtitan's reading
# excludes it) the CP 1 row (-3.0%) and the 70B 2D (-1.2%) come inside, the 1F1B row stays out (-11.5%), and
# x26e's MI300X row, same stack and a passing test of both readings of its "39.09 (GB)", goes to +16.3% at
# 36.41 GiB. The 1F1B row needs at least 82.5 x 0.9 / 62.44 = 1.189 of the tensors, the MI300X's GB reading at
# most 36.41 x 1.1 / 36.18 = 1.107: no single reserve passes both, whatever it is fitted on.
TT_ACTIVE_RESERVED_GIB = (
    (17.414, 25.19),
    (17.070, 24.98),
    (5.926, 7.225),
    (5.051, 5.910),
    (96.596, 107.971),
    (126.115, 141.529),
    (128.189, 143.717),
)


def tensors_gib(row: dict) -> float:
    memory = row["memory"]
    parts = ("weights_gib", "gradients_gib", "optimizer_states_gib", "activations_gib", "kv_cache_gib")
    return sum(memory[part] for part in parts)


@pytest.mark.django_db
def test_tt_reserved_columns_admit_no_single_allocator_reserve(bundled_catalog):
    from tests.procurement.outside.test_outside_recommendations_x26d import TITAN_70B
    from tests.procurement.outside.test_outside_recommendations_x26e import MI300X, TITAN_BF16

    ratios = sorted(reserved / active for active, reserved in TT_ACTIVE_RESERVED_GIB)
    assert ratios[0] == pytest.approx(1.118, abs=0.001) and ratios[-1] == pytest.approx(1.463, abs=0.001)
    assert ratios[-1] / ratios[0] > 1.1 / 0.9
    median = ratios[len(ratios) // 2]
    assert median == pytest.approx(1.170, abs=0.001)
    one_f_one_b = tensors_gib(candidate(TT_405B_1F1B, H100))
    cp1 = tensors_gib(candidate(titan_405b_cp(1), H100))
    titan_70b_2d = tensors_gib(candidate(TITAN_70B | {"cross_entropy": "torchtitan"}, H100))
    mi300x = tensors_gib(candidate(TITAN_BF16, MI300X))
    assert gap(one_f_one_b * median, 82.5) == pytest.approx(-0.115, abs=0.002)
    assert gap(cp1 * median, 75.3) == pytest.approx(-0.030, abs=0.002)
    assert gap(titan_70b_2d * median, 71.9) == pytest.approx(-0.012, abs=0.002)
    assert gap(mi300x * median, 39.09e9 / 2**30) == pytest.approx(0.163, abs=0.002)
    assert 82.5 * 0.9 / one_f_one_b > 39.09e9 / 2**30 * 1.1 / mi300x


# --- 4. Llama 3.1 70B and 8B, vanilla TP vs async TP ([TTATP]) --------------------------------------------------------
# "Llama3 70b on 256 H100s with FSDP=32, TP=8, torch.compile, full AC, local batch size 16": bf16 597.3 vanilla /
# 652.4 async; float8 tensorwise 809.8 / 942.4. "Llama3 8b on 64 H100s with FSDP=8, TP=8, torch.compile, per op SAC,
# local batch size 12": bf16 4378 / 4809.4; float8 tensorwise 5078.1 / 5570.1. Same Grand Teton hosts (500 W).
# seq_len 8192 (the tomls). Loss compiled with the model (torchtitan#1033, April 2025): cross_entropy: compiled.
# Per-op SAC = gradient_checkpointing: selective_op.
def titan_70b(precision: str, async_tp: bool, **extra) -> dict:
    return titan(
        "llama-3.1-70b",
        256,
        8192,
        16,
        "full",
        tp=8,
        precision=precision,
        loss="compiled",
        async_tp=async_tp,
        **extra,
    )


def titan_8b_tp(precision: str, async_tp: bool) -> dict:
    return titan(
        "llama-3.1-8b",
        64,
        8192,
        12,
        "selective_op",
        tp=8,
        precision=precision,
        loss="compiled",
        async_tp=async_tp,
    )


@pytest.mark.django_db
@pytest.mark.parametrize(("precision", "published"), [("bf16", 597.3), ("fp8", 809.8)])
def test_tt_70b_fsdp32_tp8_vanilla_within_15_percent(bundled_catalog, precision, published):
    """bf16: product 575.4 (-3.7%); float8 tensorwise: 740.1 (-8.6%), on the 700 W SXM against 500 W parts
    (tp26: DTensor's layout copy around each of the 12 TP collectives a layer; 636.5 and 865.8 before)."""
    assert rate(titan_70b(precision, False)) == pytest.approx(published, rel=0.15)


@pytest.mark.django_db
def test_tt_70b_async_tp_speedup_bf16_within_15_percent(bundled_catalog):
    """Published 652.4 / 597.3 = 1.092; product 700.5 / 575.4 = 1.217 (+11.5%; tp26: async TP hides each
    collective under its own matmuls only, and leaves the backward input-gradient reduce-scatters exposed)."""
    ratio = rate(titan_70b("bf16", True)) / rate(titan_70b("bf16", False))
    assert ratio == pytest.approx(652.4 / 597.3, rel=0.15)


@pytest.mark.django_db
# Was a strict xfail: "async TP gives 942.4 / 809.8 = 1.164; product 1.346 (+15.7%): tp_comm_overlap hides 97% of
# the TP collectives where torchtitan's async TP hid about half". Now 1,056.0 / 804.0 = 1.313 (+12.8%) (integration:
# titan() states attention_kernel flash_attention_2, the attention torchtitan runs; the async-TP overlap itself is
# still Transformer Engine's 97%, so the bf16 and fp8 speed-ups, 1.223 and 1.313, both sit +12-13% high).
# tp26 (parallelism.tp_implementation dtensor: PyTorch's async TP, dtensor_tp.py): 931.8 / 740.1 = 1.259 (+8.2%).
def test_tt_70b_async_tp_speedup_fp8_within_15_percent(bundled_catalog):
    ratio = rate(titan_70b("fp8", True)) / rate(titan_70b("fp8", False))
    assert ratio == pytest.approx(942.4 / 809.8, rel=0.15)


@pytest.mark.django_db
# Was a strict xfail: "4,378 tokens/s/GPU vanilla TP; product 5,653 (+29.1%), with the TP traffic 0.50 s of a
# 2.17 s step" (5,389, +23.1%, on the tree tp26 started from). Now 4,679.6 (+6.9%) (tp26): per-op SAC replays
# the 2 forward all-gathers in backward (10 collectives a layer, not 8), and DTensor's Shard(1) layout copies
# the gathered tensor around each collective; TP 0.50 -> 0.85 s of a 2.63 s step.
def test_tt_8b_tp8_selective_op_vanilla_within_15_percent(bundled_catalog):
    assert rate(titan_8b_tp("bf16", False)) == pytest.approx(4378, rel=0.15)


@pytest.mark.django_db
# Was a strict xfail: "async TP gives 4,809.4 / 4,378 = 1.099; product 7,290 / 5,653 = 1.289 (+17.4%) ... The
# overlap hides 0.50 of 0.50 s (97%)" (6,856 / 5,389 = 1.272, +15.8%, on the tree tp26 started from). Now
# 5,820.7 / 4,679.6 = 1.244 (+13.2%) (tp26: inductor's micro-pipeline TP hides a collective only under its own
# matmuls, the attention's all-gather and wo reduce-scatter outlast theirs at GQA widths, and the 2 backward
# input-gradient reduce-scatters, sums of matmuls, stay exposed: 0.33 of 0.85 s). Absolute async 5,820.7 against
# 4,809.4 (+21.0%): still high, the part of async TP the structure does not explain.
def test_tt_8b_tp8_async_tp_speedup_within_15_percent(bundled_catalog):
    ratio = rate(titan_8b_tp("bf16", True)) / rate(titan_8b_tp("bf16", False))
    assert ratio == pytest.approx(4809.4 / 4378, rel=0.15)


# --- 5. B200 MoE rows of Megatron-Bridge 26.04.01 ([MBARCH], [MBREC]) --------------------------------------------------
# GPT OSS 120B: "DGX-B200 | 64 | BF16 | 1280 | 4 | 4096 | 0 | 1 | 1 | 1 | n/a | 8 | 13568 | 369". Shape from openai/
# gpt-oss-120b config.json, as x26e states it (36 layers, hidden 2880, 64 heads of 64, 8 KV heads, 128 experts top-4
# of 2880, vocabulary 201,088, QKV bias, 128-token window on 18 layers). GA = 1280 / (64 x 4) = 5.
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
GPT_OSS_B200 = megatron_spec(
    GPT_OSS_120B, 64, 4096, 1, 1, ep=8, micro_batch=4, global_batch=1280, precision="bf16"
) | {"recompute_modules": ["layernorm", "moe_act"]}
# e26b, STATED: the alltoall dispatcher the run used, not deepep. The 26.04.01 table is Megatron-Bridge v0.4.2's
# (@c810129341a84e58f4cbed3093f70668a088c028 docs/performance-summary.md, "26.04.01 NeMo Container"), whose
# scripts/performance/configs/gpt_oss/gpt_oss_workload_base_configs.py GPT_OSS_120B_PRETRAIN_CONFIG_B200_BF16_V2 sets
# no dispatcher backend (EP 8, MBS 4, GBS 1,280, recompute layernorm / moe_act, no CUDA graph) over
# src/megatron/bridge/recipes/gpt_oss/gpt_oss.py gpt_oss_120b_pretrain_config, line 196: moe_token_dispatcher_type
# "alltoall" (the flex backend only applies to the "flex" dispatcher). Was deepep: 15,821 (+16.6%); alltoall alone 15,649.

# Qwen3-30B-A3B: "DGX-B200 | 8 | MXFP8 | 512 | 4 | 4096 | 0 | 1 | 1 | 1 | n/a | 8 | 27136 | 619". GA = 512 / (8 x 4)
# = 16; MXFP8 is the spec's fp8 on Blackwell. The recipe's hybridep stated as such (moe26c; deepep before, the
# same all-to-alls: on Blackwell the two size alike).
QWEN3_30B_B200 = megatron_spec(
    "qwen3-30b-a3b", 8, 4096, 1, 1, ep=8, micro_batch=4, global_batch=512, precision="fp8"
)
QWEN3_30B_B200["parallelism"]["expert_dispatch"] = "hybridep"


@pytest.mark.django_db
def test_gpt_oss_120b_b200_plan_fits(bundled_catalog):
    """NVIDIA ran it on 180 GB B200s; product 156.4 GiB a GPU ('tight')."""
    assert candidate(GPT_OSS_B200, B200)["verdict"] in FEASIBLE


# e26b, GPT-OSS: the product hid all data-parallel traffic under COMM_OVERLAP (0.67) of the step's whole compute.
# Megatron-Core syncs gradients in the last micro-batch only: forward_backward_no_pipelining runs the first
# num_microbatches - 1 under no_sync_func (NVIDIA/Megatron-LM @00611e6eeb0b09b5ee074750956855215ddbd67f
# megatron/core/pipeline_parallel/schedules.py), so with overlap_grad_reduce the gradient reduce-scatter runs under
# that micro-batch's backward alone, and with overlap_param_gather the distributed optimizer's parameter all-gather
# under the next forward ("overlap param all-gather with forward compute", Megatron-LM
# megatron/core/distributed/distributed_data_parallel_config.py). The run sets both, with the distributed optimizer
# and 16-bit gradient reduction (Megatron-Bridge v0.4.2 @c810129341a84e58f4cbed3093f70668a088c028
# src/megatron/bridge/recipes/gpt_oss/gpt_oss.py lines 250-253; scripts/performance/configs/gpt_oss/
# gpt_oss_llm_pretrain.py lines 32-33: grad_reduce_in_fp32 False). This row's traffic is large: EP 8 fills a node,
# so each expert's data-parallel group is 8 ranks on 8 nodes and the 14.3B expert parameters a GPU reduce and
# gather over the 400 Gb/s fabric: 1.42 s a step (1.28 s on the fabric), against 4.90 s of compute in 5
# micro-batches. Stated as parallelism.gradient_sync last_micro_batch (e26b's field): 0.67 x 0.98 s hides, 0.77 s
# stays exposed. As a new default it was tried and reverted: hiding the traffic of every DDP / ZeRO-1/2 run under
# its last micro-batch moves validate_sizing's LLaMA-65B GPU-hours +8.0% -> +30.7%, LLaMA-33B -1.3% -> +15.1% and
# the MFU / GPU-hours median 8.0% -> 14.9% (Meta's own trainer, not Megatron-Core), so it is a field the run states.
GPT_OSS_B200["parallelism"]["gradient_sync"] = "last_micro_batch"


@pytest.mark.django_db
# Was a strict xfail: "13,568 tokens/s/GPU; product 15,821 (+16.6%), a 5.18 s step for the measured 6.04 s, 0.27 s
# of it exposed all-to-all ... the B200 row's MoE compute runs a little fast". Now 13,652 (+0.6%) because the run's
# own settings are stated: the alltoall dispatcher (15,649, +15.3%) and Megatron-Core's gradient sync in the last
# micro-batch (parallelism.gradient_sync last_micro_batch: 0.77 s of the step's 1.42 s of expert-gradient traffic
# over the fabric exposed, where the product hid it all under the whole step's compute).
def test_gpt_oss_120b_bf16_on_64_b200_within_15_percent(bundled_catalog):
    assert rate(GPT_OSS_B200, B200) == pytest.approx(13568, rel=0.15)


@pytest.mark.django_db
def test_gpt_oss_120b_h100_row_keeps_its_rate_with_megatrons_gradient_sync(bundled_catalog):
    """The same table's DGX-H100 row of this model (x26e: PP 4, MBS 1, GA 80, expert groups of 2 ranks; 5,824
    tokens/s/GPU), stated with the same gradient sync: 5,753 (-1.2%) -> 5,708 (-2.0%). Its traffic is small."""
    from tests.procurement.outside.test_outside_recommendations_x26e import GPT_OSS_H100

    stated = copy.deepcopy(GPT_OSS_H100)
    stated["parallelism"]["gradient_sync"] = "last_micro_batch"
    assert rate(stated, H100) == pytest.approx(5824, rel=0.05)


def megatron_data_parallel_exposure(row: dict, accumulation: int) -> tuple[float, float]:
    """(step with Megatron's overlap split by pass, step with none) from a size report row whose data-parallel
    traffic is all hidden: its seconds (the communication share less the experts' all-to-all), half gradient
    reduce-scatter under the last micro-batch's backward (2/3 of its compute), half parameter all-gather under
    the first micro-batch's forward (1/3)."""
    t = row["throughput"]
    step, exposed = t["step_seconds"], t["exposed_communication_seconds"]
    compute = step - exposed
    traffic = t["communication_share"] * compute / (1 - t["communication_share"])
    data_parallel = traffic - t["expert_parallel_seconds"]
    micro = compute / accumulation
    overlapped = max(0.0, data_parallel / 2 - 2 * micro / 3) + max(0.0, data_parallel / 2 - micro / 3)
    return step + overlapped, step + data_parallel


@pytest.mark.django_db
def test_gpt_oss_120b_b200_bracketed_by_megatrons_gradient_sync(bundled_catalog):
    """The field's reading against a hand split of the same traffic: with the default overlap the product's
    data-parallel traffic is 1.42 s a step, all hidden; split by pass (reduce-scatter under the last backward,
    all-gather under the first forward) the row reads 14,431 (+6.4%), with no overlap 12,305 (-9.3%); the
    measured 6.04 s step lies between, and so does the stated field's 6.00 s."""
    as_overlapped = copy.deepcopy(GPT_OSS_B200)
    as_overlapped["parallelism"].pop("gradient_sync")
    row = candidate(as_overlapped, B200)
    assert row["throughput"]["data_parallel_exposed_seconds"] == 0.0
    split, serial = megatron_data_parallel_exposure(row, accumulation=1280 // (64 * 4))
    tokens = 1280 * 4096 / 64
    assert serial - row["throughput"]["step_seconds"] == pytest.approx(1.42, abs=0.02)
    assert split < tokens / 13568 < serial
    stated = candidate(GPT_OSS_B200, B200)["throughput"]
    assert split < stated["step_seconds"] < serial
    assert stated["data_parallel_exposed_seconds"] == pytest.approx(1.42 - 0.67 * 4.905 / 5, abs=0.02)


# e26b, Qwen3-30B-A3B: EXPLAINED as the product's B200 path. The same spec on the product's GB200 (MLPerf's 2.2x
# the H100, procurement/data/measured_speed.csv) gives 25,910 against NVIDIA's DGX-GB200 row of the same release,
# model, precision, MBS, EP and GBS, "DGX-GB200 | 8 | MXFP8 | 512 | 4 | 4096 | 0 | 1 | 1 | 1 | n/a | 8 | 26112 |
# 599" ([MBARCH] 26.04.01): -0.8%. NVIDIA's B200 row runs 27,136 / 26,112 = 1.039x its GB200 row (26.04: 26,859 /
# 26,032 = 1.032; 26.02.01: 26,695 / 26,373 = 1.012); the product's B200 runs 21,600 / 25,910 = 0.834x its GB200,
# and 1.039 / 0.834 = 1.246 of the 1.256 gap. Inside the B200 path (12.14 s a step): the MoE layer's
# card-independent 6 ms a layer and micro-batch, 48 x 16 x 6 ms = 4.61 s, and the per-routed-element bytes at the
# datasheet bandwidth, 2.35 s; without the bytes the step is 9.79 s (-1.3%), the expert's reading of this row
# and the MBS 1 one (reason). Those bytes were fitted on other B200 rows (Qwen3-235B-A22B on 64 B200, +2.2%) and
# are not refitted on this one. Not the all-to-all overlap either: the 26.04.01 table is Megatron-Bridge v0.4.2's
# (@c810129341a84e58f4cbed3093f70668a088c028), whose QWEN3_30B_A3B_PRETRAIN_CONFIG_B200_FP8_MX_V1 is the BF16 config
# (scripts/performance/configs/qwen/qwen3_workload_base_configs.py lines 396-409: hybridep, TE graphs on attn /
# moe_router / moe_preprocess, no moe_a2a_overlap, whose default is False in scripts/performance/utils/utils.py
# line 62). The overlap that tests/procurement/sizing/test_moe_b200_recipes_stated.py states (23,093, -14.9%) came
# with the perf_recipes change of 2026-08-06 (Megatron-Bridge #5356), after this row was measured.
@pytest.mark.django_db
# Was a strict xfail: "[MBARCH] Qwen3-30B-A3B MXFP8 on 8 B200, EP 8, MBS 4: 27,136 tokens/s/GPU; product 21,600
# (-20.4%), a 12.14 s step for the measured 9.66 s ... EXPLAINED (e26b) as the product's B200 path: the same spec on
# the product's GB200 gives 25,910 ... the product's 0.834x". Now 26,051 (-4.0%; GB200 24,830, -4.9%; B200 / GB200
# 1.049 against NVIDIA's 1.012-1.039) because (b200x) the GB200, ranked at 2.2x the H100's modelled speed, had
# divided the MoE's card-independent seconds (2 ms a layer + 0.25 ms a local expert, a micro-batch) by 2.2: 2.10 s
# of its step where the B200 paid 4.61 s, the whole 2.02 s between the two steps (FLOPs 4.48 vs 4.19 s, routed
# bytes 2.55 vs 2.35 s, all-to-all 0.99 s both). Paid whole, the GB200 fit rows (25.11 23,766; 26.02 26,084) ask
# for about half of them: they and this row ran HybridEP, whose fused permute-dispatch pays
# moe_hybridep_fixed_share 0.55 of them, fitted on those two GB200 rows, not on this one (assumptions.py).
def test_qwen3_30b_mxfp8_on_8_b200_within_15_percent(bundled_catalog):
    assert rate(QWEN3_30B_B200, B200) == pytest.approx(27136, rel=0.15)


@pytest.mark.django_db
@pytest.mark.xfail(
    strict=True,
    reason=RELABEL48_QWEN3_GB200
    + "moe43: GB200 24,184.3 (-7.4%), ratio 25,527.9 / 24,184.3 = 1.056 (inside), after the MoE constants' "
    "refit on their four rows (its 25.11 sibling at MBS 4 reads +1.8%) and the fp8 joint refit; "
    "moe_hybridep_fixed_share (0.27) was not refitted after them: on its own two GB200 rows it would be 0.19 (rows "
    "+4.7% / -4.6%), putting this row at 24,878.1 (-4.7%, inside), but the Hopper HybridEP rows out (x26e EP 16 "
    "+14.2% -> +17.9%, its ranking hours -15.2%). "
    "int42: the other bound now fails: the GB200 24,421.7 (-6.5%, outside its 5%) while the B200 / GB200 "
    "ratio 1.057 is inside (B200 25,811.5), after mfu_fp8_linears_hopper 0.425 -> 0.42 (the GB200 is priced at "
    "the H100's efficiency times its measured ratio), _blackwell 0.44 -> 0.43 and moe_routed_bytes_fp8_share "
    "0.73 -> 0.76 were refitted jointly on their ten rows (the GB200 MBS 4 row among them, +2.8%). Unexplained: "
    "this MBS 1 path and the fit's MBS 4 row differ by 9 points. "
    "moe42: the GB200 24,938 (-4.5%, inside its 5%) but the B200 / GB200 ratio 1.061, 0.1% past the bound "
    "(NVIDIA's largest 1.039 x 1.02 = 1.060; 1.049 before). The FLOP count fix (no FLOPs for the input embedding "
    "lookup) and the MoE refits on their own rows (205 B a routed element, HybridEP share 0.27) move the two paths "
    "unequally: the B200 step 10.06 -> 9.91 s, the GB200's 10.26 -> 10.51 s (its routed bytes at the H100's 3,350 "
    "GB/s grow 1.63 s where the B200's at 8,000 GB/s grow 1.50 s). Unexplained beyond the refit. "
    "moe45: the GB200 priced from the B200 at NVIDIA's same-plan dense 1.025 (measured_speed.csv) and "
    "moe_hybridep_fixed_share refitted 0.27 -> 0.40 with it: GB200 24,184.3 -> 24,827.5 (-4.9%, inside its 5%), B200 "
    "25,527.9 -> 24,362.5, so the B200 / GB200 ratio 1.056 -> 0.981, now under the 1.0 bound: the dense pairs' 1.025 (Llama 3 "
    "8B) is not what NVIDIA's MoE pairs show (GB200 / B200 0.962-0.988 on this very model and plan). UNEXPLAINED: no "
    "source opened says why a GB200 runs this MoE 1-4% slower than a B200 while running the dense 8B 1-5% faster "
    "(a lead, unsized: the card-independent seconds are host launches and syncs, and the GB200's host is a Grace CPU).",
)
def test_qwen3_30b_mxfp8_gb200_path_matches_nvidias_gb200_row(bundled_catalog):
    """The product's GB200 within 5% of NVIDIA's 26.04.01 DGX-GB200 row (26,112), and (b200x) its B200 / GB200
    ratio, 0.834 before, now 1.049: within 2% of NVIDIA's ratio in each release with both rows (1.012, 1.032,
    1.039)."""
    gb200 = rate(QWEN3_30B_B200, "gb200")
    assert gb200 == pytest.approx(26112, rel=0.05)
    nvidia = {"26.02.01": 26695 / 26373, "26.04": 26859 / 26032, "26.04.01": 27136 / 26112}
    ratio = rate(QWEN3_30B_B200, B200) / gb200
    assert 1.0 < ratio < max(nvidia.values()) * 1.02


@pytest.mark.django_db
def test_qwen3_30b_b200_and_gb200_steps_by_term(bundled_catalog):
    """b200x: both steps term by term (262,144 tokens a GPU a step). B200 at its datasheet (4,500 TFLOPS FP8 x
    0.44 / 1.2685, 8,000 GB/s): FLOPs 4.190 s, routed bytes 2.351 s; the GB200 at 2.2x the H100 (1,979 x 0.425 /
    1.2685, 3,350 GB/s): 4.484 s, 2.553 s. Both pay the card-independent 48 layers x 16 micro-batches x 6 ms x
    0.55 (HybridEP) = 2.534 s and the same 0.987 s of exposed all-to-all (the GB200's NVL72 does not enter an EP 8
    plan inside 8 GPUs).
    moe42: FLOPs a token 24.95e9 -> 23.08e9 (no FLOPs for the 151,936 x 2,048 input embedding lookup) and the bf16
    split 1.2685 -> 1.2902: FLOPs 4.190 x 0.9251 x 1.0171 = 3.942 s (B200), 4.484 x 0.9409 = 4.219 s (GB200); routed
    bytes x 205 / 125: 3.856 s, 4.187 s; card-independent 48 x 16 x (1.8 + 16 x 0.225 ms) x 0.27 = 1.120 s.
    int42 (mfu_fp8_linears_blackwell 0.44 -> 0.43, _hopper 0.425 -> 0.42, moe_routed_bytes_fp8_share 0.73 -> 0.76,
    refitted jointly on their ten rows under the new count): FLOPs 3.942 x 0.44 / 0.43 = 4.034 s (B200), 4.219 x
    0.425 / 0.42 = 4.269 s (GB200); routed bytes x 0.76 / 0.73: 4.014 s, 4.359 s.
    moe43 (moe_routed_bytes_per_element 205 -> 217.5 and the card-independent seconds 1.8 + 16 x 0.225 -> 1.64 + 16 x
    0.205 ms refitted on their four rows; then mfu_fp8_linears_blackwell 0.43 -> 0.4275 and the fp8 share 0.76 -> 0.75
    on their ten): FLOPs 4.034 x 0.43 / 0.4275 = 4.058 s (B200), 4.269 s (GB200, Hopper's 0.42 kept); routed bytes x
    (217.5 x 0.75) / (205 x 0.76): 4.203 s, 4.564 s; card-independent 48 x 16 x 4.92 ms x 0.27 = 1.020 s.
    moe45: the GB200 is priced from the B200 at NVIDIA's same-plan dense 1.025 (measured_speed.csv) and
    moe_hybridep_fixed_share refitted 0.27 -> 0.40 on its two GB200 rows: the GB200's FLOPs and routed bytes are the
    B200's over 1.025 (3.959 s, 4.100 s); card-independent 48 x 16 x 4.92 ms x 0.40 = 1.511 s, paid whole by both."""
    b200, gb200 = candidate(QWEN3_30B_B200, B200), candidate(QWEN3_30B_B200, "gb200")
    fixed = 48 * 16 * (1.64e-3 + 16 * 0.205e-3) * 0.40
    b200_compute = 4.058 + 4.203
    for row, compute in ((b200, b200_compute), (gb200, b200_compute / 1.025)):
        steps = row["throughput"]
        assert steps["expert_parallel_exposed_seconds"] == pytest.approx(0.987, abs=0.001)
        assert steps["step_seconds"] == pytest.approx(compute + fixed + 0.987, abs=0.003)


# --- 5b. DeepSeek-V3 FP8 on 1,024 H100 ([MB2509]): Hopper FP8 MoE, EP 64 over 8 nodes, 32 chunks for 61 layers -------
# GA = 8192 / (1024 / 16) = 128 (the table's GA). 'selective' = Megatron's default recompute (core_attn). The layout's
# 32 chunks (PP 8 x VP 4) do not divide the 61 layers; stated without an uneven split the stages keep the average.
# Published step: 8192 x 4096 / (1297 x 1024) = 25.3 s.
DEEPSEEK_H100 = megatron_spec("deepseek-v3", 1024, 4096, 2, 8, vp=4, ep=64, global_batch=8192)


@pytest.mark.django_db
def test_deepseek_v3_fp8_1024_h100_plan_fits(bundled_catalog):
    """NVIDIA ran it on 80 GB H100s; product 65.9 GiB a GPU."""
    assert candidate(DEEPSEEK_H100, H100)["verdict"] in FEASIBLE


# What differs from the recipe-stated run that passes (tests/procurement/sizing/test_expert_tensor_parallel.py,
# +13.9%): NVIDIA's benchmark runs the YAML through Megatron-Bridge's run_script.py, whose DeepSeek-V3 branch sets
# for h100 (@fa0315ae scripts/performance/run_script.py lines 60-99): enable_deepep (the flex dispatcher with DeepEP)
# and moe_router_force_load_balancing; A2A_1F1B, i.e. comm_overlap.overlap_moe_expert_parallel_comm True with
# delay_wgrad_compute; recompute_modules ["mla_up_proj", "mlp"]. DEEPSEEK_H100 states none of them, nor the YAML's
# own etp 1. Stated one by one (tp26): etp 1 832; + the recompute modules 824; + deepep 1,176 (-9.3%, exposed
# all-to-all 19.1 -> 7.2 s); + the A2A overlap 1,478 (+13.9%, 1.5 s exposed).
DEEPSEEK_H100_AS_RUN = DEEPSEEK_H100 | {
    "recompute_modules": ["mla_up_proj", "mlp"],
    "parallelism": DEEPSEEK_H100["parallelism"]
    | {"expert_tensor_parallel": 1, "expert_dispatch": "deepep", "expert_overlap": "partial"},
}


@pytest.mark.django_db
# Was a strict xfail: "1,297 tokens/s/GPU; product 804 (-38.0%), a 40.8 s step for the measured 25.3 s, of which
# 20.4 s is exposed EP all-to-all ... only with expert_overlap partial (which the recipe does not set) does it reach
# 1,464 (+12.9%). The product's inter-node all-to-all on H100 is ~3.5x what NVIDIA's run exposes". Now 1,478
# (+13.9%) (tp26): the run's DeepEP dispatcher and 1F1B all-to-all overlap are set by run_script.py, not the YAML
# (above), and stated as it ran. As DEEPSEEK_H100 states it the product still gives 804: a buyer who copies only
# the YAML's degrees gets the hours of a run without DeepEP and the overlap.
def test_deepseek_v3_fp8_on_1024_h100_within_15_percent(bundled_catalog):
    assert rate(DEEPSEEK_H100_AS_RUN) == pytest.approx(1297, rel=0.15)


# --- 6. The ranking a buyer reads first: Llama 3.1 70B full fine-tune, 5e9 tokens, 12 h deadline -------------------------
# The [TTATP] 70B plan as a buyer copies it (FSDP 32 x TP 8 on 256 GPUs, full AC, bf16, compiled loss), task
# full_finetune. The measured vanilla-TP rate gives 5e9 / (597.3 x 256) / 3,600 = 9.08 h on H100s.
FT_70B = titan_70b("bf16", False, task="full_finetune", tokens=5e9)


@pytest.mark.django_db
def test_70b_finetune_first_row_cost_by_hand_and_plan_kept(bundled_catalog):
    """By hand: the first row is Nebius gpu-b200-sxm_8gpu-160vcpu-1792gb on demand, 32 instances at 44.00 USD an hour
    for 4.494 h: 32 x 44 x 4.494 = 6,327.55 USD of compute (row 6,327.82, hours shown to 3 decimals), setup 1,408.00
    (one hour of the 32 instances), storage 66.55, reruns 1,265.56 (20% of compute): 9,067.93. The next is Nebius
    32 x 8 H100 at 23.60 for 9.988 h, 9,875.35. I would buy the B200 row at this deadline if the B200 is 2.2x the
    H100 (the product's 4.49 h vs 9.99 h); the H100 hours are +10.0% of the measured rate's 9.08 h (inside 15%).
    Both ride InfiniBand 3200 Gb/s a node (400 Gb/s a GPU), with the FSDP traffic shown over it."""
    rows = ranked(FT_70B, top=5, deadline_hours=12)
    assert all(
        r["gpus"] == 256 and r["plan"]["tensor_parallel"] == 8 and r["plan"]["zero_stage"] == 3 for r in rows
    ), describe(rows)
    assert all(not r["differs_from_spec"] and r["wall_clock"]["p90_hours"] <= 12 for r in rows), describe(
        rows
    )
    first = rows[0]
    compute = Decimal(first["effective_price_per_hour"]) * first["instances"] * Decimal(str(first["hours"]))
    assert Decimal(first["cost_breakdown"]["compute"]) == pytest.approx(compute, rel=Decimal("0.001"))
    parts = sum(Decimal(v) for k, v in first["cost_breakdown"].items() if k != "total")
    assert parts == Decimal(first["total_cost"]) == Decimal(first["cost_breakdown"]["total"])
    assert Decimal(first["total_cost"]) <= min(Decimal(r["total_cost"]) for r in rows)
    h100 = [r for r in rows if r["gpu"] == H100]
    assert h100 and h100[0]["hours"] == pytest.approx(5e9 / (597.3 * 256) / 3600, rel=0.15), describe(rows)


@pytest.mark.django_db
def test_70b_finetune_tight_deadline_keeps_only_rows_that_meet_it(bundled_catalog):
    """At an 8 h deadline (below the H100's 9.08 h measured and 9.99 h estimated) no H100/H200 row may rank: every row
    shown finishes by 8 h at P90, and the B200 row stays first."""
    rows = ranked(FT_70B, top=5, deadline_hours=8)
    assert rows and all(r["wall_clock"]["hours_at_probability"] <= 8 for r in rows), describe(rows)
    assert all(r["gpu"] not in (H100, "h200-sxm-141gb") for r in rows), describe(rows)
    assert rows[0]["gpu"] == B200, describe(rows)
