"""audr2 (stop 52): issue 26's done-criterion run afresh by an outside GPU engineer choosing hardware for a team.
Mechanics as aud51r's module: each spec stated with docs/workload-spec.md's fields only, ranked through the service
`manage.py recommend SPEC --format json --top 5` runs (x26b `ranked`), the top five judged row by row: (1) the
stop-48 `row_problems` (row 1 fits with its margin shown, no rack-scale part first, no consumer split for serving,
the stated GPU count kept in training, every row's compute = price x hours x instances and total = its parts) plus
this module's checks (the stated parallelism on every row, latency targets met, the deadline met at P90 on
wall-clock); (2) on the publisher's own card (the same service with --gpu), speed within 15% and memory within 10%;
(3) every row rebuilt by hand from the CATALOG (the PriceObservation the row names: on-demand rows at its price,
spot rows at it x the multiplier the row prints), setup (1 h), storage (GB x rate x months recomputed from hours)
and reruns (20% of compute) to the cent (`rebuilt`). A miss is a strict xfail "UNEXPLAINED (audr2): ...".

Five published runs no test used (tests/ grepped for each source and figure: "buildkite", "1917.44", "2077.53",
"833.42", "866.77", "74.87", "23.85", "50.86", "26.85": none; aud51x's NIM 70B, Llama 3.2 1B, EasyContext and
spot rows avoided), one of each kind the brief lists:

  [VLLMNB]  vLLM's nightly performance benchmark, buildkite.com/vllm/performance-benchmark/builds/9515 (read in the
            docs corpus): "Latency tests - Input length: 32 tokens. - Output length: 128 tokens. - Batch size: fixed
            (8). - Models: llama-3.1 8B, llama-3 70B, mixtral 8x7B. - Evaluation metrics: end-to-end latency";
            "latency_llama70B_tp4 | H200 | 2077.53", "latency_llama8B_tp1 | H200 | 833.421",
            "latency_mixtral8x7B_tp2 | H200 | 1917.44" (mean latency, ms). vLLM's benchmark_latency generates the
            batch with max_tokens 128: one prefill step yields token 1, then 127 decode steps, so ours is TTFT +
            127 x TPOT. Production MoE serving; the latency targets (TTFT 500 ms, TPOT 25 ms) are ours, a team's
            SLO. dtype: the checkpoints' bf16 (vLLM's "auto"). The vLLM version of build 9515 is NOT on the page
            read: stated with the spec default (`inference.engine: compiled`); see R_VLLMNB.
  [AM70]    NVIDIA-NeMo/Automodel @36044ad3 docs/performance-summary.mdx line 25 ("System: DGX-H100, Precision:
            BF16"): "| Llama3 70B | 64 | 128 | 1 | 1 | 4 | 8192 | 1 | 1 | 2 | - | - | 32 | TE + fsdp2_prefetch |
            18.90 | 389 | 866.77 |" (#GPUs, GBS, MBS, LBS, GA, seq, TP, PP, CP, EP, VP, FSDP, kernels, s a global
            step, model TFLOPs/s/GPU, tokens/s/GPU; 128 x 8,192 / 18.90 / 64 = 866.8). Its config,
            examples/llm_benchmark/llama3_3/custom_llama3_1_70b_pretrain_benchmark_8nodes.yaml @36044ad3:
            meta-llama/Llama-3.1-70B, bf16, sdpa, fsdp2 with dp 32 x cp 2, activation_checkpointing True,
            enable_compile True, reshard_after_forward True, TE FusedAdam, mock data. Pretraining on a cluster with
            a deadline: 50B tokens (continued pretraining) in 14 days are ours; the table has no memory column.
            Not statable: torch.compile, TE's fused kernels, FSDP2 prefetch (no field; `training_stack` has no
            AutoModel value, so `other`).
  [SWIFT72] modelscope/ms-swift @46922151 docs/source_en/LLM/Benchmark.md, "Quantization" table (A100, CUDA 11.8,
            torch 2.1.1, flash_attn 2.3.4, bitsandbytes 0.41.3.post2; defaults max_length 2048, batch_size 1,
            gradient_checkpointing true, use_flash_attn true, lora_rank 8, lora_target_modules DEFAULT (Qwen-1's
            fused c_attn), gradient_accumulation_steps 16): "qwen-72b-chat | int4 (bnb) | 0.28 | 74.87" (samples/s,
            GPU Memory GiB); siblings "qwen-7b-chat | int4 (bnb) | 2.41 | 23.85", "qwen-14b-chat | int4 (bnb) |
            1.36 | 30.05". GPU Memory is ms-swift's get_max_cuda_memory: torch.cuda.max_memory_reserved / 1024**3
            (swift trainers, read via find_string id 1114682720), so ours less the CUDA context. QLoRA of a 72B on
            ONE card (the issue's 65-70B class). Speed is not judged: ms-swift deletes every sample longer than
            max_length (stop43h's cls45f reading of @6cfbc2ec argument.py truncation_strategy 'delete'), so the
            trained tokens a sample are unknown (a gap, no field states them). Stated as aud50q states ms-swift's
            Qwen-1 runs (cross_entropy shifted_autocast, torch_version 2.1.1, model.eager_layer qwen1).
  [QW64K]   QwenLM/Qwen2.5 @010c37c3 docs/source/benchmark/speed_benchmark.rst (read_file id 9548273640): "NVIDIA
            A100 80GB", "vLLM 0.6.3", "batch size of 1", "generating 2048 tokens"; 7B (vLLM): "| 63488 | BF16 | 1 |
            50.86 | setting-64k |", 14B: "| 63488 | BF16 | 1 | 26.85 | setting-64k |", "[Setting-64k]=
            (gpu_memory_utilization=0.9 max_model_len=65536 enforce_eager=False)". Long-context serving (>= 32k),
            speed read as 2,048 / (TTFT + 2,048 x TPOT) as the stop-48 [QW25Q] rows; vLLM 0.6.3 is V0
            (`inference.engine: vllm_v0`). Earlier modules use this page's <= 30,720 rows, never 63,488.
  [SPOT]    [SWIFT72]'s QLoRA as a spot job with a deadline: 20,000 samples of 2,048 tokens inside 24 h at P90,
            spot offers only (the job size and deadline are ours).
Bars: LLM memory 10%, LLM speed 15%.
"""

