"""Outside audit of fix51e (procurement/sizing/pinned_offload.py: every DeepSpeed offload priced per step, the CPU
Adam step at cpu_adam_params_per_core_second 14.32e6 x parallelism.offload_cpu_cores_per_rank, default
host.vcpus_per_gpu else an assumed 12) by audoff2, as a distributed-training engineer who runs ZeRO-Offload /
ZeRO-Infinity fine-tunes on rented GPU instances. Cases no test used (tests/ grepped for each source and figure:
"0.22", "2.57", "8168", "21766", "4210R", "issues/6834", "issues/1635", "issues/1697": none):

[ZO-T4] Ren et al., "ZeRO-Offload: Democratizing Billion-Scale Model Training" (USENIX ATC 2021, arXiv:2101.06840),
     Table 4 "Adam latency (s) for PyTorch (PT) and CPU-Adam": CPU-Adam 1B 0.22, 2B 0.51, 4B 1.03, 8B 2.41, 10B 2.57;
     Table 2 host: one DGX-2 node, 2 Intel Xeon Platinum 8168 (24 cores each, Intel's spec: 48 cores, 96
     threads), 1.5 TB DDR4-2666. Read from the table images of Elvin-Ma/ai_papers@75574b0e zero/images/
     zero-offload-table4.jpg / -table2.jpg (the paper's own tables, reproduced); the text (6.2.4) says CPU-Adam is
     6.4x PT-CPU at 1B. A single process stepping the whole model: the whole host's cores, threads not stated.
[DS1635] deepspeedai/DeepSpeed issue #1635 (2021-12-13): a 1.35B GPT, ZeRO-3 optimizer offload, one RTX 3090, one
     Xeon Silver 4210R (10 cores / 20 threads, Intel's spec), wall_clock_breakdown "update_optims: 21766.25" ms (the
     CPU Adam over all parameters), optimizer_step 22,850.66 ms. Maintainer (RezaYazdaniAminabadi, issue #1697,
     2022-01-13): DeepSpeedCPUAdam regressed in 0.5.5-0.5.9 (commit 8abdaee), "mentioned in another post too
     (#1635)", fixed by 259936a in 0.5.10.
[DS6834] deepspeedai/DeepSpeed issue #6834 (2024-12): Qwen 72B, ZeRO-3 with optimizer and parameter offload, 4 nodes
     of A100-80GB (32 GPUs, 8 a node), DeepSpeed 0.14.5, ~8,192 tokens a batch; the maintainer (tjruwase, 2024-12-11)
     reads the wall_clock_breakdown screenshots: "The step time of no-offload vs offload is ~0.2s vs ~10s" (the
     engine's `step` timer: the optimizer step, not the iteration). Host CPU not stated.

Judged on the per-core rate (is 14.32e6 parameters a core-second within 2x of published CPU-Adam?), the 12-core
default (is it a fair AWS p4d/p5, GCP a2/a3, Lambda, RunPod host?) and the ranking (does it use each offer's own
vCPUs?). Controls: a run without offload and an inference run are not moved by the change.
"""

from __future__ import annotations

import csv
import math
from pathlib import Path

import numpy as np
import pytest

from procurement.sizing import gpu_by_slug, parse_workload_spec, pinned_offload, size_workload
from procurement.sizing.assumptions import (
    CPU_ADAM_PARAMS_PER_CORE_SECOND,
    HOST_MEMORY_BANDWIDTH,
    OFFLOAD_CPU_CORES_PER_RANK,
    PINNED_OFFLOAD_HOST_BYTES,
)
from procurement.sizing.spec import WorkloadSpecError
from tests.procurement.outside.test_outside_ranking_audit_stop48 import LLM_SPEED, err

RATE = CPU_ADAM_PARAMS_PER_CORE_SECOND.value  # fix51e2: 81.06e6 a physical core-second (Table 4's 10B row)
FIX51E_RATE = 14.32e6  # the rate audoff2 audited (fix51e, PR #7474's residual), for the record

