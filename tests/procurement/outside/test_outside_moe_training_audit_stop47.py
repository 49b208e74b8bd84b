"""Outside audit (aud47m) of moet47 (stop 47, issue 26): MoE training, the dispatcher the GB200 25.11 rows ran, the
GPT-OSS B200 25.11 EP column, and TE's grouped GEMM. Five published MoE training rows no test has, plus pins of what
the audit found about the change's method ("the recipe at the commit that published the row is the run").

Sources (opened in the mirror of NVIDIA-NeMo/Megatron-Bridge, git show <commit>:<path>):
  [MBARCH]  docs/performance-summary-archive.md @067f987df03b8355b03192d88d70f1709fedf51a, "26.02.01 NeMo Container"
            (System | #-GPUs | Precision | GBS | MBS | Seq | FSDP | TP | PP | CP | VP | EP | Tokens/s/GPU | TFLOP/s):
            DeepSeekV3 "DGX-GB200 | 256 | MXFP8 | 4096 | 1 | 4096 | 0 | 1 | 4 | 1 | 4 | 64 | 4021 | 1046"
                       "DGX-B200 | 256 | MXFP8 | 4096 | 1 | 4096 | 0 | 1 | 16 | 1 | n/a | 8 | 2790 | 725"
            Qwen3_235B "DGX-GB200 | 256 | MXFP8 | 8192 | 1 | 4096 | 0 | 1 | 8 | 1 | n/a | 32 | 5530 | 819"
            GPT OSS    "DGX-B200 | 64 | BF16 | 1280 | 4 | 4096 | 0 | 1 | 1 | 1 | n/a | 8 | 13722 | 373"
            and "25.11 NeMo Container", System: DGX-GB200:
            "GPT OSS 120B | 64 | BF16 | 1280 | 1 | 8192 | 0 | 1 | 1 | 1 | 1 | 64 | 20 | 15876 | 488"
            The 26.02.01 rows were first published by cfeddcd9445817a85ff58549d407fa700b1f8ace (2026-03-21, "2602_perf_
            table_reorder and patch container data"); the 25.11 GB200 GPT-OSS row by 00b7660be0254ac6f95f44164ddd0c3e9cc798ed
            (2025-12-09), which replaced "GPT OSS 120B | 64 | BF16 | 512 | 4 | 4096 | ... | 64 | 2 | 15754" (97ad8cc6f).
  [RCP0201] the recipes at cfeddcd94, scripts/performance/configs/:
            deepseek/deepseek_workload_base_configs.py lines 72-84 (GB200_V1: PP 4, VP 4, EP 64, hybridep), 158-164
            (GB200_V2 = V1 at GBS 4096; FP8_MX_V2 = it), 107-116 (B200_V1: PP 16, EP 8, hybridep), 183-189 (B200_V2 =
            V1 at GBS 4096; FP8_MX_V2 = it): both DeepSeek-V3 rows' printed plans exactly, with hybridep.
            qwen/qwen3_workload_base_configs.py lines 98-107 (GB200_FP8_CS_V1, hybridep), 216-227 (FP8_CS_V2: 256
            GPUs, EP 32, GBS 8192; FP8_MX_V2 adds VP 3, the row prints VP n/a).
            gpt_oss/gpt_oss_workload_base_configs.py lines 71-76 and 114-117: B200_BF16_V2 = EP 64, MBS 4, GBS 1280,
            no dispatcher: NOT the row's EP 8. The B200 EP 8 recipe (with hybridep) is 7260d6214 (2026-03-23, two days
            after the row was published): here the table led the recipe and the table's EP was the run's (13,722 is
            1.7x the 26.02 EP 64 row, 8,047).
  [RCP2511] the recipes at 00b7660be (the commit the change cites for the 25.11 GB200 rows):
            deepseek/deepseek_workload_base_configs.py lines 46-58: one GB200 base, GBS 2048, PP 4, VP 4, EP 64,
            hybridep. The rows it replaced in that commit's own diff were "DeepSeekV3 | 256 | BF16 | 2048 | ... | 4 |
            1 | 4 | 64 | 32 | 3037" and "FP8-MX | 2048 | ... 4 | 1 | 4 | 64 | 32 | 3653" (the recipe's plan); the
            rows it published are GBS 4096 (BF16 PP 4 EP 64, 3,139; FP8-MX PP 8 EP 32, 4,018). No DeepSeek-V3 GB200
            config at EP 32 exists at any commit of the file's history (all revisions searched).
            qwen/qwen3_workload_base_configs.py lines 71-80: GB200 BF16 = 64 GPUs, PP 8, EP 8, GBS 1024, hybridep,
            the replaced row "Qwen3_235B_a22B | 64 | BF16 | 1024 | 1 | ... | 8 | 1 | 1 | 8 | 128 | 4668", not the
            published 256-GPU PP 8 VP 3 EP 32 GBS 8192 row (4,916).
            gpt_oss/gpt_oss_workload_base_configs.py lines 42-47: GB200 = EP 64, MBS 4, GBS 512 (no dispatcher),
            not the published MBS 1, seq 8192, GBS 1280 row (15,876).
  [TE]      NVIDIA/TransformerEngine: nvte_multi_tensor_gemm at v2.9 (70f53666) transformer_engine/common/gemm/
            cublaslt_gemm.cu: "if (!(is_hopper && use_cutlass)) { cublas_path(); return; }" with use_cutlass =
            getenv NVTE_USE_CUTLASS_GROUPED_GEMM (default false); multi_stream_cublas_gemm loops one
            nvte_cublas_gemm_v2 per GEMM over the compute streams. A cuBLASLt grouped GEMM (nvte_grouped_gemm) exists
            from b9f401314 (2026-01-27; PyTorch binding 708d7c160, 2026-03-15; in v2.13+), opt-in in GroupedLinear
            (use_grouped_tensor / NVTE_GROUPED_LINEAR_USE_FUSED_GROUPED_GEMM at head d0067d0d): after the releases
            behind these rows.

What the audit found about the engine (the diagnosis of case 2): mfu.moe_fixed_seconds multiplies BOTH
moe_layer_fixed_seconds and the local experts' seconds by moe_hybridep_fixed_share under hybridep. moet47's own
finding (claim 3, [TE]) is that the per-local-expert cost is TE's one-cuBLAS-GEMM-per-expert launches, which the
dispatcher backend does not touch. On the B200 at EP 8 (32 local experts) that share removes 0.6 x 32 x 0.205 ms a
MoE layer and micro-batch and the row reads +18.6%; with the share on the layer term only it reads -0.8%.
"""