from __future__ import annotations

import re
from decimal import ROUND_HALF_UP, Decimal

import pytest

from pricing.models import PriceObservation
from procurement.sizing.assumptions import CUDA_CONTEXT_GIB
from tests.procurement.outside.test_outside_ranking_audit_stop48 import (
    LLM_MEMORY,
    LLM_SPEED,
    err,
    row_problems,
)
from tests.procurement.outside.test_outside_recommendations import QWEN_SHAPES
from tests.procurement.outside.test_outside_recommendations_x26b import ranked

A100, H100, H200 = "a100-sxm4-80gb", "h100-sxm5-80gb", "h200-sxm-141gb"
SETUP_HOURS = Decimal("1")  # docs/cost-model.md: setup 1.0 h for a batch job (0 for a serving month)
RERUN_FRACTION = Decimal("0.2")  # docs/cost-model.md: reruns 0.20 of compute for a batch job
RETENTION_MONTHS = Decimal(7 * 24) / Decimal(730)  # 7 days kept after the run


def serving(preset: str, concurrency: int, prompt: int, output: int, **extra) -> dict:
    spec = {
        "task": "inference",
        "model": {"preset": preset},
        "precision": "bf16",
        "inference": {"concurrency": concurrency, "context_len": prompt + output, "output_tokens": output},
    }
    return spec | extra


# --- specs, as the publishers ran them -----------------------------------------------------------------------------
MIXTRAL_NB = serving("mixtral-8x7b", 8, 32, 128, parallelism={"gpus": 2, "tensor_parallel": 2})
MIXTRAL_NB["inference"] |= {"ttft_ms": 500, "tpot_ms": 25}  # ours: the team's SLO
LLAMA70_NB = serving("llama-3-70b", 8, 32, 128, parallelism={"gpus": 4, "tensor_parallel": 4})
LLAMA8_NB = serving("llama-3.1-8b", 8, 32, 128)
PUB_VLLMNB_MS = {"mixtral": 1917.44, "llama70": 2077.53, "llama8": 833.421}
VLLMNB = {"mixtral": MIXTRAL_NB, "llama70": LLAMA70_NB, "llama8": LLAMA8_NB}

