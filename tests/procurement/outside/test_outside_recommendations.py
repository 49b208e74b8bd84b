"""Issue 26, judged from outside: workloads taken from published runs, ranked against the bundled catalog.

Each case (spec, options, published figures and their sources) is in ``cases.json`` next to this file;
the specs are what a user reproducing that run would write, and they go through the same service as
``manage.py recommend`` (``workload_spec_parse`` -> ``ranking_options_parse`` -> ``recommendation_compute``)
or, for the per-accelerator speeds, as ``manage.py size`` (``size_spec_document``). Each test asserts
one thing an outside GPU engineer expects of the top five rows, with the hand computation beside it.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from procurement.api.sizing import size_spec_document
from procurement.services.recommendations import (
    ranking_options_parse,
    recommendation_compute,
    workload_spec_parse,
)

RELABEL48_MLPERF_LORA_HOURS = (
    "UNEXPLAINED (relabelA48: rechecked at 2.903 h, +20.9% against 2.40 h, the bar 20%. Ruled out: the work "
    "a step is as stated: mlcommons/training@0124d21d llama2_70b_lora/scripts/utils.py create_datasets drops "
    "samples over max_seq_length and packs the rest with group_texts into 8,192-token blocks (no padding), and "
    "run_llama_70B_scrolls_r16.sh @00baefad runs batch 1, gradient_accumulation_steps 1, flash-attn, gradient "
    "checkpointing, LoRA on qkv_proj / o_proj of a fused-qkv model: 65,536 real tokens a step. (a) fails: the "
    "A100 LoRA efficiency rising with width that this run implies (0.61) has no source; the Ampere width form "
    "gives a third of the rise and lora43's eager adapter term was reverted (aud43l). Best lead: a per-layer "
    "PEFT cost that larger matmuls amortize, as on the Qwen-72B rows). "
)

RELABEL48_QWEN72B_1K = (
    "UNEXPLAINED (relabelA48: rechecked at 1,447.9, +29.9%. The 'EXPLAINED' below is withdrawn: the "
    "six-length line (slope 0.711, 11.6 s) is fitted on the README's own rows, so (b) is not shown from "
    "rows outside the fit. Located by source: ZeRO-3's serial gathers (ds_config_zero3.json, "
    "stage3_prefetch_bucket_size 'auto' = 0.9 h^2, under one weight); alone they land this row (-2.3%) "
    "but take 4k out (-17.8%), so the rest is the efficiency rising with width (0.66 implied), which no "
    "source gives. (c) a ZeRO-3 prefetch field would carry the gathers; not landed for the 4k row). "
)

RELABEL48_QWEN72B_8K = (
    "UNEXPLAINED (relabelA48: rechecked at 1,332.5, -17.9%. The 'EXPLAINED' below is withdrawn: the "
    "six-length line is fitted on these rows, and the efficiency rise with width it implies (0.66 at d "
    "8,192 against the width form's 0.503) has no source. Best lead: a per-layer cost of the eager HF "
    "PEFT step that larger matmuls amortize, sized only by hand on fit rows). "
)

RELABEL48_GAUDI2_1_18 = (
    "UNEXPLAINED (relabelA48: rechecked at 43,396.5, +19.5%. (a)/(b) fail: the located cause, this run's "
    "27% bf16 share (attention core and output layer), has no published Gaudi 2 attention or 8k timing to"
    " size it, and the row is one of the four the Gaudi 2 fp8 efficiency is chosen on, so a split would "
    "be fitted on it (accel43, reverted). Best lead: an independent Gaudi 2 bf16 attention rate). "
)

RELABEL48_GAUDI2_1_19 = (
    "UNEXPLAINED (relabelA48: rechecked at 43,396.5, +15.9%; as the 1.18 row: the bf16 share located, not"
    " sized by any published Gaudi 2 timing). "
)

# accel48: a located, sized lead ruled out by a passing row (test_outside_gaudi_mesh_stop48.py).
ACCEL48_GAUDI2_MESH = (
    "accel48: still 43,396.5 (unchanged). Ruled out as the cause: Gaudi 2's in-box all-to-all mesh (docs.habana.ai "
    "Management_and_Monitoring/Network_Configuration: 21 scale-up ports, 3 to each of the 7 peers in the box; its "
    "note: the Gaudi 2 is the same at 100 Gb/s, 262.5 GB/s scale-up a direction), which gives a tensor-parallel group of n "
    "cards 37.5 (n - 1) GB/s a direction where the product prices every group at the card's 300: on the mesh this "
    "row (TP 4) reads -3.4% (1.18) / -6.3% (1.19) and the TP 8 3.1 70B stays inside (-8.9% / -8.2%), but the "
    "passing TP 2 Llama 2 13B goes to -20.1% / -21.6% (the mesh makes TP seconds per FLOP independent of the "
    "group, about 1 / d, so it cannot charge the 8B and spare the 13B). No second Gaudi 2 8k or bf16-attention "
    "figure found (Intel's pages, HabanaAI/Megatron-DeepSpeed @891d6db, arXiv:2501.00210 / 2502.01070 "
    "excerpts). "
)

RELABEL48_B200_H100_LORA = (
    "UNEXPLAINED (relabelA48: now 2.825x against 2.380, +18.7%: 1.155 of the direct 2.446, the chained "
    "ratio 3% lower as below. The 'EXPLAINED' below is withdrawn: the arithmetic splits the ratio into "
    "two per-card errors inside 15% "
    "(test_mlperf_lora_each_card_within_15_percent_of_its_rounds_training_throughput passes), but neither"
    " error has a mechanism from a source, so (a) fails; no spec field moves the ratio). "
)


CASES = json.loads((Path(__file__).parent / "cases.json").read_text(encoding="utf-8"))["cases"]
TOP = 5
WIDE = 200  # a measurement test reads the spec's own plan wherever it ranks, not only in the top five
GIB = 2**30
GEFORCE = {"rtx-3090", "rtx-4090", "rtx-5090"}  # consumer cards: no PCIe peer-to-peer since the 40 series
FORTY_EIGHT_GB_CARDS = ("rtx-a6000", "l40s", "a40", "rtx-6000-ada", "l40")
# Words by which a row says its GPUs talk through the host, or that it is split over consumer cards.
LINK_FLAG_WORDS = ("peer", "p2p", "host-staged", "host staged", "consumer", "geforce")


def ranked(case_id: str, top: int = TOP, spec_changes: dict | None = None, **options) -> list[dict]:
    """The top rows of a case, ranked the way `manage.py recommend` ranks them."""
    case = CASES[case_id]
    spec = workload_spec_parse(copy.deepcopy(case["spec"]) | (spec_changes or {}))
    parsed = ranking_options_parse({"top": top} | case["options"] | options)
    return recommendation_compute(spec=spec, options=parsed).as_report()["results"]


def sized(case_id: str, gpus: list[str]) -> dict:
    """The case sized the way `manage.py size` sizes it, on the given GPU models."""
    return size_spec_document(copy.deepcopy(CASES[case_id]["spec"]), gpus)


def candidate(report: dict, gpu: str, count: int) -> dict:
    return next(c for c in report["candidates"] if c["gpu"] == gpu and c["gpus"] == count)


def describe(rows: list[dict]) -> str:
    return "; ".join(
        f"{r['instances']}x{r['gpus_per_instance']} {r['gpu']} {r['plan']['name']} "
        f"(ZeRO-{r['plan']['zero_stage']}, TP {r['plan']['tensor_parallel']})"
        for r in rows
    )


def flagged_for_links(row: dict) -> bool:
    texts = [*row["warnings"], *row["reasons"], (row.get("interconnect") or {}).get("summary") or ""]
    return any(word in text.lower() for text in texts for word in LINK_FLAG_WORDS)


def p90_hours(row: dict) -> float | None:
    """A row's wall-clock P90: the row's side-by-side wall-clock figures where it has them, else the
    spot object's simulation."""
    wall = row.get("wall_clock") or {}
    if wall.get("p90_hours") is not None:
        return wall["p90_hours"]
    simulation = (row.get("spot") or {}).get("simulation") or {}
    return simulation.get("p90_hours")


def deadline_hours_of(row: dict) -> float | None:
    """The wall-clock hours a row is judged on for a deadline: the quantile at the stated probability
    (default 0.9, issue 26 class 1) where the row gives it, else its P90."""
    wall = row.get("wall_clock") or {}
    if wall.get("hours_at_probability") is not None:
        assert wall.get("probability") == pytest.approx(0.9), wall
        return wall["hours_at_probability"]
    return p90_hours(row)


def assert_meets_deadline(row: dict, deadline: float) -> None:
    """A row meets a deadline on wall-clock time at the stated probability (issue 26, class 1): a spot
    row by its simulated wall-clock quantile (checkpoint writes, reclaims, restarts) shown beside its
    compute hours; where spot alone is late, the row is the spot-with-on-demand-fallback plan, which meets
    the deadline at that probability and states its expected and worst-case cost."""
    assert row["hours"] <= deadline, describe([row])
    if row["pricing_model"] != "spot":
        return
    wall = deadline_hours_of(row)
    assert wall is not None, f"spot row without a wall-clock P90: {describe([row])}"
    if wall <= deadline:
        return
    plan = (row.get("spot") or {}).get("deadline_plan") or {}
    assert plan.get("available") and plan.get("meets_target"), f"late at P90 ({wall} h): {describe([row])}"
    assert plan.get("expected_cost") and plan.get("worst_case_cost"), plan


# --- QLoRA of a 65B model on one 48 GB card (QLoRA paper / artidoro/qlora README) -------------------------


@pytest.mark.django_db
def test_qlora_65b_rows_keep_the_one_gpu_the_spec_states(bundled_catalog):
    # The spec says parallelism.gpus: 1 (the paper's single 48 GB card); rows on 2 or 4 GPUs answer a
    # question the user did not ask (issue 26, class 3).
    rows = ranked("qlora_65b_one_48gb_card")
    assert rows and all(row["gpus"] == 1 for row in rows), describe(rows)