from __future__ import annotations

import pytest

from procurement.sizing import mfu, parse_workload_spec
from procurement.sizing.assumptions import (
    MOE_HYBRIDEP_FIXED_SHARE,
    MOE_LAYER_FIXED_SECONDS,
    MOE_LOCAL_EXPERT_SECONDS,
)
from tests.procurement.outside.test_outside_audit_stop43m import DSV3_NO_MTP
from tests.procurement.outside.test_outside_recommendations_x26b import megatron_spec
from tests.procurement.sizing.test_moe_published import (
    GPT_OSS_120B,
    GPUS,
    QWEN3_30B_GB200,
    QWEN3_235B,
    megatron,
    tokens_per_gpu,
)

SPEED = 0.15


def gap(ours: float, published: float) -> float:
    return ours / published - 1


# --- case 1: [MBARCH] 26.02.01 DGX-GB200 DeepSeek-V3 MXFP8, PP 4, VP 4, EP 64, GBS 4096: 4,021; [RCP0201] hybridep
def dsv3_gb200_260201(dispatch="hybridep"):
    return megatron(
        DSV3_NO_MTP, 256, 1, 4, vp=4, ep=64, global_batch=4096, precision="fp8", dispatch=dispatch
    )


# --- case 2: [MBARCH] 26.02.01 DGX-B200 DeepSeek-V3 MXFP8, PP 16, EP 8, GBS 4096: 2,790; [RCP0201] hybridep
def dsv3_b200_260201(dispatch="hybridep"):
    return megatron(DSV3_NO_MTP, 256, 1, 16, ep=8, global_batch=4096, precision="fp8", dispatch=dispatch)


# --- case 3: [MBARCH] 26.02.01 DGX-GB200 Qwen3-235B MXFP8, PP 8, EP 32, GBS 8192: 5,530; [RCP0201] hybridep (VP as
# printed, n/a; the recipe's VP 3 is not stated)
def qwen3_235b_gb200_260201(dispatch="hybridep"):
    return megatron(QWEN3_235B, 256, 1, 8, ep=32, global_batch=8192, precision="fp8", dispatch=dispatch)