# [ZO-T4] CPU-Adam seconds by parameter count; the DGX-2's 2 x Xeon Platinum 8168 = 48 physical cores (96 threads)
ZO_T4 = {1e9: 0.22, 2e9: 0.51, 4e9: 1.03, 8e9: 2.41, 10e9: 2.57}
ZO_CORES, ZO_THREADS = 48, 96
# [DS1635] 1.35B on a Xeon Silver 4210R (10 cores, 20 threads); update_optims ms
DS1635_PARAMS, DS1635_MS, DS1635_CORES, DS1635_THREADS = 1.35e9, 21766.25, 10, 20
# [DS6834] Qwen 72B (Qwen2-72B's config.json: 80 layers, 8,192 hidden, 64 heads, 8 KV heads, 29,568 MLP, 152,064
# vocab, untied, QKV bias), 32 A100-80GB, ZeRO-3 optimizer + parameter offload; published optimizer step ~10 s
QWEN72 = {
    "num_layers": 80,
    "hidden_size": 8192,
    "num_attention_heads": 64,
    "num_key_value_heads": 8,
    "intermediate_size": 29568,
    "vocab_size": 152064,
    "attention_qkv_bias": True,
}
DS6834_STEP_S, DS6834_GPUS = 10.0, 32


def cpu_step_s(params: float, cores: float, ranks_per_node: int = 1) -> float:
    """The CPU step by hand: params / (RATE x physical cores), no shorter than 48 B a parameter at 409.6 GB/s."""
    return max(
        params / (RATE * cores),
        PINNED_OFFLOAD_HOST_BYTES.value * params * ranks_per_node / (HOST_MEMORY_BANDWIDTH.value * 1e9),
    )


# --- [ZO-T4]: the paper's CPU-Adam against the per-core rate ------------------------------------------------------
def test_zo_t4_engine_cpu_step_is_the_rate_on_the_dgx2_cores():
    """The engine's host step for the paper's sizes on the DGX-2's 48 cores, by hand: 1B 0.257 s ... 10B 2.570 s
    (fix51e2; fix51e 1.455 ... 14.55 s; the memory floor, 48 B x P at 409.6 GB/s = 0.117 s at 1B, is under)."""
    for params in ZO_T4:
        ours = float(pinned_offload.host_step_seconds(params, 1, ZO_CORES))
        assert ours == pytest.approx(cpu_step_s(params, ZO_CORES), rel=1e-9)
    assert float(pinned_offload.host_step_seconds(1e9, 1, ZO_CORES)) == pytest.approx(0.257, abs=0.001)


def test_zo_t4_published_per_core_rate_is_5_to_7x_fix51es():
    """The published CPU-Adam per physical core: 1e9 / 0.22 / 48 = 94.7e6 a core-second (2B 81.7e6, 4B 80.9e6,
    8B 69.2e6, 10B 81.1e6): 4.8x-6.6x the 14.32e6 fix51e set; even counting the 96 hyperthreads as cores,
    2.4x-3.3x. Not within 2x on any row, either way of counting. fix51e2 took the median row, 10B, as the rate."""
    per_core = {p: p / t / ZO_CORES for p, t in ZO_T4.items()}
    per_thread = {p: p / t / ZO_THREADS for p, t in ZO_T4.items()}
    assert per_core[1e9] == pytest.approx(94.7e6, rel=0.001)
    assert min(per_core.values()) / FIX51E_RATE == pytest.approx(4.83, abs=0.01)
    assert max(per_core.values()) / FIX51E_RATE == pytest.approx(6.61, abs=0.01)
    assert min(per_thread.values()) / FIX51E_RATE > 2.0
    assert RATE == pytest.approx(sorted(per_core.values())[2], rel=1e-4)


R_ZO_1B = (
    "UNEXPLAINED (fix51e2; audoff2 +561%): [ZO-T4] ZeRO-Offload Table 4 CPU-Adam 1B 0.22 s on a DGX-2's 48 physical "
    "cores; ours 0.257 s (+16.8%) at the paper's own median rate (81.06e6 a physical core-second, the 10B row): the "
    "table's 1B row steps 94.7e6 a core-second, faster a parameter than its 2B-10B rows (69.2-81.7e6), which "
    "nothing in the paper's text sizes (cache reuse, timer granularity?). Not fitted per row; 4B and 10B land "
    "(FIXED, -0.2% / +0.0%)."
)


@pytest.mark.parametrize(
    "params", [pytest.param(1e9, marks=pytest.mark.xfail(strict=True, reason=R_ZO_1B)), 4e9, 10e9]
)
def test_zo_t4_cpu_adam_latency(params):
    """fix51e2 FIXED 4B (1.028 s vs 1.03, -0.2%) and 10B (2.570 vs 2.57, +0.0%); fix51e 5.82 / 14.55 s."""
    ours = float(pinned_offload.host_step_seconds(params, 1, ZO_CORES))
    assert abs(err(ours, ZO_T4[params])) < LLM_SPEED, f"ours {ours:.2f} s"