@pytest.mark.django_db
def test_qlora_65b_peak_lies_between_the_nf4_weights_and_48_gb(bundled_catalog):
    # NF4 + double quantization: 4.127 bits a parameter (QLoRA paper). The 65.3e9 parameters of LLaMA-65B
    # (80 x (4 x 8192^2 + 3 x 8192 x 22016) + 2 x 32000 x 8192) hold 65.3e9 x 4.127 / 8 B = 31.4 GiB; the
    # paper runs it on one 48 GB card (44.7 GiB), so the estimated peak lies between the two.
    params = 80 * (4 * 8192**2 + 3 * 8192 * 22016) + 2 * 32000 * 8192
    nf4_gib = params * 4.127 / 8 / GIB
    assert 31.3 < nf4_gib < 31.5
    rows = ranked("qlora_65b_one_48gb_card")
    assert rows
    assert nf4_gib <= rows[0]["memory_per_gpu_gib"] <= 48e9 / GIB


@pytest.mark.django_db
def test_qlora_65b_one_48gb_card_is_listed_with_its_margin(bundled_catalog):
    # The published run used one 48 GB card. With the default 20% headroom the peak (about 43 GiB) does not
    # leave the headroom on a 44.5 GiB card, so the one-card row is a tight fit that must be shown, with
    # its margin, rather than lost behind two- and four-GPU rows (issue 26, class 6).
    # In the top five a user reads, not somewhere below them: the one-card L40S row (g6e.xlarge) is the
    # cheapest way to run it and must not fall behind a top-5 cut of 2- and 4-GPU rows.
    rows = ranked("qlora_65b_one_48gb_card", gpus=list(FORTY_EIGHT_GB_CARDS))
    one_card = [row for row in rows if row["gpus"] == 1 and row["fits"]]
    assert one_card, describe(rows)
    # a tight row says so, with its margin, in its reasons
    assert all(any("tight" in reason for reason in row["reasons"]) for row in one_card if row["tight"])


# --- MLPerf Training reference: Llama-2-70B LoRA on 8 x A100 80GB (mlcommons/training llama2_70b_lora) ---


@pytest.mark.django_db
def test_mlperf_lora_70b_rows_keep_8_gpus_and_zero3(bundled_catalog):
    # configs/default_config.yaml: num_processes 8, zero_stage 3; the spec states both.
    rows = ranked("mlperf_lora_llama2_70b_8xa100")
    assert rows
    assert all(row["gpus"] == 8 and row["plan"]["zero_stage"] == 3 for row in rows), describe(rows)
    assert all(row["plan"]["tensor_parallel"] == 1 for row in rows), describe(rows)


# fixrev43: why the cases lora43 had fixed are strict xfails again (aud43l, test_outside_audit_stop43l.py).
LORA43_REVERTED = (
    "fixrev43: lora43 put it inside with an eager adapter-kernel term (98 x 31 us a layer and micro-batch, added to "
    "the GPU time) charged only on this A100 SXM row, refitted 0.47 -> 0.56; reverted after the outside audit "
    "aud43l: the same PEFT stack was then priced differently by card (A100 PCIe over SXM 0.63x at 256 tokens to "
    "1.54x at 8k; H100 3.5-6.4x the A100), and the README's 256-token rows show a host floor of ~5 ms a layer that "
    "the GPU's work hides (a max, not a sum), which the sum form overcharged on wide models (Qwen 7B / 14B at 512 "
    "tokens -16%) and undercharged on the 1.8B (+45% at 256)"
)


@pytest.mark.django_db
@pytest.mark.xfail(
    strict=True,
    reason=RELABEL48_MLPERF_LORA_HOURS
    + "moe42: 3.11 h against the reference log's 2.40 h (+29%); passed at 2.82 h (+17%) before. The FLOP count "
    "no longer charges the input embedding (a lookup) nor a recomputed forward of the frozen output layer, which "
    "moves Llama 2 70B's FLOPs 0.5% (32,000 x 8,192 tables) but moved the A100 LoRA efficiency's own fit rows, "
    "Qwen-7B's steps, 10% (151,936 x 4,096 tables): refitted on them, 0.52 -> 0.47. This run alone implies 0.61; the "
    "README's Qwen-72B steps 0.66 (ZERO3_LONG): on the A100 the LoRA efficiency rises with width, which one "
    "fitted figure cannot give (unexplained in mechanism, see the Qwen-72B notes). "
    + LORA43_REVERTED
    + ": 3.107 "
    "h again (+29.4%; 2.62 h, +9.3%, under lora43). lw44: 2.90 h (+21.0%, the bar is 20%) with the Ampere width "
    "form on the row (x 1.070 at d 8,192, efficiency.measured_width_factor): a third of the rise the run implies.",
)
def test_mlperf_lora_70b_hours_on_8_a100_match_the_reference_step_time(bundled_catalog):
    # convergence_example.txt: 440 steps at 19.6-19.7 s/it on 8 x A100 80GB (ZeRO-3, seq 8192, batch 1 per
    # GPU = 65,536 tokens a step): 440 x 19.65 s = 8,646 s = 2.40 h, i.e. 3,335 tokens/s. Within 20%.
    # Was a strict xfail at 3.67 h under the 40% datacenter MFU. LoRA on the A100 80GB in bf16 now runs at
    # 0.52 (procurement/data/measured_efficiency.csv), fitted on Qwen-7B LoRA on one A100 (QwenLM/Qwen
    # README), not on this run: 2.82 h, +17%. This run alone implies 0.61 (torchtune's 8 x A100 Llama 3.1
    # 70B LoRA, 3,497 tokens/s, likewise), so the fit is on the cautious side of it.
    published = CASES["mlperf_lora_llama2_70b_8xa100"]["published"]
    hours = published["steps"] * published["seconds_per_step"] / 3600
    assert hours == pytest.approx(2.4017, abs=1e-3)
    rows = ranked(
        "mlperf_lora_llama2_70b_8xa100", top=WIDE, gpus=["a100-sxm4-80gb"], pricing_models=["on_demand"]
    )
    rows = [row for row in rows if row["gpus"] == 8 and row["plan"]["zero_stage"] == 3]
    assert rows, "no 8 x A100 80GB ZeRO-3 row"
    assert rows[0]["hours"] == pytest.approx(hours, rel=0.20)
    # the row names where its speed comes from (issue 26, class 5)
    assert any(reason.startswith("speed from: a100-sxm4-80gb lora") for reason in rows[0]["reasons"])


# --- LoRA on the A100 at Qwen's measured speed (QwenLM/Qwen README @03cd81f5, "Profiling of Memory and Speed")
# One A100-SXM4-80G, CUDA 11.8, PyTorch 2.0, FlashAttention 2, HF PEFT on all linear layers, gradient
# checkpointing (finetune/finetune_lora_single_gpu.sh), batch 1 x 8 accumulation a GPU, seconds an
# optimizer step. The 0.52 A100 LoRA efficiency is the median of the four Qwen-7B lengths; Qwen-14B and
# Qwen-72B (ZeRO-3 on 4 GPUs) check it. Shapes: Qwen-14B is Llama-2-13B's 40 x 5120 with intermediate 13,696
# and a 152,064-token vocabulary; Qwen-72B is 80 x 8192, 64 KV heads (no GQA), intermediate 24,576.
QWEN_SHAPES = {
    "14b": {"preset": "llama-2-13b", "intermediate_size": 13696, "vocab_size": 152064, "name": "Qwen-14B"},
    "72b": {
        "preset": "llama-2-70b",
        "num_key_value_heads": 64,
        "intermediate_size": 24576,
        "vocab_size": 152064,
        "name": "Qwen-72B",
    },
}


def qwen_lora_spec(model: dict, seq: int, gpus: int, *, qlora: bool = False) -> dict:
    """The Qwen README's LoRA run (QwenLM/Qwen finetune section): bf16, micro-batch 1, 8 accumulation steps, rank
    64, full checkpointing; ZeRO-3 on more than one GPU. lw44: stated as it ran (aud44 flag 6), a Qwen-1 QWenBlock
    (model.eager_layer qwen1) with finetune.py's LoraArguments (QwenLM/Qwen @00dceebb: lora_target_modules c_attn,
    c_proj, w1, w2 -> qkv_fused, o, down, up, gate; lora_dropout 0.05), not an all-linear Llama layer.
    lora48: on one GPU the LoRA run is finetune/finetune_lora_single_gpu.sh (QwenLM/Qwen @e8e15962: --bf16 True,
    no --deepspeed), so torch autocast runs the step (the README: "For single-GPU training, we have to use DeepSpeed
    for mixed-precision training due to our observation of errors caused by torch amp", said of Q-LoRA) over peft
    0.5's fp32 adapters (the README's PyTorch 2.0 pairs with "peft>=0.5.0,<0.6.0"; the 7B / 14B rows, e6f2a7a of
    2023-10-11, predate peft 0.6.0 of 2023-11-02): lora.adapter_dtype fp32 (lora_host). Not stated for the ZeRO-3
    runs (finetune_lora_ds.sh, DeepSpeed's own bf16) nor for Q-LoRA (qlora=True: finetune_qlora_single_gpu.sh runs
    --fp16 under DeepSpeed ZeRO-2, not autocast).
    qwenmem (stop 50): the same autocast runs the loss of Qwen-1's own QWenLMHeadModel.forward (bf16 lm_logits, the
    shifted `.contiguous()` copy, nn.CrossEntropyLoss: mapengAdam/qianwen-72B@3334bfe3 modeling_qwen.py) with
    log_softmax in fp32: cross_entropy shifted_autocast, 12 bytes x V a token (bytes_model.logits_bytes_per_token),
    on the same single-GPU runs only.
    fix50q (aud50q item 5): the ZeRO-3 runs (finetune_lora_ds.sh, DeepSpeed's bf16) and Q-LoRA
    (finetune_qlora_single_gpu.sh, DeepSpeed's fp16) run the same model loss without autocast, log_softmax in
    16 bits: cross_entropy shifted_16bit, 6 bytes x V a token.
    qwenq (stop 51): Q-LoRA runs under DeepSpeed ZeRO-2 on one GPU as on several (finetune_qlora_single_gpu.sh and
    finetune_qlora_ds.sh both pass --deepspeed finetune/ds_config_zero2.json, unchanged since af22d5e of
    2023-09-11: "stage": 2, "reduce_bucket_size": 2e8, "overlap_comm": true, contiguous_gradients true), so it is
    stated as run: zero_stage 2 with DeepSpeed's two 2e8-element fp16 gradient buckets (memory.py).
    zstep (stop 51): ds_config_zero2.json (af22d5e) also has an optimizer block ("type": "AdamW"), which DeepSpeed
    builds as its FusedAdam (engine.py _configure_basic_optimizer; fix50o's reading for finetune_lora_ds.sh), so
    Q-LoRA states optimizer_impl deepspeed_fused: no step temporaries at ZeRO-2's step peak (memory.py
    _gradients_at_zero_step_peak). Nothing else read it on these plans (speed prices no fp32-adapter step)."""
    single_gpu_autocast = gpus == 1 and not qlora
    parallelism = {"gpus": gpus, "zero_stage": 3 if gpus > 1 else 0}
    optimizer = {}
    if qlora:
        parallelism = {"gpus": gpus, "zero_stage": 2, "reduce_bucket_size": 200_000_000, "overlap_comm": True}
        optimizer = {"optimizer_impl": "deepspeed_fused"}
    adapters = {"adapter_dtype": "fp32"} if single_gpu_autocast else {}
    loss = {"cross_entropy": "shifted_autocast" if single_gpu_autocast else "shifted_16bit"} | optimizer
    return loss | {
        "task": "lora",
        "model": model | {"eager_layer": "qwen1"},
        "precision": "bf16",
        "seq_len": seq,
        "micro_batch_size": 1,
        "gradient_checkpointing": "full",
        "lora": {"rank": 64, "targets": ["c_attn", "c_proj", "w1", "w2"], "dropout": 0.05} | adapters,
        "parallelism": parallelism,
        "gradient_accumulation_steps": 8,
        "training_tokens": 1e7,
        "torch_version": "2.0",  # optstep: the README's "Pytorch 2.0" (foreach AdamW's two step temporaries)
    }