# --- case 4: [MBARCH] 26.02.01 DGX-B200 GPT-OSS 120B BF16, EP 8, MBS 4, GBS 1280: 13,722. The recipe at the
# publishing commit is EP 64 with no dispatcher ([RCP0201]); the EP 8 recipe two days later sets hybridep. Stated as
# x26f states the same plan for 26.04.01 (recompute_modules layernorm / moe_act, parallelism.gradient_sync
# last_micro_batch: e26b, Megatron-Core syncs an accumulated step's gradients in its last micro-batch) with the
# default alltoall; hybridep is pinned beside it.
def gpt_oss_b200_260201(dispatch=None, sync="last_micro_batch"):
    document = megatron_spec(
        GPT_OSS_120B, 64, 4096, 1, 1, ep=8, micro_batch=4, global_batch=1280, precision="bf16"
    )
    document |= {"name": "gpt-oss-b200-260201", "recompute_modules": ["layernorm", "moe_act"]}
    if sync:
        document["parallelism"]["gradient_sync"] = sync
    if dispatch:
        document["parallelism"]["expert_dispatch"] = dispatch
    return parse_workload_spec(document)


# --- case 5: [MBARCH] 25.11 DGX-GB200 GPT-OSS 120B BF16, EP 64, MBS 1, seq 8,192, GBS 1280: 15,876 (GA 20 = 1280 /
# (1 x 64)). No GB200 GPT-OSS recipe of 25.11 sets a dispatcher: the default alltoall.
def gpt_oss_gb200_2511(dispatch=None):
    return megatron(
        GPT_OSS_120B, 64, 1, 1, ep=64, micro_batch=1, global_batch=1280, seq=8192, dispatch=dispatch
    )


def test_dsv3_mxfp8_gb200_2602_01_with_its_recipes_hybridep_within_15_percent():
    """Published 4,021; ours 3,937.3 (-2.1%). The row's printed plan is its recipe's exactly, so this is the
    well-founded version of moet47's restatement; it does not discriminate, though: with alltoall 3,500.5 (-12.9%)."""
    ours = tokens_per_gpu(dsv3_gb200_260201(), GPUS["gb200"])
    assert ours == pytest.approx(3937.3, rel=0.002)
    assert ours == pytest.approx(4021, rel=SPEED)
    assert tokens_per_gpu(dsv3_gb200_260201(None), GPUS["gb200"]) == pytest.approx(4021, rel=SPEED)


@pytest.mark.xfail(
    strict=True,
    reason="UNEXPLAINED (fix47m: aud47m's engine split tried, refitted and not landed. With HybridEP's share on "
    "moe_layer_fixed_seconds only the share's refit on its two fit rows (Qwen3-30B-A3B GB200 25.11 / 26.02, 23,766 / "
    "26,084) goes to its bound 0 and leaves them -4.6% / -13.1% (were +4.5% / -4.8%); this row then reads 2,845.0 "
    "(+2.0%) but the held-out Qwen3-30B-A3B B200 26.04.01 row of the share's recipe (27,136) goes -10.2% -> -17.9%, "
    "out: at 16 local experts the per-expert launches alone (3.28 ms) exceed the whole fixed cost those rows ask for "
    "(1.97 ms), at 32 this row asks for them whole. Left: moe_local_expert_seconds, whose fit pair (DeepSeek-V3 B200 "
    "25.11 / 26.02) states the 26.02 row alltoall where its recipe sets hybridep; not refitted. "
    "test_outside_moe_training_stop47.py::test_the_hybridep_share_on_the_layer_term_only_does_not_refit) "
    "aud47m: [MBARCH] 26.02.01 DGX-B200 DeepSeek-V3 MXFP8 (PP 16, EP 8, GBS 4096) published 2,790; stated "
    "with its recipe's hybridep ([RCP0201] deepseek_workload_base_configs.py lines 107-116 and 183-189 at cfeddcd94, "
    "the plan exactly) ours 3,307.7 (+18.6%; +16.5% with gradient_sync last_micro_batch); with alltoall 2,523.4 "
    "(-9.6%). The same rule moet47 applied to the "
    "GB200 25.11 rows (state the recipe's dispatcher) puts this sibling row, whose recipe matches its plan where "
    "theirs does not, outside HIGH. Diagnosis: mfu.moe_fixed_seconds scales the per-local-expert seconds by "
    "moe_hybridep_fixed_share (0.40, fitted on the Qwen3-30B GB200 rows at 16 local experts); at EP 8 this row has "
    "32, and moet47 itself located that cost in TE's per-expert cuBLAS launches ([TE]), which no dispatcher backend "
    "changes. With the share on moe_layer_fixed_seconds only the row reads 2,767.6 (-0.8%) "
    "(test_the_hybridep_share_on_the_layer_term_only_lands_the_dsv3_rows). UNEXPLAINED until the engine's split is "
    "decided and refitted. moe47r: refitted. The 26.02 fit row restated as run (hybridep, Megatron-Bridge @df0289c18 "
    "deepseek_workload_base_configs.py lines 105-117 / 178-184) and the three constants refitted jointly, the share "
    "on the layer term only, on their eight fit rows: 2.85 ms + 0.18 ms a local expert, share 0; this row +5.6%, but "
    "the held-out Qwen3-30B-A3B B200 26.04.01 row -10.2% -> -15.7% and the Qwen3-30B GB200 26.02 fit row -4.8% -> "
    "-10.7%: not landed (test_outside_moe_training_stop47.py::"
    "test_the_joint_refit_with_the_2602_dsv3_row_as_run_does_not_land). What separates the DeepSeek-V3 B200 rows "
    "(32 local experts, MBS 1) from the Qwen3-30B HybridEP rows (16, MBS 4) is not established.",
)
def test_dsv3_mxfp8_b200_2602_01_with_its_recipes_hybridep_within_15_percent():
    ours = tokens_per_gpu(dsv3_b200_260201(), GPUS["b200"])
    assert ours == pytest.approx(2790, rel=SPEED)


