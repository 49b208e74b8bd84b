"""moet47 (stop 47, issue 26): MoE training throughput, the per-local-expert cost against grouped GEMM.

The question: the engine charges each MoE layer and micro-batch moe_layer_fixed_seconds (1.64 ms) plus
moe_local_expert_seconds (0.205 ms) for every local expert (num_experts / EP). If the published runs' grouped GEMM
were one kernel for all local experts, a per-expert cost would be wrong and would make the engine slow on the
fine-grained MoEs (Qwen3 128 experts top-8, DeepSeek-V3 256) it misses LOW.

[TE] NVIDIA/TransformerEngine transformer_engine/common/gemm/cublaslt_gemm.cu, nvte_multi_tensor_gemm (the call
under GroupedLinear's general_grouped_gemm, which Megatron-Core's TEGroupedMLP (--moe-grouped-gemm) and AutoModel's
TE experts run): at v2.9 (70f536662ae10a62a54f4ed1ba92e3314c5cfd69, lines 1006-1027), v2.12
(5671fd3675906cda1ade26c24a65d3dedd88eb89) and the mirror's head (d0067d0da6cb01811b8072a7d304f0e00344ce2b) alike it
takes the CUTLASS grouped-GEMM kernel only when sm_arch == 90 AND the environment sets NVTE_USE_CUTLASS_GROUPED_GEMM
(getenv default false); otherwise multi_stream_cublas_gemm, which loops `for (int i = 0; i < num_gemms; i++)` over
one cuBLAS GEMM per expert on min(num_streams, num_gemms) compute streams (v2.9 lines 928-960). Blackwell never takes
the CUTLASS path there. fix47m (aud47m): "head alike" holds for nvte_multi_tensor_gemm only: TE also has a cuBLASLt
grouped GEMM, nvte_grouped_gemm (transformer_engine/common/gemm/cublaslt_grouped_gemm.cu, added at b9f40131
2026-01-28 "Add support for cuBLASLt GEMM for GroupedTensor", PyTorch binding 708d7c16 2026-03-15, first tagged
v2.13), opt-in in GroupedLinear (use_grouped_tensor, or the deprecated env NVTE_GROUPED_LINEAR_USE_FUSED_GROUPED_GEMM,
grouped_linear.py lines 746-761 / 1657 at d0067d0d): after the releases behind these rows, so it bears on later
rows only, and only where a recipe opts in. So the default grouped GEMM of the releases behind the published rows launches one GEMM per
local expert (forward, dgrad, wgrad): a cost that grows with the local experts is what the code does.

Sized here, the extreme: a single grouped-GEMM kernel with no per-expert cost at all (moe_local_expert_seconds 0)
cannot move the low rows inside, and it breaks two of the constants' four fit rows. Any partial saving (fewer
launches, CUTLASS on Hopper) moves less. So the per-expert term is not the mechanism of the MoE training misses.
"""

from __future__ import annotations

import math

import pytest

from procurement.sizing import mfu
from tests.procurement.outside import test_outside_audit_stop43m as stop43m
from tests.procurement.outside import test_outside_recommendations_x26d as x26d
from tests.procurement.sizing import test_moe_published as published

SPEED = 0.15


class _Zero:
    value = 0.0


def _gaps() -> dict[str, float]:
    gaps = dict(published._gaps())
    gaps["qwen3-30b automodel"] = (
        x26d.tokens_per_gpu(x26d.candidate(x26d.QWEN3_MOE_AUTOMODEL, x26d.H100)) / 12040 - 1
    )
    gaps["deepseek-v3 automodel"] = (
        x26d.tokens_per_gpu(x26d.candidate(x26d.deepseek_v3_automodel(8), x26d.H100)) / 1002 - 1
    )
    for key, (spec, _, value, _) in stop43m.GB200_ROWS.items():
        gaps[key] = stop43m.tokens_per_gpu(spec, stop43m.GPUS["gb200"]) / value - 1
    return gaps