QWEN_SECONDS_PER_STEP = {
    ("14b", 1024): 4.4,
    ("14b", 2048): 8.4,
    ("14b", 4096): 17.0,
    ("14b", 8192): 36.0,
    ("72b", 1024): 29.4,
    ("72b", 2048): 45.7,
    ("72b", 4096): 83.4,
    ("72b", 8192): 161.5,
}
# The four 72B steps fit one line within 2% each: 0.771 x the engine's compute seconds + 11.5 s a step (engine
# steps 22.4 / 45.4 / 93.0 / 194.6 s against 29.4 / 45.7 / 83.4 / 161.5 s): a fixed cost the engine hides and
# compute that runs faster than the 7B's fit. 11.5 s over 8 micro-batches x 80 layers x 2 gathers is 9 ms per
# gather of a 1.74 GB bf16 layer (872M parameters), 145 GB/s of bus bandwidth, within NVLink's reach (the
# engine prices 7.5 s of gathers a step, hidden under COMM_OVERLAP). Serial gathers alone would take 1k to +2% and 8k to -20%; the
# compute (0.52 / 0.771 = 0.67 of peak) is what the 7B fit cannot give: MPT's sweep is flat in width above
# d 4,096 (mfu.width_ceiling binds only on narrow models), and Qwen-7B's own steps rise with length (0.45 at 1k to
# 0.55 at 8k) as a fixed per-layer cost of the eager HF PEFT step would make them, which a 72B layer's 4x
# larger matmuls shrink. No single change of the ZeRO-3 or efficiency model fixes both ends. Both together
# would (mfu26, by hand, not in the engine): 1 / efficiency = 1 / 0.587 + 6.86e11 / (seq x FLOPs a token and
# layer), fitted on Qwen-7B's and Qwen-14B's single-GPU steps (each within 6%), gives the 72B 0.548-0.582,
# and with its 7.5 s of gathers serial the four 72B lengths come out +2%, -7%, -9%, -11%. Serial gathers
# would move every ZeRO-3/FSDP case (MLPerf 70B LoRA, TinyLlama's FSDP pretraining), which FSDP's prefetch
# overlaps better than DeepSpeed does; the spec does not say which framework runs.
# Stop 41: the README's same table has two shorter 72B lengths the fit above did not use, 256 tokens 17.6 s and 512
# tokens 20.5 s a step. The fit predicts 18.7 s (+6.3%) and 20.1 s (-1.8%): six lengths, two out of sample, on one
# line of 0.771 x the engine's step + 11.5 s (test_qwen72b_steps_are_a_fixed_cost_plus_scaled_compute). At 256
# tokens the fixed part is 11.5 of 17.6 s. A length-independent 1.44 s a micro-batch is the size of ZeRO-3's
# two passes of parameter gathers under checkpointing (QwenLM/Qwen finetune/ds_config_zero3.json:
# stage3_max_live_parameters 1e9 keeps about one 0.87e9-parameter layer gathered, so every layer is gathered for
# the forward and again for the recomputed forward, whose backward reuses it): 2 x 3/4 x 144.6 GB of bf16
# weights = 217 GB received a GPU a micro-batch, at 150 GB/s. The engine counts 5.4 s of gathers a step (57% of
# its 9.35 s step at 256 tokens) and exposes only 3.8 s of them there.
# moe42: with the FLOP count fixed (the input embedding a lookup, the frozen output layer 4 FLOPs a weight) and the
# A100 LoRA efficiency refitted on Qwen-7B (0.52 -> 0.47), the engine's 72B steps are 9.5 / 12.05 / 24.25 / 49.11 /
# 100.61 / 210.83 s; the same least squares over 1k-8k gives 0.711 x step + 11.6 s (each of the six within 4.3%): the
# 72B's compute at 0.47 / 0.711 = 0.66 of peak, the fixed part unchanged.
QWEN72B_PUBLISHED_STEPS = {256: 17.6, 512: 20.5, 1024: 29.4, 2048: 45.7, 4096: 83.4, 8192: 161.5}
ZERO3_SHORT = pytest.mark.xfail(
    strict=True,
    reason=RELABEL48_QWEN72B_1K
    + "Qwen-72B LoRA, ZeRO-3 on 4 A100s at 1k: engine 1,351 tokens/s against 1,115 (+21%; moe42, was 1,461, "
    "+31%, before the FLOP count fix and the 0.47 refit). EXPLAINED: the "
    "README's six 72B lengths (256 to 8k; 256 and 512 out of sample) lie on 0.711 x the engine's step + 11.6 s "
    "(0.771 and 11.5 before moe42), "
    "each within 6.3% (test_qwen72b_steps_are_a_fixed_cost_plus_scaled_compute): a length-independent 11.5 s a "
    "step (1.44 s a micro-batch, 11.5 of the 17.6 s step at 256 tokens) that the engine hides under compute "
    "(COMM_OVERLAP) and at 1k is 39% of the step. Its size is ZeRO-3's two gather passes of the frozen bf16 "
    "weights a micro-batch under checkpointing (217 GB received a GPU at 150 GB/s). Serial gathers alone fix 1k "
    "(+2%) and take 8k to -20% (ZERO3_LONG); the spec cannot say DeepSpeed (serial) from FSDP (prefetched). "
    "fixrev43: 1,351.0 (+21.2%) again; +31.8% (1,469.4) under lora43's kernel term and 0.56, both reverted (aud43l). "
    "lw44: 1,446.2 (+29.8%; 1,447.9, +29.9%, with the spec stated as run: Qwen-1 targets) once the A100 LoRA row scales with width (x 1.070 at d 8,192, "
    "efficiency.measured_width_factor): the compute shrinks and the fixed gathers, which the engine hides, are more "
    "of the step. QwenLM/Qwen finetune/ds_config_zero3.json (unchanged since af22d5e, 2023-09-11, so as at @03cd81f5): "
    "overlap_comm true, but stage3_prefetch_bucket_size 'auto', which transformers' DeepSpeed integration sets to "
    "0.9 x hidden_size^2 = 60.4M parameters for d 8,192, under one 201M-parameter w1/w2 weight and 1/14 of an "
    "872M-parameter layer: the prefetch cannot run a module ahead, so the gathers are serial in effect. Not landed: "
    "serial gathers (a scratch switch, not committed) take 1k / 2k / 4k / 8k to -2.3 / -14.3 / -17.8 / -21.0%: 1k in, 4k "
    "back out",
)
ZERO3_LONG = pytest.mark.xfail(
    strict=True,
    reason=RELABEL48_QWEN72B_8K
    + "Qwen-72B LoRA, ZeRO-3 on 4 A100s at 8k: engine 1,243 tokens/s against 1,623 (-23%; moe42, was 1,347, "
    "-17%, before the FLOP count fix and the 0.47 refit). EXPLAINED by "
    "the same six-length line: the slope 0.711 puts the 72B's compute at 0.47 / 0.711 = 0.66 of peak where the "
    "A100 LoRA efficiency (0.47) is Qwen-7B's median; on one stack the README's steps imply an efficiency "
    "rising with width (Qwen-7B d 4,096: 0.41-0.50 in moe42's count, Qwen-72B d 8,192: 0.66), as a per-layer "
    "cost of the eager HF PEFT step that larger matmuls amortize would. Not a product change yet: a per-layer "
    "cost fitted on Qwen-7B and -14B with serial ZeRO-3 gathers puts the four lengths at +2/-7/-9/-11% by "
    "hand (comment above), but moves every ZeRO-3/FSDP case. " + LORA43_REVERTED + ": 1,243.4 (-23.4%) again "
    "(1,465.4, -9.7%, under lora43). lw44: 1,331.0 (-18.0%; 1,332.5, -17.9%, stated as run) with the Ampere width form on the A100 LoRA row (x 1.070 "
    "at d 8,192, 0.503 of peak, k 621 from llm-foundry's MPT A100 sweep): the MPT sweep's width term is a third "
    "of the rise the README's 72B implies (0.66); the rest UNEXPLAINED.",
)