def test_qwen3_235b_mxfp8_gb200_2602_01_with_its_recipes_hybridep_within_15_percent():
    """Published 5,530; ours 5,056.6 (-8.6%); with alltoall 4,108.4 (-25.7%): here the dispatcher decides."""
    ours = tokens_per_gpu(qwen3_235b_gb200_260201(), GPUS["gb200"])
    assert ours == pytest.approx(5056.6, rel=0.002)
    assert ours == pytest.approx(5530, rel=SPEED)
    assert gap(tokens_per_gpu(qwen3_235b_gb200_260201(None), GPUS["gb200"]), 5530) < -SPEED


def test_gpt_oss_b200_ep8_2602_01_within_15_percent():
    """Published 13,722; ours 13,923.0 (+1.5%) with alltoall, 15,264.5 (+11.2%) with hybridep. moet47's notes price
    this row at 16,063.0 (+17.1%) / 18,157.5 (+32.3%) and call the B200 at EP 8 'fast, a disagreement left open': that
    is test_moe_published's helper, which does not state x26f's gradient_sync last_micro_batch (e26b)."""
    ours = tokens_per_gpu(gpt_oss_b200_260201(), GPUS["b200"])
    assert ours == pytest.approx(13923.0, rel=0.002)
    assert ours == pytest.approx(13722, rel=SPEED)
    assert tokens_per_gpu(gpt_oss_b200_260201("hybridep"), GPUS["b200"]) == pytest.approx(15264.5, rel=0.002)
    assert tokens_per_gpu(gpt_oss_b200_260201(sync=None), GPUS["b200"]) == pytest.approx(16063.0, rel=0.002)


def test_gpt_oss_gb200_2511_mbs1_seq8192_within_15_percent():
    """Published 15,876; ours 16,190.2 (+2.0%) with the default alltoall (+12.0% if stated hybridep)."""
    ours = tokens_per_gpu(gpt_oss_gb200_2511(), GPUS["gb200"])
    assert ours == pytest.approx(16190.2, rel=0.002)
    assert ours == pytest.approx(15876, rel=SPEED)


# --- pins of the audit's checks of moet47's claims -------------------------------------------------------------------


def test_the_2511_gb200_fp8mx_row_lands_either_way_on_its_recipes_plan():
    """moet47 claim 1 takes ONE field (the dispatcher) from a recipe ([RCP2511]) whose plan (GBS 2048, PP 4, VP 4,
    EP 64) is not the row's (GBS 4096, PP 8, VP 4, EP 32). On the recipe's plan the row reads -12.9% with alltoall
    and -2.0% with hybridep; on the row's plan -16.3% / -3.3%. Which fields of a non-matching recipe to trust
    decides the verdict, so the dispatcher of the PP 8 EP 32 run is an inference, not a source."""
    row_plan = {
        d: megatron(DSV3_NO_MTP, 256, 1, 8, vp=4, ep=32, global_batch=4096, precision="fp8", dispatch=d)
        for d in (None, "hybridep")
    }
    got = {d: gap(tokens_per_gpu(s, GPUS["gb200"]), 4018) for d, s in row_plan.items()}
    assert got[None] == pytest.approx(-0.163, abs=0.002) and got["hybridep"] == pytest.approx(
        -0.033, abs=0.002
    )
    recipe_plan = {
        d: gap(tokens_per_gpu(dsv3_gb200_260201(d), GPUS["gb200"]), 4018) for d in (None, "hybridep")
    }
    assert recipe_plan[None] == pytest.approx(-0.129, abs=0.002)
    assert recipe_plan["hybridep"] == pytest.approx(-0.020, abs=0.002)