FIT = ("deepseek-v2 h800", "gpt-oss h100", "qwen3-235b b200", "qwen3-30b gb200")
LOW_BF16 = (
    "mixtral h100",
    "qwen3-30b automodel",
    "deepseek-v3 automodel",
    "deepseek-v3-bf16-pp4-vp4-ep64",
    "qwen3-235b-bf16-pp8-vp3-ep32",
)


@pytest.mark.django_db
def test_one_grouped_gemm_kernel_for_all_local_experts_is_not_the_moe_training_miss(
    bundled_catalog, monkeypatch
):
    """At the constants as fitted: fit rows -1.9 / +2.6 / +1.0 / +4.5%; the low rows Mixtral -30.0, Qwen3-30B
    AutoModel -44.1, DeepSeek-V3 AutoModel -16.2, GB200 DeepSeek-V3 BF16 -26.9, FP8-MX -16.3, Qwen3-235B BF16 -39.3
    (the printed plans: fix47m withdrew moet47's HybridEP restatement, which read -22.8 / -3.3 / -31.6); GPT-OSS B200
    +82.6. With moe_local_expert_seconds 0: fit rows +8.2 / +8.9 / +35.8 / +15.5%; low rows -29.5, -40.2, -15.3,
    -24.8, -35.6 (FP8-MX -9.1); GPT-OSS B200 +89.4 (the one HIGH miss moves further out)."""
    before = _gaps()
    monkeypatch.setattr(mfu, "MOE_LOCAL_EXPERT_SECONDS", _Zero())
    after = _gaps()
    # the fit rows: two leave the constants' 10% (Qwen3-235B B200 at 32 local experts, Qwen3-30B GB200 at 16)
    assert after["qwen3-235b b200"] > 0.30 and after["qwen3-30b gb200"] > SPEED, after
    # the BF16 low rows move at most 4 points and all stay outside 15%
    for name in LOW_BF16:
        assert before[name] < -SPEED and after[name] < -SPEED, (name, before[name], after[name])
        assert after[name] - before[name] < 0.04, (name, before[name], after[name])
    # the HIGH miss (GPT-OSS 120B on 64 B200, 16 local experts) needs more cost, not less
    assert after["gpt-oss b200"] > before["gpt-oss b200"] > SPEED


@pytest.mark.django_db
def test_the_low_bf16_rows_ask_for_no_moe_cost_where_the_fit_rows_need_it(bundled_catalog, monkeypatch):
    """With every MoE term off (routed bytes, the layer's and the local experts' seconds) the fit rows read +43.4 /
    +46.6 / +151.4 / +123.0% while Qwen3-30B AutoModel reads -0.1%, DeepSeek-V3 AutoModel +6.0%, the GB200 BF16 rows
    +2.4% / +4.1% (printed plans; +3.1% / +5.9% stated hybridep): the low rows leave the MoE terms no room that the fit rows' MoE terms need, so no refit of the
    per-element, per-layer or per-expert costs over both sets can land both (the discriminator is outside these
    terms). Mixtral 8x7B still reads -19.4% at zero MoE cost: its miss is the 0.40 dense MoE base, not a MoE term."""
    for name in ("MOE_ROUTED_BYTES", "MOE_LAYER_FIXED_SECONDS", "MOE_LOCAL_EXPERT_SECONDS"):
        monkeypatch.setattr(mfu, name, _Zero())
    gaps = _gaps()
    for name in FIT:
        assert gaps[name] > 0.40, gaps
    for name in ("qwen3-30b automodel", "deepseek-v3 automodel", "deepseek-v3-bf16-pp4-vp4-ep64"):
        assert abs(gaps[name]) < 0.10, gaps
    assert gaps["mixtral h100"] < -SPEED, gaps