# --- [DS1635]: a 10-core Xeon, a DeepSpeed release with a known CPUAdam regression ---------------------------------
@pytest.mark.xfail(
    strict=True,
    reason=(
        "UNEXPLAINED (audoff2; restated by fix51e2): [DS1635] 1.35B, ZeRO-3 optimizer offload, one Xeon Silver "
        "4210R (10 physical cores): update_optims 21,766 ms; ours on 10 cores 1,665 ms at the ZeRO-Offload paper's "
        "rate (-92.3%; fix51e 9,427 ms, -56.7%): 13x the paper's per-core time. Lead, located "
        "but not sized: DeepSpeed 0.5.5-0.5.9's CPUAdam regression (8abdaee; issue #1697's maintainer links #1635 "
        "to it; fixed 259936a, 0.5.10); #1697's own before/after (86.30 -> 1,321.71 ms, 15.3x, a model of unknown "
        "size) overshoots this 2.3x gap, and #1635 prints no DeepSpeed version, so (a)-(c) of EXPLAINED fail. "
        "The one row where fix51e's rate is too fast, on an old-release run."
    ),
)
def test_ds1635_cpu_adam_on_ten_cores():
    ours_ms = 1000.0 * float(pinned_offload.host_step_seconds(DS1635_PARAMS, 1, DS1635_CORES))
    assert ours_ms == pytest.approx(1665.4, abs=0.5)
    assert abs(err(ours_ms, DS1635_MS)) < LLM_SPEED, f"ours {ours_ms:.0f} ms"


# --- [DS6834]: 72B ZeRO-3 offload on 32 A100-80GB, host unstated ---------------------------------------------------
def ds6834_spec(**parallelism) -> dict:
    return {
        "task": "full_finetune",
        "model": QWEN72,
        "precision": "bf16",
        "seq_len": 8192,
        "micro_batch_size": 1,
        "gradient_accumulation_steps": 1,
        "gradient_checkpointing": "full",
        "training_tokens": 1e9,
        "parallelism": {"gpus": DS6834_GPUS, "zero_stage": 3} | parallelism,
    }


def step_s(raw: dict, gpu: str = "a100-sxm4-80gb") -> tuple[float, dict]:
    answer = size_workload(parse_workload_spec(raw), [gpu_by_slug(gpu)])
    gpus = raw["parallelism"]["gpus"]
    row = next(c for c in answer["candidates"] if c["gpus"] == gpus)
    return row["throughput"]["step_seconds"], answer["workload"]["parallelism"]


def test_ds6834_offload_term_and_its_source_on_the_unstated_host():
    """The engine adds 6.49 s a step for the offload on the assumed 6 physical cores (fix51e2; fix51e 15.04 s on
    12 at 14.32e6; the answer says 'assumed'): the rank's 2.27e9 parameters' CPU step 4.67 s + the copies (pageable:
    updated 16-bit partition back, parameter fetches each pass)."""
    with_offload, par = step_s(ds6834_spec(offload="optimizer_and_params"))
    without, _ = step_s(ds6834_spec())
    assert par["offload_cpu_cores_source"] == "assumed" and par["offload_cpu_cores_per_rank"] == 6.0
    assert "assumed" in par["offload_cpu_cores"]
    assert with_offload - without == pytest.approx(6.49, abs=0.02)


@pytest.mark.xfail(
    strict=True,
    reason=(
        "UNEXPLAINED (audoff2; restated by fix51e2): [DS6834] Qwen 72B ZeRO-3 optimizer + parameter offload on 32 "
        "A100-80GB: the optimizer step ~10 s (maintainer's reading of the screenshots, an approximate figure); "
        "ours, the CPU step alone on the assumed 6 physical cores (12 vCPUs), 4.67 s (-53.3%; fix51e 13.23 s on 12 "
        "at 14.32e6, +32%) before any copy; fewer cores cannot lift it past 2x (the kernel at 3 cores: 9.34 s). The "
        "host is not stated (8-GPU A100-80GB hosts: 8 to 30 vCPUs a GPU); 10 s would need 2.8 physical cores a rank "
        "at the paper's rate, or host work past the kernel, which fix51e2 did not locate. Held out."
    ),
)
def test_ds6834_optimizer_step_on_the_assumed_cores():
    partition = 72.7e9 / DS6834_GPUS
    ours = cpu_step_s(partition, OFFLOAD_CPU_CORES_PER_RANK.value, ranks_per_node=8)
    assert ours == pytest.approx(4.67, abs=0.01)
    assert abs(err(ours, DS6834_STEP_S)) < LLM_SPEED, f"ours {ours:.2f} s"


# --- the 12-core default against the providers' hosts --------------------------------------------------------------
CATALOG = Path(__file__).resolve().parents[3] / "pricing" / "data" / "skypilot"


