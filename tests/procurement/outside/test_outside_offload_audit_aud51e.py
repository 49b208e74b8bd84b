"""Outside audit of ec64k (parallelism.offload_pin_memory, procurement/sizing/pinned_offload.py) by aud51e, as a
distributed-training engineer who runs DeepSpeed ZeRO-Offload. Cases no test used (grepped tests/ for each source):

[ZF] DeepSpeed blog "Study of ZenFlow and ZeRO offload performance with DeepSpeed CPU core binding" (2025/10,
     deepspeedai/DeepSpeed blogs/zenflow-corebinding/README.md, stored id 5784489801). Host: 2 x DGX-A100-SXM4-40GB,
     2 x AMD EPYC 7742 64-core, 1 TB: the very host ec64k's host_memory_bandwidth_gbps (409.6 GB/s) is read from.
     zo_config.json: ZeRO-2, offload_optimizer cpu, "pin_memory": true, bf16, train_batch_size 8, GA 1 (2 GPUs:
     micro-batch 4), AdamW, gradient_clipping 1.0. Script: deepspeedai/DeepSpeedExamples@45b4b715
     training/DeepSpeed-ZenFlow/finetuning/finetune_llama.py lines 27-32 (Alpaca, padding="max_length", 512 tokens),
     line 43 (bf16 weights, no gradient checkpointing, transformers' default attention), lines 75-81 (the timed step
     is forward + backward + step). Published step times (averages of three runs):
       Qwen2.5-3B  ZeRO Offload, no core binding 2,887 ms; with --bind_cores_to_rank 2,497 ms
       Qwen2.5-1.5B ZeRO Offload with core binding 1,365 ms; ZeRO-2 without offload 240 ms (the control)
     Models: HF config.json (Qwen/Qwen2.5-1.5B: 28 layers, 1,536 hidden, 12 heads, 2 KV heads, 8,960 MLP, 151,936
     vocab, tied; Qwen/Qwen2.5-3B: 36, 2,048, 16, 2, 11,008, tied; both QKV bias): 1,543,714,304 and 3,085,938,688
     parameters, as the engine counts them.
[PR735] deepspeedai/DeepSpeed PR #735 (2021-02-08, R. Yazdani Aminabadi, a CPU-Adam author): "it reduces the
     optimizer time from 56 seconds to 8.2 seconds to an 11.6B parameter GPT2 model" (DeepSpeedCPUAdam vs torch
     Adam, 6.8x; the tutorial's "5X-7X faster"). Host not stated in what was read.

Judged: ZeRO-2 pinned rows miss by 57-63% (the offload priced at a third of what it costs a parameter on the host
the constant names); stating pin_memory true makes a short-sequence job slower than stating false (the gate is on
the wrong variable); core binding moves a published pinned step 13.5% with nothing in the spec to say so.

fix51e (aud51e's fix list): every offload is priced per step and per parameter (the flat +50% retired); pin_memory
sets the copies' rate only (31.5 GB/s pinned, 10.0 GB/s pageable); the CPU step runs at
cpu_adam_params_per_core_second (14.32e6, set on ONE run: DeepSpeed PR #7474's bound Qwen2.5-3B row, 2,383.16 ms,
tests/procurement/sizing/test_pinned_offload.py) x parallelism.offload_cpu_cores_per_rank, the node's memory
bandwidth a lower bound. [ZF] states its host (2 x EPYC 7742, 128 cores) and the launcher flag; with
--bind_cores_to_rank DeepSpeed gives each of the 2 local ranks 128 // 2 = 64 physical cores and OMP_NUM_THREADS 64
(deepspeedai/DeepSpeed@5b6ec473 deepspeed/utils/numa.py get_numactl_cmd, main), so the rows state 64. Caveat, said
where it counts: PR #7474 and [ZF] are the same setup (Qwen2.5-3B, ZeRO-2 offload, 2 A100-40GB, 128 cores), two
publications 4.6% apart on the bound 3B row, so that row is not an independent check; the 1.5B row (half the
parameters) and [PR735], EasyContext, [CYFZ2] are the held-out rows.
Rows, before (ec64k) -> after (fix51e), published: 1.5B bound 1,365: 531 (-61.1%) -> 1,192 (-12.6%) FIXED;
3B bound 2,497: 1,061 (-57.5%) -> 2,383 (-4.6%) FIXED (not independent, above); 3B unbound 2,887: 1,061 (-63.2%)
-> 2,383 (-17.5%) strict xfail UNEXPLAINED; pinned vs pageable: 531 vs 231 ms -> 1,192 vs 1,614 ms FIXED.

fix51e2 (audoff2's fix list): the Adam kernel at the ZeRO-Offload paper's Table 4 rate, 81.06e6 a physical
core-second; PR #7474's residual past it is not located, so not fitted. Rows, fix51e -> fix51e2: 1.5B bound 1,192
(-12.6%) -> 531 (-61.1%), 3B bound 2,383 (-4.6%) -> 1,061 (-57.5%), both strict xfails UNEXPLAINED again; 3B unbound
2,383 (-17.5%) -> 1,061 (-63.2%); PR735 67.5 s (+723%) -> 23.85 s on the assumed 6 physical cores (+191%); pinned vs
pageable 531 vs 953 ms (the gate holds).
"""