# --- GPT-OSS 120B BF16 on 64 B200, Megatron-Bridge 25.11 ([MB2511], the +82.6% strict xfail in test_moe_published.py)
# [MB2511] NVIDIA-NeMo/Megatron-Bridge docs/performance-summary.md @00b7660be0254ac6f95f44164ddd0c3e9cc798ed line 82:
# DGX-B200 "GPT OSS 120B | 64 | BF16 | 512 | 4 | 4096 | 0 | 1 | 1 | 1 | 1 | 8 | 2 | 8213 | 223" (EP printed 8).
# [MBRECIPE] the same commit's scripts/performance/configs/gpt_oss/gpt_oss_workload_base_configs.py lines 50-55,
# GPT_OSS_120B_PRETRAIN_CONFIG_B200_BF16_BASE_CONFIG: expert_model_parallel_size=64, micro_batch_size=4,
# recompute_modules ["layernorm", "moe_act"], GBS 512 from BASE_GPT_OSS_120B_CONFIG; the same at the 25.11 release tag
# v0.2.0 (tag 717c62de, commit 7af9601c9) scripts/performance/configs/gpt_oss/workload_base_configs.py lines 50-55.
# fix47m (aud47m's correction): not every earlier B200 BF16 recipe sets EP 64: before e59a57360 (2025-11-20, "fix
# GPT-OSS perf scripts") the B200 BF16 config was the base, EP 8, MBS 8, CUDA graphs full_iteration; e59a57360 set
# EP 64, MBS 4, and the printed MBS 4 rules the earlier config out. The next B200 EP 8 recipe is 7260d6214
# (2026-03-23, "perf optimizations- GPT-OSS 120B", GPT_OSS_120B_PRETRAIN_CONFIG_B200_BF16_V2: EP 8, GBS 1280, HybridEP).
# [MBARCH] docs/performance-summary-archive.md @067f987df03b8355b03192d88d70f1709fedf51a, DGX-B200 GPT OSS 120B BF16,
# 64 GPUs, GBS 1280, MBS 4, seq 4,096: line 519 (26.02) EP 64 8,047; line 434 (26.02.01) EP 8 13,722; line 337
# (26.04) EP 8 13,045; line 237 (26.04.01) EP 8 13,568. DGX-H100 EP 8 rows: 25.11 5,630 (@00b7660be line 93),
# archive lines 520 / 435 / 338 / 238: 5,993 / 5,984 / 5,810 / 5,824.
GPT_OSS_B200_2511_AS_ITS_RECIPE_RAN = published.megatron(
    published.GPT_OSS_120B, 64, 1, 1, ep=64, micro_batch=4, global_batch=512
)


def test_the_2511_b200_gpt_oss_row_runs_at_the_ep64_rate_of_the_published_rows():
    """(b) of the EXPLAINED label: 8,213 sits 2.0% over the 26.02 EP 64 row and at 0.60-0.63 of the three later EP 8
    rows of the same card and model, while NVIDIA's H100 EP 8 rows of the same releases moved 3-6%: no software
    change between 25.11 and 26.02.01 makes an EP 8 B200 run 1.6x faster when the H100's barely moves."""
    row_2511, ep64_2602 = 8213, 8047
    ep8_later = (13722, 13045, 13568)
    h100_2511, h100_later = 5630, (5993, 5984, 5810, 5824)
    assert row_2511 / ep64_2602 == pytest.approx(1.0, abs=0.03)
    assert all(1.55 < later / row_2511 < 1.70 for later in ep8_later)
    assert all(1.0 < later / h100_2511 < 1.07 for later in h100_later)


def test_the_2511_b200_gpt_oss_row_as_its_recipe_ran_it_within_15_percent():
    """Stated at the recipe's EP 64 (GBS 512, MBS 4): 8,032.6 (-2.2%). The printed EP 8 gives 14,998.9 (+82.6%)."""
    ours = published.tokens_per_gpu(GPT_OSS_B200_2511_AS_ITS_RECIPE_RAN, published.B200)
    assert ours == pytest.approx(8213, rel=SPEED)