def vcpus_per_gpu(provider: str, filename: str, instance: str) -> float:
    """vCPUs / GPUs of one instance type in the bundled SkyPilot catalog (first matching row)."""
    with open(CATALOG / provider / filename, newline="") as handle:
        for row in csv.DictReader(handle):
            if row["InstanceType"] == instance and row.get("AcceleratorCount"):
                return float(row["vCPUs"]) / float(row["AcceleratorCount"])
    raise AssertionError(f"{provider} {instance} not in the catalog")


def test_the_assumed_12_is_the_floor_of_the_big_clouds_and_counts_hyperthreads():
    """Bundled catalog vCPUs a GPU: AWS p4d.24xlarge 12, p5.48xlarge 24; Lambda 8x A100 80GB SXM4 30, 8x H100 SXM5
    26; RunPod 8x A100-80GB (PCIe) 8, 8x H100-SXM 20 (GCP a2-highgpu-8g 96 / 8 = 12, a3-highgpu-8g 208 / 8 = 26: the
    GCP file lists them without accelerator counts). 12 is AWS p4d's and GCP a2's, low for p5 / a3 / Lambda (2x),
    high for RunPod's PCIe A100 nodes (1.5x). And these are vCPUs, two a physical core on every one of these hosts
    (p4d: 2 x 24-core Xeon 8275CL = 96 vCPUs), while the rate was set on PR #7474's 64 *physical* cores a rank
    (--bind_cores_to_rank, numa.py's physical-core share, OMP_NUM_THREADS = that share): a p4d rank bound by
    DeepSpeed gets 48 / 8 = 6 cores, and the assumption's 12 prices it 2x too fast at fix51e's own rate."""
    table = {
        ("aws", "vms.gpu.csv", "p4d.24xlarge"): 12.0,
        ("aws", "vms.gpu.csv", "p5.48xlarge"): 24.0,
        ("lambda", "vms.csv", "gpu_8x_a100_80gb_sxm4"): 30.0,
        ("lambda", "vms.csv", "gpu_8x_h100_sxm5"): 26.0,
        ("runpod", "vms.v7.csv", "8x_A100-80GB_SECURE"): 8.0,
        ("runpod", "vms.v7.csv", "8x_H100-SXM_SECURE"): 20.0,
    }
    for (provider, filename, instance), expected in table.items():
        assert vcpus_per_gpu(provider, filename, instance) == expected, instance
    p4d_physical_cores_per_rank = 48 // 8
    # fix51e2 FIXED: the assumption is physical cores now, 12 vCPUs / 2 (vcpus_per_physical_core)
    assert OFFLOAD_CPU_CORES_PER_RANK.value == p4d_physical_cores_per_rank


def test_ranking_passes_no_offer_vcpus_so_every_offer_is_priced_on_12():
    """shapes.py calls training_throughput with vcpus_per_gpu=np.inf (GPU-side, the assumption: 6 physical cores
    since fix51e2); fix51e2 FIXED the ranking: configurations.configure re-prices each offer's CPU step on its own
    vCPUs per GPU / 2 (ranking/offload_hours.py), so a RunPod 8-vCPU-a-GPU node gets 4 cores and a Lambda
    30-vCPU-a-GPU node 15 (tests/procurement/test_ranking_offload_vcpus_fix51e2.py)."""
    spec = parse_workload_spec(ds6834_spec(offload="optimizer"))
    cores, source = pinned_offload.cores_per_rank(spec, np.inf)
    assert source == "assumed" and float(cores) == 6.0
    cores, source = pinned_offload.cores_per_rank(spec, np.array([8.0, 30.0]))
    assert source == "offer" and list(cores) == [4.0, 15.0]
    # the 72B rank's CPU step: 8 vCPUs 7.01 s, 30 vCPUs 2.13 s (the node's memory floor), against 4.67 s assumed
    partition = 72.7e9 / DS6834_GPUS
    assert cpu_step_s(partition, 4, 8) / cpu_step_s(partition, 6, 8) == pytest.approx(1.5)
    assert cpu_step_s(partition, 15, 8) / cpu_step_s(partition, 6, 8) == pytest.approx(0.456, abs=0.001)


# --- controls: runs fix51e must not move --------------------------------------------------------------------------
def test_control_no_offload_run_pays_nothing_and_refuses_the_field():
    """ZeRO-3 without offload: no offload seconds, and parallelism.offload_cpu_cores_per_rank is refused (naming
    the field) so it cannot move a run that does not offload."""
    spec = parse_workload_spec(ds6834_spec())
    assert not pinned_offload.applies(spec)
    assert float(np.sum(pinned_offload.seconds_per_step(spec, 72.7e9, 3, 32, 8, 1))) == 0.0
    with pytest.raises(WorkloadSpecError, match="offload_cpu_cores_per_rank"):
        parse_workload_spec(ds6834_spec(offload_cpu_cores_per_rank=16))