from __future__ import annotations

import pytest

from procurement.sizing import gpu_by_slug, parse_workload_spec, size_workload
from procurement.sizing.assumptions import (
    CPU_ADAM_PARAMS_PER_CORE_SECOND,
    HOST_MEMORY_BANDWIDTH,
    OFFLOAD_CPU_CORES_PER_RANK,
    PAGEABLE_HOST_LINK,
    PCIE_HOST_LINK,
    PINNED_OFFLOAD_HOST_BYTES,
)
from tests.procurement.outside.test_outside_ranking_audit_stop48 import LLM_SPEED, err

QWEN25_1_5B = {
    "num_layers": 28,
    "hidden_size": 1536,
    "num_attention_heads": 12,
    "num_key_value_heads": 2,
    "intermediate_size": 8960,
    "vocab_size": 151936,
    "tie_word_embeddings": True,
    "attention_qkv_bias": True,
}
QWEN25_3B = QWEN25_1_5B | {
    "num_layers": 36,
    "hidden_size": 2048,
    "num_attention_heads": 16,
    "intermediate_size": 11008,
}
P_1_5B, P_3B = 1_543_714_304, 3_085_938_688
A100_40 = "a100-sxm4-40gb"

# [ZF] published step times, ms
ZF_1_5B_OFFLOAD_BOUND = 1365
ZF_1_5B_NO_OFFLOAD = 240
ZF_3B_OFFLOAD_BOUND = 2497
ZF_3B_OFFLOAD_UNBOUND = 2887
# [PR735] DeepSpeedCPUAdam's optimizer time, 11.6B parameters
PR735_PARAMS, PR735_SECONDS = 11.6e9, 8.2


ZF_CORES_PER_RANK = 128 // 2  # 2 x EPYC 7742 (64 cores each), 2 local ranks: numa.py get_numactl_cmd's share


def zf_spec(model: dict, offload: str = "optimizer", pin: bool = True) -> dict:
    """[ZF] as run: 2 GPUs, ZeRO-2, micro-batch 4 (train_batch_size 8 / 2 ranks, GA 1), 512 tokens padded, bf16,
    no recomputation. pin_memory as zo_config.json states it (true) unless asked otherwise; the host's 128 cores
    split over the 2 ranks (fix51e: parallelism.offload_cpu_cores_per_rank 64)."""
    par = {"gpus": 2, "zero_stage": 2}
    if offload != "none":
        par |= {
            "offload": offload,
            "offload_pin_memory": pin,
            "offload_cpu_cores_per_rank": ZF_CORES_PER_RANK,
        }
    return {
        "task": "full_finetune",
        "model": model,
        "precision": "bf16",
        "seq_len": 512,
        "micro_batch_size": 4,
        "gradient_accumulation_steps": 1,
        "gradient_checkpointing": "none",
        "training_tokens": 1e9,
        "parallelism": par,
    }