AM70 = {
    "task": "pretrain",
    "model": {"preset": "llama-3.1-70b"},
    "precision": "bf16",
    "seq_len": 8192,
    "micro_batch_size": 1,
    "gradient_accumulation_steps": 4,  # GBS 128 = 1 x 4 x dp 32
    "gradient_checkpointing": "full",  # activation_checkpointing: True
    "training_tokens": 50e9,  # ours
    "parallelism": {"gpus": 64, "zero_stage": 3, "context_parallel": 2},  # fsdp2, dp 32 x cp 2
}
AM70_DEADLINE_H = 14 * 24  # ours
PUB_AM70_TOKENS_PER_GPU_S = 866.77

SWIFT_SHAPES = {
    "72b": QWEN_SHAPES["72b"],
    "14b": QWEN_SHAPES["14b"],
    "7b": {"preset": "llama-2-7b", "vocab_size": 151936, "name": "Qwen-7B"},  # as stop43l states Qwen-7B
}
PUB_SWIFT_BNB_GIB = {"72b": 74.87, "14b": 30.05, "7b": 23.85}


def swift_qlora(size: str, samples: int = 20_000) -> dict:
    """ms-swift's benchmark run with --quantization_bit 4 (bitsandbytes NF4, double quant, bf16 compute)."""
    return {
        "task": "qlora",
        "model": SWIFT_SHAPES[size] | {"eager_layer": "qwen1"},
        "precision": "bf16",
        "weight_quantization": "nf4",
        "quantization": {"bnb_version": "0.41.3"},
        # as aud50q states ms-swift's Qwen-1 runs: the model's own loss under accelerate's autocast, torch 2.1.1
        "cross_entropy": "shifted_autocast",
        "torch_version": "2.1.1",
        "seq_len": 2048,
        "micro_batch_size": 1,
        "gradient_accumulation_steps": 16,
        "gradient_checkpointing": "full",
        "lora": {"rank": 8, "targets": ["c_attn"]},
        "parallelism": {"gpus": 1},
        "training_tokens": samples * 2048,  # ours: the job's size (the run's kept lengths are unpublished)
    }


SWIFT72 = swift_qlora("72b")
SPOT_DEADLINE_H = 24  # ours

QW64K = {
    size: {
        "task": "inference",
        "model": {"preset": f"qwen2.5-{size}"},
        "precision": "bf16",
        "inference": {
            "concurrency": 1,
            "context_len": 63488 + 2048,
            "output_tokens": 2048,
            "engine": "vllm_v0",
        },
    }
    for size in ("7b", "14b")
}
PUB_QW64K = {"7b": 50.86, "14b": 26.85}


# --- helpers ------------------------------------------------------------------------------------------------------
def cents(x: Decimal) -> Decimal:
    return x.quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)


def six(x: Decimal) -> Decimal:
    return x.quantize(Decimal("0.000001"), rounding=ROUND_HALF_UP)


def rebuilt(row: dict, serving_month: bool = False) -> list[str]:
    """Check (3) by hand: the catalog's price (the PriceObservation the row names), the effective price (spot: x the
    multiplier the row prints), compute, setup, storage (months recomputed from the row's hours) and reruns."""
    out = []
    basis = row["cost_basis"]
    catalog = PriceObservation.objects.get(pk=row["observation_id"]).amount_per_hour
    if Decimal(row["price_per_hour"]) != catalog:
        out.append(f"{row['instance_type']}: price {row['price_per_hour']} != catalog {catalog}")
    effective = Decimal(row["effective_price_per_hour"])
    if row["pricing_model"] == "spot":
        multiplier = Decimal(re.search(r"= [\d.]+ x ([\d.]+)\)", basis["compute"]["text"]).group(1))
        expected_effective = six(catalog * multiplier)
    else:
        expected_effective = catalog
    if effective != expected_effective:
        out.append(f"{row['instance_type']}: effective {effective} != {expected_effective}")
    hours, n = Decimal(str(row["hours"])), row["instances"]
    setup_h = Decimal("0") if serving_month else SETUP_HOURS
    rerun = Decimal("0") if serving_month else RERUN_FRACTION
    compute = cents(effective * hours * n)
    setup = cents(effective * setup_h * n)
    months = six((hours + setup_h) / Decimal(730) + RETENTION_MONTHS)
    storage = cents(Decimal(basis["storage"]["gb"]) * Decimal(basis["storage"]["rate_per_gb_month"]) * months)
    reruns = cents(rerun * compute)
    b = row["cost_breakdown"]
    for name, ours in (("compute", compute), ("setup", setup), ("storage", storage), ("reruns", reruns)):
        if Decimal(b[name]) != ours:
            out.append(f"{row['instance_type']}: {name} {b[name]} != hand {ours}")
    if Decimal(str(row["total_cost"])) != compute + setup + storage + reruns:
        out.append(
            f"{row['instance_type']}: total {row['total_cost']} != hand {compute + setup + storage + reruns}"
        )
    return out