ZERO3_MID = pytest.mark.xfail(
    strict=True,
    reason="Qwen-72B LoRA, ZeRO-3 on 4 A100s at 4k: engine 1,303 tokens/s against 1,572 (-17.1%). Was passing at "
    "-11% (1,398) before moe42: the FLOP count no longer charges the 152,064 x 8,192 input embedding (a lookup) and "
    "charges the frozen output layer 4 FLOPs a weight, not 6 (Qwen-72B's FLOPs a token -2.2%), and the A100 LoRA "
    "efficiency, refitted on Qwen-7B's four steps where those tables were 10% of the FLOPs, fell 0.52 -> 0.47. "
    "EXPLAINED as ZERO3_LONG: the six lengths lie on 0.711 x the engine's step + 11.6 s; the slope puts the 72B's "
    "compute at 0.66 of peak against the 7B-fitted 0.47. " + LORA43_REVERTED + ": 1,302.7 (-17.1%) again "
    "(1,517.2, -3.5%, under lora43).",
)


def qwen72b_engine_step(seq: int) -> float:
    spec = {
        "task": "lora",
        "model": QWEN_SHAPES["72b"],
        "precision": "bf16",
        "seq_len": seq,
        "micro_batch_size": 1,
        "gradient_checkpointing": "full",
        "lora": {"rank": 64, "targets": "all-linear"},
        "parallelism": {"gpus": 4, "zero_stage": 3},
        "gradient_accumulation_steps": 8,
        "training_tokens": 1e7,
    }
    row = candidate(size_spec_document(spec, ["a100-sxm4-80gb"], calibrate=False), "a100-sxm4-80gb", 4)
    return 8 * 4 * seq / row["throughput"]["training_tokens_per_second"]


@pytest.mark.django_db
def test_qwen72b_steps_are_a_fixed_cost_plus_scaled_compute(bundled_catalog):
    # The explanation of ZERO3_SHORT and ZERO3_LONG: 0.711 x engine step + 11.6 s within 7% at all six lengths
    # (moe42: refitted on the same four lengths, 0.771 and 11.5 before the FLOP count fix and the 0.47 refit).
    for seq, published in QWEN72B_PUBLISHED_STEPS.items():
        assert 0.711 * qwen72b_engine_step(seq) + 11.6 == pytest.approx(published, rel=0.07), seq


@pytest.mark.parametrize(
    ("size", "seq"),
    [
        ("14b", 1024),
        ("14b", 2048),
        ("14b", 4096),
        ("14b", 8192),
        pytest.param("72b", 1024, marks=ZERO3_SHORT),
        ("72b", 2048),
        # Was a strict xfail (ZERO3_MID): 1,303 against 1,572 (-17.1%), the 7B-fitted 0.47 at d 8,192. Now 1,394.5
        # (-11.3%; step 94.0 s against 83.4; 1,396.1, -11.2%, with the spec stated as run: Qwen-1 targets) because lw44 scales the A100 LoRA row by the Ampere width form
        # (efficiency.measured_width_factor: (1 + 621 / 4,096) / (1 + 621 / 8,192) = 1.070, k from llm-foundry's MPT
        # A100 sweep): 0.503 of peak.
        ("72b", 4096),
        pytest.param("72b", 8192, marks=ZERO3_LONG),
    ],
)
@pytest.mark.django_db
def test_qwen_lora_on_a100_at_the_readmes_speed(size, seq, bundled_catalog):
    gpus = 1 if size == "14b" else 4  # the README's 72B LoRA runs DeepSpeed ZeRO-3 on 4 GPUs
    spec = qwen_lora_spec(QWEN_SHAPES[size], seq, gpus)
    published = 8 * gpus * seq / QWEN_SECONDS_PER_STEP[(size, seq)]  # tokens/s of all the GPUs
    report = size_spec_document(spec, ["a100-sxm4-80gb"], calibrate=False)
    row = candidate(report, "a100-sxm4-80gb", gpus)
    assert row["throughput"]["training_tokens_per_second"] == pytest.approx(published, rel=0.15)
    assert row["speed_basis"].startswith("speed from: a100-sxm4-80gb lora in bf16 at 47%")


# --- LoRA at NVIDIA's measured speed (NeMo performance summary, 8 x H100, FP8) ----------------------------
# docs.nvidia.com/nemo-framework/user-guide/24.12/nemotoolkit/performance/performance_summary.html,
# "Finetuning": SQuAD packed to 4,096 tokens, global batch 32, micro-batch 1, FP8 on 8 x H100:
# Llama 2 7B LoRA (TP 1, PP 1) 24,824 tokens/s/GPU; 13B LoRA (TP 1, PP 1) 14,629; 70B LoRA (TP 2, PP 4)
# 2,621. The engine's 40% datacenter MFU (assumptions.MFU_DATACENTER) was fitted on pretraining runs
# (LLaMA-65B, Llama 3 405B, Llama 2 7B), so these LoRA runs check it: by hand, 70B LoRA FLOPs a token
# 4N + attention = 4 x 68.98e9 + 3 x 2 x 80 x 4096 x 8192 = 2.92e11; 2,621 x 2.92e11 / 1,979e12 = 38.7% of
# FP8 peak (NeMo reports 722 model TFLOP/s/GPU, 36.5%, counting 4N without the attention term).
NEMO_LORA_H100 = {
    "llama-2-7b": ((1, 1), 24_824),
    "llama-2-13b": ((1, 1), 14_629),
    "llama-2-70b": ((2, 4), 2_621),
}


@pytest.mark.parametrize("preset", sorted(NEMO_LORA_H100))
@pytest.mark.django_db
def test_nemo_lora_throughput_on_8_h100_within_15_percent(preset, bundled_catalog):
    (tp, pp), per_gpu = NEMO_LORA_H100[preset]
    spec = {
        "task": "lora",
        "model": {"preset": preset},
        "precision": "fp8",
        "seq_len": 4096,
        "micro_batch_size": 1,
        "gradient_checkpointing": "none",
        "lora": {"rank": 16, "targets": ["q_proj", "k_proj", "v_proj", "o_proj"]},
        "parallelism": {"gpus": 8, "zero_stage": 0, "tensor_parallel": tp, "pipeline_parallel": pp},
        "gradient_accumulation_steps": 32 // (8 // (tp * pp)),
        "training_tokens": 1e7,
    }
    report = size_spec_document(spec, ["h100-sxm5-80gb"], calibrate=False)
    speed = candidate(report, "h100-sxm5-80gb", 8)["throughput"]["training_tokens_per_second"]
    assert speed / 8 == pytest.approx(per_gpu, rel=0.15)


# --- H200 against H100 on the same task (MLPerf Training v4.0, NVIDIA's closed submissions) ---------------
# mlcommons/training_results_v4.0 @6fe95437, NVIDIA/results/{eos,h200}_ngc24.04_nemo (one node of 8 x H100-SXM5-80GB
# and 8 x H200-SXM5-141GB, same NeMo 24.04 container). run_start..run_stop of the runs that stopped at the
# same sample count: Llama 2 70B LoRA, 3,072 samples of 8,192 tokens: H100 median 27.15 min (27.08-27.39),
# H200 23.55 min (23.43-23.58): 1.153x. The plans differ, and that is the gain: H100 runs TP 4 (DP 2),
# H200 TP 2 (DP 4), which its 141 GB allow (NVIDIA/benchmarks/llama2_70b_lora/implementations/nemo/
# config_DGXH100_1x8x4xtp4pp1cp1.sh, config_DGXH200_1x8x2xtp2pp1cp1.sh; FP8, micro-batch 1, batch 8).
# Stable Diffusion v2 on the SAME plan (config_DGXH{1,2}00_01x08x64.sh, 64 images a GPU): H100 42.27 min,
# H200 41.34 min (runs at the same evaluation): 1.02x. So the H200 trains at the H100's speed on a given
# plan (same 989 TFLOPS, same NVLink) and is faster where its memory buys a cheaper plan; a blanket H200
# training ratio would be wrong for the compute-bound half.
MLPERF_V40_LORA_H200_OVER_H100 = 27.145 / 23.55
MLPERF_V40_SD_H200_OVER_H100 = 42.27 / 41.34


def mlperf_v40_lora_spec(tensor_parallel: int) -> dict:
    """NVIDIA's MLPerf v4.0 Llama 2 70B LoRA run: FP8, 8k, micro-batch 1, global batch 8 on 8 GPUs.

    mlcommons/training_results_v4.0 @62f111b7, NVIDIA/benchmarks/llama2_70b_lora/implementations/nemo:
    conf/megatron_gpt_peft_tuning_config.yaml sets `fp8: ${FP8}` and `fp8_params: ${FP8}` (weights stored
    in fp8 by Transformer Engine), LoRA `target_modules: ['attention']`, no recomputation (ACG null), and
    both config_DGXH100_1x8x4xtp4pp1cp1.sh and config_DGXH200_1x8x2xtp2pp1cp1.sh export FP8=True."""
    return {
        "task": "lora",
        "model": {"preset": "llama-2-70b"},
        "precision": "fp8",
        "fp8_weights": True,
        "seq_len": 8192,
        "micro_batch_size": 1,
        "gradient_checkpointing": "none",
        "lora": {"rank": 16, "targets": ["q_proj", "k_proj", "v_proj", "o_proj"]},
        "parallelism": {"gpus": 8, "zero_stage": 0, "tensor_parallel": tensor_parallel},
        "gradient_accumulation_steps": tensor_parallel,  # 8 sequences over 8 / TP data-parallel ranks
        "training_tokens": 3072 * 8192,
    }


def lora_tokens_per_second(gpu: str, tensor_parallel: int) -> float:
    report = size_spec_document(mlperf_v40_lora_spec(tensor_parallel), [gpu], calibrate=False)
    return candidate(report, gpu, 8)["throughput"]["training_tokens_per_second"]