# --- fix47m: aud47m's engine fix, HybridEP's share on the dispatcher's layer term only, refitted and not landed
# [TE] (module docstring): the per-local-expert seconds are TE's per-expert cuBLAS GEMM launches (nvte_multi_tensor_gemm,
# multi_stream_cublas_gemm at v2.9 70f53666), which no dispatcher backend touches; mfu.moe_fixed_seconds scales them by
# moe_hybridep_fixed_share all the same. HybridEP's fused kernel (NVIDIA/Megatron-LM megatron/core/transformer/moe/
# fused_a2a.py @19c61ebd, hybrid_ep_dispatch) replaces the dispatcher's permute / pad launches: the layer term.
# Rows: the share's two fit rows (assumptions.MOE_HYBRIDEP_FIXED_SHARE: Qwen3-30B-A3B FP8 EP 8 MBS 4 on 8 GB200,
# NVIDIA-NeMo/Megatron-Bridge docs/performance-summary.md @00b7660be 25.11 23,766 and @df0289c18 26.02 26,084); its
# held-out check the 26.04.01 DGX-B200 row of the same recipe (27,136; test_moe_b200_recipes_stated.py / x26f); and
# aud47m's cases ([MBARCH] docs/performance-summary-archive.md @067f987df, 26.02.01, recipes at cfeddcd94).
class _Share:
    def __init__(self, value: float):
        self.value = value


def _layer_only(spec) -> float:
    layer = mfu.MOE_LAYER_FIXED_SECONDS.value
    if spec.parallelism.expert_dispatch == "hybridep":
        layer *= mfu.MOE_HYBRIDEP_FIXED_SHARE.value
    return layer + mfu.local_experts(spec) * mfu.MOE_LOCAL_EXPERT_SECONDS.value


def test_the_hybridep_share_on_the_layer_term_only_does_not_refit(monkeypatch):
    """Refit (least squares of the log errors, share on a 0.05 grid in [0, 1]) on the share's two fit rows: the
    optimum is the bound 0 (HybridEP pays none of the 1.64 ms layer term) and the rows still read -4.6% / -13.1%
    (were +4.5% / -4.8%): at 16 local experts the per-expert launches alone (3.28 ms a layer and micro-batch) are more
    than the whole fixed cost these rows ask for (0.40 x 4.92 = 1.97 ms). At share 0: aud47m's case 2 (DeepSeek-V3
    MXFP8 on 256 B200, PP 16, EP 8, 32 local experts) 3,307.7 (+18.6%) -> 2,845.0 (+2.0%), case 1 (GB200 EP 64)
    -2.1% -> -1.2%, case 3 (GB200 Qwen3-235B EP 32) -8.6% -> -6.7%, the 25.11 GB200 FP8-MX row stated hybridep
    -3.3% -> -5.0%, GPT-OSS B200 26.02.01 hybridep 15,264.5 -> 14,704.2; but the held-out Qwen3-30B-A3B B200
    26.04.01 row (27,136) goes 24,371 (-10.2%) -> 22,276.5 (-17.9%), out of 15%. So the split lands case 2 and breaks
    a passing case of the share's own recipe: not landed; the conflict sits in moe_local_expert_seconds, whose fit pair
    (DeepSeek-V3 B200 25.11 / 26.02) states the 26.02 row with the default alltoall where its v0.3.0 recipe sets
    hybridep (moet47's note), so a refit of the per-expert term is what this needs, not done here."""
    from tests.procurement.outside import test_outside_moe_training_audit_stop47 as aud
    from tests.procurement.sizing import test_moe_b200_recipes_stated as stated

    gb200, b200 = published.GPUS["gb200"], published.GPUS["b200"]

    def fit_errors() -> tuple[float, float]:
        ours = published.tokens_per_gpu(published.QWEN3_30B_GB200, gb200)
        return ours / 23766 - 1, ours / 26084 - 1

    assert fit_errors() == pytest.approx((0.045, -0.048), abs=0.002)
    held_out_before = stated.tokens_per_gpu(stated.QWEN3_30B_B200) / 27136 - 1
    assert held_out_before == pytest.approx(-0.102, abs=0.002)
    monkeypatch.setattr(mfu, "moe_fixed_seconds", _layer_only)
    sse = {}
    for step in range(21):
        monkeypatch.setattr(mfu, "MOE_HYBRIDEP_FIXED_SHARE", _Share(step / 20))
        sse[step / 20] = sum(math.log(1 + e) ** 2 for e in fit_errors())
    assert min(sse, key=sse.get) == 0.0
    monkeypatch.setattr(mfu, "MOE_HYBRIDEP_FIXED_SHARE", _Share(0.0))
    assert fit_errors() == pytest.approx((-0.046, -0.131), abs=0.002)
    fp8mx_2511 = published.megatron(
        stop43m.DSV3_NO_MTP, 256, 1, 8, vp=4, ep=32, global_batch=4096, precision="fp8", dispatch="hybridep"
    )
    after = {
        "case 2 b200": published.tokens_per_gpu(aud.dsv3_b200_260201(), b200) / 2790 - 1,
        "case 1 gb200": published.tokens_per_gpu(aud.dsv3_gb200_260201(), gb200) / 4021 - 1,
        "case 3 gb200": published.tokens_per_gpu(aud.qwen3_235b_gb200_260201(), gb200) / 5530 - 1,
        "fp8mx 25.11": published.tokens_per_gpu(fp8mx_2511, gb200) / 4018 - 1,
    }
    assert after == pytest.approx(
        {"case 2 b200": 0.020, "case 1 gb200": -0.012, "case 3 gb200": -0.067, "fp8mx 25.11": -0.050},
        abs=0.002,
    )
    assert published.tokens_per_gpu(aud.gpt_oss_b200_260201("hybridep"), b200) == pytest.approx(
        14704.2, rel=0.002
    )
    held_out = stated.tokens_per_gpu(stated.QWEN3_30B_B200)
    assert held_out == pytest.approx(22276.5, rel=0.002)
    assert held_out / 27136 - 1 < -SPEED