def top5(spec: dict, **options) -> list[dict]:
    rows = ranked(spec, 5, **options)
    assert len(rows) == 5
    return rows


def on(spec: dict, gpu: str, **options) -> dict:
    """The ranking's best row on the publisher's card (the service with --gpu GPU)."""
    return ranked(spec, 1, gpus=[gpu], **options)[0]


def e2e_ms(row: dict, output: int = 128) -> float:
    s = row["serving"]
    return s["time_to_first_token_ms"] + (output - 1) * s["time_per_output_token_ms"]


# --- [VLLMNB] vLLM nightly latency tests on H200: Mixtral 8x7B TP 2 (and the 8B / 70B rows beside it) -----------------
@pytest.mark.django_db
def test_vllmnb_mixtral_tp2_h200_latency(bundled_catalog):
    """[VLLMNB] latency_mixtral8x7B_tp2, H200: 1,917.44 ms. Ours (row on H200, TP 2, compiled): TTFT 18.7 ms + 127 x
    13.82 ms = 1,773.8 ms (-7.5%; per-token speed +8.1%). Batch 8 x top-2 of 8 experts reads nearly every expert a
    step, so the step is the whole 46.7B of bf16 weights split over two cards."""
    ours = e2e_ms(on(MIXTRAL_NB, H200))
    assert abs(err(PUB_VLLMNB_MS["mixtral"] / ours, 1.0)) < LLM_SPEED, f"ours {ours:.1f} ms"


R_VLLMNB = (
    "UNEXPLAINED (audr2): [VLLMNB] {name} batch 8, 32 in / 128 out on H200: published mean latency {pub} ms, ours "
    "{ours} ms with the spec default inference.engine compiled ({e:+.1%} per-token speed). The Mixtral row beside it "
    "lands (-7.5% latency) while the dense rows read too fast, the smaller the model the more (8B TPOT 4.50 ms against "
    "~6.5 published a step, 70B 13.65 against ~16.2): a per-step cost that does not scale with the weights. Sized as a "
    "candidate, not established: vLLM's V0 loop (inference.engine vllm_v0, 1.84 ms of serial host time a step, fitted "
    "on another publisher's batch-1 A100 host) lands all three rows (8B -2.2%, 70B -4.1%, Mixtral +4.8% latency; "
    "test_vllmnb_v0_loop_lands_all_three), and build 9515 sits between build 3545 (mid-2024, V0) and V1's default "
    "(0.8.0, 2025-03), but the page read does not print the vLLM version or commit: (a) fails, so the engine is not "
    "stated and the row stays UNEXPLAINED. A spec a user writes from this page gets the default and the +{e:.0%}."
)


@pytest.mark.django_db
@pytest.mark.parametrize(
    "name",
    [
        pytest.param(
            "llama70",
            marks=pytest.mark.xfail(
                strict=True,
                reason=R_VLLMNB.format(
                    name="Llama 3 70B TP 4", pub=2077.53, ours=1756.3, e=2077.53 / 1756.3 - 1
                ),
            ),
        ),
        pytest.param(
            "llama8",
            marks=pytest.mark.xfail(
                strict=True,
                reason=R_VLLMNB.format(
                    name="Llama 3.1 8B TP 1", pub=833.421, ours=579.5, e=833.421 / 579.5 - 1
                ),
            ),
        ),
    ],
)
def test_vllmnb_dense_rows_h200_latency(bundled_catalog, name):
    """[VLLMNB] latency_llama70B_tp4 2,077.53 ms: ours 22.7 + 127 x 13.65 = 1,756.3 ms (per-token speed +18.3%);
    latency_llama8B_tp1 833.421 ms: ours 8.0 + 127 x 4.50 = 579.5 ms (+43.8%)."""
    ours = e2e_ms(on(VLLMNB[name], H200))
    assert abs(err(PUB_VLLMNB_MS[name] / ours, 1.0)) < LLM_SPEED, f"ours {ours:.1f} ms"