def test_control_stated_cores_do_not_change_a_no_offload_step():
    """The no-offload 72B step is one figure whatever host.vcpus_per_gpu says (33.73 s): the cores only enter the
    offload term."""
    plain, _ = step_s(ds6834_spec())
    raw = ds6834_spec() | {"host": {"vcpus_per_gpu": 30}}
    hosted, _ = step_s(raw)
    assert plain == pytest.approx(33.73, abs=0.01) and hosted == pytest.approx(plain, rel=1e-12)
    assert math.isfinite(plain)


# --- the ranking: would each offer's own vCPUs change row 1? ------------------------------------------------------
RANKED_SPEC = {
    "task": "full_finetune",
    "model": {"preset": "llama-3.1-8b"},
    "precision": "bf16",
    "seq_len": 2048,
    "micro_batch_size": 4,
    "gradient_accumulation_steps": 1,
    "gradient_checkpointing": "full",
    "training_tokens": 2e8,
    "parallelism": {"gpus": 8, "zero_stage": 2, "offload": "optimizer"},
}
CATALOG_FILES = {"aws": "vms.gpu.csv", "runpod": "vms.v7.csv", "lium": "vms.csv", "lambda": "vms.csv"}


def catalog_min_vcpus_per_gpu(provider: str, instance: str) -> float:
    """The fewest vCPUs a GPU any bundled row of this instance type lists (lium lists several hosts a type)."""
    found = []
    with open(CATALOG / provider / CATALOG_FILES[provider], newline="") as handle:
        for row in csv.DictReader(handle):
            if row["InstanceType"] == instance and row.get("AcceleratorCount") and row.get("vCPUs"):
                found.append(float(row["vCPUs"]) / float(row["AcceleratorCount"]))
    return min(found) if found else math.nan


@pytest.mark.django_db
def test_ranking_row_one_survives_repricing_on_each_offers_own_vcpus(bundled_catalog):
    """Llama-3.1-8B full fine-tune, 8 GPUs, ZeRO-2 optimizer offload, host unstated: before fix51e2 every ranked row
    was priced on the assumed 12 cores a rank. Re-priced on each offer's own catalog vCPUs a GPU (the fewest its rows list; cost
    scaled by the step's ratio, an approximation that also scales the fixed setup hour): row 1 (runpod 8x L40S, 1,024
    vCPUs listed, 128 a GPU: the CPU step falls to its memory floor) only gets cheaper, and the 9-vCPU-a-GPU lium
    RTX 3090 node behind it dearer (USD 46.98 -> 23.93; lium 3090 41.27 -> 44.66, 5090 52.32 -> 46.17, aws g6e
    spot 67.49 -> 47.75, RTX 6000 Ada 70.07 -> 59.80), so row 1 does not change on this spec. Not a row-1 defect here; the order below
    row 1 can move (a 2x spread of vCPUs a GPU among the top five)."""
    from tests.procurement.outside.test_outside_recommendations_x26b import ranked

    # fix51e2: the ranking now prices each offer's CPU step on its own vCPUs per GPU / 2 (physical cores), so the
    # ranked rows are what audoff2 re-priced by hand (on the fix51e2 rate): row 1 unchanged, runpod 8x L40S, USD
    # 46.98 -> 29.68 (its 128 vCPUs a GPU put the CPU step on the node's memory floor); rows 2-3 lium RTX 5090
    # (39.87) and aws g6e.48xlarge spot (40.78), where lium's 9-vCPU-a-GPU RTX 3090 node was second (41.27).
    rows = ranked(RANKED_SPEC, top=5)
    assert (rows[0]["provider"], rows[0]["instance_type"]) == ("runpod", "8x_L40S_SECURE")
    assert float(rows[0]["total_cost"]) == pytest.approx(29.68, abs=0.01)
    own = catalog_min_vcpus_per_gpu("runpod", "8x_L40S_SECURE")
    stated = RANKED_SPEC | {
        "parallelism": RANKED_SPEC["parallelism"] | {"offload_cpu_cores_per_rank": int(min(512, own // 2))}
    }
    assumed, _ = step_s(RANKED_SPEC, rows[0]["gpu"])
    on_own, _ = step_s(stated, rows[0]["gpu"])
    assert on_own < assumed  # the offer's 64 physical cores a rank step faster than the assumed 6