# --- moe47r: fix47m's diagnosis acted on. The 26.02 DGX-B200 DeepSeek-V3 row, one of moe_local_expert_seconds' fit
# rows, restated as its recipe ran it: NVIDIA-NeMo/Megatron-Bridge @df0289c180dd20ff26933455c7a0a11084f6a36f (the
# commit that published the 26.02 table, docs/performance-summary.md line 92: "DeepSeekV3 | 256 | FP8-MX | 4096 | 1 |
# 4096 | 0 | 1 | 16 | 1 | n/a | 8 | 256 | 2689") scripts/performance/configs/deepseek/deepseek_workload_base_configs.py
# lines 105-117 (DEEPSEEK_V3_PRETRAIN_CONFIG_B200_V1: num_gpus 256, PP 16, EP 8, no VP, moe_flex_dispatcher_backend
# "hybridep") and 178-184 (_B200_V2, GBS 4096; _B200_FP8_MX_V2 = it): GPUs, GBS, PP, VP, EP all as printed. The 25.11
# row (2,139) stays alltoall: @00b7660be0254ac6f95f44164ddd0c3e9cc798ed the same file lines 64-75 (PP 16, EP 8,
# GBS 2048, no dispatcher). Then the three card-independent constants refitted jointly, the share on the layer term
# only (_layer_only), least squares of the log errors (grid 0.25 ms x 0.025 ms x 0.1, then two rounds of 0.05 ms x
# 0.005 ms x 0.025), on the union of their fit rows as the constants' comments name them (moe_routed_bytes_per_element
# kept at 217.5): DeepSeek-V2 H800, GPT-OSS H100, Qwen3-235B B200 ([MB2511] test_moe_published.py), Qwen3-30B-A3B
# GB200 25.11 23,766 and 26.02 26,084, Qwen3-30B-A3B B200 25.11 9,299 and DeepSeek-V3 B200 25.11 2,139
# (test_outside_recommendations_x26b.py), DeepSeek-V3 B200 26.02 2,689 as run.
DSV3_B200_2602_AS_RUN = published.megatron(
    "deepseek-v3", 256, 1, 16, ep=8, global_batch=4096, precision="fp8", dispatch="hybridep"
)
JOINT = (2.85e-3, 0.18e-3, 0.0)  # layer s, local expert s, HybridEP share of the layer term