def test_the_hybridep_fixed_share_is_most_of_the_2511_fp8mx_fix(monkeypatch):
    """Of moet47's 3,363.1 -> 3,885.2, the exposed all-to-all alone (share 1.0) gives 3,501.0 (-12.9%); the rest is
    moe_hybridep_fixed_share, fitted on two 8-GPU Qwen3-30B rows and held out of this row (not circular)."""
    spec = megatron(
        DSV3_NO_MTP, 256, 1, 8, vp=4, ep=32, global_batch=4096, precision="fp8", dispatch="hybridep"
    )

    class _One:
        value = 1.0

    monkeypatch.setattr(mfu, "MOE_HYBRIDEP_FIXED_SHARE", _One())
    assert tokens_per_gpu(spec, GPUS["gb200"]) == pytest.approx(3501.0, rel=0.002)


def test_the_hybridep_share_on_the_layer_term_only_lands_the_dsv3_rows(monkeypatch):
    """A sketch, not a refit: the share on moe_layer_fixed_seconds alone (the local experts' TE GEMM launches paid
    whole). DeepSeek-V3 B200 26.02.01 +18.6% -> -0.8%, GB200 26.02.01 -2.1% -> -4.7%, the 25.11 FP8-MX row
    -3.3% -> -8.3%, the Qwen3-30B GB200 fit row +4.5% -> -8.6% (needs the share refitted)."""
    rows = {
        "b200": (dsv3_b200_260201(), "b200", 2790),
        "gb200": (dsv3_gb200_260201(), "gb200", 4021),
        "fp8mx-2511": (
            megatron(
                DSV3_NO_MTP, 256, 1, 8, vp=4, ep=32, global_batch=4096, precision="fp8", dispatch="hybridep"
            ),
            "gb200",
            4018,
        ),
        "qwen3-30b-fit": (QWEN3_30B_GB200, "gb200", 23766),
    }
    before = {k: gap(tokens_per_gpu(s, GPUS[g]), p) for k, (s, g, p) in rows.items()}

    def layer_only(spec):
        seconds = MOE_LAYER_FIXED_SECONDS.value
        if spec.parallelism.expert_dispatch == "hybridep":
            seconds *= MOE_HYBRIDEP_FIXED_SHARE.value
        return seconds + mfu.local_experts(spec) * MOE_LOCAL_EXPERT_SECONDS.value

    monkeypatch.setattr(mfu, "moe_fixed_seconds", layer_only)
    after = {k: gap(tokens_per_gpu(s, GPUS[g]), p) for k, (s, g, p) in rows.items()}
    assert before == pytest.approx(
        {"b200": 0.186, "gb200": -0.021, "fp8mx-2511": -0.033, "qwen3-30b-fit": 0.045}, abs=0.002
    )
    assert after == pytest.approx(
        {"b200": -0.008, "gb200": -0.047, "fp8mx-2511": -0.083, "qwen3-30b-fit": -0.086}, abs=0.002
    )
    assert all(abs(v) <= SPEED for v in after.values())


def test_the_2511_b200_gpt_oss_printed_ep8_row_with_megatrons_gradient_sync():
    """moet47 claim 2 quotes the printed EP 8 row at 14,998.9 (+82.6%); stated with gradient_sync last_micro_batch (2
    micro-batches) it is 11,604.1 (+41.3%): still far outside, so the EP 64 reading (8,032.6, -2.2%, unchanged by the
    field) still carries the label, but the size quoted for the printed reading is the helper's."""
    document = megatron_spec(
        GPT_OSS_120B, 64, 4096, 1, 1, ep=8, micro_batch=4, global_batch=512, precision="bf16"
    )
    document |= {"name": "gpt-oss-b200-2511", "recompute_modules": ["layernorm", "moe_act"]}
    document["parallelism"]["gradient_sync"] = "last_micro_batch"
    ours = tokens_per_gpu(parse_workload_spec(document), GPUS["b200"])
    assert ours == pytest.approx(11604.1, rel=0.002)
    assert gap(ours, 8213) > SPEED