def step_ms(raw: dict, gpu: str = A100_40) -> float:
    spec = parse_workload_spec(raw)
    gpus = raw["parallelism"]["gpus"]
    row = next(c for c in size_workload(spec, [gpu_by_slug(gpu)])["candidates"] if c["gpus"] == gpus)
    return 1000.0 * row["throughput"]["step_seconds"]


def pinned_offload_ms(params: int, ranks: int) -> float:
    """ec64k's pinned ZeRO-2 term by hand (before fix51e), GA 1: 8 B a parameter of the rank's partition over
    PCIe, 48 B a parameter of the node at 409.6 GB/s."""
    pcie = 8.0 * params / ranks / (PCIE_HOST_LINK.value * 1e9)
    host = PINNED_OFFLOAD_HOST_BYTES.value * params / (HOST_MEMORY_BANDWIDTH.value * 1e9)
    return 1000.0 * (pcie + host)


def offload_ms(params: int, ranks: int, cores: float, pinned: bool = True) -> float:
    """fix51e's ZeRO-2 offload term by hand (pinned_offload.py), GA 1: 8 B a parameter of the rank's partition
    over PCIe (31.5 GB/s pinned, 10.0 pageable), the rank's CPU step at cpu_adam_params_per_core_second (fix51e
    14.32e6, fix51e2 81.06e6 a physical core-second) on its cores, no faster than 48 B a parameter of the node at 409.6 GB/s."""
    link = (PCIE_HOST_LINK if pinned else PAGEABLE_HOST_LINK).value * 1e9
    cpu = max(
        params / ranks / (cores * CPU_ADAM_PARAMS_PER_CORE_SECOND.value),
        PINNED_OFFLOAD_HOST_BYTES.value * params / (HOST_MEMORY_BANDWIDTH.value * 1e9),
    )
    return 1000.0 * (8.0 * params / ranks / link + cpu)


R_ZF_FIX51E2 = (
    "UNEXPLAINED (fix51e2; FIXED by fix51e, out again): [ZF] Qwen2.5-{size} ZeRO-2 offload, pinned, bound, 64 "
    "physical cores a rank: published {pub} ms, ours {ours} ms ({pct}; fix51e {was}). fix51e's 14.32e6 a core-second "
    "was PR #7474's whole residual, the 3B bound row's twin; fix51e2 prices the Adam kernel at the ZeRO-Offload "
    "paper's Table 4 rate (81.06e6 a physical core-second), under which 64 cores step a rank's half in less than the "
    "node's memory floor (48 B x P at 409.6 GB/s), so the row reads ec64k's figure again. The rest of PR #7474's "
    "step (about 1.32 s of 2,383 ms on the 3B twin) was looked for in deepspeedai/DeepSpeed@v0.17.5 "
    "stage_1_and_2.py (step() 1995-2016, copy_grads_in_partition 1414-1425): GPU-side norm / overflow work, the "
    "PCIe copies (priced), torch CPU ops inside the floor; not located, not fitted, not sized."
)


@pytest.mark.xfail(
    strict=True,
    reason=R_ZF_FIX51E2.format(size="1.5B", pub="1,365", ours="531", pct="-61.1%", was="1,192, -12.6%"),
)
def test_zf_qwen25_1_5b_pinned_offload_step():
    """fix51e2: ours 154.2 + 196.0 (copies) + 180.9 (the node's memory floor: 64 cores would step 0.772e9
    parameters in 148.8 ms) = 531 ms (-61.1%; fix51e 1,192, -12.6%)."""
    ours = step_ms(zf_spec(QWEN25_1_5B))
    assert ours == pytest.approx(154.2 + offload_ms(P_1_5B, 2, 64), abs=0.2)
    assert abs(err(ours, ZF_1_5B_OFFLOAD_BOUND)) < LLM_SPEED, f"ours {ours:.0f} ms"