def _fit_rows() -> dict[str, float]:
    from tests.procurement.outside import test_outside_recommendations_x26b as x26b

    gaps = {name: published._gaps()[name] for name in FIT}
    qwen_gb200 = published.tokens_per_gpu(published.QWEN3_30B_GB200, published.GB200)
    gaps["qwen3-30b gb200"] = qwen_gb200 / 23766 - 1
    gaps["qwen3-30b gb200 26.02"] = qwen_gb200 / 26084 - 1
    gaps["qwen3-30b b200"] = x26b.tokens_per_gpu(x26b.candidate(x26b.QWEN3_MOE_B200, "b200")) / 9299 - 1
    gaps["deepseek-v3 b200 25.11"] = (
        x26b.tokens_per_gpu(x26b.candidate(x26b.DEEPSEEK_V3_B200, "b200")) / 2139 - 1
    )
    gaps["deepseek-v3 b200 26.02"] = (
        published.tokens_per_gpu(DSV3_B200_2602_AS_RUN, published.B200) / 2689 - 1
    )
    return gaps


def _held_out() -> dict[str, float]:
    from tests.procurement.outside import test_outside_moe_training_audit_stop47 as aud
    from tests.procurement.sizing import test_moe_b200_recipes_stated as stated

    gb200, b200 = published.GPUS["gb200"], published.GPUS["b200"]
    return {
        "case 1": published.tokens_per_gpu(aud.dsv3_gb200_260201(), gb200) / 4021 - 1,
        "case 2": published.tokens_per_gpu(aud.dsv3_b200_260201(), b200) / 2790 - 1,
        "case 3": published.tokens_per_gpu(aud.qwen3_235b_gb200_260201(), gb200) / 5530 - 1,
        "case 4": published.tokens_per_gpu(aud.gpt_oss_b200_260201(), b200) / 13722 - 1,
        "case 5": published.tokens_per_gpu(aud.gpt_oss_gb200_2511(), gb200) / 15876 - 1,
        "qwen3-30b b200 26.04.01": stated.tokens_per_gpu(stated.QWEN3_30B_B200) / 27136 - 1,
    }


def _joint(monkeypatch, layer, expert, share):
    monkeypatch.setattr(mfu, "moe_fixed_seconds", _layer_only)
    for name, value in (
        ("MOE_LAYER_FIXED_SECONDS", layer),
        ("MOE_LOCAL_EXPERT_SECONDS", expert),
        ("MOE_HYBRIDEP_FIXED_SHARE", share),
    ):
        monkeypatch.setattr(mfu, name, _Share(value))


def _sse(gaps: dict[str, float]) -> float:
    return sum(math.log(1 + e) ** 2 for e in gaps.values())