@pytest.mark.django_db
def test_vllmnb_v0_loop_lands_all_three(bundled_catalog):
    """The candidate behind R_VLLMNB, shown, not adopted: stated inference.engine vllm_v0 every row adds 1.84 ms a
    step (first token included): 8B 815.2 ms (-2.2%), 70B 1,992.4 (-4.1%), Mixtral 2,008.6 (+4.8%)."""
    for name, spec in VLLMNB.items():
        v0 = spec | {"inference": spec["inference"] | {"engine": "vllm_v0"}}
        ours = e2e_ms(on(v0, H200))
        assert abs(err(ours, PUB_VLLMNB_MS[name])) < 0.06, (name, ours)


@pytest.mark.django_db
def test_vllmnb_mixtral_ranking_rows(bundled_catalog):
    """A month of one replica, no card named: row 1 vast 2 x H100 SXM $2,755.13 (46.38 GiB a card, 33.27 margin;
    TTFT 24.7 / TPOT 19.25 ms against 500 / 25), then cudo 2 x H100 SXM $2,737.32 (its 16 GiB host below the
    16.3 GiB rule: ranked below), runpod 2 x MI300X $3,667.63 (0.96 x H100 from MLPerf, shown), 2 x H100 NVL, runpod
    2 x H100 SXM. Every row TP 2 as stated, datacenter cards, both targets met, each rebuilt from the catalog."""
    rows = top5(MIXTRAL_NB)
    assert row_problems(rows, MIXTRAL_NB) == []
    assert all(r["gpus"] == 2 and r["plan"]["tensor_parallel"] == 2 for r in rows)
    for r in rows:
        assert (
            r["serving"]["time_to_first_token_ms"] <= 500 and r["serving"]["time_per_output_token_ms"] <= 25
        )
    assert [p for r in rows for p in rebuilt(r, serving_month=True)] == []


R_HOST = (
    "UNEXPLAINED (audr2, the class aud51x's R_HOST names): [VLLMNB] row 1 of production Mixtral serving is vast "
    "2x-H100_SXM-32-65536, whose own reason says 'host RAM and vCPUs unknown for this offer: not checked', ranked "
    "above cudo's 2 x H100 SXM, which is $17.81 a month CHEAPER and demoted because its KNOWN host is 0.3 GiB under "
    "the 16.3 GiB serving rule. An unknown host passes where a known one 2% short fails: check (1) 'host sized' fails "
    "on row 1 (configurations.ranked_order counts host doubt only for a known host; skypilot_csv reads Vast's "
    "32 vCPUs / 64 GiB as placeholders)."
)


# FIXED by hostdoubt (stop 52): an unknown host counts as one host doubt in production serving, like for like with
# a known host short of its rule, so the Vast row no longer ranks first; R_HOST keeps the finding as audr2 wrote it.
@pytest.mark.django_db
def test_vllmnb_mixtral_row1_host_is_sized(bundled_catalog):
    first = top5(MIXTRAL_NB)[0]
    assert not any("unknown for this offer" in w for w in first["warnings"])


# --- [AM70] Llama 3.1 70B pretraining on 64 H100 (AutoModel), 50B tokens inside 14 days ---------------------------
def tokens_per_gpu_second(spec: dict, row: dict) -> float:
    return spec["training_tokens"] / (row["hours"] * 3600 * row["gpus"])


@pytest.mark.django_db
def test_am70_speed_on_64_h100(bundled_catalog):
    """[AM70] 866.77 tokens/s/GPU (18.90 s a 128 x 8,192 step). Ours: 50e9 tokens in 226.345 h on 64 H100 = 958.7
    (+10.6%), FSDP (ZeRO-3) x CP 2 kept as stated."""
    row = on(AM70, H100, deadline_hours=AM70_DEADLINE_H)
    assert row["gpus"] == 64 and row["plan"]["context_parallel"] == 2 and row["plan"]["zero_stage"] == 3
    ours = tokens_per_gpu_second(AM70, row)
    assert abs(err(ours, PUB_AM70_TOKENS_PER_GPU_S)) < LLM_SPEED, f"ours {ours:.1f}"