@pytest.mark.xfail(
    strict=True,
    reason=R_ZF_FIX51E2.format(size="3B", pub="2,497", ours="1,061", pct="-57.5%", was="2,383, -4.6%"),
)
def test_zf_qwen25_3b_pinned_offload_step_bound():
    """fix51e2: published 2,497 ms; ours 307.6 + 391.9 (copies) + 361.6 (the floor) = 1,061 ms (-57.5%; fix51e,
    whose rate was set on this row's twin, 2,383, -4.6%)."""
    ours = step_ms(zf_spec(QWEN25_3B))
    assert ours == pytest.approx(1061.1, abs=0.3)
    assert abs(err(ours, ZF_3B_OFFLOAD_BOUND)) < LLM_SPEED, f"ours {ours:.0f} ms"


@pytest.mark.xfail(
    strict=True,
    reason=(
        "UNEXPLAINED (aud51e; restated by fix51e, fix51e2): [ZF] Qwen2.5-3B ZeRO Offload without core binding: "
        "published 2,887 ms, ours 1,061 (-63.2%; fix51e 2,383, -17.5%) with the host's 64 cores a rank, the same as "
        "the bound row (itself -57.5% under fix51e2's paper rate): without --bind_cores_to_rank the launcher sets no OMP_NUM_THREADS (launch.py@v0.14.2 lines "
        "230-232), so each rank's OpenMP pool spans the host and the two ranks' CPU-Adam threads contend; the "
        "spec states cores, not contention (binding moves this row 13.5%, PR #7474's twin 29%: 3,084 vs 2,383 ms). "
        "Not sized from DeepSpeed's code; no field states binding."
    ),
)
def test_zf_qwen25_3b_pinned_offload_step_unbound():
    ours = step_ms(zf_spec(QWEN25_3B))
    assert abs(err(ours, ZF_3B_OFFLOAD_UNBOUND)) < LLM_SPEED, f"ours {ours:.0f} ms"


@pytest.mark.xfail(
    strict=True,
    reason=(
        "UNEXPLAINED (aud51e; restated by fix51e, fix51e2): [PR735] DeepSpeedCPUAdam on an 11.6B GPT-2: 8.2 s an "
        "optimizer step; the CPU step for the same parameters on the assumed 6 physical cores (12 vCPUs, "
        "offload_cpu_cores_per_rank unstated) 23.85 s (+191%; fix51e 67.5 s on 12, +723%; ec64k's 48 B at 409.6 "
        "GB/s: 1.36 s, -83.4%). Host and threads not stated in PR #735: at 81.06e6 parameters a physical "
        "core-second, 8.2 s needs 17.5 cores. Held out; not like-for-like."
    ),
)
def test_pr735_cpu_adam_step_against_the_host_term():
    from procurement.sizing.pinned_offload import host_step_seconds

    ours_s = float(host_step_seconds(PR735_PARAMS, 1, OFFLOAD_CPU_CORES_PER_RANK.value))
    assert ours_s == pytest.approx(23.85, abs=0.01)
    assert abs(err(ours_s, PR735_SECONDS)) < LLM_SPEED, f"ours {ours_s:.2f} s"


# --- controls: rows ec64k must not move ----------------------------------------------------------------------------
@pytest.mark.xfail(
    strict=True,
    reason=(
        "UNEXPLAINED (aud51e): [ZF] control, Qwen2.5-1.5B ZeRO-2 without offload on 2 A100 40GB: published 240 ms, "
        "ours 154 ms (-35.8%); ec64k does not touch it (checked below: same figure before and after, the field "
        "refused without offload). 4 x 512 tokens a rank is a small step: per-step host / launch time the engine "
        "does not price is the lead, not sized."
    ),
)
def test_zf_control_no_offload_step():
    ours = step_ms(zf_spec(QWEN25_1_5B, offload="none"))
    assert abs(err(ours, ZF_1_5B_NO_OFFLOAD)) < LLM_SPEED, f"ours {ours:.0f} ms"