@pytest.mark.django_db
def test_the_joint_refit_with_the_2602_dsv3_row_as_run_does_not_land(bundled_catalog, monkeypatch):
    """Today (1.64 ms + 0.205 ms, share 0.40 on both): fit rows DeepSeek-V2 -1.9, GPT-OSS H100 +2.6, Qwen3-235B B200
    +1.0, Qwen3-30B GB200 +4.5 / -4.8, Qwen3-30B B200 +11.1, DeepSeek-V3 B200 25.11 +10.9, 26.02 -7.5% as the constant
    was fitted (alltoall) and +20.8% as run (log-SSE 0.0332 -> 0.0627). Refitted: 2.85 ms + 0.18 ms, share 0 (the
    bound again): -3.5, +1.2, -5.0, -2.0 / -10.7, +1.2, +9.2, +7.8% (log-SSE 0.0308). Held out: aud47m case 2
    +18.6 -> +5.6% (lands), case 1 -2.1 -> -0.6, case 3 -8.6 -> -5.6, case 4 +1.5 -> -0.7, case 5 +2.0 -> -5.8,
    but Qwen3-30B-A3B B200 26.04.01 (27,136, passing in test_moe_b200_recipes_stated / x26f) -10.2 -> -15.7%, out of
    15%, and three fit rows read worse (Qwen3-30B GB200 26.02 -4.8 -> -10.7, Qwen3-235B B200 +1.0 -> -5.0, DeepSeek-V2
    -1.9 -> -3.5). Not landed: engine unchanged. The two HybridEP families pull the share apart: the DeepSeek-V3 B200
    rows (32 local experts, MBS 1) want the layer term gone under HybridEP, the Qwen3-30B rows (16, MBS 4) want more
    fixed cost than 16 x 0.18 ms leaves; the discriminator is not established."""
    today = _fit_rows()
    assert today == pytest.approx(
        {
            "deepseek-v2 h800": -0.019,
            "gpt-oss h100": 0.026,
            "qwen3-235b b200": 0.010,
            "qwen3-30b gb200": 0.045,
            "qwen3-30b gb200 26.02": -0.048,
            "qwen3-30b b200": 0.111,
            "deepseek-v3 b200 25.11": 0.109,
            "deepseek-v3 b200 26.02": 0.208,
        },
        abs=0.002,
    )
    assert _sse(today) == pytest.approx(0.0627, abs=0.0005)
    assert published.tokens_per_gpu(DSV3_B200_2602_AS_RUN, published.B200) == pytest.approx(3247.6, rel=0.002)
    printed = published.megatron("deepseek-v3", 256, 1, 16, ep=8, global_batch=4096, precision="fp8")
    assert published.tokens_per_gpu(printed, published.B200) == pytest.approx(2488.2, rel=0.002)
    held_today = _held_out()
    _joint(monkeypatch, *JOINT)
    fit = _fit_rows()
    assert fit == pytest.approx(
        {
            "deepseek-v2 h800": -0.035,
            "gpt-oss h100": 0.012,
            "qwen3-235b b200": -0.050,
            "qwen3-30b gb200": -0.020,
            "qwen3-30b gb200 26.02": -0.107,
            "qwen3-30b b200": 0.012,
            "deepseek-v3 b200 25.11": 0.092,
            "deepseek-v3 b200 26.02": 0.078,
        },
        abs=0.002,
    )
    # a local optimum of the grid: one step either way on each constant (the share at its bound 0) fits worse
    best = _sse(fit)
    assert best == pytest.approx(0.0308, abs=0.0005)
    layer, expert, share = JOINT
    for step in (
        (layer + 0.05e-3, expert, share),
        (layer - 0.05e-3, expert, share),
        (layer, expert + 0.005e-3, share),
        (layer, expert - 0.005e-3, share),
        (layer, expert, share + 0.025),
    ):
        _joint(monkeypatch, *step)
        assert _sse(_fit_rows()) > best, step
    _joint(monkeypatch, *JOINT)
    held = _held_out()
    assert held_today == pytest.approx(
        {
            "case 1": -0.021,
            "case 2": 0.186,
            "case 3": -0.086,
            "case 4": 0.015,
            "case 5": 0.020,
            "qwen3-30b b200 26.04.01": -0.102,
        },
        abs=0.002,
    )
    assert held == pytest.approx(
        {
            "case 1": -0.006,
            "case 2": 0.056,
            "case 3": -0.056,
            "case 4": -0.007,
            "case 5": -0.058,
            "qwen3-30b b200 26.04.01": -0.157,
        },
        abs=0.002,
    )
    # what blocks it: a passing held-out case of the share's own recipe leaves 15%, and fit rows read worse
    assert held["qwen3-30b b200 26.04.01"] < -SPEED < held_today["qwen3-30b b200 26.04.01"]
    assert abs(fit["qwen3-30b gb200 26.02"]) > abs(today["qwen3-30b gb200 26.02"])