@pytest.mark.django_db
def test_am70_ranking_rows_keep_the_plan_and_meet_the_deadline(bundled_catalog):
    """Deadline 336 h at P90, no card named: row 1 nebius 8 x 8 H100 226.35 h $51,644.60 (28.54 GiB, 51.11 margin),
    then nebius 8 x 8 B200 124.82 h $53,204.18, nebius / GCP 8 x 8 H200. 64 GPUs, ZeRO-3 and CP 2 on every row
    (the spec's contract), datacenter HGX parts (no rack-scale first), P90 wall-clock inside the deadline, every row
    rebuilt from the catalog to the cent."""
    rows = top5(AM70, deadline_hours=AM70_DEADLINE_H)
    assert row_problems(rows, AM70) == []
    assert all(
        r["gpus"] == 64 and r["plan"]["zero_stage"] == 3 and r["plan"]["context_parallel"] == 2 for r in rows
    )
    assert all(r["wall_clock"]["hours_at_probability"] <= AM70_DEADLINE_H for r in rows)
    assert [p for r in rows for p in rebuilt(r)] == []


# --- [SWIFT72] Qwen-72B QLoRA (bitsandbytes int4) on one A100, ms-swift --------------------------------------------
def reserved_gib(size: str) -> float:
    return on(swift_qlora(size), A100)["memory_per_gpu_gib"] - CUDA_CONTEXT_GIB


R_SWIFT = (
    "UNEXPLAINED (audr2): [SWIFT72] ms-swift QLoRA (bitsandbytes 0.41.3 NF4, rank 8 on c_attn, max_length 2,048, "
    "batch 1, checkpointing; stated as aud50q states ms-swift's Qwen-1 runs: cross_entropy shifted_autocast, torch "
    "2.1.1) on one A100: published GPU Memory (max_memory_reserved / 1024**3) {pub} GiB, ours {ours:.2f} GiB less the "
    "CUDA context ({e:+.1%}). Gaps 72B +26.7, 14B +15.4, 7B +13.4 GiB. Part is the table's own, already open: "
    "aud50q's strict xfails on the same page's bf16 LoRA rows read 7B 27.74 vs 20.19 (+7.6 GiB) and 14B 40.14 vs "
    "33.19 (+7.0) at 2,048 (a ~4 MB a token term that does not scale with vocabulary or model; lead: "
    "max_memory_reserved over 'delete'-truncated samples of every length). The int4 rows carry a further +5.9 (7B) "
    "and +8.4 GiB (14B) on top of it, which no fix of the bf16 rows would reach: bitsandbytes saves far less than "
    "the weights it packs (7B bf16 27.74 vs int4 23.85: 3.9 GiB saved where the 6.48e9 block weights shrink by 6.48e9 x (2 - 0.515) B = 8.96 GiB). "
    "Candidate, not sized: transformers 4.3x's 4-bit load moves each 16-bit shard to the GPU before bnb packs it, "
    "and the caching allocator keeps the freed blocks reserved (a reserved-not-allocated peak no spec field "
    "states). No allocated peak of the run is published to separate it. swiftmem: the bf16 part reads as the caching "
    "allocator's reserved-not-allocated room over 'delete'-kept samples of every length (ms-swift @97e4d198b "
    "trainers.py max_memory_reserved after train(); a model of the allocator gives 10.7-24.6 GiB past the allocated "
    "peak at 2,048 over five sample orders, not sized to a row: test_outside_swift_reserved_swiftmem.py); the bnb "
    "load (sft.py BitsAndBytesConfig nf4 double quant, device_map 'auto', no prepare_model_for_kbit_training; bnb "
    "0.41-era nn/modules.py Params4bit.cuda, stored copies ids 1140661241 / 19017067447: each weight goes to the GPU "
    "as fp16 before quantize_4bit packs it) and MatMul4Bit.forward's dequantized weight per call (autograd/_functions.py "
    "copies ids 8010181156 / 102675332) were read, not sized."
)


@pytest.mark.django_db
@pytest.mark.parametrize(
    "size",
    [
        pytest.param(
            s,
            marks=pytest.mark.xfail(
                strict=True,
                reason=R_SWIFT.format(pub=PUB_SWIFT_BNB_GIB[s], ours=o, e=o / PUB_SWIFT_BNB_GIB[s] - 1),
            ),
        )
        for s, o in (("72b", 48.17), ("14b", 14.66), ("7b", 10.44))
    ],
)
def test_swift_qlora_reserved_memory_on_one_a100(bundled_catalog, size):
    """[SWIFT72] int4 (bnb) GPU Memory: 72B 74.87, 14B 30.05, 7B 23.85 GiB; ours (less the 0.6 GiB context) 48.17
    (-35.7%), 14.66 (-51.2%), 10.44 (-56.2%)."""
    ours = reserved_gib(size)
    assert abs(err(ours, PUB_SWIFT_BNB_GIB[size])) < LLM_MEMORY, f"ours {ours:.2f}"