def test_controls_are_not_moved_by_the_field():
    """No offload: nothing added (154.2 ms). Unpinned offload (DeepSpeed's default): fix51e retired the flat +50%
    (231.2 ms); the same per-step terms with pageable copies, 154.2 + 617.5 + 180.9 (floor) = 952.6 ms (fix51e2)."""
    base = step_ms(zf_spec(QWEN25_1_5B, offload="none"))
    assert base == pytest.approx(154.2, abs=0.1)
    pageable = step_ms(zf_spec(QWEN25_1_5B, pin=False))
    assert pageable == pytest.approx(base + offload_ms(P_1_5B, 2, 64, pinned=False), abs=0.2)


# --- what the code does, by hand ----------------------------------------------------------------------------------
def test_pinned_rows_are_the_compute_plus_the_offload_term_by_hand():
    """The engine's pinned rows are its no-offload step plus 8 B / 31.5 GB/s of the rank's half and the rank's half
    stepped on 64 physical cores at 81.06e6 a core-second, no faster than the node's 48 B a parameter at 409.6 GB/s
    (fix51e2: the floor binds): 1.5B 154.2 + 376.9 = 531.1 ms; 3B 307.6 + 753.5 = 1,061.1 (fix51e: 1,038.3 and
    2,075.6 of offload at 14.32e6)."""
    for model, params in ((QWEN25_1_5B, P_1_5B), (QWEN25_3B, P_3B)):
        base = step_ms(zf_spec(model, offload="none"))
        assert step_ms(zf_spec(model)) - base == pytest.approx(offload_ms(params, 2, 64), abs=0.2)
    assert offload_ms(P_1_5B, 2, 64) == pytest.approx(376.9, abs=0.2)
    assert pinned_offload_ms(P_1_5B, 2) == pytest.approx(376.9, abs=0.1)  # ec64k's: the same figure again


def test_published_offload_cost_is_per_parameter_and_three_times_ec64ks():
    """[ZF] sized: the run's own control gives the 1.5B offload 1,125 ms (1,365 - 240), 0.729 ns a parameter;
    ec64k's 0.244 ns is 33.5% of it. The 3B row, taking its no-offload step as the engine's 307.6 ms scaled by the
    control's published / ours (240 / 154.2), gives 2,018 ms, 0.654 ns: the cost goes with the parameters (2.0x the
    parameters, 1.79x the seconds), not with the tokens (the same 4 x 512 a rank): the per-step, per-parameter
    form ec64k chose is right, the rate is not. [PR735] alone: 0.707 ns a parameter."""
    published_1_5b = (ZF_1_5B_OFFLOAD_BOUND - ZF_1_5B_NO_OFFLOAD) / P_1_5B * 1e6  # ns a parameter
    ours_1_5b = pinned_offload_ms(P_1_5B, 2) / P_1_5B * 1e6
    assert published_1_5b == pytest.approx(0.729, abs=1e-3)
    assert ours_1_5b / published_1_5b == pytest.approx(0.335, abs=1e-3)
    scale = ZF_1_5B_NO_OFFLOAD / step_ms(zf_spec(QWEN25_1_5B, offload="none"))
    no_offload_3b = step_ms(zf_spec(QWEN25_3B, offload="none")) * scale
    published_3b = (ZF_3B_OFFLOAD_BOUND - no_offload_3b) / P_3B * 1e6
    assert published_3b == pytest.approx(0.654, abs=2e-3)
    assert PR735_SECONDS / PR735_PARAMS * 1e9 == pytest.approx(0.707, abs=1e-3)