@pytest.mark.django_db
def test_h200_over_h100_lora_at_nvidias_mlperf_plans(bundled_catalog):
    # Each card on its submitted plan: the engine's ratio (1.142) within 5% of the measured 1.153.
    ratio = lora_tokens_per_second("h200-sxm-141gb", 2) / lora_tokens_per_second("h100-sxm5-80gb", 4)
    assert ratio == pytest.approx(MLPERF_V40_LORA_H200_OVER_H100, rel=0.05)


@pytest.mark.django_db
def test_h200_trains_at_h100_speed_on_the_same_plan(bundled_catalog):
    # Same plan, compute bound: MLPerf's SD v2 pair measured 1.02x; the engine's same-plan ratio within 5%.
    ratio = lora_tokens_per_second("h200-sxm-141gb", 4) / lora_tokens_per_second("h100-sxm5-80gb", 4)
    assert ratio == pytest.approx(MLPERF_V40_SD_H200_OVER_H100, rel=0.05)


# Stop 41, each card against its own round's training throughput (the mllog "tracked_stats" throughput, samples a
# second between evaluations, median of each run's values, median of the runs): MLPerf Training v5.0 @0fdc28f0,
# one node of 8 B200 on NVIDIA's TP 1 plan (FP8): NVIDIA nyx_n1_ngc25.04_nemo 5.289, Dell 1xXE9680Lx8B200 5.280,
# GigaComputing G893-SD1 5.264, Oracle 1xBM.GPU.B200.8 5.241: median 5.272; v4.0 @6fe95437 NVIDIA
# eos_ngc24.04_nemo (8 H100, TP 4) 2.155 and h200_ngc24.04_nemo (TP 2) 2.474. The engine: B200 TP 1 5.658 (+7.3%),
# H100 TP 4 1.965 (-8.8%): each inside the 15%, of opposite sign, so their ratio 2.878 is 1.073 / 0.912 = 1.18x the
# direct 5.272 / 2.155 = 2.446. The test's chained 2.38 is 3% under that direct ratio because it carries the v5.0
# H200 (TP 1 CP 2, 2.555 a second) back to v4.0 with v4.0's 1.153, while v5.0's software runs the H200 3% faster
# than v4.0's TP 2 (2.474).
B200_V50_SAMPLES_PER_SECOND = 5.272
H100_V40_SAMPLES_PER_SECOND = 2.155


@pytest.mark.parametrize(
    ("gpu", "tensor_parallel", "measured"),
    [("b200", 1, B200_V50_SAMPLES_PER_SECOND), ("h100-sxm5-80gb", 4, H100_V40_SAMPLES_PER_SECOND)],
)
@pytest.mark.django_db
def test_mlperf_lora_each_card_within_15_percent_of_its_rounds_training_throughput(
    gpu, tensor_parallel, measured, bundled_catalog
):
    # The explanation of the B200 / H100 ratio below: B200 +7.3%, H100 -8.8%.
    samples = lora_tokens_per_second(gpu, tensor_parallel) / 8192
    assert samples == pytest.approx(measured, rel=0.15)


@pytest.mark.xfail(
    strict=True,
    reason=RELABEL48_B200_H100_LORA
    + "B200 over H100 on Llama 2 70B LoRA, each on NVIDIA's submitted plan (B200 TP 1, config_DGXB200_"
    "1x8x1xtp1pp1cp1.sh; H100 TP 4): engine 2.88x against the measured 2.38x (+21%). EXPLAINED: the ratio of "
    "two per-card errors of opposite sign, each inside the 15% tolerance: against its own round's training "
    "throughput (mllog tracked_stats) the engine's B200 is +7.3% (5.658 against 5.272 samples a second, v5.0, "
    "four one-node B200 systems) and its H100 -8.8% (1.965 against 2.155, v4.0): 1.073 / 0.912 = 1.18 of the "
    "direct 2.446; the chained 2.38 is a further 3% lower because v5.0's software runs the H200 3% faster than "
    "v4.0 (2.555 against 2.474 samples a second). Checked by "
    "test_mlperf_lora_each_card_within_15_percent_of_its_rounds_training_throughput",
)
@pytest.mark.django_db
def test_b200_over_h100_lora_at_nvidias_mlperf_plans(bundled_catalog):
    measured = 281.0 / 136.1 * MLPERF_V40_LORA_H200_OVER_H100
    assert measured == pytest.approx(2.38, abs=0.01)
    ratio = lora_tokens_per_second("b200", 1) / lora_tokens_per_second("h100-sxm5-80gb", 4)
    assert ratio == pytest.approx(measured, rel=0.15)


@pytest.mark.django_db
def test_mlperf_v40_lora_on_8_h100_at_nvidias_measured_time(bundled_catalog):
    # The same H100 run in time: 3,072 samples of 8,192 tokens in 27.15 min (median), which includes the
    # run's evaluations (every 384 samples after the first 3), so the training alone is a little faster.
    # The engine at the 40% datacenter MFU on NVIDIA's plan (TP 4, FP8, no recomputation): 25.2 min, -7%.
    # (The engine puts this plan at 59.5 GiB a GPU: fp8 weights, and no inputs kept for the frozen MLP.)
    minutes = 3072 * 8192 / lora_tokens_per_second("h100-sxm5-80gb", 4) / 60
    assert minutes == pytest.approx(27.145, rel=0.15)


def mlperf_lora_ranked_rows() -> list[dict]:
    spec = mlperf_v40_lora_spec(1)
    spec["parallelism"] = {"gpus": 8}  # the user states the GPUs, not the plan
    # Every row (the API's most): the H200's TP 2 plan is a tight fit, ranked after every roomy row.
    parsed = ranking_options_parse(
        {"top": 500, "gpus": ["h100-sxm5-80gb", "h200-sxm-141gb"], "pricing_models": ["on_demand"]}
    )
    return recommendation_compute(spec=workload_spec_parse(spec), options=parsed).as_report()["results"]


def fastest_rows(rows: list[dict]) -> dict[str, dict]:
    return {
        gpu: min((row for row in rows if row["gpu"] == gpu), key=lambda row: row["hours"])
        for gpu in ("h100-sxm5-80gb", "h200-sxm-141gb")
    }


@pytest.mark.django_db
def test_ranking_puts_h200_ahead_of_h100_for_mlperf_lora(bundled_catalog):
    # Each card's fastest row is NVIDIA's plan (next test): H100 TP 4 at 25.2 min, H200 TP 2 at 22.0 min,
    # 1.144x against the measured 1.153x.
    fastest = {gpu: row["hours"] for gpu, row in fastest_rows(mlperf_lora_ranked_rows()).items()}
    assert fastest["h100-sxm5-80gb"] / fastest["h200-sxm-141gb"] == pytest.approx(
        MLPERF_V40_LORA_H200_OVER_H100, rel=0.05
    ), fastest


@pytest.mark.django_db
def test_ranking_runs_the_h200_on_a_finer_tp_plan_than_the_h100(bundled_catalog):
    # Each card's fastest row is NVIDIA's submitted plan (H100 TP 4, H200 TP 2; measured 1.153x). By hand:
    # weights with fp8_weights: 68,451,041,280 block-linear weights x 1 B + 525,606,912 embedding, head
    # and norm weights x 2 B + 65,536,000 fp32 adapters x 4 B = 69.76e9 B; LoRA on attention leaves
    # gate/up/down frozen, so a layer keeps 258,048 B a token (331,776 less their 2h input and the 2I
    # product feeding down); activations = 8,192 tokens x (80 x 258,048 + 4 B x 32,000 logits); adapter
    # gradients and AdamW states 65.5e6 x 12 B; overhead 0.6 GiB + 5% of the tensors.
    #   H100 TP 4: 16.24 + 39.62 + 0.18 = 56.05 GiB + 3.40 = 59.45 GiB; x 1.2 headroom = 71.3 < 79.6: roomy.
    #   H200 TP 2: 32.49 + 79.24 + 0.37 = 112.09 GiB + 6.20 = 118.30 GiB; x 1.2 = 142.0 > 140.4: a tight
    #   fit (NVIDIA's H200 run also stores activation inputs in fp8, FP8_ACTIVATION=True, which the engine
    #   does not model). Before fp8 weights and frozen-linear activations: 88.0 and 175.4 GiB, so each card
    #   ranked one TP step coarser (H100 TP 8 at 31.4 min, H200 TP 4 at 25.2 min, 1.248x).
    # Times: 25.2 and 22.0 min with every fp8 FLOP at the fp8 peak; 26.0 and 22.9 (1.136x; measured 27.15 and 23.55,
    # 1.153x) since fp826 runs the attention core and the output layer in bf16, the linears at 0.425 of it. int42
    # (mfu_fp8_linears_hopper refitted to 0.42 after moe42's FLOP count): 26.2 and 23.1 (1.135x).
    fastest = fastest_rows(mlperf_lora_ranked_rows())
    h100, h200 = fastest["h100-sxm5-80gb"], fastest["h200-sxm-141gb"]
    assert (h100["plan"]["tensor_parallel"], h200["plan"]["tensor_parallel"]) == (4, 2)
    assert h200["plan"]["name"] == "tensor_parallel_2" and h200["differs_from_spec"] == []
    assert h100["memory_per_gpu_gib"] == pytest.approx(59.45, abs=0.01) and not h100["tight"]
    assert h200["memory_per_gpu_gib"] == pytest.approx(118.30, abs=0.01) and h200["tight"]
    assert h100["hours"] * 60 == pytest.approx(26.2, abs=0.1)
    assert h200["hours"] * 60 == pytest.approx(23.1, abs=0.1)


# --- Llama 2 7B pretraining, 2T tokens (meta-llama/llama MODEL_CARD.md; docs/workload-spec.md example) ----