@pytest.mark.django_db
def test_swift72_ranking_rows_one_card(bundled_catalog):
    """20,000 samples of 2,048 tokens, no deadline: row 1 verda B200 spot 6.49 h $24.45 (48.77 GiB, 130.29 margin),
    then verda H100 spot, verda A100 spot (35.42 h), nebius H100 / H200 spot. One card each as stated (a QLoRA spec
    is a single-card contract), every row rebuilt from the catalog. Judged on check (1) with the memory the engine
    shows: at the published 74.87 GiB reserved the 80 GB rows would be tight (the A100 / H100 rows' margins read
    31 GiB), so the 80 GB rows stand only if R_SWIFT's gap is an allocator artefact; the B200 / H200 rows stand
    either way."""
    rows = top5(SWIFT72)
    assert row_problems(rows, SWIFT72) == []
    assert all(r["gpus"] == 1 for r in rows)
    assert [p for r in rows for p in rebuilt(r)] == []


# --- [SPOT] the same QLoRA as a spot job inside 24 h ---------------------------------------------------------------
@pytest.mark.django_db
def test_spot_qlora_meets_the_deadline_on_wall_clock(bundled_catalog):
    """Spot only, deadline 24 h at P90: row 1 verda B200 spot 6.49 h compute, P90 6.50 h, meets alone; then verda H100,
    nebius H100 / H200, GCP a3-highgpu-1g spot (14.2-14.9 h); verda's A100 spot (P90 35.46 h) is left out. P50 / P90
    shown beside compute hours, every P90 <= 24 h, spot prices rebuilt as catalog x the printed multiplier."""
    rows = top5(SWIFT72, deadline_hours=SPOT_DEADLINE_H, pricing_models=["spot"])
    assert row_problems(rows, SWIFT72) == []
    assert all(r["pricing_model"] == "spot" and r["gpus"] == 1 for r in rows)
    for r in rows:
        wall = r["wall_clock"]
        assert wall["hours_at_probability"] <= SPOT_DEADLINE_H
        assert wall["p50_hours"] <= wall["p90_hours"] and wall["p90_hours"] >= r["hours"]
    assert [p for r in rows for p in rebuilt(r)] == []


# --- [QW64K] Qwen2.5 7B / 14B, 63,488 tokens in, 2,048 out, one A100, vLLM 0.6.3 ----------------------------------
@pytest.mark.django_db
@pytest.mark.parametrize("size", ["7b", "14b"])
def test_qw64k_speed_on_one_a100(bundled_catalog, size):
    """[QW64K] 7B 50.86 tokens/s: ours 2,048 / (8.047 s + 2,048 x 14.34 ms) = 54.73 (+7.6%); 14B 26.85: ours 2,048 /
    (17.714 + 2,048 x 30.33 ms) = 25.66 (-4.4%)."""
    s = on(QW64K[size], A100)["serving"]
    ours = 2048 / (s["time_to_first_token_ms"] / 1000 + 2048 * s["time_per_output_token_ms"] / 1000)
    assert abs(err(ours, PUB_QW64K[size])) < LLM_SPEED, f"ours {ours:.2f}"


@pytest.mark.django_db
def test_qw64k_ranking_rows(bundled_catalog):
    """A month of one 64k-context stream (7B), no card named: row 1 vast RTX 6000 Ada $279.20 (20.31 GiB, 27.68
    margin; TTFT 6.9 s), then lium RTX 4090 $213.50 marked tight (3.68 GiB margin, 18% headroom fits) below it by
    design (class 6), vast 2 x RTX 3090 (two one-card replicas), lium 4090, vast 2 x RTX 4070 Ti SUPER TP 2 (a
    consumer split over PCIe without P2P, flagged and ranked below). Row 1 one card, no split; every row rebuilt."""
    rows = top5(QW64K["7b"])
    assert row_problems(rows, QW64K["7b"]) == []
    assert rows[0]["gpus"] == 1 and not rows[0]["tight"]
    assert [p for r in rows for p in rebuilt(r, serving_month=True)] == []