def test_pinning_does_not_make_a_run_slower():
    """fix51e FIXED (aud51e's gate): pin_memory sets the copies' rate only; pinned 531 ms, pageable 953 ms
    (fix51e2; fix51e 1,192 / 1,614)."""
    pinned = step_ms(zf_spec(QWEN25_1_5B, pin=True))
    pageable = step_ms(zf_spec(QWEN25_1_5B, pin=False))
    assert pinned <= pageable, f"pinned {pinned:.0f} ms, pageable {pageable:.0f} ms"


def test_easycontext_rows_under_the_per_core_rate_by_host_cores():
    """fix51e, the reconciliation the fix list asked for (not a fit): [EC]'s rows (Llama-2-7B, 8 A100 80GB, ZeRO-3
    offload of optimizer and parameters, pinned) under the one per-core rate, at the cores a rank the spec would
    state. [EC] states no host CPU (README, accelerate_configs/single_node.yaml: 8 processes, no binding), so the
    engine assumes 6 physical cores (fix51e2; fix51e: 12 at 14.32e6, 4.90 s): a rank's CPU step is
    P / 8 / (6 x 81.06e6) = 1.73 s. tokens/s error, published: at 6 (assumed) | 32 | 64 (the floor binds from 14)
      64K DP   10,240: -7.5% | -5.9% | -5.9%   (fix51e at 12 / 32 / 64: -12.5% / -7.7% / -6.1%)
      64K ring  7,816: -2.8% | +9.2% | +9.2%   (-28.9% / -4.0% / +7.4%)
      128K ring 4,266: +34.4% | +40.2% | +40.2% (+18.1% / +33.8% / +39.4%)
    The 64K ring row (8.39 s a step published, 6.89 s of it the engine's non-CPU work) bounds its host's CPU step at
    ~1.5 s; inside its 15% bar it needs >= 3.5 physical cores a rank at the paper's rate: the assumed 6 lands it
    (FIXED in test_outside_ranking_audit_aud51x.py), the 128K row stays out the other way (its own outlier)."""
    base = {
        "task": "full_finetune",
        "model": {"preset": "llama-2-7b"},
        "precision": "bf16",
        "micro_batch_size": 1,
        "gradient_checkpointing": "full",
        "training_tokens": 1e9,
    }
    rows = {  # seq_len, context_parallel, sequences a step, published tokens/s, error at 12 / 32 / 64 cores
        "64k_dp": (65536, 1, 8, 10240, (-0.0753, -0.0593, -0.0593)),
        "64k_ring": (65536, 8, 1, 7816, (-0.0277, 0.0916, 0.0916)),
        "128k_ring": (131072, 8, 1, 4266, (0.3442, 0.402, 0.402)),
    }
    for seq, cp, seqs, published, expected in rows.values():
        for cores, want in zip((None, 32, 64), expected, strict=True):
            par = {"gpus": 8, "zero_stage": 3, "offload": "optimizer_and_params", "offload_pin_memory": True}
            par |= {"context_parallel": cp} if cp > 1 else {}
            par |= {"offload_cpu_cores_per_rank": cores} if cores else {}
            step_s = step_ms(base | {"seq_len": seq, "parallelism": par}, "a100-sxm4-80gb") / 1000.0
            assert err(seqs * seq / step_s, published) == pytest.approx(want, abs=2e-3)
    p7 = 6_738_415_616
    non_cpu_s = 65536 / 7599.8 - p7 / 8 / (6 * CPU_ADAM_PARAMS_PER_CORE_SECOND.value)
    assert non_cpu_s == pytest.approx(6.89, abs=0.01)
    cpu_budget_s = 65536 / 7816 / (1 - LLM_SPEED) - non_cpu_s  # the slowest step inside the bar
    assert p7 / 8 / (cpu_budget_s * CPU_ADAM_PARAMS_PER_CORE_SECOND.value) == pytest.approx(3.5, abs=0.1)