@pytest.mark.django_db
def test_llama2_7b_pretrain_rows_keep_64_gpus_and_zero1(bundled_catalog):
    # This is docs/workload-spec.md's own example ("Pre-training on 64 GPUs with ZeRO-1"): rows must keep the
    # stated 64 GPUs and ZeRO-1. Tensor parallelism is not stated, so the engine may choose it: by hand,
    # data parallel does not fit an 80 GB card at micro-batch 4 x 4096 (bf16 weights + grads 2 x 13.5 GB,
    # ZeRO-1 fp32 state 6.74e9 x 12 B / 64 = 1.3 GB, selective-recompute activations 34 x s x b x h =
    # 34 x 4096 x 4 x 4096 B = 2.3 GB a layer x 32 = 73 GB), so a TP row there is the sensible answer.
    rows = ranked("llama2_7b_pretrain_64_gpus_zero1")
    assert rows
    assert all(row["gpus"] == 64 and row["plan"]["zero_stage"] == 1 for row in rows), describe(rows)


@pytest.mark.django_db
def test_llama2_7b_pretrain_gpu_hours_match_the_model_card(bundled_catalog):
    # MODEL_CARD.md: Llama 2 7B, 184,320 A100-80GB GPU-hours for 2.0T tokens at 4k. GPU-hours of 64 GPUs
    # data parallel with ZeRO-1 within 20%, at micro-batch 1 (where data parallel fits 80 GB: 28 GB of
    # weights, grads and state + 34 x 4096 x 4096 B x 32 layers = 18 GB of activations). ZeRO-1 moves the
    # same bytes as plain data parallelism (ZeRO paper, section 7.2.1), so a ZeRO-0 row measures the same
    # speed where ZeRO-1 is not offered (that it is not is the contract test above).
    rows = ranked(
        "llama2_7b_pretrain_64_gpus_zero1",
        top=WIDE,
        spec_changes={"micro_batch_size": 1, "gradient_accumulation_steps": 16},  # still the 4M-token batch
        instance_counts=[8],
    )
    rows = [row for row in rows if row["gpus"] == 64 and row["plan"]["zero_stage"] in (0, 1)]
    rows = [row for row in rows if row["plan"]["tensor_parallel"] == 1]
    assert rows, "no 64-GPU data-parallel row"
    assert rows[0]["hours"] * 64 == pytest.approx(184_320, rel=0.20)


@pytest.mark.django_db
def test_llama2_7b_pretrain_with_a_three_month_deadline_keeps_the_plan_and_meets_it(bundled_catalog):
    # The same run with --deadline-hours 2190 (91 days) on any card: A100s need about 2,880 h on 64 GPUs
    # (184,320 / 64), so only faster cards qualify; the rows still run the spec's 64 GPUs with ZeRO-1, and a
    # spot row meets the deadline on its wall-clock P90, not on compute hours.
    rows = ranked("llama2_7b_pretrain_64_gpus_zero1", gpus=[], deadline_hours=2190)
    assert rows
    assert all(row["gpus"] == 64 and row["plan"]["zero_stage"] == 1 for row in rows), describe(rows)
    for row in rows:
        assert_meets_deadline(row, 2190)


# --- Llama 2 70B pretraining, 2T tokens (meta-llama/llama MODEL_CARD.md) ---------------------------------


@pytest.mark.django_db
def test_llama2_70b_pretrain_with_tp8_and_zero1_is_feasible_as_stated(bundled_catalog):
    # TP 8 inside each NVLink node, ZeRO-1 across 8 replicas: bf16 weights + grads 70e9 x 4 B / 8 = 32.6 GiB,
    # fp32 master + Adam 70e9 x 12 B / 64 = 12.2 GiB, plus activations (selective recomputation, 1/8 of them
    # per GPU under TP 8): under 80 GB. The ranking must find that plan (not an empty answer, not ZeRO-3).
    rows = ranked("llama2_70b_pretrain_tp8_zero1", instance_counts=[8])
    assert rows, "no feasible row for the stated TP 8 / ZeRO-1 plan"
    assert all(
        row["gpus"] == 64 and row["plan"]["tensor_parallel"] == 8 and row["plan"]["zero_stage"] == 1
        for row in rows
    ), describe(rows)


@pytest.mark.django_db
def test_llama2_70b_pretrain_gpu_hours_match_the_model_card(bundled_catalog):
    # MODEL_CARD.md: Llama 2 70B, 1,720,320 A100-80GB GPU-hours for 2.0T tokens at a 4M-token batch. The
    # Megatron-style plan (TP 8 in the node, ZeRO-1 across nodes, selective recomputation, 128 micro-batches
    # a step) on 64 A100 80GB: GPU-hours within 20% (issue 26, class 7 found 65-70B runs 20-26% high).
    rows = ranked("llama2_70b_pretrain_tp8_zero1", top=WIDE, instance_counts=[8])
    rows = [row for row in rows if row["gpus"] == 64 and row["plan"]["tensor_parallel"] == 8]
    rows = [row for row in rows if row["plan"]["zero_stage"] == 1]
    assert rows, "no 64-GPU TP 8 / ZeRO-1 row"
    assert rows[0]["hours"] * 64 == pytest.approx(1_720_320, rel=0.20)


# --- TinyLlama 1.1B on 16 x A100-40G, 300B tokens, with a deadline (TinyLlama README and paper) -----------


@pytest.mark.django_db
def test_tinyllama_rows_keep_16_gpus_and_fsdp(bundled_catalog):
    rows = ranked("tinyllama_pretrain_16xa100_deadline")
    assert rows
    assert all(row["gpus"] == 16 and row["plan"]["zero_stage"] == 3 for row in rows), describe(rows)


@pytest.mark.django_db
def test_tinyllama_gpu_hours_on_a100_40gb_match_the_paper(bundled_catalog):
    # TinyLlama: 3,456 A100 GPU-hours for 300B tokens (24,000 tokens/s per A100-40G: 3e11 / 24,000 / 3600 =
    # 3,472 GPU-hours). On the spec's 16 GPUs within 20%.
    assert 3e11 / 24_000 / 3600 == pytest.approx(3_472.2, abs=0.1)
    rows = ranked(
        "tinyllama_pretrain_16xa100_deadline", top=WIDE, gpus=["a100-sxm4-40gb"], instance_counts=[2]
    )
    rows = [row for row in rows if row["gpus"] == 16 and row["plan"]["zero_stage"] == 3]
    assert rows, "no 16-GPU A100 40GB row"
    assert rows[0]["hours"] * 16 == pytest.approx(3_456, rel=0.20)


@pytest.mark.django_db
def test_tinyllama_deadline_is_met_on_wall_clock_p90_by_every_spot_row(bundled_catalog):
    # --deadline-hours 300: a spot row meets it when its simulated wall-clock P90 (checkpoints, reclaims,
    # restarts) is within 300 h, at the default 90% probability (issue 26, class 1); compute hours alone
    # do not say it. Every spot row of the top five shows that P90 beside its compute hours.
    rows = ranked("tinyllama_pretrain_16xa100_deadline")
    assert rows
    for row in rows:
        assert_meets_deadline(row, 300)


@pytest.mark.django_db
def test_tinyllama_tight_deadline_ranks_spot_with_fallback_below_on_demand(bundled_catalog):
    # 16 x A100 40GB: about 234 h of compute, and spot alone finishes at P90 about 8 h later (checkpoint writes
    # and reclaims). A deadline halfway between the two leaves spot alone late, and the expert plan is spot
    # with a switch to the same shape on demand at the last safe moment: it meets the deadline and costs less
    # than on demand alone (the GCP a2-megagpu-16g spot row totals about 6,700 USD against about 10,200 on
    # demand). The deadline is read from the rows, so the premise holds as the speed model moves. Failed after
    # i26 (a run switched only at a reclaim, so with less slack than checkpoint writes no spot plan existed);
    # fixed on x26 in costing/spot_fallback.py (spot_run_limits: a voluntary switch at the last safe
    # checkpoint). Stated synchronous (host.checkpoint: sync, spot26): TinyLlama's pretraining script saves
    # with Lightning Fabric's blocking `fabric.save(checkpoint_path, state)` (jzhang38/TinyLlama
    # pretrain/tinyllama.py @01c9c77406ff1d41be4960674fe1f86cacf991b9); the default for 16-GPU full training
    # is an asynchronous save (docs/cost-model.md "Spot timing"), whose 1.4 s copies leave spot alone only
    # 0.26 h past the compute, under this test's premise of more than an hour.
    case, sync = "tinyllama_pretrain_16xa100_deadline", {"host": {"checkpoint": "sync"}}
    alone = ranked(case, spec_changes=sync, gpus=["a100-sxm4-40gb"], pricing_models=["spot"])
    assert alone
    compute, late = alone[0]["hours"], alone[0]["wall_clock"]["hours_at_probability"]
    assert late > compute + 1  # spot alone needs hours beyond the compute
    deadline = round((compute + late) / 2, 3)
    rows = ranked(case, spec_changes=sync, gpus=["a100-sxm4-40gb"], deadline_hours=deadline)
    fallback = [row for row in rows if row.get("ranked_as") == "spot_with_fallback"]
    on_demand = ranked(case, spec_changes=sync, gpus=["a100-sxm4-40gb"], pricing_models=["on_demand"])
    assert fallback, describe(rows)
    assert float(fallback[0]["total_cost"]) < min(float(row["total_cost"]) for row in on_demand)
    for row in fallback:
        assert_meets_deadline(row, deadline)


@pytest.mark.django_db
def test_training_rows_show_compute_hours_and_wall_clock_side_by_side(bundled_catalog):
    # Issue 26, class 1: every training row carries its compute hours and its wall-clock P50/P90; a spot
    # row's wall-clock is at least its compute hours (checkpoint writes and restarts only add time), an
    # on-demand row's equals them.
    for case_id in ("tinyllama_pretrain_16xa100_deadline", "alpaca_full_ft_spot_deadline"):
        for row in ranked(case_id, pricing_models=["on_demand", "spot"]):
            wall = row.get("wall_clock") or {}
            assert wall.get("compute_hours") == pytest.approx(row["hours"], abs=1e-3), row.get("wall_clock")
            assert wall["compute_hours"] <= wall["p50_hours"] <= wall["p90_hours"]
            if row["pricing_model"] != "spot":
                assert wall["p90_hours"] == pytest.approx(wall["compute_hours"], abs=1e-3)


# --- Alpaca: full fine-tune of a 7B on 8 x A100 80GB, spot with a deadline (tatsu-lab/stanford_alpaca) ----


@pytest.mark.django_db
def test_alpaca_rows_keep_8_gpus_and_fsdp(bundled_catalog):
    rows = ranked("alpaca_full_ft_spot_deadline")
    assert rows
    assert all(row["gpus"] == 8 and row["plan"]["zero_stage"] == 3 for row in rows), describe(rows)


@pytest.mark.django_db
def test_alpaca_spot_rows_meet_the_6_hour_deadline_at_p90(bundled_catalog):
    rows = ranked("alpaca_full_ft_spot_deadline")
    assert rows
    for row in rows:
        assert_meets_deadline(row, 6)


@pytest.mark.django_db
def test_alpaca_on_8_a100_is_not_slower_than_the_published_run(bundled_catalog):
    # Published: 3 h on 8 x A100 80GB for 52,002 examples x 3 epochs at most 512 tokens (79.9M tokens, an
    # upper bound); an estimate slower than the 2023 run for at most those tokens is wrong.
    assert 52_002 * 3 * 512 == 79_875_072
    rows = ranked(
        "alpaca_full_ft_spot_deadline", top=WIDE, gpus=["a100-sxm4-80gb"], pricing_models=["on_demand"]
    )
    rows = [row for row in rows if row["gpus"] == 8 and row["plan"]["zero_stage"] == 3]
    assert rows, "no 8 x A100 80GB row"
    assert rows[0]["hours"] <= 3.0


# --- BERT-base on SQuAD v1.1, one V100 16GB, 24 min (huggingface/transformers legacy QA README) ------------


@pytest.mark.django_db
def test_bert_base_squad_is_one_cheap_card(bundled_catalog):
    # 110M parameters at batch 12 x 384 ran on a 16 GB V100: one small card, a dollar or two.
    rows = ranked("bert_base_squad_one_card")
    assert rows and all(row["gpus"] == 1 for row in rows), describe(rows)
    assert float(rows[0]["total_cost"]) <= 2.0
    assert all(row["memory_per_gpu_gib"] < 16e9 / GIB for row in rows)


@pytest.mark.django_db
def test_bert_base_squad_hours_on_v100_within_the_published_run(bundled_catalog):
    # 88,641 SQuAD features x 384 tokens x 2 epochs = 68,076,288 tokens in 24 min on one V100; those 24 min
    # include feature conversion and the evaluation pass, so the training compute lies between half of it
    # (0.2 h) and all of it (0.4 h).
    assert 88_641 * 384 * 2 == 68_076_288
    rows = ranked("bert_base_squad_one_card", gpus=["v100-sxm2-16gb"])
    assert rows
    assert 0.2 <= rows[0]["hours"] <= 0.4


# --- Serving at MLPerf latency targets (mlcommons/inference loadgen/mlperf.conf) --------------------------


@pytest.mark.django_db
def test_mixtral_rows_meet_mlperf_latency_and_hold_the_weights(bundled_catalog):
    # 46.7e9 bf16 parameters = 87.0 GiB of weights across each row's GPUs.
    rows = ranked("mixtral_serving_mlperf_latency")
    assert rows
    for row in rows:
        assert row["serving"]["time_to_first_token_ms"] <= 2000
        assert row["serving"]["time_per_output_token_ms"] <= 200
        assert row["memory_per_gpu_gib"] * row["gpus"] >= 46.7e9 * 2 / GIB


@pytest.mark.django_db
def test_mixtral_production_serving_split_over_geforce_cards_is_flagged(bundled_catalog):
    rows = ranked("mixtral_serving_mlperf_latency")
    split = [row for row in rows if row["gpu"] in GEFORCE and row["gpus"] > 1]
    assert all(flagged_for_links(row) for row in split), describe(split)


@pytest.mark.django_db
def test_llama2_70b_int4_fits_one_48gb_card(bundled_catalog):
    # AWQ int4: 68.7e9 block parameters x 0.5 B + 16-bit embeddings and head (2 x 32,000 x 8,192 x 2 B) = 35
    # GiB; one 48 GB card holds it with the KV of one 4k stream (1.25 GiB). A one-card row is in the top five.
    rows = ranked("llama2_70b_int4_one_48gb_card")
    one_card = [row for row in rows if row["gpus"] == 1]
    assert one_card, describe(rows)
    assert all(34 <= row["memory_per_gpu_gib"] <= 48e9 / GIB for row in one_card)


@pytest.mark.django_db
def test_llama2_70b_int4_split_over_geforce_cards_is_flagged(bundled_catalog):
    rows = ranked("llama2_70b_int4_one_48gb_card")
    split = [row for row in rows if row["gpu"] in GEFORCE and row["gpus"] > 1]
    assert all(flagged_for_links(row) for row in split), describe(split)


@pytest.mark.django_db
def test_llama2_70b_bf16_production_serving_not_split_silently_over_consumer_cards(bundled_catalog):
    # The first complaint: a new user got 16 x RTX 5090 split over PCIe for production 70B serving.
    # Asked for GeForce cards only, every row that splits the 131 GiB of bf16 weights over them says so
    # (PCIe without peer-to-peer), and none spreads one replica over instances without a cluster fabric.
    rows = ranked("llama2_70b_bf16_serving_mlperf_latency", gpus=sorted(GEFORCE))
    for row in rows:
        assert row["gpus"] > 1  # 131 GiB of weights never fit one 24-32 GB card
        assert flagged_for_links(row), describe([row])
        assert row["serving"]["time_to_first_token_ms"] <= 2000
        assert row["serving"]["time_per_output_token_ms"] <= 200
    every = ranked("llama2_70b_bf16_serving_mlperf_latency")
    split = [row for row in every if row["gpu"] in GEFORCE and row["gpus"] > 1]
    assert every and all(flagged_for_links(row) for row in split), describe(split)


# --- Compute counts attention (PaLM appendix B) ----------------------------------------------------------


@pytest.mark.django_db
def test_lora_8b_tokens_per_second_at_32k_pay_for_attention(bundled_catalog):
    # 6N = 6 x 8.03e9 = 48.2 GFLOP a token; attention 12 x L x H x Q x T = 12 x 32 x 32 x 128 x T:
    # 6.44 GFLOP at 4k (+13.4%), 51.5 GFLOP at 32k (+107%). The 32k/4k speed ratio on the same card lies
    # between 54.62 / 99.72 = 0.548 (full count) and 51.40 / 73.95 = 0.695 (causal kernels do half).
    per_token = 6 * 8.03e9
    attention = {t: 12 * 32 * 32 * 128 * t for t in (4096, 32768)}
    full = (per_token + attention[4096]) / (per_token + attention[32768])
    causal = (per_token + attention[4096] / 2) / (per_token + attention[32768] / 2)
    assert full == pytest.approx(0.548, abs=0.001) and causal == pytest.approx(0.695, abs=0.001)
    at_32k = sized("lora_8b_32k_attention", ["h100-sxm5-80gb"])
    short = copy.deepcopy(CASES["lora_8b_32k_attention"]["spec"]) | {"seq_len": 4096}
    at_4k = size_spec_document(short, ["h100-sxm5-80gb"])
    speed = {
        name: candidate(report, "h100-sxm5-80gb", 1)["throughput"]["training_tokens_per_second"]
        for name, report in (("32k", at_32k), ("4k", at_4k))
    }
    assert full - 0.01 <= speed["32k"] / speed["4k"] <= causal + 0.01, speed


# --- Accelerators at their measured speed (MLPerf Inference v4.1) ----------------------------------------


@pytest.mark.django_db
def test_mi300x_serves_llama2_70b_at_its_mlperf_speed_relative_to_h100(bundled_catalog):
    # MLPerf Inference v4.1, Llama 2 70B offline: 8 x MI300X 23,514.8 tokens/s, within 3-4% of 8 x H100:
    # a ratio of 0.96-0.97; the estimate within 15% of it (0.82-1.12), not the datasheet's 1.3x peak.
    report = sized("llama2_70b_serving_mi300x_vs_h100", ["h100-sxm5-80gb", "mi300x"])
    speed = {
        gpu: candidate(report, gpu, 8)["throughput"]["decode_tokens_per_second_total"]
        for gpu in ("h100-sxm5-80gb", "mi300x")
    }
    assert 0.82 <= speed["mi300x"] / speed["h100-sxm5-80gb"] <= 1.12, speed


@pytest.mark.django_db
def test_best_card_for_one_node_jobs_can_be_rented_alone(bundled_catalog):
    # A GB200 comes as one of the 72 GPUs of an NVL72 rack (NVIDIA GB200 NVL72 product page): never "the
    # best card" for one 8-GPU serving job or a one-GPU 8B LoRA (issue 26, class 5).
    serving = sized("llama2_70b_serving_mi300x_vs_h100", ["h100-sxm5-80gb", "mi300x", "b200", "gb200"])
    lora = size_spec_document(
        {"task": "lora", "model": {"preset": "llama-3.1-8b"}, "seq_len": 4096, "training_tokens": 1e8},
        ["h100-sxm5-80gb", "b200", "gb200", "gaudi3", "mi300x"],
    )
    assert serving["throughput"]["gpu"] != "gb200"
    assert lora["throughput"]["gpu"] != "gb200"


@pytest.mark.django_db
def test_gaudi2_pretrains_llama2_7b_at_intels_measured_speed(bundled_catalog):
    # Intel, Gaudi 2 model performance (SynapseAI 1.18): Llama 2 7B, 8 HPU, seq 4096, FP8: 68,464 tokens/s.
    # Was a strict xfail at 55,485 (-19%) under the generic 35% (MFU_WORKSTATION). Gaudi 2 FP8 pretraining
    # now runs at 0.42 of its 865 TFLOPS (procurement/data/measured_efficiency.csv), the median of the
    # efficiencies that reproduce Intel's four OTHER figures on the same page (13B 0.382, 3.1 70B 0.457,
    # 3.1 8B 0.327, 2 70B about 0.6), so this case checks the fit and took no part in it: 66,582 (-2.7%).
    # fp826: attention core and output layer at the bf16 peak, the row refitted by the same median rule to 0.45
    # (13B 0.409, 3.1 70B 0.495, 3.1 8B 0.385, 2 70B 0.61): 65,339 (-4.6%). accel43's two efficiencies (0.51 / 0.23)
    # moved it to 62,319.5 (-9.0%); reverted (fixrev43, after aud43l): 66,434.9 (-3.0%) again.
    report = sized("gaudi_measured_intel", ["gaudi2"])
    row = candidate(report, "gaudi2", 8)
    assert row["throughput"]["training_tokens_per_second"] == pytest.approx(68_464, rel=0.15)
    assert row["speed_basis"].startswith("speed from: gaudi2 pretrain in fp8 at 45%"), row["speed_basis"]
    assert "intel.com" in row["speed_basis"]


def gaudi2_intel_plan(preset: str, gpus: int, tp: int, pp: int, seq: int, micro: int, batch: int) -> dict:
    """One of Intel's Gaudi 2 FP8 pretraining runs as a spec, on the plan HabanaAI/Megatron-DeepSpeed's
    README publishes for it (ZeRO-1, HL_CKP_ACT=2: selective recomputation), at the page's global batch."""
    data_parallel = gpus // (tp * pp)
    return copy.deepcopy(CASES["gaudi_measured_intel"]["spec"]) | {
        "model": {"preset": preset},
        "seq_len": seq,
        "micro_batch_size": micro,
        "parallelism": {"gpus": gpus, "zero_stage": 1, "tensor_parallel": tp, "pipeline_parallel": pp},
        "gradient_accumulation_steps": batch // (data_parallel * micro),
    }


# Intel Gaudi 2 training page (SynapseAI 1.18, FP8), with the plans of HabanaAI/Megatron-DeepSpeed README:
# Llama 2 13B on 16 HPU (TP 2, PP 2, DP 4, micro-batch 2, batch 256): 58,282 tokens/s;
# Llama 3.1 70B on 64 HPU at 8k (TP 8, DP 8, batch 128): 43,677 tokens/s. Both are in the fit of the Gaudi 2
# efficiency (its median), so they guard against a change that moves one run and not the others.
GAUDI2_INTEL_RUNS = {
    "llama2_13b_16_hpu": (("llama-2-13b", 16, 2, 2, 4096, 2, 256), 58_282),
    "llama31_70b_64_hpu_8k": (("llama-3.1-70b", 64, 8, 1, 8192, 1, 128), 43_677),
}


@pytest.mark.parametrize("run", sorted(GAUDI2_INTEL_RUNS))
@pytest.mark.django_db
def test_gaudi2_pretraining_runs_on_intels_plans_within_15_percent(run, bundled_catalog):
    plan, published = GAUDI2_INTEL_RUNS[run]
    spec = gaudi2_intel_plan(*plan)
    report = size_spec_document(spec, ["gaudi2"], calibrate=False)
    speed = candidate(report, "gaudi2", plan[1])["throughput"]["training_tokens_per_second"]
    assert speed == pytest.approx(published, rel=0.15)


# Was a strict xfail: "engine 44,989 tokens/s against Intel's 36,309 (+24%) for Llama 3.1 8B at 8k on 8 HPU (TP 4,
# DP 2, batch 128, the README's plan) ... Its 128k-vocabulary output layer (1.05e9 of 8.0e9 parameters) and 8k
# attention are counted at the same efficiency as the blocks". Now 41,570 (+14.5%, just inside) (fp826): attention
# core and output layer at the 432 bf16 TFLOPS (sizing/fp8_split.py), the Gaudi 2 row refitted by its own median
# rule, 0.42 -> 0.45. This run is one of the four in that median (as before; an outer point, not the two the
# median takes), so it is not an independent check.
# fixrev43: why the Gaudi 2 3.1 8B at 8k rows are strict xfails again (aud43l, test_outside_audit_stop43l.py).
ACCEL43_REVERTED = (
    "fixrev43: accel43 put it inside by fitting the Gaudi 2 fp8 row as two efficiencies (fp8 linears 0.51, the bf16 "
    "attention core and output layer 0.23) on three rows, this one among them; reverted after the outside audit "
    "aud43l: a fit row, not a check, and the held-out Llama 2 7B moved away from Intel's figure (1.18 -3.0% -> "
    "-9.0%, 1.19 -5.8% -> -11.6%); the 27% bf16 share of this run's time (13% on the 13B and 3.1 70B) stays the "
    "located, unsized cause (no published Gaudi 2 attention timing). acc44: unchanged; Gaudi 2 runs at its peak "
    "times an efficiency already chosen by what its measurements matched (measured_efficiency.csv: part, task, "
    "precision; Intel's four Megatron-DeepSpeed fp8 runs), and a split by bf16 share or length would again be "
    "set on this row; no independent Gaudi 2 8k-context or attention figure was searched out at acc44. The spec "
    "could not state the cause."
)


@pytest.mark.django_db
@pytest.mark.xfail(
    strict=True,
    reason=RELABEL48_GAUDI2_1_18
    + ACCEL48_GAUDI2_MESH
    + "moe42: 43,396 tokens/s against Intel's 36,309 (+19.5%); passed at 41,570 (+14.5%, just inside) before. "
    "The FLOP count no longer charges the 128,256 x 4,096 input embedding (a lookup: 3.15e9 of 54.6e9 FLOPs a token "
    "at 8k, 5.8%); the Gaudi 2 fp8 efficiency's median rule over its four runs stays 0.45 (13B 0.404, 3.1 70B "
    "0.488 once their own embeddings leave the count: median 0.446), so this outer point of the median, whose "
    "128k-vocabulary table is the largest share of the four, moves fast by its own share. Not an independent check "
    "(it is one of the four rows); unexplained beyond that. "
    + ACCEL43_REVERTED
    + ": 43,396.5 (+19.5%) again "
    "(36,555.8, +0.7%, under accel43's split).",
)
def test_gaudi2_llama31_8b_at_8k_matches_intels_figure(bundled_catalog):
    spec = gaudi2_intel_plan("llama-3.1-8b", 8, 4, 1, 8192, 1, 128)
    report = size_spec_document(spec, ["gaudi2"], calibrate=False)
    speed = candidate(report, "gaudi2", 8)["throughput"]["training_tokens_per_second"]
    assert speed == pytest.approx(36_309, rel=0.15)


# accel43, a check outside the fit: the same Intel page (intel.com/content/www/us/en/developer/platform/gaudi/
# model-performance-gaudi2-training.html) at SynapseAI 1.19 (PyTorch 2.5.1), the same runs on newer
# software: 13B 59,397, Llama 3.1 70B 43,332, Llama 3.1 8B 37,440 tokens/s (Llama 2 70B 54,614 on its unpublished
# 64-HPU plan is left out, as from the fit). Product under accel43's split +5.7% / -9.4% / -2.4%; fixrev43 (the
# split reverted, one efficiency 0.45): 64,470.9 / 40,891.2 / 43,396.5 (+8.5% / -5.6% / +15.9%).
GAUDI2_INTEL_RUNS_1_19 = {
    "llama2_13b_16_hpu": (GAUDI2_INTEL_RUNS["llama2_13b_16_hpu"][0], 59_397),
    "llama31_70b_64_hpu_8k": (GAUDI2_INTEL_RUNS["llama31_70b_64_hpu_8k"][0], 43_332),
    "llama31_8b_8_hpu_8k": (("llama-3.1-8b", 8, 4, 1, 8192, 1, 128), 37_440),
}
GAUDI2_1_19_MISSES = {
    "llama31_8b_8_hpu_8k": RELABEL48_GAUDI2_1_19
    + ACCEL48_GAUDI2_MESH
    + "43,396.5 tokens/s against 37,440 at SynapseAI 1.19 (+15.9%; the 1.18 row +19.5%, "
    "test_gaudi2_llama31_8b_at_8k_matches_intels_figure); passed at 36,555.8 (-2.4%) under accel43's split, fitted "
    "on this run's 1.18 row. " + ACCEL43_REVERTED,
}


@pytest.mark.parametrize(
    "run",
    [
        pytest.param(run, marks=pytest.mark.xfail(strict=True, reason=GAUDI2_1_19_MISSES[run]))
        if run in GAUDI2_1_19_MISSES
        else run
        for run in sorted(GAUDI2_INTEL_RUNS_1_19)
    ],
)
@pytest.mark.django_db
def test_gaudi2_runs_at_synapseai_1_19_within_15_percent(run, bundled_catalog):
    plan, published = GAUDI2_INTEL_RUNS_1_19[run]
    report = size_spec_document(gaudi2_intel_plan(*plan), ["gaudi2"], calibrate=False)
    speed = candidate(report, "gaudi2", plan[1])["throughput"]["training_tokens_per_second"]
    assert speed == pytest.approx(published, rel=0.15)


@pytest.mark.django_db
def test_gaudi3_over_gaudi2_decode_matches_intels_measurements(bundled_catalog):
    # Intel's pages, same software (1.18), Llama 2 7B fp8, 128 in / 128 out, one HPU at its best batch:
    # Gaudi 3 19,810 tokens/s, Gaudi 2 13,137: a ratio of 1.508, within 15%. (Was a strict xfail at 1.16 while
    # one prefill-heavy ratio served both phases; measured_speed.csv now has a decode ratio of its own.)
    serving = CASES["gaudi_measured_intel"]["serving_spec"]
    report = size_spec_document(copy.deepcopy(serving), ["gaudi2", "gaudi3"])
    speed = {
        gpu: candidate(report, gpu, 1)["throughput"]["decode_tokens_per_second_total"]
        for gpu in ("gaudi2", "gaudi3")
    }
    assert speed["gaudi3"] / speed["gaudi2"] == pytest.approx(19_810 / 13_137, rel=0.15), speed
